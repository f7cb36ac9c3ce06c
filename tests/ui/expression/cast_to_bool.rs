// Nothing casts to `bool`, as in Rust.
fn main() {
    let a = vec![1i32, 2];
    let _ = ein::ein!(for i { a[i] as bool });
}
