//! What a variant returns, and how two variants' outputs are compared before any timing.

use std::fmt::Debug;

/// A variant's result, flattened to row-major element vectors (every conversion into it is
/// zero-copy for contiguous outputs, so it may sit inside the timed region).
#[derive(Debug)]
pub enum Output {
    /// A variant that writes into a buffer it owns returns nothing from its timed call.
    Unit,
    F32(Vec<f32>),
    F64(Vec<f64>),
    U8(Vec<u8>),
    U32(Vec<u32>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    Usize(Vec<usize>),
    Tuple(Vec<Output>),
}

impl Output {
    fn kind(&self) -> &'static str {
        match self {
            Output::Unit => "nothing",
            Output::F32(_) => "f32",
            Output::F64(_) => "f64",
            Output::U8(_) => "u8",
            Output::U32(_) => "u32",
            Output::I32(_) => "i32",
            Output::I64(_) => "i64",
            Output::Usize(_) => "usize",
            Output::Tuple(_) => "tuple",
        }
    }

    pub fn as_usize(&self) -> Option<&[usize]> {
        match self {
            Output::Usize(values) => Some(values),
            _ => None,
        }
    }
}

/// An element type outputs can hold.
pub trait Element: Copy {
    fn wrap(values: Vec<Self>) -> Output;
}

macro_rules! element {
    ($($type:ty => $variant:ident),*) => {$(
        impl Element for $type {
            fn wrap(values: Vec<Self>) -> Output {
                Output::$variant(values)
            }
        }
        impl IntoOutput for $type {
            fn into_output(self) -> Output {
                Output::$variant(vec![self])
            }
        }
    )*};
}

/// Anything a variant may return: scalars, `Vec`s, ein and ndarray arrays, tuples of these.
pub trait IntoOutput {
    fn into_output(self) -> Output;
}

element!(f32 => F32, f64 => F64, u8 => U8, u32 => U32, i32 => I32, i64 => I64, usize => Usize);

impl IntoOutput for Output {
    fn into_output(self) -> Output {
        self
    }
}

impl<T: Element> IntoOutput for Vec<T> {
    fn into_output(self) -> Output {
        T::wrap(self)
    }
}

impl<T: Element, const N: usize> IntoOutput for ein::Array<T, N> {
    fn into_output(self) -> Output {
        T::wrap(self.into_vec())
    }
}

impl<T: Element, D: ndarray::Dimension> IntoOutput for ndarray::Array<T, D> {
    fn into_output(self) -> Output {
        if !self.is_standard_layout() {
            return T::wrap(self.iter().copied().collect());
        }
        let len = self.len();
        let (data, offset) = self.into_raw_vec_and_offset();
        match offset {
            Some(0) | None if data.len() == len => T::wrap(data),
            Some(offset) => T::wrap(data[offset..offset + len].to_vec()),
            None => T::wrap(Vec::new()),
        }
    }
}

impl<A: IntoOutput, B: IntoOutput> IntoOutput for (A, B) {
    fn into_output(self) -> Output {
        Output::Tuple(vec![self.0.into_output(), self.1.into_output()])
    }
}

/// How a variant's output is compared with the reference's.
pub enum Check {
    /// Elementwise, for floats: `|x − r| ≤ tolerance · (|r| + rms(reference))`, so that
    /// values near zero are judged on the scale of the whole output; integers must be equal.
    Close(f64),
    /// Integers of which at most `share` of the elements may differ (Mandelbrot's escape
    /// counts: a different but valid rounding, e.g. a fused multiply-add, moves a few
    /// boundary points by chaos). Floats as in `Close(1e-6)`.
    MostlyEqual { share: f64 },
    /// A kernel-specific judgement (e.g. k-means, where a different nearest centroid is fine
    /// when the two distances tie within rounding). Returns the worst error it saw.
    Custom(Judge),
}

/// A kernel-specific comparison of (reference, candidate): the worst error, or why they differ.
pub type Judge = Box<dyn Fn(&Output, &Output) -> Result<f64, String>>;

/// Compares `candidate` with `reference`; `Ok` carries the worst normalised error seen.
pub fn compare(reference: &Output, candidate: &Output, check: &Check) -> Result<f64, String> {
    match check {
        Check::Custom(judge) => judge(reference, candidate),
        Check::Close(tolerance) => compare_values(reference, candidate, *tolerance, 0.0),
        Check::MostlyEqual { share } => compare_values(reference, candidate, 1e-6, *share),
    }
}

fn compare_values(reference: &Output, candidate: &Output, tolerance: f64, share: f64) -> Result<f64, String> {
    match (reference, candidate) {
        (Output::F32(r), Output::F32(c)) => close(r, c, tolerance, |x| f64::from(*x)),
        (Output::F64(r), Output::F64(c)) => close(r, c, tolerance, |x| *x),
        (Output::U8(r), Output::U8(c)) => equal(r, c, share),
        (Output::U32(r), Output::U32(c)) => equal(r, c, share),
        (Output::I32(r), Output::I32(c)) => equal(r, c, share),
        (Output::I64(r), Output::I64(c)) => equal(r, c, share),
        (Output::Usize(r), Output::Usize(c)) => equal(r, c, share),
        (Output::Tuple(r), Output::Tuple(c)) if r.len() == c.len() => {
            let mut worst: f64 = 0.0;
            for (position, (r, c)) in r.iter().zip(c).enumerate() {
                let error = compare_values(r, c, tolerance, share)
                    .map_err(|message| format!("component {position}: {message}"))?;
                worst = worst.max(error);
            }
            Ok(worst)
        }
        (Output::Unit, Output::Unit) => Ok(0.0),
        (r, c) => Err(format!("output kinds differ: reference {}, this variant {}", r.kind(), c.kind())),
    }
}

fn close<T: Debug>(reference: &[T], candidate: &[T], tolerance: f64, value: impl Fn(&T) -> f64) -> Result<f64, String> {
    if reference.len() != candidate.len() {
        return Err(format!("lengths differ: reference {}, this variant {}", reference.len(), candidate.len()));
    }
    let finite: Vec<f64> = reference.iter().map(&value).filter(|x| x.is_finite()).collect();
    let rms =
        if finite.is_empty() { 0.0 } else { (finite.iter().map(|x| x * x).sum::<f64>() / finite.len() as f64).sqrt() };
    let mut worst: f64 = 0.0;
    let mut bad = Vec::new();
    let mut bad_count = 0usize;
    for (index, (r, c)) in reference.iter().zip(candidate).enumerate() {
        let (x, y) = (value(r), value(c));
        let error = if x.is_nan() && y.is_nan() || x == y {
            0.0
        } else {
            let error = (x - y).abs() / (x.abs() + rms);
            if error.is_nan() {
                f64::INFINITY
            } else {
                error
            }
        };
        worst = worst.max(error);
        if error > tolerance {
            bad_count += 1;
            if bad.len() < 5 {
                bad.push(format!("[{index}]: reference {r:?}, this variant {c:?}"));
            }
        }
    }
    if bad_count == 0 {
        Ok(worst)
    } else {
        Err(format!(
            "{bad_count} of {} elements differ beyond the tolerance {tolerance:e} (relative to |reference| + rms {rms:.3e}; worst {worst:.3e}): {}",
            reference.len(),
            bad.join("; ")
        ))
    }
}

fn equal<T: PartialEq + Debug>(reference: &[T], candidate: &[T], share: f64) -> Result<f64, String> {
    if reference.len() != candidate.len() {
        return Err(format!("lengths differ: reference {}, this variant {}", reference.len(), candidate.len()));
    }
    let differing: Vec<usize> =
        reference.iter().zip(candidate).enumerate().filter(|(_, (r, c))| r != c).map(|(index, _)| index).collect();
    let fraction = if reference.is_empty() { 0.0 } else { differing.len() as f64 / reference.len() as f64 };
    if fraction <= share {
        Ok(fraction)
    } else {
        let examples: Vec<String> = differing
            .iter()
            .take(5)
            .map(|&index| format!("[{index}]: reference {:?}, this variant {:?}", reference[index], candidate[index]))
            .collect();
        Err(format!(
            "{} of {} elements differ (allowed: {:.3}%): {}",
            differing.len(),
            reference.len(),
            share * 100.0,
            examples.join("; ")
        ))
    }
}
