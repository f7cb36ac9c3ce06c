//! Checking and timing one kernel: every variant once and compared with the reference, then
//! warm-up, then timed repetitions in alternation (A B C A B C …) within a time budget.

use std::hint::black_box;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

use super::output::compare;
use super::stats::Summary;
use super::{Kernel, Variant, Work, REFERENCE};

/// How long and how often to measure.
#[derive(Clone, Debug)]
pub struct Settings {
    pub quick: bool,
    /// Timed samples per variant, at most.
    pub repetitions: usize,
    /// Per variant: no new sample starts once the samples so far plus one more would exceed
    /// this (every variant gets at least one). Only slow variants reach it.
    pub budget: Duration,
    /// Per variant, extra untimed calls after the check call, until this much time is spent.
    pub warmup: Duration,
    /// Calls shorter than this are timed in batches of this length (the tiny kernels).
    pub min_sample: Duration,
}

impl Settings {
    pub fn for_mode(quick: bool) -> Settings {
        if quick {
            Settings {
                quick,
                repetitions: 3,
                budget: Duration::from_millis(300),
                warmup: Duration::from_millis(20),
                min_sample: Duration::from_millis(1),
            }
        } else {
            Settings {
                quick,
                repetitions: 11,
                budget: Duration::from_secs(8),
                warmup: Duration::from_millis(250),
                min_sample: Duration::from_millis(10),
            }
        }
    }

    pub fn describe(&self) -> String {
        format!(
            "mode: {}; per variant: up to {} timed repetitions in alternation, time budget {:.1} s \
             (a variant over it stops early, marked *), warm-up {} ms, calls under {} ms timed in batches",
            if self.quick { "quick (small sizes)" } else { "full" },
            self.repetitions,
            self.budget.as_secs_f64(),
            self.warmup.as_millis(),
            self.min_sample.as_millis()
        )
    }
}

pub struct VariantResult {
    pub name: &'static str,
    /// Seconds per call, one per timed repetition, in the order taken.
    pub samples: Vec<f64>,
    pub summary: Option<Summary>,
    /// Calls per timed sample (more than one only for very short calls).
    pub batch: usize,
    /// Seconds of the first (cold, checked) call.
    pub first_call: f64,
    /// Worst normalised difference from the reference (0 for the reference itself).
    pub check_error: Option<f64>,
    /// True when the time budget stopped the repetitions early.
    pub capped: bool,
}

pub struct KernelResult {
    pub name: &'static str,
    pub size: String,
    pub work: Work,
    pub notes: Vec<String>,
    pub variants: Vec<VariantResult>,
    /// Why the kernel has no timings: a cross-check mismatch or a panic.
    pub failure: Option<String>,
}

impl KernelResult {
    pub fn variant(&self, name: &str) -> Option<&VariantResult> {
        self.variants.iter().find(|variant| variant.name == name)
    }
}

/// Checks and times `kernel`; a panic in any variant is caught and reported as a failure.
pub fn run_kernel(kernel: &Kernel, settings: &Settings) -> KernelResult {
    eprintln!(
        "{} ({}): {}",
        kernel.name,
        kernel.size,
        kernel.variants.iter().map(|v| v.name).collect::<Vec<_>>().join(", ")
    );
    match catch_unwind(AssertUnwindSafe(|| check_and_time(kernel, settings))) {
        Ok(result) => result,
        Err(panic) => {
            let message = ein_testing::panic_message(&*panic);
            eprintln!("  FAILED: panicked: {message}");
            result_without_timings(kernel, Some(format!("{}: panicked: {message}", kernel.name)), Vec::new())
        }
    }
}

fn result_without_timings(kernel: &Kernel, failure: Option<String>, variants: Vec<VariantResult>) -> KernelResult {
    KernelResult {
        name: kernel.name,
        size: kernel.size.clone(),
        work: kernel.work,
        notes: kernel.notes.clone(),
        variants,
        failure,
    }
}

fn check_and_time(kernel: &Kernel, settings: &Settings) -> KernelResult {
    // 1. One call of each variant, its output compared with the reference's. This call is
    //    also the first warm-up.
    let mut outputs = Vec::new();
    let mut first_calls = Vec::new();
    for variant in &kernel.variants {
        let start = Instant::now();
        let output = variant.output();
        let seconds = start.elapsed().as_secs_f64();
        eprintln!("  {:<12} first call {}", variant.name, super::table::format_seconds(seconds));
        first_calls.push(seconds);
        outputs.push(output);
    }
    let reference = kernel.variants.iter().position(|variant| variant.name == REFERENCE).unwrap_or(0);
    let mut check_errors = Vec::new();
    let mut mismatches = Vec::new();
    for (position, variant) in kernel.variants.iter().enumerate() {
        if position == reference {
            check_errors.push(Some(0.0));
            continue;
        }
        match compare(&outputs[reference], &outputs[position], &kernel.check) {
            Ok(error) => check_errors.push(Some(error)),
            Err(message) => {
                eprintln!(
                    "\n  !!!!! MISMATCH in {}: `{}` disagrees with `{}`: {message}\n",
                    kernel.name, variant.name, kernel.variants[reference].name
                );
                mismatches.push(format!(
                    "{}: `{}` disagrees with `{}`: {message}",
                    kernel.name, variant.name, kernel.variants[reference].name
                ));
                check_errors.push(None);
            }
        }
    }
    drop(outputs);
    if !mismatches.is_empty() {
        let variants = kernel
            .variants
            .iter()
            .zip(&first_calls)
            .zip(&check_errors)
            .map(|((variant, &first_call), &check_error)| VariantResult {
                name: variant.name,
                samples: Vec::new(),
                summary: None,
                batch: 1,
                first_call,
                check_error,
                capped: false,
            })
            .collect();
        return result_without_timings(kernel, Some(mismatches.join("\n  ")), variants);
    }

    // 2. Warm-up, and batch sizes for calls too short to time one by one.
    let mut batches = Vec::new();
    for (variant, &first_call) in kernel.variants.iter().zip(&first_calls) {
        let batch = batch_size(variant, first_call, settings.min_sample);
        let mut warmed = first_call;
        while warmed < settings.warmup.as_secs_f64() {
            warmed += time_batch(variant, batch);
        }
        batches.push(batch);
    }

    // 3. Timed rounds, the variants in alternation.
    let count = kernel.variants.len();
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); count];
    let mut spent = vec![0.0f64; count];
    let mut capped = vec![false; count];
    let budget = settings.budget.as_secs_f64();
    loop {
        let mut ran = false;
        for (position, variant) in kernel.variants.iter().enumerate() {
            if samples[position].len() >= settings.repetitions || capped[position] {
                continue;
            }
            if let Some(&last) = samples[position].last() {
                if spent[position] + last * batches[position] as f64 > budget {
                    capped[position] = true;
                    continue;
                }
            }
            let seconds = time_batch(variant, batches[position]);
            samples[position].push(seconds / batches[position] as f64);
            spent[position] += seconds;
            ran = true;
        }
        if !ran {
            break;
        }
    }

    let variants: Vec<VariantResult> = kernel
        .variants
        .iter()
        .enumerate()
        .map(|(position, variant)| VariantResult {
            name: variant.name,
            summary: Summary::of(&samples[position]),
            samples: std::mem::take(&mut samples[position]),
            batch: batches[position],
            first_call: first_calls[position],
            check_error: check_errors[position],
            capped: capped[position],
        })
        .collect();
    for variant in &variants {
        if let Some(summary) = variant.summary {
            eprintln!(
                "  {:<12} median {} over {} repetition{}{}",
                variant.name,
                super::table::format_seconds(summary.median),
                variant.samples.len(),
                if variant.samples.len() == 1 { "" } else { "s" },
                if variant.capped { " (time budget reached)" } else { "" }
            );
        }
    }
    result_without_timings(kernel, None, variants)
}

/// How many calls one timed sample makes: 1, or enough to last `min_sample`.
fn batch_size(variant: &Variant, first_call: f64, min_sample: Duration) -> usize {
    let min_sample = min_sample.as_secs_f64();
    if first_call >= min_sample {
        return 1;
    }
    let mut calls = 1usize;
    loop {
        let seconds = time_batch(variant, calls);
        if seconds >= min_sample / 4.0 || calls >= 1 << 24 {
            let per_call = (seconds / calls as f64).max(1e-9);
            return ((min_sample / per_call).ceil() as usize).clamp(1, 1 << 26);
        }
        calls *= 4;
    }
}

/// Seconds for `calls` calls. A single call's output is dropped outside the timed region
/// (freeing a large result is not the kernel's work); in a batch it is dropped inside.
fn time_batch(variant: &Variant, calls: usize) -> f64 {
    if calls == 1 {
        let start = Instant::now();
        let output = (variant.run)();
        let seconds = start.elapsed().as_secs_f64();
        drop(black_box(output));
        return seconds;
    }
    let start = Instant::now();
    for _ in 0..calls {
        black_box((variant.run)());
    }
    start.elapsed().as_secs_f64()
}
