//! Differential tests of shapes: comprehensions whose body is itself an array (a row, a fold,
//! a `let`-bound array), where an empty outer axis means the inner shape must be known without
//! evaluating the body; sizes written as expressions; gathers along inner axes; arg-reductions
//! used as indices; elementwise comprehensions run over contiguous rows as one loop.

use crate::harness::{array, scalar};

differential! {
    /// The body is a row of `x` (a sub-array), read in reverse row order.
    reverse_rows: fn(x: [[f64]]) -> [[f64]] {
        let n = x.len();
        for i in 0..n { x[n - 1 - i] }
    }
    cases [m, n] in [[3, 4], [1, 1], [0, 5], [4, 0], [30, 20]];
    args (x = array([m, n]));
}

differential! {
    /// The body is a comprehension over a `let`-bound row.
    rows_rebuilt: fn(x: [[f64]]) -> [[f64]] {
        for i { let row = x[i]; for j { row[j] * 2.0 + (row.len() as f64) } }
    }
    cases [m, n] in [[3, 4], [1, 1], [0, 5], [4, 0], [30, 20]];
    args (x = array([m, n]));
}

differential! {
    /// The body is the same array for every `i` (a broadcast of `b`).
    replicate: fn(a: [f64], b: [f64]) -> [[f64]] {
        let r = for j { b[j] * b[j] };
        for i in 0..a.len() { r }
    }
    cases [m, n] in [[3, 4], [1, 1], [0, 5], [4, 0], [30, 20]];
    args (a = array([m]), b = array([n]));
}

differential! {
    /// The body is a fold with an array accumulator: with `a` empty the result is `0 × len(b)`.
    fold_per_row: fn(a: [f64], b: [f64]) -> [[f64]] {
        for i { fold t in 0..3, v = b { for j in 0..b.len() { v[j] * 0.5 + a[i] } } }
    }
    cases [m, n] in [[3, 4], [1, 1], [0, 5], [4, 0], [30, 20]];
    args (a = array([m]), b = array([n]));
}

differential! {
    /// Sizes as expressions: `len - 1` (negative for an empty input: an error in both),
    /// `2 * n`, and `a.shape(1)`.
    size_expressions: fn(a: [[f64]]) -> ([f64], [f64]) {
        (
            for i in 0..a.len() - 1 { a[i + 1, 0] - a[i, 0] },
            for j in 0..2 * a.shape(1) { a[0, j / 2] * (j as f64) },
        )
    }
    cases [m, n] in [[3, 4], [1, 1], [2, 0], [30, 20], [0, 3]];
    args (a = array([m, n]));
}

differential! {
    /// Gathers along an inner axis and along the outer axis of a matrix.
    gather_2d: fn(x: [[f64]], rows: [usize], cols: [i64]) -> ([[f64]], [[f64]]) {
        (for i, j { x[rows[i], j] }, for i, j { x[i, cols[j]] })
    }
    cases [m, n, p] in [[3, 4, 5], [1, 1, 1], [2, 3, 0], [20, 10, 15]];
    args (x = array([m, n]), rows = array([p]).within(0.0, 25.0), cols = array([p]).within(-3.0, 12.0));
}

differential! {
    /// An argmax used as an index (a usize index).
    argmax_as_index: fn(a: [[f64]], b: [f64]) -> [f64] {
        for i { b[argmax j { a[i, j] }] }
    }
    cases [m, n, k] in [[3, 4, 5], [1, 1, 1], [0, 3, 2], [20, 10, 4]];
    args (a = array([m, n]), b = array([k]));
}

differential! {
    /// Welford's running mean and variance per row: a fold with a tuple pattern accumulator
    /// inside a comprehension.
    welford_rows: fn(x: [[f64]]) -> [{mean: f64, var: f64}] {
        for i {
            let n = x.shape(1);
            let (mean, m2) = fold t in 0..n, (mean, m2) = (0.0, 0.0) {
                let value = x[i, t];
                let count = (t + 1) as f64;
                let delta = value - mean;
                let next = mean + delta / count;
                (next, m2 + delta * (value - next))
            };
            { mean: mean, var: m2 / max(n as f64, 1.0) }
        }
    }
    cases [m, n] in [[3, 4], [1, 1], [0, 5], [4, 0], [30, 20]];
    args (x = array([m, n]));
}

differential! {
    /// A tuple result holding an array of records and a scalar.
    records_and_scalar: fn(a: [f64]) -> ([{lo: f64, hi: f64}], f64) {
        (for i { { lo: min(a[i], 0.0), hi: max(a[i], 0.0) } }, sum i { abs(a[i]) })
    }
    cases [n] in [[0], [1], [6], [300]];
    args (a = array([n]));
}

differential! {
    /// Mixed element types with casts, comparisons of booleans, and method-call functions on
    /// expressions.
    mixed_types: fn(k: [i32], x: [f64]) -> [f64] {
        for i {
            let same_sign = (k[i] > 0) == (x[i] > 0.0);
            if same_sign { (x[i] * 2.0).exp() } else { (k[i] as f64).abs().sqrt() + x[i] }
        }
    }
    cases [n] in [[0], [1], [6], [300]];
    args (k = array([n]), x = array([n]));
}

differential! {
    /// Comprehensions whose reads all end in their innermost indices, `x[…, h, w]`, run those
    /// axes as one where every such array holds them contiguously (`View::flat_tail`): a sum
    /// over channels (the jam across the merged axis), a scale by channel, a loop shorter
    /// than the planes, two arrays of which one is permuted, and a record, in every layout.
    tail_runs: fn(x: [[[[f32]]]], s: [f32], y: [[[[f32]]]])
        -> ([[[f32]]], [[[[f32]]]], [[[f32]]], [[[[f32]]]], [[[{ lo: f32, hi: f32 }]]])
    {
        (
            for b, h, w { sum c { x[b, c, h, w] } },
            for b, c, h, w { x[b, c, h, w] * s[c] + 1.0 },
            for b, h, w in 0..x.shape(3) - 1 { max c { x[b, c, h, w] } },
            for b, c, h, w { x[b, c, h, w] - y[c, b, h, w] },
            for b, h, w { { lo: min c { x[b, c, h, w] }, hi: x[b, 0, h, w] } },
        )
    }
    cases [n, c, h, w] in [[2, 3, 4, 5], [1, 1, 1, 1], [0, 2, 3, 3], [2, 0, 3, 3], [2, 2, 0, 4], [3, 4, 7, 7], [2, 70, 9, 40]];
    args (x = array([n, c, h, w]), s = array([c]), y = array([c, n, h, w]));
}

differential! {
    /// Exact reductions (integers, `bool`s) over whole reads `x[i, j, …]` run a chunk's
    /// contiguous rows as one loop (`View::flat_rows`): the same values in every layout, with
    /// a scalar from outside, ranks 2 and 3, and float sums (ordered, never flattened) beside.
    exact_reductions_in_runs: fn(a: [[u8]], b: [[u8]], c: [[[i32]]], e: [[bool]], k: u32) -> (u32, i32, i64, bool, bool, u8, f64) {
        (
            sum i, j { if a[i, j] > b[i, j] { (a[i, j] - b[i, j]) as u32 } else { (b[i, j] - a[i, j]) as u32 } * k },
            max p, i, j { c[p, i, j] / 3 - c[p, i, j] % 7 },
            prod i, j { (a[i, j] % 3) as i64 + 1 },
            any i, j { e[i, j] && a[i, j] > 200 },
            all p, i, j { c[p, i, j] != 5 },
            min i, j { max(a[i, j], b[i, j]) },
            sum i, j { a[i, j] as f64 * 0.25 },
        )
    }
    cases [m, n, r] in [[3, 4, 2], [1, 1, 1], [0, 5, 3], [4, 0, 2], [2, 3, 0], [3000, 4, 2], [40, 700, 3]];
    args (
        a = array([m, n]).within(0.0, 255.0),
        b = array([m, n]).within(0.0, 255.0),
        c = array([r, m, n]).within(-1000.0, 1000.0),
        e = array([m, n]),
        k = scalar(3u32),
    );
}

differential! {
    /// Elementwise comprehensions whose reads are all `x[i, j, …]` run contiguous rows as one
    /// loop (`View::flat_rows`); strided, reversed and transposed layouts (the harness runs
    /// each), a loop shorter than the rows it reads, and an array built by the program itself
    /// take the same values.
    elementwise_runs: fn(a: [[u8]], b: [[u8]], c: [[[f64]]], d: [[[[f64]]]], n: usize)
        -> ([[u8]], [[f64]], [[[f64]]], [[u8]], [[f64]], [[f64]], [[[[f64]]]])
    {
        (
            for i, j { if a[i, j] > b[i, j] { a[i, j] - b[i, j] } else { b[i, j] - a[i, j] } },
            for i, j { (a[i, j] as f64) * 0.5 + (b[i, j] as f64) },
            for p, i, j { c[p, i, j] * c[p, i, j] - 1.0 },
            for i, j in 0..a.shape(1) - 1 { a[i, j] / 2 + b[i, j] / 2 },
            { let s = for i, j { a[i, j] as f64 }; for i, j { s[i, j] + (b[i, j] as f64) } },
            fold t in 0..n, s = for i, j { a[i, j] as f64 } { for i, j { s[i, j] * 0.5 + (b[i, j] as f64) } },
            for p, q, i, j { d[p, q, i, j] + 1.0 },
        )
    }
    cases [m, k, r, steps] in [[3, 4, 2, 2], [1, 1, 1, 1], [0, 5, 3, 1], [4, 0, 2, 1], [2, 3, 0, 1], [300, 7, 5, 2], [70, 130, 3, 1]];
    args (a = array([m, k]).within(0.0, 255.0), b = array([m, k]).within(0.0, 255.0), c = array([r, m, k]), d = array([r, 2, m, k]), n = scalar(steps));
}

differential! {
    /// Interleaved images read by channel (`img[i, j, 0]`) run in a copy of the loop nest for
    /// pixels of exactly that many contiguous channels (`View::packed_inner`), reads at a
    /// constant stride: three and four channels, two of three read (no such copy), a channel
    /// past the end (clamped), a weight by column beside them, a batch of images, shifted
    /// reads, a reduction, an accum and a record; every layout takes the same values.
    interleaved_channels: fn(rgb: [[[u8]]], rgba: [[[f32]]], batch: [[[[f32]]]], weights: [f32])
        -> ([[u8]], [[f32]], [[f32]], [[f32]], [[[f32]]], [[f32]], f32, [i64], [[{ r: f32, g: f32 }]])
    {
        (
            for i, j { ((77 * (rgb[i, j, 0] as u32) + 150 * (rgb[i, j, 1] as u32) + 29 * (rgb[i, j, 2] as u32)) / 256) as u8 },
            for i, j { rgba[i, j, 0] * rgba[i, j, 3] + rgba[i, j, 1] - rgba[i, j, 2] },
            for i, j { (rgb[i, j, 0] as f32) + (rgb[i, j, 1] as f32) * weights[j] },
            for i, j { rgba[i, j, 5] + rgba[i, j, 1] },
            for b, i, j { batch[b, i, j, 0] * 0.25 + batch[b, i, j, 2] * weights[j] },
            for i, j { (rgb[i, j + 1, 2] as f32) - (rgb[i, j - 1, 2] as f32) + rgba[i, j, 0] },
            sum i, j { rgba[i, j, 1] * rgba[i, j, 2] },
            accum h = for k in 0..8 { 0 } { for i, j { h[(rgb[i, j, 0] / 32) as usize] += rgb[i, j, 1] as i64 } },
            for i, j { { r: batch[0, i, j, 0], g: batch[0, i, j, 1] } },
        )
    }
    cases [h, w, n] in [[3, 5, 2], [1, 1, 1], [0, 4, 1], [4, 0, 1], [1, 37, 1], [40, 70, 2]];
    args (
        rgb = array([h, w, 3]).within(0.0, 255.0),
        rgba = array([h, w, 4]),
        batch = array([n, h, w, 3]),
        weights = array([w]),
    );
}

differential! {
    /// Outputs of rank 3 and more run in chunks of rows of their first two axes taken as one
    /// (`for c, i, j` has rows `(c, i)`), so that a short first axis still splits across
    /// threads: elementwise (one run per chunk where every array is contiguous), with the
    /// indices used as values, with shifted reads clamped at the edges, with a tail `[i, j]`
    /// merged, and comprehensions of rank 2 whose body is a row. In every layout of the
    /// arguments, with empty and length-1 axes.
    collapsed_rows: fn(x: [[[f64]]], y: [[[f64]]], v: [[[[f32]]]], w: [[f32]]) -> ([[[f64]]], [[[f64]]], [[[f64]]], [[[[f32]]]], [[[f64]]], [[[f64]]]) {
        (
            for c, i, j { x[c, i, j] * 2.0 + y[c, i, j] },
            for c, i, j { x[c, i, j] + ((c * 100 + i * 10 + j) as f64) },
            for c, i, j { x[c, i, j + 1] - x[c, i - 1, j] },
            for a, b, i, j { v[a, b, i, j] * w[i, j] },
            for c, i { y[c, i] },
            for c, i { let row = x[c, i]; for j { row[j] + y[c, i, j] } }
        )
    }
    cases [c, m, n] in [[0, 3, 4], [3, 0, 4], [2, 3, 0], [1, 1, 1], [1, 40, 70], [3, 17, 9], [2, 300, 250]];
    args (x = array([c, m, n]), y = array([c, m, n]), v = array([c, 2, m, n]), w = array([m, n]));
}

differential! {
    /// Outputs of rank 3 whose element reads across the rows of the last two axes (a stack of
    /// transposes, `x[c, j, i]` in `for c, i, j`) are written tile by tile over rows `(c, i)`
    /// taken as one, counted from each chunk's first: chunks and tiles straddle the stack's
    /// matrices where `m` is not a multiple of their height. With the indices as values, a
    /// transposed matrix read by every layer, and an index read nowhere.
    tiled_stacks: fn(x: [[[f64]]], y: [[[f64]]], w: [[f64]]) -> ([[[f64]]], [[[f64]]], [[[f64]]], [[[f64]]]) {
        let layers = x.len();
        (
            for c, i, j { x[c, j, i] * 2.0 + y[c, i, j] },
            for c, i, j { x[c, j, i] + ((c * 1000 + i * 10 + j) as f64) },
            for c, i, j { x[c, j, i] * w[j, i] },
            for c in 0..layers, i, j { w[j, i] + 1.0 }
        )
    }
    cases [c, m, n] in [[0, 3, 4], [3, 0, 4], [2, 3, 0], [1, 1, 1], [1, 70, 130], [3, 17, 9], [5, 65, 64], [2, 150, 130]];
    args (x = array([c, n, m]), y = array([c, m, n]), w = array([n, m]));
}

differential! {
    /// Comprehensions of rank 2 whose rows are fewer than the pool's threads run in pieces of
    /// rows (`fill_pieces`): elementwise, with the column index used as a value, with a read
    /// shifted along the row, and with a reduction per element computed side by side. Pieces
    /// fall inside rows and across the blocks of side-by-side elements.
    row_pieces: fn(x: [[f64]], y: [[f32]], b: [[f32]]) -> ([[f64]], [[f64]], [[f64]], [[f32]]) {
        (
            for i, j { x[i, j] * 2.0 + 1.0 },
            for i, j { x[i, j] + ((i * 7 + j) as f64) },
            for i, j { x[i, j + 1] - x[i, j] },
            for i, j { sum k { abs(y[i, k] - b[k, j]) } }
        )
    }
    cases [m, n, p] in [[0, 5, 2], [5, 0, 2], [1, 1, 1], [1, 140_000, 2], [3, 50_001, 3], [40, 30, 3]];
    args (x = array([m, n]), y = array([m, p]), b = array([p, n]));
}
