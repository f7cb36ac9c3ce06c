//! Common-subexpression elimination. Within the body of `let x = e`, every subterm equal to `e`
//! up to the names of its own bound variables (alpha-equivalence: `max k { x[i, k] }` equals
//! `max l { x[i, l] }`) is replaced by `x`. Sound because ein is pure and every variable is bound
//! once, so equal terms with the same free variables have the same value.
//!
//! A `let` that sharing leaves holding a variable is propagated and sharing runs again, so
//! terms built on equal values are shared too (`exp(b)` after `let b = a`).
//!
//! Limitation: only terms that are the value of some `let` are shared; repeated terms with no
//! binding are first given one by the hoisting pass (loop-invariant ones) or stay as they are.

use crate::ir::node;
use crate::ir::visit::{alpha_key, substitute};
use crate::ir::{Expr, ExprKind, Program};

pub fn eliminate_common_subexpressions(mut program: Program) -> Program {
    // Sharing can turn a later `let`'s whole value into a variable (`let b = -x` after `let
    // a = -x`), and then terms built on it (`exp(b)`) equal earlier ones (`exp(a)`) only once
    // the alias is propagated: a few rounds reach them (derivative code has such chains).
    for _ in 0..ROUNDS {
        share(&mut program.body);
        if !propagate_aliases(&mut program.body) {
            break;
        }
    }
    program
}

/// Rounds of sharing at most: each propagates one more link of a chain of aliases.
const ROUNDS: usize = 4;

/// Replaces every `let x = y` (a variable) by its body with `x := y`; whether there was one.
fn propagate_aliases(expr: &mut Expr) -> bool {
    let mut found = false;
    expr.for_each_child_mut(|child| found |= propagate_aliases(child));
    if let ExprKind::Let(node::Let { var, value, body }) = &mut expr.kind {
        if matches!(value.kind, ExprKind::Var(_)) {
            let (var, value) = (*var, value.take());
            let mut body = body.take();
            substitute(&mut body, var, &value);
            *expr = body;
            return true;
        }
    }
    found
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
