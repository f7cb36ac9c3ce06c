//! Common-subexpression elimination. Within the body of `let x = e`, every subterm equal to `e`
//! up to the names of its own bound variables (alpha-equivalence: `max k { x[i, k] }` equals
//! `max l { x[i, l] }`) is replaced by `x`. Sound because ein is pure and every variable is bound
//! once, so equal terms with the same free variables have the same value.
//!
//! Limitation: only terms that are the value of some `let` are shared; repeated terms with no
//! binding are first given one by the hoisting pass (loop-invariant ones) or stay as they are.

use crate::ir::node;
use crate::ir::visit::alpha_key;
use crate::ir::{Expr, ExprKind, Program};

pub fn eliminate_common_subexpressions(mut program: Program) -> Program {
    share(&mut program.body);
    program
}

fn share(expr: &mut Expr) {
    if let ExprKind::Let(node::Let { var, value, body }) = &mut expr.kind {
        if worth_sharing(value) {
            let key = alpha_key(value);
            let replacement = Expr::new(ExprKind::Var(*var), value.ty.clone(), value.span);
            replace_equal(body, &key, &replacement);
        }
    }
    expr.for_each_child_mut(share);
}

fn worth_sharing(value: &Expr) -> bool {
    !matches!(value.kind, ExprKind::Var(_) | ExprKind::Literal(_))
}

/// Replaces every subterm of `expr` with `replacement`'s type and alpha-equivalence key `key`.
pub(super) fn replace_equal(expr: &mut Expr, key: &str, replacement: &Expr) {
    if expr.ty == replacement.ty && alpha_key(expr) == key {
        *expr = replacement.clone();
        return;
    }
    expr.for_each_child_mut(|child| replace_equal(child, key, replacement));
}
