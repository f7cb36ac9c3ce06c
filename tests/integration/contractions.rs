//! Differential tests of contractions: every form the `contract` pass turns into a
//! GEMM, GEMV or dot product — matmul in f32 and f64, transposed operands, batched matmul,
//! matvec, vector–matrix, dot, a sum over two labels, scaled sums, a permuted output, chains
//! of three — against
//! the interpreter's loop nest. Shape cases include empty and length-1 axes, small sizes (the
//! runtime's plain loops) and sizes above its GEMM threshold; every case runs in every layout
//! (row-major, transposed, stepped, reversed, and mixed with broadcast zero strides), which
//! exercises merging strided axes, packing operands that cannot be merged, and negative and
//! zero strides passed to the kernel.

use crate::harness::{array, scalar};

differential! {
    contraction_matmul_f32: fn(a: [[f32]], b: [[f32]]) -> [[f32]] {
        for i, j { sum k { a[i, k] * b[k, j] } }
    }
    cases [m, k, n] in [[3, 4, 5], [1, 1, 1], [0, 3, 2], [2, 0, 3], [4, 3, 0], [1, 40, 1], [37, 29, 41], [64, 33, 70]];
    args (a = array([m, k]), b = array([k, n]));
}

differential! {
    contraction_matmul_f64: fn(a: [[f64]], b: [[f64]]) -> [[f64]] {
        for i, j { sum k { a[i, k] * b[k, j] } }
    }
    cases [m, k, n] in [[3, 4, 5], [1, 1, 1], [0, 3, 2], [2, 0, 3], [4, 3, 0], [1, 30, 50], [50, 30, 1], [45, 31, 52]];
    args (a = array([m, k]), b = array([k, n]));
}

differential! {
    /// Both operands transposed in the program (`aᵀ bᵀ`), on top of the layouts' own strides.
    contraction_transposed_operands: fn(a: [[f32]], b: [[f32]]) -> [[f32]] {
        for i, j { sum k { a[k, i] * b[j, k] } }
    }
    cases [m, k, n] in [[3, 4, 5], [1, 1, 1], [0, 2, 2], [2, 0, 3], [33, 35, 40]];
    args (a = array([k, m]), b = array([n, k]));
}

differential! {
    /// The output's axes in the other order: `C` is written transposed.
    contraction_transposed_output: fn(a: [[f64]], b: [[f64]]) -> [[f64]] {
        for j, i { sum k { a[i, k] * b[k, j] } }
    }
    cases [m, k, n] in [[3, 4, 5], [1, 1, 1], [3, 0, 2], [0, 2, 2], [36, 30, 34]];
    args (a = array([m, k]), b = array([k, n]));
}

differential! {
    /// A chain of three: two pairwise contractions, paired by the runtime from the sizes
    /// (`(a b) c` when `i` is small, `a (b c)` when `l` is).
    contraction_chain_of_three: fn(a: [[f64]], b: [[f64]], c: [[f64]]) -> [[f64]] {
        for i, l { sum j, k { a[i, j] * b[j, k] * c[k, l] } }
    }
    cases [i, j, k, l] in [[3, 4, 5, 2], [1, 1, 1, 1], [0, 3, 2, 4], [3, 0, 2, 4], [3, 2, 0, 4], [3, 2, 4, 0], [2, 30, 40, 50], [50, 40, 30, 2]];
    args (a = array([i, j]), b = array([j, k]), c = array([k, l]));
}

differential! {
    /// A label summed in all three operands, the product grouped the other way, f32, scaled.
    contraction_chain_shared_label: fn(a: [[f32]], b: [f32], c: [[f32]]) -> [[f32]] {
        for i, l { 0.5 * sum k { a[i, k] * (b[k] * c[k, l]) } }
    }
    cases [i, k, l] in [[3, 4, 5], [1, 1, 1], [0, 3, 2], [3, 0, 2], [40, 50, 30]];
    args (a = array([i, k]), b = array([k]), c = array([k, l]));
}

differential! {
    /// A chain with a batch label in all three operands and the output's axes in another
    /// order than the operands'.
    contraction_chain_batched: fn(a: [[[f32]]], b: [[f32]], c: [[[f32]]]) -> [[[f32]]] {
        for l, p, i { sum j { a[p, i, j] * b[p, j] * c[p, j, l] } }
    }
    cases [batch, i, j, l] in [[2, 3, 4, 5], [1, 1, 1, 1], [0, 2, 3, 4], [2, 0, 3, 4], [2, 3, 0, 4], [3, 30, 20, 25]];
    args (a = array([batch, i, j]), b = array([batch, j]), c = array([batch, j, l]));
}

differential! {
    contraction_batched_matmul: fn(a: [[[f32]]], b: [[[f32]]]) -> [[[f32]]] {
        for p, i, j { sum k { a[p, i, k] * b[p, k, j] } }
    }
    cases [batch, m, k, n] in [[2, 3, 4, 5], [1, 1, 1, 1], [0, 2, 3, 4], [3, 2, 0, 2], [2, 0, 3, 4], [3, 20, 25, 30]];
    args (a = array([batch, m, k]), b = array([batch, k, n]));
}

differential! {
    /// A batch label that is not the outermost axis of the operands.
    contraction_batch_in_the_middle: fn(a: [[[f64]]], b: [[[f64]]]) -> [[[f64]]] {
        for p, i, j { sum k { a[i, p, k] * b[k, p, j] } }
    }
    cases [batch, m, k, n] in [[2, 3, 4, 5], [1, 1, 1, 1], [2, 0, 3, 4], [3, 2, 0, 2], [3, 18, 27, 24]];
    args (a = array([m, batch, k]), b = array([k, batch, n]));
}

differential! {
    contraction_matvec: fn(a: [[f64]], x: [f64]) -> [f64] {
        for i { sum j { a[i, j] * x[j] } }
    }
    cases [m, n] in [[3, 4], [1, 1], [0, 5], [6, 0], [200, 170], [1, 300]];
    args (a = array([m, n]), x = array([n]));
}

differential! {
    contraction_vector_matrix: fn(x: [f32], a: [[f32]]) -> [f32] {
        for j { sum i { x[i] * a[i, j] } }
    }
    cases [m, n] in [[3, 4], [1, 1], [0, 5], [6, 0], [190, 210]];
    args (x = array([m]), a = array([m, n]));
}

differential! {
    contraction_dot: fn(x: [f64], y: [f64]) -> f64 {
        sum k { x[k] * y[k] }
    }
    cases [n] in [[0], [1], [7], [40000]];
    args (x = array([n]), y = array([n]));
}

differential! {
    /// A contraction over two labels at once: `k` and `l` merge into one GEMM axis when the
    /// strides allow it, else the operands are packed.
    contraction_two_summed_labels: fn(a: [[[f32]]], b: [[[f32]]]) -> [[f32]] {
        for i, j { sum k, l { a[i, k, l] * b[k, l, j] } }
    }
    cases [m, k, l, n] in [[3, 2, 4, 5], [1, 1, 1, 1], [0, 2, 2, 3], [2, 0, 3, 2], [2, 3, 0, 2], [30, 6, 7, 35]];
    args (a = array([m, k, l]), b = array([k, l, n]));
}

differential! {
    /// Two output labels from the left operand (a multi-axis M group) and a summed label that
    /// is not its last axis.
    contraction_multi_axis_output: fn(a: [[[f64]]], b: [[f64]]) -> [[[f64]]] {
        for i, r, j { sum k { a[i, k, r] * b[j, k] } }
    }
    cases [m, k, r, n] in [[2, 3, 4, 5], [1, 1, 1, 1], [0, 2, 3, 2], [2, 0, 2, 2], [12, 20, 9, 30]];
    args (a = array([m, k, r]), b = array([n, k]));
}

differential! {
    /// The left operand's two output labels are not next to each other in the output: the GEMM
    /// writes a scratch array that is then copied into the output's axis order.
    contraction_interleaved_output: fn(a: [[[f32]]], b: [[f32]]) -> [[[f32]]] {
        for i, j, r { sum k { a[i, r, k] * b[k, j] } }
    }
    cases [m, r, k, n] in [[2, 3, 4, 5], [1, 1, 1, 1], [0, 2, 3, 2], [2, 2, 0, 2], [11, 6, 25, 30]];
    args (a = array([m, r, k]), b = array([k, n]));
}

differential! {
    contraction_scaled_left: fn(a: [[f64]], b: [[f64]], s: f64) -> [[f64]] {
        for i, j { s * sum k { a[i, k] * b[k, j] } }
    }
    cases [m, k, n] in [[3, 4, 5], [1, 1, 1], [0, 3, 2], [2, 0, 3], [40, 30, 45]];
    args (a = array([m, k]), b = array([k, n]), s = scalar(-2.5));
}

differential! {
    /// A scale on the right, and an infinite one: an empty sum times infinity is NaN, as in
    /// the loop nest.
    contraction_scaled_right: fn(a: [[f32]], b: [[f32]], s: f32) -> [[f32]] {
        for i, j { sum k { a[i, k] * b[k, j] } * s }
    }
    cases [m, k, n, infinite] in [[3, 4, 5, 0], [1, 1, 1, 0], [2, 0, 3, 1], [2, 0, 3, 0], [38, 33, 40, 0]];
    args (a = array([m, k]), b = array([k, n]), s = scalar(if infinite == 1 { f32::INFINITY } else { 0.75 }));
}

differential! {
    /// Attention written pointfully: two contractions around a softmax.
    contraction_attention: fn(q: [[f32]], k: [[f32]], v: [[f32]]) -> [[f32]] {
        let s = for i, j { sum d { q[i, d] * k[j, d] } };
        let p = for i, j { exp(s[i, j] - max l { s[i, l] }) / sum l { exp(s[i, l] - max m { s[i, m] }) } };
        for i, d { sum j { p[i, j] * v[j, d] } }
    }
    cases [n, d] in [[3, 2], [1, 1], [0, 2], [2, 0], [40, 24]];
    args (q = array([n, d]), k = array([n, d]), v = array([n, d]));
}

differential_expr! {
    /// The expression form: element types left to rustc, dispatched to the GEMM at run time.
    /// (f64: the harness takes its f32 tolerance from the program's types, which the
    /// expression form leaves to rustc.)
    contraction_expression_form_f64:
    cases [m, k, n] in [[3, 4, 5], [1, 1, 1], [0, 3, 2], [2, 0, 3], [40, 35, 30]];
    let a = array::<f64>([m, k]), b = array::<f64>([k, n]);
    ein!(for i, j { sum k { a[i, k] * b[k, j] } });
}

differential_expr! {
    /// Integers through the expression form: the runtime's plain loops, wrapping like the
    /// interpreter.
    contraction_expression_form_i64:
    cases [m, k, n] in [[3, 4, 5], [1, 1, 1], [0, 3, 2], [2, 0, 3], [40, 35, 30]];
    let a = array::<i64>([m, k]).within(-1.0e12, 1.0e12), b = array::<i64>([k, n]).within(-1.0e9, 1.0e9);
    ein!(for i, j { sum k { a[i, k] * b[k, j] } });
}

differential! {
    /// Contractions inside element-wise consumers: a division by a scalar, a negation, a
    /// bias and a ReLU, two sums in one element; each sum runs as a contraction, the consumer
    /// as written.
    contraction_inside_consumers: fn(a: [[f64]], b: [[f64]], c: [[f64]], bias: [f64], n: f64) -> ([[f64]], [[f64]], [[f64]]) {
        (
            for i, j { sum k { a[i, k] * b[k, j] } / n },
            for i, j { max(-sum k { a[i, k] * b[k, j] } + bias[j], 0.0) },
            for i, j { sum k { a[i, k] * b[k, j] } - sum k { a[i, k] * c[k, j] } },
        )
    }
    cases [m, k, p] in [[3, 4, 5], [1, 1, 1], [0, 3, 2], [2, 0, 3], [4, 3, 0], [37, 29, 41]];
    args (a = array([m, k]), b = array([k, p]), c = array([k, p]), bias = array([p]), n = scalar(3.0));
}

differential! {
    /// The regression of issue 13: `sum i { r[i] * x[i, k] } / n` (a gradient) contracts like
    /// `inv_n * sum …` does.
    contraction_divided_by_a_count: fn(r: [f32], x: [[f32]], n: f32) -> [f32] {
        for k { sum i { r[i] * x[i, k] } / n }
    }
    cases [m, d] in [[5, 3], [1, 1], [0, 4], [3, 0], [300, 32]];
    args (r = array([m]), x = array([m, d]), n = scalar(7.0f32));
}

differential! {
    /// A function of one operand per row (`share-rows` computes `exp(a[i, k])` once per row),
    /// then a vector–matrix contraction per row inside the row loop, which is versioned for
    /// unit-stride views: the contraction takes its operands' plain views from either copy.
    contraction_per_row_inside_a_versioned_loop: fn(a: [[f32]], b: [[f32]]) -> [[f32]] {
        for i, j { sum k { exp(a[i, k] * 0.1) * b[k, j] } }
    }
    cases [m, k, n] in [[3, 4, 5], [1, 1, 1], [0, 3, 2], [2, 0, 3], [4, 3, 0], [9, 70, 65]];
    args (a = array([m, k]), b = array([k, n]));
}

differential! {
    /// Factors that are expressions of the labels, computed first into arrays of their own:
    /// a covariance (both factors centred columns, the consumer a division), an element-wise
    /// function of one operand, a factor with a captured scalar, and a batched product.
    contraction_computed_factors: fn(x: [[f64]], a: [[f64]], b: [[f64]], t: [[[f64]]], u: [[[f64]]], c: f64) -> ([[f64]], [[f64]], [[f64]], [[[f64]]]) {
        let n = x.len() as f64;
        let m = for j { sum i { x[i, j] } / n };
        (
            for p, q { sum i { (x[i, p] - m[p]) * (x[i, q] - m[q]) } / (n - 1.0) },
            for i, j { sum k { exp(a[i, k] * 0.1) * b[k, j] } },
            for i, j { sum k { (a[i, k] * 0.5 + c) * (b[k, j] - c) } },
            for s, i, j { sum k { tanh(t[s, i, k]) * u[s, k, j] } },
        )
    }
    cases [r, m, k, n] in [[5, 3, 4, 2], [1, 1, 1, 1], [0, 2, 0, 3], [3, 0, 2, 0], [40, 33, 29, 41]];
    args (x = array([r, m]), a = array([m, k]), b = array([k, n]), t = array([2, m, k]), u = array([2, k, n]), c = scalar(0.25));
}

differential! {
    /// Scalars each row computes before its products (a softmax's maximum and total, a norm, a
    /// row sum) are computed into arrays over the rows first, so the nest is one product instead
    /// of one vector–matrix product per row; a row named by `let` is read in place.
    contraction_after_row_scalars: fn(s: [[f32]], v: [[f32]], x: [[f64]], w: [[f64]]) -> ([[f32]], [[f64]], [[f64]], [[f64]]) {
        (
            for i { let m = max k { s[i, k] }; let z = sum k { exp(s[i, k] - m) }; for c { sum j { exp(s[i, j] - m) / z * v[j, c] } } },
            for i { let r = x[i]; let n = sqrt(sum k { r[k] * r[k] }) + 1.0; for j { sum k { r[k] * w[k, j] } / n } },
            for i { let t = sum k { x[i, k] }; for j { sum k { x[i, k] * w[k, j] } * 0.5 + t } },
            for i { let (lo, hi) = (min k { x[i, k] }, max k { x[i, k] }); for j { sum k { (x[i, k] - lo) * w[k, j] } / (hi - lo + 1.0) } },
        )
    }
    cases [m, k, n, kw] in [[3, 4, 5, 4], [1, 1, 1, 1], [0, 3, 2, 3], [2, 0, 3, 0], [4, 3, 0, 3], [33, 29, 17, 29], [3, 4, 5, 2]];
    args (s = array([m, k]), v = array([k, n]), x = array([m, k]), w = array([kw, n]));
}
