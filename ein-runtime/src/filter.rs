//! Filters for generated code (`for i where cond { e }`): the elements whose condition holds,
//! in index order, in a vector whose length only the run can tell.
//!
//! Large filters whose steps cannot fail run in three phases over fixed chunks of
//! [`FILTER_CHUNK`] indices (a choice that depends only on `n`): each chunk counts its kept
//! elements (in parallel), an exclusive scan of the counts gives each chunk's offset, then each
//! chunk writes its elements at its offset (in parallel). Otherwise one serial pass appends
//! them, so a failing step fails exactly where the serial semantics says. Either way the
//! result is the same vector.
//!
//! Generated code passes one closure that runs a whole chunk of steps, pushing each kept
//! element into a [`Kept`] (so the per-element work is compiled in the generated function, with
//! its target features; see `reduce.rs`). It is called twice per chunk in the parallel form,
//! and must push the same elements both times (ein's expressions are pure).

use std::mem::MaybeUninit;

use rayon::prelude::*;

/// The number of consecutive indices counted and written together by a parallel filter.
pub const FILTER_CHUNK: usize = 4096;

/// Where a chunk's kept elements go: counted only, written into the chunk's part of the
/// result, or appended.
enum Target<'a, T> {
    Count,
    Slots(&'a mut [MaybeUninit<T>]),
    Append(&'a mut Vec<T>),
}

/// The sink a chunk of a filter pushes its kept elements into, in index order.
pub struct Kept<'a, T> {
    target: Target<'a, T>,
    count: usize,
}

impl<T> Kept<'_, T> {
    /// Keeps `value` (the next element of the result).
    #[inline(always)]
    pub fn push(&mut self, value: T) {
        match &mut self.target {
            Target::Count => {}
            // Checked: a chunk that pushed more than it counted (an impure `extern fn`) panics
            // here instead of writing past its part.
            Target::Slots(slots) => match slots.get_mut(self.count) {
                Some(slot) => {
                    slot.write(value);
                }
                None => changed_between_passes(),
            },
            Target::Append(vector) => vector.push(value),
        }
        self.count += 1;
    }

    /// Keeps `value` if `keep`, without a branch on `keep` (a data-dependent condition would be
    /// mispredicted half the time): the value is written to the next free slot either way, and
    /// only counted when kept, so an unkept one is overwritten by the next.
    #[inline(always)]
    pub fn push_if(&mut self, keep: bool, value: T) {
        match &mut self.target {
            Target::Count => {}
            Target::Slots(slots) => {
                // The slot past a full part does not exist: nothing to write there (a kept
                // value there is caught by the count check).
                if let Some(slot) = slots.get_mut(self.count) {
                    slot.write(value);
                } else if keep {
                    changed_between_passes();
                }
            }
            Target::Append(vector) => {
                vector.reserve(1);
                let length = vector.len();
                vector.spare_capacity_mut()[0].write(value);
                // SAFETY: the element at `length` was just written (a kept value is initialised;
                // an unkept one stays outside the length).
                unsafe { vector.set_len(length + usize::from(keep)) };
            }
        }
        self.count += usize::from(keep);
    }
}

#[cold]
#[inline(never)]
fn changed_between_passes() -> ! {
    panic!("ein: internal error: a filter kept other elements on its second pass (is an `extern fn` impure?)")
}

/// The elements that `chunk(start, end, kept)` pushes for the chunks of `0..n`, in order. In
/// parallel (see the module documentation) when `parallel` and `n` steps are worth it
/// (`parallel_worth` in `build.rs`);
/// `parallel` must be false when a step can fail, so that failures come in index order.
#[inline(always)]
pub fn filter<T, F>(n: usize, parallel: bool, chunk: F) -> Vec<T>
where
    T: Send,
    F: Fn(usize, usize, &mut Kept<'_, T>) + Sync,
{
    if !parallel || !crate::build::parallel_worth(n) {
        // Room for every element of a short filter (no reallocation as it grows), a chunk's
        // worth for a long one (whose kept elements may be few).
        let mut kept = Vec::with_capacity(n.min(FILTER_CHUNK));
        chunk(0, n, &mut Kept { target: Target::Append(&mut kept), count: 0 });
        return kept;
    }
    filter_chunks(n, &chunk)
}

/// The parallel three-phase filter.
fn filter_chunks<T, F>(n: usize, chunk: &F) -> Vec<T>
where
    T: Send,
    F: Fn(usize, usize, &mut Kept<'_, T>) + Sync,
{
    let chunks = n.div_ceil(FILTER_CHUNK);
    let range = |index: usize| {
        let start = index * FILTER_CHUNK;
        (start, n.min(start.saturating_add(FILTER_CHUNK)))
    };
    let counts: Vec<usize> = (0..chunks)
        .into_par_iter()
        .map(|index| {
            let (start, end) = range(index);
            let mut kept = Kept { target: Target::Count, count: 0 };
            chunk(start, end, &mut kept);
            kept.count
        })
        .collect();
    let total: usize = counts.iter().sum();
    let mut result: Vec<T> = Vec::with_capacity(total);
    {
        // Each chunk's part of the result, in order: disjoint, covering `0..total`.
        let mut parts = Vec::with_capacity(chunks);
        let mut rest = &mut result.spare_capacity_mut()[..total];
        for &count in &counts {
            let (part, tail) = std::mem::take(&mut rest).split_at_mut(count);
            parts.push(part);
            rest = tail;
        }
        parts.into_par_iter().enumerate().for_each(|(index, part)| {
            let (start, end) = range(index);
            let expected = part.len();
            let mut kept = Kept { target: Target::Slots(part), count: 0 };
            chunk(start, end, &mut kept);
            if kept.count != expected {
                changed_between_passes();
            }
        });
    }
    // SAFETY: every part was written in full (each chunk pushed exactly its part's length,
    // checked above, and a push never skips a slot), and the parts cover `0..total`.
    unsafe { result.set_len(total) };
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::build::GRAIN;
    use crate::test_support::size;

    fn keep_odd_squares(n: usize, parallel: bool) -> Vec<u64> {
        filter(n, parallel, |start, end, kept| {
            for position in start..end {
                if position % 5 == 0 {
                    kept.push_if(position % 3 != 0, (position * position) as u64);
                } else if position % 3 != 0 {
                    kept.push((position * position) as u64);
                }
            }
        })
    }

    #[test]
    fn parallel_and_serial_filters_agree_in_index_order() {
        for n in [0, 1, 5, FILTER_CHUNK, GRAIN - 1, GRAIN, GRAIN + 1, size(100_003, GRAIN + 7)] {
            let expected: Vec<u64> = (0..n).filter(|k| k % 3 != 0).map(|k| (k * k) as u64).collect();
            assert_eq!(keep_odd_squares(n, true), expected, "n = {n}");
            assert_eq!(keep_odd_squares(n, false), expected, "n = {n}");
        }
    }

    #[test]
    fn a_chunk_that_keeps_more_on_its_second_pass_panics() {
        crate::test_support::in_pool(2, || {
            let calls = std::sync::atomic::AtomicUsize::new(0);
            let message = ein_testing::expect_panic(|| {
                filter(GRAIN * 2, true, |start, end, kept: &mut Kept<'_, usize>| {
                    let extra = calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed) >= GRAIN * 2 / FILTER_CHUNK;
                    for position in start..end {
                        if position % 2 == 0 || extra {
                            kept.push(position);
                        }
                    }
                })
            });
            assert!(message.starts_with("ein: internal error"), "{message}");
        })
    }
}
