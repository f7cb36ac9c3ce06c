//! Size and rank inference as users expect it: sizes from shifted reads when no plain read
//! exists, reduction ranges that depend on outer indices, sizes and ranks flowing through fold
//! accumulators and bindings in the expression form.

use crate::harness::{array, scalar};

differential! {
    /// Only shifted reads: `i` ranges over `a`, the edges clamp.
    sized_by_shifted_reads: fn(a: [f64]) -> [f64] { for i { a[i + 1] - a[i - 1] } }
    cases [n] in [[1], [2], [7], [100]];
    args (a = array([n]));
}

differential! {
    /// A 2-D stencil written with shifts only, in both axes.
    stencil_of_shifts: fn(img: [[f32]]) -> [[f32]] {
        for i, j { (img[i - 1, j] + img[i + 1, j] + img[i, j - 1] + img[i, j + 1]) * 0.25 }
    }
    cases [h, w] in [[1, 1], [3, 4], [16, 9]];
    args (img = array([h, w]));
}

differential! {
    /// Reductions whose ranges depend on the outer index (triangular), including one shaped
    /// like a matrix–vector product, which must not become a contraction.
    triangular_reductions: fn(x: [f64], a: [[f64]]) -> ([f64], [f64], [i64]) {
        (
            for i in 0..x.len() { sum k in 0..i + 1 { x[k] } },
            for i in 0..a.shape(0) { sum k in 0..i { a[i, k] * x[k] } },
            for i in 0..x.len() { sum k in 0..x.len() - i { k * 2 } },
        )
    }
    cases [n] in [[0], [1], [5], [40]];
    args (x = array([n]), a = array([n, n]));
}

differential! {
    /// Windows that grow or shrink with the outer index, read at `i + k` (clamped past the
    /// end): the window's size depends on `i`, so the loop over `i` has no interior computed
    /// before it (these did not compile: an internal error, `i` used out of scope).
    windows_sized_by_the_outer_index: fn(x: [f64], w: [i64]) -> ([f64], [f64], [f64], [f64]) {
        (
            for i in 0..x.len() { sum k in 0..i + 1 { x[i + k] } },
            for i { max k in 0..x.len() - i { x[i + k] } },
            for i { x[i] * sum k in 0..x.len() - i { x[k + i + 1] } },
            for i { min k in 0..w[i] { x[i + k] } },
        )
    }
    cases [n] in [[0], [1], [5], [40]];
    args (x = array([n]), w = array([n]).within(0.0, 6.0));
}

differential! {
    /// Triangular ranges: `j` in `0..i + c` under `i` in `0..len` reads `m[j]` unchecked when
    /// `c` is at most what `i`'s range leaves (the prover follows the chain of ranges).
    triangular_ranges: fn(x: [[f64]], m: [f64]) -> (f64, [f64], [f64], [f64], [f64]) {
        (
            sum i { sum j in 0..i { m[i] * m[j] / sqrt(sum d { (x[i, d] - x[j, d]) * (x[i, d] - x[j, d]) } + 0.01) } },
            for i in 0..m.len() { sum j in 0..i + 1 { m[j] } },
            for i in 0..m.len() - 1 { sum j in 0..i + 2 { m[j] * 2.0 } },
            for i in 0..m.len() { sum j in 0..i + 2 { m[j] } },
            for i in 0..m.len() { max j in 0..i + 1 { sum k in 0..j + 1 { m[k] } } },
        )
    }
    cases [n, d] in [[1, 3], [2, 1], [5, 3], [40, 2]];
    args (x = array([n, d]), m = array([n]));
}

differential! {
    /// A fold whose state is a tuple of arrays, named by a pattern or read by field: the
    /// indices take their sizes from the parts of the initial value (reads proven in bounds).
    tuple_state_fold: fn(x0: [f64], v0: [f64], n: usize) -> (([f64], [f64]), ([f64], [f64])) {
        (
            fold t in 0..n, (x, v) = (x0, v0) { (for i { x[i] + 0.5 * v[i] }, for i { v[i] * 0.9 - x[i] * 0.1 }) },
            fold t in 0..n, s = (x0, v0) { (for i { s.0[i] + s.1[i] }, for i { s.1[i] * 0.5 }) },
        )
    }
    cases [len, steps] in [[0, 2], [1, 1], [5, 0], [5, 3], [40, 7]];
    args (x0 = array([len]), v0 = array([len]), n = scalar(steps));
}

differential! {
    /// Nested tuple states holding arrays, by pattern and by field (these were an internal
    /// error: the part of a part had no known shape), and the scan of one.
    nested_tuple_states: fn(z: [f64], n: usize) -> ((([f64], f64), [f64]), (([f64], f64), [f64]), ([[f64]], [f64])) {
        (
            fold t in 0..n, ((a, s), b) = ((z, 0.0), z) { ((for i { a[i] + b[i] * 0.5 }, s + 1.0), a) },
            fold t in 0..n, p = ((z, 0.0), z) { ((for i { p.0.0[i] + p.1[i - 1] }, p.0.1 + 1.0), p.0.0) },
            { let q = scan t in 0..n, (b, (a, s)) = (z, (z, 0.0)) { (a, (for i { a[i] * 0.5 + b[i] }, s + 1.0)) }; (q.0, q.1.1) },
        )
    }
    cases [len, steps] in [[0, 2], [1, 1], [5, 0], [5, 3], [17, 6]];
    args (z = array([len]), n = scalar(steps));
}

differential! {
    /// Sizes from a fold's accumulator through a `let` (`let m = p.len()`), and from a nested
    /// fold's accumulator started from the outer one: the initial value's shape, which every
    /// step keeps (both were refused as changing from one iteration to the next).
    sizes_from_accumulators_through_lets: fn(u: [f64], w: [[f64]], n: usize) -> ([f64], [[f64]], [f64]) {
        (
            fold t in 0..n, p = u { let m = p.len(); for i in 0..m { p[i] * 0.5 + p[i - 1] } },
            fold t in 0..n, p = w { let r = p.shape(1); for i in 0..p.len(), j in 0..r { p[i, j] + p[i, j - 1] } },
            fold t in 0..n, p = u { fold s in 0..2, q = p { for i in 0..q.len() { q[i] * 0.5 + q[i + 1] } } },
        )
    }
    cases [len, rows, steps] in [[0, 2, 2], [1, 1, 1], [5, 3, 0], [6, 4, 3]];
    args (u = array([len]), w = array([rows, len]), n = scalar(steps));
}

differential! {
    /// A heat step as a fold over an array: the comprehension's sizes come from the
    /// accumulator, whose shape is the initial value's.
    heat_fold: fn(temp: [[f32]], n: usize) -> [[f32]] {
        fold s in 0..n, t = temp { for i, j { (t[i - 1, j] + t[i + 1, j] + t[i, j - 1] + t[i, j + 1]) * 0.25 } }
    }
    cases [h, w, steps] in [[1, 1, 3], [4, 5, 0], [4, 5, 2], [12, 7, 10]];
    args (temp = array([h, w]), n = scalar(steps));
}

differential_expr! {
    /// The same in the expression form: `t = temp` gives `temp` its rank.
    heat_fold_expression_form:
    cases [h, w, steps] in [[1, 1, 3], [4, 5, 2], [12, 7, 10]];
    let temp = array::<f32>([h, w]), n = scalar(steps);
    ein!(fold s in 0..n, t = temp { for i, j { (t[i - 1, j] + t[i + 1, j] + t[i, j - 1] + t[i, j + 1]) * 0.25 } });
}

differential_expr! {
    /// A `let` alias gives its local a rank too.
    let_alias_expression_form:
    cases [m, n] in [[2, 3], [1, 1], [6, 4]];
    let grid = array::<f64>([m, n]);
    ein!({ let g = grid; for i, j { g[i, j] * 2.0 + g[i, j + 1] } });
}

differential! {
    /// Arrays held in tuples bound inside a loop, and rows of a fold's state bound by `let`,
    /// size the indices that read them; where a second array sizes the same index (`v[j]`),
    /// the sizes are checked equal (a mismatch panics, as for any two arrays).
    sizes_through_tuples_and_rows: fn(a: [[f64]], v: [f64], n: usize) -> ([f64], [[f64]], [[f64]], [f64]) {
        (
            for i { let (r, s) = (a[i], 2.0); sum k { r[k] * s } },
            for i { let (r, s) = (a[i], 0.5); for j { r[j] * s + v[j] } },
            fold t in 0..n, u = a { for i { let r = u[i]; for j { r[j] * 0.5 + 1.0 } } },
            for i { let t = if i > 0 { (a[i], 1.0) } else { (a[0], -1.0) }; max k { t.0[k] * t.1 } },
        )
    }
    cases [rows, cols, vlen, steps] in [[0, 3, 3, 1], [1, 1, 1, 2], [4, 5, 5, 0], [6, 3, 3, 3], [3, 4, 2, 1]];
    args (a = array([rows, cols]), v = array([vlen]), n = scalar(steps));
}

differential! {
    /// Reads that size their index besides `a[i]`, `a[i + 2]` and windows of literals: a cast
    /// index, a shift by a parameter, a centred window with a computed radius, a window read
    /// backwards, a torus read, and a helper called with a shifted index. Shifted reads clamp.
    computed_shifts_size_their_index: fn(a: [f64], x: [f64], w: [f64], off: i64)
        -> ([f64], [f64], [f64], [f64], [f64], [f64])
    {
        (
            for i { a[i as usize] * 2.0 },
            for i { a[i + off] },
            { let r = w.len() / 2; for i { sum k { x[i + k - r] * w[k] } } },
            for i { sum k { x[i - k] * w[k] } },
            { let n = a.len(); for i { a[(i + 1) % n] - a[i] } },
            for i { at(a, i + 1) - at(a, i) },
        )
    }
    with { fn at(v: [f64], p: i64) -> f64 { v[p] } }
    cases [alen, xlen, wlen, shift] in [[1, 1, 1, 0], [5, 7, 3, 1], [6, 9, 4, 4], [3, 2, 5, 2], [0, 4, 1, 3]];
    args (a = array([alen]), x = array([xlen]), w = array([wlen]), off = scalar(shift as i64 - 2));
}
