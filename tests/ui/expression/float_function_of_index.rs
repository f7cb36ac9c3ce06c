// An index is an integer: `sqrt` needs a float.
fn main() {
    let a = vec![1.0f64, 2.0];
    let _ = ein::ein!(for i { a[i] * i.sqrt() });
}
