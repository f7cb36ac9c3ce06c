//! The ein benchmark suite: every kernel written three ways and timed in one run.
//!
//! ```text
//! cargo bench --bench kernels -- [--quick] [--threads N] [--filter S[,S…]] [--out DIR] [--scaling]
//! ```
//!
//! * `ein` — the `ein!` program as a user writes it from the README: pointful, not tuned to
//!   the compiler;
//! * `hand` — the Rust a good engineer writes: rayon, fused loops, slices, several
//!   accumulators for float reductions. Every ratio in the report is to this variant;
//! * `naive` — in the programs group (`programs.rs`), the plain serial loop nest a user
//!   writes in Rust: slices and indices, no rayon, no tuning;
//! * the crate a user would otherwise pick, where there is one: ndarray whole-array
//!   operations, `Zip` / `par_azip!`, and ndarray `dot` (matrixmultiply, threaded);
//! * `ein-avx512`, `ein-avx2`, `ein-portable` — the `ein` program forced onto each copy of its
//!   functions the CPU can run (`ein::__private::choose_simd`; `ein` itself runs the default
//!   copies: AVX-512 for functions that call ein's polynomial math, AVX2 for others): the run
//!   ends by naming every kernel whose default was more than 5% slower than the AVX2 or the
//!   portable copy.
//!
//! For each kernel every variant runs once and its output is checked against `hand` (floats
//! within a tolerance) before anything is timed; a mismatch is reported loudly and the run
//! exits non-zero. Then each variant is warmed up and the variants are timed in alternation
//! (A B C A B C …) so drifts in clock speed or memory state hit them alike. A variant whose
//! calls are slow stops early when its time budget is spent (the table marks it); sizes are
//! never shrunk to fit a budget. The STREAM triad bandwidth measured at the start of the run
//! is the ceiling for memory-bound kernels.
//!
//! Output: a table on stdout, `kernels.json` and `kernels.svg` (ratios to `hand`) in the
//! output directory (default `target/ein-bench`).

// The modules live in kernels/ beside this file (a bench target's root looks in benches/).
#[path = "kernels/harness/mod.rs"]
mod harness;

#[path = "kernels/compute.rs"]
mod compute;
#[path = "kernels/derivatives.rs"]
mod derivatives;
#[path = "kernels/linear_algebra.rs"]
mod linear_algebra;
#[path = "kernels/programs.rs"]
mod programs;
#[path = "kernels/rows.rs"]
mod rows;
#[path = "kernels/stencils.rs"]
mod stencils;
#[path = "kernels/streaming.rs"]
mod streaming;

use std::process::ExitCode;
use std::time::Instant;

use harness::{KernelSpec, Options, Report, Settings};

/// Every kernel of the suite, in the order they run and are reported.
fn suite() -> Vec<KernelSpec> {
    let mut kernels = Vec::new();
    kernels.extend(streaming::kernels());
    kernels.extend(linear_algebra::kernels());
    kernels.extend(rows::kernels());
    kernels.extend(stencils::kernels());
    kernels.extend(compute::kernels());
    kernels.extend(programs::kernels());
    kernels.extend(derivatives::kernels());
    kernels
}

/// The kernels whose time is mostly one large parallel GEMM, which also run as
/// `ein-tiled-gemm` (see `Kernel::with_tiled_gemm`).
const TILED_GEMM_KERNELS: [&str; 4] = ["matmul-f32", "matmul-f64", "attention", "chain"];

fn main() -> ExitCode {
    let options = match Options::parse(std::env::args().skip(1)) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("{message}\n\n{}", Options::USAGE);
            return ExitCode::from(2);
        }
    };
    if options.help {
        println!("{}", Options::USAGE);
        return ExitCode::SUCCESS;
    }
    let started = Instant::now();
    let threads = options.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from));
    // ndarray's `dot` runs on matrixmultiply's own threads; give it the same count as rayon.
    // Set before the first product, which is when matrixmultiply reads it.
    std::env::set_var("MATMUL_NUM_THREADS", threads.to_string());
    let pool = match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
        Ok(pool) => pool,
        Err(error) => {
            eprintln!("cannot build a rayon pool of {threads} threads: {error}");
            return ExitCode::FAILURE;
        }
    };

    let machine = harness::machine::Machine::read(threads);
    let settings = Settings::for_mode(options.quick);
    println!("{}", machine.describe());
    println!("{}\n", settings.describe());

    let selected: Vec<KernelSpec> = suite().into_iter().filter(|spec| options.selects(spec.name)).collect();
    if selected.is_empty() {
        eprintln!("no kernel matches the filter {:?}; kernels: {}", options.filter, suite_names().join(", "));
        return ExitCode::from(2);
    }

    if options.scaling {
        return match harness::scaling::measure(&selected, &settings, threads, options.quick) {
            Ok(table) => {
                println!("\n{table}");
                ExitCode::SUCCESS
            }
            Err(message) => {
                eprintln!("{message}");
                ExitCode::FAILURE
            }
        };
    }
    let report: Report = pool.install(|| {
        let ceiling = streaming::stream_ceiling(options.quick, &settings);
        println!(
            "STREAM triad ceiling: {:.1} GB/s (median of {} runs; best {:.1} GB/s; {}, measured in this run on {threads} thread{})\n",
            ceiling.gigabytes_per_second,
            ceiling.runs,
            ceiling.best_gigabytes_per_second,
            ceiling.size,
            if threads == 1 { "" } else { "s" }
        );
        let mut report = Report::new(machine, options.clone(), settings.clone(), ceiling);
        for spec in selected {
            let mut kernel = (spec.build)(options.quick).with_other_copies();
            if TILED_GEMM_KERNELS.contains(&spec.name) {
                kernel = kernel.with_tiled_gemm();
            }
            let result = harness::run_kernel(&kernel, &settings);
            report.push(result);
        }
        report
    });

    println!("\n{}", report.table());
    let wall = started.elapsed();
    println!("total wall time {:.1} s", wall.as_secs_f64());
    if let Some(load) = harness::machine::load_average() {
        println!("load average at the end: {load:.2}");
    }
    match report.write_files(&options.out, wall) {
        Ok(paths) => {
            for path in paths {
                println!("wrote {}", path.display());
            }
        }
        Err(error) => {
            eprintln!("cannot write the report to {}: {error}", options.out.display());
            return ExitCode::FAILURE;
        }
    }
    // The wide copies of every function exist to be faster: say loudly where one is not.
    let slower = if options.quick { Vec::new() } else { harness::default_slower_than_forced(&report.results) };
    if options.quick {
        println!("wide copy: not judged on --quick timings (too short to tell)");
    } else if slower.is_empty() {
        println!("wide copy: the default copies never slower than the AVX2 or the portable copy (ein vs ein-avx2, ein-portable)");
    }
    for line in derivatives::gradient_costs(&report.results) {
        println!("{line}");
    }
    for (kernel, forced, ratio) in &slower {
        println!("DEFAULT COPY SLOWER: {kernel}: ein takes {ratio:.2}× the time of {forced}");
    }
    let failures = report.failures();
    if failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        eprintln!("\nFAILED: {} kernel(s) did not pass the cross-check or panicked:", failures.len());
        for failure in failures {
            eprintln!("  {failure}");
        }
        ExitCode::FAILURE
    }
}

fn suite_names() -> Vec<&'static str> {
    suite().iter().map(|spec| spec.name).collect()
}
