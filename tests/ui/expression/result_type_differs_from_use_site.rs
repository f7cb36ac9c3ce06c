// The result's element type is the captured array's; the use site wants another.
fn main() {
    let a = vec![1.0f64, 2.0];
    let r: ein::Array<f32, 1> = ein::ein!(for i { a[i] * 2.0 });
    let _ = r;
}
