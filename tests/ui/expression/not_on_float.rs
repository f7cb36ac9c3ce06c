// `!` applies to booleans.
fn main() {
    let a = vec![1.0f64, 2.0];
    let _ = ein::ein!(for i { !a[i] });
}
