//! Facts about expressions that decide whether a pass may move or duplicate them: whether
//! evaluating one can fail at run time, and whether it is worth a binding of its own.

use crate::ir::node;
use crate::ir::{Bounds, Expr, ExprKind, Literal, ReduceOp};
use crate::ops::BinaryOp;

/// Whether evaluating `expr` can raise a run-time error (a clamped read of an empty axis, an
/// integer division whose divisor is not a non-zero literal, argmax over an empty range, a
/// negative size, a size check).
/// Moving such an expression out of a loop that might run zero times could add an error the
/// program does not have, so passes leave them in place.
pub fn may_fail(expr: &Expr) -> bool {
    may_fail_where(expr, &|_| false)
}

/// [`may_fail`] where every integer divisor for which `nonzero` holds is known not to be zero
/// (a size of a loop that encloses the place the expression is evaluated, say).
pub fn may_fail_where(expr: &Expr, nonzero: &dyn Fn(&Expr) -> bool) -> bool {
    let mut children = false;
    expr.for_each_child(|child| children |= may_fail_where(child, nonzero));
    fails_here_where(expr, nonzero) || children
}

/// Whether the node itself, its children aside, can raise a run-time error: the one
/// definition behind [`may_fail`] and the analysis stage's fact of the same name.
pub fn fails_here(expr: &Expr) -> bool {
    fails_here_where(expr, &|_| false)
}

fn fails_here_where(expr: &Expr, nonzero: &dyn Fn(&Expr) -> bool) -> bool {
    match &expr.kind {
        ExprKind::Index(node::Index { bounds, .. }) => *bounds == Bounds::Clamped,
        // Integer division fails on a zero divisor only (`MIN / -1` wraps).
        ExprKind::Binary(node::Binary { op: BinaryOp::Div | BinaryOp::Rem, lhs, rhs }) => {
            !is_float(&lhs.ty) && !is_nonzero_literal(rhs) && !nonzero(rhs)
        }
        ExprKind::Reduce(node::Reduce { op: ReduceOp::ArgMax | ReduceOp::ArgMin, .. }) => true,
        ExprKind::For(node::For { size, .. }) | ExprKind::Reduce(node::Reduce { size, .. }) => !is_length(size),
        ExprKind::Fold(node::Fold { count, .. }) => !is_length(count),
        ExprKind::Assert(_) => true,
        // A negative output size; summed sizes cannot fail (see `Contraction`).
        ExprKind::Contract(contraction) => contraction.output_labels().iter().any(|label| !is_length(&label.size)),
        _ => false,
    }
}

fn is_nonzero_literal(expr: &Expr) -> bool {
    matches!(expr.kind, ExprKind::Literal(Literal::Int(value)) if value != 0)
}

fn is_float(ty: &crate::ir::Type) -> bool {
    matches!(ty, crate::ir::Type::Scalar(crate::ir::ScalarType::Known(scalar)) if scalar.is_float())
}

/// Sizes that are lengths of arrays are never negative.
fn is_length(size: &Expr) -> bool {
    matches!(size.kind, ExprKind::Len(_))
}

/// Whether `expr` does enough work (a loop, or a call to a scalar function) that computing it
/// once instead of many times pays for a binding.
pub fn is_expensive(expr: &Expr) -> bool {
    let own = matches!(
        expr.kind,
        ExprKind::For(_) | ExprKind::Reduce(_) | ExprKind::Fold(_) | ExprKind::Call(_) | ExprKind::Contract(_)
    );
    let mut children = false;
    expr.for_each_child(|child| children |= is_expensive(child));
    own || children
}

/// Whether `expr` contains a loop (as opposed to only scalar arithmetic and calls).
pub fn has_loop(expr: &Expr) -> bool {
    let mut children = false;
    expr.for_each_child(|child| children |= has_loop(child));
    is_loop(expr) || children
}

/// Whether the node itself is a loop: a comprehension, reduction, fold or contraction.
pub fn is_loop(expr: &Expr) -> bool {
    matches!(expr.kind, ExprKind::For(_) | ExprKind::Reduce(_) | ExprKind::Fold(_) | ExprKind::Contract(_))
}
