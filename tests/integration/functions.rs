//! Rust's scalar functions by their std names (`x.clamp(lo, hi)`, `y.atan2(x)`, `n.rem_euclid(m)`
//! …), differentially: every function on every type it accepts, in the item form and the
//! expression form (element types left to rustc), on random inputs of which 40% are special
//! values (NaN, ±∞, ±0, extremes, subnormals; MIN, MAX, 0, ±1). Their run-time errors (`clamp`
//! bounds, a zero Euclidean divisor) panic with ein messages and agree with the interpreter.

use crate::harness::{array, catch_quietly, strip_site, Form, Oracle};
use ein_core::interp::{self, ArrayValue, Value};

/// The tests of one float type.
macro_rules! float_function_tests {
    ($t:ident) => {
        mod $t {
            use super::*;

            differential! {
                /// Rounding, roots and conversions, on every special value.
                rounding: fn(a: [$t]) -> ([$t], [$t], [$t], [$t], [$t], [$t], [$t], [$t], [$t], [$t], [$t], [$t]) {
                    (
                        for i { a[i].abs() }, for i { signum(a[i]) }, for i { a[i].floor() },
                        for i { ceil(a[i]) }, for i { a[i].round() }, for i { trunc(a[i]) },
                        for i { a[i].fract() }, for i { sqrt(a[i]) }, for i { a[i].cbrt() },
                        for i { recip(a[i]) }, for i { a[i].to_degrees() }, for i { to_radians(a[i]) },
                    )
                }
                cases [n] in [[0], [1], [9], [80]];
                args (a = array([n]).within(-10.0, 10.0).specials());
            }

            differential! {
                /// Exponentials, logarithms and powers (`powi` with an `i32` exponent, literal
                /// or not; `pow(x, y)` is `powf`).
                exponentials: fn(a: [$t], b: [$t], n: [i32]) -> ([$t], [$t], [$t], [$t], [$t], [$t], [$t], [$t], [$t], [$t], [$t], [$t]) {
                    (
                        for i { a[i].exp() }, for i { exp2(a[i]) }, for i { a[i].exp_m1() },
                        for i { ln(a[i]) }, for i { a[i].ln_1p() }, for i { log2(a[i]) },
                        for i { a[i].log10() }, for i { a[i].powi(n[i]) }, for i { powi(a[i], -3) },
                        for i { a[i].powf(b[i]) }, for i { pow(a[i], b[i]) }, for i { a[i].pow(0.5) },
                    )
                }
                cases [m] in [[0], [1], [9], [80]];
                args (
                    a = array([m]).within(-5.0, 5.0).specials(),
                    b = array([m]).within(-3.0, 3.0).specials(),
                    n = array([m]).within(-40.0, 40.0).specials(),
                );
            }

            differential! {
                /// Powers with the literal exponents that compile to multiplications and square
                /// roots (within 2 ulp of `powf`, special values exactly), beside one that does
                /// not; over a wide range of bases and the special values.
                half_integer_powers: fn(a: [$t]) -> ([$t], [$t], [$t], [$t], [$t], [$t], [$t]) {
                    (
                        for i { pow(a[i], 2.0) }, for i { a[i].pow(3.0) }, for i { pow(a[i], 0.5) },
                        for i { a[i].pow(1.5) }, for i { pow(a[i], -0.5) }, for i { a[i].pow(-1.5) },
                        for i { a[i].pow(2.5) },
                    )
                }
                cases [n] in [[0], [1], [9], [300]];
                args (a = array([n]).within(-1e6, 1e12).specials());
            }

            differential! {
                /// Trigonometric and hyperbolic functions (`sin`, `cos` on the range where ein's
                /// own are accurate: see `ein_own_functions`).
                trigonometry: fn(a: [$t], b: [$t]) -> ([$t], [$t], [$t], [$t], [$t], [$t], [$t], [$t], [$t], [$t], [$t], [$t]) {
                    (
                        for i { a[i].tan() }, for i { asin(a[i]) }, for i { a[i].acos() },
                        for i { atan(a[i]) }, for i { a[i].atan2(b[i]) }, for i { atan2(b[i], a[i]) },
                        for i { a[i].sinh() }, for i { cosh(a[i]) }, for i { a[i].tanh() },
                        for i { asinh(a[i]) }, for i { a[i].acosh() }, for i { atanh(a[i]) },
                    )
                }
                cases [n] in [[0], [1], [9], [80]];
                args (a = array([n]).within(-2.0, 2.0).specials(), b = array([n]).within(-2.0, 2.0).specials());
            }

            differential! {
                /// ein's own vectorisable `exp ln sin cos tanh`, within their documented
                /// accuracy of std's, special values included (`sin`/`cos` only where their
                /// error bound holds).
                ein_own_functions: fn(a: [$t]) -> ([$t], [$t], [$t], [$t], [$t]) {
                    (for i { exp(a[i]) }, for i { a[i].ln() }, for i { a[i].sin() }, for i { cos(a[i]) }, for i { tanh(a[i]) })
                }
                cases [n] in [[0], [1], [9], [80]];
                args (a = array([n]).within(-50.0, 50.0).specials_within(1.0e4));
            }

            differential! {
                /// Two- and three-argument functions and predicates; `clamp` with bounds in
                /// order (ignoring NaN, as `min`/`max` do) and with literal ones.
                binary: fn(a: [$t], b: [$t], c: [$t]) -> ([$t], [$t], [$t], [$t], [$t], [$t], [$t], [$t], [bool], [bool], [bool]) {
                    (
                        for i { a[i].hypot(b[i]) }, for i { copysign(a[i], b[i]) }, for i { a[i].mul_add(b[i], c[i]) },
                        for i { min(a[i], b[i]) }, for i { a[i].max(b[i]) },
                        for i { a[i].clamp(min(b[i], c[i]), max(b[i], c[i])) }, for i { clamp(a[i], -1.0, 1.0) },
                        for i { a[i].clamp(0.0, 0.0) },
                        for i { a[i].is_nan() }, for i { is_finite(a[i]) }, for i { a[i].is_infinite() },
                    )
                }
                cases [n] in [[0], [1], [9], [80]];
                args (
                    a = array([n]).within(-4.0, 4.0).specials(),
                    b = array([n]).within(-4.0, 4.0).specials(),
                    c = array([n]).within(-4.0, 4.0).specials(),
                );
            }

            differential_expr! {
                /// The expression form: every float function on captured elements whose type
                /// rustc infers (the runtime's `Float`, `Signed`, `Num` traits).
                captured_unary:
                cases [n] in [[0], [1], [9], [80]];
                let a = array::<$t>([n]).within(-3.0, 3.0).specials();
                ein!((
                    for i { (a[i].abs(), a[i].signum(), a[i].floor(), a[i].ceil(), a[i].round(), a[i].trunc()) },
                    for i { (a[i].fract(), a[i].sqrt(), a[i].cbrt(), a[i].recip(), a[i].to_degrees(), a[i].to_radians()) },
                    for i { (a[i].exp2(), a[i].exp_m1(), a[i].ln_1p(), a[i].log2(), a[i].log10()) },
                    for i { (a[i].tan(), a[i].asin(), a[i].acos(), a[i].atan(), a[i].sinh(), a[i].cosh()) },
                    for i { (a[i].asinh(), a[i].acosh(), a[i].atanh(), a[i].powi(3), a[i].pow(2.5)) },
                    for i { (a[i].is_nan(), a[i].is_finite(), a[i].is_infinite()) },
                ));
            }

            differential_expr! {
                captured_binary:
                cases [n] in [[0], [1], [9], [80]];
                let a = array::<$t>([n]).within(-3.0, 3.0).specials(),
                    b = array::<$t>([n]).within(-3.0, 3.0).specials(),
                    k = array::<i32>([n]).within(-9.0, 9.0);
                ein!((
                    for i { (a[i].hypot(b[i]), a[i].atan2(b[i]), a[i].copysign(b[i]), a[i].mul_add(b[i], a[i])) },
                    for i { (a[i].min(b[i]), max(a[i], b[i]), a[i].powf(b[i]), pow(a[i], b[i]), a[i].powi(k[i])) },
                    for i { (a[i].clamp(min(b[i], 0.5), max(b[i], 0.5)), a[i].clamp(-1.0, 1.0)) },
                ));
            }

            differential_expr! {
                /// ein's own functions on captured elements, where their error bound holds.
                captured_ein_own:
                cases [n] in [[0], [1], [9], [80]];
                let a = array::<$t>([n]).within(-50.0, 50.0).specials_within(1.0e4);
                ein!(for i { (a[i].exp(), a[i].ln(), a[i].sin(), a[i].cos(), a[i].tanh()) });
            }
        }
    };
}

float_function_tests!(f32);
float_function_tests!(f64);

/// The tests of one integer type; `$signed` adds `signum`.
macro_rules! integer_function_tests {
    ($t:ident $(, $signed:ident)?) => {
        mod $t {
            use super::*;

            differential! {
                /// Wrapping `abs` and `pow` (a `u32` exponent, literal or not), `min`, `max`,
                /// `clamp`, Euclidean division and remainder (divisors kept nonzero; MIN by -1
                /// wraps), on MIN, MAX, 0 and ±1 among random values.
                integer: fn(a: [$t], b: [$t], e: [u32]) -> ([$t], [$t], [$t], [$t], [$t], [$t], [$t], [$t], [$t], [$t]) {
                    (
                        for i { a[i].abs() }, for i { min(a[i], b[i]) }, for i { a[i].max(b[i]) },
                        for i { a[i].clamp(min(b[i], 3), max(b[i], 3)) }, for i { clamp(a[i], 2, 5) },
                        for i { a[i].pow(e[i]) }, for i { pow(a[i], 3) }, for i { a[i].pow(0) },
                        for i { a[i].rem_euclid(if b[i] == 0 { 7 } else { b[i] }) },
                        for i { div_euclid(a[i], if b[i] == 0 { 7 } else { b[i] }) },
                    )
                }
                cases [n] in [[0], [1], [9], [80]];
                args (a = array([n]).specials(), b = array([n]).specials(), e = array([n]).within(0.0, 70.0).specials());
            }

            differential_expr! {
                /// The same on captured elements whose type rustc infers (`Num`, `Int`).
                captured:
                cases [n] in [[0], [1], [9], [80]];
                let a = array::<$t>([n]).specials(), b = array::<$t>([n]).specials(), e = array::<u32>([n]).within(0.0, 70.0);
                ein!((
                    for i { (a[i].abs(), a[i].min(b[i]), max(a[i], b[i]), a[i].clamp(2, 5)) },
                    for i { (a[i].pow(e[i] as u32), a[i].pow(2), pow(a[i], 3)) },
                    for i { (a[i].rem_euclid(if b[i] == 0 { 7 } else { b[i] }), a[i].div_euclid(if b[i] == 0 { 7 } else { b[i] })) },
                ));
            }

            $(
                differential! {
                    /// `signum` (signed types only, as in std).
                    $signed: fn(a: [$t]) -> [$t] { for i { a[i].signum() + signum(a[i]) } }
                    cases [n] in [[0], [1], [9], [80]];
                    args (a = array([n]).specials());
                }

                differential_expr! {
                    captured_signum:
                    cases [n] in [[0], [1], [9], [80]];
                    let a = array::<$t>([n]).specials();
                    ein!(for i { a[i].signum() });
                }
            )?
        }
    };
}

integer_function_tests!(i8, signum);
integer_function_tests!(i16, signum);
integer_function_tests!(i32, signum);
integer_function_tests!(i64, signum);
integer_function_tests!(isize, signum);
integer_function_tests!(u8);
integer_function_tests!(u16);
integer_function_tests!(u32);
integer_function_tests!(u64);
integer_function_tests!(usize);

// ---------------------------------------------------------------------------------------------
// Run-time errors

program! {
    clamp_rows: fn(a: [f64], low: f64, high: f64) -> [f64] { for i { a[i].clamp(low, high) } }
}

program! {
    clamp_ints: fn(a: [i32], low: i32, high: i32) -> [i32] { for i { clamp(a[i], low, high) } }
}

program! {
    euclid: fn(a: [i64], b: [i64]) -> ([i64], [u8]) {
        (for i { a[i].rem_euclid(b[i]) }, for i { (a[i] as u8).div_euclid(b[i] as u8) })
    }
}

/// The message of the panic `code` raises; fails if it returns.
fn panic_of<R>(code: impl FnOnce() -> R) -> String {
    match catch_quietly(code) {
        Ok(_) => panic!("expected a panic, but the compiled code returned"),
        Err(message) => message,
    }
}

/// The interpreter's error for `args`; fails if it succeeds.
fn interpreter_error(test: &'static str, source: &str, args: Vec<Value>) -> String {
    let oracle = Oracle::new(test, source, Form::Item);
    match interp::run(oracle.program(), args, &[]) {
        Ok(value) => panic!("expected the interpreter to fail, got {value:?}"),
        Err(error) => error.message,
    }
}

fn vector<T: Copy>(values: &[T], to_value: fn(T) -> Value) -> Value {
    Value::Array(ArrayValue { shape: vec![values.len()], elements: values.iter().map(|&v| to_value(v)).collect() })
}

#[test]
fn clamp_with_bounds_out_of_order_panics_as_std_does_naming_ein_and_the_site() {
    let a = [0.5, 2.0];
    let compiled = panic_of(|| clamp_rows::run(&a, 1.0, -1.0));
    assert!(compiled.starts_with("ein: `clamp` (at tests/integration/functions.rs:"), "{compiled}");
    assert!(compiled.ends_with("needs min <= max (and no NaN bound), but min is 1.0 and max is -1.0"), "{compiled}");
    let interpreted = interpreter_error(
        "clamp_rows",
        clamp_rows::SOURCE,
        vec![vector(&a, Value::F64), Value::F64(1.0), Value::F64(-1.0)],
    );
    assert_eq!(strip_site(&compiled), interpreted);
    // A NaN bound fails too, as in std; equal bounds do not.
    let compiled = panic_of(|| clamp_rows::run(&a, f64::NAN, 1.0));
    assert!(compiled.ends_with("but min is NaN and max is 1.0"), "{compiled}");
    assert_eq!(clamp_rows::run(&a, 1.0, 1.0).as_slice(), &[1.0, 1.0]);
    // On an empty array no element is clamped, so nothing fails.
    assert_eq!(clamp_rows::run(&[], 1.0, -1.0).len(), 0);

    let compiled = panic_of(|| clamp_ints::run(&[1, 2, 3], 5, 4));
    assert!(compiled.ends_with("but min is 5 and max is 4"), "{compiled}");
    let interpreted = interpreter_error(
        "clamp_ints",
        clamp_ints::SOURCE,
        vec![vector(&[1, 2, 3], Value::I32), Value::I32(5), Value::I32(4)],
    );
    assert_eq!(strip_site(&compiled), interpreted);
}

#[test]
fn euclidean_division_by_zero_panics_naming_the_site() {
    let compiled = panic_of(|| euclid::run(&[7, -7], &[2, 0]));
    assert!(compiled.starts_with("ein: integer division by zero (at tests/integration/functions.rs:"), "{compiled}");
    let interpreted =
        interpreter_error("euclid", euclid::SOURCE, vec![vector(&[7, -7], Value::I64), vector(&[2, 0], Value::I64)]);
    assert_eq!(strip_site(&compiled), interpreted);
    let (remainders, quotients) = euclid::run(&[7, -7, i64::MIN], &[2, 2, -1]);
    assert_eq!(remainders.as_slice(), &[1, 1, 0]);
    assert_eq!(quotients.as_slice(), &[3, 124, 0]);
}

#[test]
fn expression_form_errors_name_the_site_too() {
    let (a, low, high) = (vec![1.5f32, -2.0], 2.0f32, 1.0f32);
    let compiled = panic_of(|| ein::ein!(for i { a[i].clamp(low, high) }));
    assert!(compiled.starts_with("ein: `clamp` (at tests/integration/functions.rs:"), "{compiled}");
    let (n, zero) = (vec![5u16, 6], 0u16);
    let compiled = panic_of(|| ein::ein!(for i { n[i].rem_euclid(zero) }));
    assert!(compiled.starts_with("ein: integer division by zero (at "), "{compiled}");
}

#[test]
fn results_match_std_on_chosen_values() {
    let x = vec![-2.5f64, -0.0, 0.5, 3.5];
    let rounded = ein::ein!(for i { x[i].round() });
    assert_eq!(rounded.as_slice(), &[-3.0, -0.0, 1.0, 4.0]);
    let y = vec![1.0f64, -1.0, 0.0, -0.0];
    let angles = ein::ein!(for i { y[i].atan2(-1.0) });
    let expected: Vec<f64> = y.iter().map(|v| v.atan2(-1.0)).collect();
    assert_eq!(angles.as_slice(), expected.as_slice());
    let m = vec![-7i32, 7, i32::MIN];
    let (r, p, s) = ein::ein!((for i { m[i].rem_euclid(3) }, for i { m[i].pow(2) }, for i { m[i].signum() }));
    assert_eq!(r.as_slice(), &[2, 1, 1]);
    assert_eq!(p.as_slice(), &[49, 49, 0]);
    assert_eq!(s.as_slice(), &[-1, 1, -1]);
    let big = vec![i64::MIN, -3];
    let abs = ein::ein!(for i { big[i].abs() });
    assert_eq!(abs.as_slice(), &[i64::MIN, 3], "wrapping, as ein's arithmetic");
}
