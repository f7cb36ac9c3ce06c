// An index must be an integer.
fn main() {
    let a = vec![1.0f64, 2.0];
    let x = 1.0f64;
    let _ = ein::ein!(a[x]);
}
