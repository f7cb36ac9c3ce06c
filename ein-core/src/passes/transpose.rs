//! Transposed copies for loops run side by side: a loop whose iterations the generator would
//! compute side by side (a nest of short reductions per iteration, [`Analysis::jam`]) but for
//! reads that cross its index — the distance to `b[j, k]` in
//!
//! ```text
//! for i in 0..n { argmin j in 0..m { sum k in 0..d { (a[i][k] - b[j][k]) * (a[i][k] - b[j][k]) } } }
//! ```
//!
//! where consecutive `j` are rows apart (gathers, slower than one iteration at a time) — reads
//! a copy of `b` with `j`'s axis last instead, made once before the loops that read `b` again:
//!
//! ```text
//! let b' = for k' in 0..len(b, 1) { for j' in 0..len(b, 0) { b[j'][k'] } }
//! for i in 0..n { argmin j in 0..m { sum k in 0..d { (a[i][k] - b'[k][j]) * (a[i][k] - b'[k][j]) } } }
//! ```
//!
//! so that the iterations' reads are consecutive elements (vector loads), as the hand-written
//! nearest-neighbour and k-means kernels lay out their centroids. Only short rows are worth it
//! (the copy's rows, `b`'s other axes, under [`COPY_ROWS_BELOW`] elements, decided at run time:
//! the moved axis's loop runs over `if worth { len(b, 0) } else { 0 }`); long rows are read as
//! fast one iteration at a time along `b`'s own rows, and the side-by-side loops, which read
//! the copy unchecked, first check that its last axis has `b`'s length (code generation's
//! `jam_step`), stepping aside where the copy was left empty. The copy costs one pass over
//! `b`; it is made only where another loop between `b`'s binding and the side-by-side loop
//! reads `b` again per iteration, so that it is paid once for many reads — the same elements
//! (the reads' indices vary with no enclosing loop), unless one iteration at a time would read
//! them strided: `for b, c { sum h, w { x[b, c, h, w] } }` reads each element of `x` once,
//! along its rows, and a copy would only double its traffic.
//!
//! The reads themselves are not rewritten: side by side, the generator reads the copy (the
//! analysis finds it, [`transposition_of`], and lists the reads in `Jam::transposed`); one
//! iteration at a time — where the side-by-side loop would not give the same bits, as for a
//! reduction of at least the runtime's `PLAIN_BELOW` values — it reads the array itself, along
//! its rows.
//!
//! Conditions, each keeping the program's meaning exactly: the loop is a comprehension's
//! innermost axis with a scalar element or an `argmin`/`argmax` (the loops the generator runs
//! side by side); every read that stops it is an [`AcrossRead`] of a parameter or a
//! `let`-bound array; the copy goes right after that binding (after the size checks, for a
//! parameter), so it sees the same array, and reads every element of it in bounds (it cannot
//! fail, and computes nothing); a read of the copy has the read's indices in the copy's axis
//! order, and the copy's axis lengths are the array's in that order wherever it is read, so
//! proven reads stay proven.

use crate::analysis::{AcrossRead, Analysis};
use crate::ir::node;
use crate::ir::visit::{bound_vars, free_vars};
use crate::ir::{
    declare, number_nodes, BinaryOp, Bounds, Expr, ExprKind, Literal, NodeId, Program, ReduceOp, Scalar, ScalarType,
    Type, VarId, VarInfo, VarKind,
};
use crate::passes::purity::is_loop;
use std::collections::BTreeSet;

pub fn transpose_across(mut program: Program) -> Program {
    number_nodes(&mut program);
    let mut wanted = BTreeSet::new();
    {
        let analysis = Analysis::of(&program);
        let mut depths = vec![None; program.vars.len()];
        program.params.iter().for_each(|param| depths[param.0 as usize] = Some(0));
        collect(&analysis, &program.body, 0, &mut depths, &mut Vec::new(), &mut wanted);
    }
    // One copy per array and axis, named after the array.
    for (array, axis) in wanted {
        let info = program.vars[array.0 as usize].clone();
        let name = crate::ir::synthetic_name(&info.name, &format!("_by_{axis}"));
        let copy = declare(&mut program.vars, VarInfo { name, ty: info.ty, kind: VarKind::Let, span: info.span });
        let value = transposed(&mut program.vars, array, axis);
        if program.params.contains(&array) {
            insert_after_checks(&mut program.body, copy, value);
        } else {
            insert_after_binding(&mut program.body, array, copy, value);
        }
    }
    program
}

/// Walks `expr`, `depth` loops deep, knowing how many loops enclose each array binding seen so
/// far (`depths`, by variable: parameters 0, `let`s their depth, others unset) and the
/// variables that vary with the enclosing loops (`varying`: their binders, and `let`s inside
/// them), and adds the arrays and axes to copy to `wanted`.
fn collect(
    analysis: &Analysis<'_>,
    expr: &Expr,
    depth: usize,
    depths: &mut Vec<Option<usize>>,
    varying: &mut Vec<VarId>,
    wanted: &mut BTreeSet<(VarId, usize)>,
) {
    // A contraction runs on the runtime's kernels (or its own loops where small): no copy.
    if let ExprKind::Contract(_) = &expr.kind {
        return;
    }
    let side_by_side = match &expr.kind {
        // An element loop that runs side by side as written (an `argmax` down the columns)
        // reads no copy, and nor does the reduction in its element; nor do the rows of a
        // two-axis comprehension run side by side down its columns.
        ExprKind::For(node::For { index, body, .. }) if analysis.jam(*index, body).is_some() => return,
        ExprKind::For(node::For { index: outer, body, .. })
            if matches!(&body.kind, ExprKind::For(node::For { index: inner, body, .. })
                if analysis.column_jam(*outer, *inner, body).is_some()) =>
        {
            return
        }
        ExprKind::For(node::For { index, body, .. })
            if !matches!(body.kind, ExprKind::For(_)) && body.ty.rank() == 0 =>
        {
            Some((*index, &**body))
        }
        ExprKind::Reduce(node::Reduce { op: ReduceOp::ArgMin | ReduceOp::ArgMax, index, body, .. }) if depth > 0 => {
            Some((*index, &**body))
        }
        _ => None,
    };
    if let Some((index, body)) = side_by_side {
        let reads = analysis.across_reads(index, body).unwrap_or_default();
        // Worth a copy only if a loop around this one reads the array again per iteration (it
        // is bound outside that loop): the same elements (the read's indices do not vary with
        // it), or elements that one iteration at a time would read strided.
        let inside = bound_vars(body);
        let reread = |read: &AcrossRead| {
            let Some(read_expr) = node_by_id(body, read.read) else { return false };
            let positions = read_expr.read_chain().1;
            let same_elements = positions.iter().all(|(position, _)| !mentions_any(position, varying));
            let along_rows = positions
                .last()
                .is_some_and(|(position, _)| matches!(position.kind, ExprKind::Var(var) if inside.contains(&var)));
            depths[read.array.0 as usize].is_some_and(|bound| bound < depth) && (same_elements || !along_rows)
        };
        if !reads.is_empty() && reads.iter().all(reread) {
            wanted.extend(reads.into_iter().map(|read| (read.array, read.axis)));
        }
    }
    if let ExprKind::Let(node::Let { var, .. }) = &expr.kind {
        depths[var.0 as usize] = Some(depth);
    }
    let inner = depth + usize::from(is_loop(expr));
    let before = varying.len();
    if is_loop(expr) || depth > 0 {
        varying.extend(expr.binders());
    }
    expr.for_each_child(|child| collect(analysis, child, inner, depths, varying, wanted));
    varying.truncate(before);
}

/// The node of `expr` numbered `id`, if any.
fn node_by_id(expr: &Expr, id: NodeId) -> Option<&Expr> {
    if expr.id == id {
        return Some(expr);
    }
    let mut found = None;
    expr.for_each_child(|child| found = found.or_else(|| node_by_id(child, id)));
    found
}

/// Whether `expr` mentions any of `vars`.
fn mentions_any(expr: &Expr, vars: &[VarId]) -> bool {
    !vars.is_empty() && free_vars(expr).iter().any(|var| vars.contains(var))
}

/// `for t_0, …, t_{r-1} { array[…] }` over `array`'s axes with `axis` moved last: element
/// `[.., t_{r-1}]` is `array`'s element at `t_{r-1}` on `axis`.
fn transposed(vars: &mut Vec<VarInfo>, array: VarId, axis: usize) -> Expr {
    let info = vars[array.0 as usize].clone();
    let (ty, span) = (info.ty.clone(), info.span);
    let rank = ty.rank();
    let order: Vec<usize> = moved_last(rank, axis).collect();
    let indices: Vec<VarId> = order
        .iter()
        .map(|&original| {
            let name = crate::ir::synthetic_name(&info.name, &format!("_{original}"));
            declare(vars, VarInfo { name, ty: Type::I64, kind: VarKind::Index, span })
        })
        .collect();
    // The element: `array` read on each original axis at the index that runs over it.
    let positions = (0..rank).map(|original| {
        let loop_over = order.iter().position(|&axis| axis == original).unwrap_or(0);
        (Expr::new(ExprKind::Var(indices[loop_over]), Type::I64, span), Bounds::Proven)
    });
    let element = Expr::read_of(Expr::new(ExprKind::Var(array), ty.clone(), span), positions);
    // The loops, innermost first; the moved axis is empty where the copy would not pay.
    let length = |axis: usize| {
        let array = Box::new(Expr::new(ExprKind::Var(array), ty.clone(), span));
        Expr::new(ExprKind::Len(node::Len { array, axis }), Type::I64, span)
    };
    let mut value = element;
    for (position, &original) in order.iter().enumerate().rev() {
        let size = if position + 1 == rank {
            let worth = worth_copying(order[..rank - 1].iter().map(|&other| length(other)), span);
            let kind = ExprKind::Select(node::Select {
                cond: Box::new(worth),
                then: Box::new(length(original)),
                otherwise: Box::new(crate::ir::shape::int(0, span)),
            });
            Expr::new(kind, Type::I64, span)
        } else {
            length(original)
        };
        let value_ty = value.ty.with_outer_axis();
        value = Expr::new(
            ExprKind::For(node::For { index: indices[position], size: Box::new(size), body: Box::new(value) }),
            value_ty,
            span,
        );
    }
    value
}

/// Each element of a row of a copy (the array's other axes) at most this many: above, the
/// reductions side by side would read long rows of the copy where one iteration at a time
/// reads the array's own rows as well (a least-squares gradient step on 4000 × 500 f64 made a
/// 16 MB copy per call, 3.2× a hand loop at one step), so no copy is made.
pub const COPY_ROWS_BELOW: i64 = 256;

/// `len_0 < B && … && len_0 * … < B` for the lengths of a copy's row (`B` =
/// [`COPY_ROWS_BELOW`]): each factor below `B` keeps the product of up to seven of them
/// within `i64`, and a longer one makes the whole condition false whatever the product
/// (which wraps, as ein's integers do).
fn worth_copying(lengths: impl Iterator<Item = Expr>, span: proc_macro2::Span) -> Expr {
    let boolean = Type::Scalar(ScalarType::Known(Scalar::Bool));
    let binary = |op: BinaryOp, lhs: Expr, rhs: Expr, ty: &Type| {
        let kind = ExprKind::Binary(node::Binary { op, lhs: Box::new(lhs), rhs: Box::new(rhs) });
        Expr::new(kind, ty.clone(), span)
    };
    let below = |value: Expr| binary(BinaryOp::Lt, value, crate::ir::shape::int(COPY_ROWS_BELOW, span), &boolean);
    let lengths: Vec<Expr> = lengths.collect();
    let mut conditions: Vec<Expr> = lengths.iter().cloned().map(below).collect();
    if lengths.len() > 1 {
        let product = lengths.into_iter().reduce(|lhs, rhs| binary(BinaryOp::Mul, lhs, rhs, &Type::I64));
        conditions.extend(product.map(below));
    }
    let worth = conditions.into_iter().reduce(|lhs, rhs| binary(BinaryOp::And, lhs, rhs, &boolean));
    worth.unwrap_or_else(|| Expr::new(ExprKind::Literal(Literal::Bool(true)), boolean, span))
}

/// The array and axis of a copy made by [`transposed`], if `value` is one: `for t_0, …,
/// t_{r-1} { array[…] }` over `array`'s axes in order with `axis` (not the last) moved last.
pub fn transposition_of(value: &Expr) -> Option<(VarId, usize)> {
    let mut loops = Vec::new();
    let mut element = value;
    while let ExprKind::For(node::For { index, size, body }) = &element.kind {
        // The moved axis's length, `if worth { len(a, axis) } else { 0 }`, or any length.
        let length = match &size.kind {
            ExprKind::Select(node::Select { then, otherwise, .. })
                if matches!(otherwise.kind, ExprKind::Literal(Literal::Int(0))) =>
            {
                then
            }
            _ => size,
        };
        let ExprKind::Len(node::Len { array, axis }) = &length.kind else { return None };
        let ExprKind::Var(array) = array.kind else { return None };
        loops.push((*index, array, *axis));
        element = body;
    }
    let (base, positions) = element.read_chain();
    let ExprKind::Var(array) = base.kind else { return None };
    let rank = base.ty.rank();
    let (&(_, _, moved), _) = loops.split_last()?;
    let same_order = loops.iter().map(|&(_, _, axis)| axis).eq(moved_last(rank, moved));
    let all_of_array = loops.iter().all(|&(_, of, _)| of == array);
    // Each original axis is read at the index of the loop over it.
    let reads_in_place = positions.len() == rank
        && positions.iter().enumerate().all(|(axis, &(position, bounds))| {
            bounds == Bounds::Proven
                && matches!(position.kind, ExprKind::Var(var)
                if loops.iter().any(|&(index, _, over)| index == var && over == axis))
        });
    (rank >= 2 && loops.len() == rank && moved + 1 < rank && same_order && all_of_array && reads_in_place)
        .then_some((array, moved))
}

/// The axes `0..rank` in order with `axis` moved last: a transposed copy's axis order.
fn moved_last(rank: usize, axis: usize) -> impl Iterator<Item = usize> {
    (0..rank).filter(move |&other| other != axis).chain(std::iter::once(axis))
}

/// `let var = value; body`.
fn let_in(var: VarId, value: Expr, body: Expr) -> Expr {
    let (ty, span) = (body.ty.clone(), body.span);
    Expr::new(ExprKind::Let(node::Let { var, value: Box::new(value), body: Box::new(body) }), ty, span)
}

/// Puts `let copy = value;` after the size checks `expr` starts with.
fn insert_after_checks(expr: &mut Expr, copy: VarId, value: Expr) {
    if let ExprKind::Assert(node::Assert { body, .. }) = &mut expr.kind {
        return insert_after_checks(body, copy, value);
    }
    let body = expr.take();
    *expr = let_in(copy, value, body);
}

/// Puts `let copy = value;` at the start of the body of the `let` that binds `array`.
fn insert_after_binding(expr: &mut Expr, array: VarId, copy: VarId, value: Expr) {
    let mut value = Some(value);
    insert(expr, array, copy, &mut value);
}

fn insert(expr: &mut Expr, array: VarId, copy: VarId, value: &mut Option<Expr>) {
    if value.is_none() {
        return;
    }
    if let ExprKind::Let(node::Let { var, body, .. }) = &mut expr.kind {
        if *var == array {
            if let Some(value) = value.take() {
                let rest = body.take();
                **body = let_in(copy, value, rest);
            }
            return;
        }
    }
    expr.for_each_child_mut(|child| insert(child, array, copy, value));
}
