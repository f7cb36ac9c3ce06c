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
//! A factor that is not a read but an expression of the labels — `exp(a[i, k]) * b[k, j]`, a
//! covariance's `(x[i, a] - m[a]) * (x[i, b] - m[b])` — is computed first into an array over
//! the labels it mentions, when it leaves out an output label (so the loops would compute it
//! again for each value of that label), contains no loop and cannot fail; the contraction
//! then reads that array, and each product is still the product as written (`f * g`, split
//! where the sum's body was last multiplied).
//!
//! A scalar inside the sum (`sum k { s * a[i, k] * b[k, j] }`) stays there: it is part of the
//! computed factor `s * a[i, k]`, never moved out of the sum (which would round differently).
//!
//! Anything else keeps its loops: min-plus products (`min k { a + b }`), integer element
//! types, clamped reads, factors that may fail (a gather) or would not save work, and batches
//! of dot products, where every output label is in every operand (`for c { sum r { x[r, c] *
//! y[r, c] } }`: no operand has an axis of its own, so there is no matrix product).
//!
//! Semantics are preserved exactly up to the order of float additions: the contraction sums
//! the same products (see `Contraction`), then multiplies by `scale` as the program did. A
//! chain of three is computed as two pairwise contractions, in the order the runtime finds
//! cheapest for the sizes at hand (`ein-runtime/src/chain.rs`), which also regroups each
//! product (`(a b) c` or `a (b c)`): as with summation order, results may differ in rounding.
//!
//! A nest whose rows first compute scalars of their own (`for i { let m = max k { s[i, k] };
//! let z = …; for c { sum j { exp(s[i, j] - m) / z * v[j, c] } } }`, a softmax times a matrix
//! written in one nest) has those scalars computed first into arrays over the rows, each name
//! then read from its array; when what remains is a contraction (or holds one), the nest is
//! one product instead of one vector–matrix product per row. Only values that cannot fail are
//! computed ahead, so no error is added, dropped or reordered.
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
    VarId, VarInfo,
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
        if let Some(lifted) = lift_row_lets(program, &expr) {
            return lifted;
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
        let sizes: Vec<(VarId, &Expr)> = chain.iter().map(|(index, size)| (*index, size)).collect();
        let mut alone = nest_around(&sizes, sum.clone());
        crate::ir::visit::rename_binders(&mut alone, &mut program.vars);
        let contraction = recognise(program, &alone)?;
        // Row-wise dots (every output label in every operand) stay with the loop code, which
        // runs them as fast fused reductions; only a product with a free axis is worth it.
        let mut found = &contraction;
        while let ExprKind::Let(node::Let { body, .. }) = &found.kind {
            found = body;
        }
        let ExprKind::Contract(found) = &found.kind else { return None };
        let batch_only =
            (0..found.outputs).all(|label| found.operands.iter().all(|operand| operand.axes.contains(&label)));
        // So does a matrix–vector product along the matrix's rows: the contraction would run
        // the same loops for contiguous rows (`Gen::contraction`), but as an array of its own,
        // where left in the consumer its element is used as it is computed (the logistic
        // loss `1 / (1 + exp(-sum k { x[i, k] * w[k] }))`, 2^20 × 64 f64, two threads: 16.2 →
        // 14.2 ms, the product alone 11.5 either way).
        (!batch_only && found.matvec_matrix().is_none()).then_some((path, contraction))
    });
    let (path, contraction) = sum?;
    let ty = contraction.ty.clone();
    let span = contraction.span;
    let name = format!("{}contracted", crate::ir::SYNTHETIC_PREFIX);
    let var = program.fresh_var(crate::ir::VarInfo { name, ty: ty.clone(), kind: crate::ir::VarKind::Let, span });
    let indices: Vec<VarId> = chain.iter().map(|(index, _)| *index).collect();
    let read = read_at(var, ty, &indices, span);
    // The element is each `for`'s second child (after its size), `chain.len()` times down.
    let full_path: Vec<usize> = std::iter::repeat_n(1, chain.len()).chain(path).collect();
    replace_at(nest, &full_path, read);
    let consumer = rewrite(program, nest.take());
    let ty = consumer.ty.clone();
    Some(Expr::new(ExprKind::Let(node::Let { var, value: Box::new(contraction), body: Box::new(consumer) }), ty, span))
}

/// `array[o1][o2]…` for the nest indices `o…`: in bounds, as `array` has exactly the nest's
/// sizes.
fn read_at(array: VarId, ty: crate::ir::Type, indices: &[VarId], span: proc_macro2::Span) -> Expr {
    indices.iter().fold(Expr::new(ExprKind::Var(array), ty, span), |array, index| {
        let ty = array.ty.indexed().unwrap_or_else(|| array.ty.clone());
        let index = Expr::new(ExprKind::Var(*index), crate::ir::Type::I64, span);
        let kind =
            ExprKind::Index(node::Index { array: Box::new(array), index: Box::new(index), bounds: Bounds::Proven });
        Expr::new(kind, ty, span)
    })
}

/// `for o… { let x = v; …; for … { … } }` where the inner nest, with each scalar `x` read from
/// an array of its values over `o…` computed first, is a contraction or holds one that
/// [`split_consumer`] takes out: those arrays (`let X = for o… { v }`, later values reading
/// the earlier arrays), then that contraction. Otherwise a row's own scalars (softmax's maximum
/// and total, a norm) would leave one vector–matrix product per row. Only values that cannot
/// fail are computed ahead (so no error is added or reordered); an array `let` is taken only
/// when it is a read that cannot fail (`let r = a[i]`), put in place of its name.
fn lift_row_lets(program: &mut Program, nest: &Expr) -> Option<Expr> {
    let mut chain: Vec<(VarId, &Expr)> = Vec::new();
    let mut element = nest;
    while let ExprKind::For(node::For { index, size, body }) = &element.kind {
        chain.push((*index, size));
        element = body;
    }
    let mut lets: Vec<(VarId, &Expr)> = Vec::new();
    while let ExprKind::Let(node::Let { var, value, body }) = &element.kind {
        lets.push((*var, value));
        element = body;
    }
    let liftable = |value: &Expr| {
        // A scalar or a tuple of them (computed into an array), or a row read in place; never
        // a tuple holding an array (there are no arrays of those).
        !may_fail(value)
            && (!value.ty.has_array()
                || (value.ty.rank() > 0
                    && !has_loop(value)
                    && matches!(value.kind, ExprKind::Index(_) | ExprKind::Var(_))))
    };
    if lets.is_empty() || !matches!(element.kind, ExprKind::For(_)) || !lets.iter().all(|(_, value)| liftable(value)) {
        return None;
    }
    let indices: Vec<VarId> = chain.iter().map(|(index, _)| *index).collect();
    let declared = program.vars.len();
    // Each name's replacement (a read of its array, or the row it names), and the arrays.
    let mut replacements: Vec<(VarId, Expr)> = Vec::new();
    let mut arrays: Vec<(VarId, Expr)> = Vec::new();
    for (var, value) in lets {
        let mut value = value.clone();
        for (earlier, replacement) in &replacements {
            crate::ir::visit::substitute(&mut value, *earlier, replacement);
        }
        if value.ty.has_array() {
            replacements.push((var, value));
            continue;
        }
        let mut values = nest_around(&chain, value);
        crate::ir::visit::rename_binders(&mut values, &mut program.vars);
        let (ty, span) = (values.ty.clone(), values.span);
        let prefix = crate::ir::SYNTHETIC_PREFIX;
        let name = format!("{prefix}{}", program.var(var).name.trim_start_matches(prefix));
        let array = program.fresh_var(crate::ir::VarInfo { name, ty: ty.clone(), kind: crate::ir::VarKind::Let, span });
        replacements.push((var, read_at(array, ty, &indices, span)));
        arrays.push((array, values));
    }
    let mut inner = element.clone();
    for (var, replacement) in &replacements {
        crate::ir::visit::substitute(&mut inner, *var, replacement);
    }
    let mut candidate = nest_around(&chain, inner);
    let found = recognise(program, &candidate).or_else(|| split_consumer(program, &mut candidate));
    let Some(contraction) = found else {
        // Nothing to gain: forget the names declared for the attempt.
        program.vars.truncate(declared);
        return None;
    };
    Some(arrays.into_iter().rev().fold(contraction, |body, (var, value)| {
        let (ty, span) = (body.ty.clone(), body.span);
        Expr::new(ExprKind::Let(node::Let { var, value: Box::new(value), body: Box::new(body) }), ty, span)
    }))
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

/// The contraction that `expr` is, if it is one (see the module documentation), after the
/// `let`s of any factors computed into arrays of their own ([`computed_factors`]).
fn recognise(program: &mut Program, expr: &Expr) -> Option<Expr> {
    let plan = plan(&program.vars, expr)?;
    Some(build(program, expr, plan))
}

/// Whether `contract` will turn the comprehension nest `nest` (or a sum of its element, with
/// the consumer taken apart) into a contraction of a factor it computes into an array first:
/// `share-steps` then leaves the nest alone, as its array of that factor per row would leave
/// one small product per row where `contract` makes one product of the whole nest.
pub(super) fn computes_factors(vars: &[VarInfo], nest: &Expr) -> bool {
    let computes = |nest: &Expr| plan(vars, nest).is_some_and(|plan| !plan.computed.is_empty());
    if !matches!(nest.kind, ExprKind::For(_)) {
        return false;
    }
    if computes(nest) {
        return true;
    }
    let mut chain: Vec<(VarId, &Expr)> = Vec::new();
    let mut element = nest;
    while let ExprKind::For(node::For { index, size, body }) = &element.kind {
        chain.push((*index, size));
        element = body;
    }
    let inside = crate::ir::visit::bound_vars(element);
    element_sums(element)
        .into_iter()
        .any(|(_, sum)| free_vars(sum).is_disjoint(&inside) && computes(&nest_around(&chain, sum.clone())))
}

/// `for o… { body }` over the indices and sizes of `chain` (outermost first).
fn nest_around(chain: &[(VarId, &Expr)], body: Expr) -> Expr {
    chain.iter().rev().fold(body, |body, (index, size)| {
        let (ty, span) = (body.ty.with_outer_axis(), body.span);
        Expr::new(
            ExprKind::For(node::For { index: *index, size: Box::new((*size).clone()), body: Box::new(body) }),
            ty,
            span,
        )
    })
}

/// What [`recognise`] found: the labels (outputs first) with their sizes, the operands (a
/// computed factor's array still the factor itself), the factors to compute first (operand
/// positions and values), the scale and the element type.
struct Plan {
    labels: Vec<(VarId, Expr)>,
    outputs: usize,
    operands: Vec<Operand>,
    computed: Vec<(usize, Expr)>,
    scale: Option<Scale>,
    elem: ScalarType,
}

/// The [`Plan`] of the contraction `expr` is, if it is one.
fn plan(vars: &[VarInfo], expr: &Expr) -> Option<Plan> {
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
                    !matches!(vars[var.0 as usize].kind, crate::ir::VarKind::Index | crate::ir::VarKind::Accumulator)
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
    let read_operands: Option<Vec<Operand>> =
        factors.iter().map(|factor| operand(factor, &labels, &bound_inside)).collect();
    let (operands, computed) = match read_operands {
        Some(operands) => (operands, Vec::new()),
        None if reads.is_empty() => computed_factors(node, &labels, outputs, &bound_inside)?,
        None => return None,
    };
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
    // Every output label in every operand: a batch of dot products (`for c { sum r { x[r, c]
    // * y[r, c] } }`, column dots), no operand with an axis of its own, so no matrix product
    // for a GEMM; the loops run it down the columns side by side (1.0–1.3× a hand loop, the
    // runtime's batch of 1 × r by r × 1 products 9–14×).
    if (0..outputs).all(|label| occurrences(label) == operands.len()) {
        return None;
    }

    let labels = labels.into_iter().map(|(var, size)| (var, size.clone())).collect();
    Some(Plan { labels, outputs, operands, computed, scale, elem })
}

/// The contraction of `plan` (found in `expr`), after the `let`s of its computed factors.
fn build(program: &mut Program, expr: &Expr, plan: Plan) -> Expr {
    let Plan { labels, outputs, operands, computed, scale, elem } = plan;
    // The computed factors' arrays, each `for l… { factor }` over its labels (binders fresh);
    // two equal up to the labels' names (`x[i, a] - m[a]` and `x[i, b] - m[b]`) are one.
    let mut operands = operands;
    let mut lets: Vec<(VarId, Expr)> = Vec::new();
    let mut computed_keys: Vec<(String, VarId)> = Vec::new();
    for (position, factor) in computed {
        let axes: Vec<(VarId, &Expr)> =
            operands[position].axes.iter().map(|&axis| (labels[axis].0, &labels[axis].1)).collect();
        let mut value = nest_around(&axes, factor);
        let key = crate::ir::visit::alpha_key(&value);
        if let Some((_, var)) = computed_keys.iter().find(|(known, _)| *known == key) {
            operands[position].array = Expr::new(ExprKind::Var(*var), value.ty.clone(), value.span);
            continue;
        }
        crate::ir::visit::rename_binders(&mut value, &mut program.vars);
        let name = format!("{}factor", crate::ir::SYNTHETIC_PREFIX);
        let (ty, span) = (value.ty.clone(), value.span);
        let var = program.fresh_var(crate::ir::VarInfo { name, ty: ty.clone(), kind: crate::ir::VarKind::Let, span });
        operands[position].array = Expr::new(ExprKind::Var(var), ty, span);
        computed_keys.push((key, var));
        lets.push((var, value));
    }
    let labels = labels.into_iter().map(|(var, size)| Label { name: program.var(var).name.clone(), size }).collect();
    let loops = Box::new(expr.clone());
    let contraction = Contraction { labels, outputs, operands, scale, elem, loops };
    let contraction = Expr::new(ExprKind::Contract(Box::new(contraction)), expr.ty.clone(), expr.span);
    lets.into_iter().rev().fold(contraction, |body, (var, value)| {
        let (ty, span) = (body.ty.clone(), body.span);
        Expr::new(ExprKind::Let(node::Let { var, value: Box::new(value), body: Box::new(body) }), ty, span)
    })
}

/// The operands of `product` = `f * g` (the sum's body, split where it was written last)
/// when a factor is not a read but an expression of the labels: such a factor is computed
/// first into an array over the labels it mentions, in the order its reads use them
/// ([`labels_in_order`]; `(x[i, a] - m[a]) *
/// (x[i, b] - m[b])`, a covariance, becomes a product of two centred copies of `x`). Each
/// product of the sum is then exactly `f * g` as written. Only where that saves work: the
/// factor leaves out an output label (the loops compute it again for every value of that
/// label), contains no loop and cannot fail (so computing it for every element of its array,
/// even for an empty output, changes nothing observable). Returns the operands (a computed
/// factor's array still to be bound: its position and value are in the second part).
#[allow(clippy::type_complexity)]
fn computed_factors(
    product: &Expr,
    labels: &[(VarId, &Expr)],
    outputs: usize,
    bound_inside: &BTreeSet<VarId>,
) -> Option<(Vec<Operand>, Vec<(usize, Expr)>)> {
    let ExprKind::Binary(node::Binary { op: BinaryOp::Mul, lhs, rhs }) = &product.kind else {
        return None;
    };
    let label_vars: BTreeSet<VarId> = labels.iter().map(|(var, _)| *var).collect();
    let mut operands = Vec::new();
    let mut computed = Vec::new();
    for (position, factor) in [lhs, rhs].into_iter().enumerate() {
        if let Some(read) = operand(factor, labels, bound_inside) {
            operands.push(read);
            continue;
        }
        let free = free_vars(factor);
        // It may read the labels, and what is bound outside the loops.
        if !free.iter().all(|var| label_vars.contains(var) || !bound_inside.contains(var)) {
            return None;
        }
        let axes = labels_in_order(factor, labels);
        let leaves_out_an_output = (0..outputs).any(|label| !axes.contains(&label));
        let sizes_cannot_fail = axes.iter().all(|&label| !may_fail(labels[label].1));
        if axes.is_empty() || !leaves_out_an_output || !sizes_cannot_fail || has_loop(factor) || may_fail(factor) {
            return None;
        }
        // A placeholder array until the caller binds the computed one.
        operands.push(Operand { array: factor.as_ref().clone(), axes });
        computed.push((position, factor.as_ref().clone()));
    }
    (!computed.is_empty()).then_some((operands, computed))
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

/// The labels `expr` mentions (positions in `labels`), in the order they first occur in it:
/// a computed factor's array takes its axes in that order, so that computing it reads its
/// arrays along their own axes (`x[i, a] - m[a]` gives axes `i, a`).
fn labels_in_order(expr: &Expr, labels: &[(VarId, &Expr)]) -> Vec<usize> {
    fn visit(expr: &Expr, labels: &[(VarId, &Expr)], found: &mut Vec<usize>) {
        if let ExprKind::Var(var) = expr.kind {
            if let Some(label) = labels.iter().position(|(label, _)| *label == var) {
                if !found.contains(&label) {
                    found.push(label);
                }
            }
        }
        expr.for_each_child(|child| visit(child, labels, found));
    }
    let mut found = Vec::new();
    visit(expr, labels, &mut found);
    found
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
