// A Rust function is called once per element: an array argument is an error at it.
fn norm(x: f64) -> f64 {
    x.abs()
}

fn main() {
    let a = ndarray::Array2::<f64>::zeros((2, 3));
    let _: ein::Array<f64, 1> = ein::ein!(for i { norm(a[i]) + a[i, 0] });
}
