//! The typing rules, one surface construct at a time: each returns the typed IR node or
//! records an error at the smallest offending token and returns `Reported`.

use super::sizes;
use super::{Checked, Checker, FormKind, Reported};
use crate::ir::node;
use crate::ir::visit::free_vars;
use crate::ir::{Bounds, Expr, ExprKind, Literal, NumberClass, ScalarType, SizeCheck, Type, VarId, VarKind};
use crate::ops::{BinaryOp, Func, ReduceOp, Scalar, UnaryOp};
use crate::syntax::ast::{self, Binder, Member, Pattern};
use proc_macro2::Span;

/// Which construct binds an index, for choosing the IR node.
#[derive(Clone, Copy)]
enum Binding<'a> {
    Comprehension,
    /// The loops of an accum body: they build no array (their ranges may depend on indices).
    Updates,
    /// `for i where cond { e }`, with the condition.
    Filter(&'a ast::Expr),
    /// The operation and its keyword's span.
    Reduction(ReduceOp, Span),
}

/// Whether an accumulating loop keeps its last state (`fold`) or every state (`scan`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Accumulation {
    Fold,
    Scan,
}

impl Accumulation {
    fn name(self) -> &'static str {
        match self {
            Accumulation::Fold => "fold",
            Accumulation::Scan => "scan",
        }
    }
}

/// Whether a size must not depend on indices or accumulators (a comprehension's, which
/// shapes an array, or a fold's count) or may (a reduction's range).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Regularity {
    Required,
    NotRequired,
}

impl Checker {
    pub(super) fn expr(&mut self, expr: &ast::Expr) -> Checked<Expr> {
        let span = expr.span;
        match &expr.kind {
            ast::ExprKind::Literal(literal) => self.literal(*literal, span),
            ast::ExprKind::Name(name) => self.name(name),
            ast::ExprKind::For { binders, body } => {
                let binding = if self.update_loops.contains(&(expr as *const ast::Expr)) {
                    Binding::Updates
                } else {
                    Binding::Comprehension
                };
                self.binders(binders, body, binding, span)
            }
            ast::ExprKind::Filter { binder, where_span, cond, body } => {
                // Inside a loop the filter's run-time length would give an irregular array (or
                // a size that depends on an index).
                let in_loop = self
                    .scope
                    .iter()
                    .any(|(_, var)| matches!(self.var(*var).kind, VarKind::Index | VarKind::Accumulator));
                if in_loop {
                    self.errors.push(
                        *where_span,
                        "a filter (`for … where`) cannot be inside a comprehension, reduction, fold or scan: \
                         its length is known only at run time, so the enclosing array would not be rectangular; \
                         filter in a `let` outside the loop (or as the result) and read that array",
                    );
                    return Err(Reported);
                }
                self.binders(std::slice::from_ref(binder), body, Binding::Filter(cond), span)
            }
            ast::ExprKind::Reduce { op, op_span, binders, body } => {
                if matches!(op, ReduceOp::ArgMax | ReduceOp::ArgMin) && binders.len() > 1 {
                    self.errors.push(binders[1].name.span(), format!("`{}` takes exactly one index", op.name()));
                    return Err(Reported);
                }
                self.binders(binders, body, Binding::Reduction(*op, *op_span), span)
            }
            ast::ExprKind::Fold { index, count, acc, init, body } => {
                self.fold(Accumulation::Fold, index, Some(count), acc, init, body, span)
            }
            ast::ExprKind::Scan { index, count, acc, init, body } => {
                self.fold(Accumulation::Scan, index, count.as_deref(), acc, init, body, span)
            }
            ast::ExprKind::Accum { target, init, body } => self.accum(target, init, body, span),
            ast::ExprKind::Update { target, indices, op, op_span, value } => {
                self.update(target, indices, *op, *op_span, value, span)
            }
            ast::ExprKind::Updates(items) => self.updates(items, span),
            ast::ExprKind::When { cond, body } => self.when(cond, body, span),
            ast::ExprKind::Index { array, indices } => self.index(array, indices, span),
            ast::ExprKind::Field { base, member } => self.field(base, member, span),
            ast::ExprKind::Len { array } => self.length(array, 0, span, span),
            ast::ExprKind::Shape { array, axis, axis_span } => self.length(array, *axis, *axis_span, span),
            ast::ExprKind::Let { pattern, value, body } => {
                let value = self.expr(value);
                let depth = self.scope.len();
                // After a bad value, the names are still bound, so the body is checked for
                // errors of its own without "unknown name" noise.
                let bindings = match value {
                    Ok(value) => self.bind_pattern(pattern, value, VarKind::Let),
                    Err(reported) => {
                        self.bind_unknown(pattern);
                        Err(reported)
                    }
                };
                let body = self.expr(body);
                self.scope.truncate(depth);
                let mut body = body?;
                for (var, value) in bindings?.into_iter().rev() {
                    body = let_node(var, value, body);
                }
                Ok(body)
            }
            ast::ExprKind::If { cond, then, otherwise } => {
                let (cond, then, otherwise) = (self.expr(cond), self.expr(then), self.expr(otherwise));
                let (cond, then, otherwise) = (cond?, then?, otherwise?);
                if self.unifier.unify_types(&cond.ty, &Type::BOOL).is_err() {
                    let found = self.unifier.describe_type(&cond.ty);
                    self.errors.push(cond.span, format!("the condition of `if` must be a `bool`, found {found}"));
                    return Err(Reported);
                }
                if let Err(mismatch) = self.unifier.unify_types(&then.ty, &otherwise.ty) {
                    self.errors.push(
                        otherwise.span,
                        format!(
                            "`if` branches have different types: {} and {}; both sides of a select must agree{}",
                            mismatch.left,
                            mismatch.right,
                            super::types::field_order_note(&then.ty, &otherwise.ty)
                        ),
                    );
                    return Err(Reported);
                }
                let ty = then.ty.clone();
                // Array branches must have one shape (the result's shape is read from `then`).
                let checks =
                    self.same_shape_checks(&then, &otherwise, ["the `then` branch", "the `else` branch"], span)?;
                let kind = ExprKind::Select(node::Select {
                    cond: Box::new(cond),
                    then: Box::new(then),
                    otherwise: Box::new(otherwise),
                });
                Ok(guarded(checks, Expr::new(kind, ty, span)))
            }
            ast::ExprKind::Tuple(items) => {
                let items = self.all(items)?;
                let ty = Type::tuple(items.iter().map(|item| item.ty.clone()).collect());
                Ok(Expr::new(ExprKind::Tuple(items), ty, span))
            }
            ast::ExprKind::Record(fields) => {
                let mut names: Vec<String> = Vec::new();
                for (name, _) in fields {
                    if names.contains(&name.to_string()) {
                        self.errors.push(name.span(), format!("field `{name}` appears twice in this record"));
                    }
                    names.push(name.to_string());
                }
                let values: Vec<ast::Expr> = fields.iter().map(|(_, value)| value.clone()).collect();
                let items = self.all(&values)?;
                let ty = Type::Tuple { fields: items.iter().map(|item| item.ty.clone()).collect(), names };
                Ok(Expr::new(ExprKind::Tuple(items), ty, span))
            }
            ast::ExprKind::Unary { op, op_span, operand } => self.unary(*op, *op_span, operand, span),
            ast::ExprKind::Binary { op, op_span, lhs, rhs } => self.binary(*op, *op_span, lhs, rhs, span),
            ast::ExprKind::Call { func, func_span, args } => self.call(*func, *func_span, args, span),
            ast::ExprKind::Apply { name, args } => self.apply(name, args, span),
            ast::ExprKind::Cast { operand, to, to_span } => self.cast(operand, *to, *to_span, span),
        }
    }

    /// Checks every expression, so independent errors are all reported.
    pub(super) fn all(&mut self, exprs: &[ast::Expr]) -> Checked<Vec<Expr>> {
        let checked: Vec<Checked<Expr>> = exprs.iter().map(|expr| self.expr(expr)).collect();
        checked.into_iter().collect()
    }

    fn literal(&mut self, literal: ast::Literal, span: Span) -> Checked<Expr> {
        let (value, ty) = match literal {
            ast::Literal::Bool(value) => (Literal::Bool(value), ScalarType::BOOL),
            ast::Literal::Int { value, suffix } => match (suffix, i64::try_from(value)) {
                (Some(scalar), _) if scalar.is_float() => {
                    (Literal::Float(value as f64, value as f32), ScalarType::Known(scalar))
                }
                (Some(Scalar::Bool), _) => {
                    self.errors.push(span, "a number cannot have the suffix `bool`");
                    return Err(Reported);
                }
                (Some(scalar), Ok(value)) => (Literal::Int(value), ScalarType::Known(scalar)),
                (None, Ok(value)) => {
                    (Literal::Int(value), self.unifier.fresh(NumberClass::Int, super::types::Origin::Literal))
                }
                // Above `i64::MAX` the literal keeps its bits, which read back as the `u64` that
                // alone holds it (see `literals_out_of_range`).
                (Some(scalar), Err(_)) => (Literal::Int(value as i64), ScalarType::Known(scalar)),
                (None, Err(_)) => {
                    let ty = self.unifier.fresh(NumberClass::Int, super::types::Origin::Literal);
                    self.wide_literals.push(ty);
                    (Literal::Int(value as i64), ty)
                }
            },
            ast::Literal::Float { value, as_f32, suffix } => match suffix {
                Some(scalar) if scalar.is_float() => (Literal::Float(value, as_f32), ScalarType::Known(scalar)),
                Some(_) => {
                    self.errors.push(span, "a float literal needs a float suffix (`f32` or `f64`)");
                    return Err(Reported);
                }
                None => {
                    let ty = self.unifier.fresh(NumberClass::Float, super::types::Origin::Literal);
                    (Literal::Float(value, as_f32), ty)
                }
            },
        };
        Ok(Expr::new(ExprKind::Literal(value), Type::Scalar(ty), span))
    }

    fn name(&mut self, name: &proc_macro2::Ident) -> Checked<Expr> {
        let text = name.to_string();
        if let Some(var) = self.lookup(&text) {
            if self.poisoned.contains(&var) {
                return Err(Reported);
            }
            return Ok(Expr::new(ExprKind::Var(var), self.var(var).ty.clone(), name.span()));
        }
        let message = if self.index_names.iter().any(|(index, _)| *index == text) {
            format!("index `{text}` is used outside the comprehension, reduction or fold that binds it")
        } else if Func::from_name(&text).is_some() {
            format!("`{text}` is a function: call it, e.g. `{text}(x)`")
        } else if self.form == FormKind::Function {
            format!("unknown name `{text}`: not a parameter, `let` or index in scope")
        } else {
            format!("unknown name `{text}`")
        };
        self.errors.push(name.span(), message);
        Err(Reported)
    }

    /// `for`/reductions: each binder nests one node around the rest.
    fn binders(&mut self, binders: &[Binder], body: &ast::Expr, binding: Binding<'_>, span: Span) -> Checked<Expr> {
        let Some((binder, rest)) = binders.split_first() else {
            return self.binding_body(body, binding);
        };
        // A reduction or an accum's loop builds no array, so its range may depend on outer
        // indices (`sum k in 0..i + 1`); a comprehension's may not (arrays are rectangular).
        let regularity = match binding {
            Binding::Comprehension | Binding::Filter(_) => Regularity::Required,
            Binding::Reduction(..) | Binding::Updates => Regularity::NotRequired,
        };
        let explicit = binder
            .size
            .as_ref()
            .map(|size| self.size_expr(size, &format!("the size of `{}`", binder.name), regularity));
        let index = self.bind_index(&binder.name);
        let inner = self.binders(rest, body, binding, span);
        self.scope.pop();
        let candidates = self.size_uses.take(index).into_iter().map(|candidate| self.through_accumulators(candidate));
        let candidates: Vec<sizes::Candidate> = candidates.collect();
        let (inner, size) = (inner?, explicit.transpose()?);
        let (size, checks) = match size {
            Some(size) => (size, Vec::new()),
            None => {
                let name = binder.name.to_string();
                let resolved = sizes::resolve(&name, candidates, &self.lets, |size| self.usable_at_binder(size));
                match resolved {
                    Some(resolved) => (resolved.size, resolved.checks),
                    None if self.shadowed_indices.contains(&index) => return Err(Reported),
                    None => {
                        self.no_size(index, &name, binder.name.span());
                        return Err(Reported);
                    }
                }
            }
        };
        let node = match binding {
            Binding::Comprehension | Binding::Updates => {
                let ty = inner.ty.with_outer_axis();
                Expr::new(ExprKind::For(node::For { index, size: Box::new(size), body: Box::new(inner) }), ty, span)
            }
            Binding::Filter(_) => {
                let element = match &inner.ty {
                    Type::Tuple { fields, .. } if fields.len() == 2 => fields[1].clone(),
                    _ => return Err(Reported),
                };
                let kind = ExprKind::Filter(node::For { index, size: Box::new(size), body: Box::new(inner) });
                Expr::new(kind, element.with_outer_axis(), span)
            }
            Binding::Reduction(op, _) => {
                let ty = match op {
                    ReduceOp::ArgMax | ReduceOp::ArgMin => Type::Scalar(ScalarType::USIZE),
                    _ => inner.ty.clone(),
                };
                Expr::new(
                    ExprKind::Reduce(node::Reduce { op, index, size: Box::new(size), body: Box::new(inner) }),
                    ty,
                    span,
                )
            }
        };
        Ok(self.place_checks(checks, node))
    }

    /// Checks over parameters only run once before everything; others guard their node.
    fn place_checks(&mut self, checks: Vec<SizeCheck>, node: Expr) -> Expr {
        let (global, local): (Vec<SizeCheck>, Vec<SizeCheck>) = checks.into_iter().partition(|check| {
            let mut vars = free_vars(&check.left);
            vars.extend(free_vars(&check.right));
            vars.iter().all(|var| self.var(*var).kind == VarKind::Param)
        });
        for check in global.iter().chain(&local) {
            if let Some(difference) = sizes::constant_difference(&check.left, &check.right, &self.lets) {
                let (longer, shorter) = match difference > 0 {
                    true => (&check.left_what, &check.right_what),
                    false => (&check.right_what, &check.left_what),
                };
                let name = &check.index_name;
                let (count, plural) =
                    (difference.unsigned_abs(), if difference.unsigned_abs() == 1 { "" } else { "s" });
                let message = if name.is_empty() {
                    format!(
                        "{longer} and {shorter} must have one shape, but the first always has {count} more \
                         element{plural} than the second"
                    )
                } else {
                    format!(
                        "index `{name}` reads {longer} and {shorter}, and the first always has {count} more \
                         element{plural} than the second, so they can never agree; give `{name}` a range \
                         (`{name} in 0..n`) and make the reads fit it"
                    )
                };
                self.errors.push(check.span, message);
            }
        }
        self.global_checks.extend(global);
        if local.is_empty() {
            return node;
        }
        let (ty, span) = (node.ty.clone(), node.span);
        Expr::new(ExprKind::Assert(node::Assert { checks: local, body: Box::new(node) }), ty, span)
    }

    fn binding_body(&mut self, body: &ast::Expr, binding: Binding<'_>) -> Checked<Expr> {
        if let Binding::Filter(cond) = binding {
            return self.filter_body(cond, body);
        }
        let body = self.expr(body)?;
        match binding {
            Binding::Filter(_) => {}
            Binding::Comprehension | Binding::Updates => {
                if !is_valid_element(&body.ty) {
                    let found = self.unifier.describe_type(&body.ty);
                    self.errors.push(
                        body.span,
                        format!(
                            "array elements must be numbers, booleans, or tuples/records of them; \
                             this comprehension's body is {found}"
                        ),
                    );
                    return Err(Reported);
                }
            }
            Binding::Reduction(op, op_span) => {
                let class = match op {
                    ReduceOp::All | ReduceOp::Any => NumberClass::Bool,
                    _ => NumberClass::Number,
                };
                let ok = match body.ty.as_scalar() {
                    Some(scalar) if class == NumberClass::Bool => self.unifier.unify(scalar, ScalarType::BOOL).is_ok(),
                    Some(scalar) => self.unifier.require(scalar, class).is_ok(),
                    // `sum`, `prod`, `max` and `min` of tuples and records reduce each component
                    // on its own (not lexicographically): every leaf must be a number.
                    None if matches!(body.ty, Type::Tuple { .. }) => match op {
                        ReduceOp::Sum | ReduceOp::Prod | ReduceOp::Max | ReduceOp::Min => self.number_leaves(&body.ty),
                        ReduceOp::ArgMax | ReduceOp::ArgMin => {
                            let found = self.unifier.describe_type(&body.ty);
                            self.errors.push(
                                op_span,
                                format!(
                                    "`{}` needs a number to compare, found {found}: tuples and records have no order \
                                     in ein (`max`/`min` of a tuple reduce each component on its own); \
                                     compare one component, e.g. `{} k {{ t.0 }}`",
                                    op.name(),
                                    op.name()
                                ),
                            );
                            return Err(Reported);
                        }
                        ReduceOp::All | ReduceOp::Any => false,
                    },
                    None => false,
                };
                if !ok {
                    let wanted = match op {
                        ReduceOp::All | ReduceOp::Any => "a `bool`",
                        ReduceOp::ArgMax | ReduceOp::ArgMin => "a number",
                        _ => "a number (or a tuple or record of numbers)",
                    };
                    let found = self.unifier.describe_type(&body.ty);
                    self.errors.push(body.span, format!("`{}` needs {wanted} body, found {found}", op.name()));
                    return Err(Reported);
                }
            }
        }
        Ok(body)
    }

    /// The condition and element of a filter, as the pair `(cond, element)` its IR node holds.
    fn filter_body(&mut self, cond: &ast::Expr, body: &ast::Expr) -> Checked<Expr> {
        let (cond, body) = (self.expr(cond), self.expr(body));
        let (cond, body) = (cond?, body?);
        if self.unifier.unify_types(&cond.ty, &Type::BOOL).is_err() {
            let found = self.unifier.describe_type(&cond.ty);
            self.errors.push(cond.span, format!("the condition of `where` must be a `bool`, found {found}"));
            return Err(Reported);
        }
        if !is_scalar_tuple(&body.ty) {
            let found = self.unifier.describe_type(&body.ty);
            self.errors.push(
                body.span,
                format!(
                    "a filter's elements must be numbers, booleans, or tuples/records of them \
                     (its result has one axis); this body is {found}"
                ),
            );
            return Err(Reported);
        }
        let span = body.span;
        let ty = Type::tuple(vec![Type::BOOL, body.ty.clone()]);
        Ok(Expr::new(ExprKind::Tuple(vec![cond, body]), ty, span))
    }

    /// Whether every scalar leaf of a tuple type can be a number (requiring it to be one).
    fn number_leaves(&mut self, ty: &Type) -> bool {
        match ty {
            Type::Scalar(scalar) => self.unifier.require(*scalar, NumberClass::Number).is_ok(),
            Type::Tuple { fields, .. } => fields.iter().all(|field| self.number_leaves(field)),
            Type::Array { .. } => false,
        }
    }

    fn bind_index(&mut self, name: &proc_macro2::Ident) -> VarId {
        let text = name.to_string();
        // Rebinding an index that is still in scope hides the outer one: almost always a typo.
        if let Some(outer) = self.lookup(&text).filter(|var| self.var(*var).kind == VarKind::Index) {
            self.shadowed_indices.push(outer);
            self.errors.push(
                name.span(),
                format!("index `{text}` is already bound here by an enclosing comprehension, reduction or fold; use another name"),
            );
        }
        let index = self.declare(&text, Type::I64, VarKind::Index, name.span());
        self.index_names.push((text, name.span()));
        self.enter_scope(index);
        index
    }

    /// An explicit size or fold count: an integer (with [`Regularity::Required`], not
    /// depending on any index), as `i64`. `what` names the quantity in errors: "the size of
    /// `i`", "the count of the fold over `t`".
    fn size_expr(&mut self, size: &ast::Expr, what: &str, regularity: Regularity) -> Checked<Expr> {
        let size = self.expr(size)?;
        let Some(scalar) = size.ty.as_scalar().filter(|scalar| self.unifier.require(*scalar, NumberClass::Int).is_ok())
        else {
            let found = self.unifier.describe_type(&size.ty);
            self.errors.push(size.span, format!("{what} must be an integer, found {found}"));
            return Err(Reported);
        };
        // A row's length is the same for every row: `a[i].len()`, or `v.len()` in a helper
        // called with `v = a[i]`, is `a.shape(1)`.
        let size = match self.index_dependency(&size) {
            Some(_) => {
                let through = self.lengths_through_accumulators(self.lengths_through_lets(size.clone()));
                if self.index_dependency(&through).is_none() {
                    through
                } else {
                    size
                }
            }
            None => size,
        };
        if let Some(dependency) = self.index_dependency(&size).filter(|_| regularity == Regularity::Required) {
            let span = self.dependency_use(&size).unwrap_or(size.span);
            let dependency = self.var(dependency).name.clone();
            self.errors.push(
                span,
                format!(
                    "{what} depends on `{dependency}`, which changes from one iteration to the next; \
                     ein arrays are rectangular, so sizes and counts must not depend on indices or accumulators"
                ),
            );
            return Err(Reported);
        }
        Ok(to_i64(size, scalar, &mut self.unifier, &self.vars))
    }

    /// `size` with its array lengths read through the `let`s that name the arrays and
    /// simplified (`len(v, 0)` with `v = a[i]` is `len(a, 1)`), and its scalar `let`s by their
    /// values (`let m = p.len(); for i in 0..m`).
    fn lengths_through_lets(&self, mut size: Expr) -> Expr {
        if let ExprKind::Var(var) = size.kind {
            // Not a value that binds variables: a copy would bind them twice.
            if let (VarKind::Let, Type::Scalar(_), Some(value)) = (self.var(var).kind, &size.ty, self.lets.get(&var)) {
                if crate::ir::visit::bound_vars(value).is_empty() {
                    return self.lengths_through_lets(value.clone());
                }
            }
            return size;
        }
        if let ExprKind::Len(node::Len { array, .. }) = &mut size.kind {
            while let ExprKind::Var(var) = array.kind {
                match self.lets.get(&var) {
                    Some(value) if self.var(var).kind == VarKind::Let => **array = value.clone(),
                    _ => break,
                }
            }
            return crate::ir::shape::simplify_lengths(size);
        }
        size.rewrite_children(|child| self.lengths_through_lets(child));
        size
    }

    /// `size` with the lengths of accumulators (or their parts) read from their initial
    /// values, whose shape every step keeps: `c.len()` in a fold from `c = c0` is `c0.len()`,
    /// and from an enclosing fold's accumulator, that one's initial value's.
    fn lengths_through_accumulators(&self, mut size: Expr) -> Expr {
        if let ExprKind::Len(node::Len { array, axis }) = &size.kind {
            let init = self.accumulator_part(array);
            let length = init.and_then(|init| crate::ir::shape::raw_shape(&init)?.into_iter().nth(*axis));
            // Each step reaches an accumulator bound further out, so this ends.
            return length
                .map_or(size, |length| self.lengths_through_accumulators(crate::ir::shape::simplify_lengths(length)));
        }
        size.rewrite_children(|child| self.lengths_through_accumulators(child));
        size
    }

    /// The first variable use in `expr` through which it depends on an index or accumulator.
    fn dependency_use(&self, expr: &Expr) -> Option<Span> {
        if let ExprKind::Var(_) = expr.kind {
            return self.index_dependency(expr).map(|_| expr.span);
        }
        let mut found = None;
        expr.for_each_child(|child| {
            if found.is_none() {
                found = self.dependency_use(child);
            }
        });
        found
    }

    /// An index or accumulator that `expr` depends on, directly or through `let`s.
    fn index_dependency(&self, expr: &Expr) -> Option<VarId> {
        let mut pending: Vec<VarId> = free_vars(expr).into_iter().collect();
        let mut seen = Vec::new();
        while let Some(var) = pending.pop() {
            if seen.contains(&var) {
                continue;
            }
            seen.push(var);
            match self.var(var).kind {
                VarKind::Index | VarKind::Accumulator => return Some(var),
                VarKind::Let => {
                    if let Some(value) = self.lets.get(&var) {
                        pending.extend(free_vars(value));
                    }
                }
                VarKind::Param => {}
            }
        }
        None
    }

    /// A candidate read from a fold accumulator (`len(t, 1)`), or from an array part of a
    /// tuple accumulator (`len(x, 0)` with `(x, v)` the accumulator's pattern, `len(s.0, 0)`),
    /// sized by that part of the accumulator's initial value instead, whose shape every step
    /// keeps.
    fn through_accumulators(&self, mut candidate: sizes::Candidate) -> sizes::Candidate {
        // An accumulator started from another (a fold in a fold, `q = p`) is read through both:
        // each keeps its initial value's shape. Every step goes to an accumulator bound
        // further out, so the chain ends (within as many steps as there are variables).
        for _ in 0..=self.vars.len() {
            let ExprKind::Len(node::Len { array, axis }) = &candidate.size.kind else { break };
            let Some(init) = self.accumulator_part(array) else { break };
            match crate::ir::shape::raw_shape(&init).and_then(|shape| shape.into_iter().nth(*axis)) {
                Some(size) => candidate.size = crate::ir::shape::simplify_lengths(size),
                None => break,
            }
        }
        candidate
    }

    /// The initial value of the accumulator part that `array` is: an accumulator, a field or a
    /// row of one (`u[i]`: the same row of the initial value), or a `let` (a pattern's name)
    /// bound to any of these.
    fn accumulator_part(&self, array: &Expr) -> Option<Expr> {
        match &array.kind {
            ExprKind::Var(var) => match self.accumulator_inits.get(var) {
                Some(init) => Some(init.clone()),
                None if self.var(*var).kind == VarKind::Let => self.accumulator_part(self.lets.get(var)?),
                None => None,
            },
            ExprKind::Project(node::Project { tuple, field }) => {
                let init = self.accumulator_part(tuple)?;
                let kind = ExprKind::Project(node::Project { tuple: Box::new(init), field: *field });
                Some(Expr::new(kind, array.ty.clone(), array.span))
            }
            ExprKind::Index(node::Index { array: rows, index, bounds }) => {
                let init = self.accumulator_part(rows)?;
                let kind =
                    ExprKind::Index(node::Index { array: Box::new(init), index: index.clone(), bounds: *bounds });
                Some(Expr::new(kind, array.ty.clone(), array.span))
            }
            _ => None,
        }
    }

    /// The error for an index that nothing sizes: at its binder, and at a read that uses it
    /// without sizing it (`a[2 * i]`, `a[j + i]` inside a loop over `j`), if there is one.
    fn no_size(&mut self, index: VarId, name: &str, span: Span) {
        let Some(read) = self.size_uses.mentioned(index) else {
            let message = format!(
                "index `{name}` has no size: it never directly indexes an array; give it one with `{name} in 0..n`"
            );
            self.errors.push(span, message);
            return;
        };
        self.errors.push(
            span,
            format!(
                "index `{name}` has no size: no read sizes it (only `a[{name}]`, a shift `a[{name} + c]`, or a window \
                 `a[{name} + k]` with `{name}` its outermost index does); give it one with `{name} in 0..n`"
            ),
        );
        self.errors.push(read, format!("this read computes its position from `{name}`, so it does not size `{name}`"));
    }

    fn usable_at_binder(&self, size: &Expr) -> bool {
        free_vars(size).iter().all(|var| self.scope.iter().any(|(_, bound)| bound == var))
            && self.index_dependency(size).is_none()
    }

    /// `fold` and `scan`: the count (explicit, or for a scan inferred like a comprehension's
    /// size), the initial value, then the body with the index and accumulator bound.
    #[allow(clippy::too_many_arguments)]
    fn fold(
        &mut self,
        accumulation: Accumulation,
        index: &proc_macro2::Ident,
        count: Option<&ast::Expr>,
        acc: &Pattern,
        init: &ast::Expr,
        body: &ast::Expr,
        span: Span,
    ) -> Checked<Expr> {
        let index_name = index.to_string();
        let what = accumulation.name();
        let count = count.map(|count| {
            self.size_expr(count, &format!("the count of the {what} over `{index_name}`"), Regularity::Required)
        });
        let init = self.expr(init);
        if let (Accumulation::Scan, Ok(init)) = (accumulation, &init) {
            // The stacked states' row lengths are known only outside every loop (inside one
            // they may depend on its index, and no check would compare them).
            let in_loop = self.scope.iter().any(|(_, var)| matches!(self.var(*var).kind, VarKind::Index));
            if init.ty.has_array() && in_loop {
                self.errors.push(
                    init.span,
                    "a scan whose state holds an array must be outside every comprehension, reduction, fold, \
                     scan and accum: bind it with `let` before the loops, or use `fold` to keep only the last state",
                );
                return Err(Reported);
            }
        }
        let depth = self.scope.len();
        let index_var = self.bind_index(index);
        let (init, bindings, acc_var) = match init {
            Ok(init) => {
                let acc_name = match acc {
                    Pattern::Name(name) => name.to_string(),
                    Pattern::Tuple(..) => "__ein_acc".to_string(),
                };
                let acc_var = self.declare(&acc_name, init.ty.clone(), VarKind::Accumulator, acc.span());
                self.enter_scope(acc_var);
                if init.ty.has_array() {
                    self.accumulator_inits.insert(acc_var, init.clone());
                }
                let bindings = match acc {
                    Pattern::Name(_) => Ok(Vec::new()),
                    Pattern::Tuple(..) => {
                        let whole = Expr::new(ExprKind::Var(acc_var), init.ty.clone(), acc.span());
                        self.bind_pattern(acc, whole, VarKind::Let)
                    }
                };
                (Ok(init), bindings, Some(acc_var))
            }
            Err(reported) => {
                // Keep checking the body for its own errors, with the accumulator's names bound.
                self.bind_unknown(acc);
                (Err(reported), Err(reported), None)
            }
        };
        let body = self.expr(body);
        self.scope.truncate(depth);
        let candidates =
            self.size_uses.take(index_var).into_iter().map(|candidate| self.through_accumulators(candidate));
        let candidates: Vec<sizes::Candidate> = candidates.collect();
        let (count, init, mut body, bindings) = (count.transpose()?, init?, body?, bindings?);
        let acc_var = acc_var.ok_or(Reported)?;
        if let Err(mismatch) = self.unifier.unify_types(&init.ty, &body.ty) {
            // A scan's message points at the value the body ends with, under its `let`s.
            let at = match accumulation {
                Accumulation::Fold => body.span,
                Accumulation::Scan => crate::analysis::tail_of(&body).span,
            };
            self.errors.push(
                at,
                format!(
                    "the {what} body has type {} but its initial value has type {}; they must be the same{}",
                    mismatch.right,
                    mismatch.left,
                    super::types::field_order_note(&body.ty, &init.ty)
                ),
            );
            return Err(Reported);
        }
        for (var, value) in bindings.into_iter().rev() {
            body = let_node(var, value, body);
        }
        // A scan's length is written or, like a comprehension's size, read from the arrays its
        // index indexes (a fold's index sizes nothing: its count is always written).
        let (count, checks) = match count {
            Some(count) => (count, Vec::new()),
            None => {
                let resolved = sizes::resolve(&index_name, candidates, &self.lets, |size| self.usable_at_binder(size));
                match resolved {
                    Some(resolved) => (resolved.size, resolved.checks),
                    None if self.shadowed_indices.contains(&index_var) => return Err(Reported),
                    None => {
                        self.errors.push(
                            index.span(),
                            format!(
                                "scan index `{index_name}` has no length: it never directly indexes an array; \
                                 give it one with `scan {index_name} in 0..n, ..`"
                            ),
                        );
                        return Err(Reported);
                    }
                }
            }
        };
        // An array accumulator keeps its shape: every step's value must have the initial shape,
        // which is what the fold's shape (and reads of it) are taken from.
        let accumulator = Expr::new(ExprKind::Var(acc_var), init.ty.clone(), body.span);
        let step_what = format!("the {what} body");
        let step_checks =
            self.same_shape_checks(&accumulator, &body, ["the accumulator", step_what.as_str()], body.span)?;
        let body = guarded(step_checks, body);
        if accumulation == Accumulation::Scan {
            // Every state after each step, stacked on a new first axis (an array state's too).
            let ty = init.ty.stacked();
            let kind = ExprKind::Scan(node::Scan {
                index: index_var,
                count: Box::new(count),
                acc: acc_var,
                init: Box::new(init),
                body: Box::new(body),
            });
            return Ok(self.place_checks(checks, Expr::new(kind, ty, span)));
        }
        let ty = init.ty.clone();
        let kind = ExprKind::Fold(node::Fold {
            index: index_var,
            count: Box::new(count),
            acc: acc_var,
            init: Box::new(init),
            body: Box::new(body),
        });
        Ok(Expr::new(kind, ty, span))
    }

    /// Run-time checks that two array-typed values have equal shapes, axis by axis; none for
    /// axes equal by construction. An error when a shape cannot be computed before evaluating.
    fn same_shape_checks(
        &mut self,
        left: &Expr,
        right: &Expr,
        names: [&str; 2],
        span: Span,
    ) -> Checked<Vec<SizeCheck>> {
        if let Type::Tuple { fields, .. } = &left.ty {
            // Every array part of a tuple keeps its shape too, part by part.
            let mut checks = Vec::new();
            for (field, field_ty) in fields.iter().enumerate() {
                if !field_ty.has_array() {
                    continue;
                }
                let part = |whole: &Expr| {
                    let kind = ExprKind::Project(node::Project { tuple: Box::new(whole.clone()), field });
                    Expr::new(kind, field_ty.clone(), whole.span)
                };
                let names = names.map(|name| format!("part {field} of {name}"));
                let names = [names[0].as_str(), names[1].as_str()];
                checks.extend(self.same_shape_checks(&part(left), &part(right), names, span)?);
            }
            return Ok(checks);
        }
        if left.ty.rank() == 0 {
            return Ok(Vec::new());
        }
        let shapes = (crate::ir::shape::shape_in_scope(left), crate::ir::shape::shape_in_scope(right));
        let (Some(left_shape), Some(right_shape)) = shapes else {
            self.errors.push(
                span,
                "the shapes of these arrays cannot be compared before computing them (a filter's length, say, is \
                 known only once it has run); bind each with `let` before this expression",
            );
            return Err(Reported);
        };
        let mut checks = Vec::new();
        for (axis, (left_size, right_size)) in left_shape.into_iter().zip(right_shape).enumerate() {
            let same = sizes::key(&sizes::canonical(&left_size, &self.lets))
                == sizes::key(&sizes::canonical(&right_size, &self.lets));
            if !same {
                checks.push(SizeCheck {
                    left: left_size,
                    right: right_size,
                    left_what: format!("axis {axis} of {}", names[0]),
                    right_what: format!("axis {axis} of {}", names[1]),
                    // Two arrays of one shape, no index: "shape mismatch".
                    index_name: String::new(),
                    span,
                });
            }
        }
        Ok(checks)
    }

    /// Binds a pattern to a value, pushing the names on the scope; returns the `let`s to wrap
    /// around the body, outermost first.
    fn bind_pattern(&mut self, pattern: &Pattern, value: Expr, kind: VarKind) -> Checked<Vec<(VarId, Expr)>> {
        match pattern {
            Pattern::Name(name) => {
                let var = self.declare(&name.to_string(), value.ty.clone(), kind, name.span());
                if kind == VarKind::Let {
                    self.lets.insert(var, value.clone());
                }
                self.enter_scope(var);
                Ok(vec![(var, value)])
            }
            Pattern::Tuple(items, span) => {
                let fields = match &value.ty {
                    Type::Tuple { fields, .. } if fields.len() == items.len() => fields.clone(),
                    other => {
                        let found = self.unifier.describe_type(other);
                        self.bind_unknown(pattern);
                        // An array of tuples is one value inside ein (a tuple of arrays only on
                        // the Rust side, once returned).
                        let hint = match other {
                            Type::Array { elem, .. } if matches!(**elem, Type::Tuple { .. }) => {
                                "; an array of tuples or records is one array inside ein: bind it to one name and \
                                 read its elements' fields (`q[i].0`), or return it, and Rust gets a tuple of arrays"
                            }
                            _ => "",
                        };
                        self.errors.push(
                            *span,
                            format!(
                                "this pattern takes a tuple of {} values, but the value is {found}{hint}",
                                items.len()
                            ),
                        );
                        return Err(Reported);
                    }
                };
                // A hidden variable holds the whole tuple, so it is evaluated once.
                let whole = self.declare("__ein_tuple", value.ty.clone(), kind, *span);
                self.lets.insert(whole, value.clone());
                self.enter_scope(whole);
                let mut bindings = vec![(whole, value)];
                for (position, (item, field_ty)) in items.iter().zip(fields).enumerate() {
                    let tuple = Expr::new(ExprKind::Var(whole), self.var(whole).ty.clone(), *span);
                    let projection = Expr::new(
                        ExprKind::Project(node::Project { tuple: Box::new(tuple), field: position }),
                        field_ty,
                        item.span(),
                    );
                    bindings.extend(self.bind_pattern(item, projection, kind)?);
                }
                Ok(bindings)
            }
        }
    }

    /// Binds a pattern's names to values of unknown type after an error, so uses of the names
    /// are not reported again as unknown.
    fn bind_unknown(&mut self, pattern: &Pattern) {
        match pattern {
            Pattern::Name(name) => {
                let ty = Type::Scalar(self.unifier.fresh(NumberClass::Any, super::types::Origin::Literal));
                let var = self.declare(&name.to_string(), ty, VarKind::Let, name.span());
                self.poisoned.push(var);
                self.enter_scope(var);
            }
            Pattern::Tuple(items, _) => items.iter().for_each(|item| self.bind_unknown(item)),
        }
    }

    fn index(&mut self, array: &ast::Expr, indices: &[ast::Expr], span: Span) -> Checked<Expr> {
        let base = self.expr(array);
        let indices = self.all(indices);
        let (base, indices) = (base?, indices?);
        let rank = base.ty.rank();
        if rank == 0 {
            let found = self.unifier.describe_type(&base.ty);
            self.errors.push(array.span, format!("only arrays can be indexed; this is {found}"));
            return Err(Reported);
        }
        if indices.len() > rank {
            self.errors.push(
                indices[rank].span,
                format!("too many indices: this array has rank {rank} but is indexed with {}", indices.len()),
            );
            return Err(Reported);
        }
        let mut current = base;
        for index in indices {
            let integer =
                index.ty.as_scalar().is_some_and(|scalar| self.unifier.require(scalar, NumberClass::Int).is_ok());
            if !integer {
                let found = self.unifier.describe_type(&index.ty);
                self.errors.push(index.span, format!("array indices must be integers, found {found}"));
                return Err(Reported);
            }
            let seen = self.through_index_lets(&index, 0);
            let sized = self.sizing_read(&seen, &current);
            if let Some((var, read)) = sized {
                self.size_uses.record(&self.vars, var, &current, 0, index.span, read);
            }
            for var in free_vars(&seen) {
                if self.var(var).kind == VarKind::Index && sized.is_none_or(|(position, _)| position != var) {
                    self.size_uses.mention(var, index.span);
                }
            }
            let ty = current.ty.indexed().ok_or(Reported)?;
            let kind = ExprKind::Index(node::Index {
                array: Box::new(current),
                index: Box::new(index),
                bounds: Bounds::Clamped,
            });
            current = Expr::new(kind, ty, span);
        }
        Ok(current)
    }

    /// The index variable that a read `array[index]` sizes, and how. `a[i]` is a plain read;
    /// `a[i + c]`, `a[i - off]` (any offset that does not change inside the loops) are shifted
    /// reads; in a window `a[i + di - r]` (indices added, or subtracted after the first) the
    /// outermost added index, `i`, is the position and is read shifted, the inner ones being
    /// offsets within the window sized by their own reads (`w[di]`); a torus read `a[(i + 1) %
    /// n]` with `n` the axis's length is a shifted read of `i`. The index is seen through
    /// `let`s (a helper's argument is a `let`) and casts to 64-bit integers (`a[i as usize]`):
    /// `index` is given already seen through them ([`Checker::through_index_lets`]).
    fn sizing_read(&self, index: &Expr, array: &Expr) -> Option<(VarId, sizes::Read)> {
        if let ExprKind::Binary(node::Binary { op: BinaryOp::Rem, lhs, rhs }) = &index.kind {
            let axis = crate::ir::shape::simplify_lengths(crate::ir::shape::length(array.clone(), 0));
            let divisor = self.through_index_lets(rhs, 0);
            let same =
                sizes::key(&sizes::canonical(&divisor, &self.lets)) == sizes::key(&sizes::canonical(&axis, &self.lets));
            let (var, _) = self.sizing_read(&self.through_index_lets(lhs, 0), array).filter(|_| same)?;
            return Some((var, sizes::Read::Shifted));
        }
        let mut terms = Vec::new();
        sizes::signed_terms(index, true, &mut terms);
        let mut indices = Vec::new();
        let mut shifted = false;
        for (term, added) in terms {
            match term.kind {
                ExprKind::Var(var) if self.var(var).kind == VarKind::Index => indices.push((var, added)),
                ExprKind::Literal(Literal::Int(0)) => {}
                _ if self.index_dependency(&term).is_none() => shifted = true,
                _ => return None,
            }
        }
        // Variables are declared as their binders are checked: the outermost has the least id.
        let position = indices.iter().filter(|(_, added)| *added).map(|(var, _)| *var).min()?;
        let read = if indices.len() == 1 && !shifted { sizes::Read::Plain } else { sizes::Read::Shifted };
        Some((position, read))
    }

    /// `expr` with a `let`-bound variable replaced by its value and casts to 64-bit integers
    /// removed, at the top and inside sums and differences.
    fn through_index_lets(&self, expr: &Expr, depth: usize) -> Expr {
        if depth > 64 {
            return expr.clone();
        }
        if let Some(operand) = sizes::cast_to_64_bits(expr) {
            return self.through_index_lets(operand, depth + 1);
        }
        match &expr.kind {
            ExprKind::Var(var) if self.var(*var).kind == VarKind::Let => match self.lets.get(var) {
                Some(value) if value.ty.rank() == 0 => self.through_index_lets(value, depth + 1),
                _ => expr.clone(),
            },
            ExprKind::Binary(node::Binary { op: op @ (BinaryOp::Add | BinaryOp::Sub), lhs, rhs }) => {
                let lhs = self.through_index_lets(lhs, depth + 1);
                let rhs = self.through_index_lets(rhs, depth + 1);
                let kind = ExprKind::Binary(node::Binary { op: *op, lhs: Box::new(lhs), rhs: Box::new(rhs) });
                Expr::new(kind, expr.ty.clone(), expr.span)
            }
            _ => expr.clone(),
        }
    }

    fn field(&mut self, base: &ast::Expr, member: &Member, span: Span) -> Checked<Expr> {
        let base = self.expr(base)?;
        if let ExprKind::Var(var) = base.kind {
            if self.form == FormKind::Expression && self.var(var).kind == VarKind::Param {
                // A Rust local is captured whole, as an array or a number: its own fields are
                // Rust's, which ein does not see.
                let local = self.var(var).name.clone();
                let (field, binding) = match member {
                    Member::Position(position, _) => (position.to_string(), format!("{local}_{position}")),
                    Member::Named(name) => (name.to_string(), name.to_string()),
                };
                self.errors.push(
                    span,
                    format!(
                        "`{local}` is a Rust local, which `ein!(..)` reads whole (an array or a number), not its \
                         fields; bind the field first, e.g. `let {binding} = &{local}.{field};`, and use `{binding}`"
                    ),
                );
                return Err(Reported);
            }
        }
        let (fields, names) = match &base.ty {
            Type::Tuple { fields, names } => (fields.clone(), names.clone()),
            Type::Array { elem, .. } if matches!(**elem, Type::Tuple { .. }) => {
                self.errors.push(span, "this is an array of tuples or records: index it first, e.g. `a[i].0`");
                return Err(Reported);
            }
            other => {
                let found = self.unifier.describe_type(other);
                self.errors.push(span, format!("only tuples and records have fields; this is {found}"));
                return Err(Reported);
            }
        };
        let position = match member {
            Member::Position(position, member_span) => {
                if *position >= fields.len() {
                    self.errors.push(
                        *member_span,
                        format!(
                            "no field {position}: this tuple has {} fields (0 to {})",
                            fields.len(),
                            fields.len() - 1
                        ),
                    );
                    return Err(Reported);
                }
                *position
            }
            Member::Named(name) => match names.iter().position(|field| name == field) {
                Some(position) => position,
                None => {
                    let known = if names.is_empty() {
                        "it is a tuple: use `.0`, `.1`, …".to_string()
                    } else {
                        format!("its fields are {}", names.join(", "))
                    };
                    self.errors.push(name.span(), format!("no field `{name}` here; {known}"));
                    return Err(Reported);
                }
            },
        };
        let ty = fields[position].clone();
        Ok(Expr::new(ExprKind::Project(node::Project { tuple: Box::new(base), field: position }), ty, span))
    }

    fn length(&mut self, array: &ast::Expr, axis: usize, axis_span: Span, span: Span) -> Checked<Expr> {
        if let Some(length) = self.accum_target_length(array, axis, axis_span, span) {
            return length;
        }
        let array = self.expr(array)?;
        let rank = array.ty.rank();
        if rank == 0 {
            let found = self.unifier.describe_type(&array.ty);
            self.errors.push(array.span, format!("only arrays have a length; this is {found}"));
            return Err(Reported);
        }
        if axis >= rank {
            self.errors.push(axis_span, format!("axis {axis} does not exist: this array has rank {rank}"));
            return Err(Reported);
        }
        Ok(Expr::new(ExprKind::Len(node::Len { array: Box::new(array), axis }), Type::I64, span))
    }

    fn unary(&mut self, op: UnaryOp, op_span: Span, operand: &ast::Expr, span: Span) -> Checked<Expr> {
        let operand = match operand.kind {
            // `-9223372036854775808`, `i64::MIN`: the literal is negated whole, like Rust's, so
            // its operand is the one integer literal whose bits are those of a negative `i64`
            // (read back as 2^63 when checking the range, see `literals_out_of_range`).
            ast::ExprKind::Literal(ast::Literal::Int { value, suffix }) if op == UnaryOp::Neg && value == 1 << 63 => {
                let ty = match suffix {
                    Some(scalar) if scalar.is_int() => ScalarType::Known(scalar),
                    _ => self.unifier.fresh(NumberClass::Int, super::types::Origin::Literal),
                };
                Expr::new(ExprKind::Literal(Literal::Int(i64::MIN)), Type::Scalar(ty), operand.span)
            }
            _ => self.expr(operand)?,
        };
        let ok = match (op, operand.ty.as_scalar()) {
            (UnaryOp::Neg, Some(scalar)) => self.unifier.require(scalar, NumberClass::Number).is_ok(),
            // A boolean's negation, or an integer's complement.
            (UnaryOp::Not, Some(scalar)) => {
                self.unifier.class_of(scalar) == NumberClass::Int
                    || self.unifier.unify(scalar, ScalarType::BOOL).is_ok()
            }
            (_, None) => false,
        };
        if !ok {
            let found = self.unifier.describe_type(&operand.ty);
            let wanted = if op == UnaryOp::Neg { "`-` needs a number" } else { "`!` needs a `bool` or an integer" };
            self.errors.push(op_span, format!("{wanted}, found {found}"));
            return Err(Reported);
        }
        let ty = operand.ty.clone();
        Ok(Expr::new(ExprKind::Unary(node::Unary { op, operand: Box::new(operand) }), ty, span))
    }

    fn binary(&mut self, op: BinaryOp, op_span: Span, lhs: &ast::Expr, rhs: &ast::Expr, span: Span) -> Checked<Expr> {
        let (lhs, rhs) = (self.expr(lhs), self.expr(rhs));
        let (lhs, rhs) = (lhs?, rhs?);
        let symbol = op.symbol();
        for side in [&lhs, &rhs] {
            if side.ty.as_scalar().is_none() {
                let found = self.unifier.describe_type(&side.ty);
                let hint = if side.ty.rank() > 0 { "; index the array, e.g. `a[i]`" } else { "" };
                self.errors.push(side.span, format!("`{symbol}` works on single values, not {found}{hint}"));
                return Err(Reported);
            }
        }
        let (Some(left), Some(right)) = (lhs.ty.as_scalar(), rhs.ty.as_scalar()) else {
            return Err(Reported);
        };
        if op.is_logical() {
            for side in [&lhs, &rhs] {
                let scalar = side.ty.as_scalar().unwrap_or(ScalarType::BOOL);
                if self.unifier.unify(scalar, ScalarType::BOOL).is_err() {
                    let found = self.unifier.describe(scalar);
                    self.errors.push(side.span, format!("`{symbol}` needs `bool` operands, found {found}"));
                    return Err(Reported);
                }
            }
            return Ok(Expr::new(
                ExprKind::Binary(node::Binary { op, lhs: Box::new(lhs), rhs: Box::new(rhs) }),
                Type::BOOL,
                span,
            ));
        }
        if let Err(mismatch) = self.unifier.unify(left, right) {
            let hint = self.conversion_hint(left, right);
            self.errors
                .push(op_span, format!("mismatched types: {} {symbol} {}; {hint}", mismatch.left, mismatch.right));
            return Err(Reported);
        }
        if op.is_bitwise() || op.is_shift() {
            // Integers of one type, or (not shifts) two booleans.
            let boolean = op.is_bitwise() && self.unifier.class_of(left) == NumberClass::Bool;
            if !boolean && self.unifier.require(left, NumberClass::Int).is_err() {
                let found = self.unifier.describe(left);
                let wanted = if op.is_shift() { "integers" } else { "integers or booleans" };
                self.errors.push(op_span, format!("`{symbol}` needs {wanted}, found {found}"));
                return Err(Reported);
            }
            let ty = lhs.ty.clone();
            return Ok(Expr::new(
                ExprKind::Binary(node::Binary { op, lhs: Box::new(lhs), rhs: Box::new(rhs) }),
                ty,
                span,
            ));
        }
        let needs_number = op.is_arithmetic() || !matches!(op, BinaryOp::Eq | BinaryOp::Ne);
        if needs_number && self.unifier.require(left, NumberClass::Number).is_err() {
            let found = self.unifier.describe(left);
            self.errors.push(op_span, format!("`{symbol}` needs numbers, found {found}"));
            return Err(Reported);
        }
        let ty = if op.is_comparison() { Type::BOOL } else { lhs.ty.clone() };
        Ok(Expr::new(ExprKind::Binary(node::Binary { op, lhs: Box::new(lhs), rhs: Box::new(rhs) }), ty, span))
    }

    fn cast(&mut self, operand: &ast::Expr, to: Scalar, to_span: Span, span: Span) -> Checked<Expr> {
        let operand = self.expr(operand)?;
        let Some(from) = operand.ty.as_scalar() else {
            let found = self.unifier.describe_type(&operand.ty);
            self.errors.push(operand.span, format!("only single values can be cast, not {found}"));
            return Err(Reported);
        };
        let from_class = self.unifier.class_of(from);
        if to == Scalar::Bool && from_class != NumberClass::Bool {
            self.errors.push(to_span, "numbers cannot be cast to `bool`; compare instead, e.g. `x != 0`");
            return Err(Reported);
        }
        if from_class == NumberClass::Bool && to.is_float() {
            self.errors.push(to_span, "`bool` cannot be cast to a float; use `if b { 1.0 } else { 0.0 }`");
            return Err(Reported);
        }
        // An element type of no class yet may be a `bool` (a captured `Vec<bool>`): cast to an
        // integer, it stays open, and rustc checks the cast (`TypeParam::casts`).
        let open_to_int = from_class == NumberClass::Any && to.is_int();
        if from_class != NumberClass::Bool && !open_to_int && self.unifier.require(from, NumberClass::Number).is_err() {
            return Err(Reported);
        }
        // As in Rust, a literal of the target's kind takes the target's type rather than being
        // converted: `1.00000005960464477539062500000001 as f32` is rounded once, `300 as u8`
        // and `1e39 as f32` are out of range.
        // A negated literal too: `-1 as u8` is refused, as rustc refuses it.
        let literal = match &operand.kind {
            ExprKind::Unary(node::Unary { op: UnaryOp::Neg, operand }) => &operand.kind,
            kind => kind,
        };
        let literal_of_target = matches!(literal, ExprKind::Literal(_))
            && ((to.is_float() && self.unifier.is_open_literal(from, NumberClass::Float))
                || (to.is_int() && self.unifier.is_open_literal(from, NumberClass::Int)));
        if literal_of_target && self.unifier.unify(from, ScalarType::Known(to)).is_ok() {
            return Ok(operand);
        }
        let kind =
            ExprKind::Cast(node::Cast { operand: Box::new(operand), to: ScalarType::Known(to), saturating: false });
        Ok(Expr::new(kind, Type::scalar(to), span))
    }
}

impl Checker {
    /// How to fix a mismatch between two scalar types: a literal spelled for the other side, or
    /// an explicit cast to the type the other side has.
    pub(super) fn conversion_hint(&self, left: ScalarType, right: ScalarType) -> String {
        let literal_fix = |literal: ScalarType, other: ScalarType| {
            self.unifier.is_open_literal(literal, NumberClass::Int)
                && matches!(self.unifier.shallow(other), ScalarType::Known(s) if s.is_float())
        };
        if literal_fix(left, right) || literal_fix(right, left) {
            return "ein never converts numbers implicitly: write the integer literal as a float, e.g. `2.0`"
                .to_string();
        }
        // A `bool` beside a number: the `bool` is what needs converting (no number casts to
        // `bool`), and to a float it converts by a choice, not a cast.
        let is_bool = |side: ScalarType| self.unifier.shallow(side) == ScalarType::Known(Scalar::Bool);
        if is_bool(left) != is_bool(right) {
            let other = if is_bool(left) { right } else { left };
            let float = matches!(self.unifier.shallow(other), ScalarType::Known(s) if s.is_float())
                || self.unifier.is_open_literal(other, NumberClass::Float);
            return match self.unifier.shallow(other) {
                _ if float => "a `bool` is not a number: use `if b { 1.0 } else { 0.0 }` for it".to_string(),
                ScalarType::Known(s) => format!("a `bool` is not a number: cast it with `as {s}`"),
                ScalarType::Param(_) => {
                    "a `bool` is not a number: cast it with `as i64` (or another integer type)".to_string()
                }
            };
        }
        let target = [left, right].into_iter().find_map(|side| match self.unifier.shallow(side) {
            ScalarType::Known(s) if s.is_float() => Some(s),
            _ => None,
        });
        let target = target.or_else(|| match self.unifier.shallow(left) {
            ScalarType::Known(s) => Some(s),
            ScalarType::Param(_) => None,
        });
        match target {
            Some(target) => format!("ein never converts numbers implicitly: cast the other side with `as {target}`"),
            None => "ein never converts numbers implicitly: add a cast".to_string(),
        }
    }
}

/// `node`, preceded by `checks` when there are any.
fn guarded(checks: Vec<SizeCheck>, node: Expr) -> Expr {
    if checks.is_empty() {
        return node;
    }
    let (ty, span) = (node.ty.clone(), node.span);
    Expr::new(ExprKind::Assert(node::Assert { checks, body: Box::new(node) }), ty, span)
}

pub(super) fn let_node(var: VarId, value: Expr, body: Expr) -> Expr {
    let (ty, span) = (body.ty.clone(), value.span);
    Expr::new(ExprKind::Let(node::Let { var, value: Box::new(value), body: Box::new(body) }), ty, span)
}

/// Scalars and tuples of scalars (nested) may be array elements; arrays may gain an axis.
fn is_valid_element(ty: &Type) -> bool {
    match ty {
        Type::Scalar(_) | Type::Array { .. } => true,
        Type::Tuple { fields, .. } => {
            fields.iter().all(|field| matches!(field, Type::Scalar(_)) || is_scalar_tuple(field))
        }
    }
}

fn is_scalar_tuple(ty: &Type) -> bool {
    match ty {
        Type::Scalar(_) => true,
        Type::Tuple { fields, .. } => fields.iter().all(is_scalar_tuple),
        Type::Array { .. } => false,
    }
}

/// Converts an integer expression to the `i64` that sizes and indices are, saturating (see
/// [`node::Cast::saturating`]): a `u64` above `i64::MAX` counts as `i64::MAX`, past the end of
/// every axis as an index and refused as a size (the runtime's `check_size`), whatever type
/// the expression turns out to have once literal types are resolved.
pub(super) fn to_i64(
    expr: Expr,
    scalar: ScalarType,
    unifier: &mut super::types::Unifier,
    vars: &[crate::ir::VarInfo],
) -> Expr {
    // An unsuffixed literal simply becomes an i64.
    let is_literal = matches!(expr.kind, ExprKind::Literal(_));
    if unifier.shallow(scalar) == ScalarType::I64 || (is_literal && unifier.unify(scalar, ScalarType::I64).is_ok()) {
        return expr;
    }
    // An index as a `usize` (`h[i as usize]`) comes back exactly: indices are never negative
    // (and lengths fit `isize`, so 64 bits hold them whatever the type's sign).
    if let ExprKind::Cast(node::Cast {
        operand,
        to: ScalarType::Known(Scalar::U64 | Scalar::Usize | Scalar::Isize),
        ..
    }) = &expr.kind
    {
        if let ExprKind::Var(var) = operand.kind {
            if vars.get(var.0 as usize).is_some_and(|info| info.kind == VarKind::Index) {
                return (**operand).clone();
            }
        }
    }
    let span = expr.span;
    let kind = ExprKind::Cast(node::Cast { operand: Box::new(expr), to: ScalarType::I64, saturating: true });
    Expr::new(kind, Type::I64, span)
}
