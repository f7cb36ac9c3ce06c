//! Accumulations for generated code: [`accum`] applies the updates of an `accum` body to a
//! copy of its initial array, in parallel and deterministically.
//!
//! The grouping, which is ein's documented rounding behaviour for float updates (the
//! compiler's note [accum grouping], `ein-core/src/ir/accum.rs`, and the README): the outer
//! loop's `n` iterations are split into `G = accum_groups(n, len, nested)` groups of
//! consecutive iterations; group 0 updates the initial array, every other group a private
//! array of the identity; the G arrays are then combined element by element, neighbours
//! first. `G` depends only on the sizes, never on the thread count, so float results are the
//! same bits on every run and machine. Two subtrees' arrays are combined as soon as both are
//! done, and an array combined into another is kept (up to 64 MiB in all, for the life of the
//! process) for a later group to fill instead of a new allocation. With `G = 1` (a target
//! larger than an eighth of the work, or mixed operators) the result is the serial loop's, which still runs in parallel when it is long
//! and its updates costly: the updates are recorded by range of the target, then each range
//! applies its own in order.
//!
//! Within a group, a closure that [`AccumPlan::copies`] says can write to four copies of its
//! array in turn ([`in_copies`]): consecutive updates of one element (a histogram of skewed
//! data) then do not each wait for the last one's store. Only exact updates with one operator
//! get separate copies (any grouping gives the same result), and only on a small array, which
//! the four copies keep in the core's first-level cache; every other closure gets the one array
//! four times, which is the serial loop.

use std::cell::Cell;

use rayon::prelude::*;

use crate::array::Array;
use crate::errors::Site;

/// The fewest outer iterations in a group (must equal the compiler's `ACCUM_MIN_GROUP`).
pub const ACCUM_MIN_GROUP: usize = 4096;
/// The most groups (must equal the compiler's `ACCUM_MAX_GROUPS`).
pub const ACCUM_MAX_GROUPS: usize = 64;
/// The work an outer iteration with a loop inside counts as (the compiler's `ACCUM_NESTED_WORK`).
pub const ACCUM_NESTED_WORK: usize = 64;
/// What a private copy costs, in updates per element (the compiler's `ACCUM_COPY_COST`).
pub const ACCUM_COPY_COST: usize = 4;

/// The number of groups for `outer` outer iterations updating `len` elements (the compiler's
/// `ein_core::ir::accum::accum_groups`, the same function).
pub fn accum_groups(outer: usize, len: usize, nested: bool) -> usize {
    let work = outer.saturating_mul(if nested { ACCUM_NESTED_WORK } else { 1 });
    let by_size = outer / ACCUM_MIN_GROUP.div_ceil(if nested { ACCUM_NESTED_WORK } else { 1 });
    let by_target = work.checked_div(len.saturating_mul(ACCUM_COPY_COST)).unwrap_or(ACCUM_MAX_GROUPS);
    let groups = by_size.min(by_target).min(ACCUM_MAX_GROUPS).min(outer);
    if groups < 2 {
        1
    } else {
        groups
    }
}

fn group_start(outer: usize, groups: usize, group: usize) -> usize {
    ((group as u128 * outer as u128) / groups as u128) as usize
}

/// An update whose index is out of range: which index, on which axis, of what size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AccumError {
    pub index: i64,
    pub axis: usize,
    pub size: usize,
}

/// `index` as a position on an axis of `size`, or the error naming it.
#[inline(always)]
pub fn accum_position(index: i64, size: usize, axis: usize) -> Result<usize, AccumError> {
    if (index as u64) < size as u64 {
        Ok(index as usize)
    } else {
        Err(AccumError { index, axis, size })
    }
}

#[cold]
#[inline(never)]
fn out_of_range(error: AccumError, target: &str, site: &Site) -> ! {
    let AccumError { index, axis, size } = error;
    // `u64` and `usize` indices above `i64::MAX` count as it.
    if index == i64::MAX {
        panic!("ein: index i64::MAX or more out of range for axis {axis} of `{target}` (size {size}) (at {site})")
    }
    panic!("ein: index {index} out of range for axis {axis} of `{target}` (size {size}) (at {site})")
}

/// How a generated accumulation's closures run (see [`accum`]).
#[derive(Clone, Copy, Debug)]
pub struct AccumPlan {
    /// The outer loop has a loop inside (its iterations count as more work).
    pub nested: bool,
    /// Integer or boolean elements: any grouping gives the same result.
    pub exact: bool,
    /// The compiler judged an update costly enough to record and replay ([`accum`]).
    pub partitioned: bool,
    /// How many low bits of a recorded key hold the update's operator number.
    pub op_bits: u32,
    /// The apply closure writes its updates through [`accum_copies`] and [`in_copies`], so it
    /// can be given four copies of its array.
    pub copies: bool,
}

/// The largest array, in bytes, given four copies: the four stay in a core's L1 cache.
/// Measured on one thread (AMD EPYC, 2^24 `u32` counts, four copies against one): 256 bins
/// 3.6 against 13.3 ms when 7 of 8 values are one bin, 3.9 against 4.1 on uniform bins;
/// 4096 bins (four copies of 16 KiB) 9.6 against 4.1 on uniform bins.
const COPIES_MAX_BYTES: usize = 4096;

/// How many updates per element of the array a group must make to be given copies (their
/// zeroing and summing costs about six passes over the array).
const COPIES_MIN_UPDATES: usize = 8;

/// The distance, in elements, between the four copies of an array of `len` elements in one
/// buffer, or 0 for one copy. The copies are a cache line more than the array apart, so the
/// same element of two copies is never a multiple of 4 KiB away (addresses that far apart
/// wait for each other's stores on many x86 cores).
fn copies_stride<T>(plan: &AccumPlan, has_identity: bool, len: usize, work: usize) -> usize {
    let size = std::mem::size_of::<T>().max(1);
    let fits = len.saturating_mul(size) <= COPIES_MAX_BYTES;
    let wanted = plan.copies && plan.exact && has_identity && len > 0 && fits;
    if wanted && work >= COPIES_MIN_UPDATES * len {
        len + 64usize.div_ceil(size)
    } else {
        0
    }
}

/// The four copies of an accumulation's array in `data` (`len` elements each, `stride`
/// elements apart; four times the one array when `stride` is 0), as cells, so that one loop
/// may write them in turn (see [`in_copies`]).
#[inline(always)]
pub fn accum_copies<T>(data: &mut [T], len: usize, stride: usize) -> [&[Cell<T>]; 4] {
    let cells = Cell::from_mut(data).as_slice_of_cells();
    [0, 1, 2, 3].map(|copy| &cells[copy * stride..copy * stride + len])
}

/// `update(position, copy)` for every position of `start..end`, in order, each four
/// consecutive positions into the four copies in turn (the remainder into the first).
#[inline(always)]
pub fn in_copies<T>(
    start: usize,
    end: usize,
    copies: [&[Cell<T>]; 4],
    mut update: impl FnMut(usize, &[Cell<T>]) -> Result<(), AccumError>,
) -> Result<(), AccumError> {
    let mut position = start;
    while end.saturating_sub(position) >= 4 {
        update(position, copies[0])?;
        update(position + 1, copies[1])?;
        update(position + 2, copies[2])?;
        update(position + 3, copies[3])?;
        position += 4;
    }
    while position < end {
        update(position, copies[0])?;
        position += 1;
    }
    Ok(())
}

/// `body(start, end, data, stride)` on `data` (the group's array of `len` elements), with the
/// three other copies `stride` apart appended when `stride` is not 0 (holding `identity`),
/// then added into the first.
fn run_in_copies<T: Copy>(
    mut data: Vec<T>,
    stride: usize,
    identity: Option<T>,
    apply: &impl Fn(usize, T, T) -> T,
    body: impl FnOnce(&mut [T], usize) -> Result<(), AccumError>,
) -> Result<Vec<T>, AccumError> {
    let len = data.len();
    let Some(identity) = identity.filter(|_| stride > 0) else {
        return body(&mut data, 0).map(|()| data);
    };
    data.resize(len + 3 * stride, identity);
    body(&mut data, stride)?;
    let (first, others) = data.split_at_mut(len);
    for copy in 1..4 {
        let start = copy * stride - len;
        for (element, other) in first.iter_mut().zip(&others[start..start + len]) {
            *element = apply(0, *element, *other);
        }
    }
    data.truncate(len);
    Ok(data)
}

/// `run(group, start, end)` for each of `groups` groups of consecutive outer iterations
/// `start..end`, in parallel; their results in group order. The first group (in iteration
/// order) that fails decides how the whole fails, whichever way it does: an index out of
/// range panics naming it, any other panic (a negative loop size, a division by zero) goes
/// on as it was; so the failure reported is the one the serial loop meets first, on any
/// number of threads.
fn in_groups<R: Send>(
    outer: usize,
    groups: usize,
    target: &str,
    site: &Site,
    run: impl Fn(usize, usize, usize) -> Result<R, AccumError> + Sync,
) -> Vec<R> {
    let one = |group| caught(|| run(group, group_start(outer, groups, group), group_start(outer, groups, group + 1)));
    let results: Result<Vec<R>, GroupFailure> = if crate::build::parallel_pool() {
        let results: Vec<Result<R, GroupFailure>> = (0..groups).into_par_iter().map(one).collect();
        results.into_iter().collect()
    } else {
        // In order: the first failure stops the loop.
        (0..groups).map(one).collect()
    };
    results.unwrap_or_else(|failure| failure.raise(target, site))
}

/// How a group failed: an index out of range, or a panic to resume.
enum GroupFailure {
    OutOfRange(AccumError),
    Panic(Box<dyn std::any::Any + Send>),
}

impl GroupFailure {
    fn raise(self, target: &str, site: &Site) -> ! {
        match self {
            GroupFailure::OutOfRange(error) => out_of_range(error, target, site),
            GroupFailure::Panic(panic) => std::panic::resume_unwind(panic),
        }
    }
}

/// `run()`, with a panic caught when groups run in parallel. Nothing a group wrote is used
/// after it panicked: its panic is resumed, or an earlier group's failure is reported instead.
fn caught<R>(run: impl FnOnce() -> Result<R, AccumError>) -> Result<R, GroupFailure> {
    if !crate::build::parallel_pool() {
        return run().map_err(GroupFailure::OutOfRange);
    }
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
        Ok(result) => result.map_err(GroupFailure::OutOfRange),
        Err(panic) => Err(GroupFailure::Panic(panic)),
    }
}

/// The arrays `leaf(group)` of the groups in `groups`, combined in the order of the module
/// documentation (neighbours first, an odd one out carried up): that tree's left subtree holds
/// the largest power of two of groups fewer than all, its right subtree the rest, each built
/// the same way. Subtrees run in parallel and are combined as soon as both are done, so only
/// a few arrays per thread are alive at once, not one per group. The first group (in
/// iteration order) that fails decides how the whole fails (see [`in_groups`]); without a
/// parallel pool the groups run in order and the first failure stops them.
fn in_tree<T: Send>(
    groups: std::ops::Range<usize>,
    leaf: &(impl Fn(usize) -> Result<Vec<T>, AccumError> + Sync),
    combine: &(impl Fn(&mut Vec<T>, Vec<T>) + Sync),
) -> Result<Vec<T>, GroupFailure> {
    let count = groups.len();
    if count <= 1 {
        return caught(|| leaf(groups.start));
    }
    let split = groups.start + (1 << (count - 1).ilog2());
    let (left, right) = if crate::build::parallel_pool() {
        rayon::join(|| in_tree(groups.start..split, leaf, combine), || in_tree(split..groups.end, leaf, combine))
    } else {
        let left = in_tree(groups.start..split, leaf, combine)?;
        (Ok(left), in_tree(split..groups.end, leaf, combine))
    };
    let mut left = left?;
    combine(&mut left, right?);
    Ok(left)
}

/// Where the updates of a partitioned accumulation go (see [`accum`]): one list per range of
/// the target, each in the order the updates were made.
pub struct AccumSink<T> {
    /// `key >> shift` is the range of an update's key.
    shift: u32,
    ranges: Vec<Vec<(usize, T)>>,
}

impl<T> AccumSink<T> {
    fn new(ranges: usize, shift: u32, expected: usize) -> AccumSink<T> {
        let each = expected.div_ceil(ranges.max(1));
        AccumSink { shift, ranges: (0..ranges).map(|_| Vec::with_capacity(each)).collect() }
    }

    /// Records an update: `key` is its flat position in the target (row-major), shifted left
    /// by the operator bits and holding its operator's number in them; `value` its operand.
    #[inline(always)]
    pub fn push(&mut self, key: usize, value: T) {
        self.ranges[key >> self.shift].push((key, value));
    }
}

/// The fewest target elements in one range of a partitioned accumulation.
const ACCUM_MIN_RANGE: usize = 1 << 12;

/// The elements `target` ends with: `body(start, end, data, stride)` applies, in order, the
/// updates of the outer iterations `start..end` to `data` (row-major, the target's shape; the
/// copies of module documentation `stride` elements apart when `stride` is not 0), stopping at
/// the first index out of range; `record(start, end, sink)` makes the same updates but
/// records them in `sink` instead; `apply(op, element, operand)` applies one update of
/// operator number `op` (the number `op_bits` low bits of a recorded key hold).
///
/// With `identity` (every update has one operator) and more than one group, the iterations
/// are grouped as the module documentation says, and groups run in parallel; when the plan is
/// `exact` (integer or boolean elements, where any grouping gives the same result), in no more
/// groups than the pool has threads. Otherwise the
/// result is the serial loop's: when `partitioned` (the compiler judged an update costly),
/// enough outer iterations to share and more than one thread, the updates are recorded in
/// parallel (consecutive iterations per task) by the range of the target they fall in, then
/// every range applies its updates in parallel with the others, each in iteration order:
/// every element sees the serial loop's updates in the serial loop's order, so the result is
/// the same bits. A failure panics naming the first failing
/// group's (or task's) index (the first in index order), the target and the source location;
/// nothing of the partial result escapes.
#[allow(clippy::too_many_arguments)]
pub fn accum<T, const N: usize, Body, Record, Apply>(
    target: Array<T, N>,
    name: &str,
    site: &Site,
    outer: usize,
    identity: Option<T>,
    plan: AccumPlan,
    body: Body,
    record: Record,
    apply: Apply,
) -> Array<T, N>
where
    T: Copy + Send + Sync + 'static,
    Body: Fn(usize, usize, &mut [T], usize) -> Result<(), AccumError> + Sync,
    Record: Fn(usize, usize, &mut AccumSink<T>) -> Result<(), AccumError> + Sync,
    Apply: Fn(usize, T, T) -> T + Sync,
{
    let AccumPlan { nested, exact, partitioned, op_bits, .. } = plan;
    let shape = target.shape();
    let mut data = target.into_vec();
    let len = data.len();
    let work = |iterations: usize| iterations.saturating_mul(if nested { ACCUM_NESTED_WORK } else { 1 });
    let groups = match identity {
        // Exact updates (integers, booleans) give the same result in any grouping: no more
        // groups than threads, each private copy zeroed and added only to be run in parallel.
        Some(_) if exact => accum_groups(outer, len, nested).min(rayon::current_num_threads()),
        Some(_) => accum_groups(outer, len, nested),
        None => 1,
    };
    let (Some(group_identity), true) = (identity, groups > 1) else {
        let threads = rayon::current_num_threads();
        let tasks = (outer / ACCUM_MIN_GROUP.div_ceil(if nested { ACCUM_NESTED_WORK } else { 1 })).min(4 * threads);
        if partitioned && tasks >= 2 && threads > 1 && len > 0 {
            apply_partitioned(&mut data, name, site, outer, tasks, op_bits, nested, &record, &apply);
        } else {
            let stride = copies_stride::<T>(&plan, identity.is_some(), len, work(outer));
            match run_in_copies(data, stride, identity, &apply, |data, stride| body(0, outer, data, stride)) {
                Ok(done) => data = done,
                Err(error) => out_of_range(error, name, site),
            }
        }
        return Array::from_vec(shape, data);
    };
    let first = std::sync::Mutex::new(Some(data));
    let leaf = |group: usize| {
        let (start, end) = (group_start(outer, groups, group), group_start(outer, groups, group + 1));
        let own = match group {
            0 => first.lock().ok().and_then(|mut slot| slot.take()).unwrap_or_default(),
            _ => match crate::memory::take_spare::<T>(len, usize::MAX) {
                Some(mut spare) => {
                    spare.resize(len, group_identity);
                    spare
                }
                None => vec![group_identity; len],
            },
        };
        let stride = copies_stride::<T>(&plan, true, len, work(end - start));
        run_in_copies(own, stride, identity, &apply, |own, stride| body(start, end, own, stride))
    };
    let combine = |left: &mut Vec<T>, right: Vec<T>| {
        const CHUNK: usize = 1 << 14;
        let add = |(left, right): (&mut [T], &[T])| {
            for (element, other) in left.iter_mut().zip(right) {
                *element = apply(0, *element, *other);
            }
        };
        if crate::build::parallel_pool() && len > CHUNK {
            left.par_chunks_mut(CHUNK).zip(right.par_chunks(CHUNK)).for_each(add);
        } else {
            add((left, &right));
        }
        crate::memory::keep_spare(right);
    };
    match in_tree(0..groups, &leaf, &combine) {
        Ok(done) => Array::from_vec(shape, done),
        Err(failure) => failure.raise(name, site),
    }
}

/// The history of an accumulation (only in derivatives: the compiler's `AccumValue`): `body(data,
/// found, sizes)` applies every update to `data` serially, in the order of its loops or, when
/// `reversed`, in the reverse order, pushing onto `found` the element each update finds (0
/// where its condition fails) and setting `sizes` to its loops' sizes. The elements found, in
/// the forward order, form an array with one axis per loop and a last of `updates` (the
/// updates per iteration). An update out of range panics naming it, the target and the site.
pub fn accum_history<T, const N: usize, const M: usize>(
    target: Array<T, N>,
    name: &str,
    site: &Site,
    reversed: bool,
    updates: usize,
    body: impl FnOnce(&mut [T], &mut Vec<T>, &mut [usize]) -> Result<(), AccumError>,
) -> Array<T, M>
where
    T: Copy,
{
    let mut data = target.into_vec();
    let mut found = Vec::new();
    let mut shape = [0usize; M];
    let Some((last, loops)) = shape.split_last_mut() else {
        panic!("ein internal error: a history without its updates axis (at {site})")
    };
    *last = updates;
    if let Err(error) = body(&mut data, &mut found, loops) {
        out_of_range(error, name, site);
    }
    if reversed {
        found.reverse();
    }
    Array::from_vec(shape, found)
}

/// The serial loop's updates to `data`, made in parallel: `tasks` tasks record the updates of
/// consecutive outer iterations by range of the target, then every range applies the updates
/// that fall in it, task by task, each task's in order (see [`accum`]).
#[allow(clippy::too_many_arguments)]
fn apply_partitioned<T, Record, Apply>(
    data: &mut [T],
    name: &str,
    site: &Site,
    outer: usize,
    tasks: usize,
    op_bits: u32,
    nested: bool,
    record: &Record,
    apply: &Apply,
) where
    T: Copy + Send + Sync,
    Record: Fn(usize, usize, &mut AccumSink<T>) -> Result<(), AccumError> + Sync,
    Apply: Fn(usize, T, T) -> T + Sync,
{
    let len = data.len();
    // About four ranges per thread, none smaller than ACCUM_MIN_RANGE: a range's elements then
    // fit in a core's cache while its updates land on them.
    let wanted = len.div_ceil(4 * rayon::current_num_threads()).max(ACCUM_MIN_RANGE);
    let range_shift = wanted.next_power_of_two().trailing_zeros();
    let ranges = len.div_ceil(1 << range_shift);
    let shift = range_shift + op_bits;
    let sinks = in_groups(outer, tasks, name, site, |_, start, end| {
        let mut sink = AccumSink::new(ranges, shift, if nested { 0 } else { end - start });
        record(start, end, &mut sink).map(|()| sink)
    });
    let op_mask = (1usize << op_bits) - 1;
    data.par_chunks_mut(1 << range_shift).enumerate().for_each(|(range, elements)| {
        let base = range << range_shift;
        for sink in &sinks {
            for &(key, operand) in &sink.ranges[range] {
                let element = &mut elements[(key >> op_bits) - base];
                *element = apply(key & op_mask, *element, operand);
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A histogram of `outer` values (`bin(k)` the k-th) into `bins`, in a pool of `threads`,
    /// written as generated code writes it (through [`in_copies`]): the counts, the number of
    /// groups the updates ran in and the largest stride a group was given.
    fn histogram(
        outer: usize,
        bins: usize,
        plan: AccumPlan,
        threads: usize,
        bin: impl Fn(usize) -> usize + Sync,
    ) -> (Vec<u32>, usize, usize) {
        let (groups, widest) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let site = Site { file: "accum.rs", line: 1, column: 1 };
        let run = || {
            accum(
                Array::from_vec([bins], vec![0u32; bins]),
                "h",
                &site,
                outer,
                Some(0),
                plan,
                |start, end, data: &mut [u32], stride| {
                    groups.fetch_add(1, Ordering::Relaxed);
                    widest.fetch_max(stride, Ordering::Relaxed);
                    let copies = accum_copies(data, bins, stride);
                    in_copies(start, end, copies, |k, copy| {
                        copy[bin(k)].set(copy[bin(k)].get() + 1);
                        Ok(())
                    })
                },
                |_, _, _: &mut AccumSink<u32>| Ok(()),
                |_, left, right| left + right,
            )
        };
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let counts = pool.install(run).into_vec();
        (counts, groups.load(Ordering::Relaxed), widest.load(Ordering::Relaxed))
    }

    fn plan(exact: bool, copies: bool) -> AccumPlan {
        AccumPlan { nested: false, exact, partitioned: false, op_bits: 0, copies }
    }

    fn serial_counts(outer: usize, bins: usize, bin: impl Fn(usize) -> usize) -> Vec<u32> {
        let mut serial = vec![0u32; bins];
        (0..outer).for_each(|k| serial[bin(k)] += 1);
        serial
    }

    #[test]
    fn exact_updates_run_in_no_more_groups_than_threads() {
        let (outer, bins) = (1 << 18, 1000);
        let bin = |k: usize| k * 7919 % bins;
        let serial = serial_counts(outer, bins, bin);
        let groups = |exact, threads| {
            let (counts, groups, _) = histogram(outer, bins, plan(exact, false), threads, bin);
            (counts, groups)
        };
        // The documented grouping: 64 groups (2^18 / 4096), whatever the pool.
        assert_eq!(groups(false, 1), (serial.clone(), 64));
        assert_eq!(groups(false, 3), (serial.clone(), 64));
        // Exact: one group on one thread (the serial loop), three on three; the same counts.
        assert_eq!(groups(true, 1), (serial.clone(), 1));
        assert_eq!(groups(true, 3), (serial, 3));
    }

    #[test]
    fn small_exact_targets_count_in_four_copies() {
        for (outer, bins, copies) in
            [(1 << 16, 1, true), (1 << 16, 7, true), (1 << 16, 1000, true), (4003, 1000, false)]
        {
            // Skewed: 7 in 8 values are bin 3.
            let bin = |k: usize| if k.is_multiple_of(8) { k * 7919 % bins } else { 3 % bins };
            let serial = serial_counts(outer, bins, bin);
            for threads in [1, 3] {
                let (counts, _, stride) = histogram(outer, bins, plan(true, true), threads, bin);
                assert_eq!(counts, serial, "{outer} values into {bins} bins, {threads} threads");
                // Four copies only where the work pays for them; a cache line between them.
                assert_eq!(stride, if copies { bins + 16 } else { 0 }, "{outer} values into {bins} bins");
            }
        }
        // 2000 four-byte bins are more than four copies keep in L1; float updates (not exact)
        // and closures that do not write copies get one.
        let bin = |k: usize| k % 7;
        assert_eq!(histogram(1 << 16, 2000, plan(true, true), 1, bin).2, 0);
        assert_eq!(histogram(1 << 16, 7, plan(false, true), 1, bin).2, 0);
        assert_eq!(histogram(1 << 16, 7, plan(true, false), 1, bin).2, 0);
    }

    #[test]
    fn in_copies_stops_at_the_first_failing_update() {
        let mut data = vec![0u8; 10];
        let copies = accum_copies(&mut data, 10, 0);
        let mut seen = Vec::new();
        let result = in_copies(0, 9, copies, |position, copy| {
            seen.push(position);
            copy[0].set(copy[0].get() + 1);
            accum_position(if position == 6 { 10 } else { 0 }, copy.len(), 0).map(|_| ())
        });
        assert_eq!(result, Err(AccumError { index: 10, axis: 0, size: 10 }));
        assert_eq!(seen, [0, 1, 2, 3, 4, 5, 6]);
        assert_eq!(data[0], 7);
    }
}
