// A captured `static mut` is read by the user's own code, never inside an `unsafe` block that
// ein generates: reading it without `unsafe` is rustc's E0133, at the user's token.
static mut N: i64 = 2;

fn main() {
    let a = vec![1.0f64, 2.0, 3.0];
    let _x: f64 = ein::ein!(a[N]);
}
