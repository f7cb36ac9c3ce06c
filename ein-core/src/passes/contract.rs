//! Contraction recognition: a loop nest that is an einsum of two or three arrays becomes one
//! [`Contraction`] node, which code generation hands to a tuned GEMM (Ein's and feinsum's
//! "contractions are a primitive").
//!
//! The pattern, after fusion and let-lifting have run:
//!
//! ```text
//! for o1, o2, … { [scale *] sum k1, k2, … { a[…][l…] * b[…][l…] [* c[…][l…]] } [* scale] }
//! ```
//!
//! (the factors may also be named first, `sum k { let x = a[i, k]; let y = b[k, j]; x * y }`,
//! and grouped either way, `a * (b * c)`), where
//! - every `l` is a plain label (an `o` or a `k`), no label twice in one operand, every `o` in
//!   at least one operand and every `k` in at least two;
//! - `a[…]` and `b[…]` (the operands: a parameter, a `let`-bound array, or a sub-array such as
//!   `a[p]` with an outer index `p`) mention no label, contain no loop and cannot fail, and so
//!   may be evaluated once instead of once per element; likewise the optional `scale`;
//! - every read is proven in bounds (a clamped read would need its clamp in the kernel);
//! - the element type is `f32`, `f64` or a type parameter (the runtime dispatches it: a GEMM
//!   for floats, plain loops for integers);
//! - the sizes of the `k`s cannot fail (array lengths or literals): an empty output never
//!   evaluates them, the contraction always does.
//!
//! A whole-array dot product (`sum k { x[k] * y[k] }`, no `for`) is not a contraction: the
//! loop code generator already runs it as a parallel, vectorised reduction, which measured
//! as fast as a hand-written one, and faster than a call into a serial dot kernel.
//!
//! Anything else keeps its loops: min-plus products (`min k { a + b }`), non-linear operands
//! (`exp(a[i, k]) * b[k, j]`), integer element types, clamped or affine reads, a factor inside
//! the sum (`sum k { s * a * b }`, which would round differently if moved out).
//!
//! Semantics are preserved exactly up to the order of float additions: the contraction sums
//! the same products (see `Contraction`), then multiplies by `scale` as the program did. A
//! chain of three is computed as two pairwise contractions, in the order the runtime finds
//! cheapest for the sizes at hand (`ein-runtime/src/chain.rs`), which also regroups each
//! product (`(a b) c` or `a (b c)`): as with summation order, results may differ in rounding.
//!
//! A contraction inside an element-wise consumer (`for i, j { relu(sum k { … } + bias[j]) }`,
//! `sum k { … } / n`, `-sum k { … }`, as written or as fusion by inlining left it) is taken
//! apart: the sum becomes a contraction of its own, computed first into an array, and the
//! consumer reads it (`let c = contract(…); for i, j { relu(c[i, j] + bias[j]) }`). The sum
//! cannot fail (its operands and sizes cannot), so computing it before the rest of each
//! element changes nothing observable; the consumer's own arithmetic stays as written, so a
//! division by `n` stays a division (no reciprocal that would round differently).

use super::purity::{has_loop, may_fail};
use crate::ir::node;
use crate::ir::visit::free_vars;
use crate::ir::{
    Bounds, Contraction, Expr, ExprKind, Label, Literal, Operand, Program, ReduceOp, Scalar, ScalarType, Scale, Side,
    VarId,
};
use crate::ops::BinaryOp;
use std::collections::BTreeSet;

pub fn contract(mut program: Program) -> Program {
    let body = program.body.take();
    program.body = rewrite(&mut program, body);
    program
}

/// Replaces every contraction in `expr`, outermost first.
fn rewrite(program: &mut Program, mut expr: Expr) -> Expr {
    if matches!(expr.kind, ExprKind::For(_)) {
        if let Some(contraction) = recognise(program, &expr) {
            return contraction;
        }
        if let Some(split) = split_consumer(program, &mut expr) {
            return split;
        }
    }
    expr.rewrite_children(|child| rewrite(program, child));
    expr
}

/// `for o… { E[sum …] }` with `for o… { sum … }` a contraction: `let c = contract(…);
/// for o… { E[c[o…]] }` (see the module documentation), the consumer rewritten again for any
/// further sums. `None` (and `nest` unchanged) when no sum of the element is a contraction.
fn split_consumer(program: &mut Program, nest: &mut Expr) -> Option<Expr> {
    let mut chain: Vec<(VarId, Expr)> = Vec::new();
    let mut element = &*nest;
    while let ExprKind::For(node::For { index, size, body }) = &element.kind {
        chain.push((*index, (**size).clone()));
        element = body;
    }
    let inside = crate::ir::visit::bound_vars(element);
    let sum = element_sums(element).into_iter().find_map(|(path, sum)| {
        // The sum is computed before the element: it must not read what the element binds.
        if !free_vars(sum).is_disjoint(&inside) {
            return None;
        }
        // `for o… { sum }`, its binders fresh: the contraction keeps it as its loop nest, next
        // to the consumer's own.
        let mut alone = chain.iter().rev().fold(sum.clone(), |body, (index, size)| {
            let ty = body.ty.with_outer_axis();
            let span = body.span;
            Expr::new(
                ExprKind::For(node::For { index: *index, size: Box::new(size.clone()), body: Box::new(body) }),
                ty,
                span,
            )
        });
        crate::ir::visit::rename_binders(&mut alone, &mut program.vars);
        let contraction = recognise(program, &alone)?;
        // Row-wise dots (every output label in every operand) stay with the loop code, which
        // runs them as fast fused reductions; only a product with a free axis is worth it.
        let ExprKind::Contract(found) = &contraction.kind else { return None };
        let batch_only =
            (0..found.outputs).all(|label| found.operands.iter().all(|operand| operand.axes.contains(&label)));
        (!batch_only).then_some((path, contraction))
    });
    let (path, contraction) = sum?;
    let ty = contraction.ty.clone();
    let span = contraction.span;
    let name = format!("{}contracted", crate::ir::SYNTHETIC_PREFIX);
    let var = program.fresh_var(crate::ir::VarInfo { name, ty: ty.clone(), kind: crate::ir::VarKind::Let, span });
    // `c[o1][o2]…`: in bounds, as `c` has exactly the nest's sizes.
    let read = chain.iter().fold(Expr::new(ExprKind::Var(var), ty, span), |array, (index, _)| {
        let ty = array.ty.indexed().unwrap_or_else(|| array.ty.clone());
        let index = Expr::new(ExprKind::Var(*index), crate::ir::Type::I64, span);
        let kind =
            ExprKind::Index(node::Index { array: Box::new(array), index: Box::new(index), bounds: Bounds::Proven });
        Expr::new(kind, ty, span)
    });
    // The element is each `for`'s second child (after its size), `chain.len()` times down.
    let full_path: Vec<usize> = std::iter::repeat_n(1, chain.len()).chain(path).collect();
    replace_at(nest, &full_path, read);
    let consumer = rewrite(program, nest.take());
    let ty = consumer.ty.clone();
    Some(Expr::new(ExprKind::Let(node::Let { var, value: Box::new(contraction), body: Box::new(consumer) }), ty, span))
}

/// The sums of an element that are computed once per element (not inside a loop of the
/// element), in evaluation order, each with its path from the element (child positions).
fn element_sums(element: &Expr) -> Vec<(Vec<usize>, &Expr)> {
    fn visit<'e>(expr: &'e Expr, path: &mut Vec<usize>, found: &mut Vec<(Vec<usize>, &'e Expr)>) {
        match &expr.kind {
            ExprKind::Reduce(node::Reduce { op: ReduceOp::Sum, .. }) => found.push((path.clone(), expr)),
            ExprKind::For(_)
            | ExprKind::Reduce(_)
            | ExprKind::Fold(_)
            | ExprKind::Scan(_)
            | ExprKind::Accum(_)
            | ExprKind::Contract(_) => {}
            _ => {
                let mut position = 0;
                expr.for_each_child(|child| {
                    path.push(position);
                    visit(child, path, found);
                    path.pop();
                    position += 1;
                });
            }
        }
    }
    let mut found = Vec::new();
    visit(element, &mut Vec::new(), &mut found);
    found
}

/// Replaces the node at `path` (child positions from `expr`, as [`element_sums`] gives them) by
/// `by`.
fn replace_at(expr: &mut Expr, path: &[usize], by: Expr) {
    let Some((first, rest)) = path.split_first() else {
        *expr = by;
        return;
    };
    let mut by = Some(by);
    let mut position = 0;
    expr.for_each_child_mut(|child| {
        if position == *first {
            if let Some(by) = by.take() {
                replace_at(child, rest, by);
            }
        }
        position += 1;
    });
}

/// The contraction that `expr` is, if it is one (see the module documentation).
fn recognise(program: &Program, expr: &Expr) -> Option<Expr> {
    let mut labels: Vec<(VarId, &Expr)> = Vec::new();
    let mut node = expr;
    while let ExprKind::For(node::For { index, size, body }) = &node.kind {
        labels.push((*index, size));
        node = body;
    }
    let outputs = labels.len();

    let is_sum = |expr: &Expr| matches!(expr.kind, ExprKind::Reduce(node::Reduce { op: ReduceOp::Sum, .. }));
    let (scale, mut node) = match &node.kind {
        ExprKind::Binary(node::Binary { op: BinaryOp::Mul, lhs, rhs }) if is_sum(rhs) && !is_sum(lhs) => {
            (Some(Scale { factor: (**lhs).clone(), side: Side::Left }), &**rhs)
        }
        ExprKind::Binary(node::Binary { op: BinaryOp::Mul, lhs, rhs }) if is_sum(lhs) && !is_sum(rhs) => {
            (Some(Scale { factor: (**rhs).clone(), side: Side::Right }), &**lhs)
        }
        _ => (None, node),
    };
    // The sums, and `let x = a[i, k]; let y = b[k, j]; x * y`: reads bound to names, before or
    // between the sums (hoisting leaves them where they depend on no inner label); each must
    // be used once, as a factor, so nothing is dropped or repeated.
    let mut reads: Vec<(VarId, &Expr)> = Vec::new();
    loop {
        match &node.kind {
            ExprKind::Reduce(node::Reduce { op: ReduceOp::Sum, index, size, body }) => {
                let cannot_fail = match &size.kind {
                    ExprKind::Len(_) => true,
                    ExprKind::Literal(Literal::Int(value)) => *value >= 0,
                    _ => false,
                };
                // A sum's range may depend on outer indices (`sum k in 0..i + 1`); a label's
                // size is evaluated once, before the contraction, so it must not.
                let regular = crate::ir::visit::free_vars(size).iter().all(|var| {
                    !matches!(program.var(*var).kind, crate::ir::VarKind::Index | crate::ir::VarKind::Accumulator)
                });
                if !cannot_fail || !regular {
                    return None;
                }
                labels.push((*index, size));
                node = body;
            }
            ExprKind::Let(node::Let { var, value, body }) => {
                reads.push((*var, value));
                node = body;
            }
            _ => break,
        }
    }
    if labels.len() == outputs {
        return None;
    }
    let mut products = Vec::new();
    flatten_product(node, &mut products);
    if !(2..=3).contains(&products.len()) {
        return None;
    }
    let mut unused = reads.clone();
    let mut factor = |expr: &'_ Expr| -> Option<Expr> {
        match expr.kind {
            ExprKind::Var(var) if reads.iter().any(|(bound, _)| *bound == var) => {
                let position = unused.iter().position(|(bound, _)| *bound == var)?;
                Some(unused.remove(position).1.clone())
            }
            _ => Some(expr.clone()),
        }
    };
    let factors: Vec<Expr> = products.into_iter().map(&mut factor).collect::<Option<_>>()?;
    if !unused.is_empty() {
        return None;
    }
    let elem = node.ty.as_scalar()?;
    if let ScalarType::Known(scalar) = elem {
        if !matches!(scalar, Scalar::F32 | Scalar::F64) {
            return None;
        }
    }

    // What an operand or the scale must not mention: the labels, and the names just removed.
    let bound_inside: BTreeSet<VarId> =
        labels.iter().map(|(var, _)| *var).chain(reads.iter().map(|(var, _)| *var)).collect();
    let operands: Vec<Operand> =
        factors.iter().map(|factor| operand(factor, &labels, &bound_inside)).collect::<Option<_>>()?;
    if let Some(scale) = &scale {
        if !movable(&scale.factor, &bound_inside) {
            return None;
        }
    }
    let occurrences = |label: usize| operands.iter().filter(|operand| operand.axes.contains(&label)).count();
    for label in 0..labels.len() {
        let needed = if label < outputs { 1 } else { 2 };
        if occurrences(label) < needed {
            return None;
        }
    }

    let labels = labels
        .into_iter()
        .map(|(var, size)| Label { name: program.var(var).name.clone(), size: size.clone() })
        .collect();
    let loops = Box::new(expr.clone());
    let contraction = Contraction { labels, outputs, operands, scale, elem, loops };
    Some(Expr::new(ExprKind::Contract(Box::new(contraction)), expr.ty.clone(), expr.span))
}

/// The factors of a product, in order: `a * b * c` and `a * (b * c)` give `[a, b, c]`.
fn flatten_product<'e>(expr: &'e Expr, factors: &mut Vec<&'e Expr>) {
    match &expr.kind {
        ExprKind::Binary(node::Binary { op: BinaryOp::Mul, lhs, rhs }) => {
            flatten_product(lhs, factors);
            flatten_product(rhs, factors);
        }
        _ => factors.push(expr),
    }
}

/// An operand `a[e…][l…]`: a chain of proven reads whose trailing indices are distinct labels
/// and whose leading part `a[e…]` (the operand's array) may be evaluated once.
fn operand(read: &Expr, labels: &[(VarId, &Expr)], bound_inside: &BTreeSet<VarId>) -> Option<Operand> {
    let mut axes = Vec::new();
    let mut array = read;
    while let ExprKind::Index(node::Index { array: inner, index, bounds }) = &array.kind {
        let ExprKind::Var(var) = index.kind else { break };
        let Some(label) = labels.iter().position(|(label, _)| *label == var) else { break };
        if *bounds != Bounds::Proven || axes.contains(&label) {
            return None;
        }
        axes.push(label);
        array = inner;
    }
    axes.reverse();
    if axes.is_empty() || array.ty.rank() != axes.len() || !movable(array, bound_inside) {
        return None;
    }
    // Reads of the leading part must be proven too: the contraction reads without checks.
    let mut prefix = array;
    while let ExprKind::Index(node::Index { array: inner, bounds, .. }) = &prefix.kind {
        if *bounds != Bounds::Proven {
            return None;
        }
        prefix = inner;
    }
    Some(Operand { array: array.clone(), axes })
}

/// Whether `expr` may be evaluated once, before the loops it stood in: it mentions none of
/// their labels, contains no loop (so moving it costs nothing) and cannot fail.
fn movable(expr: &Expr, bound_inside: &BTreeSet<VarId>) -> bool {
    free_vars(expr).is_disjoint(bound_inside) && !has_loop(expr) && !may_fail(expr)
}
