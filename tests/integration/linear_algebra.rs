//! Differential tests of contractions and permutations: matmul (inferred and explicit sizes),
//! matvec, batched matmul, min-plus matmul, a 6-D permutation, transpose-add and an outer
//! product with a select.

use crate::harness::{array, scalar};

differential! {
    /// Sizes of `i`, `j`, `k` all inferred; `k` is checked equal on `a` and `b`. The 130×130
    /// case is above the runtime's parallel grain size.
    matmul_inferred: fn(a: [[f64]], b: [[f64]]) -> [[f64]] {
        for i, j { sum k { a[i, k] * b[k, j] } }
    }
    cases [m, k, n] in [[3, 4, 5], [1, 1, 1], [0, 3, 2], [2, 0, 3], [4, 3, 0], [17, 9, 13], [130, 4, 130]];
    args (a = array([m, k]), b = array([k, n]));
}

differential! {
    /// Explicit sizes win: with `extra > 0` the loops run past the arrays' ends and every read
    /// there is clamped (and a read from an empty axis fails in both).
    matmul_explicit_sizes_f32: fn(a: [[f32]], b: [[f32]], m: usize, n: usize, p: usize) -> [[f32]] {
        for i in 0..m, j in 0..p { sum k in 0..n { a[i, k] * b[k, j] } }
    }
    cases [rows, inner, cols, extra] in
        [[3, 4, 5, 0], [1, 1, 1, 0], [0, 3, 2, 0], [2, 0, 3, 0], [4, 3, 2, 1], [9, 7, 8, 2], [1, 1, 1, 3]];
    args (
        a = array([rows, inner]),
        b = array([inner, cols]),
        m = scalar(rows + extra),
        n = scalar(inner + extra),
        p = scalar(cols + extra),
    );
}

differential! {
    matvec: fn(a: [[f64]], x: [f64]) -> [f64] {
        for i { sum j { a[i, j] * x[j] } }
    }
    cases [m, n] in [[3, 4], [1, 1], [0, 5], [6, 0], [40, 33]];
    args (a = array([m, n]), x = array([n]));
}

differential! {
    batched_matmul: fn(a: [[[f64]]], b: [[[f64]]]) -> [[[f64]]] {
        for p, i, j { sum k { a[p, i, k] * b[p, k, j] } }
    }
    cases [batch, m, k, n] in [[2, 3, 4, 5], [1, 1, 1, 1], [0, 2, 3, 4], [3, 2, 0, 2], [2, 0, 3, 4], [5, 6, 7, 3]];
    args (a = array([batch, m, k]), b = array([batch, k, n]));
}

differential! {
    /// A less symmetric 6-D permutation: output axis `a` is input axis 2, and so on.
    permute_6d: fn(x: [[[[[[f64]]]]]]) -> [[[[[[f64]]]]]] {
        for a, b, c, d, e, f { x[c, e, a, f, b, d] }
    }
    cases [s0, s1, s2, s3, s4, s5] in
        [[2, 3, 1, 2, 4, 2], [1, 1, 1, 1, 1, 1], [2, 0, 3, 1, 2, 2], [3, 2, 2, 3, 2, 2], [1, 4, 3, 1, 2, 5]];
    args (x = array([s0, s1, s2, s3, s4, s5]));
}

differential! {
    /// Tropical matmul; an empty `k` gives +inf everywhere.
    min_plus_matmul: fn(a: [[f64]], b: [[f64]]) -> [[f64]] {
        for i, j { min k { a[i, k] + b[k, j] } }
    }
    cases [m, k, n] in [[3, 4, 5], [1, 1, 1], [0, 3, 2], [2, 0, 3], [12, 9, 7]];
    args (a = array([m, k]), b = array([k, n]));
}

differential! {
    /// `i` and `j` each index both axes, so `a` must be square: the 2×3 case fails the size
    /// check in both.
    transpose_add: fn(a: [[f64]]) -> [[f64]] {
        for i, j { a[i, j] + a[j, i] }
    }
    cases [m, n] in [[3, 3], [1, 1], [0, 0], [17, 17], [2, 3]];
    args (a = array([m, n]));
}

differential! {
    outer_product_select: fn(u: [f64], v: [f64]) -> [[f64]] {
        for i, j { if u[i] > v[j] { u[i] - v[j] } else { 0.0 } }
    }
    cases [m, n] in [[4, 5], [1, 1], [0, 3], [3, 0], [150, 120]];
    args (u = array([m]), v = array([n]));
}

differential! {
    /// Power iteration: the state `v` is read over `a`'s columns, checked equal to `v0`'s
    /// length, which every state keeps, so the product is a contraction; a non-square `a`
    /// fails the step's shape check in both.
    power_iteration: fn(a: [[f64]], v0: [f64], steps: usize) -> [f64] {
        fold t in 0..steps, v = v0 {
            let w = for i { sum j { a[i, j] * v[j] } };
            let norm = sqrt(1.0 + sum i { w[i] * w[i] });
            for i { w[i] / norm }
        }
    }
    cases [m, n, count] in [[3, 3, 2], [1, 1, 1], [0, 0, 3], [5, 5, 0], [40, 40, 4], [3, 4, 2], [4, 3, 0]];
    args (a = array([m, n]), v0 = array([n]), steps = scalar(count));
}

differential! {
    /// A matrix state and an array part of a tuple state, read over other arrays' axes.
    matrix_powers: fn(a: [[f64]], x0: [[f64]], steps: usize) -> ([[f64]], f64) {
        fold t in 0..steps, (x, s) = (x0, 0.0) {
            (for i, j { sum k { x[i, k] * a[k, j] } / 4.0 }, s + sum i { x[i, 0] })
        }
    }
    cases [m, n, count] in [[3, 3, 2], [1, 1, 1], [2, 3, 3], [4, 2, 2], [0, 3, 2], [9, 9, 3]];
    args (a = array([n, n]), x0 = array([m, n]), steps = scalar(count));
}

differential! {
    /// Jacobi iteration: the diagonal left out by a select, so no contraction; the state is
    /// read over `a`'s columns.
    jacobi: fn(a: [[f64]], b: [f64], x0: [f64], steps: usize) -> [f64] {
        fold t in 0..steps, x = x0 {
            for i { (b[i] - sum j { if i == j { 0.0 } else { a[i, j] * x[j] } }) / (4.0 + a[i, i] * a[i, i]) }
        }
    }
    cases [n, count] in [[3, 2], [1, 1], [0, 2], [6, 0], [33, 3]];
    args (a = array([n, n]), b = array([n]), x0 = array([n]), steps = scalar(count));
}
