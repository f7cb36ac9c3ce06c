//! Facts about expressions that decide whether a pass may move or duplicate them: whether
//! evaluating one can fail at run time, and whether it is worth a binding of its own.

use crate::ir::node;
use crate::ir::shape::{length, simplify_lengths};
use crate::ir::visit::alpha_key;
use crate::ir::{Bounds, Expr, ExprKind, Literal, ReduceOp, ScalarType, Type};
use crate::ops::{BinaryOp, Failure, Func, UnaryOp};

/// Whether evaluating `expr` can raise a run-time error (a clamped read of an empty axis, an
/// integer division whose divisor is not a non-zero literal, argmax over an empty range, a
/// negative size, a size check, a call such as `clamp` or `rem_euclid` whose arguments are not
/// known to be fine).
/// Moving such an expression out of a loop that might run zero times could add an error the
/// program does not have, so passes leave them in place.
pub fn may_fail(expr: &Expr) -> bool {
    may_fail_knowing(expr, None)
}

/// [`may_fail`] where every size for which `nonzero` holds is known not to be zero (a size of
/// a loop that encloses the place the expression is evaluated, say): as an integer divisor,
/// and as the length of an axis a clamped read reads. Inside a loop's body its own size is
/// such a size too (the body runs only when it is not zero), so `sum k { y[k + 1] }` over
/// `y`'s axis cannot fail.
pub fn may_fail_where(expr: &Expr, nonzero: &dyn Fn(&Expr) -> bool) -> bool {
    may_fail_knowing(expr, Some(nonzero))
}

/// [`may_fail_where`], with `None` for no size known to be non-zero (which spares building
/// the lengths of clamped reads' axes to ask about).
fn may_fail_knowing(expr: &Expr, nonzero: Option<&dyn Fn(&Expr) -> bool>) -> bool {
    if fails_here_where(expr, nonzero) {
        return true;
    }
    let mut children = false;
    match loop_size_and_body(expr) {
        Some((size, body)) => {
            let size_key = alpha_key(size);
            let inside = |candidate: &Expr| {
                nonzero.is_some_and(|nonzero| nonzero(candidate)) || alpha_key(candidate) == size_key
            };
            expr.for_each_child(|child| {
                children |= if std::ptr::eq(child, body) {
                    may_fail_knowing(child, Some(&inside))
                } else {
                    may_fail_knowing(child, nonzero)
                }
            });
        }
        None => expr.for_each_child(|child| children |= may_fail_knowing(child, nonzero)),
    }
    children
}

/// How many nodes of `expr` can themselves raise an error ([`fails_here`]), every size for
/// which `nonzero` holds known not to be zero (the sizes of loops inside `expr` are not taken
/// as known: the count is the same for a node wherever it is, so the count of a part is at
/// most that of a whole holding it).
pub fn failing_sites(expr: &Expr, nonzero: &dyn Fn(&Expr) -> bool) -> usize {
    let mut count = usize::from(fails_here_where(expr, Some(nonzero)));
    expr.for_each_child(|child| count += failing_sites(child, nonzero));
    count
}

/// A loop's size (or count) and the body it runs that many times.
fn loop_size_and_body(expr: &Expr) -> Option<(&Expr, &Expr)> {
    match &expr.kind {
        ExprKind::For(node::For { size, body, .. })
        | ExprKind::Filter(node::For { size, body, .. })
        | ExprKind::Reduce(node::Reduce { size, body, .. }) => Some((size, body)),
        ExprKind::Fold(node::Fold { count, body, .. }) | ExprKind::Scan(node::Fold { count, body, .. }) => {
            Some((count, body))
        }
        _ => None,
    }
}

/// Whether the node itself, its children aside, can raise a run-time error: the one
/// definition behind [`may_fail`] and the analysis stage's fact of the same name.
pub fn fails_here(expr: &Expr) -> bool {
    fails_here_where(expr, None)
}

fn fails_here_where(expr: &Expr, nonzero: Option<&dyn Fn(&Expr) -> bool>) -> bool {
    let nonzero_size = |size: &Expr| nonzero.is_some_and(|nonzero| nonzero(size));
    match &expr.kind {
        // A clamped read fails on an empty axis only.
        ExprKind::Index(node::Index { array, bounds, .. }) => {
            *bounds == Bounds::Clamped
                && !nonzero.is_some_and(|nonzero| nonzero(&simplify_lengths(length((**array).clone(), 0))))
        }
        // Integer division fails on a zero divisor only (`MIN / -1` wraps).
        ExprKind::Binary(node::Binary { op: BinaryOp::Div | BinaryOp::Rem, lhs, rhs }) => {
            !is_float(&lhs.ty) && !is_nonzero_literal(rhs) && !nonzero_size(rhs)
        }
        // An empty range fails.
        ExprKind::Reduce(node::Reduce { op: ReduceOp::ArgMax | ReduceOp::ArgMin, size, .. }) => {
            !(is_length(size) && nonzero_size(size))
        }
        ExprKind::For(node::For { size, .. })
        | ExprKind::Filter(node::For { size, .. })
        | ExprKind::Reduce(node::Reduce { size, .. }) => !is_length(size),
        ExprKind::Fold(node::Fold { count, .. }) | ExprKind::Scan(node::Scan { count, .. }) => !is_length(count),
        // An update's index out of range.
        ExprKind::Assert(_) | ExprKind::Accum(_) => true,
        ExprKind::Call(node::Call { func, args }) => call_may_fail(*func, args),
        // A negative output size; summed sizes cannot fail (see `Contraction`).
        ExprKind::Contract(contraction) => contraction.output_labels().iter().any(|label| !is_length(&label.size)),
        _ => false,
    }
}

/// Whether the only run-time errors `expr` can raise are those of clamped reads, which fail
/// only on an empty axis (a proven read cannot fail). Such a failure does not depend on the
/// index read: every evaluation of the read fails alike.
pub fn fails_only_on_empty_axes(expr: &Expr) -> bool {
    let mut only = matches!(expr.kind, ExprKind::Index(_)) || !fails_here(expr);
    expr.for_each_child(|child| only &= fails_only_on_empty_axes(child));
    only
}

/// Whether a node of `expr` outside the subtree `skip` can raise a run-time error.
pub fn fails_outside(expr: &Expr, skip: &Expr) -> bool {
    if expr.id == skip.id {
        return false;
    }
    let mut fails = fails_here(expr);
    expr.for_each_child(|child| fails |= fails_outside(child, skip));
    fails
}

fn is_nonzero_literal(expr: &Expr) -> bool {
    matches!(expr.kind, ExprKind::Literal(Literal::Int(value)) if value != 0)
}

/// Whether a call can fail, its arguments aside: an integer divisor that is not a non-zero
/// constant (`rem_euclid`, `div_euclid`), `clamp` bounds that are not constants in order.
pub fn call_may_fail(func: Func, args: &[Expr]) -> bool {
    let constant = |position: usize| args.get(position).and_then(constant);
    match func.failure() {
        Failure::Never => false,
        Failure::ZeroDivisor => match constant(1) {
            Some(Constant::Int(divisor)) => divisor == 0,
            Some(Constant::Float(_)) => false,
            None => !args.get(1).is_some_and(|divisor| is_float(&divisor.ty)),
        },
        Failure::Bounds => match (constant(1), constant(2)) {
            (Some(Constant::Int(low)), Some(Constant::Int(high))) => low > high,
            // `!(low <= high)`: a NaN bound fails too.
            (Some(Constant::Float(low)), Some(Constant::Float(high))) => low.partial_cmp(&high).is_none() || low > high,
            _ => true,
        },
    }
}

/// A literal, or a negated one, of a known type, whose value is the one the program computes.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Constant {
    Int(i128),
    /// A float literal's value; rounding it to `f32` keeps the order of two of them.
    Float(f64),
}

fn constant(expr: &Expr) -> Option<Constant> {
    let Type::Scalar(ScalarType::Known(scalar)) = expr.ty else { return None };
    let (literal, negated) = match &expr.kind {
        ExprKind::Literal(literal) => (*literal, false),
        ExprKind::Unary(node::Unary { op: UnaryOp::Neg, operand }) => match &operand.kind {
            ExprKind::Literal(literal) => (*literal, true),
            _ => return None,
        },
        _ => return None,
    };
    match literal {
        Literal::Float(value) if scalar.is_float() => Some(Constant::Float(if negated { -value } else { value })),
        Literal::Int(value) => {
            let value = if negated { -i128::from(value) } else { i128::from(value) };
            // A value outside the type (a negated unsigned literal) wraps: not what is written.
            let (low, high) = scalar.int_range()?;
            (low..=high).contains(&value).then_some(Constant::Int(value))
        }
        _ => None,
    }
}

fn is_float(ty: &crate::ir::Type) -> bool {
    matches!(ty, crate::ir::Type::Scalar(crate::ir::ScalarType::Known(scalar)) if scalar.is_float())
}

/// Sizes that are lengths of arrays, or non-negative literals, are never negative (a loop
/// over any other size fails where it is negative).
pub fn is_length(size: &Expr) -> bool {
    matches!(size.kind, ExprKind::Len(_) | ExprKind::Literal(Literal::Int(0..)))
}

/// Whether `expr` does enough work (a loop, or a call to a scalar function) that computing it
/// once instead of many times pays for a binding.
pub fn is_expensive(expr: &Expr) -> bool {
    let own = matches!(
        expr.kind,
        ExprKind::For(_)
            | ExprKind::Filter(_)
            | ExprKind::Reduce(_)
            | ExprKind::Fold(_)
            | ExprKind::Scan(_)
            | ExprKind::Accum(_)
            | ExprKind::Call(_)
            | ExprKind::Extern(_)
            | ExprKind::Contract(_)
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

/// Whether the node itself is a loop: a comprehension, reduction, fold, scan or contraction.
pub fn is_loop(expr: &Expr) -> bool {
    matches!(
        expr.kind,
        ExprKind::For(_)
            | ExprKind::Filter(_)
            | ExprKind::Reduce(_)
            | ExprKind::Fold(_)
            | ExprKind::Scan(_)
            | ExprKind::Accum(_)
            | ExprKind::Contract(_)
    )
}
