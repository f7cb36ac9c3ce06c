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

#[cfg(test)]
mod tests {
    use super::*;

    fn checked(source: &str) -> Program {
        let tokens: proc_macro2::TokenStream = source.parse().expect("test source tokenises");
        let input = crate::syntax::parse_input(tokens).expect("parses");
        let mut units = crate::check::check_input(input).unwrap_or_else(|error| panic!("{source}: {error}"));
        units.remove(0).program
    }

    /// The reads of `program` as `array[positions]` text, in pre-order.
    fn reads(expr: &Expr, program: &Program, found: &mut Vec<String>) {
        let (base, positions) = expr.read_chain();
        if let (ExprKind::Var(var), false) = (&base.kind, positions.is_empty()) {
            let positions: Vec<String> = positions
                .iter()
                .map(|(position, _)| match &position.kind {
                    ExprKind::Var(index) => program.var(*index).name.clone(),
                    _ => "…".to_string(),
                })
                .collect();
            found.push(format!("{}[{}]", program.var(*var).name, positions.join(", ")));
            return;
        }
        expr.for_each_child(|child| reads(child, program, found));
    }

    #[test]
    fn matrix_parameters_are_read_through_reversed_axes() {
        let program = checked("fn f(m: [[f64]], t: [[[f32]]], v: [f64]) -> [f64] { for i { sum j, k { m[i, j] * t[i, j, k] as f64 + v[j] } } }");
        let (reversed, params) = by_columns(&program).expect("a column-major copy");
        let names: Vec<&str> = params.iter().map(|&param| program.var(param).name.as_str()).collect();
        assert_eq!(names, ["m", "t"]);
        let mut found = Vec::new();
        reads(&reversed.body, &reversed, &mut found);
        assert!(found.contains(&"m[j, i]".to_string()) && found.contains(&"t[k, j, i]".to_string()), "{found:?}");
        assert!(found.contains(&"v[j]".to_string()), "{found:?}");
    }

    #[test]
    fn other_uses_keep_the_axis_order() {
        // A row, the whole array, two indices that could fail (evaluated in the other order),
        // no matrix at all.
        for source in [
            "fn f(m: [[f64]]) -> [f64] { for i { let r = m[i]; sum j { r[j] } } }",
            "fn f(m: [[f64]]) -> [[f64]] { m }",
            "fn f(m: [[f64]], a: i64, b: i64) -> f64 { m[a, b] }",
            "fn f(v: [f64]) -> f64 { sum i { v[i] } }",
        ] {
            assert!(by_columns(&checked(source)).is_none(), "{source}");
        }
        // One index that can fail is fine.
        assert!(by_columns(&checked("fn f(m: [[f64]], a: i64) -> [f64] { for i { m[i, a] } }")).is_some());
    }
}
