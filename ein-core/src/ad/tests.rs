//! Structure tests of reverse mode: what the optimiser makes of a gradient. (Its values are
//! checked against dual numbers by `tests/derivatives_match_duals.rs` and the integration
//! suite's `vjp` tests.)

use crate::ir::{Expr, ExprKind, Program};

fn checked(source: &str) -> Program {
    let tokens: proc_macro2::TokenStream = source.parse().expect("test source tokenises");
    let input = crate::syntax::parse_input(tokens).expect("parses");
    let mut units = crate::check::check_input(input).expect("checks");
    units.remove(0).program
}

/// The optimised gradient of the first function of `source`, by every float parameter.
fn gradient(source: &str) -> Program {
    let primal = checked(source);
    let wrt: Vec<_> =
        primal.params.iter().copied().filter(|param| super::build::has_float(&primal.var(*param).ty)).collect();
    let program = super::vjp::vjp_program(&primal, true, &wrt).expect("differentiates");
    crate::passes::run_pipeline(program, "test").expect("pipeline")
}

fn count(expr: &Expr, what: &impl Fn(&Expr) -> bool) -> usize {
    let mut found = usize::from(what(expr));
    expr.for_each_child(|child| found += count(child, what));
    found
}

/// What a body of `let`s and checks ends in.
fn tail(expr: &Expr) -> &Expr {
    match &expr.kind {
        ExprKind::Let(crate::ir::node::Let { body, .. }) | ExprKind::Assert(crate::ir::node::Assert { body, .. }) => {
            tail(body)
        }
        _ => expr,
    }
}

/// The value the `let`s of a body bind to `var`.
fn bound_value(expr: &Expr, var: crate::ir::VarId) -> Option<&Expr> {
    match &expr.kind {
        ExprKind::Let(crate::ir::node::Let { var: bound, value, .. }) if *bound == var => Some(value),
        ExprKind::Let(crate::ir::node::Let { body, .. }) | ExprKind::Assert(crate::ir::node::Assert { body, .. }) => {
            bound_value(body, var)
        }
        _ => None,
    }
}

fn contractions(program: &Program) -> usize {
    count(&program.body, &|expr| matches!(expr.kind, ExprKind::Contract(_)))
}

fn accums(program: &Program) -> usize {
    count(&program.body, &|expr| matches!(expr.kind, ExprKind::Accum(_)))
}

#[test]
fn matrix_gradients_of_a_network_are_contractions() {
    // Forward: two products. Backward: the hidden layer's adjoint and both weights' gradients.
    let program = gradient(
        "fn loss(x: [[f32]], labels: [usize], w1: [[f32]], w2: [[f32]]) -> f32 {
            let h = for b, j { tanh(sum k { x[b, k] * w1[k, j] }) };
            let logits = for b, c { sum j { h[b, j] * w2[j, c] } };
            sum b {
                let m = max c { logits[b, c] };
                m + ln(sum c { exp(logits[b, c] - m) }) - logits[b, labels[b]]
            }
        }",
    );
    // x's adjoint is a product too (x is a float parameter): six in all.
    assert_eq!(contractions(&program), 6, "{program}");
    // The only scattered adjoint is the gather through the labels.
    assert_eq!(accums(&program), 1, "{program}");
}

#[test]
fn a_matrix_vector_product_is_computed_once_and_transposed_once() {
    let program = gradient(
        "fn loss(x: [[f64]], w: [f64]) -> f64 {
            let p = for i { 1.0 / (1.0 + exp(-sum k { x[i, k] * w[k] })) };
            sum i { ln(p[i]) }
        }",
    );
    // x w forward, then xᵀ s̄ for w (x's adjoint, s̄ wᵀ, is an outer product: no sum).
    assert_eq!(contractions(&program), 2, "{program}");
    assert_eq!(accums(&program), 0, "{program}");
}

#[test]
fn a_value_and_its_sweep_share_a_lifted_product() {
    // Least squares: the loss `sum i { r * r } / n` (a lifted `x w` inside an operand of the
    // division) and the sweep read the same `x w`, computed once: two passes over `x` (`x w`
    // and `xᵀ r̄`), not three.
    let program = gradient(
        "fn lsq(x: [[f64]], y: [f64], w: [f64]) -> f64 {
            sum i { let r = sum k { x[i, k] * w[k] } - y[i]; r * r } / (y.len() as f64)
        }",
    );
    let reads_of_x = count(&program.body, &|expr| {
        matches!(&expr.kind, ExprKind::Contract(contraction) if contraction.operands.iter().any(|operand|
            matches!(operand.array.kind, ExprKind::Var(var) if program.var(var).name == "x")))
    });
    assert_eq!(reads_of_x, 2, "{program}");
    let ExprKind::Tuple(results) = &tail(&program.body).kind else { panic!("a tuple: {program}") };
    let ExprKind::Var(value) = results[0].kind else { panic!("a bound value: {program}") };
    let value = bound_value(&program.body, value).expect("the value's let");
    let reads_x = count(value, &|expr| {
        matches!(&expr.kind, ExprKind::Index(read) if count(&read.array, &|base|
            matches!(base.kind, ExprKind::Var(var) if program.var(var).name == "x")) > 0)
    });
    assert_eq!(reads_x, 0, "the value reads the product, not x: {program}");
}

#[test]
fn invariant_reductions_inside_a_loss_are_lifted_before_the_sweep() {
    // Left inside `sum i`, each would be recomputed per `i` and its adjoint scattered by an
    // accumulation over `i` and `k`: O(n²) (the naive softmax's, O(n m³)).
    for source in [
        "fn f(x: [f64]) -> f64 { sum i { x[i] * sum k { x[k] * x[k] } } }",
        "fn f(x: [f64]) -> f64 { sum i { exp(x[i] - max k { x[k] }) } }",
        "fn f(x: [f64]) -> f64 { sum i { let d = x[i] - sum k { x[k] } / (x.len() as f64); d * d } }",
        "fn f(x: [[f64]], y: [[f64]]) -> f64 {
            sum i, j { exp(x[i, j] - max k { x[i, k] }) / sum k { exp(x[i, k] - max l { x[i, l] }) } * y[i, j] }
        }",
    ] {
        let program = gradient(source);
        assert_eq!(accums(&program), 0, "{source}: {program}");
    }
}

#[test]
fn reads_of_part_of_an_axis_are_accumulated() {
    // Neither `a[i + 1]` nor `a[i]` reads the whole axis (`i` stops one short): both adjoints
    // are scattered, by accumulations.
    let program = gradient("fn f(a: [f64]) -> f64 { sum i in 0..a.len() - 1 { a[i + 1] * a[i] } }");
    assert_eq!(accums(&program), 2, "{program}");
}

fn scans(program: &Program) -> usize {
    count(&program.body, &|expr| matches!(expr.kind, ExprKind::Scan(_)))
}

#[test]
fn a_stencil_fold_runs_backwards_without_a_tape() {
    // The step is affine in the state: its adjoint reads no state, so no states are saved and
    // only the last adjoint is kept (a fold, no scan). Each shifted read's adjoint is a gather
    // in the one backward comprehension, plus a short accumulation of the steps that clamped.
    let program = gradient(
        "fn f(g: [[f64]], n: usize) -> f64 {
            let out = fold t in 0..n, s = g {
                for i, j { s[i, j] + 0.1 * (s[i + 1, j] + s[i - 1, j] + s[i, j + 1] + s[i, j - 1] - 4.0 * s[i, j]) }
            };
            sum i, j { out[i, j] * out[i, j] }
        }",
    );
    assert_eq!(scans(&program), 0, "{program}");
    assert_eq!(accums(&program), 4, "{program}");
    // The gradient is the backward fold's last adjoint itself, not a copy of it.
    let ExprKind::Tuple(results) = &tail(&program.body).kind else { panic!("a (value, gradient) pair: {program}") };
    let ExprKind::Var(adjoint) = results[1].kind else { panic!("a bound gradient: {program}") };
    assert!(
        matches!(bound_value(&program.body, adjoint).map(|value| &value.kind), Some(ExprKind::Fold(_))),
        "{program}"
    );
    // A step that multiplies states needs them: one scan saves them (the tape).
    let program = gradient(
        "fn f(g: [f64], n: usize) -> f64 {
            let out = fold t in 0..n, s = g { for i { s[i] * s[i + 1] } };
            sum i { out[i] }
        }",
    );
    assert_eq!(scans(&program), 1, "{program}");
}

#[test]
fn a_history_needs_loops_of_fixed_ranges() {
    // `*=` mixed with `+=` records what each update finds, one axis per loop: a loop whose
    // range depends on the loop around it is refused, by both modes, at that loop.
    let source = "fn f(counts: [i64], m: [f64], h0: [f64]) -> [f64] {
        accum h = h0 { for r { for k in 0..counts[r] { h[k] *= m[r]; h[r] += m[k] } } }
    }";
    let primal = checked(source);
    let wrt: Vec<_> =
        primal.params.iter().copied().filter(|param| super::build::has_float(&primal.var(*param).ty)).collect();
    let errors =
        [super::vjp::vjp_program(&primal, true, &wrt).map(|_| ()), super::jvp::jvp_program(&primal).map(|_| ())];
    for error in errors {
        let message = error.expect_err("refused").to_string();
        assert!(message.contains("cannot differentiate `accum h` mixing `+=` and `*=`"), "{message}");
    }
    // Fixed ranges (or `+=` alone over varying ones) differentiate.
    let fixed = source.replace("0..counts[r]", "0..m.len()");
    assert!(super::vjp::vjp_program(&checked(&fixed), true, &wrt).is_ok());
    let added = source.replace("h[k] *= m[r];", "");
    assert!(super::vjp::vjp_program(&checked(&added), true, &wrt).is_ok());
}
