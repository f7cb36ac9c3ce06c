//! Scalar arithmetic and functions for generated code: the [`Num`], [`Float`], [`Int`],
//! [`Signed`] and [`CastTo`] traits over every primitive number (and bool for casts), and the
//! type markers that let generated code name "the element type of that array". Every scalar
//! function of ein (`ein-core`'s function table, note [one table of functions]) is the method
//! of the same name of the trait its domain names; generated code calls it by that path
//! whether ein or rustc knows the element type.
//!
//! Integer arithmetic wraps (as in a release build of Rust, but also in debug builds, so the
//! answer does not depend on the profile); integer division or remainder by zero panics.

use std::marker::PhantomData;

use crate::errors::{clamp_bounds, integer_division_by_zero, IntoSize, Site};
use crate::reduce::Accumulate;
use crate::view::View;

/// The element type of a view, as a value generated code can pass to [`zero`] and friends.
#[inline]
pub fn marker_of_view<T, const N: usize>(_: &View<'_, T, N>) -> PhantomData<T> {
    PhantomData
}

/// The type of a value, as a marker.
#[inline]
pub fn marker_of<T>(_: &T) -> PhantomData<T> {
    PhantomData
}

/// The result type of a Rust function or closure of any arity up to 8 (`Args` is the tuple of
/// its parameter types).
pub trait Returns<Args> {
    type Output;
}

macro_rules! impl_returns {
    ($($arg:ident),*) => {
        impl<$($arg,)* R, F: Fn($($arg),*) -> R> Returns<($($arg,)*)> for F {
            type Output = R;
        }
    };
}

impl_returns!();
impl_returns!(A);
impl_returns!(A, B);
impl_returns!(A, B, C);
impl_returns!(A, B, C, D);
impl_returns!(A, B, C, D, E);
impl_returns!(A, B, C, D, E, G);
impl_returns!(A, B, C, D, E, G, H);
impl_returns!(A, B, C, D, E, G, H, I);

// The closure the expression form makes at a call of a Rust function (`typed_closureN` for N
// arguments, up to the compiler's `MAX_RUST_CALL_ARGUMENTS` in ein-core/src/check/inline.rs),
// its parameter types given by markers (the argument types ein inferred), so that rustc types
// the closure's body against them and reports an argument of the wrong type at the call; `Sync`
// (the parallel loops share it) is required here for the same reason. Written out rather than
// by a macro, so that a diagnostic quoting one shows one line.

/// See above: the closure of a call with no arguments.
#[inline]
pub fn typed_closure0<R, F: Fn() -> R + Sync>(function: F) -> F {
    function
}

/// See above: the closure of a call with 1 argument.
#[inline]
pub fn typed_closure1<A, R, F: Fn(A) -> R + Sync>(_: PhantomData<A>, function: F) -> F {
    function
}

/// See above: the closure of a call with 2 arguments.
#[inline]
pub fn typed_closure2<A, B, R, F: Fn(A, B) -> R + Sync>(_: PhantomData<A>, _: PhantomData<B>, function: F) -> F {
    function
}

/// See above: the closure of a call with 3 arguments.
#[inline]
pub fn typed_closure3<A, B, C, R, F: Fn(A, B, C) -> R + Sync>(
    _: PhantomData<A>,
    _: PhantomData<B>,
    _: PhantomData<C>,
    function: F,
) -> F {
    function
}

/// See above: the closure of a call with 4 arguments.
#[inline]
pub fn typed_closure4<A, B, C, D, R, F: Fn(A, B, C, D) -> R + Sync>(
    _: PhantomData<A>,
    _: PhantomData<B>,
    _: PhantomData<C>,
    _: PhantomData<D>,
    function: F,
) -> F {
    function
}

/// See above: the closure of a call with 5 arguments.
#[inline]
pub fn typed_closure5<A, B, C, D, E, R, F: Fn(A, B, C, D, E) -> R + Sync>(
    _: PhantomData<A>,
    _: PhantomData<B>,
    _: PhantomData<C>,
    _: PhantomData<D>,
    _: PhantomData<E>,
    function: F,
) -> F {
    function
}

/// See above: the closure of a call with 6 arguments.
#[inline]
pub fn typed_closure6<A, B, C, D, E, G, R, F: Fn(A, B, C, D, E, G) -> R + Sync>(
    _: PhantomData<A>,
    _: PhantomData<B>,
    _: PhantomData<C>,
    _: PhantomData<D>,
    _: PhantomData<E>,
    _: PhantomData<G>,
    function: F,
) -> F {
    function
}

/// See above: the closure of a call with 7 arguments.
#[inline]
#[allow(clippy::too_many_arguments)]
pub fn typed_closure7<A, B, C, D, E, G, H, R, F: Fn(A, B, C, D, E, G, H) -> R + Sync>(
    _: PhantomData<A>,
    _: PhantomData<B>,
    _: PhantomData<C>,
    _: PhantomData<D>,
    _: PhantomData<E>,
    _: PhantomData<G>,
    _: PhantomData<H>,
    function: F,
) -> F {
    function
}

/// See above: the closure of a call with 8 arguments.
#[inline]
#[allow(clippy::too_many_arguments)]
pub fn typed_closure8<A, B, C, D, E, G, H, I, R, F: Fn(A, B, C, D, E, G, H, I) -> R + Sync>(
    _: PhantomData<A>,
    _: PhantomData<B>,
    _: PhantomData<C>,
    _: PhantomData<D>,
    _: PhantomData<E>,
    _: PhantomData<G>,
    _: PhantomData<H>,
    _: PhantomData<I>,
    function: F,
) -> F {
    function
}

/// The result type of the closure the expression form made at a call of a Rust function, as a
/// marker: passed as its own argument at the user's call, so that a result type without the
/// bound the block needs (`u32` added to a float) is reported there.
#[inline]
pub fn result_of<Args, F: Returns<Args>>(_: &F) -> PhantomData<F::Output> {
    PhantomData
}

/// What the expression form needs of an element type it only copies and compares for
/// equality (a number or a `bool`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be an element of an ein array",
    label = "not a number or `bool`"
)]
pub trait Element: Copy + PartialEq + Send + Sync + 'static {}

impl<T: Copy + PartialEq + Send + Sync + 'static> Element for T {}

/// A numeric element type: f32, f64, or any primitive integer but the 128-bit ones.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a number, which ein uses it as here",
    label = "not a number (ein's numbers are the primitive integers and floats but the 128-bit ones)"
)]
pub trait Num:
    Copy
    + PartialOrd
    + Send
    + Sync
    + 'static
    + Accumulate
    + CastTo<f32>
    + CastTo<f64>
    + CastTo<i8>
    + CastTo<i16>
    + CastTo<i32>
    + CastTo<i64>
    + CastTo<isize>
    + CastTo<u8>
    + CastTo<u16>
    + CastTo<u32>
    + CastTo<u64>
    + CastTo<usize>
{
    /// Additive identity.
    const ZERO: Self;
    /// Multiplicative identity.
    const ONE: Self;
    /// The smallest value (-inf for floats, MIN for integers): the identity of `max`.
    const LOWEST: Self;
    /// The largest value (+inf for floats, MAX for integers): the identity of `min`.
    const HIGHEST: Self;
    /// The integer literals that denote a value of this type: its range for integers, any
    /// `i64` for floats.
    const LITERALS: (i128, i128);
    /// `self + other`, wrapping for integers.
    fn add(self, other: Self) -> Self;
    /// `self - other`, wrapping for integers.
    fn sub(self, other: Self) -> Self;
    /// `self * other`, wrapping for integers.
    fn mul(self, other: Self) -> Self;
    /// `self / other`; integers wrap (MIN / -1 == MIN) and panic on a zero divisor, naming
    /// `site`.
    fn div(self, other: Self, site: &Site) -> Self;
    /// `self % other`; integers wrap (MIN % -1 == 0) and panic on a zero divisor, naming
    /// `site`.
    fn rem(self, other: Self, site: &Site) -> Self;
    /// `-self`, wrapping for integers (for unsigned types, `0 - self` modulo 2^bits).
    fn neg(self) -> Self;
    /// The smaller value; for floats Rust's `min`, which ignores a NaN operand.
    fn min(self, other: Self) -> Self;
    /// The larger value; for floats Rust's `max`, which ignores a NaN operand.
    fn max(self, other: Self) -> Self;
    /// Absolute value, wrapping for integers (`abs(MIN) == MIN`); unsigned values are their
    /// own absolute value.
    fn abs(self) -> Self;
    /// std's `clamp`, panicking with an ein message naming `site` where std panics (the lower
    /// bound above the upper one, or a NaN bound).
    fn clamp(self, low: Self, high: Self, site: &Site) -> Self;
    /// `value as Self`, for integer literals.
    fn from_i64(value: i64) -> Self;
    /// The integer literal `VALUE` of the expression form, whose type rustc decides: one
    /// outside the type's range fails to compile once the type is known, as Rust's
    /// `overflowing_literals` (`xs[i] > 300` on `u8` would compare with 44).
    #[inline]
    fn from_int_literal<const VALUE: i64>() -> Self {
        const {
            let (lowest, highest) = Self::LITERALS;
            assert!(
                VALUE as i128 >= lowest && VALUE as i128 <= highest,
                "ein: an integer literal of an ein! expression is out of range for its element type \
                 (the notes name both, `<type as ein::Num>::from_int_literal::<literal>`, and point at the literal)"
            );
        }
        Self::from_i64(VALUE)
    }
    /// A float literal of this type: its text rounded to `f64` (`value`, which integer types
    /// take `as Self`) and to `f32` (`as_f32`: `f32` takes it, as rounding `value` again
    /// could differ from Rust's `f32` literal).
    fn from_float_literal(value: f64, as_f32: f32) -> Self;
}

macro_rules! impl_num_for_float {
    ($($float:ident: literal = |$value:ident, $as_f32:ident| $literal:expr),+ $(,)?) => {$(
        // `do_not_recommend` (on every impl of these traits): a list of the types that implement
        // them would point users into this file; the traits' labels say what is needed.
        #[diagnostic::do_not_recommend]
        impl Num for $float {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const LOWEST: Self = $float::NEG_INFINITY;
            const HIGHEST: Self = $float::INFINITY;
            const LITERALS: (i128, i128) = (i64::MIN as i128, i64::MAX as i128);
            #[inline] fn add(self, other: Self) -> Self { self + other }
            #[inline] fn sub(self, other: Self) -> Self { self - other }
            #[inline] fn mul(self, other: Self) -> Self { self * other }
            #[inline] fn div(self, other: Self, _: &Site) -> Self { self / other }
            #[inline] fn rem(self, other: Self, _: &Site) -> Self { self % other }
            #[inline] fn neg(self) -> Self { -self }
            #[inline] fn min(self, other: Self) -> Self { $float::min(self, other) }
            #[inline] fn max(self, other: Self) -> Self { $float::max(self, other) }
            #[inline] fn abs(self) -> Self { $float::abs(self) }
            #[inline]
            fn clamp(self, low: Self, high: Self, site: &Site) -> Self {
                // A NaN bound fails, as in std.
                if matches!(low.partial_cmp(&high), None | Some(::core::cmp::Ordering::Greater)) {
                    clamp_bounds(&low, &high, site);
                }
                $float::clamp(self, low, high)
            }
            #[inline] fn from_i64(value: i64) -> Self { value as $float }
            #[inline]
            #[allow(unused_variables)]
            fn from_float_literal($value: f64, $as_f32: f32) -> Self { $literal }
        }
    )+};
}

macro_rules! impl_num_for_integer {
    ($($integer:ident: abs = |$value:ident| $abs:expr),+ $(,)?) => {$(
        #[diagnostic::do_not_recommend]
        impl Num for $integer {
            const ZERO: Self = 0;
            const ONE: Self = 1;
            const LOWEST: Self = $integer::MIN;
            const HIGHEST: Self = $integer::MAX;
            const LITERALS: (i128, i128) = ($integer::MIN as i128, $integer::MAX as i128);
            #[inline] fn add(self, other: Self) -> Self { self.wrapping_add(other) }
            #[inline] fn sub(self, other: Self) -> Self { self.wrapping_sub(other) }
            #[inline] fn mul(self, other: Self) -> Self { self.wrapping_mul(other) }
            #[inline]
            fn div(self, other: Self, site: &Site) -> Self {
                if other == 0 {
                    integer_division_by_zero(site);
                }
                self.wrapping_div(other)
            }
            #[inline]
            fn rem(self, other: Self, site: &Site) -> Self {
                if other == 0 {
                    integer_division_by_zero(site);
                }
                self.wrapping_rem(other)
            }
            #[inline] fn neg(self) -> Self { self.wrapping_neg() }
            #[inline] fn min(self, other: Self) -> Self { Ord::min(self, other) }
            #[inline] fn max(self, other: Self) -> Self { Ord::max(self, other) }
            #[inline] fn abs(self) -> Self { let $value = self; $abs }
            #[inline]
            fn clamp(self, low: Self, high: Self, site: &Site) -> Self {
                if low > high {
                    clamp_bounds(&low, &high, site);
                }
                Ord::clamp(self, low, high)
            }
            #[inline] fn from_i64(value: i64) -> Self { value as $integer }
            #[inline] fn from_float_literal(value: f64, _: f32) -> Self { value as $integer }
        }
    )+};
}

impl_num_for_float!(f32: literal = |value, as_f32| as_f32, f64: literal = |value, as_f32| value);
impl_num_for_integer! {
    i8: abs = |value| value.wrapping_abs(),
    i16: abs = |value| value.wrapping_abs(),
    i32: abs = |value| value.wrapping_abs(),
    i64: abs = |value| value.wrapping_abs(),
    isize: abs = |value| value.wrapping_abs(),
    u8: abs = |value| value,
    u16: abs = |value| value,
    u32: abs = |value| value,
    u64: abs = |value| value,
    usize: abs = |value| value,
}

/// Zero of the marked type.
#[inline]
pub fn zero<T: Num>(_: PhantomData<T>) -> T {
    T::ZERO
}

/// One of the marked type.
#[inline]
pub fn one<T: Num>(_: PhantomData<T>) -> T {
    T::ONE
}

/// The lowest value of the marked type (identity of `max`).
#[inline]
pub fn lowest<T: Num>(_: PhantomData<T>) -> T {
    T::LOWEST
}

/// The highest value of the marked type (identity of `min`).
#[inline]
pub fn highest<T: Num>(_: PhantomData<T>) -> T {
    T::HIGHEST
}

/// Integer division for generated code: wraps, panics on a zero divisor.
#[inline]
pub fn int_div<T: Num>(dividend: T, divisor: T, site: &Site) -> T {
    dividend.div(divisor, site)
}

/// Integer remainder for generated code: wraps, panics on a zero divisor.
#[inline]
pub fn int_rem<T: Num>(dividend: T, divisor: T, site: &Site) -> T {
    dividend.rem(divisor, site)
}

/// Declares the [`Float`] trait's methods that are std's methods of the same name on f32 and
/// f64, and implements them by calling std.
macro_rules! float_trait {
    (
        own { $($(#[doc = $own_doc:literal])* fn $own:ident = $own_f32:ident, $own_f64:ident;)* }
        std { $($(#[doc = $doc:literal])* fn $name:ident($($parameter:ident: $parameter_type:ident),*) -> $output:ident $(= $std:ident)?;)* }
    ) => {
        /// A floating-point element type: f32 or f64. `exp`, `ln`, `sin`, `cos` and `tanh` are
        /// ein's own branch-free versions ([`crate::math`]: loops calling them vectorise, and their
        /// accuracy is documented there); the others are the std methods of that name.
        #[diagnostic::on_unimplemented(
            message = "`{Self}` is not a float, which ein uses it as here",
            label = "not `f32` or `f64`; cast it first, e.g. `x as f64`"
        )]
        pub trait Float:
            Num
            + core::ops::Add<Output = Self>
            + core::ops::Sub<Output = Self>
            + core::ops::Mul<Output = Self>
            + core::ops::Div<Output = Self>
            + core::ops::Rem<Output = Self>
            + core::ops::Neg<Output = Self>
        {
            $($(#[doc = $own_doc])* fn $own(self) -> Self;)*
            $($(#[doc = $doc])* fn $name(self $(, $parameter: float_trait!(@type $parameter_type))*) -> float_trait!(@type $output);)*
            /// `sin` on the fast path of a loop chunk that generated code reruns with `sin`
            /// when `beyond` is set ([`crate::math::sin_f32_fast`]; f64 has no fast path).
            #[doc(hidden)]
            fn sin_fast(self, beyond: &core::cell::Cell<bool>) -> Self;
            /// `cos` on the fast path, as `sin_fast`.
            #[doc(hidden)]
            fn cos_fast(self, beyond: &core::cell::Cell<bool>) -> Self;
        }

        #[diagnostic::do_not_recommend]
        impl Float for f32 {
            $(#[inline(always)] fn $own(self) -> Self { crate::math::$own_f32(self) })*
            #[inline(always)]
            fn sin_fast(self, beyond: &core::cell::Cell<bool>) -> Self {
                crate::math::sin_f32_fast(self, beyond)
            }
            #[inline(always)]
            fn cos_fast(self, beyond: &core::cell::Cell<bool>) -> Self {
                crate::math::cos_f32_fast(self, beyond)
            }
            $(#[inline] fn $name(self $(, $parameter: float_trait!(@type $parameter_type))*) -> float_trait!(@type $output) {
                float_trait!(@call f32, $name $(= $std)?, self $(, $parameter)*)
            })*
        }

        #[diagnostic::do_not_recommend]
        impl Float for f64 {
            $(#[inline(always)] fn $own(self) -> Self { crate::math::$own_f64(self) })*
            #[inline(always)]
            fn sin_fast(self, _: &core::cell::Cell<bool>) -> Self {
                crate::math::sin_f64(self)
            }
            #[inline(always)]
            fn cos_fast(self, _: &core::cell::Cell<bool>) -> Self {
                crate::math::cos_f64(self)
            }
            $(#[inline] fn $name(self $(, $parameter: float_trait!(@type $parameter_type))*) -> float_trait!(@type $output) {
                float_trait!(@call f64, $name $(= $std)?, self $(, $parameter)*)
            })*
        }
    };
    (@call f32, $name:ident = own_pow, $($argument:expr),*) => { crate::math::pow_f32($($argument),*) };
    (@call f64, $name:ident = own_pow, $($argument:expr),*) => { crate::math::pow_f64($($argument),*) };
    (@call $float:ident, $name:ident, $($argument:expr),*) => { $float::$name($($argument),*) };
    (@call $float:ident, $name:ident = $std:ident, $($argument:expr),*) => { $float::$std($($argument),*) };
    (@type Self) => { Self };
    (@type bool) => { bool };
    (@type i32) => { i32 };
}

float_trait! {
    own {
        /// e^self.
        fn exp = exp_f32, exp_f64;
        /// Natural logarithm.
        fn ln = ln_f32, ln_f64;
        /// Sine (radians).
        fn sin = sin_f32, sin_f64;
        /// Cosine (radians).
        fn cos = cos_f32, cos_f64;
        /// Hyperbolic tangent.
        fn tanh = tanh_f32, tanh_f64;
    }
    std {
        /// 1.0, -1.0 (by the sign bit), or NaN.
        fn signum() -> Self;
        fn floor() -> Self;
        fn ceil() -> Self;
        fn round() -> Self;
        fn trunc() -> Self;
        fn fract() -> Self;
        fn sqrt() -> Self;
        fn cbrt() -> Self;
        fn recip() -> Self;
        fn to_degrees() -> Self;
        fn to_radians() -> Self;
        fn exp2() -> Self;
        fn exp_m1() -> Self;
        fn ln_1p() -> Self;
        fn log2() -> Self;
        fn log10() -> Self;
        fn powi(exponent: i32) -> Self;
        fn powf(exponent: Self) -> Self;
        /// ein's `pow(x, y)` on floats: `powf` (std has no float `pow`), but multiplications
        /// and a square root for the exponents 2, 3, ±½ and ±3/2 ([`crate::math::pow_f64`]).
        fn pow(exponent: Self) -> Self = own_pow;
        fn tan() -> Self;
        fn asin() -> Self;
        fn acos() -> Self;
        fn atan() -> Self;
        fn atan2(other: Self) -> Self;
        fn sinh() -> Self;
        fn cosh() -> Self;
        fn asinh() -> Self;
        fn acosh() -> Self;
        fn atanh() -> Self;
        fn hypot(other: Self) -> Self;
        fn copysign(sign: Self) -> Self;
        fn mul_add(a: Self, b: Self) -> Self;
        fn is_nan() -> bool;
        fn is_finite() -> bool;
        fn is_infinite() -> bool;
    }
}

/// Floats and signed integers: the types with std's `signum`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not signed, which ein uses it as here",
    label = "not a float or a signed integer; cast it first, e.g. `x as i64`"
)]
pub trait Signed: Num {
    /// -1, 0 or 1 for integers; ±1.0 (by the sign bit) or NaN for floats.
    fn signum(self) -> Self;
}

#[diagnostic::do_not_recommend]
impl Signed for f32 {
    #[inline]
    fn signum(self) -> Self {
        f32::signum(self)
    }
}

#[diagnostic::do_not_recommend]
impl Signed for f64 {
    #[inline]
    fn signum(self) -> Self {
        f64::signum(self)
    }
}

/// An integer element type: the integer functions of std, wrapping where std would overflow
/// (as ein's arithmetic does), and panicking with an ein message on a zero divisor.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an integer, which ein uses it as here",
    label = "not an integer; cast it first, e.g. `x as i64`"
)]
pub trait Int: Num + IntoSize {
    /// `self` to the power `exponent`, wrapping (std's `wrapping_pow`).
    fn pow(self, exponent: u32) -> Self;
    /// The non-negative remainder (`wrapping_rem_euclid`: `MIN.rem_euclid(-1) == 0`).
    fn rem_euclid(self, divisor: Self, site: &Site) -> Self;
    /// The quotient whose remainder is non-negative (`wrapping_div_euclid`:
    /// `MIN.div_euclid(-1) == MIN`, as ein's `/`).
    fn div_euclid(self, divisor: Self, site: &Site) -> Self;
    /// `self & other`.
    fn bit_and(self, other: Self) -> Self;
    /// `self | other`.
    fn bit_or(self, other: Self) -> Self;
    /// `self ^ other`.
    fn bit_xor(self, other: Self) -> Self;
    /// `!self`, every bit flipped.
    fn complement(self) -> Self;
    /// `self << amount`, the amount wrapped to the type's bits (`wrapping_shl(amount as u32)`).
    fn shift_left(self, amount: Self) -> Self;
    /// `self >> amount` (arithmetic for signed types), the amount wrapped as for
    /// [`Int::shift_left`].
    fn shift_right(self, amount: Self) -> Self;
    /// The number of one bits (std's `count_ones`).
    fn count_ones(self) -> u32;
    /// The number of zero bits (std's `count_zeros`).
    fn count_zeros(self) -> u32;
    /// The number of zero bits above the highest one (std's `leading_zeros`).
    fn leading_zeros(self) -> u32;
    /// The number of zero bits below the lowest one (std's `trailing_zeros`).
    fn trailing_zeros(self) -> u32;
}

macro_rules! impl_int {
    ($($integer:ident),+) => {$(
        #[diagnostic::do_not_recommend]
        impl Int for $integer {
            #[inline]
            fn pow(self, exponent: u32) -> Self {
                self.wrapping_pow(exponent)
            }
            #[inline]
            fn rem_euclid(self, divisor: Self, site: &Site) -> Self {
                if divisor == 0 {
                    integer_division_by_zero(site);
                }
                self.wrapping_rem_euclid(divisor)
            }
            #[inline]
            fn div_euclid(self, divisor: Self, site: &Site) -> Self {
                if divisor == 0 {
                    integer_division_by_zero(site);
                }
                self.wrapping_div_euclid(divisor)
            }
            #[inline]
            fn bit_and(self, other: Self) -> Self {
                self & other
            }
            #[inline]
            fn bit_or(self, other: Self) -> Self {
                self | other
            }
            #[inline]
            fn bit_xor(self, other: Self) -> Self {
                self ^ other
            }
            #[inline]
            fn complement(self) -> Self {
                !self
            }
            #[inline]
            fn shift_left(self, amount: Self) -> Self {
                self.wrapping_shl(amount as u32)
            }
            #[inline]
            fn shift_right(self, amount: Self) -> Self {
                self.wrapping_shr(amount as u32)
            }
            #[inline]
            fn count_ones(self) -> u32 {
                $integer::count_ones(self)
            }
            #[inline]
            fn count_zeros(self) -> u32 {
                $integer::count_zeros(self)
            }
            #[inline]
            fn leading_zeros(self) -> u32 {
                $integer::leading_zeros(self)
            }
            #[inline]
            fn trailing_zeros(self) -> u32 {
                $integer::trailing_zeros(self)
            }
        }
    )+};
}

impl_int!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

macro_rules! impl_signed_int {
    ($($integer:ident),+) => {$(
        #[diagnostic::do_not_recommend]
        impl Signed for $integer {
            #[inline]
            fn signum(self) -> Self {
                $integer::signum(self)
            }
        }
    )+};
}

impl_signed_int!(i8, i16, i32, i64, isize);

/// An `as` cast from `Self` to `U`, for every pair of scalar types that Rust's `as` allows
/// (bool converts to the integer types; nothing converts to bool except bool).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be cast to `{U}` by ein",
    label = "ein casts numbers to numbers, and `bool`s to integers"
)]
pub trait CastTo<U> {
    /// `self as U`.
    fn cast_to(self) -> U;
}

macro_rules! impl_cast_to {
    ($($source:ty => [$($target:ty),+];)+) => {$($(
        impl CastTo<$target> for $source {
            #[inline]
            #[allow(clippy::unnecessary_cast)]
            fn cast_to(self) -> $target {
                self as $target
            }
        }
    )+)+};
}

/// [`CastTo`] from each of the given number types to every number type.
macro_rules! impl_cast_between_numbers {
    ($($source:ty),+) => {$(
        impl_cast_to! { $source => [f32, f64, i8, i16, i32, i64, isize, u8, u16, u32, u64, usize]; }
    )+};
}

impl_cast_between_numbers!(f32, f64, i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);
impl_cast_to! {
    bool => [i8, i16, i32, i64, isize, u8, u16, u32, u64, usize, bool];
}

#[cfg(test)]
mod tests {
    use super::*;
    use ein_testing::expect_panic;

    fn cast<S: CastTo<U>, U>(value: S) -> U {
        value.cast_to()
    }

    #[test]
    fn integers_wrap() {
        assert_eq!(Num::add(i32::MAX, 1), i32::MIN);
        assert_eq!(Num::sub(i64::MIN, 1), i64::MAX);
        assert_eq!(Num::mul(i32::MAX, 2), -2);
        assert_eq!(Num::sub(0usize, 1), usize::MAX);
        assert_eq!(Num::neg(i32::MIN), i32::MIN);
        assert_eq!(Num::neg(1usize), usize::MAX);
        assert_eq!(Num::abs(i64::MIN), i64::MIN);
        assert_eq!(Num::abs(-5i32), 5);
        assert_eq!(Num::abs(5usize), 5);
        assert_eq!(Num::div(i32::MIN, -1, &SITE), i32::MIN);
        assert_eq!(Num::rem(i64::MIN, -1, &SITE), 0);
        assert_eq!(int_div(-7i64, 2, &SITE), -3);
        assert_eq!(int_rem(-7i64, 2, &SITE), -1);
        assert_eq!(int_div(7usize, 2, &SITE), 3);
    }

    #[test]
    fn integer_division_by_zero_panics_naming_the_site() {
        let expected = "ein: integer division by zero (at src/x.rs:4:9)";
        assert_eq!(expect_panic(|| int_div(1i32, 0, &SITE)), expected);
        assert_eq!(expect_panic(|| int_rem(1i64, 0, &SITE)), expected);
        assert_eq!(expect_panic(|| Num::div(1usize, 0, &SITE)), expected);
        assert_eq!(expect_panic(|| Num::rem(0usize, 0, &SITE)), expected);
    }

    #[test]
    fn float_arithmetic_follows_ieee() {
        assert_eq!(Num::div(1.0f64, 0.0, &SITE), f64::INFINITY);
        assert!(Num::rem(1.0f32, 0.0, &SITE).is_nan());
        assert_eq!(Num::neg(0.0f64).to_bits(), (-0.0f64).to_bits());
        assert_eq!(Num::abs(-2.5f32), 2.5);
        assert_eq!(Num::min(f64::NAN, 1.0), 1.0);
        assert_eq!(Num::max(1.0f32, f32::NAN), 1.0);
        assert_eq!(Num::max(-1.0f32, 2.0), 2.0);
        assert_eq!(Num::min(3i32, -4), -4);
    }

    #[test]
    fn identities() {
        assert_eq!(lowest(marker_of(&1.0f32)), f32::NEG_INFINITY);
        assert_eq!(highest(marker_of(&1.0f64)), f64::INFINITY);
        assert_eq!(lowest(marker_of(&1i32)), i32::MIN);
        assert_eq!(highest(marker_of(&1i64)), i64::MAX);
        assert_eq!(lowest(marker_of(&1usize)), 0);
        assert_eq!(zero(marker_of(&1.0f32)), 0.0);
        assert_eq!(one(marker_of(&1usize)), 1);
        let data = [1.5f64, 2.5];
        let view = View::from_slice(&data, [2]);
        assert_eq!(zero(marker_of_view(&view)), 0.0f64);
    }

    #[test]
    fn literals_use_as_semantics() {
        assert_eq!(i32::from_i64(1 << 40), 0);
        assert_eq!(usize::from_i64(-1), usize::MAX);
        assert_eq!(i64::from_float_literal(2.9, 2.9), 2);
        assert_eq!(i32::from_float_literal(f64::NAN, f32::NAN), 0);
        assert_eq!(f32::from_float_literal(0.1, 0.1), 0.1f32);
        // `f32` takes its own rounding of the text, not the `f64`'s rounded again.
        assert_eq!(f32::from_float_literal(1.000_000_059_604_644_8, 1.000_000_1), 1.000_000_1f32);
        assert_eq!(f64::from_float_literal(1.000_000_059_604_644_8, 1.000_000_1), 1.000_000_059_604_644_8);
        assert_eq!(f64::from_i64(3), 3.0);
    }

    /// Close enough: Miri deliberately perturbs transcendental results by a few ulps.
    fn assert_close(actual: f64, expected: f64) {
        assert!((actual - expected).abs() <= 1e-6 * expected.abs().max(1.0), "{actual} != {expected}");
    }

    #[test]
    fn float_functions_are_the_std_ones() {
        assert_close(Float::exp(0.0f64), 1.0);
        assert_close(Float::ln(1.0f32) as f64, 0.0);
        assert_close(Float::sqrt(9.0f64), 3.0);
        assert_close(Float::sin(0.0f32) as f64, 0.0);
        assert_close(Float::cos(0.0f64), 1.0);
        assert_close(Float::tan(0.0f64), 0.0);
        assert_close(Float::tanh(0.0f32) as f64, 0.0);
        assert_eq!(Float::floor(-1.5f64), -2.0);
        assert_eq!(Float::ceil(-1.5f32), -1.0);
        assert_close(Float::pow(2.0f64, 10.0), 1024.0);
        assert_close(Float::pow(4.0f32, 0.5) as f64, 2.0);
    }

    const SITE: Site = Site { file: "src/x.rs", line: 4, column: 9 };

    #[test]
    #[cfg_attr(miri, ignore = "Miri perturbs each float function's result by a few ulps, differently on each call")]
    fn std_float_functions_are_std_exactly() {
        for x in [-2.5f64, -0.0, 0.3, 1.0, 7.25, f64::INFINITY, f64::NAN, 1e300] {
            let same = |left: f64, right: f64| left.to_bits() == right.to_bits() || left.is_nan() && right.is_nan();
            assert!(same(Float::signum(x), x.signum()));
            assert!(same(Float::round(x), x.round()));
            assert!(same(Float::fract(x), x.fract()));
            assert!(same(Float::cbrt(x), x.cbrt()));
            assert!(same(Float::exp_m1(x), x.exp_m1()));
            assert!(same(Float::log10(x), x.log10()));
            assert!(same(Float::powi(x, -3), x.powi(-3)));
            assert!(same(Float::pow(x, 0.5), x.powf(0.5)));
            assert!(same(Float::atan2(x, -1.0), x.atan2(-1.0)));
            assert!(same(Float::hypot(x, 2.0), x.hypot(2.0)));
            assert!(same(Float::mul_add(x, 2.0, 1.0), x.mul_add(2.0, 1.0)));
            assert!(same(Float::acosh(x), x.acosh()));
            assert!(same(Signed::signum(x), x.signum()));
            assert_eq!(Float::is_nan(x), x.is_nan());
            assert_eq!(Float::is_finite(x), x.is_finite());
            assert!(same(Num::clamp(x, -1.0, 1.0, &SITE), x.clamp(-1.0, 1.0)));
            let single = x as f32;
            assert_eq!(Float::trunc(single).to_bits(), single.trunc().to_bits());
            assert_eq!(Float::is_infinite(single), single.is_infinite());
        }
    }

    #[test]
    fn integer_functions_wrap_and_signum_is_std() {
        assert_eq!(Int::pow(3u8, 6), 729u32 as u8);
        assert_eq!(Int::pow(-2i16, 15), i16::MIN);
        assert_eq!(Int::pow(7i64, 0), 1);
        assert_eq!(Int::rem_euclid(-7i32, 3, &SITE), 2);
        assert_eq!(Int::rem_euclid(-7i32, -3, &SITE), 2);
        assert_eq!(Int::div_euclid(-7i32, 3, &SITE), -3);
        assert_eq!(Int::div_euclid(i64::MIN, -1, &SITE), i64::MIN);
        assert_eq!(Int::rem_euclid(i64::MIN, -1, &SITE), 0);
        assert_eq!(Int::div_euclid(7usize, 2, &SITE), 3);
        assert_eq!(Signed::signum(-9i8), -1);
        assert_eq!(Signed::signum(0isize), 0);
        assert_eq!(Num::clamp(9u16, 2, 5, &SITE), 5);
        assert_eq!(Num::clamp(-9i32, -2, 2, &SITE), -2);
        assert_eq!(Num::abs(i8::MIN), i8::MIN);
    }

    #[test]
    fn failing_functions_panic_with_ein_messages_naming_the_site() {
        assert_eq!(
            expect_panic(|| Num::clamp(1.0f64, 2.0, 1.0, &SITE)),
            "ein: `clamp` (at src/x.rs:4:9) needs min <= max (and no NaN bound), but min is 2.0 and max is 1.0"
        );
        assert_eq!(
            expect_panic(|| Num::clamp(1.0f32, f32::NAN, 1.0, &SITE)),
            "ein: `clamp` (at src/x.rs:4:9) needs min <= max (and no NaN bound), but min is NaN and max is 1.0"
        );
        assert_eq!(
            expect_panic(|| Num::clamp(1u8, 3, 2, &SITE)),
            "ein: `clamp` (at src/x.rs:4:9) needs min <= max (and no NaN bound), but min is 3 and max is 2"
        );
        assert_eq!(expect_panic(|| Int::rem_euclid(1i32, 0, &SITE)), "ein: integer division by zero (at src/x.rs:4:9)");
        assert_eq!(expect_panic(|| Int::div_euclid(1u64, 0, &SITE)), "ein: integer division by zero (at src/x.rs:4:9)");
        // Equal bounds are fine; a NaN value passes through, as in std.
        assert_eq!(Num::clamp(3.0f64, 1.0, 1.0, &SITE), 1.0);
        assert!(Num::clamp(f64::NAN, 1.0, 2.0, &SITE).is_nan());
    }

    #[test]
    fn casts_follow_as() {
        assert_eq!(cast::<f64, i32>(1e20), i32::MAX);
        assert_eq!(cast::<f32, usize>(-3.0), 0);
        assert_eq!(cast::<f64, i64>(f64::NAN), 0);
        assert_eq!(cast::<i64, i32>(1 << 32), 0);
        assert_eq!(cast::<i32, usize>(-1), usize::MAX);
        assert_eq!(cast::<usize, f64>(3), 3.0);
        assert_eq!(cast::<i32, f32>(16_777_217), 16_777_216.0);
        assert_eq!(cast::<bool, i32>(true), 1);
        assert_eq!(cast::<bool, usize>(false), 0);
        assert!(cast::<bool, bool>(true));
        assert_eq!(cast::<f32, f32>(1.5), 1.5);
    }
}
