//! Symbolic shapes: the size of every axis of an array-typed expression as `i64` IR
//! expressions that can be evaluated before the expression itself (regularity makes this
//! possible: a size never depends on a comprehension index). Used by size inference, by code
//! generation (to allocate before looping) and by the interpreter (empty comprehensions).

use super::node;
use super::visit::{bound_vars, free_vars, substitute};
use super::{Expr, ExprKind, Literal, Program, Type};

/// The sizes of every axis of `expr` (empty for non-arrays), valid in the scope that encloses
/// `expr`: they mention no variable bound inside it. `None` when a size can only be known by
/// evaluating something bound inside `expr`.
pub fn shape_of(program: &Program, expr: &Expr) -> Option<Vec<Expr>> {
    let _ = program;
    shape_in_scope(expr)
}

/// [`shape_of`] for stages that have no [`Program`] yet (the checker).
pub fn shape_in_scope(expr: &Expr) -> Option<Vec<Expr>> {
    let inside = bound_vars(expr);
    let sizes = raw_shape(expr)?;
    sizes
        .into_iter()
        .map(|size| {
            let size = simplify_lengths(size);
            // A size that binds variables of its own would evaluate part of `expr` again (the
            // length of a filter bound inside it): not known before `expr` either.
            (free_vars(&size).is_disjoint(&inside) && bound_vars(&size).is_empty()).then_some(size)
        })
        .collect()
}

/// `len(array, axis)` as an IR expression.
pub fn length(array: Expr, axis: usize) -> Expr {
    let span = array.span;
    Expr::new(ExprKind::Len(node::Len { array: Box::new(array), axis }), Type::I64, span)
}

/// `v`, `v + c`, `c + v` or `v - c` for an integer literal `c`: the variable and the signed
/// offset. The one recogniser of shifted indices, for the bounds prover and the analysis.
pub fn var_plus_literal(expr: &Expr) -> Option<(super::VarId, i64)> {
    let literal = |expr: &Expr| match expr.kind {
        ExprKind::Literal(Literal::Int(value)) => Some(value),
        _ => None,
    };
    let var = |expr: &Expr| match expr.kind {
        ExprKind::Var(var) => Some(var),
        _ => None,
    };
    match &expr.kind {
        ExprKind::Var(var) => Some((*var, 0)),
        ExprKind::Binary(node::Binary { op: crate::ops::BinaryOp::Add, lhs, rhs }) => match (var(lhs), var(rhs)) {
            (Some(index), _) => Some((index, literal(rhs)?)),
            (None, Some(index)) => Some((index, literal(lhs)?)),
            (None, None) => None,
        },
        ExprKind::Binary(node::Binary { op: crate::ops::BinaryOp::Sub, lhs, rhs }) => {
            Some((var(lhs)?, literal(rhs)?.checked_neg()?))
        }
        _ => None,
    }
}

/// An `i64` expression as a sum of signed terms and an integer literal: `i + k - r + 2` is
/// `+i`, `+k`, `-r` and 2, in the order written. A term is any operand of the additions and
/// subtractions that is not itself one (or a negation, or an integer literal). `None` when
/// the literal total overflows.
pub fn linear_sum(expr: &Expr) -> Option<LinearSum<'_>> {
    let mut sum = LinearSum { terms: Vec::new(), constant: 0 };
    sum.add(expr, false)?;
    Some(sum)
}

/// See [`linear_sum`].
#[derive(Clone, Debug)]
pub struct LinearSum<'e> {
    /// Each term and whether it is subtracted.
    pub terms: Vec<(bool, &'e Expr)>,
    pub constant: i64,
}

impl<'e> LinearSum<'e> {
    fn add(&mut self, expr: &'e Expr, negated: bool) -> Option<()> {
        match &expr.kind {
            ExprKind::Literal(Literal::Int(value)) => {
                let value = if negated { value.checked_neg()? } else { *value };
                self.constant = self.constant.checked_add(value)?;
            }
            ExprKind::Binary(node::Binary { op: crate::ops::BinaryOp::Add, lhs, rhs }) if expr.ty == Type::I64 => {
                self.add(lhs, negated)?;
                self.add(rhs, negated)?;
            }
            ExprKind::Binary(node::Binary { op: crate::ops::BinaryOp::Sub, lhs, rhs }) if expr.ty == Type::I64 => {
                self.add(lhs, negated)?;
                self.add(rhs, !negated)?;
            }
            ExprKind::Unary(node::Unary { op: crate::ops::UnaryOp::Neg, operand }) if expr.ty == Type::I64 => {
                self.add(operand, !negated)?;
            }
            _ => self.terms.push((negated, expr)),
        }
        Some(())
    }
}

/// An `i64` literal.
pub fn int(value: i64, span: proc_macro2::Span) -> Expr {
    Expr::new(ExprKind::Literal(Literal::Int(value)), Type::I64, span)
}

pub fn raw_shape(expr: &Expr) -> Option<Vec<Expr>> {
    let rank = expr.ty.rank();
    if rank == 0 {
        return Some(Vec::new());
    }
    let sizes = match &expr.kind {
        ExprKind::For(node::For { size, body, .. }) => {
            let mut sizes = vec![(**size).clone()];
            sizes.extend(raw_shape(body)?);
            sizes
        }
        // A filter's length is known only once it has run.
        ExprKind::Filter(_) => return None,
        ExprKind::Index(node::Index { array, .. }) => raw_shape(array)?.into_iter().skip(1).collect(),
        ExprKind::Let(node::Let { var, value, body }) => {
            let mut sizes = raw_shape(body)?;
            for size in &mut sizes {
                substitute(size, *var, value);
            }
            sizes
        }
        ExprKind::Assert(node::Assert { body, .. }) => raw_shape(body)?,
        ExprKind::Contract(contraction) => contraction.output_labels().iter().map(|label| label.size.clone()).collect(),
        ExprKind::Select(node::Select { then, .. }) => raw_shape(then)?,
        ExprKind::Fold(node::Fold { init, .. }) => raw_shape(init)?,
        ExprKind::Accum(node::Accum { init, value: node::AccumValue::Final, .. }) => raw_shape(init)?,
        // A history: the update loops' sizes, then the updates of an iteration.
        ExprKind::Accum(node::Accum { updates, ops, .. }) => {
            let mut sizes = raw_shape(updates)?;
            sizes.push(int(i64::try_from(ops.len()).ok()?, expr.span));
            sizes
        }
        // The states stacked on a new first axis: the count, then a state's shape.
        ExprKind::Scan(node::Scan { count, init, .. }) => {
            let mut sizes = vec![(**count).clone()];
            sizes.extend(raw_shape(init)?);
            sizes
        }
        ExprKind::Project(node::Project { tuple, field }) => match shaped_part(tuple, *field, &expr.ty) {
            Some(part) => raw_shape(&part)?,
            None => lengths_of(expr, rank),
        },
        _ => lengths_of(expr, rank),
    };
    (sizes.len() == rank).then_some(sizes)
}

/// An expression of the shape of `tuple.field` (of type `ty`) whose own shape is known, the
/// projection pushed into the tuple's value: the part itself, under the value's `let`s, the
/// initial value's part for a fold, a state's part stacked for a scan. `None` when the tuple
/// is only known by evaluating it (a variable, a call); inside the value, such a tuple stays
/// projected (`p.1` of a fold from `p`), its shape read from it.
fn shaped_part(tuple: &Expr, field: usize, ty: &Type) -> Option<Expr> {
    let inner = |value: &Expr| shaped_part(value, field, ty).unwrap_or_else(|| project(value, field, ty));
    let part = match &tuple.kind {
        ExprKind::Tuple(items) => items.get(field)?.clone(),
        ExprKind::Let(node::Let { var, value, body }) => Expr::new(
            ExprKind::Let(node::Let { var: *var, value: value.clone(), body: Box::new(inner(body)) }),
            ty.clone(),
            tuple.span,
        ),
        ExprKind::Assert(node::Assert { body, .. }) => inner(body),
        ExprKind::Select(node::Select { then, .. }) => inner(then),
        ExprKind::Fold(node::Fold { init, .. }) => inner(init),
        // The part of every state, stacked: a scan from the part of the initial state (only
        // a scan's count and initial value make its shape).
        ExprKind::Scan(scan) => {
            let Type::Tuple { fields, .. } = &scan.init.ty else { return None };
            let state_ty = fields.get(field)?;
            let init = shaped_part(&scan.init, field, state_ty).unwrap_or_else(|| project(&scan.init, field, state_ty));
            let kind =
                ExprKind::Scan(node::Scan { init: Box::new(init.clone()), body: Box::new(init), ..scan.clone() });
            Expr::new(kind, ty.clone(), tuple.span)
        }
        // A part of a part: the inner part first.
        ExprKind::Project(node::Project { tuple: outer, field: outer_field }) => {
            let outer_part = shaped_part(outer, *outer_field, &tuple.ty)?;
            inner(&outer_part)
        }
        _ => return None,
    };
    Some(part)
}

/// `tuple.field`, of type `ty`.
pub(crate) fn project(tuple: &Expr, field: usize, ty: &Type) -> Expr {
    Expr::new(ExprKind::Project(node::Project { tuple: Box::new(tuple.clone()), field }), ty.clone(), tuple.span)
}

fn lengths_of(expr: &Expr, rank: usize) -> Vec<Expr> {
    (0..rank).map(|axis| length(expr.clone(), axis)).collect()
}

/// Rewrites `len(e, k)` for any `e` that is not a plain variable into the `k`-th symbolic size
/// of `e`, so sizes end up in terms of parameters and outer variables.
pub fn simplify_lengths(size: Expr) -> Expr {
    simplify_lengths_to_depth(size, 0)
}

fn simplify_lengths_to_depth(mut size: Expr, depth: usize) -> Expr {
    if depth > 64 {
        return size;
    }
    if let ExprKind::Len(node::Len { array, axis }) = &size.kind {
        if !matches!(array.kind, ExprKind::Var(_)) {
            let replacement = match &array.kind {
                // Falling back to `len` of the same expression would loop forever.
                ExprKind::Project(node::Project { tuple, field })
                    if shaped_part(tuple, *field, &array.ty).is_none() =>
                {
                    None
                }
                ExprKind::Call(_) | ExprKind::Var(_) => None,
                _ => raw_shape(array).and_then(|sizes| sizes.into_iter().nth(*axis)),
            };
            if let Some(replacement) = replacement {
                return simplify_lengths_to_depth(replacement, depth + 1);
            }
        }
        return size;
    }
    size.for_each_child_mut(|child| {
        let taken = std::mem::replace(child, int(0, child.span));
        *child = simplify_lengths_to_depth(taken, depth + 1);
    });
    size
}
