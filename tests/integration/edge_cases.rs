//! Differential tests aimed where a code generator most easily diverges from the semantics:
//! NaN in reductions, ties in parallel arg-reductions, wrapping `MIN / -1`, unsigned wrap,
//! huge `usize` indices, unusual index arithmetic, selects of whole arrays, `let`-bound arrays
//! of records, folds nested in comprehensions, and outputs large enough to run in parallel
//! with short or long outer axes.

use crate::harness::{array, scalar};

differential! {
    /// `sqrt` of a negative is NaN: `max`/`min` ignore NaN (like `f64::max`); `argmax`/`argmin`
    /// move only on a strictly greater/smaller value, and NaN compares false.
    nan_in_row_reductions: fn(a: [[f64]]) -> ([f64], [f64], [usize], [usize]) {
        (
            for i { max j { sqrt(a[i, j]) } },
            for i { min j { sqrt(a[i, j]) } },
            for i { argmax j { sqrt(a[i, j]) } },
            for i { argmin j { sqrt(a[i, j]) } },
        )
    }
    cases [m, n] in [[3, 4], [1, 1], [0, 3], [10, 20], [6, 2], [40, 200]];
    args (a = array([m, n]));
}

differential! {
    /// Integer reductions to one scalar over up to 100 000 elements (the parallel reduce):
    /// values in 0..=3, so argmax/argmin must keep the first of many ties across chunks.
    scalar_int_reductions: fn(a: [i64]) -> (i64, i64, i64, usize, usize, i64) {
        (
            sum i { a[i] },
            max i { a[i] },
            min i { a[i] },
            argmax i { a[i] },
            argmin i { a[i] },
            prod i { a[i] + 1 },
        )
    }
    cases [n] in [[1], [7], [1000], [100000], [0]];
    args (a = array([n]).within(0.0, 3.0));
}

differential! {
    /// Float reductions to one scalar over up to 100 000 elements, half of them NaN under
    /// `sqrt`: the chunked parallel argmax must give the same index as the sequential
    /// definition (best = first value, move only on a strictly greater value).
    scalar_float_reductions_with_nan: fn(x: [f64]) -> (f64, f64, f64, usize, usize, bool, bool) {
        (
            max i { sqrt(x[i]) },
            min i { x[i] },
            prod i { 1.0 + x[i] * 0.001 },
            argmax i { sqrt(x[i]) },
            argmin i { sqrt(x[i]) },
            all i { x[i] < 0.99999 },
            any i { x[i] > 0.99999 },
        )
    }
    cases [n] in [[1], [2], [9], [1000], [100000]];
    args (x = array([n]));
}

differential! {
    /// The same, without NaN: plain parallel argmax/argmin over floats, and ties from
    /// rounding to a coarse grid.
    scalar_float_argmax: fn(x: [f64]) -> (usize, usize, usize) {
        (argmax i { x[i] }, argmin i { x[i] }, argmax i { floor(x[i] * 4.0) })
    }
    cases [n] in [[1], [2], [9], [1000], [100000]];
    args (x = array([n]));
}

differential! {
    /// `MIN / -1` wraps to MIN and `MIN % -1` is 0 (Rust's plain `/` would panic), for i64
    /// and i32; `abs(MIN)` and `-MIN` wrap to MIN.
    division_overflow_wraps: fn(a: [i64], b: [i64], c: [i32], d: [i32]) -> ([i64], [i64], [i32], [i32], [i64]) {
        (
            for i { (a[i] + i) / b[i] },
            for i { (a[i] + i) % b[i] },
            for j { c[j] / d[j] },
            for j { c[j] % d[j] },
            for i { abs(a[i]) + (-a[i]) },
        )
    }
    cases [n, m] in [[3, 2], [1, 1], [0, 0], [6, 0], [0, 4], [40, 40]];
    args (
        a = array([n]).within(i64::MIN as f64, i64::MIN as f64),
        b = array([n]).within(-1.0, -1.0),
        c = array([m]).within(i32::MIN as f64, i32::MIN as f64 + 1.0),
        d = array([m]).within(-1.0, -1.0),
    );
}

differential! {
    /// usize arithmetic wraps (`a - b` below zero), divides and takes remainders.
    usize_arithmetic: fn(a: [usize], b: [usize]) -> [usize] {
        for i { a[i] - b[i] + a[i] * b[i] / max(b[i], 1) % 7 }
    }
    cases [n] in [[0], [1], [8], [300]];
    args (a = array([n]), b = array([n]));
}

differential! {
    /// `usize` indices above `i64::MAX` count as `i64::MAX` and clamp to the last element
    /// (not wrap to a negative index and clamp to the first).
    huge_usize_gather: fn(a: [f64], idx: [usize]) -> [f64] {
        for i { a[idx[i]] * 10.0 + a[idx[i] % 5] }
    }
    cases [m, n] in [[5, 8], [1, 3], [7, 0], [30, 100]];
    args (a = array([m]), idx = array([n]).within(0.0, 1.8e19));
}

differential! {
    /// Index arithmetic beyond `i ± c`: squares, negation, division, remainder.
    unusual_index_arithmetic: fn(a: [f64]) -> [f64] {
        for i in 0..a.len() { a[i * i] + a[-i] * 2.0 + a[i / 2] * 3.0 + a[i % 3] * 5.0 }
    }
    cases [n] in [[0], [1], [2], [5], [60]];
    args (a = array([n]));
}

differential! {
    /// A sum over an explicit range longer than the array: every read past the end clamps.
    explicit_range_sum_past_end: fn(a: [f64], n: usize) -> f64 {
        sum k in 0..n { a[k] * (k as f64) }
    }
    cases [len, count] in [[10, 10], [1, 1], [0, 0], [10, 100000], [3, 2], [0, 5]];
    args (a = array([len]), n = scalar(count));
}

differential! {
    /// A select between whole arrays, decided by a `bool` parameter.
    select_of_arrays: fn(a: [f64], flag: bool) -> [f64] {
        if flag { for i { a[i] * 2.0 } } else { for i { -a[i] } }
    }
    cases [n] in [[0], [1], [2], [7], [300]];
    args (a = array([n]), flag = scalar(n % 2 == 0));
}

differential! {
    /// A `let`-bound array of records, indexed (also shifted) and projected.
    let_bound_records: fn(a: [f64], b: [f64]) -> [f64] {
        let z = for i { { re: a[i], im: b[i] } };
        for k { z[k].re * z[k].im - z[k - 1].im }
    }
    cases [n] in [[0], [1], [2], [7], [300]];
    args (a = array([n]), b = array([n]));
}

differential! {
    /// A fold with an array accumulator inside a comprehension (it does not depend on `i`).
    fold_inside_comprehension: fn(a: [f64]) -> [f64] {
        for i {
            let v = fold t in 0..3, acc = a { for j in 0..a.len() { acc[j] * 0.5 + acc[j + 1] } };
            v[i] + v[a.len() - 1 - i]
        }
    }
    cases [n] in [[0], [1], [2], [7], [50]];
    args (a = array([n]));
}

differential! {
    /// A `let`-bound matrix, partially indexed by rows.
    let_bound_matrix_rows: fn(a: [[f64]]) -> [f64] {
        let m = for i, j { a[i, j] * a[j, i] };
        for i { let row = m[i]; sum j { row[j] + row[j + 1] } }
    }
    cases [n, n2] in [[3, 3], [1, 1], [0, 0], [20, 20], [2, 3]];
    args (a = array([n, n2]));
}

differential! {
    /// Outputs above the parallel grain size with a short outer axis (2 × 20 000), a long
    /// one (20 000 × 2) and rank 3.
    parallel_output_shapes: fn(a: [f64], b: [f64], c: [f64]) -> ([[f64]], [[[f64]]]) {
        (for i, j { a[i] * b[j] }, for i, j, k { a[i] + b[j] * c[k] })
    }
    cases [p, q, r] in [[2, 20000, 1], [20000, 2, 1], [3, 100, 100], [0, 20000, 2], [1, 1, 1]];
    args (a = array([p]), b = array([q]), c = array([r]));
}

differential! {
    /// Three nested reductions in one scalar and a reduction of a reduction.
    nested_reductions: fn(x: [[[f64]]]) -> (f64, f64, [f64]) {
        (
            sum i, j, k { x[i, j, k] * x[i, j, k] },
            max i { sum j { min k { x[i, j, k] } } },
            for i { prod j { 1.0 + max k { x[i, j, k] } } },
        )
    }
    cases [p, q, r] in [[2, 3, 4], [1, 1, 1], [0, 2, 3], [2, 0, 3], [3, 2, 0], [20, 30, 40]];
    args (x = array([p, q, r]));
}

differential! {
    /// Both sides of `||` are evaluated: with a zero in `b`, the remainder by zero fails even
    /// where `b[i] == 0` already decides the answer (cases with `low = 1` have no zeros).
    logical_or_evaluates_both_sides: fn(a: [i64], b: [i64]) -> [bool] {
        for i { b[i] == 0 || a[i] % b[i] == 0 }
    }
    cases [n, low] in [[5, 1], [1, 1], [0, 0], [50, 0], [8, 1], [300, 1]];
    args (a = array([n]), b = array([n]).within(low as f64, 3.0));
}

differential! {
    /// Both branches of `if` are evaluated: reading `a[i]` from an empty `a` fails even when
    /// the condition picks the other branch.
    select_evaluates_both_branches: fn(a: [f64], n: usize) -> [f64] {
        for i in 0..n { if a.len() > 0 { a[i] } else { 0.0 } }
    }
    cases [len, count] in [[5, 5], [1, 1], [0, 0], [0, 3], [4, 9], [30, 10]];
    args (a = array([len]), n = scalar(count));
}

differential! {
    /// Indices computed from floats and casts (`as i64`, `as usize`), and suffixed literals.
    computed_indices_and_suffixes: fn(a: [f32], x: [f64]) -> [f32] {
        for i { a[(x[i] * 10.0) as i64] * 2.5f32 + a[(i * 2i64) as usize] - a[i] * (3i32 as f32) }
    }
    cases [m, n] in [[5, 5], [1, 1], [0, 0], [12, 12], [3, 3]];
    args (a = array([m]), x = array([n]).within(-0.5, 1.5));
}

differential! {
    /// A size given by an `i32` parameter (negative for the first case: an error in both).
    i32_size_parameter: fn(a: [f64], n: i32) -> [f64] {
        for i in 0..n { a[i] + a[i + 1] }
    }
    cases [len, count] in [[5, 0], [5, 6], [1, 2], [0, 1], [30, 10], [3, 3]];
    args (a = array([len]), n = scalar(count as i32 - 1));
}

differential! {
    /// Arrays the compiled code builds itself — a rank-3 array of records, a row per
    /// iteration — are read with the last index unscaled (`get_unit_unchecked`): whole, through
    /// a sub-array at leading indices, shifted and clamped, and backwards; every layout of the
    /// inputs, empty and length-1 axes. The checked build asserts each such read's stride.
    built_arrays_read_at_unit_stride: fn(a: [[f64]], b: [f64]) -> ([[f64]], [f64]) {
        let t = for i, j, k { { lo: a[i, j] * b[k], hi: a[i, j] + b[k] } };
        let s = for i, j { let r = t[i, j]; sum k { r[k].lo * r[k].hi } };
        (
            for i, j { s[i, j - 1] + s[i, j + 1] - s[i, j] },
            for i {
                let row = for k { exp(a[i, k]) * 0.5 };
                let back = for k in 0..a.shape(1) { row[a.shape(1) - 1 - k] };
                sum k { row[k] * back[k] } + sum j, k { t[i, j, k].lo }
            },
        )
    }
    cases [m, n, p] in [[0, 3, 2], [1, 1, 1], [3, 0, 2], [2, 3, 0], [7, 9, 5], [40, 33, 17]];
    args (a = array([m, n]), b = array([p]));
}
