//! `#[into(name)]` companions, which write a function's result into arrays the caller owns:
//! differential tests with `out` in every writable layout (results built by a comprehension are
//! written in place, all others copied), then results of several arrays, every `out` storage,
//! writing in place, and shape mismatches.

use crate::harness::{array, scalar};
use ein_testing::expect_panic;

differential_into! {
    /// STREAM's triad: one element per row, in chunks (one case above the parallel grain).
    triad: fn(b: [f64], c: [f64], s: f64) -> [f64] { for i { b[i] + s * c[i] } }
    cases [n] in [[0], [1], [7], [40_000]];
    args (b = array([n]), c = array([n]), s = scalar(3.0));
}

differential_into! {
    /// Rows of a rank-2 output; a transposed read makes the fill tiled.
    transpose_add: fn(a: [[f32]], b: [[f32]]) -> [[f32]] { for i, j { a[i, j] + b[j, i] } }
    cases [n] in [[0], [1], [5], [70]];
    args (a = array([n, n]), b = array([n, n]));
}

differential_into! {
    /// The result after `let`s; its rows are arrays themselves (rank 3 out of two `for`s).
    centred_rows: fn(a: [[[f64]]], eps: f64) -> [[[f64]]] {
        let shift = eps * 2.0;
        for i, j {
            let m = max k { a[i, j, k] };
            for k { a[i, j, k] - m + shift }
        }
    }
    cases [p, q, r] in [[2, 3, 4], [0, 2, 2], [3, 0, 1], [1, 1, 1], [4, 5, 0], [8, 9, 300]];
    args (a = array([p, q, r]), eps = scalar(0.25));
}

differential_into! {
    /// A matrix of few long rows, written into `out` in pieces of rows (`fill_pieces`) in
    /// every layout of `out`.
    row_pieces_into: fn(a: [[f32]], v: [f32]) -> [[f32]] { for i, j { a[i, j] * v[j] + (i as f32) } }
    cases [m, n] in [[0, 4], [2, 0], [1, 1], [1, 140_000], [3, 50_001], [30, 20]];
    args (a = array([m, n]), v = array([n]));
}

differential_into! {
    /// A rank-3 output chunked in rows of its first two axes, written into `out`.
    collapsed_rows_into: fn(x: [[[f64]]]) -> [[[f64]]] { for c, i, j { x[c, i, j] * 0.5 + 1.0 } }
    cases [c, m, n] in [[0, 2, 3], [2, 0, 3], [1, 1, 1], [1, 400, 400], [3, 17, 9]];
    args (x = array([c, m, n]));
}

differential_into! {
    /// A stack of transposes, tiled over rows of its first two axes, written into `out`.
    tiled_stack_into: fn(x: [[[f32]]]) -> [[[f32]]] { for c, i, j { x[c, j, i] * 0.5 + (c as f32) } }
    cases [c, m, n] in [[0, 2, 3], [2, 0, 3], [1, 1, 1], [1, 300, 200], [3, 17, 9]];
    args (x = array([c, n, m]));
}

differential_into! {
    /// Softmax (`exp` shared between the statistics and the output, see share-rows). The
    /// interpreter recomputes each row's statistics per element (n² per row): the largest case
    /// is kept small enough for debug builds.
    softmax: fn(x: [[f32]]) -> [[f32]] {
        for i, j {
            let m = max k { x[i, k] };
            exp(x[i, j] - m) / sum k { exp(x[i, k] - m) }
        }
    }
    cases [m, n] in [[3, 4], [1, 1], [0, 3], [2, 0], [24, 130]];
    args (x = array([m, n]));
}

differential_into! {
    /// Integers, with a clamped shifted read.
    integer_difference: fn(a: [i64]) -> [i64] { for i { a[i + 1] - a[i] } }
    cases [n] in [[0], [1], [2], [9]];
    args (a = array([n]).within(-1000.0, 1000.0));
}

differential_into! {
    /// A contraction is not built by a comprehension: computed as usual, then copied into `out`
    /// (one case large enough for the GEMM).
    matmul: fn(a: [[f64]], b: [[f64]]) -> [[f64]] { for i, j { sum k { a[i, k] * b[k, j] } } }
    cases [m, k, n] in [[2, 3, 4], [0, 3, 2], [3, 0, 2], [1, 1, 1], [40, 50, 60]];
    args (a = array([m, k]), b = array([k, n]));
}

differential_into! {
    /// A fold's final accumulator, copied into `out`.
    smooth: fn(a: [f64], steps: usize) -> [f64] {
        fold t in 0..steps, acc = a { for i in 0..a.len() { (acc[i - 1] + acc[i] + acc[i + 1]) / 3.0 } }
    }
    cases [n, count] in [[5, 0], [5, 3], [1, 2], [0, 0], [100, 4]];
    args (a = array([n]), steps = scalar(count));
}

differential_into! {
    /// A parameter returned as it is: copied, from any layout into any layout.
    identity: fn(a: [[f32]]) -> [[f32]] { a }
    cases [m, n] in [[3, 4], [0, 2], [1, 1], [20, 30]];
    args (a = array([m, n]));
}

differential_into! {
    /// A select between arrays: both sides evaluated, one copied.
    choose: fn(a: [f64], b: [f64], first: bool) -> [f64] { if first { a } else { for i { b[i] * 2.0 } } }
    cases [n] in [[3], [0], [1], [50]];
    args (a = array([n]), b = array([n]), first = scalar(false));
}

ein::ein! {
    /// Polar coordinates: an array of records is a tuple of arrays, so `out` is a tuple of them.
    #[into(polar_into)]
    #[must_use]
    fn polar(x: [f64], y: [f64]) -> [{ r: f64, theta: f64 }] {
        for i { { r: sqrt(x[i] * x[i] + y[i] * y[i]), theta: y[i] / x[i] } }
    }

    /// A tuple of arrays: every part computed, then every part of `out` checked, then copied.
    #[into(scaled_and_original_into)]
    fn scaled_and_original(a: [[f32]], s: f32) -> ([[f32]], [[f32]]) {
        (for i, j { a[i, j] * s }, a)
    }

    /// A parameter named `out`: the companion's destination is then named `output`.
    #[into(negate_into)]
    fn negate(out: [i32]) -> [i32] { for i { -out[i] } }
}

#[test]
fn an_array_of_records_is_written_into_a_tuple_of_outs() {
    let x = [3.0, 1.0, -2.0, 0.5];
    let y = [4.0, 1.0, 0.0, -0.5];
    let (r, theta) = polar(&x, &y);
    let mut out = (ndarray::Array1::<f64>::zeros(4), vec![f64::NAN; 4]);
    polar_into((&mut out.0, &mut out.1), &x, &y);
    assert_eq!(out.0.as_slice(), Some(r.as_slice()));
    assert_eq!(out.1, theta.as_slice());
    assert_eq!(out.0[0], 5.0);
    assert_eq!(out.1[0], 4.0 / 3.0);
}

#[test]
fn a_tuple_of_arrays_is_written_part_by_part() {
    let a = ndarray::Array2::from_shape_fn((3, 5), |(i, j)| (i * 10 + j) as f32);
    let mut scaled = ndarray::Array2::<f32>::zeros((5, 3));
    let mut original = ndarray::Array2::<f32>::zeros((3, 5));
    // One part transposed, one row-major.
    scaled_and_original_into((&mut scaled.view_mut().reversed_axes(), &mut original), &a, 2.0);
    assert_eq!(scaled.t(), a.mapv(|value| value * 2.0));
    assert_eq!(original, a);
}

#[test]
fn a_parameter_named_out_leaves_the_destination_another_name() {
    let mut output = vec![0; 3];
    negate_into(&mut output, &[1, -2, 3]);
    assert_eq!(output, [-1, 2, -3]);
}

ein::ein! {
    #[into(triad_into)]
    fn triad_returning(b: [f64], c: [f64], s: f64) -> [f64] { for i { b[i] + s * c[i] } }

    #[into(plane_into)]
    fn plane(a: [[f64]]) -> [[f64]] { for i, j { a[i, j] + 1.0 } }
}

#[test]
fn every_mutable_storage_is_an_out() {
    let b: Vec<f64> = (0..6).map(f64::from).collect();
    let c = vec![1.0; 6];
    let expected: Vec<f64> = (0..6).map(|value| f64::from(value) + 0.5).collect();

    let mut vec_out = vec![0.0; 6];
    triad_into(&mut vec_out, &b, &c, 0.5);
    assert_eq!(vec_out, expected);

    let mut rust_array = [0.0; 6];
    triad_into(&mut rust_array, &b, &c, 0.5);
    assert_eq!(rust_array.as_slice(), expected);

    let mut backing = [0.0; 8];
    triad_into(&mut backing[1..7], &b, &c, 0.5);
    assert_eq!(backing[1..7], expected);
    assert_eq!((backing[0], backing[7]), (0.0, 0.0));

    let mut ein_out = ein::Array::from_vec([6], vec![0.0; 6]);
    triad_into(&mut ein_out, &b, &c, 0.5);
    assert_eq!(ein_out.as_slice(), expected);

    let mut dynamic = ndarray::ArrayD::<f64>::zeros(ndarray::IxDyn(&[6]));
    triad_into(&mut dynamic, &b, &c, 0.5);
    assert_eq!(dynamic.as_slice(), Some(expected.as_slice()));

    let mut reversed = ndarray::Array1::<f64>::zeros(6);
    reversed.invert_axis(ndarray::Axis(0));
    triad_into(&mut reversed, &b, &c, 0.5);
    assert_eq!(reversed.to_vec(), expected);

    let a = ndarray::Array2::from_shape_fn((2, 3), |(i, j)| (i * 3 + j) as f64);
    let mut stepped = ndarray::Array2::<f64>::zeros((2, 6));
    plane_into(&mut stepped.slice_mut(ndarray::s![.., ..;2]), &a);
    assert_eq!(stepped.slice(ndarray::s![.., ..;2]), a.mapv(|value| value + 1.0));
    assert!(stepped.slice(ndarray::s![.., 1..;2]).iter().all(|&value| value == 0.0));
}

#[test]
fn a_contiguous_out_is_written_in_place() {
    // Large enough to be filled in parallel chunks.
    let n = 100_000;
    let b: Vec<f64> = (0..n).map(|value| value as f64).collect();
    let c = vec![2.0; n];
    let mut out = vec![0.0; n];
    let address = out.as_ptr();
    triad_into(&mut out, &b, &c, 3.0);
    assert_eq!(out.as_ptr(), address);
    assert!(out.iter().enumerate().all(|(position, &value)| value == position as f64 + 6.0));

    let mut matrix = ein::Array::from_vec([300, 400], vec![0.0; 120_000]);
    let address = matrix.as_slice().as_ptr();
    let a = ndarray::Array2::from_shape_fn((300, 400), |(i, j)| (i + j) as f64);
    plane_into(&mut matrix, &a);
    assert_eq!(matrix.as_slice().as_ptr(), address);
    assert_eq!(matrix[[299, 399]], 699.0);
}

#[test]
fn an_out_larger_than_the_caches_is_written_exactly() {
    // 35 MB, more than a last-level cache, one element off 16-byte alignment: every element
    // written, its neighbours untouched.
    let n = 4_400_000;
    let b: Vec<f64> = (0..n).map(|value| value as f64).collect();
    let c: Vec<f64> = (0..n).map(|value| (value % 7) as f64).collect();
    let mut backing = vec![-1.0; n + 2];
    triad_into(&mut backing[1..=n], &b, &c, 0.5);
    assert_eq!((backing[0], backing[n + 1]), (-1.0, -1.0));
    let wrong = backing[1..=n].iter().enumerate().find(|&(i, &value)| value != i as f64 + 0.5 * (i % 7) as f64);
    assert_eq!(wrong, None);
}

#[test]
fn a_shared_ndarray_out_is_unshared_before_it_is_written() {
    let a = ndarray::Array2::from_shape_fn((2, 2), |(i, j)| (i * 2 + j) as f64);
    let mut out = ndarray::ArcArray2::<f64>::zeros((2, 2));
    let other_owner = out.clone();
    plane_into(&mut out, &a);
    assert_eq!(out, a.mapv(|value| value + 1.0));
    assert!(other_owner.iter().all(|&value| value == 0.0));
}

#[test]
fn an_out_of_the_wrong_shape_panics_before_anything_is_written() {
    let b = vec![1.0; 4];
    let mut short = vec![7.0; 3];
    let message = expect_panic(|| triad_into(&mut short, &b, &b, 1.0));
    assert!(
        message.starts_with("ein: `out` has shape [3] but the result written into it has shape [4] (at "),
        "{message}"
    );
    assert!(message.contains("into.rs"), "{message}");
    assert_eq!(short, [7.0; 3]);

    let a = ndarray::Array2::<f64>::zeros((2, 3));
    let mut wide = ndarray::Array2::<f64>::from_elem((3, 2), 7.0);
    let message = expect_panic(|| plane_into(&mut wide, &a));
    assert!(
        message.starts_with("ein: `out` has shape [3, 2] but the result written into it has shape [2, 3]"),
        "{message}"
    );
    assert!(wide.iter().all(|&value| value == 7.0));

    // Every part of a tuple is checked before any is written; the message names the part.
    let a = ndarray::Array2::<f32>::ones((2, 2));
    let (mut scaled, mut original) = (ndarray::Array2::<f32>::zeros((2, 2)), ndarray::Array2::<f32>::zeros((2, 3)));
    let message = expect_panic(|| scaled_and_original_into((&mut scaled, &mut original), &a, 1.0));
    assert!(
        message.starts_with("ein: `out.1` has shape [2, 3] but the result written into it has shape [2, 2]"),
        "{message}"
    );
    assert!(scaled.iter().chain(&original).all(|&value| value == 0.0));

    // Every column of an array of records is checked before the comprehension runs.
    let (mut r, mut theta) = (vec![0.0; 2], vec![0.0; 3]);
    let message = expect_panic(|| polar_into((&mut r, &mut theta), &[1.0, 2.0], &[1.0, 2.0]));
    assert!(
        message.starts_with("ein: `out.1` has shape [3] but the result written into it has shape [2]"),
        "{message}"
    );
    assert_eq!(r, [0.0; 2]);
}
