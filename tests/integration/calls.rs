//! Functions of one `ein!` block calling each other (inlined by the checker, so the interpreter
//! and the compiled code run the same inlined program) and `extern fn`s, whose Rust functions
//! the interpreter is given as well: differentially, in every layout.

use crate::harness::{array, extern1, extern2, scalar};

differential! {
    /// The example: a distance matrix from a helper, its argmin per row in the caller.
    pdist_nearest: fn(a: [[f64]], b: [[f64]]) -> [usize] { let d = pdist(a, b); for i { argmin j { d[i, j] } } }
    with {
        fn pdist(a: [[f64]], b: [[f64]]) -> [[f64]] {
            for i, j { sum k { (a[i, k] - b[j, k]) * (a[i, k] - b[j, k]) } }
        }
    }
    cases [m, n, d] in [[0, 3, 2], [1, 1, 1], [5, 4, 3], [9, 7, 0], [40, 30, 8]];
    args (a = array([m, d]), b = array([n, d]));
}

differential! {
    /// One helper called twice on arrays of different sizes, and on a comprehension (bound by
    /// a `let` of the parameter), declared after its caller.
    helper_called_with_different_sizes: fn(a: [f64], b: [f64]) -> ([f64], [f64], [f64]) {
        (center(a), center(b), center(for i { a[i] * 2.0 }))
    }
    with {
        fn center(x: [f64]) -> [f64] { let mean = sum k { x[k] } / (x.len() as f64); for i { x[i] - mean } }
    }
    cases [m, n] in [[0, 2], [1, 1], [3, 8], [50, 17]];
    args (a = array([m]), b = array([n]));
}

differential! {
    /// A helper over a row whose ranges are its argument's length (`0..v.len()`), called per
    /// row: a row's length is the matrix's second axis, the same for every row; and a row's
    /// length written in place (`0..a[i].len()`).
    helpers_over_rows_use_their_length: fn(a: [[f64]], r: f64) -> ([f64], [[f64]], [[f64]]) {
        (for i { decay(a[i], r) }, for i { head(a[i]) }, for i { for j in 0..a[i].len() { a[i, j] * 2.0 } })
    }
    with {
        fn decay(v: [f64], r: f64) -> f64 { fold t in 0..v.len(), s = 0.0 { s * r + v[t] } }
        fn head(v: [f64]) -> [f64] { for t in 0..v.len() - 1 { v[t] } }
    }
    cases [m, n] in [[0, 3], [1, 1], [4, 5], [33, 20]];
    args (a = array([m, n]), r = scalar(0.5f64));
}

differential! {
    /// A scalar helper inside a comprehension, its arguments an element and a parameter.
    scalar_helper_in_a_comprehension: fn(a: [[f32]], eps: f32) -> [[f32]] { for i, j { smooth(a[i, j], eps) } }
    with {
        fn smooth(x: f32, eps: f32) -> f32 { sqrt(x * x + eps) - eps.sqrt() }
    }
    cases [m, n] in [[0, 3], [1, 1], [4, 5], [33, 20]];
    args (a = array([m, n]), eps = scalar(0.25f32));
}

differential! {
    /// A helper returning a record (called on each row, a sub-array argument) and one
    /// returning a tuple.
    helpers_returning_records_and_tuples: fn(a: [[f64]]) -> ([f64], [f64]) {
        (for i { let r = range_of(a[i]); r.hi - r.lo }, for i { let (s, p) = sum_and_max(a[i]); s * p })
    }
    with {
        fn range_of(x: [f64]) -> { lo: f64, hi: f64 } { { lo: min k { x[k] }, hi: max k { x[k] } } }
        fn sum_and_max(x: [f64]) -> (f64, f64) { (sum k { x[k] }, max k { x[k] }) }
    }
    cases [m, n] in [[0, 2], [1, 1], [3, 8], [20, 9]];
    args (a = array([m, n]));
}

differential! {
    /// A helper's array result indexed at the call, plainly and reversed.
    helper_result_indexed: fn(a: [f64], s: f64) -> [f64] {
        for i { scaled(a, s)[i] + scaled(a, 2.0)[a.len() - 1 - i] }
    }
    with {
        fn scaled(x: [f64], factor: f64) -> [f64] { for i { x[i] * factor } }
    }
    cases [n] in [[0], [1], [2], [31]];
    args (a = array([n]), s = scalar(-1.5f64));
}

differential! {
    /// An index passed to a helper: the helper's read `rows[r, k]` sizes the caller's `i` as
    /// if written in place. The helper is also called by a helper (two levels of inlining).
    index_passed_to_a_helper: fn(m: [[i64]]) -> [i64] { for i { row_total(m, i) } }
    with {
        fn row_total(rows: [[i64]], r: i64) -> i64 { sum k { twice(rows[r, k]) } }
        fn twice(x: i64) -> i64 { x * 2 }
    }
    cases [m, n] in [[0, 4], [1, 1], [6, 5], [25, 3]];
    args (m = array([m, n]));
}

/// A Rust function the `ein!` blocks below call through `extern fn`.
fn gamma_like(x: f64) -> f64 {
    let y = x.abs() + 1.0;
    (y.ln() * 0.5 + 1.0 / y).mul_add(2.0, -x)
}

fn weight(x: f32, n: i32) -> f32 {
    x.powi(n % 4) * 0.5
}

differential! {
    /// `extern fn`s called per element, also inside a reduction and on an index's value; the
    /// interpreter runs the same Rust functions.
    extern_functions: fn(a: [f64], b: [f32], n: [i32]) -> ([f64], f64, [f32]) {
        (
            for i { gamma_like(a[i]) },
            sum k { gamma_like(a[k] * 2.0) },
            for i { weight(b[i], n[i]) + weight(1.5, i as i32) },
        )
    }
    with {
        extern fn gamma_like(x: f64) -> f64;
        extern fn weight(x: f32, n: i32) -> f32;
    }
    externs (extern1("gamma_like", gamma_like), extern2("weight", weight));
    cases [n] in [[0], [1], [7], [100]];
    args (a = array([n]), b = array([n]), n = array([n]));
}

// ---------------------------------------------------------------------------------------------
// Rust functions called in the expression form: rustc types them (note [Rust calls of the
// expression form]); the interpreter runs the same functions, registered with their types.

fn is_small(x: f64) -> bool {
    x.abs() < 0.5
}

differential_expr! {
    /// The `extern_functions` program without declarations: each call's types are the Rust
    /// function's (`weight`'s literal `1.5` is an `f32`, as Rust types it); a result used in
    /// arithmetic with a literal, and one used as a condition.
    expression_rust_functions:
    cases [n] in [[0], [1], [7], [100]];
    let a = array::<f64>([n]), b = array::<f32>([n]), m = array::<i32>([n]);
    ein!((
        for i { if is_small(a[i]) { gamma_like(a[i]) * 2.0 } else { a[i] } },
        sum k { gamma_like(a[k] * 2.0) },
        for i { weight(b[i], m[i]) + weight(1.5, i as i32) },
    ));
    externs (extern1("gamma_like", gamma_like), extern1("is_small", is_small), extern2("weight", weight));
}

fn quarter() -> f32 {
    0.25
}

/// A generic Rust function, called at two types.
fn twice<T: std::ops::Add<Output = T> + Copy>(x: T) -> T {
    x + x
}

#[test]
fn expression_form_calls_closures_and_generic_functions() {
    let a = vec![1.0f32, -2.5, 4.0];
    let counts = [3u8, 250, 7];
    let offset = 0.5f32;
    // A local closure (capturing a local), called inside parallel loops: it is `Sync`.
    let shift = |x: f32| x + offset;
    let shifted: ein::Array<f32, 1> = ein::ein!(for i { shift(a[i]) * 2.0 });
    assert_eq!(shifted.as_slice(), [3.0, -4.0, 9.0]);
    // The same generic function on `f32` and on `u8` (values in range: the Rust function's own
    // `+` panics on overflow in debug builds).
    let (floats, bytes): (ein::Array<f32, 1>, ein::Array<u8, 1>) =
        ein::ein!((for i { twice(a[i]) }, for i { twice(counts[i] / 2) }));
    assert_eq!(floats.as_slice(), [2.0, -5.0, 8.0]);
    assert_eq!(bytes.as_slice(), [2, 250, 6]);
    // Calls nested in calls, and a function of no arguments.
    let nested: ein::Array<f32, 1> = ein::ein!(for i { twice(shift(a[i])) + quarter() });
    assert_eq!(nested.as_slice(), [3.25, -3.75, 9.25]);
    // A reduction over a long range runs the function in parallel.
    let long: Vec<f64> = (0..100_000).map(|k| k as f64).collect();
    let total: f64 = ein::ein!(sum k { twice(long[k]) });
    assert_eq!(total, long.iter().map(|x| x + x).sum::<f64>());
}

mod visibility {
    ein::ein! {
        /// Public and called by another function of the block: emitted, and inlined there.
        pub fn norm(x: [f64]) -> f64 { sqrt(sum k { x[k] * x[k] }) }
        pub fn normalised(x: [f64]) -> [f64] { let n = norm(x); for i { x[i] / n } }
        // Private and called: a helper, inlined only (no Rust function, so no dead code).
        fn square(x: f64) -> f64 { x * x }
        pub fn squares(x: [f64]) -> [f64] { for i { square(x[i]) } }
    }
}

#[test]
fn public_functions_are_emitted_and_inlined() {
    let x = vec![3.0, 4.0];
    assert_eq!(visibility::norm(&x), 5.0);
    assert_eq!(visibility::normalised(&x).as_slice(), [0.6, 0.8]);
    assert_eq!(visibility::squares(&x).as_slice(), [9.0, 16.0]);
}
