//! The column-major copy of a function: every array parameter of rank 2 or more read with its
//! axes in reverse order. Generated loops are planned for row-major arrays (the innermost loop
//! along the last axis); a caller whose arrays are column-major (Fortran order, a transposed
//! view) would have every innermost step jump a whole column. Such a caller gets this copy
//! instead, given the reversed views of its arrays, which are row-major: `for i { sum j {
//! m[i, j] } }` becomes `for i { sum j { m'[j, i] } }` over `m' = mᵀ`, the same elements in
//! the same order of evaluation, so the same result — now a column sum of a row-major array,
//! which runs side by side.
//!
//! Taken only where every use of such a parameter is a read of one element (all its indices)
//! or one of its lengths: a row `m[i]`, the whole array passed on, or a contraction would need
//! the original axis order. A read's indices are then evaluated in the reversed order, so at
//! most one of them may fail (a clamped index fails on an empty axis), else which error comes
//! first could change; a clamped read's error names the original axis (`Gen::mirrored`).

use crate::ir::node;
use crate::ir::{Bounds, Expr, ExprKind, Program, Type, VarId, VarKind};
use crate::passes::purity::may_fail;
use std::collections::BTreeMap;

/// The program with its parameters of rank 2 or more read through reversed axes, and those
/// parameters; `None` when it has none or one is used other than element by element.
pub fn by_columns(program: &Program) -> Option<(Program, Vec<VarId>)> {
    let ranks: BTreeMap<VarId, usize> = program
        .params
        .iter()
        .filter_map(|&param| {
            let info = program.var(param);
            match &info.ty {
                Type::Array { elem, rank }
                    if *rank >= 2 && info.kind == VarKind::Param && elem.as_scalar().is_some() =>
                {
                    Some((param, *rank))
                }
                _ => None,
            }
        })
        .collect();
    if ranks.is_empty() {
        return None;
    }
    let mut reversed = program.clone();
    let mut fine = true;
    reversed.body = reverse_reads(reversed.body, &ranks, &mut fine);
    fine.then(|| (reversed, ranks.into_keys().collect()))
}

/// `expr` with every read of a parameter in `ranks` taking its indices in reverse order and
/// every length its mirrored axis; clears `fine` at any other use of such a parameter.
fn reverse_reads(mut expr: Expr, ranks: &BTreeMap<VarId, usize>, fine: &mut bool) -> Expr {
    let (base, positions) = expr.read_chain();
    if let ExprKind::Var(var) = base.kind {
        if let Some(&rank) = ranks.get(&var) {
            // The positions are evaluated in the reversed order: where two could fail, which
            // failure is reported first would change.
            let failing =
                positions.iter().filter(|(position, bounds)| *bounds == Bounds::Clamped || may_fail(position));
            if positions.len() != rank || failing.count() > 1 {
                *fine = false;
                return expr;
            }
            let reversed: Vec<_> = positions
                .into_iter()
                .rev()
                .map(|(position, bounds)| (reverse_reads(position.clone(), ranks, fine), bounds))
                .collect();
            let mut read = Expr::read_of(base.clone(), reversed);
            read.span = expr.span;
            return read;
        }
    }
    match &mut expr.kind {
        ExprKind::Len(node::Len { array, axis }) => {
            if let ExprKind::Var(var) = array.kind {
                if let Some(&rank) = ranks.get(&var) {
                    *axis = rank - 1 - *axis;
                    return expr;
                }
            }
        }
        ExprKind::Var(var) if ranks.contains_key(var) => {
            *fine = false;
            return expr;
        }
        _ => {}
    }
    expr.rewrite_children(|child| reverse_reads(child, ranks, fine));
    expr
}
