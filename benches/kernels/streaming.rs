//! Streaming kernels: STREAM triad (and the bandwidth ceiling every memory-bound kernel is
//! judged against), sum of squares, a prefix sum (scan), a histogram and a scatter-add
//! (accum), a sparse matrix–vector product (CSR), transpose-add, and the 16-element overhead
//! cases.

use std::sync::{Arc, Mutex};

use ein::ein;
use ndarray::{ArrayView1, ArrayViewMut1, ArrayViewMut2, Zip};
use rayon::prelude::*;

use crate::harness::{data, run_kernel, Ceiling, Check, Element, Kernel, KernelSpec, Settings, Work};

ein! {
    /// STREAM triad; `triad_into` writes into an array the caller already has.
    #[into(triad_into)]
    pub fn triad(b: [f64], c: [f64], s: f64) -> [f64] {
        for i { b[i] + s * c[i] }
    }

    /// A reduction to one scalar.
    pub fn sum_of_squares(x: [f64]) -> f64 {
        sum i { x[i] * x[i] }
    }

    /// Sum and sum of squares in one pass: a reduction of a tuple.
    pub fn two_moments(x: [f64]) -> (f64, f64) {
        sum k { (x[k], x[k] * x[k]) }
    }

    /// The same two sums as two reductions (two passes over `x`).
    pub fn two_sums(x: [f64]) -> (f64, f64) {
        (sum k { x[k] }, sum k { x[k] * x[k] })
    }

    /// The positive elements, in order (a filter: its length is known only at run time).
    pub fn keep_positives(x: [f32]) -> [f32] {
        for i where x[i] > 0.0 { x[i] }
    }

    /// The same in `f64`, for `filter-sum`'s built variant.
    pub fn keep_positives_f64(x: [f64]) -> [f64] {
        for i where x[i] > 0.0 { x[i] }
    }

    /// The sum and count of the positive elements, written as a filter reduced afterwards:
    /// the filter is never built (filter-reductions), one pass over `x`.
    pub fn sum_of_positives(x: [f64]) -> (f64, i64) {
        let p = for i where x[i] > 0.0 { x[i] };
        (sum j { p[j] }, p.len())
    }

    /// The kept elements summed afterwards, a second function: the filter is built.
    pub fn sum_all(p: [f64]) -> f64 {
        sum j { p[j] }
    }

    /// An inclusive prefix sum: every running total.
    pub fn prefix_sum(x: [f64]) -> [f64] {
        scan t, s = 0.0 { s + x[t] }
    }

    /// A histogram of bytes: 256 counters.
    pub fn histogram(data: [u8]) -> [u32] {
        accum h = for b in 0..256 { 0 } { for k { h[data[k] as usize] += 1 } }
    }

    /// Scatter-add: `y[idx[i]] += v[i]` into `m` bins.
    pub fn scatter_add(idx: [usize], v: [f64], m: i64) -> [f64] {
        accum y = for j in 0..m { 0.0 } { for i { y[idx[i]] += v[i] } }
    }

    /// A sparse matrix (CSR: each row's start and length) times a vector: each row's values
    /// are one window, tested once per row, and `x` is gathered.
    pub fn csr_spmv(start: [i64], counts: [i64], cols: [i64], vals: [f64], x: [f64]) -> [f64] {
        for r { let s = start[r]; sum k in 0..counts[r] { vals[s + k] * x[cols[s + k]] } }
    }

    /// `a + bᵀ`: one operand read across its rows.
    #[into(transpose_add_into)]
    pub fn transpose_add(a: [[f32]], b: [[f32]]) -> [[f32]] {
        for i, j { a[i, j] + b[j, i] }
    }

    /// The overhead cases, on 16 elements.
    pub fn tiny_fma(a: [f32], b: [f32], c: [f32]) -> [f32] {
        for i { a[i] * b[i] + c[i] }
    }

    pub fn tiny_dot(a: [f32], b: [f32]) -> f32 {
        sum i { a[i] * b[i] }
    }
}

pub fn kernels() -> Vec<KernelSpec> {
    vec![
        KernelSpec { name: "stream-triad", build: triad_kernel },
        KernelSpec { name: "stream-triad-into", build: triad_into_kernel },
        KernelSpec { name: "sum-of-squares", build: sum_of_squares_kernel },
        KernelSpec { name: "prefix-sum", build: prefix_sum_kernel },
        KernelSpec { name: "histogram", build: histogram_kernel },
        KernelSpec { name: "scatter-add", build: scatter_add_kernel },
        KernelSpec { name: "scatter-add-large", build: scatter_add_large_kernel },
        KernelSpec { name: "two-moments", build: two_moments_kernel },
        KernelSpec { name: "filter", build: filter_kernel },
        KernelSpec { name: "filter-sum", build: filter_sum_kernel },
        KernelSpec { name: "csr-spmv", build: csr_spmv_kernel },
        KernelSpec { name: "transpose-add", build: transpose_add_kernel },
        KernelSpec { name: "transpose-add-into", build: transpose_add_into_kernel },
        KernelSpec { name: "tiny-fma", build: tiny_fma_kernel },
        KernelSpec { name: "tiny-dot", build: tiny_dot_kernel },
    ]
}

/// Elements per rayon task in the hand-written streaming loops.
const CHUNK: usize = 1 << 14;

fn triad_length(quick: bool) -> usize {
    if quick {
        1 << 22
    } else {
        1 << 25
    }
}

fn triad_hand_into(a: &mut [f64], b: &[f64], c: &[f64], s: f64) {
    a.par_chunks_mut(CHUNK).zip(b.par_chunks(CHUNK)).zip(c.par_chunks(CHUNK)).for_each(|((a, b), c)| {
        for ((a, &b), &c) in a.iter_mut().zip(b).zip(c) {
            *a = b + s * c;
        }
    });
}

fn triad_hand(b: &[f64], c: &[f64], s: f64) -> Vec<f64> {
    let mut a = vec![0.0; b.len()];
    triad_hand_into(&mut a, b, c, s);
    a
}

/// Steps per block of the hand-written blocked scan (ein's `SCAN_BLOCK`, the same work split).
const SCAN_BLOCK: usize = 4096;

/// The blocked parallel scan a good engineer writes with rayon: each block's sum, the blocks'
/// offsets serially, then each block rescanned from its offset.
fn prefix_sum_hand(x: &[f64]) -> Vec<f64> {
    let totals: Vec<f64> = x.par_chunks(SCAN_BLOCK).map(|block| block.iter().sum()).collect();
    let mut offsets = Vec::with_capacity(totals.len());
    let mut offset = 0.0;
    for total in totals {
        offsets.push(offset);
        offset += total;
    }
    let mut out = vec![0.0; x.len()];
    out.par_chunks_mut(SCAN_BLOCK).zip(x.par_chunks(SCAN_BLOCK)).zip(offsets).for_each(|((out, x), offset)| {
        let mut running = offset;
        for (out, &x) in out.iter_mut().zip(x) {
            running += x;
            *out = running;
        }
    });
    out
}

/// The serial loop.
fn prefix_sum_naive(x: &[f64]) -> Vec<f64> {
    let mut running = 0.0;
    x.iter()
        .map(|&x| {
            running += x;
            running
        })
        .collect()
}

fn prefix_sum_kernel(quick: bool) -> Kernel {
    let n = triad_length(quick);
    let x = Arc::new(data::uniform_f64(3, n, -1.0, 1.0));
    let (x1, x2) = (Arc::clone(&x), Arc::clone(&x));
    Kernel::new("prefix-sum", format!("2^{} f64", n.trailing_zeros()), Work::Bytes(16.0 * n as f64), Check::Close(1e-9))
        .note("hand is a blocked parallel scan (block sums, serial offsets, rescan) in blocks of 4096, as ein's; naive is the serial loop; every variant allocates its output")
        .variant("ein", move || prefix_sum(&*x1))
        .variant("hand", move || prefix_sum_hand(&x2))
        .variant("naive", move || prefix_sum_naive(&x))
}

/// Per-thread private histograms, added up: what a good engineer writes with rayon (one
/// histogram per task of at least `len / threads` bytes).
fn histogram_hand(data: &[u8]) -> Vec<u32> {
    let per_task = data.len().div_ceil(rayon::current_num_threads()).max(1);
    data.par_chunks(per_task)
        .map(|chunk| {
            let mut counts = [0u32; 256];
            for &byte in chunk {
                counts[byte as usize] += 1;
            }
            counts
        })
        .reduce(
            || [0u32; 256],
            |mut left, right| {
                for (left, right) in left.iter_mut().zip(right) {
                    *left += right;
                }
                left
            },
        )
        .to_vec()
}

fn histogram_naive(data: &[u8]) -> Vec<u32> {
    let mut counts = vec![0u32; 256];
    for &byte in data {
        counts[byte as usize] += 1;
    }
    counts
}

fn histogram_kernel(quick: bool) -> Kernel {
    let n = if quick { 1 << 20 } else { 1 << 24 };
    let data: Vec<u8> = data::uniform_i32(11, n, 0, 256).into_iter().map(|value| value as u8).collect();
    let data = Arc::new(data);
    let (d1, d2) = (Arc::clone(&data), Arc::clone(&data));
    Kernel::new("histogram", format!("2^{} u8, 256 bins", n.trailing_zeros()), Work::Bytes(n as f64), Check::Close(0.0))
        .note("hand is one private histogram per thread, added up; naive is the serial loop")
        .variant("ein", move || histogram(&*d1))
        .variant("hand", move || histogram_hand(&d2))
        .variant("naive", move || histogram_naive(&data))
}

/// One private copy of the bins per thread, added up pairwise in parallel.
fn scatter_add_hand(idx: &[usize], v: &[f64], m: usize) -> Vec<f64> {
    let per_task = idx.len().div_ceil(rayon::current_num_threads()).max(1);
    idx.par_chunks(per_task)
        .zip(v.par_chunks(per_task))
        .map(|(idx, v)| {
            let mut bins = vec![0.0; m];
            for (&i, &x) in idx.iter().zip(v) {
                bins[i] += x;
            }
            bins
        })
        .reduce(
            || vec![0.0; m],
            |mut left, right| {
                left.par_chunks_mut(CHUNK).zip(right.par_chunks(CHUNK)).for_each(|(left, right)| {
                    for (left, right) in left.iter_mut().zip(right) {
                        *left += right;
                    }
                });
                left
            },
        )
}

fn scatter_add_naive(idx: &[usize], v: &[f64], m: usize) -> Vec<f64> {
    let mut bins = vec![0.0; m];
    for (&i, &x) in idx.iter().zip(v) {
        bins[i] += x;
    }
    bins
}

fn scatter_add_kernel(quick: bool) -> Kernel {
    let (n, m): (usize, usize) = if quick { (1 << 18, 1 << 16) } else { (1 << 22, 1 << 20) };
    let idx: Vec<usize> = data::uniform_i32(12, n, 0, m as i32).into_iter().map(|value| value as usize).collect();
    let inputs = Arc::new((idx, data::uniform_f64(13, n, -1.0, 1.0)));
    let (i1, i2) = (Arc::clone(&inputs), Arc::clone(&inputs));
    let size = format!("2^{} f64 into 2^{} bins", n.trailing_zeros(), m.trailing_zeros());
    Kernel::new("scatter-add", size, Work::Bytes(16.0 * n as f64 + 8.0 * m as f64), Check::Close(1e-9))
        .note("hand is one private copy of the bins per thread, added up; naive is the serial loop")
        .variant("ein", move || scatter_add(&i1.0, &i1.1, m as i64))
        .variant("hand", move || scatter_add_hand(&i2.0, &i2.1, m))
        .variant("naive", move || scatter_add_naive(&inputs.0, &inputs.1, m))
}

/// A CSR matrix with 8 to 24 nonzeros per row in random columns, times a vector.
fn csr_spmv_kernel(quick: bool) -> Kernel {
    let rows: usize = if quick { 1 << 14 } else { 1 << 20 };
    let counts: Vec<i64> = data::uniform_i32(16, rows, 8, 25).into_iter().map(i64::from).collect();
    let start: Vec<i64> = counts.iter().scan(0, |end, &count| Some(std::mem::replace(end, *end + count))).collect();
    let nnz = counts.iter().sum::<i64>() as usize;
    let cols: Vec<i64> = data::uniform_i32(17, nnz, 0, rows as i32).into_iter().map(i64::from).collect();
    let inputs =
        Arc::new((start, counts, cols, data::uniform_f64(18, nnz, -1.0, 1.0), data::uniform_f64(19, rows, -1.0, 1.0)));
    let (i1, i2) = (Arc::clone(&inputs), Arc::clone(&inputs));
    let size = format!("2^{} rows, {nnz} nonzeros f64", rows.trailing_zeros());
    Kernel::new("csr-spmv", size, Work::Bytes(20.0 * nnz as f64 + 32.0 * rows as f64), Check::Close(1e-9))
        .note("hand: rayon over rows, each row's slices of values and columns, the gather bounds-checked")
        .variant("ein", move || csr_spmv(&i1.0, &i1.1, &i1.2, &i1.3, &i1.4))
        .variant("hand", move || {
            let (start, counts, cols, vals, x) = &*i2;
            (0..start.len())
                .into_par_iter()
                .with_min_len(1024)
                .map(|r| {
                    let (s, count) = (start[r] as usize, counts[r] as usize);
                    let row = vals[s..s + count].iter().zip(&cols[s..s + count]);
                    row.fold(0.0, |sum, (value, &col)| sum + value * x[col as usize])
                })
                .collect::<Vec<f64>>()
        })
}

/// Each task owns a range of the bins and applies, in order, the updates that fall in it
/// (every task reads every update; the serial loop's bits).
fn scatter_add_owners(idx: &[usize], v: &[f64], m: usize) -> Vec<f64> {
    let mut bins = vec![0.0; m];
    let per_task = m.div_ceil(rayon::current_num_threads()).max(1);
    bins.par_chunks_mut(per_task).enumerate().for_each(|(task, bins)| {
        let start = task * per_task;
        for (&i, &x) in idx.iter().zip(v) {
            if let Some(bin) = i.checked_sub(start).and_then(|offset| bins.get_mut(offset)) {
                *bin += x;
            }
        }
    });
    bins
}

/// A scatter-add into a target four times larger than the updates (one group: private copies
/// would cost more than the updates, and recording such cheap updates by range of the target
/// costs more than applying them, so ein runs the serial loop).
fn scatter_add_large_kernel(quick: bool) -> Kernel {
    let (n, m): (usize, usize) = if quick { (1 << 18, 1 << 20) } else { (1 << 22, 1 << 24) };
    let idx: Vec<usize> = data::uniform_i32(14, n, 0, m as i32).into_iter().map(|value| value as usize).collect();
    let inputs = Arc::new((idx, data::uniform_f64(15, n, -1.0, 1.0)));
    let (i1, i2) = (Arc::clone(&inputs), Arc::clone(&inputs));
    let size = format!("2^{} f64 into 2^{} bins", n.trailing_zeros(), m.trailing_zeros());
    Kernel::new("scatter-add-large", size, Work::Bytes(16.0 * n as f64 + 8.0 * m as f64), Check::Close(0.0))
        .note("hand: each thread owns a range of the bins and reads every update; naive is the serial loop (ein's too)")
        .variant("ein", move || scatter_add(&i1.0, &i1.1, m as i64))
        .variant("hand", move || scatter_add_owners(&i2.0, &i2.1, m))
        .variant("naive", move || scatter_add_naive(&inputs.0, &inputs.1, m))
}

/// Adds a variant that writes into one buffer of `len` elements, allocated (and touched) once,
/// as STREAM measures: `write` fills it on every call.
fn into_buffer<T: Element + Default + Send + 'static>(
    kernel: Kernel,
    name: &'static str,
    len: usize,
    write: impl Fn(&mut [T]) + 'static,
) -> Kernel {
    let buffer = Arc::new(Mutex::new(vec![T::default(); len]));
    let read = Arc::clone(&buffer);
    kernel.in_place_variant(
        name,
        move || write(&mut buffer.lock().expect("the buffer lock is never poisoned")),
        move || read.lock().expect("the buffer lock is never poisoned").clone(),
    )
}

fn triad_inputs(quick: bool) -> (usize, Arc<Vec<f64>>, Arc<Vec<f64>>) {
    let n = triad_length(quick);
    (n, Arc::new(data::uniform_f64(1, n, -1.0, 1.0)), Arc::new(data::uniform_f64(2, n, -1.0, 1.0)))
}

/// The machine's memory bandwidth on the run's threads: STREAM's triad, counting 24 bytes
/// per element. The ceiling is the median repetition; STREAM's own convention, the best, is
/// kept beside it, but on a shared virtual machine the best swings from run to run (one
/// lucky repetition), and percentages of it would too.
pub fn stream_ceiling(quick: bool, settings: &Settings) -> Ceiling {
    let (n, b, c) = triad_inputs(quick);
    let kernel = into_buffer(
        Kernel::new(
            "stream-ceiling",
            format!("2^{} f64", n.trailing_zeros()),
            Work::Bytes(24.0 * n as f64),
            Check::Close(0.0),
        ),
        "stream",
        n,
        move |a| triad_hand_into(a, &b, &c, 3.0),
    );
    let result = run_kernel(&kernel, settings);
    let variant = &result.variants[0];
    let (median, best) = variant.summary.map_or((f64::NAN, f64::NAN), |summary| (summary.median, summary.min));
    Ceiling {
        gigabytes_per_second: 24.0 * n as f64 / median / 1e9,
        best_gigabytes_per_second: 24.0 * n as f64 / best / 1e9,
        runs: variant.samples.len(),
        size: kernel.size,
    }
}

fn triad_kernel(quick: bool) -> Kernel {
    let (n, b, c) = triad_inputs(quick);
    let s = 3.0;
    let (b1, c1) = (Arc::clone(&b), Arc::clone(&c));
    let (b2, c2) = (Arc::clone(&b), Arc::clone(&c));
    Kernel::new("stream-triad", format!("2^{} f64", n.trailing_zeros()), Work::Bytes(24.0 * n as f64), Check::Close(1e-15))
        .note("every variant allocates its output on every call (a returning function must); stream-triad-into writes into an existing array")
        .variant("ein", move || triad(&*b1, &*c1, s))
        .variant("hand", move || triad_hand(&b2, &c2, s))
        .variant("ndarray", move || {
            Zip::from(ArrayView1::from(&b[..])).and(ArrayView1::from(&c[..])).par_map_collect(|&b, &c| b + s * c)
        })
}

/// The triad into an array allocated once: what STREAM measures (hand is STREAM's own loop,
/// the ceiling's), and what an `#[into]` companion does.
fn triad_into_kernel(quick: bool) -> Kernel {
    let (n, b, c) = triad_inputs(quick);
    let s = 3.0;
    let (b1, c1) = (Arc::clone(&b), Arc::clone(&c));
    let (b2, c2) = (Arc::clone(&b), Arc::clone(&c));
    let kernel = Kernel::new("stream-triad-into", format!("2^{} f64", n.trailing_zeros()), Work::Bytes(24.0 * n as f64), Check::Close(1e-15))
        .note("into one array allocated once: ein is `triad_into(&mut out, ..)`, the `#[into]` companion; hand is STREAM's loop (the ceiling's); ndarray is `Zip::from(&mut out).and(&b).and(&c).par_for_each(..)`");
    let kernel = into_buffer(kernel, "ein", n, move |out| triad_into(out, &*b1, &*c1, s));
    let kernel = into_buffer(kernel, "hand", n, move |out| triad_hand_into(out, &b2, &c2, s));
    into_buffer(kernel, "ndarray", n, move |out| {
        Zip::from(ArrayViewMut1::from(out))
            .and(ArrayView1::from(&b[..]))
            .and(ArrayView1::from(&c[..]))
            .par_for_each(|a, &b, &c| *a = b + s * c)
    })
}

/// Sum of squares with eight independent accumulators, which LLVM keeps in vector registers.
fn sum_of_squares_serial(x: &[f64]) -> f64 {
    let mut lanes = [0.0f64; 8];
    let chunks = x.chunks_exact(8);
    let rest = chunks.remainder();
    for chunk in chunks {
        for (lane, &value) in lanes.iter_mut().zip(chunk) {
            *lane += value * value;
        }
    }
    let mut total = ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
    for &value in rest {
        total += value * value;
    }
    total
}

fn sum_of_squares_kernel(quick: bool) -> Kernel {
    let n: usize = if quick { 1 << 22 } else { 1 << 26 };
    let x = Arc::new(data::uniform_f64(3, n, -1.0, 1.0));
    let (x1, x2, x3, x4) = (Arc::clone(&x), Arc::clone(&x), Arc::clone(&x), Arc::clone(&x));
    Kernel::new("sum-of-squares", format!("2^{} f64", n.trailing_zeros()), Work::Bytes(8.0 * n as f64), Check::Close(1e-9))
        .note("rayon-sum is the one-liner most people write, `x.par_iter().map(|v| v * v).sum()`; ndarray is `x.dot(&x)` (serial, 8 accumulators)")
        .variant("ein", move || sum_of_squares(&*x1))
        .variant("hand", move || x2.par_chunks(1 << 16).map(sum_of_squares_serial).sum::<f64>())
        .variant("rayon-sum", move || x3.par_iter().map(|&value| value * value).sum::<f64>())
        .variant("ndarray", move || {
            let view = ArrayView1::from(&x4[..]);
            view.dot(&view)
        })
}

/// Eight accumulators added pairwise, as the hand-written loops combine their lanes.
fn pairwise8(l: [f64; 8]) -> f64 {
    ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]))
}

/// Both moments of a slice in one pass, eight accumulators each (as `sum_of_squares_serial`).
fn two_moments_serial(x: &[f64]) -> (f64, f64) {
    let (mut sums, mut squares) = ([0.0f64; 8], [0.0f64; 8]);
    let chunks = x.chunks_exact(8);
    let rest = chunks.remainder();
    for chunk in chunks {
        for ((sum, square), &value) in sums.iter_mut().zip(squares.iter_mut()).zip(chunk) {
            *sum += value;
            *square += value * value;
        }
    }
    let (mut sum, mut square) = (pairwise8(sums), pairwise8(squares));
    for &value in rest {
        sum += value;
        square += value * value;
    }
    (sum, square)
}

/// Chunks of a hand-written parallel filter (ein's `FILTER_CHUNK`).
const FILTER_CHUNK: usize = 4096;

/// The three-phase parallel filter a good engineer writes with rayon: count per chunk, offsets,
/// each chunk writes its kept elements at its offset.
fn keep_positives_hand(x: &[f32]) -> Vec<f32> {
    let counts: Vec<usize> =
        x.par_chunks(FILTER_CHUNK).map(|chunk| chunk.iter().filter(|&&value| value > 0.0).count()).collect();
    let total = counts.iter().sum();
    let mut out = vec![0.0f32; total];
    let mut parts = Vec::with_capacity(counts.len());
    let mut rest = &mut out[..];
    for &count in &counts {
        let (part, tail) = std::mem::take(&mut rest).split_at_mut(count);
        parts.push(part);
        rest = tail;
    }
    parts.into_par_iter().zip(x.par_chunks(FILTER_CHUNK)).for_each(|(part, chunk)| {
        for (slot, &value) in part.iter_mut().zip(chunk.iter().filter(|&&value| value > 0.0)) {
            *slot = value;
        }
    });
    out
}

fn filter_kernel(quick: bool) -> Kernel {
    let n = triad_length(quick);
    let x = Arc::new(data::uniform_f32(7, n, -1.0, 1.0));
    let (x1, x2, x3) = (Arc::clone(&x), Arc::clone(&x), Arc::clone(&x));
    Kernel::new("filter", format!("2^{} f32", n.trailing_zeros()), Work::Bytes(6.0 * n as f64), Check::Close(0.0))
        .note("keep the positives of uniform(-1, 1): ein is `for i where x[i] > 0.0 { x[i] }`; hand is a three-phase rayon filter (count per chunk of 4096, offsets, parallel fill); rayon-collect is `par_iter().filter().copied().collect()`; naive is the serial `iter().filter().collect()`")
        .variant("ein", move || keep_positives(&*x1))
        .variant("hand", move || keep_positives_hand(&x2))
        .variant("rayon-collect", move || x3.par_iter().filter(|&&value| value > 0.0).copied().collect::<Vec<f32>>())
        .variant("naive", move || x.iter().filter(|&&value| value > 0.0).copied().collect::<Vec<f32>>())
}

/// The sum and count of a slice's positive elements in one pass, eight accumulators each.
fn sum_of_positives_serial(x: &[f64]) -> (f64, i64) {
    let (mut sums, mut counts) = ([0.0f64; 8], [0i64; 8]);
    let chunks = x.chunks_exact(8);
    let rest = chunks.remainder();
    for chunk in chunks {
        for ((sum, count), &value) in sums.iter_mut().zip(counts.iter_mut()).zip(chunk) {
            let kept = value > 0.0;
            *sum += if kept { value } else { 0.0 };
            *count += i64::from(kept);
        }
    }
    let (mut sum, mut count) = (pairwise8(sums), counts.iter().sum::<i64>());
    for &value in rest.iter().filter(|&&value| value > 0.0) {
        sum += value;
        count += 1;
    }
    (sum, count)
}

fn filter_sum_kernel(quick: bool) -> Kernel {
    let n: usize = if quick { 1 << 20 } else { 1 << 24 };
    let x = Arc::new(data::uniform_f64(8, n, -1.0, 1.0));
    let (x1, x2, x3) = (Arc::clone(&x), Arc::clone(&x), Arc::clone(&x));
    Kernel::new("filter-sum", format!("2^{} f64", n.trailing_zeros()), Work::Bytes(8.0 * n as f64), Check::Close(1e-9))
        .note("the sum and count of the positives; ein is `let p = for i where x[i] > 0.0 { x[i] }; (sum j { p[j] }, p.len())`, which never builds `p`; ein-built calls a filter function, then a sum over its result; hand splits into rayon chunks of 2^16 with eight accumulators each; naive is the serial `iter().filter()` loop")
        .variant("ein", move || sum_of_positives(&*x1))
        .variant("ein-built", move || {
            let kept = keep_positives_f64(&*x2);
            (sum_all(&kept), kept.len() as i64)
        })
        .variant("hand", move || {
            x3.par_chunks(1 << 16).map(sum_of_positives_serial).reduce(|| (0.0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
        })
        .variant("naive", move || x.iter().filter(|&&value| value > 0.0).fold((0.0, 0i64), |(s, c), &v| (s + v, c + 1)))
}

fn two_moments_kernel(quick: bool) -> Kernel {
    let n: usize = if quick { 1 << 20 } else { 1 << 24 };
    let x = Arc::new(data::uniform_f64(5, n, -1.0, 1.0));
    let (x1, x2, x3) = (Arc::clone(&x), Arc::clone(&x), Arc::clone(&x));
    Kernel::new("two-moments", format!("2^{} f64", n.trailing_zeros()), Work::Bytes(8.0 * n as f64), Check::Close(1e-9))
        .note("ein is `sum k { (x[k], x[k] * x[k]) }` (one pass); ein-two-sums the two scalar sums (two passes); hand splits into rayon chunks of 2^16 with eight accumulators per moment; naive is the serial one-pass loop")
        .variant("ein", move || two_moments(&*x1))
        .variant("ein-two-sums", move || two_sums(&*x2))
        .variant("hand", move || {
            x3.par_chunks(1 << 16).map(two_moments_serial).reduce(|| (0.0, 0.0), |a, b| (a.0 + b.0, a.1 + b.1))
        })
        .variant("naive", move || x.iter().fold((0.0, 0.0), |(s, q), &v| (s + v, q + v * v)))
}

/// `a + bᵀ` for `a` of `rows × columns`, in tiles so both operands are read a cache line at a
/// time.
fn transpose_add_hand(a: &[f32], b: &[f32], rows: usize, columns: usize) -> Vec<f32> {
    let mut out = vec![0.0f32; rows * columns];
    transpose_add_hand_into(&mut out, a, b, rows, columns);
    out
}

/// `out = a + bᵀ` in tiles 8 columns wide and 64 rows tall, so that `b`'s columns are read
/// from a few cache lines of a few rows (pages) at a time: the fastest of the shapes tried at
/// 2048² and 4096² on 2 threads (32 × 32 took about twice as long at 2048²).
fn transpose_add_hand_into(out: &mut [f32], a: &[f32], b: &[f32], rows: usize, columns: usize) {
    const WIDTH: usize = 8;
    const HEIGHT: usize = 64;
    if columns == 0 {
        return;
    }
    out.par_chunks_mut(HEIGHT * columns).enumerate().for_each(|(block, out_rows)| {
        let i0 = block * HEIGHT;
        let height = out_rows.len() / columns;
        for j0 in (0..columns).step_by(WIDTH) {
            let j1 = (j0 + WIDTH).min(columns);
            for di in 0..height {
                let i = i0 + di;
                let out_row = &mut out_rows[di * columns + j0..di * columns + j1];
                let a_row = &a[i * columns + j0..i * columns + j1];
                for ((out, &x), j) in out_row.iter_mut().zip(a_row).zip(j0..j1) {
                    *out = x + b[j * rows + i];
                }
            }
        }
    });
}

fn transpose_add_inputs(quick: bool) -> (usize, Arc<Vec<f32>>, Arc<Vec<f32>>) {
    let n: usize = if quick { 512 } else { 4096 };
    (n, Arc::new(data::uniform_f32(4, n * n, -1.0, 1.0)), Arc::new(data::uniform_f32(5, n * n, -1.0, 1.0)))
}

fn transpose_add_kernel(quick: bool) -> Kernel {
    let (n, a, b) = transpose_add_inputs(quick);
    let (a1, b1) = (Arc::clone(&a), Arc::clone(&b));
    let (a2, b2) = (Arc::clone(&a), Arc::clone(&b));
    let shape = (n, n);
    Kernel::new("transpose-add", format!("{n}² f32"), Work::Bytes(12.0 * (n * n) as f64), Check::Close(1e-6))
        .note("ndarray is `Zip::from(&a).and(&b.t()).par_map_collect(|&x, &y| x + y)`")
        .variant("ein", move || transpose_add(&data::view(&a1, shape), &data::view(&b1, shape)))
        .variant("hand", move || transpose_add_hand(&a2, &b2, n, n))
        .variant("ndarray", move || {
            Zip::from(&data::view(&a, shape)).and(&data::view(&b, shape).t()).par_map_collect(|&x, &y| x + y)
        })
}

fn transpose_add_into_kernel(quick: bool) -> Kernel {
    let (n, a, b) = transpose_add_inputs(quick);
    let (a1, b1) = (Arc::clone(&a), Arc::clone(&b));
    let (a2, b2) = (Arc::clone(&a), Arc::clone(&b));
    let shape = (n, n);
    let kernel =
        Kernel::new("transpose-add-into", format!("{n}² f32"), Work::Bytes(12.0 * (n * n) as f64), Check::Close(1e-6))
            .note("into one array allocated once: ein is the `#[into]` companion; ndarray is `Zip::from(&mut out).and(&a).and(&b.t()).par_for_each(..)`");
    let kernel = into_buffer(kernel, "ein", n * n, move |out| {
        let mut out = ArrayViewMut2::from_shape(shape, out).expect("n² elements");
        transpose_add_into(&mut out, &data::view(&a1, shape), &data::view(&b1, shape));
    });
    let kernel = into_buffer(kernel, "hand", n * n, move |out| transpose_add_hand_into(out, &a2, &b2, n, n));
    into_buffer(kernel, "ndarray", n * n, move |out| {
        let out = ArrayViewMut2::from_shape(shape, out).expect("n² elements");
        Zip::from(out).and(&data::view(&a, shape)).and(&data::view(&b, shape).t()).par_for_each(|o, &x, &y| *o = x + y)
    })
}

fn tiny_inputs() -> [Arc<Vec<f32>>; 3] {
    [6, 7, 8].map(|seed| Arc::new(data::uniform_f32(seed, 16, -1.0, 1.0)))
}

fn tiny_fma_kernel(_quick: bool) -> Kernel {
    let [a, b, c] = tiny_inputs();
    let (a1, b1, c1) = (Arc::clone(&a), Arc::clone(&b), Arc::clone(&c));
    let (a2, b2, c2) = (Arc::clone(&a), Arc::clone(&b), Arc::clone(&c));
    Kernel::new("tiny-fma", "16 f32", Work::Items(16.0, "elem"), Check::Close(1e-6))
        .note("overhead: a 16-element `a·b + c` returning a new array; hand is a plain serial loop")
        .variant("ein", move || tiny_fma(&*a1, &*b1, &*c1))
        .variant("hand", move || {
            a2.iter().zip(b2.iter()).zip(c2.iter()).map(|((&a, &b), &c)| a * b + c).collect::<Vec<f32>>()
        })
        .variant("ndarray", move || &ArrayView1::from(&a[..]) * &ArrayView1::from(&b[..]) + ArrayView1::from(&c[..]))
}

fn tiny_dot_kernel(_quick: bool) -> Kernel {
    let [a, b, _] = tiny_inputs();
    let (a1, b1) = (Arc::clone(&a), Arc::clone(&b));
    let (a2, b2) = (Arc::clone(&a), Arc::clone(&b));
    Kernel::new("tiny-dot", "16 f32", Work::Items(16.0, "elem"), Check::Close(1e-6))
        .note("overhead: a 16-element dot product to a scalar; hand is a plain serial loop")
        .variant("ein", move || tiny_dot(&*a1, &*b1))
        .variant("hand", move || a2.iter().zip(b2.iter()).map(|(&a, &b)| a * b).sum::<f32>())
        .variant("ndarray", move || ArrayView1::from(&a[..]).dot(&ArrayView1::from(&b[..])))
}
