// An inner comprehension's size depends on the outer index: the array would be ragged.
fn main() {
    let a = vec![1.0f64, 2.0, 3.0];
    let _ = ein::ein!(for i { for j in 0..i { a[j] } });
}
