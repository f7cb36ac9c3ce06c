//! Differential tests aimed where a code generator most easily diverges from the semantics:
//! NaN in reductions, ties in parallel arg-reductions, wrapping `MIN / -1`, unsigned wrap,
//! huge `usize` indices, unusual index arithmetic, selects of whole arrays (built lazily when
//! neither side can fail, in folds too), `let`-bound arrays
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
    /// A fold whose step is an array `if` that cannot fail: only the side chosen is built,
    /// either side in the accumulator's spare memory; a stencil's clamped reads cannot fail in
    /// its loop over the accumulator's axis (checked equal to the initial value's). Records
    /// and a 2-D state choose lazily too.
    alternating_fold_steps: fn(u: [f64], m: [[f64]], n: i64) -> ([f64], [[f64]], [f64]) {
        let smoothed = fold t in 0..n, a = u {
            if t % 3 == 0 { for i { 0.25 * a[i - 1] + 0.5 * a[i] + 0.25 * a[i + 1] } } else { for i { a[i] * 0.999 } }
        };
        let grid = fold t in 0..n, g = m {
            if t < 2 { for i, j { g[i, j - 1] - g[i, j] } } else { for i, j { g[i + 1, j] * 0.5 } }
        };
        let z = for i { { re: u[i], im: -u[i] } };
        let w = if n > 2 { z } else { for i { { re: u[i] * 2.0, im: 1.0 } } };
        (smoothed, grid, for i { w[i].re + w[i].im })
    }
    cases [len, rows, cols, steps] in [[5, 3, 4, 4], [1, 1, 1, 3], [0, 0, 2, 2], [3, 2, 0, 5], [300, 20, 30, 7], [9, 2, 2, 0]];
    args (u = array([len]), m = array([rows, cols]), n = scalar(steps as i64));
}

differential! {
    /// Tuple states holding arrays: each array field a comprehension builds is built in the
    /// memory of the same field two steps before; a field read as `p.0[i - 1]` reads through a
    /// `let` of its own (its loop's interior unclamped); a leapfrog pair whose first field is
    /// the other's previous value (`(v, ..)`); a state mixing a scalar and a 2-D array.
    tuple_states_with_arrays: fn(u: [f64], m: [[f64]], n: i64) -> ([f64], i64, [f64], [[f64]], f64) {
        let pair = fold t in 0..n, p = (u, 0) {
            (for i { 0.25 * p.0[i - 1] + 0.5 * p.0[i] + 0.25 * p.0[i + 1] }, p.1 + 1)
        };
        let leap = fold t in 0..n, (a, b) = (u, u) { (b, for i { 2.0 * b[i] - a[i] + 0.1 * (b[i - 1] - b[i]) }) };
        let (g, s) = fold t in 0..n, q = (m, 0.0) { (for i, j { q.0[i, j + 1] * 0.5 + q.0[i - 1, j] * 0.5 }, q.1 + q.0[0, 0]) };
        (pair.0, pair.1, leap.1, g, s)
    }
    cases [len, rows, cols, steps] in [[5, 3, 4, 4], [1, 1, 1, 3], [2, 1, 2, 2], [300, 20, 30, 7], [9, 2, 2, 0]];
    args (u = array([len]), m = array([rows, cols]), n = scalar(steps as i64));
}

differential! {
    /// A fold in a fold started from the outer accumulator: reads of the inner one are sized
    /// through both initial values (so a mismatch with `y` fails, as at top level).
    fold_in_a_fold_from_its_accumulator: fn(u: [f64], y: [f64], n: i64) -> ([f64], [f64]) {
        (
            fold t in 0..n, p = u { fold s in 0..2, q = p { for i { q[i - 1] * 0.5 + q[i] } } },
            fold t in 0..n, p = u { fold s in 0..2, q = p { let d = sum i { q[i] * y[i] }; for k { q[k] + d } } },
        )
    }
    cases [len, other, steps] in [[5, 5, 2], [1, 1, 3], [0, 0, 1], [4, 6, 2], [300, 300, 3]];
    args (u = array([len]), y = array([other]), n = scalar(steps as i64));
}

differential! {
    /// Array `if`s whose sides may fail (a clamped read of a possibly empty `y`, an integer
    /// division by data), evaluated both, inside comprehensions and a reduction: one side's
    /// view is versioned for unit strides where the other's is not, and both are plain views.
    failing_selects_in_loops: fn(u: [f64], y: [f64], k: [i64]) -> ([[f64]], [[i64]], f64) {
        (
            for r in 0..3 { if r == 0 { for i { u[i] * 2.0 } } else { for i { u[i] + y[0] } } },
            for r in 0..2 { if r == 1 { for i { 60 / k[i] } } else { k } },
            sum r in 0..4 { let a = if r % 2 == 0 { for i { u[i] - y[0] } } else { u }; a[r] },
        )
    }
    cases [len, other] in [[5, 2], [1, 1], [0, 0], [4, 0], [300, 3]];
    args (u = array([len]), y = array([other]), k = array([len]).within(1.0, 4.0));
}

differential! {
    /// An array `if` whose side may fail (an integer division by an element) keeps both sides
    /// evaluated: a zero divisor fails the step whichever side is chosen.
    eager_select_with_a_failing_side: fn(k: [i64], n: i64) -> [i64] {
        fold t in 0..n, q = k { if t == 1 { for i { q[i] + 1 } } else { for i { 100 / q[i] } } }
    }
    cases [len, steps] in [[5, 2], [1, 3], [0, 2], [8, 1], [40, 4]];
    args (k = array([len]).within(-3.0, 3.0), n = scalar(steps as i64));
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

differential! {
    /// Comprehensions over the last axis around a long reduction down the rows (column sums),
    /// computed side by side in blocks of 64 columns, each reduction step into its lane in
    /// order, then blocks of 8, then one by one: f64 and f32 (whose lane counts differ), `sum`,
    /// `prod`, `max`, an epilogue, a plain outer reduction around a long inner one, statistics
    /// that read the ones before (split into a comprehension each); widths on either side of
    /// the blocks, heights on either side of the lanes' thresholds, every layout.
    columns_reduced_side_by_side: fn(a: [[f64]], b: [[f32]], w: [f64]) -> ([f64], [f32], [f64], [f32], [f64], [f64]) {
        (
            for j { sum i { (a[i, j] - w[i]) * (a[i, j] - w[i]) } },
            for j { sqrt(sum i { b[i, j] * 0.5 }) + 1.0 },
            for j { prod i { 1.0 + a[i, j] * 0.01 } },
            for j { max i { b[i, j] } },
            for j { sum k in 0..3 { sum i { a[i, j] * (k as f64) - w[i] } } },
            for j {
                let m = sum i { a[i, j] } / (a.len() as f64);
                let s = sqrt(sum i { (a[i, j] - m) * (a[i, j] - m) });
                max i { abs(a[i, j] - m) } / (s + 1.0)
            },
        )
    }
    cases [m, n] in [[0, 70], [1, 1], [33, 65], [70, 130], [32, 64], [17, 72], [16, 63]];
    args (a = array([m, n]), b = array([m, n]), w = array([m]));
}

program! {
    columns_side_by_side: fn(a: [[f32]], b: [[f64]]) -> ([f32], [f64], [f64], [f64]) {
        (
            for j { sum i { abs(a[i, j]) * 0.5 } },
            for j { sum i { b[i, j] - 0.5 } },
            for j { sum k in 0..3 { sum i { b[i, j] * (k as f64) } } },
            for j { let m = sum i { b[i, j] } / 3.0; sum i { (b[i, j] - m) * (b[i, j] - m) } },
        )
    }
}

program! {
    one_column: fn(a: [[f32]], b: [[f64]], j: i64) -> (f32, f64, f64, f64) {
        (
            sum i { abs(a[i, j]) * 0.5 },
            sum i { b[i, j] - 0.5 },
            sum k in 0..3 { sum i { b[i, j] * (k as f64) } },
            { let m = sum i { b[i, j] } / 3.0; sum i { (b[i, j] - m) * (b[i, j] - m) } },
        )
    }
}

/// Columns reduced side by side (blocks of 64, then of 8, then one at a time; a statistic read
/// by a second reduction split into a comprehension of its own) have the bits of each column
/// reduced alone (a top-level `sum` of fewer than 4096 values is one `fold_range`), on any
/// thread count and through a transposed view.
#[test]
fn columns_reduced_side_by_side_have_the_bits_of_one_column_alone() {
    for (m, n) in [(0, 70), (1, 9), (31, 65), (32, 64), (33, 200), (17, 130), (1000, 72), (9, 1100), (40, 600)] {
        let value = |i: usize, j: usize| ((i * 7919 + j * 104_729) % 1013) as f64 / 7.0 - 70.0 + 1e-9 * (i + j) as f64;
        let b = ndarray::Array2::from_shape_fn((m, n), |(i, j)| value(i, j));
        let a = b.mapv(|v| v as f32 * 0.1);
        let b_transposed = b.t().to_owned();
        for threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("a pool");
            let (sa, sb, nested, variance) = pool.install(|| columns_side_by_side::run(&a, &b));
            let (_, sb_through_t, _, _) = pool.install(|| columns_side_by_side::run(&a, &b_transposed.t()));
            for j in 0..n {
                let (ea, eb, en, ev) = one_column::run(&a, &b, j as i64);
                let at = format!("column {j} of {m}×{n}, {threads} threads");
                assert_eq!(sa.as_slice()[j].to_bits(), ea.to_bits(), "f32 sum, {at}");
                assert_eq!(sb.as_slice()[j].to_bits(), eb.to_bits(), "f64 sum, {at}");
                assert_eq!(
                    sb_through_t.as_slice()[j].to_bits(),
                    eb.to_bits(),
                    "f64 sum through a transposed view, {at}"
                );
                assert_eq!(nested.as_slice()[j].to_bits(), en.to_bits(), "nested sums, {at}");
                assert_eq!(variance.as_slice()[j].to_bits(), ev.to_bits(), "a sum reading the sum before, {at}");
            }
        }
    }
}

program! {
    leading_axes_side_by_side: fn(x: [[[f64]]], y: [[[f32]]]) -> ([f64], [f32], [f64], [f64]) {
        (
            for c { sum a, b { x[a, b, c] * x[a, b, c] } },
            for c { sum a, b { y[a, b, c] - 0.25 } },
            for c { max a { sum b { x[a, b, c] } } },
            for c { sum a, b, k in 0..17 { x[a, b, c] * (k as f64) } },
        )
    }
}

program! {
    one_last_index: fn(x: [[[f64]]], y: [[[f32]]], c: i64) -> (f64, f32, f64, f64) {
        (
            sum a, b { x[a, b, c] * x[a, b, c] },
            sum a, b { y[a, b, c] - 0.25 },
            max a { sum b { x[a, b, c] } },
            sum a, b, k in 0..17 { x[a, b, c] * (k as f64) },
        )
    }
}

/// Sums over the leading axes per last index, run side by side with every reduction of the
/// nest grouped in lanes (outer ones too: any of them may be long), have the bits of each
/// last index reduced alone, on any thread count and through permuted strides. The lengths
/// lie below, at and above the 2 × 8 (f64) and 2 × 16 (f32) values where lanes begin.
#[test]
fn leading_axes_reduced_side_by_side_have_the_bits_of_one_index_alone() {
    for (p, q, n) in
        [(0, 5, 70), (1, 1, 9), (15, 17, 65), (16, 16, 130), (17, 40, 72), (33, 3, 200), (40, 33, 64), (5, 0, 10)]
    {
        let value = |a: usize, b: usize, c: usize| {
            ((a * 7919 + b * 104_729 + c * 31) % 1013) as f64 / 7.0 - 70.0 + 1e-9 * (a + b + c) as f64
        };
        let x = ndarray::Array3::from_shape_fn((p, q, n), |(a, b, c)| value(a, b, c));
        let y = x.mapv(|v| v as f32 * 0.1);
        let x_permuted = x.view().permuted_axes([2, 1, 0]).as_standard_layout().into_owned();
        let x_strided = x_permuted.view().permuted_axes([2, 1, 0]);
        for threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("a pool");
            let (sx, sy, max_of_sums, three_deep) = pool.install(|| leading_axes_side_by_side::run(&x, &y));
            let (sx_strided, ..) = pool.install(|| leading_axes_side_by_side::run(&x_strided, &y));
            for c in 0..n {
                let (ex, ey, em, e3) = one_last_index::run(&x, &y, c as i64);
                let at = format!("index {c} of {p}×{q}×{n}, {threads} threads");
                assert_eq!(sx.as_slice()[c].to_bits(), ex.to_bits(), "f64 double sum, {at}");
                assert_eq!(sx_strided.as_slice()[c].to_bits(), ex.to_bits(), "through permuted strides, {at}");
                assert_eq!(sy.as_slice()[c].to_bits(), ey.to_bits(), "f32 double sum, {at}");
                assert_eq!(max_of_sums.as_slice()[c].to_bits(), em.to_bits(), "max of sums, {at}");
                assert_eq!(three_deep.as_slice()[c].to_bits(), e3.to_bits(), "three sums deep, {at}");
            }
        }
    }
}

program! {
    sum_of_rows: fn(a: [[f64]]) -> (f64, f64) {
        (sum i, j { a[i, j] * a[i, j] - a[i, j] }, max i { sum j { a[i, j] } })
    }
}

/// The documented grouping of a float reduction over `values` (8 lanes for f64, combined by
/// halving, the tail in order; fewer than 16 values left to right).
fn documented_f64_sum(values: &[f64], combine: impl Fn(f64, f64) -> f64, identity: f64) -> f64 {
    if values.len() < 16 {
        return values.iter().fold(identity, |acc, &value| combine(acc, value));
    }
    let full = values.len() - values.len() % 8;
    let mut lanes = [identity; 8];
    for (position, &value) in values[..full].iter().enumerate() {
        lanes[position % 8] = combine(lanes[position % 8], value);
    }
    let mut width = 8;
    while width > 1 {
        width /= 2;
        for lane in 0..width {
            lanes[lane] = combine(lanes[lane], lanes[lane + width]);
        }
    }
    values[full..].iter().fold(lanes[0], |acc, &value| combine(acc, value))
}

/// A reduction to a scalar whose steps each run a loop (`sum i, j`: a row sum per step)
/// computes the steps in parallel, then folds them in order: the documented bits (for up to
/// 4096 steps, one chunk) on any number of threads.
#[test]
fn heavy_steps_of_a_scalar_reduction_fold_with_the_documented_bits() {
    for (m, n) in [(0, 5), (3, 0), (1, 1), (15, 40), (33, 17), (700, 300), (4096, 5)] {
        let a = ndarray::Array2::from_shape_fn((m, n), |(i, j)| ((i * 7919 + j * 104_729) % 1013) as f64 / 7.0 - 70.0);
        let rows: Vec<Vec<f64>> = a.rows().into_iter().map(|row| row.to_vec()).collect();
        let add = |x: f64, y: f64| x + y;
        let squares: Vec<f64> = rows
            .iter()
            .map(|row| documented_f64_sum(&row.iter().map(|v| v * v - v).collect::<Vec<_>>(), add, 0.0))
            .collect();
        let sums: Vec<f64> = rows.iter().map(|row| documented_f64_sum(row, add, 0.0)).collect();
        let expected = (documented_f64_sum(&squares, add, 0.0), documented_f64_sum(&sums, f64::max, f64::NEG_INFINITY));
        for threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("a pool");
            let (total, largest) = pool.install(|| sum_of_rows::run(&a));
            assert_eq!(total.to_bits(), expected.0.to_bits(), "sum i, j of {m}×{n}, {threads} threads");
            assert_eq!(largest.to_bits(), expected.1.to_bits(), "max of row sums of {m}×{n}, {threads} threads");
        }
    }
}
