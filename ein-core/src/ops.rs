//! The vocabulary shared by every stage: scalar types, operators, scalar functions and reductions.

use std::fmt;

/// A scalar element type of the language. Index variables and sizes are `I64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scalar {
    F32,
    F64,
    I8,
    I16,
    I32,
    I64,
    Isize,
    U8,
    U16,
    U32,
    U64,
    Usize,
    Bool,
}

impl Scalar {
    /// Every scalar type: Rust's primitive numbers (but the 128-bit ones) and `bool`.
    pub const ALL: [Scalar; 13] = [
        Scalar::F32,
        Scalar::F64,
        Scalar::I8,
        Scalar::I16,
        Scalar::I32,
        Scalar::I64,
        Scalar::Isize,
        Scalar::U8,
        Scalar::U16,
        Scalar::U32,
        Scalar::U64,
        Scalar::Usize,
        Scalar::Bool,
    ];

    /// The Rust spelling of the type, which is also its ein spelling.
    pub fn name(self) -> &'static str {
        match self {
            Scalar::F32 => "f32",
            Scalar::F64 => "f64",
            Scalar::I8 => "i8",
            Scalar::I16 => "i16",
            Scalar::I32 => "i32",
            Scalar::I64 => "i64",
            Scalar::Isize => "isize",
            Scalar::U8 => "u8",
            Scalar::U16 => "u16",
            Scalar::U32 => "u32",
            Scalar::U64 => "u64",
            Scalar::Usize => "usize",
            Scalar::Bool => "bool",
        }
    }

    pub fn from_name(name: &str) -> Option<Scalar> {
        Scalar::ALL.into_iter().find(|s| s.name() == name)
    }

    pub fn is_float(self) -> bool {
        matches!(self, Scalar::F32 | Scalar::F64)
    }

    pub fn is_int(self) -> bool {
        !self.is_float() && self != Scalar::Bool
    }

    /// Whether an integer type is signed (floats are; `bool` is not).
    pub fn is_signed(self) -> bool {
        matches!(self, Scalar::F32 | Scalar::F64 | Scalar::I8 | Scalar::I16 | Scalar::I32 | Scalar::I64 | Scalar::Isize)
    }

    /// The smallest and largest value of an integer type, for a target whose pointers are
    /// 64 bits wide (`isize`, `usize`); `None` for floats and `bool`.
    pub fn int_range(self) -> Option<(i128, i128)> {
        Some(match self {
            Scalar::I8 => (i8::MIN.into(), i8::MAX.into()),
            Scalar::I16 => (i16::MIN.into(), i16::MAX.into()),
            Scalar::I32 => (i32::MIN.into(), i32::MAX.into()),
            Scalar::I64 | Scalar::Isize => (i64::MIN.into(), i64::MAX.into()),
            Scalar::U8 => (0, u8::MAX.into()),
            Scalar::U16 => (0, u16::MAX.into()),
            Scalar::U32 => (0, u32::MAX.into()),
            Scalar::U64 | Scalar::Usize => (0, u64::MAX.into()),
            Scalar::F32 | Scalar::F64 | Scalar::Bool => return None,
        })
    }

    /// Whether the type's width depends on the target (`isize`, `usize`): constants of it are
    /// only folded where every target agrees.
    pub fn is_pointer_sized(self) -> bool {
        matches!(self, Scalar::Isize | Scalar::Usize)
    }

    /// `value` wrapped into the range of an integer type (two's complement), as Rust's
    /// `wrapping_*` methods and integer `as` casts do on a 64-bit target; `None` for floats
    /// and `bool`.
    pub fn wrap(self, value: i128) -> Option<i128> {
        let (low, high) = self.int_range()?;
        Some((value - low).rem_euclid(high - low + 1) + low)
    }

    /// An integer type's width in bits on a 64-bit target (`None` for the other types).
    pub fn bits(self) -> Option<u32> {
        let (low, high) = self.int_range()?;
        Some((high - low + 1).trailing_zeros())
    }

    /// A float converted to an integer type as Rust's `as` does on a 64-bit target:
    /// truncated toward zero, saturated at the type's bounds, NaN becoming 0.
    pub fn saturate(self, value: f64) -> Option<i128> {
        let (low, high) = self.int_range()?;
        // `as i128` truncates and saturates at i128's bounds, far outside any range here.
        Some((value as i128).clamp(low, high))
    }

    /// [`Scalar::wrap`] when every target agrees on the answer (for `isize`/`usize`: when
    /// 32-bit targets give the same value), for folding constants at expansion time.
    pub fn wrap_on_every_target(self, value: i128) -> Option<i128> {
        self.on_every_target(|ty| ty.wrap(value))
    }

    /// [`Scalar::saturate`] when every target agrees on the answer.
    pub fn saturate_on_every_target(self, value: f64) -> Option<i128> {
        self.on_every_target(|ty| ty.saturate(value))
    }

    /// `convert(self)` when a 32-bit target's type of the same name converts to the same value.
    fn on_every_target(self, convert: impl Fn(Scalar) -> Option<i128>) -> Option<i128> {
        let wide = convert(self)?;
        let narrow = match self {
            Scalar::Isize => convert(Scalar::I32)?,
            Scalar::Usize => convert(Scalar::U32)?,
            _ => return Some(wide),
        };
        (narrow == wide).then_some(wide)
    }
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Prefix operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `-x`: numbers only.
    Neg,
    /// `!x`: a boolean's negation, an integer's bitwise complement.
    Not,
}

/// Infix operators. Arithmetic needs both sides of one numeric type; comparisons give `bool`;
/// `&&` and `||` take booleans (both sides are evaluated: ein has no short-circuit effects);
/// `&`, `|` and `^` take two integers of one type (bitwise) or two booleans; `<<` and `>>`
/// two integers of one type, the shift amount wrapped to the type's bits as release-mode Rust
/// does (`x << n` is `x.wrapping_shl(n as u32)`; `>>` is arithmetic on signed types).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
}

impl BinaryOp {
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Rem => "%",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::And => "&&",
            BinaryOp::Or => "||",
            BinaryOp::BitAnd => "&",
            BinaryOp::BitOr => "|",
            BinaryOp::BitXor => "^",
            BinaryOp::Shl => "<<",
            BinaryOp::Shr => ">>",
        }
    }

    pub fn is_arithmetic(self) -> bool {
        matches!(self, BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div | BinaryOp::Rem)
    }

    pub fn is_comparison(self) -> bool {
        matches!(self, BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge)
    }

    pub fn is_logical(self) -> bool {
        matches!(self, BinaryOp::And | BinaryOp::Or)
    }

    /// `&`, `|`, `^`: on integers bit by bit, on booleans as `&&`, `||` and `!=`.
    pub fn is_bitwise(self) -> bool {
        matches!(self, BinaryOp::BitAnd | BinaryOp::BitOr | BinaryOp::BitXor)
    }

    pub fn is_shift(self) -> bool {
        matches!(self, BinaryOp::Shl | BinaryOp::Shr)
    }
}

// ---------------------------------------------------------------------------------------------
// Scalar functions
//
// Note [one table of functions]: every scalar function is one row of `functions!` below, and
// every stage derives what it needs from that row: the parser its name and arity, the checker
// (`check/calls.rs`) its typing rule (domain, operands, output), the passes whether a call can
// fail and whether it is expensive, the interpreter its meaning (the `float:` and `int:`
// bodies, run with std on f32/f64 and on exact `i128` integers that are then wrapped to the
// type), and code generation the runtime trait it calls (`::ein::__private::{Float, Int,
// Signed, Num}::<name>`, chosen by the domain). Adding a function is adding a row here and a
// method of that name to the runtime trait (`ein-runtime/src/scalar.rs`).

/// Which scalar types a function accepts as its first argument (the receiver in method
/// syntax, `x` in `x.clamp(lo, hi)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Domain {
    /// `f32`, `f64`.
    Float,
    /// The integer types.
    Int,
    /// Floats and signed integers (std's `signum`).
    Signed,
    /// Floats and integers.
    Number,
}

impl Domain {
    pub fn contains(self, scalar: Scalar) -> bool {
        match self {
            Domain::Float => scalar.is_float(),
            Domain::Int => scalar.is_int(),
            Domain::Signed => scalar.is_float() || (scalar.is_int() && scalar.is_signed()),
            Domain::Number => scalar != Scalar::Bool,
        }
    }

    /// The words for an error: "a float", "a signed number".
    pub fn describe(self) -> &'static str {
        match self {
            Domain::Float => "a float (`f32`, `f64`)",
            Domain::Int => "an integer",
            Domain::Signed => "a float or a signed integer",
            Domain::Number => "a number",
        }
    }
}

/// The type of an argument after the first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operand {
    /// The first argument's type.
    Same,
    /// `i32`, whatever the first argument's type (`powi`'s exponent, as in std).
    I32,
    /// `pow`'s exponent: the base's type for a float base (ein's `pow(x, y)`, std's `powf`),
    /// `u32` for an integer base (std's `pow`). An integer base is chosen when the base is an
    /// integer, or when the base's type is still open and the exponent is an integer.
    Exponent,
}

/// The type of a function's result.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Output {
    /// The first argument's type.
    Same,
    /// `bool` (`is_nan`).
    Bool,
    /// `u32` (`count_ones`: std's bit counts are `u32` whatever the integer's width).
    U32,
}

impl Output {
    /// The type of a call's result whose first argument has type `first`.
    pub fn of(self, first: &crate::ir::Type) -> crate::ir::Type {
        match self.fixed() {
            Some(scalar) => crate::ir::Type::Scalar(crate::ir::ScalarType::Known(scalar)),
            None => first.clone(),
        }
    }

    /// The scalar type of a call's result whose first argument is a `first`.
    pub fn scalar(self, first: Scalar) -> Scalar {
        self.fixed().unwrap_or(first)
    }

    /// The result's scalar type where it does not follow the arguments'.
    fn fixed(self) -> Option<Scalar> {
        match self {
            Output::Same => None,
            Output::Bool => Some(Scalar::Bool),
            Output::U32 => Some(Scalar::U32),
        }
    }
}

/// Whether a call can raise a run-time error (and so must not be moved or speculated).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Failure {
    Never,
    /// On integers, a zero second argument is "integer division by zero".
    ZeroDivisor,
    /// `clamp`: panics, as std does, when the lower bound is above the upper one or (floats) a
    /// bound is NaN.
    Bounds,
}

/// How much work a call is, for passes that decide whether sharing it pays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cost {
    /// A few instructions.
    Cheap,
    /// A polynomial evaluation or a library call (`exp`, `sin`, `powf`, …).
    Transcendental,
}

impl Func {
    /// Whether a call costs clearly more than arithmetic (a library call, a square root or a
    /// division), so computing it once and keeping its value pays; `min`, `abs`, `floor` and
    /// their kin are a few instructions, like an addition.
    pub fn is_dear(self) -> bool {
        self.cost() == Cost::Transcendental || matches!(self, Func::Sqrt | Func::Recip)
    }
}

/// A float function's answer in the interpreter: a float of the argument's type, or a `bool`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FloatAnswer<F> {
    Float(F),
    Bool(bool),
}

impl From<f32> for FloatAnswer<f32> {
    fn from(value: f32) -> Self {
        FloatAnswer::Float(value)
    }
}

impl From<f64> for FloatAnswer<f64> {
    fn from(value: f64) -> Self {
        FloatAnswer::Float(value)
    }
}

impl<F> From<bool> for FloatAnswer<F> {
    fn from(value: bool) -> Self {
        FloatAnswer::Bool(value)
    }
}

/// An argument of a float function in the interpreter: a float of the first argument's type,
/// or an `i32` (`powi`'s exponent).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FloatOperand<F> {
    Float(F),
    I32(i32),
}

/// Unpacks a [`FloatOperand`] as the parameter type a row's `float:` body declares.
trait TakeOperand<F>: Sized {
    fn take(operand: FloatOperand<F>) -> Option<Self>;
}

impl<F> TakeOperand<F> for i32 {
    fn take(operand: FloatOperand<F>) -> Option<i32> {
        match operand {
            FloatOperand::I32(value) => Some(value),
            FloatOperand::Float(_) => None,
        }
    }
}

macro_rules! take_float {
    ($($float:ty),+) => {$(
        impl TakeOperand<$float> for $float {
            fn take(operand: FloatOperand<$float>) -> Option<$float> {
                match operand {
                    FloatOperand::Float(value) => Some(value),
                    FloatOperand::I32(_) => None,
                }
            }
        }
    )+};
}

take_float!(f32, f64);

/// Defines [`Func`] and its facts from the table of rows
/// `Variant "name"(operands…): domain -> output, failure, cost, float: |x, ..| body, int: |x, ..| body;`
/// (`float: -` / `int: -` where the function has no float / integer meaning). See
/// note [one table of functions].
macro_rules! functions {
    ($(
        $(#[doc = $doc:literal])*
        $variant:ident $name:literal ($($operand:ident),*): $domain:ident -> $output:ident, $failure:ident, $cost:ident,
        float: $float:tt, int: $int:tt;
    )*) => {
        /// A built-in scalar function, callable as `f(x, ..)` or `x.f(..)`; Rust's std function
        /// of that name (see note [one table of functions] for where each fact is used).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Func {
            $($(#[doc = $doc])* $variant,)*
        }

        impl Func {
            pub const ALL: &'static [Func] = &[$(Func::$variant),*];

            pub fn name(self) -> &'static str {
                match self {
                    $(Func::$variant => $name,)*
                }
            }

            /// The types of the arguments after the first.
            pub fn operands(self) -> &'static [Operand] {
                match self {
                    $(Func::$variant => &[$(Operand::$operand),*],)*
                }
            }

            /// The types the first argument may have.
            pub fn domain(self) -> Domain {
                match self {
                    $(Func::$variant => Domain::$domain,)*
                }
            }

            pub fn output(self) -> Output {
                match self {
                    $(Func::$variant => Output::$output,)*
                }
            }

            pub fn failure(self) -> Failure {
                match self {
                    $(Func::$variant => Failure::$failure,)*
                }
            }

            pub fn cost(self) -> Cost {
                match self {
                    $(Func::$variant => Cost::$cost,)*
                }
            }

            /// The std function on `f32` arguments (and an `i32` exponent),
            /// or `None` when the function has no float meaning or the count is wrong. Bounds
            /// and divisors are not checked here (see [`Func::failure`]).
            pub fn apply_f32(self, args: &[FloatOperand<f32>]) -> Option<FloatAnswer<f32>> {
                match self {
                    $(Func::$variant => functions!(@float f32, args $float),)*
                }
            }

            /// [`Func::apply_f32`] on `f64` arguments.
            pub fn apply_f64(self, args: &[FloatOperand<f64>]) -> Option<FloatAnswer<f64>> {
                match self {
                    $(Func::$variant => functions!(@float f64, args $float),)*
                }
            }

            /// The function on integers held exactly as `i128` (a `u32` exponent too), before
            /// the result is wrapped into the type; `bits` is the first argument's width (the
            /// bit counts count in it). `None` when the function has no integer meaning or the
            /// count is wrong.
            pub fn apply_int(self, args: &[i128], bits: u32) -> Option<i128> {
                match self {
                    $(Func::$variant => functions!(@int args bits $int),)*
                }
            }
        }
    };
    (@float $float:ty, $args:ident -) => { None };
    (@float $float:ty, $args:ident (|$($parameter:ident $(: $declared:ty)?),+| $body:expr)) => {
        match *$args {
            [$($parameter),+] => {
                $(let $parameter: functions!(@type $float $(, $declared)?) = TakeOperand::take($parameter)?;)+
                Some(($body).into())
            }
            _ => None,
        }
    };
    (@type $float:ty) => { $float };
    (@type $float:ty, $declared:ty) => { $declared };
    (@int $args:ident $bits:ident -) => { None };
    (@int $args:ident $bits:ident (|$($parameter:ident),+| $body:expr)) => {
        match *$args {
            [$($parameter),+] => Some($body),
            _ => None,
        }
    };
    // A function of the bits of one value of `$width` bits: `x` as its two's-complement bit
    // pattern in the low `$width` bits of a `u128`.
    (@int $args:ident $bits:ident (bits |$parameter:ident, $width:ident| $body:expr)) => {
        match *$args {
            [value] => {
                let $width = $bits;
                let $parameter = (value as u128) & (u128::MAX >> (128 - $bits.clamp(1, 128)));
                Some(i128::from($body))
            }
            _ => None,
        }
    };
}

functions! {
    /// `|x|`; on integers wrapping (`i32::MIN.abs() == i32::MIN`) and the identity on unsigned
    /// types (which std lacks: ein has always allowed it).
    Abs "abs"(): Number -> Same, Never, Cheap, float: (|x| x.abs()), int: (|x| x.abs());
    /// -1, 0 or 1 (floats: ±1.0, or NaN for NaN; std's `signum`).
    Signum "signum"(): Signed -> Same, Never, Cheap, float: (|x| x.signum()), int: (|x| x.signum());
    Floor "floor"(): Float -> Same, Never, Cheap, float: (|x| x.floor()), int: -;
    Ceil "ceil"(): Float -> Same, Never, Cheap, float: (|x| x.ceil()), int: -;
    /// Half-way cases away from zero, as std.
    Round "round"(): Float -> Same, Never, Cheap, float: (|x| x.round()), int: -;
    Trunc "trunc"(): Float -> Same, Never, Cheap, float: (|x| x.trunc()), int: -;
    Fract "fract"(): Float -> Same, Never, Cheap, float: (|x| x.fract()), int: -;
    Sqrt "sqrt"(): Float -> Same, Never, Cheap, float: (|x| x.sqrt()), int: -;
    Cbrt "cbrt"(): Float -> Same, Never, Transcendental, float: (|x| x.cbrt()), int: -;
    Recip "recip"(): Float -> Same, Never, Cheap, float: (|x| x.recip()), int: -;
    ToDegrees "to_degrees"(): Float -> Same, Never, Cheap, float: (|x| x.to_degrees()), int: -;
    ToRadians "to_radians"(): Float -> Same, Never, Cheap, float: (|x| x.to_radians()), int: -;
    /// ein's own vectorisable version in compiled code (README, "Math functions").
    Exp "exp"(): Float -> Same, Never, Transcendental, float: (|x| x.exp()), int: -;
    Exp2 "exp2"(): Float -> Same, Never, Transcendental, float: (|x| x.exp2()), int: -;
    ExpM1 "exp_m1"(): Float -> Same, Never, Transcendental, float: (|x| x.exp_m1()), int: -;
    /// ein's own vectorisable version in compiled code.
    Ln "ln"(): Float -> Same, Never, Transcendental, float: (|x| x.ln()), int: -;
    Ln1p "ln_1p"(): Float -> Same, Never, Transcendental, float: (|x| x.ln_1p()), int: -;
    Log2 "log2"(): Float -> Same, Never, Transcendental, float: (|x| x.log2()), int: -;
    Log10 "log10"(): Float -> Same, Never, Transcendental, float: (|x| x.log10()), int: -;
    /// `x.powi(n)`, `n: i32`.
    Powi "powi"(I32): Float -> Same, Never, Transcendental, float: (|x, n: i32| x.powi(n)), int: -;
    Powf "powf"(Same): Float -> Same, Never, Transcendental, float: (|x, y| x.powf(y)), int: -;
    /// Floats: `pow(x, y)` is `x.powf(y)`. Integers: std's `x.pow(e)` with `e: u32`, wrapping.
    Pow "pow"(Exponent): Number -> Same, Never, Transcendental,
        float: (|x, y| x.powf(y)), int: (|x, e| x.wrapping_pow(e as u32));
    /// ein's own vectorisable version in compiled code.
    Sin "sin"(): Float -> Same, Never, Transcendental, float: (|x| x.sin()), int: -;
    /// ein's own vectorisable version in compiled code.
    Cos "cos"(): Float -> Same, Never, Transcendental, float: (|x| x.cos()), int: -;
    Tan "tan"(): Float -> Same, Never, Transcendental, float: (|x| x.tan()), int: -;
    Asin "asin"(): Float -> Same, Never, Transcendental, float: (|x| x.asin()), int: -;
    Acos "acos"(): Float -> Same, Never, Transcendental, float: (|x| x.acos()), int: -;
    Atan "atan"(): Float -> Same, Never, Transcendental, float: (|x| x.atan()), int: -;
    /// `y.atan2(x)`: the angle of the point (x, y).
    Atan2 "atan2"(Same): Float -> Same, Never, Transcendental, float: (|y, x| y.atan2(x)), int: -;
    Sinh "sinh"(): Float -> Same, Never, Transcendental, float: (|x| x.sinh()), int: -;
    Cosh "cosh"(): Float -> Same, Never, Transcendental, float: (|x| x.cosh()), int: -;
    /// ein's own vectorisable version in compiled code.
    Tanh "tanh"(): Float -> Same, Never, Transcendental, float: (|x| x.tanh()), int: -;
    Asinh "asinh"(): Float -> Same, Never, Transcendental, float: (|x| x.asinh()), int: -;
    Acosh "acosh"(): Float -> Same, Never, Transcendental, float: (|x| x.acosh()), int: -;
    Atanh "atanh"(): Float -> Same, Never, Transcendental, float: (|x| x.atanh()), int: -;
    Hypot "hypot"(Same): Float -> Same, Never, Transcendental, float: (|x, y| x.hypot(y)), int: -;
    /// `x.copysign(sign)`: `x`'s magnitude with `sign`'s sign.
    Copysign "copysign"(Same): Float -> Same, Never, Cheap, float: (|x, y| x.copysign(y)), int: -;
    /// `x.mul_add(a, b)`: `x * a + b` rounded once.
    MulAdd "mul_add"(Same, Same): Float -> Same, Never, Cheap, float: (|x, a, b| x.mul_add(a, b)), int: -;
    /// Floats: std's `min` (a NaN operand is ignored).
    Min "min"(Same): Number -> Same, Never, Cheap, float: (|x, y| x.min(y)), int: (|x, y| x.min(y));
    /// Floats: std's `max` (a NaN operand is ignored).
    Max "max"(Same): Number -> Same, Never, Cheap, float: (|x, y| x.max(y)), int: (|x, y| x.max(y));
    /// `x.clamp(low, high)`; `low > high` (or a NaN bound) is a run-time error, as in std.
    Clamp "clamp"(Same, Same): Number -> Same, Bounds, Cheap,
        float: (|x, low, high| x.clamp(low, high)), int: (|x, low, high| x.clamp(low, high));
    IsNan "is_nan"(): Float -> Bool, Never, Cheap, float: (|x| x.is_nan()), int: -;
    IsFinite "is_finite"(): Float -> Bool, Never, Cheap, float: (|x| x.is_finite()), int: -;
    IsInfinite "is_infinite"(): Float -> Bool, Never, Cheap, float: (|x| x.is_infinite()), int: -;
    /// The non-negative remainder; wrapping (`MIN.rem_euclid(-1) == 0`); a zero divisor is
    /// "integer division by zero".
    RemEuclid "rem_euclid"(Same): Int -> Same, ZeroDivisor, Cheap, float: -, int: (|x, y| x.rem_euclid(y));
    /// Division rounding so that the remainder is non-negative; wrapping
    /// (`MIN.div_euclid(-1) == MIN`, as ein's `/`); a zero divisor is "integer division by zero".
    DivEuclid "div_euclid"(Same): Int -> Same, ZeroDivisor, Cheap, float: -, int: (|x, y| x.div_euclid(y));
    /// The number of one bits (a `u32`, as std's).
    CountOnes "count_ones"(): Int -> U32, Never, Cheap, float: -, int: (bits |x, _width| x.count_ones());
    /// The number of zero bits in the type's width (a `u32`).
    CountZeros "count_zeros"(): Int -> U32, Never, Cheap, float: -, int: (bits |x, width| width - x.count_ones());
    /// The number of zero bits above the highest one bit (the width for 0; a `u32`).
    LeadingZeros "leading_zeros"(): Int -> U32, Never, Cheap, float: -,
        int: (bits |x, width| x.leading_zeros() - (128 - width));
    /// The number of zero bits below the lowest one bit (the width for 0; a `u32`).
    TrailingZeros "trailing_zeros"(): Int -> U32, Never, Cheap, float: -,
        int: (bits |x, width| x.trailing_zeros().min(width));
}

/// The constants of std's `f32::consts` and `f64::consts`: name, `f64` value, `f32` value
/// (each std's own).
pub const FLOAT_CONSTANTS: &[(&str, f64, f32)] = {
    use std::{f32::consts as single, f64::consts as double};
    &[
        ("PI", double::PI, single::PI),
        ("TAU", double::TAU, single::TAU),
        ("E", double::E, single::E),
        ("SQRT_2", double::SQRT_2, single::SQRT_2),
        ("FRAC_1_SQRT_2", double::FRAC_1_SQRT_2, single::FRAC_1_SQRT_2),
        ("FRAC_PI_2", double::FRAC_PI_2, single::FRAC_PI_2),
        ("FRAC_PI_3", double::FRAC_PI_3, single::FRAC_PI_3),
        ("FRAC_PI_4", double::FRAC_PI_4, single::FRAC_PI_4),
        ("FRAC_PI_6", double::FRAC_PI_6, single::FRAC_PI_6),
        ("FRAC_PI_8", double::FRAC_PI_8, single::FRAC_PI_8),
        ("FRAC_1_PI", double::FRAC_1_PI, single::FRAC_1_PI),
        ("FRAC_2_PI", double::FRAC_2_PI, single::FRAC_2_PI),
        ("FRAC_2_SQRT_PI", double::FRAC_2_SQRT_PI, single::FRAC_2_SQRT_PI),
        ("LN_2", double::LN_2, single::LN_2),
        ("LN_10", double::LN_10, single::LN_10),
        ("LOG2_E", double::LOG2_E, single::LOG2_E),
        ("LOG2_10", double::LOG2_10, single::LOG2_10),
        ("LOG10_E", double::LOG10_E, single::LOG10_E),
        ("LOG10_2", double::LOG10_2, single::LOG10_2),
    ]
};

/// `consts::NAME` of std's float modules, as its `f64` and `f32` values.
pub fn float_constant(name: &str) -> Option<(f64, f32)> {
    FLOAT_CONSTANTS.iter().find(|constant| constant.0 == name).map(|&(_, double, single)| (double, single))
}

impl Func {
    pub fn from_name(name: &str) -> Option<Func> {
        Func::ALL.iter().copied().find(|f| f.name() == name)
    }

    /// How many arguments the function takes, the receiver of method syntax included.
    pub fn arity(self) -> usize {
        1 + self.operands().len()
    }

    /// Whether `pow`-style overloading applies: the exponent's type depends on the base's.
    pub fn has_exponent(self) -> bool {
        self.operands().contains(&Operand::Exponent)
    }

    /// The known function whose name is closest to `name` (a typo, or another language's
    /// spelling such as `log` or `atan2f`), if any is close enough to suggest.
    /// With `arguments` (the count at the call, receiver included), a function taking that
    /// many wins a tie.
    pub fn closest(name: &str, arguments: Option<usize>) -> Option<Func> {
        let aliases: &[(&str, Func)] = &[
            ("log", Func::Ln),
            ("fabs", Func::Abs),
            ("sign", Func::Signum),
            ("pow2", Func::Powi),
            ("arctan2", Func::Atan2),
            ("isnan", Func::IsNan),
            ("isfinite", Func::IsFinite),
            ("mod", Func::RemEuclid),
            ("modulo", Func::RemEuclid),
            ("clip", Func::Clamp),
        ];
        if let Some((_, func)) = aliases.iter().find(|(alias, _)| *alias == name) {
            return Some(*func);
        }
        let lower = name.to_ascii_lowercase();
        let trimmed = lower.trim_end_matches('f');
        let best = Func::ALL
            .iter()
            .map(|func| (edit_distance(&lower, func.name()).min(edit_distance(trimmed, func.name())), *func))
            .min_by_key(|(distance, func)| (*distance, arguments.is_some_and(|count| count != func.arity())))?;
        let limit = if name.len() <= 3 { 1 } else { 2 };
        (best.0 <= limit).then_some(best.1)
    }
}

/// The candidate closest to `name` by edit distance, if close enough to suggest (the
/// threshold of [`Func::closest`]): for names the user declared, such as a block's functions.
pub fn closest_name<'a>(name: &str, candidates: &'a [String]) -> Option<&'a str> {
    let limit = if name.len() <= 3 { 1 } else { 2 };
    let (distance, best) = candidates.iter().map(|candidate| (edit_distance(name, candidate), candidate)).min()?;
    (distance <= limit).then_some(best.as_str())
}

/// Levenshtein distance, for suggestions.
fn edit_distance(left: &str, right: &str) -> usize {
    let right: Vec<char> = right.chars().collect();
    let mut previous: Vec<usize> = (0..=right.len()).collect();
    for (row, l) in left.chars().enumerate() {
        let mut current = vec![row + 1];
        for (column, r) in right.iter().enumerate() {
            let substitute = previous[column] + usize::from(l != *r);
            current.push(substitute.min(previous[column + 1] + 1).min(current[column] + 1));
        }
        previous = current;
    }
    previous[right.len()]
}

/// Reductions over one index. All are associative, so they may run in parallel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    Sum,
    Prod,
    Max,
    Min,
    /// Index (as `usize`) of the first maximum; panics on an empty range.
    ArgMax,
    /// Index (as `usize`) of the first minimum; panics on an empty range.
    ArgMin,
    /// Logical and over booleans; `true` on an empty range.
    All,
    /// Logical or over booleans; `false` on an empty range.
    Any,
}

impl ReduceOp {
    pub const ALL: [ReduceOp; 8] = [
        ReduceOp::Sum,
        ReduceOp::Prod,
        ReduceOp::Max,
        ReduceOp::Min,
        ReduceOp::ArgMax,
        ReduceOp::ArgMin,
        ReduceOp::All,
        ReduceOp::Any,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Prod => "prod",
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
            ReduceOp::ArgMax => "argmax",
            ReduceOp::ArgMin => "argmin",
            ReduceOp::All => "all",
            ReduceOp::Any => "any",
        }
    }

    pub fn from_name(name: &str) -> Option<ReduceOp> {
        ReduceOp::ALL.into_iter().find(|r| r.name() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::{Domain, FloatAnswer, FloatOperand, Func, Operand, Scalar};

    #[test]
    fn the_function_table_is_consistent() {
        for (position, func) in Func::ALL.iter().enumerate() {
            assert_eq!(Func::from_name(func.name()), Some(*func), "names are unique");
            assert!(Func::ALL[..position].iter().all(|other| other != func));
            // A function has a meaning on exactly the types of its domain.
            let floats: Vec<FloatOperand<f64>> = func
                .operands()
                .iter()
                .map(|operand| match operand {
                    Operand::I32 => FloatOperand::I32(2),
                    _ => FloatOperand::Float(0.5),
                })
                .collect();
            let floats = [vec![FloatOperand::Float(0.25)], floats].concat();
            let has_float_meaning = func.apply_f64(&floats).is_some();
            let has_int_meaning = func.apply_int(&[1; 3][..func.arity()], 32).is_some();
            let domain = func.domain();
            assert_eq!(has_float_meaning, domain != Domain::Int, "{}", func.name());
            assert_eq!(has_int_meaning, domain != Domain::Float, "{}", func.name());
            // The wrong number of arguments is no meaning, not a panic.
            assert_eq!(func.apply_f64(&[]), None);
            assert_eq!(func.apply_int(&[1; 4], 32), None);
        }
        assert_eq!(Func::IsNan.apply_f32(&[FloatOperand::Float(f32::NAN)]), Some(FloatAnswer::Bool(true)));
        assert_eq!(
            Func::Powi.apply_f64(&[FloatOperand::Float(2.0), FloatOperand::I32(-2)]),
            Some(FloatAnswer::Float(0.25))
        );
        assert_eq!(Func::Pow.apply_int(&[3, 5], 32), Some(243));
        // Bit counts count in the argument's width, negative values as their two's complement.
        let bits = |func: Func, value: i128, width: u32| func.apply_int(&[value], width);
        assert_eq!(bits(Func::CountOnes, -1, 8), Some(8));
        assert_eq!(bits(Func::CountOnes, -1, 64), Some(64));
        assert_eq!(bits(Func::CountZeros, 5, 16), Some(14));
        assert_eq!(bits(Func::LeadingZeros, 1, 32), Some(31));
        assert_eq!(bits(Func::LeadingZeros, -128, 8), Some(0));
        assert_eq!(bits(Func::LeadingZeros, 0, 64), Some(64));
        assert_eq!(bits(Func::TrailingZeros, 0, 16), Some(16));
        assert_eq!(bits(Func::TrailingZeros, -8, 8), Some(3));
    }

    #[test]
    fn unknown_names_get_close_suggestions() {
        assert_eq!(Func::closest("sqr", None), Some(Func::Sqrt));
        assert_eq!(Func::closest("log", None), Some(Func::Ln));
        assert_eq!(Func::closest("atan2f", None), Some(Func::Atan2));
        assert_eq!(Func::closest("atan3", Some(2)), Some(Func::Atan2));
        assert_eq!(Func::closest("atan3", Some(1)), Some(Func::Atan));
        assert_eq!(Func::closest("clmap", None), Some(Func::Clamp));
        assert_eq!(Func::closest("sigmoid", None), None);
        assert_eq!(Func::closest("foo", None), None);
    }

    #[test]
    fn integers_wrap_and_saturate_as_rust_does() {
        assert_eq!(Scalar::U8.wrap(300), Some(44));
        assert_eq!(Scalar::U8.wrap(-1), Some(255));
        assert_eq!(Scalar::I8.wrap(128), Some(-128));
        assert_eq!(Scalar::I64.wrap(i128::from(i64::MAX) + 1), Some(i128::from(i64::MIN)));
        assert_eq!(Scalar::U64.wrap(-1), Some(i128::from(u64::MAX)));
        assert_eq!(Scalar::F32.wrap(1), None);
        assert_eq!(Scalar::U8.saturate(-3.7), Some(0));
        assert_eq!(Scalar::U8.saturate(255.9), Some(255));
        assert_eq!(Scalar::I16.saturate(f64::NAN), Some(0));
        assert_eq!(Scalar::I32.saturate(-1e300), Some(i128::from(i32::MIN)));
        for (value, ty) in [(300i128, Scalar::U8), (-5, Scalar::U16), (1 << 40, Scalar::I32)] {
            let expected = match ty {
                Scalar::U8 => i128::from(value as u8),
                Scalar::U16 => i128::from(value as u16),
                _ => i128::from(value as i32),
            };
            assert_eq!(ty.wrap(value), Some(expected), "{value} as {ty}");
        }
    }

    #[test]
    fn pointer_sized_constants_fold_only_where_every_target_agrees() {
        assert_eq!(Scalar::Usize.wrap_on_every_target(7), Some(7));
        assert_eq!(Scalar::Usize.wrap_on_every_target(-1), None, "2^64 - 1 or 2^32 - 1");
        assert_eq!(Scalar::Usize.wrap_on_every_target(1 << 33), None);
        assert_eq!(Scalar::Isize.wrap_on_every_target(-5), Some(-5));
        assert_eq!(Scalar::Isize.saturate_on_every_target(1e12), None);
        assert_eq!(Scalar::U32.wrap_on_every_target(-1), Some(i128::from(u32::MAX)));
        assert!(Scalar::ALL.iter().all(|ty| Scalar::from_name(ty.name()) == Some(*ty)));
    }
}

/// The operator of an update in an `accum` body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UpdateOp {
    /// `+=` (numbers)
    Add,
    /// `*=` (numbers)
    Mul,
    /// `|=` (`bool`: logical or)
    Or,
    /// `&=` (`bool`: logical and)
    And,
}

impl UpdateOp {
    /// The operator as written.
    pub fn symbol(self) -> &'static str {
        match self {
            UpdateOp::Add => "+=",
            UpdateOp::Mul => "*=",
            UpdateOp::Or => "|=",
            UpdateOp::And => "&=",
        }
    }
}
