//! Unit tests of the checker and size inference: source text in, IR facts or errors out.

use crate::check::sizes::key;
use crate::ir::node;
use crate::ir::{Bounds, Expr, ExprKind, Form, Program, ScalarType, Type, Unit};
use crate::ops::Scalar;

fn check(source: &str) -> syn::Result<Vec<Unit>> {
    let tokens: proc_macro2::TokenStream = source.parse().expect("test source tokenises");
    super::check_input(crate::syntax::parse_input(tokens)?)
}

fn program(source: &str) -> Program {
    match check(source) {
        Ok(mut units) => units.remove(0).program,
        Err(error) => panic!("unexpected error: {error}"),
    }
}

/// Every error message, in order.
fn errors(source: &str) -> Vec<String> {
    match check(source) {
        Ok(_) => panic!("expected errors for {source}"),
        Err(error) => error.into_iter().map(|error| error.to_string()).collect(),
    }
}

fn visit<'a>(expr: &'a Expr, found: &mut Vec<&'a Expr>) {
    found.push(expr);
    expr.for_each_child(|child| visit(child, found));
}

fn nodes(program: &Program) -> Vec<&Expr> {
    let mut found = Vec::new();
    visit(&program.body, &mut found);
    found
}

/// `(index name, size as text)` of every comprehension and reduction.
fn sizes(program: &Program) -> Vec<(String, String)> {
    nodes(program)
        .into_iter()
        .filter_map(|expr| match &expr.kind {
            ExprKind::For(node::For { index, size, .. }) | ExprKind::Reduce(node::Reduce { index, size, .. }) => {
                Some((program.var(*index).name.clone(), describe_size(program, size)))
            }
            _ => None,
        })
        .collect()
}

fn describe_size(program: &Program, size: &Expr) -> String {
    match &size.kind {
        ExprKind::Len(node::Len { array, axis }) => match &array.kind {
            ExprKind::Var(var) => format!("len({}, {axis})", program.var(*var).name),
            _ => "len(?)".to_string(),
        },
        _ => key(size),
    }
}

fn checks(program: &Program) -> Vec<(String, String, String)> {
    nodes(program)
        .into_iter()
        .flat_map(|expr| match &expr.kind {
            ExprKind::Assert(node::Assert { checks, .. }) => checks
                .iter()
                .map(|check| (check.index_name.clone(), check.left_what.clone(), check.right_what.clone()))
                .collect(),
            _ => Vec::new(),
        })
        .collect()
}

fn bounds(program: &Program) -> Vec<Bounds> {
    nodes(program)
        .into_iter()
        .filter_map(|expr| match &expr.kind {
            ExprKind::Index(node::Index { bounds, .. }) => Some(*bounds),
            _ => None,
        })
        .collect()
}

#[test]
fn matmul_sizes_come_from_the_arrays_with_one_check() {
    let checked = program("fn mm(a: [[f32]], b: [[f32]]) -> [[f32]] { for i, j { sum k { a[i, k] * b[k, j] } } }");
    assert_eq!(
        sizes(&checked),
        vec![
            ("i".to_string(), "len(a, 0)".to_string()),
            ("j".to_string(), "len(b, 1)".to_string()),
            ("k".to_string(), "len(a, 1)".to_string()),
        ]
    );
    assert_eq!(checks(&checked), vec![("k".to_string(), "axis 1 of `a`".to_string(), "axis 0 of `b`".to_string())]);
    // The check sits at the top, before every loop.
    assert!(matches!(checked.body.kind, ExprKind::Assert(_)));
    assert!(bounds(&checked).iter().all(|b| *b == Bounds::Proven));
    assert_eq!(checked.body.ty, Type::array(Type::scalar(Scalar::F32), 2));
}

#[test]
fn a_tuple_fold_state_sizes_indices_by_the_parts_of_its_initial_value() {
    // Named by a pattern, or read by field: `i` takes the size of that part of `(x0, v0)`, and
    // the reads are proven in bounds (every step keeps the shape, checked).
    for source in [
        "fn f(x0: [f64], v0: [f64], n: i64) -> ([f64], [f64]) { fold t in 0..n, (x, v) = (x0, v0) { (for i { x[i] + v[i] }, for i { v[i] }) } }",
        "fn f(x0: [f64], v0: [f64], n: i64) -> ([f64], [f64]) { fold t in 0..n, s = (x0, v0) { (for i { s.0[i] + s.1[i] }, for i { s.1[i] }) } }",
    ] {
        let checked = program(source);
        let found: Vec<String> = sizes(&checked).into_iter().map(|(_, size)| size).collect();
        assert_eq!(found, ["len(x0, 0)", "len(v0, 0)"], "{checked}");
        assert!(bounds(&checked).iter().all(|b| *b == Bounds::Proven), "{checked}");
    }
}

#[test]
fn arrays_held_in_tuples_and_rows_of_fold_state_size_their_indices() {
    // `r` of a tuple bound inside the loop over `i` is a row of `a`: `k` ranges over axis 1.
    for source in [
        "fn f(a: [[f64]]) -> [f64] { for i { let (r, s) = (a[i], 2.0); sum k { r[k] * s } } }",
        "fn f(a: [[f64]]) -> [f64] { for i { let t = (a[i], 2.0); sum k { t.0[k] * t.1 } } }",
        "fn f(a: [[f64]]) -> [f64] { for i { let (r, s) = if i > 0 { (a[i], 2.0) } else { (a[0], 1.0) }; sum k { r[k] * s } } }",
    ] {
        let checked = program(source);
        assert_eq!(sizes(&checked)[1], ("k".to_string(), "len(a, 1)".to_string()), "{checked}");
    }
    // With a second array sizing the same index, the sizes must still be checked equal.
    let checked = program(
        "fn f(a: [[f64]], v: [f64]) -> [[f64]] { for i { let (r, s) = (a[i], 2.0); for j { r[j] * s + v[j] } } }",
    );
    assert_eq!(checks(&checked), vec![("j".to_string(), "axis 0 of `r`".to_string(), "axis 0 of `v`".to_string())]);
    // Checks name a field of a named tuple by its path.
    let checked = program("fn f(a: [f64], b: [f64]) -> [f64] { let p = (a, b); for i { p.0[i] * p.1[i] } }");
    assert_eq!(checks(&checked), vec![("i".to_string(), "axis 0 of `p.0`".to_string(), "axis 0 of `p.1`".to_string())]);
    // A row of a fold's state bound by `let` has the shape of that row of the initial value.
    let checked =
        program("fn f(a: [[f64]], n: i64) -> [[f64]] { fold t in 0..n, u = a { for i { let r = u[i]; for j { r[j] * 2.0 } } } }");
    let found: Vec<String> = sizes(&checked).into_iter().map(|(_, size)| size).collect();
    assert_eq!(found, ["len(a, 0)", "len(a, 1)"], "{checked}");
}

#[test]
fn equal_by_construction_needs_no_check() {
    let checked = program("fn f(a: [f64]) -> [f64] { for i { a[i] + a[i] * a[i] } }");
    assert!(checks(&checked).is_empty());
    let checked = program_through_let();
    assert!(checks(&checked).is_empty(), "{:?}", checks(&checked));
    assert!(bounds(&checked).iter().all(|b| *b == Bounds::Proven));
}

fn program_through_let() -> Program {
    program("fn f(a: [f64]) -> [f64] { let b = for i { a[i] * 2.0 }; for j { b[j] + a[j] } }")
}

#[test]
fn explicit_sizes_win_and_clamp() {
    let checked = program("fn f(a: [f64], n: usize) -> [f64] { for i in 0..n { a[i] } }");
    assert_eq!(bounds(&checked), vec![Bounds::Clamped]);
    let checked = program_with_shift();
    assert_eq!(bounds(&checked), vec![Bounds::Clamped, Bounds::Proven]);
}

#[test]
fn a_shifted_read_over_a_shortened_range_is_proven() {
    // `i < len - 1`, so `i + 1 < len`: both reads need no clamp.
    let checked = program("fn f(a: [f64]) -> [f64] { for i in 0..a.len() - 1 { a[i + 1] - a[i] } }");
    assert_eq!(bounds(&checked), vec![Bounds::Proven, Bounds::Proven]);
    let checked = program("fn f(a: [f64]) -> [f64] { for i in 0..a.len() - 2 { (1 + i) as f64 + a[2 + i] } }");
    assert_eq!(bounds(&checked), vec![Bounds::Proven]);
    // A fold's index too (pathfinder reads the next row of the wall).
    let checked = program(
        "fn f(w: [[i32]]) -> [i32] { fold t in 0..w.len() - 1, row = w[0] { for j { w[t + 1, j] + row[j] } } }",
    );
    assert_eq!(bounds(&checked), vec![Bounds::Clamped, Bounds::Proven, Bounds::Proven, Bounds::Proven]);
    // Shifted further than the range was shortened, or shifted down: clamped.
    let checked = program("fn f(a: [f64]) -> [f64] { for i in 0..a.len() - 1 { a[i + 2] + a[i - 1] } }");
    assert_eq!(bounds(&checked), vec![Bounds::Clamped, Bounds::Clamped]);
    let checked = program("fn f(a: [f64], b: [f64]) -> [f64] { for i in 0..b.len() - 1 { a[i + 1] } }");
    assert_eq!(bounds(&checked), vec![Bounds::Clamped]);
}

#[test]
fn an_accumulator_keeps_its_initial_shape_for_the_prover() {
    // Power iteration: `j` runs over `a`'s columns, checked equal to `v0`'s length, which
    // every state has.
    let checked = program(
        "fn f(a: [[f64]], v0: [f64], n: i64) -> [f64] { fold t in 0..n, v = v0 { for i { sum j { a[i, j] * v[j] } } } }",
    );
    assert!(bounds(&checked).iter().all(|b| *b == Bounds::Proven), "{checked}");
    // The array part of a tuple state, through the pattern's name.
    let checked = program(
        "fn f(a: [[f64]], v0: [f64], n: i64) -> ([f64], f64) { \
         fold t in 0..n, (v, s) = (v0, 0.0) { (for i { sum j { a[i, j] * v[j] } }, s + v[0]) } }",
    );
    assert_eq!(bounds(&checked), [Bounds::Proven, Bounds::Proven, Bounds::Proven, Bounds::Clamped], "{checked}");
    // A state read over a range the check does not tie to it stays clamped.
    let checked = program(
        "fn f(a: [[f64]], v0: [f64], m: i64) -> [f64] { fold t in 0..3, v = v0 { for i { sum j in 0..m { a[i, j] * v[j] } } } }",
    );
    assert!(bounds(&checked).contains(&Bounds::Clamped), "{checked}");
}

#[test]
fn reads_kept_in_range_by_the_ranges_of_their_indices_are_proven() {
    // Autocorrelation: `t < n - l`, so `t + l < n`; and `t` itself.
    let checked = program(
        "fn f(x: [f32], lags: i64) -> [f32] { let n = x.len(); for l in 0..lags { sum t in 0..n - l { x[t] * x[t + l] } } }",
    );
    assert_eq!(bounds(&checked), vec![Bounds::Proven, Bounds::Proven], "{checked}");
    // A reversed read: `n - 1 - t` for `t` in `0..n` lies in `0..n`.
    let checked = program(
        "fn f(c: [f64], x: f64) -> f64 { let n = c.len(); fold t in 0..n, acc = 0.0 { acc * x + c[n - 1 - t] } }",
    );
    assert_eq!(bounds(&checked), vec![Bounds::Proven], "{checked}");
    // Not kept in range: one step past either end, a range of another array, a parameter that
    // does not cancel, an index subtracted whose range allows more than the sum has.
    for source in [
        "fn f(x: [f32], lags: i64) -> [f32] { for l in 0..lags { sum t in 0..x.len() - l { x[t + l + 1] } } }",
        "fn f(c: [f64]) -> [f64] { for t in 0..c.len() { c[c.len() - t] } }",
        "fn f(x: [f32], y: [f32]) -> [f32] { for l in 0..y.len() { sum t in 0..y.len() - l { x[t + l] } } }",
        "fn f(x: [f32], s: i64) -> [f32] { for l in 0..x.len() { sum t in 0..x.len() - l { x[t + s] } } }",
        "fn f(x: [f32], m: [f32]) -> [f32] { for t in 0..m.len() { x[x.len() - 1 - t] } }",
    ] {
        let checked = program(source);
        assert!(bounds(&checked).contains(&Bounds::Clamped), "{source}: {checked}");
    }
}

#[test]
fn a_filter_bound_inside_a_side_of_an_if_is_an_error_not_invalid_ir() {
    // Its length is known only once it has run: it cannot size the `if` before.
    let messages =
        errors("fn f(z: [f64], c: bool) -> [f64] { if c { let q = for i where z[i] > 0.0 { z[i] }; q } else { z } }");
    assert!(messages[0].contains("cannot be compared before computing them"), "{messages:?}");
}

#[test]
fn a_triangle_of_ranges_is_proven() {
    // `j < i + 1 <= len`, and `j + 1 < i + 2 <= len` under `i < len - 1`; `k <= j <= i`.
    let checked = program("fn f(a: [f64]) -> [f64] { for i in 0..a.len() { sum j in 0..i + 1 { a[j] } } }");
    assert_eq!(bounds(&checked), vec![Bounds::Proven]);
    let checked = program("fn f(a: [f64]) -> [f64] { for i in 0..a.len() - 1 { sum j in 0..i + 1 { a[j + 1] } } }");
    assert_eq!(bounds(&checked), vec![Bounds::Proven]);
    let checked =
        program("fn f(a: [f64]) -> [f64] { for i in 0..a.len() { sum j in 0..i { sum k in 0..j + 1 { a[k] } } } }");
    assert_eq!(bounds(&checked), vec![Bounds::Proven]);
    // One past the triangle, or under another array's length: clamped.
    let checked = program("fn f(a: [f64]) -> [f64] { for i in 0..a.len() { sum j in 0..i + 2 { a[j] } } }");
    assert_eq!(bounds(&checked), vec![Bounds::Clamped]);
    let checked = program("fn f(a: [f64], b: [f64]) -> [f64] { for i in 0..b.len() { sum j in 0..i { a[j] } } }");
    assert_eq!(bounds(&checked), vec![Bounds::Clamped]);
}

#[test]
fn a_window_read_sizes_its_outermost_index() {
    let checked = program("fn f(img: [[f32]], k: [[f32]]) -> [[f32]] { for i, j { sum di, dj { img[i + di - 2, j + dj - 2] * k[di, dj] } } }");
    let sizes = sizes(&checked);
    let expected = [("i", "len(img, 0)"), ("j", "len(img, 1)"), ("di", "len(k, 0)"), ("dj", "len(k, 1)")];
    for (index, size) in expected {
        assert!(sizes.contains(&(index.to_string(), size.to_string())), "{sizes:?}");
    }
    // An inner index with no read of its own is not sized by the window.
    let messages = errors("fn f(a: [f64]) -> [f64] { for i { sum k { a[i + k] } } }");
    assert!(messages[0].contains("index `k` has no size"), "{messages:?}");
}

fn program_with_shift() -> Program {
    program("fn f(a: [f64]) -> [f64] { for i { a[i + 1] - a[i] } }")
}

#[test]
fn casts_invariant_shifts_negative_offsets_tori_and_helper_shifts_size_their_index() {
    // `(source, sizes, every read proven)`.
    let cases = [
        ("fn f(a: [f64]) -> [f64] { for i { a[i as usize] } }", vec!["len(a, 0)"], true),
        ("fn f(a: [f64], off: i64) -> [f64] { for i { a[i + off] } }", vec!["len(a, 0)"], false),
        (
            "fn f(x: [f64], w: [f64]) -> [f64] { let r = w.len() / 2; for i { sum k { x[i + k - r] * w[k] } } }",
            vec!["len(x, 0)", "len(w, 0)"],
            false,
        ),
        (
            "fn f(x: [f64], w: [f64]) -> [f64] { for i { sum k { x[i - k] * w[k] } } }",
            vec!["len(x, 0)", "len(w, 0)"],
            false,
        ),
        ("fn f(a: [f64]) -> [f64] { let n = a.len(); for i { a[(i + 1) % n] } }", vec!["len(a, 0)"], true),
        (
            "pub fn f(a: [f64]) -> [f64] { for i { at(a, i + 1) - at(a, i) } }
             fn at(v: [f64], p: i64) -> f64 { v[p] }",
            vec!["len(a, 0)"],
            false,
        ),
    ];
    for (source, expected, proven) in cases {
        let checked = program(source);
        let found: Vec<String> = sizes(&checked).into_iter().map(|(_, size)| size).collect();
        assert_eq!(found, expected, "{checked}");
        assert_eq!(bounds(&checked).iter().all(|b| *b == Bounds::Proven), proven, "{checked}");
    }
    // `a[i as usize + 1]` is a shifted read, clamped; `a[i as usize]` beside it is proven.
    let checked = program("fn f(a: [f64]) -> [f64] { for i { a[i as usize + 1] - a[i as usize] } }");
    assert_eq!(bounds(&checked), [Bounds::Clamped, Bounds::Proven]);
}

#[test]
fn a_read_that_computes_its_position_is_named_when_nothing_sizes_an_index() {
    let messages = errors("fn f(a: [f64]) -> [f64] { for i { a[2 * i] } }");
    assert!(messages[0].starts_with("index `i` has no size: no read sizes it"), "{messages:?}");
    assert_eq!(messages[1], "this read computes its position from `i`, so it does not size `i`");
    let messages = errors("fn f(a: [f64]) -> [f64] { for i { a[0] } }");
    assert_eq!(messages, ["index `i` has no size: it never directly indexes an array; give it one with `i in 0..n`"]);
}

#[test]
fn a_tuple_pattern_over_an_array_of_tuples_says_how_to_read_it() {
    let messages = errors("fn f(a: [f64]) -> [f64] { let (s, c) = for i { (a[i], 1.0) }; s }");
    assert!(
        messages[0].starts_with("this pattern takes a tuple of 2 values, but the value is `[(f64, float)]`"),
        "{messages:?}"
    );
    assert!(messages[0].contains("read its elements' fields (`q[i].0`)"), "{messages:?}");
}

#[test]
fn a_size_check_that_can_never_hold_is_a_compile_error() {
    let messages = errors(
        "fn f(a: [f64]) -> [f64] { let d = for i in 0..a.len() - 1 { a[i + 1] - a[i] }; for i { d[i] * a[i] } }",
    );
    assert_eq!(
        messages,
        ["index `i` reads axis 0 of `a` and axis 0 of `d`, and the first always has 1 more element than the \
          second, so they can never agree; give `i` a range (`i in 0..n`) and make the reads fit it"]
    );
    // Sizes that only may differ are checked at run time, as before.
    let checked = program("fn f(a: [f64], b: [f64]) -> [f64] { for i { a[i] * b[i] } }");
    assert_eq!(checks(&checked).len(), 1);
}

#[test]
fn partial_indexing_sizes_and_proofs() {
    let checked = program("fn f(x: [[f32]]) -> [f32] { for i { let row = x[i]; sum j { row[j] } } }");
    assert_eq!(sizes(&checked)[1], ("j".to_string(), "len(x, 1)".to_string()));
    assert!(bounds(&checked).iter().all(|b| *b == Bounds::Proven));
}

#[test]
fn literals_default_and_follow_context() {
    let checked = program("fn f(a: [f32]) -> [f32] { for i { a[i] * 2.0 + 1.0 } }");
    assert_eq!(checked.body.ty, Type::array(Type::scalar(Scalar::F32), 1));
    let checked = program("fn f(a: [f32]) -> i64 { sum i in 0..a.len() { i * 2 } }");
    assert_eq!(checked.body.ty, Type::I64);
    let checked = program("fn f(a: [f32]) -> usize { argmax i { a[i] } }");
    assert_eq!(checked.body.ty, Type::Scalar(ScalarType::USIZE));
}

#[test]
fn expression_form_literals_reaching_the_result_are_typed_by_the_use_site() {
    use crate::ir::NumberClass;
    // Fibonacci's state is only literals: rustc types it from `let f: u64 = ein!(…)`.
    let fib = program("fold t in 0..n, p = (0, 1) { (p.1, p.0 + p.1) }");
    // (`n`'s own type is the other parameter.)
    let classes: Vec<_> = fib.type_params.iter().map(|param| (param.witness().is_some(), param.class)).collect();
    assert_eq!(classes, [(false, NumberClass::Int), (true, NumberClass::Int)]);
    assert_eq!(fib.body.ty, Type::tuple(vec![Type::Scalar(ScalarType::Param(0)); 2]));
    // Literals tied to a captured array take its element type; a float literal of its own is
    // the use site's too.
    let life = program("for i { (if g[i] == 3 { 1 } else { g[i] }, if g[i] == 2 { 1 } else { 0 }, 0.5) }");
    let use_site: Vec<NumberClass> =
        life.type_params.iter().filter(|param| param.witness().is_none()).map(|param| param.class).collect();
    assert_eq!((life.type_params.len(), use_site), (3, vec![NumberClass::Int, NumberClass::Float]));
    // A literal that stays inside the block keeps ein's default, as in the item form.
    let inside = program("for i in 0..n { ((i + 3) * 2) as f64 }");
    assert!(inside.type_params.iter().all(|param| param.witness().is_some()), "{inside}");
    let item = program("fn f(n: usize) -> (i64, i64) { fold t in 0..n, p = (0, 1) { (p.1, p.0 + p.1) } }");
    assert!(item.type_params.is_empty());
}

#[test]
fn records_and_tuples() {
    let checked =
        program("fn f(a: [f64], b: [f64]) -> [{re: f64, im: f64}] { for i { let z = { re: a[i], im: b[i] }; { re: z.re * 2.0, im: z.im } } }");
    assert_eq!(checked.body.ty.rank(), 1);
    let checked = program("fn f(a: [f64]) -> (f64, f64) { let (s, m) = (sum i { a[i] }, max i { a[i] }); (m, s) }");
    assert!(matches!(checked.body.ty, Type::Tuple { .. }));
}

#[test]
fn fold_with_array_accumulator() {
    let checked = program(
        "fn path(w: [[i64]]) -> [i64] {
            fold t in 0..w.len(), acc = for j { w[0, j] } {
                for j { min(acc[j - 1], min(acc[j], acc[j + 1])) + w[t, j] }
            }
        }",
    );
    assert_eq!(checked.body.ty, Type::array(Type::scalar(Scalar::I64), 1));
}

#[test]
fn expression_form_captures_with_ranks() {
    let units = check("for i { sum k { a[i, k] * b[k] } * s }").expect("checks");
    let program = &units[0].program;
    assert!(matches!(units[0].form, Form::Expression));
    let params: Vec<(String, usize)> =
        program.params.iter().map(|p| (program.var(*p).name.clone(), program.var(*p).ty.rank())).collect();
    assert_eq!(params, vec![("a".to_string(), 2), ("b".to_string(), 1), ("s".to_string(), 0)]);
    // a, b and s are used together: one element type, left to rustc.
    assert_eq!(program.type_params.len(), 1);
}

#[test]
fn irregular_sizes_are_rejected() {
    let messages = errors("fn f(a: [f64]) -> [[f64]] { for i { for j in 0..i { a[j] } } }");
    assert!(messages[0].contains("depends on `i`"), "{messages:?}");
    let messages = errors("fn f(a: [i64]) -> [[i64]] { for i { for j in 0..a[i] { a[j] } } }");
    assert!(messages[0].contains("depends on `i`"), "{messages:?}");
}

#[test]
fn an_index_without_a_size_is_rejected() {
    let messages = errors("fn f(a: [f64]) -> [f64] { for i { a[0] + 1.0 } }");
    assert!(messages[0].contains("index `i` has no size"), "{messages:?}");
}

#[test]
fn no_implicit_conversions() {
    let messages = errors("fn f(a: [f32]) -> [f32] { for i { a[i] * i } }");
    assert!(messages[0].contains("mismatched types"), "{messages:?}");
    let messages = errors("fn f(a: [f32]) -> [f32] { for i { a[i] * 2 } }");
    assert!(messages[0].contains("mismatched types"), "{messages:?}");
}

#[test]
fn rank_misuse_is_rejected() {
    let messages = errors("fn f(a: [f32]) -> f32 { sum i { a[i, i] } }");
    assert!(messages[0].contains("too many indices"), "{messages:?}");
    let messages = errors("fn f(s: f32) -> f32 { s[0] }");
    assert!(messages[0].contains("only arrays can be indexed"), "{messages:?}");
    let messages = errors("fn f(a: [f32]) -> [f32] { for i { a + 1.0 } }");
    assert!(messages[0].contains("index the array"), "{messages:?}");
}

#[test]
fn independent_errors_are_all_reported() {
    let messages = errors("fn f(a: [f32]) -> [f32] { for i { (x[i] + y, a[i] * 2) } }");
    assert!(messages.iter().any(|m| m.contains("unknown name `x`")), "{messages:?}");
    assert!(messages.iter().any(|m| m.contains("unknown name `y`")), "{messages:?}");
    assert!(messages.iter().any(|m| m.contains("mismatched types")), "{messages:?}");
}

#[test]
fn indices_do_not_escape_their_comprehension() {
    let messages = errors("fn f(a: [f32]) -> f32 { (sum i { a[i] }) + a[i] }");
    assert!(messages[0].contains("outside the comprehension"), "{messages:?}");
}

#[test]
fn return_type_must_match() {
    let messages = errors("fn f(a: [f32]) -> [[f32]] { for i { a[i] } }");
    assert!(messages[0].contains("the body has type"), "{messages:?}");
}

// ---------------------------------------------------------------------------------------------
// Scalar functions (check/calls.rs).

/// The argument types and result type of the first call of `name` in the program's body.
fn call_types(program: &Program, name: &str) -> (Vec<Type>, Type) {
    let call = nodes(program)
        .into_iter()
        .find_map(|expr| match &expr.kind {
            ExprKind::Call(node::Call { func, args }) if func.name() == name => {
                Some((args.iter().map(|arg| arg.ty.clone()).collect(), expr.ty.clone()))
            }
            _ => None,
        })
        .unwrap_or_else(|| panic!("no call of `{name}`"));
    call
}

#[test]
fn function_results_follow_std_signatures() {
    let bool_result = program("fn f(a: [f32]) -> [bool] { for i { a[i].is_nan() || is_finite(a[i]) } }");
    assert_eq!(call_types(&bool_result, "is_nan"), (vec![Type::scalar(Scalar::F32)], Type::BOOL));
    // `powi`'s exponent is an `i32`, literal or not; the result is the base's type.
    let powi = program("fn f(a: [f64]) -> [f64] { for i { a[i].powi(3) } }");
    assert_eq!(
        call_types(&powi, "powi"),
        (vec![Type::scalar(Scalar::F64), Type::scalar(Scalar::I32)], Type::scalar(Scalar::F64))
    );
    // Integer `pow` takes a `u32` exponent; float `pow` one of the base's type.
    let int_pow = program("fn f(a: [i16]) -> [i16] { for i { a[i].pow(2) } }");
    assert_eq!(
        call_types(&int_pow, "pow"),
        (vec![Type::scalar(Scalar::I16), Type::scalar(Scalar::U32)], Type::scalar(Scalar::I16))
    );
    let float_pow = program("fn f(a: [f32]) -> [f32] { for i { pow(a[i], 2.0) } }");
    assert_eq!(call_types(&float_pow, "pow"), (vec![Type::scalar(Scalar::F32); 2], Type::scalar(Scalar::F32)));
    // A literal base takes its type from the exponent's class: `pow(2, 10)` is integer `pow`.
    let literal_pow = program("fn f(n: u32) -> i64 { pow(2, n) }");
    assert_eq!(call_types(&literal_pow, "pow"), (vec![Type::I64, Type::scalar(Scalar::U32)], Type::I64));
    // `clamp` bounds take the value's type, literals included.
    let clamp = program("fn f(a: [u8]) -> [u8] { for i { a[i].clamp(1, 200) } }");
    assert_eq!(call_types(&clamp, "clamp"), (vec![Type::scalar(Scalar::U8); 3], Type::scalar(Scalar::U8)));
    let signum = program("fn f(a: [i8]) -> [i8] { for i { signum(a[i]) } }");
    assert_eq!(call_types(&signum, "signum").1, Type::scalar(Scalar::I8));
}

#[test]
fn function_errors_point_at_the_argument_with_a_fix() {
    assert_eq!(
        errors("fn f(a: [i64]) -> [f64] { for i { a[i].sqrt() } }"),
        ["`sqrt` needs a float (`f32`, `f64`), found `i64`; cast it first, e.g. `(x as f64).sqrt()`"]
    );
    assert_eq!(
        errors("fn f(a: [u16]) -> [u16] { for i { a[i].signum() } }"),
        ["`signum` needs a float or a signed integer, found `u16`; cast it to a signed type first, e.g. `x as i64`"]
    );
    assert_eq!(
        errors("fn f(a: [f64]) -> [f64] { for i { a[i].div_euclid(2.0) } }"),
        ["`div_euclid` needs an integer, found `f64`"]
    );
    assert_eq!(
        errors("fn f(a: [i32], e: [i32]) -> [i32] { for i { a[i].pow(e[i]) } }"),
        ["the exponent of `pow` is `u32`, found `i32`; cast it with `as u32`"]
    );
    assert_eq!(
        errors("fn f(a: [f32], n: i64) -> [f32] { for i { a[i].powi(n) } }"),
        ["the exponent of `powi` is `i32`, found `i64`; cast it with `as i32`"]
    );
    assert_eq!(
        errors("fn f(a: [f32], b: [f64]) -> [f32] { for i { a[i].clamp(0.0, b[i]) } }"),
        ["mismatched argument types: `clamp` takes its arguments of one type, found `f32` and `f64`; ein never converts numbers implicitly: cast the other side with `as f32`"]
    );
    // The expression form reads Rust locals whole: their fields, and `self`, are bound first.
    assert_eq!(
        errors("sum k { x[k] * m.w[k] } + m.b"),
        [
            "`m` is a Rust local, which `ein!(..)` reads whole (an array or a number), not its fields; bind the field first, e.g. `let w = &m.w;`, and use `w`",
            "`m` is a Rust local, which `ein!(..)` reads whole (an array or a number), not its fields; bind the field first, e.g. `let b = &m.b;`, and use `b`"
        ]
    );
    assert_eq!(
        errors("for i { pair.0[i] }"),
        ["`pair` is a Rust local, which `ein!(..)` reads whole (an array or a number), not its fields; bind the field first, e.g. `let pair_0 = &pair.0;`, and use `pair_0`"]
    );
    assert_eq!(
        errors("sum k { x[k] * self.w[k] }"),
        ["ein has no `self`: `ein!(..)` reads Rust locals by name; bind what it needs first, e.g. `let w = &self.w;`, and use `w`"]
    );
    // A `bool` beside a number: the hint converts the `bool` (no number casts to `bool`).
    assert_eq!(
        errors("fn f(x: [bool]) -> [i64] { for i { x[i] + 1 } }"),
        ["mismatched types: `bool` + an integer literal; a `bool` is not a number: cast it with `as i64` (or another integer type)"]
    );
    assert_eq!(
        errors("fn f(x: [bool], y: [i32]) -> [i32] { for i { y[i] * x[i] } }"),
        ["mismatched types: `i32` * `bool`; a `bool` is not a number: cast it with `as i32`"]
    );
    assert_eq!(
        errors("fn f(x: [bool]) -> [f64] { for i { x[i] * 2.0 } }"),
        ["mismatched types: `bool` * a float literal; a `bool` is not a number: use `if b { 1.0 } else { 0.0 }` for it"]
    );
    assert_eq!(
        errors("fn f(a: [f64]) -> f64 { a.max(1.0) }"),
        ["`max` works on single values, not `[f64]`; apply it to each element, e.g. `for i { a[i].max(..) }`"]
    );
    assert_eq!(
        errors("fn f(a: [f64], b: [f64]) -> [f64] { for i { a[i].hypot(b) } }"),
        ["`hypot` works on single values, not `[f64]`; index the array, e.g. `b[i]`"]
    );
    assert_eq!(errors("fn f(a: [bool]) -> [bool] { for i { a[i].abs() } }"), ["`abs` needs a number, found `bool`"]);
}

#[test]
fn expression_form_functions_narrow_captured_element_types() {
    // `sqrt` makes `a`'s element type a float, `rem_euclid` makes `n`'s an integer, `pow` with
    // an integer exponent makes `m`'s an integer and its exponent `u32`.
    let program = program("for i { (a[i].sqrt(), n[i].rem_euclid(3), m[i].pow(2), x[i].signum()) }");
    let classes: Vec<(String, crate::ir::NumberClass)> = program
        .type_params
        .iter()
        .map(|param| (program.var(param.witness().unwrap()).name.clone(), param.class))
        .collect();
    use crate::ir::NumberClass;
    assert_eq!(
        classes,
        [
            ("a".to_string(), NumberClass::Float),
            ("n".to_string(), NumberClass::Int),
            ("m".to_string(), NumberClass::Int),
            ("x".to_string(), NumberClass::Number)
        ]
    );
    assert_eq!(call_types(&program, "pow").0[1], Type::scalar(Scalar::U32));
}

#[test]
fn expression_form_rust_calls_are_typed_by_rustc() {
    use crate::ir::{NumberClass, TypeSource};
    // `sigmoid`'s result is a float (a float literal is added to it), `keep`'s a `bool` (a
    // condition); `scale`'s literal argument is left to rustc like a use-site literal.
    let program = program("for i { if keep(a[i]) { sigmoid(a[i]) + 1.0 } else { scale(a[i], 2.0) } }");
    let names: Vec<String> = program.rust_calls.iter().map(|call| call.name.to_string()).collect();
    assert_eq!(names, ["keep", "sigmoid", "scale"]);
    assert_eq!(program.rust_calls[0].ret, ScalarType::Known(Scalar::Bool));
    let sources: Vec<(TypeSource, NumberClass)> =
        program.type_params.iter().map(|param| (param.source, param.class)).collect();
    // The results of `sigmoid` and `scale` (one type: the two branches), `a`'s element type
    // and the literal `2.0`, in the order resolution meets them.
    assert_eq!(
        sources,
        [
            (TypeSource::CallResult(2), NumberClass::Float),
            (TypeSource::Capture(program.params[0]), NumberClass::Any),
            (TypeSource::UseSite, NumberClass::Float),
        ]
    );
    assert_eq!(program.rust_calls[2].params[1], ScalarType::Param(2));
    assert_eq!(program.rust_calls[1].ret, program.rust_calls[2].ret);
    // Arrays are not passed to Rust functions: ein calls them per element.
    assert_eq!(
        errors("sigmoid(for i { a[i] })"),
        ["this argument of `sigmoid` is `[_]`: ein calls a Rust function once per element, on single values (numbers, \
          `bool`); map it, e.g. `for i { sigmoid(a[i]) }`"]
    );
}

// ---------------------------------------------------------------------------------------------
// Calls between the functions of a block, and `extern fn`.

#[test]
fn a_call_is_inlined_and_its_sizes_come_from_the_arguments() {
    let program = program(
        "pub fn nearest(a: [[f64]], b: [[f64]]) -> [usize] { let d = pdist(a, b); for i { argmin j { d[i, j] } } }
         fn pdist(a: [[f64]], b: [[f64]]) -> [[f64]] { for i, j { sum k { (a[i, k] - b[j, k]) * (a[i, k] - b[j, k]) } } }",
    );
    // The callee's `k` ranges over both arguments' axis 1: one check before everything, over
    // the caller's parameters.
    assert_eq!(checks(&program), vec![("k".to_string(), "axis 1 of `a`".to_string(), "axis 1 of `b`".to_string())]);
    assert!(matches!(program.body.kind, ExprKind::Assert(_)));
    assert!(!nodes(&program).iter().any(|expr| matches!(expr.kind, ExprKind::Extern(_))));
}

#[test]
fn only_emitted_functions_are_units() {
    // `helper` is private and called: inlined only. `lonely` is private and never called: the
    // user's private Rust function, as before. `shared` is `pub` and called: both.
    let units = check(
        "fn helper(x: f64) -> f64 { x * 2.0 }
         pub fn shared(a: [f64]) -> [f64] { for i { helper(a[i]) } }
         fn lonely(a: [f64]) -> [f64] { shared(a) }",
    )
    .unwrap_or_else(|error| panic!("{error}"));
    let names: Vec<String> = units.iter().map(Unit::name_for_dump).collect();
    assert_eq!(names, ["fn shared", "fn lonely"]);
}

#[test]
fn an_index_passed_to_a_helper_is_sized_as_if_written_in_place() {
    let program = program(
        "pub fn sums(m: [[f64]]) -> [f64] { for i { row_sum(m, i) } }
         fn row_sum(rows: [[f64]], r: i64) -> f64 { sum k { rows[r, k] } }",
    );
    assert_eq!(
        sizes(&program),
        [("i".to_string(), "len(m, 0)".to_string()), ("k".to_string(), "len(m, 1)".to_string())]
    );
    assert!(bounds(&program).iter().all(|bounds| *bounds == Bounds::Proven));
}

#[test]
fn a_helper_takes_and_returns_tuples_and_records() {
    let program = program(
        "pub fn stats(x: [f64]) -> f64 { let s = moments((x, 2.0)); s.mean * s.spread }
         fn moments(input: ([f64], f64)) -> { mean: f64, spread: f64 } {
             { mean: sum k { input.0[k] } / input.1, spread: max k { input.0[k] } }
         }",
    );
    assert_eq!(program.body.ty, Type::scalar(Scalar::F64));
}

#[test]
fn call_errors_point_at_the_call_or_the_argument() {
    assert_eq!(
        errors("pub fn f(a: [f64]) -> f64 { f(a) }"),
        ["`f` calls itself: ein inlines every call of a function of the block, so functions cannot be recursive; \
          write the repetition as a `fold`"]
    );
    let mutual = errors("pub fn f(x: f64) -> f64 { g(x) } fn g(x: f64) -> f64 { h(x) } fn h(x: f64) -> f64 { f(x) }");
    assert_eq!(mutual.len(), 3, "{mutual:?}");
    assert!(mutual[0].starts_with("`f` calls `g`, which calls back into `f` (`f` → `g` → `h` → `f`)"), "{mutual:?}");
    assert_eq!(
        errors("pub fn f(a: [f64]) -> f64 { g(a, 1.0) } fn g(a: [f64]) -> f64 { a[0] }"),
        ["`g` takes 1 argument, found 2"]
    );
    assert_eq!(
        errors("pub fn f(a: [f64]) -> f64 { g(a) } fn g(a: [[f64]]) -> f64 { a[0, 0] }"),
        ["mismatched argument: parameter `a` of `g` is `[[f64]]` (rank 2, found rank 1), but this is `[f64]`"]
    );
    assert_eq!(
        errors("pub fn f(a: [f64]) -> f64 { g(a) } fn g(a: [i32]) -> f64 { 1.0 }"),
        ["mismatched argument: parameter `a` of `g` is `[i32]`, but this is `[f64]`"]
    );
    assert_eq!(
        errors("pub fn f(a: [f64]) -> f64 { pdis(a) } fn pdist(a: [f64]) -> f64 { a[0] }"),
        ["unknown function `pdis`; did you mean `pdist`?"]
    );
    // A size from a fold accumulator's length is its initial value's: accepted (its value
    // stays refused, tests/ui/sizes/size_depends_on_accumulator.rs).
    let sized_by_accumulator = "pub fn f(a: [usize], c0: [[f64]]) -> [[f64]] { \
        fold t in 0..3, c = c0 { for k in 0..c.len(), d in 0..c.shape(1) { c[k, d] + a[k] as f64 } } }";
    assert!(check(sized_by_accumulator).is_ok());
    // An axis length asked of a function (not `ln`, the closest name).
    assert_eq!(
        errors("pub fn f(x: [[f64]]) -> f64 { len(x, 0) as f64 }"),
        ["unknown function `len`; an array's axis lengths are methods: `a.len()` for axis 0, `a.shape(k)` for axis k"]
    );
    // The callee's own error is reported once, at the callee, not again at each call.
    let errors = errors("pub fn f(a: [f64]) -> f64 { g(a) + g(a) } fn g(a: [f64]) -> f64 { a[0] + 1 }");
    assert_eq!(errors.len(), 1, "{errors:?}");
}

#[test]
fn helper_names_and_into_are_checked() {
    assert_eq!(
        errors("pub fn f(a: [f64]) -> [f64] { g(a) } #[into(g_into)] fn g(a: [f64]) -> [f64] { a }"),
        ["`g` is a private helper of this block (other functions call it, and ein inlines it there), so no Rust \
          function `g_into` is generated; make it `pub` (or `pub(crate)`) to have one"]
    );
    let clash = check("pub fn exp(a: f64) -> f64 { a }").err().map(|error| error.to_string());
    assert_eq!(
        clash.as_deref(),
        Some("`exp` is one of ein's scalar functions, which calls of `exp` would mean; name this function differently")
    );
}

#[test]
fn extern_functions_are_scalar_calls_of_their_declared_types() {
    let program = program(
        "extern fn gamma(x: f64, n: i32) -> f64;
         pub fn f(a: [f64]) -> [f64] { for i { gamma(a[i], 3) } }",
    );
    let call = nodes(&program).into_iter().find(|expr| matches!(expr.kind, ExprKind::Extern(_))).expect("a call");
    assert_eq!(call.ty, Type::scalar(Scalar::F64));
    assert_eq!(
        errors("extern fn gamma(x: f64) -> f64; pub fn f(a: [f64]) -> [f64] { gamma(a) }"),
        ["mismatched argument: parameter `x` of `extern fn gamma` is `f64`, but this is `[f64]`; ein calls `gamma` \
          once per element: map it, e.g. `for i { gamma(a[i]) }`"]
    );
    assert_eq!(
        errors("extern fn gamma(x: f64) -> f64; pub fn f(gamma: [f64]) -> [f64] { for i { gamma(gamma[i]) } }"),
        ["`gamma` is also the name of a variable here, which would hide the Rust function `gamma` in the generated \
          code; rename the variable"]
    );
    assert_eq!(
        check("extern fn gamma(x: [f64]) -> f64;").err().map(|error| error.to_string()).as_deref(),
        Some(
            "`extern fn gamma` must take and return single values (`f64`, `i32`, `bool`, …): ein calls it once per \
             element; map it over an array with `for i { gamma(a[i]) }`"
        )
    );
}

#[test]
fn a_sub_array_argument_sizes_the_callee_through_its_let() {
    // `x` is a `let` of `a[i]`: the callee's `k` ranges over `a`'s axis 1, a variable of the
    // caller that the callee cannot name but that encloses it.
    let program = program(
        "pub fn ranges(a: [[f64]]) -> [f64] { for i { let r = range_of(a[i]); r.hi - r.lo } }
         fn range_of(x: [f64]) -> { lo: f64, hi: f64 } { { lo: min k { x[k] }, hi: max k { x[k] } } }",
    );
    let sizes = sizes(&program);
    assert_eq!(sizes[0], ("i".to_string(), "len(a, 0)".to_string()));
    assert!(sizes[1..].iter().all(|(index, size)| index == "k" && size == "len(a, 1)"), "{sizes:?}");
}

#[test]
fn scans_are_arrays_of_their_states_sized_by_their_range_or_their_reads() {
    let explicit = program("fn f(n: i64) -> [f64] { scan t in 0..n, s = 0.0 { s + 1.0 } }");
    assert_eq!(explicit.body.ty, Type::array(Type::scalar(Scalar::F64), 1));
    let ExprKind::Scan(node::Scan { count, .. }) = &explicit.body.kind else { panic!("a scan") };
    assert_eq!(crate::ir::expr_to_string(&explicit, count), "n");
    // Without a range, `t` takes its size from `x`, like a comprehension index, and the read
    // is proven in bounds.
    let inferred = program("fn f(x: [f64]) -> [f64] { scan t, s = 0.0 { s + x[t] } }");
    let ExprKind::Scan(node::Scan { count, .. }) = &inferred.body.kind else { panic!("a scan") };
    assert_eq!(crate::ir::expr_to_string(&inferred, count), "len(x, 0)");
    assert!(nodes(&inferred)
        .iter()
        .any(|node| matches!(node.kind, ExprKind::Index(node::Index { bounds: Bounds::Proven, .. }))));
    // A record state makes an array of records; inside a comprehension, a rank-2 result.
    let record = program("fn f(x: [f64]) -> [{ sum: f64, count: i64 }] { scan t, r = { sum: 0.0, count: 0 } { { sum: r.sum + x[t], count: r.count + 1 } } }");
    assert_eq!(record.body.ty.rank(), 1);
    let rows = program("fn f(a: [[f64]]) -> [[f64]] { for i { scan t, s = 0.0 { s + a[i, t] } } }");
    assert_eq!(rows.body.ty, Type::array(Type::scalar(Scalar::F64), 2));
}

#[test]
fn scan_errors_point_at_the_offending_token() {
    assert_eq!(
        errors("fn f(x: [f64]) -> [f64] { scan t in 0..x.len(), s = 0.0 { let y = x[t]; s < y } }"),
        ["the scan body has type `bool` but its initial value has type `f64`; they must be the same"]
    );
    assert_eq!(
        errors("fn f(x: [f64]) -> [f64] { scan t, s = 0.0 { s + 1.0 } }"),
        ["scan index `t` has no length: it never directly indexes an array; give it one with `scan t in 0..n, ..`"]
    );
    // An array state stacks its states (`[[f64]]`), keeping its shape every step.
    let states = program("fn f(x: [f64]) -> [[f64]] { scan t in 0..3, s = x { for i { s[i] * 2.0 } } }");
    assert_eq!(states.body.ty, Type::array(Type::scalar(crate::ir::Scalar::F64), 2));
    assert_eq!(
        errors("fn f(x: [f64]) -> [f64] { scan t in 0..3, s = x { for i { s[i] * 2.0 } } }"),
        ["the body has type `[[f64]]` but the function returns `[f64]`"]
    );
    // Inside a loop, the stacked rows' lengths could depend on its index unchecked.
    let nested = errors("fn f(x: [[f64]], z: [f64]) -> [[f64]] { for b { let s = scan t in 0..2, r = z { for j { r[j] + x[b, j] } }; for j { s[1, j] } } }");
    assert_eq!(nested.len(), 1);
    assert!(
        nested[0].starts_with("a scan whose state holds an array must be outside every comprehension"),
        "{nested:?}"
    );
    let irregular = errors("fn f(x: [f64]) -> [[f64]] { for i { scan t in 0..i, s = 0.0 { s + x[t] } } }");
    assert!(irregular[0].starts_with("the count of the scan over `t` depends on `i`"), "{irregular:?}");
}

#[test]
fn accums_take_the_type_of_their_initial_array_and_literals_from_the_result() {
    let hist =
        program("fn f(data: [u8]) -> [u32] { accum h = for b in 0..256 { 0 } { for k { h[data[k] as usize] += 1 } } }");
    assert_eq!(hist.body.ty, Type::array(Type::scalar(Scalar::U32), 1));
    let accum_of = |program: &Program| {
        nodes(program)
            .into_iter()
            .find_map(|node| match &node.kind {
                ExprKind::Accum(accum) => Some(accum.clone()),
                _ => None,
            })
            .expect("an accum")
    };
    let accum = accum_of(&hist);
    assert_eq!(accum.ops, [crate::ops::UpdateOp::Add]);
    assert!(crate::ir::accum::well_typed(&accum));
    let grid = program("fn f(a: [i64], b: [i64]) -> [[i64]] { accum h = for r in 0..3, c in 0..3 { 0 } { for i { h[a[i], b[i]] += 1; if a[i] > 0 { h[0, 0] *= 2 } } } }");
    let accum = accum_of(&grid);
    assert_eq!(accum.ops.len(), 2);
    assert!(crate::ir::accum::well_typed(&accum));
    // An update by a plain index sizes it by the target's axis.
    let sized = program("fn f(x: [f64]) -> [f64] { accum h = x { for i { h[i] *= 2.0 } } }");
    assert!(
        crate::ir::expr_to_string(&sized, &sized.body).contains("for i in 0..len(x, 0)"),
        "{}",
        crate::ir::expr_to_string(&sized, &sized.body)
    );
}

#[test]
fn accum_errors_point_at_the_offending_token() {
    assert_eq!(
        errors("fn f(x: [f64]) -> [f64] { for i { x[i] + 1.0 } + for i in 0..2 { x[i] += 1.0 } }"),
        ["ein has no assignment: an update of `x` (`+=`, `*=`, `|=`, `&=`) can only be a statement of the body of `accum x = init { .. }`, which builds a new array from `init`"]
    );
    let other = errors("fn f(x: [f64], g: [f64]) -> [f64] { accum h = x { for i { g[i] += 1.0 } } }");
    assert!(other[0].starts_with("`g` is not the array this accum builds"), "{other:?}");
    let read = errors("fn f(x: [f64]) -> [f64] { accum h = x { for i { h[i] += h[0] } } }");
    assert!(read[0].starts_with("`h` cannot be read inside its own accum body"), "{read:?}");
    let scalar = errors("fn f(x: f64) -> f64 { accum h = x { h[0] += 1.0 } }");
    assert!(
        scalar[0].starts_with("the initial value of `accum h` must be an array of numbers or `bool`s, found `f64`"),
        "{scalar:?}"
    );
    let rank = errors("fn f(x: [[f64]]) -> [[f64]] { accum h = x { h[0] += 1.0 } }");
    assert!(rank[0].starts_with("`h` has rank 2: an update gives one index per axis"), "{rank:?}");
    let value = errors("fn f(x: [f64]) -> [f64] { accum h = x { h[0] += 1 } }");
    assert!(value[0].contains("this update's value"), "{value:?}");
    let nested = errors("fn f(x: [f64]) -> [f64] { accum h = x { h[0] += sum k { h[k] += 1.0 } } }");
    assert!(nested.iter().any(|error| error.starts_with("ein has no assignment: an update of `h`")), "{nested:?}");
    let mixed = errors("fn f(x: [f64]) -> [f64] { accum h = x { h[0] += 1.0; for i { h[i] += 1.0 } } }");
    assert!(mixed[0].starts_with("the loops of an accum body must enclose all of its updates"), "{mixed:?}");
}

#[test]
fn tuple_reductions_type_component_wise() {
    let program = program("fn f(x: [f32]) -> (f32, i64) { sum k { (x[k], 1) } }");
    assert_eq!(program.body.ty, Type::tuple(vec![Type::scalar(Scalar::F32), Type::scalar(Scalar::I64)]));
    let program = program_of_record();
    assert!(matches!(program.body.ty, Type::Tuple { ref names, .. } if names == &["s", "q"]));
    let argmax = errors("fn f(x: [f64]) -> usize { argmax k { (x[k], x[k]) } }");
    assert_eq!(argmax.len(), 1);
    assert!(argmax[0].starts_with("`argmax` needs a number to compare, found `(f64, f64)`"), "{argmax:?}");
    let any = errors("fn f(x: [bool]) -> (bool, bool) { any k { (x[k], x[k]) } }");
    assert!(any[0].starts_with("`any` needs a `bool` body"), "{any:?}");
    let bools = errors("fn f(x: [bool]) -> (bool, f64) { sum k { (x[k], 1.0) } }");
    assert!(bools[0].starts_with("`sum` needs a number (or a tuple or record of numbers) body"), "{bools:?}");
}

fn program_of_record() -> Program {
    program("fn f(x: [f64]) -> { s: f64, q: f64 } { sum k { { s: x[k], q: x[k] * x[k] } } }")
}

#[test]
fn filters_are_rank_one_and_only_outside_loops() {
    let program = program("fn f(x: [f32]) -> [f32] { for i where x[i] > 0.0 { x[i] } }");
    assert!(matches!(program.body.kind, ExprKind::Filter(_)), "{:?}", program.body.kind);
    assert_eq!(program.body.ty, Type::array(Type::scalar(Scalar::F32), 1));
    let nested = errors("fn f(a: [[f64]]) -> [[f64]] { for i { for j where a[i, j] > 0.0 { a[i, j] } } }");
    assert!(nested[0].starts_with("a filter (`for … where`) cannot be inside a comprehension"), "{nested:?}");
    let in_sum = errors("fn f(a: [f64]) -> f64 { sum k { (for j where a[j] > a[k] { a[j] }).len() as f64 } }");
    assert!(in_sum[0].starts_with("a filter (`for … where`) cannot be inside"), "{in_sum:?}");
    let not_bool = errors("fn f(x: [f64]) -> [f64] { for i where x[i] { x[i] } }");
    assert!(not_bool[0].starts_with("the condition of `where` must be a `bool`, found `f64`"), "{not_bool:?}");
    let two = check("fn f(a: [[f64]]) -> [f64] { for i, j where a[i, j] > 0.0 { a[i, j] } }").map(|_| ()).unwrap_err();
    assert!(two.to_string().starts_with("a filter `for i where cond { e }` takes exactly one index"), "{two}");
}

#[test]
fn records_with_their_fields_in_another_order_say_so() {
    let note = "; the records have the same fields in another order: a record's fields are ordered, as a \
                tuple's, so write them in the order of its type";
    assert_eq!(
        errors("fn f(x: [f64]) -> { a: f64, b: i64 } { { b: 2, a: sum i { x[i] } } }"),
        [format!("the body has type `{{ b: integer, a: f64 }}` but the function returns `{{ a: f64, b: i64 }}`{note}")]
    );
    let fold = errors(
        "fn f(x: [f64]) -> { re: f64, im: f64 } {
            fold t in 0..x.len(), z = { re: 0.0, im: 0.0 } { { im: z.im + x[t], re: z.re * 2.0 } }
        }",
    );
    assert_eq!(fold.len(), 1);
    assert!(fold[0].starts_with("the fold body has type") && fold[0].ends_with(note), "{fold:?}");
    // Inside arrays and `if`s too; other mismatches of records get no note.
    let branches = errors(
        "fn f(x: [f64], c: bool) -> [{ a: f64, b: f64 }] {
            if c { for i { { a: x[i], b: 1.0 } } } else { for i { { b: x[i], a: 1.0 } } }
        }",
    );
    assert!(branches.len() == 1 && branches[0].ends_with(note), "{branches:?}");
    let other = errors("fn f(x: [f64]) -> { a: f64, b: f64 } { { a: 1.0, c: 2.0 } }");
    assert!(other.len() == 1 && !other[0].contains("another order"), "{other:?}");
}

#[test]
fn bitwise_operators_take_integers_of_one_type_or_booleans() {
    check("fn f(x: [u32], b: [bool]) -> ([u32], [bool], [u32]) { (for i { x[i] >> 3 & 7 ^ !x[i] }, for i { b[i] ^ b[i] | !b[i] }, for i { 1 << x[i] }) }").expect("checks");
    let floats = errors("fn f(x: [f64]) -> [f64] { for i { x[i] & 1.0 } }");
    assert!(floats[0].starts_with("`&` needs integers or booleans, found `f64`"), "{floats:?}");
    let shifted_bool = errors("fn f(b: [bool]) -> [bool] { for i { b[i] << b[i] } }");
    assert!(shifted_bool[0].starts_with("`<<` needs integers, found `bool`"), "{shifted_bool:?}");
    let mixed = errors("fn f(x: [u8], n: i64) -> [u8] { for i { x[i] << n } }");
    assert!(mixed[0].starts_with("mismatched types: `u8` << `i64`"), "{mixed:?}");
    let not_float = errors("fn f(x: [f32]) -> [f32] { for i { !x[i] } }");
    assert!(not_float[0].starts_with("`!` needs a `bool` or an integer, found `f32`"), "{not_float:?}");
}
