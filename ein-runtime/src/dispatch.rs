//! The run-time choice between the two copies of every `ein!` function: the portable one and
//! the one compiled for AVX2 and FMA.
//!
//! A default `cargo build --release` for x86-64 may use only SSE2, which halves the width of
//! every vector instruction. The macro therefore emits each function's body twice, once inside
//! an `unsafe fn` marked `#[target_feature(enable = "avx2,fma")]` (closures inherit the
//! feature, so the parallel loop bodies get it too), and calls that copy when [`wide_simd`]
//! says the CPU has both features. The two copies compute bit-identical results: without
//! fast-math, LLVM never contracts `a * b + c` into an FMA, and ein's math functions do not
//! use `mul_add`, so the wider instructions perform the same IEEE operations.
//!
//! Setting the environment variable `EIN_PORTABLE` (to anything) before the first call keeps
//! the portable copy, for comparing the two or for ruling the wide one out.

use std::sync::atomic::{AtomicU8, Ordering};

const UNDECIDED: u8 = 0;
const PORTABLE: u8 = 1;
const WIDE: u8 = 2;

static CHOICE: AtomicU8 = AtomicU8::new(UNDECIDED);

/// Whether generated code should run its AVX2+FMA copy: the CPU has both features and
/// `EIN_PORTABLE` is not set. Decided once per process, then one relaxed load.
#[inline]
pub fn wide_simd() -> bool {
    match CHOICE.load(Ordering::Relaxed) {
        WIDE => true,
        PORTABLE => false,
        _ => decide(),
    }
}

/// For benchmarks that compare the two copies in one process: with `true`, generated code
/// runs its portable copy from the next call on; with `false`, the choice is made afresh as
/// [`wide_simd`] makes it (the wide copy only on a CPU with AVX2 and FMA). Never selects the
/// wide copy on a CPU without them.
pub fn prefer_portable(portable: bool) {
    if portable {
        CHOICE.store(PORTABLE, Ordering::Relaxed);
    } else {
        decide();
    }
}

#[cold]
fn decide() -> bool {
    let wide = cpu_has_avx2_and_fma() && std::env::var_os("EIN_PORTABLE").is_none();
    CHOICE.store(if wide { WIDE } else { PORTABLE }, Ordering::Relaxed);
    wide
}

#[cfg(target_arch = "x86_64")]
fn cpu_has_avx2_and_fma() -> bool {
    std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma")
}

#[cfg(not(target_arch = "x86_64"))]
fn cpu_has_avx2_and_fma() -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    // One test, not two: the choice is process-wide, and tests run in parallel.
    #[test]
    fn the_choice_is_stable_follows_the_cpu_and_can_be_overridden_for_benchmarks() {
        let first = wide_simd();
        assert_eq!(wide_simd(), first);
        if first {
            assert!(cpu_has_avx2_and_fma(), "the wide copy was chosen on a CPU without AVX2 and FMA");
        }
        if !cpu_has_avx2_and_fma() {
            assert!(!first);
        }
        prefer_portable(true);
        assert!(!wide_simd());
        prefer_portable(false);
        assert_eq!(wide_simd(), first);
    }
}
