//! Fusion by inlining (Dex's approach, Futhark's producer–consumer fusion): a comprehension that
//! is only read element-wise is not materialised. `(for i { e })[j]` becomes `e` with `i := j`,
//! and `let g = for i { e }; … g[j] …` becomes `… e[i := j] …` when that does not repeat work:
//! either the one read happens once per element (its loops are exactly the read's indices, as
//! in `for j { f(g[j]) }`), or `e` is cheap arithmetic that cannot fail. Otherwise `g` stays an
//! array, computed once. Only reads proven in bounds are fused (a clamped read would need the
//! clamp moved into `e`'s index).

use super::purity::{has_loop, is_expensive, is_loop, may_fail};
use crate::ir::node;
use crate::ir::visit::{rename_binders, walk, walk_in, Scope, Visitor};
use crate::ir::{Bounds, Expr, ExprKind, Program, VarId, VarInfo, VarKind};

pub fn inline(mut program: Program) -> Program {
    let body = program.body.take();
    program.body = Inliner { vars: &mut program.vars }.expr(body);
    program
}

struct Inliner<'a> {
    vars: &'a mut Vec<VarInfo>,
}

/// One read `g[a][b]…` of a let-bound comprehension `g`.
struct Use {
    /// The index variables of the read, outermost first (`None` for other index expressions).
    indices: Vec<Option<VarId>>,
    /// Loop variables entered between the `let` and the read, outermost first.
    loops: Vec<VarId>,
}

impl Inliner<'_> {
    fn expr(&mut self, mut expr: Expr) -> Expr {
        expr.rewrite_children(|child| self.expr(child));
        match expr.kind {
            ExprKind::Index(node::Index { array, index, bounds: Bounds::Proven }) if is_fusable_producer(&array) => {
                self.read_element(*array, *index)
            }
            ExprKind::Let(node::Let { var, value, body }) if matches!(value.kind, ExprKind::For(_)) => {
                match self.fusion(var, &value, &body) {
                    Some(Fusion::EachRead) => {
                        let mut body = *body;
                        let mut first = true;
                        self.replace_reads(&mut body, var, &value, &mut first);
                        body
                    }
                    Some(Fusion::OncePerElement { loops }) => {
                        let mut body = *body;
                        self.bind_element(&mut body, var, *value, &loops);
                        body
                    }
                    None => Expr { kind: ExprKind::Let(node::Let { var, value, body }), ..expr },
                }
            }
            kind => Expr { kind, ..expr },
        }
    }

    /// `producer[index]` as the producer's element expression.
    fn read_element(&mut self, producer: Expr, index: Expr) -> Expr {
        match producer.kind {
            ExprKind::For(node::For { index: variable, body, .. }) => {
                self.vars[variable.0 as usize].kind = VarKind::Let;
                let (ty, span) = (body.ty.clone(), index.span);
                let index = to_i64(index);
                Expr::new(ExprKind::Let(node::Let { var: variable, value: Box::new(index), body }), ty, span)
            }
            ExprKind::Let(node::Let { var, value, body }) => {
                let inner = self.read_element(*body, index);
                let (ty, span) = (inner.ty.clone(), value.span);
                Expr::new(ExprKind::Let(node::Let { var, value, body: Box::new(inner) }), ty, span)
            }
            other => {
                let producer = Expr { kind: other, ..producer };
                let ty = producer.ty.indexed().unwrap_or_else(|| producer.ty.clone());
                let span = producer.span;
                let kind = ExprKind::Index(node::Index {
                    array: Box::new(producer),
                    index: Box::new(index),
                    bounds: Bounds::Proven,
                });
                Expr::new(kind, ty, span)
            }
        }
    }

    /// How the reads of `var`, bound to `value` around `body`, may be fused, if they may.
    fn fusion(&self, var: VarId, value: &Expr, body: &Expr) -> Option<Fusion> {
        let uses = collect_uses(body, var, self.vars)?;
        let first = uses.first()?;
        // The read's loops are the producer's own indices, no more: a loop over an axis inside
        // the element (`g[i][j]` where `g`'s element is a row computed whole) would compute the
        // row once per `j`, and not at all, dropping its errors, when `j`'s range is empty.
        let once_per_element = first.loops.len() <= first.indices.len()
            && first.loops.len() <= comprehension_depth(value)
            && first.loops.iter().zip(&first.indices).all(|(lp, index)| Some(*lp) == *index)
            && !first.loops.is_empty();
        let cheap = !is_expensive(value) && !may_fail(value);
        if cheap || (once_per_element && uses.len() == 1) {
            return Some(Fusion::EachRead);
        }
        // Several reads of one element, each once per element (`sum i { f(p[i]) + g(p[i]) }`):
        // the element is computed once, into a `let` at the top of the innermost loop's body.
        // Not an element with a loop of its own: a loop in the consumer's step keeps the step's
        // math (`exp`, `ln`) from being vectorised across the consumer's elements, which cost
        // the logistic loss 2× more than the array it saves.
        let same_element = |read: &Use| read.loops == first.loops && read.indices == first.indices;
        (once_per_element
            && first.indices.len() == first.loops.len()
            && uses.iter().all(same_element)
            && !has_loop(element_of(value, first.loops.len()))
            && first.loops.last().is_some_and(|innermost| binds_loop(body, *innermost)))
        .then(|| Fusion::OncePerElement { loops: first.loops.clone() })
    }

    /// Fuses `producer`, bound to `var`, into `body`, whose every read of `var` is
    /// `var[loops[0]][loops[1]]…` directly inside the loop over the last of `loops`: that loop's
    /// body gets `let element = <producer's element>` and the reads become `element`.
    fn bind_element(&mut self, body: &mut Expr, var: VarId, producer: Expr, loops: &[VarId]) {
        let span = producer.span;
        let mut element = producer;
        for &index in loops {
            element = self.read_element(element, Expr::new(ExprKind::Var(index), crate::ir::Type::I64, span));
        }
        let VarInfo { name, span: var_span, .. } = self.vars[var.0 as usize].clone();
        let info = VarInfo { name, ty: element.ty.clone(), kind: VarKind::Let, span: var_span };
        let element_var = crate::ir::declare(self.vars, info);
        let read = Expr::new(ExprKind::Var(element_var), element.ty.clone(), span);
        let innermost = *loops.last().expect("a read inside a loop");
        let mut element = Some(element);
        wrap_loop_body(body, innermost, &mut |loop_body| {
            let mut loop_body = loop_body;
            replace_element_reads(&mut loop_body, var, &read);
            let element = element.take().expect("one loop binds the index");
            let (ty, span) = (loop_body.ty.clone(), loop_body.span);
            let kind =
                ExprKind::Let(node::Let { var: element_var, value: Box::new(element), body: Box::new(loop_body) });
            Expr::new(kind, ty, span)
        });
    }

    /// Replaces every read `var[…]` in `expr` by the fused element of `producer`.
    fn replace_reads(&mut self, expr: &mut Expr, var: VarId, producer: &Expr, first: &mut bool) {
        if let ExprKind::Index(node::Index { array, .. }) = &expr.kind {
            if matches!(array.kind, ExprKind::Var(found) if found == var) {
                let mut copy = producer.clone();
                if !*first {
                    rename_binders(&mut copy, self.vars);
                }
                *first = false;
                if let ExprKind::Index(node::Index { index, .. }) = expr.take().kind {
                    let mut index = *index;
                    self.replace_reads(&mut index, var, producer, first);
                    *expr = self.read_element(copy, index);
                }
                return;
            }
        }
        expr.for_each_child_mut(|child| self.replace_reads(child, var, producer, first));
        // A chain `g[i][j]`: after the inner read is fused, fuse the outer one too.
        if let ExprKind::Index(node::Index { array, bounds: Bounds::Proven, .. }) = &expr.kind {
            if is_fusable_producer(array) && !has_loop_outside_body(array) {
                if let ExprKind::Index(node::Index { array, index, .. }) = expr.take().kind {
                    *expr = self.read_element(*array, *index);
                }
            }
        }
    }
}

/// How a let-bound comprehension is fused into its readers.
enum Fusion {
    /// Every read becomes a copy of the element expression.
    EachRead,
    /// Every read is of the same element, once per element of these loops (outermost first):
    /// the element is bound once inside the innermost.
    OncePerElement { loops: Vec<VarId> },
}

/// Whether a loop whose body [`wrap_loop_body`] can rewrite binds `index` in `expr`.
fn binds_loop(expr: &Expr, index: VarId) -> bool {
    let mut found = is_loop(expr) && expr.binders().any(|bound| bound == index);
    expr.for_each_child(|child| found |= !found && binds_loop(child, index));
    found
}

/// Rewrites, with `wrap`, the body of the loop in `expr` that binds `index`.
fn wrap_loop_body(expr: &mut Expr, index: VarId, wrap: &mut dyn FnMut(Expr) -> Expr) {
    let body = match &mut expr.kind {
        ExprKind::For(node::For { index: bound, body, .. })
        | ExprKind::Filter(node::For { index: bound, body, .. })
        | ExprKind::Reduce(node::Reduce { index: bound, body, .. })
        | ExprKind::Fold(node::Fold { index: bound, body, .. })
        | ExprKind::Scan(node::Scan { index: bound, body, .. })
            if *bound == index =>
        {
            Some(body)
        }
        _ => None,
    };
    match body {
        Some(body) => **body = wrap(body.take()),
        None => expr.for_each_child_mut(|child| wrap_loop_body(child, index, wrap)),
    }
}

/// Replaces every read chain whose base is `var` by `element`.
fn replace_element_reads(expr: &mut Expr, var: VarId, element: &Expr) {
    let mut base = &*expr;
    while let ExprKind::Index(node::Index { array, .. }) = &base.kind {
        base = array;
    }
    if !std::ptr::eq(base, &*expr) && matches!(base.kind, ExprKind::Var(found) if found == var) {
        *expr = element.clone();
        return;
    }
    expr.for_each_child_mut(|child| replace_element_reads(child, var, element));
}

/// A comprehension (possibly under `let`s) whose element can be read without evaluating the
/// others: it cannot fail, so skipping the other elements removes no error.
fn is_fusable_producer(expr: &Expr) -> bool {
    match &expr.kind {
        ExprKind::For(_) => !may_fail(expr),
        ExprKind::Let(node::Let { value, body, .. }) => !may_fail(value) && is_fusable_producer(body),
        _ => false,
    }
}

/// How many comprehensions nest directly in `expr` (`for i { for j { e } }` is 2): the axes whose
/// elements are computed one by one rather than as a whole.
fn comprehension_depth(expr: &Expr) -> usize {
    match &expr.kind {
        ExprKind::For(node::For { body, .. }) => 1 + comprehension_depth(body),
        _ => 0,
    }
}

/// The body inside the first `depth` comprehensions of `expr`.
fn element_of(expr: &Expr, depth: usize) -> &Expr {
    match &expr.kind {
        ExprKind::For(node::For { body, .. }) if depth > 0 => element_of(body, depth - 1),
        _ => expr,
    }
}

/// Lets around a producer are evaluated once per read after fusion; keep loops out of them.
fn has_loop_outside_body(expr: &Expr) -> bool {
    match &expr.kind {
        ExprKind::Let(node::Let { value, body, .. }) => has_loop(value) || has_loop_outside_body(body),
        _ => false,
    }
}

/// The reads of `var` in `expr`; `None` if `var` is used other than as the base of a read
/// chain with proven bounds.
fn collect_uses(expr: &Expr, var: VarId, vars: &[VarInfo]) -> Option<Vec<Use>> {
    let mut reads = Reads { var, vars, uses: Vec::new(), fusable: true };
    walk(expr, &mut reads);
    reads.fusable.then_some(reads.uses)
}

/// The visitor of [`collect_uses`].
struct Reads<'v> {
    var: VarId,
    vars: &'v [VarInfo],
    uses: Vec<Use>,
    fusable: bool,
}

impl<'e> Visitor<'e> for Reads<'_> {
    fn enter(&mut self, expr: &'e Expr, scope: &Scope) -> bool {
        match &expr.kind {
            ExprKind::Var(found) => {
                self.fusable &= *found != self.var;
                true
            }
            ExprKind::Index(_) => {
                let mut indices = Vec::new();
                let mut base = expr;
                let mut all_proven = true;
                while let ExprKind::Index(node::Index { array, index, bounds }) = &base.kind {
                    all_proven &= *bounds == Bounds::Proven;
                    indices.push(index.as_ref());
                    base = array;
                }
                if !matches!(base.kind, ExprKind::Var(found) if found == self.var) {
                    return true;
                }
                if !all_proven {
                    self.fusable = false;
                    return false;
                }
                indices.reverse();
                let index_vars = indices
                    .iter()
                    .map(|index| match index.kind {
                        ExprKind::Var(index_var) => Some(index_var),
                        _ => None,
                    })
                    .collect();
                // The loops entered between the `let` and the read (walks start at its body).
                let loops = scope
                    .vars()
                    .iter()
                    .copied()
                    .filter(|var| self.vars[var.0 as usize].kind == VarKind::Index)
                    .collect();
                self.uses.push(Use { indices: index_vars, loops });
                for index in indices {
                    walk_in(index, &mut scope.clone(), self);
                }
                false
            }
            _ => true,
        }
    }
}

fn to_i64(index: Expr) -> Expr {
    if index.ty == crate::ir::Type::I64 {
        return index;
    }
    let span = index.span;
    let kind =
        ExprKind::Cast(node::Cast { operand: Box::new(index), to: crate::ir::ScalarType::I64, saturating: true });
    Expr::new(kind, crate::ir::Type::I64, span)
}
