// A captured scalar cannot be indexed.
fn main() {
    let s = 1.5f64;
    let _ = ein::ein!(for i in 0..3 { s[i] });
}
