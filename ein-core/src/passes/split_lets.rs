//! Loop fission for comprehensions the generator would otherwise compute one element at a
//! time: an element that binds a reduction and then reduces again with it, a column's variance
//!
//! ```text
//! for j { let m = sum i { a[i][j] } / n; sum i { (a[i][j] - m) * (a[i][j] - m) } }
//! ```
//!
//! is not one nest of reductions, so it is not run side by side ([`Analysis::jam`]): each
//! element walks down a column alone, a cache line per value read. When every `let` of the
//! element and what follows them is such a nest (or has no loop), the comprehension is split,
//! one comprehension per `let`, each value stored and read back by the ones after it:
//!
//! ```text
//! let ms = for j' { sum i { a[i][j'] } / n };
//! for j { sum i { (a[i][j] - ms[j]) * (a[i][j] - ms[j]) } }
//! ```
//!
//! and each runs side by side (a column mean and variance of a 4096 × 4096 f32 matrix: see the
//! README). Every element computes the same operations in the same order, so the results have
//! the same bits; what changes is when: every element's first value is computed before any
//! element's second, so no value may fail (the first failure reported would change). The
//! stored values cost one scalar per element and `let`.
//!
//! Conditions: the comprehension's element is a scalar (an innermost axis) that is not side
//! by side already; it is `let x_1 = v_1; …; let x_k = v_k; tail` with every `x` a scalar,
//! every `v` and the tail side by side over the comprehension's index or free of loops (the
//! earlier `x`s they read are plain variables there, and become reads along the index), at
//! least one of them with a loop; no `v` can fail; and the comprehension's size binds nothing
//! (it is copied to each part).

use crate::analysis::Analysis;
use crate::ir::node;
use crate::ir::visit::{bound_vars, substitute};
use crate::ir::{declare, number_nodes, Bounds, Expr, ExprKind, NodeId, Program, Type, VarId, VarInfo, VarKind};
use crate::passes::purity::has_loop;
use std::collections::BTreeSet;

pub fn split_lets(mut program: Program) -> Program {
    number_nodes(&mut program);
    let mut split = BTreeSet::new();
    {
        let analysis = Analysis::of(&program);
        collect(&analysis, &program.body, &mut split);
    }
    if split.is_empty() {
        return program;
    }
    let mut vars = std::mem::take(&mut program.vars);
    rewrite(&mut program.body, &split, &mut vars);
    program.vars = vars;
    program
}

/// The comprehensions to split, by node. Only a comprehension of rank 1 (not the inner axis of
/// a nest, whose rows would then each allocate their arrays) is split.
fn collect(analysis: &Analysis<'_>, expr: &Expr, split: &mut BTreeSet<NodeId>) {
    if let ExprKind::For(node::For { index, size, body }) = &expr.kind {
        // The size is copied to each part: it may bind nothing (each binder is bound once).
        if bound_vars(size).is_empty() && splits(analysis, *index, body) {
            split.insert(expr.id);
        }
        // The inner axes of a nest are not split; what their element contains may be.
        let mut element = &**body;
        while let ExprKind::For(node::For { body, .. }) = &element.kind {
            element = body;
        }
        return collect(analysis, element, split);
    }
    expr.for_each_child(|child| collect(analysis, child, split));
}

/// Whether the element `body` of a comprehension over `index` is split (see the module docs).
fn splits(analysis: &Analysis<'_>, index: VarId, body: &Expr) -> bool {
    if body.ty.rank() > 0 || matches!(body.kind, ExprKind::For(_)) || analysis.jam(index, body).is_some() {
        return false;
    }
    let side_by_side = |part: &Expr| !has_loop(part) || analysis.jam(index, part).is_some();
    let (mut part, mut lets, mut loops) = (body, 0, false);
    while let ExprKind::Let(node::Let { value, body: rest, .. }) = &part.kind {
        if !matches!(value.ty, Type::Scalar(_)) || analysis.may_fail(value) || !side_by_side(value) {
            return false;
        }
        loops |= has_loop(value);
        lets += 1;
        part = rest;
    }
    lets > 0 && (loops || has_loop(part)) && side_by_side(part)
}

/// Splits every comprehension of `split` in `expr`.
fn rewrite(expr: &mut Expr, split: &BTreeSet<NodeId>, vars: &mut Vec<VarInfo>) {
    expr.for_each_child_mut(|child| rewrite(child, split, vars));
    if split.contains(&expr.id) {
        let original = expr.take();
        *expr = split_comprehension(original, vars);
    }
}

/// `for j in n { let x_1 = v_1; …; tail }` as `let xs_1 = for j_1 in n { v_1 }; …; for j in n
/// { tail }`, each later part reading `xs_m[j]` where it read `x_m`.
fn split_comprehension(comprehension: Expr, vars: &mut Vec<VarInfo>) -> Expr {
    let (ty, span) = (comprehension.ty.clone(), comprehension.span);
    let ExprKind::For(node::For { index, size, body }) = comprehension.kind else {
        return comprehension;
    };
    // Per `let`: its variable and the array of its values, bound in order before the tail.
    let mut stored: Vec<(VarId, VarId)> = Vec::new();
    let mut bindings: Vec<(VarId, Expr)> = Vec::new();
    let mut part = *body;
    while let ExprKind::Let(node::Let { var, value, body: rest }) = part.kind {
        let info = vars[var.0 as usize].clone();
        // The value's own comprehension, over an index of its own (each binder is bound once).
        let own_index = declare(vars, VarInfo { kind: VarKind::Index, ..vars[index.0 as usize].clone() });
        let mut value = *value;
        substitute(&mut value, index, &Expr::new(ExprKind::Var(own_index), Type::I64, span));
        read_stored(&mut value, &stored, own_index, vars, span);
        let array_ty = Type::array(info.ty.clone(), 1);
        let values = Expr::new(
            ExprKind::For(node::For { index: own_index, size: size.clone(), body: Box::new(value) }),
            array_ty.clone(),
            span,
        );
        let name = crate::ir::synthetic_name(&info.name, "_each");
        let array = declare(vars, VarInfo { name, ty: array_ty, kind: VarKind::Let, span: info.span });
        stored.push((var, array));
        bindings.push((array, values));
        part = *rest;
    }
    let mut tail = part;
    read_stored(&mut tail, &stored, index, vars, span);
    let mut result = Expr::new(ExprKind::For(node::For { index, size, body: Box::new(tail) }), ty, span);
    for (array, values) in bindings.into_iter().rev() {
        let result_ty = result.ty.clone();
        let kind = ExprKind::Let(node::Let { var: array, value: Box::new(values), body: Box::new(result) });
        result = Expr::new(kind, result_ty, span);
    }
    result
}

/// Replaces each stored variable `x` in `expr` by the read `xs[at]` of its array.
fn read_stored(expr: &mut Expr, stored: &[(VarId, VarId)], at: VarId, vars: &[VarInfo], span: proc_macro2::Span) {
    for &(var, array) in stored {
        let array_ty = vars[array.0 as usize].ty.clone();
        let position = (Expr::new(ExprKind::Var(at), Type::I64, span), Bounds::Proven);
        let read = Expr::read_of(Expr::new(ExprKind::Var(array), array_ty, span), [position]);
        substitute(expr, var, &read);
    }
}
