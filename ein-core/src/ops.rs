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
    /// `!x`: booleans only.
    Not,
}

/// Infix operators. Arithmetic needs both sides of one numeric type; comparisons give `bool`;
/// `&&` and `||` take booleans (both sides are evaluated: ein has no short-circuit effects).
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
}

/// Built-in scalar functions, callable as `exp(x)` or `x.exp()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Func {
    Exp,
    Ln,
    Sqrt,
    Sin,
    Cos,
    Tan,
    Tanh,
    /// Works on every number type.
    Abs,
    Floor,
    Ceil,
    /// `pow(x, y)`: float base and exponent of the same type.
    Pow,
    /// `min(a, b)` on numbers of one type.
    Min,
    /// `max(a, b)` on numbers of one type.
    Max,
}

impl Func {
    pub const ALL: [Func; 13] = [
        Func::Exp,
        Func::Ln,
        Func::Sqrt,
        Func::Sin,
        Func::Cos,
        Func::Tan,
        Func::Tanh,
        Func::Abs,
        Func::Floor,
        Func::Ceil,
        Func::Pow,
        Func::Min,
        Func::Max,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Func::Exp => "exp",
            Func::Ln => "ln",
            Func::Sqrt => "sqrt",
            Func::Sin => "sin",
            Func::Cos => "cos",
            Func::Tan => "tan",
            Func::Tanh => "tanh",
            Func::Abs => "abs",
            Func::Floor => "floor",
            Func::Ceil => "ceil",
            Func::Pow => "pow",
            Func::Min => "min",
            Func::Max => "max",
        }
    }

    pub fn from_name(name: &str) -> Option<Func> {
        Func::ALL.into_iter().find(|f| f.name() == name)
    }

    /// How many arguments the function takes.
    pub fn arity(self) -> usize {
        match self {
            Func::Pow | Func::Min | Func::Max => 2,
            _ => 1,
        }
    }

    /// Whether the function is defined only on floats (`abs`, `min`, `max` work on integers too).
    pub fn float_only(self) -> bool {
        !matches!(self, Func::Abs | Func::Min | Func::Max)
    }
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
    use super::Scalar;

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
