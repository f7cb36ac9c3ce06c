//! Differential tests of `scan`: prefix sums over every float and integer width, running
//! maxima, cumulative products, record states, array states (stacked), scans inside
//! comprehensions, steps that are not
//! associative (serial), empty ranges, and long inputs that take the parallel three-phase path,
//! whose float results must be bit for bit the interpreter's (note [scan grouping]).

use crate::harness::{array, catch_quietly, scalar, strip_site, Form, Oracle};
use ein_core::interp::{self, ArrayValue, Value};

differential! {
    /// Array states: every state stacked on a new first axis. Column prefix sums (a row per
    /// step, each built in the memory of the row two steps before), a heat equation's
    /// trajectory (clamped reads of the state), a 2-D state, and a tuple state holding an
    /// array and a number (a tuple of stacks).
    array_states: fn(x: [[f64]], u: [f64], m: [[f64]], n: i64) -> ([[f64]], [[f64]], [[[f64]]], ([[f64]], [f64])) {
        (
            scan t, row = for j in 0..x.shape(1) { 0.0 } { for j { row[j] + x[t, j] } },
            scan t in 0..n, a = u { for i { 0.25 * a[i - 1] + 0.5 * a[i] + 0.25 * a[i + 1] } },
            scan t in 0..n, g = m { for i, j { g[i, j] * 0.5 + g[j % g.shape(0), i % g.shape(1)] } },
            scan t in 0..n, (v, s) = (u, 0.0) { (for i { v[i] * 0.9 + s }, s + 1.0) },
        )
    }
    cases [rows, cols, len, steps] in [[3, 4, 5, 3], [0, 3, 1, 1], [4, 0, 0, 0], [1, 1, 2, 4], [300, 40, 200, 6]];
    args (x = array([rows, cols]), u = array([len]), m = array([rows, rows]), n = scalar(steps as i64));
}

differential! {
    /// An array-state scan bound inside a side of an `if` (the part of a stack had no shape:
    /// an internal error), whole and read by row.
    array_states_in_a_select: fn(z: [f64], c: bool) -> ([[f64]], [f64]) {
        (
            if c { let a = scan t in 0..3, r = z { for j { r[j] * 2.0 } }; a } else { for u in 0..3, j { z[j] } },
            if c { let a = scan t in 0..3, r = z { for j { r[j] * 2.0 } }; a[2] } else { z },
        )
    }
    cases [len, flag] in [[0, 1], [1, 0], [4, 1], [4, 0]];
    args (z = array([len]), c = scalar(flag == 1));
}

differential! {
    /// The 100 000 case runs the parallel three-phase scan over 25 blocks.
    prefix_sum_f64: fn(x: [f64]) -> [f64] { scan t, s = 0.0 { s + x[t] } }
    cases [n] in [[0], [1], [17], [5000], [100000]];
    args (x = array([n]));
}

differential! {
    prefix_sum_f32: fn(x: [f32]) -> [f32] { scan t in 0..x.len(), s = 0.0 { x[t] + s } }
    cases [n] in [[0], [1], [17], [9000]];
    args (x = array([n]));
}

differential! {
    /// Integer sums wrap, as release Rust does.
    prefix_sum_i32: fn(x: [i32]) -> [i32] { scan t, s = 0 { s + x[t] } }
    cases [n] in [[0], [1], [17], [100000]];
    args (x = array([n]));
}

differential! {
    prefix_sum_u8: fn(x: [u8]) -> [u8] { scan t, s = 0 { s + x[t] } }
    cases [n] in [[0], [1], [300], [20000]];
    args (x = array([n]));
}

differential! {
    /// `max` ignores NaN, as `f64::max`; the initial state is the first element (so an empty
    /// input fails in both: the read of `x[0]` must happen).
    running_max: fn(x: [f64]) -> ([f64], [i64]) {
        (scan t, m = x[0] { max(m, x[t]) }, scan t, m = -5 { max((x[t] * 4.0) as i64, m) })
    }
    cases [n] in [[0], [1], [17], [50000]];
    args (x = array([n]).specials());
}

differential! {
    cumulative_product: fn(x: [f64]) -> [f64] { scan t, p = 1.0 { p * (1.0 + x[t] * 0.001) } }
    cases [n] in [[0], [1], [40], [30000]];
    args (x = array([n]));
}

differential! {
    /// A record state is an array of records: a tuple of arrays, one per field.
    record_state: fn(x: [f64]) -> [{ sum: f64, count: i64 }] {
        scan t, r = { sum: 0.0, count: 0 } {
            if x[t] > 0.0 { { sum: r.sum + x[t], count: r.count + 1 } } else { r }
        }
    }
    cases [n] in [[0], [1], [17], [6000]];
    args (x = array([n]));
}

differential! {
    /// A scan per row: a rank-2 result whose rows are written straight into the output.
    scan_in_comprehension: fn(a: [[f64]]) -> [[f64]] {
        for i { scan t in 0..a.shape(1), s = 0.0 { s + a[i, t] } }
    }
    cases [m, n] in [[0, 3], [3, 0], [1, 1], [5, 9000], [200, 30]];
    args (a = array([m, n]));
}

differential! {
    /// A non-associative step (a decaying sum) runs serially, in order.
    exponential_smoothing: fn(x: [f64], alpha: f64) -> [f64] {
        scan t, s = x[0] { alpha * x[t] + (1.0 - alpha) * s }
    }
    cases [n] in [[0], [1], [17], [20000]];
    args (x = array([n]), alpha = scalar(0.3));
}

differential! {
    /// Over an empty range nothing is read, even from an empty array; past the end of `x`
    /// reads clamp (and fail in both on an empty `x`).
    scan_explicit_range: fn(x: [f64], n: i64) -> [f64] { scan t in 0..n, s = 1.0 { s + x[t] } }
    cases [len, count] in [[0, 0], [3, 0], [5, 5], [4, 9], [0, 2], [9000, 9000]];
    args (x = array([len]), n = scalar(count as i64));
}

differential! {
    /// A scan's result read back: reduced, read element-wise, scanned again and indexed (the
    /// last read clamps, and fails in both on an empty input).
    scan_then_use: fn(x: [f64]) -> (f64, [f64], f64) {
        let c = scan t, s = 0.0 { s + x[t] };
        (sum k { c[k] }, for i { c[i] - x[i] }, (scan t, m = 0.0 { max(m, c[t]) })[c.len() - 1])
    }
    cases [n] in [[0], [1], [33], [10000]];
    args (x = array([n]));
}

differential! {
    /// Both sides of a select are evaluated: `||` as the step, and a boolean state.
    scan_any: fn(x: [f64]) -> [bool] { scan t, seen = false { seen || x[t] > 0.5 } }
    cases [n] in [[0], [1], [17], [10000]];
    args (x = array([n]));
}

differential_expr! {
    /// The expression form: the element type is rustc's.
    expression_prefix_sum:
    cases [n] in [[0], [1], [40], [12000]];
    let x = array::<f32>([n]);
    ein!(scan t, s = 0.0 { s + x[t] });
}

program! {
    long_prefix_sum: fn(x: [f64]) -> [f64] { scan t, s = 0.0 { s + x[t] } }
}

program! {
    long_product: fn(x: [f32]) -> [f32] { scan t, p = 1.0 { { let y = 1.0 + x[t] * 0.0001; y * p } } }
}

program! {
    clamped_scan: fn(x: [f64], n: i64) -> [f64] { scan t in 0..n, s = 0.0 { s + x[t] } }
}

fn bits_of(value: &Value) -> Vec<u64> {
    let Value::Array(array) = value else { panic!("expected an array, got {value:?}") };
    array
        .elements
        .iter()
        .map(|element| match element {
            Value::F64(value) => value.to_bits(),
            Value::F32(value) => u64::from(value.to_bits()),
            other => panic!("expected a float, got {other:?}"),
        })
        .collect()
}

/// The interpreter's result for `source` on `args`.
fn interpreted(test: &'static str, source: &str, args: Vec<Value>) -> Value {
    let oracle = Oracle::new(test, source, Form::Item);
    interp::run(oracle.program(), args, &[]).unwrap_or_else(|error| panic!("{test}: {error}"))
}

#[test]
fn long_float_scans_are_bit_identical_to_the_interpreter_on_any_number_of_threads() {
    let n = 100_003;
    let x: Vec<f64> = (0..n).map(|i| ((i * 7919 % 1013) as f64 - 500.0) / 3.0 + 1e-9 * i as f64).collect();
    let expected = interpreted(
        "long_prefix_sum",
        long_prefix_sum::SOURCE,
        vec![Value::Array(ArrayValue::vector(x.iter().map(|&v| Value::F64(v)).collect()))],
    );
    let y: Vec<f32> = x.iter().map(|&v| v as f32).collect();
    let expected_product = interpreted(
        "long_product",
        long_product::SOURCE,
        vec![Value::Array(ArrayValue::vector(y.iter().map(|&v| Value::F32(v)).collect()))],
    );
    for threads in [1, 2, 3] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("a pool");
        let (sums, products) = pool.install(|| (long_prefix_sum::run(&x), long_product::run(&y)));
        let sums = Value::Array(ArrayValue::vector(sums.as_slice().iter().map(|&v| Value::F64(v)).collect()));
        assert_eq!(bits_of(&sums), bits_of(&expected), "prefix sum on {threads} threads");
        let products = Value::Array(ArrayValue::vector(products.as_slice().iter().map(|&v| Value::F32(v)).collect()));
        assert_eq!(bits_of(&products), bits_of(&expected_product), "product on {threads} threads");
    }
    // Reversed and stepped views take the same path.
    let reversed: Vec<f64> = x.iter().rev().copied().collect();
    let view = ndarray::ArrayView1::from(&x[..]).slice_move(ndarray::s![..;-1]);
    assert_eq!(long_prefix_sum::run(&view).as_slice(), long_prefix_sum::run(&reversed).as_slice());
}

#[test]
fn a_long_scan_whose_step_can_fail_keeps_the_grouping_and_fails_in_order() {
    // `x[t]` may clamp (an explicit range), so the blocks run serially, in one pass, grouped
    // as the parallel path would: the same bits as the interpreter.
    let x: Vec<f64> = (0..20_000).map(|i| 1.0 / (i as f64 + 1.0)).collect();
    let compiled = clamped_scan::run(&x, 20_000);
    let expected = interpreted(
        "clamped_scan",
        clamped_scan::SOURCE,
        vec![Value::Array(ArrayValue::vector(x.iter().map(|&v| Value::F64(v)).collect())), Value::I64(20_000)],
    );
    let compiled = Value::Array(ArrayValue::vector(compiled.as_slice().iter().map(|&v| Value::F64(v)).collect()));
    assert_eq!(bits_of(&compiled), bits_of(&expected));
    let panic = catch_quietly(|| clamped_scan::run(&[], 3)).expect_err("an empty read must fail");
    assert!(panic.starts_with("ein: read from empty axis 0 of `x`"), "{panic}");
    let oracle = Oracle::new("clamped_scan", clamped_scan::SOURCE, Form::Item);
    let args = vec![Value::Array(ArrayValue::vector(Vec::new())), Value::I64(3)];
    let error = interp::run(oracle.program(), args, &[]).expect_err("an empty read must fail");
    assert_eq!(strip_site(&panic), error.message);
}

differential! {
    /// A costly step's values are computed 64 at a time into a buffer, then combined in
    /// order, in both phases of the parallel scan (100 000 values: 25 blocks).
    costly_prefix_sum: fn(x: [f64]) -> [f64] { scan t, s = 0.0 { s + ln(1.0 + exp(x[t])) * cos(x[t]) } }
    cases [n] in [[0], [1], [63], [64], [65], [129], [100000]];
    args (x = array([n]));
}

differential! {
    /// The same in a comprehension (one serial pass per row, which keeps the parallel scan's
    /// grouping in blocks of 4096): 64 values at a time, across every block edge. A failing
    /// value (an empty `w`) fails as one value at a time does.
    costly_row_prefix_sums: fn(x: [[f32]], w: [f32]) -> [[f32]] {
        for b { scan t, s = 0.0 { s + exp(x[b, t]) * sin(x[b, t]) + w[0] * 0.0 } }
    }
    cases [m, n, p] in [[0, 3, 1], [2, 0, 1], [3, 1, 1], [2, 63, 1], [2, 64, 1], [3, 65, 1], [1, 4095, 1], [2, 4097, 1], [1, 9000, 1], [2, 5, 0]];
    args (x = array([m, n]), w = array([p]));
}
