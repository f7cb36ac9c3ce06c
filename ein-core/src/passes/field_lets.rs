//! The array fields of a tuple accumulator, bound once per step: a fold (or scan) whose state
//! `p` is a tuple read as `p.0[i - 1]` reads the field through a `let` at the top of its body
//! (`let p.0 = p.0`), as a tuple pattern `(a, s)` binds `a`. Reads of a variable are what the
//! analysis finds loop interiors for (no clamp inside), what code generation versions for unit
//! strides, and what a run-time error names (`p.0`). The projection is a view of the state,
//! so the `let` costs nothing; the values read are the same.

use crate::ir::node;
use crate::ir::{declare, Expr, ExprKind, Program, Type, VarId, VarInfo, VarKind};

pub fn field_lets(program: Program) -> Program {
    super::rewrite_body(program, |mut body, vars| {
        rewrite(&mut body, vars);
        body
    })
}

fn rewrite(expr: &mut Expr, vars: &mut Vec<VarInfo>) {
    expr.for_each_child_mut(|child| rewrite(child, vars));
    let (ExprKind::Fold(node::Fold { acc, body, .. }) | ExprKind::Scan(node::Fold { acc, body, .. })) = &mut expr.kind
    else {
        return;
    };
    let acc = *acc;
    let Some(info) = vars.get(acc.0 as usize).cloned() else { return };
    let Type::Tuple { fields, .. } = &info.ty else { return };
    for (position, field) in fields.iter().enumerate().rev() {
        if !matches!(field, Type::Array { .. }) || !projects(body, acc, position) {
            continue;
        }
        let name = format!("{}.{position}", info.name);
        let var = declare(vars, VarInfo { name, ty: field.clone(), kind: VarKind::Let, span: info.span });
        replace_projections(body, acc, position, var);
        let (ty, span) = (body.ty.clone(), body.span);
        let acc_expr = Expr::new(ExprKind::Var(acc), info.ty.clone(), span);
        let projection = Expr::new(
            ExprKind::Project(node::Project { tuple: Box::new(acc_expr), field: position }),
            field.clone(),
            span,
        );
        let rest = std::mem::replace(&mut **body, Expr::new(ExprKind::Var(var), ty.clone(), span));
        **body =
            Expr::new(ExprKind::Let(node::Let { var, value: Box::new(projection), body: Box::new(rest) }), ty, span);
    }
}

/// Whether `expr` projects field `position` of the variable `acc`.
fn projects(expr: &Expr, acc: VarId, position: usize) -> bool {
    if is_projection(expr, acc, position) {
        return true;
    }
    let mut found = false;
    expr.for_each_child(|child| found |= projects(child, acc, position));
    found
}

fn is_projection(expr: &Expr, acc: VarId, position: usize) -> bool {
    matches!(&expr.kind, ExprKind::Project(node::Project { tuple, field })
        if *field == position && matches!(tuple.kind, ExprKind::Var(var) if var == acc))
}

/// Replaces every projection of field `position` of `acc` in `expr` by the variable `var`.
fn replace_projections(expr: &mut Expr, acc: VarId, position: usize, var: VarId) {
    if is_projection(expr, acc, position) {
        expr.kind = ExprKind::Var(var);
        return;
    }
    expr.for_each_child_mut(|child| replace_projections(child, acc, position, var));
}
