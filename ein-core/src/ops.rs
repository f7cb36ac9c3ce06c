//! The vocabulary shared by every stage: scalar types, operators, scalar functions and reductions.

use std::fmt;

/// A scalar element type of the language. Index variables and sizes are `I64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scalar {
    F32,
    F64,
    I32,
    I64,
    Usize,
    Bool,
}

impl Scalar {
    pub const ALL: [Scalar; 6] = [Scalar::F32, Scalar::F64, Scalar::I32, Scalar::I64, Scalar::Usize, Scalar::Bool];

    /// The Rust spelling of the type, which is also its ein spelling.
    pub fn name(self) -> &'static str {
        match self {
            Scalar::F32 => "f32",
            Scalar::F64 => "f64",
            Scalar::I32 => "i32",
            Scalar::I64 => "i64",
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
        matches!(self, Scalar::I32 | Scalar::I64 | Scalar::Usize)
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
