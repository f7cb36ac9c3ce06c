//! Expression form: finds the Rust locals an `ein!(..)` expression captures (free names, in
//! order of first use) and their ranks, read from how they are used: the deepest direct
//! indexing (`a[i][j]` and `a[i, j]` are rank 2), or `a.shape(k)` (rank > k), or `a.len()`.
//! A name bound to a captured local (`let b = a;`, `fold t in 0..n, u = a { .. }`) is the same
//! array, so how it is used counts for the local too.

use crate::syntax::ast::{Binder, Expr, ExprKind, Pattern};
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
    /// The names bound in scope, innermost last, each with the capture it stands for, if it
    /// was bound to one.
    bound: Vec<(String, Option<usize>)>,
    captures: Vec<Capture>,
}

impl Scan {
    /// The capture `name` refers to (itself, or the one a bound name stands for), registered
    /// on first use.
    fn capture(&mut self, name: &Ident) -> Option<&mut Capture> {
        let position = self.capture_position(name)?;
        self.captures.get_mut(position)
    }

    fn capture_position(&mut self, name: &Ident) -> Option<usize> {
        let text = name.to_string();
        if let Some((_, alias)) = self.bound.iter().rev().find(|(bound, _)| *bound == text) {
            return *alias;
        }
        let position = match self.captures.iter().position(|c| c.name == text) {
            Some(position) => position,
            None => {
                self.captures.push(Capture { name: name.clone(), rank: 0 });
                self.captures.len() - 1
            }
        };
        Some(position)
    }

    /// The capture that binding `value` to a name makes the name stand for: `value` is a
    /// name that refers to one.
    fn alias_of(&mut self, value: &Expr) -> Option<usize> {
        match &value.kind {
            ExprKind::Name(name) => self.capture_position(name),
            _ => None,
        }
    }

    /// `depth` counts the indices applied directly around this expression.
    fn expr(&mut self, expr: &Expr, depth: usize) {
        match &expr.kind {
            ExprKind::Name(name) => {
                if let Some(capture) = self.capture(name) {
                    capture.rank = capture.rank.max(depth);
                }
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
                let alias = self.alias_of(init);
                let before = self.bound.len();
                self.bound.push((target.to_string(), alias));
                self.expr(body, 0);
                self.bound.truncate(before);
            }
            ExprKind::Update { target, indices, value, .. } => {
                let text = target.to_string();
                let alias = self.bound.iter().rev().find(|(bound, _)| *bound == text).and_then(|(_, alias)| *alias);
                if let Some(capture) = alias.and_then(|position| self.captures.get_mut(position)) {
                    capture.rank = capture.rank.max(indices.len());
                }
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
            ExprKind::Field { base, .. } => self.expr(base, 0),
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
        if let ExprKind::Name(name) = &array.kind {
            if let Some(capture) = self.capture(name) {
                capture.rank = capture.rank.max(minimum_rank);
                return;
            }
            return;
        }
        self.expr(array, 0);
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

    /// Binds the names of `pattern`; a lone name bound to a captured local stands for it.
    fn bind(&mut self, pattern: &Pattern, alias: Option<usize>) {
        match pattern {
            Pattern::Name(name) => self.bound.push((name.to_string(), alias)),
            Pattern::Tuple(items, _) => items.iter().for_each(|item| self.bind(item, None)),
        }
    }
}
