// An axis number must be a literal.
fn main() {
    let a = ndarray::Array2::<f64>::zeros((2, 2));
    let k = 1;
    let _ = ein::ein!(a.shape(k));
}
