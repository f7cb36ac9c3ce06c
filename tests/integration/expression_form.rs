//! Differential tests of the expression form `ein!(…)`: captured ndarray views and scalars,
//! element types decided by rustc (the interpreter gets them as type arguments, from the local
//! that witnesses each type parameter).

use crate::harness::{array, scalar};

differential_expr! {
    expression_matvec:
    cases [m, n] in [[3, 4], [1, 1], [0, 5], [6, 0], [40, 33]];
    let a = array::<f64>([m, n]), x = array::<f64>([n]);
    ein!(for i { sum j { a[i, j] * x[j] } });
}

differential_expr! {
    /// A captured `f32` scalar next to an `f32` array: one type parameter each.
    expression_scalar_capture_f32:
    cases [n] in [[0], [1], [7], [300]];
    let a = array::<f32>([n]), s = scalar(1.5f32);
    ein!(for i { a[i] * s + 1.0 });
}

differential_expr! {
    /// A sum to a scalar over an `i32` array (wrapping).
    expression_sum_i32:
    cases [m, n] in [[0, 3], [3, 0], [1, 1], [20, 30], [150, 150]];
    let a = array::<i32>([m, n]).within(-50000.0, 50000.0);
    ein!(sum i, j { a[i, j] * a[i, j] });
}

differential_expr! {
    /// A captured `usize` local as an explicit size; reads past the end clamp.
    expression_captured_size:
    cases [len, count] in [[5, 5], [1, 1], [0, 0], [4, 9], [30, 10], [0, 2]];
    let a = array::<f64>([len]), n = scalar(count);
    ein!(for i in 0..n { a[i] + a[i - 1] });
}

differential_expr! {
    expression_argmax_i64:
    cases [m, n] in [[3, 4], [1, 1], [0, 3], [10, 20], [4, 0]];
    let a = array::<i64>([m, n]).within(-2.0, 2.0);
    ein!(for i { argmax j { a[i, j] } });
}

differential_expr! {
    expression_softmax_f64:
    cases [m, n] in [[3, 4], [1, 1], [0, 5], [5, 0], [30, 64]];
    let x = array::<f64>([m, n]).within(-5.0, 5.0);
    ein!(for i, j {
        let m = max k { x[i, k] };
        exp(x[i, j] - m) / sum k { exp(x[i, k] - m) }
    });
}

differential_expr! {
    /// An array of records from the expression form: a tuple of arrays.
    expression_records_out:
    cases [n] in [[0], [1], [6], [100]];
    let a = array::<f64>([n]), b = array::<f64>([n]);
    ein!(for i { { re: a[i] * b[i], im: a[i] + b[i] } });
}

differential_expr! {
    /// Statements at the top of the expression form: a `let` then the value.
    expression_let_statements:
    cases [n] in [[0], [1], [7], [300]];
    let a = array::<f64>([n]).within(0.5, 2.0);
    ein!(let total = sum i { a[i] }; for i { a[i] / total });
}

differential_expr! {
    /// Two element types decided by rustc (i32 and f64) and a captured i64 used in arithmetic.
    expression_two_element_types:
    cases [n] in [[0], [1], [7], [300]];
    let k = array::<i32>([n]), x = array::<f64>([n]), offset = scalar(3i64);
    ein!(for i { (k[i] as f64) * x[i] + (offset * 2) as f64 });
}

differential_expr! {
    /// Captured sizes of other integer types (`i32`, `i64`); a negative one fails in both.
    expression_captured_sizes_of_other_widths:
    cases [len, count] in [[5, 6], [1, 2], [5, 0], [30, 10], [0, 1]];
    let a = array::<f64>([len]), n = scalar(count as i32 - 1), m = scalar(count as i64);
    ein!(for i in 0..n, j in 0..m { a[i] * a[j] });
}
