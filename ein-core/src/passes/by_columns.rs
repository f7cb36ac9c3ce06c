//! The column-major copy of a function: every array parameter of rank 2 or more read with its
//! axes in reverse order. Generated loops are planned for row-major arrays (the innermost loop
//! along the last axis); a caller whose arrays are column-major (Fortran order, a transposed
//! view) would have every innermost step jump a whole column. Such a caller gets this copy
//! instead, given the reversed views of its arrays, which are row-major: `for i { sum j {
//! m[i, j] } }` becomes `for i { sum j { m'[j, i] } }` over `m' = mᵀ`, the same elements in
//! the same order of evaluation, so the same result — now a column sum of a row-major array,
//! which runs side by side.
//!
//! The stacked copy does the same for stacks of transposed matrices (`x.permuted_axes([0, 2,
//! 1])`): every parameter of rank 3 or more read with its last two axes swapped
//! ([`Mirror::LastTwoSwapped`]), which reversing every axis would not make row-major.
//!
//! Taken only where every use of such a parameter is a read of one element (all its indices)
//! or one of its lengths: a row `m[i]`, the whole array passed on, or a contraction would need
//! the original axis order. A read's indices are then evaluated in another order, so at most
//! one of them may fail (a clamped index fails on an empty axis), else which error comes first
//! could change; a clamped read's error names the original axis (`Gen::mirrored`).

use crate::ir::node;
use crate::ir::{Bounds, Expr, ExprKind, Program, Type, VarId, VarKind};
use crate::passes::purity::may_fail;
use std::collections::BTreeMap;

/// Which axes a copy of a function reads its array parameters through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mirror {
    /// Parameters of rank 2 or more, every axis reversed (for column-major arrays).
    Reversed,
    /// Parameters of rank 3 or more, the last two axes swapped (for stacks of transposed
    /// matrices).
    LastTwoSwapped,
}

impl Mirror {
    /// The copies a function may have, in the order their callers test for them.
    pub const ALL: [Mirror; 2] = [Mirror::Reversed, Mirror::LastTwoSwapped];

    /// What the copy is called after (`__ein_f_by_columns`).
    pub fn suffix(self) -> &'static str {
        match self {
            Mirror::Reversed => "by_columns",
            Mirror::LastTwoSwapped => "by_stacked_columns",
        }
    }

    /// The least rank of the parameters this mirror reads differently.
    fn least_rank(self) -> usize {
        match self {
            Mirror::Reversed => 2,
            Mirror::LastTwoSwapped => 3,
        }
    }

    /// The axis of the copy's view that is axis `axis` of the caller's array of rank `rank`,
    /// and the other way round (each mirror is its own inverse).
    pub fn axis(self, axis: usize, rank: usize) -> usize {
        match self {
            Mirror::Reversed => rank - 1 - axis,
            Mirror::LastTwoSwapped if rank >= 2 && axis + 2 == rank => rank - 1,
            Mirror::LastTwoSwapped if rank >= 2 && axis + 1 == rank => rank - 2,
            Mirror::LastTwoSwapped => axis,
        }
    }
}

/// The program with its parameters of the mirror's ranks read through its axes, and those
/// parameters; `None` when it has none or one is used other than element by element.
pub fn mirrored(program: &Program, mirror: Mirror) -> Option<(Program, Vec<VarId>)> {
    let ranks: BTreeMap<VarId, usize> = program
        .params
        .iter()
        .filter_map(|&param| {
            let info = program.var(param);
            match &info.ty {
                Type::Array { elem, rank }
                    if *rank >= mirror.least_rank() && info.kind == VarKind::Param && elem.as_scalar().is_some() =>
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
    let mut copy = program.clone();
    let mut fine = true;
    copy.body = mirror_reads(copy.body, &ranks, mirror, &mut fine);
    fine.then(|| (copy, ranks.into_keys().collect()))
}

/// `expr` with every read of a parameter in `ranks` taking its indices in the mirror's order
/// and every length its mirrored axis; clears `fine` at any other use of such a parameter.
fn mirror_reads(mut expr: Expr, ranks: &BTreeMap<VarId, usize>, mirror: Mirror, fine: &mut bool) -> Expr {
    let (base, positions) = expr.read_chain();
    if let ExprKind::Var(var) = base.kind {
        if let Some(&rank) = ranks.get(&var) {
            // The positions are evaluated in another order: where two could fail, which
            // failure is reported first could change.
            let failing =
                positions.iter().filter(|(position, bounds)| *bounds == Bounds::Clamped || may_fail(position));
            if positions.len() != rank || failing.count() > 1 {
                *fine = false;
                return expr;
            }
            let mirrored: Vec<_> = (0..rank)
                .map(|axis| {
                    let (position, bounds) = &positions[mirror.axis(axis, rank)];
                    (mirror_reads((*position).clone(), ranks, mirror, fine), *bounds)
                })
                .collect();
            let mut read = Expr::read_of(base.clone(), mirrored);
            read.span = expr.span;
            return read;
        }
    }
    match &mut expr.kind {
        ExprKind::Len(node::Len { array, axis }) => {
            if let ExprKind::Var(var) = array.kind {
                if let Some(&rank) = ranks.get(&var) {
                    *axis = mirror.axis(*axis, rank);
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
    expr.rewrite_children(|child| mirror_reads(child, ranks, mirror, fine));
    expr
}
