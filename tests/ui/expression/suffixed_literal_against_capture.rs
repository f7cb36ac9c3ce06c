// A suffixed literal fixes the captured array's element type, which rustc then finds is not it.
fn main() {
    let a = vec![1.0f32, 2.0, 3.0];
    let _ = ein::ein!(for i { a[i] * 2.0f64 });
}
