//! The run-time choice between the copies of every `ein!` function: the portable one, the one
//! compiled for AVX2 and FMA, and the one compiled for AVX-512 (x86-64-v4).
//!
//! A default `cargo build --release` for x86-64 may use only SSE2, which halves the width of
//! every vector instruction (and quarters it against AVX-512). The macro therefore emits each
//! function's body three times, twice inside an `unsafe fn` marked `#[target_feature(enable =
//! …)]` (closures inherit the features, so the parallel loop bodies get them too), and calls
//! the copy that [`simd_copy`] names. The copies compute bit-identical results:
//! without fast-math, LLVM never contracts `a * b + c` into an FMA, and ein's math functions do
//! not use `mul_add`, so the wider instructions perform the same IEEE operations in the same
//! order (a reduction's accumulators are explicit, whatever the vector width).
//!
//! Which copy runs: `EIN_SIMD=portable`, `EIN_SIMD=avx2` or `EIN_SIMD=avx512` in the
//! environment, read once before the first call, names one (narrowed to what the CPU has: a
//! copy the CPU lacks never runs); `EIN_PORTABLE` (set to anything) is `EIN_SIMD=portable`;
//! without either, [`DEFAULT_COPY`] (AVX2, whose reasons it gives).

use std::sync::atomic::{AtomicU8, Ordering};

/// The copies of a generated function, narrowest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum SimdCopy {
    /// The body as the crate is compiled (SSE2 on a default x86-64 build).
    Portable = 1,
    /// The body compiled for AVX2 and FMA (x86-64-v3).
    Avx2 = 2,
    /// The body compiled for AVX-512 F, VL, BW, DQ and CD with AVX2 and FMA (x86-64-v4).
    Avx512 = 3,
}

impl SimdCopy {
    /// Every copy, narrowest first.
    pub const ALL: [SimdCopy; 3] = [SimdCopy::Portable, SimdCopy::Avx2, SimdCopy::Avx512];

    /// The name `EIN_SIMD` takes for this copy.
    pub fn name(self) -> &'static str {
        match self {
            SimdCopy::Portable => "portable",
            SimdCopy::Avx2 => "avx2",
            SimdCopy::Avx512 => "avx512",
        }
    }

    fn from_u8(value: u8) -> Option<SimdCopy> {
        SimdCopy::ALL.into_iter().find(|copy| *copy as u8 == value)
    }
}

const UNDECIDED: u8 = 0;

/// The copy generated code runs, once decided (`UNDECIDED` before).
static CHOICE: AtomicU8 = AtomicU8::new(UNDECIDED);

/// The copy taken when the environment names none: AVX2, even on CPUs with AVX-512. The
/// AVX-512 copy is faster on compute-bound loops (MRI-Q's sines and cosines 1.55× on a
/// 16-core Xeon) but slower where LLVM vectorises a strided read into gather instructions,
/// which it does freely once AVX-512 is on (nearest-neighbour distances 1.3–1.9× slower on
/// that Xeon and on an AMD EPYC): README, "Wide vector units without flags".
pub const DEFAULT_COPY: SimdCopy = SimdCopy::Avx2;

/// The copy generated code runs: the one the environment names (see the module
/// documentation), else [`DEFAULT_COPY`], narrowed to what the CPU has; or the one
/// [`choose_simd`] chose. Decided once, then one relaxed load.
#[inline]
pub fn simd_copy() -> SimdCopy {
    match SimdCopy::from_u8(CHOICE.load(Ordering::Relaxed)) {
        Some(copy) => copy,
        None => decide(),
    }
}

/// Whether generated code should run its AVX2+FMA copy or a wider one.
#[inline]
pub fn wide_simd() -> bool {
    simd_copy() >= SimdCopy::Avx2
}

/// Whether generated code should run its AVX-512 copy.
#[inline]
pub fn widest_simd() -> bool {
    simd_copy() == SimdCopy::Avx512
}

/// For benchmarks and tests that compare the copies in one process: from the next call on,
/// generated code runs `copy`, or the widest narrower one the CPU has (never a copy the CPU
/// lacks). Returns the copy now chosen.
pub fn choose_simd(copy: SimdCopy) -> SimdCopy {
    let copy = Ord::min(copy, widest_on_this_cpu());
    CHOICE.store(copy as u8, Ordering::Relaxed);
    copy
}

#[cold]
fn decide() -> SimdCopy {
    choose_simd(environment_choice())
}

/// The copy `EIN_SIMD` or `EIN_PORTABLE` names, else [`DEFAULT_COPY`]. An `EIN_SIMD` value
/// that names no copy is an error the user should see, not a silent default.
fn environment_choice() -> SimdCopy {
    if std::env::var_os("EIN_PORTABLE").is_some() {
        return SimdCopy::Portable;
    }
    let unknown =
        |name: &dyn std::fmt::Debug| -> ! { panic!("ein: EIN_SIMD is {name:?}; it takes portable, avx2 or avx512") };
    match std::env::var("EIN_SIMD") {
        Err(std::env::VarError::NotPresent) => DEFAULT_COPY,
        Ok(name) => match SimdCopy::ALL.into_iter().find(|copy| copy.name() == name.trim()) {
            Some(copy) => copy,
            None => unknown(&name),
        },
        Err(std::env::VarError::NotUnicode(name)) => unknown(&name),
    }
}

/// The widest copy this CPU can run.
pub fn widest_on_this_cpu() -> SimdCopy {
    #[cfg(target_arch = "x86_64")]
    {
        let v3 = std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma");
        let v4 = v3
            && std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512vl")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("avx512dq")
            && std::is_x86_feature_detected!("avx512cd");
        if v4 {
            return SimdCopy::Avx512;
        }
        if v3 {
            return SimdCopy::Avx2;
        }
    }
    SimdCopy::Portable
}

#[cfg(test)]
mod tests {
    use super::*;

    // One test, not several: the choice is process-wide, and tests run in parallel.
    #[test]
    fn the_choice_is_stable_follows_the_cpu_and_can_be_changed_for_benchmarks() {
        let first = simd_copy();
        assert_eq!(simd_copy(), first);
        assert!(first <= widest_on_this_cpu(), "{first:?} was chosen on a CPU whose widest copy is narrower");
        if std::env::var_os("EIN_SIMD").is_none() && std::env::var_os("EIN_PORTABLE").is_none() {
            assert_eq!(first, Ord::min(DEFAULT_COPY, widest_on_this_cpu()));
        }
        for copy in SimdCopy::ALL {
            let chosen = choose_simd(copy);
            assert_eq!(simd_copy(), chosen);
            assert!(chosen <= copy && chosen <= widest_on_this_cpu());
            assert_eq!(chosen == copy, copy <= widest_on_this_cpu());
            assert_eq!(wide_simd(), chosen >= SimdCopy::Avx2);
            assert_eq!(widest_simd(), chosen == SimdCopy::Avx512);
        }
        assert_eq!(choose_simd(first), first);
    }
}
