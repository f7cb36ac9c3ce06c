//! Let-lifting and loop-invariant code motion: a subexpression of a loop body that does not
//! depend on the loop's variables is computed once, in a `let` just outside the loop. Applied
//! bottom-up, a value rises to the innermost loop it depends on: in the naive softmax
//! `for i, j { exp(x[i, j] - max k { x[i, k] }) / sum k { … } }`, both reductions rise out of
//! `for j` and are computed once per row.
//!
//! A value that depends on exactly one index of an inner loop, none other of the loops being
//! left (`for i, j { x[i, j] - sum k { x[k, j] } / n }`: a column's mean, the same for every
//! row), is computed once per value of that index into an array before the outer loop (`let m
//! = for j { sum k { x[k, j] } / n }`) and read there (`m[j]`): otherwise each element would
//! compute its column's reduction again, one loop more than the program needs.
//!
//! Only expressions that cannot fail move (see [`may_fail_where`]): a loop may run zero times, and a
//! moved expression must not add an error. An integer division by the size of a loop that
//! encloses the new place cannot fail there (that loop is running, so its size is not zero),
//! nor a read clamped to an axis of that length. A scalar that can fail only where the loop it
//! leaves runs zero times moves too, computed only when that loop's size is not zero
//! ([`LiftForm::Guarded`]): where the loop runs it cannot fail, so no error is added or
//! reordered. So does a scalar that can fail while the loop runs, if it is evaluated once per
//! iteration (inside no inner loop) and holds every place of the body that can fail
//! ([`failing_sites`]): it is invariant, so the first iteration would fail where it does,
//! with the same error.
//! Nothing moves out of an `Assert`: the reads inside may be proven in bounds only by that check.

use super::purity::{failing_sites, has_loop, is_expensive, is_length, is_loop, may_fail_where};
use crate::ir::node;
use crate::ir::visit::{alpha_key, bound_vars, free_vars, substitute};
use crate::ir::{Bounds, Expr, ExprKind, Literal, Program, Scalar, ScalarType, Type, VarId, VarInfo, VarKind};
use crate::ops::BinaryOp;
use std::collections::BTreeSet;

pub fn hoist(mut program: Program) -> Program {
    let body = program.body.take();
    program.body = Hoister {
        vars: &mut program.vars,
        enclosing_sizes: Vec::new(),
        columns: Vec::new(),
        column_lets: Vec::new(),
        loop_size: None,
        failing_in_body: 0,
        inner_loops: 0,
        lifts_reads: false,
    }
    .expr(body);
    program
}

struct Hoister<'a> {
    /// Whether the loop being extracted from is a fold or scan, whose invariant reads of
    /// single elements move out too (see [`Hoister::extract`]).
    lifts_reads: bool,
    vars: &'a mut Vec<VarInfo>,
    /// The sizes of the loops around the one being processed (alpha keys): where a value
    /// lifted out of it is evaluated, each of them is running, so none is zero. A division by
    /// one cannot fail there (the torus wrap `(i + h - 1) % h` inside `for i in 0..h`).
    enclosing_sizes: Vec<String>,
    /// While extracting from a loop body: the indices of the comprehensions inside it, on the
    /// way down, whose sizes do not depend on anything bound inside the loop being processed
    /// and cannot fail (lengths), with those sizes: a value depending on one of them alone can
    /// become an array over it ([`Hoister::column`]).
    columns: Vec<(VarId, Expr)>,
    /// `let`s inside the loop body whose values depend on one of [`Hoister::columns`] alone
    /// and are cheap (`let m = m_array[j]` once a column mean is lifted): the variable, that
    /// index and the value, so a later value reading it (a variance reading the mean) can be
    /// lifted over the same index with the value in its place.
    column_lets: Vec<(VarId, VarId, Expr)>,
    /// The size of the loop being extracted from, when it is an array's length or a literal
    /// (cheap, cannot fail): a scalar that can fail only where that loop runs zero times
    /// leaves it behind a guard on that size ([`Hoister::lift_form`]).
    loop_size: Option<Expr>,
    /// The [`failing_sites`] of the body of the loop being extracted from, where it runs.
    failing_in_body: usize,
    /// How many loops inside the loop being extracted from enclose the place being extracted
    /// from (a value there is evaluated once per iteration only when this is 0).
    inner_loops: usize,
}

/// How a value leaves the loop being extracted from.
enum LiftForm {
    /// As it is: it cannot fail just outside the loop.
    Plain,
    /// Only when the loop runs: it cannot fail where the loop's size is not zero, the only
    /// place it is read, and a literal stands in where it is zero (see [`Hoister::lifted_value`]).
    Guarded { size: Expr, zero: Literal },
}

/// A binding lifted out of a loop, in evaluation order.
struct Lifted {
    var: VarId,
    value: Expr,
}

impl Hoister<'_> {
    /// Bottom-up: children first, so values lifted out of inner loops can rise further.
    fn expr(&mut self, mut expr: Expr) -> Expr {
        match &mut expr.kind {
            // A loop's size is evaluated before it runs; its body while it runs.
            ExprKind::For(node::For { size, body, .. })
            | ExprKind::Filter(node::For { size, body, .. })
            | ExprKind::Reduce(node::Reduce { size, body, .. }) => {
                **size = self.expr(size.take());
                self.enclosing_sizes.push(alpha_key(size));
                **body = self.expr(body.take());
                self.enclosing_sizes.pop();
            }
            ExprKind::Fold(node::Fold { count, init, body, .. })
            | ExprKind::Scan(node::Scan { count, init, body, .. }) => {
                **count = self.expr(count.take());
                **init = self.expr(init.take());
                self.enclosing_sizes.push(alpha_key(count));
                **body = self.expr(body.take());
                self.enclosing_sizes.pop();
            }
            // An accum's update loops are hoisted from as loops, but what leaves them is never
            // one of its own loops (see `nest`).
            ExprKind::Accum(accum) => {
                *accum.init = self.expr(accum.init.take());
                *accum.updates = self.nest(accum.updates.take());
                return expr;
            }
            _ => expr.rewrite_children(|child| self.expr(child)),
        }
        let mut lifted = Vec::new();
        let mut blocked: BTreeSet<VarId> = expr.binders().collect();
        let folds = matches!(expr.kind, ExprKind::Fold(_) | ExprKind::Scan(_));
        if let ExprKind::For(node::For { size, body, .. })
        | ExprKind::Filter(node::For { size, body, .. })
        | ExprKind::Reduce(node::Reduce { size, body, .. })
        | ExprKind::Fold(node::Fold { count: size, body, .. })
        | ExprKind::Scan(node::Scan { count: size, body, .. }) = &mut expr.kind
        {
            self.loop_size = is_length(size).then(|| (**size).clone());
            self.failing_in_body = self.failing_sites_where_running(body);
            self.inner_loops = 0;
            let outer = std::mem::replace(&mut self.lifts_reads, folds);
            **body = self.extract(body.take(), &mut blocked, &mut lifted, true);
            self.lifts_reads = outer;
        } else {
            return expr;
        }
        lifted.into_iter().rev().fold(expr, |inner, Lifted { var, value }| {
            let (ty, span) = (inner.ty.clone(), value.span);
            Expr::new(ExprKind::Let(node::Let { var, value: Box::new(value), body: Box::new(inner) }), ty, span)
        })
    }

    /// [`Hoister::expr`] for an accum's update nest: each loop of the nest is hoisted from with
    /// [`Hoister::extract_nest`], so its `let`s and loops stay a nest with the updates at the
    /// bottom (an invariant inner loop of the nest is not an array to lift).
    fn nest(&mut self, mut expr: Expr) -> Expr {
        match &mut expr.kind {
            ExprKind::For(node::For { size, body, .. }) => {
                **size = self.expr(size.take());
                self.enclosing_sizes.push(alpha_key(size));
                **body = self.nest(body.take());
                let mut lifted = Vec::new();
                let mut blocked: BTreeSet<VarId> = expr.binders().collect();
                if let ExprKind::For(node::For { size, body, .. }) = &mut expr.kind {
                    self.loop_size = is_length(size).then(|| (**size).clone());
                    self.failing_in_body = self.failing_sites_where_running(body);
                    self.inner_loops = 0;
                    **body = self.extract_nest(body.take(), &mut blocked, &mut lifted);
                }
                self.enclosing_sizes.pop();
                lifted.into_iter().rev().fold(expr, |inner, Lifted { var, value }| {
                    let (ty, span) = (inner.ty.clone(), value.span);
                    Expr::new(ExprKind::Let(node::Let { var, value: Box::new(value), body: Box::new(inner) }), ty, span)
                })
            }
            ExprKind::Let(node::Let { value, body, .. }) => {
                **value = self.expr(value.take());
                **body = self.nest(body.take());
                expr
            }
            ExprKind::Assert(node::Assert { body, .. }) => {
                **body = self.nest(body.take());
                expr
            }
            _ => self.expr(expr),
        }
    }

    /// Walks a loop body in evaluation order, replacing invariant parts by variables bound in
    /// `lifted`. `blocked` holds the loop's variables and those bound on the way down.
    /// `at_root` marks the body itself, which is never lifted whole (that is the loop's job).
    fn extract(
        &mut self,
        mut expr: Expr,
        blocked: &mut BTreeSet<VarId>,
        lifted: &mut Vec<Lifted>,
        at_root: bool,
    ) -> Expr {
        let invariant = |expr: &Expr, blocked: &BTreeSet<VarId>| free_vars(expr).is_disjoint(blocked);
        // How `expr` leaves the loop, if it does: a `let` whose value is invariant floats out
        // whole, keeping its variable; an expensive invariant gets a variable of its own.
        let form = match &expr.kind {
            ExprKind::Let(node::Let { value, .. }) if invariant(value, blocked) => self.lift_form(value),
            ExprKind::Let(_) | ExprKind::Assert(_) | ExprKind::Accum(_) => None,
            _ if !at_root && is_expensive(&expr) && invariant(&expr, blocked) => self.lift_form(&expr),
            // A fold's step reads an element that no step changes (`cre[x]` in a Mandelbrot
            // step): once, before the fold, where folds side by side keep it per element beside
            // their state (a read in the step would be a load under the select).
            ExprKind::Index(_)
                if !at_root
                    && self.lifts_reads
                    && expr.ty.rank() == 0
                    && !has_loop(&expr)
                    && invariant(&expr, blocked)
                    && !self.may_fail(&expr) =>
            {
                Some(LiftForm::Plain)
            }
            _ => None,
        };
        if let Some(form) = form {
            return match expr.kind {
                ExprKind::Let(node::Let { var, value, body }) => {
                    let value = self.lifted_value(form, *value);
                    lifted.push(Lifted { var, value });
                    self.extract(*body, blocked, lifted, at_root)
                }
                kind => {
                    let expr = Expr { kind, ..expr };
                    let var = self.fresh(&expr);
                    let (ty, span) = (expr.ty.clone(), expr.span);
                    let value = self.lifted_value(form, expr);
                    lifted.push(Lifted { var, value });
                    Expr::new(ExprKind::Var(var), ty, span)
                }
            };
        }
        match expr.kind {
            ExprKind::Assert(_) => expr,
            // A value of one column alone, once extracted from, is remembered (see
            // `column_lets`) while its body is extracted from.
            ExprKind::Let(node::Let { var, value, body }) if !self.columns.is_empty() => {
                let value = self.extract(*value, blocked, lifted, false);
                let cheap_scalar = !value.ty.has_array() && !has_loop(&value) && !self.may_fail(&value);
                let column = self.column(&value, blocked).filter(|_| cheap_scalar);
                let remembered = self.column_lets.len();
                if let Some((index, _)) = column {
                    self.column_lets.push((var, index, value.clone()));
                }
                let newly = blocked.insert(var);
                let body = self.extract(*body, blocked, lifted, false);
                if newly {
                    blocked.remove(&var);
                }
                self.column_lets.truncate(remembered);
                let kind = ExprKind::Let(node::Let { var, value: Box::new(value), body: Box::new(body) });
                Expr { kind, ..expr }
            }
            // An accum's update loops are part of it, never an array of their own: only what
            // they contain may move (their sizes, their `let`s, parts of their updates).
            ExprKind::Accum(mut accum) => {
                let init = self.extract(accum.init.take(), blocked, lifted, false);
                *accum.init = init;
                let updates = self.extract_nest(accum.updates.take(), blocked, lifted);
                *accum.updates = updates;
                Expr { kind: ExprKind::Accum(accum), ..expr }
            }
            _ => {
                // A value of one column: scalars (or tuples of them) only, as an array of
                // arrays over the index would have rows whose sizes read that index (irregular
                // to the IR, even where every row has one length), and there are no arrays of
                // tuples holding arrays.
                if !at_root && !expr.ty.has_array() && has_loop(&expr) {
                    if let (Some((index, size)), Some(form)) = (self.column(&expr, blocked), self.lift_form(&expr)) {
                        let value = self.lifted_value(form, expr);
                        return self.lift_column(value, index, size, lifted);
                    }
                }
                // An inner comprehension whose size the whole loop body shares: values depending
                // on its index alone may become arrays over it. (A reduction's steps are
                // `share-steps`' to give arrays, which also takes in what they share.)
                let column = match &expr.kind {
                    ExprKind::For(node::For { index, size, .. })
                        if is_length(size) && invariant(size, blocked) && bound_vars(size).is_empty() =>
                    {
                        Some((*index, (**size).clone()))
                    }
                    _ => None,
                };
                let columns_before = self.columns.len();
                self.columns.extend(column);
                // A binder's variable is in scope in its body only (the last child), but blocking
                // it for the earlier children too is harmless: they cannot mention it.
                let newly: Vec<VarId> = expr.binders().filter(|var| blocked.insert(*var)).collect();
                let inner_loop = usize::from(is_loop(&expr));
                self.inner_loops += inner_loop;
                expr.rewrite_children(|child| self.extract(child, blocked, lifted, false));
                self.inner_loops -= inner_loop;
                for var in newly {
                    blocked.remove(&var);
                }
                self.columns.truncate(columns_before);
                expr
            }
        }
    }

    /// [`Hoister::extract`] for the update nest of an accum: its loops, `let`s and checks
    /// stay where they are (their sizes and values are extracted from); the updates at the
    /// bottom are extracted from like a loop body.
    fn extract_nest(&mut self, mut expr: Expr, blocked: &mut BTreeSet<VarId>, lifted: &mut Vec<Lifted>) -> Expr {
        let newly: Vec<VarId> = expr.binders().filter(|var| blocked.insert(*var)).collect();
        match &mut expr.kind {
            ExprKind::For(node::For { size, body, .. }) => {
                self.inner_loops += 1;
                **size = self.extract(size.take(), blocked, lifted, false);
                **body = self.extract_nest(body.take(), blocked, lifted);
                self.inner_loops -= 1;
            }
            ExprKind::Let(node::Let { value, body, .. }) => {
                **value = self.extract(value.take(), blocked, lifted, false);
                **body = self.extract_nest(body.take(), blocked, lifted);
            }
            ExprKind::Assert(_) => {}
            _ => expr = self.extract(expr, blocked, lifted, true),
        }
        for var in newly {
            blocked.remove(&var);
        }
        expr
    }

    /// The inner index (with its size) that `expr` depends on alone among the variables bound
    /// inside the loop being processed, when it is one of [`Hoister::columns`].
    fn column(&self, expr: &Expr, blocked: &BTreeSet<VarId>) -> Option<(VarId, Expr)> {
        // A remembered `let` counts as the index its value depends on.
        let mut depends: BTreeSet<VarId> = free_vars(expr)
            .into_iter()
            .filter(|var| blocked.contains(var))
            .map(|var| match self.column_lets.iter().find(|(name, ..)| *name == var) {
                Some((_, index, _)) => *index,
                None => var,
            })
            .collect();
        let index = depends.pop_first()?;
        if !depends.is_empty() {
            return None;
        }
        self.columns.iter().find(|(column, _)| *column == index).cloned()
    }

    /// `expr`, which depends on the inner index `index` alone, as a read `a[index]` of an
    /// array `a = for index' in 0..size { expr }` bound before the loop being processed (in
    /// bounds: `index` ranges over `size`).
    fn lift_column(&mut self, mut expr: Expr, index: VarId, size: Expr, lifted: &mut Vec<Lifted>) -> Expr {
        let (ty, span) = (expr.ty.clone(), expr.span);
        // Remembered `let`s read by `expr` get their values (latest first: a value may read an
        // earlier one).
        for (name, _, value) in self.column_lets.iter().rev() {
            substitute(&mut expr, *name, value);
        }
        let fresh_index = crate::ir::declare(self.vars, self.vars[index.0 as usize].clone());
        substitute(&mut expr, index, &Expr::new(ExprKind::Var(fresh_index), crate::ir::Type::I64, span));
        let array_ty = ty.with_outer_axis();
        let kind = ExprKind::For(node::For { index: fresh_index, size: Box::new(size), body: Box::new(expr) });
        let array = Expr::new(kind, array_ty.clone(), span);
        let var = self.fresh(&array);
        lifted.push(Lifted { var, value: array });
        let read = ExprKind::Index(node::Index {
            array: Box::new(Expr::new(ExprKind::Var(var), array_ty, span)),
            index: Box::new(Expr::new(ExprKind::Var(index), crate::ir::Type::I64, span)),
            bounds: Bounds::Proven,
        });
        Expr::new(read, ty, span)
    }

    /// Whether `expr` may fail just outside the loop being processed.
    fn may_fail(&self, expr: &Expr) -> bool {
        may_fail_where(expr, &|divisor| self.enclosing_sizes.contains(&alpha_key(divisor)), &self.is_index())
    }

    /// How `expr` may leave the loop being processed, if at all: as it is where it cannot fail
    /// just outside; a scalar of a known type that can fail there only when the loop runs zero
    /// times (`x[argmax k { x[k] }]` inside `for i` over `x`'s axis: an empty range, a read of
    /// an empty axis) behind a guard on the loop's size.
    fn lift_form(&self, expr: &Expr) -> Option<LiftForm> {
        if !self.may_fail(expr) {
            return Some(LiftForm::Plain);
        }
        let size = self.loop_size.as_ref()?;
        let Type::Scalar(ScalarType::Known(scalar)) = expr.ty else { return None };
        let zero = match scalar {
            Scalar::Bool => Literal::Bool(false),
            scalar if scalar.is_float() => Literal::float(0.0),
            _ => Literal::Int(0),
        };
        let runs = self.running_sizes();
        // It cannot fail while the loop runs; or it is evaluated once per iteration and holds
        // every place of the body that can fail, so its first evaluation, at the first
        // iteration, is where the loop would fail, and it fails there as it does before the
        // loop (it is invariant): `for i { x[i] + sum k { x[k].clamp(lo, hi) } }`.
        let alone = self.inner_loops == 0 && failing_sites(expr, &runs) == self.failing_in_body;
        (!may_fail_where(expr, &runs, &self.is_index()) || alone)
            .then(|| LiftForm::Guarded { size: size.clone(), zero })
    }

    /// Whether a variable is a loop index (never negative).
    fn is_index(&self) -> impl Fn(VarId) -> bool + '_ {
        |var: VarId| self.vars[var.0 as usize].kind == VarKind::Index
    }

    /// [`failing_sites`] of the body of the loop being extracted from, where that loop and the
    /// ones around it run.
    fn failing_sites_where_running(&self, body: &Expr) -> usize {
        failing_sites(body, &self.running_sizes())
    }

    /// Whether a size is one of the loop being extracted from or of the loops around it:
    /// not zero where that loop's body runs.
    fn running_sizes(&self) -> impl Fn(&Expr) -> bool + '_ {
        let size_key = self.loop_size.as_ref().map(alpha_key);
        move |candidate: &Expr| {
            let key = alpha_key(candidate);
            Some(&key) == size_key.as_ref() || self.enclosing_sizes.contains(&key)
        }
    }

    /// `value` in its [`LiftForm`]: a guarded one is a fold of one step when the loop's size
    /// is not zero and of none otherwise, `fold t in 0..(if size > 0 { 1 } else { 0 }) from
    /// zero { value }` (an `if` would evaluate both sides).
    fn lifted_value(&mut self, form: LiftForm, value: Expr) -> Expr {
        let LiftForm::Guarded { size, zero } = form else { return value };
        let (ty, span) = (value.ty.clone(), value.span);
        let literal = |literal: Literal, ty: Type| Expr::new(ExprKind::Literal(literal), ty, span);
        let runs = Expr::new(
            ExprKind::Binary(node::Binary {
                op: BinaryOp::Gt,
                lhs: Box::new(size),
                rhs: Box::new(literal(Literal::Int(0), Type::I64)),
            }),
            Type::BOOL,
            span,
        );
        let count = Expr::new(
            ExprKind::Select(node::Select {
                cond: Box::new(runs),
                then: Box::new(literal(Literal::Int(1), Type::I64)),
                otherwise: Box::new(literal(Literal::Int(0), Type::I64)),
            }),
            Type::I64,
            span,
        );
        let declare = |vars: &mut Vec<VarInfo>, what: &str, ty: Type, kind: VarKind| {
            let name = format!("{}{what}", crate::ir::SYNTHETIC_PREFIX);
            crate::ir::declare(vars, VarInfo { name, ty, kind, span })
        };
        let index = declare(self.vars, "once", Type::I64, VarKind::Index);
        let acc = declare(self.vars, "unset", ty.clone(), VarKind::Accumulator);
        let fold = node::Fold {
            index,
            count: Box::new(count),
            acc,
            init: Box::new(literal(zero, ty.clone())),
            body: Box::new(value),
        };
        Expr::new(ExprKind::Fold(fold), ty, span)
    }

    fn fresh(&mut self, value: &Expr) -> VarId {
        let what = match &value.kind {
            ExprKind::Reduce(node::Reduce { op, .. }) => op.name(),
            ExprKind::For(_) => "array",
            ExprKind::Fold(_) => "folded",
            ExprKind::Scan(_) => "scanned",
            _ => "value",
        };
        let name = format!("{}{what}", crate::ir::SYNTHETIC_PREFIX);
        crate::ir::declare(self.vars, VarInfo { name, ty: value.ty.clone(), kind: VarKind::Let, span: value.span })
    }
}
