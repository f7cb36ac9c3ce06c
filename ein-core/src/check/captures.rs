//! Expression form: finds the Rust locals an `ein!(..)` expression captures (free names, in
//! order of first use) and their ranks, read from how they are used: the deepest direct
//! indexing (`a[i][j]` and `a[i, j]` are rank 2), or `a.shape(k)` (rank > k), or `a.len()`.
//! A name bound to a captured local (`let b = a;`, `fold t in 0..n, u = a { .. }`) is the same
//! array, so how it is used counts for the local too, through tuples as well
//! (`fold t in 0..n, (u, c) = (a, 0) { .. }`, `s = (a, 0.0)` read as `s.0[i]`).

use crate::syntax::ast::{Binder, Expr, ExprKind, Member, Pattern};
use proc_macro2::Ident;

/// The highest rank ein accepts; beyond it (only reachable through `a.shape(k)` with a huge `k`)
/// the checker reports an error instead of building an absurd type.
pub const MAX_RANK: usize = 16;

/// What the expression does with one captured local.
#[derive(Debug, Clone)]
pub struct Capture {
    pub name: Ident,
    /// 0 for a scalar.
    pub rank: usize,
}

pub fn find_captures(body: &Expr) -> Vec<Capture> {
    let mut scan = Scan { bound: Vec::new(), captures: Vec::new() };
    scan.expr(body, 0);
    scan.captures
}

struct Scan {
    /// The names bound in scope, innermost last, each with what it stands for, if it was bound
    /// to a captured local or a tuple holding one.
    bound: Vec<(String, Option<Alias>)>,
    captures: Vec<Capture>,
}

/// What a value stands for: a captured local (its position), or a tuple some of whose parts do.
#[derive(Clone, Debug)]
enum Alias {
    Capture(usize),
    Tuple(Vec<Option<Alias>>),
}

impl Alias {
    fn capture(&self) -> Option<usize> {
        match self {
            Alias::Capture(position) => Some(*position),
            Alias::Tuple(_) => None,
        }
    }

    fn part(&self, position: usize) -> Option<Alias> {
        match self {
            Alias::Tuple(parts) => parts.get(position).cloned().flatten(),
            Alias::Capture(_) => None,
        }
    }
}

impl Scan {
    /// What `name` stands for: what it was bound to, or else a captured local, registered on
    /// first use.
    fn resolve(&mut self, name: &Ident) -> Option<Alias> {
        let text = name.to_string();
        if let Some((_, alias)) = self.bound.iter().rev().find(|(bound, _)| *bound == text) {
            return alias.clone();
        }
        let position = match self.captures.iter().position(|c| c.name == text) {
            Some(position) => position,
            None => {
                self.captures.push(Capture { name: name.clone(), rank: 0 });
                self.captures.len() - 1
            }
        };
        Some(Alias::Capture(position))
    }

    /// What `value` stands for: a name, a tuple of them, or a part of one.
    fn alias_of(&mut self, value: &Expr) -> Option<Alias> {
        match &value.kind {
            ExprKind::Name(name) => self.resolve(name),
            ExprKind::Tuple(items) => Some(Alias::Tuple(items.iter().map(|item| self.alias_of(item)).collect())),
            ExprKind::Field { base, member: Member::Position(position, _) } => self.alias_of(base)?.part(*position),
            _ => None,
        }
    }

    /// Records that the captured local `alias` stands for (if any) has at least this rank.
    fn note_rank(&mut self, alias: Option<Alias>, rank: usize) {
        if let Some(capture) = alias.and_then(|alias| alias.capture()).and_then(|p| self.captures.get_mut(p)) {
            capture.rank = capture.rank.max(rank);
        }
    }

    /// `depth` counts the indices applied directly around this expression.
    fn expr(&mut self, expr: &Expr, depth: usize) {
        match &expr.kind {
            ExprKind::Name(name) => {
                let alias = self.resolve(name);
                self.note_rank(alias, depth);
            }
            ExprKind::Index { array, indices } => {
                self.expr(array, depth + indices.len());
                indices.iter().for_each(|index| self.expr(index, 0));
            }
            ExprKind::Len { array } => self.array_query(array, 1),
            ExprKind::Shape { array, axis, .. } => self.array_query(array, axis.saturating_add(1).min(MAX_RANK + 1)),
            ExprKind::Literal(_) => {}
            ExprKind::For { binders, body } | ExprKind::Reduce { binders, body, .. } => {
                let before = self.bound.len();
                self.binders(binders);
                self.expr(body, 0);
                self.bound.truncate(before);
            }
            ExprKind::Filter { binder, cond, body, .. } => {
                let before = self.bound.len();
                self.binders(std::slice::from_ref(binder));
                self.expr(cond, 0);
                self.expr(body, 0);
                self.bound.truncate(before);
            }
            ExprKind::Fold { index, count, acc, init, body } => self.fold(index, Some(count), acc, init, body),
            ExprKind::Scan { index, count, acc, init, body } => self.fold(index, count.as_deref(), acc, init, body),
            // The target is bound in the body; bound to a captured local, it is that array, and
            // an update indexes every axis of it.
            ExprKind::Accum { target, init, body } => {
                self.expr(init, 0);
                let alias = self.alias_of(init).filter(|alias| alias.capture().is_some());
                let before = self.bound.len();
                self.bound.push((target.to_string(), alias));
                self.expr(body, 0);
                self.bound.truncate(before);
            }
            ExprKind::Update { target, indices, value, .. } => {
                let text = target.to_string();
                let alias =
                    self.bound.iter().rev().find(|(bound, _)| *bound == text).and_then(|(_, alias)| alias.clone());
                self.note_rank(alias, indices.len());
                indices.iter().for_each(|index| self.expr(index, 0));
                self.expr(value, 0);
            }
            ExprKind::Updates(items) => items.iter().for_each(|item| self.expr(item, 0)),
            ExprKind::When { cond, body } => {
                self.expr(cond, 0);
                self.expr(body, 0);
            }
            ExprKind::Let { pattern, value, body } => {
                self.expr(value, 0);
                let alias = self.alias_of(value);
                let before = self.bound.len();
                self.bind(pattern, alias);
                self.expr(body, 0);
                self.bound.truncate(before);
            }
            // A part of a tuple that holds a captured local is that local.
            ExprKind::Field { base, .. } => match self.alias_of(expr) {
                Some(alias) => self.note_rank(Some(alias), depth),
                None => self.expr(base, 0),
            },
            ExprKind::If { cond, then, otherwise } => {
                self.expr(cond, 0);
                self.expr(then, 0);
                self.expr(otherwise, 0);
            }
            ExprKind::Tuple(items) | ExprKind::Call { args: items, .. } | ExprKind::Apply { args: items, .. } => {
                items.iter().for_each(|item| self.expr(item, 0))
            }
            ExprKind::Record(fields) => fields.iter().for_each(|(_, value)| self.expr(value, 0)),
            ExprKind::Unary { operand, .. } | ExprKind::Cast { operand, .. } => self.expr(operand, 0),
            ExprKind::Binary { lhs, rhs, .. } => {
                self.expr(lhs, 0);
                self.expr(rhs, 0);
            }
        }
    }

    fn array_query(&mut self, array: &Expr, minimum_rank: usize) {
        match &array.kind {
            ExprKind::Name(_) | ExprKind::Field { .. } => self.expr(array, minimum_rank),
            _ => self.expr(array, 0),
        }
    }

    /// Binders are in scope for the sizes of later binders and for the body, like the checker.
    /// A fold or a scan: the initial value and count outside, the index and accumulator bound
    /// in the body.
    fn fold(&mut self, index: &Ident, count: Option<&Expr>, acc: &Pattern, init: &Expr, body: &Expr) {
        self.expr(init, 0);
        if let Some(count) = count {
            self.expr(count, 0);
        }
        let alias = self.alias_of(init);
        let before = self.bound.len();
        self.bound.push((index.to_string(), None));
        self.bind(acc, alias);
        self.expr(body, 0);
        self.bound.truncate(before);
    }

    fn binders(&mut self, binders: &[Binder]) {
        for binder in binders {
            if let Some(size) = &binder.size {
                self.expr(size, 0);
            }
            self.bound.push((binder.name.to_string(), None));
        }
    }

    /// Binds the names of `pattern`, each to what its part of the value stands for.
    fn bind(&mut self, pattern: &Pattern, alias: Option<Alias>) {
        match pattern {
            Pattern::Name(name) => self.bound.push((name.to_string(), alias)),
            Pattern::Tuple(items, _) => {
                for (position, item) in items.iter().enumerate() {
                    self.bind(item, alias.as_ref().and_then(|alias| alias.part(position)));
                }
            }
        }
    }
}
