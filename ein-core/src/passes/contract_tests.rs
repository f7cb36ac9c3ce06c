//! Structure tests of the `contract` pass (in the style of `tests.rs`): which programs compile
//! to a [`Contraction`] and with what labels, which keep their loops, and that the interpreter
//! gives the same answer before and after the pipeline (up to float summation order).

use crate::interp::{self, ArrayValue, Value};
use crate::ir::{Contraction, Expr, ExprKind, Program, Side};
use crate::ops::Scalar;

fn checked(source: &str) -> Program {
    let tokens: proc_macro2::TokenStream = source.parse().expect("test source tokenises");
    let input = crate::syntax::parse_input(tokens).expect("parses");
    let mut units = crate::check::check_input(input).expect("checks");
    units.remove(0).program
}

fn optimised(source: &str) -> Program {
    super::run_pipeline(checked(source), "test").expect("pipeline")
}

/// Visits every node, except inside a contraction's copy of its original loop nest.
fn walk<'a>(expr: &'a Expr, visit: &mut impl FnMut(&'a Expr)) {
    visit(expr);
    match &expr.kind {
        ExprKind::Contract(contraction) => contraction
            .children()
            .filter(|child| !std::ptr::eq(*child, &*contraction.loops))
            .for_each(|child| walk(child, visit)),
        _ => expr.for_each_child(|child| walk(child, visit)),
    }
}

fn contractions(program: &Program) -> Vec<&Contraction> {
    let mut found = Vec::new();
    walk(&program.body, &mut |expr| {
        if let ExprKind::Contract(contraction) = &expr.kind {
            found.push(&**contraction);
        }
    });
    found
}

/// Loops left in the program (comprehensions, reductions, folds).
fn loops(program: &Program) -> usize {
    let mut count = 0;
    walk(&program.body, &mut |expr| {
        count += matches!(expr.kind, ExprKind::For(_) | ExprKind::Reduce(_) | ExprKind::Fold(_)) as usize
    });
    count
}

/// The only contraction of `source`, which must have no loop left.
fn single_contraction(source: &str) -> (Program, Contraction) {
    let program = optimised(source);
    let found = contractions(&program);
    assert_eq!(found.len(), 1, "{program}");
    let contraction = found[0].clone();
    assert_eq!(loops(&program), 0, "{program}");
    (program, contraction)
}

fn names(contraction: &Contraction, axes: &[usize]) -> Vec<String> {
    axes.iter().map(|&label| contraction.labels[label].name.clone()).collect()
}

#[test]
fn matmul_is_one_contraction() {
    let (program, contraction) =
        single_contraction("fn f(a: [[f32]], b: [[f32]]) -> [[f32]] { for i, j { sum k { a[i, k] * b[k, j] } } }");
    assert_eq!(contraction.outputs, 2);
    assert_eq!(names(&contraction, &contraction.operands[0].axes), ["i", "k"]);
    assert_eq!(names(&contraction, &contraction.operands[1].axes), ["k", "j"]);
    assert!(contraction.scale.is_none());
    let text = program.to_string();
    assert!(
        text.contains("contract i in 0..len(a, 0), j in 0..len(b, 1) { sum k in 0..len(a, 1) { a[i, k] * b[k, j] } }"),
        "{text}"
    );
}

#[test]
fn batched_matmul_is_one_contraction() {
    let (_, contraction) = single_contraction(
        "fn f(a: [[[f64]]], b: [[[f64]]]) -> [[[f64]]] { for p, i, j { sum k { a[p, i, k] * b[p, k, j] } } }",
    );
    assert_eq!(contraction.outputs, 3);
    assert_eq!(names(&contraction, &contraction.operands[0].axes), ["p", "i", "k"]);
    assert_eq!(names(&contraction, &contraction.operands[1].axes), ["p", "k", "j"]);
}

#[test]
fn matvec_and_vector_matrix_are_contractions_and_a_dot_is_a_reduction() {
    let (_, matvec) = single_contraction("fn f(a: [[f64]], x: [f64]) -> [f64] { for i { sum j { a[i, j] * x[j] } } }");
    assert_eq!((matvec.outputs, matvec.labels.len()), (1, 2));
    let (_, vecmat) = single_contraction("fn f(a: [[f32]], x: [f32]) -> [f32] { for j { sum i { x[i] * a[i, j] } } }");
    assert_eq!(names(&vecmat, &vecmat.operands[0].axes), ["i"]);
    let dot = optimised("fn f(x: [f64], y: [f64]) -> f64 { sum k { x[k] * y[k] } }");
    assert!(contractions(&dot).is_empty(), "{dot}");
}

#[test]
fn a_batch_of_dot_products_keeps_its_loops() {
    // Column dots and row dots: every output label in every operand, no matrix product.
    for source in [
        "fn f(x: [[f64]], y: [[f64]]) -> [f64] { for c { sum r { x[r, c] * y[r, c] } } }",
        "fn f(x: [[f32]], y: [[f32]]) -> [f32] { for r { sum c { x[r, c] * y[r, c] } } }",
        "fn f(x: [[[f64]]], y: [[f64]]) -> [[f64]] { for b, c { sum r { x[b, r, c] * y[r, c] } } }",
    ] {
        let program = optimised(source);
        let found = contractions(&program);
        assert_eq!(found.len(), usize::from(source.contains("x[b")), "{program}");
    }
}

#[test]
fn transposed_operands_multi_axis_sums_and_scales_are_contractions() {
    let (_, transposed) =
        single_contraction("fn f(a: [[f32]], b: [[f32]]) -> [[f32]] { for i, j { sum k { a[k, i] * b[j, k] } } }");
    assert_eq!(names(&transposed, &transposed.operands[0].axes), ["k", "i"]);
    assert_eq!(names(&transposed, &transposed.operands[1].axes), ["j", "k"]);
    let (_, two_sums) = single_contraction(
        "fn f(a: [[[f64]]], b: [[[f64]]]) -> [[f64]] { for i, j { sum k, l { a[i, k, l] * b[k, l, j] } } }",
    );
    assert_eq!((two_sums.outputs, two_sums.labels.len()), (2, 4));
    let (_, scaled) = single_contraction(
        "fn f(a: [[f64]], b: [[f64]], s: f64) -> [[f64]] { for i, j { s * sum k { a[i, k] * b[k, j] } } }",
    );
    assert_eq!(scaled.scale.as_ref().map(|scale| scale.side), Some(Side::Left));
    let (_, scaled) = single_contraction(
        "fn f(a: [[f32]], b: [[f32]]) -> [[f32]] { for i, j { sum k { a[i, k] * b[k, j] } * 0.5 } }",
    );
    assert_eq!(scaled.scale.as_ref().map(|scale| scale.side), Some(Side::Right));
}

#[test]
fn factors_named_by_lets_are_contractions() {
    let (_, contraction) = single_contraction(
        "fn f(a: [[f64]], b: [[f64]]) -> [[f64]] { for i, j { sum k { let x = a[i, k]; let y = b[k, j]; x * y } } }",
    );
    assert_eq!(names(&contraction, &contraction.operands[1].axes), ["k", "j"]);
    // A factor read through another name bound inside the sum stays a loop (the pipeline
    // validates the IR after the pass, so a dangling name would fail here).
    let program = optimised(
        "fn f(a: [[f64]], b: [[f64]]) -> [[f64]] { for i, j { sum k { let r = a[i]; let x = r[k]; x * b[k, j] } } }",
    );
    assert!(loops(&program) > 0 || contractions(&program).len() == 1, "{program}");
    // A name used twice is not a product of two reads.
    let program = optimised("fn f(a: [[f64]]) -> [f64] { for i { sum k { let x = a[i, k] * 2.0; x * x } } }");
    assert!(contractions(&program).is_empty(), "{program}");
}

#[test]
fn expression_form_matmul_is_a_contraction() {
    let (_, contraction) = single_contraction("for i, j { sum k { a[i, k] * b[k, j] } }");
    assert!(matches!(contraction.elem, crate::ir::ScalarType::Param(_)));
}

#[test]
fn sub_array_operands_under_an_outer_loop() {
    // `a[p]` is an operand of the matvec for each `p`, which is itself a batch label here.
    let (_, contraction) =
        single_contraction("fn f(a: [[[f64]]], x: [[f64]]) -> [[f64]] { for p, i { sum j { a[p, i, j] * x[p, j] } } }");
    assert_eq!(contraction.outputs, 2);
}

#[test]
fn attention_has_two_contractions_and_keeps_its_softmax() {
    let program = optimised(
        "fn attention(q: [[f32]], k: [[f32]], v: [[f32]]) -> [[f32]] {
            let s = for i, j { sum d { q[i, d] * k[j, d] } };
            let p = for i, j { exp(s[i, j] - max l { s[i, l] }) / sum l { exp(s[i, l] - max m { s[i, m] }) } };
            for i, d { sum j { p[i, j] * v[j, d] } }
        }",
    );
    assert_eq!(contractions(&program).len(), 2, "{program}");
}

#[test]
fn chains_of_three_are_contractions_grouped_either_way() {
    let sources = [
        "fn f(a: [[f64]], b: [[f64]], c: [[f64]]) -> [[f64]] { for i, l { sum j, k { a[i, j] * b[j, k] * c[k, l] } } }",
        "fn f(a: [[f64]], b: [[f64]], c: [[f64]]) -> [[f64]] { for i, l { sum j, k { a[i, j] * (b[j, k] * c[k, l]) } } }",
        "fn f(a: [[f64]], b: [[f64]], c: [[f64]]) -> [[f64]] { for i, l { sum j { sum k { let x = a[i, j]; let y = b[j, k]; x * y * c[k, l] } } } }",
    ];
    for source in sources {
        let (_, chain) = single_contraction(source);
        assert_eq!((chain.outputs, chain.operands.len()), (2, 3), "{source}");
        let axes: Vec<Vec<String>> = chain.operands.iter().map(|operand| names(&chain, &operand.axes)).collect();
        assert_eq!(axes, [["i", "j"], ["j", "k"], ["k", "l"]], "{source}");
    }
    // A label summed in all three operands, and a scaled chain.
    let (_, chain) = single_contraction(
        "fn f(a: [[f32]], b: [f32], c: [f32]) -> [f32] { for i { 2.0 * sum k { a[i, k] * b[k] * c[k] } } }",
    );
    assert_eq!((chain.operands.len(), chain.scale.is_some()), (3, true));
}

#[test]
fn what_is_not_a_contraction_keeps_its_loops() {
    let cases = [
        // Min-plus (tropical) product: not a sum of products.
        "fn f(a: [[f64]], b: [[f64]]) -> [[f64]] { for i, j { min k { a[i, k] + b[k, j] } } }",
        // A non-linear term of both operands.
        "fn f(a: [[f64]], b: [[f64]]) -> [[f64]] { for i, j { sum k { exp(a[i, k] - b[k, j]) * b[k, j] } } }",
        // Integers keep exact wrapping loops.
        "fn f(a: [[i64]], b: [[i64]]) -> [[i64]] { for i, j { sum k { a[i, k] * b[k, j] } } }",
        // Explicit sizes: the reads are clamped.
        "fn f(a: [[f32]], b: [[f32]], n: usize) -> [[f32]] { for i, j { sum k in 0..n { a[i, k] * b[k, j] } } }",
        // A computed factor that leaves out no output label: the loops compute it once anyway.
        "fn f(a: [[f64]], x: [f64]) -> [f64] { for i { sum k { exp(a[i, k]) * x[k] } } }",
        // A computed factor that can fail (a gather).
        "fn f(a: [[f64]], b: [[f64]], g: [i64]) -> [[f64]] { for i, j { sum k { (a[g[i], k] + 1.0) * b[k, j] } } }",
        // A diagonal read uses a label twice.
        "fn f(a: [[f64]], b: [f64]) -> [f64] { for i { sum k { a[k, k] * b[i] } } }",
        // A summed label in one operand only.
        "fn f(a: [[f64]], b: [f64]) -> [f64] { for i { sum k { a[i, k] * b[i] } } }",
        // Three factors, one summed label in only one of them; four factors.
        "fn f(a: [[f64]], b: [f64], c: [f64]) -> [f64] { for i { sum j, k { a[i, j] * b[j] * c[k] } } }",
        "fn f(a: [[f64]], b: [[f64]], c: [[f64]], d: [[f64]]) -> [[f64]] { for i, m { sum j, k, l { a[i, j] * b[j, k] * c[k, l] * d[l, m] } } }",
        // An affine index.
        "fn f(a: [f64], b: [f64]) -> f64 { sum k { a[k] * b[b.len() - 1 - k] } }",
    ];
    for source in cases {
        let program = optimised(source);
        assert!(contractions(&program).is_empty(), "{source}\n{program}");
    }
}

#[test]
fn contractions_inside_element_wise_consumers_are_taken_apart() {
    let cases = [
        // Divided by a scalar: the division stays a division, after the sum.
        ("fn f(r: [f64], x: [[f64]], n: f64) -> [f64] { for k { sum i { r[i] * x[i, k] } / n } }", 1),
        // Negated, and under a non-linear consumer reading another array.
        ("fn f(a: [[f64]], b: [[f64]]) -> [[f64]] { for i, j { -sum k { a[i, k] * b[k, j] } } }", 1),
        (
            "fn f(a: [[f32]], w: [[f32]], bias: [f32]) -> [[f32]] { for i, j { max(sum k { a[i, k] * w[k, j] } + bias[j], 0.0) } }",
            1,
        ),
        // Two sums in one element: two contractions.
        (
            "fn f(a: [[f64]], b: [[f64]], c: [[f64]]) -> [[f64]] { for i, j { sum k { a[i, k] * b[k, j] } - sum k { a[i, k] * c[k, j] } } }",
            2,
        ),
    ];
    for (source, count) in cases {
        let program = optimised(source);
        assert_eq!(contractions(&program).len(), count, "{source}\n{program}");
        assert!(matches!(program.body.kind, ExprKind::Let(_) | ExprKind::Assert(_)), "{program}");
    }
    // A sum that reads what the element binds stays in the element.
    let program = optimised(
        "fn f(a: [[f64]], b: [[f64]]) -> [[f64]] { for i, j { let s = a[i, 0] * 2.0; sum k { a[i, k] * b[k, j] * s } } }",
    );
    assert!(contractions(&program).is_empty(), "{program}");
    // A matrix–vector product along the matrix's rows stays in its consumer (the loop code
    // would run it as those loops anyway, into an array of its own); along the columns (the
    // first case above), or as a plain comprehension, it is a contraction.
    for source in [
        "fn f(x: [[f64]], w: [f64]) -> [f64] { for i { 1.0 / (1.0 + exp(-sum k { x[i, k] * w[k] })) } }",
        "fn f(x: [[f64]], w: [f64]) -> [f64] { for i { sum k { w[k] * x[i, k] } * 2.0 + 1.0 } }",
    ] {
        let program = optimised(source);
        assert!(contractions(&program).is_empty(), "{source}\n{program}");
    }
    let program = optimised("fn f(x: [[f64]], w: [f64]) -> [f64] { for i { sum k { x[i, k] * w[k] } } }");
    assert_eq!(contractions(&program).len(), 1, "{program}");
}

#[test]
fn factors_that_are_expressions_of_the_labels_are_computed_into_arrays_first() {
    let factor_lets = |program: &Program| {
        let mut count = 0;
        walk(&program.body, &mut |expr| {
            if let ExprKind::Let(crate::ir::node::Let { var, .. }) = &expr.kind {
                count += program.var(*var).name.ends_with("factor") as usize;
            }
        });
        count
    };
    // A covariance: both factors are the centred columns, one array (axes as `x` has them).
    let program = optimised(
        "fn f(x: [[f64]]) -> [[f64]] { let m = for j { sum i { x[i, j] } }; for a, b { sum i { (x[i, a] - m[a]) * (x[i, b] - m[b]) } } }",
    );
    let found = contractions(&program);
    assert_eq!((found.len(), factor_lets(&program)), (1, 1), "{program}");
    assert_eq!(names(found[0], &found[0].operands[0].axes), ["i", "a"], "{program}");
    assert_eq!(names(found[0], &found[0].operands[1].axes), ["i", "b"], "{program}");
    // A function of one operand, and a scalar inside the sum (kept inside its factor, so each
    // product rounds as written).
    for source in [
        "fn f(a: [[f32]], b: [[f32]]) -> [[f32]] { for i, j { sum k { exp(a[i, k]) * b[k, j] } } }",
        "fn f(a: [[f64]], b: [[f64]], s: f64) -> [[f64]] { for i, j { sum k { s * a[i, k] * b[k, j] } } }",
    ] {
        let program = optimised(source);
        assert_eq!((contractions(&program).len(), factor_lets(&program)), (1, 1), "{program}");
    }
    // Two different computed factors.
    let program =
        optimised("fn f(a: [[f64]], b: [[f64]]) -> [[f64]] { for i, j { sum k { tanh(a[i, k]) * (b[k, j] - 1.0) } } }");
    assert_eq!((contractions(&program).len(), factor_lets(&program)), (1, 2), "{program}");
}

#[test]
fn scalars_a_row_computes_before_its_products_are_computed_into_arrays_first() {
    // A softmax row times a matrix, in one nest: the row's maximum and total become arrays over
    // the rows, the weights a computed factor, and the whole nest one product (not one
    // vector–matrix product per row).
    let program = optimised(
        "fn f(s: [[f32]], v: [[f32]]) -> [[f32]] { for i { let m = max k { s[i, k] }; let z = sum k { exp(s[i, k] - m) }; for c { sum j { exp(s[i, j] - m) / z * v[j, c] } } } }",
    );
    let found = contractions(&program);
    assert_eq!(found.len(), 1, "{program}");
    assert_eq!(found[0].outputs, 2, "{program}");
    // A row named by `let` and a scale: the row read in place, the scale an array.
    let program = optimised(
        "fn f(x: [[f64]], w: [[f64]]) -> [[f64]] { for i { let r = x[i]; let n = sqrt(sum k { r[k] * r[k] }); for j { sum k { r[k] * w[k, j] } / n } } }",
    );
    let found = contractions(&program);
    assert_eq!((found.len(), found[0].outputs), (1, 2), "{program}");
    // A value that may fail stays in its row (an integer division by a parameter).
    let program = optimised(
        "fn f(x: [[f64]], w: [[f64]], d: i64) -> [[f64]] { for i { let q = (i / d) as f64; for j { sum k { x[i, k] * w[k, j] } + q } } }",
    );
    assert!(contractions(&program).iter().all(|found| found.outputs == 1), "{program}");
}

#[test]
fn a_dot_product_inside_a_loop_is_left_to_the_loop_code() {
    // Per-row dots of a row-dependent operand: recognised only as part of a whole `for` nest.
    let program = optimised("fn f(a: [[f64]], b: [[f64]]) -> [f64] { for i { sum k { a[i, k] * b[i, k] } + 1.0 } }");
    assert!(contractions(&program).is_empty(), "{program}");
}

// -----------------------------------------------------------------------------------------
// The interpreter agrees before and after the pipeline.

/// Deterministic values in `[-1, 1)` for test inputs.
struct Numbers(u64);

impl Numbers {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }

    fn array(&mut self, shape: &[usize], scalar: Scalar) -> Value {
        Value::Array(ArrayValue::from_fn(shape.to_vec(), |_| match scalar {
            Scalar::F32 => Value::F32(self.next() as f32),
            _ => Value::F64(self.next()),
        }))
    }
}

/// Runs `source` before and after the pipeline on the given arguments and compares.
fn agrees(source: &str, args: Vec<Value>, type_args: &[Scalar]) {
    let before = checked(source);
    let after = super::run_pipeline(before.clone(), "test").expect("pipeline");
    assert!(!contractions(&after).is_empty(), "{after}");
    let expected = interp::run(&before, args.clone(), type_args);
    let actual = interp::run(&after, args, type_args);
    match (expected, actual) {
        (Ok(expected), Ok(actual)) => assert!(expected.approx_eq(&actual, 1e-5), "{source}\n{expected:?}\n{actual:?}"),
        (expected, actual) => assert_eq!(expected, actual, "{source}"),
    }
}

#[test]
fn the_interpreter_gives_the_same_answers_after_the_pass() {
    let mut numbers = Numbers(7);
    for [m, k, n] in [[3, 4, 5], [1, 1, 1], [0, 3, 2], [2, 0, 3], [4, 3, 0]] {
        let source = "fn f(a: [[f64]], b: [[f64]], s: f64) -> [[f64]] { for i, j { s * sum k { a[k, i] * b[j, k] } } }";
        let args = vec![numbers.array(&[k, m], Scalar::F64), numbers.array(&[n, k], Scalar::F64), Value::F64(-1.5)];
        agrees(source, args, &[]);
        let source =
            "fn f(a: [[[f32]]], b: [[[f32]]]) -> [[f32]] { for i, j { sum k, l { a[i, k, l] * b[k, l, j] } } }";
        let args = vec![numbers.array(&[m, k, 2], Scalar::F32), numbers.array(&[k, 2, n], Scalar::F32)];
        agrees(source, args, &[]);
        let source = "fn f(a: [[f64]], y: [f64]) -> [f64] { for i { sum t { a[i, t] * y[t] } * 2.0 } }";
        agrees(source, vec![numbers.array(&[m, k], Scalar::F64), numbers.array(&[k], Scalar::F64)], &[]);
        let source = "fn f(a: [[f64]], b: [[f64]], c: [[f64]]) -> [[f64]] { for i, l { sum j, t { a[i, j] * b[j, t] * c[t, l] } } }";
        let args = vec![
            numbers.array(&[m, k], Scalar::F64),
            numbers.array(&[k, n], Scalar::F64),
            numbers.array(&[n, m], Scalar::F64),
        ];
        agrees(source, args, &[]);
        let source = "for p, i, j { sum k { a[p, i, k] * b[p, k, j] } }";
        let args = vec![numbers.array(&[2, m, k], Scalar::F32), numbers.array(&[2, k, n], Scalar::F32)];
        agrees(source, args, &[Scalar::F32, Scalar::F32]);
        // Computed factors: a covariance (divided, an empty column count giving NaN means).
        let source = "fn f(x: [[f64]]) -> [[f64]] { let n = x.len() as f64; let m = for j { sum i { x[i, j] } / n }; for a, b { sum i { (x[i, a] - m[a]) * (x[i, b] - m[b]) } / (n - 1.0) } }";
        agrees(source, vec![numbers.array(&[k, m], Scalar::F64)], &[]);
        let source =
            "fn f(a: [[f32]], b: [[f32]]) -> [[f32]] { for i, j { sum k { exp(a[i, k]) * (b[k, j] * 0.5) } } }";
        agrees(source, vec![numbers.array(&[m, k], Scalar::F32), numbers.array(&[k, n], Scalar::F32)], &[]);
        // A row's own scalars computed into arrays first.
        let source = "fn f(s: [[f32]], v: [[f32]]) -> [[f32]] { for i { let m = max t { s[i, t] }; let z = sum t { exp(s[i, t] - m) }; for c { sum j { exp(s[i, j] - m) / z * v[j, c] } } } }";
        agrees(source, vec![numbers.array(&[m, k], Scalar::F32), numbers.array(&[k, n], Scalar::F32)], &[]);
    }
}

#[test]
fn size_mismatches_fail_the_same_after_the_pass() {
    // The size check of `k` (2 against 4) fails before the contraction, as before the pass.
    let source = "fn f(a: [[f64]], b: [[f64]]) -> [[f64]] { for i, j { sum k { a[i, k] * b[k, j] } } }";
    let mut numbers = Numbers(3);
    agrees(source, vec![numbers.array(&[2, 3], Scalar::F64), numbers.array(&[4, 2], Scalar::F64)], &[]);
}
