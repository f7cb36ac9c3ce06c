// Both branches of an `if` have one type.
fn main() {
    let a = vec![1.0f64, 2.0];
    let _ = ein::ein!(for i { if a[i] > 0.0 { 1.0 } else { 1 } });
}
