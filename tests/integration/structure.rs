//! Differential tests of the language's structure: `let` with tuple patterns, records and
//! tuples as results (arrays of records come back as tuples of arrays), `a.shape(k)`, partial
//! indexing, nested comprehensions of rank 3 (with empty inner axes), booleans and scalar
//! parameters.

use crate::harness::{array, scalar};

differential! {
    let_tuple_patterns: fn(a: [f64], b: [f64]) -> [f64] {
        for i {
            let (s, d) = (a[i] + b[i], a[i] - b[i]);
            let ((p, q), r) = ((s * d, s / 2.0), d);
            p + q * r
        }
    }
    cases [n] in [[0], [1], [6], [300]];
    args (a = array([n]), b = array([n]));
}

differential! {
    /// An array of records, returned as a tuple of two arrays.
    records_out: fn(r: [f64], theta: [f64]) -> [{re: f64, im: f64}] {
        for i { { re: r[i] * cos(theta[i]), im: r[i] * sin(theta[i]) } }
    }
    cases [n] in [[0], [1], [6], [300]];
    args (r = array([n]), theta = array([n]).within(-3.2, 3.2));
}

differential! {
    /// A rank-2 array of tuples of three element types.
    tuples_out_2d: fn(a: [[i64]]) -> [[(i64, bool, f64)]] {
        for i, j { (a[i, j] * 2, a[i, j] > 0, a[i, j] as f64 / 2.0) }
    }
    cases [m, n] in [[3, 4], [1, 1], [0, 2], [2, 0], [30, 20]];
    args (a = array([m, n]));
}

differential! {
    tuple_result: fn(a: [f64]) -> (f64, [f64], i64) {
        (sum i { a[i] }, for i { a[i] * 2.0 }, a.len())
    }
    cases [n] in [[0], [1], [6], [300]];
    args (a = array([n]));
}

differential! {
    shape_of_rank_3: fn(x: [[[f64]]]) -> [[[f64]]] {
        for i, j, k { x[i, j, k] * (x.shape(2) as f64) + (x.shape(1) as f64) - (x.len() as f64) }
    }
    cases [p, q, r] in [[2, 3, 4], [1, 1, 1], [0, 2, 3], [2, 0, 3], [3, 2, 0], [7, 8, 9]];
    args (x = array([p, q, r]));
}

differential! {
    /// `x[i]` is a row (a sub-array); `j` takes its size from the row.
    partial_indexing: fn(x: [[f64]]) -> [f64] {
        for i { let row = x[i]; sum j { row[j] * row[j] } }
    }
    cases [m, n] in [[3, 4], [1, 1], [0, 3], [4, 0], [40, 33]];
    args (x = array([m, n]));
}

differential! {
    partial_indexing_rank_3: fn(x: [[[f64]]]) -> [[f64]] {
        for i, j { let plane = x[i]; sum k { plane[j, k] * plane[j, k - 1] } }
    }
    cases [p, q, r] in [[2, 3, 4], [1, 1, 1], [0, 2, 3], [2, 0, 3], [3, 2, 0], [7, 8, 9]];
    args (x = array([p, q, r]));
}

differential! {
    /// Nested comprehensions make a rank-3 result; with an empty outer or middle axis the
    /// inner sizes must still be known.
    nested_rank_3: fn(a: [f64], b: [f64], c: [f64]) -> [[[f64]]] {
        for i { for j { for k { a[i] * b[j] + c[k] } } }
    }
    cases [p, q, r] in [[2, 3, 4], [1, 1, 1], [0, 2, 3], [2, 0, 3], [3, 2, 0], [10, 11, 12]];
    args (a = array([p]), b = array([q]), c = array([r]));
}

differential! {
    /// A `let`-bound comprehension used as an array: `k` takes its size from it.
    nested_let_array: fn(a: [f64], b: [f64]) -> [[f64]] {
        for i {
            let row = for j { a[i] + b[j] };
            for k { row[k] * row[k - 1] }
        }
    }
    cases [m, n] in [[3, 4], [1, 1], [0, 3], [4, 0], [40, 33]];
    args (a = array([m]), b = array([n]));
}

differential! {
    bool_comprehension: fn(a: [f32], b: [f32]) -> [[bool]] {
        for i, j { a[i] < b[j] || !(a[i] > 0.0) && b[j] != 0.5 }
    }
    cases [m, n] in [[3, 4], [1, 1], [0, 3], [4, 0], [40, 33]];
    args (a = array([m]), b = array([n]));
}

differential! {
    bool_inputs: fn(m: [[bool]], v: [bool]) -> ([bool], [bool]) {
        (for i { all j { m[i, j] || !v[j] } }, for j { any i { m[i, j] && v[j] } })
    }
    cases [rows, cols] in [[3, 4], [1, 1], [0, 3], [4, 0], [40, 33]];
    args (m = array([rows, cols]), v = array([cols]));
}

differential! {
    /// Scalar parameters of two types; `n` is the explicit size (reads past the end clamp).
    scalar_parameters_f32: fn(a: [f32], s: f32, n: usize) -> [f32] {
        for i in 0..n { a[i] * s + (i as f32) }
    }
    cases [len, count] in [[5, 5], [1, 1], [0, 0], [4, 7], [20, 3], [0, 2]];
    args (a = array([len]), s = scalar(-2.5), n = scalar(count));
}
