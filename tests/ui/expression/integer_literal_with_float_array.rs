// No implicit conversion: an integer literal next to a float element.
fn main() {
    let a = vec![1.0f64, 2.0];
    let _ = ein::ein!(for i { a[i] + 2 });
}
