// Comparing a float element with an integer index.
fn main() {
    let a = vec![1.0f64, 2.0];
    let _ = ein::ein!(for i { if a[i] > i { 1.0 } else { 0.0 } });
}
