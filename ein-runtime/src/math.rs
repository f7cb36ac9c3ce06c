//! Branch-free `exp`, `ln`, `sin`, `cos` and `tanh` for `f32` and `f64` that LLVM's loop
//! auto-vectoriser can turn into packed SIMD code (std's versions are opaque libm calls).
//!
//! # Approach
//!
//! Every function is straight-line code: no branches, no table look-ups, no calls. Special
//! inputs (NaN, ±inf, zero, negative arguments of `ln`, overflow and underflow) are handled by
//! clamping the argument with comparisons and by choosing between already computed values at
//! the end, which LLVM lowers to `select`s (on SSE2 a compare and and/andnot/or, or `min`/`max`
//! for clamps; `blendv` where SSE4.1 is enabled). Rounding
//! to an integer uses the magic-constant trick `(y + 1.5·2^p) − 1.5·2^p` (p = 23 for f32, 52
//! for f64), which also leaves that integer in the low mantissa bits of the intermediate sum;
//! powers of two and exponent/mantissa splits are built with integer arithmetic on the bit
//! pattern (`to_bits`/`from_bits`). Only operations that are single SSE2 instructions are used
//! (+ − × ÷, `abs`, comparisons, integer add/shift/and/or on 32- or 64-bit lanes, `f32 ↔ f64`
//! and `i32 → f32` conversions), so the loops vectorise on the x86-64 baseline.
//!
//! * `exp`: x = n·ln2 + r with |r| ≤ ln2/2 (Cody–Waite: ln2 in two parts, the first short
//!   enough that n·ln2_hi is exact), `e^r = 1 + (r + r²/2 + r³·P(r))` with a minimax `P`, and
//!   the result scaled by 2^n in two exact steps so that subnormal results are rounded once.
//! * `ln`: x = 2^e·m with m ∈ [√½, √2) (subnormals are first scaled by a power of two),
//!   f = m − 1, s = f/(2+f), and `ln(1+f) = f − f²/2 + s·(f²/2 + R(s²))` (R minimax, from the
//!   series of 2·atanh s), added to e·ln2 in two parts.
//! * `sin`, `cos`: x = q·π/2 + r with |r| ≤ π/4 (Cody–Waite: π/2 in parts short enough that q
//!   times each leading part is exact), minimax odd/even polynomials for sin r and cos r, and
//!   the quadrant q mod 4 (read from the bits of the rounding sum) choosing between them and
//!   flipping the sign with bit masks. The `f32` versions reduce in `f64` (π/2 in three
//!   parts, exact for every f32 up to 2^30), split r into an f32 pair rh + rl and evaluate the
//!   polynomials in `f32` on rh, with rl to first order: twice the lanes of an f64
//!   evaluation, and still within 1 ulp. For |x| ≤ 12868 (q ≤ 2^13) they reduce in `f32`
//!   instead (π/2 in five parts, the first three short enough for exact products), to the
//!   same kind of pair; both reductions are computed and one selected, but
//!   `sin_f32_fast`/`cos_f32_fast` compute only the f32 one and flag arguments beyond it,
//!   for generated loops that run a chunk on them and again exactly if the flag was set.
//!   The `f64` versions split π/2 in four parts and carry r as a double-double (TwoSum), so
//!   that arguments next to a multiple of π/2 keep full relative accuracy.
//! * `tanh`: `f32` in f64 arithmetic as E/(E + 2), E = expm1(2|x|) (the `exp` reduction, then
//!   `2^n·em + (2^n − 1)`, exact when n = 0, so there is no cancellation for small |x|). `f64`
//!   computes both an odd minimax polynomial (|x| < 0.55) and 1 − 2/(e^2|x| + 1) (|x| ≥ 0.55,
//!   where the result is ≥ 0.5 and the division's error is halved) and selects one. The sign of
//!   x is copied on at the end; tiny x give x exactly, large |x| saturate to exactly ±1.
//!
//! # Accuracy
//!
//! Maximum error in ulps against std (glibc 2.36's libm here), measured by the
//! `math_accuracy` tests and, for f32, over every f32 in the domain by an exhaustive run; f64
//! over dense sweeps (tens of millions of points while developing, about 2 million in the
//! tests). In brackets, f32 against the correctly rounded result (std's f64 function rounded
//! to f32): glibc's own f32 functions are up to 1 ulp (`tanhf`: 2 ulp) from that.
//!
//! | function | domain of the bound | f32 | f64 |
//! | --- | --- | --- | --- |
//! | `exp` | all x (overflow to +inf, subnormal results, underflow to 0) | 1 (1) | 1 |
//! | `ln` | all x > 0, subnormals included | 1 (1) | 1 |
//! | `sin`, `cos` | f32: \|x\| ≤ 2^30; f64: \|x\| ≤ 2^24 | 1 (1) | 1 |
//! | `tanh` | all x | 2 (1) | 2 |
//!
//! Beyond the `sin`/`cos` domain the reduction loses bits gradually: the absolute error
//! (measured against std's f64 `sin`/`cos`) stays at 3e-8 (f32) / 1e-16 (f64) up to 2^31 /
//! 2^27, then grows like |x|·2^-53 (f32 and f64 alike: 5e-7 at 2^32, 2e-4 at 2^40, 6e-2 at
//! 2^48); from about 2^52 on the result is still in [−1, 1] but meaningless. ±inf and NaN
//! give NaN.

// The polynomial coefficients below are minimax fits (Remez, weighted for relative error on
// the reduced interval) rounded to the target type; they are printed with as many digits as
// round-trip, so no literal carries excess precision.

const MAGIC_F32: f32 = 12_582_912.0; // 1.5 · 2^23
const MAGIC_F64: f64 = 6_755_399_441_055_744.0; // 1.5 · 2^52
const SIGN_F32: u32 = 0x8000_0000;
const SIGN_F64: u64 = 0x8000_0000_0000_0000;
/// Below this |x|, `tanh_f64` uses its odd polynomial; above, 1 − 2/(e^2|x| + 1).
const TANH_SPLIT: f64 = 0.55;

const LOG2E_F32: f32 = std::f32::consts::LOG2_E;
const LOG2E_F64: f64 = std::f64::consts::LOG2_E;
// ln 2 = HI + LO; HI has 15 significant bits (f32) / 42 bits (f64), so e·HI and n·HI are
// exact for every exponent or scale that can occur.
const LN2_HI_F32: f32 = 6.9314575e-1;
const LN2_LO_F32: f32 = 1.4286068e-6;
const LN2_HI_F64: f64 = 0.6931471805598903;
const LN2_LO_F64: f64 = 5.497923018708371e-14;

/// expm1(r) = r + r²/2 + r³·P(r) on |r| ≤ ln2/2; relative error 2^-31.3.
const EXPM1_F32: [f32; 5] = [1.6666666e-1, 4.166648e-2, 8.333419e-3, 1.3933245e-3, 1.982413e-4];
/// The same fit with f64 coefficients, for `tanh_f32` (which works in f64).
const EXPM1_FOR_F32: [f64; 5] =
    [0.16666666299327462, 0.041666482712652275, 0.008333419610356616, 0.001393324432589233, 0.000198241299128327];
/// The same to relative error 2^-60.7.
const EXPM1_F64: [f64; 10] = [
    0.16666666666666674,
    0.04166666666666669,
    0.008333333333322217,
    0.001388888888886704,
    0.00019841269886560988,
    2.4801587365794496e-5,
    2.755724237083811e-6,
    2.755723516692864e-7,
    2.5110036977426975e-8,
    2.0927431788923403e-9,
];

/// 2·atanh(s) = 2s + s·z·R(z), z = s² ≤ (3 − 2√2)²; relative error 2^-29.4.
const LOG_F32: [f32; 3] = [6.666678e-1, 3.9975804e-1, 2.9931757e-1];
/// The same to relative error 2^-58.6.
const LOG_F64: [f64; 7] = [
    0.6666666666666712,
    0.39999999999506836,
    0.2857142873224397,
    0.2222219878914656,
    0.1818358688478327,
    0.15312783461046886,
    0.14814201629625967,
];

/// π/2 = A + B + C for the f32 functions (reduced in f64): A and B have 23 significant bits,
/// so q·A and q·B are exact for |q| < 2^30; A + B + C is within 2^-103 of π/2.
const PIO2_F32: [f64; 3] = [1.570796251296997, 7.549789415861596e-8, 5.390302858158119e-15];
/// π/2 = A + B + C + D for f64: A, B and C have 29 significant bits (q·A, q·B, q·C exact for
/// |q| < 2^24); the sum is within 2^-141 of π/2, so even x next to a multiple of π/2 keep
/// their relative accuracy. All parts are positive (B and C truncated), so that x = −0
/// reduces to r = −0 and sin(−0) = −0.
const PIO2_F64: [f64; 4] = [1.570796325802803, 9.920935774287987e-10, 2.2517417706346578e-18, 3.5215598651832e-27];
/// π/2 = A + B + C + D + E for the all-f32 reduction of the fast path ([`sin_f32_fast`]): A
/// has 8 significant bits and B and C 11, so q·A, q·B and q·C are exact in f32 for
/// |q| ≤ 2^13; D and E carry the rest (the sum is within 2^-88 of π/2).
const PIO2_FAST_F32: [f32; 5] = [1.5703125, 4.837513e-4, 7.5495336e-8, 2.563_344e-12, 8.333743e-20];
/// The largest |x| the fast path reduces itself: 2^13 · π/2, so that |q| ≤ 2^13.
pub const FAST_SINCOS_F32_LIMIT: f32 = 12_868.0;
/// The reduced argument never legitimately exceeds π/4 by more than rounding; clamping to a
/// little more keeps huge (out-of-domain) arguments from blowing the polynomials up.
const R_MAX: f64 = std::f64::consts::FRAC_PI_4 * 1.0001;

/// sin r = r + r³·S(r²) on |r| ≤ π/4 (for the f32 functions; the f64 fit, relative error
/// 2^-36.7, rounded to f32: the r³ term is at most 0.08 of the result, so the coefficients'
/// rounding costs under 0.01 ulp).
const SIN_F32: [f32; 4] = [-0.16666667, 0.008333329, -0.00019839204, 2.7168219e-6];
/// cos r = 1 − r²/2 + r⁴·C(r²) (for the f32 functions; the f64 fit, relative error 2^-31.8,
/// rounded to f32).
const COS_F32: [f32; 3] = [0.041666653, -0.0013887616, 2.4458943e-5];
/// sin r for f64, relative error 2^-57.0.
const SIN_F64: [f64; 6] = [
    -0.1666666666666664,
    0.008333333333322932,
    -0.00019841269829516653,
    2.755731342704455e-6,
    -2.505069897181688e-8,
    1.589264708820264e-10,
];
/// cos r for f64, relative error 2^-62.0.
const COS_F64: [f64; 6] = [
    0.04166666666666665,
    -0.0013888888888882382,
    2.480158729423526e-5,
    -2.755731559795953e-7,
    2.0875875465455472e-9,
    -1.1366690814306539e-11,
];

/// tanh x = x + x³·T(x²) on |x| ≤ 0.55, relative error 2^-59.7.
const TANH_F64: [f64; 11] = [
    -0.33333333333333315,
    0.13333333333328878,
    -0.053968253964721734,
    0.021869488405507634,
    -0.008863232820223634,
    0.0035920933910906882,
    -0.001455547090768413,
    0.000588446426819127,
    -0.0002333531683483469,
    8.323507468880467e-5,
    -1.942291681847241e-5,
];

/// Horner evaluation of `c[0] + c[1]·t + …` (unrolled by the compiler: `N` is a constant).
#[inline(always)]
fn horner_f32<const N: usize>(t: f32, c: &[f32; N]) -> f32 {
    let mut acc = c[N - 1];
    let mut i = N - 1;
    while i > 0 {
        i -= 1;
        acc = acc * t + c[i];
    }
    acc
}

#[inline(always)]
fn horner_f64<const N: usize>(t: f64, c: &[f64; N]) -> f64 {
    let mut acc = c[N - 1];
    let mut i = N - 1;
    while i > 0 {
        i -= 1;
        acc = acc * t + c[i];
    }
    acc
}

/// `c[0] + c[1]·t + …` as E(t²) + t·O(t²), E and O (the even and odd coefficients) by Horner:
/// two independent dependency chains of half the length, which matters once the loop is
/// vectorised and latency-bound. (Written with constant trip counts so that it unrolls fully
/// before the loop vectoriser runs.)
#[inline(always)]
fn horner2_f64<const N: usize>(t: f64, c: &[f64; N]) -> f64 {
    let t2 = t * t;
    let (ne, no) = (N.div_ceil(2), N / 2);
    let mut even = c[2 * (ne - 1)];
    let mut k = ne - 1;
    while k > 0 {
        k -= 1;
        even = even * t2 + c[2 * k];
    }
    let mut odd = c[2 * no - 1];
    let mut k = no - 1;
    while k > 0 {
        k -= 1;
        odd = odd * t2 + c[2 * k + 1];
    }
    even + t * odd
}

/// expm1(r) for |r| ≤ ln2/2 (a little more is harmless).
#[inline(always)]
fn expm1_kernel_f32(r: f32) -> f32 {
    r + r * r * (0.5 + r * horner_f32(r, &EXPM1_F32))
}

#[inline(always)]
fn expm1_kernel_f64(r: f64) -> f64 {
    r + r * r * (0.5 + r * horner2_f64(r, &EXPM1_F64))
}

/// Splits y = n·ln2 + r. Returns r and the bit pattern of the rounding sum, whose low bits hold
/// n (two's complement, offset by the bits of `MAGIC_F32`).
#[inline(always)]
fn exp_reduce_f32(y: f32) -> (f32, u32) {
    let t = y * LOG2E_F32 + MAGIC_F32;
    let n = t - MAGIC_F32;
    let r = (y - n * LN2_HI_F32) - n * LN2_LO_F32;
    (r, t.to_bits())
}

#[inline(always)]
fn exp_reduce_f64(y: f64) -> (f64, u64) {
    let t = y * LOG2E_F64 + MAGIC_F64;
    let n = t - MAGIC_F64;
    let r = (y - n * LN2_HI_F64) - n * LN2_LO_F64;
    (r, t.to_bits())
}

/// e^x for f32.
///
/// Max error 1 ulp against std over every f32 (finite, subnormal and overflowing results
/// alike). x ≥ 88.72284 gives +inf, x ≤ −103.97208 gives 0, −inf gives 0, NaN gives NaN.
#[inline(always)]
pub fn exp_f32(x: f32) -> f32 {
    // Clamp to where the result is already inf or 0 (comparisons keep NaN as it is), so the
    // scale below stays in range.
    let x = if x > 89.0 { 89.0 } else { x };
    let x = if x < -110.0 { -110.0 } else { x };
    let (r, tbits) = exp_reduce_f32(x);
    let p = 1.0 + expm1_kernel_f32(r);
    // n + 256 ∈ [97, 385] is positive: halve it with a logical shift and build 2^n1 · 2^n2,
    // each a normal number, so p·2^n1 is exact and only the last product rounds (once, even
    // for a subnormal result).
    let u = tbits.wrapping_sub(MAGIC_F32.to_bits().wrapping_sub(256));
    let u1 = u >> 1;
    let s1 = f32::from_bits(u1.wrapping_sub(1).wrapping_shl(23)); // 2^(u1 − 128)
    let s2 = f32::from_bits(u.wrapping_sub(u1).wrapping_sub(1).wrapping_shl(23)); // 2^(u − u1 − 128)
    p * s1 * s2
}

/// e^x for f64.
///
/// Max error 1 ulp against std (measured on dense sweeps of [−760, 720] and of all magnitudes,
/// subnormal results and both thresholds included). x ≥ 709.7827128933841 gives +inf,
/// x ≤ −745.1332191019412 gives 0, −inf gives 0, NaN gives NaN.
#[inline(always)]
pub fn exp_f64(x: f64) -> f64 {
    let x = if x > 710.0 { 710.0 } else { x };
    let x = if x < -760.0 { -760.0 } else { x };
    let (r, tbits) = exp_reduce_f64(x);
    let p = 1.0 + expm1_kernel_f64(r);
    // As in exp_f32, with n + 2048 ∈ [951, 3074].
    let u = tbits.wrapping_sub(MAGIC_F64.to_bits().wrapping_sub(2048));
    let u1 = u >> 1;
    let s1 = f64::from_bits(u1.wrapping_sub(1).wrapping_shl(52)); // 2^(u1 − 1024)
    let s2 = f64::from_bits(u.wrapping_sub(u1).wrapping_sub(1).wrapping_shl(52)); // 2^(u − u1 − 1024)
    p * s1 * s2
}

/// Natural logarithm for f32.
///
/// Max error 1 ulp against std over every positive f32, subnormals included. ln(±0) = −inf,
/// ln(+inf) = +inf, ln(x < 0) = NaN, NaN gives NaN.
#[inline(always)]
pub fn ln_f32(x: f32) -> f32 {
    // Subnormals: scale into the normal range (the exponent is corrected below).
    let sub = x < f32::MIN_POSITIVE;
    let xs = if sub { x * 8_388_608.0 } else { x }; // 2^23
    let bias = if sub { 127 + 23 } else { 127 };
    // Add the bits of 1 − √½ so that mantissas ≥ √2 carry into the exponent; then m ∈ [√½, √2).
    let ix = xs.to_bits().wrapping_add(0x3f80_0000 - 0x3f35_04f3);
    let e = ((ix >> 23) as i32).wrapping_sub(bias) as f32;
    let m = f32::from_bits((ix & 0x007f_ffff) + 0x3f35_04f3);
    let f = m - 1.0; // exact (Sterbenz)
    let s = f / (2.0 + f);
    let z = s * s;
    let hfsq = 0.5 * f * f;
    let rz = z * horner_f32(z, &LOG_F32);
    // ln(1+f) = f − hfsq + s·(hfsq + R): the big terms are added last.
    let y = e * LN2_HI_F32 + (f - (hfsq - (s * (hfsq + rz) + e * LN2_LO_F32)));
    // Special inputs, with as few selects as possible (each costs several SSE2 instructions).
    let y = if x > f32::MAX { x } else { y };
    let z = if x == 0.0 { f32::NEG_INFINITY } else { f32::NAN };
    if x > 0.0 {
        y
    } else {
        z
    }
}

/// Natural logarithm for f64.
///
/// Max error 1 ulp against std (measured on dense sweeps of all positive magnitudes,
/// subnormals included). ln(±0) = −inf, ln(+inf) = +inf, ln(x < 0) = NaN, NaN gives NaN.
#[inline(always)]
pub fn ln_f64(x: f64) -> f64 {
    let sub = x < f64::MIN_POSITIVE;
    let xs = if sub { x * 18_014_398_509_481_984.0 } else { x }; // 2^54
    let bias = if sub { 1023.0 + 54.0 } else { 1023.0 };
    let ix = xs.to_bits().wrapping_add(0x3ff0_0000_0000_0000 - 0x3fe6_a09e_667f_3bcd);
    // The biased exponent (< 2^12) converted to f64 through the bits of 2^52 + k, because
    // SSE2 has no packed i64 → f64 conversion.
    let k = f64::from_bits(0x4330_0000_0000_0000 | (ix >> 52)) - 4_503_599_627_370_496.0; // − 2^52
    let e = k - bias;
    let m = f64::from_bits((ix & 0x000f_ffff_ffff_ffff) + 0x3fe6_a09e_667f_3bcd);
    let f = m - 1.0;
    let s = f / (2.0 + f);
    let z = s * s;
    let hfsq = 0.5 * f * f;
    let rz = z * horner2_f64(z, &LOG_F64);
    let y = e * LN2_HI_F64 + (f - (hfsq - (s * (hfsq + rz) + e * LN2_LO_F64)));
    // Special inputs, with as few selects as possible (each costs several SSE2 instructions).
    let y = if x > f64::MAX { x } else { y };
    let z = if x == 0.0 { f64::NEG_INFINITY } else { f64::NAN };
    if x > 0.0 {
        y
    } else {
        z
    }
}

/// Reduces x = q·π/2 + r, π/2 given in three parts (for the f32 functions, in f64). Returns r,
/// clamped to about ±π/4, and the bits of the rounding sum: their two low bits are q mod 4.
#[inline(always)]
fn reduce_pio2_for_f32(x: f64, pio2: &[f64; 3]) -> (f64, u64) {
    let t = x * std::f64::consts::FRAC_2_PI + MAGIC_F64;
    let q = t - MAGIC_F64;
    let r = ((x - q * pio2[0]) - q * pio2[1]) - q * pio2[2];
    let r = if r > R_MAX { R_MAX } else { r };
    let r = if r < -R_MAX { -R_MAX } else { r };
    (r, t.to_bits())
}

/// TwoSum: a + b = s + e exactly, s = fl(a + b).
#[inline(always)]
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let v = s - a;
    (s, (a - (s - v)) + (b - v))
}

/// As `reduce_pio2_for_f32`, for f64, with π/2 in four parts: r is returned as rh + rl, the
/// rounding errors of the subtractions recovered exactly with TwoSum, since an error of 1 ulp
/// in r would be an error of 1 ulp in sin r.
#[inline(always)]
fn reduce_pio2_f64(x: f64) -> (f64, f64, u64) {
    let t = x * std::f64::consts::FRAC_2_PI + MAGIC_F64;
    let q = t - MAGIC_F64;
    let w = x - q * PIO2_F64[0]; // exact
    let (r1, e1) = two_sum(w, -(q * PIO2_F64[1])); // q·B exact
    let (r2, e2) = two_sum(r1, -(q * PIO2_F64[2])); // q·C exact
    let tail = -(q * PIO2_F64[3] - (e1 + e2)); // −0, not +0, when everything is zero
    let rh = r2 + tail;
    let rl = (r2 - rh) + tail;
    let rh = if rh > R_MAX { R_MAX } else { rh };
    let rh = if rh < -R_MAX { -R_MAX } else { rh };
    // |rl| ≤ ulp(rh) in the domain; out of it, keep garbage from reaching the result.
    let rl = if rl > 1e-16 { 1e-16 } else { rl };
    let rl = if rl < -1e-16 { -1e-16 } else { rl };
    (rh, rl, t.to_bits())
}

/// Picks `s` (even quadrant) or `c` (odd) and negates for quadrants 2 and 3, by bit masks.
#[inline(always)]
fn quadrant_select(q: u64, s: f64, c: f64) -> f64 {
    let odd = (q & 1).wrapping_neg(); // all ones when q is odd
    let bits = (s.to_bits() & !odd) | (c.to_bits() & odd);
    f64::from_bits(bits ^ ((q & 2) << 62))
}

/// `v` with the sign bit of `r` or-ed in. sin r has the sign of r on [−π/4, π/4], so this
/// changes nothing except sin(−0), which `r + r³·S` would round to +0.
#[inline(always)]
fn or_sign(v: f64, r: f64) -> f64 {
    f64::from_bits(v.to_bits() | (r.to_bits() & SIGN_F64))
}

/// [`or_sign`] for f32.
#[inline(always)]
fn or_sign_f32(v: f32, r: f32) -> f32 {
    f32::from_bits(v.to_bits() | (r.to_bits() & SIGN_F32))
}

/// sin and cos of rh + rl for |rh| ≤ π/4 (a little more at the edges), |rl| ≤ ulp(rh), in
/// f32 arithmetic: the polynomials run on rh, and rl enters to first order,
/// sin(rh + rl) ≈ sin rh + rl and cos(rh + rl) ≈ cos rh − rh·rl. (Recovering the rounding
/// error of 1 − z/2 by Fast2Sum cost 5% of MRI-Q's time and was not needed for the 1 ulp.)
#[inline(always)]
fn sincos_kernel_f32(rh: f32, rl: f32) -> (f32, f32) {
    let z = rh * rh;
    let s = rh + (rl + rh * z * horner_f32(z, &SIN_F32));
    // sin has the sign of r on [−π/4, π/4]: or-ing it in changes nothing but sin(−0), which
    // the sum above rounds to +0.
    let s = or_sign_f32(s, rh);
    let c = (1.0 - 0.5 * z) + (z * z * horner_f32(z, &COS_F32) - rh * rl);
    (s, c)
}

/// x = q·π/2 + rh + rl for |x| ≤ [`FAST_SINCOS_F32_LIMIT`], all in f32 (16 lanes to an
/// AVX-512 vector where the f64 reduction has 8): q·A, q·B and q·C are exact, so are the
/// two subtractions that give r2 = x − q·A − q·B; rh = r2 − q·C rounded, and rl gathers its
/// rounding error and the small parts. Returns rh, rl and the bits of the rounding sum (q
/// mod 4 in the low two). Beyond the limit the result is meaningless: callers check
/// [`beyond_fast_range`].
#[inline(always)]
fn reduce_fast_f32(x: f32) -> (f32, f32, u32) {
    let t = x * std::f32::consts::FRAC_2_PI + MAGIC_F32;
    let q = t - MAGIC_F32;
    let [a, b, c, d, e] = PIO2_FAST_F32;
    let r2 = (x - q * a) - q * b;
    let rh = r2 - q * c;
    let rl = (((r2 - rh) - q * c) - q * d) - q * e;
    (rh, rl, t.to_bits())
}

/// The reduction of the f32 functions: [`reduce_fast_f32`]'s for |x| ≤
/// [`FAST_SINCOS_F32_LIMIT`] (so that [`sin_f32`] and [`sin_f32_fast`] agree to the bit
/// there), the f64 one for the rest (and NaN), split into an f32 pair.
#[inline(always)]
fn reduce_f32(x: f32) -> (f32, f32, u32) {
    let (fast_h, fast_l, fast_q) = reduce_fast_f32(x);
    let (r, q) = reduce_pio2_for_f32(x as f64, &PIO2_F32);
    let rh = r as f32;
    let rl = (r - f64::from(rh)) as f32;
    if beyond_fast_range(x) {
        (rh, rl, q as u32)
    } else {
        (fast_h, fast_l, fast_q)
    }
}

/// True when the fast f32 reduction does not hold for x: |x| > [`FAST_SINCOS_F32_LIMIT`],
/// ±inf or NaN.
#[inline(always)]
#[allow(clippy::neg_cmp_op_on_partial_ord)] // NaN is beyond: the comparison is false for it.
fn beyond_fast_range(x: f32) -> bool {
    !(x.abs() <= FAST_SINCOS_F32_LIMIT)
}

/// `quadrant_select` for the f32 functions (q: the low bits of the f64 rounding sum's bit
/// pattern; only q mod 4 matters).
#[inline(always)]
fn quadrant_select_f32(q: u32, s: f32, c: f32) -> f32 {
    let odd = (q & 1).wrapping_neg();
    let bits = (s.to_bits() & !odd) | (c.to_bits() & odd);
    f32::from_bits(bits ^ ((q & 2) << 30))
}

/// sin and cos of rh + rl for |rh| ≤ π/4, |rl| ≤ ulp(rh), to f64 precision.
#[inline(always)]
fn sincos_kernel_f64(rh: f64, rl: f64) -> (f64, f64) {
    let z = rh * rh;
    let hz = 0.5 * z;
    // sin(rh + rl) ≈ sin rh + rl·cos rh, cos(rh + rl) ≈ cos rh − rl·sin rh.
    let s = or_sign(rh + (rh * z * horner2_f64(z, &SIN_F64) + (rl - hz * rl)), rh);
    // 1 − z/2 with its rounding error recovered exactly (Fast2Sum), then the small terms.
    let w = 1.0 - hz;
    let c = w + (((1.0 - w) - hz) + (z * z * horner2_f64(z, &COS_F64) - rh * rl));
    (s, c)
}

/// Sine for f32 (reduced in f32 for |x| ≤ [`FAST_SINCOS_F32_LIMIT`], else in f64; evaluated
/// in f32).
///
/// Max error 1 ulp against std for |x| ≤ 2^30 (measured over every f32 there). Beyond, the
/// absolute error grows like |x|·2^-53 (see the module docs); from about 2^52 on the result
/// is in [−1, 1] but meaningless. sin(−0) = −0; ±inf and NaN give NaN.
#[inline(always)]
pub fn sin_f32(x: f32) -> f32 {
    let (rh, rl, q) = reduce_f32(x);
    let (s, c) = sincos_kernel_f32(rh, rl);
    quadrant_select_f32(q, s, c)
}

/// Cosine for f32 (reduced as [`sin_f32`]; evaluated in f32).
///
/// Max error 1 ulp against std for |x| ≤ 2^30 (measured over every f32 there). Beyond, the
/// absolute error grows like |x|·2^-53 (see the module docs); from about 2^52 on the result
/// is in [−1, 1] but meaningless. ±inf and NaN give NaN.
#[inline(always)]
pub fn cos_f32(x: f32) -> f32 {
    let (rh, rl, q) = reduce_f32(x);
    let (s, c) = sincos_kernel_f32(rh, rl);
    quadrant_select_f32(q.wrapping_add(1), s, c)
}

/// [`sin_f32`] on the fast path of generated code: the all-f32 reduction only, bit-identical
/// to [`sin_f32`] for |x| ≤ [`FAST_SINCOS_F32_LIMIT`]; for any other x (±inf and NaN too) it
/// sets `beyond` and returns garbage, and the caller must compute again with [`sin_f32`].
/// Generated code runs a chunk of a loop with this and reruns the chunk with the exact
/// function when the flag is set, which keeps the loop free of the f64 reduction.
#[inline(always)]
pub fn sin_f32_fast(x: f32, beyond: &std::cell::Cell<bool>) -> f32 {
    beyond.set(beyond.get() | beyond_fast_range(x));
    let (rh, rl, q) = reduce_fast_f32(x);
    let (s, c) = sincos_kernel_f32(rh, rl);
    quadrant_select_f32(q, s, c)
}

/// [`cos_f32`] on the fast path of generated code; see [`sin_f32_fast`].
#[inline(always)]
pub fn cos_f32_fast(x: f32, beyond: &std::cell::Cell<bool>) -> f32 {
    beyond.set(beyond.get() | beyond_fast_range(x));
    let (rh, rl, q) = reduce_fast_f32(x);
    let (s, c) = sincos_kernel_f32(rh, rl);
    quadrant_select_f32(q.wrapping_add(1), s, c)
}

/// Sine for f64.
///
/// Max error 1 ulp against std for |x| ≤ 2^24 (measured on dense sweeps and next to multiples
/// of π/2). Beyond, the absolute error grows like |x|·2^-53 (see the module docs); from about
/// 2^52 on the result is in [−1, 1] but meaningless. sin(−0) = −0; ±inf and NaN give NaN.
#[inline(always)]
pub fn sin_f64(x: f64) -> f64 {
    let (rh, rl, q) = reduce_pio2_f64(x);
    let (s, c) = sincos_kernel_f64(rh, rl);
    quadrant_select(q, s, c)
}

/// Cosine for f64.
///
/// Max error 1 ulp against std for |x| ≤ 2^24 (measured on dense sweeps and next to multiples
/// of π/2). Beyond, the absolute error grows like |x|·2^-53 (see the module docs); from about
/// 2^52 on the result is in [−1, 1] but meaningless. ±inf and NaN give NaN.
#[inline(always)]
pub fn cos_f64(x: f64) -> f64 {
    let (rh, rl, q) = reduce_pio2_f64(x);
    let (s, c) = sincos_kernel_f64(rh, rl);
    quadrant_select(q.wrapping_add(1), s, c)
}

/// Hyperbolic tangent for f32 (computed in f64).
///
/// Max error 2 ulp against std over every f32 (1 ulp against the correctly rounded result:
/// glibc's `tanhf` is itself up to 2 ulp off). Tiny x give x, |x| ≥ 9.011 gives ±1, the sign
/// of zero is kept, NaN gives NaN.
#[inline(always)]
pub fn tanh_f32(x: f32) -> f32 {
    let a = (x as f64).abs();
    let a = if a > 10.0 { 10.0 } else { a }; // tanh is 1.0f32 from 9.01 on
    let (r, tbits) = exp_reduce_f64(2.0 * a);
    let em = r + r * r * (0.5 + r * horner_f64(r, &EXPM1_FOR_F32));
    // E = expm1(2a) = 2^n·em + (2^n − 1), n ∈ [0, 29]; exact pass-through when n = 0.
    let s = f64::from_bits(tbits.wrapping_sub(MAGIC_F64.to_bits()).wrapping_add(1023).wrapping_shl(52));
    let e = s * em + (s - 1.0);
    let t = (e / (e + 2.0)) as f32;
    or_sign_f32(t, x)
}

/// Hyperbolic tangent for f64.
///
/// Max error 2 ulp against std (measured on dense sweeps from 2^-1074 to saturation; glibc's
/// `tanh` is itself up to about 2 ulp off near 0.2–0.5). Tiny x give x, |x| ≥ 19.07 gives ±1,
/// the sign of zero is kept, NaN gives NaN.
#[inline(always)]
pub fn tanh_f64(x: f64) -> f64 {
    let a = x.abs();
    let a = if a > 20.0 { 20.0 } else { a }; // tanh is 1.0f64 from 19.07 on
    let (r, tbits) = exp_reduce_f64(2.0 * a);
    let em = expm1_kernel_f64(r);
    // 2^n for n ∈ [0, 58].
    let s = f64::from_bits(tbits.wrapping_sub(MAGIC_F64.to_bits()).wrapping_add(1023).wrapping_shl(52));
    // Large a: 1 − 2/(e^2a + 1), with e^2a + 1 = 2^n·em + (2^n + 1) rounded once; t ≥ 0.5
    // there, so the errors of the division shrink by 2/(e^2a + 1) < 1/2.
    let d = s * em + (s + 1.0);
    let large = 1.0 - 2.0 / d;
    // Small a: an odd polynomial, which has no cancellation and gives tiny a exactly.
    let z = a * a;
    let small = a + a * z * horner2_f64(z, &TANH_F64);
    let t = if a < TANH_SPLIT { small } else { large };
    f64::from_bits(t.to_bits() | (x.to_bits() & SIGN_F64))
}

/// `pow(x, y)`: std's `powf`, except for the exponents that literal exponents usually are —
/// 2 and 3 (`x·x`, `x·x·x`), ±½ and ±3/2 (through `sqrt`) — which take a few multiplications
/// and a square root instead of a call, so that loops vectorise and `pow(r2, 1.5)` costs what
/// `r2 * sqrt(r2)` does. Every special value is std's (±0, ±inf, NaN, negative bases); other
/// results are within 2 ulp of std's (`x·x` is exact; each further operation rounds once).
/// With a literal exponent the tests fold away after inlining.
macro_rules! pow_with_halves {
    ($name:ident, $float:ident) => {
        #[inline(always)]
        pub fn $name(x: $float, y: $float) -> $float {
            // `x + 0.0` turns -0 into +0, as `powf` treats it for these exponents; -inf is
            // `powf`'s +inf (positive exponents) or +0 (negative ones), where `sqrt` gives NaN.
            let base = x + 0.0;
            let root = base.sqrt();
            let minus_infinity = x == $float::NEG_INFINITY;
            if y == 2.0 {
                x * x
            } else if y == 3.0 {
                x * x * x
            } else if y == 0.5 {
                if minus_infinity {
                    $float::INFINITY
                } else {
                    root
                }
            } else if y == 1.5 {
                if minus_infinity {
                    $float::INFINITY
                } else {
                    base * root
                }
            } else if y == -0.5 {
                if minus_infinity {
                    0.0
                } else {
                    1.0 / root
                }
            } else if y == -1.5 {
                // Not 1 / (base · root): that product is subnormal, and inexact, for bases
                // whose result is still finite.
                if minus_infinity {
                    0.0
                } else {
                    (1.0 / base) / root
                }
            } else {
                x.powf(y)
            }
        }
    };
}

pow_with_halves!(pow_f32, f32);
pow_with_halves!(pow_f64, f64);

#[cfg(test)]
mod pow_tests {
    use super::{pow_f32, pow_f64};

    /// The distance in ulps between two floats of the same sign (0 when both are NaN).
    fn ulps_f64(a: f64, b: f64) -> u64 {
        if a.is_nan() && b.is_nan() {
            return 0;
        }
        (a.to_bits() as i64).wrapping_sub(b.to_bits() as i64).unsigned_abs()
    }

    fn ulps_f32(a: f32, b: f32) -> u64 {
        if a.is_nan() && b.is_nan() {
            return 0;
        }
        u64::from((a.to_bits() as i32).wrapping_sub(b.to_bits() as i32).unsigned_abs())
    }

    const EXPONENTS: [f64; 7] = [2.0, 3.0, 0.5, 1.5, -0.5, -1.5, 2.5];

    #[test]
    fn special_values_are_stds_exactly() {
        let specials = [0.0, -0.0, 1.0, -1.0, 4.0, -4.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, f64::MIN_POSITIVE];
        for &y in &EXPONENTS {
            for &x in &specials {
                let (ours, std) = (pow_f64(x, y), x.powf(y));
                assert!(
                    ours.to_bits() == std.to_bits() || (ours.is_nan() && std.is_nan()),
                    "pow({x:e}, {y}) = {ours:e}, std {std:e}"
                );
                let (x, y) = (x as f32, y as f32);
                let (ours, std) = (pow_f32(x, y), x.powf(y));
                assert!(
                    ours.to_bits() == std.to_bits() || (ours.is_nan() && std.is_nan()),
                    "pow({x:e}, {y}) = {ours:e}, std {std:e} (f32)"
                );
            }
        }
    }

    #[test]
    fn results_are_within_two_ulp_of_std() {
        // Bases spread over many binades, subnormal and huge ones included.
        let mut x = 1e-310f64;
        let mut worst = [0u64; 2];
        while x < 1e300 {
            for &y in &EXPONENTS {
                worst[0] = worst[0].max(ulps_f64(pow_f64(x, y), x.powf(y)));
                let (xf, yf) = (x as f32, y as f32);
                worst[1] = worst[1].max(ulps_f32(pow_f32(xf, yf), xf.powf(yf)));
            }
            x *= 1.000_37;
        }
        assert!(worst[0] <= 2 && worst[1] <= 2, "worst ulps f64 {}, f32 {}", worst[0], worst[1]);
    }
}
