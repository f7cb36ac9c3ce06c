//! Step sharing (horizontal fusion by materialising): a costly term of a reduction's step that
//! does not depend on an enclosing comprehension's index is computed once per step, into an
//! array that every element of the comprehension reads. The case it is for is the N-body step
//!
//! ```text
//! for c in 0..3 {
//!   sum j in 0..n { let r2 = sum d { (x[j][d] - x[i][d])^2 } + eps
//!                   m[j] * (x[j][c] - x[i][c]) / (r2 * sqrt(r2)) }
//! }
//! ```
//!
//! where the three sibling reductions (one per `c`) each compute the distance, its square root
//! and a product; after this pass
//!
//! ```text
//! let w = for j' in 0..n { let r2' = sum d' { … } + eps; r2' * sqrt(r2') }
//! for c in 0..3 { sum j in 0..n { m[j] * (x[j][c] - x[i][c]) / w[j] } }
//! ```
//!
//! the costly part runs once per `j`, not once per `(c, j)`, for a step-sized temporary. The
//! materialise-or-recompute choice: a term is worth an array when it contains a loop, a call
//! of a transcendental function (by the function table's cost), `sqrt` or `recip`, or a
//! division; the comprehension is then expected to have more than one element (a size
//! of literal 0 or 1 is left alone).
//!
//! A cheap term is given an array too when that makes the step a product of two reads, so that
//! `contract` hands the whole comprehension to the GEMM: the gradient of a logistic regression
//! `for k { sum i { (p[i] - y[i]) * x[i, k] } }` becomes `let e = for i' { p[i'] - y[i'] }`
//! and one matrix–vector product, instead of one strided pass over `x` per `k`. Only when the
//! array is computed once for the whole program (the term reads no index but the
//! reduction's): one small product per element of an outer index would be slower.
//!
//! Conditions, each keeping the program's meaning exactly: the term mentions the reduction's
//! index and otherwise only variables bound outside the comprehension or `let`s of the step
//! whose values satisfy the same condition (copied into the array's body); the term and those
//! values cannot fail, nor can the reduction's size, which is evaluated earlier than before
//! (once, before the comprehension) and must not depend on anything bound inside it, and which
//! must be a length (an array's, or a non-negative literal): the array's loop runs even where
//! the reduction never ran, and a negative size would fail there. The
//! term is computed in the same order of operations, so its values are bit for bit the same.
//! The array's reads are in bounds by construction (index `j` over `0..n`, an array of `n`).
//!
//! A comprehension nest that `contract` turns into one product of a factor it computes for
//! the whole nest (`for i, j { sum k { exp(a[i, k]) * b[k, j] } }`: the exponentials of `a`,
//! then a GEMM) is left alone: a row of that factor per `i` here would leave one
//! vector–matrix product per row (1024³ f32: 44 ms, against 12–16 ms as one GEMM).

use super::cse::replace_equal;
use super::purity::{has_loop, is_length, may_fail};
use crate::ir::node;
use crate::ir::visit::{alpha_key, free_vars, mentions, rename_binders, substitute};
use crate::ir::{
    Bounds, Expr, ExprKind, Literal, Program, ReduceOp, ScalarType, Type, VarId, VarInfo, VarKind, SYNTHETIC_PREFIX,
};
use crate::ops::BinaryOp;
use std::collections::{BTreeMap, BTreeSet};

pub fn share_steps(program: Program) -> Program {
    super::rewrite_body(program, rewrite)
}

/// Top-down, so that an array rises to the outermost comprehension it is invariant of.
fn rewrite(mut expr: Expr, vars: &mut Vec<VarInfo>) -> Expr {
    // A nest `contract` makes one product of, a factor computed for the whole nest.
    if super::contract::computes_factors(vars, &expr) {
        return expr;
    }
    let mut rows = Vec::new();
    if is_comprehension_worth_sharing(&expr) {
        while let Some(shared) = find(&expr, vars) {
            match share(&mut expr, shared, vars) {
                Some(row) => rows.push(row),
                None => break,
            }
        }
    }
    expr.rewrite_children(|child| rewrite(child, vars));
    rows.into_iter().rev().fold(expr, |inner, (row, value)| {
        let (ty, span) = (inner.ty.clone(), inner.span);
        Expr::new(ExprKind::Let(node::Let { var: row, value: Box::new(value), body: Box::new(inner) }), ty, span)
    })
}

/// A comprehension whose size is not a literal 0 or 1.
fn is_comprehension_worth_sharing(expr: &Expr) -> bool {
    match &expr.kind {
        ExprKind::For(node::For { size, .. }) => !matches!(size.kind, ExprKind::Literal(Literal::Int(0 | 1))),
        _ => false,
    }
}

/// A term to share: the reduction it is in (its index and size), the term, and the step's
/// `let`s it reads (in binding order, with their values).
struct Shared {
    index: VarId,
    size: Expr,
    term: Expr,
    lets: Vec<(VarId, Expr)>,
}

/// The first term worth sharing in the body of the comprehension `expr`.
fn find(expr: &Expr, vars: &[VarInfo]) -> Option<Shared> {
    let ExprKind::For(node::For { index, body, .. }) = &expr.kind else { return None };
    let mut blocked = BTreeSet::from([*index]);
    find_reduction(body, &mut blocked, vars)
}

/// Walks down to reductions; `blocked` holds the variables bound on the way (the
/// comprehension's index included), which a shared term must not read.
fn find_reduction(expr: &Expr, blocked: &mut BTreeSet<VarId>, vars: &[VarInfo]) -> Option<Shared> {
    if let ExprKind::Reduce(node::Reduce { op, index, size, body }) = &expr.kind {
        // The array's loop runs even where the reduction never did (no element, a branch not
        // taken): its size must not fail, nor be negative.
        let size_invariant = free_vars(size).is_disjoint(blocked) && !may_fail(size) && is_length(size);
        if size_invariant {
            let factor = match op {
                ReduceOp::Sum => contraction_factor(body).map(alpha_key),
                _ => None,
            };
            let mut step = Step { index: *index, blocked, lets: BTreeMap::new(), order: Vec::new(), factor, vars };
            if let Some((term, lets)) = step.find_term(body) {
                return Some(Shared { index: *index, size: (**size).clone(), term, lets });
            }
        }
    }
    let newly: Vec<VarId> = expr.binders().filter(|var| blocked.insert(*var)).collect();
    let mut found = None;
    expr.for_each_child(|child| {
        if found.is_none() {
            found = find_reduction(child, blocked, vars);
        }
    });
    for var in newly {
        blocked.remove(&var);
    }
    found
}

/// The search inside one reduction's step.
struct Step<'b> {
    index: VarId,
    blocked: &'b mut BTreeSet<VarId>,
    /// The step's `let`s whose values a shared term may copy, with those values.
    lets: BTreeMap<VarId, Expr>,
    /// Those `let`s in binding order.
    order: Vec<VarId>,
    /// The key of the step's [`contraction_factor`], if it has one.
    factor: Option<String>,
    vars: &'b [VarInfo],
}

impl Step<'_> {
    /// The largest term worth an array (first in evaluation order), with the `let`s it reads.
    fn find_term(&mut self, expr: &Expr) -> Option<(Expr, Vec<(VarId, Expr)>)> {
        if expr.ty.as_scalar().is_some() && self.is_shareable(expr) {
            let lets = self.lets_read_by(expr);
            let costly = worth_an_array(expr)
                || lets.iter().any(|(_, value)| worth_an_array(value))
                || self.completes_contraction(expr, &lets);
            let varies = free_vars(expr).contains(&self.index) || lets.iter().any(|(var, _)| self.reads_index(*var));
            if costly && varies && !matches!(expr.kind, ExprKind::Literal(_)) {
                return Some((expr.clone(), lets));
            }
        }
        if let ExprKind::Let(node::Let { var, value, body }) = &expr.kind {
            // A `let` nothing reads (left by an earlier sharing) is removed by `simplify`.
            if !mentions(body, *var) {
                return self.find_term(body);
            }
            // A copyable value is looked for last: a term of the body that reads it is larger.
            if self.is_shareable(value) {
                self.lets.insert(*var, (**value).clone());
                self.order.push(*var);
                let found = self.find_term(body);
                self.lets.remove(var);
                self.order.retain(|other| other != var);
                return found.or_else(|| self.find_term(value));
            }
            if let Some(found) = self.find_term(value) {
                return Some(found);
            }
            self.blocked.insert(*var);
            let found = self.find_term(body);
            self.blocked.remove(var);
            return found;
        }
        let newly: Vec<VarId> = expr.binders().filter(|var| self.blocked.insert(*var)).collect();
        // A comprehension's size (a fold's or scan's count) must not come to depend on the
        // reduction's index through a read of the shared array: it is never a term.
        let regular_size: Option<&Expr> = match &expr.kind {
            ExprKind::For(node::For { size, .. }) | ExprKind::Filter(node::For { size, .. }) => Some(size),
            ExprKind::Fold(node::Fold { count, .. }) | ExprKind::Scan(node::Scan { count, .. }) => Some(count),
            _ => None,
        };
        let mut found = None;
        expr.for_each_child(|child| {
            if found.is_none() && !regular_size.is_some_and(|size| std::ptr::eq(size, child)) {
                found = self.find_term(child);
            }
        });
        for var in newly {
            self.blocked.remove(&var);
        }
        found
    }

    /// Reads nothing blocked (`let`s of the step only when copyable) and cannot fail.
    fn is_shareable(&self, expr: &Expr) -> bool {
        free_vars(expr).iter().all(|var| !self.blocked.contains(var)) && !may_fail(expr)
    }

    /// The copyable `let`s `expr` reads, directly or through each other, in binding order.
    fn lets_read_by(&self, expr: &Expr) -> Vec<(VarId, Expr)> {
        let mut needed: BTreeSet<VarId> =
            free_vars(expr).into_iter().filter(|var| self.lets.contains_key(var)).collect();
        for var in self.order.iter().rev() {
            if needed.contains(var) {
                needed.extend(free_vars(&self.lets[var]).into_iter().filter(|read| self.lets.contains_key(read)));
            }
        }
        self.order.iter().filter(|var| needed.contains(var)).map(|var| (*var, self.lets[var].clone())).collect()
    }

    /// Whether `expr` is the step's [`contraction_factor`] and its array would be computed
    /// once for the whole program (it reads no index but the reduction's): then the step
    /// becomes a product of two reads, which `contract` hands to the GEMM as one product (a
    /// factor that depends on an outer index would give one small product per element of it).
    fn completes_contraction(&self, expr: &Expr, lets: &[(VarId, Expr)]) -> bool {
        let is_outer_index = |var: &VarId| *var != self.index && self.vars[var.0 as usize].kind == VarKind::Index;
        let reads_outer_index = std::iter::once(expr)
            .chain(lets.iter().map(|(_, value)| value))
            .any(|part| free_vars(part).iter().any(is_outer_index));
        self.factor.as_deref() == Some(alpha_key(expr).as_str()) && !reads_outer_index
    }

    /// Whether the copyable `let` `var` depends on the reduction's index.
    fn reads_index(&self, var: VarId) -> bool {
        let value = &self.lets[&var];
        free_vars(value).contains(&self.index)
            || free_vars(value).iter().any(|read| self.lets.contains_key(read) && self.reads_index(*read))
    }
}

/// Whether computing `expr` costs clearly more than storing and loading its value.
fn worth_an_array(expr: &Expr) -> bool {
    let own = match &expr.kind {
        ExprKind::Call(node::Call { func, .. }) => func.is_dear(),
        // A user's Rust function: opaque, so assumed as dear as a transcendental one.
        ExprKind::Extern(_) => true,
        // Integer division is dear too, but it may fail, so it is never shared.
        ExprKind::Binary(node::Binary { op: BinaryOp::Div, .. }) => true,
        _ => false,
    };
    let mut children = false;
    expr.for_each_child(|child| children |= worth_an_array(child));
    own || children || has_loop(expr)
}

/// In a step `a * r` or `r * a` (under `let`s) where `r` is a read proven in bounds and `a`
/// is not: `a`. Given an array of its own, the step is a product of two reads.
fn contraction_factor(step: &Expr) -> Option<&Expr> {
    let mut tail = step;
    while let ExprKind::Let(node::Let { body, .. }) = &tail.kind {
        tail = body;
    }
    let ExprKind::Binary(node::Binary { op: BinaryOp::Mul, lhs, rhs }) = &tail.kind else { return None };
    let is_float = matches!(tail.ty.as_scalar(), Some(ScalarType::Known(scalar)) if scalar.is_float());
    match (is_proven_read(lhs), is_proven_read(rhs)) {
        (false, true) if is_float => Some(lhs),
        (true, false) if is_float => Some(rhs),
        _ => None,
    }
}

/// `a[p]…[q]` of an array variable, every position proven in bounds.
fn is_proven_read(expr: &Expr) -> bool {
    match &expr.kind {
        ExprKind::Index(node::Index { array, bounds: Bounds::Proven, .. }) => {
            matches!(array.kind, ExprKind::Var(_)) || is_proven_read(array)
        }
        _ => false,
    }
}

/// Replaces `shared`'s term in `comprehension` by a read of a new array and returns the array's
/// variable and value (`for j' in 0..n { lets; term }`, binders fresh); `None` if the term
/// was not found again (which would be a bug here, so nothing changes).
fn share(comprehension: &mut Expr, shared: Shared, vars: &mut Vec<VarInfo>) -> Option<(VarId, Expr)> {
    let Shared { index, size, term, lets } = shared;
    let span = term.span;
    let name = |vars: &Vec<VarInfo>, var: VarId| crate::ir::synthetic_name(&vars[var.0 as usize].name, "");
    let step_name = name(vars, index);
    let row_index = crate::ir::declare(vars, VarInfo { name: step_name, ty: Type::I64, kind: VarKind::Index, span });
    let row_type = Type::array(term.ty.clone(), 1);
    let row_name = format!("{SYNTHETIC_PREFIX}step");
    let row = crate::ir::declare(vars, VarInfo { name: row_name, ty: row_type.clone(), kind: VarKind::Let, span });

    let mut row_body = lets.iter().rev().fold(term.clone(), |inner, (var, value)| {
        let (ty, span) = (inner.ty.clone(), inner.span);
        Expr::new(
            ExprKind::Let(node::Let { var: *var, value: Box::new(value.clone()), body: Box::new(inner) }),
            ty,
            span,
        )
    });
    rename_binders(&mut row_body, vars);
    substitute(&mut row_body, index, &Expr::new(ExprKind::Var(row_index), Type::I64, span));
    let row_value = Expr::new(
        ExprKind::For(node::For { index: row_index, size: Box::new(size), body: Box::new(row_body) }),
        row_type.clone(),
        span,
    );

    let read = Expr::new(
        ExprKind::Index(node::Index {
            array: Box::new(Expr::new(ExprKind::Var(row), row_type, span)),
            index: Box::new(Expr::new(ExprKind::Var(index), Type::I64, span)),
            bounds: Bounds::Proven,
        }),
        term.ty.clone(),
        span,
    );
    replace_in_reduction(comprehension, index, &alpha_key(&term), &read).then_some((row, row_value))
}

/// `replace_equal` inside the body of the reduction over `index`; whether it replaced anything.
fn replace_in_reduction(expr: &mut Expr, index: VarId, key: &str, read: &Expr) -> bool {
    if let ExprKind::Reduce(node::Reduce { index: found, body, .. }) = &mut expr.kind {
        if *found == index {
            let before = alpha_key(body);
            replace_equal(body, key, read);
            return alpha_key(body) != before;
        }
    }
    let mut replaced = false;
    expr.for_each_child_mut(|child| replaced |= replace_in_reduction(child, index, key, read));
    replaced
}
