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
    /// Bitwise operators and shifts on an element type rustc decides (through `Int`).
    expression_bitwise_u16:
    cases [n] in [[0], [1], [9], [300]];
    let v = array::<u16>([n]);
    ein!(for i { (v[i] >> 2 & 7 ^ !v[i]) | v[i] << 13 });
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

differential_expr! {
    /// A captured `usize` length used beside an index (`n - 1 - i`, an `i64` expression) is
    /// converted to the index's type: reversing an array with a range and a computed position.
    expression_captured_usize_in_index_arithmetic:
    cases [len] in [[0], [1], [2], [7]];
    let x = array::<f64>([len]), n = scalar(len);
    ein!(for i in 0..n { x[n - 1 - i] * 2.0 });
}

differential_expr! {
    /// Literals nothing in the block constrains take their type from the Rust use site, as in
    /// Rust: Fibonacci's state is a `u64` here (wrapping past n = 93 as release Rust does).
    expression_fibonacci_typed_by_the_use_site:
    cases [count] in [[0], [1], [2], [10], [93], [100]];
    let n = scalar(count);
    ein!(fold t in 0..n, p = (0, 1) { (p.1, p.0 + p.1) }) -> (u64, u64);
}

differential_expr! {
    /// A captured array inside a tuple state, bound by a pattern or read by field, takes its
    /// rank from those reads (it was taken for a scalar).
    expression_captured_array_in_a_tuple_state:
    cases [len, count] in [[0, 2], [1, 1], [5, 3], [12, 0]];
    let z0 = array::<f64>([len]), n = scalar(count);
    ein!((
        fold t in 0..n, (a, c) = (z0, 0.0) { (for j { a[j] + c }, c + 2.0) },
        fold t in 0..n, s = (z0, 1.0) { (for j { s.0[j] * s.1 }, s.1 + 0.5) },
        { let z = z0; fold t in 0..n, p = ((z, 0.0), z) { ((for j { p.0.0[j] + p.1[j - 1] }, p.0.1 + 1.0), p.0.0) } },
    ));
}

differential_expr! {
    /// Folds and serial scans whose state starts from a float literal, stepped `acc op x`
    /// (generated as `acc += x` for known float types only: a type parameter has no `+=`).
    expression_float_literal_states:
    cases [len] in [[0], [1], [9]];
    let x = array::<f64>([len]);
    ein!((
        fold t in 0..x.len(), a = 0.0 { a + x[t] * 2.0 },
        fold t in 0..x.len(), a = 1.0 { a * x[t] },
        scan t, s = 1.0 { s - x[t] },
        for i in 0..x.len() { fold t in 0..x.len(), a = 0.5 { a / (x[t] + 3.0) } },
    ));
}

differential_expr! {
    /// Nests of reductions over literal ranges run side by side under one comparison with the
    /// runtime's threshold per type (clippy denies the redundant ones: CI lints this code).
    expression_constant_range_nests:
    cases [h, w] in [[0, 3], [1, 1], [6, 7], [20, 33]];
    let m = array::<f64>([h, w]), f = array::<f32>([h, w]);
    ein!((
        for i, j { sum di in 0..3, dj in 0..3 { m[i + di - 1, j + dj - 1] } },
        for i, j { max di in 0..3, dj in 0..5 { m[i + di - 1, j + dj - 2] } },
        for i, j { sum di in 0..3 { sum dj in 0..3 { f[i + di - 1, j + dj - 1] } } },
    ));
}

differential_expr! {
    /// Game of Life on a `u8` torus, all literals: the cells' type comes from the use site.
    expression_life_u8_from_the_use_site:
    cases [h, w] in [[6, 7], [1, 1], [3, 3], [0, 4], [4, 0], [20, 33]];
    let g = array::<u8>([h, w]).within(0.0, 1.0);
    ein!(for i, j {
        let h = g.len();
        let w = g.shape(1);
        let alive = sum di in 0..3, dj in 0..3 { g[(i + di + h - 1) % h, (j + dj + w - 1) % w] } - g[i, j];
        if alive == 3 || (alive == 2 && g[i, j] == 1) { 1 } else { 0 }
    }) -> ein::Array<u8, 2>;
}

differential_expr! {
    /// Counting into `i32` and a float sum of literals into `f32`, both chosen at the use site.
    expression_counts_and_sums_typed_by_the_use_site:
    cases [n] in [[0], [1], [7], [300]];
    let a = array::<f64>([n]).within(-1.0, 1.0);
    ein!((sum i { if a[i] > 0.0 { 1 } else { 0 } }, sum i { if a[i] < 0.0 { 0.25 } else { 0.5 } })) -> (i32, f32);
}

differential_expr! {
    /// A captured `bool` array cast to integers (counting flags): its element type's only
    /// bound is the casts', which `bool` meets.
    expression_bool_casts:
    cases [n] in [[0], [1], [7], [300]];
    let b = array::<bool>([n]);
    ein!((sum i { b[i] as i64 }, for i { b[i] as u8 + 1 }));
}

differential_expr! {
    /// With no use-site type either, rustc's own fallback applies (`i32`), as for a Rust literal.
    expression_unconstrained_literals_follow_rusts_fallback:
    cases [n] in [[0], [1], [7], [300]];
    let a = array::<f64>([n]);
    ein!(for i { if a[i] > 0.0 { 2 } else { -1 } });
}

/// A generic Rust function around the expression form: its own type parameter needs only the
/// bound the block's element type has (`ein::Num` for arithmetic, `ein::Float` for `sqrt`).
fn scale<T: ein::Num>(a: &[T], s: T) -> ein::Array<T, 1> {
    ein::ein!(for i { a[i] * s })
}

fn norms<T: ein::Float>(a: &ndarray::Array2<T>) -> ein::Array<T, 1> {
    ein::ein!(for i { sum j { a[i, j] * a[i, j] }.sqrt() })
}

#[test]
fn expression_form_inside_generic_functions() {
    assert_eq!(scale(&[1.5f32, -2.0], 2.0).as_slice(), &[3.0, -4.0]);
    assert_eq!(scale(&[7u8, 200], 2).as_slice(), &[14, 144]);
    let a = ndarray::arr2(&[[3.0f64, 4.0], [0.0, -2.0]]);
    assert_eq!(norms(&a).as_slice(), &[5.0, 2.0]);
}

differential_expr! {
    /// Reductions down the columns, with element types rustc decides, run side by side as the
    /// item form's do: sums short (plain) and long (in lanes: rows of 40 f32), an extremum, an
    /// argmax; the random views' transposed layout takes the column-major copy.
    expression_column_reductions_f32:
    cases [m, n] in [[0, 3], [3, 0], [1, 1], [5, 9], [40, 33], [300, 17]];
    let a = array::<f32>([m, n]);
    ein!((for j { sum i { a[i, j] } }, for j { max i { a[i, j] * 2.0 } }, for i { sum j { a[i, j] } }));
}

differential_expr! {
    /// The same for integers (folded in order at any length) and an argmax down the columns.
    expression_column_reductions_i64:
    cases [m, n] in [[0, 3], [3, 0], [1, 1], [5, 9], [40, 33], [300, 17]];
    let a = array::<i64>([m, n]);
    ein!((for j { sum i { a[i, j] } }, for j { argmax i { a[i, j] } }, for j { any i { a[i, j] > 0 } }));
}
