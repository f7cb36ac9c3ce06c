//! The surface syntax tree: what the user wrote, with the span of every node, before any checking.

pub use crate::ops::UpdateOp;
use crate::ops::{BinaryOp, Func, ReduceOp, Scalar, UnaryOp};
use proc_macro2::{Ident, Span};

/// Everything inside one `ein!` invocation.
#[derive(Clone, Debug)]
pub enum Input {
    /// `ein!(expr)`: an expression over captured Rust locals.
    Expression(Expr),
    /// `ein! { fn a(..) -> T { .. } fn b(..) .. extern fn c(..) -> T; }`: one or more typed
    /// functions, and the Rust functions they call (`extern fn`), in the order written.
    Functions(Vec<Function>, Vec<ExternFunction>),
}

/// `extern fn name(params) -> ret;`: a Rust function in scope at the macro call that ein calls
/// once per element. Its parameters and result are scalars (the parser makes sure).
#[derive(Clone, Debug)]
pub struct ExternFunction {
    pub name: Ident,
    pub params: Vec<Param>,
    pub ret: TypeExpr,
    /// `with d = name`: the Rust function giving the tangent of the result from the arguments
    /// and one tangent per float argument (for `#[jvp]`).
    pub derivative: Option<Ident>,
}

/// `#[attrs] #[into(name_into)] #[jvp(name_jvp)] pub fn name(params) -> ret { body }`
#[derive(Clone, Debug)]
pub struct Function {
    /// Outer attributes (doc comments, `#[inline]`, …) passed through to the generated function.
    pub attrs: Vec<syn::Attribute>,
    /// `#[into(name)]`: also generate `name(out, params..)`, which writes the result into
    /// arrays the caller owns instead of returning new ones.
    pub into: Option<Ident>,
    /// `#[jvp(name)]`: also generate `name(params.., tangents..) -> (value, tangent)`, the
    /// forward-mode derivative (see `crate::ad`).
    pub jvp: Option<Ident>,
    /// `#[vjp(name)]` or `#[grad(name)]` (optionally with `wrt(..)`): the reverse-mode derivative.
    pub reverse: Option<crate::ir::Companion>,
    pub vis: syn::Visibility,
    pub name: Ident,
    pub params: Vec<Param>,
    pub ret: TypeExpr,
    /// The body block, as one expression (its `let`s desugared to [`ExprKind::Let`]).
    pub body: Expr,
    pub span: Span,
}

/// `name: type`
#[derive(Clone, Debug)]
pub struct Param {
    pub name: Ident,
    pub ty: TypeExpr,
}

/// A type written by the user.
#[derive(Clone, Debug)]
pub enum TypeExpr {
    /// `f32`, `f64`, `i32`, `i64`, `usize`, `bool`
    Scalar(Scalar, Span),
    /// `[T]`: one more axis around `T` (`[[f32]]` is a rank-2 array of `f32`).
    Array(Box<TypeExpr>, Span),
    /// `(A, B, ..)`
    Tuple(Vec<TypeExpr>, Span),
    /// `{ re: f64, im: f64 }`
    Record(Vec<(Ident, TypeExpr)>, Span),
}

impl TypeExpr {
    pub fn span(&self) -> Span {
        match self {
            TypeExpr::Scalar(_, s) | TypeExpr::Array(_, s) | TypeExpr::Tuple(_, s) | TypeExpr::Record(_, s) => *s,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Expr {
    pub kind: ExprKind,
    /// The whole expression; for binary operators the operator token is in the kind.
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Literal {
    /// An integer literal; `suffix` is the type written after it (`3usize`), if any.
    Int {
        value: u64,
        suffix: Option<Scalar>,
    },
    /// A float literal; `suffix` as above (`1.0f32`). `value` and `as_f32` are the text
    /// rounded once to each float type (through `f64`, an `f32` could be rounded twice).
    Float {
        value: f64,
        as_f32: f32,
        suffix: Option<Scalar>,
    },
    Bool(bool),
}

/// An index binder: `i` or `i in 0..n`.
#[derive(Clone, Debug)]
pub struct Binder {
    pub name: Ident,
    /// The `n` of `0..n`, when written.
    pub size: Option<Box<Expr>>,
}

/// The left side of `let` and of a `fold` or `scan` accumulator.
#[derive(Clone, Debug)]
pub enum Pattern {
    Name(Ident),
    /// `(a, b, ..)`, nested freely.
    Tuple(Vec<Pattern>, Span),
}

impl Pattern {
    pub fn span(&self) -> Span {
        match self {
            Pattern::Name(ident) => ident.span(),
            Pattern::Tuple(_, span) => *span,
        }
    }
}

/// `.0` or `.name`
#[derive(Clone, Debug)]
pub enum Member {
    Position(usize, Span),
    Named(Ident),
}

#[derive(Clone, Debug)]
pub enum ExprKind {
    Literal(Literal),
    /// A variable, parameter, captured local or index used as a value.
    Name(Ident),
    /// `for i, j in 0..n { body }`
    For {
        binders: Vec<Binder>,
        body: Box<Expr>,
    },
    /// `for i where cond { body }`: a filter, the array of `body` at every `i` where `cond`
    /// holds (its length known only at run time). One binder.
    Filter {
        binder: Binder,
        where_span: Span,
        cond: Box<Expr>,
        body: Box<Expr>,
    },
    /// `sum k { body }`, `argmax k in 0..n { body }`, … (several binders nest).
    Reduce {
        op: ReduceOp,
        op_span: Span,
        binders: Vec<Binder>,
        body: Box<Expr>,
    },
    /// `fold t in 0..n, acc = init { body }` (a fold always has a count).
    Fold {
        index: Ident,
        count: Box<Expr>,
        acc: Pattern,
        init: Box<Expr>,
        body: Box<Expr>,
    },
    /// `scan t in 0..n, acc = init { body }`; without `in 0..n` the length is inferred from
    /// the arrays `t` indexes, as a comprehension's.
    Scan {
        index: Ident,
        count: Option<Box<Expr>>,
        acc: Pattern,
        init: Box<Expr>,
        body: Box<Expr>,
    },
    /// `accum h = init { body }`: `h` starts as `init` (an array) and the body's updates
    /// (`h[idx..] += e`, [`ExprKind::Update`]) are applied to it; the value is the final array.
    Accum {
        target: Ident,
        init: Box<Expr>,
        body: Box<Expr>,
    },
    /// `h[i, j] += value` (also `*=`, `|=`, `&=`): an update, only in an `accum` body. `span`
    /// of the node covers `h[..] += value`; `op_span` is the operator.
    Update {
        target: Ident,
        indices: Vec<Expr>,
        op: UpdateOp,
        op_span: Span,
        value: Box<Expr>,
    },
    /// `{ update; update; .. }`: several updates (or conditional updates) of an `accum` body,
    /// applied in order.
    Updates(Vec<Expr>),
    /// `if cond { updates }` without `else`: updates applied only where `cond` holds.
    When {
        cond: Box<Expr>,
        body: Box<Expr>,
    },
    /// `a[i, j]` (and `a[i][j]`, parsed as two nested nodes).
    Index {
        array: Box<Expr>,
        indices: Vec<Expr>,
    },
    /// `t.0`, `r.re`
    Field {
        base: Box<Expr>,
        member: Member,
    },
    /// `a.len()`
    Len {
        array: Box<Expr>,
    },
    /// `a.shape(k)`; `axis` is a literal.
    Shape {
        array: Box<Expr>,
        axis: usize,
        axis_span: Span,
    },
    /// `let pat = value; body` (a block's statements, nested).
    Let {
        pattern: Pattern,
        value: Box<Expr>,
        body: Box<Expr>,
    },
    /// `if cond { then } else { otherwise }`: a select, both sides evaluated.
    If {
        cond: Box<Expr>,
        then: Box<Expr>,
        otherwise: Box<Expr>,
    },
    /// `(a, b)`; never a one-element tuple (that is a parenthesised expression).
    Tuple(Vec<Expr>),
    /// `{ re: x, im: y }`
    Record(Vec<(Ident, Expr)>),
    Unary {
        op: UnaryOp,
        op_span: Span,
        operand: Box<Expr>,
    },
    Binary {
        op: BinaryOp,
        op_span: Span,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// `exp(x)` or `x.exp()`; `func_span` is the function name.
    Call {
        func: Func,
        func_span: Span,
        args: Vec<Expr>,
    },
    /// `helper(a, b)`: a call of a function of the same `ein!` block (inlined by the checker)
    /// or of an `extern fn` it declares; `name` is neither a scalar function nor resolved yet.
    Apply {
        name: Ident,
        args: Vec<Expr>,
    },
    /// `x as f32`
    Cast {
        operand: Box<Expr>,
        to: Scalar,
        to_span: Span,
    },
}

impl ExprKind {
    /// The direct sub-expressions, in the order written.
    pub fn children(&self) -> Vec<&Expr> {
        match self {
            ExprKind::Literal(_) | ExprKind::Name(_) => Vec::new(),
            ExprKind::For { binders, body } | ExprKind::Reduce { binders, body, .. } => {
                binders.iter().filter_map(|binder| binder.size.as_deref()).chain([&**body]).collect()
            }
            ExprKind::Filter { binder, cond, body, .. } => {
                binder.size.as_deref().into_iter().chain([&**cond, &**body]).collect()
            }
            ExprKind::Fold { count, init, body, .. } => vec![&**count, &**init, &**body],
            ExprKind::Scan { count, init, body, .. } => {
                count.as_deref().into_iter().chain([&**init, &**body]).collect()
            }
            ExprKind::Accum { init, body, .. } => vec![&**init, &**body],
            ExprKind::Update { indices, value, .. } => indices.iter().chain([&**value]).collect(),
            ExprKind::Updates(items) => items.iter().collect(),
            ExprKind::When { cond, body } => vec![&**cond, &**body],
            ExprKind::Index { array, indices } => std::iter::once(&**array).chain(indices).collect(),
            ExprKind::Field { base, .. } => vec![&**base],
            ExprKind::Len { array } | ExprKind::Shape { array, .. } => vec![&**array],
            ExprKind::Let { value, body, .. } => vec![&**value, &**body],
            ExprKind::If { cond, then, otherwise } => vec![&**cond, &**then, &**otherwise],
            ExprKind::Tuple(elements) => elements.iter().collect(),
            ExprKind::Record(fields) => fields.iter().map(|(_, value)| value).collect(),
            ExprKind::Unary { operand, .. } | ExprKind::Cast { operand, .. } => vec![&**operand],
            ExprKind::Binary { lhs, rhs, .. } => vec![&**lhs, &**rhs],
            ExprKind::Call { args, .. } | ExprKind::Apply { args, .. } => args.iter().collect(),
        }
    }
}
