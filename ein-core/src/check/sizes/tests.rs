//! Unit tests of size inference on hand-built IR: candidates, canonical sizes through `let`s,
//! the choice of size and the checks between candidates.

use super::{canonical, key, resolve, Candidate, LetValues};
use crate::ir::node;
use crate::ir::shape::{int, length};
use crate::ir::{Expr, ExprKind, Type, VarId};
use crate::ops::Scalar;
use proc_macro2::Span;

fn var(id: u32, ty: Type) -> Expr {
    Expr::new(ExprKind::Var(VarId(id)), ty, Span::call_site())
}

fn matrix() -> Type {
    Type::array(Type::scalar(Scalar::F64), 2)
}

fn candidate(size: Expr, what: &str) -> Candidate {
    Candidate { size, what: what.to_string(), span: Span::call_site() }
}

#[test]
fn equal_candidates_need_no_check() {
    let a = var(0, matrix());
    let candidates = vec![candidate(length(a.clone(), 1), "axis 1 of `a`"), candidate(length(a, 1), "axis 1 of `a`")];
    let resolved = resolve("k", candidates, &LetValues::new(), |_| true).expect("resolves");
    assert!(resolved.checks.is_empty());
}

#[test]
fn different_candidates_become_one_check_each() {
    let (a, b, c) = (var(0, matrix()), var(1, matrix()), var(2, matrix()));
    let candidates = vec![
        candidate(length(a, 1), "axis 1 of `a`"),
        candidate(length(b, 0), "axis 0 of `b`"),
        candidate(length(c, 0), "axis 0 of `c`"),
    ];
    let resolved = resolve("k", candidates, &LetValues::new(), |_| true).expect("resolves");
    assert_eq!(key(&resolved.size), key(&length(var(0, matrix()), 1)));
    let pairs: Vec<(String, String)> =
        resolved.checks.iter().map(|check| (check.left_what.clone(), check.right_what.clone())).collect();
    assert_eq!(
        pairs,
        vec![
            ("axis 1 of `a`".to_string(), "axis 0 of `b`".to_string()),
            ("axis 1 of `a`".to_string(), "axis 0 of `c`".to_string())
        ]
    );
}

#[test]
fn unusable_candidates_are_skipped() {
    let (a, b) = (var(0, matrix()), var(1, matrix()));
    let candidates = vec![candidate(length(a, 0), "axis 0 of `a`"), candidate(length(b, 0), "axis 0 of `b`")];
    // Only `b` is in scope at the binder.
    let usable = |size: &Expr| crate::ir::visit::free_vars(size).iter().all(|v| *v == VarId(1));
    let resolved = resolve("i", candidates, &LetValues::new(), usable).expect("resolves");
    assert_eq!(key(&resolved.size), key(&length(var(1, matrix()), 0)));
    assert!(resolved.checks.is_empty());
    assert!(resolve("i", Vec::new(), &LetValues::new(), |_| true).is_none());
}

#[test]
fn sizes_are_seen_through_lets() {
    // let b = for i in 0..len(a, 0) { a[i] * 2 }   ⇒   len(b, 0) is len(a, 0)
    let a = var(0, Type::array(Type::scalar(Scalar::F64), 1));
    let body = Expr::new(ExprKind::Var(VarId(2)), Type::scalar(Scalar::F64), Span::call_site());
    let comprehension = Expr::new(
        ExprKind::For(node::For { index: VarId(2), size: Box::new(length(a.clone(), 0)), body: Box::new(body) }),
        Type::array(Type::scalar(Scalar::F64), 1),
        Span::call_site(),
    );
    let mut lets = LetValues::new();
    lets.insert(VarId(1), comprehension);
    let b = var(1, Type::array(Type::scalar(Scalar::F64), 1));
    assert_eq!(key(&canonical(&length(b, 0), &lets)), key(&length(a.clone(), 0)));
    // A scalar let of a size is seen through too: let n = len(a, 0).
    lets.insert(VarId(3), length(a.clone(), 0));
    assert_eq!(key(&canonical(&var(3, Type::I64), &lets)), key(&length(a, 0)));
    // Literals are their own canonical form.
    assert_eq!(key(&canonical(&int(4, Span::call_site()), &lets)), key(&int(4, Span::call_site())));
}
