//! Differential tests of shifted, strided, reversed and data-dependent reads (all clamped at
//! the edges), 1-D and 2-D stencils, and folds with an array accumulator.

use crate::harness::{array, scalar};

differential! {
    /// Central difference: `i + 1` and `i - 1` clamp at both ends. (`i` only appears shifted,
    /// so it needs an explicit size.)
    clipped_shift: fn(a: [f64]) -> [f64] {
        for i in 0..a.len() { a[i + 1] - a[i - 1] }
    }
    cases [n] in [[0], [1], [2], [7], [100]];
    args (a = array([n]));
}

differential! {
    /// Second difference: the plain `a[i]` gives `i` its size; the shifted reads clamp.
    second_difference: fn(a: [f32]) -> [f32] {
        for i { a[i + 1] - 2.0 * a[i] + a[i - 1] }
    }
    cases [n] in [[0], [1], [2], [7], [100]];
    args (a = array([n]));
}

differential! {
    /// Forward differences over a range one shorter than the array: `a[i + 1]` is proven in
    /// bounds (unchecked); an empty array makes the size −1, an error in both.
    forward_difference: fn(a: [f64]) -> [f64] {
        for i in 0..a.len() - 1 { a[i + 1] - a[i] }
    }
    cases [n] in [[0], [1], [2], [7], [100]];
    args (a = array([n]));
}

differential! {
    reverse_via_len: fn(a: [i64]) -> [i64] {
        let n = a.len();
        for i in 0..n { a[n - 1 - i] }
    }
    cases [n] in [[0], [1], [2], [9], [64]];
    args (a = array([n]).within(-1000.0, 1000.0));
}

differential! {
    /// `count > len / 2` reads past the end (clamped); `len == 0 < count` reads from an empty
    /// axis (an error in both).
    stride_two_reads: fn(a: [f64], n: usize) -> [f64] {
        for i in 0..n { a[2 * i] }
    }
    cases [len, count] in [[10, 5], [9, 5], [1, 1], [0, 0], [4, 6], [2, 1], [0, 3]];
    args (a = array([len]), n = scalar(count));
}

differential! {
    /// Indices up to twice the length: out-of-range ones clamp to the last element.
    gather_clamped: fn(a: [f64], idx: [usize]) -> [f64] {
        for i { a[idx[i]] }
    }
    cases [m, n] in [[5, 8], [1, 3], [7, 0], [0, 0], [30, 100], [0, 2]];
    args (a = array([m]), idx = array([n]).within(0.0, (2 * m + 3) as f64));
}

differential! {
    /// Signed indices, negative ones clamp to 0; arithmetic on a gathered index.
    gather_signed: fn(a: [f64], idx: [i64]) -> [f64] {
        for i { a[idx[i]] * 10.0 + a[idx[i] - 1] }
    }
    cases [m, n] in [[5, 8], [1, 3], [7, 0], [30, 100], [2, 1]];
    args (a = array([m]), idx = array([n]).within(-5.0, (2 * m + 3) as f64));
}

differential! {
    /// One step of Rodinia's hotspot: a 5-point stencil with clamped neighbours; `temp` and
    /// `power` must have the same shape.
    hotspot_step: fn(temp: [[f32]], power: [[f32]], cap: f32) -> [[f32]] {
        for i, j {
            let t = temp[i, j];
            t + cap * (power[i, j] + temp[i - 1, j] + temp[i + 1, j] + temp[i, j - 1] + temp[i, j + 1] - 4.0 * t)
        }
    }
    cases [rows, cols] in [[4, 5], [1, 1], [0, 3], [3, 0], [16, 9], [130, 130]];
    args (temp = array([rows, cols]).within(20.0, 90.0), power = array([rows, cols]).within(0.0, 1.0), cap = scalar(0.1));
}

differential! {
    /// A centred 1-D convolution; taps past either end of `x` clamp.
    convolution_1d: fn(x: [f64], w: [f64]) -> [f64] {
        for i in 0..x.len() { sum k { x[i + k - w.len() / 2] * w[k] } }
    }
    cases [n, taps] in [[10, 3], [1, 1], [0, 3], [5, 0], [50, 7], [3, 8]];
    args (x = array([n]), w = array([taps]));
}

differential! {
    /// Window and shifted reads whose shift is known only at run time (a parameter, half a
    /// length): the loop splits into clamping edges and an unchecked interior computed from the
    /// shift, which may lie past either end (no interior). The last read's shift `r + (a - b)`
    /// with `a = b = i64::MAX` is `r`, though its terms summed left to right pass `i64::MAX`.
    window_reads_shifted_at_run_time: fn(x: [f64], w: [f64], r: i64, a: i64, b: i64) -> ([f64], [f64], [f64], [f64]) {
        (
            for i in 0..x.len() { sum k { x[i + k - r] * w[k] } },
            for i in 0..x.len() { sum k { x[i - k + r] * w[k] } },
            for i in 0..x.len() { x[r + i] - x[i - w.len() / 2] },
            for i in 0..x.len() { x[i + (r + (a - b))] },
        )
    }
    cases [n, taps, shift] in [[10, 3, 3], [1, 1, 2], [0, 3, 3], [5, 0, 4], [50, 7, 5], [3, 8, 2], [40, 5, 90], [40, 5, 0], [33, 4, 1]];
    args (x = array([n]), w = array([taps]), r = scalar(shift as i64 - 2), a = scalar(i64::MAX), b = scalar(i64::MAX));
}

differential! {
    /// Shifts by an enclosing index (`j + i`: the inner loop's interior is computed per row)
    /// and by a parameter on both axes, and a window shifted by the row inside a 2-D nest.
    shifts_by_enclosing_indices: fn(a: [[f64]], w: [f64], r: i64) -> ([[f64]], [[f64]], [[[f64]]]) {
        (
            for i in 0..a.len(), j in 0..a.shape(1) { a[i, j + i] - a[j - r, i + r] },
            for i in 0..a.len(), j in 0..a.shape(1) { sum k { a[i, j + k - i] * w[k] } },
            for i in 0..a.len(), j in 0..a.shape(1), k in 0..3 { a[i, j + k + i - r] },
        )
    }
    cases [rows, cols, taps, shift] in [[4, 9, 3, 2], [1, 1, 1, 0], [0, 5, 2, 1], [6, 0, 2, 3], [9, 40, 5, 4], [30, 7, 4, 60]];
    args (a = array([rows, cols]), w = array([taps]), r = scalar(shift as i64 - 2));
}

differential! {
    /// Trailing windows (`x[i - k]`, the window subtracted) of a length given at run time,
    /// 1-D and along the rows of a 2-D array, side by side and one at a time.
    trailing_windows: fn(x: [f32], g: [[f64]], width: i64) -> ([f32], [[f64]]) {
        (
            for i in 0..x.len() { sum k in 0..width { x[i - k] } / (width as f32) },
            for i in 0..g.len(), j in 0..g.shape(1) { max k in 0..width { g[i, j - k] } },
        )
    }
    cases [n, rows, cols, span] in [[40, 3, 20, 4], [1, 1, 1, 1], [0, 0, 5, 3], [7, 2, 9, 0], [100, 5, 70, 33], [5, 2, 3, 9]];
    args (x = array([n]), g = array([rows, cols]), width = scalar(span as i64));
}

differential! {
    /// Repeated 3-point smoothing: a fold whose accumulator is an array.
    jacobi_fold: fn(x: [f64], steps: usize) -> [f64] {
        fold t in 0..steps, v = x {
            for i in 0..x.len() { (v[i - 1] + v[i] + v[i + 1]) / 3.0 }
        }
    }
    cases [n, s] in [[8, 3], [1, 2], [0, 4], [20, 0], [33, 10]];
    args (x = array([n]), steps = scalar(s));
}

differential! {
    /// Rodinia's pathfinder: row by row, the cheapest path cost from the top, moving to one of
    /// three neighbours (clamped at the sides).
    pathfinder: fn(wall: [[i64]]) -> [i64] {
        let cols = wall.shape(1);
        fold t in 0..wall.len() - 1, row = wall[0] {
            for j in 0..cols { wall[t + 1, j] + min(row[j], min(row[j - 1], row[j + 1])) }
        }
    }
    cases [rows, cols] in [[5, 6], [1, 1], [1, 4], [3, 0], [20, 15], [2, 1]];
    args (wall = array([rows, cols]).within(0.0, 9.0));
}

differential! {
    /// Game of Life on a torus (`u8` cells): the wrapped reads `(i + h - 1) % h` are proven in
    /// bounds and read unchecked, the row wraps leave the inner loop; empty and one-cell axes.
    life_on_a_torus: fn(g: [[u8]]) -> [[u8]] {
        let h = g.len();
        let w = g.shape(1);
        for i, j {
            let up = (i + h - 1) % h;
            let down = (i + 1) % h;
            let left = (j + w - 1) % w;
            let right = (j + 1) % w;
            let n = g[up, left] + g[up, j] + g[up, right] + g[i, left] + g[i, right]
                + g[down, left] + g[down, j] + g[down, right];
            if n == 3 || (n == 2 && g[i, j] == 1) { 1 } else { 0 }
        }
    }
    cases [h, w] in [[0, 0], [0, 3], [3, 0], [1, 1], [1, 5], [5, 1], [2, 2], [17, 33], [64, 70]];
    args (g = array([h, w]).within(0.0, 1.9));
}

differential! {
    /// Every wrapping remainder form (`j + 1`, `n - 1 + j`, `j + n`, `j`) beside a clamped read
    /// in one loop: the interior where none wraps or clamps runs without compares, the edges
    /// keep them; the remainders are results too, not only read positions.
    wraps_beside_a_clamp: fn(a: [i64]) -> [(i64, i64)] {
        let n = a.len();
        for j {
            let (left, right) = ((n - 1 + j) % n, (j + 1) % n);
            (a[left] * 3 + a[right] * 5 + a[j + 2] * 7 + a[(j + n) % n], left * 11 + right + j % n)
        }
    }
    cases [n] in [[0], [1], [2], [3], [4], [9], [100]];
    args (a = array([n]).within(-1000.0, 1000.0));
}

differential! {
    /// A wrapped read whose divisor is another array's length: a remainder by zero is an error
    /// in both, a length other than the axis keeps the clamp.
    wrapped_by_another_length: fn(a: [f64], b: [f64]) -> [f64] {
        let n = b.len();
        for i in 0..a.len() { a[(i + 2) % n] + a[(i + n - 1) % n] }
    }
    cases [m, n] in [[0, 0], [3, 0], [0, 3], [5, 5], [5, 3], [3, 5], [40, 41]];
    args (a = array([m]), b = array([n]));
}

differential! {
    /// Rule 110 on a fold's state, whose length is the range only at run time (the interior
    /// knows the wraps, the edges divide), and wraps by a parameter up to `i64::MAX`, where
    /// `i + n - 1` overflows: no interior there.
    torus_of_a_fold_state: fn(c0: [i64], steps: usize, n: i64) -> ([i64], [i64]) {
        (
            fold t in 0..steps, c = c0 {
                for i {
                    let p = c[(i + c.len() - 1) % c.len()] * 4 + c[i] * 2 + c[(i + 1) % c.len()];
                    if p == 0 || p == 4 || p == 7 { 0 } else { 1 }
                }
            },
            for i in 0..c0.len() { (i + n - 1) % n * 3 + (i + 1) % n },
        )
    }
    cases [len, count, modulus] in [
        [8, 3, 3], [1, 2, 1], [0, 2, 5], [2, 1, 2], [40, 6, 40], [40, 2, 41],
        [9, 1, 4611686018427387904], [9, 1, 4611686018427387905], [9, 1, 9223372036854775807],
    ];
    args (c0 = array([len]).within(0.0, 1.9), steps = scalar(count), n = scalar(modulus as i64));
}

differential! {
    /// A convolution written without ranges: the window reads `img[i + di - 1, j + dj - 1]`
    /// size `i` and `j` by the image (the outermost index of a window read), `di` and `dj` by
    /// the kernel; reads past the edges clamp.
    convolution_sized_by_window_reads: fn(img: [[f32]], k: [[f32]]) -> [[f32]] {
        for i, j { sum di, dj { img[i + di - 1, j + dj - 1] * k[di, dj] } }
    }
    cases [h, w, kh, kw] in [[0, 0, 3, 3], [1, 1, 3, 3], [5, 4, 3, 3], [9, 12, 5, 5], [4, 7, 1, 2], [6, 5, 0, 3]];
    args (img = array([h, w]), k = array([kh, kw]));
}

differential! {
    /// Window sums computed eight elements side by side (each reduction a plain fold, below
    /// the runtime's `PLAIN_BELOW`): rows of many widths around multiples of eight, kernels
    /// small enough to take that path (5×5 = 25 f32 values) and too large (6×6 = 36, which
    /// folds in lanes and so one element at a time), empty and one-element kernels.
    window_sums_side_by_side: fn(img: [[f32]], k: [[f32]]) -> [[f32]] {
        for i, j { sum di, dj { img[i + di - 2, j + dj - 2] * k[di, dj] } }
    }
    cases [h, w, kh, kw] in [[3, 8, 5, 5], [4, 17, 5, 5], [2, 40, 5, 5], [3, 23, 6, 6], [1, 9, 1, 1], [2, 16, 0, 3], [0, 8, 5, 5]];
    args (img = array([h, w]), k = array([kh, kw]));
}

differential! {
    /// The same for f64 (plain below 16 values: 3×3 side by side, 4×4 not), an integer window
    /// (always exact, so always side by side), a `max` inside a `sum` and a three-deep nest.
    window_reductions_of_other_types: fn(x: [[f64]], k: [[f64]], n: [[i32]], m: [[i32]]) -> ([[f64]], [[i32]], [[f64]], [[f64]]) {
        (
            for i, j { sum di, dj { x[i + di - 1, j + dj - 1] * k[di, dj] } },
            for i, j { sum di, dj { n[i + di - 1, j + dj - 1] * m[di, dj] } },
            for i, j { sum di { max dj { x[i + di - 1, j + dj - 1] + k[di, dj] } } },
            for i, j { sum di { sum dj { prod e in 0..2 { x[i + di - 1, j + dj - 1] - k[di, dj] * (e as f64) } } } },
        )
    }
    cases [h, w, kh, kw] in [[3, 8, 3, 3], [2, 19, 3, 3], [3, 21, 4, 4], [1, 1, 3, 3], [2, 12, 0, 2], [0, 9, 3, 3]];
    args (
        x = array([h, w]),
        k = array([kh, kw]),
        n = array([h, w]).within(-1000.0, 1000.0),
        m = array([kh, kw]).within(-1000.0, 1000.0),
    );
}

differential! {
    /// A window read of an empty array fails wherever it is first read: side by side, the
    /// first element's first read is still the first read, so both report the same error.
    window_read_of_an_empty_array: fn(img: [[f32]], e: [f32]) -> [[f32]] {
        for i, j { sum di in 0..3 { img[i, j] * e[di] } }
    }
    cases [h, w, n] in [[2, 16, 0], [1, 9, 0], [2, 16, 3], [3, 11, 1], [1, 8, 2]];
    args (img = array([h, w]), e = array([n]));
}

differential! {
    /// Side by side with an epilogue (the `sqrt` of each element's short sum), and an `argmin`
    /// whose candidates' short sums run side by side and are compared in order: integer
    /// distances make ties, which go to the first candidate as one at a time.
    short_sums_side_by_side_in_epilogues_and_argmin: fn(x: [[f64]], c: [[f64]], p: [[i32]], q: [[i32]]) -> ([[f64]], [usize], [usize]) {
        (
            for i, j { sqrt(sum k { x[i, k] * x[i, k] + c[k, j] * c[k, j] }) },
            for i { argmin j { sum k { (x[i, k] - c[k, j]) * (x[i, k] - c[k, j]) } } },
            for i { argmax j { sum k { p[i, k] * q[k, j] } } },
        )
    }
    cases [n, d, m] in [[3, 4, 8], [5, 3, 19], [2, 7, 33], [1, 16, 9], [4, 2, 7], [2, 0, 10], [3, 4, 0]];
    args (
        x = array([n, d]),
        c = array([d, m]),
        p = array([n, d]).within(-2.0, 2.0),
        q = array([d, m]).within(-1.0, 1.0),
    );
}

differential! {
    /// Reads across the side-by-side index (`b[j, k]`, consecutive `j` a row apart): side by
    /// side they read a copy of `b` with `j`'s axis last, made once before the loops
    /// (`passes::transpose`); for sums of 16 or more f64 values (32 f32), which run one at a
    /// time, they read `b` itself. Nearest neighbour by `argmin`, a distance matrix, k-means
    /// on f32, integer ties (first wins), and a rank-3 array read across its middle axis.
    /// Rows of 256 or more elements get no copy (its moved axis left empty, the side-by-side
    /// loops stepping aside): 255, 256 and 300.
    reads_across_the_side_by_side_index: fn(a: [[f64]], b: [[f64]], p: [[f32]], q: [[f32]], s: [[i32]], t: [[i32]], u: [[[f64]]]) -> ([usize], [[f64]], [usize], [usize], [[f64]]) {
        (
            for i { argmin j { sqrt(sum k { (a[i, k] - b[j, k]) * (a[i, k] - b[j, k]) }) } },
            for i, j { sum k { (a[i, k] - b[j, k]) * (a[i, k] - b[j, k]) } },
            for i {
                argmin j {
                    sum k {
                        let diff = p[i, k] - q[j, k];
                        diff * diff
                    }
                }
            },
            for i { argmax j { sum k { s[i, k] * t[j, k] } } },
            for i, j { sum k { max(u[k, j, i], a[i, k]) } },
        )
    }
    cases [n, d, m] in [
        [3, 4, 8], [5, 3, 19], [2, 7, 33], [1, 16, 9], [6, 20, 11], [4, 33, 17], [2, 0, 10], [3, 4, 0], [0, 3, 5],
        [2, 255, 9], [2, 256, 9], [1, 300, 17],
    ];
    args (
        a = array([n, d]),
        b = array([m, d]),
        p = array([n, d]),
        q = array([m, d]),
        s = array([n, d]).within(-2.0, 2.0),
        t = array([m, d]).within(-2.0, 2.0),
        u = array([d, m, n]),
    );
}

differential! {
    /// Comparisons of a shifted index (`j - 1 >= 0 && j - 1 < n`, as reverse mode writes the
    /// adjoint of a clamped read; `0 < j`, `j >= 3`, `n > j + 1`, `-2 <= j - 4`, a bound `m`
    /// of any sign) are `true` in the loop's interior and compared at its edges; `i > 0` and
    /// `j < c[i]` (a bound read at the row) stay compares.
    index_guards: fn(a: [[f64]], c: [i64], m: i64) -> [[f64]] {
        let n = a.shape(1);
        for i, j {
            (if j - 1 >= 0 && j - 1 < n { a[i, j - 1] } else { 0.5 })
                + (if 0 < j { 1.0 } else { 2.0 })
                + (if j + 2 < m { 3.0 } else { 4.0 })
                + (if j >= 3 { a[i, j] } else { -a[i, j] })
                + (if n > j + 1 { 5.0 } else { 6.0 })
                + (if -2 <= j - 4 { 7.0 } else { 8.0 })
                + (if j > 1 && i > 0 { 9.0 } else { 10.0 })
                + (if j < c[i] { 11.0 } else { 12.0 })
        }
    }
    // `m` is `bound - 5`.
    cases [rows, cols, bound] in [[0, 0, 8], [1, 1, 5], [2, 3, 0], [3, 7, 9], [5, 40, 105], [4, 33, 25], [2, 2, 8]];
    args (a = array([rows, cols]), c = array([rows]).within(-2.0, 40.0), m = scalar(bound as i64 - 5));
}
