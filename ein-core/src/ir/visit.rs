//! The one IR walker and the generic walks built on it: which variables an expression binds
//! and mentions, renaming, alpha-equivalence keys and capture-avoiding substitution (binders
//! are unique `VarId`s, so no renaming is needed).
//!
//! Scoping lives here and only here: a node's binders ([`Expr::binders`]) are in scope in its
//! body, its last child, and nowhere else (not in a `for`'s size, a `let`'s value, a fold's
//! count or initial value). Every stage that needs scopes walks with [`walk`].

use super::node;
use super::{Expr, VarId, VarInfo};
use std::collections::BTreeSet;

/// The variables in scope at a node during a [`walk`]: those bound by the binding forms on the
/// path to it (through their bodies), innermost last.
#[derive(Clone, Debug, Default)]
pub struct Scope {
    bound: Vec<VarId>,
}

impl Scope {
    /// A scope holding `vars` (outermost first), to start a walk inside a binder.
    pub fn of(vars: impl IntoIterator<Item = VarId>) -> Scope {
        Scope { bound: vars.into_iter().collect() }
    }

    pub fn contains(&self, var: VarId) -> bool {
        self.bound.contains(&var)
    }

    /// How many binders out `var` is bound, counting from the outermost (0): its de Bruijn
    /// level, the same for alpha-equivalent terms.
    pub fn level_of(&self, var: VarId) -> Option<usize> {
        self.bound.iter().rposition(|bound| *bound == var)
    }

    /// The variables in scope, outermost first.
    pub fn vars(&self) -> &[VarId] {
        &self.bound
    }
}

/// What a [`walk`] does at each node.
pub trait Visitor<'e> {
    /// Called before `expr`'s children, in the scope `expr` is in; returning false skips its
    /// children (and its `leave`).
    fn enter(&mut self, expr: &'e Expr, scope: &Scope) -> bool;

    /// Called after `expr`'s children, in the scope `expr` is in.
    fn leave(&mut self, expr: &'e Expr, scope: &Scope) {
        let _ = (expr, scope);
    }
}

/// A closure is a visitor that only enters.
impl<'e, F: FnMut(&'e Expr, &Scope) -> bool> Visitor<'e> for F {
    fn enter(&mut self, expr: &'e Expr, scope: &Scope) -> bool {
        self(expr, scope)
    }
}

/// Walks `expr` in evaluation order (pre-order for `enter`, post-order for `leave`), keeping
/// the scope: each node's binders come into scope for its body, its last child.
pub fn walk<'e>(expr: &'e Expr, visitor: &mut impl Visitor<'e>) {
    walk_in(expr, &mut Scope::default(), visitor);
}

/// [`walk`] from `scope` (for a subtree whose enclosing binders matter).
pub fn walk_in<'e>(expr: &'e Expr, scope: &mut Scope, visitor: &mut impl Visitor<'e>) {
    if !visitor.enter(expr, scope) {
        return;
    }
    let mut children = Vec::new();
    expr.for_each_child(|child| children.push(child));
    let outer = scope.bound.len();
    let last = children.len().saturating_sub(1);
    for (position, child) in children.into_iter().enumerate() {
        if position == last {
            scope.bound.extend(expr.binders());
        }
        walk_in(child, scope, visitor);
    }
    scope.bound.truncate(outer);
    visitor.leave(expr, scope);
}

/// Every variable used in `expr` but not bound inside it.
pub fn free_vars(expr: &Expr) -> BTreeSet<VarId> {
    let mut free = BTreeSet::new();
    walk(expr, &mut |node: &Expr, scope: &Scope| {
        if let super::ExprKind::Var(var) = &node.kind {
            if !scope.contains(*var) {
                free.insert(*var);
            }
        }
        true
    });
    free
}

/// Whether `var` occurs free in `expr`.
pub fn mentions(expr: &Expr, var: VarId) -> bool {
    free_vars(expr).contains(&var)
}

/// Replaces every free occurrence of `var` in `expr` by `replacement`. Sound without renaming
/// because every binder in a program binds a distinct `VarId`; the caller must not duplicate
/// binders of `replacement` into places where they would be bound twice on one path
/// (duplicated copies of a subtree are fine: the copies are on different paths).
pub fn substitute(expr: &mut Expr, var: VarId, replacement: &Expr) {
    if let super::ExprKind::Var(found) = &expr.kind {
        if *found == var {
            *expr = replacement.clone();
        }
        return;
    }
    expr.for_each_child_mut(|child| substitute(child, var, replacement));
}

/// Every variable bound anywhere inside `expr`.
pub fn bound_vars(expr: &Expr) -> BTreeSet<VarId> {
    let mut bound = BTreeSet::new();
    walk(expr, &mut |node: &Expr, _: &Scope| {
        bound.extend(node.binders());
        true
    });
    bound
}

/// Gives every binder inside `expr` a fresh variable (declared at the end of `vars`), so a copy
/// of a subtree can be placed next to the original without binding a `VarId` twice.
pub fn rename_binders(expr: &mut Expr, vars: &mut Vec<VarInfo>) {
    let renames: Vec<(VarId, VarId)> = bound_vars(expr)
        .into_iter()
        .map(|old| {
            let info = vars[old.0 as usize].clone();
            (old, super::declare(vars, info))
        })
        .collect();
    rename(expr, &renames);
}

fn rename(expr: &mut Expr, renames: &[(VarId, VarId)]) {
    let fresh = |var: &mut VarId| {
        if let Some((_, new)) = renames.iter().find(|(old, _)| old == var) {
            *var = *new;
        }
    };
    if let super::ExprKind::Var(var) = &mut expr.kind {
        fresh(var);
    }
    expr.binders_mut().for_each(fresh);
    expr.for_each_child_mut(|child| rename(child, renames));
}

/// A text equal for two expressions exactly when they are equal up to the names of the
/// variables they bind (alpha-equivalence), spans ignored. Free variables keep their ids.
pub fn alpha_key(expr: &Expr) -> String {
    let mut key = AlphaKey { text: String::new() };
    walk(expr, &mut key);
    key.text
}

/// Writes each node's own part (bound variables by binding level) then its children's keys.
struct AlphaKey {
    text: String,
}

impl Visitor<'_> for AlphaKey {
    fn enter(&mut self, expr: &Expr, scope: &Scope) -> bool {
        use super::ExprKind;
        use std::fmt::Write;
        let text = &mut self.text;
        let _ = match &expr.kind {
            ExprKind::Literal(literal) => write!(text, "{literal:?}"),
            ExprKind::Var(var) => match scope.level_of(*var) {
                Some(level) => write!(text, "b{level}"),
                None => write!(text, "f{}", var.0),
            },
            ExprKind::For(_) => write!(text, "for"),
            ExprKind::Filter(_) => write!(text, "filter"),
            ExprKind::Reduce(node::Reduce { op, .. }) => write!(text, "{}", op.name()),
            ExprKind::Fold(_) => write!(text, "fold"),
            ExprKind::Scan(_) => write!(text, "scan"),
            ExprKind::Accum(node::Accum { target, ops, value, .. }) => write!(text, "accum {target} {ops:?} {value:?}"),
            ExprKind::Let(_) => write!(text, "let"),
            ExprKind::Index(node::Index { bounds, .. }) => write!(text, "index{bounds:?}"),
            ExprKind::Select(_) => write!(text, "select"),
            ExprKind::Tuple(_) => write!(text, "tuple"),
            ExprKind::Project(node::Project { field, .. }) => write!(text, "project{field}"),
            ExprKind::Unary(node::Unary { op, .. }) => write!(text, "{op:?}"),
            ExprKind::Binary(node::Binary { op, .. }) => write!(text, "{}", op.symbol()),
            ExprKind::Call(node::Call { func, .. }) => write!(text, "{}", func.name()),
            ExprKind::Extern(node::Extern { name, .. }) => write!(text, "extern {name}"),
            ExprKind::Cast(node::Cast { to, .. }) => write!(text, "as{to:?}"),
            ExprKind::Len(node::Len { axis, .. }) => write!(text, "len{axis}"),
            ExprKind::Assert(_) => write!(text, "assert"),
            ExprKind::Contract(contraction) => write!(text, "{}", contraction.structure_key()),
        };
        let _ = write!(text, ":{:?}(", expr.ty);
        true
    }

    fn leave(&mut self, _: &Expr, _: &Scope) {
        self.text.push_str("),");
    }
}
