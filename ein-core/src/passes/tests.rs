//! Structure tests (Futhark's `structure { … }`): after the pipeline, a program compiles to a
//! stated number of loop nests, materialised temporaries and reductions per loop level. They
//! keep fusion and hoisting fixed once achieved.

use super::by_columns::Mirror;
use crate::ir::node;
use crate::ir::{Expr, ExprKind, Program, Type};
use crate::ops::Func;

/// The checked program of `source`'s first function, before the pipeline.
fn checked(source: &str) -> Program {
    let tokens: proc_macro2::TokenStream = source.parse().expect("test source tokenises");
    let input = crate::syntax::parse_input(tokens).expect("parses");
    let mut units = crate::check::check_input(input).unwrap_or_else(|error| panic!("{source}: {error}"));
    units.remove(0).program
}

fn optimised(source: &str) -> Program {
    super::run_pipeline(checked(source), "test").expect("pipeline")
}

fn walk<'a>(expr: &'a Expr, parents: &mut Vec<&'a Expr>, visit: &mut impl FnMut(&'a Expr, &[&'a Expr])) {
    visit(expr, parents);
    parents.push(expr);
    expr.for_each_child(|child| walk(child, parents, visit));
    parents.pop();
}

/// Loop nests: comprehensions not inside another comprehension.
fn loop_nests(program: &Program) -> usize {
    let mut count = 0;
    walk(&program.body, &mut Vec::new(), &mut |expr, parents| {
        let nested_in_for = parents.iter().any(|parent| matches!(parent.kind, ExprKind::For(_)));
        if matches!(expr.kind, ExprKind::For(_)) && !nested_in_for {
            count += 1;
        }
    });
    count
}

/// `let`s that hold a whole array: temporaries the generated code allocates.
fn array_temporaries(program: &Program) -> usize {
    let mut count = 0;
    walk(&program.body, &mut Vec::new(), &mut |expr, _| {
        if let ExprKind::Let(node::Let { value, .. }) = &expr.kind {
            if value.ty.rank() > 0 && super::transposition_of(value).is_none() {
                count += 1;
            }
        }
    });
    count
}

/// Reductions nested inside the loop over the index called `index` (at any depth).
fn reductions_inside(program: &Program, index: &str) -> usize {
    let mut count = 0;
    walk(&program.body, &mut Vec::new(), &mut |expr, parents| {
        let under = parents.iter().any(|parent| match &parent.kind {
            ExprKind::For(node::For { index: var, .. }) | ExprKind::Reduce(node::Reduce { index: var, .. }) => {
                program.var(*var).name == index
            }
            _ => false,
        });
        if matches!(expr.kind, ExprKind::Reduce(_)) && under {
            count += 1;
        }
    });
    count
}

fn reductions(program: &Program) -> usize {
    let mut count = 0;
    walk(&program.body, &mut Vec::new(), &mut |expr, _| count += matches!(expr.kind, ExprKind::Reduce(_)) as usize);
    count
}

#[test]
fn naive_softmax_computes_one_max_and_one_sum_per_row() {
    let program = optimised(
        "fn softmax(x: [[f32]]) -> [[f32]] {
            for i, j { exp(x[i, j] - max k { x[i, k] }) / sum k { exp(x[i, k] - max l { x[i, l] }) } }
        }",
    );
    assert_eq!(reductions(&program), 2, "{program}");
    assert_eq!(reductions_inside(&program, "i"), 2, "{program}");
    assert_eq!(reductions_inside(&program, "j"), 0, "{program}");
    assert_eq!(loop_nests(&program), 1, "{program}");
    // The exponentials of a row are computed once, into a row-sized array that the sum and
    // the output both read (`share_rows`): one temporary of rank 1, one `exp` per element.
    assert_eq!(array_temporaries(&program), 1, "{program}");
    assert_eq!(calls(&program, Func::Exp), 1, "{program}");
}

fn calls(program: &Program, func: Func) -> usize {
    let mut count = 0;
    walk(&program.body, &mut Vec::new(), &mut |expr, _| {
        count += matches!(&expr.kind, ExprKind::Call(node::Call { func: called, .. }) if *called == func) as usize
    });
    count
}

#[test]
fn share_rows_needs_a_transcendental_term_over_the_same_range() {
    // Shared: `sin(a[k])` in the sum and `sin(a[j])` in the comprehension after it.
    let shared = optimised("fn f(a: [f64]) -> [f64] { let s = sum k { sin(a[k]) }; for j { sin(a[j]) / s } }");
    assert_eq!((array_temporaries(&shared), calls(&shared, Func::Sin)), (1, 1), "{shared}");
    // A subterm of the summed term: `sin(a[k])` inside `sin(a[k]) * sin(a[k])`.
    let inner =
        optimised("fn f(a: [f64]) -> [f64] { let s = sum k { sin(a[k]) * sin(a[k]) }; for j { sin(a[j]) / s } }");
    assert_eq!((array_temporaries(&inner), calls(&inner, Func::Sin)), (1, 1), "{inner}");
    // Cheap terms are recomputed; other ranges and other terms are left alone.
    let cases = [
        "fn f(a: [f64]) -> [f64] { let s = sum k { a[k] * a[k] }; for j { a[j] * a[j] / s } }",
        "fn f(a: [f64], b: [f64]) -> [f64] { let s = sum k { exp(a[k]) }; for j { exp(b[j]) / s } }",
    ];
    for source in cases {
        let program = optimised(source);
        assert_eq!(array_temporaries(&program), 0, "{source}\n{program}");
    }
}

#[test]
fn share_steps_computes_a_costly_term_once_per_step_for_every_element() {
    // The N-body step: the distance, its square root and the product with it do not depend on
    // the component `c`: one array per row `i`, one `sqrt` and one inner sum per `(i, j)`.
    let nbody = optimised(
        "fn f(x: [[f64]], m: [f64]) -> [[f64]] {
            for i, c { sum j { let r2 = sum d { (x[j, d] - x[i, d]) * (x[j, d] - x[i, d]) } + 0.01;
                               m[j] * (x[j, c] - x[i, c]) / (r2 * sqrt(r2)) } }
        }",
    );
    assert_eq!((array_temporaries(&nbody), calls(&nbody, Func::Sqrt)), (1, 1), "{nbody}");
    assert_eq!(reductions_inside(&nbody, "c"), 1, "{nbody}");
    // A term of the summed index alone rises above every comprehension: computed once.
    let once =
        optimised("fn f(a: [f64], b: [[f64]]) -> [[f64]] { for i, c { sum j { exp(a[j]) * b[j, c] * b[i, c] } } }");
    assert_eq!((array_temporaries(&once), loop_nests(&once)), (1, 2), "{once}");
    // Not over a size that may be negative: the array's loop would run (and fail) even where
    // the comprehension has no element (found by the long property run, seed 0x5eed0fe1a5).
    let maybe_negative = optimised(
        "fn f(a: [f64], b: [[f64]]) -> [[f64]] { for i, c { sum j in 0..a.len() - 1 { exp(a[j]) * b[j, c] * b[i, c] } } }",
    );
    assert_eq!(array_temporaries(&maybe_negative), 0, "{maybe_negative}");
    // A cheap factor is shared when that leaves a product of two reads: a contraction.
    let gradient =
        optimised("fn f(x: [[f64]], p: [f64], y: [f64]) -> [f64] { for k { sum i { (p[i] - y[i]) * x[i, k] } } }");
    let contractions = |program: &Program| {
        let mut count = 0;
        walk(&program.body, &mut Vec::new(), &mut |expr, _| {
            count += matches!(expr.kind, ExprKind::Contract(_)) as usize
        });
        count
    };
    assert_eq!((array_temporaries(&gradient), contractions(&gradient)), (1, 1), "{gradient}");
    // Not per row when the factor reads an outer index (one small product per row): the
    // nest is `contract`'s, which computes the factor for the whole nest, one product.
    let per_row =
        optimised("fn f(a: [[f64]], b: [[f64]], s: f64) -> [[f64]] { for i, j { sum k { s * a[i, k] * b[k, j] } } }");
    assert_eq!((array_temporaries(&per_row), contractions(&per_row)), (1, 1), "{per_row}");
    assert!(matches!(per_row.body.kind, ExprKind::Let(_) | ExprKind::Assert(_)), "{per_row}");
    // Cheap terms, terms of the element's own index, terms that may fail, and comprehensions
    // of one element are left alone.
    let cases = [
        "fn f(x: [[f64]], m: [f64]) -> [[f64]] { for i, c { sum j { m[j] * m[j] * x[j, c] * x[i, c] } } }",
        "fn f(x: [[f64]]) -> [[f64]] { for i, c { sum j { exp(x[j, c]) * x[i, c] } } }",
        "fn f(x: [[i64]], m: [i64]) -> [[i64]] { for i, c { sum j { 100 / m[j] * x[j, c] * x[i, c] } } }",
        "fn f(x: [[f64]], m: [f64]) -> [[f64]] { for i, c in 0..1 { sum j { exp(m[j] * x[j, i]) } } }",
    ];
    for source in cases {
        let program = optimised(source);
        assert_eq!(array_temporaries(&program), 0, "{source}\n{program}");
    }
}

#[test]
fn a_torus_reads_in_bounds_and_wraps_each_row_once() {
    // Game of Life on a torus: the wrapped reads are proven in bounds (no clamps), and the
    // wrap of the row index, a remainder by the row loop's own size, leaves the inner loop.
    let life = optimised(
        "fn life(g: [[u8]]) -> [[u8]] {
            let h = g.len();
            let w = g.shape(1);
            for i, j {
                let up = (i + h - 1) % h;
                let down = (i + 1) % h;
                let left = (j + w - 1) % w;
                let right = (j + 1) % w;
                let n = g[up, left] + g[up, j] + g[up, right] + g[i, left] + g[i, right]
                    + g[down, left] + g[down, j] + g[down, right];
                if n == 3 || (n == 2 && g[i, j] == 1) { 1 } else { 0 }
            }
        }",
    );
    let mut clamped = 0;
    let mut remainders_in_j = 0;
    walk(&life.body, &mut Vec::new(), &mut |expr, parents| {
        clamped +=
            matches!(&expr.kind, ExprKind::Index(node::Index { bounds: crate::ir::Bounds::Clamped, .. })) as usize;
        let in_j = parents.iter().any(
            |parent| matches!(&parent.kind, ExprKind::For(node::For { index, .. }) if life.var(*index).name == "j"),
        );
        let remainder = matches!(&expr.kind, ExprKind::Binary(node::Binary { op: crate::ops::BinaryOp::Rem, .. }));
        remainders_in_j += (remainder && in_j) as usize;
    });
    assert_eq!((clamped, remainders_in_j), (0, 2), "{life}");
    // Not proven: a dividend that may be negative, a divisor that is not the axis.
    for source in [
        "fn f(g: [f64]) -> [f64] { let h = g.len(); for i in 0..h { g[(i - 1) % h] } }",
        "fn f(g: [f64], n: i64) -> [f64] { for i in 0..g.len() { g[(i + 1) % n] } }",
    ] {
        let program = optimised(source);
        let mut clamped = 0;
        walk(&program.body, &mut Vec::new(), &mut |expr, _| {
            clamped +=
                matches!(&expr.kind, ExprKind::Index(node::Index { bounds: crate::ir::Bounds::Clamped, .. })) as usize;
        });
        assert_eq!(clamped, 1, "{source}\n{program}");
    }
}

#[test]
fn softmax_with_let_inside_the_element_is_hoisted_too() {
    let program = optimised(
        "fn softmax(x: [[f32]]) -> [[f32]] {
            for i, j { let m = max k { x[i, k] }; exp(x[i, j] - m) / sum k { exp(x[i, k] - m) } }
        }",
    );
    assert_eq!(reductions(&program), 2, "{program}");
    assert_eq!(reductions_inside(&program, "j"), 0, "{program}");
}

#[test]
fn naive_layernorm_computes_each_statistic_once_per_row() {
    let program = optimised(
        "fn layernorm(x: [[f32]], eps: f32) -> [[f32]] {
            for i, j {
                (x[i, j] - sum k { x[i, k] } / (x.shape(1) as f32))
                    / sqrt(sum k { (x[i, k] - sum l { x[i, l] } / (x.shape(1) as f32))
                                 * (x[i, k] - sum l { x[i, l] } / (x.shape(1) as f32)) } / (x.shape(1) as f32) + eps)
            }
        }",
    );
    // One mean and one variance per row; the mean inside the variance is the same mean; no
    // temporary (the squared deviations are cheap to recompute).
    assert_eq!(reductions(&program), 2, "{program}");
    assert_eq!(array_temporaries(&program), 0, "{program}");
    assert_eq!(reductions_inside(&program, "j"), 0, "{program}");
    assert_eq!(reductions_inside(&program, "k"), 0, "{program}");
}

#[test]
fn a_comprehension_consumed_once_is_fused() {
    let program = optimised("fn f(a: [f64]) -> [f64] { let g = for i { exp(a[i]) }; for i { sqrt(g[i]) } }");
    assert_eq!(loop_nests(&program), 1, "{program}");
    assert_eq!(array_temporaries(&program), 0, "{program}");
    let program = optimised("fn f(a: [f64]) -> f64 { let g = for i { a[i] * a[i] }; sum k { g[k] } }");
    assert_eq!(loop_nests(&program), 0, "{program}");
    assert_eq!(array_temporaries(&program), 0, "{program}");
    let program = optimised("fn f(a: [f64]) -> f64 { (for i { a[i] * 2.0 })[0] }");
    assert_eq!(loop_nests(&program), 1, "an index that is not proven keeps the producer: {program}");
}

#[test]
fn a_comprehension_read_twice_per_element_is_fused_into_one_let() {
    // A log-loss: `p[i]` twice in one step of the sum, one `exp` per element, no array.
    let program = optimised(
        "fn f(z: [f64], y: [f64]) -> f64 {
            let p = for i { 1.0 / (1.0 + exp(-z[i])) };
            sum i { y[i] * ln(p[i]) + (1.0 - y[i]) * ln(1.0 - p[i]) }
        }",
    );
    assert_eq!(array_temporaries(&program), 0, "{program}");
    assert_eq!(calls(&program, Func::Exp), 1, "{program}");
    // An element with a loop of its own stays an array: in the consumer's step it would keep
    // the step's `ln` from being vectorised across `i`.
    let program = optimised(
        "fn f(x: [[f64]], y: [f64], w: [f64]) -> f64 {
            let p = for i { 1.0 / (1.0 + exp(-sum k { x[i, k] * w[k] })) };
            sum i { y[i] * ln(p[i]) + (1.0 - y[i]) * ln(1.0 - p[i]) }
        }",
    );
    // (The dot products stay in `p`'s element: a matrix–vector product along the rows is not
    // taken out of its consumer.)
    assert_eq!(array_temporaries(&program), 1, "p: {program}");
    // Rank 2, read in a comprehension.
    let program = optimised(
        "fn f(a: [[f64]]) -> [[f64]] { let e = for i, j { exp(a[i, j]) }; for i, j { e[i, j] * e[i, j] + e[i, j] } }",
    );
    assert_eq!((array_temporaries(&program), loop_nests(&program)), (0, 1), "{program}");
    assert_eq!(calls(&program, Func::Exp), 1, "{program}");
    // Reads of different elements, or at different depths, keep the array.
    for source in [
        "fn f(a: [f64]) -> [f64] { let e = for i { exp(a[i]) }; for i { e[i] + sum k { e[k] } } }",
        "fn f(a: [f64]) -> [f64] { let e = for i { exp(a[i]) }; for i { e[i] * e[e.len() - 1 - i] } }",
        "fn f(a: [[f64]]) -> [[f64]] { let e = for i { exp(a[i, 0]) }; for i, j { e[i] * e[i] + a[i, j] } }",
    ] {
        assert_eq!(array_temporaries(&optimised(source)), 1, "{source}: {}", optimised(source));
    }
}

#[test]
fn an_expensive_comprehension_read_many_times_is_computed_once() {
    // Each element of `g` is read once per `j`: fusing would repeat `exp` n times.
    let program = optimised(
        "fn f(a: [f64], b: [[f64]]) -> [f64] { let g = for k { exp(a[k]) }; for j { sum k { g[k] * b[j, k] } } }",
    );
    assert_eq!(array_temporaries(&program), 1, "{program}");
    assert_eq!(loop_nests(&program), 2, "{program}");
}

#[test]
fn invariant_reductions_leave_inner_reductions() {
    let program = optimised("fn f(a: [f64], b: [f64]) -> f64 { sum k { a[k] * sum l { b[l] } } }");
    assert_eq!(reductions_inside(&program, "k"), 0, "{program}");
}

#[test]
fn nothing_that_can_fail_moves_out_of_a_loop() {
    // `argmax` panics on an empty range: lifting it out of a loop that may run zero times would
    // add an error, so it stays inside.
    let program = optimised("fn f(a: [f64], n: usize) -> [usize] { for i in 0..n { argmax k { a[k] } } }");
    assert_eq!(reductions_inside(&program, "i"), 1, "{program}");
}

#[test]
fn an_invariant_holding_every_failure_of_its_loop_leaves_it_behind_a_guard() {
    // The body's only places that can fail are in the invariant, evaluated once per `i`: its
    // first evaluation is where the loop would fail, so it moves (computed when `i` runs).
    for source in [
        "fn f(x: [f64], lo: f64, hi: f64) -> [f64] { for i { x[i] + sum k { x[k].clamp(lo, hi) } } }",
        "fn f(a: [i64], b: [i64], d: i64) -> [i64] { for i { a[i] + sum k { b[k] / d } } }",
        "fn f(a: [f64], y: [f64], idx: [usize]) -> [f64] { for i { a[i] + sum k { y[idx[k]] } } }",
    ] {
        assert_eq!(reductions_inside(&optimised(source), "i"), 0, "{source}: {}", optimised(source));
    }
    // Out of two loops, one guard each (evaluated when both run).
    let program =
        optimised("fn f(a: [[i64]], b: [i64], d: i64) -> [[i64]] { for i, j { a[i, j] + sum k { b[k] / d } } }");
    assert_eq!(reductions_inside(&program, "i"), 0, "{program}");
    // Another place that can fail (`/ e`, evaluated first), or the invariant inside an inner
    // loop beside another such place (evaluated only if that loop runs): it stays.
    for source in [
        "fn f(a: [i64], b: [i64], d: i64, e: i64) -> [i64] { for i { a[i] / e + sum k { b[k] / d } } }",
        "fn f(a: [[i64]], b: [i64], d: i64, e: i64) -> [i64] { for i { sum j { a[i, j] / e + sum k { b[k] / d } } } }",
    ] {
        assert!(reductions_inside(&optimised(source), "i") > 0, "{source}: {}", optimised(source));
    }
}

#[test]
fn records_are_stored_as_one_array_per_field() {
    let tokens: proc_macro2::TokenStream =
        "fn f(a: [f64], b: [f64]) -> [{re: f64, im: f64}] { for i { { re: a[i] * 2.0, im: b[i] } } }".parse().unwrap();
    let generated = crate::compile(tokens).expect("compiles");
    let generated = crate::codegen::tests::portable_copy(generated).expect("one function").to_string();
    assert_eq!(generated.matches("Buffer ::").count(), 2, "{generated}");
    assert!(!generated.contains("Buffer :: < ("), "no buffer of tuples: {generated}");
}

/// The checked program, then the program after one pass, both printed.
fn before_and_after(source: &str, pass: fn(Program) -> Program) -> (String, String) {
    let tokens: proc_macro2::TokenStream = source.parse().expect("test source tokenises");
    let input = crate::syntax::parse_input(tokens).expect("parses");
    let program = crate::check::check_input(input).expect("checks").remove(0).program;
    let before = program.to_string();
    let after = pass(program);
    super::validate(&after).expect("the pass keeps the IR valid");
    (before, after.to_string())
}

#[test]
fn reductions_over_a_column_are_computed_once_per_column() {
    // A column's maximum, total or mean, written inside `for i, j`: one array over the
    // columns before the rows, no reduction left under `i`.
    for source in [
        "fn f(x: [[f64]]) -> [[f64]] { for i, j { exp(x[i, j] - max k { x[k, j] }) / sum k { exp(x[k, j] - max l { x[l, j] }) } } }",
        "fn f(x: [[f64]]) -> [[f64]] { let n = x.len() as f64; for i, j { x[i, j] - sum k { x[k, j] } / n } }",
        "fn f(x: [[f32]]) -> [[f32]] { for i, j { let m = sum k { x[k, j] } / 4.0; let v = sum k { (x[k, j] - m) * (x[k, j] - m) }; (x[i, j] - m) / sqrt(v + 0.001) } }",
    ] {
        let program = optimised(source);
        assert_eq!(reductions_inside(&program, "i"), 0, "{program}");
        assert!(array_temporaries(&program) >= 1, "{program}");
    }
    // A reduction that may fail (an integer division by a parameter) stays in place.
    let program = optimised("fn f(x: [[i64]], d: i64) -> [[i64]] { for i, j { x[i, j] + sum k { x[k, j] / d } } }");
    assert_eq!(reductions_inside(&program, "i"), 1, "{program}");
}

#[test]
fn hoist_lifts_an_invariant_reduction_out_of_its_loop() {
    let (_, after) =
        before_and_after("fn f(a: [f64], b: [f64]) -> f64 { sum k { a[k] * sum l { b[l] } } }", super::hoist::hoist);
    assert_eq!(
        after,
        "fn(a: [f64], b: [f64]) -> f64\nlet __ein_sum: f64 = sum l in 0..len(b, 0) { b[l] }\nsum k in 0..len(a, 0) { a[k] * __ein_sum }"
    );
}

#[test]
fn clamped_reads_inside_a_loop_over_their_own_axis_cannot_fail() {
    // `y[k + 1]` clamps to `y`'s axis, which the sum over that axis only reads when it is not
    // empty: the sum cannot fail and leaves the loop over `i`.
    for (source, outer) in [
        ("fn f(x: [f64], y: [f64]) -> [f64] { for i { x[i] + sum k { y[k + 1] } } }", "i"),
        ("fn f(x: [f64], y: [f64]) -> [f64] { for i { x[i] / sum k { abs(y[k + 1] - y[k]) } } }", "i"),
        ("fn f(a: [[f64]]) -> [[f64]] { for i, j { a[i, j] - sum k { a[i, k + 1] - a[i, k] } } }", "j"),
    ] {
        let program = optimised(source);
        assert_eq!(reductions_inside(&program, outer), 0, "{program}");
    }
    // A read clamped to another array's axis may fail (that array empty, the loop not); the
    // sum holds the only such read of the body, so it leaves behind a guard.
    let program =
        optimised("fn f(x: [f64], y: [f64], z: [f64]) -> [f64] { for i { x[i] + sum k { y[k] * z[k + 1] } } }");
    assert_eq!(reductions_inside(&program, "i"), 0, "{program}");
    assert!(program.to_string().contains("if len(x, 0) > 0 { 1 } else { 0 }"), "{program}");
}

#[test]
fn values_failing_only_on_an_empty_loop_leave_it_behind_a_guard() {
    // `argmax k { x[k] }` fails on an empty `x` only, and `for i` over `x` runs only when it is
    // not empty: the read of the maximum leaves the loop behind `if len(x, 0) > 0`.
    let program = optimised("fn f(x: [f64]) -> [f64] { for i { x[i] - x[argmax k { x[k] }] } }");
    assert_eq!(reductions_inside(&program, "i"), 0, "{program}");
    assert!(program.to_string().contains("if len(x, 0) > 0 { 1 } else { 0 }"), "{program}");
    // The same per column: once per column, before the rows.
    let program = optimised("fn f(a: [[f64]]) -> [[f64]] { for i, j { a[i, j] - a[argmax k { a[k, j] }, j] } }");
    assert_eq!(reductions_inside(&program, "i"), 0, "{program}");
    // An argmax over another array's axis may fail while the loop runs, but nothing else in
    // the body can: it leaves behind the guard too (see the next test).
    let program = optimised("fn f(x: [f64], y: [f64]) -> [f64] { for i { x[i] - y[argmax k { y[k] }] } }");
    assert_eq!(reductions_inside(&program, "i"), 0, "{program}");
}

#[test]
fn reductions_over_a_range_that_grows_with_the_row_leave_the_columns() {
    // A causal softmax: `0..i + 1` is never negative (`i` is an index), and the clamped reads
    // of `s`'s axis 1 fail only when `for j` over that axis runs zero times, so `m` and `z`
    // are computed once per row, behind the guard, not once per element.
    let program = optimised(
        "fn f(s: [[f32]]) -> [[f32]] {
            for i, j {
                let m = max k in 0..i + 1 { s[i, k] };
                let z = sum k in 0..i + 1 { exp(s[i, k] - m) };
                if j <= i { exp(s[i, j] - m) / z } else { 0.0 }
            }
        }",
    );
    assert_eq!(reductions_inside(&program, "j"), 0, "{program}");
    assert_eq!(reductions_inside(&program, "i"), 2, "{program}");
    // A range that may be negative (`n - i`, `n` a parameter) keeps its reduction in place.
    let program = optimised("fn f(x: [f64], n: i64) -> [f64] { for i { sum k in 0..n - i { x[k] } + x[i] } }");
    assert_eq!(reductions_inside(&program, "i"), 1, "{program}");
}

#[test]
fn cse_shares_alpha_equivalent_terms() {
    let (_, after) = before_and_after(
        "fn f(x: [f64]) -> f64 { let m = max k { x[k] }; m + max l { x[l] } }",
        super::cse::eliminate_common_subexpressions,
    );
    assert_eq!(after, "fn(x: [f64]) -> f64\nlet m: f64 = max k in 0..len(x, 0) { x[k] }\nm + m");
}

#[test]
fn inline_fuses_a_producer_into_its_consumer() {
    let (_, after) = before_and_after(
        "fn f(a: [f64]) -> [f64] { let g = for i { a[i] * 2.0 }; for j { g[j] + 1.0 } }",
        super::inline::inline,
    );
    assert_eq!(after, "fn(a: [f64]) -> [f64]\nfor j in 0..len(a, 0) {\n  { let i: i64 = j; a[i] * 2.0 } + 1.0\n}");
}

#[test]
fn simplify_folds_exact_integer_algebra_only() {
    let (_, after) = before_and_after(
        "fn f(a: [f64], n: i64) -> f64 { let unused = sum i { a[i] }; let m = n; a[m * 1 + 0] + (2 + 3) as f64 + 0.0 }",
        super::simplify::simplify,
    );
    assert_eq!(after, "fn(a: [f64], n: i64) -> f64\na[n]~ + 5 as f64 + 0.0");
}

/// Whether the first call of `name` in the checked (not optimised) program may fail.
fn call_may_fail(source: &str, name: &str) -> bool {
    let tokens: proc_macro2::TokenStream = source.parse().expect("test source tokenises");
    let input = crate::syntax::parse_input(tokens).expect("parses");
    let program = crate::check::check_input(input).expect("checks").remove(0).program;
    let mut found = None;
    walk(&program.body, &mut Vec::new(), &mut |expr, _| {
        if let ExprKind::Call(node::Call { func, .. }) = &expr.kind {
            if func.name() == name && found.is_none() {
                found = Some(super::purity::fails_here(expr));
            }
        }
    });
    found.unwrap_or_else(|| panic!("no call of `{name}` in {source}"))
}

#[test]
fn calls_fail_only_where_their_arguments_can_make_them() {
    // Constant bounds in order (and no NaN), constant non-zero divisors: nothing can fail, so
    // the passes may move and fuse these calls.
    assert!(!call_may_fail("fn f(a: [f64]) -> [f64] { for i { a[i].clamp(-1.0, 1.0) } }", "clamp"));
    assert!(!call_may_fail("fn f(a: [i8]) -> [i8] { for i { a[i].clamp(-3, 3) } }", "clamp"));
    assert!(!call_may_fail("fn f(a: [u32]) -> [u32] { for i { a[i].rem_euclid(3) } }", "rem_euclid"));
    assert!(!call_may_fail("fn f(a: [f64]) -> [f64] { for i { a[i].sqrt().hypot(a[i]) } }", "hypot"));
    // Bounds out of order or unknown, a divisor that may be zero, a negated unsigned literal
    // (which wraps to a large bound): these may fail, so they stay where they are.
    assert!(call_may_fail("fn f(a: [f64]) -> [f64] { for i { a[i].clamp(1.0, -1.0) } }", "clamp"));
    assert!(call_may_fail("fn f(a: [f64], lo: f64) -> [f64] { for i { a[i].clamp(lo, 1.0) } }", "clamp"));
    assert!(call_may_fail("fn f(a: [u8]) -> [u8] { for i { a[i].clamp(0 - 1, 5) } }", "clamp"));
    assert!(call_may_fail("fn f(a: [i64], d: i64) -> [i64] { for i { a[i].div_euclid(d) } }", "div_euclid"));
    assert!(call_may_fail("fn f(a: [i64]) -> [i64] { for i { a[i].rem_euclid(0) } }", "rem_euclid"));
}

#[test]
fn a_call_that_may_fail_is_not_hoisted_out_of_a_loop_that_may_not_run() {
    // `lo.clamp(hi, 2.0)` does not depend on `i`, but hoisting it out of `for i` would fail
    // for an empty `a` where the program does not: it leaves only behind the guard (a fold of
    // one step where `a` is not empty).
    let calls_outside_loops = |source: &str| {
        let program = optimised(source);
        let mut outside = 0;
        walk(&program.body, &mut Vec::new(), &mut |expr, parents| {
            let in_loop = parents.iter().any(|parent| matches!(parent.kind, ExprKind::For(_) | ExprKind::Fold(_)));
            outside += usize::from(matches!(expr.kind, ExprKind::Call(_)) && !in_loop);
        });
        outside
    };
    assert_eq!(
        calls_outside_loops("fn f(a: [f64], lo: f64, hi: f64) -> [f64] { for i { a[i] + lo.clamp(hi, 2.0) } }"),
        0
    );
    // The contrast: a call that cannot fail is hoisted.
    assert_eq!(calls_outside_loops("fn f(a: [f64], lo: f64, hi: f64) -> [f64] { for i { a[i] + lo.hypot(hi) } }"), 1);
}

/// The optimised IR of the unit called `name`, printed with its variables renumbered in order
/// of appearance (so two programs that differ only in the ids the checker gave are equal).
fn optimised_unit(source: &str, name: &str) -> String {
    let tokens: proc_macro2::TokenStream = source.parse().expect("test source tokenises");
    let input = crate::syntax::parse_input(tokens).expect("parses");
    let units = crate::check::check_input(input).unwrap_or_else(|error| panic!("{source}: {error}"));
    let unit = units.into_iter().find(|unit| unit.name_for_dump() == format!("fn {name}")).expect("the unit");
    let program = super::run_pipeline(unit.program, "test").expect("pipeline");
    program.to_string()
}

#[test]
fn a_called_comprehension_compiles_as_if_written_in_place() {
    // `pdist` materialises nothing of its own: the call fuses into `nearest`'s reduction
    // exactly as the inline version does (same IR after the pipeline).
    let called = optimised_unit(
        "pub fn nearest(a: [[f64]], b: [[f64]]) -> [usize] { let d = pdist(a, b); for i { argmin j { d[i, j] } } }
         fn pdist(a: [[f64]], b: [[f64]]) -> [[f64]] { for i, j { sum k { (a[i, k] - b[j, k]) * (a[i, k] - b[j, k]) } } }",
        "nearest",
    );
    let inline = optimised_unit(
        "pub fn nearest(a: [[f64]], b: [[f64]]) -> [usize] {
            let d = for i, j { sum k { (a[i, k] - b[j, k]) * (a[i, k] - b[j, k]) } };
            for i { argmin j { d[i, j] } }
        }",
        "nearest",
    );
    assert_eq!(called, inline);
    assert!(!called.contains("pdist"), "{called}");
}

#[test]
fn a_called_matrix_product_becomes_a_contraction() {
    let called = "pub fn gram(a: [[f32]]) -> [[f32]] { matmul(a, transpose(a)) }
        fn transpose(m: [[f32]]) -> [[f32]] { for i, j in 0..m.shape(0) { m[j, i] } }
        fn matmul(x: [[f32]], y: [[f32]]) -> [[f32]] { for i, j { sum k { x[i, k] * y[k, j] } } }";
    let tokens: proc_macro2::TokenStream = called.parse().expect("tokenises");
    let input = crate::syntax::parse_input(tokens).expect("parses");
    let mut units = crate::check::check_input(input).unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(units.len(), 1, "private helpers are no units of their own");
    let program = super::run_pipeline(units.remove(0).program, "test").expect("pipeline");
    let mut contractions = 0;
    walk(&program.body, &mut Vec::new(), &mut |expr, _| {
        contractions += matches!(expr.kind, ExprKind::Contract(_)) as usize
    });
    assert_eq!(contractions, 1, "{program}");
    // The argument `transpose(a)` is bound by a `let` named after the parameter, as the
    // in-place program with that `let` written out.
    let in_place = "pub fn gram(a: [[f32]]) -> [[f32]] {
        let y = for i, j in 0..a.shape(0) { a[j, i] };
        for i, j { sum k { a[i, k] * y[k, j] } }
    }";
    assert_eq!(program.to_string(), optimised_unit(in_place, "gram"));
}

#[test]
fn a_row_computed_whole_is_not_fused_into_a_loop_over_its_elements() {
    // `g`'s element is a row built whole (an `if` of two rows): fused into `for a, b`, it would
    // be computed once per `b`, and not at all (losing its size check) when `b`'s range is
    // empty. It stays an array; a comprehension of both axes still fuses.
    let source = "fn f(m: [bool], x: [[f64]], n: [usize]) -> [[f64]] {
        let g = for i { if m[i] { for k in 0..n.len() { 1.0 } } else { x[i] } };
        for a, b { g[a, b] } }";
    assert_eq!(array_temporaries(&optimised(source)), 1);
    let both_axes = "fn f(x: [[f64]], d: [f64]) -> [[f64]] {
        let g = for i, j { x[i, j] / d[j] };
        for a, b { exp(g[a, b]) } }";
    assert_eq!(array_temporaries(&optimised(both_axes)), 0);
}

#[test]
fn share_steps_leaves_comprehension_sizes_alone() {
    // A size computed in a reduction's step (the length of an array the step builds, as the
    // forward-mode companion writes it) is never shared: read from the shared array at the
    // reduction's index, it would make a comprehension's size depend on that index (found by the
    // jvp property test, seed 0x5eed0fe1a5 case 1620).
    let source = "fn f(x: [[f64]], mask: [bool]) -> [[f64]] {
        for i in 0..x.len(), j { (x[i, j] - sum k { x[i, k] + { let g = for a in 0..mask.len(), b { x[b, k] }; g[i, i] } * -0.0 }) }
    }";
    let tokens: proc_macro2::TokenStream = source.parse().expect("test source tokenises");
    let mut units = crate::check::check_input(crate::syntax::parse_input(tokens).expect("parses")).expect("checks");
    let companion = crate::ad::jvp_program(&units.remove(0).program).expect("differentiates");
    if let Err(error) = super::run_pipeline(companion, "test") {
        panic!("{error}");
    }
}

#[test]
fn hoist_keeps_an_accums_update_nest_a_nest() {
    // The inner update loop does not depend on the outer one, but it is part of the accum, not
    // an array to lift out (found by the vjp property test, seed 0x5eed0fe1a5 case 1045).
    let repeated = optimised(
        "fn f(x: [f64], n: usize) -> [f64] {
            accum h = for b in 0..x.len() { 0.0 } { for j in 0..n { for m in 0..n { for i { h[i] += x[i] } } } }
        }",
    );
    let args = vec![
        crate::interp::Value::Array(crate::interp::ArrayValue::vector(vec![
            crate::interp::Value::F64(1.5),
            crate::interp::Value::F64(-2.0),
        ])),
        crate::interp::Value::Usize(3),
    ];
    let result = crate::interp::run(&repeated, args, &[]).unwrap_or_else(|error| panic!("{error}\n{repeated}"));
    let expected =
        crate::interp::ArrayValue::vector(vec![crate::interp::Value::F64(13.5), crate::interp::Value::F64(-18.0)]);
    assert_eq!(result, crate::interp::Value::Array(expected), "{repeated}");
}

#[test]
fn sibling_reductions_that_share_a_term_run_as_one() {
    // MRI-Q's two parts share the argument of their sine and cosine: one reduction of a pair.
    let mri = optimised(
        "fn q(x: [f32], k: [f32], phi: [f32]) -> [{re: f32, im: f32}] {
            for i { { re: sum j { phi[j] * cos(k[j] * x[i]) }, im: sum j { phi[j] * sin(k[j] * x[i]) } } }
        }",
    );
    assert_eq!(reductions_inside(&mri, "i"), 1, "{mri}");
    // Two moments of one row: they share the read, so one pass.
    let moments =
        optimised("fn m(x: [f64]) -> (f64, f64, f64) { (sum k { x[k] }, sum k { x[k] * x[k] }, max k { x[k] }) }");
    assert_eq!(reductions(&moments), 2, "{moments}");
    // Nothing shared, a step that can fail: left alone.
    for source in [
        "fn a(x: [f64], y: [f64]) -> (f64, f64) { (sum k { x[k] }, sum k { y[k] }) }",
        "fn c(x: [i64], d: i64) -> (i64, i64) { (sum k { x[k] }, sum k { x[k] / d }) }",
    ] {
        let program = optimised(source);
        assert_eq!(reductions(&program), 2, "{source}: {program}");
    }
}

#[test]
fn a_column_statistic_read_by_a_second_reduction_gets_a_comprehension_of_its_own() {
    // A column's variance: the mean is computed by its own comprehension into an array, then
    // read along the columns by the variance's, so that both run side by side.
    let variance = optimised(
        "fn col_var(a: [[f32]]) -> [f32] {
            for j { let m = sum i { a[i, j] } / (a.len() as f32); sum i { (a[i, j] - m) * (a[i, j] - m) } }
        }",
    );
    assert_eq!((loop_nests(&variance), array_temporaries(&variance)), (2, 1));
    // Two statistics, the second reading the first, and an epilogue reading both.
    let standardised = optimised(
        "fn col_z(a: [[f64]]) -> [f64] {
            for j {
                let m = sum i { a[i, j] };
                let s = sqrt(sum i { (a[i, j] - m) * (a[i, j] - m) });
                sum i { abs(a[i, j] - m) } / s
            }
        }",
    );
    assert_eq!((loop_nests(&standardised), array_temporaries(&standardised)), (3, 2));
    // A row's variance reads along its own reductions (one element at a time is fast): kept
    // whole. So is a column statistic whose value can fail (a gathered row, clamped: an empty
    // axis fails), since splitting would compute every element's first value before any
    // element's second, and the inner axis of a nest (each row would allocate its arrays).
    for kept in [
        "fn row_var(a: [[f32]]) -> [f32] {
            for i { let m = sum k { a[i, k] }; sum k { (a[i, k] - m) * (a[i, k] - m) } }
        }",
        "fn gathered(a: [[f32]], g: [i64]) -> [f32] {
            for j { let m = sum i { a[g[i], j] }; sum i { (a[i, j] - m) * (a[i, j] - m) } }
        }",
        "fn batched(x: [[[f32]]]) -> [[f32]] {
            for b, j { let m = sum i { x[b, i, j] }; sum i { (x[b, i, j] - m) * (x[b, i, j] - m) } }
        }",
    ] {
        let program = optimised(kept);
        assert_eq!((loop_nests(&program), array_temporaries(&program)), (1, 0), "{kept}");
    }
}

#[test]
fn column_statistics_as_tuples_get_a_comprehension_per_component() {
    // A tuple of column sums (fused into one reduction of a pair), a record reduction written
    // as one, and a tuple ending an element with a `let`: each component its own comprehension,
    // side by side down the columns, and one cheap comprehension zipping them.
    for (source, (nests, temporaries)) in [
        ("fn s(a: [[f32]]) -> [(f32, f32)] { for j { (sum i { a[i, j] }, sum i { a[i, j] * a[i, j] }) } }", (3, 2)),
        ("fn r(a: [[f64]]) -> [{ s: f64, n: i64 }] { for j { sum i { { s: a[i, j], n: 1 } } } }", (3, 2)),
        (
            "fn v(a: [[f32]], b: [[f32]]) -> [(f32, f32, f32)] {
                for j { let m = sum i { a[i, j] }; (m, sum i { (a[i, j] - m) * (a[i, j] - m) }, max i { b[i, j] }) }
            }",
            (4, 3),
        ),
        (
            "fn p(a: [[f32]], b: [[f32]]) -> [(f32, f32)] {
                for j { let p = sum i { (a[i, j], b[i, j]) }; (p.0, p.1 / max i { b[i, j] }) }
            }",
            (4, 3),
        ),
    ] {
        let program = optimised(source);
        assert_eq!((loop_nests(&program), array_temporaries(&program)), (nests, temporaries), "{program}");
        let mut tuple_reductions = 0;
        walk(&program.body, &mut Vec::new(), &mut |expr, _| {
            tuple_reductions += matches!((&expr.kind, &expr.ty), (ExprKind::Reduce(_), Type::Tuple { .. })) as usize;
        });
        assert_eq!(tuple_reductions, 0, "{program}");
    }
    // Kept whole: rows (one element at a time reads along them), MRI-Q's parts (their sine and
    // cosine share one computation), and a component that can fail.
    for kept in [
        "fn rows(a: [[f32]]) -> [(f32, f32)] { for i { (sum k { a[i, k] }, sum k { a[i, k] * a[i, k] }) } }",
        "fn q(x: [f32], k: [f32], phi: [f32]) -> [{re: f32, im: f32}] {
            for i { { re: sum j { phi[j] * cos(k[j] * x[i]) }, im: sum j { phi[j] * sin(k[j] * x[i]) } } }
        }",
        "fn d(a: [[i64]], d: i64) -> [(i64, i64)] { for j { (sum i { a[i, j] }, sum i { a[i, j] / d }) } }",
    ] {
        let program = optimised(kept);
        assert_eq!(loop_nests(&program), 1, "{kept}: {program}");
    }
}

// ---------------------------------------------------------------------------------------------
// The column-major copy (`by_columns`).

/// The reads of `program` as `array[positions]` text, in pre-order.
fn reads(expr: &Expr, program: &Program, found: &mut Vec<String>) {
    let (base, positions) = expr.read_chain();
    if let (ExprKind::Var(var), false) = (&base.kind, positions.is_empty()) {
        let positions: Vec<String> = positions
            .iter()
            .map(|(position, _)| match &position.kind {
                ExprKind::Var(index) => program.var(*index).name.clone(),
                _ => "…".to_string(),
            })
            .collect();
        found.push(format!("{}[{}]", program.var(*var).name, positions.join(", ")));
        return;
    }
    expr.for_each_child(|child| reads(child, program, found));
}

#[test]
fn matrix_parameters_are_read_through_reversed_axes() {
    let program = checked("fn f(m: [[f64]], t: [[[f32]]], v: [f64]) -> [f64] { for i { sum j, k { m[i, j] * t[i, j, k] as f64 + v[j] } } }");
    let (reversed, params) = super::by_columns::mirrored(&program, Mirror::Reversed).expect("a column-major copy");
    let names: Vec<&str> = params.iter().map(|&param| program.var(param).name.as_str()).collect();
    assert_eq!(names, ["m", "t"]);
    let mut found = Vec::new();
    reads(&reversed.body, &reversed, &mut found);
    assert!(found.contains(&"m[j, i]".to_string()) && found.contains(&"t[k, j, i]".to_string()), "{found:?}");
    assert!(found.contains(&"v[j]".to_string()), "{found:?}");
}

#[test]
fn stacks_of_matrices_are_read_through_their_last_two_axes_swapped() {
    let source = "fn f(m: [[f64]], t: [[[f32]]], u: [[[[f32]]]]) -> [[f64]] { for i, j { sum k { m[i, j] * (t[i, j, k] + u[i, i, j, k] + t.shape(2) as f32) as f64 } } }";
    let program = checked(source);
    let (swapped, params) = super::by_columns::mirrored(&program, Mirror::LastTwoSwapped).expect("a stacked copy");
    let names: Vec<&str> = params.iter().map(|&param| program.var(param).name.as_str()).collect();
    assert_eq!(names, ["t", "u"]);
    let mut found = Vec::new();
    reads(&swapped.body, &swapped, &mut found);
    assert!(found.contains(&"t[i, k, j]".to_string()) && found.contains(&"u[i, i, k, j]".to_string()), "{found:?}");
    assert!(found.contains(&"m[i, j]".to_string()), "{found:?}");
    // Lengths name the swapped axes: `k` is axis 2 of `t` and 3 of `u`.
    let printed = crate::ir::expr_to_string(&swapped, &swapped.body);
    assert!(printed.contains("len(t, 1) == len(u, 2) (k)"), "{printed}");
    // No stack, no copy.
    assert!(super::by_columns::mirrored(
        &checked("fn f(m: [[f64]]) -> f64 { sum i, j { m[i, j] } }"),
        Mirror::LastTwoSwapped
    )
    .is_none());
    for (mirror, axis, rank, copy) in [
        (Mirror::Reversed, 0, 3, 2),
        (Mirror::LastTwoSwapped, 0, 3, 0),
        (Mirror::LastTwoSwapped, 1, 3, 2),
        (Mirror::LastTwoSwapped, 3, 4, 2),
    ] {
        assert_eq!(mirror.axis(axis, rank), copy);
        assert_eq!(mirror.axis(copy, rank), axis);
    }
}

#[test]
fn other_uses_keep_the_axis_order() {
    // A row, the whole array, two indices that could fail (evaluated in the other order),
    // no matrix at all.
    for source in [
        "fn f(m: [[f64]]) -> [f64] { for i { let r = m[i]; sum j { r[j] } } }",
        "fn f(m: [[f64]]) -> [[f64]] { m }",
        "fn f(m: [[f64]], a: i64, b: i64) -> f64 { m[a, b] }",
        "fn f(v: [f64]) -> f64 { sum i { v[i] } }",
    ] {
        assert!(super::by_columns::mirrored(&checked(source), Mirror::Reversed).is_none(), "{source}");
    }
    // One index that can fail is fine.
    assert!(super::by_columns::mirrored(
        &checked("fn f(m: [[f64]], a: i64) -> [f64] { for i { m[i, a] } }"),
        Mirror::Reversed
    )
    .is_some());
}

/// Whether the optimised program still computes a filter.
fn has_filter(program: &Program) -> bool {
    let mut found = false;
    walk(&program.body, &mut Vec::new(), &mut |expr, _| found |= matches!(expr.kind, ExprKind::Filter(_)));
    found
}

#[test]
fn reductions_of_a_filter_read_its_input_instead() {
    let (_, after) = before_and_after(
        "fn f(x: [f32]) -> (f32, i64) { let p = for i where x[i] > 0.0 { x[i] }; (sum j { p[j] }, p.len()) }",
        super::filter_reductions::filter_reductions,
    );
    assert_eq!(
        after,
        "fn(x: [f32]) -> (f32, i64)\n(sum i#4 in 0..len(x, 0) { if x[i#4] > 0.0 { { let p#5: f32 = x[i#4]; p#5 } } else { 0.0 } }, \
         sum i#6 in 0..len(x, 0) { if x[i#6] > 0.0 { 1 } else { 0 } })"
    );
    // After the pipeline: one loop over `x` computes both, no array.
    let program = optimised(
        "fn f(x: [f32]) -> (f32, i64) { let p = for i where x[i] > 0.0 { x[i] }; (sum j { p[j] }, p.len()) }",
    );
    assert!(!has_filter(&program), "{program}");
    assert_eq!(reductions(&program), 1, "{program}");
    // Tuples, `prod`, `all`, `any`, a mean, and a step reading the element twice.
    for source in [
        "fn f(x: [f64], y: [f64]) -> f64 { let p = for i where x[i] < y[i] { (x[i], y[i]) }; sum j { p[j].0 * p[j].1 } }",
        "fn f(x: [f64]) -> (f64, bool, bool) { let p = for i where x[i] != 0.0 { x[i] }; (prod j { p[j] }, all j { p[j] > 1.0 }, any j { p[j] > 2.0 }) }",
        "fn f(x: [f64]) -> f64 { let p = for i where x[i] > 0.0 { x[i] }; sum j { p[j] * p[j] } / p.len() as f64 }",
        "fn f(x: [i32]) -> i32 { let p = for i where x[i] % 2 == 0 { x[i] }; sum j { p[j] } }",
    ] {
        assert!(!has_filter(&optimised(source)), "{source}");
    }
}

#[test]
fn a_filter_read_otherwise_stays_an_array() {
    for source in [
        // Returned, or read at another position than the reduction's index.
        "fn f(x: [f64]) -> ([f64], f64) { let p = for i where x[i] > 0.0 { x[i] }; (p, sum j { p[j] }) }",
        "fn f(x: [f64]) -> f64 { let p = for i where x[i] > 0.0 { x[i] }; sum j in 0..p.len() - 1 { p[j + 1] - p[j] } }",
        // The rank itself is read, or the reduction is an `argmax`, or inside a loop.
        "fn f(x: [f64]) -> f64 { let p = for i where x[i] > 0.0 { x[i] }; sum j { p[j] * j as f64 } }",
        "fn f(x: [f64]) -> usize { let p = for i where x[i] > 0.0 { x[i] }; argmax j { p[j] } }",
        "fn f(x: [f64], w: [f64]) -> [f64] { let p = for i where x[i] > 0.0 { x[i] }; for k { w[k] * sum j { p[j] } } }",
        // The element can fail (an integer division) where the condition is false.
        "fn f(x: [i64], d: [i64]) -> i64 { let p = for i where d[i] != 0 { x[i] / d[i] }; sum j { p[j] } }",
        // The step can fail.
        "fn f(x: [i64], d: i64) -> i64 { let p = for i where x[i] > 0 { x[i] }; sum j { p[j] / d } }",
    ] {
        assert!(has_filter(&optimised(source)), "{source}");
    }
}

#[test]
fn independent_reductions_evaluated_together_run_as_one() {
    // Neighbouring `let`s and operands of one expression: one reduction.
    for source in [
        "fn f(x: [f64]) -> f64 { let n = x.len() as f64; let s = sum k { x[k] }; let q = sum k { x[k] * x[k] }; q / n - s * s / (n * n) }",
        "fn f(x: [f64], w: [f64]) -> f64 { sum j { w[j] * x[j] } / sum j { w[j] * w[j] } }",
    ] {
        let program = optimised(source);
        assert_eq!(reductions(&program), 1, "{source}\n{program}");
    }
    // A reduction reading another's value (the two-pass variance) stays apart, and so do an
    // element's (they may run side by side with the neighbouring elements'), unless they are a
    // tuple's fields.
    for source in [
        "fn f(x: [f64]) -> f64 { let m = sum k { x[k] } / x.len() as f64; sum k { (x[k] - m) * (x[k] - m) } }",
        "fn f(a: [[f64]]) -> [f64] { for j { sum i { a[i, j] } / sum i { a[i, j] * a[i, j] } } }",
    ] {
        let program = optimised(source);
        assert_eq!(reductions(&program), 2, "{source}\n{program}");
    }
    let program =
        optimised("fn f(a: [[f64]]) -> [(f64, f64)] { for i { (sum j { a[i, j] }, sum j { a[i, j] * a[i, j] }) } }");
    assert_eq!(reductions(&program), 1, "{program}");
}
