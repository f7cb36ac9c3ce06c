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
//! Tuples and records are split by components. Fusing reductions makes column statistics
//! `for j { (sum i { a[i][j] }, sum i { a[i][j] * a[i][j] }) }` one reduction of a tuple, which
//! is not one nest of scalar reductions either; where each component's step would run side by
//! side, the reduction becomes one `let` per component (`t.k` read as the component's value)
//! and a tuple at the end with loops in its fields binds them to `let`s first, so each
//! component gets a comprehension of its own (4096 × 4096 f32 column sum and sum of squares on
//! 2 threads: 59 ms as one tuple reduction a column at a time, 7.4 ms split). Components that
//! share a transcendental or extern call (`sin` and `cos` of one argument, MRI-Q) stay one
//! reduction: split, each would compute the call again.
//!
//! Conditions: the comprehension's element has no array in it and is not side by side
//! already; it is `let x_1 = v_1; …; let x_k = v_k; tail` with every `x` a scalar or a
//! reduction of a tuple as above, every `v` and the tail side by side over the comprehension's
//! index (per component for tuples) or free of loops (the earlier `x`s they read are plain
//! variables there, and become reads along the index), at least one of them with a loop; no
//! `v` can fail; and the comprehension's size binds nothing (it is copied to each part).

use crate::analysis::Analysis;
use crate::ir::node;
use crate::ir::visit::{bound_vars, substitute};
use crate::ir::{declare, number_nodes, Bounds, Expr, ExprKind, NodeId, Program, Type, VarId, VarInfo, VarKind};
use crate::passes::bind_lets as bind;
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
    if body.ty.has_array() || matches!(body.kind, ExprKind::For(_)) || analysis.jam(index, body).is_some() {
        return false;
    }
    let side_by_side = |part: &Expr| !has_loop(part) || analysis.jam(index, part).is_some();
    // A value stored for each element: a scalar side by side, or a reduction of a tuple that
    // is one side by side per component.
    let stored = |value: &Expr| {
        let scalar = matches!(value.ty, Type::Scalar(_)) && side_by_side(value);
        (scalar || analysis.jam_by_components(index, value)) && !analysis.may_fail(value)
    };
    let (mut part, mut lets, mut loops) = (body, 0, false);
    while let ExprKind::Let(node::Let { value, body: rest, .. }) = &part.kind {
        if !stored(value) {
            return false;
        }
        loops |= has_loop(value);
        lets += 1;
        part = rest;
    }
    match &part.kind {
        // A reduction of a tuple ends the element as its components' tuple.
        _ if stored(part) && matches!(part.ty, Type::Tuple { .. }) => true,
        // A tuple's fields with loops are stored as `let`s would be.
        ExprKind::Tuple(fields) if has_loop(part) => fields.iter().all(|field| !has_loop(field) || stored(field)),
        _ => lets > 0 && (loops || has_loop(part)) && side_by_side(part),
    }
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
    let mut part = as_lets(*body, vars);
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

/// The element `body` in the form [`split_comprehension`] splits: each `let` of a reduction of
/// a tuple as one `let` per component (`let t = sum i { (a, b) }` as `let t_0 = sum i { a };
/// let t_1 = sum i' { b }`, `t.0` read as `t_0`), and each field with a loop of a tuple at the
/// end bound to a `let` of its own before the tuple; a reduction of a tuple at the end, its
/// components' `let`s and their tuple.
fn as_lets(body: Expr, vars: &mut Vec<VarInfo>) -> Expr {
    let (ty, span) = (body.ty.clone(), body.span);
    match body.kind {
        ExprKind::Let(node::Let { var, value, body: rest }) => {
            let mut rest = as_lets(*rest, vars);
            match by_components(*value, vars) {
                Ok(components) => {
                    let component_vars: Vec<VarId> = components.iter().map(|(component, _)| *component).collect();
                    read_components(&mut rest, var, &component_vars, vars, span);
                    bind(components, rest)
                }
                Err(value) => bind(vec![(var, *value)], rest),
            }
        }
        ExprKind::Tuple(fields) => {
            let mut lets = Vec::new();
            let mut kept = Vec::new();
            for field in fields {
                if !has_loop(&field) {
                    kept.push(field);
                    continue;
                }
                let name = crate::ir::synthetic_name("field", "");
                let info = VarInfo { name, ty: field.ty.clone(), kind: VarKind::Let, span: field.span };
                let var = declare(vars, info);
                kept.push(Expr::new(ExprKind::Var(var), field.ty.clone(), field.span));
                lets.push((var, field));
            }
            bind(lets, Expr::new(ExprKind::Tuple(kept), ty, span))
        }
        kind => match by_components(Expr::new(kind, ty.clone(), span), vars) {
            Ok(components) => {
                let reads = components
                    .iter()
                    .map(|(component, value)| Expr::new(ExprKind::Var(*component), value.ty.clone(), span))
                    .collect();
                bind(components, Expr::new(ExprKind::Tuple(reads), ty, span))
            }
            Err(tail) => *tail,
        },
    }
}

/// `sum i { (a, b) }` as `[(t_0, sum i { a }), (t_1, sum i' { b })]`, each with a new
/// variable (and a new index: each binder is bound once); any other value unchanged.
fn by_components(value: Expr, vars: &mut Vec<VarInfo>) -> Result<Vec<(VarId, Expr)>, Box<Expr>> {
    let span = value.span;
    let ExprKind::Reduce(node::Reduce { op, index, size, body }) = value.kind else { return Err(Box::new(value)) };
    let ExprKind::Tuple(steps) = body.kind else {
        let kind = ExprKind::Reduce(node::Reduce { op, index, size, body });
        return Err(Box::new(Expr::new(kind, value.ty, span)));
    };
    let mut components = Vec::new();
    for (position, mut step) in steps.into_iter().enumerate() {
        let own_index = match position {
            0 => index,
            _ => {
                let own = declare(vars, vars[index.0 as usize].clone());
                substitute(&mut step, index, &Expr::new(ExprKind::Var(own), Type::I64, span));
                own
            }
        };
        let ty = step.ty.clone();
        let name = crate::ir::synthetic_name("component", "");
        let var = declare(vars, VarInfo { name, ty: ty.clone(), kind: VarKind::Let, span });
        let reduce = node::Reduce { op, index: own_index, size: size.clone(), body: Box::new(step) };
        components.push((var, Expr::new(ExprKind::Reduce(reduce), ty, span)));
    }
    Ok(components)
}

/// In `expr`, `t.k` read as `t_k` (`components`), and `t` itself as the tuple of them.
fn read_components(expr: &mut Expr, tuple: VarId, components: &[VarId], vars: &[VarInfo], span: proc_macro2::Span) {
    if let ExprKind::Project(node::Project { tuple: read, field }) = &expr.kind {
        if matches!(read.kind, ExprKind::Var(var) if var == tuple) {
            let component = components[*field];
            *expr = Expr::new(ExprKind::Var(component), vars[component.0 as usize].ty.clone(), expr.span);
            return;
        }
    }
    if matches!(expr.kind, ExprKind::Var(var) if var == tuple) {
        let fields = components
            .iter()
            .map(|&component| Expr::new(ExprKind::Var(component), vars[component.0 as usize].ty.clone(), span))
            .collect();
        *expr = Expr::new(ExprKind::Tuple(fields), expr.ty.clone(), expr.span);
        return;
    }
    expr.for_each_child_mut(|child| read_components(child, tuple, components, vars, span));
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
