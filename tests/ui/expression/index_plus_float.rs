// An index is an integer: adding it to a float element needs a cast.
fn main() {
    let a = vec![1.0f64, 2.0];
    let _ = ein::ein!(for i { a[i] + i });
}
