//! Expression form: finds the Rust locals an `ein!(..)` expression captures (free names, in
//! order of first use) and their ranks, read from how they are used: the deepest direct
//! indexing (`a[i][j]` and `a[i, j]` are rank 2), or `a.shape(k)` (rank > k), or `a.len()`.

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
    bound: Vec<String>,
    captures: Vec<Capture>,
}

impl Scan {
    fn capture(&mut self, name: &Ident) -> Option<&mut Capture> {
        let text = name.to_string();
        if self.bound.contains(&text) {
            return None;
        }
        let position = match self.captures.iter().position(|c| c.name == text) {
            Some(position) => position,
            None => {
                self.captures.push(Capture { name: name.clone(), rank: 0 });
                self.captures.len() - 1
            }
        };
        self.captures.get_mut(position)
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
            ExprKind::Fold { index, count, acc, init, body } => {
                self.expr(init, 0);
                self.expr(count, 0);
                let before = self.bound.len();
                self.bound.push(index.to_string());
                self.pattern(acc);
                self.expr(body, 0);
                self.bound.truncate(before);
            }
            ExprKind::Let { pattern, value, body } => {
                self.expr(value, 0);
                let before = self.bound.len();
                self.pattern(pattern);
                self.expr(body, 0);
                self.bound.truncate(before);
            }
            ExprKind::Field { base, .. } => self.expr(base, 0),
            ExprKind::If { cond, then, otherwise } => {
                self.expr(cond, 0);
                self.expr(then, 0);
                self.expr(otherwise, 0);
            }
            ExprKind::Tuple(items) | ExprKind::Call { args: items, .. } => {
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
    fn binders(&mut self, binders: &[Binder]) {
        for binder in binders {
            if let Some(size) = &binder.size {
                self.expr(size, 0);
            }
            self.bound.push(binder.name.to_string());
        }
    }

    fn pattern(&mut self, pattern: &Pattern) {
        match pattern {
            Pattern::Name(name) => self.bound.push(name.to_string()),
            Pattern::Tuple(items, _) => items.iter().for_each(|item| self.pattern(item)),
        }
    }
}
