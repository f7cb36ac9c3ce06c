// Two captured arrays used together must have one element type.
fn main() {
    let a = vec![1.0f64, 2.0];
    let b = vec![1.0f32, 2.0];
    let _ = ein::ein!(for i { a[i] + b[i] });
}
