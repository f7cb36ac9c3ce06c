//! Helpers of the crate's unit tests that only the runtime needs (the shared ones, such as
//! `expect_panic`, come from the `ein-testing` crate).

use ein_testing::Rng;

/// `normal`, or the smaller `under_miri` when running under Miri, which is far slower; both
/// must still exercise the same code paths (for example, exceed `GRAIN` to run in parallel).
pub(crate) fn size(normal: usize, under_miri: usize) -> usize {
    if cfg!(miri) {
        under_miri
    } else {
        normal
    }
}

/// `count` deterministic values in `[-1, 1)`: operands whose products and sums are checked
/// against loops.
pub(crate) fn numbers(count: usize, seed: u64) -> Vec<f64> {
    let mut rng = Rng::new(seed);
    (0..count).map(|_| rng.uniform(-1.0, 1.0)).collect()
}

/// `action` run inside a rayon pool of `threads` threads: parallel paths then take work as
/// small as `GRAIN` (from outside a pool they wait for `OUTSIDE_GRAIN`).
pub(crate) fn in_pool<R: Send>(threads: usize, action: impl FnOnce() -> R + Send) -> R {
    rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("a pool").install(action)
}
