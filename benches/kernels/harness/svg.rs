//! The chart: every variant's median relative to `hand`, as horizontal bars on a log scale
//! that grow from the `1×` line (right = slower than hand-written, left = faster). Written
//! by hand; no plotting crate.

use std::fmt::Write;

use super::report::Report;
use super::table::{format_ratio, ratio_to_reference};
use super::REFERENCE;

const WIDTH: f64 = 980.0;
const LABEL_WIDTH: f64 = 190.0;
const PLOT_LEFT: f64 = LABEL_WIDTH + 20.0;
const PLOT_RIGHT: f64 = WIDTH - 70.0;
const BAR: f64 = 13.0;
const ROW: f64 = 17.0;
const GROUP_GAP: f64 = 9.0;
const TOP: f64 = 92.0;

/// A fixed colour per variant name, so charts of different runs read alike.
fn colour(variant: &str) -> &'static str {
    match variant {
        "ein" => "#1f6fb4",
        name if name.starts_with("ein") => "#7fb2de",
        "ndarray" => "#2e9e44",
        name if name.starts_with("ndarray") => "#8fd19e",
        "stream" => "#999999",
        name if name.starts_with("hand") => "#e08a1e",
        _ => "#9467bd",
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

pub fn render(report: &Report) -> String {
    // (kernel label, [(variant, ratio)]) for every kernel with a reference and another variant.
    let mut groups: Vec<(String, Vec<(&'static str, f64)>)> = Vec::new();
    for kernel in &report.results {
        let bars: Vec<(&'static str, f64)> = kernel
            .variants
            .iter()
            .filter(|variant| variant.name != REFERENCE)
            .filter_map(|variant| Some((variant.name, ratio_to_reference(kernel, variant)?)))
            .filter(|(_, ratio)| ratio.is_finite() && *ratio > 0.0)
            .collect();
        if !bars.is_empty() {
            groups.push((kernel.name.to_string(), bars));
        }
    }
    let ratios: Vec<f64> = groups.iter().flat_map(|(_, bars)| bars.iter().map(|(_, ratio)| *ratio)).collect();
    let low = ratios.iter().copied().fold(1.0f64, f64::min) / 1.3;
    let high = ratios.iter().copied().fold(1.0f64, f64::max) * 1.3;
    let (low_log, high_log) = (low.log10(), high.log10());
    let x = |ratio: f64| PLOT_LEFT + (ratio.log10() - low_log) / (high_log - low_log) * (PLOT_RIGHT - PLOT_LEFT);

    let rows: usize = groups.iter().map(|(_, bars)| bars.len()).sum();
    let plot_bottom = TOP + rows as f64 * ROW + groups.len() as f64 * GROUP_GAP;
    let height = plot_bottom + 40.0;

    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="Helvetica, Arial, sans-serif" font-size="11">"#
    );
    let _ = writeln!(svg, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        svg,
        r#"<text x="10" y="20" font-size="15" font-weight="bold">ein benchmarks: median time relative to hand-written Rust (log scale)</text>"#
    );
    let machine = &report.machine;
    let subtitle = format!(
        "{} · {} thread{} · {} mode · STREAM triad {:.1} GB/s · right of 1× = slower than hand, left = faster",
        machine.cpu_model,
        machine.threads,
        if machine.threads == 1 { "" } else { "s" },
        if report.settings.quick { "quick" } else { "full" },
        report.ceiling.gigabytes_per_second
    );
    let _ = writeln!(svg, r##"<text x="10" y="38" fill="#444">{}</text>"##, escape(&subtitle));

    // Legend: every variant name that has a bar, in order of first appearance.
    let mut names: Vec<&'static str> = Vec::new();
    for (_, bars) in &groups {
        for (name, _) in bars {
            if !names.contains(name) {
                names.push(name);
            }
        }
    }
    let mut legend_x = 10.0;
    for name in &names {
        let _ = writeln!(svg, r#"<rect x="{legend_x}" y="50" width="12" height="12" fill="{}"/>"#, colour(name));
        let _ = writeln!(svg, r#"<text x="{}" y="60">{}</text>"#, legend_x + 16.0, escape(name));
        legend_x += 28.0 + 6.5 * name.len() as f64;
    }

    // Grid: 1-2-5 ticks when the range is short, decades when it is long.
    let decades = high_log - low_log;
    let multipliers: &[f64] = if decades <= 2.5 { &[1.0, 2.0, 5.0] } else { &[1.0] };
    let mut ticks = Vec::new();
    for exponent in (low_log.floor() as i32)..=(high_log.ceil() as i32) {
        for multiplier in multipliers {
            let tick = multiplier * 10f64.powi(exponent);
            if tick >= low && tick <= high {
                ticks.push(tick);
            }
        }
    }
    for tick in ticks {
        let position = x(tick);
        let _ = writeln!(
            svg,
            r##"<line x1="{position:.1}" y1="{:.1}" x2="{position:.1}" y2="{plot_bottom:.1}" stroke="#e3e3e3"/>"##,
            TOP - 8.0
        );
        let label = if tick >= 1.0 { format!("{tick:.0}×") } else { format!("{tick}×") };
        let _ = writeln!(
            svg,
            r##"<text x="{position:.1}" y="{:.1}" text-anchor="middle" fill="#555">{label}</text>"##,
            plot_bottom + 16.0
        );
    }

    let mut y = TOP;
    for (kernel, bars) in &groups {
        let group_height = bars.len() as f64 * ROW;
        let _ = writeln!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end" font-weight="bold">{}</text>"#,
            LABEL_WIDTH,
            y + group_height / 2.0 + 4.0,
            escape(kernel)
        );
        for (name, ratio) in bars {
            let (start, end) = (x(1.0), x(*ratio));
            let (left, width) = if end >= start { (start, end - start) } else { (end, start - end) };
            let _ = writeln!(
                svg,
                r#"<rect x="{left:.1}" y="{:.1}" width="{:.1}" height="{BAR}" fill="{}"><title>{}: {} {}</title></rect>"#,
                y + (ROW - BAR) / 2.0,
                width.max(1.0),
                colour(name),
                escape(kernel),
                escape(name),
                format_ratio(*ratio)
            );
            // Labels go right of the bar's end for slower variants, and just right of the 1×
            // line for faster ones (the space left of a left-growing bar holds the kernel name).
            let label_x = if end >= start { end + 4.0 } else { start + 4.0 };
            let anchor = "start";
            let _ = writeln!(
                svg,
                r##"<text x="{label_x:.1}" y="{:.1}" text-anchor="{anchor}" fill="#333">{} {}</text>"##,
                y + ROW / 2.0 + 4.0,
                escape(name),
                format_ratio(*ratio)
            );
            y += ROW;
        }
        y += GROUP_GAP;
    }
    let one = x(1.0);
    let _ = writeln!(
        svg,
        r#"<line x1="{one:.1}" y1="{:.1}" x2="{one:.1}" y2="{plot_bottom:.1}" stroke="black" stroke-width="1.5"/>"#,
        TOP - 8.0
    );
    let _ = writeln!(
        svg,
        r#"<text x="{one:.1}" y="{:.1}" text-anchor="middle" font-weight="bold">hand = 1×</text>"#,
        TOP - 12.0
    );
    svg.push_str("</svg>\n");
    svg
}
