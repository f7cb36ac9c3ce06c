//! Folds that stop at a fixed point: once a step keeps the accumulator, every later step
//! keeps it too, so the loop may stop there with the same result, bit for bit.

use super::Analysis;
use crate::ir::node;
use crate::ir::visit::free_vars;
use crate::ir::{Expr, ExprKind, VarId};

/// A fold body `let …; if c { acc } else { next }` (or `if c { next } else { acc }`) whose
/// condition does not depend on the fold's index, directly or through the `let`s, and in
/// which nothing can fail. Once the step keeps `acc`, the next step sees the same value, so `c`
/// decides the same way and keeps it again, to the end: the loop may stop there and the result
/// is the same, bit for bit (Mandelbrot's frozen escaped points). Failure matters because a
/// stopped loop skips the steps after: only bodies that cannot fail qualify.
pub struct FixedPoint<'e> {
    pub lets: Vec<(VarId, &'e Expr)>,
    pub cond: &'e Expr,
    /// Whether the accumulator is kept when `cond` is true (else when it is false).
    pub stop_when: bool,
    pub next: &'e Expr,
}

impl<'e> FixedPoint<'e> {
    pub(super) fn of(analysis: &Analysis<'_>, body: &'e Expr, acc: VarId, index: VarId) -> Option<FixedPoint<'e>> {
        if analysis.may_fail(body) {
            return None;
        }
        let mut lets = Vec::new();
        let mut node = body;
        while let ExprKind::Let(node::Let { var, value, body }) = &node.kind {
            lets.push((*var, &**value));
            node = body;
        }
        let ExprKind::Select(node::Select { cond, then, otherwise }) = &node.kind else { return None };
        let (stop_when, next) = if is_part(then, acc, &[], &lets) {
            (true, &**otherwise)
        } else if is_part(otherwise, acc, &[], &lets) {
            (false, &**then)
        } else {
            return None;
        };
        // The variables whose value changes with the index.
        let mut varying = std::collections::BTreeSet::from([index]);
        for (var, value) in &lets {
            if !free_vars(value).is_disjoint(&varying) {
                varying.insert(*var);
            }
        }
        if !free_vars(cond).is_disjoint(&varying) {
            return None;
        }
        Some(FixedPoint { lets, cond, stop_when, next })
    }
}

/// Whether `expr` is the part of the accumulator at `path` (its fields, outermost first):
/// `acc`, `acc.0`, a `let` of one, or a tuple rebuilt from the fields.
fn is_part(expr: &Expr, acc: VarId, path: &[usize], lets: &[(VarId, &Expr)]) -> bool {
    match &expr.kind {
        ExprKind::Var(var) if *var == acc => path.is_empty(),
        ExprKind::Var(var) => lets.iter().any(|(bound, value)| bound == var && is_part(value, acc, path, lets)),
        // `x.f` is the part at `path` when `path` ends in `f` and `x` is the part before it.
        ExprKind::Project(node::Project { tuple, field }) => {
            path.split_last().is_some_and(|(last, outer)| last == field && is_part(tuple, acc, outer, lets))
        }
        ExprKind::Tuple(items) => items.iter().enumerate().all(|(field, item)| {
            let mut inner = path.to_vec();
            inner.push(field);
            is_part(item, acc, &inner, lets)
        }),
        _ => false,
    }
}
