//! Summary statistics of a variant's samples (seconds per call).

#[derive(Clone, Copy, Debug, Default)]
pub struct Summary {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    /// Median absolute deviation from the median, relative to the median: how noisy the
    /// samples were.
    pub spread: f64,
}

impl Summary {
    /// `None` for no samples.
    pub fn of(samples: &[f64]) -> Option<Summary> {
        if samples.is_empty() {
            return None;
        }
        let median = median(samples);
        let deviations: Vec<f64> = samples.iter().map(|sample| (sample - median).abs()).collect();
        Some(Summary {
            median,
            min: samples.iter().copied().fold(f64::INFINITY, f64::min),
            max: samples.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            spread: if median > 0.0 { self::median(&deviations) / median } else { 0.0 },
        })
    }
}

/// The median (the mean of the middle two for an even count).
pub fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let middle = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[middle]
    } else {
        (sorted[middle - 1] + sorted[middle]) / 2.0
    }
}
