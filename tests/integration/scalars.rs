//! Differential tests of scalar semantics: wrapping integer arithmetic and `%`, bitwise
//! operators and shifts, casts
//! (saturating float-to-int, wrapping int-to-int, bool-to-int), the scalar functions in f64 and
//! f32, and sequential folds (sieve, Fibonacci with a tuple accumulator, Horner, Mandelbrot
//! with a record accumulator).

use crate::harness::{array, scalar};

differential! {
    /// Products wrap, division truncates, `%` keeps the dividend's sign, `-i64::MIN` wraps.
    integer_wrapping: fn(a: [i64], b: [i64]) -> [i64] {
        for i { a[i] * b[i] + a[i] / max(abs(b[i]), 1) - a[i] % 7 + (-a[i]) % -3 }
    }
    cases [n] in [[0], [1], [5], [200]];
    args (a = array([n]).within(-9.3e18, 9.3e18), b = array([n]).within(-5.0, 5.0));
}

differential! {
    /// Bitwise operators and shifts on every width, signed and unsigned: `&`, `|`, `^`, `!`
    /// on the two's complement bits; shift amounts drawn past the width and negative wrap to
    /// the width as release-mode Rust's (`wrapping_shl(n as u32)`); `>>` is arithmetic on
    /// signed types; `&`, `|`, `^` on booleans; Rust's precedence (`x >> 4 & 15`).
    bitwise: fn(a: [i8], b: [u8], c: [i32], d: [u64], e: [i64], n: [i64], p: [bool]) -> ([i8], [u8], [i32], [u64], [i64], [i64], [bool], [u32]) {
        (
            for i { a[i] & b[i] as i8 | !a[i] ^ 85 },
            for i { b[i] << (n[i] as u8) | b[i] >> 3 & 15 },
            for i { c[i] >> (n[i] as i32) ^ c[i] << 7 },
            for i { d[i] >> (n[i] as u64) | !d[i] & 0xff00 },
            for i { e[i] << n[i] },
            for i { (e[i] >> n[i]) + (e[i] >> 63) },
            for i { p[i] & (a[i] > 0) | p[i] ^ (c[i] < 0) & !p[i] },
            for i { sum k in 0..32 { ((c[i] >> (k as i32)) & 1) as u32 } },
        )
    }
    cases [len] in [[0], [1], [7], [200]];
    args (
        a = array([len]), b = array([len]), c = array([len]), d = array([len]).within(0.0, 1.8e19),
        e = array([len]).within(-9.2e18, 9.2e18), n = array([len]).within(-70.0, 70.0), p = array([len])
    );
}

differential! {
    /// std's bit counts, `u32` whatever the width, counted in the argument's width (negative
    /// values as their two's complement, 0 as the whole width), and a Hamming distance matrix.
    bit_counts: fn(a: [i8], b: [u8], c: [i32], d: [u64], e: [i64], u: [usize], x: [[u64]]) -> ([u32], [u32], [u32], [u32], [u32], [u32], [[u32]]) {
        (
            for i { a[i].count_ones() + a[i].leading_zeros() * 10 },
            for i { b[i].count_zeros() + trailing_zeros(b[i]) * 10 },
            for i { c[i].leading_zeros() * 100 + c[i].trailing_zeros() + (c[i] & 0).leading_zeros() },
            for i { d[i].count_ones() + (d[i] & 0).trailing_zeros() * 100 },
            for i { e[i].leading_zeros() + e[i].count_zeros() * 100 },
            for i { u[i].trailing_zeros() + count_ones(u[i]) * 100 },
            for i, j { sum k { (x[i, k] ^ x[j, k]).count_ones() } },
        )
    }
    cases [len] in [[0], [1], [7], [200]];
    args (
        a = array([len]), b = array([len]), c = array([len]), d = array([len]).within(0.0, 1.8e19),
        e = array([len]).within(-9.2e18, 9.2e18), u = array([len]).within(0.0, 1.8e19),
        x = array([len, 5]).within(0.0, 1.8e19)
    );
}

differential! {
    /// std's constants of the number types, infinities and NaN included, as typed literals;
    /// a running maximum from `f64::NEG_INFINITY`.
    constants: fn(x: [f64], y: [f32], k: [i64]) -> ([f64], [f32], [i64], [u8], [bool], [f64]) {
        (
            for i { max(x[i], f64::NEG_INFINITY) * std::f64::consts::PI + f64::EPSILON - f64::MIN / 1e300 },
            for i { min(y[i], f32::INFINITY) + f32::consts::E - f32::MIN_POSITIVE + core::f32::consts::FRAC_PI_4 },
            for i { max(k[i], i64::MIN) / 2 + (k[i] & i64::MAX) % 1000 + i8::MIN as i64 },
            for i { u8::MAX - (k[i] as u8) },
            for i { x[i] < f64::MAX && (x[i] + f64::NAN).is_nan() && u16::BITS == 16 && (y[i] * 0.0 + f32::NAN).is_nan() },
            scan t, m = f64::NEG_INFINITY { max(m, x[t]) },
        )
    }
    cases [len] in [[0], [1], [9], [300]];
    args (x = array([len]), y = array([len]), k = array([len]));
}

differential! {
    i32_arithmetic: fn(a: [[i32]]) -> [i32] {
        for i { sum j { a[i, j] * a[i, j] - (j as i32) * 3 + a[i, j] % 5 } }
    }
    cases [m, n] in [[3, 4], [1, 1], [0, 3], [4, 0], [25, 40]];
    args (a = array([m, n]).within(-70000.0, 70000.0));
}

differential! {
    /// `as` semantics: float to int saturates (and NaN gives 0), i64 to i32 truncates, a
    /// negative i64 to usize wraps, bool to int is 0/1, an index converts to f64.
    casts: fn(x: [f64], k: [i64]) -> ([i64], [f64], [f32], [i32], [usize], [i64]) {
        (
            for i { x[i] as i64 },
            for i { i as f64 + k[i] as f64 },
            for i { x[i] as f32 },
            for i { k[i] as i32 + (x[i] > 0.0) as i32 },
            for i { k[i] as usize },
            for i { sqrt(x[i]) as i64 },
        )
    }
    cases [n] in [[0], [1], [6], [300]];
    args (x = array([n]).within(-1.0e20, 1.0e20), k = array([n]).within(-1.0e12, 1.0e12));
}

differential! {
    math_functions_f64: fn(x: [f64], y: [f64]) -> [f64] {
        for i {
            let ax = abs(x[i]);
            sqrt(ax) + exp(y[i]) - ln(ax + 1.0) + pow(ax, y[i]) + floor(x[i] * 3.0) + ceil(y[i] * 2.0)
                + min(x[i], y[i]) * max(x[i], y[i]) + x[i].sin() + cos(y[i]) + tanh(x[i]) + tan(y[i] * 0.5)
                + x[i].abs().sqrt()
        }
    }
    cases [n] in [[0], [1], [7], [200]];
    args (x = array([n]).within(-4.0, 4.0), y = array([n]).within(-2.0, 2.0));
}

differential! {
    math_functions_f32: fn(x: [f32], y: [f32]) -> [f32] {
        for i {
            let ax = abs(x[i]);
            sqrt(ax) + exp(y[i]) - ln(ax + 1.0) + pow(ax, y[i]) + floor(x[i] * 3.0) + ceil(y[i] * 2.0)
                + min(x[i], y[i]) * max(x[i], y[i]) + x[i].sin() + cos(y[i]) + tanh(x[i]) + tan(y[i] * 0.5)
        }
    }
    cases [n] in [[0], [1], [7], [200]];
    args (x = array([n]).within(-4.0, 4.0), y = array([n]).within(-2.0, 2.0));
}

differential! {
    /// Primality by trial division, as a comprehension of `all`. Both sides of `||` are
    /// evaluated, so the divisor is kept nonzero with `max`.
    sieve_of_primes: fn(m: usize) -> [bool] {
        for n in 0..m { n >= 2 && all d in 0..m { d < 2 || d * d > n || n % max(d, 2) != 0 } }
    }
    cases [m] in [[0], [1], [2], [30], [200]];
    args (m = scalar(m));
}

differential! {
    /// A fold with a tuple accumulator; from n = 93 on, the sum wraps.
    fibonacci_fold: fn(n: usize) -> (i64, i64) {
        fold t in 0..n, (x, y) = (0, 1) { (y, x + y) }
    }
    cases [n] in [[0], [1], [2], [10], [92], [100], [300]];
    args (n = scalar(n));
}

differential! {
    /// Polynomial evaluation by Horner's rule: a scalar fold inside a comprehension.
    horner_fold: fn(coef: [f64], x: [f64]) -> [f64] {
        for i { fold t in 0..coef.len(), acc = 0.0 { acc * x[i] + coef[t] } }
    }
    cases [degree, n] in [[3, 5], [1, 1], [0, 4], [4, 0], [12, 100]];
    args (coef = array([degree]), x = array([n]));
}

differential! {
    /// Folds per element run side by side (blocks of 32 then 8 elements, the rest one at a
    /// time): a scalar state reading the element's index and the step, a tuple of a float and
    /// an integer with the index read after the fold, a record state in f32, an integer state
    /// whose count is a parameter (negative: both fail), and a clamped read (an empty `w`
    /// fails in both).
    folds_per_element_side_by_side: fn(x0: [f64], k: [f64], y: [f32], w: [f64], steps: i64) -> ([f64], [f64], [f32], [i64], [f64]) {
        (
            for i { fold t in 0..steps, s = x0[i] { s * 0.5 + k[i] * (t as f64) - (i as f64) } },
            for i {
                let r = fold t in 0..7, (x, n) = (x0[i], 0) { (x * x - 0.25, n + (t % 3) * n + 1) };
                r.0 + (r.1 as f64) * (i as f64)
            },
            for i { let z = fold t in 0..5, z = { re: y[i], im: 0.5 } { { re: z.re * z.re - z.im * z.im + y[i], im: 2.0 * z.re * z.im } }; z.re + z.im },
            for i in 0..x0.len() { fold t in 0..steps, n = i { n * 3 + (i % 5) - t } },
            for i { fold t in 0..3, s = 0.0 { s + w[i + t - 1] * k[i] } },
        )
    }
    cases [n, m, steps] in [[0, 3, 5], [1, 1, 4], [7, 2, 1], [8, 4, 6], [33, 5, 10], [41, 0, 3], [100, 6, 12], [50, 3, 0]];
    args (x0 = array([n]), k = array([n]), y = array([n]), w = array([m]), steps = scalar(steps as i64 - 1));
}

differential! {
    /// Folds per element side by side reading the element's `let`s before them (a record and
    /// a scalar kept beside the state; a `let` only the rest of the element reads).
    folds_per_element_after_lets: fn(x0: [f64], k: [f64], steps: i64) -> [f64] {
        for i {
            let u = x0[i] * 3.0;
            let g = k[i] * 0.02;
            let c = { a: x0[i], b: g + 1.0 };
            let r = fold t in 0..steps, (s, n) = (c.a, 0) { (s * 0.999 + c.b * g - (n as f64) * 0.001, n + 1) };
            r.0 + u + (r.1 as f64)
        }
    }
    cases [n, steps] in [[0, 5], [1, 4], [9, 1], [40, 7], [100, 13], [33, 0]];
    args (x0 = array([n]), k = array([n]), steps = scalar(steps as i64 - 1));
}

differential! {
    /// Folds per element of a 2-D comprehension, side by side along each row: a negative count
    /// fails only where some row has an element (an empty row checks nothing).
    folds_per_element_in_rows: fn(a: [[f64]], steps: i64) -> [[f64]] {
        for y, x { fold t in 0..steps, s = a[y, x] { s * s - 0.5 + (t as f64) * 0.125 } }
    }
    cases [m, n, steps] in [[3, 0, 0], [0, 3, 0], [2, 40, 4], [5, 9, 0], [1, 1, 3], [4, 33, 7]];
    args (a = array([m, n]), steps = scalar(steps as i64 - 1));
}

differential! {
    /// Escape-time Mandelbrot: the accumulator is a record `{re, im}` and an iteration count;
    /// the select freezes escaped points (both branches are evaluated).
    mandelbrot: fn(cre: [f64], cim: [f64], iters: usize) -> [[i64]] {
        for y, x {
            let c = { re: cre[x], im: cim[y] };
            let result = fold t in 0..iters, state = ({ re: 0.0, im: 0.0 }, 0) {
                let z = state.0;
                let escaped = z.re * z.re + z.im * z.im > 4.0;
                let next = { re: z.re * z.re - z.im * z.im + c.re, im: 2.0 * z.re * z.im + c.im };
                if escaped { state } else { (next, state.1 + 1) }
            };
            result.1
        }
    }
    cases [height, width, it] in [[4, 5, 10], [1, 1, 0], [0, 3, 5], [3, 0, 5], [24, 32, 50]];
    args (cre = array([width]).within(-2.0, 0.6), cim = array([height]).within(-1.2, 1.2), iters = scalar(it));
}

differential! {
    /// The same with separate scalars, the frozen state rebuilt from its fields, and the
    /// condition the other way round: compiled code stops each point's loop once it is frozen
    /// (a fixed point), which must not change any count.
    mandelbrot_rebuilt_state: fn(cre: [f64], cim: [f64], iters: usize) -> [[i64]] {
        for y, x {
            let result = fold t in 0..iters, (zr, zi, n) = (0.0, 0.0, 0) {
                let inside = zr * zr + zi * zi <= 4.0;
                if inside { (zr * zr - zi * zi + cre[x], 2.0 * zr * zi + cim[y], n + 1) } else { (zr, zi, n) }
            };
            result.2
        }
    }
    cases [height, width, it] in [[4, 5, 10], [1, 1, 0], [0, 3, 5], [3, 0, 5], [24, 32, 50]];
    args (cre = array([width]).within(-2.0, 0.6), cim = array([height]).within(-1.2, 1.2), iters = scalar(it));
}

differential! {
    /// Newton's iteration for √a frozen once close enough, and a fold whose freeze depends on
    /// the step (`t`), which must keep running every step.
    frozen_newton_and_step_dependent_freeze: fn(a: [f64], steps: usize) -> [(f64, f64)] {
        for i {
            let root = fold t in 0..steps, x = a[i] + 1.0 {
                if abs(x * x - a[i]) < 1e-9 { x } else { 0.5 * (x + a[i] / x) }
            };
            let late = fold t in 0..steps, y = a[i] {
                if t as f64 > 3.0 { y } else { y * 0.5 + 1.0 }
            };
            (root, late)
        }
    }
    cases [n, k] in [[5, 0], [5, 1], [7, 30], [0, 4], [40, 60]];
    args (a = array([n]).within(0.1, 100.0), steps = scalar(k));
}

differential! {
    /// Folds per element that stop at a fixed point run side by side (blocks of 32 and 8, then
    /// one at a time): each element keeps its state from its own stopping step while the
    /// others go on, and the block stops once all have. Newton's √a frozen when close, from
    /// starts that take different numbers of steps (and a NaN start that never stops); the
    /// condition the other way round with a tuple rebuilt from its fields; an epilogue that
    /// reads the element's index.
    frozen_folds_side_by_side: fn(a: [f64], steps: usize) -> ([f64], [i64]) {
        (
            for i {
                fold t in 0..steps, x = a[i] + 1.0 {
                    if abs(x * x - a[i]) < 1e-9 { x } else { 0.5 * (x + a[i] / x) }
                }
            },
            for i {
                let r = fold t in 0..steps, (v, n) = (a[i], 0) {
                    if v > 1.0 { (v * 0.5, n + 1) } else { (v, n) }
                };
                r.1 * 1000 + i
            },
        )
    }
    cases [n, k] in [[0, 4], [5, 0], [1, 30], [7, 30], [77, 60], [300, 2000]];
    args (a = array([n]).within(0.0, 1e6).specials(), steps = scalar(k));
}

differential! {
    /// A comparison whose left side ends in a cast: `a + i as f64 < b` must not be read by
    /// rustc as generic arguments `f64<…>` (found by the fuzz test on generated programs).
    comparison_after_a_trailing_cast: fn(a: [f64]) -> ([bool], [bool]) {
        (for i { a[i] + (i as f64) < 1.0 }, for i { a[i] * 2.0 - (i as f64) * 0.5 <= a[i] })
    }
    cases [n] in [[0], [1], [6], [50]];
    args (a = array([n]).within(-3.0, 3.0));
}

program! {
    f32_literals: fn(x: [f32], y: [f64]) -> ([f32], [f64], [f32]) {
        (
            for i { x[i] * 1.00000005960464477539062500000001 + 16777217.0000000001 },
            for i { y[i] * 1.00000005960464477539062500000001 + 16777217.0000000001 },
            // A literal cast to `f32` is an `f32` literal, as in Rust; an integer literal with
            // a float suffix may be as large as the float holds.
            for i { (y[i] as f32) * (1.00000005960464477539062500000001 as f32) + 18446744073709551616f32 },
        )
    }
}

/// An `f32` literal is the text rounded once to `f32`, as Rust reads it, not rounded to `f64`
/// and then again to `f32` (which gives 1.0 and 16777216 for these two); an `f64` literal is
/// the text rounded to `f64`. In both forms.
#[test]
#[allow(clippy::excessive_precision, clippy::unnecessary_cast)]
fn float_literals_are_rounded_once_to_their_type() {
    let (x, y) = (vec![1.0f32, 3.0], vec![1.0f64, 3.0]);
    let singles: Vec<f32> =
        x.iter().map(|v| v * 1.00000005960464477539062500000001f32 + 16777217.0000000001f32).collect();
    let doubles: Vec<f64> =
        y.iter().map(|v| v * 1.00000005960464477539062500000001f64 + 16777217.0000000001f64).collect();
    assert_ne!(1.00000005960464477539062500000001f32, 1.0, "the literal must show double rounding");
    let (compiled_singles, compiled_doubles, cast) = f32_literals::run(&x, &y);
    assert_eq!(compiled_singles.as_slice(), &singles[..]);
    assert_eq!(compiled_doubles.as_slice(), &doubles[..]);
    let expected: Vec<f32> =
        y.iter().map(|v| (*v as f32) * (1.00000005960464477539062500000001 as f32) + 18446744073709551616f32).collect();
    assert_eq!(cast.as_slice(), &expected[..]);
    let expression: ein::Array<f32, 1> =
        ein::ein!(for i { x[i] * 1.00000005960464477539062500000001 + 16777217.0000000001 });
    assert_eq!(expression.as_slice(), &singles[..]);
    let expression: ein::Array<f64, 1> =
        ein::ein!(for i { y[i] * 1.00000005960464477539062500000001 + 16777217.0000000001 });
    assert_eq!(expression.as_slice(), &doubles[..]);
}

program! {
    wide_literals: fn(x: [u64], y: [usize], z: [i64]) -> ([u64], [bool], [usize], [i64]) {
        (
            for i { x[i] * 11400714819323198485 },
            for i { x[i] >= 9223372036854775808 },
            for i { y[i] * 4294967296 + 18446744073709551615 },
            for i { max(z[i], -9223372036854775808) + min(z[i], -9223372036854775808i64) },
        )
    }
}

/// Integer literals Rust accepts beyond `i64`'s positive range are `u64`s (or the `usize`
/// they are next to), `-9223372036854775808` is `i64::MIN`; both forms.
#[test]
fn integer_literals_use_the_whole_range_of_64_bits() {
    let x = vec![0u64, 1, 3, u64::MAX, 1 << 63];
    let y = vec![0usize, 1, 7];
    let z = vec![0i64, -5, i64::MIN, i64::MAX];
    let (hashed, top, scaled, lowest) = wide_literals::run(&x, &y, &z);
    let expected: Vec<u64> = x.iter().map(|v| v.wrapping_mul(11400714819323198485)).collect();
    assert_eq!(hashed.as_slice(), &expected[..]);
    assert_eq!(top.as_slice(), &[false, false, false, true, true]);
    let expected: Vec<usize> = y.iter().map(|v| v.wrapping_mul(1 << 32).wrapping_add(usize::MAX)).collect();
    assert_eq!(scaled.as_slice(), &expected[..]);
    let expected: Vec<i64> = z.iter().map(|&v| v.wrapping_add(i64::MIN)).collect();
    assert_eq!(lowest.as_slice(), &expected[..]);
    let expression: ein::Array<u64, 1> = ein::ein!(for i { x[i] * 11400714819323198485 });
    assert_eq!(expression.as_slice(), hashed.as_slice());
    let constant: u64 = ein::ein!(18446744073709551615);
    assert_eq!(constant, u64::MAX);
    let lowest: i64 = ein::ein!(-9223372036854775808);
    assert_eq!(lowest, i64::MIN);
}

mod fast_trig {
    ein::ein! {
        pub fn elementwise(u: [f32]) -> [f32] { for i { sin(u[i]) - cos(u[i]) } }
        pub fn planes(a: [[f32]]) -> [[f32]] { for i, j { sin(a[i, j]) * 2.0 + cos(a[i, j] * 0.5) } }
        pub fn total(u: [f32], w: [f32]) -> f32 { sum j { w[j] * sin(u[j]) + w[j] * cos(u[j] * 0.5) } }
        pub fn sums(u: [f32], v: [f32], w: [f32]) -> [{ re: f32, im: f32 }] {
            for i { { re: sum k { w[k] * cos(u[i] * v[k]) }, im: sum k { w[k] * sin(u[i] * v[k]) } } }
        }
    }
}

/// f32 arguments for the `sin`/`cos` tests: within the fast path's ±12868 (−0 and ±12868
/// included) for `beyond` = 0, so that every chunk keeps its fast run; else also every
/// `beyond`-th of them up to ±41000, NaN, +inf and −12868.5, so that chunks run again.
fn trig_arguments(n: usize, beyond: usize) -> Vec<f32> {
    (0..n)
        .map(|i| {
            let k = ((i * 7919) % 2001) as f32 - 1000.0;
            match (i % 1009, beyond) {
                (5, _) => -0.0,
                (6, _) => 12868.0,
                (7, _) => -12868.0,
                (_, 0) => k * 0.37 + (i % 3) as f32 * 1.0e-3,
                (3, _) => f32::NAN,
                (4, _) => f32::INFINITY,
                (8, _) => -12868.5,
                _ if i % beyond == beyond - 1 => k * 41.0,
                _ => k * 0.37 + (i % 3) as f32 * 1.0e-3,
            }
        })
        .collect()
}

/// Compiled code evaluates f32 `sin`/`cos` in a loop chunk on an all-f32 fast path and runs
/// the chunk again with the exact functions when an argument is beyond it: every element has
/// the bits of the exact functions (`ein::Float`) whichever chunk it fell in, and the results
/// of a sum of them do not depend on what else was computed beside them.
#[test]
fn trig_beyond_the_fast_range() {
    let same_bits = |got: &[f32], want: &[f32], what: &str| {
        assert_eq!(got.len(), want.len(), "{what}");
        for (position, (g, w)) in got.iter().zip(want).enumerate() {
            assert!(g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()), "{what}[{position}]: {g} vs {w}");
        }
    };
    for n in [0, 1, 7, 1000, 70000] {
        for beyond in [0, 1, 600, 50000] {
            let u = trig_arguments(n, beyond);
            let what = format!("n = {n}, beyond = {beyond}");
            let want: Vec<f32> = u.iter().map(|&x| ein::Float::sin(x) - ein::Float::cos(x)).collect();
            same_bits(fast_trig::elementwise(&u).as_slice(), &want, &what);
            let expression: ein::Array<f32, 1> = ein::ein!(for i { sin(u[i]) - cos(u[i]) });
            same_bits(expression.as_slice(), &want, &format!("expression form, {what}"));
            // The same code for f64 (whose fast path is the exact one).
            let wide: Vec<f64> = u.iter().map(|&x| f64::from(x) * 3.0).collect();
            let expression: ein::Array<f64, 1> = ein::ein!(for i { sin(wide[i]) - cos(wide[i]) });
            for (position, (&x, got)) in wide.iter().zip(expression.as_slice()).enumerate() {
                let want = ein::Float::sin(x) - ein::Float::cos(x);
                assert!(got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()), "f64 [{position}]");
            }
            // Within 2 ulp of std's f64 functions rounded, where they are accurate.
            for (&x, &got) in u.iter().zip(&want) {
                if x.abs() <= 12868.0 {
                    let reference = (((x as f64).sin() - (x as f64).cos()) as f32).abs().max(1.0);
                    let exact = ((x as f64).sin() as f32 - (x as f64).cos() as f32) - got;
                    assert!(exact.abs() <= 4.0 * f32::EPSILON * reference, "{what}: sin - cos of {x}: {got}");
                }
            }
            let rows = n / 100;
            let plane = ndarray::Array2::from_shape_vec((rows, 100), u[..rows * 100].to_vec()).unwrap();
            let want: Vec<f32> = plane.iter().map(|&x| ein::Float::sin(x) * 2.0 + ein::Float::cos(x * 0.5)).collect();
            same_bits(fast_trig::planes(&plane).as_slice(), &want, &format!("planes, {what}"));
            // Transposed: the same elements, read with strides.
            let want_t: Vec<f32> =
                plane.t().iter().map(|&x| ein::Float::sin(x) * 2.0 + ein::Float::cos(x * 0.5)).collect();
            same_bits(fast_trig::planes(&plane.t()).as_slice(), &want_t, &format!("transposed planes, {what}"));
        }
    }
    // A top-level sum: an argument beyond the fast path, with a weight of 0, makes its chunk
    // run again exactly, which must not change a bit of the total.
    for n in [1, 1000, 70000] {
        let u: Vec<f32> = (0..n).map(|i| ((i * 7919) % 2001) as f32 * 0.37 - 370.0).collect();
        let w: Vec<f32> = (0..n).map(|i| if i % 5000 == 17 { 0.0 } else { 1.0 + (i % 7) as f32 * 0.125 }).collect();
        let within = fast_trig::total(&u, &w);
        let mut beyond = u.clone();
        for (x, weight) in beyond.iter_mut().zip(&w) {
            if *weight == 0.0 {
                *x += 41000.0;
            }
        }
        assert_eq!(fast_trig::total(&beyond, &w).to_bits(), within.to_bits(), "n = {n}");
        let exact: f64 =
            u.iter().zip(&w).map(|(&x, &w)| f64::from(w) * ((x as f64).sin() + (x as f64 * 0.5).cos())).sum();
        assert!((f64::from(within) - exact).abs() <= 1e-5 * n as f64, "n = {n}: {within} vs {exact}");
    }
    // The sums: each element's result is the same whether its chunk ran fast or again exactly,
    // so the whole run agrees with runs over every part of the arguments on its own.
    let v: Vec<f32> = (0..300).map(|k| 1.0 + (k % 17) as f32 * 0.25).collect();
    let w: Vec<f32> = (0..300).map(|k| ((k * 31) % 7) as f32 * 0.5 - 1.5).collect();
    for beyond in [0, 600, 50000] {
        let u = trig_arguments(3000, beyond);
        let (re, im) = fast_trig::sums(&u, &v, &w);
        for (number, part) in u.chunks(70).enumerate() {
            let start = number * 70;
            let (part_re, part_im) = fast_trig::sums(part, &v, &w);
            same_bits(part_re.as_slice(), &re.as_slice()[start..start + part.len()], "re");
            same_bits(part_im.as_slice(), &im.as_slice()[start..start + part.len()], "im");
        }
    }
}
