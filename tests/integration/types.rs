//! Every scalar type (the twelve primitive numbers and `bool`), differentially: wrapping
//! arithmetic at each type's width, `as` casts between every pair, reductions and argmax, folds,
//! in the item form and the expression form, on every layout.

use crate::harness::{array, scalar};

/// The tests of one integer type `$t`, whose values are drawn from `$low..=$high` (its whole
/// range for the narrow types, so that arithmetic wraps).
macro_rules! integer_type_tests {
    ($t:ident, $low:expr, $high:expr) => {
        mod $t {
            use super::*;

            differential! {
                /// Wrapping `+ - *`, truncating `/` and `%` (divisors kept away from zero),
                /// wrapping negation, `abs`, `min`, `max`, comparisons.
                arithmetic: fn(a: [$t], b: [$t]) -> ([$t], [$t], [bool]) {
                    (
                        for i { a[i] * b[i] + a[i] - b[i] + -a[i] * 3 },
                        for i { a[i] / max(b[i], 1) + a[i] % max(b[i], 2) + abs(a[i]) + min(a[i], b[i]) },
                        for i { a[i] < b[i] || a[i] == b[i] + 1 },
                    )
                }
                cases [n] in [[0], [1], [7], [150]];
                args (a = array([n]).within($low, $high), b = array([n]).within($low, $high));
            }

            differential! {
                /// `as` to every other type: integers wrap or extend, floats round.
                casts: fn(a: [$t]) -> ([f32], [f64], [i8], [i16], [i32], [i64], [isize], [u8], [u16], [u32], [u64], [usize]) {
                    (
                        for i { a[i] as f32 }, for i { a[i] as f64 },
                        for i { a[i] as i8 }, for i { a[i] as i16 }, for i { a[i] as i32 },
                        for i { a[i] as i64 }, for i { a[i] as isize },
                        for i { a[i] as u8 }, for i { a[i] as u16 }, for i { a[i] as u32 },
                        for i { a[i] as u64 }, for i { a[i] as usize },
                    )
                }
                cases [n] in [[0], [1], [9], [120]];
                args (a = array([n]).within($low, $high));
            }

            differential! {
                /// Row reductions (wrapping sums and products), argmax/argmin (first of ties),
                /// a top-level sum, and a fold with a tuple accumulator of the type.
                reductions: fn(a: [[$t]], n: usize) -> ([$t], [$t], [$t], [$t], [usize], [usize], $t, ($t, $t)) {
                    (
                        for i { sum j { a[i, j] } },
                        for i { prod j { a[i, j] } },
                        for i { max j { a[i, j] } },
                        for i { min j { a[i, j] } },
                        for i { argmax j { a[i, j] } },
                        for i { argmin j { a[i, j] } },
                        sum i { sum j { a[i, j] } },
                        fold t in 0..n, p = (0 as $t, 1 as $t) { (p.1, p.0 + p.1 * 3) },
                    )
                }
                cases [r, c, steps] in [[2, 3, 0], [1, 1, 1], [0, 4, 2], [3, 0, 5], [6, 33, 90]];
                args (a = array([r, c]).within($low, $high), n = scalar(steps));
            }

            differential_expr! {
                /// The expression form over a captured `Vec` of the type, rustc inferring it.
                captured_vec:
                cases [n] in [[0], [1], [8], [100]];
                let a = array::<$t>([n]).within($low, $high);
                ein!(for i { a[i] * a[i] + a[i] });
            }
        }
    };
}

integer_type_tests!(i8, -128.0, 127.0);
integer_type_tests!(i16, -32768.0, 32767.0);
integer_type_tests!(i32, -3.0e9, 3.0e9);
integer_type_tests!(i64, -9.3e18, 9.3e18);
integer_type_tests!(isize, -9.3e18, 9.3e18);
integer_type_tests!(u8, 0.0, 255.0);
integer_type_tests!(u16, 0.0, 65535.0);
integer_type_tests!(u32, 0.0, 5.0e9);
integer_type_tests!(u64, 0.0, 1.9e19);
integer_type_tests!(usize, 0.0, 1.9e19);

/// The tests of one float type.
macro_rules! float_type_tests {
    ($t:ident) => {
        mod $t {
            use super::*;

            differential! {
                /// `as` to every integer type saturates (NaN and infinities included via
                /// division), and to the other float rounds.
                casts: fn(a: [$t], b: [$t]) -> ([f32], [f64], [i8], [i16], [i32], [i64], [isize], [u8], [u16], [u32], [u64], [usize]) {
                    (
                        for i { a[i] as f32 }, for i { (a[i] / b[i]) as f64 },
                        for i { a[i] as i8 }, for i { a[i] as i16 }, for i { (a[i] / b[i]) as i32 },
                        for i { a[i] as i64 }, for i { a[i] as isize },
                        for i { a[i] as u8 }, for i { a[i] as u16 }, for i { (a[i] / b[i]) as u32 },
                        for i { a[i] as u64 }, for i { a[i] as usize },
                    )
                }
                cases [n] in [[0], [1], [9], [120]];
                args (a = array([n]).within(-3.0e19, 3.0e19), b = array([n]).within(-2.0, 2.0));
            }

            differential! {
                reductions: fn(a: [[$t]]) -> ([$t], [$t], [usize], $t) {
                    (
                        for i { sum j { a[i, j] } },
                        for i { max j { a[i, j] } },
                        for i { argmin j { a[i, j] } },
                        sum i { sum j { a[i, j] * a[i, j] } },
                    )
                }
                cases [r, c] in [[2, 3], [1, 1], [0, 4], [3, 0], [6, 33]];
                args (a = array([r, c]));
            }
        }
    };
}

float_type_tests!(f32);
float_type_tests!(f64);

differential! {
    /// `bool` to every integer type is 0 or 1 (to a float it is rejected, as in Rust).
    bool_casts: fn(a: [bool]) -> ([i8], [i16], [i32], [i64], [isize], [u8], [u16], [u32], [u64], [usize]) {
        (
            for i { a[i] as i8 }, for i { a[i] as i16 }, for i { a[i] as i32 }, for i { a[i] as i64 },
            for i { a[i] as isize }, for i { a[i] as u8 }, for i { a[i] as u16 }, for i { a[i] as u32 },
            for i { a[i] as u64 }, for i { a[i] as usize },
        )
    }
    cases [n] in [[0], [1], [9], [64]];
    args (a = array([n]));
}

differential! {
    /// An image blur on `u8`, widened to `u16` for the sum and narrowed back, as a user
    /// writes it (clamped reads at the borders).
    blur_u8: fn(img: [[u8]]) -> [[u8]] {
        for i in 0..img.shape(0), j in 0..img.shape(1) {
            ((img[i, j - 1] as u16 + img[i, j] as u16 + img[i, j + 1] as u16 + img[i - 1, j] as u16 + img[i + 1, j] as u16) / 5) as u8
        }
    }
    cases [h, w] in [[1, 1], [3, 4], [0, 2], [17, 31]];
    args (img = array([h, w]).within(0.0, 255.0));
}

differential! {
    /// Escape-time counts into `i32`: the count's literals take the declared result's type.
    mandelbrot_counts_i32: fn(cre: [f64], cim: [f64], iters: usize) -> [[i32]] {
        for y, x {
            let s = fold t in 0..iters, s = { re: 0.0, im: 0.0, count: 0 } {
                let inside = s.re * s.re + s.im * s.im <= 4.0;
                if inside {
                    { re: s.re * s.re - s.im * s.im + cre[x], im: 2.0 * s.re * s.im + cim[y], count: s.count + 1 }
                } else {
                    s
                }
            };
            s.count
        }
    }
    cases [height, width, it] in [[4, 5, 10], [1, 1, 0], [0, 3, 5], [3, 0, 5], [24, 32, 50]];
    args (cre = array([width]).within(-2.0, 0.6), cim = array([height]).within(-1.2, 1.2), iters = scalar(it));
}

differential! {
    /// Fibonacci in `u64` from an all-literal initial state (wrapping from n = 94 on).
    fibonacci_u64: fn(n: usize) -> u64 {
        let p = fold t in 0..n, p = (0, 1) { (p.1, p.0 + p.1) };
        p.0
    }
    cases [n] in [[0], [1], [2], [10], [93], [94], [200]];
    args (n = scalar(n));
}
