//! The fields of each IR node variant with named parts, one struct per variant
//! (`ExprKind::For(node::For { index, size, body })`), so a stage can hand one kind of node to
//! a function of its own. Typing rules and invariants are on [`super::ExprKind`].

use super::{BinaryOp, Bounds, Expr, Func, ReduceOp, ScalarType, SizeCheck, UnaryOp, UpdateOp, VarId};

/// The fields of [`super::ExprKind::For`].
#[derive(Clone, Debug)]
pub struct For {
    pub index: VarId,
    pub size: Box<Expr>,
    pub body: Box<Expr>,
}

/// The fields of [`super::ExprKind::Reduce`].
#[derive(Clone, Debug)]
pub struct Reduce {
    pub op: ReduceOp,
    pub index: VarId,
    pub size: Box<Expr>,
    pub body: Box<Expr>,
}

/// The fields of [`super::ExprKind::Fold`].
#[derive(Clone, Debug)]
pub struct Fold {
    pub index: VarId,
    pub count: Box<Expr>,
    pub acc: VarId,
    pub init: Box<Expr>,
    pub body: Box<Expr>,
}

/// The fields of [`super::ExprKind::Scan`]: a fold's (`count` is the scan's length).
pub type Scan = Fold;

/// The fields of [`super::ExprKind::Accum`] (see [`super::accum`] for the meaning).
#[derive(Clone, Debug)]
pub struct Accum {
    /// The user's name of the array being built, for run-time errors only (the body never
    /// reads it: the checker refuses that).
    pub target: String,
    /// The initial array: an array of scalars, of the node's type.
    pub init: Box<Expr>,
    /// The updates: a nest of `For`s (possibly none, with `Let`s and `Assert`s around and
    /// between them) whose innermost body is a flat tuple holding, for each update in order,
    /// `(condition: bool, index: i64 per axis of the target, value: element)`.
    pub updates: Box<Expr>,
    /// The operator of each update, in order (`ops.len()` groups in the tuple).
    pub ops: Vec<UpdateOp>,
    /// What the node's value is: the final array (every accum a user writes), or the
    /// history of its updates (only in derivatives; see [`AccumValue`]).
    pub value: AccumValue,
}

/// What an [`Accum`] node gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AccumValue {
    /// The target after every update: an array of the init's type.
    Final,
    /// The element each update finds at its position just before it applies, the updates
    /// applied serially in the row-major order of their loops (`Before`) or in the reverse
    /// of that order (`BeforeReversed`): an array of the target's element with one axis per
    /// loop of the update nest and a last axis of one entry per update of the tuple (an
    /// update whose condition fails records 0). Reverse and forward mode read it to
    /// differentiate an accum mixing `+=` and `*=` (note [mixed accums] in `ad/mod.rs`).
    Before,
    BeforeReversed,
}

/// The fields of [`super::ExprKind::Let`].
#[derive(Clone, Debug)]
pub struct Let {
    pub var: VarId,
    pub value: Box<Expr>,
    pub body: Box<Expr>,
}

/// The fields of [`super::ExprKind::Index`].
#[derive(Clone, Debug)]
pub struct Index {
    pub array: Box<Expr>,
    pub index: Box<Expr>,
    pub bounds: Bounds,
}

/// The fields of [`super::ExprKind::Select`].
#[derive(Clone, Debug)]
pub struct Select {
    pub cond: Box<Expr>,
    pub then: Box<Expr>,
    pub otherwise: Box<Expr>,
}

/// The fields of [`super::ExprKind::Project`].
#[derive(Clone, Debug)]
pub struct Project {
    pub tuple: Box<Expr>,
    pub field: usize,
}

/// The fields of [`super::ExprKind::Unary`].
#[derive(Clone, Debug)]
pub struct Unary {
    pub op: UnaryOp,
    pub operand: Box<Expr>,
}

/// The fields of [`super::ExprKind::Binary`].
#[derive(Clone, Debug)]
pub struct Binary {
    pub op: BinaryOp,
    pub lhs: Box<Expr>,
    pub rhs: Box<Expr>,
}

/// The fields of [`super::ExprKind::Call`].
#[derive(Clone, Debug)]
pub struct Call {
    pub func: Func,
    pub args: Vec<Expr>,
}

/// The fields of [`super::ExprKind::Extern`].
#[derive(Clone, Debug)]
pub struct Extern {
    /// The Rust function, named as the user declared it (`extern fn gamma(..)`), with the
    /// user's span, so generated code resolves it where the macro was called.
    pub name: proc_macro2::Ident,
    pub args: Vec<Expr>,
    /// `None` for an `extern fn` of the block, called by its name; `Some(k)` for a Rust
    /// function of the expression form, `Program::rust_calls[k]`.
    pub site: Option<usize>,
    /// The Rust function the declaration names as its derivative (`with d = gamma_d`):
    /// `gamma_d(args.., tangents..)`, one tangent per float argument, gives the tangent of the
    /// result (see `crate::ad`).
    pub derivative: Option<proc_macro2::Ident>,
}

/// The fields of [`super::ExprKind::Cast`].
#[derive(Clone, Debug)]
pub struct Cast {
    pub operand: Box<Expr>,
    pub to: ScalarType,
    /// The checker's conversion of a size or an index to `i64` (never a cast the user wrote,
    /// which is Rust's `as`): a value beyond `i64` saturates at its bounds instead of wrapping
    /// (a `u64` above `i64::MAX` is past every axis's end, not a negative position).
    pub saturating: bool,
}

/// The fields of [`super::ExprKind::Len`].
#[derive(Clone, Debug)]
pub struct Len {
    pub array: Box<Expr>,
    pub axis: usize,
}

/// The fields of [`super::ExprKind::Assert`].
#[derive(Clone, Debug)]
pub struct Assert {
    pub checks: Vec<SizeCheck>,
    pub body: Box<Expr>,
}
