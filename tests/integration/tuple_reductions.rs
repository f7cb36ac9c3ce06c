//! Differential tests of reductions of tuples and records (`sum k { (x[k], x[k] * x[k]) }`):
//! every op, nested tuples, records, mixed element types per component, in comprehensions, at
//! the top level over more than two parallel chunks, in the expression form; and each float
//! component bit for bit the scalar reduction of that component alone, on any thread count;
//! sibling reductions the optimiser fuses into one.

use crate::harness::{array, scalar};

differential! {
    /// Both moments in one pass; 20 000 values are five chunks of the parallel reduction.
    two_moments: fn(x: [f64]) -> (f64, f64) { sum k { (x[k], x[k] * x[k]) } }
    cases [n] in [[0], [1], [15], [16], [17], [33], [20000]];
    args (x = array([n]));
}

differential! {
    /// A record with an `i64` count: the literal `1` is typed by the result.
    record_with_count: fn(x: [f32]) -> { s: f32, q: f32, n: i64 } {
        sum k { { s: x[k], q: x[k] * x[k], n: 1 } }
    }
    cases [n] in [[0], [1], [31], [32], [9001]];
    args (x = array([n]));
}

differential! {
    /// `max` and `min` are component-wise (not lexicographic), NaN ignored per component.
    extremes: fn(x: [f64], y: [i32]) -> ((f64, f64), (i32, i32)) {
        (max k { (x[k], 0.0 - x[k]) }, min k in 0..y.len() { (y[k], 0 - y[k]) })
    }
    cases [n, m] in [[0, 0], [1, 1], [20, 7], [12000, 9000]];
    args (x = array([n]).specials(), y = array([m]));
}

differential! {
    /// Nested tuples and `prod`.
    nested_products: fn(x: [f64]) -> ((f64, (f64, i64)), f64) {
        prod k { ((1.0 + x[k] * 0.001, (1.0 - x[k] * 0.001, 1)), x[k] * x[k] * 0.001 + 1.0) }
    }
    cases [n] in [[0], [1], [17], [10000]];
    args (x = array([n]));
}

differential! {
    /// An array of records from a comprehension of record reductions (stored as a tuple of
    /// arrays), in every layout of `a`.
    row_moments: fn(a: [[f64]]) -> [{ s: f64, q: f64 }] {
        for i { sum k { { s: a[i, k], q: a[i, k] * a[i, k] } } }
    }
    cases [m, n] in [[0, 3], [3, 0], [1, 1], [5, 40], [3, 9000], [9000, 3]];
    args (a = array([m, n]));
}

differential! {
    /// The result bound and used: mean and variance.
    mean_and_variance: fn(x: [f64]) -> (f64, f64) {
        let s = sum k { (x[k], x[k] * x[k], 1) };
        let n = s.2 as f64;
        (s.0 / n, s.1 / n - (s.0 / n) * (s.0 / n))
    }
    cases [n] in [[0], [1], [50], [30000]];
    args (x = array([n]));
}

differential! {
    /// A range that depends on an outer index, and a failing body (integer division by a
    /// value that may be zero): failures in index order as the interpreter's.
    triangular: fn(x: [i64], d: i64) -> [(i64, i64)] {
        for i in 0..x.len() { sum k in 0..i + 1 { (x[k], x[k] / d) } }
    }
    cases [n, divisor] in [[0, 1], [1, 0], [40, 3], [300, 0], [200, 5]];
    args (x = array([n]), d = scalar(divisor as i64));
}

differential! {
    /// Sibling reductions written apart that share their steps' terms (MRI-Q's shape): the
    /// optimiser fuses them into one reduction of a tuple, and every part keeps its bits; a
    /// third over another range and a `max` stay apart.
    fused_siblings: fn(x: [f32], k: [f32], phi: [f32]) -> [{ re: f32, im: f32, top: f32, first: f32 }] {
        for i {
            {
                re: sum j { phi[j] * cos(6.2831855 * k[j] * x[i]) },
                im: sum j { phi[j] * sin(6.2831855 * k[j] * x[i]) },
                top: max j { phi[j] * sin(6.2831855 * k[j] * x[i]) },
                first: sum j in 0..x.len() { x[j] * x[i] }
            }
        }
    }
    cases [n, m] in [[0, 5], [3, 0], [1, 1], [7, 31], [40, 33], [5, 1000]];
    args (x = array([n]), k = array([m]), phi = array([m]));
}

differential_expr! {
    /// The expression form: the element type is rustc's.
    expression_moments:
    cases [n] in [[0], [1], [40], [12000]];
    let x = array::<f32>([n]);
    ein!(sum k { (x[k], x[k] * x[k]) });
}

program! {
    moments: fn(x: [f64], y: [f32]) -> ((f64, f64), (f32, i64)) {
        (sum k { (x[k], x[k] * x[k]) }, max k in 0..y.len() { (y[k], 1) })
    }
}

program! {
    separately: fn(x: [f64], y: [f32]) -> ((f64, f64), f32) {
        ((sum k { x[k] }, sum k { x[k] * x[k] }), max k { y[k] })
    }
}

#[test]
fn each_float_component_has_the_bits_of_its_own_scalar_reduction() {
    for n in [0usize, 1, 15, 16, 17, 31, 32, 33, 4095, 4096, 4097, 20_003] {
        let x: Vec<f64> = (0..n).map(|i| ((i * 7919 % 1013) as f64 - 500.0) / 3.0 + 1e-9 * i as f64).collect();
        let y: Vec<f32> = x.iter().map(|&v| v as f32 * 0.01).collect();
        let expected = separately::run(&x, &y);
        for threads in [1, 2, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("a pool");
            let ((s, q), (m, count)) = pool.install(|| moments::run(&x, &y));
            assert_eq!(s.to_bits(), expected.0 .0.to_bits(), "sum, n = {n}, {threads} threads");
            assert_eq!(q.to_bits(), expected.0 .1.to_bits(), "sum of squares, n = {n}, {threads} threads");
            assert_eq!(m.to_bits(), expected.1.to_bits(), "max, n = {n}");
            assert_eq!(count, if n == 0 { i64::MIN } else { 1 }, "max of ones");
        }
    }
}

differential! {
    /// Components of a costly step (two transcendental calls), computed a block at a time into
    /// a buffer: each component keeps the bits of its scalar reduction.
    costly_components: fn(x: [f64], a: [[f32]]) -> ((f64, f64), [{ s: f32, q: f32 }]) {
        (
            sum k { (ln(1.0 + exp(x[k])), x[k] * cos(x[k])) },
            for i { sum k { { s: exp(a[i, k]) * sin(a[i, k]), q: a[i, k] } } }
        )
    }
    cases [n, m, p] in [[0, 0, 3], [1, 3, 0], [15, 1, 1], [16, 2, 17], [33, 2, 32], [100, 3, 40], [20000, 300, 3]];
    args (x = array([n]), a = array([m, p]));
}

differential! {
    /// Column statistics as tuples and records: each component a comprehension of its own,
    /// run side by side down the columns (`passes::split_lets`), with the bits of one column
    /// at a time: a fused pair, a record reduction with a count, and a tuple ending an element
    /// whose `let` the next component reads. In every layout of `a` and `b` (column-major ones
    /// read along their rows instead).
    column_statistics: fn(a: [[f32]], b: [[f64]]) -> ([(f32, f32)], [{ s: f64, n: i64 }], [(f32, f32, f64)], [(f32, f64)]) {
        (
            for j { (sum i { a[i, j] }, sum i { a[i, j] * a[i, j] }) },
            for j { sum i { { s: b[i, j], n: 1 } } },
            for j {
                let m = sum i { a[i, j] } / (a.len() as f32);
                (m, sum i { (a[i, j] - m) * (a[i, j] - m) }, max i { b[i, j] })
            },
            for j { let p = sum i { (a[i, j], b[i, j]) }; (p.0, p.1 + max i { b[i, j] }) }
        )
    }
    cases [m, n] in [[0, 3], [3, 0], [1, 1], [2, 9], [40, 70], [300, 300], [70, 1000]];
    args (a = array([m, n]), b = array([m, n]));
}
