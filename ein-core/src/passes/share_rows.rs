//! Row sharing: a transcendental term computed for every `k` of a reduction and again for
//! every `j` of the comprehension that follows it over the same range is computed once, into
//! an array both read. The case it is for is softmax after hoisting,
//!
//! ```text
//! let s = sum k in 0..n { exp(x[i][k] - m) }
//! for j in 0..n { exp(x[i][j] - m) / s }
//! ```
//!
//! which becomes
//!
//! ```text
//! let e = for k' in 0..n { exp(x[i][k'] - m) }
//! let s = sum k in 0..n { e[k] }
//! for j in 0..n { e[j] / s }
//! ```
//!
//! one `exp` per element instead of two, for a row-sized temporary that stays in cache (the
//! materialise-or-recompute choice: recomputing is right for cheap terms, wrong for
//! an `exp`). Only calls of `exp`, `ln`, `sin`, `cos`, `tan`, `tanh` and `pow` count as worth
//! an array; `sqrt`, `abs`, `min`, `max` cost less than the store and load.
//!
//! Conditions, each keeping the program's meaning exactly: the reduction is the value of a
//! `let` whose body, through further `let`s, is the comprehension; the two ranges are equal
//! (alpha-equivalent size expressions, evaluated in the same scope); the term mentions the
//! reduction's index and no variable bound inside the reduction, contains no loop and cannot
//! fail (the new array computes it for every `k`, as the reduction did, just earlier); the
//! comprehension contains the same term with its own index for the reduction's. The array's
//! reads are in bounds by construction.

use super::cse::replace_equal;
use super::purity::{has_loop, may_fail};
use crate::ir::node;
use crate::ir::visit::{alpha_key, bound_vars, free_vars, mentions, substitute};
use crate::ir::{Bounds, Expr, ExprKind, Program, Type, VarId, VarInfo, VarKind, SYNTHETIC_PREFIX};
use crate::ops::Cost;

pub fn share_rows(program: Program) -> Program {
    super::rewrite_body(program, |mut body, vars| {
        rewrite(&mut body, vars);
        body
    })
}

fn rewrite(expr: &mut Expr, vars: &mut Vec<VarInfo>) {
    if let Some(shared) = share_one(expr, vars) {
        *expr = shared;
    }
    expr.for_each_child_mut(|child| rewrite(child, vars));
}

/// `expr` with one term shared, if it is a `let` of a reduction with such a term.
fn share_one(expr: &Expr, vars: &mut Vec<VarInfo>) -> Option<Expr> {
    let ExprKind::Let(node::Let { var: result, value, body: rest }) = &expr.kind else { return None };
    let ExprKind::Reduce(node::Reduce { index, size, body: reduced, .. }) = &value.kind else { return None };
    let (consumer_index, consumer_size, consumer_body) = consumer(rest)?;
    if alpha_key(consumer_size) != alpha_key(size) {
        return None;
    }
    let inner = bound_vars(reduced);
    let mut candidates = Vec::new();
    collect_candidates(reduced, *index, &inner, &mut candidates);
    for term in candidates {
        let mut renamed = term.clone();
        substitute(&mut renamed, *index, &Expr::new(ExprKind::Var(consumer_index), Type::I64, term.span));
        let key = alpha_key(&renamed);
        if !contains_term(consumer_body, &key, &renamed.ty) {
            continue;
        }
        // The array, indexed by a fresh variable (every binder binds a distinct `VarId`).
        let row_index = fresh(
            vars,
            &crate::ir::synthetic_name(&vars[index.0 as usize].name, ""),
            Type::I64,
            VarKind::Index,
            term.span,
        );
        let row_type = Type::array(term.ty.clone(), 1);
        let row = fresh(vars, &format!("{SYNTHETIC_PREFIX}row"), row_type.clone(), VarKind::Let, term.span);
        let mut row_body = term.clone();
        substitute(&mut row_body, *index, &Expr::new(ExprKind::Var(row_index), Type::I64, term.span));
        let row_value = Expr::new(
            ExprKind::For(node::For { index: row_index, size: size.clone(), body: Box::new(row_body) }),
            row_type.clone(),
            term.span,
        );
        let read = |at: VarId| {
            let array = Expr::new(ExprKind::Var(row), row_type.clone(), term.span);
            let position = Expr::new(ExprKind::Var(at), Type::I64, term.span);
            Expr::new(
                ExprKind::Index(node::Index {
                    array: Box::new(array),
                    index: Box::new(position),
                    bounds: Bounds::Proven,
                }),
                term.ty.clone(),
                term.span,
            )
        };
        let mut value = (**value).clone();
        replace_equal(&mut value, &alpha_key(&term), &read(*index));
        let mut rest = (**rest).clone();
        replace_in_consumer(&mut rest, &key, &read(consumer_index));
        let shared = Expr::new(
            ExprKind::Let(node::Let { var: *result, value: Box::new(value), body: Box::new(rest) }),
            expr.ty.clone(),
            expr.span,
        );
        return Some(Expr::new(
            ExprKind::Let(node::Let { var: row, value: Box::new(row_value), body: Box::new(shared) }),
            expr.ty.clone(),
            expr.span,
        ));
    }
    None
}

/// The comprehension a `let` body ends in, through further `let`s: its index, size and body.
fn consumer(mut expr: &Expr) -> Option<(VarId, &Expr, &Expr)> {
    loop {
        match &expr.kind {
            ExprKind::Let(node::Let { body, .. }) => expr = body,
            ExprKind::For(node::For { index, size, body }) => return Some((*index, size, body)),
            _ => return None,
        }
    }
}

/// `replace_equal` inside the comprehension at the end of `expr`'s chain of `let`s.
fn replace_in_consumer(expr: &mut Expr, key: &str, replacement: &Expr) {
    match &mut expr.kind {
        ExprKind::Let(node::Let { body, .. }) => replace_in_consumer(body, key, replacement),
        ExprKind::For(node::For { body, .. }) => replace_equal(body, key, replacement),
        _ => {}
    }
}

/// The subterms of `expr` worth an array (see the module documentation), each before its own
/// subterms: the first that the comprehension also computes is the largest shared one.
fn collect_candidates(expr: &Expr, index: VarId, inner: &std::collections::BTreeSet<VarId>, found: &mut Vec<Expr>) {
    let free = free_vars(expr);
    let worth = has_transcendental_call(expr)
        && mentions(expr, index)
        && free.is_disjoint(inner)
        && !has_loop(expr)
        && !may_fail(expr)
        && expr.ty.rank() == 0;
    if worth {
        found.push(expr.clone());
    }
    expr.for_each_child(|child| collect_candidates(child, index, inner, found));
}

fn has_transcendental_call(expr: &Expr) -> bool {
    let own = matches!(&expr.kind, ExprKind::Call(node::Call { func, .. }) if func.cost() == Cost::Transcendental)
        || matches!(expr.kind, ExprKind::Extern(_));
    let mut children = false;
    expr.for_each_child(|child| children |= has_transcendental_call(child));
    own || children
}

fn contains_term(expr: &Expr, key: &str, ty: &Type) -> bool {
    if expr.ty == *ty && alpha_key(expr) == key {
        return true;
    }
    let mut found = false;
    expr.for_each_child(|child| found |= contains_term(child, key, ty));
    found
}

fn fresh(vars: &mut Vec<VarInfo>, name: &str, ty: Type, kind: VarKind, span: proc_macro2::Span) -> VarId {
    crate::ir::declare(vars, VarInfo { name: name.to_string(), ty, kind, span })
}
