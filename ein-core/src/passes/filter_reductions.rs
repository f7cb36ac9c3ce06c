//! Reductions of a filter's result without the array. A program that keeps some elements only
//! to reduce them,
//!
//! ```text
//! let p = for i where c { e };
//! (sum j { f(p[j]) }, len(p))
//! ```
//!
//! becomes `(sum i { if c { f(e) } else { 0 } }, sum i { if c { 1 } else { 0 } })`: one pass over
//! the filter's input (the two sums fuse later, `fuse-reductions`) where the filter would run
//! two (count, then fill), write an array and read it again.
//!
//! Meaning: a reduction over the kept elements in rank order equals the same reduction over all
//! indices with the identity in place of each dropped element (`a ⊕ id = a`), regrouped, as
//! compiled reductions regroup anyway (README, "Reductions"). Only when nothing can fail: the
//! filter (its size, condition and element) and the reductions' steps, which now run at every
//! index (as both sides of a select) instead of only at kept ones. Only `sum`, `prod`, `all`
//! and `any` (whose identities are literals) and reductions whose step reads `p` at its own
//! index alone; only when every use of `p` is such a reduction or its length, outside every
//! loop (so the filter's condition is not recomputed per iteration of some enclosing loop).

use super::purity::{has_loop, is_expensive, is_loop, may_fail};
use crate::ir::node;
use crate::ir::visit::{mentions, rename_binders};
use crate::ir::{Bounds, Expr, ExprKind, Literal, Program, ReduceOp, ScalarType, Type, VarId, VarInfo, VarKind};

pub fn filter_reductions(program: Program) -> Program {
    super::rewrite_body(program, rewrite)
}

fn rewrite(mut expr: Expr, vars: &mut Vec<VarInfo>) -> Expr {
    expr.rewrite_children(|child| rewrite(child, vars));
    match expr.kind {
        ExprKind::Let(node::Let { var, value, mut body })
            if is_reducible_filter(&value) && only_reduced(&body, var, has_expensive_element(&value)) =>
        {
            replace_uses(&mut body, var, &value, vars);
            *body
        }
        kind => Expr { kind, ..expr },
    }
}

/// A filter whose condition and element are loop-free and, with its size, cannot fail.
fn is_reducible_filter(value: &Expr) -> bool {
    match &value.kind {
        ExprKind::Filter(node::For { body, .. }) => {
            matches!(&body.kind, ExprKind::Tuple(parts) if parts.len() == 2) && !has_loop(body) && !may_fail(value)
        }
        _ => false,
    }
}

/// Whether the filter's condition or element calls a function (each use computes them again).
fn has_expensive_element(filter: &Expr) -> bool {
    matches!(&filter.kind, ExprKind::Filter(node::For { body, .. }) if is_expensive(body))
}

/// Whether every use of `var` in `expr` is a reduction [`reduces_each_element`] of it or its
/// length, outside every loop; and there is at least one (a filter nobody reads is left to the
/// code generator, which skips it as it does any unused `let`). An expensive filter is
/// recomputed once per use, so then at most two.
fn only_reduced(expr: &Expr, var: VarId, expensive: bool) -> bool {
    let mut uses = 0;
    let all = uses_are_reductions(expr, var, &mut uses);
    all && uses > 0 && (!expensive || uses <= 2)
}

fn uses_are_reductions(expr: &Expr, var: VarId, uses: &mut usize) -> bool {
    if is_length_of(expr, var) || reduces_each_element(expr, var) {
        *uses += 1;
        return true;
    }
    if matches!(expr.kind, ExprKind::Var(found) if found == var) {
        return false;
    }
    if is_loop(expr) {
        return !mentions(expr, var);
    }
    let mut all = true;
    expr.for_each_child(|child| all &= uses_are_reductions(child, var, uses));
    all
}

/// `len(var, 0)`.
fn is_length_of(expr: &Expr, var: VarId) -> bool {
    matches!(&expr.kind, ExprKind::Len(node::Len { array, axis: 0 })
        if matches!(array.kind, ExprKind::Var(found) if found == var))
}

/// `R j in 0..len(var, 0) { f(var[j]) }` for `R` one of `sum`, `prod`, `all`, `any`, where `f`
/// is loop-free, cannot fail and reads `j` only as `var[j]`.
fn reduces_each_element(expr: &Expr, var: VarId) -> bool {
    let ExprKind::Reduce(node::Reduce { op, index, size, body }) = &expr.kind else {
        return false;
    };
    matches!(op, ReduceOp::Sum | ReduceOp::Prod | ReduceOp::All | ReduceOp::Any)
        && is_length_of(size, var)
        && !has_loop(body)
        && !may_fail(body)
        && reads_only_at(body, var, *index)
}

/// Whether `var` and `index` occur in `expr` only together, as `var[index]` read in bounds.
fn reads_only_at(expr: &Expr, var: VarId, index: VarId) -> bool {
    if is_read_at(expr, var, index) {
        return true;
    }
    if matches!(expr.kind, ExprKind::Var(found) if found == var || found == index) {
        return false;
    }
    let mut only = true;
    expr.for_each_child(|child| only &= reads_only_at(child, var, index));
    only
}

/// `var[index]`, proven in bounds.
fn is_read_at(expr: &Expr, var: VarId, index: VarId) -> bool {
    matches!(&expr.kind, ExprKind::Index(node::Index { array, index: at, bounds: Bounds::Proven })
        if matches!(array.kind, ExprKind::Var(found) if found == var)
            && matches!(at.kind, ExprKind::Var(found) if found == index))
}

/// Rewrites every use [`only_reduced`] accepted into a reduction over the filter's own range.
fn replace_uses(expr: &mut Expr, var: VarId, filter: &Expr, vars: &mut Vec<VarInfo>) {
    if is_length_of(expr, var) {
        let span = expr.span;
        let count = |value| Expr::new(ExprKind::Literal(Literal::Int(value)), Type::I64, span);
        *expr = reduce_kept(filter, vars, ReduceOp::Sum, |_, _| count(1), count(0));
        return;
    }
    if reduces_each_element(expr, var) {
        let ExprKind::Reduce(node::Reduce { op, index, mut body, .. }) = expr.take().kind else {
            unreachable!("reduces_each_element matched a reduction");
        };
        let identity = identity(op, &body);
        let p_name = vars[var.0 as usize].name.clone();
        *expr = reduce_kept(
            filter,
            vars,
            op,
            |element, vars| {
                // The element bound once, read wherever the step read `p[j]`.
                let info = VarInfo { name: p_name, ty: element.ty.clone(), kind: VarKind::Let, span: element.span };
                let bound = crate::ir::declare(vars, info);
                let read = Expr::new(ExprKind::Var(bound), element.ty.clone(), element.span);
                replace_reads(&mut body, var, index, &read);
                let (ty, span) = (body.ty.clone(), body.span);
                Expr::new(ExprKind::Let(node::Let { var: bound, value: Box::new(element), body }), ty, span)
            },
            identity,
        );
        return;
    }
    expr.for_each_child_mut(|child| replace_uses(child, var, filter, vars));
}

/// `op i in 0..n { if c { step(e) } else { identity } }` from a fresh copy of the filter
/// `for i in 0..n where c { e }`.
fn reduce_kept(
    filter: &Expr,
    vars: &mut Vec<VarInfo>,
    op: ReduceOp,
    step: impl FnOnce(Expr, &mut Vec<VarInfo>) -> Expr,
    identity: Expr,
) -> Expr {
    let mut copy = filter.clone();
    rename_binders(&mut copy, vars);
    let span = copy.span;
    let ExprKind::Filter(node::For { index, size, body }) = copy.kind else {
        unreachable!("is_reducible_filter matched a filter");
    };
    let ExprKind::Tuple(mut parts) = body.kind else {
        unreachable!("is_reducible_filter matched a pair");
    };
    let element = parts.pop().expect("a pair");
    let keep = parts.pop().expect("a pair");
    let kept = step(element, vars);
    let ty = kept.ty.clone();
    let select = node::Select { cond: Box::new(keep), then: Box::new(kept), otherwise: Box::new(identity) };
    let body = Expr::new(ExprKind::Select(select), ty.clone(), span);
    Expr::new(ExprKind::Reduce(node::Reduce { op, index, size, body: Box::new(body) }), ty, span)
}

/// The literal `op` starts from, of the step's type.
fn identity(op: ReduceOp, step: &Expr) -> Expr {
    let is_float = matches!(step.ty, Type::Scalar(ScalarType::Known(scalar)) if scalar.is_float());
    let literal = match op {
        ReduceOp::All => Literal::Bool(true),
        ReduceOp::Any => Literal::Bool(false),
        ReduceOp::Prod if is_float => Literal::Float(1.0, 1.0),
        ReduceOp::Prod => Literal::Int(1),
        _ if is_float => Literal::Float(0.0, 0.0),
        _ => Literal::Int(0),
    };
    Expr::new(ExprKind::Literal(literal), step.ty.clone(), step.span)
}

/// Replaces every `var[index]` in `expr` by `element`.
fn replace_reads(expr: &mut Expr, var: VarId, index: VarId, element: &Expr) {
    if is_read_at(expr, var, index) {
        *expr = element.clone();
        return;
    }
    expr.for_each_child_mut(|child| replace_reads(child, var, index, element));
}
