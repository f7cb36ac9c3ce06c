fn main() {
    let (y, x) = (vec![1.0f64], vec![2.0f64]);
    let _ = ein::ein!(for i { y[i].atan3(x[i]) });
}
