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
//! environment, read once before the first call, names one for every function (narrowed to
//! what the CPU has: a copy the CPU lacks never runs); `EIN_PORTABLE` (set to anything) is
//! `EIN_SIMD=portable`. Without either, the macro's own choice per function: AVX-512 for a
//! function whose loops call ein's polynomial math functions ([`DEFAULT_MATH_COPY`]), AVX2 for
//! others ([`DEFAULT_COPY`]), each narrowed to the CPU; the constants say why.

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

    #[inline]
    fn from_u8(value: u8) -> Option<SimdCopy> {
        match value {
            1 => Some(SimdCopy::Portable),
            2 => Some(SimdCopy::Avx2),
            3 => Some(SimdCopy::Avx512),
            _ => None,
        }
    }
}

const UNDECIDED: u8 = 0;

/// The copy a function whose loops call none of ein's polynomial math functions runs, once
/// decided (`UNDECIDED` before).
static PLAIN_COPY: AtomicU8 = AtomicU8::new(UNDECIDED);
/// The copy a function whose loops call them runs, once decided (`UNDECIDED` before).
static MATH_COPY: AtomicU8 = AtomicU8::new(UNDECIDED);

/// The copy taken when the environment names none, for a function that calls none of ein's
/// polynomial math functions (`exp`, `ln`, `sin`, `cos`, `tanh`): AVX2, even on CPUs with
/// AVX-512. Once AVX-512 is on, LLVM vectorises strided reads into gather instructions, slow
/// on current Intel and AMD cores (nearest-neighbour distances 1.3–2× slower on a 16-core Xeon
/// and on an AMD EPYC): README, "Wide vector units without flags".
pub const DEFAULT_COPY: SimdCopy = SimdCopy::Avx2;

/// The copy taken when the environment names none, for a function that calls ein's polynomial
/// math functions: AVX-512 where the CPU has it. Those functions are compute-bound and their
/// polynomials run twice as wide (MRI-Q's sines and cosines 1.5× faster, softmax 1.2× on the
/// Xeon).
pub const DEFAULT_MATH_COPY: SimdCopy = SimdCopy::Avx512;

/// The copy generated code runs: the one the environment names (see the module
/// documentation), else [`DEFAULT_MATH_COPY`] for a function that calls ein's polynomial math
/// (`math`) and [`DEFAULT_COPY`] for others, narrowed to what the CPU has; or the one
/// [`choose_simd`] chose. Decided once, then one relaxed load.
#[inline]
pub fn simd_copy(math: bool) -> SimdCopy {
    let decided = if math { &MATH_COPY } else { &PLAIN_COPY };
    match SimdCopy::from_u8(decided.load(Ordering::Relaxed)) {
        Some(copy) => copy,
        None => decide(math),
    }
}

/// Whether generated code should run its AVX2+FMA copy or a wider one (`math`: see
/// [`simd_copy`]).
#[inline]
pub fn wide_simd(math: bool) -> bool {
    simd_copy(math) >= SimdCopy::Avx2
}

/// Whether generated code should run its AVX-512 copy (`math`: see [`simd_copy`]).
#[inline]
pub fn widest_simd(math: bool) -> bool {
    simd_copy(math) == SimdCopy::Avx512
}

/// For benchmarks and tests that compare the copies in one process: from the next call on,
/// every generated function runs `copy`, or the widest narrower one the CPU has (never a copy
/// the CPU lacks). Returns the copy now chosen. [`reset_simd`] goes back to the defaults.
pub fn choose_simd(copy: SimdCopy) -> SimdCopy {
    let copy = Ord::min(copy, widest_on_this_cpu());
    PLAIN_COPY.store(copy as u8, Ordering::Relaxed);
    MATH_COPY.store(copy as u8, Ordering::Relaxed);
    copy
}

/// Undoes [`choose_simd`]: the copies are chosen afresh, as on the first call.
pub fn reset_simd() {
    decide(false);
    decide(true);
}

#[cold]
fn decide(math: bool) -> SimdCopy {
    let named = environment_choice().unwrap_or(if math { DEFAULT_MATH_COPY } else { DEFAULT_COPY });
    let copy = Ord::min(named, widest_on_this_cpu());
    let decided = if math { &MATH_COPY } else { &PLAIN_COPY };
    decided.store(copy as u8, Ordering::Relaxed);
    copy
}

/// The copy `EIN_SIMD` or `EIN_PORTABLE` names, if any. An `EIN_SIMD` value that names no copy
/// is an error the user should see, not a silent default.
fn environment_choice() -> Option<SimdCopy> {
    let simd = std::env::var_os("EIN_SIMD");
    match choice_named(std::env::var_os("EIN_PORTABLE").is_some(), simd.as_deref()) {
        Ok(copy) => copy,
        Err(message) => panic!("{message}"),
    }
}

/// The copy the two variables name (`EIN_PORTABLE` set, `EIN_SIMD`'s value), `None` for
/// neither, or the message for a value that names no copy.
fn choice_named(portable: bool, simd: Option<&std::ffi::OsStr>) -> Result<Option<SimdCopy>, String> {
    if portable {
        return Ok(Some(SimdCopy::Portable));
    }
    let Some(value) = simd else { return Ok(None) };
    let named = value.to_str().and_then(|name| SimdCopy::ALL.into_iter().find(|copy| copy.name() == name.trim()));
    match named {
        Some(copy) => Ok(Some(copy)),
        None => Err(format!("ein: EIN_SIMD is {value:?}; it takes portable, avx2 or avx512")),
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
        let (plain, math) = (simd_copy(false), simd_copy(true));
        assert_eq!((simd_copy(false), simd_copy(true)), (plain, math));
        assert!(plain <= widest_on_this_cpu() && math <= widest_on_this_cpu());
        if std::env::var_os("EIN_SIMD").is_none() && std::env::var_os("EIN_PORTABLE").is_none() {
            assert_eq!(plain, Ord::min(DEFAULT_COPY, widest_on_this_cpu()));
            assert_eq!(math, Ord::min(DEFAULT_MATH_COPY, widest_on_this_cpu()));
        }
        for copy in SimdCopy::ALL {
            let chosen = choose_simd(copy);
            assert_eq!((simd_copy(false), simd_copy(true)), (chosen, chosen));
            assert!(chosen <= copy && chosen <= widest_on_this_cpu());
            assert_eq!(chosen == copy, copy <= widest_on_this_cpu());
            assert_eq!(wide_simd(false), chosen >= SimdCopy::Avx2);
            assert_eq!(widest_simd(true), chosen == SimdCopy::Avx512);
        }
        reset_simd();
        assert_eq!((simd_copy(false), simd_copy(true)), (plain, math));
    }

    #[test]
    fn the_environment_names_a_copy_or_is_refused_with_the_values_it_takes() {
        let simd = |value: &str| choice_named(false, Some(std::ffi::OsStr::new(value)));
        assert_eq!(choice_named(false, None), Ok(None));
        assert_eq!(simd("avx512"), Ok(Some(SimdCopy::Avx512)));
        assert_eq!(simd(" avx2\n"), Ok(Some(SimdCopy::Avx2)));
        assert_eq!(simd("portable"), Ok(Some(SimdCopy::Portable)));
        assert_eq!(choice_named(true, Some(std::ffi::OsStr::new("avx512"))), Ok(Some(SimdCopy::Portable)));
        assert_eq!(simd("AVX-512"), Err("ein: EIN_SIMD is \"AVX-512\"; it takes portable, avx2 or avx512".to_string()));
    }
}
