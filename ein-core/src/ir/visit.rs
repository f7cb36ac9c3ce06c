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

/// Gives every binder inside `expr` a fresh variable (declared at the end of `vars`), so a copy
/// of a subtree can be placed next to the original without binding a `VarId` twice.
pub fn rename_binders(expr: &mut Expr, vars: &mut Vec<super::VarInfo>) {
    let renames: Vec<(VarId, VarId)> = bound_vars(expr)
        .into_iter()
        .map(|old| {
            let info = vars[old.0 as usize].clone();
            vars.push(info);
            (old, VarId(vars.len() as u32 - 1))
        })
        .collect();
    rename(expr, &renames);
}

fn rename(expr: &mut Expr, renames: &[(VarId, VarId)]) {
    let fresh = |var: &mut VarId| {
        if let Some((_, new)) = renames.iter().find(|(old, _)| old == var) {
            *var = *new;
        }
    };
    match &mut expr.kind {
        ExprKind::Var(var) => fresh(var),
        ExprKind::For { index, .. } | ExprKind::Reduce { index, .. } => fresh(index),
        ExprKind::Let { var, .. } => fresh(var),
        ExprKind::Fold { index, acc, .. } => {
            fresh(index);
            fresh(acc);
        }
        _ => {}
    }
    expr.for_each_child_mut(|child| rename(child, renames));
}

/// A text equal for two expressions exactly when they are equal up to the names of the
/// variables they bind (alpha-equivalence), spans ignored. Free variables keep their ids.
pub fn alpha_key(expr: &Expr) -> String {
    let mut text = String::new();
    write_alpha(expr, &mut Vec::new(), &mut text);
    text
}

fn write_alpha(expr: &Expr, bound: &mut Vec<VarId>, text: &mut String) {
    use std::fmt::Write;
    let name = |var: &VarId, bound: &Vec<VarId>| match bound.iter().rposition(|b| b == var) {
        Some(position) => format!("b{position}"),
        None => format!("f{}", var.0),
    };
    let pushed: Vec<VarId> = match &expr.kind {
        ExprKind::For { index, .. } | ExprKind::Reduce { index, .. } => vec![*index],
        ExprKind::Let { var, .. } => vec![*var],
        ExprKind::Fold { index, acc, .. } => vec![*index, *acc],
        _ => Vec::new(),
    };
    let _ = match &expr.kind {
        ExprKind::Literal(literal) => write!(text, "{literal:?}"),
        ExprKind::Var(var) => write!(text, "{}", name(var, bound)),
        ExprKind::For { .. } => write!(text, "for"),
        ExprKind::Reduce { op, .. } => write!(text, "{}", op.name()),
        ExprKind::Fold { .. } => write!(text, "fold"),
        ExprKind::Let { .. } => write!(text, "let"),
        ExprKind::Index { bounds, .. } => write!(text, "index{bounds:?}"),
        ExprKind::Select { .. } => write!(text, "select"),
        ExprKind::Tuple(_) => write!(text, "tuple"),
        ExprKind::Project { field, .. } => write!(text, "project{field}"),
        ExprKind::Unary { op, .. } => write!(text, "{op:?}"),
        ExprKind::Binary { op, .. } => write!(text, "{}", op.symbol()),
        ExprKind::Call { func, .. } => write!(text, "{}", func.name()),
        ExprKind::Cast { to, .. } => write!(text, "as{to:?}"),
        ExprKind::Len { axis, .. } => write!(text, "len{axis}"),
        ExprKind::Assert { .. } => write!(text, "assert"),
        ExprKind::Contract(contraction) => write!(text, "{}", contraction.structure_key()),
    };
    let _ = write!(text, ":{:?}(", expr.ty);
    // Children in evaluation order; a binder's variable is in scope only in its body, which is
    // always the last child.
    let mut children = Vec::new();
    expr.for_each_child(|child| children.push(child));
    let last = children.len().saturating_sub(1);
    for (position, child) in children.into_iter().enumerate() {
        if position == last {
            bound.extend(&pushed);
        }
        write_alpha(child, bound, text);
        text.push(',');
    }
    for _ in &pushed {
        bound.pop();
    }
    text.push(')');
}
