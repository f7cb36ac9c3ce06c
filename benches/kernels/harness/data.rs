//! Deterministic benchmark inputs: element `i` of input `seed` is a hash of `(seed, i)`, so
//! inputs are the same on every run and machine, and large ones are filled in parallel.

use ein_testing::splitmix64_finalizer;
use rayon::prelude::*;

/// SplitMix64's finaliser: a good 64-bit mix of the seed and the position.
fn mix(seed: u64, index: u64) -> u64 {
    splitmix64_finalizer(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ index.wrapping_add(0xD1B5_4A32_D192_ED03))
}

/// A uniform value in `[0, 1)` with 53 random bits.
fn unit(seed: u64, index: usize) -> f64 {
    (mix(seed, index as u64) >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// `len` values uniform in `[low, high)`.
pub fn uniform_f64(seed: u64, len: usize, low: f64, high: f64) -> Vec<f64> {
    (0..len).into_par_iter().map(|index| low + (high - low) * unit(seed, index)).collect()
}

/// `len` values uniform in `[low, high)`, rounded to f32.
pub fn uniform_f32(seed: u64, len: usize, low: f32, high: f32) -> Vec<f32> {
    let (low, high) = (f64::from(low), f64::from(high));
    (0..len).into_par_iter().map(|index| (low + (high - low) * unit(seed, index)) as f32).collect()
}

/// `len` integers uniform in `low..high`.
pub fn uniform_i32(seed: u64, len: usize, low: i32, high: i32) -> Vec<i32> {
    let span = (i64::from(high) - i64::from(low)) as u64;
    (0..len).into_par_iter().map(|index| (i64::from(low) + (mix(seed, index as u64) % span) as i64) as i32).collect()
}

/// `count` points spaced evenly over `[low, high]` (pixel coordinates).
pub fn linspace(count: usize, low: f64, high: f64) -> Vec<f64> {
    let step = if count > 1 { (high - low) / (count - 1) as f64 } else { 0.0 };
    (0..count).map(|index| low + step * index as f64).collect()
}

/// A row-major view of `data` with `shape` (a tuple), for the ein and ndarray variants.
pub fn view<T, Shape, D>(data: &[T], shape: Shape) -> ndarray::ArrayView<'_, T, D>
where
    Shape: Into<ndarray::StrideShape<D>>,
    D: ndarray::Dimension,
{
    ndarray::ArrayView::from_shape(shape, data).expect("the data has as many elements as the shape")
}
