//! `--scaling`: each selected kernel timed on one thread and on the run's thread count, for
//! the speed-up of every variant (compute-bound kernels should scale with the threads).

use super::table::format_seconds;
use super::{run_kernel, KernelSpec, Settings};

/// Runs every kernel in a one-thread pool, then in a `threads`-thread pool (each in a fresh
/// build of its inputs), and returns the table of medians and speed-ups.
pub fn measure(selected: &[KernelSpec], settings: &Settings, threads: usize, quick: bool) -> Result<String, String> {
    let pool = |count: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(count)
            .build()
            .map_err(|error| format!("cannot build a rayon pool of {count} threads: {error}"))
    };
    let (one, many) = (pool(1)?, pool(threads)?);
    let mut table =
        format!("| kernel | variant | 1 thread | {threads} threads | speed-up |\n|---|---|---:|---:|---:|\n");
    for spec in selected {
        let single = one.install(|| run_kernel(&(spec.build)(quick), settings));
        let parallel = many.install(|| run_kernel(&(spec.build)(quick), settings));
        for variant in &single.variants {
            let medians = (
                variant.summary.as_ref().map(|summary| summary.median),
                parallel.variant(variant.name).and_then(|other| other.summary.as_ref()).map(|summary| summary.median),
            );
            if let (Some(single), Some(parallel)) = medians {
                table.push_str(&format!(
                    "| {} | {} | {} | {} | {:.2}× |\n",
                    spec.name,
                    variant.name,
                    format_seconds(single),
                    format_seconds(parallel),
                    single / parallel
                ));
            }
        }
    }
    Ok(table)
}
