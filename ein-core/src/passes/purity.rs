//! Facts about expressions that decide whether a pass may move or duplicate them: whether
//! evaluating one can fail at run time, and whether it is worth a binding of its own.

use crate::ir::node;
use crate::ir::shape::{length, simplify_lengths};
use crate::ir::visit::alpha_key;
use crate::ir::{Bounds, Expr, ExprKind, Literal, NodeId, ReduceOp, ScalarType, Type, VarId};
use crate::ops::{BinaryOp, Failure, Func, Scalar, UnaryOp};
use std::collections::BTreeSet;

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
/// `y`'s axis cannot fail. The variables for which `is_index` holds are loop indices, never
/// negative, so a loop over `0..i + 1` cannot fail for its size ([`counts_from_an_index`]).
pub fn may_fail_where(expr: &Expr, nonzero: &dyn Fn(&Expr) -> bool, is_index: &dyn Fn(VarId) -> bool) -> bool {
    may_fail_known(expr, &Known { outer: Some(nonzero), indices: Some(is_index), sizes: Vec::new(), equal: Vec::new() })
}

/// Whether `size` is a loop index plus a literal that is not negative (`i`, `i + 1`): never
/// negative, as loop indices are not.
pub fn counts_from_an_index(size: &Expr, is_index: &dyn Fn(VarId) -> bool) -> bool {
    crate::ir::shape::var_plus_literal(size)
        .is_some_and(|(var, offset)| (0..=1 << 20).contains(&offset) && is_index(var))
}

/// What is known where an expression is evaluated: sizes known not to be zero (the caller's,
/// and those of the loops around it inside the expression walked), and sizes known equal (the
/// size checks of `Assert`s around it, which pass before their body runs).
#[derive(Clone)]
struct Known<'e, 'f> {
    outer: Option<&'f dyn Fn(&Expr) -> bool>,
    indices: Option<&'f dyn Fn(VarId) -> bool>,
    sizes: Vec<String>,
    equal: Vec<(String, &'e Expr)>,
}

impl Known<'_, '_> {
    fn is_empty(&self) -> bool {
        self.outer.is_none() && self.indices.is_none() && self.sizes.is_empty()
    }

    /// Whether `size` is known not to be zero, itself or through a size it is checked equal to
    /// (`len(a, 0)` in a loop over `len(u, 0)`, after the fold's check that they are equal).
    fn nonzero(&self, size: &Expr) -> bool {
        let key = alpha_key(size);
        let direct =
            |size: &Expr, key: &String| self.outer.is_some_and(|outer| outer(size)) || self.sizes.contains(key);
        direct(size, &key) || self.equal.iter().any(|(left, right)| *left == key && direct(right, &alpha_key(right)))
    }
}

/// [`may_fail_where`] with what is known where `expr` is evaluated.
fn may_fail_knowing(expr: &Expr, nonzero: Option<&dyn Fn(&Expr) -> bool>) -> bool {
    may_fail_known(expr, &Known { outer: nonzero, indices: None, sizes: Vec::new(), equal: Vec::new() })
}

fn may_fail_known<'e>(expr: &'e Expr, known: &Known<'e, '_>) -> bool {
    // With nothing known, no size is asked about (which spares building the lengths of clamped
    // reads' axes).
    let fails = if known.is_empty() {
        fails_here_where(expr, None, None)
    } else {
        fails_here_where(expr, Some(&|size: &Expr| known.nonzero(size)), known.indices)
    };
    if fails {
        return true;
    }
    let mut children = false;
    for_each_child_known(expr, known, &mut |child, known| children |= may_fail_known(child, known));
    children
}

/// `visit(child, known)` for each child of `expr`, with what is known where the child is
/// evaluated: a loop's body knows the loop's size is not zero, an `Assert`'s body that its
/// checked sizes are equal.
fn for_each_child_known<'e, 'f>(
    expr: &'e Expr,
    known: &Known<'e, 'f>,
    visit: &mut dyn FnMut(&'e Expr, &Known<'e, 'f>),
) {
    let (inner, inside) = match (loop_size_and_body(expr), &expr.kind) {
        (Some((size, body)), _) => {
            let mut inside = known.clone();
            inside.sizes.push(alpha_key(size));
            (body, inside)
        }
        (None, ExprKind::Assert(node::Assert { checks, body })) => {
            let mut inside = known.clone();
            for check in checks {
                inside.equal.push((alpha_key(&check.left), &check.right));
                inside.equal.push((alpha_key(&check.right), &check.left));
            }
            (&**body, inside)
        }
        _ => return expr.for_each_child(|child| visit(child, known)),
    };
    expr.for_each_child(|child| visit(child, if std::ptr::eq(child, inner) { &inside } else { known }));
}

/// The `if`s of `expr` whose sides hold arrays and cannot fail where they are evaluated (the
/// sizes of the loops around them known not to be zero, the checks around them passed): they
/// may build only the side they choose, since skipping the other is unobservable.
pub fn infallible_array_selects(expr: &Expr) -> BTreeSet<NodeId> {
    fn visit<'e>(expr: &'e Expr, known: &Known<'e, '_>, found: &mut BTreeSet<NodeId>) {
        if let ExprKind::Select(node::Select { then, otherwise, .. }) = &expr.kind {
            if expr.ty.has_array() && !may_fail_known(then, known) && !may_fail_known(otherwise, known) {
                found.insert(expr.id);
            }
        }
        for_each_child_known(expr, known, &mut |child, known| visit(child, known, found));
    }
    let mut found = BTreeSet::new();
    visit(expr, &Known { outer: None, indices: None, sizes: Vec::new(), equal: Vec::new() }, &mut found);
    found
}

/// How many nodes of `expr` can themselves raise an error ([`fails_here`]), every size for
/// which `nonzero` holds known not to be zero (the sizes of loops inside `expr` are not taken
/// as known: the count is the same for a node wherever it is, so the count of a part is at
/// most that of a whole holding it).
pub fn failing_sites(expr: &Expr, nonzero: &dyn Fn(&Expr) -> bool) -> usize {
    let mut count = usize::from(fails_here_where(expr, Some(nonzero), None));
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
    fails_here_where(expr, None, None)
}

fn fails_here_where(
    expr: &Expr,
    nonzero: Option<&dyn Fn(&Expr) -> bool>,
    is_index: Option<&dyn Fn(VarId) -> bool>,
) -> bool {
    let nonzero_size = |size: &Expr| nonzero.is_some_and(|nonzero| nonzero(size));
    let never_negative =
        |size: &Expr| is_length(size) || is_index.is_some_and(|is_index| counts_from_an_index(size, is_index));
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
        | ExprKind::Reduce(node::Reduce { size, .. }) => !never_negative(size),
        ExprKind::Fold(node::Fold { count, .. }) | ExprKind::Scan(node::Scan { count, .. }) => !never_negative(count),
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
        Literal::Float(value, as_f32) if scalar.is_float() => {
            let value = if scalar == Scalar::F32 { f64::from(as_f32) } else { value };
            Some(Constant::Float(if negated { -value } else { value }))
        }
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
