//! Reductions for generated code.
//!
//! [`Accumulate::fold_range`] folds `value(0), value(1), …` into an accumulator; for floats it
//! keeps several independent accumulators ("lanes") so that LLVM can keep them in vector
//! registers without being allowed to reassociate (no fast-math). Its summation order, which
//! is ein's documented rounding behaviour:
//!
//! * `L` lanes (16 for f32, 8 for f64): lane `l` accumulates, in order, the values at
//!   `l, l + L, l + 2L, …` among the first `L * (n / L)` values;
//! * the lanes are combined pairwise, halving: lane `l` with lane `l + L/2`, then with
//!   `l + L/4`, … (a balanced tree of depth log2 L);
//! * the last `n % L` values are then added to that result one by one, in order.
//!
//! With fewer than `2L` values this is the plain left-to-right fold: such a short reduction
//! (a 3×3 or 5×5 window, a distance in 8 dimensions) gains nothing from lanes that barely fill,
//! and a plain fold per element is what LLVM runs across the enclosing comprehension's index
//! (a 5×5 convolution 1.7× and an 8-dimensional nearest-neighbour search 4.6× faster than with
//! one block of lanes and its tree, same machine). Values are always
//! *computed* in index order (so a failing element reports the same error as a serial loop);
//! only the grouping of the combining operation changes. Integers and booleans use one lane
//! (their operations are associative; LLVM vectorises them unaided).
//!
//! [`reduce`]: a parallel reduction over `0..n` whose answer does not depend on the number of
//! threads, so a float `sum` gives the same bits on every machine and every run. The range is cut into chunks of
//! [`REDUCE_CHUNK`] steps, a choice that depends only on `n`; chunks are folded
//! independently (in parallel for large `n`) and their results combined pairwise, in order:
//! neighbours first (chunk 0 with 1, 2 with 3, …), then neighbouring pairs, and so on, an odd
//! one out at any level carried up unchanged. Running serially computes exactly the same chunks and
//! combinations, so the serial/parallel switch cannot change the answer either.

use rayon::prelude::*;

use crate::build::GRAIN;

/// The number of consecutive steps folded together before results are combined.
pub const REDUCE_CHUNK: usize = GRAIN / 4;

/// A type generated code reduces: how [`Accumulate::fold_range`] groups the combining
/// operation (see the module documentation).
pub trait Accumulate: Copy + Default {
    /// Below this many values [`Accumulate::fold_range`] is the plain left-to-right fold, so
    /// generated code may fold several reductions side by side, one step of each at a time
    /// (across a comprehension's index), and get the same bits.
    const PLAIN_BELOW: usize;

    /// How many accumulators [`Accumulate::fold_range`] keeps (a power of two dividing
    /// [`LANE_BLOCK`]); 1 for the types it folds in one accumulator, in order.
    const LANES: usize;

    /// `identity ⊕ value(0) ⊕ value(1) ⊕ … ⊕ value(count - 1)`, where `⊕` is `combine`,
    /// grouped as the module documentation says for `Self`. `value` is called once per step,
    /// in order.
    fn fold_range(
        count: usize,
        identity: Self,
        combine: impl Fn(Self, Self) -> Self,
        value: impl FnMut(usize) -> Self,
    ) -> Self;

    /// [`Accumulate::fold_range`], the same values combined in the same grouping (the same
    /// bits), for a costly `value`: `value` is called at one place, a block of values at a
    /// time into a buffer, which is then folded. `fold_range` calls it at two (the lanes and
    /// the tail), and LLVM does not inline a closure as large as two polynomial math functions
    /// (`ln(1.0 / (1.0 + exp(-z)))`) at two call sites: each step became a scalar call, 20 ns
    /// per step against 3.8 ns computed a block at a time (f64, AVX-512). A cheap `value` (a
    /// product of two reads) is faster without the buffer, and it is inlined either way.
    #[inline(always)]
    fn fold_range_buffered(
        count: usize,
        identity: Self,
        combine: impl Fn(Self, Self) -> Self,
        value: impl FnMut(usize) -> Self,
    ) -> Self {
        Self::fold_range(count, identity, combine, value)
    }
}

/// The plain left-to-right fold.
#[inline(always)]
fn fold_serial<T: Copy>(
    count: usize,
    identity: T,
    combine: impl Fn(T, T) -> T,
    mut value: impl FnMut(usize) -> T,
) -> T {
    let mut acc = identity;
    for step in 0..count {
        acc = combine(acc, value(step));
    }
    acc
}

/// How many of `count` steps go to `lanes` lanes: the whole rows of lanes; none for fewer than
/// `2 * lanes` values, the plain fold: lanes would not fill enough to pay for their tree, and a
/// plain fold per element is what a comprehension around it can run across its own index.
#[inline(always)]
fn lanes_end(count: usize, lanes: usize) -> usize {
    if count < 2 * lanes {
        0
    } else {
        count - count % lanes
    }
}

/// The fold with `L` lanes (a power of two), combined pairwise, then the tail in order.
#[inline(always)]
fn fold_lanes<T: Copy, const L: usize>(
    count: usize,
    identity: T,
    combine: impl Fn(T, T) -> T,
    mut value: impl FnMut(usize) -> T,
) -> T {
    let full = lanes_end(count, L);
    let mut acc = identity;
    if full > 0 {
        let mut lanes = [identity; L];
        let mut start = 0;
        while start < full {
            for (lane, lane_acc) in lanes.iter_mut().enumerate() {
                *lane_acc = combine(*lane_acc, value(start + lane));
            }
            start += L;
        }
        acc = combine_lanes(lanes, &combine);
    }
    for step in full..count {
        acc = combine(acc, value(step));
    }
    acc
}

/// How many rows of lanes [`fold_lanes_buffered`] computes into its buffer at a time (64 f64
/// or 128 f32 values, 512 bytes).
const BUFFERED_ROWS: usize = 8;

/// A block of values on a 64-byte boundary (see [`AlignedLanes`]).
#[repr(C, align(64))]
struct AlignedRows<T, const L: usize>([[T; L]; BUFFERED_ROWS]);

/// [`fold_lanes`]' grouping, with the values computed a block of `BUFFERED_ROWS * L` at a time
/// into a buffer at one call site of `value` (see [`Accumulate::fold_range_buffered`]): the
/// full rows of `L` go to the lanes, and the tail, which lies in the last block, is folded
/// after the lanes' tree.
#[inline(always)]
fn fold_lanes_buffered<T: Copy, const L: usize>(
    count: usize,
    identity: T,
    combine: impl Fn(T, T) -> T,
    mut value: impl FnMut(usize) -> T,
) -> T {
    let full = lanes_end(count, L);
    let mut rows = AlignedRows([[identity; L]; BUFFERED_ROWS]);
    let mut lanes = [identity; L];
    let mut start = 0;
    let mut last_start = 0;
    while start < count {
        let len = (BUFFERED_ROWS * L).min(count - start);
        let block = rows.0.as_flattened_mut();
        for (offset, slot) in block[..len].iter_mut().enumerate() {
            *slot = value(start + offset);
        }
        let full_rows = full.saturating_sub(start).min(len) / L;
        for row in &rows.0[..full_rows] {
            for (lane_acc, &lane_value) in lanes.iter_mut().zip(row) {
                *lane_acc = combine(*lane_acc, lane_value);
            }
        }
        last_start = start;
        start += len;
    }
    let mut acc = if full > 0 { combine_lanes(lanes, &combine) } else { identity };
    // The tail (steps `full..count`, fewer than `L`) is in the last block: `last_start`, a
    // multiple of `L` below `count`, is at most `full`, the largest multiple of `L` up to it.
    for &tail_value in &rows.0.as_flattened()[full - last_start..count - last_start] {
        acc = combine(acc, tail_value);
    }
    acc
}

/// Combines lanes pairwise, halving: lane `l` with `l + L/2`, then `l + L/4`, …
///
/// Behind a call that is never inlined, on purpose: when LLVM's SLP vectoriser sees this tree
/// next to the lane loop it vectorises the loop only two lanes wide; behind a call it uses full
/// vector registers. The call costs a few nanoseconds once per reduction of at least `L` values.
#[inline(always)]
fn combine_lanes<T: Copy, const L: usize>(lanes: [T; L], combine: &impl Fn(T, T) -> T) -> T {
    combine_aligned_lanes(&AlignedLanes(lanes), combine)
}

/// Lanes on a 64-byte boundary: AVX-512 code stores sixteen f32 or eight f64 lanes with one
/// 64-byte store, and [`combine_aligned_lanes`] reads them back in 16-byte parts, which the
/// CPU forwards from the store only when the store does not straddle a cache line. Unaligned,
/// a row sum of 64 values followed by an `exp` of it (a logistic loss's step) took twice as
/// long with AVX-512 as with AVX2.
#[repr(C, align(64))]
struct AlignedLanes<T, const L: usize>([T; L]);

#[inline(never)]
fn combine_aligned_lanes<T: Copy, const L: usize>(lanes: &AlignedLanes<T, L>, combine: &impl Fn(T, T) -> T) -> T {
    combine_tree(lanes.0, combine)
}

/// The tree of [`combine_lanes`], where it is inlined.
#[inline(always)]
fn combine_tree<T: Copy, const L: usize>(mut lanes: [T; L], combine: &impl Fn(T, T) -> T) -> T {
    let mut width = L;
    while width > 1 {
        width /= 2;
        for lane in 0..width {
            lanes[lane] = combine(lanes[lane], lanes[lane + width]);
        }
    }
    lanes[0]
}

/// How many values [`arg_range`] computes into a buffer before comparing them.
const ARG_BLOCK: usize = 128;

/// How many lanes [`arg_range`] takes a block's maximum in: one AVX2 register of f32.
const ARG_LANES: usize = 8;

/// `argmax` (`MAX`) or `argmin` over `start..end`, continuing from `best`: the best value so
/// far and its position, `None` before the first. A value replaces the best only when strictly
/// greater (smaller), so a tie keeps the first position and nothing replaces a NaN; a NaN
/// becomes the first best only where `nan_may_lead` (a chunk that does not start the range
/// would, run serially, only have compared it, never kept it).
///
/// Values are computed once each, in order, exactly as a serial loop, into a buffer of
/// `ARG_BLOCK` (128); the block's best value is found in `ARG_LANES` (8) lanes (plain vector
/// maxima, no positions), and only a block whose best beats the best so far is searched for
/// the first position holding it. That is the serial answer: a block's first value equal to
/// its best is where a serial loop would have stopped replacing (a NaN never equals it).
/// Tracking positions in the lanes instead left LLVM's selects in scalar registers on AVX2.
#[inline(always)]
pub fn arg_range<T: Accumulate + PartialOrd, const MAX: bool>(
    start: usize,
    end: usize,
    mut best: Option<(T, usize)>,
    nan_may_lead: bool,
    mut value: impl FnMut(usize) -> T,
) -> Option<(T, usize)> {
    let better = |candidate: T, top: T| if MAX { candidate > top } else { candidate < top };
    let mut position = start;
    while best.is_none() && position < end {
        let candidate = value(position);
        // `partial_cmp` with itself is `None` only for a NaN.
        if nan_may_lead || candidate.partial_cmp(&candidate).is_some() {
            best = Some((candidate, position));
        }
        position += 1;
    }
    let (mut top, mut at) = best?;
    // A buffer of defaults, not of `top`: filled from a value known only at run time, LLVM
    // kept it in memory and the loop ran 1.6× slower.
    let mut buffer = [T::default(); ARG_BLOCK];
    while position < end {
        let block = &mut buffer[..(end - position).min(ARG_BLOCK)];
        for (offset, slot) in block.iter_mut().enumerate() {
            *slot = value(position + offset);
        }
        let mut lanes = [top; ARG_LANES];
        let whole = block.chunks_exact(ARG_LANES);
        let rest = whole.remainder();
        for values in whole {
            for lane in 0..ARG_LANES {
                // A select, not a branch: a vector maximum.
                lanes[lane] = if better(values[lane], lanes[lane]) { values[lane] } else { lanes[lane] };
            }
        }
        // Two loops, not one over a `chain`: the chained loop measured up to 1.15× slower.
        let mut block_top = lanes[0];
        for &candidate in &lanes[1..] {
            if better(candidate, block_top) {
                block_top = candidate;
            }
        }
        for &candidate in rest {
            if better(candidate, block_top) {
                block_top = candidate;
            }
        }
        if better(block_top, top) {
            // `block_top` is one of the block's values, not a NaN: the search finds it.
            let offset = block.iter().position(|&candidate| candidate == block_top).unwrap_or(0);
            (top, at) = (block_top, position + offset);
        }
        position += block.len();
    }
    Some((top, at))
}

macro_rules! impl_accumulate {
    ($($ty:ty => $fold:ident $(::<$lanes:literal>, $buffered:ident)?),+ $(,)?) => {$(
        impl Accumulate for $ty {
            const PLAIN_BELOW: usize = usize::MAX $(- usize::MAX + 2 * $lanes)?;
            const LANES: usize = 1 $(- 1 + $lanes)?;
            #[inline(always)]
            fn fold_range(
                count: usize,
                identity: Self,
                combine: impl Fn(Self, Self) -> Self,
                value: impl FnMut(usize) -> Self,
            ) -> Self {
                $fold$(::<_, $lanes>)?(count, identity, combine, value)
            }
            $(
            #[inline(always)]
            fn fold_range_buffered(
                count: usize,
                identity: Self,
                combine: impl Fn(Self, Self) -> Self,
                value: impl FnMut(usize) -> Self,
            ) -> Self {
                $buffered::<_, $lanes>(count, identity, combine, value)
            }
            )?
        }
    )+};
}

impl_accumulate! {
    f32 => fold_lanes::<16>, fold_lanes_buffered,
    f64 => fold_lanes::<8>, fold_lanes_buffered,
    i8 => fold_serial,
    i16 => fold_serial,
    i32 => fold_serial,
    i64 => fold_serial,
    isize => fold_serial,
    u8 => fold_serial,
    u16 => fold_serial,
    u32 => fold_serial,
    u64 => fold_serial,
    usize => fold_serial,
    bool => fold_serial,
}

/// `identity ⊕ value(0) ⊕ … ⊕ value(count - 1)`, grouped exactly as
/// [`Accumulate::fold_range`] groups it, with the values computed first, in parallel, when
/// there is work enough for that (`count * work_per_value >= GRAIN`): for a reduction to a
/// final scalar whose steps each run loops, which [`reduce`] would otherwise fold on one
/// thread when they fit in one chunk (`sum i, j` over a 4096² matrix is 4096 steps). The
/// values must be computable in any order and must not fail.
#[inline(always)]
pub fn fold_values<T: Accumulate + Send>(
    count: usize,
    work_per_value: usize,
    identity: T,
    combine: impl Fn(T, T) -> T,
    value: impl Fn(usize) -> T + Sync,
) -> T {
    if count < 2 || !crate::build::parallel_worth(count.saturating_mul(work_per_value)) {
        return T::fold_range(count, identity, combine, value);
    }
    let per_task = GRAIN.div_ceil(work_per_value.max(1));
    let values: Vec<T> = (0..count).into_par_iter().with_min_len(per_task).map(&value).collect();
    T::fold_range(count, identity, combine, |step| values[step])
}

/// The largest [`Accumulate::LANES`]: generated code feeds [`Lanes`] in blocks of this many
/// steps.
pub const LANE_BLOCK: usize = 16;

/// One component of a reduction of tuples or records in progress, grouped exactly as
/// [`Accumulate::fold_range`] groups a reduction of that component alone over the same `count`
/// values, so each component of `sum k { (x[k], x[k] * x[k]) }` has the bits of the scalar
/// `sum` of it. Generated code computes the body once per step and feeds each scalar leaf to
/// its own `Lanes`, in index order: [`Lanes::lane`] for the steps below
/// [`Lanes::block_limit`] (the limit of every component, rounded down to whole blocks of
/// [`LANE_BLOCK`] steps, a loop LLVM can unroll and vectorise), then [`Lanes::push`].
#[derive(Clone, Copy)]
pub struct Lanes<T> {
    lanes: [T; LANE_BLOCK],
    /// The steps that go to the lanes (`0..full`); the others go to `tail`, in order.
    full: usize,
    count: usize,
    /// The identity, then (once the lanes are done) their combination and the tail.
    tail: T,
}

impl<T: Accumulate> Lanes<T> {
    /// A reduction of `count` values starting from `identity`.
    #[inline(always)]
    pub fn new(count: usize, identity: T) -> Self {
        // As `fold_lanes`: fewer than `2L` values are the plain fold.
        let full = if T::LANES == 1 { 0 } else { lanes_end(count, T::LANES) };
        Lanes { lanes: [identity; LANE_BLOCK], full, count, tail: identity }
    }

    /// The steps that [`Lanes::lane`] may take: those below `full` for a type with lanes, all
    /// for one folded in order.
    #[inline(always)]
    pub fn block_limit(&self) -> usize {
        if T::LANES == 1 {
            usize::MAX
        } else {
            self.full
        }
    }

    /// The value of step `block_start + lane`, where `block_start` is a multiple of
    /// [`LANE_BLOCK`] and the step is below [`Lanes::block_limit`].
    #[inline(always)]
    pub fn lane(&mut self, lane: usize, value: T, combine: impl Fn(T, T) -> T) {
        if T::LANES == 1 {
            self.tail = combine(self.tail, value);
        } else {
            let lane = lane % T::LANES;
            self.lanes[lane] = combine(self.lanes[lane], value);
        }
    }

    /// The value of step `position`, steps in order.
    #[inline(always)]
    pub fn push(&mut self, position: usize, value: T, combine: impl Fn(T, T) -> T) {
        if position < self.full {
            let lane = position % T::LANES;
            self.lanes[lane] = combine(self.lanes[lane], value);
        } else {
            if position == self.full && self.full != 0 {
                self.tail = self.combined_lanes(&combine);
            }
            self.tail = combine(self.tail, value);
        }
    }

    /// The result, once all `count` values were given.
    #[inline(always)]
    pub fn finish(self, combine: impl Fn(T, T) -> T) -> T {
        if self.full != 0 && self.full == self.count {
            self.combined_lanes(&combine)
        } else {
            self.tail
        }
    }

    #[inline(always)]
    fn combined_lanes(&self, combine: &impl Fn(T, T) -> T) -> T {
        match T::LANES {
            16 => combine_lanes(first_lanes::<T, 16>(&self.lanes), combine),
            8 => combine_lanes(first_lanes::<T, 8>(&self.lanes), combine),
            4 => combine_lanes(first_lanes::<T, 4>(&self.lanes), combine),
            2 => combine_lanes(first_lanes::<T, 2>(&self.lanes), combine),
            _ => self.lanes[0],
        }
    }
}

/// The first `L` of `LANE_BLOCK` lanes.
#[inline(always)]
fn first_lanes<T: Copy, const L: usize>(lanes: &[T; LANE_BLOCK]) -> [T; L] {
    core::array::from_fn(|lane| lanes[lane])
}

/// The number of steps of a reduction of `count` values that every component's
/// [`Lanes::lane`] may take, in whole blocks of [`LANE_BLOCK`]: `limits` are the components'
/// [`Lanes::block_limit`]s.
#[inline(always)]
pub fn lane_blocks_end(count: usize, limits: &[usize]) -> usize {
    let limit = limits.iter().fold(count, |limit, &other| limit.min(other));
    limit - limit % LANE_BLOCK
}

/// Partial results of consecutive chunks, combined as [`reduce`] documents (neighbours first,
/// then neighbouring pairs, …, an odd one out at any level carried up unchanged) while they
/// arrive in order, in memory that does not grow with their number: a binary counter of
/// perfect subtrees. Each entry holds the combination of a run of chunks whose length is a
/// power of two, lengths strictly decreasing, so there are at most `usize::BITS` entries.
///
/// The tree this builds is the bottom-up one: for `n` chunks, the first `2^k` (`2^k` the
/// largest power of two below `n`) form a perfect tree, combined with the tree of the others,
/// built the same way; the bottom-up levels pair exactly those runs, because `2^k` is a multiple
/// of every smaller run length.
struct PairwiseCombiner<A> {
    /// (number of chunks, their combination), longest run first.
    runs: Vec<(usize, A)>,
}

impl<A> PairwiseCombiner<A> {
    fn new() -> Self {
        PairwiseCombiner { runs: Vec::with_capacity(usize::BITS as usize) }
    }

    /// Appends the result of the next chunk.
    fn push(&mut self, part: A, combine: &impl Fn(A, A) -> A) {
        let mut run = (1usize, part);
        // Two runs of the same length are neighbours at the next level: combine them.
        while let Some((length, _)) = self.runs.last() {
            if *length != run.0 {
                break;
            }
            let Some((length, left)) = self.runs.pop() else { break };
            run = (length * 2, combine(left, run.1));
        }
        self.runs.push(run);
    }

    /// The combination of everything pushed (None if nothing was): the runs from the shortest
    /// (rightmost) up, each the right operand of the one before it.
    fn finish(mut self, combine: &impl Fn(A, A) -> A) -> Option<A> {
        let (_, mut result) = self.runs.pop()?;
        while let Some((_, left)) = self.runs.pop() {
            result = combine(left, result);
        }
        Some(result)
    }
}

/// How many chunks a parallel [`reduce`] folds at a time before combining their results on the
/// calling thread: enough to keep every thread busy for a while, few enough that their results
/// take bounded memory whatever `n` is (a reduction over 2^60 steps must not allocate room for
/// 2^48 partial results, which would abort the process).
const PARALLEL_WINDOW: usize = 1 << 12;

/// Deterministic parallel reduction over `0..n`: the range is cut into fixed chunks of
/// [`REDUCE_CHUNK`] steps that do not depend on the thread count, `fold_chunk(start, end)`
/// reduces one chunk (and must return the identity for an empty range), and the chunk results
/// are combined pairwise with `combine` (which must be associative), on the calling thread.
/// Serial when n is small (below [`GRAIN`] steps). Memory use does not grow with `n`.
///
/// Generated code passes a closure that folds a whole chunk, not one that computes a single
/// value: the per-value work is then inlined into a closure of the generated function, which is
/// compiled with that function's target features (see `dispatch.rs`). A closure called once
/// per value from here could not be inlined into this function, which has none.
#[inline(always)]
pub fn reduce<A, F, C>(n: usize, fold_chunk: F, combine: C) -> A
where
    A: Send,
    F: Fn(usize, usize) -> A + Sync,
    C: Fn(A, A) -> A,
{
    if n <= REDUCE_CHUNK {
        // The single chunk (or none): exactly what the chunked computation gives, inline so
        // that small reductions cost no more than their loop.
        return fold_chunk(0, n);
    }
    reduce_chunks(n, &fold_chunk, &combine)
}

/// [`reduce`] over more than one chunk.
fn reduce_chunks<A, F, C>(n: usize, fold_chunk: &F, combine: &C) -> A
where
    A: Send,
    F: Fn(usize, usize) -> A + Sync,
    C: Fn(A, A) -> A,
{
    let chunks = n.div_ceil(REDUCE_CHUNK);
    // chunk < chunks, so `chunk * REDUCE_CHUNK < n`: no overflow.
    let fold = |chunk: usize| {
        let start = chunk * REDUCE_CHUNK;
        fold_chunk(start, n.min(start.saturating_add(REDUCE_CHUNK)))
    };
    let mut combiner = PairwiseCombiner::new();
    if crate::build::parallel_worth(n) {
        let mut window_start = 0;
        while window_start < chunks {
            let window_end = chunks.min(window_start.saturating_add(PARALLEL_WINDOW));
            let parts: Vec<A> = (window_start..window_end).into_par_iter().map(fold).collect();
            parts.into_iter().for_each(|part| combiner.push(part, combine));
            window_start = window_end;
        }
    } else {
        (0..chunks).for_each(|chunk| combiner.push(fold(chunk), combine));
    }
    match combiner.finish(combine) {
        Some(result) => result,
        None => fold_chunk(0, 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::size;
    use ein_testing::expect_panic;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// [`reduce`] of a step function, each chunk folded from `identity()`.
    fn reduce_steps<A: Send>(
        n: usize,
        identity: impl Fn() -> A + Sync,
        step: impl Fn(A, usize) -> A + Sync,
        combine: impl Fn(A, A) -> A,
    ) -> A {
        reduce(n, |start, end| (start..end).fold(identity(), &step), combine)
    }

    #[test]
    fn values_computed_in_parallel_are_folded_with_the_bits_of_fold_range() {
        let value = |step: usize| ((step * 7919) % 1013) as f32 / 7.0 - 70.0 + 1e-3 * step as f32;
        for count in [0, 1, 2, 31, 32, 33, 1000, 4096] {
            let expected = f32::fold_range(count, 0.0, |a, b| a + b, value);
            for (threads, work) in [(1, 1), (2, 1), (2, 64), (3, 4096), (4, 1 << 20)] {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                let calls = AtomicUsize::new(0);
                let folded = pool.install(|| {
                    fold_values(
                        count,
                        work,
                        0.0f32,
                        |a, b| a + b,
                        |step| {
                            calls.fetch_add(1, Ordering::Relaxed);
                            value(step)
                        },
                    )
                });
                assert_eq!(folded.to_bits(), expected.to_bits(), "{count} values of work {work}, {threads} threads");
                assert_eq!(calls.into_inner(), count, "each value computed once");
            }
        }
        let max = fold_values(5000, 1 << 12, f64::NEG_INFINITY, f64::max, |step| (step % 777) as f64);
        assert_eq!(max, 776.0);
    }

    /// [`reduce`] as generated code calls it: each chunk an [`Accumulate::fold_range`].
    fn reduce_values<A: Accumulate + Send + Sync>(
        n: usize,
        identity: A,
        value: impl Fn(usize) -> A + Sync,
        combine: impl Fn(A, A) -> A + Sync,
    ) -> A {
        reduce(n, |start, end| A::fold_range(end - start, identity, &combine, |step| value(start + step)), &combine)
    }

    fn float_sum(n: usize) -> f64 {
        reduce_steps(n, || 0.0, |sum, k| sum + 1.0 / (k as f64 + 1.0), |left, right| left + right)
    }

    fn in_pool<R: Send>(threads: usize, action: impl FnOnce() -> R + Send) -> R {
        rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(action)
    }

    #[test]
    fn empty_and_tiny_ranges() {
        assert_eq!(reduce_steps(0, || 5i64, |sum, k| sum + k as i64, |left, right| left + right), 5);
        assert_eq!(reduce_steps(1, || 0i64, |sum, k| sum + k as i64 + 1, |left, right| left + right), 1);
        let caller = std::thread::current().id();
        let sum = reduce_steps(
            GRAIN - 1,
            || 0usize,
            |sum, k| {
                assert_eq!(std::thread::current().id(), caller, "small reductions stay serial");
                sum + k
            },
            |left, right| left + right,
        );
        assert_eq!(sum, (GRAIN - 1) * (GRAIN - 2) / 2);
    }

    #[test]
    fn integer_sums_equal_the_serial_sum() {
        for n in [REDUCE_CHUNK - 1, REDUCE_CHUNK, REDUCE_CHUNK + 1, GRAIN, size(1_000_003, GRAIN + 3)] {
            let parallel = reduce_steps(n, || 0i64, |sum, k| sum.wrapping_add((k * k) as i64), i64::wrapping_add);
            let serial = (0..n).fold(0i64, |sum, k| sum.wrapping_add((k * k) as i64));
            assert_eq!(parallel, serial, "n = {n}");
        }
    }

    #[test]
    fn float_sums_do_not_depend_on_the_thread_count() {
        for n in [REDUCE_CHUNK * 3 + 7, size(1_000_003, GRAIN + 7)] {
            let reference = float_sum(n).to_bits();
            for threads in [1, 2, 3, 8] {
                assert_eq!(in_pool(threads, || float_sum(n)).to_bits(), reference, "n = {n}, threads = {threads}");
            }
            // The same chunks folded and combined by hand.
            let mut chunked: Vec<f64> = (0..n.div_ceil(REDUCE_CHUNK))
                .map(|chunk| {
                    let range = chunk * REDUCE_CHUNK..n.min((chunk + 1) * REDUCE_CHUNK);
                    range.fold(0.0, |sum, k| sum + 1.0 / (k as f64 + 1.0))
                })
                .collect();
            while chunked.len() > 1 {
                chunked = chunked.chunks(2).map(|pair| pair.iter().sum()).collect();
            }
            assert_eq!(chunked[0].to_bits(), reference);
        }
    }

    #[test]
    fn the_streaming_combiner_builds_the_bottom_up_tree() {
        let combine = |left: String, right: String| format!("({left} {right})");
        for count in 0..=70 {
            let mut combiner = PairwiseCombiner::new();
            (0..count).for_each(|part| combiner.push(part.to_string(), &combine));
            let streamed = combiner.finish(&combine).unwrap_or_default();
            let mut level: Vec<String> = (0..count).map(|part| part.to_string()).collect();
            while level.len() > 1 {
                level = level
                    .chunks(2)
                    .map(|pair| match pair {
                        [left, right] => combine(left.clone(), right.clone()),
                        [alone] => alone.clone(),
                        _ => unreachable!(),
                    })
                    .collect();
            }
            assert_eq!(streamed, level.pop().unwrap_or_default(), "{count} parts");
        }
    }

    #[test]
    fn a_reduction_over_more_steps_than_memory_could_hold_results_for_allocates_nothing_first() {
        // 2^60 steps are 2^48 chunks, whose results were all collected before being combined
        // (room for 2^48 of them: an allocation that fails and aborts the process). Now they are
        // folded a window at a time: stop (with an `ein:` panic, as a failing element would)
        // in the second window.
        let n = 1usize << 60;
        let calls = AtomicUsize::new(0);
        let message = expect_panic(|| {
            reduce(
                n,
                |start, _| {
                    if calls.fetch_add(1, Ordering::Relaxed) >= 2 * PARALLEL_WINDOW {
                        panic!("ein: stop");
                    }
                    start
                },
                |left, right| left.max(right),
            )
        });
        assert_eq!(message, "ein: stop");
    }

    #[test]
    fn chunk_results_combine_left_to_right() {
        let n = size(100_000, GRAIN + 11);
        let order = reduce_steps(
            n,
            Vec::new,
            |mut visited, k| {
                visited.push(k);
                visited
            },
            |mut left, right| {
                left.extend(right);
                left
            },
        );
        assert_eq!(order, (0..n).collect::<Vec<_>>());
    }

    /// The serial answer `arg_range` must give: the first best, replaced only by a strictly
    /// better value.
    fn serial_arg<T: Copy + PartialOrd>(values: &[T], greatest: bool) -> Option<(T, usize)> {
        let mut best: Option<(T, usize)> = None;
        for (position, &value) in values.iter().enumerate() {
            let replace = match best {
                Some((top, _)) => {
                    if greatest {
                        value > top
                    } else {
                        value < top
                    }
                }
                None => true,
            };
            if replace {
                best = Some((value, position));
            }
        }
        best
    }

    #[test]
    fn arg_ranges_in_lanes_give_the_serial_position() {
        let mut seed = 0x9e37_79b9_u64;
        let mut next = move || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            seed >> 33
        };
        for count in [0, 1, 2, 7, 8, 15, 16, 17, 31, 64, 100, 1000] {
            for round in 0..40 {
                // Few distinct values (many ties), some NaNs, signed zeros.
                let values: Vec<f32> = (0..count)
                    .map(|_| match next() % 16 {
                        0 if round % 3 == 0 => f32::NAN,
                        1 => -0.0,
                        2 => 0.0,
                        r => (r % 5) as f32 - 2.0,
                    })
                    .collect();
                let calls = std::cell::Cell::new(0);
                let counted = |position: usize| {
                    assert_eq!(position, calls.get(), "values are computed once each, in order");
                    calls.set(position + 1);
                    values[position]
                };
                let got = arg_range::<f32, true>(0, count, None, true, counted).map(|(_, at)| at);
                assert_eq!(got, serial_arg(&values, true).map(|(_, at)| at), "argmax of {values:?}");
                assert_eq!(calls.get(), count);
                let got = arg_range::<f32, false>(0, count, None, true, |p| values[p]).map(|(_, at)| at);
                assert_eq!(got, serial_arg(&values, false).map(|(_, at)| at), "argmin of {values:?}");
                let ints: Vec<i64> = (0..count).map(|_| (next() % 7) as i64 - 3).collect();
                let got = arg_range::<i64, true>(0, count, None, true, |p| ints[p]).map(|(_, at)| at);
                assert_eq!(got, serial_arg(&ints, true).map(|(_, at)| at), "argmax of {ints:?}");
                // Continuing from a best found before `split` gives the whole range's answer.
                let split = count / 3;
                let before = serial_arg(&values[..split], true);
                let got = arg_range::<f32, true>(split, count, before, true, |p| values[p]).map(|(_, at)| at);
                assert_eq!(got, serial_arg(&values, true).map(|(_, at)| at), "argmax of {values:?} from {split}");
            }
        }
    }

    #[test]
    fn a_chunk_after_the_first_never_starts_with_a_nan() {
        let values = [f32::NAN, f32::NAN, 1.0, 3.0, f32::NAN, 3.0];
        assert_eq!(arg_range::<f32, true>(1, 6, None, false, |p| values[p]), Some((3.0, 3)));
        assert_eq!(arg_range::<f32, true>(0, 6, None, true, |p| values[p]).map(|(_, at)| at), Some(0));
        assert_eq!(arg_range::<f32, true>(4, 5, None, false, |p| values[p]), None);
    }

    #[test]
    fn argmax_style_reduction_keeps_the_first_tie() {
        let values: Vec<i32> = (0..size(50_000, GRAIN + 1000)).map(|k| (k % 1000) as i32).collect();
        let best = reduce_steps(
            values.len(),
            || (i32::MIN, usize::MAX),
            |best, k| if values[k] > best.0 { (values[k], k) } else { best },
            |left, right| if right.0 > left.0 { right } else { left },
        );
        assert_eq!(best, (999, 999));
    }

    /// The documented grouping, spelled out: fewer than `2L` values in order; else lanes of
    /// stride `L`, combined by halving, then the tail in order.
    fn documented_sum<T: Copy + std::ops::Add<Output = T>>(values: &[T], zero: T, lanes: usize) -> T {
        let full = values.len() - values.len() % lanes;
        if values.len() < 2 * lanes {
            return values.iter().fold(zero, |acc, &value| acc + value);
        }
        let mut accumulators = vec![zero; lanes];
        for (position, &value) in values[..full].iter().enumerate() {
            accumulators[position % lanes] = accumulators[position % lanes] + value;
        }
        let mut width = lanes;
        while width > 1 {
            width /= 2;
            for lane in 0..width {
                accumulators[lane] = accumulators[lane] + accumulators[lane + width];
            }
        }
        values[full..].iter().fold(accumulators[0], |acc, &value| acc + value)
    }

    #[test]
    fn the_plain_fold_bound_is_twice_the_lanes() {
        assert_eq!((f32::PLAIN_BELOW, f64::PLAIN_BELOW), (32, 16));
        assert_eq!((i32::PLAIN_BELOW, u8::PLAIN_BELOW, bool::PLAIN_BELOW), (usize::MAX, usize::MAX, usize::MAX));
        let values: Vec<f32> = (0..40).map(|k| 1.0 / (k as f32 + 0.3)).collect();
        for count in [f32::PLAIN_BELOW - 1, f32::PLAIN_BELOW] {
            let plain = values[..count].iter().fold(0.0f32, |acc, &value| acc + value);
            let folded = f32::fold_range(count, 0.0, |a, b| a + b, |k| values[k]);
            assert_eq!(folded.to_bits() == plain.to_bits(), count < f32::PLAIN_BELOW, "count {count}");
        }
    }

    #[test]
    fn float_folds_use_the_documented_lanes() {
        let values: Vec<f64> =
            (0..1000).map(|k| 1.0 / (k as f64 * 0.37 + 1.0) * if k % 3 == 0 { -1.0 } else { 1.0 }).collect();
        let singles: Vec<f32> = values.iter().map(|&value| value as f32).collect();
        for count in [0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64, 999, 1000] {
            let f64_sum = f64::fold_range(count, 0.0, |a, b| a + b, |k| values[k]);
            assert_eq!(f64_sum.to_bits(), documented_sum(&values[..count], 0.0, 8).to_bits(), "f64, count {count}");
            let f32_sum = f32::fold_range(count, 0.0, |a, b| a + b, |k| singles[k]);
            assert_eq!(f32_sum.to_bits(), documented_sum(&singles[..count], 0.0, 16).to_bits(), "f32, count {count}");
        }
    }

    #[test]
    fn the_buffered_fold_has_the_bits_of_fold_range_and_computes_each_value_once_in_order() {
        let values: Vec<f64> =
            (0..2000).map(|k| 1.0 / (k as f64 * 0.37 + 1.0) * if k % 3 == 0 { -1.0 } else { 1.0 }).collect();
        let singles: Vec<f32> = values.iter().map(|&value| value as f32).collect();
        // Around the plain-fold bound, the lanes, and the buffer's blocks (64 f64, 128 f32).
        let counts = [0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 136, 200, 255, 256, 257, 1999];
        for count in counts {
            let mut order = Vec::new();
            let f64_sum = f64::fold_range_buffered(
                count,
                0.0,
                |a, b| a + b,
                |k| {
                    order.push(k);
                    values[k]
                },
            );
            assert_eq!(
                f64_sum.to_bits(),
                f64::fold_range(count, 0.0, |a, b| a + b, |k| values[k]).to_bits(),
                "f64, {count}"
            );
            assert_eq!(order, (0..count).collect::<Vec<_>>(), "f64, {count}: each step once, in order");
            let f32_sum = f32::fold_range_buffered(count, 0.0, |a, b| a + b, |k| singles[k]);
            assert_eq!(f32_sum.to_bits(), documented_sum(&singles[..count], 0.0, 16).to_bits(), "f32, {count}");
            let f32_max = f32::fold_range_buffered(count, f32::NEG_INFINITY, f32::max, |k| singles[k]);
            assert_eq!(
                f32_max.to_bits(),
                f32::fold_range(count, f32::NEG_INFINITY, f32::max, |k| singles[k]).to_bits()
            );
            // Types folded in one accumulator take the plain fold.
            let int_sum = i64::fold_range_buffered(count, 0, |a, b| a.wrapping_add(b), |k| k as i64 - 500);
            assert_eq!(int_sum, (0..count as i64).map(|k| k - 500).sum::<i64>());
        }
    }

    /// `values` fed to a [`Lanes`] as generated code feeds a component of a tuple reduction:
    /// blocks up to `limit` (the smallest limit of all components) through `lane`, the rest
    /// through `push`.
    fn lanes_fold<T: Accumulate>(values: &[T], identity: T, combine: impl Fn(T, T) -> T + Copy, limit: usize) -> T {
        let mut lanes = Lanes::new(values.len(), identity);
        let end = lane_blocks_end(values.len(), &[lanes.block_limit(), limit]);
        for block_start in (0..end).step_by(LANE_BLOCK) {
            for lane in 0..LANE_BLOCK {
                lanes.lane(lane, values[block_start + lane], combine);
            }
        }
        for (position, &value) in values.iter().enumerate().skip(end) {
            lanes.push(position, value, combine);
        }
        lanes.finish(combine)
    }

    #[test]
    fn lanes_group_each_component_as_its_own_fold() {
        let values: Vec<f64> =
            (0..300).map(|k| 1.0 / (k as f64 * 0.37 + 1.0) * if k % 3 == 0 { -1.0 } else { 1.0 }).collect();
        let singles: Vec<f32> = values.iter().map(|&value| value as f32).collect();
        let integers: Vec<i32> = (0..300).map(|k| k * 7 - 1000).collect();
        for count in [0, 1, 7, 8, 9, 15, 16, 17, 23, 24, 31, 32, 33, 47, 48, 64, 65, 299, 300] {
            // Another component's limit: none, that of an f64 of this length, or a plain fold.
            for limit in [usize::MAX, f64_limit(count), 0] {
                let add = |a: f64, b: f64| a + b;
                let expected = f64::fold_range(count, 0.0, add, |k| values[k]);
                assert_eq!(lanes_fold(&values[..count], 0.0, add, limit).to_bits(), expected.to_bits(), "f64 {count}");
                let expected = f32::fold_range(count, 1.0, |a, b| a * b, |k| singles[k] + 0.5);
                let shifted: Vec<f32> = singles[..count].iter().map(|value| value + 0.5).collect();
                assert_eq!(lanes_fold(&shifted, 1.0, |a, b| a * b, limit).to_bits(), expected.to_bits(), "f32 {count}");
                let expected = f32::fold_range(count, f32::NEG_INFINITY, f32::max, |k| singles[k]);
                assert_eq!(lanes_fold(&singles[..count], f32::NEG_INFINITY, f32::max, limit), expected, "max {count}");
                let expected = i32::fold_range(count, 0, i32::wrapping_add, |k| integers[k]);
                assert_eq!(lanes_fold(&integers[..count], 0, i32::wrapping_add, limit), expected, "i32 {count}");
            }
        }
    }

    fn f64_limit(count: usize) -> usize {
        Lanes::new(count, 0.0f64).block_limit()
    }

    #[test]
    fn folds_call_values_once_each_in_order() {
        for count in [0, 5, 16, 37] {
            let mut order = Vec::new();
            let total = f32::fold_range(
                count,
                0.0,
                |a, b| a + b,
                |k| {
                    order.push(k);
                    1.0
                },
            );
            assert_eq!(order, (0..count).collect::<Vec<_>>());
            assert_eq!(total, count as f32);
            let mut order = Vec::new();
            let total = i64::fold_range(count, 0, i64::wrapping_add, |k| {
                order.push(k);
                k as i64
            });
            assert_eq!(order, (0..count).collect::<Vec<_>>());
            assert_eq!(total, (0..count as i64).sum::<i64>());
        }
    }

    #[test]
    fn float_max_and_min_folds_ignore_nan_like_the_serial_fold() {
        let values = [f64::NAN, 3.0, -1.0, f64::NAN, 7.5, 2.0, 7.5, -9.0, 1.0, f64::NAN, 0.5];
        for count in 0..=values.len() {
            let serial_max = values[..count].iter().fold(f64::NEG_INFINITY, |acc, &value| acc.max(value));
            let serial_min = values[..count].iter().fold(f64::INFINITY, |acc, &value| acc.min(value));
            assert_eq!(f64::fold_range(count, f64::NEG_INFINITY, f64::max, |k| values[k]), serial_max);
            assert_eq!(f64::fold_range(count, f64::INFINITY, f64::min, |k| values[k]), serial_min);
        }
        let all_nan = f32::fold_range(20, f32::NEG_INFINITY, f32::max, |_| f32::NAN);
        assert_eq!(all_nan, f32::NEG_INFINITY);
    }

    #[test]
    fn reduce_values_is_deterministic_and_matches_chunked_folds() {
        let value = |k: usize| 1.0f32 / (k as f32 + 1.0);
        for n in [0, 1, REDUCE_CHUNK - 1, REDUCE_CHUNK * 3 + 7, size(1_000_003, GRAIN + 7)] {
            let reference = reduce_values(n, 0.0f32, value, |a, b| a + b);
            for threads in [1, 2, 3] {
                let again = in_pool(threads, || reduce_values(n, 0.0f32, value, |a, b| a + b));
                assert_eq!(again.to_bits(), reference.to_bits(), "n = {n}, threads = {threads}");
            }
            let mut chunked: Vec<f32> = (0..n.div_ceil(REDUCE_CHUNK))
                .map(|chunk| {
                    let start = chunk * REDUCE_CHUNK;
                    let end = n.min(start + REDUCE_CHUNK);
                    f32::fold_range(end - start, 0.0, |a, b| a + b, |step| value(start + step))
                })
                .collect();
            while chunked.len() > 1 {
                chunked = chunked.chunks(2).map(|pair| pair.iter().sum()).collect();
            }
            assert_eq!(chunked.first().copied().unwrap_or(0.0).to_bits(), reference.to_bits(), "n = {n}");
        }
        let n = size(100_000, GRAIN + 5);
        let integers = reduce_values(n, 0i64, |k| (k * k) as i64, i64::wrapping_add);
        assert_eq!(integers, (0..n).map(|k| (k * k) as i64).sum::<i64>());
        assert!(reduce_values(n, true, |k| k < n, |a, b| a & b));
        assert!(!reduce_values(n, false, |k| k > n, |a, b| a | b));
    }
}
