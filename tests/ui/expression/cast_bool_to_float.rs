// A captured `bool` array casts to integers, not to floats (as in Rust).
fn main() {
    let b = vec![true, false];
    let _ = ein::ein!(for i { b[i] as f64 });
}
