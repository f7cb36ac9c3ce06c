//! Differential tests of reductions: sums to a scalar (parallel reduce), every reduction over
//! rows including empty rows (identities), argmax/argmin with ties, k-means assignment,
//! softmax, layernorm and a histogram.

use crate::harness::{array, scalar};

differential! {
    /// The 100 000 case runs the parallel reduce over many chunks.
    sum_of_squares: fn(a: [f64]) -> f64 {
        sum i { a[i] * a[i] }
    }
    cases [n] in [[0], [1], [17], [1000], [100000]];
    args (a = array([n]));
}

differential! {
    sum_of_squares_2d_f32: fn(x: [[f32]]) -> f32 {
        sum i, j { x[i, j] * x[i, j] }
    }
    cases [m, n] in [[0, 4], [3, 0], [1, 1], [40, 50], [200, 200]];
    args (x = array([m, n]));
}

differential! {
    /// Empty rows give the identities: -inf, +inf, 1, true, false.
    row_reductions: fn(a: [[f64]]) -> ([f64], [f64], [f64], [bool], [bool]) {
        (
            for i { max j { a[i, j] } },
            for i { min j { a[i, j] } },
            for i { prod j { a[i, j] } },
            for i { all j { a[i, j] > -0.5 } },
            for i { any j { a[i, j] > 0.9 } },
        )
    }
    cases [m, n] in [[3, 4], [1, 1], [0, 3], [4, 0], [20, 30]];
    args (a = array([m, n]));
}

differential! {
    /// Integer reductions: empty rows give i32::MIN / i32::MAX / 0 / 1; sums and products
    /// wrap.
    int_row_reductions: fn(a: [[i32]]) -> ([i32], [i32], [i32], [i32]) {
        (
            for i { max j { a[i, j] } },
            for i { min j { a[i, j] } },
            for i { sum j { a[i, j] } },
            for i { prod j { a[i, j] } },
        )
    }
    cases [m, n] in [[3, 4], [1, 1], [0, 3], [4, 0], [20, 30]];
    args (a = array([m, n]).within(-1.0e9, 1.0e9));
}

differential! {
    /// Values in -2..=2, so ties are everywhere: both must pick the first index (rows of 300:
    /// across the runtime's blocks of 128). An empty row makes argmax fail in both.
    argmax_argmin_ties: fn(a: [[i64]]) -> ([usize], [usize]) {
        (for i { argmax j { a[i, j] } }, for i { argmin j { a[i, j] } })
    }
    cases [m, n] in [[3, 4], [1, 1], [0, 3], [10, 20], [4, 0], [6, 300]];
    args (a = array([m, n]).within(-2.0, 2.0));
}

differential! {
    /// Argmax of a float expression and a scalar argmax over a whole vector.
    argmax_float: fn(a: [f64]) -> (usize, usize, [usize]) {
        (argmax i { a[i] }, argmin i { a[i] * a[i] }, for i { argmax j { a[j] * a[i] } })
    }
    cases [n] in [[1], [2], [9], [50], [0]];
    args (a = array([n]));
}

differential! {
    /// Each point goes to its nearest centroid (squared distance; ties to the first). No
    /// centroids fails in both; zero dimensions makes every distance 0.
    kmeans_assign: fn(points: [[f64]], centroids: [[f64]]) -> [usize] {
        for p {
            argmin c {
                sum d {
                    let diff = points[p, d] - centroids[c, d];
                    diff * diff
                }
            }
        }
    }
    cases [np, nc, dim] in [[10, 3, 2], [1, 1, 1], [5, 2, 0], [0, 3, 2], [50, 7, 4], [4, 0, 2]];
    args (points = array([np, dim]), centroids = array([nc, dim]));
}

differential! {
    softmax_rows_f32: fn(x: [[f32]]) -> [[f32]] {
        for i, j {
            let m = max k { x[i, k] };
            exp(x[i, j] - m) / sum k { exp(x[i, k] - m) }
        }
    }
    cases [m, n] in [[3, 4], [1, 1], [0, 5], [5, 0], [30, 64]];
    args (x = array([m, n]).within(-5.0, 5.0));
}

differential! {
    /// The row's exponentials are shared (`share_rows`) though the sum multiplies them by a
    /// weight; a 3-D batch of rows; f64.
    weighted_softmax_3d: fn(x: [[[f64]]], w: [f64]) -> [[[f64]]] {
        for b, i, j {
            let m = max k { x[b, i, k] };
            exp(x[b, i, j] - m) * w[j] / sum k { exp(x[b, i, k] - m) * w[k] }
        }
    }
    cases [p, m, n] in [[2, 3, 4], [1, 1, 1], [0, 2, 3], [2, 0, 3], [2, 3, 0], [3, 7, 40]];
    args (x = array([p, m, n]).within(-5.0, 5.0), w = array([n]).within(0.5, 2.0));
}

differential! {
    /// Log-sum-exp and a `sin` shared between a reduction and the row after it, f32.
    log_sum_exp_and_sines: fn(x: [[f32]]) -> [[f32]] {
        for i, j {
            let total = sum k { sin(x[i, k]) * sin(x[i, k]) };
            sin(x[i, j]) / (1.0 + total) + ln(sum k { exp(x[i, k]) })
        }
    }
    cases [m, n] in [[3, 4], [1, 1], [0, 5], [5, 0], [20, 33]];
    args (x = array([m, n]).within(-3.0, 3.0));
}

differential! {
    layernorm_rows: fn(x: [[f64]], eps: f64) -> [[f64]] {
        for i, j {
            let n = x.shape(1) as f64;
            let mean = sum k { x[i, k] } / n;
            let var = sum k { let d = x[i, k] - mean; d * d } / n;
            (x[i, j] - mean) / sqrt(var + eps)
        }
    }
    cases [m, n] in [[3, 4], [1, 1], [0, 5], [5, 0], [30, 64]];
    args (x = array([m, n]).within(-3.0, 3.0), eps = scalar(1.0e-5));
}

differential! {
    /// A histogram as a comprehension over bins of a sum of selects.
    histogram: fn(data: [i64], bins: usize) -> [i64] {
        for v in 0..bins { sum i { if data[i] == v { 1 } else { 0 } } }
    }
    cases [n, b] in [[20, 5], [1, 1], [0, 4], [10, 0], [500, 10]];
    args (data = array([n]).within(-1.0, 10.0), bins = scalar(b));
}

differential! {
    /// Reductions over a column written inside `for i, j` (a column softmax, centring, an
    /// inline batch normalisation): computed once per column before the rows, as if written as
    /// comprehensions of their own.
    column_reductions_inside_the_element: fn(x: [[f64]], y: [[f32]]) -> ([[f64]], [[f64]], [[f32]]) {
        (
            for i, j { exp(x[i, j] - max k { x[k, j] }) / sum k { exp(x[k, j] - max l { x[l, j] }) } },
            { let n = x.len() as f64; for i, j { x[i, j] - sum k { x[k, j] } / n } },
            for i, j {
                let m = sum k { y[k, j] } / 4.0;
                let v = sum k { (y[k, j] - m) * (y[k, j] - m) };
                (y[i, j] - m) / sqrt(v + 0.001)
            },
        )
    }
    cases [r, c] in [[0, 3], [3, 0], [1, 1], [5, 4], [17, 33]];
    args (x = array([r, c]), y = array([r, c]));
}

differential! {
    /// Sums whose reads are shifted (clamped) along the sum's own axis cannot fail, so they
    /// are computed once, outside the loop over `i`: the same values, and with an empty `y`
    /// (a sum of nothing) or an empty `x` (no element) no error either.
    shifted_sums_outside_the_element: fn(x: [f64], y: [f64], a: [[f64]]) -> ([f64], [f64], [[f64]]) {
        (
            for i { x[i] + sum k { y[k + 1] } },
            for i { x[i] / (1.0 + sum k { abs(y[k + 1] - y[k]) }) },
            for i, j { a[i, j] - sum k { a[i, k + 1] - a[i, k] } },
        )
    }
    cases [n, m, r, c] in [[4, 5, 3, 4], [0, 3, 0, 2], [3, 0, 2, 0], [1, 1, 1, 1], [20, 37, 7, 9]];
    args (x = array([n]), y = array([m]), a = array([r, c]));
}

differential! {
    /// Values that fail only on an empty axis the loop around them runs over (an argmax over
    /// it, a read at its result) are computed once, before the loop, only when it runs: the
    /// same values, and no error for an empty `x`. An argmax over another array (`y`) may fail
    /// while the loop runs: it stays inside, failing for an empty `y` and non-empty `x` alike.
    guarded_values_outside_the_element: fn(x: [f64], y: [i64], a: [[f32]]) -> ([f64], [usize], [f64], [[f32]]) {
        (
            for i { x[i] - x[argmax k { x[k] }] },
            for i in 0..x.len() { argmin k { x[k] } },
            for i { x[i] + y[argmax k { y[k] }] as f64 },
            for i, j { a[i, j] - a[argmax k { a[k, j] }, j] },
        )
    }
    cases [n, m, r, c] in [[5, 4, 3, 4], [0, 3, 0, 2], [3, 0, 2, 0], [1, 1, 1, 1], [40, 17, 9, 13], [0, 0, 0, 0]];
    args (x = array([n]), y = array([m]).within(-3.0, 3.0), a = array([r, c]).within(-2.0, 2.0));
}

differential! {
    /// A let-bound comprehension read several times in one step of its consumer is computed
    /// once per element, where it is read (a rank-1 and a rank-2 map; the logistic loss's `p`,
    /// whose element has a loop, stays an array).
    read_twice_per_element: fn(x: [[f64]], y: [f64], w: [f64]) -> (f64, [[f64]]) {
        let p = for i { 1.0 / (1.0 + exp(-sum k { x[i, k] * w[k] })) };
        let q = for i { exp(y[i]) };
        let e = for i, k { exp(x[i, k]) };
        (
            sum i { y[i] * ln(p[i]) + (1.0 - y[i]) * ln(1.0 - p[i]) + q[i] * ln(q[i]) },
            for i, k { e[i, k] * e[i, k] - w[k] * e[i, k] },
        )
    }
    cases [m, n] in [[0, 3], [1, 1], [5, 0], [7, 9], [300, 20]];
    args (x = array([m, n]), y = array([m]), w = array([n]));
}

differential! {
    /// The same with an element that can fail (a zero divisor): both fail alike.
    read_twice_per_element_failing: fn(d: [i64]) -> [i64] {
        let q = for i { 100 / d[i] };
        for i { q[i] * q[i] + q[i] }
    }
    cases [n] in [[0], [1], [6], [40]];
    args (d = array([n]).within(-3.0, 3.0));
}

differential! {
    /// Invariants that can fail while their loop runs, holding every place of the body that
    /// can: computed once before the loop (when it runs), failing as the loop would (a zero
    /// divisor, a gather from an empty array).
    failing_invariants_leave_their_loop: fn(a: [i64], b: [i64], d: i64, y: [f64], idx: [usize]) -> ([i64], [f64]) {
        (for i { a[i] + sum k { b[k] / d } }, for i { (a[i] as f64) * sum k { y[idx[k]] } })
    }
    cases [m, n, p, q, dv] in [[0, 3, 2, 2, 3], [2, 3, 0, 2, 4], [3, 0, 4, 0, 3], [4, 5, 3, 6, 3], [40, 30, 7, 9, 0]];
    args (a = array([m]), b = array([n]), d = scalar(dv as i64 - 3), y = array([p]), idx = array([q]).within(0.0, 6.0));
}

differential! {
    /// Steps with two or more transcendental calls are computed a block at a time into a
    /// buffer before they are folded: the same values in the same grouping (lanes, tree, tail)
    /// around every block edge (64 f64, 128 f32), at the top level and inside a comprehension.
    costly_steps: fn(x: [f64], a: [[f32]]) -> (f64, [f32], [f32]) {
        (
            sum k { ln(1.0 + exp(x[k])) * cos(x[k]) },
            for i { sum k { exp(a[i, k]) * sin(a[i, k]) } },
            for i { max k { tanh(a[i, k]) - exp(a[i, k]) } }
        )
    }
    cases [n, m, p] in [[0, 0, 3], [1, 3, 0], [15, 1, 1], [16, 2, 31], [17, 2, 32], [63, 3, 127], [64, 3, 128], [65, 2, 129], [200, 2, 300], [20000, 300, 3]];
    args (x = array([n]).specials(), a = array([m, p]));
}

differential! {
    /// `argmax`/`argmin` down the columns run side by side (a best value and its position per
    /// column, a block of columns per step of `i`): ties everywhere in `a` (values in -2..=2)
    /// go to the first index, NaNs and infinities in `x` are kept or passed over as one column
    /// at a time does; an argmax of a sum over a middle axis; the result in an epilogue. No
    /// rows fails in both (when there are columns); the random views give every layout.
    column_argmax_argmin: fn(a: [[i64]], x: [[f64]], t: [[[f32]]]) -> ([usize], [usize], [usize], [usize], [usize]) {
        (
            for j { argmax i { a[i, j] } },
            for j { argmin i { a[i, j] } },
            for j { argmax i { x[i, j] } },
            for j { argmin i { x[i, j] * x[i, j] } * 2 + 1 },
            for j { argmax i { sum k { t[i, k, j] } } },
        )
    }
    cases [m, n, p] in [[0, 3, 2], [3, 0, 2], [1, 1, 1], [3, 4, 0], [7, 33, 3], [5, 20, 40], [40, 300, 2], [300, 40, 5], [2, 9000, 1]];
    args (a = array([m, n]).within(-2.0, 2.0), x = array([m, n]).specials(), t = array([m, p, n]));
}

differential! {
    /// Two-axis comprehensions whose reductions read along the outer index (`x[k, j, i]` in
    /// `for i, k`) run a column at a time, the rows side by side (`Fill::fill_columns`); the
    /// transposed views give the same programs on column-major arrays the other way round
    /// (`for b, k { sum j { x[b, j, k] } }` read through reversed axes). Sums long enough for
    /// the lanes, an epilogue reading the row index, an argmax with ties, a two-level nest
    /// and `any`; empty and length-1 axes, and blocks with tails.
    columns_of_reductions: fn(x: [[[f64]]], a: [[[i64]]], w: [f64]) -> ([[f64]], [[f64]], [[f64]], [[usize]], [[f64]], [[bool]]) {
        (
            for i, k { sum j { x[k, j, i] } },
            for b, k { sum j { x[b, j, k] } },
            for i, k { sum j { x[k, j, i] * x[k, j, i] } * w[i] },
            for i, k { argmax j { a[k, j, i] } },
            for i, k { sum j { max l { x[k, j, i] * x[l, j, i] } } },
            for i, k { any j { x[k, j, i] > 0.9 } },
        )
    }
    cases [m, p, n] in [[0, 3, 2], [3, 0, 2], [2, 3, 0], [1, 1, 1], [3, 5, 17], [4, 70, 300], [2, 300, 130], [70, 3, 9]];
    args (x = array([m, p, n]), a = array([m, p, n]).within(-2.0, 2.0), w = array([n]));
}

differential! {
    /// Columns side by side whose reductions' lengths depend on the column (`0..k + 1`), read
    /// an array at the column alone (`w[k]`) or the row alone (`v[i]`), and a product.
    columns_of_reductions_sized_by_the_column: fn(x: [[[f64]]], w: [f64], v: [f64]) -> ([[f64]], [[f64]]) {
        (
            for i, k { sum j in 0..min(k + 1, x.shape(1)) { x[k, j, i] * w[k] + v[i] } },
            for i, k { prod j { 1.0 + x[k, j, i] * 0.01 } },
        )
    }
    cases [m, p, n] in [[0, 3, 2], [3, 0, 2], [1, 1, 1], [5, 70, 300], [9, 4, 33]];
    args (x = array([m, p, n]), w = array([m]), v = array([n]));
}

differential! {
    /// `all`/`any` down the columns run side by side (a block of columns per step of `i`),
    /// one of them under a comprehension's epilogue; the random views give every layout.
    column_all_any: fn(a: [[f64]]) -> ([bool], [bool], [i64]) {
        (
            for j { all i { a[i, j] > -0.9 } },
            for j { any i { a[i, j] > 0.9 && a[i, j] < 0.95 } },
            for j { if any i { a[i, j] < -0.95 } { 1 } else { 0 } },
        )
    }
    cases [m, n] in [[0, 3], [3, 0], [1, 1], [3, 4], [7, 33], [40, 300], [300, 40], [2, 9000]];
    args (a = array([m, n]));
}

differential! {
    /// A causal softmax, each row's statistics over `0..i + 1` (computed once per row, behind
    /// a guard for an empty row): square, wide, tall (reads past the last column clamp) and
    /// empty matrices.
    causal_softmax: fn(s: [[f32]]) -> [[f32]] {
        for i, j {
            let m = max k in 0..i + 1 { s[i, k] };
            let z = sum k in 0..i + 1 { exp(s[i, k] - m) };
            if j <= i { exp(s[i, j] - m) / z } else { 0.0 }
        }
    }
    cases [rows, cols] in [[5, 5], [3, 9], [9, 3], [0, 4], [4, 0], [1, 1], [40, 40]];
    args (s = array([rows, cols]));
}

differential! {
    /// Reads kept in range by the ranges of their indices: an autocorrelation (`t + l` under
    /// `t < n - l`) and a polynomial with its coefficients read backwards (`n - 1 - t`).
    ranges_that_keep_reads_in_range: fn(x: [f64], c: [f64], lags: i64) -> ([f64], [f64]) {
        let n = x.len();
        let m = c.len();
        (
            for l in 0..lags { sum t in 0..n - l { x[t] * x[t + l] } },
            for i in 0..n { fold t in 0..m, acc = 0.0 { acc * x[i] + c[m - 1 - t] } },
        )
    }
    cases [n, m, lags] in [[10, 3, 4], [1, 1, 1], [0, 2, 0], [5, 0, 5], [70, 9, 33], [3, 4, 5]];
    args (x = array([n]), c = array([m]), lags = scalar(lags as i64));
}

differential! {
    /// Rows of a sparse matrix: `vals[s + k]` is tested once per row (in range for the whole
    /// row, or clamped element by element: starts below 0 and rows running past the end are
    /// among the random inputs), the gather `x[cols[s + k]]` clamps; and a shifted window.
    row_windows_tested_once: fn(start: [i64], counts: [i64], cols: [i64], vals: [f64], x: [f64]) -> ([f64], [f64]) {
        (
            for r { let s = start[r]; sum k in 0..counts[r] { vals[s + k] * x[cols[s + k]] } },
            for r { max k in 0..counts[r] { vals[start[r] + k + 1] - vals[start[r] - k] } },
        )
    }
    cases [rows, nnz, n] in [[0, 1, 2], [1, 1, 1], [6, 12, 5], [40, 90, 9], [3, 0, 2]];
    args (
        start = array([rows]).within(-2.0, nnz as f64),
        counts = array([rows]).within(0.0, 5.0),
        cols = array([nnz]).within(-1.0, n as f64),
        vals = array([nnz]),
        x = array([n]),
    );
}

differential! {
    /// A top-level argmax/argmin of dot products, run in parallel chunks and versioned for
    /// unit strides (the rows of `keys` contiguous or not: the harness's views); an empty
    /// `keys` fails in both.
    best_of_dot_products: fn(q: [f64], keys: [[f64]]) -> (usize, usize) {
        (argmax j { sum k { q[k] * keys[j, k] } }, argmin j { sum k { q[k] * keys[j, k] } })
    }
    cases [n, d] in [[1, 1], [5, 3], [300, 17], [0, 4], [3, 0], [5000, 40]];
    args (q = array([d]), keys = array([n, d]));
}

differential! {
    /// Reductions evaluated together fuse wherever they stand (fuse-reductions): neighbouring
    /// `let`s, the operands of one expression, the same inside a comprehension's element, a
    /// `max` beside a `min`; one that reads another's value (the two-pass variance) stays apart.
    sibling_reductions: fn(x: [f64], w: [f64], a: [[f64]]) -> (f64, f64, f64, [f64], [f64]) {
        let n = max(x.len(), 1) as f64;
        let s = sum k { x[k] };
        let q = sum k { x[k] * x[k] };
        let m = s / n;
        (
            q / n - m * m,
            sum j { w[j] * x[j] } / (1.0 + sum j { w[j] * w[j] }),
            max k { x[k] * 2.0 } - min k { x[k] * 2.0 } + sum k { (x[k] - m) * (x[k] - m) },
            for i { sum j { a[i, j] } / (1.0 + sum j { a[i, j] * a[i, j] }) },
            for i { let t = sum j { a[i, j] }; t * sum j { a[i, j] * t } },
        )
    }
    cases [n, r, c] in [[0, 0, 3], [1, 1, 1], [7, 3, 0], [5000, 9, 300], [33, 40, 2]];
    args (x = array([n]), w = array([n]), a = array([r, c]));
}
