//! Everything one run measured, and its three renderings: table, JSON, SVG.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::json::Json;
use super::machine::Machine;
use super::options::Options;
use super::table::{percent_of_ceiling, rate, ratio_to_reference};
use super::timing::{KernelResult, Settings};
use super::{Work, REFERENCE};

/// The machine's memory bandwidth as measured by STREAM's triad in the same run.
#[derive(Clone, Debug)]
pub struct Ceiling {
    /// From the median repetition: the figure percentages are taken of.
    pub gigabytes_per_second: f64,
    /// From the best repetition (STREAM's convention).
    pub best_gigabytes_per_second: f64,
    pub runs: usize,
    pub size: String,
}

pub struct Report {
    pub machine: Machine,
    pub options: Options,
    pub settings: Settings,
    pub ceiling: Ceiling,
    pub results: Vec<KernelResult>,
}

impl Report {
    pub fn new(machine: Machine, options: Options, settings: Settings, ceiling: Ceiling) -> Report {
        Report { machine, options, settings, ceiling, results: Vec::new() }
    }

    pub fn push(&mut self, result: KernelResult) {
        self.results.push(result);
    }

    /// The kernels that failed their cross-check or panicked, with the reason.
    pub fn failures(&self) -> Vec<String> {
        self.results.iter().filter_map(|result| result.failure.clone()).collect()
    }

    /// The table, a legend, and the kernels' notes.
    pub fn table(&self) -> String {
        let mut text = super::table::render(self);
        text.push_str(&format!(
            "\nreps: timed repetitions (* = stopped early by the {:.1} s per-variant time budget; the size is never reduced). \
             vs hand: median / median of `hand` (above 1 = slower than hand-written). \
             % STREAM: the median's bandwidth as a share of the STREAM triad ceiling, {:.1} GB/s (median of this run's STREAM triad; memory-bound kernels).\n",
            self.settings.budget.as_secs_f64(),
            self.ceiling.gigabytes_per_second
        ));
        let notes: Vec<String> = self
            .results
            .iter()
            .flat_map(|result| result.notes.iter().map(move |note| format!("- {}: {note}", result.name)))
            .collect();
        if !notes.is_empty() {
            text.push_str("\nnotes:\n");
            text.push_str(&notes.join("\n"));
            text.push('\n');
        }
        text
    }

    /// Writes `kernels.json` and `kernels.svg` into `directory`.
    pub fn write_files(&self, directory: &Path, wall: Duration) -> std::io::Result<Vec<PathBuf>> {
        std::fs::create_dir_all(directory)?;
        let json_path = directory.join("kernels.json");
        std::fs::write(&json_path, self.to_json(wall).render())?;
        let svg_path = directory.join("kernels.svg");
        std::fs::write(&svg_path, super::svg::render(self))?;
        Ok(vec![json_path, svg_path])
    }

    fn to_json(&self, wall: Duration) -> Json {
        let kernels = self.results.iter().map(|kernel| self.kernel_json(kernel)).collect();
        Json::object([
            ("suite", Json::from("ein kernels")),
            ("command", Json::from(std::env::args().collect::<Vec<_>>().join(" "))),
            ("machine", self.machine.to_json()),
            (
                "settings",
                Json::object([
                    ("quick", Json::from(self.settings.quick)),
                    ("threads", Json::from(self.machine.threads as f64)),
                    ("filter", Json::Array(self.options.filter.iter().map(|part| Json::from(part.as_str())).collect())),
                    ("repetitions", Json::from(self.settings.repetitions as f64)),
                    ("budget_seconds", Json::from(self.settings.budget.as_secs_f64())),
                    ("warmup_seconds", Json::from(self.settings.warmup.as_secs_f64())),
                    ("min_sample_seconds", Json::from(self.settings.min_sample.as_secs_f64())),
                ]),
            ),
            (
                "stream_ceiling",
                Json::object([
                    ("gigabytes_per_second", Json::from(self.ceiling.gigabytes_per_second)),
                    ("best_gigabytes_per_second", Json::from(self.ceiling.best_gigabytes_per_second)),
                    ("runs", Json::from(self.ceiling.runs as f64)),
                    ("size", Json::from(self.ceiling.size.as_str())),
                ]),
            ),
            ("wall_seconds", Json::from(wall.as_secs_f64())),
            ("reference_variant", Json::from(REFERENCE)),
            ("kernels", Json::Array(kernels)),
        ])
    }

    fn kernel_json(&self, kernel: &KernelResult) -> Json {
        let (work_kind, work_amount, unit) = match kernel.work {
            Work::Bytes(bytes) => ("bytes", bytes, "GB/s".to_string()),
            Work::Flops(flops) => ("flops", flops, "GFLOP/s".to_string()),
            Work::Items(count, unit) => ("items", count, format!("{unit}/s")),
        };
        let variants = kernel
            .variants
            .iter()
            .map(|variant| {
                let summary = variant.summary;
                Json::object([
                    ("name", Json::from(variant.name)),
                    (
                        "samples_ms",
                        Json::Array(variant.samples.iter().map(|seconds| Json::from(seconds * 1e3)).collect()),
                    ),
                    ("median_ms", summary.map(|summary| summary.median * 1e3).into()),
                    ("min_ms", summary.map(|summary| summary.min * 1e3).into()),
                    ("max_ms", summary.map(|summary| summary.max * 1e3).into()),
                    ("spread", summary.map(|summary| summary.spread).into()),
                    ("calls_per_sample", Json::from(variant.batch as f64)),
                    ("first_call_ms", Json::from(variant.first_call * 1e3)),
                    ("capped_by_budget", Json::from(variant.capped)),
                    ("rate", summary.map(|summary| rate(kernel.work, summary.median).0).into()),
                    ("ratio_to_hand", ratio_to_reference(kernel, variant).into()),
                    ("percent_of_stream", percent_of_ceiling(self, kernel, variant).into()),
                    ("check_error", variant.check_error.into()),
                ])
            })
            .collect();
        Json::object([
            ("name", Json::from(kernel.name)),
            ("size", Json::from(kernel.size.as_str())),
            ("work", Json::object([("kind", Json::from(work_kind)), ("amount", Json::from(work_amount))])),
            ("rate_unit", Json::from(unit)),
            ("notes", Json::Array(kernel.notes.iter().map(|note| Json::from(note.as_str())).collect())),
            ("failure", kernel.failure.clone().into()),
            ("variants", Json::Array(variants)),
        ])
    }
}
