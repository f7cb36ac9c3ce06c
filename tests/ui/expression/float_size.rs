// A range's bound must be an integer.
fn main() {
    let n = 3.0f64;
    let _ = ein::ein!(for i in 0..n { 1.0 });
}
