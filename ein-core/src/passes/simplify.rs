//! Simplification: exact algebra only. Integer constant folding and identities (`x * 1`,
//! `x + 0`, `x - 0`), `let`s of variables, literals and array lengths propagated, and bindings whose value is
//! never used and cannot fail removed. Float expressions are left alone: folding `x + 0.0` or
//! reassociating would change results (`-0.0 + 0.0`), and ein promises the same floats as the
//! program as written, up to the documented summation order.

use super::purity::may_fail;
use crate::ir::node;
use crate::ir::visit::{mentions, substitute};
use crate::ir::{Expr, ExprKind, Literal, Program, ScalarType, Type};
use crate::ops::{BinaryOp, Scalar};

pub fn simplify(mut program: Program) -> Program {
    let body = std::mem::replace(&mut program.body, crate::ir::shape::int(0, proc_macro2::Span::call_site()));
    program.body = simplify_expr(body);
    program
}

fn simplify_expr(mut expr: Expr) -> Expr {
    expr.for_each_child_mut(|child| {
        let taken = std::mem::replace(child, crate::ir::shape::int(0, child.span));
        *child = simplify_expr(taken);
    });
    match expr.kind {
        ExprKind::Let(node::Let { var, value, mut body }) => {
            // An array's length is as cheap as a variable and cannot fail; propagated, it
            // compares equal to the loop sizes read from the same axis.
            let length =
                matches!(&value.kind, ExprKind::Len(node::Len { array, .. }) if matches!(array.kind, ExprKind::Var(_)));
            let trivial = length || matches!(value.kind, ExprKind::Var(_) | ExprKind::Literal(_));
            if trivial {
                substitute(&mut body, var, &value);
                return *body;
            }
            if !mentions(&body, var) && !may_fail(&value) {
                return *body;
            }
            Expr { kind: ExprKind::Let(node::Let { var, value, body }), ..expr }
        }
        ExprKind::Binary(node::Binary { op, lhs, rhs }) => match fold_integer(op, &lhs, &rhs, &expr.ty) {
            Some(folded) => folded,
            None => Expr { kind: ExprKind::Binary(node::Binary { op, lhs, rhs }), ..expr },
        },
        _ => expr,
    }
}

fn integer_literal(expr: &Expr) -> Option<i64> {
    match (&expr.kind, &expr.ty) {
        (ExprKind::Literal(Literal::Int(value)), Type::Scalar(ScalarType::Known(scalar))) if scalar.is_int() => {
            Some(*value)
        }
        _ => None,
    }
}

/// Folds integer arithmetic on literals (wrapping, as ein's integers do) and removes `+ 0`,
/// `- 0`, `* 1`. Division is left alone: dividing by zero must still fail at run time.
fn fold_integer(op: BinaryOp, lhs: &Expr, rhs: &Expr, ty: &Type) -> Option<Expr> {
    let Type::Scalar(ScalarType::Known(scalar)) = ty else { return None };
    if !scalar.is_int() {
        return None;
    }
    match (integer_literal(lhs), integer_literal(rhs)) {
        (Some(left), Some(right)) => {
            let value = match op {
                BinaryOp::Add => left.wrapping_add(right),
                BinaryOp::Sub => left.wrapping_sub(right),
                BinaryOp::Mul => left.wrapping_mul(right),
                _ => return None,
            };
            let value = in_range(*scalar, value)?;
            Some(Expr::new(ExprKind::Literal(Literal::Int(value)), ty.clone(), lhs.span))
        }
        (_, Some(0)) if matches!(op, BinaryOp::Add | BinaryOp::Sub) => Some(lhs.clone()),
        (Some(0), _) if op == BinaryOp::Add => Some(rhs.clone()),
        (_, Some(1)) if op == BinaryOp::Mul => Some(lhs.clone()),
        (Some(1), _) if op == BinaryOp::Mul => Some(rhs.clone()),
        _ => None,
    }
}

/// A folded value that the literal's type can hold; otherwise the arithmetic stays for run
/// time (where it wraps in the type's own width).
fn in_range(scalar: Scalar, value: i64) -> Option<i64> {
    let value_128 = i128::from(value);
    let fits = scalar.int_range().is_none_or(|(low, high)| (low..=high).contains(&value_128));
    // `isize`/`usize` values are folded only where 32-bit targets hold them too.
    let every_target = scalar.wrap_on_every_target(value_128).is_none_or(|wrapped| wrapped == value_128);
    (fits && every_target).then_some(value)
}
