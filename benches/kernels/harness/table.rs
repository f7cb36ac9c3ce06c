//! The terminal table, printed as a Markdown table so it can be pasted into the README as is.

use super::report::Report;
use super::timing::{KernelResult, VariantResult};
use super::{Work, REFERENCE};

/// `0.0123` → `12.3 ms`: three significant digits in the unit that suits.
pub fn format_seconds(seconds: f64) -> String {
    let (value, unit) = if seconds >= 1.0 {
        (seconds, "s")
    } else if seconds >= 1e-3 {
        (seconds * 1e3, "ms")
    } else if seconds >= 1e-6 {
        (seconds * 1e6, "µs")
    } else {
        (seconds * 1e9, "ns")
    };
    format!("{} {unit}", significant(value))
}

/// Three significant digits, no exponent.
pub fn significant(value: f64) -> String {
    if value >= 100.0 {
        format!("{value:.0}")
    } else if value >= 10.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.2}")
    }
}

/// The rate of one call taking `seconds`, with its unit.
pub fn rate(work: Work, seconds: f64) -> (f64, String) {
    match work {
        Work::Bytes(bytes) => (bytes / seconds / 1e9, "GB/s".to_string()),
        Work::Flops(flops) => (flops / seconds / 1e9, "GFLOP/s".to_string()),
        Work::Items(count, unit) => {
            let per_second = count / seconds;
            let (scale, prefix) = if per_second >= 1e9 {
                (1e9, "G")
            } else if per_second >= 1e6 {
                (1e6, "M")
            } else {
                (1e3, "k")
            };
            (per_second / scale, format!("{prefix}{unit}/s"))
        }
    }
}

/// `median(variant) / median(hand)`: above 1 is slower than hand-written.
pub fn ratio_to_reference(kernel: &KernelResult, variant: &VariantResult) -> Option<f64> {
    let reference = kernel.variant(REFERENCE)?.summary?.median;
    Some(variant.summary?.median / reference)
}

pub fn format_ratio(ratio: f64) -> String {
    if ratio >= 100.0 {
        format!("{ratio:.0}×")
    } else if ratio >= 10.0 {
        format!("{ratio:.1}×")
    } else {
        format!("{ratio:.2}×")
    }
}

/// The share of the STREAM ceiling reached by a memory-bound variant's median.
pub fn percent_of_ceiling(report: &Report, kernel: &KernelResult, variant: &VariantResult) -> Option<f64> {
    match kernel.work {
        Work::Bytes(bytes) => {
            let median = variant.summary?.median;
            Some(bytes / median / 1e9 / report.ceiling.gigabytes_per_second * 100.0)
        }
        _ => None,
    }
}

pub fn render(report: &Report) -> String {
    let header = ["kernel", "size", "variant", "reps", "median", "min", "rate", "vs hand", "% STREAM"];
    let mut rows: Vec<[String; 9]> = Vec::new();
    for kernel in &report.results {
        let mut first = true;
        let mut label = |rows: &mut Vec<[String; 9]>, cells: [String; 7]| {
            let [variant, reps, median, min, rate, ratio, ceiling] = cells;
            let (name, size) =
                if first { (kernel.name.to_string(), kernel.size.clone()) } else { (String::new(), String::new()) };
            first = false;
            rows.push([name, size, variant, reps, median, min, rate, ratio, ceiling]);
        };
        if kernel.variants.iter().all(|variant| variant.summary.is_none()) {
            let reason = kernel.failure.as_deref().unwrap_or("no timings").lines().next().unwrap_or("").to_string();
            let reason: String = reason.chars().take(90).collect();
            label(
                &mut rows,
                [
                    "**FAILED**".to_string(),
                    String::new(),
                    String::new(),
                    String::new(),
                    reason,
                    String::new(),
                    String::new(),
                ],
            );
            continue;
        }
        for variant in &kernel.variants {
            let Some(summary) = variant.summary else { continue };
            let (rate_value, unit) = rate(kernel.work, summary.median);
            label(
                &mut rows,
                [
                    variant.name.to_string(),
                    format!("{}{}", variant.samples.len(), if variant.capped { "*" } else { "" }),
                    format_seconds(summary.median),
                    format_seconds(summary.min),
                    format!("{} {unit}", significant(rate_value)),
                    ratio_to_reference(kernel, variant).map_or(String::new(), format_ratio),
                    percent_of_ceiling(report, kernel, variant)
                        .map_or(String::new(), |percent| format!("{percent:.0}%")),
                ],
            );
        }
    }
    let mut widths = header.map(|title| title.chars().count());
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    // Columns 3.. are numbers: right-aligned.
    let line = |cells: &[String]| {
        let mut text = String::from("|");
        for (column, (cell, width)) in cells.iter().zip(widths).enumerate() {
            let pad = width - cell.chars().count();
            if column >= 3 {
                text.push_str(&format!(" {}{cell} |", " ".repeat(pad)));
            } else {
                text.push_str(&format!(" {cell}{} |", " ".repeat(pad)));
            }
        }
        text
    };
    let mut text = line(&header.map(str::to_string));
    text.push('\n');
    text.push('|');
    for (column, width) in widths.iter().enumerate() {
        if column >= 3 {
            text.push_str(&format!("{}:|", "-".repeat(width + 1)));
        } else {
            text.push_str(&format!("{}|", "-".repeat(width + 2)));
        }
    }
    text.push('\n');
    for row in &rows {
        text.push_str(&line(row));
        text.push('\n');
    }
    text
}
