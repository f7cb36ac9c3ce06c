// `clamp` takes a low and a high bound.
fn main() {
    let a = vec![1.0f64, 2.0];
    let _ = ein::ein!(for i { a[i].clamp(0.0) });
}
