//! Programs users write: nearest neighbours, an N-body step, image convolutions, a logistic
//! regression gradient, Game of Life and a box blur. Each `ein` program is written the obvious
//! way from the README alone (pointful, the formula as a textbook states it, not tuned to the
//! compiler); `naive` is the plain serial loop nest a user writes in Rust (slices, no rayon);
//! `hand` is the best rayon version we could write, the baseline of every ratio.

use std::sync::Arc;

use ein::ein;
use rayon::prelude::*;

use crate::harness::{data, Check, IntoOutput, Kernel, KernelSpec, Output, Work};

ein! {
    /// Each row of `a`'s nearest row of `b` (Euclidean distance; the first on ties).
    pub fn nearest(a: [[f64]], b: [[f64]]) -> [usize] {
        for i {
            argmin j { sqrt(sum k { (a[i, k] - b[j, k]) * (a[i, k] - b[j, k]) }) }
        }
    }

    /// `nearest` as two functions: the distances from a helper, inlined at the call (so the
    /// distance matrix is fused away as if written in place).
    pub fn nearest_via_pdist(a: [[f64]], b: [[f64]]) -> [usize] {
        let d = pdist(a, b);
        for i { argmin j { sqrt(d[i, j]) } }
    }

    /// Squared distances between the rows of `a` and those of `b`.
    fn pdist(a: [[f64]], b: [[f64]]) -> [[f64]] {
        for i, j { sum k { (a[i, k] - b[j, k]) * (a[i, k] - b[j, k]) } }
    }

    /// One N-body velocity step: every body's velocity plus `dt` times its acceleration, the
    /// gravitational pull of every body with Plummer softening `eps`.
    pub fn nbody_step(x: [[f64]], v: [[f64]], m: [f64], dt: f64, eps: f64) -> [[f64]] {
        for i, c {
            v[i, c] + dt * sum j {
                let r2 = sum d { (x[j, d] - x[i, d]) * (x[j, d] - x[i, d]) };
                m[j] * (x[j, c] - x[i, c]) / pow(r2 + eps, 1.5)
            }
        }
    }

    /// A 5×5 convolution (correlation, as image libraries define it); the edges clamp.
    pub fn conv5x5(img: [[f32]], w: [[f32]]) -> [[f32]] {
        for i, j { sum di, dj { img[i + di - 2, j + dj - 2] * w[di, dj] } }
    }

    /// A 3×3 convolution; the edges clamp.
    pub fn conv3x3(img: [[f32]], w: [[f32]]) -> [[f32]] {
        for i, j { sum di, dj { img[i + di - 1, j + dj - 1] * w[di, dj] } }
    }

    /// Any odd square kernel, its radius computed at run time (the README's form).
    pub fn conv_radius(img: [[f32]], w: [[f32]]) -> [[f32]] {
        let r = w.len() / 2;
        for i, j { sum di, dj { img[i + di - r, j + dj - r] * w[di, dj] } }
    }

    /// Logistic regression: the predictions, the mean cross-entropy loss and its gradient.
    pub fn logreg(x: [[f64]], y: [f64], w: [f64]) -> ([f64], f64, [f64]) {
        let n = x.len() as f64;
        let p = for i { 1.0 / (1.0 + exp(-sum k { x[i, k] * w[k] })) };
        let loss = -sum i { y[i] * ln(p[i]) + (1.0 - y[i]) * ln(1.0 - p[i]) } / n;
        let g = for k { sum i { (p[i] - y[i]) * x[i, k] } / n };
        (p, loss, g)
    }

    /// One Game of Life step on a torus (the edges wrap around).
    pub fn life(g: [[u8]]) -> [[u8]] {
        let h = g.len();
        let w = g.shape(1);
        for i, j {
            let up = (i + h - 1) % h;
            let down = (i + 1) % h;
            let left = (j + w - 1) % w;
            let right = (j + 1) % w;
            let n = g[up, left] + g[up, j] + g[up, right]
                + g[i, left] + g[i, right]
                + g[down, left] + g[down, j] + g[down, right];
            if n == 3 || (n == 2 && g[i, j] == 1) { 1 } else { 0 }
        }
    }

    /// A 3×3 box blur; the edges clamp.
    pub fn box_blur(img: [[f32]]) -> [[f32]] {
        for i, j {
            (img[i - 1, j - 1] + img[i - 1, j] + img[i - 1, j + 1]
                + img[i, j - 1] + img[i, j] + img[i, j + 1]
                + img[i + 1, j - 1] + img[i + 1, j] + img[i + 1, j + 1]) / 9.0
        }
    }
}

pub fn kernels() -> Vec<KernelSpec> {
    vec![
        KernelSpec { name: "nn-d3", build: |quick| nearest_kernel("nn-d3", 3, quick) },
        KernelSpec { name: "nn-d8", build: |quick| nearest_kernel("nn-d8", 8, quick) },
        KernelSpec { name: "nn-d16", build: |quick| nearest_kernel("nn-d16", 16, quick) },
        KernelSpec { name: "nn-d32", build: |quick| nearest_kernel("nn-d32", 32, quick) },
        KernelSpec { name: "nbody", build: nbody_kernel },
        KernelSpec { name: "conv5x5", build: |quick| conv_kernel("conv5x5", 2, quick) },
        KernelSpec { name: "conv3x3", build: |quick| conv_kernel("conv3x3", 1, quick) },
        KernelSpec { name: "conv-radius", build: |quick| conv_kernel("conv-radius", 2, quick) },
        KernelSpec { name: "logreg-grad", build: logreg_kernel },
        KernelSpec { name: "life", build: life_kernel },
        KernelSpec { name: "box-blur", build: box_blur_kernel },
    ]
}

// ---------------------------------------------------------------------------------------------
// Nearest neighbours

fn nearest_naive(a: &[f64], b: &[f64], d: usize) -> Vec<usize> {
    let (rows_a, rows_b) = (a.len() / d, b.len() / d);
    let mut out = vec![0usize; rows_a];
    for i in 0..rows_a {
        let mut best = f64::INFINITY;
        let mut best_j = 0;
        for j in 0..rows_b {
            let mut total = 0.0;
            for k in 0..d {
                let diff = a[i * d + k] - b[j * d + k];
                total += diff * diff;
            }
            let distance = total.sqrt();
            if distance < best {
                best = distance;
                best_j = j;
            }
        }
        out[i] = best_j;
    }
    out
}

/// Rows of `b` per block of the register-blocked copy.
const NN_LANES: usize = 8;

/// `b` transposed in blocks of `width` rows, dimension-major within a block; rows past the
/// end are +∞, so they are never nearest.
fn transpose_blocks(b: &[f64], d: usize, width: usize) -> Vec<f64> {
    let rows = b.len() / d;
    let blocks = rows.div_ceil(width);
    let mut out = vec![f64::INFINITY; blocks * d * width];
    for (j, row) in b.chunks_exact(d).enumerate() {
        let (block, offset) = (j / width, j % width);
        for (k, &value) in row.iter().enumerate() {
            out[(block * d + k) * width + offset] = value;
        }
    }
    out
}

/// The first row of the smallest squared distance, from per-lane minima and the block each
/// was first seen in.
fn first_minimum(best: &[f64; NN_LANES], block: &[f64; NN_LANES]) -> usize {
    let (mut low, mut at) = (f64::INFINITY, usize::MAX);
    for lane in 0..NN_LANES {
        let j = block[lane] as usize * NN_LANES + lane;
        if best[lane] < low || (best[lane] == low && j < at) {
            low = best[lane];
            at = j;
        }
    }
    if at == usize::MAX {
        0
    } else {
        at
    }
}

/// Two rows of `a` at a time against blocks of eight rows of `b` (transposed): the sixteen
/// squared distances stay in registers over the coordinates, every load of `b` serves both
/// rows; each lane keeps its own running minimum and the block it came from (selects, no
/// branches), resolved to the first nearest row at the end. No sqrt.
fn nearest_hand(a: &[f64], b_blocks: &[f64], d: usize, rows_b: usize) -> Vec<usize> {
    const CHUNK: usize = 16;
    let rows_a = a.len() / d;
    let mut out = vec![0usize; rows_a];
    if rows_b == 0 {
        return out;
    }
    out.par_chunks_mut(CHUNK).enumerate().for_each(|(chunk, out)| {
        for (pair, out) in out.chunks_mut(2).enumerate() {
            let i0 = chunk * CHUNK + 2 * pair;
            let i1 = i0 + out.len() - 1;
            let (p0, p1) = (&a[i0 * d..][..d], &a[i1 * d..][..d]);
            let (mut best0, mut best1) = ([f64::INFINITY; NN_LANES], [f64::INFINITY; NN_LANES]);
            let (mut at0, mut at1) = ([0.0f64; NN_LANES], [0.0f64; NN_LANES]);
            for (block, coordinates) in b_blocks.chunks_exact(d * NN_LANES).enumerate() {
                let (mut s0, mut s1) = ([0.0f64; NN_LANES], [0.0f64; NN_LANES]);
                for ((&c0, &c1), column) in p0.iter().zip(p1).zip(coordinates.chunks_exact(NN_LANES)) {
                    for lane in 0..NN_LANES {
                        let (e0, e1) = (c0 - column[lane], c1 - column[lane]);
                        s0[lane] += e0 * e0;
                        s1[lane] += e1 * e1;
                    }
                }
                let block = block as f64;
                for lane in 0..NN_LANES {
                    let (closer0, closer1) = (s0[lane] < best0[lane], s1[lane] < best1[lane]);
                    best0[lane] = if closer0 { s0[lane] } else { best0[lane] };
                    at0[lane] = if closer0 { block } else { at0[lane] };
                    best1[lane] = if closer1 { s1[lane] } else { best1[lane] };
                    at1[lane] = if closer1 { block } else { at1[lane] };
                }
            }
            out[0] = first_minimum(&best0, &at0);
            if out.len() == 2 {
                out[1] = first_minimum(&best1, &at1);
            }
        }
    });
    out
}

fn nearest_kernel(name: &'static str, d: usize, quick: bool) -> Kernel {
    let (rows_a, rows_b): (usize, usize) = if quick { (67, 301) } else { (2000, 1500) };
    let seed = 60 + d as u64;
    let a = Arc::new(data::uniform_f64(seed, rows_a * d, 0.0, 1.0));
    let b = Arc::new(data::uniform_f64(seed + 100, rows_b * d, 0.0, 1.0));
    let b_blocks = Arc::new(transpose_blocks(&b, d, NN_LANES));
    let (shape_a, shape_b) = ((rows_a, d), (rows_b, d));
    let (a1, b1) = (Arc::clone(&a), Arc::clone(&b));
    let (a2, b2) = (Arc::clone(&a), Arc::clone(&b));
    let (a3, b3) = (Arc::clone(&a), Arc::clone(&b));
    let (a4, b4) = (Arc::clone(&a), Arc::clone(&b));
    // A different neighbour is acceptable only where the two distances tie within rounding.
    let judge = move |reference: &Output, candidate: &Output| -> Result<f64, String> {
        let (Some(reference), Some(candidate)) = (reference.as_usize(), candidate.as_usize()) else {
            return Err("nearest-neighbour outputs must be usize arrays".to_string());
        };
        if reference.len() != candidate.len() {
            return Err(format!("lengths differ: {} and {}", reference.len(), candidate.len()));
        }
        let distance = |i: usize, j: usize| -> f64 {
            (0..d).map(|k| (a3[i * d + k] - b3[j * d + k]) * (a3[i * d + k] - b3[j * d + k])).sum::<f64>().sqrt()
        };
        let mut worst: f64 = 0.0;
        for (i, (&r, &c)) in reference.iter().zip(candidate).enumerate() {
            if r == c {
                continue;
            }
            if c >= rows_b {
                return Err(format!("row {i}: neighbour {c} does not exist"));
            }
            let (dr, dc) = (distance(i, r), distance(i, c));
            let gap = (dr - dc).abs() / dr.max(dc).max(f64::MIN_POSITIVE);
            worst = worst.max(gap);
            if gap > 1e-9 {
                return Err(format!(
                    "row {i}: reference neighbour {r} (distance {dr}), this variant {c} (distance {dc})"
                ));
            }
        }
        Ok(worst)
    };
    Kernel::new(name, format!("{rows_a}×{d} to {rows_b}×{d} f64"), Work::Flops(3.0 * (rows_a * rows_b * d) as f64), Check::Custom(Box::new(judge)))
        .note("ein: `for i { argmin j { sqrt(sum k { (a[i, k] - b[j, k]) * (a[i, k] - b[j, k]) }) } }`; ein-calls: the same with the distances from a helper `pdist(a, b)` the block inlines; naive: three loops, sqrt, compare; hand: `b` transposed in blocks of 8 rows, two rows of `a` against a block at a time with the 16 squared distances (no sqrt) in registers, a running minimum per lane by selects; rate: 3 flops per (i, j, k)")
        .variant("ein", move || nearest(&data::view(&a1, shape_a), &data::view(&b1, shape_b)))
        .variant("ein-calls", move || nearest_via_pdist(&data::view(&a4, shape_a), &data::view(&b4, shape_b)))
        .variant("naive", move || nearest_naive(&a2, &b2, d))
        .variant("hand", move || nearest_hand(&a, &b_blocks, d, rows_b))
}

// ---------------------------------------------------------------------------------------------
// N-body

fn nbody_naive(x: &[f64], v: &[f64], m: &[f64], dt: f64, eps: f64) -> Vec<f64> {
    let n = m.len();
    let mut out = vec![0.0; n * 3];
    for i in 0..n {
        let mut acc = [0.0f64; 3];
        for j in 0..n {
            let dx = x[j * 3] - x[i * 3];
            let dy = x[j * 3 + 1] - x[i * 3 + 1];
            let dz = x[j * 3 + 2] - x[i * 3 + 2];
            let r2 = dx * dx + dy * dy + dz * dz;
            let denominator = (r2 + eps).powf(1.5);
            acc[0] += m[j] * dx / denominator;
            acc[1] += m[j] * dy / denominator;
            acc[2] += m[j] * dz / denominator;
        }
        for c in 0..3 {
            out[i * 3 + c] = v[i * 3 + c] + dt * acc[c];
        }
    }
    out
}

/// Positions as three coordinate arrays (structure of arrays), made once outside the timing.
struct Bodies {
    px: Vec<f64>,
    py: Vec<f64>,
    pz: Vec<f64>,
    m: Vec<f64>,
}

fn nbody_hand(bodies: &Bodies, v: &[f64], dt: f64, eps: f64) -> Vec<f64> {
    const CHUNK: usize = 8;
    const LANES: usize = 4;
    let n = bodies.m.len();
    let mut out = vec![0.0; n * 3];
    let Bodies { px, py, pz, m } = bodies;
    out.par_chunks_mut(3 * CHUNK).enumerate().for_each(|(chunk, out)| {
        for (offset, out) in out.chunks_exact_mut(3).enumerate() {
            let i = chunk * CHUNK + offset;
            let (xi, yi, zi) = (px[i], py[i], pz[i]);
            let (mut ax, mut ay, mut az) = ([0.0f64; LANES], [0.0f64; LANES], [0.0f64; LANES]);
            let body = |j: usize| {
                let (dx, dy, dz) = (px[j] - xi, py[j] - yi, pz[j] - zi);
                let s = dx * dx + dy * dy + dz * dz + eps;
                let f = m[j] / (s * s.sqrt());
                (f * dx, f * dy, f * dz)
            };
            let full = n / LANES * LANES;
            for start in (0..full).step_by(LANES) {
                for lane in 0..LANES {
                    let (fx, fy, fz) = body(start + lane);
                    ax[lane] += fx;
                    ay[lane] += fy;
                    az[lane] += fz;
                }
            }
            for j in full..n {
                let (fx, fy, fz) = body(j);
                ax[0] += fx;
                ay[0] += fy;
                az[0] += fz;
            }
            let total = |lanes: [f64; LANES]| (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
            out[0] = v[i * 3] + dt * total(ax);
            out[1] = v[i * 3 + 1] + dt * total(ay);
            out[2] = v[i * 3 + 2] + dt * total(az);
        }
    });
    out
}

fn nbody_kernel(quick: bool) -> Kernel {
    let n: usize = if quick { 77 } else { 2000 };
    let x = Arc::new(data::uniform_f64(71, n * 3, 0.0, 1.0));
    let v = Arc::new(data::uniform_f64(72, n * 3, -0.1, 0.1));
    let m = Arc::new(data::uniform_f64(73, n, 0.5, 1.5));
    let (dt, eps) = (1e-3, 1e-3);
    let bodies = Arc::new(Bodies {
        px: x.chunks_exact(3).map(|p| p[0]).collect(),
        py: x.chunks_exact(3).map(|p| p[1]).collect(),
        pz: x.chunks_exact(3).map(|p| p[2]).collect(),
        m: m.to_vec(),
    });
    let shape = (n, 3);
    let (x1, v1, m1) = (Arc::clone(&x), Arc::clone(&v), Arc::clone(&m));
    let (x2, v2) = (Arc::clone(&x), Arc::clone(&v));
    Kernel::new("nbody", format!("{n} bodies f64"), Work::Items((n * n) as f64, "pair"), Check::Close(1e-9))
        .note("ein: `for i, c { v[i, c] + dt * sum j { let r2 = sum d { … }; m[j] * (x[j, c] - x[i, c]) / pow(r2 + eps, 1.5) } }` (the distance is inside the element, so per component); naive: the same loops with `powf(1.5)`, the three components in one pass; hand: positions as three arrays, one 1/(s·√s) per pair, four accumulators per component; rate: body pairs per second")
        .variant("ein", move || nbody_step(&data::view(&x1, shape), &data::view(&v1, shape), &*m1, dt, eps))
        .variant("naive", move || nbody_naive(&x2, &v2, &m, dt, eps))
        .variant("hand", move || nbody_hand(&bodies, &v, dt, eps))
}

// ---------------------------------------------------------------------------------------------
// Convolutions and the box blur (the edges clamp)

fn conv_naive(img: &[f32], rows: usize, columns: usize, weights: &[f32], radius: usize) -> Vec<f32> {
    let size = 2 * radius + 1;
    let mut out = vec![0.0f32; rows * columns];
    for i in 0..rows {
        for j in 0..columns {
            let mut total = 0.0f32;
            for di in 0..size {
                for dj in 0..size {
                    let si = (i as isize + di as isize - radius as isize).clamp(0, rows as isize - 1) as usize;
                    let sj = (j as isize + dj as isize - radius as isize).clamp(0, columns as isize - 1) as usize;
                    total += img[si * columns + sj] * weights[di * size + dj];
                }
            }
            out[i * columns + j] = total;
        }
    }
    out
}

/// Rows in parallel; each output row accumulates one tap at a time over the row (the interior
/// vectorised, the `radius` columns at each edge with clamped reads).
fn conv_hand(img: &[f32], rows: usize, columns: usize, weights: &[f32], radius: usize) -> Vec<f32> {
    let size = 2 * radius + 1;
    let mut out = vec![0.0f32; rows * columns];
    if columns == 0 {
        return out;
    }
    let low = radius.min(columns);
    let high = columns.saturating_sub(radius).max(low);
    out.par_chunks_mut(columns).enumerate().for_each(|(i, out)| {
        for di in 0..size {
            let source = (i + di).saturating_sub(radius).min(rows - 1);
            let row = &img[source * columns..][..columns];
            for dj in 0..size {
                let weight = weights[di * size + dj];
                if high > low {
                    for (out, &value) in out[low..high].iter_mut().zip(&row[low + dj - radius..high + dj - radius]) {
                        *out += weight * value;
                    }
                }
                for j in (0..low).chain(high..columns) {
                    out[j] += weight * row[(j + dj).saturating_sub(radius).min(columns - 1)];
                }
            }
        }
    });
    out
}

fn conv_kernel(name: &'static str, radius: usize, quick: bool) -> Kernel {
    // Quick sizes: the 5×5 one is narrower than its kernel (every column is an edge).
    let (rows, columns): (usize, usize) = match (quick, radius) {
        (true, 2) => (301, 4),
        (true, _) => (129, 77),
        (false, _) => (2000, 1500),
    };
    let size = 2 * radius + 1;
    let img = Arc::new(data::uniform_f32(80 + radius as u64, rows * columns, 0.0, 1.0));
    let weights = Arc::new(data::uniform_f32(90 + radius as u64, size * size, -1.0, 1.0));
    let shape = (rows, columns);
    let (i1, w1) = (Arc::clone(&img), Arc::clone(&weights));
    let (i2, w2) = (Arc::clone(&img), Arc::clone(&weights));
    let ein_variant = move || {
        let (img, weights) = (data::view(&i1, shape), data::view(&w1, (size, size)));
        match (name, radius) {
            ("conv-radius", _) => conv_radius(&img, &weights),
            (_, 2) => conv5x5(&img, &weights),
            _ => conv3x3(&img, &weights),
        }
    };
    let shift = if name == "conv-radius" { "r".to_string() } else { radius.to_string() };
    let radius_note =
        if name == "conv-radius" { " with `let r = w.len() / 2` (the shift known at run time)" } else { "" };
    Kernel::new(name, format!("{rows}×{columns} f32, {size}×{size}"), Work::Flops(2.0 * (rows * columns * size * size) as f64), Check::Close(1e-5))
        .note(format!("ein: `for i, j {{ sum di, dj {{ img[i + di - {shift}, j + dj - {shift}] * w[di, dj] }} }}`{radius_note} (reads past the edge clamp; the window reads size `i` and `j`; each element's short sum runs eight elements side by side); naive: four loops with clamped indices; hand: rows in parallel, one tap at a time over the whole output row (interior vectorised, edge columns clamped)"))
        .variant("ein", ein_variant)
        .variant("naive", move || conv_naive(&i2, rows, columns, &w2, radius))
        .variant("hand", move || conv_hand(&img, rows, columns, &weights, radius))
}

fn box_blur_naive(img: &[f32], rows: usize, columns: usize) -> Vec<f32> {
    let mut out = vec![0.0f32; rows * columns];
    for i in 0..rows {
        for j in 0..columns {
            let mut total = 0.0f32;
            for di in -1isize..=1 {
                for dj in -1isize..=1 {
                    let si = (i as isize + di).clamp(0, rows as isize - 1) as usize;
                    let sj = (j as isize + dj).clamp(0, columns as isize - 1) as usize;
                    total += img[si * columns + sj];
                }
            }
            out[i * columns + j] = total / 9.0;
        }
    }
    out
}

/// Separable: the three rows summed into a column-sum row (vectorised), then three
/// neighbouring column sums per output (vectorised interior, clamped ends).
fn box_blur_hand(img: &[f32], rows: usize, columns: usize) -> Vec<f32> {
    let mut out = vec![0.0f32; rows * columns];
    if columns == 0 {
        return out;
    }
    let row = |r: usize| &img[r * columns..][..columns];
    out.par_chunks_mut(columns).enumerate().for_each_init(
        || vec![0.0f32; columns],
        |sums, (i, out)| {
            let (up, center, down) = (row(i.saturating_sub(1)), row(i), row((i + 1).min(rows - 1)));
            for (((sum, &up), &center), &down) in sums.iter_mut().zip(up).zip(center).zip(down) {
                *sum = up + center + down;
            }
            let last = columns - 1;
            out[0] = (sums[0] + sums[0] + sums[1.min(last)]) / 9.0;
            if last > 0 {
                out[last] = (sums[last - 1] + sums[last] + sums[last]) / 9.0;
            }
            if columns > 2 {
                let (left, middle, right) = (&sums[..last - 1], &sums[1..last], &sums[2..]);
                for (((out, &left), &middle), &right) in out[1..last].iter_mut().zip(left).zip(middle).zip(right) {
                    *out = (left + middle + right) / 9.0;
                }
            }
        },
    );
    out
}

fn box_blur_kernel(quick: bool) -> Kernel {
    let (rows, columns): (usize, usize) = if quick { (123, 131) } else { (3000, 2000) };
    let img = Arc::new(data::uniform_f32(100, rows * columns, 0.0, 1.0));
    let shape = (rows, columns);
    let (i1, i2) = (Arc::clone(&img), Arc::clone(&img));
    Kernel::new("box-blur", format!("{rows}×{columns} f32, 3×3"), Work::Bytes(8.0 * (rows * columns) as f64), Check::Close(1e-5))
        .note("ein: the nine shifted reads summed and divided by 9 (reads past the edge clamp); naive: four loops with clamped indices; hand: separable (a column-sum row, then three column sums per output); ein writes its 24 MB output on transparent huge pages, naive and hand allocate theirs with `vec!` as everywhere in the suite and fault it in 4 KiB pages (3–7 ms of hand's time here, measured apart)")
        .variant("ein", move || box_blur(&data::view(&i1, shape)))
        .variant("naive", move || box_blur_naive(&i2, rows, columns))
        .variant("hand", move || box_blur_hand(&img, rows, columns))
}

// ---------------------------------------------------------------------------------------------
// Logistic regression

fn logreg_naive(x: &[f64], y: &[f64], w: &[f64]) -> (Vec<f64>, f64, Vec<f64>) {
    let (n, d) = (y.len(), w.len());
    let mut p = vec![0.0; n];
    let mut loss = 0.0;
    let mut g = vec![0.0; d];
    for i in 0..n {
        let mut z = 0.0;
        for k in 0..d {
            z += x[i * d + k] * w[k];
        }
        p[i] = 1.0 / (1.0 + (-z).exp());
        loss += y[i] * p[i].ln() + (1.0 - y[i]) * (1.0 - p[i]).ln();
        for k in 0..d {
            g[k] += (p[i] - y[i]) * x[i * d + k];
        }
    }
    for value in &mut g {
        *value /= n as f64;
    }
    (p, -loss / n as f64, g)
}

/// One pass over `x`: chunks of rows in parallel, each row's dot product with four
/// accumulators, its prediction, loss term and gradient update; chunk results summed.
fn logreg_hand(x: &[f64], y: &[f64], w: &[f64]) -> (Vec<f64>, f64, Vec<f64>) {
    const CHUNK: usize = 2048;
    let (n, d) = (y.len(), w.len());
    let mut p = vec![0.0; n];
    let dot = |row: &[f64]| {
        let mut lanes = [0.0f64; 4];
        let chunks = row.chunks_exact(4);
        let rest: f64 = chunks.remainder().iter().zip(&w[row.len() / 4 * 4..]).map(|(a, b)| a * b).sum();
        for (chunk, weights) in chunks.zip(w.chunks_exact(4)) {
            for lane in 0..4 {
                lanes[lane] += chunk[lane] * weights[lane];
            }
        }
        (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]) + rest
    };
    let (loss, mut g) = p
        .par_chunks_mut(CHUNK)
        .enumerate()
        .map(|(chunk, p)| {
            let mut loss = 0.0;
            let mut g = vec![0.0; d];
            for (offset, p) in p.iter_mut().enumerate() {
                let i = chunk * CHUNK + offset;
                let row = &x[i * d..][..d];
                let prediction = 1.0 / (1.0 + (-dot(row)).exp());
                *p = prediction;
                loss += y[i] * prediction.ln() + (1.0 - y[i]) * (1.0 - prediction).ln();
                let error = prediction - y[i];
                for (g, &value) in g.iter_mut().zip(row) {
                    *g += error * value;
                }
            }
            (loss, g)
        })
        .reduce(
            || (0.0, vec![0.0; d]),
            |(loss_a, mut g_a), (loss_b, g_b)| {
                for (a, b) in g_a.iter_mut().zip(&g_b) {
                    *a += b;
                }
                (loss_a + loss_b, g_a)
            },
        );
    for value in &mut g {
        *value /= n as f64;
    }
    (p, -loss / n as f64, g)
}

fn logreg_kernel(quick: bool) -> Kernel {
    // Quick: an odd row count and a dimension that is no multiple of the vector width.
    let (n, d): (usize, usize) = if quick { (1001, 7) } else { (200_000, 32) };
    let x = Arc::new(data::uniform_f64(110, n * d, -1.0, 1.0));
    let y: Arc<Vec<f64>> =
        Arc::new(data::uniform_f64(111, n, 0.0, 1.0).into_iter().map(|u| if u < 0.5 { 0.0 } else { 1.0 }).collect());
    let w = Arc::new(data::uniform_f64(112, d, -0.5, 0.5));
    let shape = (n, d);
    let (x1, y1, w1) = (Arc::clone(&x), Arc::clone(&y), Arc::clone(&w));
    let (x2, y2, w2) = (Arc::clone(&x), Arc::clone(&y), Arc::clone(&w));
    Kernel::new("logreg-grad", format!("{n}×{d} f64"), Work::Bytes(8.0 * (n * d + 2 * n) as f64), Check::Close(1e-9))
        .note("output: predictions, mean loss and gradient; ein: `p = for i { 1 / (1 + exp(-sum k { x[i, k] * w[k] })) }`, the loss a `sum i`, `g = for k { sum i { (p[i] - y[i]) * x[i, k] } / n }`; naive: one serial pass (dot product, prediction, loss, gradient update per row); hand: the same single pass over chunks of rows in parallel, four accumulators in the dot product; compulsory traffic: x and y read, p written")
        .variant("ein", move || {
            let (p, loss, g) = logreg(&data::view(&x1, shape), &*y1, &*w1);
            Output::Tuple(vec![p.into_output(), loss.into_output(), g.into_output()])
        })
        .variant("naive", move || {
            let (p, loss, g) = logreg_naive(&x2, &y2, &w2);
            Output::Tuple(vec![p.into_output(), loss.into_output(), g.into_output()])
        })
        .variant("hand", move || {
            let (p, loss, g) = logreg_hand(&x, &y, &w);
            Output::Tuple(vec![p.into_output(), loss.into_output(), g.into_output()])
        })
}

// ---------------------------------------------------------------------------------------------
// Game of Life (on a torus)

fn life_naive(grid: &[u8], rows: usize, columns: usize) -> Vec<u8> {
    let mut out = vec![0u8; rows * columns];
    for i in 0..rows {
        for j in 0..columns {
            let mut neighbours = 0;
            for (p, di) in [rows - 1, 0, 1].into_iter().enumerate() {
                for (q, dj) in [columns - 1, 0, 1].into_iter().enumerate() {
                    if p == 1 && q == 1 {
                        continue;
                    }
                    neighbours += grid[(i + di) % rows * columns + (j + dj) % columns];
                }
            }
            let alive = grid[i * columns + j] == 1;
            out[i * columns + j] = u8::from(neighbours == 3 || (neighbours == 2 && alive));
        }
    }
    out
}

/// Rows in parallel; the three rows summed into a column-count row (vectorised), then each
/// cell's count is three neighbouring column counts less itself; the two edge columns wrap.
fn life_hand(grid: &[u8], rows: usize, columns: usize) -> Vec<u8> {
    let mut out = vec![0u8; rows * columns];
    if columns == 0 {
        return out;
    }
    let row = |r: usize| &grid[r * columns..][..columns];
    let rule = |count: u8, cell: u8| u8::from(count == 3 || (count == 2 && cell == 1));
    out.par_chunks_mut(columns).enumerate().for_each_init(
        || vec![0u8; columns],
        |sums, (i, out)| {
            let (up, center, down) = (row((i + rows - 1) % rows), row(i), row((i + 1) % rows));
            for (((sum, &up), &center), &down) in sums.iter_mut().zip(up).zip(center).zip(down) {
                *sum = up + center + down;
            }
            let last = columns - 1;
            for j in [0, last] {
                let count = sums[(j + last) % columns] + sums[j] + sums[(j + 1) % columns] - center[j];
                out[j] = rule(count, center[j]);
            }
            if columns > 2 {
                for ((out, window), &cell) in out[1..last].iter_mut().zip(sums.windows(3)).zip(&center[1..last]) {
                    let count = window[0] + window[1] + window[2] - cell;
                    *out = u8::from(count == 3) | (u8::from(count == 2) & cell);
                }
            }
        },
    );
    out
}

fn life_kernel(quick: bool) -> Kernel {
    // Quick: three rows (every row's up and down neighbours wrap) and an odd width.
    let (rows, columns): (usize, usize) = if quick { (3, 1001) } else { (2000, 2000) };
    let grid: Arc<Vec<u8>> =
        Arc::new(data::uniform_f64(120, rows * columns, 0.0, 1.0).into_iter().map(|u| u8::from(u < 0.3)).collect());
    let shape = (rows, columns);
    let (g1, g2) = (Arc::clone(&grid), Arc::clone(&grid));
    Kernel::new("life", format!("{rows}×{columns} u8"), Work::Items((rows * columns) as f64, "cell"), Check::Close(0.0))
        .note("the edges wrap around (a torus); ein: `for i, j` with the eight neighbours read at `(i + h - 1) % h`, `(j + 1) % w`, …; naive: four loops with `%`; hand: rows in parallel, a column-count row (vectorised) and three column counts per cell, `%` only at the two edge columns")
        .variant("ein", move || life(&data::view(&g1, shape)))
        .variant("naive", move || life_naive(&g2, rows, columns))
        .variant("hand", move || life_hand(&grid, rows, columns))
}
