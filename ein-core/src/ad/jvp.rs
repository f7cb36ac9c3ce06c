//! Forward mode: the checked program `f(x..) -> y` becomes `f_jvp(x.., dx..) -> (y, dy)`, one IR
//! program computing the value and its tangent together.
//!
//! How: every expression `e` of the primal is rewritten into a [`Dual`], its primal and its
//! tangent, while the `let`s and size checks they need are collected in a [`Block`] that the
//! consumer wraps around its result. The primal keeps every variable of the program (a `let x`
//! still binds `x`, to the same value), so a part with no float in its type is copied as it is;
//! a float variable gets a tangent variable beside it. A loop computes both in one pass: its
//! element becomes a flat tuple of the primal's scalars then the tangent's (`for i { (y, dy) }`,
//! stored as two arrays), taken apart afterwards ([`Jvp::unpair`]). An expression used twice
//! (the `x` of `x * dy`) is bound to a `let` first ([`Jvp::atom`]), so nothing is computed
//! twice and no binder is duplicated. Tangents that are known to be zero are `None` and never
//! built. Reads are re-proved in bounds at the end by the checker's own prover.

use super::build::*;
use super::derivatives;
use crate::ir::node;
use crate::ir::visit::rename_binders;
use crate::ir::{
    declare, BinaryOp, Bounds, Expr, ExprKind, Literal, Program, ReduceOp, SizeCheck, Type, UnaryOp, UpdateOp, VarId,
    VarInfo, VarKind,
};
use proc_macro2::Span;
use std::collections::HashMap;

/// The forward-mode companion of a checked program: its parameters, then one tangent parameter
/// (`d_x`, of `x`'s type) per parameter whose type has a float part, in order; its result is
/// the pair `(value, tangent)`, the tangent of the result's type (its integer and boolean parts
/// zero). Each tangent array must have its parameter's shape (checked first, at run time).
pub fn jvp_program(primal: &Program) -> syn::Result<Program> {
    let mut jvp = Jvp { vars: primal.vars.clone(), tangents: HashMap::new() };
    let mut params = primal.params.clone();
    let mut checks = Vec::new();
    let mut taken: Vec<String> = primal.params.iter().map(|param| primal.var(*param).name.clone()).collect();
    for &param in &primal.params {
        let info = primal.var(param).clone();
        if !has_float(&info.ty) {
            continue;
        }
        let mut name = format!("d_{}", info.name);
        while taken.contains(&name) {
            name.push('_');
        }
        taken.push(name.clone());
        let tangent = declare(
            &mut jvp.vars,
            VarInfo { name: name.clone(), ty: info.ty.clone(), kind: VarKind::Param, span: info.span },
        );
        params.push(tangent);
        let (primal_var, tangent_var) = (var(param, &info.ty, info.span), var(tangent, &info.ty, info.span));
        same_shape_checks(&primal_var, &tangent_var, &format!("`{}`", info.name), &name, &mut checks);
        jvp.tangents.insert(param, tangent_var);
    }
    let mut block = Block::new();
    let mut result = jvp.dual(&primal.body, &mut block)?;
    let tangent = jvp.tangent_or_zero(&mut result, &primal.body.ty, &mut block);
    let pair = Type::tuple(vec![primal.body.ty.clone(), primal.body.ty.clone()]);
    let mut body = wrap(block, tuple(vec![result.primal, tangent], pair));
    if !checks.is_empty() {
        let ty = body.ty.clone();
        body = Expr::new(ExprKind::Assert(node::Assert { checks, body: Box::new(body) }), ty, primal.body.span);
    }
    let mut program = Program {
        params,
        vars: jvp.vars,
        type_params: primal.type_params.clone(),
        rust_calls: primal.rust_calls.clone(),
        body,
    };
    prove_reads(&mut program);
    Ok(program)
}

/// A size check per axis of every array part of a parameter: its tangent has the same shape.
/// `name` is the primal as the message names it (`` `x` ``, "the result").
pub(super) fn same_shape_checks(
    primal: &Expr,
    tangent: &Expr,
    name: &str,
    tangent_name: &str,
    checks: &mut Vec<SizeCheck>,
) {
    match &primal.ty {
        Type::Array { rank, .. } => {
            for axis in 0..*rank {
                checks.push(SizeCheck {
                    left: len(tangent.clone(), axis),
                    right: len(primal.clone(), axis),
                    left_what: format!("axis {axis} of `{tangent_name}`"),
                    right_what: format!("axis {axis} of {name}"),
                    // A tangent and its primal have one shape: no index.
                    index_name: String::new(),
                    span: primal.span,
                });
            }
        }
        Type::Tuple { fields, .. } => {
            for field in 0..fields.len() {
                let (primal, tangent) = (project(primal.clone(), field), project(tangent.clone(), field));
                same_shape_checks(&primal, &tangent, name, tangent_name, checks);
            }
        }
        Type::Scalar(_) => {}
    }
}

/// An expression's primal and tangent; `tangent: None` is a tangent known to be zero.
pub(super) struct Dual {
    pub primal: Expr,
    pub tangent: Option<Expr>,
}

impl Dual {
    pub fn constant(primal: Expr) -> Dual {
        Dual { primal, tangent: None }
    }
}

pub(super) struct Jvp {
    /// The companion's variables: the primal's, then the ones made here.
    vars: Vec<VarInfo>,
    /// The tangent of each float variable in scope (a variable or a literal); absent: zero.
    tangents: HashMap<VarId, Expr>,
}

impl Jvp {
    /// A transformation over the variables `vars` in which `tangents` are the variables with a
    /// tangent: for reverse mode, which takes a scalar function's tangent with the cotangent
    /// as its argument's tangent.
    pub fn with_vars(vars: Vec<VarInfo>, tangents: impl IntoIterator<Item = (VarId, Expr)>) -> Jvp {
        Jvp { vars, tangents: tangents.into_iter().collect() }
    }

    pub fn into_vars(self) -> Vec<VarInfo> {
        self.vars
    }

    pub fn dual(&mut self, expr: &Expr, block: &mut Block) -> syn::Result<Dual> {
        if !has_float(&expr.ty) || !self.varies(expr) {
            // No float part, or nothing with a tangent in it: no tangent; every variable still
            // means what it meant.
            return Ok(Dual::constant(expr.clone()));
        }
        let (ty, span) = (&expr.ty, expr.span);
        Ok(match &expr.kind {
            ExprKind::Literal(_) | ExprKind::Len(_) => Dual::constant(expr.clone()),
            ExprKind::Var(var) => Dual { primal: expr.clone(), tangent: self.tangents.get(var).cloned() },
            ExprKind::Let(node::Let { var, value, body }) => {
                let value = self.dual(value, block)?;
                block.push(Step::Let(*var, value.primal));
                if let Some(tangent) = value.tangent {
                    let tangent = self.atom(tangent, block);
                    self.tangents.insert(*var, tangent);
                }
                self.dual(body, block)?
            }
            ExprKind::Assert(node::Assert { checks, body }) => {
                block.push(Step::Assert(checks.clone()));
                self.dual(body, block)?
            }
            ExprKind::Tuple(items) => {
                let mut duals = items.iter().map(|item| self.dual(item, block)).collect::<syn::Result<Vec<_>>>()?;
                if duals.iter().all(|dual| dual.tangent.is_none()) {
                    Dual::constant(tuple(duals.into_iter().map(|dual| dual.primal).collect(), ty.clone()))
                } else {
                    let tangents = duals
                        .iter_mut()
                        .zip(items)
                        .map(|(dual, item)| self.tangent_or_zero(dual, &item.ty, block))
                        .collect();
                    let primals = duals.into_iter().map(|dual| dual.primal).collect();
                    Dual { primal: tuple(primals, ty.clone()), tangent: Some(tuple(tangents, ty.clone())) }
                }
            }
            ExprKind::Project(node::Project { tuple, field }) => {
                let whole = self.dual(tuple, block)?;
                let tangent = whole.tangent.and_then(|tangent| match tangent.kind {
                    ExprKind::Tuple(mut items) if *field < items.len() => {
                        Some(items.swap_remove(*field)).filter(|item| !is_zero_literal(item))
                    }
                    _ => Some(project(tangent, *field)),
                });
                Dual { primal: project(whole.primal, *field), tangent }
            }
            ExprKind::Index(node::Index { array, index, bounds }) => {
                let array = self.dual(array, block)?;
                match array.tangent {
                    None => Dual::constant(read(array.primal, (**index).clone(), *bounds)),
                    Some(tangent) => {
                        let index = self.atom((**index).clone(), block);
                        Dual {
                            primal: read(array.primal, index.clone(), *bounds),
                            tangent: Some(read(tangent, index, Bounds::Clamped)),
                        }
                    }
                }
            }
            ExprKind::Select(node::Select { cond, then, otherwise }) => {
                let cond = self.atom((**cond).clone(), block);
                let mut then = self.dual(then, block)?;
                let mut otherwise = self.dual(otherwise, block)?;
                if then.tangent.is_none() && otherwise.tangent.is_none() {
                    Dual::constant(select(cond, then.primal, otherwise.primal))
                } else {
                    let then_tangent = self.tangent_or_zero(&mut then, ty, block);
                    let otherwise_tangent = self.tangent_or_zero(&mut otherwise, ty, block);
                    Dual {
                        primal: select(cond.clone(), then.primal, otherwise.primal),
                        tangent: Some(select(cond, then_tangent, otherwise_tangent)),
                    }
                }
            }
            ExprKind::Unary(node::Unary { op, operand }) => {
                let operand = self.dual(operand, block)?;
                let unary = |operand: Expr| {
                    let ty = operand.ty.clone();
                    Expr::new(ExprKind::Unary(node::Unary { op: *op, operand: Box::new(operand) }), ty, span)
                };
                Dual { primal: unary(operand.primal), tangent: operand.tangent.map(unary) }
            }
            ExprKind::Binary(node::Binary { op, lhs, rhs }) => self.binary(*op, lhs, rhs, block)?,
            ExprKind::Cast(node::Cast { operand, to, .. }) if has_float(&operand.ty) => {
                let operand = self.dual(operand, block)?;
                Dual { primal: cast(operand.primal, *to), tangent: operand.tangent.map(|t| cast(t, *to)) }
            }
            // From an integer or a bool: no tangent.
            ExprKind::Cast(_) => Dual::constant(expr.clone()),
            ExprKind::Call(node::Call { func, args }) => derivatives::call(self, *func, args, ty, block)?,
            ExprKind::Extern(node::Extern { name, args, site, derivative }) => {
                let mut duals = Vec::with_capacity(args.len());
                for arg in args {
                    let mut dual = self.dual(arg, block)?;
                    dual.primal = self.atom(dual.primal, block);
                    duals.push(dual);
                }
                let primals: Vec<Expr> = duals.iter().map(|dual| dual.primal.clone()).collect();
                let kind = ExprKind::Extern(node::Extern {
                    name: name.clone(),
                    args: primals.clone(),
                    site: *site,
                    derivative: derivative.clone(),
                });
                let primal = Expr::new(kind, ty.clone(), span);
                if duals.iter().all(|dual| dual.tangent.is_none()) {
                    return Ok(Dual::constant(primal));
                }
                let Some(derivative) = derivative else {
                    return Err(syn::Error::new(
                        name.span(),
                        format!(
                            "`#[jvp]` cannot differentiate through `extern fn {name}`: declare its derivative, \
                             `extern fn {name}(..) -> T with d = {name}_d;`, a Rust function taking the arguments, then \
                             one tangent per float argument, and returning the tangent of the result"
                        ),
                    ));
                };
                // `d(args.., tangents..)`: one tangent per float argument, zero where it has none.
                let mut with_tangents = primals;
                for (dual, arg) in duals.iter_mut().zip(args).filter(|(_, arg)| has_float(&arg.ty)) {
                    let tangent = self.tangent_or_zero(dual, &arg.ty, block);
                    with_tangents.push(tangent);
                }
                let kind = ExprKind::Extern(node::Extern {
                    name: derivative.clone(),
                    args: with_tangents,
                    site: None,
                    derivative: None,
                });
                Dual { primal, tangent: Some(Expr::new(kind, ty.clone(), span)) }
            }
            ExprKind::For(node::For { index, size, body }) => self.comprehension(*index, size, body, ty, block)?,
            ExprKind::Filter(node::For { index, size, body }) => self.filter(*index, size, body, ty, block)?,
            ExprKind::Reduce(reduce) => self.reduce(reduce, ty, span, block)?,
            ExprKind::Fold(fold) => self.fold(fold, ty, false, block)?,
            ExprKind::Scan(scan) => {
                super::differentiable_scan(scan, span)?;
                self.fold(scan, ty, true, block)?
            }
            ExprKind::Accum(accum) => self.accum(accum, ty, span, block)?,
            ExprKind::Contract(_) => {
                return Err(syn::Error::new(
                    span,
                    "ein internal error: differentiation runs before contractions are made",
                ));
            }
        })
    }

    /// Whether `expr` mentions a variable with a tangent (else its tangent is zero).
    fn varies(&self, expr: &Expr) -> bool {
        match &expr.kind {
            ExprKind::Var(var) => self.tangents.contains_key(var),
            // A length is an integer, whatever the array.
            ExprKind::Len(_) => false,
            _ => {
                let mut found = false;
                expr.for_each_child(|child| found = found || self.varies(child));
                found
            }
        }
    }

    /// `expr` itself if it is cheap to repeat and binds nothing, else a variable `let`-bound
    /// to it in `block`.
    pub fn atom(&mut self, expr: Expr, block: &mut Block) -> Expr {
        if is_trivial(&expr) {
            return expr;
        }
        // A tuple of atoms stays a tuple, so that a projection sees which parts are zero.
        if let ExprKind::Tuple(items) = expr.kind {
            let items = items.into_iter().map(|item| self.atom(item, block)).collect();
            return tuple(items, expr.ty);
        }
        self.bind(expr, block)
    }

    /// The tangent of `dual` (of type `ty`), a zero of its shape where it has none; makes the
    /// primal an atom when the zero needs its shape.
    pub fn tangent_or_zero(&mut self, dual: &mut Dual, ty: &Type, block: &mut Block) -> Expr {
        if let Some(tangent) = &dual.tangent {
            return tangent.clone();
        }
        if ty.has_array() {
            dual.primal = self.atom(dual.primal.clone(), block);
        }
        self.zero(ty, &dual.primal)
    }

    /// A zero of type `ty` with the shape of `like` (an atom): integer and boolean parts are
    /// `0` and `false`.
    fn zero(&mut self, ty: &Type, like: &Expr) -> Expr {
        match ty {
            Type::Scalar(scalar) => zero_scalar(*scalar, like.span),
            Type::Tuple { fields, .. } => {
                let items = (0..fields.len()).map(|field| self.zero(&fields[field], &project(like.clone(), field)));
                tuple(items.collect(), ty.clone())
            }
            Type::Array { .. } => {
                let (indices, element) = self.element_of(like);
                let element_ty = element.ty.clone();
                let zero = self.zero(&element_ty, &element);
                self.loops(like, indices, zero)
            }
        }
    }

    /// Fresh indices, one per axis of the array atom `array`, and its element read at them.
    fn element_of(&mut self, array: &Expr) -> (Vec<VarId>, Expr) {
        let indices: Vec<VarId> = (0..array.ty.rank())
            .map(|axis| {
                let name = format!("{}i{axis}", crate::ir::SYNTHETIC_PREFIX);
                declare(&mut self.vars, VarInfo { name, ty: Type::I64, kind: VarKind::Index, span: array.span })
            })
            .collect();
        let positions: Vec<(Expr, Bounds)> =
            indices.iter().map(|&index| (var(index, &Type::I64, array.span), Bounds::Clamped)).collect();
        (indices, Expr::read_of(array.clone(), positions))
    }

    /// `for indices… { element }` over the axes of `shape_of` (an array atom).
    fn loops(&self, shape_of: &Expr, indices: Vec<VarId>, element: Expr) -> Expr {
        indices.into_iter().enumerate().rev().fold(element, |body, (axis, index)| {
            let ty = body.ty.with_outer_axis();
            // In terms of what the array was made from: a size never depends on an index.
            let size = crate::ir::shape::simplify_lengths(len(shape_of.clone(), axis));
            Expr::new(ExprKind::For(node::For { index, size: Box::new(size), body: Box::new(body) }), ty, shape_of.span)
        })
    }

    /// The primal and tangent of a value of type `ty` packed as one ([`Packing`]): element by
    /// element for an array (so that a comprehension of it stores scalars only), every tangent
    /// part kept; for anything else, its tangent parts known to be zero left out.
    fn pair(&mut self, mut dual: Dual, ty: &Type, block: &mut Block) -> (Expr, Packing) {
        if !matches!(ty, Type::Array { .. }) {
            return self.pack(dual, ty, true, block);
        }
        let tangent = self.tangent_or_zero(&mut dual, ty, block);
        // Bound even when cheap: a read of a row from an empty axis must still fail.
        let primal = self.bind(dual.primal, block);
        let tangent = self.bind(tangent, block);
        let (indices, primal_element) = self.element_of(&primal);
        let positions: Vec<(Expr, Bounds)> =
            indices.iter().map(|&index| (var(index, &Type::I64, primal.span), Bounds::Clamped)).collect();
        let tangent_element = Expr::read_of(tangent, positions);
        let element_ty = primal_element.ty.clone();
        let packing = Packing::full(&element_ty);
        let parts = [parts(primal_element, &element_ty), parts(tangent_element, &element_ty)].concat();
        let element = tuple(parts, packing.packed_type(&element_ty));
        (self.loops(&primal, indices, element), packing)
    }

    /// The primal and tangent of type `ty` of a value [`Jvp::pair`] packed, bound to `let`s.
    fn unpair(&mut self, packed: Expr, ty: &Type, packing: &Packing, block: &mut Block) -> Dual {
        let Type::Array { elem, .. } = ty else { return self.unpack(packed, ty, packing, block) };
        let packed = self.atom(packed, block);
        let mut half = |tangent: bool| {
            let (indices, element) = self.element_of(&packed);
            let rebuilt = packing.rebuild(elem, &element, tangent);
            let rebuilt = self.loops(&packed, indices, rebuilt);
            self.atom(rebuilt, block)
        };
        let primal = half(false);
        Dual { primal, tangent: Some(half(true)) }
    }

    /// The primal and tangent (atoms) of a value of type `ty` packed as a flat tuple of their
    /// parts ([`Packing`]), arrays kept whole; with `sparse`, tangent parts known to be zero are
    /// left out (not for a fold's state, whose init and step must pack alike).
    fn pack(&mut self, mut dual: Dual, ty: &Type, sparse: bool, block: &mut Block) -> (Expr, Packing) {
        let tangent = self.tangent_or_zero(&mut dual, ty, block);
        let primal = self.atom(dual.primal, block);
        let tangent = self.atom(tangent, block);
        let tangent_parts = parts(tangent, ty);
        let packing = Packing { kept: tangent_parts.iter().map(|part| !(sparse && is_zero_literal(part))).collect() };
        let kept = tangent_parts.into_iter().zip(&packing.kept).filter(|(_, kept)| **kept).map(|(part, _)| part);
        let packed = tuple(parts(primal, ty).into_iter().chain(kept).collect(), packing.packed_type(ty));
        (packed, packing)
    }

    /// The primal and tangent of type `ty` of a value [`Jvp::pack`] packed, bound to `let`s.
    fn unpack(&mut self, packed: Expr, ty: &Type, packing: &Packing, block: &mut Block) -> Dual {
        let packed = self.atom(packed, block);
        let (primal, tangent) = (packing.rebuild(ty, &packed, false), packing.rebuild(ty, &packed, true));
        Dual { primal: self.atom(primal, block), tangent: Some(self.atom(tangent, block)) }
    }

    /// `expr` bound to a `let` unless it is a variable.
    fn bind(&mut self, expr: Expr, block: &mut Block) -> Expr {
        if matches!(expr.kind, ExprKind::Var(_)) {
            return expr;
        }
        let (ty, span) = (expr.ty.clone(), expr.span);
        let name = format!("{}d{}", crate::ir::SYNTHETIC_PREFIX, self.vars.len());
        let fresh = declare(&mut self.vars, VarInfo { name, ty: ty.clone(), kind: VarKind::Let, span });
        block.push(Step::Let(fresh, expr));
        var(fresh, &ty, span)
    }

    fn binary(&mut self, op: BinaryOp, lhs: &Expr, rhs: &Expr, block: &mut Block) -> syn::Result<Dual> {
        let mut left = self.dual(lhs, block)?;
        if matches!(op, BinaryOp::Mul | BinaryOp::Div | BinaryOp::Rem) {
            left.primal = self.atom(left.primal, block);
        }
        let mut right = self.dual(rhs, block)?;
        if matches!(op, BinaryOp::Mul | BinaryOp::Div | BinaryOp::Rem) {
            right.primal = self.atom(right.primal, block);
        }
        let primal = binary(op, left.primal.clone(), right.primal.clone());
        let tangent = match op {
            BinaryOp::Add => add(left.tangent, right.tangent),
            BinaryOp::Sub => add(left.tangent, right.tangent.map(negate)),
            BinaryOp::Mul => add(
                left.tangent.map(|t| binary(BinaryOp::Mul, t, right.primal.clone())),
                right.tangent.map(|t| binary(BinaryOp::Mul, left.primal.clone(), t)),
            ),
            // d(a / b) = (da - (a / b) db) / b.
            BinaryOp::Div => {
                let quotient = self.atom(primal.clone(), block);
                let primal = quotient.clone();
                let tangent = add(left.tangent, right.tangent.map(|t| negate(binary(BinaryOp::Mul, quotient, t))))
                    .map(|t| binary(BinaryOp::Div, t, right.primal.clone()));
                return Ok(Dual { primal, tangent });
            }
            // a % b = a - b trunc(a / b): d = da - trunc(a / b) db.
            BinaryOp::Rem => {
                let quotient = binary(BinaryOp::Div, left.primal.clone(), right.primal.clone());
                let truncated = call(crate::ops::Func::Trunc, vec![quotient]);
                add(left.tangent, right.tangent.map(|t| negate(binary(BinaryOp::Mul, truncated, t))))
            }
            // Comparisons and logic have no float result: handled before.
            _ => None,
        };
        Ok(Dual { primal, tangent })
    }

    fn comprehension(
        &mut self,
        index: VarId,
        size: &Expr,
        body: &Expr,
        ty: &Type,
        block: &mut Block,
    ) -> syn::Result<Dual> {
        let mut inner = Block::new();
        let element = self.dual(body, &mut inner)?;
        if element.tangent.is_none() {
            return Ok(Dual::constant(for_loop(index, size.clone(), wrap(inner, element.primal))));
        }
        let (packed, packing) = self.pair(element, &body.ty, &mut inner);
        Ok(self.unpair(for_loop(index, size.clone(), wrap(inner, packed)), ty, &packing, block))
    }

    /// `for i where c { e }`: the body is the pair `(c, e)`; the element becomes `(c, packed e)`.
    fn filter(&mut self, index: VarId, size: &Expr, body: &Expr, ty: &Type, block: &mut Block) -> syn::Result<Dual> {
        let mut inner = Block::new();
        let mut pair = self.dual(body, &mut inner)?;
        let filter = |body: Expr| {
            let ty = Type::array(project(body.clone(), 1).ty, 1);
            let kind = ExprKind::Filter(node::For { index, size: Box::new(size.clone()), body: Box::new(body) });
            Expr::new(kind, ty, size.span)
        };
        if pair.tangent.is_none() {
            return Ok(Dual::constant(filter(wrap(inner, pair.primal))));
        }
        let tangent = self.tangent_or_zero(&mut pair, &body.ty, &mut inner);
        let primal = self.atom(pair.primal, &mut inner);
        let tangent = self.atom(tangent, &mut inner);
        let element = Dual { primal: project(primal.clone(), 1), tangent: Some(project(tangent, 1)) };
        let element_ty = element.primal.ty.clone();
        let (packed, packing) = self.pair(element, &element_ty, &mut inner);
        let kept_ty = Type::tuple(vec![Type::BOOL, packed.ty.clone()]);
        let kept = tuple(vec![project(primal, 0), packed], kept_ty);
        Ok(self.unpair(filter(wrap(inner, kept)), ty, &packing, block))
    }

    fn reduce(&mut self, reduce: &node::Reduce, ty: &Type, span: Span, block: &mut Block) -> syn::Result<Dual> {
        let node::Reduce { op, index, size, body } = reduce;
        if matches!(op, ReduceOp::Max | ReduceOp::Min | ReduceOp::Prod) && matches!(ty, Type::Tuple { .. }) {
            return self.reduce_parts(reduce, ty, span, block);
        }
        if matches!(op, ReduceOp::Max | ReduceOp::Min) {
            return self.extremum(reduce, ty, span, block);
        }
        let mut inner = Block::new();
        let element = self.dual(body, &mut inner)?;
        let reduction = |op: ReduceOp, index: VarId, body: Expr| {
            let ty = body.ty.clone();
            let kind = ExprKind::Reduce(node::Reduce { op, index, size: size.clone(), body: Box::new(body) });
            Expr::new(kind, ty, span)
        };
        if element.tangent.is_none() {
            return Ok(Dual::constant(reduction(*op, *index, wrap(inner, element.primal))));
        }
        match op {
            ReduceOp::Sum => {
                let (packed, packing) = self.pair(element, ty, &mut inner);
                Ok(self.unpair(reduction(ReduceOp::Sum, *index, wrap(inner, packed)), ty, &packing, block))
            }
            // Each element's tangent times the product of the others ([`product_of_others`]):
            // the zeros counted and the nonzero elements multiplied by two reductions of copies
            // of the body, then one sum; all parallel, over any range.
            ReduceOp::Prod => {
                // `op k { form(body) }` over a copy of the body, with binders of its own.
                let reduced_copy = |this: &mut Self, op: ReduceOp, form: &dyn Fn(Expr) -> Expr, ty: &Type| {
                    let name = format!("{}factor{}", crate::ir::SYNTHETIC_PREFIX, this.vars.len());
                    let factor_ty = body.ty.clone();
                    let factor =
                        declare(&mut this.vars, VarInfo { name, ty: factor_ty.clone(), kind: VarKind::Let, span });
                    let formed = form(var(factor, &factor_ty, span));
                    let kind = ExprKind::Let(node::Let { var: factor, value: body.clone(), body: Box::new(formed) });
                    let mut copy = reduction(op, *index, Expr::new(kind, ty.clone(), span));
                    rename_binders(&mut copy, &mut this.vars);
                    copy
                };
                let is_zero = |value: Expr| binary(BinaryOp::Eq, value.clone(), zero_of(&value.ty, span));
                let zeros = reduced_copy(
                    self,
                    ReduceOp::Sum,
                    &|value| select(is_zero(value), int(1, span), int(0, span)),
                    &Type::I64,
                );
                let zeros = self.bind(zeros, block);
                let kept = |value: Expr| select(is_zero(value.clone()), one_of(&value.ty, span), value);
                let nonzero = reduced_copy(self, ReduceOp::Prod, &kept, ty);
                let nonzero = self.bind(nonzero, block);
                let mut product = reduction(ReduceOp::Prod, *index, (**body).clone());
                rename_binders(&mut product, &mut self.vars);
                let factor = self.atom(element.primal, &mut inner);
                let tangent = element.tangent.expect("checked above");
                let term = binary(BinaryOp::Mul, tangent, product_of_others(factor, zeros, nonzero));
                let tangent = reduction(ReduceOp::Sum, *index, wrap(inner, term));
                Ok(Dual { primal: product, tangent: Some(tangent) })
            }
            // Extrema were handled before, and so were integer and boolean results.
            ReduceOp::Max | ReduceOp::Min | ReduceOp::ArgMax | ReduceOp::ArgMin | ReduceOp::All | ReduceOp::Any => {
                Err(syn::Error::new(span, "ein internal error: a float-valued argmax, all or any"))
            }
        }
    }

    /// A `max`, `min` or `prod` of tuples, which reduces each scalar part on its own: one
    /// reduction per part (of a copy of the body), each differentiated as a scalar one.
    fn reduce_parts(&mut self, reduce: &node::Reduce, ty: &Type, span: Span, block: &mut Block) -> syn::Result<Dual> {
        let node::Reduce { op, index, size, body } = reduce;
        let mut duals = Vec::new();
        for (position, part_ty) in part_types(ty).into_iter().enumerate() {
            let part = parts((**body).clone(), ty).swap_remove(position);
            let kind =
                ExprKind::Reduce(node::Reduce { op: *op, index: *index, size: size.clone(), body: Box::new(part) });
            let mut part = Expr::new(kind, part_ty, span);
            rename_binders(&mut part, &mut self.vars);
            duals.push(self.dual(&part, block)?);
        }
        let primal = rebuild(ty, &mut duals.iter().map(|dual| dual.primal.clone()));
        if duals.iter().all(|dual| dual.tangent.is_none()) {
            return Ok(Dual::constant(primal));
        }
        let tangents: Vec<Expr> =
            duals.into_iter().map(|dual| dual.tangent.unwrap_or_else(|| zero_of(&dual.primal.ty, span))).collect();
        Ok(Dual { primal, tangent: Some(rebuild(ty, &mut tangents.into_iter())) })
    }

    /// `max`/`min`: the tangent of the chosen element, the first whose value is the extremum
    /// (none for an empty range). The extremum and the first position where the body reaches it
    /// are two parallel reductions of the primal body; the body's tangent is then evaluated
    /// once, at that position (in a reduction of one step, or none where no element reaches the
    /// extremum: an empty range, where the body may not be evaluable, or only NaNs).
    fn extremum(&mut self, reduce: &node::Reduce, ty: &Type, span: Span, block: &mut Block) -> syn::Result<Dual> {
        let node::Reduce { op, index, size, body } = reduce;
        let reduction = |op: ReduceOp, index: VarId, size: Expr, body: Expr| {
            let ty = body.ty.clone();
            let kind = ExprKind::Reduce(node::Reduce { op, index, size: Box::new(size), body: Box::new(body) });
            Expr::new(kind, ty, span)
        };
        let extremum = reduction(*op, *index, (**size).clone(), (**body).clone());
        let extremum = self.atom(extremum, block);
        let at = var(*index, &Type::I64, span);
        let reached = binary(BinaryOp::Eq, (**body).clone(), extremum.clone());
        let mut first = reduction(ReduceOp::Min, *index, (**size).clone(), select(reached, at, int(i64::MAX, span)));
        rename_binders(&mut first, &mut self.vars);
        let first = self.bind(first, block);
        let mut chosen = (**body).clone();
        rename_binders(&mut chosen, &mut self.vars);
        crate::ir::visit::substitute(&mut chosen, *index, &first);
        let mut inner = Block::new();
        let mut chosen = self.dual(&chosen, &mut inner)?;
        if chosen.tangent.is_none() {
            block.pop(); // `first`, not needed after all
            return Ok(Dual::constant(extremum));
        }
        let tangent = self.tangent_or_zero(&mut chosen, ty, &mut inner);
        let name = format!("{}once", crate::ir::SYNTHETIC_PREFIX);
        let once = declare(&mut self.vars, VarInfo { name, ty: Type::I64, kind: VarKind::Index, span });
        // One step if an element reaches the extremum (none does for an empty range, or when
        // every element is NaN, which `max`/`min` ignore).
        let reached = binary(BinaryOp::Lt, first.clone(), (**size).clone());
        let steps = select(reached, int(1, span), int(0, span));
        let tangent = reduction(ReduceOp::Sum, once, steps, wrap(inner, tangent));
        Ok(Dual { primal: extremum, tangent: Some(self.atom(tangent, block)) })
    }

    /// A fold (or, with `scan`, a scan) of the pair (state, tangent of the state), packed as a
    /// flat tuple; the accumulator's tangent is a `let` beside it in the step.
    fn fold(&mut self, fold: &node::Fold, ty: &Type, scan: bool, block: &mut Block) -> syn::Result<Dual> {
        let node::Fold { index, count, acc, init, body } = fold;
        let span = init.span;
        let state_ty = init.ty.clone();
        let init = self.dual(init, block)?;
        if init.tangent.is_none() && !self.varies(body) {
            // The state starts without a tangent and no step gives it one.
            let node = node::Fold {
                index: *index,
                count: count.clone(),
                acc: *acc,
                init: Box::new(init.primal),
                body: body.clone(),
            };
            let kind = if scan { ExprKind::Scan(node) } else { ExprKind::Fold(node) };
            return Ok(Dual::constant(Expr::new(kind, ty.clone(), span)));
        }
        let (init, packing) = self.pack(init, &state_ty, false, block);
        let pair_ty = packing.packed_type(&state_ty);
        let info = self.vars[acc.0 as usize].clone();
        let name = crate::ir::synthetic_name(&info.name, "_pair");
        let packed_acc =
            declare(&mut self.vars, VarInfo { name, ty: pair_ty.clone(), kind: VarKind::Accumulator, span });
        // The accumulator is now a `let` of the packed one's primal half.
        self.vars[acc.0 as usize].kind = VarKind::Let;
        let mut inner = Block::new();
        let state = self.unpack(var(packed_acc, &pair_ty, span), &state_ty, &packing, &mut inner);
        inner.push(Step::Let(*acc, state.primal));
        self.tangents.insert(*acc, state.tangent.expect("unpack gives a tangent"));
        let step = self.dual(body, &mut inner)?;
        let (step, _) = self.pack(step, &state_ty, false, &mut inner);
        let body = Box::new(wrap(inner, step));
        let node = node::Fold { index: *index, count: count.clone(), acc: packed_acc, init: Box::new(init), body };
        if scan {
            let packed = Expr::new(ExprKind::Scan(node), Type::array(pair_ty, 1), span);
            Ok(self.unpair(packed, ty, &packing, block))
        } else {
            let packed = Expr::new(ExprKind::Fold(node), pair_ty, span);
            Ok(self.unpack(packed, ty, &packing, block))
        }
    }

    /// `accum h = init { … h[k] += e … }`: the primal accum, and a second one, over a copy of
    /// the updates, that adds the tangents `de` into the tangent of `init`. With `*=`, `h[q]`
    /// is the product of `init[q]` and the `e`s at `q`, and the tangent the sum of each
    /// factor's tangent times the product of the others there ([`product_of_others`], from two
    /// more accums that count the zero factors and multiply the others): again an accum of
    /// `+=`. Mixing `+=` and `*=` on one array, the tangent is the dual-number accumulation,
    /// serial like the primal: `dh[k] += de` for an added `e`, `dh[k] *= e; dh[k] += found ·
    /// de` for a multiplier `e`, `found` the element it found (the primal's history; note
    /// [mixed accums] in `ad/mod.rs`).
    fn accum(&mut self, accum: &node::Accum, ty: &Type, span: Span, block: &mut Block) -> syn::Result<Dual> {
        let node::Accum { target, init, updates, ops, value } = accum;
        if *value != node::AccumValue::Final {
            return Err(syn::Error::new(span, "ein internal error: differentiating an accum's history"));
        }
        let multiplied = ops.contains(&UpdateOp::Mul);
        let mixed = multiplied && ops.contains(&UpdateOp::Add);
        let mut init = self.dual(init, block)?;
        init.primal = self.atom(init.primal, block);
        let primal = node::Accum {
            target: target.clone(),
            init: Box::new(init.primal.clone()),
            updates: updates.clone(),
            ops: ops.clone(),
            value: node::AccumValue::Final,
        };
        let primal = Expr::new(ExprKind::Accum(primal), ty.clone(), span);
        let mut copy = (**updates).clone();
        rename_binders(&mut copy, &mut self.vars);
        let group = 2 + ty.rank();
        let factors = if mixed {
            let before = accum_history(accum, &init.primal, node::AccumValue::Before, &mut self.vars)?;
            Factors::Mixed { before: self.bind(before, block), ops }
        } else if multiplied {
            let (zeros, nonzero) = factor_accums(accum, &init.primal, &mut self.vars);
            Factors::Products { zeros: self.bind(zeros, block), nonzero: self.bind(nonzero, block) }
        } else {
            Factors::One
        };
        let tangent_updates = self.update_tangents(&copy, group, &factors, block, &mut Vec::new())?;
        let tangent_init = match (&factors, &init.tangent) {
            (Factors::Products { zeros, nonzero }, Some(tangent)) => {
                let tangent = self.atom(tangent.clone(), block);
                map_elements(&init.primal, &mut self.vars, |at| {
                    let others = product_of_others(read_at(&init.primal, at), read_at(zeros, at), read_at(nonzero, at));
                    binary(BinaryOp::Mul, read_at(&tangent, at), others)
                })
            }
            _ => self.tangent_or_zero(&mut init, ty, block),
        };
        // A multiplier's tangent is two updates: scale, then add.
        let tangent_ops = match factors {
            Factors::Mixed { .. } => ops
                .iter()
                .flat_map(|op| match op {
                    UpdateOp::Mul => vec![UpdateOp::Mul, UpdateOp::Add],
                    _ => vec![*op],
                })
                .collect(),
            _ => vec![UpdateOp::Add; ops.len()],
        };
        let tangent = node::Accum {
            target: format!("d_{target}"),
            init: Box::new(tangent_init),
            updates: Box::new(tangent_updates),
            ops: tangent_ops,
            value: node::AccumValue::Final,
        };
        Ok(Dual { primal, tangent: Some(Expr::new(ExprKind::Accum(tangent), ty.clone(), span)) })
    }

    /// An accum's update nest with each update's value replaced by its tangent (conditions and
    /// target indices kept); for `*=` (`factors`: the zero counts and nonzero products), by its
    /// tangent times the product of the other factors at its element; mixing `+=` and `*=`,
    /// each multiplier by two updates (see [`Jvp::accum`]). `group` is the length of one
    /// update's part of the leaf tuple; `indices` the loop indices around `nest`.
    fn update_tangents(
        &mut self,
        nest: &Expr,
        group: usize,
        factors: &Factors,
        block: &mut Block,
        indices: &mut Vec<Expr>,
    ) -> syn::Result<Expr> {
        match &nest.kind {
            ExprKind::For(node::For { index, size, body }) => {
                let mut inner = Block::new();
                indices.push(var(*index, &Type::I64, nest.span));
                let body = self.update_tangents(body, group, factors, &mut inner, indices);
                indices.pop();
                let body = wrap(inner, body?);
                let ty = body.ty.with_outer_axis();
                let kind = ExprKind::For(node::For { index: *index, size: size.clone(), body: Box::new(body) });
                Ok(Expr::new(kind, ty, nest.span))
            }
            ExprKind::Let(node::Let { var, value, body }) => {
                let value = self.dual(value, block)?;
                block.push(Step::Let(*var, value.primal));
                if let Some(tangent) = value.tangent {
                    let tangent = self.atom(tangent, block);
                    self.tangents.insert(*var, tangent);
                }
                self.update_tangents(body, group, factors, block, indices)
            }
            ExprKind::Assert(node::Assert { checks, body }) => {
                block.push(Step::Assert(checks.clone()));
                self.update_tangents(body, group, factors, block, indices)
            }
            ExprKind::Tuple(items) => {
                let mut leaf = Vec::with_capacity(items.len());
                for (position, item) in items.iter().enumerate() {
                    if position % group != group - 1 {
                        // Bound: a `*=` update's tangent reads at its condition and positions.
                        let bound = !matches!(factors, Factors::One);
                        let item = if bound { self.atom(item.clone(), block) } else { item.clone() };
                        leaf.push(item);
                        continue;
                    }
                    let mut value = self.dual(item, block)?;
                    let tangent = self.tangent_or_zero(&mut value, &item.ty, block);
                    let (zeros, nonzero) = match factors {
                        Factors::One => {
                            leaf.push(tangent);
                            continue;
                        }
                        Factors::Products { zeros, nonzero } => (zeros, nonzero),
                        Factors::Mixed { before, ops } => {
                            let update = position / group;
                            if ops.get(update) == Some(&UpdateOp::Mul) {
                                // `dh *= e` with the same condition and positions, then
                                // `dh += found · de`.
                                let head: Vec<Expr> = leaf[leaf.len() + 1 - group..].to_vec();
                                leaf.push(value.primal);
                                leaf.extend(head);
                                let mut this_update = indices.clone();
                                this_update.push(int(update as i64, nest.span));
                                let found = read_at(before, &this_update);
                                leaf.push(binary(BinaryOp::Mul, found, tangent));
                            } else {
                                leaf.push(tangent);
                            }
                            continue;
                        }
                    };
                    let factor = self.atom(value.primal, block);
                    let cond = leaf[leaf.len() + 1 - group].clone();
                    let positions: Vec<(Expr, Bounds)> =
                        leaf[leaf.len() + 2 - group..].iter().map(|at| (at.clone(), Bounds::Clamped)).collect();
                    let at = |array: &Expr| Expr::read_of(array.clone(), positions.clone());
                    let others = product_of_others(factor, at(zeros), at(nonzero));
                    // Read only where the update happens: elsewhere its position may be
                    // outside the (possibly empty) array.
                    let scaled = only_where(cond, binary(BinaryOp::Mul, tangent, others), &mut self.vars);
                    leaf.push(scaled);
                }
                let elem = items.last().map_or(Type::BOOL, |value| value.ty.clone());
                let ty = crate::ir::accum::update_tuple_type(&elem, group - 2, leaf.len() / group);
                Ok(tuple(leaf, ty))
            }
            _ => Err(syn::Error::new(nest.span, "ein internal error: an accum's updates are not a nest of loops")),
        }
    }
}

/// What an accum update's tangent is built from (see [`Jvp::accum`]).
enum Factors<'a> {
    /// Nothing: every update is `+=`.
    One,
    /// Every update is `*=`: the zero counts and nonzero products per element
    /// ([`factor_accums`]), for [`product_of_others`].
    Products { zeros: Expr, nonzero: Expr },
    /// Mixed: the elements each update found (a history indexed by the update loops' indices
    /// and the update's number), and the operators.
    Mixed { before: Expr, ops: &'a [UpdateOp] },
}

/// How a value and its tangent are packed into one flat tuple: the parts of the value (its
/// scalars and arrays, through tuples), then the parts of the tangent that are `kept` (the
/// others are zero, left out).
struct Packing {
    kept: Vec<bool>,
}

impl Packing {
    /// Every tangent part kept.
    fn full(ty: &Type) -> Packing {
        Packing { kept: vec![true; part_types(ty).len()] }
    }

    fn packed_type(&self, ty: &Type) -> Type {
        let parts = part_types(ty);
        let kept = parts.iter().zip(&self.kept).filter(|(_, kept)| **kept).map(|(part, _)| part.clone());
        Type::tuple(parts.iter().cloned().chain(kept).collect())
    }

    /// The value (or with `tangent`, its tangent) of type `ty` out of `packed` (an atom).
    fn rebuild(&self, ty: &Type, packed: &Expr, tangent: bool) -> Expr {
        let count = self.kept.len();
        let mut next_kept = count;
        let mut parts = part_types(ty).into_iter().enumerate().map(|(position, part)| {
            if !tangent {
                project(packed.clone(), position)
            } else if self.kept[position] {
                next_kept += 1;
                project(packed.clone(), next_kept - 1)
            } else {
                match part {
                    Type::Scalar(scalar) => zero_scalar(scalar, packed.span),
                    // Arrays are never left out (only literal zeros are).
                    _ => project(packed.clone(), position),
                }
            }
        });
        rebuild(ty, &mut parts)
    }
}

/// A zero made by [`zero_scalar`]: a part of a tuple's tangent known to be zero.
fn is_zero_literal(expr: &Expr) -> bool {
    matches!(expr.kind, ExprKind::Literal(Literal::Float(0.0, _) | Literal::Int(0) | Literal::Bool(false)))
}

/// Cheap to evaluate twice, and binds nothing: variables, literals, lengths, and reads,
/// projections and integer arithmetic over them.
fn is_trivial(expr: &Expr) -> bool {
    fn size(expr: &Expr, budget: &mut usize) -> bool {
        if *budget == 0 {
            return false;
        }
        *budget -= 1;
        let own = match &expr.kind {
            ExprKind::Var(_) | ExprKind::Literal(_) | ExprKind::Len(_) | ExprKind::Project(_) | ExprKind::Index(_) => {
                true
            }
            ExprKind::Binary(node::Binary { op: BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul, .. })
            | ExprKind::Unary(node::Unary { op: UnaryOp::Neg, .. })
            | ExprKind::Cast(_) => !has_float(&expr.ty),
            _ => false,
        };
        let mut children = own;
        expr.for_each_child(|child| children = children && size(child, budget));
        children
    }
    size(expr, &mut 8)
}
