// A pattern of three names cannot bind a pair.
fn main() {
    let a = vec![1.0f64, 2.0];
    let _ = ein::ein!(for i { let (x, y, z) = (a[i], 1.0); x + y + z });
}
