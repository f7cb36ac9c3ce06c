// A pair has fields 0 and 1.
fn main() {
    let a = vec![1.0f64, 2.0];
    let _ = ein::ein!(for i { (a[i], 2.0).2 });
}
