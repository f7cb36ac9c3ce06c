//! Checking `accum h = init { updates }`: where updates may stand, what they update and with
//! what, and the IR they become (a loop nest whose innermost body is a flat tuple of
//! `(condition, indices…, value)` per update: see `ir::node::Accum`).

use super::expr::{let_node, to_i64};
use super::{Checked, Checker, Reported};
use crate::ir::node;
use crate::ir::{Expr, ExprKind, Literal, NumberClass, Type, VarId, VarKind};
use crate::ops::{BinaryOp, UpdateOp};
use crate::syntax::ast;
use proc_macro2::{Ident, Span};

/// The accum whose body is being checked.
pub(super) struct AccumFrame {
    target: String,
    elem: Type,
    rank: usize,
    ops: Vec<UpdateOp>,
    /// The initial array, whose axes size the loop indices an update indexes them with.
    init: Expr,
}

impl Checker {
    pub(super) fn accum(&mut self, target: &Ident, init: &ast::Expr, body: &ast::Expr, span: Span) -> Checked<Expr> {
        let init = self.expr(init);
        let mut misplaced = false;
        self.misplaced_updates(body, target, true, &mut misplaced);
        let init = init?;
        let (elem, rank) = match &init.ty {
            Type::Array { elem, rank } if matches!(**elem, Type::Scalar(_)) => ((**elem).clone(), *rank),
            other => {
                let found = self.unifier.describe_type(other);
                self.errors.push(
                    init.span,
                    format!(
                        "the initial value of `accum {target}` must be an array of numbers or `bool`s, found {found}; \
                         e.g. `accum {target} = for k in 0..n {{ 0 }} {{ .. }}`"
                    ),
                );
                return Err(Reported);
            }
        };
        if misplaced {
            return Err(Reported);
        }
        self.accums.push(AccumFrame { target: target.to_string(), elem, rank, ops: Vec::new(), init: init.clone() });
        let updates = self.expr(body);
        let frame = self.accums.pop().ok_or(Reported)?;
        let updates = updates?;
        let ty = init.ty.clone();
        let kind = ExprKind::Accum(node::Accum {
            target: frame.target,
            init: Box::new(init),
            updates: Box::new(updates),
            ops: frame.ops,
            value: node::AccumValue::Final,
        });
        Ok(Expr::new(kind, ty, span))
    }

    /// Reports updates where they cannot stand (anywhere but a statement of the body: the
    /// body itself, the body of a `for`, `let`, conditional or block of them), updates of
    /// another array, and reads of the target inside the body.
    fn misplaced_updates(&mut self, expr: &ast::Expr, target: &Ident, statement: bool, found: &mut bool) {
        let mut report = |checker: &mut Checker, span: Span, message: String| {
            checker.errors.push(span, message);
            *found = true;
        };
        match &expr.kind {
            ast::ExprKind::Update { target: updated, indices, value, .. } => {
                if !statement {
                    report(self, expr.span, outside_message(updated));
                } else if updated != target {
                    report(
                        self,
                        updated.span(),
                        format!(
                            "`{updated}` is not the array this accum builds: only `{target}` can be updated in \
                             the body of `accum {target} = ..`"
                        ),
                    );
                }
                for child in indices.iter().chain([&**value]) {
                    self.misplaced_updates(child, target, false, found);
                }
            }
            ast::ExprKind::Updates(items) => {
                for item in items {
                    self.misplaced_updates(item, target, statement, found);
                }
            }
            ast::ExprKind::When { cond, body } => {
                if !statement {
                    report(
                        self,
                        expr.span,
                        "an `if` without `else` is only a conditional update of an `accum` body".into(),
                    );
                }
                self.misplaced_updates(cond, target, false, found);
                self.misplaced_updates(body, target, statement, found);
            }
            ast::ExprKind::For { binders, body } if statement => {
                self.update_loops.insert(expr);
                for size in binders.iter().filter_map(|binder| binder.size.as_deref()) {
                    self.misplaced_updates(size, target, false, found);
                }
                self.misplaced_updates(body, target, true, found);
            }
            ast::ExprKind::Let { value, body, .. } if statement => {
                self.misplaced_updates(value, target, false, found);
                self.misplaced_updates(body, target, true, found);
            }
            // A nested accum checks its own body.
            ast::ExprKind::Accum { init, .. } => self.misplaced_updates(init, target, false, found),
            // Its length reads no element: the initial value's.
            ast::ExprKind::Len { array } | ast::ExprKind::Shape { array, .. }
                if !statement && matches!(&array.kind, ast::ExprKind::Name(name) if name == target) => {}
            ast::ExprKind::Name(name) if name == target => report(
                self,
                name.span(),
                format!(
                    "`{target}` cannot be read inside its own accum body: its elements change as the updates \
                     are applied, so the value read would depend on their order; read it after the accum"
                ),
            ),
            _ if statement => report(
                self,
                expr.span,
                format!(
                    "the body of `accum {target}` must be updates such as `{target}[i] += x` (in `for` loops, \
                     `let`s, `if c {{ .. }}` and blocks of them), not a value"
                ),
            ),
            _ => {
                for child in expr.kind.children() {
                    self.misplaced_updates(child, target, false, found);
                }
            }
        }
    }

    /// `h.len()` / `h.shape(k)` inside the body of `accum h`: the initial value's length
    /// (reading it reads no element, so the order of the updates cannot matter). `None` when
    /// `array` names no accum being checked.
    pub(super) fn accum_target_length(
        &mut self,
        array: &ast::Expr,
        axis: usize,
        axis_span: Span,
        span: Span,
    ) -> Option<Checked<Expr>> {
        let ast::ExprKind::Name(name) = &array.kind else { return None };
        let text = name.to_string();
        let frame = self.accums.iter().rev().find(|frame| frame.target == text)?;
        let rank = frame.rank;
        if axis >= rank {
            self.errors.push(axis_span, format!("axis {axis} does not exist: this array has rank {rank}"));
            return Some(Err(Reported));
        }
        match crate::ir::shape::shape_in_scope(&frame.init).and_then(|shape| shape.into_iter().nth(axis)) {
            Some(size) => Some(Ok(Expr { span, ..size })),
            None => {
                self.errors.push(
                    array.span,
                    format!(
                        "the length of `{text}` is known only once its initial value is computed; bind that \
                         with `let` before the accum"
                    ),
                );
                Some(Err(Reported))
            }
        }
    }

    /// `h[i, j] op= value`: the tuple `(true, i as i64, j as i64, value)`.
    pub(super) fn update(
        &mut self,
        target: &Ident,
        indices: &[ast::Expr],
        op: UpdateOp,
        op_span: Span,
        value: &ast::Expr,
        span: Span,
    ) -> Checked<Expr> {
        let Some(frame) = self.accums.last() else {
            self.errors.push(span, outside_message(target));
            return Err(Reported);
        };
        let (rank, elem, init) = (frame.rank, frame.elem.clone(), frame.init.clone());
        if indices.len() != rank {
            self.errors.push(
                target.span(),
                format!(
                    "`{target}` has rank {rank}: an update gives one index per axis (`{target}[{}] {} ..`), found {}",
                    ["i", "j", "k", "l"].iter().cycle().take(rank).copied().collect::<Vec<_>>().join(", "),
                    op.symbol(),
                    indices.len()
                ),
            );
            return Err(Reported);
        }
        let indices = self.all(indices);
        let value = self.expr(value);
        let (indices, value) = (indices?, value?);
        let mut fields = vec![Expr::new(ExprKind::Literal(Literal::Bool(true)), Type::BOOL, span)];
        for (axis, index) in indices.into_iter().enumerate() {
            // `h[i] += ..` sizes `i` by `h`'s axis, as a read would.
            if let Some((var, 0)) = crate::ir::shape::var_plus_literal(&index) {
                if self.var(var).kind == VarKind::Index {
                    self.size_uses.record(&self.vars, var, &init, axis, index.span, super::sizes::Read::Plain);
                }
            }
            let scalar = index.ty.as_scalar().filter(|scalar| self.unifier.require(*scalar, NumberClass::Int).is_ok());
            let Some(scalar) = scalar else {
                let found = self.unifier.describe_type(&index.ty);
                self.errors.push(index.span, format!("array indices must be integers, found {found}"));
                return Err(Reported);
            };
            fields.push(to_i64(index, scalar, &mut self.unifier, &self.vars));
        }
        if let Err(mismatch) = self.unifier.unify_types(&elem, &value.ty) {
            self.errors.push(
                value.span,
                format!(
                    "this update's value is {} but the elements of `{target}` are {}; they must have one type",
                    mismatch.right, mismatch.left
                ),
            );
            return Err(Reported);
        }
        let scalar = elem.as_scalar().ok_or(Reported)?;
        let class = match op {
            UpdateOp::Add | UpdateOp::Mul => NumberClass::Number,
            UpdateOp::Or | UpdateOp::And => NumberClass::Bool,
        };
        if self.unifier.require(scalar, class).is_err() {
            let found = self.unifier.describe_type(&elem);
            let needs = if class == NumberClass::Bool { "`bool` elements" } else { "numbers" };
            self.errors.push(op_span, format!("`{}` needs {needs}, but `{target}` holds {found}", op.symbol()));
            return Err(Reported);
        }
        fields.push(value);
        if let Some(frame) = self.accums.last_mut() {
            frame.ops.push(op);
        }
        Ok(tuple(fields, span))
    }

    /// `{ u₁; u₂; .. }`: the updates' tuples, concatenated (their `let`s moved out in front:
    /// nothing has side effects, and every binder is distinct).
    pub(super) fn updates(&mut self, items: &[ast::Expr], span: Span) -> Checked<Expr> {
        if self.accums.is_empty() {
            for item in items {
                let _ = self.expr(item);
            }
            return Err(Reported);
        }
        let checked = self.all(items)?;
        let mut lets = Vec::new();
        let mut fields = Vec::new();
        for item in checked {
            let item_span = item.span;
            let Some((item_lets, item_fields)) = split_updates(item) else {
                self.errors.push(item_span, loops_message());
                return Err(Reported);
            };
            lets.extend(item_lets);
            fields.extend(item_fields);
        }
        Ok(with_lets(lets, tuple(fields, span)))
    }

    /// `if cond { updates }`: each update's condition becomes `cond && condition` (`cond`
    /// evaluated once, into a `let`).
    pub(super) fn when(&mut self, cond: &ast::Expr, body: &ast::Expr, span: Span) -> Checked<Expr> {
        let Some(rank) = self.accums.last().map(|frame| frame.rank) else {
            let _ = self.expr(body);
            self.errors.push(span, "an `if` without `else` is only a conditional update of an `accum` body");
            return Err(Reported);
        };
        let cond = self.expr(cond);
        let body = self.expr(body);
        let (cond, body) = (cond?, body?);
        if self.unifier.unify_types(&cond.ty, &Type::BOOL).is_err() {
            let found = self.unifier.describe_type(&cond.ty);
            self.errors.push(cond.span, format!("the condition of `if` must be a `bool`, found {found}"));
            return Err(Reported);
        }
        let body_span = body.span;
        let Some((mut lets, mut fields)) = split_updates(body) else {
            self.errors.push(body_span, loops_message());
            return Err(Reported);
        };
        let cond_span = cond.span;
        let var =
            self.declare(&format!("{}condition", crate::ir::SYNTHETIC_PREFIX), Type::BOOL, VarKind::Let, cond_span);
        lets.insert(0, (var, cond));
        for group in fields.chunks_mut(rank + 2) {
            let condition = Expr::new(ExprKind::Var(var), Type::BOOL, cond_span);
            let own = group[0].take();
            group[0] = match own.kind {
                ExprKind::Literal(Literal::Bool(true)) => condition,
                _ => Expr::new(
                    ExprKind::Binary(node::Binary { op: BinaryOp::And, lhs: Box::new(condition), rhs: Box::new(own) }),
                    Type::BOOL,
                    cond_span,
                ),
            };
        }
        Ok(with_lets(lets, tuple(fields, span)))
    }
}

fn outside_message(target: &Ident) -> String {
    format!(
        "ein has no assignment: an update of `{target}` (`+=`, `*=`, `|=`, `&=`) can only be a statement of \
         the body of `accum {target} = init {{ .. }}`, which builds a new array from `init`"
    )
}

fn loops_message() -> String {
    "the loops of an accum body must enclose all of its updates: write `for i { update; update }`, \
     not updates beside a loop or a loop inside an `if`"
        .to_string()
}

fn tuple(fields: Vec<Expr>, span: Span) -> Expr {
    let ty = Type::tuple(fields.iter().map(|field| field.ty.clone()).collect());
    Expr::new(ExprKind::Tuple(fields), ty, span)
}

/// `let`s, in order.
type Lets = Vec<(VarId, Expr)>;

/// The `let`s around a checked block of updates and its tuple's fields; `None` when it is not
/// one (a loop).
fn split_updates(expr: Expr) -> Option<(Lets, Vec<Expr>)> {
    let mut lets = Vec::new();
    let mut current = expr;
    loop {
        match current.kind {
            ExprKind::Let(node::Let { var, value, body }) => {
                lets.push((var, *value));
                current = *body;
            }
            ExprKind::Tuple(fields) => return Some((lets, fields)),
            _ => return None,
        }
    }
}

fn with_lets(lets: Lets, body: Expr) -> Expr {
    lets.into_iter().rev().fold(body, |body, (var, value)| let_node(var, value, body))
}
