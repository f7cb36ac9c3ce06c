//! The benchmark harness: what a kernel is, how its variants are checked and timed, and how
//! the results are reported. Kernel families (the sibling modules of `harness`) only build
//! inputs and variants; everything they share lives here.

pub mod data;
pub mod json;
pub mod machine;
mod options;
mod output;
mod report;
pub mod scaling;
pub mod stats;
mod svg;
mod table;
mod timing;

pub use options::Options;
pub use output::{Check, Element, IntoOutput, Output};
pub use report::{Ceiling, Report};
pub use timing::{run_kernel, KernelResult, Settings};

use ein::__private::SimdCopy;
use std::rc::Rc;

/// A kernel in the suite, before its inputs exist: a name for `--filter` and a builder that
/// makes the inputs (at the quick or the full size) and the variants over them.
pub struct KernelSpec {
    pub name: &'static str,
    pub build: fn(bool) -> Kernel,
}

/// One benchmark problem and the ways of solving it.
pub struct Kernel {
    pub name: &'static str,
    /// The problem size in words, e.g. `4096×1024 f32`.
    pub size: String,
    /// What one call does, for the rate column.
    pub work: Work,
    /// How outputs are compared with the reference (`hand`).
    pub check: Check,
    /// Remarks printed under the table (what is measured, deviations from the original).
    pub notes: Vec<String>,
    pub variants: Vec<Variant>,
}

impl Kernel {
    pub fn new(name: &'static str, size: impl Into<String>, work: Work, check: Check) -> Self {
        Kernel { name, size: size.into(), work, check, notes: Vec::new(), variants: Vec::new() }
    }

    /// Adds a variant; its closure is one call of the kernel, returning the output.
    pub fn variant<O: IntoOutput>(mut self, name: &'static str, run: impl Fn() -> O + 'static) -> Self {
        self.variants.push(Variant { name, run: Rc::new(move || run().into_output()), read_back: None });
        self
    }

    /// Adds a variant that writes into a buffer it owns (STREAM's in-place triad): `run` is
    /// timed, `read_back` gives the buffer's contents for the cross-check.
    pub fn in_place_variant<O: IntoOutput>(
        mut self,
        name: &'static str,
        run: impl Fn() + 'static,
        read_back: impl Fn() -> O + 'static,
    ) -> Self {
        self.variants.push(Variant {
            name,
            run: Rc::new(move || {
                run();
                Output::Unit
            }),
            read_back: Some(Rc::new(move || read_back().into_output())),
        });
        self
    }

    pub fn note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    /// Adds the `ein` variant forced onto each copy of its functions the CPU can run
    /// (`ein-avx512`, `ein-avx2`, `ein-portable`): the copies taken by default must never be
    /// slower than the AVX2 or the portable copy (see [`default_slower_than_forced`]), and the
    /// AVX-512 figures say whether more functions should take it.
    pub fn with_other_copies(mut self) -> Self {
        let Some(ein) = self.variants.iter().find(|variant| variant.name == EIN) else { return self };
        let (run, read_back) = (Rc::clone(&ein.run), ein.read_back.clone());
        let mut others = Vec::new();
        for (name, copy) in FORCED_COPIES {
            if copy > ein::__private::widest_on_this_cpu() {
                continue;
            }
            let run = Rc::clone(&run);
            let forced = move || {
                ein::__private::choose_simd(copy);
                let output = run();
                ein::__private::reset_simd();
                output
            };
            others.push(Variant { name, run: Rc::new(forced), read_back: read_back.clone() });
        }
        self.variants.extend(others);
        self
    }

    /// Adds `ein-tiled-gemm`: the `ein` variant with every parallel GEMM split into one tile
    /// of C per thread by ein (`ein::__private::choose_tiled_gemm`) instead of by the `gemm`
    /// crate, to measure that split against the default on many cores.
    pub fn with_tiled_gemm(mut self) -> Self {
        let Some(ein) = self.variants.iter().find(|variant| variant.name == EIN) else { return self };
        let (run, read_back) = (Rc::clone(&ein.run), ein.read_back.clone());
        let tiled = move || {
            ein::__private::choose_tiled_gemm(true);
            let output = run();
            ein::__private::choose_tiled_gemm(false);
            output
        };
        self.variants.push(Variant { name: "ein-tiled-gemm", run: Rc::new(tiled), read_back });
        self
    }
}

/// The variant written with `ein!`, on the copies of its functions taken by default.
pub const EIN: &str = "ein";

/// The `ein` variant forced onto each copy, named as in the report.
pub const FORCED_COPIES: [(&str, SimdCopy); 3] =
    [("ein-avx512", SimdCopy::Avx512), ("ein-avx2", SimdCopy::Avx2), ("ein-portable", SimdCopy::Portable)];

/// How much slower than a forced copy the `ein` median may be before the report flags it
/// (timing noise on a shared machine).
const WIDE_TOLERANCE: f64 = 1.05;

/// `(kernel, forced variant, ein / forced median)` for every kernel whose default copies were
/// slower than the AVX2 or the portable copy by more than the tolerance and by more than the
/// two variants' own spreads together (on a 16-thread run of a kernel that spends its time in
/// the GEMM library, which no copy changes, the medians of identical code differed by 13%,
/// with spreads of 5% and 18%).
pub fn default_slower_than_forced(results: &[KernelResult]) -> Vec<(&'static str, &'static str, f64)> {
    let mut slower = Vec::new();
    for kernel in results {
        let Some(default) = kernel.variant(EIN).and_then(|variant| variant.summary) else { continue };
        for (name, copy) in FORCED_COPIES {
            let Some(forced) = kernel.variant(name).and_then(|variant| variant.summary) else { continue };
            let ratio = default.median / forced.median;
            let noise = 1.0 + default.spread + forced.spread;
            if copy <= SimdCopy::Avx2 && ratio > WIDE_TOLERANCE.max(noise) {
                slower.push((kernel.name, name, ratio));
            }
        }
    }
    slower
}

/// One way of computing a kernel.
pub struct Variant {
    pub name: &'static str,
    pub run: Rc<dyn Fn() -> Output>,
    pub read_back: Option<Rc<dyn Fn() -> Output>>,
}

impl Variant {
    /// One call and the output to check.
    pub fn output(&self) -> Output {
        let output = (self.run)();
        match &self.read_back {
            Some(read_back) => read_back(),
            None => output,
        }
    }
}

/// The work of one call, from which the rate column is computed.
#[derive(Clone, Copy, Debug)]
pub enum Work {
    /// Bytes that must cross the memory interface (compulsory traffic: each input read once,
    /// each output written once). Reported as GB/s and as a share of the STREAM ceiling.
    Bytes(f64),
    /// Floating-point operations (a multiply-add counts 2). Reported as GFLOP/s.
    Flops(f64),
    /// Anything else, counted in the named unit and reported per second (e.g. `it`, `elem`).
    Items(f64, &'static str),
}

/// The name the report treats as the reference for ratios and cross-checks.
pub const REFERENCE: &str = "hand";
