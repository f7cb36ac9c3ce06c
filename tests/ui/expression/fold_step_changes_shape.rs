// A fold's step must keep the accumulator's type: here a scalar becomes an array.
fn main() {
    let a = vec![1.0f64, 2.0];
    let _ = ein::ein!(fold t in 0..3, acc = 0.0 { for i { acc + a[i] } });
}
