// The captured array has rank 2; the program indexes three axes.
fn main() {
    let a = ndarray::Array2::<f64>::zeros((2, 2));
    let _ = ein::ein!(for i { a[i, 0, 1] });
}
