//! IR building blocks shared by the derivative transformations: typed node builders, blocks
//! of `let`s and checks, the parts of tuple types, and the final re-proof of reads.

use crate::check::sizes;
use crate::ir::node;
use crate::ir::{BinaryOp, Bounds, Expr, ExprKind, Literal, Program, ScalarType, SizeCheck, Type, UnaryOp, VarId};
use crate::ops::Scalar;
use proc_macro2::Span;

/// What an expression needs evaluated before it, in order: `let`s and size checks.
pub(super) type Block = Vec<Step>;

#[derive(Clone)]
pub(super) enum Step {
    Let(VarId, Expr),
    Assert(Vec<SizeCheck>),
}

/// `steps; body` as nested `let`s and size checks; `let x = e; x` is `e` (what the
/// contraction pass looks for is the product itself at the end of a sum).
pub(super) fn wrap(mut block: Block, mut body: Expr) -> Expr {
    if let (ExprKind::Var(result), Some(Step::Let(last, _))) = (&body.kind, block.last()) {
        if result == last {
            if let Some(Step::Let(_, value)) = block.pop() {
                body = value;
            }
        }
    }
    block.into_iter().rev().fold(body, |body, step| {
        let (ty, span) = (body.ty.clone(), body.span);
        let kind = match step {
            Step::Let(var, value) => ExprKind::Let(node::Let { var, value: Box::new(value), body: Box::new(body) }),
            Step::Assert(checks) => ExprKind::Assert(node::Assert { checks, body: Box::new(body) }),
        };
        Expr::new(kind, ty, span)
    })
}

/// Replaces each `let r = a[i]` that names a sub-array of a variable at atom positions, or an
/// atom plus or minus a literal (a view: nothing to compute) with the read itself where `r`
/// is used, so that an element read `a[i][j]` shows whole (the contraction pass matches whole
/// reads; code generation sees `a[p - 1][j]` read along `j`).
pub(super) fn inline_views(expr: &mut Expr) {
    expr.for_each_child_mut(inline_views);
    let ExprKind::Let(node::Let { var, value, body }) = &mut expr.kind else { return };
    let (base, positions) = value.read_chain();
    let atoms = positions.iter().all(|(position, _)| {
        matches!(position.kind, ExprKind::Literal(_)) || crate::ir::shape::var_plus_literal(position).is_some()
    });
    if value.ty.rank() == 0 || positions.is_empty() || !matches!(base.kind, ExprKind::Var(_)) || !atoms {
        return;
    }
    let (var, value) = (*var, (**value).clone());
    let mut body =
        std::mem::replace(&mut **body, Expr::new(ExprKind::Tuple(Vec::new()), Type::tuple(Vec::new()), value.span));
    crate::ir::visit::substitute(&mut body, var, &value);
    simplify_all_lengths(&mut body);
    *expr = body;
}

/// `len(a[i], 0)` is `len(a, 1)`: no size may mention an index.
fn simplify_all_lengths(expr: &mut Expr) {
    if let ExprKind::Len(_) = expr.kind {
        let taken = std::mem::replace(expr, int(0, expr.span));
        *expr = crate::ir::shape::simplify_lengths(taken);
        return;
    }
    expr.for_each_child_mut(simplify_all_lengths);
}

/// Marks every read that the checker's prover can prove in bounds, and only those: tangent
/// reads and the loops that pair and unpair values are built clamped, and the primal's own
/// reads now sit in a different nest.
pub(super) fn prove_reads(program: &mut Program) {
    fn forget(expr: &mut Expr) {
        if let ExprKind::Index(node::Index { bounds, .. }) = &mut expr.kind {
            *bounds = Bounds::Clamped;
        }
        expr.for_each_child_mut(forget);
    }
    fn collect(expr: &Expr, lets: &mut sizes::LetValues) {
        if let ExprKind::Let(node::Let { var, value, .. }) = &expr.kind {
            lets.insert(*var, (**value).clone());
        }
        expr.for_each_child(|child| collect(child, lets));
    }
    forget(&mut program.body);
    let mut lets = sizes::LetValues::new();
    collect(&program.body, &mut lets);
    sizes::prove_bounds(program, &lets);
}

/// Whether a value of this type can have a nonzero tangent.
pub(super) fn has_float(ty: &Type) -> bool {
    match ty {
        Type::Scalar(ScalarType::Known(scalar)) => scalar.is_float(),
        // Type parameters exist only in the expression form, which has no companions.
        Type::Scalar(ScalarType::Param(_)) => false,
        Type::Array { elem, .. } => has_float(elem),
        Type::Tuple { fields, .. } => fields.iter().any(has_float),
    }
}

/// The parts of a type in order: its scalars and arrays, through tuples.
pub(super) fn part_types(ty: &Type) -> Vec<Type> {
    match ty {
        Type::Tuple { fields, .. } => fields.iter().flat_map(part_types).collect(),
        other => vec![other.clone()],
    }
}

/// The parts of `value` (an atom of type `ty`), as projections.
pub(super) fn parts(value: Expr, ty: &Type) -> Vec<Expr> {
    if let ExprKind::Tuple(items) = value.kind {
        // Every item is used once: no evaluation is dropped.
        return items
            .into_iter()
            .flat_map(|item| {
                let ty = item.ty.clone();
                parts(item, &ty)
            })
            .collect();
    }
    match ty {
        Type::Tuple { fields, .. } => {
            (0..fields.len()).flat_map(|field| parts(project(value.clone(), field), &fields[field])).collect()
        }
        _ => vec![value],
    }
}

/// A value of type `ty` from its parts, in order.
pub(super) fn rebuild(ty: &Type, parts: &mut impl Iterator<Item = Expr>) -> Expr {
    match ty {
        Type::Tuple { fields, .. } => {
            let items = fields.iter().map(|field| rebuild(field, parts)).collect();
            tuple(items, ty.clone())
        }
        _ => parts.next().unwrap_or_else(|| int(0, Span::call_site())),
    }
}

// ---------------------------------------------------------------------------------------------
// Builders (typed by their typing rules)

pub(super) fn var(id: VarId, ty: &Type, span: Span) -> Expr {
    Expr::new(ExprKind::Var(id), ty.clone(), span)
}

pub(super) fn int(value: i64, span: Span) -> Expr {
    crate::ir::shape::int(value, span)
}

/// The float `value` at the scalar type of `like`.
pub(super) fn float_like(value: f64, like: &Expr) -> Expr {
    Expr::new(ExprKind::Literal(Literal::float(value)), like.ty.clone(), like.span)
}

pub(super) fn zero_scalar(scalar: ScalarType, span: Span) -> Expr {
    let literal = match scalar {
        ScalarType::Known(Scalar::Bool) => Literal::Bool(false),
        ScalarType::Known(known) if known.is_float() => Literal::float(0.0),
        _ => Literal::Int(0),
    };
    Expr::new(ExprKind::Literal(literal), Type::Scalar(scalar), span)
}

/// A scalar zero of float type `ty`.
pub(super) fn zero_of(ty: &Type, span: Span) -> Expr {
    Expr::new(ExprKind::Literal(Literal::float(0.0)), ty.clone(), span)
}

pub(super) fn one_of(ty: &Type, span: Span) -> Expr {
    Expr::new(ExprKind::Literal(Literal::float(1.0)), ty.clone(), span)
}

pub(super) fn len(array: Expr, axis: usize) -> Expr {
    crate::ir::shape::length(array, axis)
}

pub(super) fn read(array: Expr, index: Expr, bounds: Bounds) -> Expr {
    Expr::read_of(array, [(index, bounds)])
}

pub(super) fn for_loop(index: VarId, size: Expr, body: Expr) -> Expr {
    let (ty, span) = (body.ty.with_outer_axis(), size.span);
    Expr::new(ExprKind::For(node::For { index, size: Box::new(size), body: Box::new(body) }), ty, span)
}

pub(super) fn tuple(items: Vec<Expr>, ty: Type) -> Expr {
    let span = items.first().map_or(Span::call_site(), |item| item.span);
    Expr::new(ExprKind::Tuple(items), ty, span)
}

/// Field `field` of a tuple.
pub(super) fn project(value: Expr, field: usize) -> Expr {
    let ty = match &value.ty {
        Type::Tuple { fields, .. } => fields.get(field).cloned(),
        _ => None,
    }
    .unwrap_or_else(|| value.ty.clone());
    let span = value.span;
    Expr::new(ExprKind::Project(node::Project { tuple: Box::new(value), field }), ty, span)
}

pub(super) fn select(cond: Expr, then: Expr, otherwise: Expr) -> Expr {
    let (ty, span) = (then.ty.clone(), then.span);
    let kind =
        ExprKind::Select(node::Select { cond: Box::new(cond), then: Box::new(then), otherwise: Box::new(otherwise) });
    Expr::new(kind, ty, span)
}

pub(super) fn binary(op: BinaryOp, lhs: Expr, rhs: Expr) -> Expr {
    let ty = if op.is_comparison() || matches!(op, BinaryOp::And | BinaryOp::Or) { Type::BOOL } else { lhs.ty.clone() };
    let span = lhs.span;
    Expr::new(ExprKind::Binary(node::Binary { op, lhs: Box::new(lhs), rhs: Box::new(rhs) }), ty, span)
}

pub(super) fn negate(operand: Expr) -> Expr {
    let (ty, span) = (operand.ty.clone(), operand.span);
    Expr::new(ExprKind::Unary(node::Unary { op: UnaryOp::Neg, operand: Box::new(operand) }), ty, span)
}

pub(super) fn call(func: crate::ops::Func, args: Vec<Expr>) -> Expr {
    let (ty, span) = (args[0].ty.clone(), args[0].span);
    let ty = func.output().of(&ty);
    Expr::new(ExprKind::Call(node::Call { func, args }), ty, span)
}

pub(super) fn cast(operand: Expr, to: ScalarType) -> Expr {
    let span = operand.span;
    Expr::new(ExprKind::Cast(node::Cast { operand: Box::new(operand), to, saturating: false }), Type::Scalar(to), span)
}

/// The sum of two tangents, either of which may be zero.
pub(super) fn add(left: Option<Expr>, right: Option<Expr>) -> Option<Expr> {
    match (left, right) {
        (Some(left), Some(right)) => Some(binary(BinaryOp::Add, left, right)),
        (left, right) => left.or(right),
    }
}

/// A fresh index variable (`i64`).
pub(super) fn fresh_index(vars: &mut Vec<crate::ir::VarInfo>, span: Span) -> VarId {
    let name = format!("{}j{}", crate::ir::SYNTHETIC_PREFIX, vars.len());
    crate::ir::declare(vars, crate::ir::VarInfo { name, ty: Type::I64, kind: crate::ir::VarKind::Index, span })
}

/// `value` (a scalar) where `cond` holds, else 0: a sum over `0..(cond ? 1 : 0)`, since both
/// sides of a select are evaluated and `value` may read outside an array (an empty one) where
/// `cond` fails.
pub(super) fn only_where(cond: Expr, value: Expr, vars: &mut Vec<crate::ir::VarInfo>) -> Expr {
    let (ty, span) = (value.ty.clone(), value.span);
    let kind = ExprKind::Reduce(node::Reduce {
        op: crate::ir::ReduceOp::Sum,
        index: fresh_index(vars, span),
        size: Box::new(select(cond, int(1, span), int(0, span))),
        body: Box::new(value),
    });
    Expr::new(kind, ty, span)
}

/// `for p… { element(p…) }` over the positions of `array`: `element` is given the positions,
/// to read `array` and arrays of its shape at ([`read_at`]).
pub(super) fn map_elements(
    array: &Expr,
    vars: &mut Vec<crate::ir::VarInfo>,
    element: impl FnOnce(&[Expr]) -> Expr,
) -> Expr {
    let span = array.span;
    let indices: Vec<VarId> = (0..array.ty.rank()).map(|_| fresh_index(vars, span)).collect();
    let positions: Vec<Expr> = indices.iter().map(|index| var(*index, &Type::I64, span)).collect();
    let mut body = element(&positions);
    for (axis, index) in indices.iter().enumerate().rev() {
        // `len(x[i], 0)` is `len(x, 1)`: a comprehension's size names no index.
        body = for_loop(*index, crate::ir::shape::simplify_lengths(len(array.clone(), axis)), body);
    }
    body
}

/// `array[p…]`, clamped (reads are proved in bounds at the end).
pub(super) fn read_at(array: &Expr, positions: &[Expr]) -> Expr {
    Expr::read_of(array.clone(), positions.iter().map(|position| (position.clone(), Bounds::Clamped)))
}

/// Of the factors of a product, the product of all but `factor` (a scalar atom), given the
/// number of factors that are zero and the product of the others (`nonzero`): `nonzero /
/// factor` when none is zero; with one, `nonzero` for the zero factor and 0 for the others;
/// with more, 0. So a zero factor gets its exact partial derivative, where `product / factor`
/// would give NaN.
pub(super) fn product_of_others(factor: Expr, zeros: Expr, nonzero: Expr) -> Expr {
    let span = factor.span;
    let zero = zero_of(&factor.ty, span);
    let this_zero = binary(
        BinaryOp::And,
        binary(BinaryOp::Eq, zeros.clone(), int(1, span)),
        binary(BinaryOp::Eq, factor.clone(), zero.clone()),
    );
    select(
        binary(BinaryOp::Eq, zeros, int(0, span)),
        binary(BinaryOp::Div, nonzero.clone(), factor),
        select(this_zero, nonzero, zero),
    )
}

/// For an accum whose updates are all `*=` (its `init` an atom): an accum counting, per
/// element, the factors that are zero (`i64`: `init`'s element and each update's value), and
/// one multiplying the nonzero ones, over copies of its updates. With them each factor's
/// partial derivative is [`product_of_others`] at its element.
pub(super) fn factor_accums(accum: &node::Accum, init: &Expr, vars: &mut Vec<crate::ir::VarInfo>) -> (Expr, Expr) {
    let span = init.span;
    let (elem, rank) = match &init.ty {
        Type::Array { elem, rank } => ((**elem).clone(), *rank),
        other => (other.clone(), 0),
    };
    let is_zero = |value: Expr| binary(BinaryOp::Eq, value.clone(), zero_of(&value.ty, value.span));
    let counted = |value: Expr| select(is_zero(value), int(1, span), int(0, span));
    let kept = |value: Expr| select(is_zero(value.clone()), one_of(&value.ty, value.span), value);
    let made = |form: &dyn Fn(Expr) -> Expr, value_ty: Type, op, vars: &mut Vec<crate::ir::VarInfo>| {
        let start = map_elements(init, vars, |at| form(read_at(init, at)));
        let mut updates = map_update_values(&accum.updates, 2 + rank, &|value, _| form(value), &value_ty, rank, vars);
        crate::ir::visit::rename_binders(&mut updates, vars);
        let ty = Type::array(value_ty, rank);
        let node = node::Accum {
            target: accum.target.clone(),
            init: Box::new(start),
            updates: Box::new(updates),
            ops: vec![op; accum.ops.len()],
            value: node::AccumValue::Final,
        };
        Expr::new(ExprKind::Accum(node), ty, span)
    };
    let zeros = made(&counted, Type::I64, crate::ir::UpdateOp::Add, vars);
    let nonzero = made(&kept, elem, crate::ir::UpdateOp::Mul, vars);
    (zeros, nonzero)
}

/// The history (`node::AccumValue`) of `accum` run from `init` (an atom), over a copy of its
/// updates: what each update finds at its element (note [mixed accums] in `ad/mod.rs`).
pub(super) fn accum_history(
    accum: &node::Accum,
    init: &Expr,
    value: node::AccumValue,
    vars: &mut Vec<crate::ir::VarInfo>,
) -> syn::Result<Expr> {
    if let Some(irregular) = crate::ir::accum::irregular_loop(&accum.updates) {
        return Err(syn::Error::new(
            irregular.span,
            format!(
                "cannot differentiate `accum {}` mixing `+=` and `*=` whose loop ranges depend on an enclosing \
                 loop: its derivative records what every update finds, one axis per loop; give this loop a range \
                 that does not depend on the loops around it, or keep `+=` and `*=` in two accums",
                accum.target
            ),
        ));
    }
    let node = node::Accum { init: Box::new(init.clone()), value, ..accum.clone() };
    let ty = crate::ir::accum::value_type(&node);
    let mut history = Expr::new(ExprKind::Accum(node), ty, init.span);
    crate::ir::visit::rename_binders(&mut history, vars);
    Ok(history)
}

/// For an accum mixing `+=` and `*=` (its `init` an atom): the accum of its multipliers alone,
/// from ones, over a copy of its updates, each `+=` update turned into `*= 1` at its element.
/// Its final array is the product of every multiplier at each element; its reversed history,
/// the product of those after each update (note [mixed accums] in `ad/mod.rs`).
pub(super) fn multipliers_accum(accum: &node::Accum, init: &Expr, vars: &mut Vec<crate::ir::VarInfo>) -> node::Accum {
    let (elem, rank) = match &init.ty {
        Type::Array { elem, rank } => ((**elem).clone(), *rank),
        other => (other.clone(), 0),
    };
    let ones = map_elements(init, vars, |_| one_of(&elem, init.span));
    let ops = &accum.ops;
    let multiplier = |value: Expr, update: usize| match ops.get(update) {
        Some(crate::ir::UpdateOp::Mul) => value,
        _ => one_of(&value.ty, value.span),
    };
    let mut updates = map_update_values(&accum.updates, 2 + rank, &multiplier, &elem, rank, vars);
    crate::ir::visit::rename_binders(&mut updates, vars);
    node::Accum {
        target: accum.target.clone(),
        init: Box::new(ones),
        updates: Box::new(updates),
        ops: vec![crate::ir::UpdateOp::Mul; ops.len()],
        value: node::AccumValue::Final,
    }
}

/// An accum's update nest with each update's value `v` replaced by `let x = v; value(x,
/// number of the update)` (of type `value_ty`), conditions and positions kept; `group` is the
/// length of one update's part of a leaf tuple.
fn map_update_values(
    nest: &Expr,
    group: usize,
    value: &dyn Fn(Expr, usize) -> Expr,
    value_ty: &Type,
    rank: usize,
    vars: &mut Vec<crate::ir::VarInfo>,
) -> Expr {
    let (kind, ty) = match &nest.kind {
        ExprKind::For(node::For { index, size, body }) => {
            let body = map_update_values(body, group, value, value_ty, rank, vars);
            let ty = body.ty.with_outer_axis();
            (ExprKind::For(node::For { index: *index, size: size.clone(), body: Box::new(body) }), ty)
        }
        ExprKind::Let(node::Let { var, value: bound, body }) => {
            let body = map_update_values(body, group, value, value_ty, rank, vars);
            let ty = body.ty.clone();
            (ExprKind::Let(node::Let { var: *var, value: bound.clone(), body: Box::new(body) }), ty)
        }
        ExprKind::Assert(node::Assert { checks, body }) => {
            let body = map_update_values(body, group, value, value_ty, rank, vars);
            let ty = body.ty.clone();
            (ExprKind::Assert(node::Assert { checks: checks.clone(), body: Box::new(body) }), ty)
        }
        ExprKind::Tuple(items) => {
            let items: Vec<Expr> = items
                .iter()
                .enumerate()
                .map(|(position, item)| {
                    if position % group != group - 1 {
                        return item.clone();
                    }
                    let name = format!("{}factor{}", crate::ir::SYNTHETIC_PREFIX, vars.len());
                    let info = crate::ir::VarInfo {
                        name,
                        ty: item.ty.clone(),
                        kind: crate::ir::VarKind::Let,
                        span: item.span,
                    };
                    let bound = crate::ir::declare(vars, info);
                    let mapped = value(var(bound, &item.ty, item.span), position / group);
                    let ty = mapped.ty.clone();
                    let kind =
                        ExprKind::Let(node::Let { var: bound, value: Box::new(item.clone()), body: Box::new(mapped) });
                    Expr::new(kind, ty, item.span)
                })
                .collect();
            let ty = crate::ir::accum::update_tuple_type(value_ty, rank, items.len() / group.max(1));
            (ExprKind::Tuple(items), ty)
        }
        _ => return nest.clone(),
    };
    Expr::new(kind, ty, nest.span)
}
