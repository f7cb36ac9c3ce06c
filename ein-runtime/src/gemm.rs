//! Contractions (einsums of two arrays) for generated code: `out[o…] = scale * Σ k… left[…] *
//! right[…]`, the node the compiler's `contract` pass makes of matmul, batched matmul, matvec,
//! vector–matrix products and multi-axis tensor contractions (chains of three go through
//! `chain.rs`, which calls [`contract_to_vec`] twice).
//!
//! Every label is a batch label (in both operands and the output), an M label (left and
//! output), an N label (right and output) or a K label (both operands, summed). A contraction
//! runs as one GEMM `C[M, N] = scale * A[M, K] B[K, N]` per batch position:
//! - the labels of each group are merged into one axis when the operand strides allow it
//!   (a reshape, no copy: row-major, column-major, transposed, reversed and stepped views
//!   usually do); where they do not, the outermost output labels of one operand may loop
//!   outside the GEMM like batch labels (`Plan::loop_outer_labels`: a batched 1 × 1
//!   convolution, one GEMM per image); failing that, an operand whose strides do not allow it
//!   is packed into a contiguous copy, and an output whose axes interleave the groups is
//!   computed in a scratch array and then copied into place;
//! - the GEMM itself is [`fn@gemm`] on raw strided matrices, the one door to the kernel (the
//!   `gemm` crate, the kernels under faer, which take any strides for A, B and C, including
//!   zero and negative ones, and pick AVX-512, AVX2+FMA or SSE kernels at run time); batches of
//!   small GEMMs run side by side on rayon's threads;
//! - matrix–vector products, vector–matrix products and dot products take [`gemv`] instead,
//!   vectorised dot products (eight independent accumulators) over rows, also over rayon;
//! - element types other than f32 and f64 run as plain loops; small contractions (under
//!   [`SMALL_CONTRACTION`] multiply–adds) do not come here at all: generated code runs their
//!   original loop nest, which beats any GEMM's set-up at that size.
//!
//! GEMM threads: a large GEMM is split over the current rayon pool by the `gemm` crate itself,
//! so contractions follow the same thread count as every other loop of ein (the pool a user
//! installs, or rayon's global one) and scale to every core. matrixmultiply, the kernel before
//! it, kept its own pool of at most 4 threads: on 16 cores a 1024³ f32 product ran at 4.7–5.8×
//! the time of faer's (README, "Which GEMM").
//!
//! Rounding: each output element is a sum of the same products as the loop nest it replaces,
//! added in another order (blocked by the GEMM kernel, with fused multiply–adds where the CPU
//! has them, or in eight interleaved partial sums), then multiplied by `scale`; an empty sum is
//! `scale * 0`. The order does not depend on the thread count: threads split M and N, and K
//! only where a GEMV is cut into blocks of summed steps whose length the sizes alone fix
//! ([`gemv`]).
//!
//! Sizes: the output's element count is checked before anything is allocated (the output
//! labels come from two operands, so their product can exceed memory even when each operand's
//! fits); every other product of sizes (a summed count, a batch count, a merged length, a
//! packed copy) is a product of labels of one operand, which the operand's shape bounds, and is
//! checked anyway. Offsets are computed with wrapping arithmetic: for the in-range indices that
//! are read the true offset fits in `isize`, so wrapping changes nothing, and a stride of an
//! axis of length 1 (which may be anything) cannot make a debug build panic. The checked build
//! (`--cfg ein_checked`) checks every read of the loop path, and every block handed to a GEMM
//! or GEMV, against the operands' and the output's extents.

use std::any::TypeId;
use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;

use crate::array::Array;
use crate::build::GRAIN;
use crate::errors::internal_error;
use crate::scalar::Num;
use crate::view::{element_count, View};

/// Contractions with fewer multiply–adds than this run as the loop nest they were written as
/// (generated code asks [`contraction_is_small`]): below it, a GEMM's set-up costs more than
/// it saves. Measured on f32 matmuls from 2³ to 32³ (2 threads): generated loops take 0.05 µs
/// at 2³, 0.3 µs at 8³ and 0.8 µs at 12³; this module's path about 0.7–0.9 µs from 8³ to 16³
/// (a GEMM's packing and call), where the loops fall to 1 GFLOP/s.
pub const SMALL_CONTRACTION: usize = 1 << 11;

/// Whether a contraction with these label sizes (output and summed) is small enough to run as
/// plain loops (see [`SMALL_CONTRACTION`]).
#[inline]
pub fn contraction_is_small(sizes: &[usize]) -> bool {
    sizes
        .iter()
        .try_fold(1usize, |product, &size| product.checked_mul(size))
        .is_some_and(|work| work < SMALL_CONTRACTION)
}

/// Batches of small GEMMs, GEMVs and integer loop nests with at least this many multiply–adds
/// run over rayon's threads.
pub const PARALLEL_CONTRACTION: usize = 1 << 20;

/// Which label indexes each operand axis, and how many labels are output axes (the first
/// ones): the static part of a contraction, written by generated code as a constant.
#[derive(Clone, Copy, Debug)]
pub struct ContractionSpec {
    /// Labels `0..outputs` are the output axes, in order; the others are summed.
    pub outputs: usize,
    /// `left[d]` is the label of axis `d` of the left operand.
    pub left: &'static [usize],
    /// `right[d]` is the label of axis `d` of the right operand.
    pub right: &'static [usize],
}

/// `scale * Σ left * right` as an array with one axis per output label. `output` gives the
/// output labels' sizes, `summed` the summed labels' sizes (outermost sum first).
pub fn contract<T: Num, const A: usize, const B: usize, const N: usize>(
    spec: &ContractionSpec,
    output: [usize; N],
    summed: &[usize],
    scale: Option<T>,
    left: View<'_, T, A>,
    right: View<'_, T, B>,
) -> Array<T, N> {
    if spec.outputs != N {
        internal_error(format_args!("a contraction with {} output labels makes an array of rank {N}", spec.outputs));
    }
    let mut sizes = PerLabel::filled(0usize, N + summed.len());
    sizes[..N].copy_from_slice(&output);
    sizes[N..].copy_from_slice(summed);
    let (left_shape, left_strides, right_shape, right_strides) =
        (left.shape(), left.strides(), right.shape(), right.strides());
    let left = Factor { ptr: left.as_ptr(), shape: &left_shape, strides: &left_strides, labels: spec.left };
    let right = Factor { ptr: right.as_ptr(), shape: &right_shape, strides: &right_strides, labels: spec.right };
    // SAFETY: the factors are the views' own pointers, shapes and strides (so every in-range
    // index addresses an element readable while the views are borrowed, here until the call
    // returns, and the shapes obey the views' rule).
    let elements = unsafe { contract_to_vec(N, &sizes, scale, left, right, "the result of this contraction") };
    Array::from_vec(output, elements)
}

/// One operand of a contraction as [`contract_to_vec`] takes it: the first element, the
/// length and stride (in elements) of each axis, and the label of each axis.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Factor<'a, T> {
    pub ptr: *const T,
    pub shape: &'a [usize],
    pub strides: &'a [isize],
    pub labels: &'a [usize],
}

/// `scale * Σ left * right` over labels `0..sizes.len()` of the given sizes (the first
/// `outputs` are output axes, in order), row-major over the output labels, in a new vector.
/// Panics with an `ein: ` message naming `result` (e.g. "the result of this contraction") and
/// the output sizes if the output would have more elements than memory can hold.
///
/// # Safety
/// Each factor's pointer, shape and strides must describe readable elements as a view's do:
/// every in-range index addresses an element readable for the duration of the call, and the
/// product of the non-zero axis lengths is at most `isize::MAX`. Axes too short for their
/// label are an internal error.
pub(crate) unsafe fn contract_to_vec<T: Num>(
    outputs: usize,
    sizes: &[usize],
    scale: Option<T>,
    left: Factor<'_, T>,
    right: Factor<'_, T>,
    result: &str,
) -> Vec<T> {
    if outputs > sizes.len() {
        internal_error(format_args!("a contraction with {outputs} output labels of {} labels", sizes.len()));
    }
    let count = match element_count(&sizes[..outputs]) {
        Some(count) => count,
        None => too_large_result(result, &sizes[..outputs]),
    };
    // SAFETY: the caller's promise about the factors; an empty vector with room for the output.
    unsafe { contract_into(outputs, sizes, scale, left, right, crate::memory::output_vec(count)) }
}

/// [`contract_to_vec`] into `out`, an empty vector with room for the output's elements, which
/// the caller allocated (and so checked) before: a chain allocates its result before it works
/// out the intermediate, so that a result that cannot be had is refused before any work.
///
/// # Safety
/// As [`contract_to_vec`].
pub(crate) unsafe fn contract_into<T: Num>(
    outputs: usize,
    sizes: &[usize],
    scale: Option<T>,
    left: Factor<'_, T>,
    right: Factor<'_, T>,
    mut out: Vec<T>,
) -> Vec<T> {
    let count = match sizes.get(..outputs).and_then(element_count) {
        Some(count) if out.is_empty() && out.capacity() >= count => count,
        _ => internal_error(format_args!(
            "a contraction of output sizes {sizes:?} ({outputs} output labels) into a vector of capacity {}",
            out.capacity()
        )),
    };
    // The GEMM's M labels come from the left operand: put the operand holding the first output
    // label on the left, so that a row-major output is a row-major C (`x[k, j] * a[i, k]`, or
    // a chain's second step, would otherwise write C column-major, measured 1.4x slower).
    // Multiplication commutes exactly; only the summation order may change.
    let (left, right) = if outputs > 0 && !left.labels.contains(&0) && right.labels.contains(&0) {
        (right, left)
    } else {
        (left, right)
    };
    // SAFETY: the caller's promise about the factors.
    let plan = unsafe { Plan::new(outputs, PerLabel::from_slice(sizes), left, right) };
    // SAFETY: `out` has room for `count` elements (checked above), and `run` writes all `count`
    // (GEMM kernels write C without reading it, as the memset of zeros an initialised buffer
    // would need costs as much as a small product), so they are initialised when the length is
    // set.
    unsafe {
        plan.run(scale, out.as_mut_ptr(), count);
        out.set_len(count);
    }
    out
}

/// Panics for a contraction whose output would have more elements than an array may (more
/// than `isize::MAX` once its zero lengths are left out, or than usize can count).
#[cold]
#[inline(never)]
pub(crate) fn too_large_result(result: &str, sizes: &[usize]) -> ! {
    if sizes.contains(&0) {
        panic!("ein: {result} would have shape {sizes:?}, whose non-zero lengths multiply to more than isize::MAX")
    }
    let product: Vec<String> = sizes.iter().map(|size| size.to_string()).collect();
    panic!("ein: {result} would have {} elements, more than memory can hold", product.join(" × "))
}

/// The product of `sizes`, which the caller knows to fit (a product of lengths of one operand,
/// whose shape obeys the views' rule); an internal error if it does not.
fn product_of(sizes: impl IntoIterator<Item = usize>) -> usize {
    let mut product = 1usize;
    for size in sizes {
        match product.checked_mul(size) {
            Some(next) => product = next,
            None => internal_error(format_args!("a product of contraction sizes overflows usize")),
        }
    }
    product
}

/// The element types with a GEMM kernel (the `gemm` crate's, for f32 and f64).
pub trait GemmFloat: Num {}

impl GemmFloat for f32 {}

impl GemmFloat for f64 {}

/// A pointer to elements that threads only read, which may cross threads like the `&T` it
/// stands for.
struct ReadPointer<T>(*const T);

impl<T> Clone for ReadPointer<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for ReadPointer<T> {}

// SAFETY: a ReadPointer is only read through, as a shared borrow `&T` would be, and `&T` is
// Send when T: Sync.
unsafe impl<T: Sync> Send for ReadPointer<T> {}
// SAFETY: as above (`&T` is Sync when T: Sync).
unsafe impl<T: Sync> Sync for ReadPointer<T> {}

/// A pointer to elements that threads write, each thread its own disjoint elements, which may
/// cross threads like the disjoint `&mut [T]` chunks it stands for.
struct WritePointer<T>(*mut T);

impl<T> Clone for WritePointer<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for WritePointer<T> {}

impl<T> WritePointer<T> {
    /// The pointer. A closure that calls this captures the whole `WritePointer` (which may
    /// cross threads), where one that names the field would capture the raw pointer alone.
    fn get(self) -> *mut T {
        self.0
    }
}

// SAFETY: the blocks that share a WritePointer write disjoint elements, as disjoint `&mut [T]`
// chunks of one slice would, and `&mut [T]` is Send when T: Send.
unsafe impl<T: Send> Send for WritePointer<T> {}
// SAFETY: sharing the pointer gives no access by itself; each thread writes only its own
// elements (as above), so sharing it is sending a disjoint `&mut [T]` to each thread.
unsafe impl<T: Send> Sync for WritePointer<T> {}

/// The GEMM behind every contraction: `C = alpha * A B` for `A: m × k`, `B: k × n`,
/// `C: m × n`, with the given row and column strides (in elements; any sign, zero for A and B).
///
/// Threads: with `parallel`, the `gemm` crate splits the product over the current rayon pool
/// (`Rayon(0)`: all its threads; it runs small products on one thread by its own threshold);
/// without, it runs on the calling thread, for batches that are already spread over the pool.
///
/// # Safety
/// Every element of A and B addressed by the sizes and strides must be readable, every element
/// of C writable, and no two elements of C may share an address.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn gemm<F: GemmFloat>(
    m: usize,
    k: usize,
    n: usize,
    alpha: F,
    a: *const F,
    a_strides: [isize; 2],
    b: *const F,
    b_strides: [isize; 2],
    c: *mut F,
    c_strides: [isize; 2],
    parallel: bool,
) {
    let threads = rayon::current_num_threads();
    // Products the crate would run on one thread (under its threading threshold) stay there.
    let large = m.saturating_mul(n).saturating_mul(k) >= ::gemm::get_threading_threshold();
    if parallel && threads > 1 && large && TILED_GEMM.load(Ordering::Relaxed) {
        // SAFETY: the caller's promise, passed on.
        return unsafe { tiled_gemm(threads, m, k, n, alpha, a, a_strides, b, b_strides, c, c_strides) };
    }
    let [rsa, csa] = a_strides;
    let [rsb, csb] = b_strides;
    let [rsc, csc] = c_strides;
    let parallelism = if parallel { ::gemm::Parallelism::Rayon(0) } else { ::gemm::Parallelism::None };
    // SAFETY: the caller's promise, which is the `gemm` crate's (readable A and B, writable C
    // with distinct elements, at these sizes and strides). With `read_dst` false the crate
    // writes `beta * A B` (its `beta` is our `alpha`) without reading C; its own `alpha` scales
    // the old C, which is not read.
    unsafe {
        ::gemm::gemm(
            m,
            n,
            k,
            c,
            csc,
            rsc,
            false,
            a,
            csa,
            rsa,
            b,
            csb,
            rsb,
            F::ZERO,
            alpha,
            false,
            false,
            false,
            parallelism,
        )
    }
}

/// Whether a parallel GEMM is split into tiles of C here ([`tiled_gemm`]) instead of by the
/// `gemm` crate. Off unless [`choose_tiled_gemm`] turned it on: the suite's `ein-tiled-gemm`
/// variants measure it against the default (on 2 threads: level with the crate's own split on
/// 1024³, 0.7× its time on 300 × 5000 × 300, 1.1× on 4096 × 256 × 64 and 2048³); the
/// question it is for is the 16-core host, where the crate's split reached 58 GFLOP/s per
/// core of its 151 on one thread.
static TILED_GEMM: AtomicBool = AtomicBool::new(false);

/// Turns the split of parallel GEMMs into tiles of C (one per thread, each a single-threaded
/// product) on or off for every later contraction; off by default; for the benchmark suite. The results are the same either way: each
/// element of C is summed in the same order (the crate blocks the summed axis by its length
/// alone, not by the sizes of C).
pub fn choose_tiled_gemm(on: bool) {
    TILED_GEMM.store(on, Ordering::Relaxed);
}

/// [`fn@gemm`] split over `threads` rayon tasks by tiles of C, each a single-threaded GEMM of
/// its rows of A and columns of B: `threads = rows × columns` tiles (the factorisation that
/// makes them closest to square), so each thread packs only its own panels of A and B, where
/// the crate's split packs all of A in every thread.
///
/// # Safety
/// As [`fn@gemm`] (SAFETY contract): every element of A and B addressed by the sizes and
/// strides must be readable, every element of C writable, and no two elements of C may share
/// an address; each tile addresses a subset of those elements. (Its parameters are `gemm`'s,
/// which it calls once per tile.)
#[allow(clippy::too_many_arguments)]
unsafe fn tiled_gemm<F: GemmFloat>(
    threads: usize,
    m: usize,
    k: usize,
    n: usize,
    alpha: F,
    a: *const F,
    a_strides: [isize; 2],
    b: *const F,
    b_strides: [isize; 2],
    c: *mut F,
    c_strides: [isize; 2],
) {
    let tile_shape = |rows: usize| (m.div_ceil(rows), n.div_ceil(threads / rows));
    let squareness = |rows: usize| {
        let (height, width) = tile_shape(rows);
        Ord::max(height, width) as f64 / Ord::max(Ord::min(height, width), 1) as f64
    };
    let rows = (1..=threads)
        .filter(|rows| threads.is_multiple_of(*rows))
        .min_by(|x, y| squareness(*x).total_cmp(&squareness(*y)))
        .unwrap_or(1);
    let columns = threads / rows;
    let (height, width) = tile_shape(rows);
    let (a, b, c) = (ReadPointer(a), ReadPointer(b), WritePointer(c));
    (0..rows * columns).into_par_iter().for_each(|tile| {
        // The whole wrappers, not their raw-pointer fields, are what the closure captures.
        let (a, b, c) = (a, b, c);
        let (first_row, first_column) = ((tile / columns) * height, (tile % columns) * width);
        if first_row >= m || first_column >= n {
            return;
        }
        let (tile_m, tile_n) = (Ord::min(height, m - first_row), Ord::min(width, n - first_column));
        let (first_row, first_column) = (first_row as isize, first_column as isize);
        // Wrapping offsets, as everywhere in this module (module docs, "Sizes").
        let a_tile = a.0.wrapping_offset(first_row.wrapping_mul(a_strides[0]));
        let b_tile = b.0.wrapping_offset(first_column.wrapping_mul(b_strides[1]));
        let c_tile = c.get().wrapping_offset(
            first_row.wrapping_mul(c_strides[0]).wrapping_add(first_column.wrapping_mul(c_strides[1])),
        );
        // SAFETY: the tile's rows of A, columns of B and block of C lie inside the caller's
        // matrices (first_row + tile_m ≤ m, first_column + tile_n ≤ n), so the caller's
        // promise covers them; the tiles of C are disjoint, so no two tasks write one element.
        unsafe { gemm(tile_m, k, tile_n, alpha, a_tile, a_strides, b_tile, b_strides, c_tile, c_strides, false) };
    });
}

/// Batches whose products have at most this many multiply–adds each run side by side on
/// rayon's threads, each product on one thread; larger products run one after another, each
/// split over the pool. 128³ products (2 M multiply–adds) are the former: at 16 threads one
/// product split sixteen ways leaves each thread too little to amortise the packing.
const SINGLE_THREADED_GEMM: usize = 1 << 22;

/// The fewest rows a parallel chunk of a column-major GEMV takes.
const COLUMN_RUN: usize = 256;

/// A GEMV with fewer rows than this and at least two blocks of [`GEMV_BLOCK`] summed steps is
/// split along the sum instead of the rows: a tall-and-thin transposed product (`Xᵀ r`, the
/// gradient of a linear model) has too few rows to keep every thread busy.
const SPLIT_SUM_ROWS: usize = 256;

/// The summed steps of one block of a GEMV split along the sum: fixed, so that the grouping of
/// the sum (and so its rounding) depends on the sizes only, never on the thread count.
const GEMV_BLOCK: usize = 4096;

/// The most bytes of sums of a column-major GEMV's task ([`split_sum`]): they stay in the L1
/// cache beside the runs being read.
const COLUMN_STRIP_BYTES: usize = 1 << 14;

/// The fewest summed steps of a column-major GEMV's task, and the multiply–adds a task should
/// have at least (`COLUMN_TASK / strip` steps when that is more).
const COLUMN_BLOCK: usize = 128;
const COLUMN_TASK: usize = 1 << 18;

/// `y[i] = alpha * Σ_k A[i, k] x[k]` for `A: m × k`: dot products over rows (vectorised when
/// the rows and `x` are contiguous), or, for a column-major A, column updates. With at least
/// [`PARALLEL_CONTRACTION`] multiply–adds the work is spread over rayon's threads: by rows;
/// with fewer than [`SPLIT_SUM_ROWS`] rows, by blocks of [`GEMV_BLOCK`] summed steps whose
/// partial sums are then added in block order; a column-major A with more rows, by strips of
/// rows and blocks of at least [`COLUMN_BLOCK`] steps ([`split_sum`]).
///
/// # Safety
/// Every element of A and x addressed by the sizes and strides must be readable, and `y` must
/// be valid for `m` writes at stride `y_stride` without two of them sharing an address.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn gemv<T: Num>(
    m: usize,
    k: usize,
    alpha: Option<T>,
    a: *const T,
    a_strides: [isize; 2],
    x: *const T,
    x_stride: isize,
    y: *mut T,
    y_stride: isize,
) {
    let (a, x, y) = (ReadPointer(a), ReadPointer(x), WritePointer(y));
    let [rsa, csa] = a_strides;
    // Offsets of in-range elements fit in isize (they lie in one allocation), so the wrapping
    // products below are the true offsets.
    let at = |index: usize, stride: isize| (index as isize).wrapping_mul(stride);
    let write = |rows: std::ops::Range<usize>, sums: &[T]| {
        for (row, &sum) in rows.zip(sums) {
            // SAFETY: element `row < m` of y is writable, and written by this range alone
            // (ranges are disjoint; the caller promises distinct addresses).
            unsafe { *y.get().wrapping_offset(at(row, y_stride)) = scaled(alpha, sum) };
        }
    };
    // The sums start from the additive identity, `-0.0` for floats, so that a one-term sum
    // keeps the sign of its zero.
    let identity = T::ZERO.neg();
    let work = m.saturating_mul(k);
    // Decided by the sizes alone (not the thread count), so that the grouping is too.
    if work >= PARALLEL_CONTRACTION && m < SPLIT_SUM_ROWS && k >= 2 * GEMV_BLOCK {
        // SAFETY: `split_sum` reads A (`m × k` at `a_strides`) and x (`k` at `x_stride`) only,
        // which this function's caller promises readable; its writes go through `write`, which
        // touches rows below `m` of y alone.
        unsafe { split_sum(m, k, m, GEMV_BLOCK, identity, a, a_strides, x, x_stride, write) };
        return;
    }
    if work >= PARALLEL_CONTRACTION && rsa == 1 && csa != 1 && m >= SPLIT_SUM_ROWS {
        // Column-major with many rows (`xᵀ A` of a row-major A): a task takes a strip of rows
        // and a block of steps, so that it reads long runs of each column (whole rows of the
        // user's A) and keeps its sums in the L1 cache; by strips alone a task read a short
        // run of every column, a page apart (3x slower than reading rows).
        let strip = Ord::min(m, COLUMN_STRIP_BYTES / Ord::max(std::mem::size_of::<T>(), 1));
        let block = Ord::max(COLUMN_BLOCK, COLUMN_TASK / strip);
        // SAFETY: as for the split above: only A and x within `m × k` are read, the promise
        // of this function's caller, and `write` touches rows below `m` of y alone.
        unsafe { split_sum(m, k, strip, block, identity, a, a_strides, x, x_stride, write) };
        return;
    }
    let rows = |range: std::ops::Range<usize>| {
        let (a, x) = (a, x);
        // At most `m` sums, the length of an output that already exists.
        let mut sums = crate::memory::filled_vec(range.len(), identity);
        // SAFETY: rows `range` (below m) and steps below k are in range (the caller's promise).
        unsafe { partial_sums(range.clone(), 0..k, a.0, a_strides, x.0, x_stride, &mut sums) };
        write(range, &sums);
    };
    if work >= PARALLEL_CONTRACTION && m >= 2 && rayon::current_num_threads() > 1 {
        // Column-major: a chunk reads a run of every column, so runs of at least a few cache
        // lines (a chunk of 4 rows read 16 bytes of every 64-byte line: 4x the traffic).
        let least = if rsa == 1 && csa != 1 { COLUMN_RUN } else { 1 };
        let chunk = Ord::clamp(Ord::max(GRAIN / Ord::max(k, 1), least), 1, m.div_ceil(2));
        let chunks = m.div_ceil(chunk);
        // position < chunks = ceil(m / chunk), so `position * chunk < m`.
        (0..chunks)
            .into_par_iter()
            .for_each(|position| rows(position * chunk..Ord::min(m, (position + 1).saturating_mul(chunk))));
    } else {
        rows(0..m);
    }
}

/// The GEMV of [`gemv`] as a grid of tasks, each a strip of at most `strip` rows by a block of
/// `block` summed steps, run on rayon; each row's block sums are then added in block order and
/// handed to `write` with the strip's rows. The grouping depends on the sizes alone.
///
/// # Safety
/// As [`gemv`]'s: every element of A (`m × k`) and x at these strides must be readable.
/// SAFETY (what the body relies on): every task's rows lie below `m` and its steps below `k`
/// (`span` clamps both), so each `partial_sums` call reads inside that promise.
#[allow(clippy::too_many_arguments)]
unsafe fn split_sum<T: Num>(
    m: usize,
    k: usize,
    strip: usize,
    block: usize,
    identity: T,
    a: ReadPointer<T>,
    a_strides: [isize; 2],
    x: ReadPointer<T>,
    x_stride: isize,
    write: impl Fn(std::ops::Range<usize>, &[T]) + Sync,
) {
    let (strips, blocks) = (m.div_ceil(strip), k.div_ceil(block));
    let span = |part: usize, length: usize, total: usize| part * length..Ord::min(total, (part + 1) * length);
    let partials: Vec<Vec<T>> = (0..strips * blocks)
        .into_par_iter()
        .map(|task| {
            let (a, x) = (a, x);
            let (rows, steps) = (span(task / blocks, strip, m), span(task % blocks, block, k));
            let mut sums = crate::memory::filled_vec(rows.len(), identity);
            // SAFETY: the rows are below m and the steps below k (the caller's promise).
            unsafe { partial_sums(rows, steps, a.0, a_strides, x.0, x_stride, &mut sums) };
            sums
        })
        .collect();
    partials.par_chunks(blocks).enumerate().for_each(|(part, of_strip)| {
        let rows = span(part, strip, m);
        let mut sums = crate::memory::filled_vec(rows.len(), identity);
        for partial in of_strip {
            for (sum, &value) in sums.iter_mut().zip(partial) {
                *sum = sum.add(value);
            }
        }
        write(rows, &sums);
    });
}

/// Adds `Σ_{s ∈ steps} A[i, s] x[s]` to `sums[i - rows.start]` for every row `i` of `rows`: whole
/// columns at a time for a column-major A (contiguous runs, which vectorise), else a dot
/// product per row.
///
/// # Safety
/// The rows and steps must be in range of A and x (their elements readable at these strides),
/// and `sums` must have `rows.len()` elements.
unsafe fn partial_sums<T: Num>(
    rows: std::ops::Range<usize>,
    steps: std::ops::Range<usize>,
    a: *const T,
    [rsa, csa]: [isize; 2],
    x: *const T,
    x_stride: isize,
    sums: &mut [T],
) {
    let at = |index: usize, stride: isize| (index as isize).wrapping_mul(stride);
    if rsa == 1 && csa != 1 && rows.len() > 1 {
        for step in steps {
            // SAFETY: rows `rows` of column `step` are contiguous (`rsa == 1`) and readable
            // (the caller's promise), so they form a slice; as a slice, LLVM knows they do not
            // overlap `sums` and vectorises.
            let column = unsafe {
                std::slice::from_raw_parts(
                    a.wrapping_offset(at(step, csa).wrapping_add(rows.start as isize)),
                    rows.len(),
                )
            };
            // SAFETY: element `step` of x is readable (the caller's promise).
            let factor = unsafe { *x.wrapping_offset(at(step, x_stride)) };
            for (sum, &value) in sums.iter_mut().zip(column) {
                *sum = sum.add(value.mul(factor));
            }
        }
    } else {
        let (start, length) = (steps.start, steps.len());
        for (row, sum) in rows.zip(sums) {
            // SAFETY: row `row` of A has the steps `steps` readable at stride `csa`, and x has
            // them at `x_stride` (the caller's promise).
            let dot = unsafe {
                dot(
                    length,
                    a.wrapping_offset(at(row, rsa).wrapping_add(at(start, csa))),
                    csa,
                    x.wrapping_offset(at(start, x_stride)),
                    x_stride,
                )
            };
            *sum = sum.add(dot);
        }
    }
}

fn scaled<T: Num>(alpha: Option<T>, sum: T) -> T {
    match alpha {
        Some(alpha) => alpha.mul(sum),
        None => sum,
    }
}

/// `Σ_k a[k] * b[k]` over `length` elements at the given strides; contiguous inputs are summed
/// in eight interleaved partial sums, which LLVM turns into vector instructions.
///
/// # Safety
/// `length` elements of `a` and of `b` at their strides must be readable.
pub(crate) unsafe fn dot<T: Num>(length: usize, a: *const T, a_stride: isize, b: *const T, b_stride: isize) -> T {
    if length == 0 {
        return T::ZERO;
    }
    if a_stride == 1 && b_stride == 1 {
        // SAFETY: `length` contiguous readable elements each (the caller's promise), so each
        // run lies in one allocation and forms a slice (only read while it lives).
        let (a, b) = unsafe { (std::slice::from_raw_parts(a, length), std::slice::from_raw_parts(b, length)) };
        let mut sums = [T::ZERO; 8];
        let (a_chunks, b_chunks) = (a.chunks_exact(8), b.chunks_exact(8));
        let (a_rest, b_rest) = (a_chunks.remainder(), b_chunks.remainder());
        for (a_chunk, b_chunk) in a_chunks.zip(b_chunks) {
            for lane in 0..8 {
                sums[lane] = sums[lane].add(a_chunk[lane].mul(b_chunk[lane]));
            }
        }
        for (lane, (&a, &b)) in a_rest.iter().zip(b_rest).enumerate() {
            sums[lane] = sums[lane].add(a.mul(b));
        }
        let quarter = [sums[0].add(sums[4]), sums[1].add(sums[5]), sums[2].add(sums[6]), sums[3].add(sums[7])];
        return quarter[0].add(quarter[2]).add(quarter[1].add(quarter[3]));
    }
    let mut sum = T::ZERO;
    for step in 0..length as isize {
        // SAFETY: `step < length`, so both elements are readable (the caller's promise), and
        // their offsets fit in isize, so the wrapping products are the true ones.
        sum = sum.add(unsafe {
            (*a.wrapping_offset(step.wrapping_mul(a_stride))).mul(*b.wrapping_offset(step.wrapping_mul(b_stride)))
        });
    }
    sum
}

/// What each label is: see the module documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Batch,
    M,
    N,
    K,
}

/// The most labels a contraction has: two operands of ein's maximum rank (16), all distinct.
const MAX_LABELS: usize = 32;

/// One value per label, on the stack: a contraction's plan allocates nothing, so that small
/// contractions pay no set-up beyond their output.
#[derive(Clone, Copy, Debug)]
struct PerLabel<T> {
    items: [T; MAX_LABELS],
    len: usize,
}

impl<T: Copy> PerLabel<T> {
    fn filled(value: T, len: usize) -> PerLabel<T> {
        if len > MAX_LABELS {
            internal_error(format_args!("a contraction with {len} labels (at most {MAX_LABELS})"));
        }
        PerLabel { items: [value; MAX_LABELS], len }
    }

    fn from_slice(values: &[T]) -> PerLabel<T>
    where
        T: Default,
    {
        let mut per_label = PerLabel::filled(T::default(), values.len());
        per_label.copy_from_slice(values);
        per_label
    }
}

impl PerLabel<usize> {
    fn push(&mut self, value: usize) {
        if self.len == MAX_LABELS {
            internal_error(format_args!("a contraction with more than {MAX_LABELS} labels"));
        }
        self.items[self.len] = value;
        self.len += 1;
    }
}

/// The labels of several groups, one after the other.
fn concat(groups: &[&[usize]]) -> PerLabel<usize> {
    let mut labels = PerLabel::filled(0usize, 0);
    for &label in groups.iter().copied().flatten() {
        labels.push(label);
    }
    labels
}

impl<T> std::ops::Deref for PerLabel<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.items[..self.len]
    }
}

impl<T> std::ops::DerefMut for PerLabel<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.items[..self.len]
    }
}

/// The least and greatest offsets (in elements, from an array's first element) of a set of
/// elements, for the checked build's checks; `low > high` for no elements.
#[cfg(ein_checked)]
#[derive(Clone, Copy, Debug)]
struct Extent {
    low: isize,
    high: isize,
}

#[cfg(ein_checked)]
impl Extent {
    /// The offsets of a block of `(length, stride)` axes, from the block's first element.
    fn of_block(axes: &[(usize, isize)]) -> Extent {
        let (mut low, mut high) = (0isize, 0isize);
        for &(length, stride) in axes {
            if length == 0 {
                return Extent { low: 0, high: -1 };
            }
            let last = ((length - 1) as isize).wrapping_mul(stride);
            if last < 0 {
                low = low.wrapping_add(last);
            } else {
                high = high.wrapping_add(last);
            }
        }
        Extent { low, high }
    }

    /// The offsets of `len` contiguous elements.
    fn contiguous(len: usize) -> Extent {
        Extent { low: 0, high: (len as isize).wrapping_sub(1) }
    }

    /// Panics unless the block of `axes` at `offset` lies inside `self` (a block of no elements
    /// always does): `what` says what the contraction does there ("reads its left operand").
    #[track_caller]
    fn check_block(self, offset: isize, axes: &[(usize, isize)], what: &str) {
        let block = Extent::of_block(axes);
        if block.low > block.high {
            return;
        }
        let (low, high) = (offset.wrapping_add(block.low), offset.wrapping_add(block.high));
        if low < self.low || high > self.high || low > high {
            panic!(
                "ein: checked build: a contraction {what} at offsets {low}..={high} (a block of (length, stride) {axes:?} at offset {offset}), outside its elements at {}..={}",
                self.low, self.high
            );
        }
    }
}

/// One operand with, for every label, its stride (0 where the operand lacks the label).
#[derive(Clone, Copy, Debug)]
struct Operand<T> {
    ptr: *const T,
    strides: PerLabel<isize>,
    /// Where the operand's elements are, from `ptr`.
    #[cfg(ein_checked)]
    extent: Extent,
}

impl<T> Operand<T> {
    /// A row-major array of `len` elements at `ptr` (a packed copy, or the scratch output),
    /// with the given strides by label.
    fn contiguous(ptr: *const T, strides: PerLabel<isize>, len: usize) -> Operand<T> {
        // Only the checked build keeps the length, to check reads against.
        #[cfg(not(ein_checked))]
        let _ = len;
        Operand {
            ptr,
            strides,
            #[cfg(ein_checked)]
            extent: Extent::contiguous(len),
        }
    }

    /// Panics (in the checked build only) unless the block of `axes` at `offset` lies inside
    /// the operand; `what` says what reads it ("reads its left operand").
    #[inline(always)]
    #[cfg_attr(not(ein_checked), allow(unused_variables))]
    fn check_read(&self, offset: isize, axes: &[(usize, isize)], what: &str) {
        #[cfg(ein_checked)]
        self.extent.check_block(offset, axes, what);
    }
}

// SAFETY: an operand only reads through `ptr`, like the `View` it was made from (or a packed
// copy that outlives it), and `&T`, which a view stands for, is Send and Sync when T is Sync.
unsafe impl<T: Sync> Send for Operand<T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for Operand<T> {}

/// A contraction ready to run: sizes and strides per label.
///
/// Invariant (established by the unsafe [`Plan::new`]): for as long as the plan is used, every
/// index with each label below its size addresses a readable element of each operand that has
/// the label, and each operand's labels multiply to at most `isize::MAX` (they are lengths of
/// one view, or of an intermediate whose size was checked).
struct Plan<T> {
    sizes: PerLabel<usize>,
    outputs: usize,
    roles: PerLabel<Role>,
    left: Operand<T>,
    right: Operand<T>,
}

impl<T: Num> Plan<T> {
    /// # Safety
    /// Each factor's pointer, shape and strides must describe elements readable for as long as
    /// the plan is used, as a view's do (including the views' rule on shapes).
    unsafe fn new(outputs: usize, sizes: PerLabel<usize>, left: Factor<'_, T>, right: Factor<'_, T>) -> Plan<T> {
        let labels = sizes.len();
        let operand = |factor: Factor<'_, T>, side: &str| {
            let Factor { ptr, shape, strides, labels: axes } = factor;
            if axes.len() != shape.len() || strides.len() != shape.len() {
                internal_error(format_args!(
                    "the {side} operand of a contraction has {} axes, {} strides and {} labels",
                    shape.len(),
                    strides.len(),
                    axes.len()
                ));
            }
            let mut by_label = PerLabel::filled(0isize, labels);
            let mut seen = PerLabel::filled(false, labels);
            for ((&label, &length), &stride) in axes.iter().zip(shape).zip(strides) {
                // The safety of every read below rests on this check: a label's index stays
                // below its size, hence below the length of every axis it indexes.
                if label >= labels || seen[label] || length < sizes[label] {
                    internal_error(format_args!(
                        "axis of length {length} of the {side} operand of a contraction cannot hold label {label} (sizes {sizes:?})"
                    ));
                }
                seen[label] = true;
                by_label[label] = stride;
            }
            let operand = Operand {
                ptr,
                strides: by_label,
                #[cfg(ein_checked)]
                extent: {
                    let axes: Vec<(usize, isize)> = shape.iter().copied().zip(strides.iter().copied()).collect();
                    Extent::of_block(&axes)
                },
            };
            (operand, seen)
        };
        let (left, in_left) = operand(left, "left");
        let (right, in_right) = operand(right, "right");
        let mut roles = PerLabel::filled(Role::K, labels);
        for (label, role) in roles.iter_mut().enumerate() {
            *role = match (label < outputs, in_left[label], in_right[label]) {
                (true, true, true) => Role::Batch,
                (true, true, false) => Role::M,
                (true, false, true) => Role::N,
                (false, true, true) => Role::K,
                _ => internal_error(format_args!("label {label} of a contraction is in no operand, or summed in one")),
            };
        }
        Plan { sizes, outputs, roles, left, right }
    }

    fn labels_of(&self, role: Role) -> PerLabel<usize> {
        let mut labels = PerLabel::filled(0usize, 0);
        for label in (0..self.sizes.len()).filter(|&label| self.roles[label] == role) {
            labels.push(label);
        }
        labels
    }

    /// The product of the sizes of `labels`, all of one operand (so it fits; checked anyway).
    fn product(&self, labels: &[usize]) -> usize {
        product_of(labels.iter().map(|&label| self.sizes[label]))
    }

    /// Writes all `count` output elements (row-major over the output labels) to `out`.
    ///
    /// # Safety
    /// `out` must be valid for `count` writes, and `count` must be the product of the output
    /// labels' sizes; `out` need not be initialised.
    unsafe fn run(&self, scale: Option<T>, out: *mut T, count: usize) {
        if count == 0 {
            return;
        }
        // Summed labels are in both operands (Plan::new checks it), so their product fits.
        let summed = product_of(self.sizes[self.outputs..].iter().copied());
        if summed == 0 {
            for position in 0..count {
                // SAFETY: `position < count`, and `out` is valid for `count` writes.
                unsafe { out.add(position).write(scaled(scale, T::ZERO)) };
            }
            return;
        }
        // Floats go to the GEMM; other element types (integers of the expression form) loop.
        if let Some(scale) = cast::<T, f32>(scale) {
            // SAFETY: T is f32 (`cast` checked the TypeId), so the plan's pointers address f32
            // elements and `out` is valid for `count` f32 writes (the caller's promise).
            return unsafe { self.cast::<f32>().run_gemm(scale, out.cast::<f32>(), count) };
        }
        if let Some(scale) = cast::<T, f64>(scale) {
            // SAFETY: as above, for f64.
            return unsafe { self.cast::<f64>().run_gemm(scale, out.cast::<f64>(), count) };
        }
        for position in 0..count {
            // SAFETY: `position < count`, and `out` is valid for `count` writes.
            unsafe { out.add(position).write(T::ZERO) };
        }
        // SAFETY: `count` elements, just initialised, valid for reads and writes and accessed
        // through nothing else while the slice lives (the caller's promise); `count` elements
        // of an allocation fit in isize bytes.
        let out = unsafe { std::slice::from_raw_parts_mut(out, count) };
        self.run_loops(scale, out, summed);
    }

    /// The plain loop nest: every output element (row-major), the sum over the summed labels
    /// in order; output rows over rayon's threads when large.
    fn run_loops(&self, scale: Option<T>, out: &mut [T], summed: usize) {
        let work = out.len().saturating_mul(summed);
        if work >= PARALLEL_CONTRACTION && out.len() >= 2 && rayon::current_num_threads() > 1 {
            let chunk = Ord::clamp(GRAIN / Ord::max(summed, 1), 1, out.len().div_ceil(2));
            out.par_chunks_mut(chunk)
                .enumerate()
                .for_each(|(index, values)| self.fill_from(index * chunk, scale, values));
        } else {
            self.fill_from(0, scale, out);
        }
    }

    /// Writes the output elements `start..start + out.len()` (row-major positions), walking the
    /// output labels like an odometer. Offsets wrap (see the module documentation): after the
    /// last index of a label the odometer steps one stride past it before stepping back.
    fn fill_from(&self, start: usize, scale: Option<T>, out: &mut [T]) {
        let mut summed_labels = PerLabel::filled(0usize, self.sizes.len() - self.outputs);
        for (position, label) in summed_labels.iter_mut().enumerate() {
            *label = self.outputs + position;
        }
        let mut index = PerLabel::filled(0usize, self.outputs);
        let (mut left, mut right) = (0isize, 0isize);
        let mut rest = start;
        for label in (0..self.outputs).rev() {
            index[label] = rest % self.sizes[label];
            rest /= self.sizes[label];
            left = left.wrapping_add((index[label] as isize).wrapping_mul(self.left.strides[label]));
            right = right.wrapping_add((index[label] as isize).wrapping_mul(self.right.strides[label]));
        }
        for value in out {
            *value = scaled(scale, self.sum(&summed_labels, left, right));
            for label in (0..self.outputs).rev() {
                index[label] += 1;
                left = left.wrapping_add(self.left.strides[label]);
                right = right.wrapping_add(self.right.strides[label]);
                if index[label] < self.sizes[label] {
                    break;
                }
                let length = self.sizes[label] as isize;
                left = left.wrapping_sub(length.wrapping_mul(self.left.strides[label]));
                right = right.wrapping_sub(length.wrapping_mul(self.right.strides[label]));
                index[label] = 0;
            }
        }
    }

    /// `Σ` over `labels` (outermost first) of the products at the given operand offsets, which
    /// are those of an index with every output label below its size.
    fn sum(&self, labels: &[usize], left: isize, right: isize) -> T {
        match labels {
            [] => {
                self.left.check_read(left, &[], "reads its left operand");
                self.right.check_read(right, &[], "reads its right operand");
                // SAFETY: every label index is below its size, which the operands' axes hold
                // (checked in `Plan::new`), so both offsets address readable elements (the
                // plan's invariant).
                unsafe { (*self.left.ptr.wrapping_offset(left)).mul(*self.right.ptr.wrapping_offset(right)) }
            }
            [last] => {
                let length = self.sizes[*last];
                self.left.check_read(left, &[(length, self.left.strides[*last])], "reads its left operand");
                self.right.check_read(right, &[(length, self.right.strides[*last])], "reads its right operand");
                // SAFETY: as above, for `sizes[last]` steps along the last summed label.
                unsafe {
                    dot(
                        length,
                        self.left.ptr.wrapping_offset(left),
                        self.left.strides[*last],
                        self.right.ptr.wrapping_offset(right),
                        self.right.strides[*last],
                    )
                }
            }
            [first, rest @ ..] => {
                let mut sum = T::ZERO;
                for index in 0..self.sizes[*first] as isize {
                    let left = left.wrapping_add(index.wrapping_mul(self.left.strides[*first]));
                    let right = right.wrapping_add(index.wrapping_mul(self.right.strides[*first]));
                    sum = sum.add(self.sum(rest, left, right));
                }
                sum
            }
        }
    }

    /// The same plan for `F`; its pointers address `F` elements only if `F` is `T` (which the
    /// caller checks through [`cast`] before using them).
    fn cast<F: Num>(&self) -> Plan<F> {
        let operand = |operand: &Operand<T>| Operand {
            ptr: operand.ptr.cast::<F>(),
            strides: operand.strides,
            #[cfg(ein_checked)]
            extent: operand.extent,
        };
        Plan {
            sizes: self.sizes,
            outputs: self.outputs,
            roles: self.roles,
            left: operand(&self.left),
            right: operand(&self.right),
        }
    }
}

/// `value` as an `F` if `T` is `F` (`Some(None)` for no value), else `None`.
fn cast<T: 'static + Copy, F: 'static + Copy>(value: Option<T>) -> Option<Option<F>> {
    if TypeId::of::<T>() != TypeId::of::<F>() {
        return None;
    }
    // SAFETY: T and F are the same type (same TypeId), so reading the T as an F is reading it
    // as itself; the reference is to a live local.
    Some(value.map(|value| unsafe { *(&value as *const T).cast::<F>() }))
}

/// Labels merged into one axis: its length and its stride in each array it is merged for.
struct Merged {
    length: usize,
    /// The merged axis's stride in each of the (at most two) arrays, in the order given.
    strides: [isize; 2],
}

/// Merges `labels` (outermost first) into one axis of each array whose strides are given
/// (`strides[array][label]`): possible when in every array each label's stride is the next
/// one's times its length, as in a row-major block. Labels of length 1 do not matter. The
/// labels must all be labels of one operand (so their sizes multiply to at most isize::MAX).
fn merge(labels: &[usize], sizes: &[usize], strides: &[&[isize]]) -> Option<Merged> {
    let mut kept = PerLabel::filled(0usize, 0);
    for &label in labels.iter().filter(|&&label| sizes[label] != 1) {
        kept.push(label);
    }
    let length = product_of(kept.iter().map(|&label| sizes[label]));
    let mut merged = [0isize; 2];
    for (slot, array) in merged.iter_mut().zip(strides) {
        for pair in kept.windows(2) {
            if array[pair[0]] != array[pair[1]].wrapping_mul(sizes[pair[1]] as isize) {
                return None;
            }
        }
        *slot = kept.last().map_or(0, |&label| array[label]);
    }
    Some(Merged { length, strides: merged })
}

/// Row-major strides of an array whose axes are `labels` (outermost first), by label; the
/// labels' sizes must multiply to at most isize::MAX (checked).
fn packed_strides(labels: &[usize], sizes: &[usize]) -> PerLabel<isize> {
    let mut strides = PerLabel::filled(0isize, sizes.len());
    let mut step = 1usize;
    for &label in labels.iter().rev() {
        strides[label] = step as isize;
        step = product_of([step, sizes[label]]);
    }
    if step > isize::MAX as usize {
        internal_error(format_args!("a packed contraction operand of {step} elements"));
    }
    strides
}

/// Copies the elements of `operand` over `labels` into a new row-major array of those axes.
///
/// # Safety
/// Every index with each label below its size must address a readable element of `operand`,
/// and the labels' sizes must be lengths of its axes (so they multiply to at most isize::MAX).
unsafe fn pack<F: Num>(operand: &Operand<F>, labels: &[usize], sizes: &[usize]) -> Vec<F> {
    let count = product_of(labels.iter().map(|&label| sizes[label]));
    let mut packed = crate::memory::output_vec(count);
    let mut index = PerLabel::filled(0usize, labels.len());
    for _ in 0..count {
        let offset = labels.iter().zip(index.iter()).fold(0isize, |offset, (&label, &position)| {
            offset.wrapping_add((position as isize).wrapping_mul(operand.strides[label]))
        });
        operand.check_read(offset, &[], "copies an operand");
        // SAFETY: every label index is below its size (the odometer below), so the offset
        // addresses a readable element (the caller's promise); `packed` has room for `count`
        // elements, so the push never reallocates.
        packed.push(unsafe { *operand.ptr.wrapping_offset(offset) });
        for axis in (0..labels.len()).rev() {
            index[axis] += 1;
            if index[axis] < sizes[labels[axis]] {
                break;
            }
            index[axis] = 0;
        }
    }
    packed
}

impl<T> Plan<T> {
    /// The batch, M and N labels to run with: as given, or, where the M or N labels do not all
    /// merge in place (`in_place(m, n)` false: an operand would be packed, or the output
    /// computed in scratch), with the outermost output labels of one operand moved to the
    /// batch labels, as few as let the rest merge in place. Such a label then loops outside
    /// the GEMM, its stride 0 in the other operand (which does not move). A batched 1 × 1
    /// convolution `for b, o, h, w { sum c { wt[o, c] * x[b, c, h, w] } }` becomes one GEMM
    /// `out[b][o, hw] = wt[o, c] · x[b][c, hw]` per image, nothing packed: before, M = {b, h,
    /// w} did not merge in `x` (`c` lies between) nor in the output (`o` does), so `x` was
    /// copied into [b, h, w, c] and the product scattered from a scratch [b, h, w, o] (16 × 64
    /// × 56² f32, 2 threads: 5× one `general_mat_mul` per image). Nothing moves where some M
    /// or N label would have to (the GEMM keeps both), or where no choice merges in place.
    fn loop_outer_labels(
        &self,
        batch: PerLabel<usize>,
        m_labels: PerLabel<usize>,
        n_labels: PerLabel<usize>,
        in_place: impl Fn(&[usize], &[usize]) -> bool,
    ) -> (PerLabel<usize>, PerLabel<usize>, PerLabel<usize>) {
        let (mut looped, mut m, mut n) = (batch, m_labels, n_labels);
        while !in_place(&m, &n) {
            // Labels are numbered in output order: the least left is the outermost.
            let outermost_is_m = match (m.first(), n.first()) {
                (Some(first_m), Some(first_n)) => first_m < first_n,
                _ => return (batch, m_labels, n_labels),
            };
            let group = if outermost_is_m { &mut m } else { &mut n };
            if group.len() == 1 {
                return (batch, m_labels, n_labels);
            }
            looped.push(group[0]);
            *group = PerLabel::from_slice(&group[1..]);
        }
        (looped, m, n)
    }
}

impl<F: GemmFloat> Plan<F> {
    /// One GEMM (or GEMV) per batch position, on merged groups of labels; see the module docs.
    ///
    /// # Safety
    /// `out` must be valid for `count` writes (the output, row-major), and `count` must be the
    /// product of the output labels' sizes; `out` need not be initialised: every element is
    /// written. The plan's pointers must address `F` elements (the plan's invariant, for `F`).
    unsafe fn run_gemm(&self, scale: Option<F>, out: *mut F, count: usize) {
        let (batch, m_labels, n_labels) =
            (self.labels_of(Role::Batch), self.labels_of(Role::M), self.labels_of(Role::N));
        let mut output_labels = PerLabel::filled(0usize, self.outputs);
        for (position, label) in output_labels.iter_mut().enumerate() {
            *label = position;
        }
        let out_strides = packed_strides(&output_labels, &self.sizes);
        // Summed labels in the order of the left operand's strides (any order sums the same
        // products), which merges them for any layout of the left operand.
        let mut k_labels = self.labels_of(Role::K);
        k_labels.sort_by_key(|&label| std::cmp::Reverse(self.left.strides[label].unsigned_abs()));

        // An operand whose groups do not merge is packed: [batch, M, K] or [batch, K, N].
        let mergeable = |operand: &Operand<F>, own: &[usize]| {
            merge(own, &self.sizes, &[&operand.strides]).is_some()
                && merge(&k_labels, &self.sizes, &[&operand.strides]).is_some()
        };
        let (batch, m_labels, n_labels) = self.loop_outer_labels(batch, m_labels, n_labels, |m, n| {
            mergeable(&self.left, m)
                && mergeable(&self.right, n)
                && merge(m, &self.sizes, &[&out_strides]).is_some()
                && merge(n, &self.sizes, &[&out_strides]).is_some()
        });
        let left_labels = concat(&[&batch, &m_labels, &k_labels]);
        // SAFETY: the labels are the left operand's, below their sizes (the plan's invariant).
        let left_packed =
            (!mergeable(&self.left, &m_labels)).then(|| unsafe { pack(&self.left, &left_labels, &self.sizes) });
        let left = match &left_packed {
            Some(packed) => {
                Operand::contiguous(packed.as_ptr(), packed_strides(&left_labels, &self.sizes), packed.len())
            }
            None => self.left,
        };
        let right_labels = concat(&[&batch, &k_labels, &n_labels]);
        // SAFETY: as above, for the right operand.
        let right_packed =
            (!mergeable(&self.right, &n_labels)).then(|| unsafe { pack(&self.right, &right_labels, &self.sizes) });
        let right = match &right_packed {
            Some(packed) => {
                Operand::contiguous(packed.as_ptr(), packed_strides(&right_labels, &self.sizes), packed.len())
            }
            None => self.right,
        };
        // The output: in place when its M and N axes merge, else in scratch [batch, M, N].
        let in_place = merge(&m_labels, &self.sizes, &[&out_strides]).is_some()
            && merge(&n_labels, &self.sizes, &[&out_strides]).is_some();
        let scratch_labels = concat(&[&batch, &m_labels, &n_labels]);
        let target_strides = if in_place { out_strides } else { packed_strides(&scratch_labels, &self.sizes) };
        let mut scratch = if in_place { Vec::new() } else { crate::memory::filled_vec(count, F::ZERO) };

        let merged = |labels: &[usize], arrays: &[&[isize]]| match merge(labels, &self.sizes, arrays) {
            Some(merged) => merged,
            None => internal_error(format_args!("contraction labels {labels:?} do not merge after packing")),
        };
        let m = merged(&m_labels, &[&left.strides, &target_strides]);
        let n = merged(&n_labels, &[&right.strides, &target_strides]);
        let k = merged(&k_labels, &[&left.strides, &right.strides]);
        let target = if in_place { out } else { scratch.as_mut_ptr() };
        #[cfg(ein_checked)]
        let target_extent = Extent::contiguous(count);
        let (left_ptr, right_ptr, target) = (ReadPointer(left.ptr), ReadPointer(right.ptr), WritePointer(target));

        let batches = self.product(&batch);
        // Small products of a large batch run side by side, each on one thread; others one
        // after another, each split over the pool (GEMVs split their rows themselves).
        let work = count.saturating_mul(k.length);
        let single_threaded = n.length == 1
            || m.length == 1
            || m.length.saturating_mul(k.length).saturating_mul(n.length) <= SINGLE_THREADED_GEMM;
        let side_by_side =
            batches > 1 && single_threaded && work >= PARALLEL_CONTRACTION && rayon::current_num_threads() > 1;
        let one = |position: usize| {
            let (left_ptr, right_ptr, target) = (left_ptr, right_ptr, target);
            let (mut a, mut b, mut c) = (0isize, 0isize, 0isize);
            let mut rest = position;
            for &label in batch.iter().rev() {
                let index = (rest % self.sizes[label]) as isize;
                rest /= self.sizes[label];
                a = a.wrapping_add(index.wrapping_mul(left.strides[label]));
                b = b.wrapping_add(index.wrapping_mul(right.strides[label]));
                c = c.wrapping_add(index.wrapping_mul(target_strides[label]));
            }
            let a_block = [(m.length, m.strides[0]), (k.length, k.strides[0])];
            let b_block = [(k.length, k.strides[1]), (n.length, n.strides[0])];
            left.check_read(a, &a_block, "multiplies its left operand");
            right.check_read(b, &b_block, "multiplies its right operand");
            #[cfg(ein_checked)]
            target_extent.check_block(c, &[(m.length, m.strides[1]), (n.length, n.strides[1])], "writes its output");
            let (a, b, c) =
                (left_ptr.0.wrapping_offset(a), right_ptr.0.wrapping_offset(b), target.0.wrapping_offset(c));
            // SAFETY: every label index stays below its size, which the operands' axes (or the
            // packed copies) hold, so A and B address readable elements (the plan's invariant);
            // the target is the output (or scratch) array of `count` elements, valid for
            // writes, whose M, N and batch positions are distinct elements, and each batch
            // position (each call of `one`) writes its own.
            unsafe {
                if n.length == 1 {
                    gemv(m.length, k.length, scale, a, [m.strides[0], k.strides[0]], b, k.strides[1], c, m.strides[1]);
                } else if m.length == 1 {
                    gemv(n.length, k.length, scale, b, [n.strides[0], k.strides[1]], a, k.strides[0], c, n.strides[1]);
                } else {
                    let alpha = scale.unwrap_or(F::ONE);
                    gemm(
                        m.length,
                        k.length,
                        n.length,
                        alpha,
                        a,
                        [m.strides[0], k.strides[0]],
                        b,
                        [k.strides[1], n.strides[0]],
                        c,
                        [m.strides[1], n.strides[1]],
                        !side_by_side,
                    );
                }
            }
        };
        if side_by_side {
            (0..batches).into_par_iter().for_each(one);
        } else {
            (0..batches).for_each(one);
        }

        if !in_place {
            // Scatter the scratch [batch, M, N] into the output's own axis order.
            let scratch = Operand::contiguous(scratch.as_ptr(), target_strides, scratch.len());
            // SAFETY: the scratch holds `count` initialised elements (zeroed, then written),
            // [batch, M, N] row-major, alive until the end of this function.
            let copied = unsafe { pack(&scratch, &output_labels, &self.sizes) };
            // SAFETY: `copied` has `count` elements, `out` is valid for `count` writes (the
            // caller's promise), and the two do not overlap (`copied` is a new allocation).
            unsafe { std::ptr::copy_nonoverlapping(copied.as_ptr(), out, count) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::as_view::AsView;
    use crate::test_support::{numbers, size};
    use ein_testing::expect_panic;
    use ndarray::{s, Array2, Array3, Array4, ArrayView2, ArrayView3};

    fn matrix(rows: usize, columns: usize, seed: u64) -> Array2<f64> {
        Array2::from_shape_vec((rows, columns), numbers(rows * columns, seed)).unwrap()
    }

    fn in_pool<R: Send>(threads: usize, action: impl FnOnce() -> R + Send) -> R {
        rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(action)
    }

    fn assert_close(actual: &[f64], expected: &[f64], what: &str) {
        assert_eq!(actual.len(), expected.len(), "{what}: lengths");
        for (position, (a, e)) in actual.iter().zip(expected).enumerate() {
            assert!((a - e).abs() <= 1e-10 * e.abs().max(1.0), "{what}: element {position}: {a} != {e}");
        }
    }

    const MATMUL: ContractionSpec = ContractionSpec { outputs: 2, left: &[0, 2], right: &[2, 1] };

    /// `C = A B` through `contract`, against the obvious loops.
    fn check_matmul(a: ArrayView2<'_, f64>, b: ArrayView2<'_, f64>, scale: Option<f64>, what: &str) {
        let (m, k, n) = (a.nrows(), a.ncols(), b.ncols());
        let result =
            contract(&MATMUL, [m, n], &[k], scale, AsView::<f64, 2>::as_view(&a), AsView::<f64, 2>::as_view(&b));
        let mut expected = Vec::new();
        for i in 0..m {
            for j in 0..n {
                let sum: f64 = (0..k).map(|l| a[[i, l]] * b[[l, j]]).sum();
                expected.push(scale.map_or(sum, |scale| scale * sum));
            }
        }
        assert_close(result.as_slice(), &expected, what);
    }

    /// The split into tiles of C gives the bits of the crate's own split (each element summed
    /// in the same order), for every thread count and layout, edge tiles included.
    #[test]
    fn tiled_gemm_matches_the_crates_split_to_the_bit() {
        for (m, k, n) in [(size(200, 40), size(150, 30), size(170, 40)), (64, 300, 5), (1, 50, 90), (130, 7, 1)] {
            let a = matrix(m, k, 4);
            let b = matrix(k, n, 5);
            let b_t = b.t().to_owned();
            let b_stored_transposed = b_t.t();
            for b in [b.view(), b_stored_transposed, b.slice(s![..;-1, ..])] {
                let strides = |view: &ArrayView2<'_, f64>| [view.strides()[0], view.strides()[1]];
                let (a_strides, b_strides) = (strides(&a.view()), strides(&b));
                for threads in [2, 3, 4, 6] {
                    let run = |tiled: bool| {
                        let mut c = vec![0.0f64; m * n];
                        let c_strides = [n as isize, 1];
                        in_pool(threads, || {
                            // SAFETY: A, B and C are whole arrays of these shapes and strides.
                            unsafe {
                                if tiled {
                                    let c_ptr = c.as_mut_ptr();
                                    tiled_gemm(
                                        threads,
                                        m,
                                        k,
                                        n,
                                        0.5,
                                        a.as_ptr(),
                                        a_strides,
                                        b.as_ptr(),
                                        b_strides,
                                        c_ptr,
                                        c_strides,
                                    );
                                } else {
                                    let c_ptr = c.as_mut_ptr();
                                    gemm(
                                        m,
                                        k,
                                        n,
                                        0.5,
                                        a.as_ptr(),
                                        a_strides,
                                        b.as_ptr(),
                                        b_strides,
                                        c_ptr,
                                        c_strides,
                                        true,
                                    );
                                }
                            }
                        });
                        c
                    };
                    let (tiled, split) = (run(true), run(false));
                    let same = tiled.iter().zip(&split).all(|(x, y)| x.to_bits() == y.to_bits());
                    assert!(same, "{m} × {k} × {n}, B strides {b_strides:?}, {threads} threads");
                }
            }
        }
    }

    #[test]
    fn matmul_in_every_layout_on_one_and_two_threads() {
        // Large enough for the GEMM to use its threads (a square-ish and a wide product).
        let shapes = [(size(150, 40), size(130, 30), size(140, 30)), (size(70, 40), size(120, 30), size(260, 45))];
        for (m, k, n) in shapes {
            let a = matrix(m, k, 1);
            let b = matrix(k, n, 2);
            let a_t = a.t().to_owned();
            let a_stored_transposed = a_t.t();
            let a_big = matrix(2 * m, 2 * k, 3);
            let a_stepped = a_big.slice(s![..;2, ..;2]);
            let b_reversed = b.slice(s![..;-1, ..;-1]);
            for threads in [1, 2] {
                in_pool(threads, || {
                    check_matmul(a.view(), b.view(), None, "row-major");
                    check_matmul(a_stored_transposed, b.view(), Some(0.5), "transposed");
                    check_matmul(a_stepped, b_reversed, Some(-2.0), "stepped and reversed");
                });
            }
        }
    }

    #[test]
    fn the_result_does_not_depend_on_the_thread_count() {
        let (m, k, n) = (size(300, 40), size(500, 40), size(200, 40));
        let (a, b) = (matrix(m, k, 21), matrix(k, n, 22));
        let product = |threads| {
            in_pool(threads, || {
                contract(&MATMUL, [m, n], &[k], None, AsView::<f64, 2>::as_view(&a), AsView::<f64, 2>::as_view(&b))
            })
        };
        let one = product(1);
        for threads in [2, 3, 8] {
            let bits = |values: &[f64]| values.iter().map(|value| value.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(product(threads).as_slice()), bits(one.as_slice()), "{threads} threads");
        }
    }

    #[test]
    fn broadcast_operands_and_small_sizes() {
        let row = matrix(1, size(90, 40), 4);
        let a = row.broadcast((size(80, 30), size(90, 40))).unwrap();
        let b = matrix(size(90, 40), size(70, 30), 5);
        check_matmul(a, b.view(), None, "zero stride");
        for (m, k, n) in [(1, 1, 1), (3, 5, 2), (1, 9, 7), (8, 1, 8)] {
            check_matmul(matrix(m, k, 6).view(), matrix(k, n, 7).view(), Some(3.0), "small");
        }
    }

    #[test]
    fn empty_sums_are_the_scale_times_zero() {
        let (a, b) = (Array2::<f32>::zeros((2, 0)), Array2::<f32>::zeros((0, 3)));
        let (a, b) = (AsView::<f32, 2>::as_view(&a), AsView::<f32, 2>::as_view(&b));
        assert_eq!(contract(&MATMUL, [2, 3], &[0], None, a, b).as_slice(), [0.0; 6]);
        assert!(contract(&MATMUL, [2, 3], &[0], Some(f32::INFINITY), a, b).as_slice().iter().all(|x| x.is_nan()));
        let empty = contract(&MATMUL, [0, 3], &[0], Some(1.0), a, b);
        assert_eq!(empty.shape(), [0, 3]);
    }

    #[test]
    fn matvec_and_vector_matrix() {
        let (m, k) = (size(1100, 50), size(1000, 40));
        let a = matrix(m, k, 8);
        let x: Vec<f64> = numbers(k, 9);
        let a_column_major = a.t().to_owned();
        let a_column_major = a_column_major.t();
        let expected: Vec<f64> = (0..m).map(|i| (0..k).map(|l| a[[i, l]] * x[l]).sum()).collect();
        let matvec = ContractionSpec { outputs: 1, left: &[0, 1], right: &[1] };
        for threads in [1, 2] {
            in_pool(threads, || {
                for (layout, a) in [("row-major", a.view()), ("column-major", a_column_major)] {
                    let result = contract(&matvec, [m], &[k], None, AsView::<f64, 2>::as_view(&a), x.as_view());
                    assert_close(result.as_slice(), &expected, layout);
                }
            });
        }
        // x A, with A indexed [k, j].
        let vector_matrix = ContractionSpec { outputs: 1, left: &[1], right: &[1, 0] };
        let b = a.t();
        let result = contract(&vector_matrix, [m], &[k], Some(2.0), x.as_view(), AsView::<f64, 2>::as_view(&b));
        let doubled: Vec<f64> = expected.iter().map(|value| 2.0 * value).collect();
        assert_close(result.as_slice(), &doubled, "vector-matrix");
    }

    /// `x A` with many outputs and a long sum: a grid of strips of outputs by blocks of steps,
    /// whose block sums are added in block order: those bits on any thread count.
    #[test]
    fn a_vector_matrix_product_with_many_outputs_sums_blocks_of_steps_in_order() {
        let (outputs, steps) = (size(COLUMN_STRIP_BYTES / 8 + 300, 40), size(4 * COLUMN_BLOCK + 7, 9));
        let a = matrix(steps, outputs, 31);
        let x: Vec<f64> = numbers(steps, 32);
        let block = Ord::max(COLUMN_BLOCK, COLUMN_TASK / Ord::min(outputs, COLUMN_STRIP_BYTES / 8));
        let expected: Vec<f64> = (0..outputs)
            .map(|j| {
                (0..steps).step_by(block).fold(-0.0, |total, start| {
                    let block_sum = (start..Ord::min(steps, start + block)).fold(-0.0, |sum, i| sum + a[[i, j]] * x[i]);
                    total + block_sum
                })
            })
            .collect();
        let bits = |values: &[f64]| values.iter().map(|value| value.to_bits()).collect::<Vec<_>>();
        let vector_matrix = ContractionSpec { outputs: 1, left: &[1], right: &[1, 0] };
        for threads in [1, 2, 3] {
            let result = in_pool(threads, || {
                contract(&vector_matrix, [outputs], &[steps], None, x.as_view(), AsView::<f64, 2>::as_view(&a))
            });
            assert_eq!(bits(result.as_slice()), bits(&expected), "{threads} threads");
        }
    }

    /// `out[p, i, j] = Σ_k a[i, p, k] b[k, p, j]` (batch in the middle), and the same with the
    /// output's axes in another order (`out[i, p, j]`).
    #[test]
    fn a_tall_thin_transposed_product_splits_its_sum_the_same_way_on_any_thread_count() {
        // Xᵀ r with few columns and many rows (each layout of X): long sums, few outputs.
        let (rows, columns) = (size(3 * GEMV_BLOCK + 123, 2 * GEMV_BLOCK + 1), size(100, 3));
        let x = matrix(rows, columns, 23);
        let x_column_major = x.t().to_owned();
        let x_column_major = x_column_major.t();
        let r: Vec<f64> = numbers(rows, 24);
        let expected: Vec<f64> = (0..columns).map(|j| (0..rows).map(|i| x[[i, j]] * r[i]).sum()).collect();
        let transposed = ContractionSpec { outputs: 1, left: &[1, 0], right: &[1] };
        for (layout, x) in [("row-major", x.view()), ("column-major", x_column_major)] {
            let product = |threads| {
                in_pool(threads, || {
                    contract(&transposed, [columns], &[rows], None, AsView::<f64, 2>::as_view(&x), r.as_view())
                })
            };
            let one = product(1);
            assert_close(one.as_slice(), &expected, layout);
            for threads in [2, 3] {
                let bits = |values: &[f64]| values.iter().map(|value| value.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(product(threads).as_slice()), bits(one.as_slice()), "{layout}, {threads} threads");
            }
        }
    }

    #[test]
    fn batches_and_interleaved_outputs() {
        let (batch, m, k, n) = (size(5, 2), size(40, 12), size(50, 13), size(45, 14));
        let a = Array3::from_shape_vec((m, batch, k), numbers(m * batch * k, 11)).unwrap();
        let b = Array3::from_shape_vec((k, batch, n), numbers(k * batch * n, 12)).unwrap();
        let reference = |p: usize, i: usize, j: usize| (0..k).map(|l| a[[i, p, l]] * b[[l, p, j]]).sum::<f64>();
        let batch_first = ContractionSpec { outputs: 3, left: &[1, 0, 3], right: &[3, 0, 2] };
        let interleaved = ContractionSpec { outputs: 3, left: &[0, 1, 3], right: &[3, 1, 2] };
        let (a_view, b_view): (ArrayView3<'_, f64>, ArrayView3<'_, f64>) = (a.view(), b.view());
        for threads in [1, 2] {
            in_pool(threads, || {
                let (left, right) = (AsView::<f64, 3>::as_view(&a_view), AsView::<f64, 3>::as_view(&b_view));
                let result = contract(&batch_first, [batch, m, n], &[k], None, left, right);
                let expected: Vec<f64> = (0..batch * m * n).map(|e| reference(e / (m * n), e / n % m, e % n)).collect();
                assert_close(result.as_slice(), &expected, "batch first");
                let result = contract(&interleaved, [m, batch, n], &[k], None, left, right);
                let expected: Vec<f64> =
                    (0..batch * m * n).map(|e| reference(e / n % batch, e / (batch * n), e % n)).collect();
                assert_close(result.as_slice(), &expected, "interleaved");
            });
        }
    }

    /// `out[i, j, r] = Σ_k a[i, r, k] b[k, j]`: the M labels `i` and `r` are not adjacent in the
    /// output, so `i` loops outside the GEMM (one product `out[i][j, r]` per `i`, in place).
    #[test]
    fn an_outermost_output_label_of_one_operand_loops_outside_the_gemm() {
        let (m, r, k, n) = (size(20, 4), size(6, 3), size(40, 30), size(30, 5));
        let a = Array3::from_shape_vec((m, r, k), numbers(m * r * k, 15)).unwrap();
        let b = matrix(k, n, 16);
        let spec = ContractionSpec { outputs: 3, left: &[0, 2, 3], right: &[3, 1] };
        let result =
            contract(&spec, [m, n, r], &[k], None, AsView::<f64, 3>::as_view(&a), AsView::<f64, 2>::as_view(&b));
        let expected: Vec<f64> = (0..m * n * r)
            .map(|e| {
                let (i, j, q) = (e / (n * r), e / r % n, e % r);
                (0..k).map(|l| a[[i, q, l]] * b[[l, j]]).sum()
            })
            .collect();
        assert_close(result.as_slice(), &expected, "looped");
    }

    /// A batched 1 × 1 convolution `out[b, o, h, w] = Σ_c wt[o, c] x[b, c, h, w]`, with the
    /// image batch looping outside the GEMM, in every layout of `x` and either operand left.
    #[test]
    fn a_batched_one_by_one_convolution_in_any_layout() {
        let (images, outs, channels, height, width) = (size(3, 2), size(12, 5), size(9, 4), size(7, 3), size(6, 2));
        let x =
            Array4::from_shape_vec((images, channels, height, width), numbers(images * channels * height * width, 31))
                .unwrap();
        let wt = matrix(outs, channels, 32);
        let x_permuted = x.view().permuted_axes([3, 1, 0, 2]).as_standard_layout().into_owned();
        let x_reversed = x.slice(s![..;-1, .., ..;-1, ..]).to_owned();
        let expected: Vec<f64> = (0..images * outs * height * width)
            .map(|e| {
                let (b, o, h, w) =
                    (e / (outs * height * width), e / (height * width) % outs, e / width % height, e % width);
                (0..channels).map(|c| wt[[o, c]] * x[[b, c, h, w]]).sum()
            })
            .collect();
        let weights_left = ContractionSpec { outputs: 4, left: &[1, 4], right: &[0, 4, 2, 3] };
        let image_left = ContractionSpec { outputs: 4, left: &[0, 4, 2, 3], right: &[1, 4] };
        let views = [
            (x.view(), "row-major"),
            (x_permuted.view().permuted_axes([2, 1, 3, 0]), "permuted strides"),
            (x_reversed.slice(s![..;-1, .., ..;-1, ..]), "negative strides"),
        ];
        for (view, layout) in views {
            for threads in [1, 2] {
                in_pool(threads, || {
                    let sizes = [images, outs, height, width];
                    let (wt_view, x_view) = (AsView::<f64, 2>::as_view(&wt), AsView::<f64, 4>::as_view(&view));
                    let result = contract(&weights_left, sizes, &[channels], None, wt_view, x_view);
                    assert_close(result.as_slice(), &expected, &format!("weights left, {layout}, {threads} threads"));
                    let result = contract(&image_left, sizes, &[channels], None, x_view, wt_view);
                    assert_close(result.as_slice(), &expected, &format!("image left, {layout}, {threads} threads"));
                });
            }
        }
    }

    /// `out[i, j, p, q] = Σ_k a[p, i, k] b[p, k, j, q]`: the N labels `j` and `q` are not
    /// adjacent in the output (the batch label `p` is between), and the outermost label `i` is
    /// the only M label, so nothing can loop outside: the GEMM writes a scratch array, copied
    /// into place after.
    #[test]
    fn interleaved_output_labels_go_through_scratch() {
        let (m, n, q, p, k) = (size(20, 4), size(9, 3), size(7, 2), size(3, 2), size(40, 30));
        let a = Array3::from_shape_vec((p, m, k), numbers(p * m * k, 15)).unwrap();
        let b = Array4::from_shape_vec((p, k, n, q), numbers(p * k * n * q, 16)).unwrap();
        let spec = ContractionSpec { outputs: 4, left: &[2, 0, 4], right: &[2, 4, 1, 3] };
        let result =
            contract(&spec, [m, n, p, q], &[k], None, AsView::<f64, 3>::as_view(&a), AsView::<f64, 4>::as_view(&b));
        let expected: Vec<f64> = (0..m * n * p * q)
            .map(|e| {
                let (i, j, s, t) = (e / (n * p * q), e / (p * q) % n, e / q % p, e % q);
                (0..k).map(|l| a[[s, i, l]] * b[[s, l, j, t]]).sum()
            })
            .collect();
        assert_close(result.as_slice(), &expected, "scratch");
    }

    /// Two summed labels whose strides cannot merge (a broadcast axis): the operand is packed.
    #[test]
    fn unmergeable_summed_labels_are_packed() {
        let (m, k, l, n) = (size(30, 9), size(6, 3), size(7, 4), size(40, 10));
        let a = Array3::from_shape_vec((m, 1, l), numbers(m * l, 13)).unwrap();
        let a = a.broadcast((m, k, l)).unwrap();
        let b = Array3::from_shape_vec((k, l, n), numbers(k * l * n, 14)).unwrap();
        let spec = ContractionSpec { outputs: 2, left: &[0, 2, 3], right: &[2, 3, 1] };
        let result =
            contract(&spec, [m, n], &[k, l], None, AsView::<f64, 3>::as_view(&a), AsView::<f64, 3>::as_view(&b));
        let expected: Vec<f64> = (0..m * n)
            .map(|e| {
                let (i, j) = (e / n, e % n);
                (0..k).flat_map(|p| (0..l).map(move |q| (p, q))).map(|(p, q)| a[[i, p, q]] * b[[p, q, j]]).sum()
            })
            .collect();
        assert_close(result.as_slice(), &expected, "packed");
    }

    #[test]
    fn integers_wrap_in_plain_loops() {
        let (m, k, n) = (size(120, 10), size(100, 10), size(110, 10));
        let a: Vec<i64> = (0..m * k).map(|x| (x as i64).wrapping_mul(0x5851_F42D_4C95_7F2D)).collect();
        let b: Vec<i64> = (0..k * n).map(|x| (x as i64).wrapping_mul(0x1405_7B7E_F767_814F)).collect();
        let (a_view, b_view) = (View::from_slice(&a, [m, k]), View::from_slice(&b, [k, n]));
        for threads in [1, 2] {
            let result = in_pool(threads, || contract(&MATMUL, [m, n], &[k], Some(3), a_view, b_view));
            for (e, value) in result.as_slice().iter().enumerate() {
                let (i, j) = (e / n, e % n);
                let sum = (0..k).fold(0i64, |sum, l| sum.wrapping_add(a[i * k + l].wrapping_mul(b[l * n + j])));
                assert_eq!(*value, sum.wrapping_mul(3));
            }
        }
    }

    /// A view of `shape` whose every element is the one element of `one` (all strides 0).
    fn broadcast<T, const N: usize>(one: &[T; 1], shape: [usize; N]) -> View<'_, T, N> {
        // SAFETY: with zero strides every in-range index addresses `one[0]`, borrowed for the
        // view's lifetime; the shapes used here obey the views' rule (checked in debug builds).
        unsafe { View::from_raw_parts(one.as_ptr(), shape, [0; N]) }
    }

    /// A reproducer: 274177 · 67280421310721 = 2^64 + 1, which wraps to 1 in a
    /// release build; the output must be refused before anything is allocated or written.
    #[test]
    #[cfg_attr(miri, ignore = "an allocation Miri cannot make stops Miri instead of failing")]
    fn a_result_with_more_elements_than_memory_panics_before_anything_is_written() {
        let (m, n) = (274177usize, 67280421310721usize);
        let expected =
            "ein: the result of this contraction would have 274177 × 67280421310721 elements, more than memory can hold";
        let message = expect_panic(|| {
            contract(&MATMUL, [m, n], &[1], None, broadcast(&[2.0f64], [m, 1]), broadcast(&[3.0f64], [1, n]))
        });
        assert_eq!(message, expected);
        // The loop path (integers) and the GEMV shape (summed length 0 included) alike.
        let message = expect_panic(|| {
            contract(&MATMUL, [m, n], &[1], Some(2), broadcast(&[2i64], [m, 1]), broadcast(&[3i64], [1, n]))
        });
        assert_eq!(message, expected);
        let message = expect_panic(|| {
            contract(&MATMUL, [m, n], &[0], None, broadcast(&[2.0f32], [m, 0]), broadcast(&[3.0f32], [0, n]))
        });
        assert_eq!(message, expected);
        // Batched: every operand fits, the product of batch, M and N does not fit in isize.
        let batched = ContractionSpec { outputs: 3, left: &[0, 1, 3], right: &[0, 3, 2] };
        let message = expect_panic(|| {
            let left = broadcast(&[1.0f64], [1 << 21, 1 << 21, 1]);
            let right = broadcast(&[1.0f64], [1 << 21, 1, 1 << 21]);
            contract(&batched, [1 << 21, 1 << 21, 1 << 21], &[1], None, left, right)
        });
        assert_eq!(
            message,
            "ein: the result of this contraction would have 2097152 × 2097152 × 2097152 elements, more than memory can hold"
        );
        // A count that fits in usize but not in isize, and one that an array may have but no
        // allocator can provide.
        let message = expect_panic(|| {
            contract(
                &MATMUL,
                [1 << 32, 1 << 31],
                &[1],
                None,
                broadcast(&[1.0], [1 << 32, 1]),
                broadcast(&[1.0], [1, 1 << 31]),
            )
        });
        assert!(message.starts_with("ein: the result of this contraction would have 4294967296 × 2147483648"));
        let message = expect_panic(|| {
            contract(
                &MATMUL,
                [1 << 40, 1 << 10],
                &[1],
                None,
                broadcast(&[1.0], [1 << 40, 1]),
                broadcast(&[1.0], [1, 1 << 10]),
            )
        });
        assert!(
            message.starts_with("ein: cannot allocate 1125899906842624 elements (9007199254740992 bytes)"),
            "{message}"
        );
    }

    #[test]
    fn an_empty_result_may_have_a_huge_axis() {
        let huge = 1usize << 62;
        let result =
            contract(&MATMUL, [huge, 0], &[1], None, broadcast(&[1.0f64], [huge, 1]), broadcast(&[1.0], [1, 0]));
        assert_eq!(result.shape(), [huge, 0]);
        assert!(result.as_slice().is_empty());
        // But not one whose non-zero lengths multiply past isize::MAX, though each operand's do
        // not: the batch label is empty, M and N are long.
        let batched = ContractionSpec { outputs: 3, left: &[0, 1, 3], right: &[0, 3, 2] };
        let message = expect_panic(|| {
            let (left, right) = (broadcast(&[1.0f64], [0, 1 << 32, 1]), broadcast(&[1.0], [0, 1, 1 << 32]));
            contract(&batched, [0, 1 << 32, 1 << 32], &[1], None, left, right)
        });
        assert_eq!(
            message,
            "ein: the result of this contraction would have shape [0, 4294967296, 4294967296], whose non-zero lengths multiply to more than isize::MAX"
        );
    }

    /// Axes of length 1 may have any stride, even one whose multiples wrap: the offsets
    /// computed for them (one stride forward, one back) must not panic in a debug build.
    #[test]
    fn strides_of_axes_of_length_one_may_be_anything() {
        let a = [1.0f64, 2.0, 3.0];
        let b = [10.0f64, 20.0, 30.0];
        for stride in [isize::MAX, isize::MIN, isize::MIN + 1, 7] {
            // SAFETY: axis 0 has length 1, so only index 0 is used along it; axis 1 reads
            // a[0..3] (and b[0..3]) at stride 1.
            let (left, right) = unsafe {
                (
                    View::from_raw_parts(a.as_ptr(), [1, 3], [stride, 1]),
                    View::from_raw_parts(b.as_ptr(), [3, 1], [1, stride]),
                )
            };
            // out[i, j] = Σ_k left[i, k] right[k, j]: a 1 × 1 result, through the GEMV and the loops.
            assert_eq!(contract(&MATMUL, [1, 1], &[3], None, left, right).as_slice(), [140.0]);
            let (left_i, right_i) = ([1i64, 2, 3], [10i64, 20, 30]);
            // SAFETY: as above.
            let (left_i, right_i) = unsafe {
                (
                    View::from_raw_parts(left_i.as_ptr(), [1, 3], [stride, 1]),
                    View::from_raw_parts(right_i.as_ptr(), [3, 1], [1, stride]),
                )
            };
            assert_eq!(contract(&MATMUL, [1, 1], &[3], None, left_i, right_i).as_slice(), [140]);
            // An outer product: the summed axis has length 1.
            let outer = contract(&MATMUL, [3, 3], &[1], None, right, left);
            assert_eq!(outer.as_slice()[..3], [10.0, 20.0, 30.0]);
        }
    }

    /// The checked build's check of the blocks a contraction reads and writes (which only an
    /// internal error could put outside an operand).
    #[cfg(ein_checked)]
    #[test]
    fn the_checked_build_checks_blocks_against_their_operands() {
        let matrix = Extent::of_block(&[(3, 4), (4, -1)]);
        assert_eq!((matrix.low, matrix.high), (-3, 8));
        matrix.check_block(0, &[(3, 4), (4, -1)], "reads its left operand");
        matrix.check_block(5, &[(2, 1), (0, 100)], "reads its left operand");
        let message = expect_panic(|| matrix.check_block(1, &[(3, 4)], "reads its left operand"));
        assert!(
            message.starts_with("ein: checked build: a contraction reads its left operand at offsets 1..=9"),
            "{message}"
        );
        let message = expect_panic(|| Extent::contiguous(6).check_block(-1, &[(2, 3)], "writes its output"));
        assert!(
            message.starts_with("ein: checked build: a contraction writes its output at offsets -1..=2"),
            "{message}"
        );
    }

    #[test]
    fn an_axis_shorter_than_its_label_is_an_internal_error() {
        let (a, b) = (vec![1.0f64; 6], vec![1.0f64; 6]);
        let message = expect_panic(|| {
            contract(&MATMUL, [2, 2], &[4], None, View::from_slice(&a, [2, 3]), View::from_slice(&b, [3, 2]))
        });
        assert!(message.contains("internal error"), "{message}");
    }
}
