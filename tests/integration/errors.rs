//! Run-time errors: compiled code panics with the documented `ein: …` message (naming the
//! index, the arrays, their axes and sizes, and the source location), and the interpreter
//! fails with the same error.

use crate::harness::{catch_quietly, strip_site, Form, Oracle};
use ein_core::interp::{self, ArrayValue, Value};
use ndarray::{Array1, Array2};

program! {
    matmul: fn(a: [[f64]], b: [[f64]]) -> [[f64]] { for i, j { sum k { a[i, k] * b[k, j] } } }
}

program! {
    argmax_of: fn(a: [f64]) -> usize { argmax i { a[i] } }
}

program! {
    argmin_rows: fn(a: [[i64]]) -> [usize] { for i { argmin j { a[i, j] } } }
}

program! {
    argmax_columns: fn(a: [[f64]]) -> [usize] { for j { argmax i { a[i, j] } } }
}

program! {
    explicit_size: fn(a: [f64], n: i64) -> [f64] { for i in 0..n { a[i] } }
}

program! {
    divide: fn(a: [i64], b: [i64]) -> [i64] { for i { a[i] / b[i] + a[i] % max(b[i], 1) } }
}

/// The message of the panic `code` raises; fails if it returns.
fn panic_of<R>(code: impl FnOnce() -> R) -> String {
    match catch_quietly(code) {
        Ok(_) => panic!("expected a panic, but the compiled code returned"),
        Err(message) => message,
    }
}

/// The interpreter's error for `args`; fails if it succeeds.
fn interpreter_error(test: &'static str, source: &str, args: Vec<Value>) -> String {
    let oracle = Oracle::new(test, source, Form::Item);
    match interp::run(oracle.program(), args, &[]) {
        Ok(value) => panic!("expected the interpreter to fail, got {value:?}"),
        Err(error) => error.message,
    }
}

fn f64_matrix(rows: usize, cols: usize) -> (Array2<f64>, Value) {
    let array = Array2::from_shape_fn((rows, cols), |(i, j)| (i * cols + j) as f64 * 0.5 - 1.0);
    let value = ArrayValue::from_fn([rows, cols], |index| Value::F64(array[[index[0], index[1]]]));
    (array, Value::Array(value))
}

fn assert_same_error(compiled: &str, interpreted: &str) {
    assert!(compiled.starts_with("ein: "), "not an ein run-time error: {compiled}");
    assert!(
        strip_site(compiled).starts_with(interpreted),
        "compiled and interpreted errors differ\ncompiled:    {compiled}\ninterpreter: {interpreted}"
    );
}

#[test]
fn size_mismatch_names_index_arrays_axes_and_sizes() {
    let (a, a_value) = f64_matrix(2, 3);
    let (b, b_value) = f64_matrix(4, 2);
    let compiled = panic_of(|| matmul::run(&a, &b));
    let interpreted = interpreter_error("size_mismatch", matmul::SOURCE, vec![a_value, b_value]);
    for message in [&compiled, &interpreted] {
        for part in ["`k`", "axis 1 of `a`", "axis 0 of `b`", "3", "4"] {
            assert!(message.contains(part), "the size mismatch message should mention {part}: {message}");
        }
    }
    assert!(compiled.contains("errors.rs"), "the message should name the source location: {compiled}");
    assert_same_error(&compiled, &interpreted);
}

#[test]
fn size_mismatch_is_checked_before_any_loop_even_when_empty() {
    // No output element exists, but `k` is still 3 on `a` and 4 on `b`.
    let (a, a_value) = f64_matrix(0, 3);
    let (b, b_value) = f64_matrix(4, 0);
    let compiled = panic_of(|| matmul::run(&a, &b));
    let interpreted = interpreter_error("size_mismatch_empty", matmul::SOURCE, vec![a_value, b_value]);
    assert!(compiled.contains("`k`") && compiled.contains("axis"), "{compiled}");
    assert_same_error(&compiled, &interpreted);
}

#[test]
fn argmax_over_empty_range_panics() {
    let empty: Vec<f64> = Vec::new();
    let compiled = panic_of(|| argmax_of::run(&empty));
    let interpreted =
        interpreter_error("argmax_empty", argmax_of::SOURCE, vec![Value::Array(ArrayValue::vector(Vec::new()))]);
    assert!(compiled.contains("argmax over an empty range of index `i`"), "{compiled}");
    assert!(interpreted.contains("argmax over an empty range of index `i`"), "{interpreted}");
    assert_same_error(&compiled, &interpreted);
    // A non-empty input works in both, as a control.
    assert_eq!(argmax_of::run(&vec![1.0, 3.0, 3.0, -1.0]), 1);
}

#[test]
fn argmin_over_empty_row_panics() {
    let a = Array2::<i64>::zeros((3, 0));
    let compiled = panic_of(|| argmin_rows::run(&a));
    let value = Value::Array(ArrayValue { shape: vec![3, 0], elements: Vec::new() });
    let interpreted = interpreter_error("argmin_empty", argmin_rows::SOURCE, vec![value]);
    assert!(compiled.contains("argmin over an empty range of index `j`"), "{compiled}");
    assert_same_error(&compiled, &interpreted);
}

#[test]
fn argmax_down_columns_of_no_rows_panics() {
    // Twenty columns: the columns run side by side, in blocks of eight, then one at a time.
    let (a, value) = f64_matrix(0, 20);
    let compiled = panic_of(|| argmax_columns::run(&a));
    let interpreted = interpreter_error("argmax_columns_empty", argmax_columns::SOURCE, vec![value]);
    assert!(
        compiled.contains("argmax over an empty range of index `i` (at tests/integration/errors.rs:"),
        "{compiled}"
    );
    assert_same_error(&compiled, &interpreted);
    // Columns of one row: every answer is 0.
    let (a, _) = f64_matrix(1, 20);
    assert_eq!(argmax_columns::run(&a).as_slice(), &[0; 20]);
}

#[test]
fn read_from_empty_axis_panics() {
    let empty = Array1::<f64>::zeros(0);
    let compiled = panic_of(|| explicit_size::run(&empty, 2));
    let args = vec![Value::Array(ArrayValue::vector(Vec::new())), Value::I64(2)];
    let interpreted = interpreter_error("empty_read", explicit_size::SOURCE, args);
    assert!(compiled.contains("read from empty axis 0 of `a`"), "{compiled}");
    assert_same_error(&compiled, &interpreted);
}

#[test]
fn negative_size_panics() {
    let a = Array1::<f64>::zeros(4);
    let compiled = panic_of(|| explicit_size::run(&a, -3));
    let args = vec![Value::Array(ArrayValue::vector(vec![Value::F64(0.0); 4])), Value::I64(-3)];
    let interpreted = interpreter_error("negative_size", explicit_size::SOURCE, args);
    assert!(compiled.contains("size of index `i` is -3"), "{compiled}");
    assert_same_error(&compiled, &interpreted);
}

#[test]
fn integer_division_by_zero_panics() {
    let a = vec![7i64, -7, 3];
    let b = vec![2i64, 0, 1];
    let compiled = panic_of(|| divide::run(&a, &b));
    let as_value = |v: &[i64]| Value::Array(ArrayValue::vector(v.iter().map(|&x| Value::I64(x)).collect()));
    let interpreted = interpreter_error("division_by_zero", divide::SOURCE, vec![as_value(&a), as_value(&b)]);
    assert!(compiled.contains("integer division by zero"), "{compiled}");
    assert!(compiled.contains("errors.rs"), "the message should name the division: {compiled}");
    assert_same_error(&compiled, &interpreted);
}

program! {
    unsigned_size: fn(a: [f64], n: u64) -> [f64] { for i in 0..n { a[i] } }
}

program! {
    unsigned_fold: fn(a: [f64], n: usize) -> f64 { fold t in 0..n, s = 0.0 { s + a[t] } }
}

program! {
    unsigned_index: fn(a: [f64], k: u64) -> (f64, f64) { (a[k], a[k as i64]) }
}

program! {
    unsigned_scatter: fn(x: [u64]) -> [i64] { accum h = for b in 0..4 { 0 } { for i { h[x[i]] += 1 } } }
}

program! {
    cast_scatter: fn(x: [i32]) -> [i64] { accum h = for b in 0..4 { 0 } { for i { h[x[i] as usize] += 1 } } }
}

program! {
    wrapped_index: fn(n: usize) -> [i64] { accum h = for b in 0..256 { 0 } { for i in 0..n { h[i as u8] += 1 } } }
}

program! {
    // `k` is typed `u64` only by its last use, after the update that indexes with it.
    typed_late: fn(x: [u64]) -> ([i64], u64) {
        let k = fold t in 0..2, s = 1 { s * 3037000500 };
        (accum h = for b in 0..4 { 0 } { h[k] += 1 }, k + x[0])
    }
}

/// Unsigned values above `i64::MAX` used as sizes or indices saturate to it, in both forms:
/// refused as sizes (not wrapped to -1), past the end as indices (a read clamps to the last
/// element, an accum reports the index out of range). An explicit `as i64` wraps, as in Rust.
#[test]
fn unsigned_values_above_i64_max_saturate() {
    let a = vec![1.0, 2.0, 3.0];
    let size = |value: Value| vec![Value::Array(ArrayValue::vector(a.iter().map(|&x| Value::F64(x)).collect())), value];
    for huge in [u64::MAX, 1 << 63] {
        let compiled = panic_of(|| unsigned_size::run(&a, huge));
        let interpreted = interpreter_error("unsigned_size", unsigned_size::SOURCE, size(Value::U64(huge)));
        assert!(compiled.contains("size of index `i` is i64::MAX or more"), "{compiled}");
        assert_same_error(&compiled, &interpreted);
        assert_eq!(unsigned_index::run(&a, huge), (3.0, 1.0));
    }
    let compiled = panic_of(|| unsigned_fold::run(&a, usize::MAX));
    let interpreted = interpreter_error("unsigned_fold", unsigned_fold::SOURCE, size(Value::Usize(usize::MAX)));
    assert!(compiled.contains("size of index `t` is i64::MAX or more"), "{compiled}");
    assert_same_error(&compiled, &interpreted);
    assert_eq!(unsigned_size::run(&a, 2).as_slice(), &[1.0, 2.0]);
    assert_eq!(unsigned_fold::run(&a, 5), 1.0 + 2.0 + 3.0 + 3.0 + 3.0);
    assert_eq!(unsigned_index::run(&a, 1), (2.0, 2.0));

    let out_of_range = "index i64::MAX or more out of range for axis 0 of `h` (size 4)";
    let compiled = panic_of(|| unsigned_scatter::run(&[1, u64::MAX]));
    assert!(compiled.contains(out_of_range), "{compiled}");
    assert_eq!(unsigned_scatter::run(&[1, 3, 1]).as_slice(), &[0, 2, 0, 1]);
    // -1 as `usize` is `usize::MAX`, the same; so is a `u64` whose type is known only later.
    let compiled = panic_of(|| cast_scatter::run(&[1, -1]));
    assert!(compiled.contains(out_of_range), "{compiled}");
    let compiled = panic_of(|| typed_late::run(&[0]));
    assert!(compiled.contains(out_of_range), "{compiled}");
    // An index cast to a narrower type wraps, as Rust's `as` does.
    let expected: Vec<i64> = (0..256).map(|b| if b < 300 - 256 { 2 } else { 1 }).collect();
    assert_eq!(wrapped_index::run(300).as_slice(), &expected[..]);

    // The expression form's captures saturate the same way.
    let big: u64 = u64::MAX;
    let message = panic_of(|| {
        let copy: ein::Array<f64, 1> = ein::ein!(for i in 0..big {
            a[i]
        });
        copy
    });
    assert!(message.contains("size of index `i` is i64::MAX or more"), "{message}");
    let last: f64 = ein::ein!(a[big]);
    assert_eq!(last, 3.0);
    // An explicit cast of a capture wraps, as Rust's `as` does.
    let wrapped: (f64, f64) = ein::ein!((a[big], a[big as i64]));
    assert_eq!(wrapped, (3.0, 1.0));
    let v: Vec<u64> = vec![u64::MAX, 5];
    let products: ein::Array<i64, 1> = ein::ein!(for i { (v[i] * 3) as i64 });
    assert_eq!(products.as_slice(), &[-3, 15]);
}

program! {
    repeat: fn(x: [f64], n: i64) -> [f64] { fold t in 0..n, v = x { for i in 0..x.len() { v[i] * 2.0 } } }
}

#[test]
fn negative_fold_count_panics() {
    let x = vec![1.0, 2.0];
    let compiled = panic_of(|| repeat::run(&x, -1));
    let args = vec![Value::Array(ArrayValue::vector(vec![Value::F64(1.0), Value::F64(2.0)])), Value::I64(-1)];
    let interpreted = interpreter_error("negative_fold_count", repeat::SOURCE, args);
    assert!(compiled.contains("-1"), "{compiled}");
    assert_same_error(&compiled, &interpreted);
    // Zero iterations return the initial value.
    assert_eq!(repeat::run(&x, 0).as_slice(), &[1.0, 2.0]);
}

#[test]
fn a_panic_inside_the_parallel_loop_reaches_the_caller_with_its_message() {
    // 2^16 rows of 4 elements: above the grain size, so the rows run on rayon's pool; one row
    // deep in the array divides by zero.
    let rows = 1 << 16;
    let a = vec![5i64; rows];
    let mut b = vec![1i64; rows];
    b[rows - 3] = 0;
    let wide = Array2::from_shape_fn((rows, 4), |(i, j)| (i + j) as i64);
    let compiled = panic_of(|| divide::run(&a, &b));
    assert!(compiled.starts_with("ein: integer division by zero"), "{compiled}");
    // And a size error raised inside a row of a parallel loop, for good measure.
    let compiled = panic_of(|| argmin_rows::run(&wide.slice(ndarray::s![.., 0..0])));
    assert!(compiled.contains("argmin over an empty range"), "{compiled}");
}
