//! Let-lifting and loop-invariant code motion: a subexpression of a loop body that does not
//! depend on the loop's variables is computed once, in a `let` just outside the loop. Applied
//! bottom-up, a value rises to the innermost loop it depends on: in the naive softmax
//! `for i, j { exp(x[i, j] - max k { x[i, k] }) / sum k { … } }`, both reductions rise out of
//! `for j` and are computed once per row.
//!
//! Only expressions that cannot fail move (see [`may_fail`]): a loop may run zero times, and a
//! moved expression must not add an error. Nothing moves out of an `Assert`: the reads inside
//! may be proven in bounds only by that check.

use super::purity::{is_expensive, may_fail};
use crate::ir::node;
use crate::ir::visit::free_vars;
use crate::ir::{Expr, ExprKind, Program, VarId, VarInfo, VarKind};
use std::collections::BTreeSet;

pub fn hoist(mut program: Program) -> Program {
    let body = program.body.take();
    program.body = Hoister { vars: &mut program.vars }.expr(body);
    program
}

struct Hoister<'a> {
    vars: &'a mut Vec<VarInfo>,
}

/// A binding lifted out of a loop, in evaluation order.
struct Lifted {
    var: VarId,
    value: Expr,
}

impl Hoister<'_> {
    /// Bottom-up: children first, so values lifted out of inner loops can rise further.
    fn expr(&mut self, mut expr: Expr) -> Expr {
        expr.rewrite_children(|child| self.expr(child));
        let mut lifted = Vec::new();
        let mut blocked: BTreeSet<VarId> = expr.binders().collect();
        if let ExprKind::For(node::For { body, .. })
        | ExprKind::Reduce(node::Reduce { body, .. })
        | ExprKind::Fold(node::Fold { body, .. }) = &mut expr.kind
        {
            **body = self.extract(body.take(), &mut blocked, &mut lifted, true);
        } else {
            return expr;
        }
        lifted.into_iter().rev().fold(expr, |inner, Lifted { var, value }| {
            let (ty, span) = (inner.ty.clone(), value.span);
            Expr::new(ExprKind::Let(node::Let { var, value: Box::new(value), body: Box::new(inner) }), ty, span)
        })
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
        match expr.kind {
            // A `let` whose value is invariant floats out whole, keeping its variable.
            ExprKind::Let(node::Let { var, value, body }) if invariant(&value, blocked) && !may_fail(&value) => {
                lifted.push(Lifted { var, value: *value });
                self.extract(*body, blocked, lifted, at_root)
            }
            ExprKind::Assert(_) => expr,
            _ if !at_root && is_expensive(&expr) && invariant(&expr, blocked) && !may_fail(&expr) => {
                let var = self.fresh(&expr);
                let (ty, span) = (expr.ty.clone(), expr.span);
                lifted.push(Lifted { var, value: expr });
                Expr::new(ExprKind::Var(var), ty, span)
            }
            _ => {
                // A binder's variable is in scope in its body only (the last child), but blocking
                // it for the earlier children too is harmless: they cannot mention it.
                let newly: Vec<VarId> = expr.binders().filter(|var| blocked.insert(*var)).collect();
                expr.rewrite_children(|child| self.extract(child, blocked, lifted, false));
                for var in newly {
                    blocked.remove(&var);
                }
                expr
            }
        }
    }

    fn fresh(&mut self, value: &Expr) -> VarId {
        let what = match &value.kind {
            ExprKind::Reduce(node::Reduce { op, .. }) => op.name(),
            ExprKind::For(_) => "array",
            ExprKind::Fold(_) => "folded",
            _ => "value",
        };
        let name = format!("{}{what}", crate::ir::SYNTHETIC_PREFIX);
        crate::ir::declare(self.vars, VarInfo { name, ty: value.ty.clone(), kind: VarKind::Let, span: value.span })
    }
}
