//! Generic walks over the IR: which variables an expression binds and mentions, and
//! capture-avoiding substitution (binders are unique `VarId`s, so no renaming is needed).

use super::{Expr, ExprKind, VarId};
use std::collections::BTreeSet;

/// The variable bound by `expr` for its body (and for the size/count/init, nothing).
pub fn binder_of(expr: &Expr) -> Option<VarId> {
    match &expr.kind {
        ExprKind::For { index, .. } | ExprKind::Reduce { index, .. } => Some(*index),
        ExprKind::Let { var, .. } => Some(*var),
        _ => None,
    }
}

/// Every variable used in `expr` but not bound inside it.
pub fn free_vars(expr: &Expr) -> BTreeSet<VarId> {
    let mut free = BTreeSet::new();
    collect_free(expr, &mut Vec::new(), &mut free);
    free
}

fn collect_free(expr: &Expr, bound: &mut Vec<VarId>, free: &mut BTreeSet<VarId>) {
    match &expr.kind {
        ExprKind::Var(var) => {
            if !bound.contains(var) {
                free.insert(*var);
            }
        }
        ExprKind::For { index, size, body } | ExprKind::Reduce { index, size, body, .. } => {
            collect_free(size, bound, free);
            bound.push(*index);
            collect_free(body, bound, free);
            bound.pop();
        }
        ExprKind::Let { var, value, body } => {
            collect_free(value, bound, free);
            bound.push(*var);
            collect_free(body, bound, free);
            bound.pop();
        }
        ExprKind::Fold { index, count, acc, init, body } => {
            collect_free(count, bound, free);
            collect_free(init, bound, free);
            bound.push(*index);
            bound.push(*acc);
            collect_free(body, bound, free);
            bound.pop();
            bound.pop();
        }
        _ => expr.for_each_child(|child| collect_free(child, bound, free)),
    }
}

/// Whether `var` occurs free in `expr`.
pub fn mentions(expr: &Expr, var: VarId) -> bool {
    free_vars(expr).contains(&var)
}

/// Replaces every free occurrence of `var` in `expr` by `replacement`. Sound without renaming
/// because every binder in a program binds a distinct `VarId`; the caller must not duplicate
/// binders of `replacement` into places where they would be bound twice on one path
/// (duplicated copies of a subtree are fine: the copies are on different paths).
pub fn substitute(expr: &mut Expr, var: VarId, replacement: &Expr) {
    if let ExprKind::Var(found) = &expr.kind {
        if *found == var {
            *expr = replacement.clone();
        }
        return;
    }
    expr.for_each_child_mut(|child| substitute(child, var, replacement));
}

/// Every variable bound anywhere inside `expr`.
pub fn bound_vars(expr: &Expr) -> BTreeSet<VarId> {
    let mut bound = BTreeSet::new();
    collect_bound(expr, &mut bound);
    bound
}

fn collect_bound(expr: &Expr, bound: &mut BTreeSet<VarId>) {
    if let Some(var) = binder_of(expr) {
        bound.insert(var);
    }
    if let ExprKind::Fold { index, acc, .. } = &expr.kind {
        bound.insert(*index);
        bound.insert(*acc);
    }
    expr.for_each_child(|child| collect_bound(child, bound));
}
