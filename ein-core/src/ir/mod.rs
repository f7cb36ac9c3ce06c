//! The typed Phi IR: an owned expression tree in which every node carries its type and the
//! user's span, every index has an explicit size, and every array read says whether it was
//! proven in bounds. Produced by `check` + `sizes`, consumed by `passes`, `interp` and `codegen`.
//!
//! Invariants of a checked [`Program`] (the contract later stages rely on):
//! - every [`VarId`] in the tree is declared in [`Program::vars`] and bound by exactly one
//!   binder (a parameter, `Let`, `For`, `Reduce`, `Fold` or `Scan`) that encloses every use;
//! - every node's `ty` is the type given by the typing rule on its variant;
//! - size and count expressions (`For::size`, `Reduce::size`, `Fold::count`, a scan's count)
//!   have type `i64`; those of comprehensions, folds and scans mention no index variable or accumulator (regularity:
//!   arrays are rectangular); a reduction's range may (`sum k in 0..i + 1`), and so may the
//!   loops of an accum's update nest, which build no array (a history needs them fixed:
//!   [`accum::irregular_loop`]);
//! - an `Index` with [`Bounds::Proven`] is in range for every input that passes the program's
//!   `Assert`s.

mod print;
pub use print::expr_to_string;
pub mod accum;
pub mod node;
pub mod scan;
pub mod shape;
pub mod visit;

pub use crate::ops::{BinaryOp, Func, ReduceOp, Scalar, UnaryOp, UpdateOp};
use proc_macro2::Span;

/// A scalar type as the checker knows it: a concrete type, or the element type of a captured
/// Rust local in the expression form, which rustc resolves (see [`TypeParam`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ScalarType {
    Known(Scalar),
    /// The `n`-th entry of [`Program::type_params`].
    Param(usize),
}

impl ScalarType {
    pub const I64: ScalarType = ScalarType::Known(Scalar::I64);
    pub const USIZE: ScalarType = ScalarType::Known(Scalar::Usize);
    pub const BOOL: ScalarType = ScalarType::Known(Scalar::Bool);
}

/// A value's type. Arrays never nest: `[[f32]]` is `Array { elem: f32, rank: 2 }`; an array of
/// tuples is stored by generated code as a tuple of arrays (SoA).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    Scalar(ScalarType),
    /// `rank >= 1`; `elem` is a scalar or a tuple whose leaves are scalars.
    Array {
        elem: Box<Type>,
        rank: usize,
    },
    /// Tuples and named records. `names` is empty for tuples, else one name per field.
    Tuple {
        fields: Vec<Type>,
        names: Vec<String>,
    },
}

impl Type {
    pub const I64: Type = Type::Scalar(ScalarType::I64);
    pub const BOOL: Type = Type::Scalar(ScalarType::BOOL);

    pub fn scalar(s: Scalar) -> Type {
        Type::Scalar(ScalarType::Known(s))
    }

    pub fn array(elem: Type, rank: usize) -> Type {
        debug_assert!(rank >= 1 && !matches!(elem, Type::Array { .. }));
        Type::Array { elem: Box::new(elem), rank }
    }

    pub fn tuple(fields: Vec<Type>) -> Type {
        Type::Tuple { fields, names: Vec::new() }
    }

    /// Rank of an array type, 0 for anything else.
    pub fn rank(&self) -> usize {
        match self {
            Type::Array { rank, .. } => *rank,
            _ => 0,
        }
    }

    /// Whether the type is or contains an array.
    pub fn has_array(&self) -> bool {
        match self {
            Type::Array { .. } => true,
            Type::Tuple { fields, .. } => fields.iter().any(Type::has_array),
            Type::Scalar(_) => false,
        }
    }

    /// The type of `a[i]` for `a: self` (one axis removed), if `self` is an array.
    pub fn indexed(&self) -> Option<Type> {
        match self {
            Type::Array { elem, rank: 1 } => Some((**elem).clone()),
            Type::Array { elem, rank } => Some(Type::Array { elem: elem.clone(), rank: rank - 1 }),
            _ => None,
        }
    }

    /// `[self]`: the type of a comprehension whose body has type `self`.
    pub fn with_outer_axis(&self) -> Type {
        match self {
            Type::Array { elem, rank } => Type::Array { elem: elem.clone(), rank: rank + 1 },
            other => Type::array(other.clone(), 1),
        }
    }

    /// The type of a scan's value for a state of this type: the states stacked on a new first
    /// axis, one array ([`Type::with_outer_axis`]); for a tuple holding an array (reverse
    /// mode's tape of such a fold), which no array can hold, the tuple of each part's stack.
    pub fn stacked(&self) -> Type {
        match self {
            Type::Tuple { fields, names } if self.has_array() => {
                Type::Tuple { fields: fields.iter().map(Type::stacked).collect(), names: names.clone() }
            }
            other => other.with_outer_axis(),
        }
    }

    pub fn as_scalar(&self) -> Option<ScalarType> {
        match self {
            Type::Scalar(s) => Some(*s),
            _ => None,
        }
    }
}

/// Index into [`Program::vars`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VarId(pub u32);

/// What binds a variable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarKind {
    /// A function parameter or a captured Rust local.
    Param,
    Let,
    /// An index of `For`, `Reduce`, `Fold` or `Scan`; always `i64`.
    Index,
    /// The accumulator of a `Fold` or `Scan`.
    Accumulator,
}

#[derive(Clone, Debug)]
pub struct VarInfo {
    /// The user's name; generated code derives its identifiers from it.
    pub name: String,
    pub ty: Type,
    pub kind: VarKind,
    /// Where the variable is bound.
    pub span: Span,
}

/// A checked program: one `ein!` expression or one `fn` of the item form.
#[derive(Clone, Debug)]
pub struct Program {
    /// Parameters (item form) or captured locals (expression form), in order of appearance.
    pub params: Vec<VarId>,
    /// Every variable of the program; `VarId(k)` is `vars[k]`.
    pub vars: Vec<VarInfo>,
    /// Element types left to rustc (expression form only).
    pub type_params: Vec<TypeParam>,
    /// The calls of Rust functions that rustc types (expression form only); an
    /// [`ExprKind::Extern`] with `site: Some(k)` is `rust_calls[k]`.
    pub rust_calls: Vec<RustCall>,
    pub body: Expr,
}

/// An element type the macro cannot see, resolved by rustc: that of a captured local, or (in
/// the expression form) that of literals nothing in the block constrains but which reach the
/// result or a Rust function's argument, so that the Rust use site types them (`let f: u64 =
/// ein!(…)`), or the result of a Rust function.
#[derive(Clone, Debug)]
pub struct TypeParam {
    pub source: TypeSource,
    pub class: NumberClass,
    /// Whether a function of signed numbers (`signum`) is applied to it.
    pub signed: bool,
    /// The integer types it is cast to while its class is not a number's (a captured
    /// `Vec<bool>`'s `b[i] as i64`): each a `CastTo` bound, which `bool` meets too.
    pub casts: Vec<Scalar>,
}

/// Where rustc finds a [`TypeParam`]'s type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TypeSource {
    /// The element type of this captured parameter, through which generated code names it.
    Capture(VarId),
    /// Literals typed by the Rust use site (the result's type, a Rust function's parameter).
    UseSite,
    /// The result of the Rust function called at `Program::rust_calls[k]`.
    CallResult(usize),
}

impl TypeParam {
    /// The captured parameter whose element type this is, if any.
    pub fn witness(&self) -> Option<VarId> {
        match self.source {
            TypeSource::Capture(var) => Some(var),
            TypeSource::UseSite | TypeSource::CallResult(_) => None,
        }
    }
}

/// A call of a Rust function in the expression form: rustc types it, through a closure made
/// where the macro was called (`|x| name(x)`), which the generated code receives.
#[derive(Clone, Debug)]
pub struct RustCall {
    /// The function's name, with the user's span.
    pub name: proc_macro2::Ident,
    /// The arguments' scalar types (the closure's parameters) and the result's.
    pub params: Vec<ScalarType>,
    pub ret: ScalarType,
}

/// What the checker learned about a [`TypeParam`] from its uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NumberClass {
    /// Used only where any element type works (copied, compared for equality).
    Any,
    /// Used in arithmetic.
    Number,
    Float,
    Int,
    Bool,
}

#[derive(Clone, Debug)]
pub struct Expr {
    pub kind: ExprKind,
    pub ty: Type,
    pub span: Span,
    /// The node's position in the final program, given by [`number_nodes`] once the passes
    /// are done (until then [`NodeId::UNNUMBERED`]): how the analysis stage keys its facts.
    pub id: NodeId,
}

/// A node of the final IR: its position in a pre-order walk of the program (children in
/// evaluation order, a contraction's original loop nest included).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u32);

impl NodeId {
    /// The id of every node before [`number_nodes`] runs (passes build and copy nodes freely).
    pub const UNNUMBERED: NodeId = NodeId(u32::MAX);
}

/// Gives every node of `program` its [`NodeId`]; returns how many there are.
pub fn number_nodes(program: &mut Program) -> usize {
    fn number(expr: &mut Expr, next: &mut u32) {
        expr.id = NodeId(*next);
        *next += 1;
        expr.for_each_child_mut(|child| number(child, next));
    }
    let mut next = 0;
    number(&mut program.body, &mut next);
    next as usize
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Literal {
    /// An integer of the node's (integer or type-parameter) type.
    Int(i64),
    /// A float of the node's (float or type-parameter) type: the source text rounded once to
    /// `f64`, and once to `f32` (not through the `f64`, which could round it twice), the value
    /// an `f32` node has.
    Float(f64, f32),
    Bool(bool),
}

impl Literal {
    /// A float literal of a value computed by the compiler (exact in both types, or rounded
    /// from the `f64` as arithmetic on it would be).
    pub fn float(value: f64) -> Literal {
        Literal::Float(value, value as f32)
    }
}

/// Whether an array read is known to be in range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bounds {
    /// The index is a plain index variable whose range equals the axis (by construction or by
    /// a size assertion checked earlier), or `i + c` with `i` in `0..len - d`, d ≥ c ≥ 0, or
    /// in `0..j + e` for an enclosing index `j` of which that holds with `c + e - 1` (a
    /// triangle, `j` in `0..i` under `i` in `0..len`): read without any check.
    Proven,
    /// Clamp the index into `0..len`; reading from an empty axis is a run-time error.
    Clamped,
}

/// One equality between two sizes, checked at run time before the loops it guards.
#[derive(Clone, Debug)]
pub struct SizeCheck {
    pub left: Expr,
    pub right: Expr,
    /// What the two sizes are, for the error: e.g. "axis 1 of `a`".
    pub left_what: String,
    pub right_what: String,
    /// The index whose size they both define, e.g. "k".
    pub index_name: String,
    /// The user's token that made the check necessary (a use of the second array).
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum ExprKind {
    /// Type: the node's scalar type.
    Literal(Literal),
    /// Type: the variable's.
    Var(VarId),
    /// `for index in 0..size { body }`. Type: `[body.ty]`.
    For(node::For),
    /// Type: body's (`usize` for argmax/argmin; `bool` for all/any).
    Reduce(node::Reduce),
    /// `for index in 0..size where c { e }`: `body` is the pair `(c, e)` (the condition and the
    /// element, both evaluated at every index, as both sides of a select); the value is the
    /// rank-1 array of the `e`s whose `c` holds, in index order, its length known only at run
    /// time. Type: `[e.ty]`, `e` a scalar or a tuple of scalars. Never inside a loop (the
    /// checker allows it only where no rectangular array depends on its length).
    Filter(node::For),
    /// `acc = init; for index in 0..count { acc = body }; acc`. Type: init's = body's.
    Fold(node::Fold),
    /// `acc = init; for index in 0..count { acc = body; out[index] = acc }; out`: the state
    /// after every step (an inclusive scan). Type: `[init.ty]` (init's = body's, a scalar or a
    /// tuple of scalars; or, made only by reverse mode to save a fold's states, an array of
    /// scalars that every step keeps the shape of, the states stacked on a new first axis,
    /// checked at run time). When the step is associative
    /// ([`scan::associative_step`]) the states are grouped in blocks; see [`scan`].
    Scan(node::Scan),
    /// `accum h = init { updates }`: a copy of `init` with every update of the nest applied
    /// in row-major order of its loops (grouped as [`accum`] describes). Type: init's, an
    /// array of scalars.
    Accum(node::Accum),
    /// Type: body's.
    Let(node::Let),
    /// `array[index]` on the outermost axis; `index` has an integer type. Type: `array.ty`
    /// with one axis removed.
    Index(node::Index),
    /// Both sides evaluated, one chosen. Type: then's = otherwise's.
    Select(node::Select),
    Tuple(Vec<Expr>),
    /// Field `field` of a tuple or record (or of each element of an array of them).
    Project(node::Project),
    Unary(node::Unary),
    /// Both operands have the same type (comparison/logical results are `bool`).
    Binary(node::Binary),
    Call(node::Call),
    /// A call of a Rust function the block declared with `extern fn`, once per evaluation:
    /// scalar arguments of the declared parameter types. Type: the declared (scalar) result.
    /// The user promises it is pure, cannot fail and is callable from any thread, so passes
    /// treat it as an expensive pure function (it may be hoisted, shared or run fewer times).
    Extern(node::Extern),
    /// Numeric/bool conversion with Rust `as` semantics.
    Cast(node::Cast),
    /// Length of axis `axis` of an array, as `i64`.
    Len(node::Len),
    /// Check every size equality, then evaluate `body`. Type: body's.
    Assert(node::Assert),
    /// A sum of products of two or three arrays (an einsum), made by the `contract` pass and
    /// run on a tuned GEMM; see [`Contraction`] for its meaning, typing rule and invariants.
    /// Type: an array of the element type with one axis per output label.
    Contract(Box<Contraction>),
}

/// `out[o…] = scale * Σ k… a[…] * b[…] [* c[…]]`: the einsum that the `contract` pass recognises
/// in `for o… { scale * sum k… { a[…] * b[…] } }` (scale optional, on either side; two or three
/// factors).
///
/// Meaning: for every value of the output labels (row-major, `labels[..outputs]`), the sum
/// over the summed labels (`labels[outputs..]`, outermost sum first, each from 0 to its size)
/// of the product, left to right, of `operand[axes of operand]`, then multiplied by `scale`.
/// Evaluated as written this is exactly the loop nest it came from; generated code may sum in
/// another order, and regroup a product of three (that is the only difference: see the
/// `contract` pass).
///
/// Typing rule: `elem` is a float type (`f32`, `f64`) or a type parameter; every operand's
/// `array` is an array of `elem`; `scale` has type `elem`; the node has type `[elem]` of
/// rank `outputs`, which is at least 1 (a whole-array dot product stays a reduction).
///
/// Invariants (checked by the validator):
/// - every label size has type `i64` and mentions no index (regularity); summed sizes cannot
///   fail (array lengths or non-negative literals), since an empty output skips them;
/// - an operand's `axes` has one label position per axis of its array, no label twice;
/// - there are two or three operands; every output label occurs in at least one of them and
///   every summed label in at least two;
/// - axis `d` of an operand is at least as long as label `axes[d]` (the reads it came from
///   were proven in bounds), so generated code reads it without checks;
/// - the operands and the scale mention no label (labels are not variables: nothing can
///   mention them) and cannot fail: they are evaluated once, after the sizes, in order;
/// - `loops` is the loop nest the contraction was made from, unchanged (it binds the index
///   variables the labels came from): an equivalent way to compute the node, which generated
///   code runs instead of the GEMM for small sizes (and for a matrix–vector product with
///   contiguous rows). It has the node's type, and is evaluated
///   instead of the other children, never as well.
#[derive(Clone, Debug)]
pub struct Contraction {
    /// Output labels first, in output-axis order, then summed labels, outermost sum first.
    pub labels: Vec<Label>,
    /// How many of `labels` are output axes.
    pub outputs: usize,
    /// The factors, in the order written: two, or three (a chain, whose pairing order the
    /// runtime picks from the sizes).
    pub operands: Vec<Operand>,
    pub scale: Option<Scale>,
    /// The element type (`elem` in the typing rule).
    pub elem: ScalarType,
    /// The original loop nest (see the invariants).
    pub loops: Box<Expr>,
}

/// One index of a [`Contraction`].
#[derive(Clone, Debug)]
pub struct Label {
    /// The user's name of the index it came from (for dumps and error messages only).
    pub name: String,
    /// Its range `0..size`, an `i64` size expression.
    pub size: Expr,
}

/// One factor of a [`Contraction`]: an array expression and the label of each of its axes.
#[derive(Clone, Debug)]
pub struct Operand {
    /// An array-typed expression, e.g. a parameter `a` or a sub-array `a[p]`.
    pub array: Expr,
    /// `axes[d]` is the position in [`Contraction::labels`] of the label indexing axis `d`.
    pub axes: Vec<usize>,
}

/// A scalar factor of a [`Contraction`] and which side of the sum it was written on (`scale *
/// sum …` or `sum … * scale`; float multiplication is commutative, the side is kept for dumps).
#[derive(Clone, Debug)]
pub struct Scale {
    pub factor: Expr,
    pub side: Side,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Left,
    Right,
}

impl Contraction {
    /// The output labels.
    pub fn output_labels(&self) -> &[Label] {
        &self.labels[..self.outputs]
    }

    /// The summed labels, outermost first.
    pub fn summed_labels(&self) -> &[Label] {
        &self.labels[self.outputs..]
    }

    /// The position of the matrix among the operands of a matrix–vector product
    /// `for i { sum j { a[i, j] * x[j] } }` (either factor order, scale or not), if this is one.
    pub fn matvec_matrix(&self) -> Option<usize> {
        if self.outputs != 1 || self.labels.len() != 2 {
            return None;
        }
        match &self.operands[..] {
            [first, second] => [(0, first, second), (1, second, first)]
                .into_iter()
                .find(|(_, matrix, vector)| matrix.axes == [0, 1] && vector.axes == [1])
                .map(|(position, _, _)| position),
            _ => None,
        }
    }

    /// Everything but the children (label count, outputs, operand axes, scale side) as text:
    /// two contractions are equal exactly when their keys and their children are. Label names
    /// are left out (they are only for display, like a binder's name).
    pub fn structure_key(&self) -> String {
        let side = self.scale.as_ref().map(|scale| scale.side);
        format!(
            "contract{}/{}{:?}{side:?}{:?}",
            self.labels.len(),
            self.outputs,
            self.operands.iter().map(|operand| &operand.axes).collect::<Vec<_>>(),
            self.elem
        )
    }

    /// The children: label sizes, scale, operands in evaluation order, then the original
    /// loop nest (the alternative to all of them).
    pub fn children(&self) -> impl Iterator<Item = &Expr> {
        let sizes = self.labels.iter().map(|label| &label.size);
        let operands = self.operands.iter().map(|operand| &operand.array);
        sizes.chain(self.scale.as_ref().map(|scale| &scale.factor)).chain(operands).chain([&*self.loops])
    }

    /// [`Contraction::children`], mutably.
    pub fn children_mut(&mut self) -> impl Iterator<Item = &mut Expr> {
        let sizes = self.labels.iter_mut().map(|label| &mut label.size);
        let operands = self.operands.iter_mut().map(|operand| &mut operand.array);
        sizes.chain(self.scale.as_mut().map(|scale| &mut scale.factor)).chain(operands).chain([&mut *self.loops])
    }
}

impl Expr {
    pub fn new(kind: ExprKind, ty: Type, span: Span) -> Expr {
        Expr { kind, ty, span, id: NodeId::UNNUMBERED }
    }

    /// A chain of reads `base[p_0]…[p_k]`: the base and the positions, outermost axis first,
    /// each with its bounds (`self` itself as the base, and none, if it is not a read).
    pub fn read_chain(&self) -> (&Expr, Vec<(&Expr, Bounds)>) {
        let mut positions = Vec::new();
        let mut base = self;
        while let ExprKind::Index(node::Index { array, index, bounds }) = &base.kind {
            positions.push((&**index, *bounds));
            base = array;
        }
        positions.reverse();
        (base, positions)
    }

    /// The read `base[p_0]…[p_k]` (each position with its bounds), typed from `base`'s type.
    pub fn read_of(base: Expr, positions: impl IntoIterator<Item = (Expr, Bounds)>) -> Expr {
        positions.into_iter().fold(base, |array, (position, bounds)| {
            let (ty, span) = (array.ty.indexed().unwrap_or_else(|| array.ty.clone()), array.span);
            let kind = ExprKind::Index(node::Index { array: Box::new(array), index: Box::new(position), bounds });
            Expr::new(kind, ty, span)
        })
    }

    /// Moves the node out, leaving a cheap placeholder (a literal) to be overwritten: for
    /// rewrites that take a subtree by value and put the result back.
    pub fn take(&mut self) -> Expr {
        std::mem::replace(self, shape::int(0, self.span))
    }

    /// Replaces each direct child by `rewrite(child)`, in evaluation order.
    pub fn rewrite_children(&mut self, mut rewrite: impl FnMut(Expr) -> Expr) {
        self.for_each_child_mut(|child| *child = rewrite(child.take()));
    }

    /// The variables this node binds (an index, a `let`'s variable, a fold's or scan's index
    /// and accumulator). They are in scope in the node's body, its last child, and nowhere else.
    pub fn binders(&self) -> impl Iterator<Item = VarId> + Clone {
        let (first, second) = match &self.kind {
            ExprKind::For(node::For { index, .. })
            | ExprKind::Filter(node::For { index, .. })
            | ExprKind::Reduce(node::Reduce { index, .. }) => (Some(*index), None),
            ExprKind::Let(node::Let { var, .. }) => (Some(*var), None),
            ExprKind::Fold(node::Fold { index, acc, .. }) | ExprKind::Scan(node::Scan { index, acc, .. }) => {
                (Some(*index), Some(*acc))
            }
            _ => (None, None),
        };
        first.into_iter().chain(second)
    }

    /// [`Expr::binders`], mutably (for renaming).
    pub fn binders_mut(&mut self) -> impl Iterator<Item = &mut VarId> {
        let (first, second) = match &mut self.kind {
            ExprKind::For(node::For { index, .. })
            | ExprKind::Filter(node::For { index, .. })
            | ExprKind::Reduce(node::Reduce { index, .. }) => (Some(index), None),
            ExprKind::Let(node::Let { var, .. }) => (Some(var), None),
            ExprKind::Fold(node::Fold { index, acc, .. }) | ExprKind::Scan(node::Scan { index, acc, .. }) => {
                (Some(index), Some(acc))
            }
            _ => (None, None),
        };
        first.into_iter().chain(second)
    }

    /// Calls `f` on each direct child, in evaluation order.
    pub fn for_each_child<'a>(&'a self, mut f: impl FnMut(&'a Expr)) {
        match &self.kind {
            ExprKind::Literal(_) | ExprKind::Var(_) => {}
            ExprKind::For(node::For { size, body, .. })
            | ExprKind::Filter(node::For { size, body, .. })
            | ExprKind::Reduce(node::Reduce { size, body, .. }) => {
                f(size);
                f(body);
            }
            ExprKind::Fold(node::Fold { count, init, body, .. })
            | ExprKind::Scan(node::Scan { count, init, body, .. }) => {
                f(count);
                f(init);
                f(body);
            }
            ExprKind::Let(node::Let { value, body, .. }) => {
                f(value);
                f(body);
            }
            ExprKind::Accum(node::Accum { init, updates, .. }) => {
                f(init);
                f(updates);
            }
            ExprKind::Index(node::Index { array, index, .. }) => {
                f(array);
                f(index);
            }
            ExprKind::Select(node::Select { cond, then, otherwise }) => {
                f(cond);
                f(then);
                f(otherwise);
            }
            ExprKind::Tuple(items)
            | ExprKind::Call(node::Call { args: items, .. })
            | ExprKind::Extern(node::Extern { args: items, .. }) => items.iter().for_each(f),
            ExprKind::Project(node::Project { tuple: operand, .. })
            | ExprKind::Unary(node::Unary { operand, .. })
            | ExprKind::Cast(node::Cast { operand, .. })
            | ExprKind::Len(node::Len { array: operand, .. }) => f(operand),
            ExprKind::Binary(node::Binary { lhs, rhs, .. }) => {
                f(lhs);
                f(rhs);
            }
            ExprKind::Assert(node::Assert { checks, body }) => {
                for check in checks {
                    f(&check.left);
                    f(&check.right);
                }
                f(body);
            }
            ExprKind::Contract(contraction) => contraction.children().for_each(f),
        }
    }

    /// Calls `f` on each direct child, mutably, in evaluation order.
    pub fn for_each_child_mut(&mut self, mut f: impl FnMut(&mut Expr)) {
        match &mut self.kind {
            ExprKind::Literal(_) | ExprKind::Var(_) => {}
            ExprKind::For(node::For { size, body, .. })
            | ExprKind::Filter(node::For { size, body, .. })
            | ExprKind::Reduce(node::Reduce { size, body, .. }) => {
                f(size);
                f(body);
            }
            ExprKind::Fold(node::Fold { count, init, body, .. })
            | ExprKind::Scan(node::Scan { count, init, body, .. }) => {
                f(count);
                f(init);
                f(body);
            }
            ExprKind::Let(node::Let { value, body, .. }) => {
                f(value);
                f(body);
            }
            ExprKind::Accum(node::Accum { init, updates, .. }) => {
                f(init);
                f(updates);
            }
            ExprKind::Index(node::Index { array, index, .. }) => {
                f(array);
                f(index);
            }
            ExprKind::Select(node::Select { cond, then, otherwise }) => {
                f(cond);
                f(then);
                f(otherwise);
            }
            ExprKind::Tuple(items)
            | ExprKind::Call(node::Call { args: items, .. })
            | ExprKind::Extern(node::Extern { args: items, .. }) => items.iter_mut().for_each(f),
            ExprKind::Project(node::Project { tuple: operand, .. })
            | ExprKind::Unary(node::Unary { operand, .. })
            | ExprKind::Cast(node::Cast { operand, .. })
            | ExprKind::Len(node::Len { array: operand, .. }) => f(operand),
            ExprKind::Binary(node::Binary { lhs, rhs, .. }) => {
                f(lhs);
                f(rhs);
            }
            ExprKind::Assert(node::Assert { checks, body }) => {
                for check in checks {
                    f(&mut check.left);
                    f(&mut check.right);
                }
                f(body);
            }
            ExprKind::Contract(contraction) => contraction.children_mut().for_each(f),
        }
    }
}

/// Names of variables the compiler invents start with this; users never see them in errors.
pub const SYNTHETIC_PREFIX: &str = "__ein_";

/// A name for a variable the compiler invents after `name` (a user's or an invented one, whose
/// prefix is not repeated: `__ein___ein_acc` would break Rust's snake-case lint), plus `suffix`.
pub fn synthetic_name(name: &str, suffix: &str) -> String {
    format!("{SYNTHETIC_PREFIX}{}{suffix}", name.trim_start_matches(SYNTHETIC_PREFIX))
}

impl VarInfo {
    /// Whether the compiler invented this variable (a lifted value, a tuple being destructured).
    pub fn is_synthetic(&self) -> bool {
        self.name.starts_with(SYNTHETIC_PREFIX)
    }
}

impl Program {
    pub fn var(&self, id: VarId) -> &VarInfo {
        &self.vars[id.0 as usize]
    }

    /// Declares a new variable (bound by a node the caller is building).
    pub fn fresh_var(&mut self, info: VarInfo) -> VarId {
        declare(&mut self.vars, info)
    }
}

/// Declares a new variable at the end of `vars` (a program's, or a stage's under
/// construction) and returns its id.
pub fn declare(vars: &mut Vec<VarInfo>, info: VarInfo) -> VarId {
    vars.push(info);
    VarId(vars.len() as u32 - 1)
}

/// How a checked program is exposed to Rust.
#[derive(Clone, Debug)]
pub enum Form {
    /// `ein!(expr)`: a block expression evaluating to the result; [`Program::params`] are
    /// captured locals, named as in the user's code.
    Expression,
    /// `ein! { fn .. }`: a function taking the parameters in order (arrays by reference to any
    /// storage implementing `AsView`, scalars by value) and returning the result.
    Function(Box<FunctionHeader>),
}

/// The parts of an item-form function that pass straight through to Rust.
#[derive(Clone, Debug)]
pub struct FunctionHeader {
    pub attrs: Vec<syn::Attribute>,
    pub vis: syn::Visibility,
    pub name: proc_macro2::Ident,
    /// `#[into(name)]`: the name of the function that writes the result into `out`.
    pub into: Option<proc_macro2::Ident>,
    /// `#[jvp(name)]`: the name of the forward-mode derivative (see [`crate::ad`]).
    pub jvp: Option<proc_macro2::Ident>,
    /// `#[vjp(name)]` or `#[grad(name, wrt(..))]`: the reverse-mode derivative.
    pub reverse: Option<Companion>,
    /// Span of the declared return type, for errors about the result.
    pub ret_span: Span,
}

impl FunctionHeader {
    /// The function's attributes that every function generated beside it carries (the
    /// column-major copy, the derivative companions): its `cfg`s (a companion of a function
    /// compiled out may call what is compiled out with it) and its lint levels (its parameter
    /// names are the companion's too).
    pub fn carried_attrs(&self) -> Vec<syn::Attribute> {
        let carried = ["cfg", "cfg_attr", "allow", "warn", "deny", "forbid", "expect"];
        self.attrs.iter().filter(|attr| carried.iter().any(|name| attr.path().is_ident(name))).cloned().collect()
    }
}

/// A reverse-mode companion a function asks for.
#[derive(Clone, Debug)]
pub struct Companion {
    pub kind: CompanionKind,
    pub name: proc_macro2::Ident,
    /// `wrt(a, b)`: the parameters to differentiate with respect to (empty: every one with a
    /// float part).
    pub wrt: Vec<proc_macro2::Ident>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompanionKind {
    /// `#[vjp(name)]`: takes the result's cotangent.
    Vjp,
    /// `#[grad(name)]`: a float scalar result, cotangent 1.
    Grad,
}

/// One checked unit of an `ein!` invocation, ready for the passes and code generation.
#[derive(Clone, Debug)]
pub struct Unit {
    pub program: Program,
    pub form: Form,
}

impl Unit {
    /// A name for `EIN_DUMP` output.
    pub fn name_for_dump(&self) -> String {
        match &self.form {
            Form::Expression => "ein!(..)".to_string(),
            Form::Function(header) => format!("fn {}", header.name),
        }
    }
}
