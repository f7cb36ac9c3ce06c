//! Accuracy of `ein_runtime::math` against std (glibc's libm on Linux): maximum ulp error over
//! dense deterministic sweeps, points next to multiples of π/2, and special values.
//!
//! A release run (`cargo test --release -p ein-runtime --test math_accuracy`) checks about 3
//! million points per f32 function and 2 million per f64 function (sin and cos another 1.6
//! million f32 / 0.17 million f64 next to multiples of π/2, and 2 million f32 for the fast
//! path of sin and cos); a debug run checks a quarter of the sweeps. Every f32 in each
//! documented domain was also checked once by an exhaustive run outside this file; the bounds
//! below are the ones documented in `math.rs`.

use ein_runtime::math::*;

/// Points per sweep are divided by this in debug builds.
const DEBUG_DIVISOR: usize = if cfg!(debug_assertions) { 4 } else { 1 };

fn scaled(n: usize) -> usize {
    (n / DEBUG_DIVISOR).max(1000)
}

/// Position of a float on the number line in ulps (−0 and +0 both at 0).
fn ord32(x: f32) -> i64 {
    let b = x.to_bits() as i32;
    if b < 0 {
        -((b & 0x7fff_ffff) as i64)
    } else {
        b as i64
    }
}

fn ord64(x: f64) -> i128 {
    let b = x.to_bits() as i64;
    if b < 0 {
        -((b & 0x7fff_ffff_ffff_ffff) as i128)
    } else {
        b as i128
    }
}

/// Ulp distance; NaN matches only NaN.
fn ulps32(a: f32, b: f32) -> u64 {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => 0,
        (false, false) => (ord32(a) - ord32(b)).unsigned_abs(),
        _ => u64::MAX,
    }
}

fn ulps64(a: f64, b: f64) -> u64 {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => 0,
        (false, false) => u64::try_from((ord64(a) - ord64(b)).unsigned_abs()).unwrap_or(u64::MAX),
        _ => u64::MAX,
    }
}

/// About `n` points whose bit patterns are evenly spaced over [lo, hi] (lo, hi > 0), each
/// followed by its negation: uniform in ulps, so every binade from subnormals up gets its
/// share. (`.step_by(2)` keeps the positive ones.)
fn bits_sweep32(lo: f32, hi: f32, n: usize) -> impl Iterator<Item = f32> {
    let (a, b) = (lo.to_bits() as u64, hi.to_bits() as u64);
    let n = n as u64 / 2;
    (0..=n).flat_map(move |k| {
        let x = f32::from_bits((a + (b - a) * k / n) as u32);
        [x, -x]
    })
}

fn bits_sweep64(lo: f64, hi: f64, n: usize) -> impl Iterator<Item = f64> {
    let (a, b) = (lo.to_bits() as u128, hi.to_bits() as u128);
    let n = n as u128 / 2;
    (0..=n).flat_map(move |k| {
        let x = f64::from_bits((a + (b - a) * k / n) as u64);
        [x, -x]
    })
}

/// `n` evenly spaced points over [lo, hi], nudged off the lattice so that the low bits vary.
fn linear_sweep32(lo: f64, hi: f64, n: usize) -> impl Iterator<Item = f32> {
    (0..=n).map(move |k| (lo + (hi - lo) * (k as f64 + std::f64::consts::FRAC_1_PI) / (n as f64 + 1.0)) as f32)
}

fn linear_sweep64(lo: f64, hi: f64, n: usize) -> impl Iterator<Item = f64> {
    (0..=n).map(move |k| lo + (hi - lo) * (k as f64 + std::f64::consts::FRAC_1_PI) / (n as f64 + 1.0))
}

/// The floats nearest to k·π/2 for k up to about `max / (π/2)` (every k below 4096, then
/// geometrically spaced k), with their neighbours up to 3 ulps away, both signs.
fn near_pio2_f64(max: f64) -> Vec<f64> {
    let mut ks: Vec<f64> = (1..4096).map(|k| k as f64).collect();
    let mut k = 4096.0f64;
    while k * std::f64::consts::FRAC_PI_2 <= max {
        ks.push(k.floor());
        k *= 1.001;
    }
    let mut out = Vec::new();
    for k in ks {
        let centre = k * std::f64::consts::FRAC_PI_2;
        for d in -3i64..=3 {
            let x = f64::from_bits((centre.to_bits() as i64 + d) as u64);
            out.extend([x, -x]);
        }
    }
    out
}

fn near_pio2_f32(max: f64) -> Vec<f32> {
    let mut out = Vec::new();
    for x in near_pio2_f64(max) {
        let centre = x as f32;
        for d in -3i32..=3 {
            out.push(f32::from_bits((centre.to_bits() as i32 + d) as u32));
        }
    }
    out
}

/// What the checks need of f32 and f64.
trait Sample: Copy + std::fmt::LowerExp {
    fn ulps_from(self, other: Self) -> u64;
    fn bits(self) -> u64;
    fn nan(self) -> bool;
}

impl Sample for f32 {
    fn ulps_from(self, other: f32) -> u64 {
        ulps32(self, other)
    }
    fn bits(self) -> u64 {
        self.to_bits().into()
    }
    fn nan(self) -> bool {
        self.is_nan()
    }
}

impl Sample for f64 {
    fn ulps_from(self, other: f64) -> u64 {
        ulps64(self, other)
    }
    fn bits(self) -> u64 {
        self.to_bits()
    }
    fn nan(self) -> bool {
        self.is_nan()
    }
}

/// Max ulp error of `ours` against `reference` over `inputs`; fails with the worst input.
fn check<T: Sample>(name: &str, ours: fn(T) -> T, reference: fn(T) -> T, inputs: impl Iterator<Item = T>, bound: u64) {
    let (mut worst, mut count): (Option<(u64, T)>, usize) = (None, 0);
    for x in inputs {
        let e = ours(x).ulps_from(reference(x));
        if !matches!(worst, Some((most, _)) if e <= most) {
            worst = Some((e, x));
        }
        count += 1;
    }
    let Some((worst, worst_x)) = worst else { panic!("{name}: no points") };
    eprintln!("{name}: {count} points, max {worst} ulp (at {worst_x:e})");
    assert!(
        worst <= bound,
        "{name}: max error {worst} ulp > {bound} at x = {worst_x:e} ({:#x}): ours {:e}, std {:e}",
        worst_x.bits(),
        ours(worst_x),
        reference(worst_x)
    );
}

/// Exact agreement with std on special values, including the sign of zero and NaN-ness.
fn same<T: Sample>(name: &str, ours: fn(T) -> T, reference: fn(T) -> T, inputs: &[T]) {
    for &x in inputs {
        let (a, b) = (ours(x), reference(x));
        assert!(a.bits() == b.bits() || (a.nan() && b.nan()), "{name}({x:e}) = {a:e}, std gives {b:e}");
    }
}

const TINY32: f32 = 1e-45; // smallest subnormal
const TINY64: f64 = 5e-324;

#[test]
fn exp_f32_accuracy() {
    // Finite non-zero results (incl. subnormal ones), the thresholds, and beyond them.
    check("exp_f32 linear", exp_f32, f32::exp, linear_sweep32(-110.0, 95.0, scaled(2_000_000)), 1);
    check("exp_f32 bits", exp_f32, f32::exp, bits_sweep32(TINY32, 200.0, scaled(1_000_000)), 1);
    let specials = [
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        TINY32,
        f32::MAX,
        f32::MIN,
        88.72283,  // largest finite result
        88.72284,  // first overflow
        -87.33654, // about the smallest normal result
        -103.27893,
        -103.97207, // smallest subnormal result
        -103.97208,
        -104.0, // underflows to 0
        1.0,
    ];
    check("exp_f32 specials", exp_f32, f32::exp, specials.into_iter(), 1);
    same(
        "exp_f32",
        exp_f32,
        f32::exp,
        &[0.0, -0.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, 100.0, -200.0, f32::MAX, f32::MIN],
    );
}

#[test]
fn exp_f64_accuracy() {
    check("exp_f64 linear", exp_f64, f64::exp, linear_sweep64(-760.0, 720.0, scaled(1_400_000)), 1);
    check("exp_f64 bits", exp_f64, f64::exp, bits_sweep64(TINY64, 1000.0, scaled(600_000)), 1);
    let specials = [
        0.0,
        -0.0,
        TINY64,
        1.0,
        709.782712893384,   // largest finite result
        709.7827128933841,  // first overflow
        -708.3964185322641, // about the smallest normal result
        -744.4400719213812,
        -745.1332191019411, // smallest subnormal result
        -745.1332191019412,
        -746.0,
    ];
    check("exp_f64 specials", exp_f64, f64::exp, specials.into_iter(), 1);
    same(
        "exp_f64",
        exp_f64,
        f64::exp,
        &[0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 1000.0, -1000.0, f64::MAX, f64::MIN],
    );
}

#[test]
fn ln_f32_accuracy() {
    // Every binade from the smallest subnormal to the largest finite value.
    check("ln_f32 bits", ln_f32, f32::ln, bits_sweep32(TINY32, f32::MAX, scaled(4_000_000)).step_by(2), 1);
    check("ln_f32 near 1", ln_f32, f32::ln, linear_sweep32(0.5, 2.0, scaled(1_000_000)), 1);
    same(
        "ln_f32",
        ln_f32,
        f32::ln,
        &[0.0, -0.0, 1.0, -1.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, -TINY32, f32::MIN],
    );
    check("ln_f32 specials", ln_f32, f32::ln, [TINY32, f32::MIN_POSITIVE, f32::MAX, 2.0, 0.5].into_iter(), 1);
}

#[test]
fn ln_f64_accuracy() {
    check("ln_f64 bits", ln_f64, f64::ln, bits_sweep64(TINY64, f64::MAX, scaled(2_800_000)).step_by(2), 1);
    check("ln_f64 near 1", ln_f64, f64::ln, linear_sweep64(0.5, 2.0, scaled(600_000)), 1);
    same(
        "ln_f64",
        ln_f64,
        f64::ln,
        &[0.0, -0.0, 1.0, -1.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, -TINY64, f64::MIN],
    );
    check("ln_f64 specials", ln_f64, f64::ln, [TINY64, f64::MIN_POSITIVE, f64::MAX, 2.0, 0.5].into_iter(), 1);
}

/// Documented domains of the sin/cos bounds.
const TRIG_DOMAIN_F32: f32 = 1073741824.0; // 2^30
const TRIG_DOMAIN_F64: f64 = 16777216.0; // 2^24

#[test]
fn sin_cos_f32_accuracy() {
    for (name, ours, reference) in
        [("sin_f32", sin_f32 as fn(f32) -> f32, f32::sin as fn(f32) -> f32), ("cos_f32", cos_f32, f32::cos)]
    {
        check(name, ours, reference, bits_sweep32(TINY32, TRIG_DOMAIN_F32, scaled(1_500_000)), 1);
        check(name, ours, reference, linear_sweep32(-100.0, 100.0, scaled(1_000_000)), 1);
        check(name, ours, reference, near_pio2_f32(TRIG_DOMAIN_F32 as f64).into_iter(), 1);
        same(name, ours, reference, &[0.0, -0.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, TINY32, -TINY32]);
    }
}

/// The fast path of generated code: within its range the bits of `sin_f32`/`cos_f32` (so
/// within their bound) and the flag untouched; beyond it (±inf and NaN included) the flag set.
#[test]
fn sin_cos_f32_fast_path() {
    use std::cell::Cell;
    let limit = FAST_SINCOS_F32_LIMIT;
    let mut inside: Vec<f32> = bits_sweep32(TINY32, limit, scaled(1_000_000)).collect();
    inside.extend(linear_sweep32(-(limit as f64), limit as f64, scaled(1_000_000)));
    inside.extend(near_pio2_f32(limit as f64).into_iter().filter(|x| x.abs() <= limit));
    inside.extend([0.0, -0.0, TINY32, -TINY32, limit, -limit]);
    for (name, fast, exact) in [
        ("sin_f32_fast", sin_f32_fast as fn(f32, &Cell<bool>) -> f32, sin_f32 as fn(f32) -> f32),
        ("cos_f32_fast", cos_f32_fast, cos_f32),
    ] {
        let beyond = Cell::new(false);
        for &x in &inside {
            let (got, want) = (fast(x, &beyond), exact(x));
            assert_eq!(got.to_bits(), want.to_bits(), "{name}({x:e}): {got:e} vs {want:e}");
        }
        assert!(!beyond.get(), "{name}: flagged within the fast range");
        for x in [limit.next_up(), -limit.next_up(), 1.0e6, -3.0e9, f32::INFINITY, f32::NEG_INFINITY, f32::NAN] {
            let beyond = Cell::new(false);
            fast(x, &beyond);
            assert!(beyond.get(), "{name}({x:e}) not flagged");
        }
    }
}

#[test]
fn sin_cos_f64_accuracy() {
    for (name, ours, reference) in
        [("sin_f64", sin_f64 as fn(f64) -> f64, f64::sin as fn(f64) -> f64), ("cos_f64", cos_f64, f64::cos)]
    {
        check(name, ours, reference, bits_sweep64(TINY64, TRIG_DOMAIN_F64, scaled(1_000_000)), 1);
        check(name, ours, reference, linear_sweep64(-100.0, 100.0, scaled(600_000)), 1);
        check(name, ours, reference, near_pio2_f64(TRIG_DOMAIN_F64).into_iter(), 1);
        same(name, ours, reference, &[0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, TINY64, -TINY64]);
    }
}

/// Beyond the domain the error grows like |x|·2^-53 (as documented; checked against twice
/// that), and results stay in
/// [−1, 1] even where they are meaningless.
#[test]
fn sin_cos_beyond_domain() {
    for e in [24, 30, 36, 42, 48] {
        let x0 = 2f64.powi(e);
        let bound = (4.0 * x0 * 2f64.powi(-53)).max(1e-7); // 2|x|·2^-53 at the top of the binade
        for k in 0..scaled(20_000) {
            let x = x0 * (1.0 + k as f64 / 20_000.0);
            let x32 = x as f32;
            for (ours, exact) in [(sin_f32(x32) as f64, (x32 as f64).sin()), (cos_f32(x32) as f64, (x32 as f64).cos())]
            {
                assert!((ours - exact).abs() <= bound, "f32 at {x32:e}: {ours} vs {exact}");
            }
            for (ours, exact) in [(sin_f64(x), x.sin()), (cos_f64(x), x.cos())] {
                assert!((ours - exact).abs() <= bound, "f64 at {x:e}: {ours} vs {exact}");
            }
        }
    }
    for x in [1e20f32, 3e38, f32::MAX, -f32::MAX] {
        assert!(sin_f32(x).abs() <= 1.0 && cos_f32(x).abs() <= 1.0, "f32 at {x:e}");
    }
    for x in [1e20f64, 1e300, f64::MAX, -f64::MAX] {
        assert!(sin_f64(x).abs() <= 1.0 && cos_f64(x).abs() <= 1.0, "f64 at {x:e}");
    }
}

#[test]
fn tanh_f32_accuracy() {
    check("tanh_f32 bits", tanh_f32, f32::tanh, bits_sweep32(TINY32, 20.0, scaled(2_000_000)), 2);
    check("tanh_f32 linear", tanh_f32, f32::tanh, linear_sweep32(-10.0, 10.0, scaled(1_000_000)), 2);
    same(
        "tanh_f32",
        tanh_f32,
        f32::tanh,
        &[
            0.0,
            -0.0,
            TINY32,
            -TINY32,
            1e-30,
            -1e-30,
            9.1,
            -9.1,
            20.0,
            -20.0,
            f32::MAX,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
        ],
    );
}

#[test]
fn tanh_f64_accuracy() {
    check("tanh_f64 bits", tanh_f64, f64::tanh, bits_sweep64(TINY64, 40.0, scaled(1_400_000)), 2);
    check("tanh_f64 linear", tanh_f64, f64::tanh, linear_sweep64(-20.0, 20.0, scaled(600_000)), 2);
    same(
        "tanh_f64",
        tanh_f64,
        f64::tanh,
        &[
            0.0,
            -0.0,
            TINY64,
            -TINY64,
            1e-300,
            -1e-300,
            19.1,
            -19.1,
            40.0,
            -40.0,
            f64::MAX,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ],
    );
}

/// The functions give the same bits when a loop over a slice (vectorised in release builds)
/// calls them as when they are called one at a time.
#[test]
fn slice_loops_match_scalar_calls() {
    let xs: Vec<f32> = linear_sweep32(-50.0, 50.0, 4099).collect();
    let xd: Vec<f64> = linear_sweep64(-50.0, 50.0, 4099).collect();
    let fs: [fn(f32) -> f32; 5] = [exp_f32, ln_f32, sin_f32, cos_f32, tanh_f32];
    let fd: [fn(f64) -> f64; 5] = [exp_f64, ln_f64, sin_f64, cos_f64, tanh_f64];
    let mut out32 = vec![0.0f32; xs.len()];
    let mut out64 = vec![0.0f64; xd.len()];
    for i in 0..5 {
        match i {
            0 => out32.iter_mut().zip(&xs).for_each(|(o, x)| *o = exp_f32(*x)),
            1 => out32.iter_mut().zip(&xs).for_each(|(o, x)| *o = ln_f32(*x)),
            2 => out32.iter_mut().zip(&xs).for_each(|(o, x)| *o = sin_f32(*x)),
            3 => out32.iter_mut().zip(&xs).for_each(|(o, x)| *o = cos_f32(*x)),
            _ => out32.iter_mut().zip(&xs).for_each(|(o, x)| *o = tanh_f32(*x)),
        }
        match i {
            0 => out64.iter_mut().zip(&xd).for_each(|(o, x)| *o = exp_f64(*x)),
            1 => out64.iter_mut().zip(&xd).for_each(|(o, x)| *o = ln_f64(*x)),
            2 => out64.iter_mut().zip(&xd).for_each(|(o, x)| *o = sin_f64(*x)),
            3 => out64.iter_mut().zip(&xd).for_each(|(o, x)| *o = cos_f64(*x)),
            _ => out64.iter_mut().zip(&xd).for_each(|(o, x)| *o = tanh_f64(*x)),
        }
        for (x, y) in xs.iter().zip(&out32) {
            let want = std::hint::black_box(fs[i])(*x);
            assert!(y.to_bits() == want.to_bits() || (y.is_nan() && want.is_nan()), "f32 fn {i} at {x:e}");
        }
        for (x, y) in xd.iter().zip(&out64) {
            let want = std::hint::black_box(fd[i])(*x);
            assert!(y.to_bits() == want.to_bits() || (y.is_nan() && want.is_nan()), "f64 fn {i} at {x:e}");
        }
    }
}
