//! Accumulations for generated code: [`accum`] applies the updates of an `accum` body to a
//! copy of its initial array, in parallel and deterministically.
//!
//! The grouping, which is ein's documented rounding behaviour for float updates (the
//! compiler's note [accum grouping], `ein-core/src/ir/accum.rs`, and the README): the outer
//! loop's `n` iterations are split into `G = accum_groups(n, len, nested)` groups of
//! consecutive iterations; group 0 updates the initial array, every other group a private
//! array of the identity; the G arrays are then combined element by element, neighbours
//! first. `G` depends only on the sizes, never on the thread count, so float results are the
//! same bits on every run and machine; with `G = 1` it is the serial loop.

use rayon::prelude::*;

use crate::array::Array;
use crate::errors::Site;

/// The fewest outer iterations in a group (must equal the compiler's `ACCUM_MIN_GROUP`).
pub const ACCUM_MIN_GROUP: usize = 4096;
/// The most groups (must equal the compiler's `ACCUM_MAX_GROUPS`).
pub const ACCUM_MAX_GROUPS: usize = 64;
/// The work an outer iteration with a loop inside counts as (the compiler's `ACCUM_NESTED_WORK`).
pub const ACCUM_NESTED_WORK: usize = 64;

/// The number of groups for `outer` outer iterations updating `len` elements (the compiler's
/// `ein_core::ir::accum::accum_groups`, the same function).
pub fn accum_groups(outer: usize, len: usize, nested: bool) -> usize {
    let work = outer.saturating_mul(if nested { ACCUM_NESTED_WORK } else { 1 });
    let by_size = outer / ACCUM_MIN_GROUP.div_ceil(if nested { ACCUM_NESTED_WORK } else { 1 });
    let by_target = work.checked_div(len).unwrap_or(ACCUM_MAX_GROUPS);
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
    panic!("ein: index {index} out of range for axis {axis} of `{target}` (size {size}) (at {site})")
}

/// The elements `target` ends with: `body(start, end, data)` applies, in order, the updates of
/// the outer iterations `start..end` to `data` (row-major, the target's shape), stopping at
/// the first index out of range. With `identity` (every update has one operator, `combine`),
/// the iterations are grouped as the module documentation says, and groups run in parallel;
/// without, they run in one serial pass. A failure panics naming the first failing group's
/// index (the first in index order), the target and the source location; nothing of the
/// partial result escapes.
#[allow(clippy::too_many_arguments)]
pub fn accum<T, const N: usize, Body, Combine>(
    target: Array<T, N>,
    name: &str,
    site: &Site,
    outer: usize,
    nested: bool,
    identity: Option<T>,
    body: Body,
    combine: Combine,
) -> Array<T, N>
where
    T: Copy + Send + Sync,
    Body: Fn(usize, usize, &mut [T]) -> Result<(), AccumError> + Sync,
    Combine: Fn(T, T) -> T + Sync,
{
    let shape = target.shape();
    let mut data = target.into_vec();
    let len = data.len();
    let groups = if identity.is_some() { accum_groups(outer, len, nested) } else { 1 };
    let (Some(identity), true) = (identity, groups > 1) else {
        if let Err(error) = body(0, outer, &mut data) {
            out_of_range(error, name, site);
        }
        return Array::from_vec(shape, data);
    };
    let first = std::sync::Mutex::new(Some(data));
    let results: Vec<Result<Vec<T>, AccumError>> = (0..groups)
        .into_par_iter()
        .map(|group| {
            let mut own = match group {
                0 => first.lock().ok().and_then(|mut slot| slot.take()).unwrap_or_default(),
                _ => vec![identity; len],
            };
            let (start, end) = (group_start(outer, groups, group), group_start(outer, groups, group + 1));
            body(start, end, &mut own).map(|()| own)
        })
        .collect();
    let mut arrays = Vec::with_capacity(groups);
    for result in results {
        match result {
            Ok(array) => arrays.push(array),
            Err(error) => out_of_range(error, name, site),
        }
    }
    // Neighbours first, an odd one out carried up; each level in parallel over elements.
    while arrays.len() > 1 {
        let mut next = Vec::with_capacity(arrays.len().div_ceil(2));
        let mut pairs = arrays.into_iter();
        while let Some(mut left) = pairs.next() {
            if let Some(right) = pairs.next() {
                const CHUNK: usize = 1 << 14;
                left.par_chunks_mut(CHUNK).zip(right.par_chunks(CHUNK)).for_each(|(left, right)| {
                    for (element, other) in left.iter_mut().zip(right) {
                        *element = combine(*element, *other);
                    }
                });
            }
            next.push(left);
        }
        arrays = next;
    }
    Array::from_vec(shape, arrays.pop().unwrap_or_default())
}
