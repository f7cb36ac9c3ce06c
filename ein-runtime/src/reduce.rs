//! [`reduce`]: a parallel reduction over `0..n` whose answer does not depend on the number of
//! threads, so a float `sum` gives the same bits on every machine and every run.
//!
//! The range is cut into chunks of [`REDUCE_CHUNK`] steps, a choice that depends only on `n`;
//! chunks are folded independently (in parallel for large `n`) and their results combined
//! left to right on the calling thread. Running serially computes exactly the same chunks
//! and combinations, so the serial/parallel switch cannot change the answer either.

use rayon::prelude::*;

use crate::build::GRAIN;

/// The number of consecutive steps folded together before results are combined.
pub const REDUCE_CHUNK: usize = GRAIN / 4;

/// Deterministic parallel reduction over 0..n: the range is split into fixed chunks that do not
/// depend on the thread count; each chunk folds `step(acc, k)` starting from `identity()`, and
/// chunk results are combined left to right with `combine`. Serial when n is small (below
/// [`GRAIN`] steps).
pub fn reduce<A: Send, I, S, C>(n: usize, identity: I, step: S, combine: C) -> A
where
    I: Fn() -> A + Sync,
    S: Fn(A, usize) -> A + Sync,
    C: Fn(A, A) -> A,
{
    let chunks = n.div_ceil(REDUCE_CHUNK);
    if chunks <= 1 {
        // The single chunk (or none): exactly what the chunked computation gives.
        return (0..n).fold(identity(), step);
    }
    let fold_chunk = |chunk: usize| {
        let start = chunk * REDUCE_CHUNK;
        let end = n.min(start + REDUCE_CHUNK);
        (start..end).fold(identity(), &step)
    };
    let partial_results: Vec<A> = if n >= GRAIN {
        (0..chunks).into_par_iter().map(fold_chunk).collect()
    } else {
        (0..chunks).map(fold_chunk).collect()
    };
    let mut partial_results = partial_results.into_iter();
    let first = partial_results.next().unwrap_or_else(&identity);
    partial_results.fold(first, combine)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::size;

    fn float_sum(n: usize) -> f64 {
        reduce(n, || 0.0, |sum, k| sum + 1.0 / (k as f64 + 1.0), |left, right| left + right)
    }

    fn in_pool<R: Send>(threads: usize, action: impl FnOnce() -> R + Send) -> R {
        rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(action)
    }

    #[test]
    fn empty_and_tiny_ranges() {
        assert_eq!(reduce(0, || 5i64, |sum, k| sum + k as i64, |left, right| left + right), 5);
        assert_eq!(reduce(1, || 0i64, |sum, k| sum + k as i64 + 1, |left, right| left + right), 1);
        let caller = std::thread::current().id();
        let sum = reduce(
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
            let parallel = reduce(n, || 0i64, |sum, k| sum.wrapping_add((k * k) as i64), i64::wrapping_add);
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
            let chunked = (0..n.div_ceil(REDUCE_CHUNK))
                .map(|chunk| {
                    let range = chunk * REDUCE_CHUNK..n.min((chunk + 1) * REDUCE_CHUNK);
                    range.fold(0.0, |sum, k| sum + 1.0 / (k as f64 + 1.0))
                })
                .reduce(|left, right| left + right)
                .unwrap();
            assert_eq!(chunked.to_bits(), reference);
        }
    }

    #[test]
    fn chunk_results_combine_left_to_right() {
        let n = size(100_000, GRAIN + 11);
        let order = reduce(
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

    #[test]
    fn argmax_style_reduction_keeps_the_first_tie() {
        let values: Vec<i32> = (0..size(50_000, GRAIN + 1000)).map(|k| (k % 1000) as i32).collect();
        let best = reduce(
            values.len(),
            || (i32::MIN, usize::MAX),
            |best, k| if values[k] > best.0 { (values[k], k) } else { best },
            |left, right| if right.0 > left.0 { right } else { left },
        );
        assert_eq!(best, (999, 999));
    }
}
