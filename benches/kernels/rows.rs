//! Row-wise kernels whose statistics are reductions per row: softmax and layer norm. Written
//! naively in ein (the statistics inside the element's expression); the optimiser is what
//! must hoist them to once per row. Column means, a reduction down the rows per column, and
//! each row's argmax (the class of each row of logits).

use std::sync::Arc;

use ein::ein;
use ndarray::{Array2, ArrayView1, Zip};
use rayon::prelude::*;

use crate::harness::{data, Check, Kernel, KernelSpec, Work};

ein! {
    /// Row-wise softmax, as in the README.
    pub fn softmax(x: [[f32]]) -> [[f32]] {
        for i, j {
            let m = max k { x[i, k] };
            exp(x[i, j] - m) / sum k { exp(x[i, k] - m) }
        }
    }

    /// A causal (lower-triangular) softmax: row `i` over its first `i + 1` entries, zeros
    /// after, the statistics written inside the element over a range that grows with the row.
    pub fn causal_softmax(s: [[f32]]) -> [[f32]] {
        for i, j {
            let m = max k in 0..i + 1 { s[i, k] };
            let z = sum k in 0..i + 1 { exp(s[i, k] - m) };
            if j <= i { exp(s[i, j] - m) / z } else { 0.0 }
        }
    }

    /// Layer normalisation over each row, with a learned scale and shift per column.
    pub fn layernorm(x: [[f32]], gamma: [f32], beta: [f32], eps: f32) -> [[f32]] {
        for i, j {
            let n = x.shape(1) as f32;
            let mean = sum k { x[i, k] } / n;
            let var = sum k { (x[i, k] - mean) * (x[i, k] - mean) } / n;
            (x[i, j] - mean) / sqrt(var + eps) * gamma[j] + beta[j]
        }
    }

    /// The mean of each column, written the obvious way.
    pub fn column_means(x: [[f32]]) -> [f32] {
        for j { sum i { x[i, j] } / (x.len() as f32) }
    }

    /// The position of each row's greatest element (the first of equals).
    pub fn row_argmax(x: [[f32]]) -> [usize] {
        for i { argmax j { x[i, j] } }
    }
}

pub fn kernels() -> Vec<KernelSpec> {
    vec![
        KernelSpec { name: "softmax", build: softmax_kernel },
        KernelSpec { name: "causal-softmax", build: causal_softmax_kernel },
        KernelSpec { name: "layernorm", build: layernorm_kernel },
        KernelSpec { name: "column-means", build: column_means_kernel },
        KernelSpec { name: "row-argmax", build: row_argmax_kernel },
    ]
}

/// Sum with sixteen independent accumulators (vectorised by LLVM).
pub fn sum(x: &[f32]) -> f32 {
    let mut lanes = [0.0f32; 16];
    let chunks = x.chunks_exact(16);
    let rest = chunks.remainder();
    for chunk in chunks {
        for (lane, &value) in lanes.iter_mut().zip(chunk) {
            *lane += value;
        }
    }
    let mut width = 16;
    while width > 1 {
        width /= 2;
        for lane in 0..width {
            lanes[lane] += lanes[lane + width];
        }
    }
    lanes[0] + rest.iter().sum::<f32>()
}

/// Maximum with sixteen independent accumulators.
pub fn max(x: &[f32]) -> f32 {
    let mut lanes = [f32::NEG_INFINITY; 16];
    let chunks = x.chunks_exact(16);
    let rest = chunks.remainder();
    for chunk in chunks {
        for (lane, &value) in lanes.iter_mut().zip(chunk) {
            *lane = lane.max(value);
        }
    }
    lanes.iter().chain(rest).copied().fold(f32::NEG_INFINITY, f32::max)
}

/// Sum of squared deviations from `mean`, sixteen accumulators.
fn sum_squared_deviations(x: &[f32], mean: f32) -> f32 {
    let mut lanes = [0.0f32; 16];
    let chunks = x.chunks_exact(16);
    let rest = chunks.remainder();
    for chunk in chunks {
        for (lane, &value) in lanes.iter_mut().zip(chunk) {
            let deviation = value - mean;
            *lane += deviation * deviation;
        }
    }
    lanes.iter().sum::<f32>() + rest.iter().map(|&value| (value - mean) * (value - mean)).sum::<f32>()
}

fn softmax_hand(x: &[f32], columns: usize) -> Vec<f32> {
    let mut out = vec![0.0f32; x.len()];
    if columns == 0 {
        return out;
    }
    out.par_chunks_mut(columns).zip(x.par_chunks(columns)).for_each(|(out, row)| {
        let max = max(row);
        for (out, &value) in out.iter_mut().zip(row) {
            *out = (value - max).exp();
        }
        let inverse = 1.0 / sum(out);
        for out in out.iter_mut() {
            *out *= inverse;
        }
    });
    out
}

/// Row `i` of a square matrix: the softmax of its first `i + 1` entries, zeros after.
fn causal_softmax_hand(x: &[f32], columns: usize) -> Vec<f32> {
    let mut out = vec![0.0f32; x.len()];
    if columns == 0 {
        return out;
    }
    out.par_chunks_mut(columns).zip(x.par_chunks(columns)).enumerate().for_each(|(i, (out, row))| {
        let seen = (i + 1).min(columns);
        let max = max(&row[..seen]);
        for (out, &value) in out[..seen].iter_mut().zip(row) {
            *out = (value - max).exp();
        }
        let inverse = 1.0 / sum(&out[..seen]);
        for out in out[..seen].iter_mut() {
            *out *= inverse;
        }
    });
    out
}

fn causal_softmax_kernel(quick: bool) -> Kernel {
    let n: usize = if quick { 256 } else { 2048 };
    let x = Arc::new(data::uniform_f32(22, n * n, -4.0, 4.0));
    let (x1, x2) = (Arc::clone(&x), Arc::clone(&x));
    Kernel::new("causal-softmax", format!("{n}² f32"), Work::Bytes(8.0 * (n * n) as f64), Check::Close(1e-4))
        .note("ein: `for i, j { let m = max k in 0..i + 1 { s[i, k] }; … }`, the row statistics over a range growing with the row (O(n³) as written); hoisted to once per row")
        .variant("ein", move || causal_softmax(&data::view(&x1, (n, n))))
        .variant("hand", move || causal_softmax_hand(&x2, n))
}

fn softmax_kernel(quick: bool) -> Kernel {
    let (rows, columns): (usize, usize) = if quick { (256, 256) } else { (4096, 1024) };
    let x = Arc::new(data::uniform_f32(21, rows * columns, -4.0, 4.0));
    let shape = (rows, columns);
    let (x1, x2) = (Arc::clone(&x), Arc::clone(&x));
    Kernel::new("softmax", format!("{rows}×{columns} f32"), Work::Bytes(8.0 * (rows * columns) as f64), Check::Close(1e-4))
        .note("ein is the README's softmax: the row max and sum sit inside the element's expression (O(rows·columns²) as written); the optimiser must hoist them to once per row")
        .note("ndarray: per row in `Zip::par_for_each`, `fold` for the max, `mapv` for exp, `sum`, `/=`")
        .variant("ein", move || softmax(&data::view(&x1, shape)))
        .variant("hand", move || softmax_hand(&x2, columns))
        .variant("ndarray", move || {
            let x = data::view(&x, shape);
            let mut out = Array2::<f32>::zeros((rows, columns));
            Zip::from(out.rows_mut()).and(x.rows()).par_for_each(|mut out, row| {
                let max = row.fold(f32::NEG_INFINITY, |max, &value| max.max(value));
                out.zip_mut_with(&row, |out, &value| *out = (value - max).exp());
                let total = out.sum();
                out /= total;
            });
            out
        })
}

fn layernorm_hand(x: &[f32], gamma: &[f32], beta: &[f32], eps: f32) -> Vec<f32> {
    let columns = gamma.len();
    let mut out = vec![0.0f32; x.len()];
    if columns == 0 {
        return out;
    }
    out.par_chunks_mut(columns).zip(x.par_chunks(columns)).for_each(|(out, row)| {
        let mean = sum(row) / columns as f32;
        let variance = sum_squared_deviations(row, mean) / columns as f32;
        let inverse = 1.0 / (variance + eps).sqrt();
        for (((out, &value), &gamma), &beta) in out.iter_mut().zip(row).zip(gamma).zip(beta) {
            *out = (value - mean) * inverse * gamma + beta;
        }
    });
    out
}

fn layernorm_kernel(quick: bool) -> Kernel {
    let (rows, columns): (usize, usize) = if quick { (512, 256) } else { (8192, 1024) };
    let x = Arc::new(data::uniform_f32(22, rows * columns, -2.0, 3.0));
    let gamma = Arc::new(data::uniform_f32(23, columns, 0.5, 1.5));
    let beta = Arc::new(data::uniform_f32(24, columns, -0.5, 0.5));
    let eps = 1e-5f32;
    let shape = (rows, columns);
    let (x1, g1, b1) = (Arc::clone(&x), Arc::clone(&gamma), Arc::clone(&beta));
    let (x2, g2, b2) = (Arc::clone(&x), Arc::clone(&gamma), Arc::clone(&beta));
    Kernel::new("layernorm", format!("{rows}×{columns} f32"), Work::Bytes(8.0 * (rows * columns) as f64), Check::Close(1e-4))
        .note("ein has the mean and variance inside the element's expression (O(rows·columns²) as written); the optimiser must hoist them to once per row")
        .note("ndarray: per row in `Zip::par_for_each`, `mean()`, `var(0.)` and one whole-row expression (temporaries per row)")
        .variant("ein", move || layernorm(&data::view(&x1, shape), &*g1, &*b1, eps))
        .variant("hand", move || layernorm_hand(&x2, &g2, &b2, eps))
        .variant("ndarray", move || {
            let x = data::view(&x, shape);
            let (gamma, beta) = (ArrayView1::from(&gamma[..]), ArrayView1::from(&beta[..]));
            let mut out = Array2::<f32>::zeros((rows, columns));
            Zip::from(out.rows_mut()).and(x.rows()).par_for_each(|mut out, row| {
                let mean = row.mean().unwrap_or(0.0);
                let variance = row.var(0.0);
                out.assign(&((&row - mean) / (variance + eps).sqrt() * gamma + beta));
            });
            out
        })
}

/// Column means by hand: bands of rows in parallel, each summing its rows into a vector of
/// column sums (reading rows whole), the bands' vectors added.
fn column_means_hand(x: &[f32], columns: usize) -> Vec<f32> {
    if columns == 0 {
        return Vec::new();
    }
    let rows = x.len() / columns;
    let band = (16384 / columns).max(16);
    let sums = x
        .par_chunks(band * columns)
        .map(|band| {
            let mut sums = vec![0.0f32; columns];
            for row in band.chunks(columns) {
                sums.iter_mut().zip(row).for_each(|(sum, &value)| *sum += value);
            }
            sums
        })
        .reduce(
            || vec![0.0f32; columns],
            |mut left, right| {
                left.iter_mut().zip(&right).for_each(|(sum, &value)| *sum += value);
                left
            },
        );
    sums.into_iter().map(|sum| sum / rows as f32).collect()
}

fn column_means_kernel(quick: bool) -> Kernel {
    let (rows, columns): (usize, usize) = if quick { (256, 256) } else { (4096, 2048) };
    let x = Arc::new(data::uniform_f32(23, rows * columns, -1.0, 1.0));
    let shape = (rows, columns);
    let (x1, x2) = (Arc::clone(&x), Arc::clone(&x));
    Kernel::new("column-means", format!("{rows}×{columns} f32"), Work::Bytes(4.0 * (rows * columns) as f64), Check::Close(1e-4))
        .note("ein is `for j { sum i { x[i, j] } / n }`: blocks of 256 columns side by side, each step of the sums reading 256 consecutive elements of a row")
        .note("hand: bands of rows in parallel, each row added whole into the band's column sums; ndarray: `mean_axis(Axis(0))` (serial)")
        .variant("ein", move || column_means(&data::view(&x1, shape)))
        .variant("hand", move || column_means_hand(&x2, columns))
        .variant("ndarray", move || data::view(&x, shape).mean_axis(ndarray::Axis(0)).expect("rows"))
}

/// The first position of a row's greatest element, comparing in eight lanes (each keeping
/// its own best and the first position of it), the lanes then combined: LLVM keeps the lanes
/// in vector registers. A NaN is never greater, so it is skipped as in a serial loop (the
/// kernel's data has none).
fn argmax_lanes(row: &[f32]) -> usize {
    const LANES: usize = 8;
    let Some(&first) = row.first() else { return 0 };
    let (mut tops, mut ats) = ([first; LANES], [0usize; LANES]);
    let blocks = row.len() / LANES;
    for block in 0..blocks {
        for lane in 0..LANES {
            let (at, value) = (block * LANES + lane, row[block * LANES + lane]);
            let greater = value > tops[lane];
            tops[lane] = if greater { value } else { tops[lane] };
            ats[lane] = if greater { at } else { ats[lane] };
        }
    }
    let (mut top, mut best) = (tops[0], ats[0]);
    for lane in 1..LANES {
        if tops[lane] > top || (tops[lane] == top && ats[lane] < best) {
            (top, best) = (tops[lane], ats[lane]);
        }
    }
    for (at, &value) in row.iter().enumerate().skip(blocks * LANES) {
        if value > top {
            (top, best) = (value, at);
        }
    }
    best
}

/// Each row's argmax by hand: rows in parallel, [`argmax_lanes`] on each.
fn row_argmax_hand(x: &[f32], columns: usize) -> Vec<usize> {
    x.par_chunks(columns.max(1)).with_min_len(64).map(argmax_lanes).collect()
}

/// Each row's argmax the way a Rust user writes it: `if row[j] > row[best] { best = j }`.
fn row_argmax_naive(x: &[f32], columns: usize) -> Vec<usize> {
    x.chunks(columns.max(1))
        .map(|row| {
            let mut best = 0;
            for j in 1..row.len() {
                if row[j] > row[best] {
                    best = j;
                }
            }
            best
        })
        .collect()
}

fn row_argmax_kernel(quick: bool) -> Kernel {
    let (rows, columns): (usize, usize) = if quick { (256, 256) } else { (4096, 1024) };
    let x = Arc::new(data::uniform_f32(29, rows * columns, -4.0, 4.0));
    let shape = (rows, columns);
    let (x1, x2) = (Arc::clone(&x), Arc::clone(&x));
    Kernel::new("row-argmax", format!("{rows}×{columns} f32"), Work::Bytes(4.0 * (rows * columns) as f64), Check::Close(0.0))
        .note("ein is `for i { argmax j { x[i, j] } }`; hand: rows in parallel, eight lanes of running maxima by selects; naive: a serial `if row[j] > row[best]` loop")
        .variant("ein", move || row_argmax(&data::view(&x1, shape)))
        .variant("hand", move || row_argmax_hand(&x2, columns))
        .variant("naive", move || row_argmax_naive(&x, columns))
}
