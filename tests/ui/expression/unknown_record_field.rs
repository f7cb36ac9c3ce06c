// A record has only the fields it was built with.
fn main() {
    let a = vec![1.0f64, 2.0];
    let _ = ein::ein!(for i { let z = { re: a[i], im: 0.0 }; z.imag });
}
