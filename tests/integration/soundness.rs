//! Soundness: what an adversarial caller can reach through safe calls. Every case here was a
//! reproducer of undefined behaviour, a wrong answer, a rejected valid program or an abort;
//! each must now give the interpreter's answer or a clean `ein: …` panic (see the README,
//! "What you can rely on").

use crate::harness::{array, catch_quietly, scalar, strip_site, Form, Oracle};
use ein_core::interp::{self, ArrayValue, Value};

program! {
    matmul: fn(a: [[f32]], b: [[f32]]) -> [[f32]] { for i, j { sum k { a[i, k] * b[k, j] } } }
}

program! {
    outer_sum: fn(a: [[f32]], b: [[f32]]) -> [[f32]] { for i, j { a[i, 0] + b[0, j] } }
}

program! {
    zeros: fn(n: i64) -> [f64] { for i in 0..n { 0.0 } }
}

program! {
    zeros_2d: fn(m: i64, n: i64) -> [[f64]] { for i in 0..m, j in 0..n { 0.0 } }
}

program! {
    tuple_fold: fn(a: [f64], n: i64) -> ([f64], f64) {
        fold t in 0..n, acc = (a, 0.0) { (for i in 0..a.len() + 1 { acc.0[i] }, acc.1 + 1.0) }
    }
}

program! {
    tuple_select: fn(a: [f64], b: [f64], flag: bool) -> ([f64], i64) {
        if flag { (a, 1) } else { (b, 2) }
    }
}

/// The message of the panic `code` raises; fails if it returns.
fn panic_of<R>(code: impl FnOnce() -> R) -> String {
    match catch_quietly(code) {
        Ok(_) => panic!("expected a panic, but the compiled code returned"),
        Err(message) => message,
    }
}

/// A one-element `f32` matrix broadcast (zero strides) to `shape`.
fn broadcast(one: &ndarray::Array2<f32>, shape: (usize, usize)) -> ndarray::ArrayView2<'_, f32> {
    one.broadcast(shape).expect("a 1×1 array broadcasts to any shape")
}

/// Reproducer 1: the product of two huge broadcast axes is 2^64 + 1, which wrapped to 1 and
/// let the GEMM write m·n elements into a one-element buffer (a segfault in release).
#[test]
fn a_result_too_large_to_count_panics_instead_of_writing_out_of_bounds() {
    let one = ndarray::arr2(&[[1.0f32]]);
    let (rows, columns) = (274_177, 67_280_421_310_721);
    let (a, b) = (broadcast(&one, (rows, 1)), broadcast(&one, (1, columns)));
    for message in [panic_of(|| matmul::run(&a, &b)), panic_of(|| outer_sum::run(&a, &b))] {
        assert!(message.starts_with("ein: "), "not an ein error: {message}");
        for part in ["274177", "67280421310721"] {
            assert!(message.contains(part), "the message should name the size {part}: {message}");
        }
    }
}

/// Reproducer 5: an allocation that cannot succeed is a panic, not an abort; so is a shape
/// whose element count does not fit in `isize`.
#[test]
fn impossible_allocations_and_shapes_panic() {
    for message in [
        panic_of(|| zeros::run(1 << 60)),
        panic_of(|| zeros::run(i64::MAX)),
        panic_of(|| zeros_2d::run(1 << 40, 1 << 40)),
        panic_of(|| zeros_2d::run(3, 1 << 62)),
    ] {
        assert!(message.starts_with("ein: "), "not an ein error: {message}");
    }
    // An empty array may have a long axis (ndarray's rule bounds the product of the non-zero
    // lengths); its rows, which cannot fail, are not visited one by one.
    assert_eq!(zeros_2d::run(i64::MAX - 1, 0).shape(), [i64::MAX as usize - 1, 0]);
    let message = panic_of(|| ein::Array::<f64, 2>::from_vec([1 << 63, 0], Vec::new()));
    assert!(message.starts_with("ein: ") && message.contains("9223372036854775808"), "{message}");
    let message = panic_of(|| ein::View::<f64, 2>::from_slice(&[], [1 << 63, 0]).shape());
    assert!(message.starts_with("ein: ") && message.contains("9223372036854775808"), "{message}");
}

/// Reproducer 7: every array part of a tuple accumulator keeps its shape, and both sides of a
/// select of tuples agree part by part, checked like whole arrays (compiled and interpreted).
#[test]
fn tuple_parts_are_shape_checked() {
    let a = vec![1.0, 2.0, 3.0];
    let compiled = panic_of(|| tuple_fold::run(&a, 2));
    let interpreted = interpreter_error(
        tuple_fold::SOURCE,
        vec![Value::Array(ArrayValue::from_fn([3], |index| Value::F64(a[index[0]]))), Value::I64(2)],
    );
    assert_same_error(&compiled, &interpreted);
    assert!(compiled.contains("part 0 of the accumulator") && compiled.contains('4'), "{compiled}");
    // No step, no check: the accumulator is the initial value.
    assert_eq!(tuple_fold::run(&a, 0).0.as_slice(), &a[..]);

    let b = vec![5.0];
    let compiled = panic_of(|| tuple_select::run(&a, &b, true));
    let values = |data: &[f64]| Value::Array(ArrayValue::from_fn([data.len()], |index| Value::F64(data[index[0]])));
    let interpreted = interpreter_error(tuple_select::SOURCE, vec![values(&a), values(&b), Value::Bool(true)]);
    assert_same_error(&compiled, &interpreted);
    assert!(compiled.contains("part 0 of the `else` branch"), "{compiled}");
    assert_eq!(tuple_select::run(&a, &a, false).1, 2);
}

/// The interpreter's error for `args`; fails if it succeeds.
fn interpreter_error(source: &str, args: Vec<Value>) -> String {
    let oracle = Oracle::new("soundness", source, Form::Item);
    match interp::run(oracle.program(), args, &[]) {
        Ok(value) => panic!("expected the interpreter to fail, got {value:?}"),
        Err(error) => error.message,
    }
}

fn assert_same_error(compiled: &str, interpreted: &str) {
    assert!(compiled.starts_with("ein: "), "not an ein run-time error: {compiled}");
    assert!(
        strip_site(compiled).starts_with(interpreted),
        "compiled and interpreted errors differ\ncompiled:    {compiled}\ninterpreter: {interpreted}"
    );
}

differential! {
    /// Reproducer 3: a row with an empty inner axis still evaluates its `let`s, so an empty
    /// read or a division by zero there fails as the semantics says.
    rows_without_elements_still_evaluate_their_lets: fn(e: [f64], d: i64, n: i64) -> [[f64]] {
        for i in 0..3 { let x = e[0] / (1.0 / (d / d) as f64); for j in 0..n { x } }
    }
    cases [len, divisor, count] in [[0, 0, 0], [0, 1, 0], [1, 0, 0], [2, 1, 0], [2, 1, 3], [1, 1, 2], [0, 1, 2]];
    args (e = array([len]), d = scalar(divisor as i64), n = scalar(count as i64));
}

differential! {
    /// Reproducer 4: a fold whose initial value is a variable its body (and the code after
    /// it) still reads: the initial value is copied, not moved out from under the views.
    fold_from_a_variable_still_read: fn(a: [f64], n: i64) -> ([f64], [f64]) {
        let x = for i { a[i] * 2.0 };
        let y = fold t in 0..n, acc = x { for i { acc[i] + x[i] } };
        (y, for i { x[i] - y[i] })
    }
    cases [len, count] in [[3, 2], [0, 1], [1, 0], [5, 3], [400, 2]];
    args (a = array([len]), n = scalar(count as i64));
}

differential! {
    /// Reproducer 4 with a tuple accumulator holding the variable.
    fold_from_a_tuple_holding_a_variable: fn(a: [f64], n: i64) -> [f64] {
        let x = for i { a[i] + 1.0 };
        fold t in 0..n, acc = (x, 0.0) { (for i { acc.0[i] * 0.5 + x[i] }, acc.1 + x[0]) }.0
    }
    cases [len, count] in [[3, 2], [1, 1], [1, 0], [5, 3], [400, 2]];
    args (a = array([len]), n = scalar(count as i64));
}

/// Captured `const`s (a scalar and an array) are read like locals, not taken for patterns.
#[test]
fn expression_form_captures_constants() {
    const SCALE: f64 = 2.5;
    const TABLE: [f64; 3] = [1.0, -2.0, 0.5];
    let a = vec![1.0, 2.0, 3.0, 4.0];
    let result = ein::ein!(for i { a[i] * SCALE + TABLE[i % 3] });
    let expected: Vec<f64> = (0..4).map(|i| a[i] * SCALE + TABLE[i % 3]).collect();
    assert_eq!(result.as_slice(), &expected[..]);
}

mod record_vjp {
    ein::ein! {
        #[vjp(run_vjp)]
        pub fn run(x: [f64]) -> [{ a: f64, b: f64 }] { for i { { a: x[i] * 2.0, b: x[i] * x[i] } } }
        #[vjp(pair_vjp)]
        pub fn pair(x: [[f64]]) -> ([(f64, f64)], f64) { (for i { (x[i, 0], x[i, 1] * 3.0) }, x[0, 0]) }
    }
}

/// Round 9, H15: every column of a `#[vjp]` cotangent that is an array of records or tuples is
/// checked against the first (only the first was: a short second column was read past its end).
#[test]
fn every_column_of_a_record_cotangent_is_shape_checked() {
    let x = vec![1.0, -2.0, 3.0];
    let (_, dx) = record_vjp::run_vjp(&x, (&[1.0, 1.0, 1.0][..], &[1.0, 0.5, 2.0][..]));
    assert_eq!(dx.as_slice(), &[4.0, 0.0, 14.0]);
    for b in [&[1.0][..], &[1.0, 1.0, 1.0, 1.0][..]] {
        let message = panic_of(|| record_vjp::run_vjp(&x, (&[1.0, 1.0, 1.0][..], b)));
        assert!(message.starts_with("ein: shape mismatch"), "{message}");
        assert!(
            message.contains("axis 0 of `cotangent.b`") && message.contains("axis 0 of `cotangent.a`"),
            "{message}"
        );
    }
    let m = ndarray::arr2(&[[1.0, 2.0], [3.0, 4.0]]);
    let (_, dm) = record_vjp::pair_vjp(&m, ((&[1.0, 1.0][..], &[1.0, 1.0][..]), 1.0));
    assert_eq!(dm.as_slice(), &[2.0, 3.0, 1.0, 3.0]);
    let message = panic_of(|| record_vjp::pair_vjp(&m, ((&[1.0, 1.0][..], &[1.0][..]), 1.0)));
    assert!(message.contains("axis 0 of `cotangent.0.1`"), "{message}");
}
