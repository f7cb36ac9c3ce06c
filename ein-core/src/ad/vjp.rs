//! Reverse mode: the checked program `f(x..) -> y` becomes `f_vjp(x.., cotangent) -> (y, dx..)`
//! (and `#[grad]`'s `f_grad(x..) -> (y, dx..)`, the cotangent 1), one IR program: the primal
//! as written, then the backward sweep.
//!
//! How: the backward sweep walks a fresh copy of each primal expression from its result back,
//! with the cotangent of the expression, and records *contributions* to the variables it reads:
//! `x̄ += c`, or for an array, `x̄[p…] += c` at the positions read. A contribution made inside
//! loops of the primal (a comprehension, a reduction, an element of an array used whole, the
//! chosen element of a `max`, a branch of an `if`) remembers those loops as [`Frame`]s: their
//! index and range, the `let`s that recompute the primal values the contribution needs there
//! (nothing of a loop body is stored: it is recomputed, as Futhark does for maps), and a mask
//! (the branch taken, the chosen element). When every use of a variable has been walked, its
//! adjoint is *materialised* where it is bound: a scalar's contributions are summed over their
//! frames (`sum i { sum k { … } }`). An array's contributions made at plain indices over whole
//! axes (`w[k, j]` in `for b, j { sum k { x[b, k] * w[k, j] } }`) are transposed into one
//! comprehension over the array's positions summing over the other loops
//! (`for k, j { sum b { x[b, k] * c[b, j] } }`: no contention, and a contraction for the
//! optimiser to hand to the GEMM); the others (shifted, clamped, gathered positions) are added
//! in by deterministic `accum`s (`accum x̄ = … { for i { for k { x̄[p] += … } } }`, chained). So
//! the backward sweep is parallel wherever the primal was. Then the variable's own value is
//! walked with that adjoint. Reductions inside comprehensions are lifted into arrays of their
//! own first (`lift`), so that the sweep reads them instead of recomputing them.
//!
//! Every copy a contribution carries is renamed ([`rename_binders`]) when it is made, so no
//! variable is bound twice. Reads are re-proved in bounds at the end.

use super::build::*;
use super::derivatives;
use super::jvp::{Dual, Jvp};
use crate::ir::accum::update_tuple_type;
use crate::ir::node;
use crate::ir::visit::{alpha_key, free_vars, rename_binders};
use crate::ir::{
    declare, BinaryOp, Bounds, Expr, ExprKind, Literal, Program, ReduceOp, Type, UnaryOp, UpdateOp, VarId, VarInfo,
    VarKind,
};
use crate::ops::Func;
use proc_macro2::Span;
use std::collections::{HashMap, HashSet};

/// The reverse-mode companion of a checked program: its parameters, then (unless `grad`) the
/// cotangent of the result (`cotangent`, of the result's type, checked to have its shape);
/// its result is `(value, d_p…)`, one adjoint per parameter in `wrt` (each of its parameter's
/// type). With `grad` the result must be a float scalar and the cotangent is 1.
pub fn vjp_program(primal: &Program, grad: bool, wrt: &[VarId]) -> syn::Result<Program> {
    let mut lifted = primal.clone();
    super::lift::lift_reductions(&mut lifted.body, &mut lifted.vars);
    let primal = &lifted;
    let result_ty = primal.body.ty.clone();
    let span = primal.body.span;
    let mut vjp = Vjp {
        vars: primal.vars.clone(),
        frames: vec![Frame::root()],
        contributions: HashMap::new(),
        depth: HashMap::new(),
        lets: Default::default(),
        inactive: primal.params.iter().copied().filter(|param| !wrt.contains(param)).collect(),
    };
    let mut params = primal.params.clone();
    for &param in &primal.params {
        vjp.depth.insert(param, 0);
    }
    let (root_steps, result) = linearize(&primal.body);
    for step in &root_steps {
        if let Step::Let(var, value) = step {
            vjp.depth.insert(*var, 0);
            vjp.lets.insert(*var, value.clone());
        }
    }
    let value = vjp.fresh_let("__ein_value", &result_ty, span);
    let value_expr = var(value, &result_ty, span);
    let cotangent = if grad {
        float_like(1.0, &value_expr)
    } else {
        let taken: Vec<&str> = primal.params.iter().map(|param| primal.var(*param).name.as_str()).collect();
        let mut name = "cotangent".to_string();
        while taken.contains(&name.as_str()) {
            name.push('_');
        }
        let info = VarInfo { name: name.clone(), ty: result_ty.clone(), kind: VarKind::Param, span };
        let cotangent = declare(&mut vjp.vars, info);
        params.push(cotangent);
        let cotangent = var(cotangent, &result_ty, span);
        let mut checks = Vec::new();
        super::jvp::same_shape_checks(&value_expr, &cotangent, "the result", &name, &mut checks);
        if !checks.is_empty() {
            vjp.steps().push(Step::Assert(checks));
        }
        cotangent
    };
    let result_copy = vjp.fresh_clone(&result);
    vjp.backprop(&result_copy, cotangent)?;
    for step in root_steps.iter().rev() {
        if let Step::Let(var, value) = step {
            let ty = value.ty.clone();
            if let Some(adjoint) = vjp.materialize(*var, &ty, value.span)? {
                let value = vjp.fresh_clone(value);
                vjp.backprop(&value, adjoint)?;
            }
        }
    }
    let mut outputs = vec![value_expr.clone()];
    for &param in wrt {
        let info = vjp.vars[param.0 as usize].clone();
        let adjoint = match vjp.materialize(param, &info.ty, info.span)? {
            Some(adjoint) => adjoint,
            None => vjp.zeros(&info.ty, &var(param, &info.ty, info.span)),
        };
        outputs.push(adjoint);
    }
    let output_ty = Type::tuple(outputs.iter().map(|output| output.ty.clone()).collect());
    let root = vjp.frames.pop().map(|frame| frame.steps).unwrap_or_default();
    let mut backward = wrap(root, tuple(outputs, output_ty.clone()));
    inline_views(&mut backward);
    rename_binders(&mut backward, &mut vjp.vars);
    let kind = ExprKind::Let(node::Let { var: value, value: Box::new(result), body: Box::new(backward) });
    let body = wrap(root_steps, Expr::new(kind, output_ty, span));
    let mut program = Program {
        params,
        vars: vjp.vars,
        type_params: primal.type_params.clone(),
        rust_calls: primal.rust_calls.clone(),
        body,
    };
    prove_reads(&mut program);
    Ok(program)
}

/// The `let`s and checks at the top of `expr`, and what follows them.
fn linearize(expr: &Expr) -> (Block, Expr) {
    let mut steps = Block::new();
    let mut at = expr;
    loop {
        match &at.kind {
            ExprKind::Let(node::Let { var, value, body }) => {
                // `let p = { let s = …; e }` is `let s = …; let p = e` (binders are unique):
                // so a value lifted out of `p` is computed once, not recomputed with `p`.
                let (inner, value) = linearize(value);
                steps.extend(inner);
                steps.push(Step::Let(*var, value));
                at = body;
            }
            ExprKind::Assert(node::Assert { checks, body }) => {
                steps.push(Step::Assert(checks.clone()));
                at = body;
            }
            _ => {
                // `{ let s = …; e } / n`: `let s = …; e / n`, so the backward sweep reads the
                // lifted value the result was computed from instead of computing it again.
                let mut floated = Vec::new();
                let rest = float_operand_lets(at.clone(), true, &mut floated);
                if floated.is_empty() {
                    return (steps, rest);
                }
                for (var, value) in floated {
                    let (inner, value) = linearize(&value);
                    steps.extend(inner);
                    steps.push(Step::Let(var, value));
                }
                let (more, result) = linearize(&rest);
                steps.extend(more);
                return (steps, result);
            }
        }
    }
}

/// `expr` with the `let`s at the head of its operands (through arithmetic, negations and casts)
/// moved into `floated`, in evaluation order: those of the operand evaluated first (`first`),
/// and any whose value cannot fail (computing it earlier adds no error, and it was computed
/// anyway: the operands of arithmetic are all evaluated).
fn float_operand_lets(mut expr: Expr, first: bool, floated: &mut Vec<(VarId, Expr)>) -> Expr {
    loop {
        match expr.kind {
            ExprKind::Let(node::Let { var, value, body }) if first || !crate::passes::purity::may_fail(&value) => {
                floated.push((var, *value));
                expr = *body;
            }
            ExprKind::Binary(node::Binary { op, lhs, rhs }) => {
                let lhs = float_operand_lets(*lhs, first, floated);
                let rhs = float_operand_lets(*rhs, false, floated);
                let kind = ExprKind::Binary(node::Binary { op, lhs: Box::new(lhs), rhs: Box::new(rhs) });
                return Expr { kind, ..expr };
            }
            ExprKind::Unary(node::Unary { op, operand }) => {
                let operand = float_operand_lets(*operand, first, floated);
                return Expr { kind: ExprKind::Unary(node::Unary { op, operand: Box::new(operand) }), ..expr };
            }
            ExprKind::Cast(node::Cast { operand, to, saturating }) => {
                let operand = Box::new(float_operand_lets(*operand, first, floated));
                return Expr { kind: ExprKind::Cast(node::Cast { operand, to, saturating }), ..expr };
            }
            kind => return Expr { kind, ..expr },
        }
    }
}

/// A loop (or branch) of the primal around a contribution.
#[derive(Clone)]
struct Frame {
    /// The loop's index and range; none for a branch of an `if`.
    looped: Option<(VarId, Expr)>,
    /// What recomputes, inside the loop, the primal values the contributions need, and the
    /// adjoints made there.
    steps: Block,
    /// Contributions count only where this holds.
    mask: Option<Expr>,
    /// The primal values recomputed in `steps`, by alpha key: asked for again, reused.
    computed: HashMap<String, Expr>,
}

impl Frame {
    fn root() -> Frame {
        Frame { looped: None, steps: Block::new(), mask: None, computed: HashMap::new() }
    }
}

/// `x̄ += value` (at `positions`, for an element of an array; at `path`, for a part of a tuple),
/// inside `frames`: those between the variable's binding and the contribution, outermost first.
#[derive(Clone)]
struct Contribution {
    frames: Vec<Frame>,
    positions: Vec<Expr>,
    path: Vec<usize>,
    value: Expr,
    /// When every position is the index of a distinct loop of `frames` that runs over the
    /// whole axis it reads, at most one of them shifted (a clamped `i + c`): those indices
    /// with their shifts, one per axis. Then the adjoint is a comprehension over the array's
    /// positions `p` summing over the other loops, the shifted index at `p - c` where that is
    /// in range (the transpose of a plain read, with no contention), not an accumulation;
    /// the few steps a shifted read clamps are added by a short accumulation of their own.
    transposed: Option<Vec<(VarId, i64)>>,
}

/// A position an array is read or used at, and whether it is a loop index over the whole
/// axis; `shifted` when it is such an index `i` plus a literal `c`, read clamped: `(i, c)`.
#[derive(Clone)]
struct Position {
    at: Expr,
    whole_axis: bool,
    shifted: Option<(VarId, i64)>,
}

/// What an accum update's cotangent is multiplied by, besides the target's cotangent at its
/// element (see [`Vjp::accum`]).
enum Factors {
    /// Nothing: every update is `+=`.
    One,
    /// Every update is `*=`: the zero counts and nonzero products per element
    /// ([`factor_accums`]), for [`product_of_others`].
    Products { zeros: Expr, nonzero: Expr },
    /// Mixed: the elements each update found, and the products of the multipliers after it
    /// (histories, indexed by the update loops' indices and the update's number).
    Mixed { before: Expr, after: Expr },
}

struct Vjp {
    vars: Vec<VarInfo>,
    /// The frames around the walk, the root first (the program's top level).
    frames: Vec<Frame>,
    contributions: HashMap<VarId, Vec<Contribution>>,
    /// The frame each variable is bound in (its position in `frames`).
    depth: HashMap<VarId, usize>,
    /// The value of every `let` the sweep has placed, to see sizes through them.
    lets: crate::check::sizes::LetValues,
    /// The parameters whose adjoints nobody asked for (not in `wrt`): nothing contributes to
    /// them, and what only they would need is not computed.
    inactive: HashSet<VarId>,
}

fn unsupported(span: Span, what: &str) -> syn::Error {
    syn::Error::new(span, format!("reverse-mode differentiation does not handle {what} yet"))
}

impl Vjp {
    fn steps(&mut self) -> &mut Block {
        &mut self.frames.last_mut().expect("the root frame").steps
    }

    /// Whether walking `expr` can contribute to anything: it has a float value and reads a
    /// float variable that is not an inactive parameter.
    fn needs(&self, expr: &Expr) -> bool {
        has_float(&expr.ty)
            && free_vars(expr).iter().any(|var| {
                !self.inactive.contains(var) && self.vars.get(var.0 as usize).is_some_and(|info| has_float(&info.ty))
            })
    }

    fn fresh_let(&mut self, name: &str, ty: &Type, span: Span) -> VarId {
        let name = format!("{name}{}", self.vars.len());
        declare(&mut self.vars, VarInfo { name, ty: ty.clone(), kind: VarKind::Let, span })
    }

    /// A copy of `expr` with its own binders.
    fn fresh_clone(&mut self, expr: &Expr) -> Expr {
        let mut copy = expr.clone();
        rename_binders(&mut copy, &mut self.vars);
        copy
    }

    /// `expr` bound to a `let` of the current frame, unless a variable or a literal.
    fn atom(&mut self, expr: Expr) -> Expr {
        if matches!(expr.kind, ExprKind::Var(_) | ExprKind::Literal(_)) {
            return expr;
        }
        self.bind(expr)
    }

    fn bind(&mut self, expr: Expr) -> Expr {
        let (ty, span) = (expr.ty.clone(), expr.span);
        let fresh = self.fresh_let(crate::ir::SYNTHETIC_PREFIX, &ty, span);
        self.let_step(fresh, expr);
        var(fresh, &ty, span)
    }

    /// The primal value of `expr` (a fresh copy), bound in the current frame.
    /// Computed once per frame: a value already recomputed here or in an enclosing frame is
    /// reused (the rules ask for the same operand more than once, `1 + exp(-s)` and `-s`).
    fn primal(&mut self, expr: &Expr) -> Expr {
        if matches!(expr.kind, ExprKind::Var(_) | ExprKind::Literal(_)) {
            return expr.clone();
        }
        // The key names the type too: an alpha key does not (`0` of two integer types).
        let key = format!("{:?} {}", expr.ty, alpha_key(expr));
        if let Some(known) = self.frames.iter().rev().find_map(|frame| frame.computed.get(&key)) {
            return known.clone();
        }
        // Part by part, so that a part two values share is computed once; a read whole, with
        // its positions computed (a read of a row, then of its element, would hide the
        // element's read from the contraction pass).
        // An accum's updates are a nest, not a value: the accum is copied whole.
        let copy = if expr.binders().next().is_some() || matches!(expr.kind, ExprKind::Assert(_) | ExprKind::Accum(_)) {
            self.fresh_clone(expr)
        } else if let ExprKind::Index(_) = expr.kind {
            let (base, reads) = expr.read_chain();
            let base = self.primal(base);
            let positions: Vec<(Expr, Bounds)> =
                reads.into_iter().map(|(position, bounds)| (self.primal(position), bounds)).collect();
            Expr::read_of(base, positions)
        } else {
            let mut children = Vec::new();
            expr.for_each_child(|child| children.push(child.clone()));
            let children: Vec<Expr> = children.iter().map(|child| self.primal(child)).collect();
            let mut copy = expr.clone();
            let mut children = children.into_iter();
            copy.for_each_child_mut(|child| *child = children.next().unwrap_or_else(|| child.clone()));
            copy
        };
        let atom = self.atom(copy);
        self.frames.last_mut().expect("the root frame").computed.insert(key, atom.clone());
        atom
    }

    fn open(&mut self, looped: Option<(VarId, Expr)>, mask: Option<Expr>) {
        self.frames.push(Frame { looped, steps: Block::new(), mask, computed: HashMap::new() });
    }

    fn close(&mut self) {
        self.frames.pop();
    }

    /// Walks `expr` (a copy of the primal's that nothing else binds) with `cotangent` (an atom
    /// of its type), recording contributions.
    fn backprop(&mut self, expr: &Expr, cotangent: Expr) -> syn::Result<()> {
        if !self.needs(expr) {
            return Ok(());
        }
        let span = expr.span;
        match &expr.kind {
            ExprKind::Literal(_) | ExprKind::Len(_) => Ok(()),
            ExprKind::Var(var) => self.contribute(*var, Vec::new(), cotangent, &expr.ty),
            ExprKind::Let(node::Let { var, value, body }) => {
                self.let_step(*var, (**value).clone());
                self.backprop(body, cotangent)?;
                let ty = value.ty.clone();
                if let Some(adjoint) = self.materialize(*var, &ty, span)? {
                    let value = self.fresh_clone(value);
                    self.backprop(&value, adjoint)?;
                }
                Ok(())
            }
            ExprKind::Assert(node::Assert { checks, body }) => {
                self.steps().push(Step::Assert(checks.clone()));
                self.backprop(body, cotangent)
            }
            ExprKind::Tuple(items) => {
                let cotangent = self.atom(cotangent);
                for (field, item) in items.iter().enumerate() {
                    let part = self.atom(project(cotangent.clone(), field));
                    self.backprop(item, part)?;
                }
                Ok(())
            }
            ExprKind::Project(_) => {
                let mut path = Vec::new();
                let mut base = expr;
                while let ExprKind::Project(node::Project { tuple, field }) = &base.kind {
                    path.push(*field);
                    base = tuple;
                }
                path.reverse();
                match &base.kind {
                    ExprKind::Var(var) => self.contribute(*var, path, cotangent, &expr.ty),
                    _ => {
                        let whole = self.tuple_cotangent(&base.ty, &path, cotangent, span)?;
                        self.backprop(base, whole)
                    }
                }
            }
            ExprKind::Index(_) => self.read(expr, cotangent),
            ExprKind::Select(node::Select { cond, then, otherwise }) => {
                let cond = self.primal(cond);
                let not = Expr::new(
                    ExprKind::Unary(node::Unary { op: UnaryOp::Not, operand: Box::new(cond.clone()) }),
                    Type::BOOL,
                    span,
                );
                self.open(None, Some(cond));
                self.backprop(then, cotangent.clone())?;
                self.close();
                self.open(None, None);
                let not = self.atom(not);
                self.frames.last_mut().expect("opened").mask = Some(not);
                self.backprop(otherwise, cotangent)?;
                self.close();
                Ok(())
            }
            ExprKind::Unary(node::Unary { op: UnaryOp::Neg, operand }) => {
                let negated = self.atom(negate(cotangent));
                self.backprop(operand, negated)
            }
            ExprKind::Unary(_) => Ok(()),
            ExprKind::Binary(node::Binary { op, lhs, rhs }) => self.binary(*op, lhs, rhs, cotangent),
            ExprKind::Cast(node::Cast { operand, .. }) if has_float(&operand.ty) => {
                let Type::Scalar(from) = operand.ty else { return Err(unsupported(span, "this cast")) };
                let back = self.atom(cast(cotangent, from));
                self.backprop(operand, back)
            }
            ExprKind::Cast(_) => Ok(()),
            ExprKind::Call(node::Call { func, args }) => self.call(*func, args, cotangent, &expr.ty),
            ExprKind::Extern(node::Extern { name, args, derivative, .. }) => {
                self.extern_call(name, args, derivative.as_ref(), cotangent, &expr.ty)
            }
            ExprKind::For(node::For { index, size, body }) => {
                self.open(Some((*index, (**size).clone())), None);
                let element = read(cotangent, var(*index, &Type::I64, span), Bounds::Clamped);
                let element = self.atom(element);
                self.backprop(body, element)?;
                self.close();
                Ok(())
            }
            ExprKind::Reduce(reduce) => self.reduce(expr, reduce, cotangent),
            ExprKind::Filter(_) => self.filter(expr, cotangent),
            ExprKind::Fold(fold) => self.fold(expr, fold, cotangent, false),
            ExprKind::Scan(scan) => {
                super::differentiable_scan(scan, span)?;
                self.fold(expr, scan, cotangent, true)
            }
            ExprKind::Accum(accum) => self.accum(accum, cotangent, span),
            ExprKind::Contract(_) => {
                Err(syn::Error::new(span, "ein internal error: differentiation runs before contractions are made"))
            }
        }
    }

    /// A fold (or scan, `scanned`) run backwards over its saved states. With `s_0 = init`,
    /// `s_{t+1} = body(s_t, t)`:
    ///
    /// 1. the states `s_1 … s_n`, saved by a scan of the same step (the scan's own value, for a
    ///    scan), so `s_t` is `init` or `states[t - 1]` — only if the backward steps or step 3
    ///    read them: an affine step's adjoint (a stencil's) does not, and keeps no tape;
    /// 2. the adjoints, by a scan backwards over the steps: the adjoint of `s_{t+1}` (the
    ///    cotangent for a fold's last state, zero for a scan's; plus, for a scan, the cotangent
    ///    of its element `t`) goes through the step at `s_t` to the adjoint of `s_t`, the body
    ///    walked by a walker of its own whose contributions to anything but the state are
    ///    dropped; the last is `init`'s;
    /// 3. what the steps read from outside (parameters, enclosing `let`s), in parallel: one
    ///    loop over the steps, where the body is walked again with its step's saved state and
    ///    incoming adjoint (its contributions to the state dropped, step 2 made them). With
    ///    nothing differentiated read from outside, step 2 is a fold (only the last adjoint).
    ///
    /// The tape holds `n` states: for a state of `k` scalars, `n × k` numbers.
    fn fold(&mut self, expr: &Expr, fold: &node::Fold, cotangent: Expr, scanned: bool) -> syn::Result<()> {
        let span = expr.span;
        let ty = fold.init.ty.clone();
        let count = self.primal(&fold.count);
        let init = self.primal(&fold.init);
        // The states `s_1, …, s_n` (a scan of the step), bound below only if the backward
        // steps read them: an affine step's adjoint does not (a stencil's), and a fold then
        // keeps no tape.
        let states_var = self.fresh_let("__ein_states", &ty.stacked(), span);
        let states = var(states_var, &ty.stacked(), span);
        let cotangent = self.atom(cotangent);
        let start = if scanned { self.zeros(&ty, &init) } else { cotangent.clone() };
        let start = self.atom(start);
        let one = int(1, span);
        // `s_t`, and the adjoint flowing into step `t` (of `s_{t+1}`), from the adjoints scan.
        let state_at = |t: &Expr| {
            let before = stacked_read(states.clone(), binary(BinaryOp::Sub, t.clone(), one.clone()), &ty);
            select(binary(BinaryOp::Eq, t.clone(), int(0, span)), init.clone(), before)
        };
        let last = binary(BinaryOp::Sub, count.clone(), one.clone());
        let incoming = |t: &Expr, later: Expr| {
            if scanned {
                let element = read(cotangent.clone(), t.clone(), Bounds::Clamped);
                add_parts(later, element, &ty)
            } else {
                later
            }
        };

        // 2. The adjoints of `s_{n-1}, …, s_0`, one per backward step.
        let step = self.fresh_index(span);
        let name = format!("{}adjoint{}", crate::ir::SYNTHETIC_PREFIX, self.vars.len());
        let adjoint_acc = declare(&mut self.vars, VarInfo { name, ty: ty.clone(), kind: VarKind::Accumulator, span });
        let mut walker = Vjp {
            vars: std::mem::take(&mut self.vars),
            frames: vec![Frame::root()],
            contributions: HashMap::new(),
            depth: self.depth.keys().map(|var| (*var, 0)).collect(),
            lets: self.lets.clone(),
            inactive: self.inactive.clone(),
        };
        let (t, state, mut body) = walker.step_copy(expr)?;
        same_lengths_as(&mut body, state, &init);
        let backwards = binary(BinaryOp::Sub, last.clone(), var(step, &Type::I64, span));
        walker.let_step(t, backwards);
        let t_expr = var(t, &Type::I64, span);
        walker.let_step(state, state_at(&t_expr));
        let total = incoming(&t_expr, var(adjoint_acc, &ty, span));
        let total = walker.atom(total);
        walker.backprop(&body, total)?;
        let adjoint = match walker.materialize(state, &ty, span)? {
            Some(adjoint) => adjoint,
            None => walker.zeros(&ty, &init),
        };
        let root = walker.frames.pop().map(|frame| frame.steps).unwrap_or_default();
        self.vars = walker.vars;
        let mut backward_step = wrap(root, adjoint);
        same_lengths_as(&mut backward_step, state, &init);
        drop_unused_recomputations(&mut backward_step);
        // 3 (below) walks the step again for what it reads from outside.
        let outside = free_vars(&without_lengths(&fold.body)).into_iter().any(|free| {
            free != fold.index
                && free != fold.acc
                && !self.inactive.contains(&free)
                && has_float(&self.vars[free.0 as usize].ty)
        });
        if scanned || outside || crate::ir::visit::mentions(&backward_step, states_var) {
            let scanned_states = if scanned {
                self.primal(expr)
            } else {
                let node = node::Fold {
                    index: fold.index,
                    count: fold.count.clone(),
                    acc: fold.acc,
                    init: fold.init.clone(),
                    body: fold.body.clone(),
                };
                let scan = Expr::new(ExprKind::Scan(node), ty.stacked(), span);
                self.primal(&scan)
            };
            self.let_step(states_var, scanned_states);
        }
        let node = node::Fold {
            index: step,
            count: Box::new(count.clone()),
            acc: adjoint_acc,
            init: Box::new(start.clone()),
            body: Box::new(backward_step),
        };
        if !outside {
            // Only the last adjoint is needed: a fold, no tape of adjoints.
            let to_init = self.bind(Expr::new(ExprKind::Fold(node), ty.clone(), span));
            return self.backprop(&fold.init, to_init);
        }
        let adjoints = self.bind(Expr::new(ExprKind::Scan(node), ty.stacked(), span));
        // The last adjoint, or `start` when there are no steps: a fold of at most one step
        // (no read of an empty tape).
        let (position, kept) = (self.fresh_index(span), self.fresh_index(span));
        self.vars[kept.0 as usize].kind = VarKind::Accumulator;
        self.vars[kept.0 as usize].ty = ty.clone();
        let node = node::Fold {
            index: position,
            count: Box::new(call(Func::Min, vec![count.clone(), one.clone()])),
            acc: kept,
            init: Box::new(start.clone()),
            body: Box::new(stacked_read(adjoints.clone(), last.clone(), &ty)),
        };
        let to_init = self.bind(Expr::new(ExprKind::Fold(node), ty.clone(), span));
        self.backprop(&fold.init, to_init)?;

        // 3. What each step reads from outside.
        // The loop's range as written (`len(w, 0)`), so that it is seen to be the same for
        // every element of an enclosing loop (an accumulation needs that).
        let at = self.fresh_index(span);
        let range = self.fresh_clone(&fold.count);
        self.open(Some((at, range)), None);
        let (t, state, mut body) = self.step_copy(expr)?;
        same_lengths_as(&mut body, state, &init);
        let at_expr = var(at, &Type::I64, span);
        self.let_step(t, at_expr.clone());
        self.let_step(state, state_at(&at_expr));
        let after = binary(BinaryOp::Sub, binary(BinaryOp::Sub, count.clone(), int(2, span)), at_expr.clone());
        let later = select(binary(BinaryOp::Eq, at_expr.clone(), last), start, stacked_read(adjoints, after, &ty));
        let total = incoming(&at_expr, later);
        let total = self.atom(total);
        let result = self.backprop(&body, total);
        self.contributions.remove(&state);
        self.close();
        result
    }

    /// `accum h = init { … h[p] += v … }` is `init` plus each `v` at its `p`: `init` gets the
    /// whole cotangent, each `v` the cotangent's element at its `p` where its condition holds.
    /// With `*=`, `h[q]` is the product of `init[q]` and the `v`s at `q`: each factor gets the
    /// cotangent times the product of the others there ([`product_of_others`], from two more
    /// accums that count the zero factors and multiply the others). Mixing `+=` and `*=` on
    /// one array, `init` gets the cotangent times the product of every multiplier at its
    /// element, an added value the cotangent times the product of the multipliers after it,
    /// a multiplier that times the element it found (note [mixed accums] in `ad/mod.rs`).
    /// (`|=` and `&=` are on booleans.)
    fn accum(&mut self, accum: &node::Accum, cotangent: Expr, span: Span) -> syn::Result<()> {
        if accum.value != node::AccumValue::Final {
            return Err(syn::Error::new(span, "ein internal error: differentiating an accum's history"));
        }
        let cotangent = self.atom(cotangent);
        let (added, multiplied) = (accum.ops.contains(&UpdateOp::Add), accum.ops.contains(&UpdateOp::Mul));
        let mut indices = Vec::new();
        if !multiplied {
            self.backprop(&accum.init, cotangent.clone())?;
            let updates = self.fresh_clone(&accum.updates);
            return self.accum_updates(&updates, &cotangent, &accum.ops, &Factors::One, &mut indices);
        }
        let init = self.primal(&accum.init);
        let (to_init, factors) = if added {
            let before = accum_history(accum, &init, node::AccumValue::Before, &mut self.vars)?;
            let multipliers = multipliers_accum(accum, &init, &mut self.vars);
            let ones = &multipliers.init;
            let after = accum_history(&multipliers, ones, node::AccumValue::BeforeReversed, &mut self.vars)?;
            let total = Expr::new(ExprKind::Accum(multipliers), init.ty.clone(), span);
            let (before, after, total) = (self.bind(before), self.bind(after), self.bind(total));
            let to_init = map_elements(&init, &mut self.vars, |at| {
                binary(BinaryOp::Mul, read_at(&cotangent, at), read_at(&total, at))
            });
            (to_init, Factors::Mixed { before, after })
        } else {
            let (zeros, nonzero) = factor_accums(accum, &init, &mut self.vars);
            let (zeros, nonzero) = (self.bind(zeros), self.bind(nonzero));
            let to_init = map_elements(&init, &mut self.vars, |at| {
                let others = product_of_others(read_at(&init, at), read_at(&zeros, at), read_at(&nonzero, at));
                binary(BinaryOp::Mul, read_at(&cotangent, at), others)
            });
            (to_init, Factors::Products { zeros, nonzero })
        };
        let to_init = self.bind(to_init);
        self.backprop(&accum.init, to_init)?;
        let updates = self.fresh_clone(&accum.updates);
        self.accum_updates(&updates, &cotangent, &accum.ops, &factors, &mut indices)
    }

    /// The loops, `let`s and checks of an accum's updates as frames and steps, then each
    /// update's value walked with its element of `cotangent` times its `factors` (see
    /// [`Vjp::accum`]); `indices`: the loop indices around `nest`.
    fn accum_updates(
        &mut self,
        nest: &Expr,
        cotangent: &Expr,
        ops: &[UpdateOp],
        factors: &Factors,
        indices: &mut Vec<Expr>,
    ) -> syn::Result<()> {
        match &nest.kind {
            ExprKind::For(node::For { index, size, body }) => {
                self.open(Some((*index, (**size).clone())), None);
                indices.push(var(*index, &Type::I64, nest.span));
                let result = self.accum_updates(body, cotangent, ops, factors, indices);
                indices.pop();
                self.close();
                result
            }
            ExprKind::Let(node::Let { var, value, body }) => {
                self.let_step(*var, (**value).clone());
                self.accum_updates(body, cotangent, ops, factors, indices)?;
                let ty = value.ty.clone();
                if let Some(adjoint) = self.materialize(*var, &ty, value.span)? {
                    let value = self.fresh_clone(value);
                    self.backprop(&value, adjoint)?;
                }
                Ok(())
            }
            ExprKind::Assert(node::Assert { checks, body }) => {
                self.steps().push(Step::Assert(checks.clone()));
                self.accum_updates(body, cotangent, ops, factors, indices)
            }
            ExprKind::Tuple(items) => {
                let width = items.len() / ops.len().max(1);
                for (update, (group, op)) in items.chunks(width.max(1)).zip(ops).enumerate() {
                    let (Some((cond, rest)), UpdateOp::Add | UpdateOp::Mul) = (group.split_first(), op) else {
                        continue;
                    };
                    let Some((value, positions)) = rest.split_last() else { continue };
                    if !self.needs(value) {
                        continue;
                    }
                    let cond = self.primal(cond);
                    let positions: Vec<(Expr, Bounds)> =
                        positions.iter().map(|position| (self.primal(position), Bounds::Clamped)).collect();
                    let mut element = Expr::read_of(cotangent.clone(), positions.clone());
                    match factors {
                        Factors::One => {}
                        Factors::Products { zeros, nonzero } => {
                            let factor = self.primal(value);
                            let at = |array: &Expr| Expr::read_of(array.clone(), positions.clone());
                            let others = product_of_others(factor, at(zeros), at(nonzero));
                            element = binary(BinaryOp::Mul, element, others);
                        }
                        Factors::Mixed { before, after } => {
                            let mut this_update = indices.clone();
                            this_update.push(int(update as i64, nest.span));
                            element = binary(BinaryOp::Mul, element, read_at(after, &this_update));
                            if *op == UpdateOp::Mul {
                                element = binary(BinaryOp::Mul, element, read_at(before, &this_update));
                            }
                        }
                    }
                    // The element only where the update happens: an update whose condition
                    // fails may name a position outside the (possibly empty) array.
                    self.open(None, Some(cond.clone()));
                    let element = self.read_where(cond, element, &value.ty);
                    let result = self.backprop(value, element);
                    self.close();
                    result?;
                }
                Ok(())
            }
            _ => Err(syn::Error::new(nest.span, "ein internal error: an accum's updates end in no tuple")),
        }
    }

    /// `for i where c { e }`: element `m` of the result is the `e` of the `m`-th index kept, so
    /// a kept `e` gets the cotangent's element at its rank among the kept (an inclusive count
    /// of the kept, by a scan, minus one).
    fn filter(&mut self, expr: &Expr, cotangent: Expr) -> syn::Result<()> {
        let span = expr.span;
        let cotangent = self.atom(cotangent);
        let parts = |this: &mut Self| -> syn::Result<(VarId, Expr, Expr)> {
            let copy = this.fresh_clone(expr);
            let ExprKind::Filter(node::For { index, size, body }) = copy.kind else {
                return Err(syn::Error::new(span, "ein internal error: a filter's copy is not a filter"));
            };
            Ok((index, *size, *body))
        };
        // The ranks: how many indices up to each are kept.
        let (index, size, body) = parts(self)?;
        self.vars[index.0 as usize].kind = VarKind::Let;
        let step = self.fresh_index(span);
        let name = format!("{}kept{}", crate::ir::SYNTHETIC_PREFIX, self.vars.len());
        let count = declare(&mut self.vars, VarInfo { name, ty: Type::I64, kind: VarKind::Accumulator, span });
        let name = format!("{}pair{}", crate::ir::SYNTHETIC_PREFIX, self.vars.len());
        let pair = declare(&mut self.vars, VarInfo { name, ty: body.ty.clone(), kind: VarKind::Let, span });
        let kept = select(project(var(pair, &body.ty, span), 0), int(1, span), int(0, span));
        let step_body = wrap(
            vec![Step::Let(index, var(step, &Type::I64, span)), Step::Let(pair, body)],
            binary(BinaryOp::Add, var(count, &Type::I64, span), kept),
        );
        let node = node::Fold {
            index: step,
            count: Box::new(size),
            acc: count,
            init: Box::new(int(0, span)),
            body: Box::new(step_body),
        };
        let ranks = self.bind(Expr::new(ExprKind::Scan(node), Type::array(Type::I64, 1), span));

        // Each kept element's cotangent, read only where it is kept (the cotangent may be empty).
        let (index, size, body) = parts(self)?;
        self.open(Some((index, size)), None);
        let pair = self.primal(&body);
        let cond = self.atom(project(pair, 0));
        let rank = binary(BinaryOp::Sub, read(ranks, var(index, &Type::I64, span), Bounds::Clamped), int(1, span));
        let element_ty = match &body.ty {
            Type::Tuple { fields, .. } if fields.len() == 2 => fields[1].clone(),
            _ => return Err(syn::Error::new(span, "ein internal error: a filter's body is not a pair")),
        };
        let element = self.read_where(cond.clone(), read(cotangent, rank, Bounds::Clamped), &element_ty);
        let no = Expr::new(ExprKind::Literal(Literal::Bool(false)), Type::BOOL, span);
        let pair_cotangent = self.atom(tuple(vec![no, element], body.ty.clone()));
        self.open(None, Some(cond));
        let result = self.backprop(&body, pair_cotangent);
        self.close();
        self.close();
        result
    }

    /// A copy of a fold's step: its index and accumulator as `let`s to bind, and its body.
    fn step_copy(&mut self, expr: &Expr) -> syn::Result<(VarId, VarId, Expr)> {
        let copy = self.fresh_clone(expr);
        let (ExprKind::Fold(node::Fold { index, acc, body, .. }) | ExprKind::Scan(node::Fold { index, acc, body, .. })) =
            copy.kind
        else {
            return Err(syn::Error::new(expr.span, "ein internal error: a fold's copy is not a fold"));
        };
        for bound in [index, acc] {
            self.vars[bound.0 as usize].kind = VarKind::Let;
        }
        Ok((index, acc, *body))
    }

    /// `read` (a scalar of type `ty`) evaluated only where `cond` holds, else 0: a sum over
    /// `0..(cond ? 1 : 0)`, since both sides of a select are evaluated and the read may be of
    /// an empty array where `cond` fails.
    fn read_where(&mut self, cond: Expr, read: Expr, ty: &Type) -> Expr {
        let span = read.span;
        if let Type::Tuple { .. } = ty {
            // Part by part: a sum is of numbers.
            let parts: Vec<Expr> = parts(read, ty)
                .into_iter()
                .map(|part| match part.ty.clone() {
                    part_ty if has_float(&part_ty) => self.read_where(cond.clone(), part, &part_ty),
                    Type::Scalar(scalar) => zero_scalar(scalar, span),
                    _ => part,
                })
                .collect();
            return self.atom(rebuild(ty, &mut parts.into_iter()));
        }
        let value = only_where(cond, read, &mut self.vars);
        self.atom(value)
    }

    /// `let var = value` in the current frame.
    fn let_step(&mut self, var: VarId, value: Expr) {
        self.depth.insert(var, self.frames.len() - 1);
        self.lets.insert(var, value.clone());
        self.steps().push(Step::Let(var, value));
    }

    /// The cotangent of a whole tuple of type `ty` whose part at `path` has cotangent
    /// `cotangent`: zero elsewhere.
    fn tuple_cotangent(&mut self, ty: &Type, path: &[usize], cotangent: Expr, span: Span) -> syn::Result<Expr> {
        let Some((&field, rest)) = path.split_first() else { return Ok(cotangent) };
        let Type::Tuple { fields, .. } = ty else { return Err(unsupported(span, "this projection")) };
        let mut items = Vec::new();
        for (position, field_ty) in fields.iter().enumerate() {
            if position == field {
                items.push(self.tuple_cotangent(field_ty, rest, cotangent.clone(), span)?);
            } else {
                let Type::Scalar(scalar) = field_ty else {
                    return Err(unsupported(span, "a part of a computed tuple of arrays"));
                };
                items.push(zero_scalar(*scalar, span));
            }
        }
        Ok(self.atom(tuple(items, ty.clone())))
    }

    /// `cotangent` for the variable `var`'s part at `path` (of type `ty`): an element
    /// contribution per scalar, through arrays by opening a loop per axis.
    fn contribute(&mut self, var: VarId, path: Vec<usize>, cotangent: Expr, ty: &Type) -> syn::Result<()> {
        self.contribute_at(var, path, Vec::new(), cotangent, ty)
    }

    fn contribute_at(
        &mut self,
        target: VarId,
        path: Vec<usize>,
        positions: Vec<Position>,
        cotangent: Expr,
        ty: &Type,
    ) -> syn::Result<()> {
        let span = cotangent.span;
        match ty {
            Type::Scalar(_) if !has_float(ty) => Ok(()),
            Type::Scalar(_) => {
                let depth = *self.depth.get(&target).ok_or_else(|| {
                    syn::Error::new(span, "ein internal error: a variable of unknown binding in reverse mode")
                })?;
                let frames = self.frames[depth + 1..].to_vec();
                let transposed = transposed_indices(&frames, &positions);
                let positions = positions.into_iter().map(|position| position.at).collect();
                let contribution = Contribution { frames, positions, path, value: cotangent, transposed };
                self.contributions.entry(target).or_default().push(contribution);
                Ok(())
            }
            Type::Tuple { fields, .. } => {
                let cotangent = self.atom(cotangent);
                for (field, field_ty) in fields.iter().enumerate() {
                    let mut path = path.clone();
                    path.push(field);
                    let part = project(cotangent.clone(), field);
                    self.contribute_at(target, path, positions.clone(), part, field_ty)?;
                }
                Ok(())
            }
            Type::Array { elem, rank } => {
                // One loop per axis, over the array's whole length. (An array of tuples is its
                // columns: the element's fields extend `path`, see [`leaf_paths`].)
                let whole = self.target_part(target, &path, span);
                let mut indices = Vec::new();
                for axis in 0..*rank {
                    let index = self.fresh_index(span);
                    let size = crate::ir::shape::simplify_lengths(len(whole.clone(), positions.len() + axis));
                    self.open(Some((index, size)), None);
                    indices.push(var(index, &Type::I64, span));
                }
                let element = Expr::read_of(cotangent, indices.iter().map(|index| (index.clone(), Bounds::Clamped)));
                let element = self.atom(element);
                let whole = indices.into_iter().map(|at| Position { at, whole_axis: true, shifted: None });
                let positions = positions.into_iter().chain(whole).collect();
                let result = self.contribute_at(target, path, positions, element, elem);
                for _ in 0..*rank {
                    self.close();
                }
                result
            }
        }
    }

    /// Whether `position`, read with bounds proven, is a loop index whose range is the whole
    /// axis: a proven read `a[i]` has `i`'s range equal to the axis unless the range is
    /// shortened, `0..n - d`, or an enclosing index's, `0..i + c` (see
    /// `check::sizes::prove_bounds`).
    fn runs_whole_axis(&self, position: &Expr) -> bool {
        let ExprKind::Var(index) = position.kind else { return false };
        let Some((_, size)) = self.frames.iter().find_map(|frame| frame.looped.as_ref().filter(|(i, _)| *i == index))
        else {
            return false;
        };
        let range = crate::check::sizes::canonical(size, &self.lets);
        let shortened = matches!(
            &range.kind,
            ExprKind::Binary(node::Binary { op: BinaryOp::Sub, rhs, .. }) if matches!(rhs.kind, ExprKind::Literal(_))
        );
        let triangular = free_vars(&range).iter().any(|var| self.vars[var.0 as usize].kind == VarKind::Index);
        !shortened && !triangular
    }

    fn fresh_index(&mut self, span: Span) -> VarId {
        fresh_index(&mut self.vars, span)
    }

    /// The part at `path` of variable `target`.
    fn target_part(&mut self, target: VarId, path: &[usize], span: Span) -> Expr {
        let ty = self.vars[target.0 as usize].ty.clone();
        self.part_at(var(target, &ty, span), path)
    }

    /// The part at `path` of `whole`: through tuples by projection, through an array of tuples
    /// by the comprehension of its column (`for p… { whole[p…].k }`; the IR projects tuples
    /// only).
    fn part_at(&mut self, whole: Expr, path: &[usize]) -> Expr {
        let Some((&field, rest)) = path.split_first() else { return whole };
        let part = match &whole.ty {
            Type::Array { .. } => map_elements(&whole, &mut self.vars, |at| project(read_at(&whole, at), field)),
            _ => project(whole, field),
        };
        self.part_at(part, rest)
    }

    /// A read `a[p…]` (a scalar, or a sub-array) with `cotangent`: contributions to `a` at
    /// the positions read, each clamped into range as the read clamps it.
    fn read(&mut self, expr: &Expr, cotangent: Expr) -> syn::Result<()> {
        let (base, reads) = expr.read_chain();
        let ExprKind::Var(target) = base.kind else {
            // A read of a computed array: as if the array were bound first, `let t = array; t[…]`.
            let fresh = self.fresh_let(crate::ir::SYNTHETIC_PREFIX, &base.ty, base.span);
            let positions = reads.into_iter().map(|(position, bounds)| (position.clone(), bounds));
            let read = Expr::read_of(var(fresh, &base.ty, base.span), positions);
            let kind = ExprKind::Let(node::Let { var: fresh, value: Box::new(base.clone()), body: Box::new(read) });
            return self.backprop(&Expr::new(kind, expr.ty.clone(), expr.span), cotangent);
        };
        let mut positions = Vec::new();
        for (axis, (position, bounds)) in reads.into_iter().enumerate() {
            let shifted = match bounds {
                Bounds::Proven => None,
                Bounds::Clamped => self.shifted_over_axis(position, base, axis),
            };
            let whole_axis = bounds == Bounds::Proven && self.runs_whole_axis(position);
            let position = self.primal(position);
            let Type::Scalar(index_ty) = position.ty.clone() else {
                return Err(syn::Error::new(expr.span, "ein internal error: an index that is not a number"));
            };
            let span = expr.span;
            // Clamped as the read clamps, in the index's own type (a huge unsigned index reads
            // the last element), then as the `i64` an accum's position is.
            let position = match bounds {
                Bounds::Proven => position,
                Bounds::Clamped => {
                    let last = cast(binary(BinaryOp::Sub, len(base.clone(), axis), int(1, span)), index_ty);
                    let below = call(Func::Min, vec![position, last]);
                    let zero = cast(int(0, span), index_ty);
                    self.atom(call(Func::Max, vec![below, zero]))
                }
            };
            let position =
                if position.ty == Type::I64 { position } else { self.atom(cast(position, crate::ir::ScalarType::I64)) };
            positions.push(Position { at: position, whole_axis, shifted });
        }
        self.contribute_at(target, Vec::new(), positions, cotangent, &expr.ty)
    }

    /// `(i, c)` when `position` is `i + c` or `i - c` (`c` a literal, any order) for the index
    /// `i` of a loop of the walk over the whole axis `axis` of `array` (its range that axis's
    /// length): a clamped read whose transpose is a shifted gather ([`Contribution::transposed`]).
    fn shifted_over_axis(&self, position: &Expr, array: &Expr, axis: usize) -> Option<(VarId, i64)> {
        let (index, shift) = crate::ir::shape::var_plus_literal(position)?;
        if position.ty != Type::I64 {
            return None;
        }
        let (_, size) = self.frames.iter().find_map(|frame| frame.looped.as_ref().filter(|(i, _)| *i == index))?;
        let range = crate::check::sizes::canonical(size, &self.lets);
        let length = crate::check::sizes::canonical(&len(array.clone(), axis), &self.lets);
        (alpha_key(&range) == alpha_key(&length)).then_some((index, shift))
    }

    fn binary(&mut self, op: BinaryOp, lhs: &Expr, rhs: &Expr, cotangent: Expr) -> syn::Result<()> {
        match op {
            BinaryOp::Add => {
                self.backprop(lhs, cotangent.clone())?;
                self.backprop(rhs, cotangent)
            }
            BinaryOp::Sub => {
                self.backprop(lhs, cotangent.clone())?;
                let negated = self.atom(negate(cotangent));
                self.backprop(rhs, negated)
            }
            // Each side's primal value only where the other side needs it.
            BinaryOp::Mul => {
                if self.needs(lhs) {
                    let b = self.primal(rhs);
                    let to_lhs = self.atom(binary(BinaryOp::Mul, cotangent.clone(), b));
                    self.backprop(lhs, to_lhs)?;
                }
                if self.needs(rhs) {
                    let a = self.primal(lhs);
                    let to_rhs = self.atom(binary(BinaryOp::Mul, a, cotangent));
                    self.backprop(rhs, to_rhs)?;
                }
                Ok(())
            }
            // a / b: ā += c / b, b̄ -= c (a / b) / b.
            BinaryOp::Div => {
                let b = self.primal(rhs);
                if self.needs(lhs) {
                    let to_lhs = self.atom(binary(BinaryOp::Div, cotangent.clone(), b.clone()));
                    self.backprop(lhs, to_lhs)?;
                }
                if self.needs(rhs) {
                    let quotient = binary(BinaryOp::Div, self.primal(lhs), b.clone());
                    let to_rhs = negate(binary(BinaryOp::Div, binary(BinaryOp::Mul, cotangent, quotient), b));
                    let to_rhs = self.atom(to_rhs);
                    self.backprop(rhs, to_rhs)?;
                }
                Ok(())
            }
            // a % b = a - b trunc(a / b).
            BinaryOp::Rem => {
                self.backprop(lhs, cotangent.clone())?;
                if self.needs(rhs) {
                    let (a, b) = (self.primal(lhs), self.primal(rhs));
                    let truncated = call(Func::Trunc, vec![binary(BinaryOp::Div, a, b)]);
                    let to_rhs = self.atom(negate(binary(BinaryOp::Mul, cotangent, truncated)));
                    self.backprop(rhs, to_rhs)?;
                }
                Ok(())
            }
            // Comparisons and logic have no float result.
            _ => Ok(()),
        }
    }

    /// A scalar function: each float argument's contribution is the function's tangent with
    /// the cotangent as that argument's tangent (linear in it), from `derivatives`.
    fn call(&mut self, func: Func, args: &[Expr], cotangent: Expr, ty: &Type) -> syn::Result<()> {
        let atoms: Vec<Expr> = args
            .iter()
            .map(|arg| {
                let copy = self.fresh_clone(arg);
                self.bind(copy)
            })
            .collect();
        for (position, arg) in args.iter().enumerate() {
            if !has_float(&arg.ty) {
                continue;
            }
            let ExprKind::Var(id) = atoms[position].kind else { continue };
            let mut jvp = Jvp::with_vars(std::mem::take(&mut self.vars), [(id, cotangent.clone())]);
            let mut steps = std::mem::take(self.steps());
            let dual: syn::Result<Dual> = derivatives::call(&mut jvp, func, &atoms, ty, &mut steps);
            *self.steps() = steps;
            self.vars = jvp.into_vars();
            if let Some(tangent) = dual?.tangent {
                let tangent = self.atom(tangent);
                self.backprop(arg, tangent)?;
            }
        }
        Ok(())
    }

    fn extern_call(
        &mut self,
        name: &proc_macro2::Ident,
        args: &[Expr],
        derivative: Option<&proc_macro2::Ident>,
        cotangent: Expr,
        ty: &Type,
    ) -> syn::Result<()> {
        if !args.iter().any(|arg| has_float(&arg.ty)) {
            return Ok(());
        }
        let Some(derivative) = derivative else {
            return Err(syn::Error::new(
                name.span(),
                format!(
                    "reverse mode cannot differentiate through `extern fn {name}`: declare its derivative, \
                     `extern fn {name}(..) -> T with d = {name}_d;`"
                ),
            ));
        };
        let atoms: Vec<Expr> = args.iter().map(|arg| self.primal(arg)).collect();
        let floats: Vec<usize> = (0..args.len()).filter(|&k| has_float(&args[k].ty)).collect();
        for (slot, &position) in floats.iter().enumerate() {
            // The derivative is linear in the tangents: this argument's cotangent is the
            // derivative with the result's cotangent as its tangent, zero for the others.
            let tangents = floats.iter().enumerate().map(|(other, &at)| {
                if other == slot {
                    cast_like(cotangent.clone(), &args[at].ty)
                } else {
                    zero_of(&args[at].ty, cotangent.span)
                }
            });
            let call_args = atoms.iter().cloned().chain(tangents).collect();
            let kind = ExprKind::Extern(node::Extern {
                name: derivative.clone(),
                args: call_args,
                site: None,
                derivative: None,
            });
            let back = self.atom(Expr::new(kind, ty.clone(), cotangent.span));
            self.backprop(&args[position], back)?;
        }
        Ok(())
    }

    fn reduce(&mut self, expr: &Expr, reduce: &node::Reduce, cotangent: Expr) -> syn::Result<()> {
        let node::Reduce { op, index, size, body } = reduce;
        let span = expr.span;
        match op {
            ReduceOp::Sum => {
                self.open(Some((*index, (**size).clone())), None);
                self.backprop(body, cotangent)?;
                self.close();
                Ok(())
            }
            ReduceOp::Max | ReduceOp::Min | ReduceOp::Prod if matches!(expr.ty, Type::Tuple { .. }) => {
                // Each part reduces on its own.
                let cotangent = self.atom(cotangent);
                for position in 0..part_types(&expr.ty).len() {
                    let part = parts((**body).clone(), &expr.ty).swap_remove(position);
                    let part_ty = part.ty.clone();
                    let kind = ExprKind::Reduce(node::Reduce {
                        op: *op,
                        index: *index,
                        size: size.clone(),
                        body: Box::new(part),
                    });
                    let part_reduce = self.fresh_clone(&Expr::new(kind, part_ty, span));
                    let part_cotangent = parts(cotangent.clone(), &expr.ty).swap_remove(position);
                    self.backprop(&part_reduce, part_cotangent)?;
                }
                Ok(())
            }
            // The chosen element: the first that reaches the extremum.
            ReduceOp::Max | ReduceOp::Min => {
                let extremum = self.primal(expr);
                let at = var(*index, &Type::I64, span);
                let reached = binary(BinaryOp::Eq, (**body).clone(), extremum);
                let position = select(reached, at.clone(), int(i64::MAX, span));
                let kind = ExprKind::Reduce(node::Reduce {
                    op: ReduceOp::Min,
                    index: *index,
                    size: size.clone(),
                    body: Box::new(position),
                });
                let first = self.primal(&Expr::new(kind, Type::I64, span));
                self.open(Some((*index, (**size).clone())), None);
                let chosen = self.atom(binary(BinaryOp::Eq, at, first));
                self.frames.last_mut().expect("opened").mask = Some(chosen);
                self.backprop(body, cotangent)?;
                self.close();
                Ok(())
            }
            // ∂P/∂x_k is the product of the others ([`product_of_others`]): two primal
            // reductions (the zeros, the product of the nonzero elements), then one pass.
            ReduceOp::Prod => {
                let ty = &expr.ty;
                let element = |this: &mut Self| {
                    let copy = this.fresh_clone(body);
                    let bound = this.fresh_let(crate::ir::SYNTHETIC_PREFIX, ty, span);
                    (copy, var(bound, ty, span), bound)
                };
                let (copy, value, bound) = element(self);
                let is_zero = binary(BinaryOp::Eq, value.clone(), zero_of(ty, span));
                let count = select(is_zero, int(1, span), int(0, span));
                let kind = ExprKind::Let(node::Let { var: bound, value: Box::new(copy), body: Box::new(count) });
                let kind = ExprKind::Reduce(node::Reduce {
                    op: ReduceOp::Sum,
                    index: *index,
                    size: size.clone(),
                    body: Box::new(Expr::new(kind, Type::I64, span)),
                });
                let zeros = self.primal(&Expr::new(kind, Type::I64, span));
                let (copy, value, bound) = element(self);
                let is_zero = binary(BinaryOp::Eq, value.clone(), zero_of(ty, span));
                let nonzero = select(is_zero, float_like(1.0, &value), value);
                let kind = ExprKind::Let(node::Let { var: bound, value: Box::new(copy), body: Box::new(nonzero) });
                let kind = ExprKind::Reduce(node::Reduce {
                    op: ReduceOp::Prod,
                    index: *index,
                    size: size.clone(),
                    body: Box::new(Expr::new(kind, ty.clone(), span)),
                });
                let nonzero_product = self.primal(&Expr::new(kind, ty.clone(), span));
                self.open(Some((*index, (**size).clone())), None);
                let value = self.primal(body);
                let others = product_of_others(value, zeros, nonzero_product);
                let back = self.atom(binary(BinaryOp::Mul, cotangent, others));
                self.backprop(body, back)?;
                self.close();
                Ok(())
            }
            ReduceOp::ArgMax | ReduceOp::ArgMin | ReduceOp::All | ReduceOp::Any => Ok(()),
        }
    }

    /// The adjoint of `target` (of type `ty`) from its contributions, bound in the current
    /// frame (where `target` is bound); `None` when nothing contributed.
    fn materialize(&mut self, target: VarId, ty: &Type, span: Span) -> syn::Result<Option<Expr>> {
        let Some(contributions) = self.contributions.remove(&target) else { return Ok(None) };
        let like = var(target, ty, span);
        let mut leaves = Vec::new();
        for (path, leaf_ty) in leaf_paths(ty) {
            let here: Vec<&Contribution> = contributions.iter().filter(|c| c.path == path).collect();
            let whole = self.part_at(like.clone(), &path);
            let leaf = match &leaf_ty {
                Type::Array { .. } => {
                    let (plain, scattered): (Vec<&Contribution>, Vec<&Contribution>) =
                        here.into_iter().partition(|contribution| contribution.transposed.is_some());
                    let mut adjoint = if plain.is_empty() {
                        self.zeros(&leaf_ty, &whole)
                    } else {
                        self.transpose(&plain, &leaf_ty, &whole)
                    };
                    for contribution in plain {
                        if let Some(edge) = clamped_steps(contribution) {
                            adjoint = self.accumulate(adjoint, &whole, &edge)?;
                        }
                    }
                    for contribution in scattered {
                        adjoint = self.accumulate(adjoint, &whole, contribution)?;
                    }
                    adjoint
                }
                _ => {
                    // Each term carries its own copy of its frames: binders renamed term by term.
                    let terms: Vec<Expr> = here
                        .iter()
                        .map(|contribution| {
                            let mut term = sum_over(contribution, &leaf_ty, &[]);
                            rename_binders(&mut term, &mut self.vars);
                            term
                        })
                        .collect();
                    terms.into_iter().reduce(|sum, term| binary(BinaryOp::Add, sum, term)).unwrap_or_else(|| {
                        match leaf_ty {
                            Type::Scalar(scalar) => zero_scalar(scalar, span),
                            _ => zero_of(&leaf_ty, span),
                        }
                    })
                }
            };
            leaves.push(leaf);
        }
        let mut adjoint = self.assemble(ty, &mut leaves.into_iter());
        rename_binders(&mut adjoint, &mut self.vars);
        Ok(Some(self.bind(adjoint)))
    }

    /// A value of type `ty` from its leaves in [`leaf_paths`] order: an array of tuples from
    /// its columns, bound first, by a comprehension of their elements.
    fn assemble(&mut self, ty: &Type, leaves: &mut impl Iterator<Item = Expr>) -> Expr {
        match ty {
            Type::Tuple { fields, .. } => {
                let items = fields.iter().map(|field| self.assemble(field, leaves)).collect();
                tuple(items, ty.clone())
            }
            Type::Array { elem, .. } if matches!(**elem, Type::Tuple { .. }) => {
                let columns: Vec<Expr> =
                    leaf_paths(ty).iter().filter_map(|_| leaves.next()).map(|column| self.bind(column)).collect();
                let Some(first) = columns.first().cloned() else { return int(0, Span::call_site()) };
                map_elements(&first, &mut self.vars, |at| {
                    rebuild(elem, &mut columns.iter().map(|column| read_at(column, at)))
                })
            }
            _ => leaves.next().unwrap_or_else(|| int(0, Span::call_site())),
        }
    }

    /// `for p… { Σ terms }`: the contributions whose positions are loop indices over whole
    /// axes (see [`Contribution::transposed`]), each summed over its other loops, as one
    /// comprehension over the positions of `whole` (of type `ty`).
    fn transpose(&mut self, contributions: &[&Contribution], ty: &Type, whole: &Expr) -> Expr {
        let span = whole.span;
        let Type::Array { elem, rank } = ty else { return self.zeros(ty, whole) };
        let indices: Vec<VarId> = (0..*rank).map(|_| self.fresh_index(span)).collect();
        let mut body = None;
        for contribution in contributions {
            let positions = contribution.transposed.as_deref().unwrap_or_default();
            let kept: Vec<VarId> = positions.iter().map(|(index, _)| *index).collect();
            let mut term = sum_over(contribution, elem, &kept);
            rename_binders(&mut term, &mut self.vars);
            for (axis, (&(position, shift), index)) in positions.iter().zip(&indices).enumerate() {
                let at = var(*index, &Type::I64, span);
                if shift == 0 {
                    crate::ir::visit::substitute(&mut term, position, &at);
                    continue;
                }
                // The step that read position `p` unclamped is `p - c`, if there is one. Both
                // sides of the select are evaluated: where the term can fail other than by a
                // read (which clamps), it is evaluated at `p - c` clamped into the loop's range,
                // a step the primal took.
                let size = crate::ir::shape::simplify_lengths(len(whole.clone(), axis));
                let step = if shift > 0 {
                    binary(BinaryOp::Sub, at, int(shift, span))
                } else {
                    binary(BinaryOp::Add, at, int(-shift, span))
                };
                let evaluated_at = if crate::passes::purity::fails_only_on_empty_axes(&term) {
                    step.clone()
                } else {
                    let last = binary(BinaryOp::Sub, size.clone(), int(1, span));
                    call(Func::Max, vec![call(Func::Min, vec![step.clone(), last]), int(0, span)])
                };
                crate::ir::visit::substitute(&mut term, position, &evaluated_at);
                let in_range = binary(
                    BinaryOp::And,
                    binary(BinaryOp::Ge, step.clone(), int(0, span)),
                    binary(BinaryOp::Lt, step, size),
                );
                term = select(in_range, term, zero_of(elem, span));
            }
            body = add(body, Some(term));
        }
        let mut body = body.unwrap_or_else(|| zero_of(elem, span));
        // One array read whole, at the positions in order (the adjoint of an array that reached
        // `whole` unchanged, such as a fold's initial state): that array, whose shape is
        // `whole`'s as every adjoint's is, rather than a copy of it.
        if let Some(array) = read_in_order(&body, &indices).filter(|array| array.ty == *ty) {
            return array.clone();
        }
        for (axis, index) in indices.iter().enumerate().rev() {
            let size = crate::ir::shape::simplify_lengths(len(whole.clone(), axis));
            body = for_loop(*index, size, body);
        }
        body
    }

    /// `accum a = adjoint { loops… { a[p…] += value } }` for one contribution to an array.
    fn accumulate(&mut self, adjoint: Expr, whole: &Expr, contribution: &Contribution) -> syn::Result<Expr> {
        let span = contribution.value.span;
        let Type::Array { elem, rank } = &whole.ty else { return Ok(adjoint) };
        let masks: Vec<Expr> = contribution.frames.iter().filter_map(|frame| frame.mask.clone()).collect();
        let cond = masks
            .into_iter()
            .reduce(|all, mask| binary(BinaryOp::And, all, mask))
            .unwrap_or_else(|| Expr::new(ExprKind::Literal(Literal::Bool(true)), Type::BOOL, span));
        let leaf_ty = update_tuple_type(elem, *rank, 1);
        let items =
            std::iter::once(cond).chain(contribution.positions.iter().cloned()).chain([contribution.value.clone()]);
        let mut nest = tuple(items.collect(), leaf_ty);
        for frame in contribution.frames.iter().rev() {
            nest = wrap(frame.steps.clone(), nest);
            if let Some((index, size)) = &frame.looped {
                // The loops of an accum's updates are comprehension loops, whose sizes name no
                // index: a reduction's range that depends on an enclosing loop (`sum k in
                // 0..i`, a CSR row) is computed by a `let` before its loop, which the accum
                // runs at each iteration of the enclosing one.
                let varies = free_vars(size)
                    .iter()
                    .any(|var| matches!(self.vars[var.0 as usize].kind, VarKind::Index | VarKind::Accumulator));
                if varies {
                    let count = self.fresh_let("__ein_count", &Type::I64, size.span);
                    let looped = for_loop(*index, var(count, &Type::I64, size.span), nest);
                    nest = wrap(vec![Step::Let(count, size.clone())], looped);
                } else {
                    nest = for_loop(*index, size.clone(), nest);
                }
            }
        }
        let accum = node::Accum {
            target: "the adjoint".to_string(),
            init: Box::new(adjoint),
            updates: Box::new(nest),
            ops: vec![UpdateOp::Add],
            value: node::AccumValue::Final,
        };
        let mut accum = Expr::new(ExprKind::Accum(accum), whole.ty.clone(), span);
        rename_binders(&mut accum, &mut self.vars);
        Ok(accum)
    }

    /// Zeros of type `ty` with the shape of `like`.
    fn zeros(&mut self, ty: &Type, like: &Expr) -> Expr {
        match ty {
            Type::Scalar(scalar) => zero_scalar(*scalar, like.span),
            Type::Tuple { fields, .. } => {
                let items = (0..fields.len()).map(|field| self.zeros(&fields[field], &project(like.clone(), field)));
                tuple(items.collect(), ty.clone())
            }
            Type::Array { elem, rank } => {
                let mut element = self.zeros(elem, like);
                for axis in (0..*rank).rev() {
                    let index = self.fresh_index(like.span);
                    let size = crate::ir::shape::simplify_lengths(len(like.clone(), axis));
                    element = for_loop(index, size, element);
                }
                element
            }
        }
    }
}

/// The sum of a scalar contribution over its frames: `sum i { steps; sum k { …; value } }`,
/// masked where a frame has a mask; the loops of `kept` are left open (their indices free).
fn sum_over(contribution: &Contribution, ty: &Type, kept: &[VarId]) -> Expr {
    let span = contribution.value.span;
    let mut inner = contribution.value.clone();
    for frame in contribution.frames.iter().rev() {
        if let Some(mask) = &frame.mask {
            inner = select(mask.clone(), inner, zero_of(ty, span));
        }
        inner = wrap(frame.steps.clone(), inner);
        if let Some((index, size)) = frame.looped.as_ref().filter(|(index, _)| !kept.contains(index)) {
            let kind = ExprKind::Reduce(node::Reduce {
                op: ReduceOp::Sum,
                index: *index,
                size: Box::new(size.clone()),
                body: Box::new(inner),
            });
            inner = Expr::new(kind, ty.clone(), span);
        }
    }
    inner
}

/// The loop indices a contribution's positions are, when it can be transposed (see
/// [`Contribution::transposed`]): each position a distinct loop of `frames` over the whole
/// axis it reads, and nothing recomputed more often for it. The position loops move outside
/// the summed ones, so the steps of a frame inside a summed loop and outside a position loop
/// run once per position of the latter: they must hold no loop.
fn transposed_indices(frames: &[Frame], positions: &[Position]) -> Option<Vec<(VarId, i64)>> {
    let loops = |frame: &Frame| frame.looped.as_ref().map(|(index, _)| *index);
    let mut indices = Vec::new();
    let mut shifts = Vec::new();
    for position in positions {
        let (index, shift) = match (position.shifted, &position.at.kind) {
            (Some(shifted), _) => shifted,
            (None, ExprKind::Var(index)) if position.whole_axis => (*index, 0),
            _ => return None,
        };
        if indices.contains(&index) || !frames.iter().any(|frame| loops(frame) == Some(index)) {
            return None;
        }
        indices.push(index);
        shifts.push(shift);
    }
    if shifts.iter().filter(|shift| **shift != 0).count() > 1 {
        return None;
    }
    let mut summed_outside = false;
    for (at, frame) in frames.iter().enumerate() {
        summed_outside |= loops(frame).is_some_and(|index| !indices.contains(&index));
        let position_inside =
            frames[at + 1..].iter().any(|inner| loops(inner).is_some_and(|index| indices.contains(&index)));
        if summed_outside && position_inside && frame.steps.iter().any(step_has_loop) {
            return None;
        }
    }
    (!indices.is_empty()).then(|| indices.into_iter().zip(shifts).collect())
}

/// For a transposed contribution read at a shifted index `i + c` (clamped), the steps whose
/// read clamped, which the gather at `p - c` leaves out: the contribution with `i`'s loop
/// over `0..n` replaced by one over the `min(|c|, n)` steps at the edge, `i = max(n - c, 0) + t`
/// for `c > 0` (they read `n - 1`), `i = t` for `c < 0` (they read `0`). `None` when no
/// position is shifted.
fn clamped_steps(contribution: &Contribution) -> Option<Contribution> {
    let &(index, shift) = contribution.transposed.as_ref()?.iter().find(|(_, shift)| *shift != 0)?;
    let mut edge = Contribution { transposed: None, ..contribution.clone() };
    let at = edge.frames.iter().position(|frame| frame.looped.as_ref().is_some_and(|(i, _)| *i == index))?;
    let (_, size) = edge.frames[at].looped.clone()?;
    let span = size.span;
    let count = call(Func::Min, vec![int(shift.abs(), span), size.clone()]);
    // The loop keeps its index variable, now `t`; the steps read at `i` in terms of it.
    let t = var(index, &Type::I64, span);
    let i = if shift > 0 {
        let start = call(Func::Max, vec![binary(BinaryOp::Sub, size, int(shift, span)), int(0, span)]);
        binary(BinaryOp::Add, start, t)
    } else {
        t
    };
    let substitute = |expr: &mut Expr| crate::ir::visit::substitute(expr, index, &i);
    for frame in &mut edge.frames[at..] {
        for step in &mut frame.steps {
            match step {
                Step::Let(_, value) => substitute(value),
                Step::Assert(checks) => {
                    for check in checks {
                        substitute(&mut check.left);
                        substitute(&mut check.right);
                    }
                }
            }
        }
        if let Some(mask) = &mut frame.mask {
            substitute(mask);
        }
        if let Some((_, size)) = &mut frame.looped {
            substitute(size);
        }
    }
    edge.positions.iter_mut().for_each(substitute);
    substitute(&mut edge.value);
    edge.frames[at].looped = Some((index, count));
    Some(edge)
}

/// `expr` with every array length replaced by `0`: what it reads of values, not of shapes
/// (a fold's shape checks name the initial state, whose elements the step need not read).
fn without_lengths(expr: &Expr) -> Expr {
    let mut copy = expr.clone();
    fn replace(expr: &mut Expr) {
        if let ExprKind::Len(_) = expr.kind {
            *expr = int(0, expr.span);
            return;
        }
        expr.for_each_child_mut(replace);
    }
    replace(&mut copy);
    copy
}

/// Removes the `let`s of `expr` whose variable is never used and whose value can fail only by
/// a read: in the sweep those recompute primal values (the state a linear step's adjoint does
/// not need), at steps the primal took, where its reads did not fail.
fn drop_unused_recomputations(expr: &mut Expr) {
    expr.for_each_child_mut(drop_unused_recomputations);
    while let ExprKind::Let(node::Let { var, value, body }) = &mut expr.kind {
        if crate::ir::visit::mentions(body, *var) || !crate::passes::purity::fails_only_on_empty_axes(value) {
            return;
        }
        let body = std::mem::replace(&mut **body, int(0, value.span));
        *expr = body;
    }
}

fn step_has_loop(step: &Step) -> bool {
    match step {
        Step::Let(_, value) => crate::passes::purity::has_loop(value),
        Step::Assert(_) => false,
    }
}

/// The scalars and arrays of scalars of a type, with their paths: through tuples, and through
/// arrays of tuples by their columns (field `k` of every element, as [`Vjp::part_at`] takes it).
fn leaf_paths(ty: &Type) -> Vec<(Vec<usize>, Type)> {
    let fields = |fields: &[Type], rank: Option<usize>| -> Vec<(Vec<usize>, Type)> {
        let mut leaves = Vec::new();
        for (field, field_ty) in fields.iter().enumerate() {
            let field_ty = rank.map_or_else(|| field_ty.clone(), |rank| Type::array(field_ty.clone(), rank));
            for (mut path, leaf) in leaf_paths(&field_ty) {
                path.insert(0, field);
                leaves.push((path, leaf));
            }
        }
        leaves
    };
    match ty {
        Type::Tuple { fields: parts, .. } => fields(parts, None),
        Type::Array { elem, rank } => match &**elem {
            Type::Tuple { fields: parts, .. } => fields(parts, Some(*rank)),
            _ => vec![(Vec::new(), ty.clone())],
        },
        other => vec![(Vec::new(), other.clone())],
    }
}

/// State `at` of `stack`, a scan's states of type `ty` stacked ([`Type::stacked`]): for a tuple
/// holding an array, the tuple of each part's state.
fn stacked_read(stack: Expr, at: Expr, ty: &Type) -> Expr {
    match ty {
        Type::Tuple { fields, .. } if ty.has_array() => {
            let parts = fields
                .iter()
                .enumerate()
                .map(|(field, field_ty)| stacked_read(project(stack.clone(), field), at.clone(), field_ty));
            tuple(parts.collect(), ty.clone())
        }
        _ => read(stack, at, Bounds::Clamped),
    }
}

/// Every `len(state, k)` in `body` becomes `len(init, k)`: a saved state has the initial
/// state's shape (the tape checks it), and a length of the initial state is the same at every
/// step (so an accumulation through the step's loops is regular).
fn same_lengths_as(body: &mut Expr, state: VarId, init: &Expr) {
    if let ExprKind::Len(node::Len { array, .. }) = &mut body.kind {
        if matches!(array.kind, ExprKind::Var(var) if var == state) {
            **array = init.clone();
        }
        return;
    }
    body.for_each_child_mut(|child| same_lengths_as(child, state, init));
}

/// `a + b` for values of type `ty` (scalars or tuples of them): float parts added, the others
/// `a`'s.
fn add_parts(a: Expr, b: Expr, ty: &Type) -> Expr {
    if !matches!(ty, Type::Tuple { .. }) {
        return if has_float(ty) { binary(BinaryOp::Add, a, b) } else { a };
    }
    let sums: Vec<Expr> = parts(a, ty)
        .into_iter()
        .zip(parts(b, ty))
        .map(|(a, b)| if has_float(&a.ty) { binary(BinaryOp::Add, a, b) } else { a })
        .collect();
    rebuild(ty, &mut sums.into_iter())
}

/// `value` (a float) as the float type `ty`.
fn cast_like(value: Expr, ty: &Type) -> Expr {
    match ty {
        Type::Scalar(scalar) if value.ty != *ty => cast(value, *scalar),
        _ => value,
    }
}

/// The variable `expr` reads at exactly `indices`, in order (`a[i][j]` for `[i, j]`), if it is
/// such a read.
fn read_in_order<'e>(expr: &'e Expr, indices: &[VarId]) -> Option<&'e Expr> {
    let mut expr = expr;
    for index in indices.iter().rev() {
        let ExprKind::Index(node::Index { array, index: at, .. }) = &expr.kind else { return None };
        if !matches!(at.kind, ExprKind::Var(var) if var == *index) {
            return None;
        }
        expr = array;
    }
    matches!(expr.kind, ExprKind::Var(_)).then_some(expr)
}
