// The accumulator starts as an integer and the step adds a float.
fn main() {
    let a = vec![1.0f64; 8];
    let _ = ein::ein!(fold k in 0..8, acc = 0 { acc + a[k] });
}
