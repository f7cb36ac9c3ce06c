//! Differential tests of filters (`for i where cond { e }`): kept elements in index order,
//! scalars, records and tuples, reductions over the filtered array, lengths above the parallel
//! grain (several chunks of 4096), every layout of the input, and conditions or elements that
//! can fail (a serial pass: the first failure in index order).

use crate::harness::{array, scalar};

differential! {
    /// 40 000 values: ten chunks, in parallel.
    keep_positives: fn(x: [f32]) -> [f32] { for i where x[i] > 0.0 { x[i] } }
    cases [n] in [[0], [1], [17], [40000]];
    args (x = array([n]));
}

differential! {
    /// A record per kept element: the index and a value.
    kept_records: fn(x: [f64]) -> [{ at: i64, twice: f64 }] {
        for i where x[i] < 0.25 && x[i] > -0.5 { { at: i, twice: x[i] * 2.0 } }
    }
    cases [n] in [[0], [1], [33], [20000]];
    args (x = array([n]));
}

differential! {
    /// A filtered array reduced afterwards: `k` is sized by its run-time length.
    sum_of_kept: fn(x: [f64], threshold: f64) -> (f64, i64, [f64]) {
        let p = for i where x[i] > threshold { x[i] * x[i] };
        (sum k { p[k] }, p.len(), for k { p[k] + 1.0 })
    }
    cases [n] in [[0], [1], [50], [30000]];
    args (x = array([n]), threshold = scalar(0.1));
}

differential! {
    /// An explicit range past the array's end: reads clamp (and fail on an empty `x`).
    explicit_range: fn(x: [i32], n: i64) -> [(i64, i32)] { for i in 0..n where x[i] % 2 == 0 { (i, x[i]) } }
    cases [len, count] in [[0, 0], [3, 0], [5, 5], [4, 9], [0, 2], [9000, 20000]];
    args (x = array([len]), n = scalar(count as i64));
}

differential! {
    /// An element that may fail (integer division by `d`): evaluated at every index, whatever
    /// the condition (as both sides of an `if`), so `d = 0` fails whenever `x` is not empty.
    failing_element: fn(x: [i64], d: i64) -> [i64] { for i where x[i] > 0 { x[i] / d } }
    cases [n, divisor] in [[0, 0], [1, 3], [30, 0], [20000, 7], [20000, 0], [100, 2]];
    args (x = array([n]), d = scalar(divisor as i64));
}

differential! {
    /// Over a 2-D input: a row-wise condition, rows picked by a reduction.
    rows_with_large_sums: fn(a: [[f64]]) -> [i64] { for i where sum k { a[i, k] } > 0.0 { i } }
    cases [m, n] in [[0, 3], [3, 0], [1, 1], [20000, 2], [7, 9]];
    args (a = array([m, n]));
}

differential_expr! {
    /// The expression form: the element type is rustc's.
    expression_filter:
    cases [n] in [[0], [1], [40], [12000]];
    let x = array::<f64>([n]);
    ein!(for i where x[i] > 0.0 { x[i] });
}

differential! {
    /// Filters read only by reductions and their lengths (computed without the array, one pass
    /// over the input): a mean, a product, `all`/`any`, pairs, and wrapping integer sums.
    reductions_of_kept: fn(x: [f64], y: [f64], k: [i32]) -> (f64, f64, bool, bool, f64, i32, i64) {
        let p = for i where x[i] > 0.25 { x[i] };
        let near_one = for i where x[i] < 0.0 { 1.0 + x[i] * 0.001 };
        let pairs = for i where x[i] < y[i] { (x[i], y[i] * 2.0) };
        let even = for i where k[i] % 2 == 0 { k[i] * 3 };
        (
            sum j { p[j] * p[j] } / max(p.len(), 1) as f64,
            prod j { near_one[j] },
            all j { pairs[j].0 < pairs[j].1 * 0.5 },
            any j { p[j] > 1.5 },
            sum j { pairs[j].0 * pairs[j].1 },
            sum j { even[j] },
            even.len() + pairs.len(),
        )
    }
    cases [n] in [[0], [1], [5], [4097], [30000]];
    args (x = array([n]).within(-2.0, 2.0), y = array([n]).within(-2.0, 2.0), k = array([n]));
}

differential_expr! {
    /// The expression form: element types are rustc's.
    expression_reductions_of_kept:
    cases [n] in [[0], [1], [40], [12000]];
    let x = array::<f32>([n]);
    ein!({ let p = for i where x[i] > 0.0 { x[i] }; (sum j { p[j] }, p.len()) });
}
