//! The README's quickstart: both macro forms on ndarray inputs, and an `#[into]` companion
//! writing into an array the caller already has.

use ein::ein;

ein! {
    /// Row-wise softmax.
    pub fn softmax(x: [[f32]]) -> [[f32]] {
        for i, j {
            let m = max k { x[i, k] };
            exp(x[i, j] - m) / sum k { exp(x[i, k] - m) }
        }
    }

    /// STREAM's triad; `triad_into(&mut out, ..)` writes into `out` instead of a new array.
    #[into(triad_into)]
    pub fn triad(b: [f64], c: [f64], s: f64) -> [f64] { for i { b[i] + s * c[i] } }

    /// Matrix product with every size inferred.
    pub fn matmul(a: [[f64]], b: [[f64]]) -> [[f64]] {
        for i, j { sum k { a[i, k] * b[k, j] } }
    }
}

fn main() {
    let a = ndarray::Array2::from_shape_fn((3, 4), |(i, j)| (i * 4 + j) as f64);
    let b = vec![1.0, 2.0, 3.0, 4.0];
    // Expression form: captures `a` and `b`; ranks from use, element types from rustc.
    let y: ein::Array<f64, 1> = ein!(for i { sum k { a[i, k] * b[k] } });
    println!("a · b = {:?}", y.as_slice());

    let product = matmul(&a, &a.t());
    println!("a · aᵀ = {:?}", product.into_ndarray());

    let x = ndarray::Array2::from_shape_fn((2, 5), |(i, j)| (i + j) as f32);
    let probabilities = softmax(&x);
    println!("softmax rows = {:?}", probabilities.into_ndarray());

    let (b, c) = (vec![1.0; 4], vec![2.0; 4]);
    let mut out = vec![0.0; 4];
    triad_into(&mut out, &b, &c, 3.0);
    assert_eq!(out, triad(&b, &c, 3.0).as_slice());
    println!("triad into an existing Vec = {out:?}");
}
