//! Sibling reductions fused (horizontal fusion by computing together): reductions evaluated
//! together (fields of one tuple or record; outside loops also the values of neighbouring
//! `let`s and the operands of one expression) with the same operator over the same range, and
//! whose steps read a common term, become one reduction of a tuple. The case it is for is Parboil's MRI-Q
//!
//! ```text
//! { re: sum k { phi[k] * cos(arg(k)) }, im: sum k { phi[k] * sin(arg(k)) } }
//! ```
//!
//! which, as two reductions, runs the loop twice and computes the argument, its range
//! reduction and the sine–cosine polynomial pair twice per term; after this pass
//!
//! ```text
//! let t = sum k' { (phi[k'] * cos(arg(k')), phi[k'] * sin(arg(k'))) }
//! { re: t.0, im: t.1 }
//! ```
//!
//! one loop reads each `k` once, and LLVM computes the shared argument (and ein's `sin` and
//! `cos`, which share their reduction and polynomials) once.
//!
//! Meaning, exactly: a reduction of a tuple reduces each component on its own, as if alone, with
//! the same accumulators and grouping (README, "Reductions of tuples and records"), so every
//! component has the bits it had. Fused steps and their range may not fail (which error a
//! program reports must not change when the steps interleave), and only `sum`, `prod`, `max`
//! and `min` of scalars are fused (the operators a tuple reduction has). The fused reduction is
//! bound before the tuple, or at the top of the region it was found in (see
//! [`outside_loops`]); it cannot fail, so nothing else reported there changes.
//! Contractions are fused no more: the pass runs after `contract`, which has already handed
//! them to the GEMM.

use super::bind_lets as bind;
use super::purity::{is_loop, may_fail};
use crate::ir::node;
use crate::ir::visit::{alpha_key, free_vars, mentions, substitute};
use crate::ir::{Expr, ExprKind, Program, ReduceOp, Type, VarId, VarInfo, VarKind, SYNTHETIC_PREFIX};
use proc_macro2::Span;
use std::collections::BTreeSet;

pub fn fuse_reductions(program: Program) -> Program {
    super::rewrite_body(program, |body, vars| {
        let body = tuples(body, vars);
        outside_loops(body, vars)
    })
}

/// Everywhere, bottom-up: the reductions among a tuple's fields.
fn tuples(mut expr: Expr, vars: &mut Vec<VarInfo>) -> Expr {
    expr.rewrite_children(|child| tuples(child, vars));
    let span = expr.span;
    let mut lets = Vec::new();
    while let ExprKind::Tuple(fields) = &mut expr.kind {
        let Some(group) = fusable_group(&fields.iter().collect::<Vec<_>>()) else { break };
        let reductions = group.iter().map(|&position| as_reduction(&fields[position])).collect();
        let (fused, value, reads) = fuse(reductions, span, vars);
        for (&position, read) in group.iter().zip(reads) {
            fields[position] = Expr { span: fields[position].span, ..read };
        }
        lets.push((fused, value));
    }
    bind(lets, expr)
}

/// The regions outside every loop (the body, and what follows each size check there): every
/// reduction a region evaluates directly, not behind a size check (a read there may be
/// proven in bounds by the check), and not reading a `let` of the region (the fused
/// reduction is bound at the region's top): the values of `let s = sum k { a }; let q = sum k {
/// b }; q / n - s * s / (n * n)`, the operands of `sum j { a } / sum j { b }`. Not inside a
/// loop, where separate reductions of an element may run side by side with the neighbouring
/// elements' (code generation) and a fused one would not: there the data of one element is
/// small, and passes over it cheap.
fn outside_loops(mut expr: Expr, vars: &mut Vec<VarInfo>) -> Expr {
    checked_parts(&mut expr, vars);
    let span = expr.span;
    let mut lets = Vec::new();
    loop {
        let mut candidates = Vec::new();
        for_each_candidate(&mut expr, &mut Vec::new(), &mut |candidate| candidates.push(candidate.clone()));
        let Some(group) = fusable_group(&candidates.iter().collect::<Vec<_>>()) else { break };
        let reductions = group.iter().map(|&position| as_reduction(&candidates[position])).collect();
        let (fused, value, reads) = fuse(reductions, span, vars);
        // Each member replaced by its read, keeping the member's span.
        let mut reads = group.iter().copied().zip(reads).peekable();
        let mut seen = 0;
        for_each_candidate(&mut expr, &mut Vec::new(), &mut |candidate| {
            if reads.peek().is_some_and(|(position, _)| *position == seen) {
                let (_, read) = reads.next().expect("peeked");
                *candidate = Expr { span: candidate.span, ..read };
            }
            seen += 1;
        });
        lets.push((fused, value));
    }
    bind(lets, expr)
}

/// Runs [`outside_loops`] on what follows each size check in `expr` outside every loop.
fn checked_parts(expr: &mut Expr, vars: &mut Vec<VarInfo>) {
    if is_loop(expr) {
        return;
    }
    if let ExprKind::Assert(node::Assert { body, .. }) = &mut expr.kind {
        **body = outside_loops(body.take(), vars);
    } else {
        expr.for_each_child_mut(|child| checked_parts(child, vars));
    }
}

/// A fusion group's member, which [`fusion_key`] accepted.
fn as_reduction(expr: &Expr) -> node::Reduce {
    match &expr.kind {
        ExprKind::Reduce(reduction) => reduction.clone(),
        _ => unreachable!("fusion groups are reductions"),
    }
}

/// Whether `expr` is a candidate of the region being walked, `bound` the `let`s entered.
fn is_candidate(expr: &Expr, bound: &[VarId]) -> bool {
    fusion_key(expr).is_some() && free_vars(expr).iter().all(|var| !bound.contains(var))
}

/// Visits the candidates of the region `expr` in evaluation order (`bound`: the `let`s entered).
fn for_each_candidate(expr: &mut Expr, bound: &mut Vec<VarId>, visit: &mut dyn FnMut(&mut Expr)) {
    if is_candidate(expr, bound) {
        visit(expr);
        return;
    }
    if is_loop(expr) || matches!(expr.kind, ExprKind::Assert(_)) {
        return;
    }
    if let ExprKind::Let(node::Let { var, value, body }) = &mut expr.kind {
        for_each_candidate(value, bound, visit);
        bound.push(*var);
        for_each_candidate(body, bound, visit);
        bound.pop();
        return;
    }
    expr.for_each_child_mut(|child| for_each_candidate(child, bound, visit));
}

/// The operator and the range's key of a reduction that may be fused.
fn fusion_key(expr: &Expr) -> Option<(ReduceOp, String)> {
    let ExprKind::Reduce(node::Reduce { op, size, body, .. }) = &expr.kind else { return None };
    let fusable_op = matches!(op, ReduceOp::Sum | ReduceOp::Prod | ReduceOp::Max | ReduceOp::Min);
    let scalar = body.ty.as_scalar().is_some();
    (fusable_op && scalar && !may_fail(body) && !may_fail(size)).then(|| (*op, alpha_key(size)))
}

/// The positions of the first set of at least two candidates with one [`fusion_key`] whose steps
/// each share a term with another of the set.
fn fusable_group(fields: &[&Expr]) -> Option<Vec<usize>> {
    let keys: Vec<Option<(ReduceOp, String)>> = fields.iter().map(|field| fusion_key(field)).collect();
    for (first, key) in keys.iter().enumerate() {
        let Some(key) = key else { continue };
        let same: Vec<usize> = (first..fields.len()).filter(|&other| keys[other].as_ref() == Some(key)).collect();
        if same.len() < 2 {
            continue;
        }
        // Each step's terms that vary with the step, the index written as the first one's.
        let ExprKind::Reduce(node::Reduce { index, .. }) = &fields[first].kind else { continue };
        let terms: Vec<BTreeSet<String>> =
            same.iter().map(|&position| varying_terms(fields[position], *index)).collect();
        let shares = |at: usize| (0..terms.len()).any(|other| other != at && !terms[other].is_disjoint(&terms[at]));
        let sharing: Vec<usize> = (0..same.len()).filter(|&at| shares(at)).map(|at| same[at]).collect();
        if sharing.len() >= 2 {
            return Some(sharing);
        }
    }
    None
}

/// A new index variable for the fused reduction, named after the first one's.
fn fresh_index(vars: &mut Vec<VarInfo>, index: VarId) -> VarId {
    let info = vars[index.0 as usize].clone();
    crate::ir::declare(vars, VarInfo { name: crate::ir::synthetic_name(&info.name, ""), ..info })
}

/// The keys of the terms of `reduction`'s step that read its index (the index alone excluded),
/// the index written as `index`.
fn varying_terms(reduction: &Expr, index: VarId) -> BTreeSet<String> {
    let ExprKind::Reduce(node::Reduce { index: own, body, .. }) = &reduction.kind else { return BTreeSet::new() };
    let step = step_over(body, *own, index);
    let mut terms = BTreeSet::new();
    collect_varying(&step, index, &mut terms);
    terms
}

/// A reduction's step `body` over its index `own`, written over `index` instead.
fn step_over(body: &Expr, own: VarId, index: VarId) -> Expr {
    let mut step = body.clone();
    substitute(&mut step, own, &Expr::new(ExprKind::Var(index), Type::I64, body.span));
    step
}

fn collect_varying(expr: &Expr, index: VarId, terms: &mut BTreeSet<String>) {
    if !matches!(expr.kind, ExprKind::Var(_)) && mentions(expr, index) {
        terms.insert(alpha_key(expr));
    }
    expr.for_each_child(|child| collect_varying(child, index, terms));
}

/// `sum k { a }` and `sum j { b }` (the reductions of a group, in order) fused: returns `t`, its
/// value `sum k' { (a, b) }`, and the reads `t.0`, `t.1` that replace them.
fn fuse(reductions: Vec<node::Reduce>, span: Span, vars: &mut Vec<VarInfo>) -> (VarId, Expr, Vec<Expr>) {
    let index = fresh_index(vars, reductions[0].index);
    let (op, size) = (reductions[0].op, reductions[0].size.clone());
    let steps: Vec<Expr> =
        reductions.into_iter().map(|reduction| step_over(&reduction.body, reduction.index, index)).collect();
    let step_types: Vec<Type> = steps.iter().map(|step| step.ty.clone()).collect();
    let fused_type = Type::Tuple { fields: step_types.clone(), names: Vec::new() };
    let name = format!("{SYNTHETIC_PREFIX}fused");
    let fused = crate::ir::declare(vars, VarInfo { name, ty: fused_type.clone(), kind: VarKind::Let, span });
    let step_tuple = Expr::new(ExprKind::Tuple(steps), fused_type.clone(), span);
    let reduction = Expr::new(
        ExprKind::Reduce(node::Reduce { op, index, size, body: Box::new(step_tuple) }),
        fused_type.clone(),
        span,
    );
    let reads = step_types
        .into_iter()
        .enumerate()
        .map(|(field, ty)| {
            let read = Expr::new(ExprKind::Var(fused), fused_type.clone(), span);
            Expr::new(ExprKind::Project(node::Project { tuple: Box::new(read), field }), ty, span)
        })
        .collect();
    (fused, reduction, reads)
}
