//! Let-lifting before reverse mode (ATL's normalisation): a float `sum`, `max` or `min`
//! inside a comprehension, or inside another reduction, that reads only what the loops'
//! indices and the enclosing scope give it becomes a value of its own, `let s = for i, j {
//! sum k { … } }` read back as `s[i, j]`, or a scalar `let` when it reads none of the loops'
//! indices (`sum i { x[i] * sum k { x[k] * x[k] } }`).
//!
//! Why: the backward sweep recomputes a loop body's values where a contribution needs them
//! (see `vjp`). A reduction left inside the body would be recomputed once per element of
//! every adjoint it feeds, and its contributions, made inside the loops around it, could
//! only be accumulated: one update per element of the loops around it and of its own, O(n²)
//! for a loss with an invariant sum inside (the naive softmax's gradient was O(n m³)).
//! Lifted, its value is computed once (a contraction, for a matrix product), the body reads
//! it, and the reduction's own adjoints are plain comprehensions over the value's positions:
//! the two products of a matrix product's gradient.

use crate::ir::visit::{bound_vars, free_vars, substitute};
use crate::ir::{declare, node, Bounds, Expr, ExprKind, ReduceOp, Type, VarId, VarInfo, VarKind};
use std::collections::BTreeSet;

use super::build::{for_loop, has_float, var};

/// Lifts every liftable reduction of `expr` (see the module's note), declaring the arrays in
/// `vars`.
pub(super) fn lift_reductions(expr: &mut Expr, vars: &mut Vec<VarInfo>) {
    let Some(link) = Link::of(expr) else {
        expr.for_each_child_mut(|child| lift_reductions(child, vars));
        return;
    };
    // The maximal chain of directly nested comprehensions (or reductions), and its innermost
    // body.
    let mut chain: Vec<(VarId, Expr)> = Vec::new();
    let body = innermost(expr, link, &mut chain);
    let bound_inside = bound_vars(body);
    let mut lifted = Vec::new();
    collect(body, &chain, &bound_inside, vars, &mut lifted);
    // Loops left in the body: their own chains (a reduction's, if it was not lifted).
    lift_reductions(body, vars);
    for (array, mut value) in lifted.into_iter().rev() {
        lift_inside(&mut value, vars);
        let (ty, span) = (expr.ty.clone(), expr.span);
        let rest = std::mem::replace(expr, Expr::new(ExprKind::Tuple(Vec::new()), ty.clone(), span));
        let kind = ExprKind::Let(node::Let { var: array, value: Box::new(value), body: Box::new(rest) });
        *expr = Expr::new(kind, ty, span);
    }
}

/// What a chain of loops is made of: comprehensions, or reductions (any of them, each
/// evaluating its body once per index like a comprehension's element).
#[derive(Clone, Copy, PartialEq)]
enum Link {
    For,
    Reduce,
}

impl Link {
    fn of(expr: &Expr) -> Option<Link> {
        match expr.kind {
            ExprKind::For(_) => Some(Link::For),
            ExprKind::Reduce(_) => Some(Link::Reduce),
            _ => None,
        }
    }
}

/// The innermost body of the chain of `link` loops at `expr`, recording their loops.
fn innermost<'e>(expr: &'e mut Expr, link: Link, chain: &mut Vec<(VarId, Expr)>) -> &'e mut Expr {
    if Link::of(expr) != Some(link) {
        return expr;
    }
    match &mut expr.kind {
        ExprKind::For(node::For { index, size, body }) | ExprKind::Reduce(node::Reduce { index, size, body, .. }) => {
            chain.push((*index, (**size).clone()));
            innermost(body, link, chain)
        }
        _ => unreachable!("a link is a comprehension or a reduction"),
    }
}

/// Lifts inside a lifted value (`for i.. { sum k { body } }`): in the reduction, whose body may
/// hold reductions of its own that do not read its index.
fn lift_inside(value: &mut Expr, vars: &mut Vec<VarInfo>) {
    match &mut value.kind {
        ExprKind::For(node::For { body, .. }) => lift_inside(body, vars),
        _ => lift_reductions(value, vars),
    }
}

/// Replaces each liftable reduction in the element expression `expr` (not inside its loops)
/// with a read of a new array, pushed on `lifted` with its value.
fn collect(
    expr: &mut Expr,
    chain: &[(VarId, Expr)],
    bound_inside: &BTreeSet<VarId>,
    vars: &mut Vec<VarInfo>,
    lifted: &mut Vec<(VarId, Expr)>,
) {
    match &expr.kind {
        ExprKind::Reduce(reduce) if liftable(expr, reduce, chain, bound_inside) => {
            // Over the indices it reads; over all of the chain's if it can fail, so that it is
            // evaluated exactly where the comprehension evaluated it (no error added where a
            // loop it does not read ran zero times).
            let free = free_vars(expr);
            let fails = crate::passes::purity::may_fail(expr);
            let used: Vec<&(VarId, Expr)> = chain.iter().filter(|(index, _)| fails || free.contains(index)).collect();
            // The array's sizes must not depend on an index or accumulator around the chain
            // (`for j in 0..t + 1` in a scan over `t`): arrays are rectangular.
            let varying = |size: &Expr| {
                let kind = |var: &VarId| vars[var.0 as usize].kind;
                free_vars(size).iter().any(|var| matches!(kind(var), VarKind::Index | VarKind::Accumulator))
            };
            if used.iter().any(|(_, size)| varying(size)) {
                return;
            }
            let (elem, span) = (expr.ty.clone(), expr.span);
            let ty = if used.is_empty() { elem.clone() } else { Type::array(elem.clone(), used.len()) };
            let name = format!("{}lifted{}", crate::ir::SYNTHETIC_PREFIX, vars.len());
            let array = declare(vars, VarInfo { name, ty: ty.clone(), kind: VarKind::Let, span });
            // The value's own indices, fresh: the chain's stay bound where they are.
            let mut value = expr.clone();
            let mut fresh = Vec::new();
            for (index, _) in &used {
                let info = VarInfo { kind: VarKind::Index, ..vars[index.0 as usize].clone() };
                let copy = declare(vars, info);
                substitute(&mut value, *index, &var(copy, &Type::I64, span));
                fresh.push(copy);
            }
            for ((_, size), copy) in used.iter().zip(&fresh).rev() {
                value = for_loop(*copy, size.clone(), value);
            }
            let positions = used.iter().map(|(index, _)| (var(*index, &Type::I64, span), Bounds::Proven));
            *expr = Expr::read_of(var(array, &ty, span), positions);
            lifted.push((array, value));
        }
        _ if crate::passes::purity::is_loop(expr) => {}
        _ => expr.for_each_child_mut(|child| collect(child, chain, bound_inside, vars, lifted)),
    }
}

/// A float `sum`, `max` or `min` that reads an array, whose free variables are bound outside
/// the chain or are its indices, inside a chain whose sizes are free of its own indices.
fn liftable(expr: &Expr, reduce: &node::Reduce, chain: &[(VarId, Expr)], bound_inside: &BTreeSet<VarId>) -> bool {
    let op = matches!(reduce.op, ReduceOp::Sum | ReduceOp::Max | ReduceOp::Min);
    if !op || !matches!(expr.ty, Type::Scalar(_)) || !has_float(&expr.ty) {
        return false;
    }
    if free_vars(expr).iter().any(|var| bound_inside.contains(var)) || !reads_an_array(&reduce.body) {
        return false;
    }
    let indices: BTreeSet<VarId> = chain.iter().map(|(index, _)| *index).collect();
    chain.iter().all(|(_, size)| free_vars(size).is_disjoint(&indices))
}

fn reads_an_array(expr: &Expr) -> bool {
    let mut found = matches!(expr.kind, ExprKind::Index(_));
    expr.for_each_child(|child| found |= reads_an_array(child));
    found
}
