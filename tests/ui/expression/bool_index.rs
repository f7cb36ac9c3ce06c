// A boolean is not an index.
fn main() {
    let a = vec![1.0f64, 2.0];
    let m = vec![true, false];
    let _ = ein::ein!(for i { a[m[i]] });
}
