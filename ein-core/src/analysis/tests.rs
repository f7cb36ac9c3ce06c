//! The analysis stage's facts on small programs, after the pass pipeline as codegen sees them.

use super::*;
use crate::ir::node;

/// The optimised, numbered program of the single function in `source`.
fn prepared(source: &str) -> Program {
    let tokens: proc_macro2::TokenStream = source.parse().expect("test source tokenises");
    let input = crate::syntax::parse_input(tokens).expect("parses");
    let mut units = crate::check::check_input(input).expect("checks");
    let mut program = crate::passes::run_pipeline(units.remove(0).program, "test").expect("pipeline");
    prepare(&mut program);
    program
}

/// The variable the user named `name`.
fn var(program: &Program, name: &str) -> VarId {
    let position = program.vars.iter().position(|info| info.name == name);
    VarId(position.unwrap_or_else(|| panic!("no variable `{name}`")) as u32)
}

/// Every node of the program, in pre-order.
fn nodes(program: &Program) -> Vec<&Expr> {
    fn visit<'e>(expr: &'e Expr, nodes: &mut Vec<&'e Expr>) {
        nodes.push(expr);
        expr.for_each_child(|child| visit(child, nodes));
    }
    let mut nodes = Vec::new();
    visit(&program.body, &mut nodes);
    nodes
}

#[test]
fn nodes_are_numbered_in_pre_order_and_facts_cover_them() {
    let program = prepared("fn f(a: [[f64]], b: [f64]) -> [f64] { for i { sum j { a[i, j] * b[j] } } }");
    let nodes = nodes(&program);
    for (position, node) in nodes.iter().enumerate() {
        assert_eq!(node.id, NodeId(position as u32));
    }
    let analysis = Analysis::of(&program);
    assert!(analysis.nodes.len() >= nodes.len());
}

#[test]
fn failure_and_loops_are_facts_of_whole_subtrees() {
    let program = prepared("fn f(a: [i64], d: i64) -> [i64] { for i { a[i] / d + a[i + 1] } }");
    let analysis = Analysis::of(&program);
    let ExprKind::For(node::For { body, .. }) = &program.body.kind else { panic!("a comprehension: {program:?}") };
    // An integer division and a clamped read can fail; neither is a loop.
    assert!(analysis.may_fail(body));
    assert!(!analysis.can_reorder(body));
    assert!(analysis.may_fail(&program.body));
    let clean = prepared("fn f(a: [f64]) -> [f64] { for i { a[i] * 2.0 } }");
    let analysis = Analysis::of(&clean);
    let ExprKind::For(node::For { body, .. }) = &clean.body.kind else { panic!("a comprehension") };
    assert!(analysis.can_reorder(body));
    assert!(!analysis.may_fail(&clean.body), "the size is a length");
}

#[test]
fn shifted_clamped_reads_are_interior_reads_of_their_loop() {
    let program = prepared("fn f(a: [f64]) -> [f64] { for i in 0..a.len() { a[i + 1] - a[i - 2] + a[i] } }");
    let analysis = Analysis::of(&program);
    let (i, a) = (var(&program, "i"), var(&program, "a"));
    let offsets: Vec<i64> = analysis.interior_reads(i).iter().map(|read| read.shift.literal).collect();
    assert_eq!(offsets, [1, -2], "one per clamped read; `a[i]` is proven");
    assert!(analysis.interior_reads(i).iter().all(|read| read.array == a && read.axis == 0 && read.index == i));
    // An array bound inside the loop is not a candidate (its length is not known before it).
    let inner =
        prepared("fn f(a: [f64]) -> [f64] { for i in 0..a.len() { let b = for k in 0..3 { a[k] }; b[i + 1] } }");
    assert!(Analysis::of(&inner).interior_reads(var(&inner, "i")).is_empty());
    // A window read whose window size is known before the loop is one; one whose size reads
    // the loop's own index (a window growing with `i`) is not.
    let fixed = prepared("fn f(x: [f64], k: [f64]) -> [f64] { for i { sum w { x[i + w] * k[w] } } }");
    assert_eq!(Analysis::of(&fixed).interior_reads(var(&fixed, "i")).len(), 1);
    let growing = prepared("fn f(x: [f64]) -> [f64] { for i in 0..x.len() { sum w in 0..i + 1 { x[i + w] } } }");
    assert!(Analysis::of(&growing).interior_reads(var(&growing, "i")).is_empty());
}

#[test]
fn reads_shifted_by_terms_known_before_the_loop_are_interior_reads() {
    // A radius from a length, a parameter, and a trailing window (`i - k`).
    let program = prepared(
        "fn f(x: [f64], w: [f64], off: i64) -> ([f64], [f64]) { let r = w.len() / 2; \
         (for i in 0..x.len() { sum k { x[i + k - r] * w[k] } + x[off + i + 1] }, \
          for j in 0..x.len() { sum k in 0..w.len() { x[j - k] } }) }",
    );
    let analysis = Analysis::of(&program);
    let (i, j, k) = (var(&program, "i"), var(&program, "j"), var(&program, "k"));
    let reads = analysis.interior_reads(i);
    assert_eq!(reads.len(), 2, "{reads:?}");
    let [window, plain] = [&reads[0], &reads[1]];
    assert_eq!((window.window, window.shift.literal, window.shift.terms.len()), (Some((k, false)), 0, 1));
    assert!(window.shift.terms[0].0, "`r` is subtracted");
    assert_eq!((plain.window, plain.shift.literal, plain.shift.terms.len()), (None, 1, 1));
    let trailing = analysis.interior_reads(j);
    assert_eq!(trailing.len(), 1, "{trailing:?}");
    assert!(matches!(trailing[0].window, Some((_, true))), "the window is subtracted: {trailing:?}");
    // Not a shift known before the loop: a term that reads the loop's index, or an array
    // element of the loop, or the index subtracted.
    for source in [
        "fn f(x: [f64]) -> [f64] { for i in 0..x.len() { x[i + i] } }",
        "fn f(x: [f64], s: [i64]) -> [f64] { for i { x[i + s[i]] } }",
        "fn f(x: [f64]) -> [f64] { for i in 0..x.len() { x[3 - i] } }",
    ] {
        let program = prepared(source);
        assert!(Analysis::of(&program).interior_reads(var(&program, "i")).is_empty(), "{source}");
    }
}

#[test]
fn transposed_reads_tile_only_when_the_body_may_be_reordered() {
    let transposed = prepared("fn f(a: [[f64]]) -> [[f64]] { for i, j { a[j, i] } }");
    assert!(Analysis::of(&transposed).is_tiled(var(&transposed, "i")));
    let straight = prepared("fn f(a: [[f64]]) -> [[f64]] { for i, j { a[i, j] } }");
    assert!(!Analysis::of(&straight).is_tiled(var(&straight, "i")));
    let failing = prepared("fn f(a: [[i64]], d: i64) -> [[i64]] { for i, j { a[j, i] / d } }");
    assert!(!Analysis::of(&failing).is_tiled(var(&failing, "i")));
}

#[test]
fn row_work_counts_the_loops_inside_a_row() {
    let program = prepared("fn f(a: [[f64]], x: [f64]) -> [f64] { for i { sum j { a[i, j] * x[j] } } }");
    let analysis = Analysis::of(&program);
    let i = var(&program, "i");
    // One row is a sum over `j`, whose size is a length computed before the loops.
    let Some(Work::AtLeastOne(element)) = analysis.row_work(i) else { panic!("{:?}", analysis.row_work(i)) };
    assert!(matches!(&**element, Work::Size(size) if matches!(size.kind, ExprKind::Len(node::Len { axis: 1, .. }))));
    let constant = prepared("fn f(a: [f64]) -> [[f64]] { for i, j in 0..4 { a[i] * 2.0 } }");
    let analysis = Analysis::of(&constant);
    assert!(matches!(analysis.row_work(var(&constant, "i")), Some(Work::Const(4))));
}

#[test]
fn folds_know_their_fixed_points_and_reused_accumulators() {
    let frozen = prepared(
        "fn f(c: [f64], n: usize) -> [f64] { for i { fold t in 0..n, z = c[i] { if z > 4.0 { z } else { z * z + c[i] } } } }",
    );
    let analysis = Analysis::of(&frozen);
    let exit = analysis.fixed_point(var(&frozen, "t")).expect("a fixed point");
    assert!(!exit.stop_when || exit.lets.is_empty());
    let stepped = prepared(
        "fn f(a: [f64], n: usize) -> [f64] { for i { fold t in 0..n, x = a[i] { if t > 3 { x } else { x * 0.5 } } } }",
    );
    assert!(Analysis::of(&stepped).fixed_point(var(&stepped, "t")).is_none());
    let heat =
        prepared("fn f(a: [f64], n: usize) -> [f64] { fold t in 0..n, u = a { for i in 0..a.len() { u[i] * 0.5 } } }");
    let analysis = Analysis::of(&heat);
    let tails = analysis.reused_accumulator(var(&heat, "t")).expect("built by one comprehension");
    assert_eq!(tails.len(), 1);
    assert!(nodes(&heat).iter().any(|node| node.id == tails[0].1 && matches!(node.kind, ExprKind::For(_))));
    // An `if` that cannot fail builds only the side it chooses: either side's comprehension
    // may build in the spare. One that can fail (a division of integers) builds both.
    let alternating = prepared(
        "fn f(a: [f64], n: usize) -> [f64] { fold t in 0..n, u = a { if t % 2 == 0 { for i { u[i - 1] + u[i + 1] } } else { for i { u[i] * 0.5 } } } }",
    );
    let analysis = Analysis::of(&alternating);
    let tails = analysis.reused_accumulator(var(&alternating, "t")).expect("built by either side");
    assert_eq!(tails.len(), 2);
    // A tuple state: each array field built by a comprehension, at its path.
    let pair = prepared(
        "fn f(a: [f64], n: usize) -> ([f64], f64, [f64]) { fold t in 0..n, (u, s, v) = (a, 0.0, a) { (for i { v[i] }, s + u[0], for i { u[i] * 2.0 }) } }",
    );
    let analysis = Analysis::of(&pair);
    let builders = analysis.reused_accumulator(var(&pair, "t")).expect("built field by field");
    assert_eq!(builders.iter().map(|(path, _)| path.clone()).collect::<Vec<_>>(), [vec![0], vec![2]]);
    let failing = prepared(
        "fn f(a: [i64], n: usize) -> [i64] { fold t in 0..n, u = a { if t % 2 == 0 { for i { u[i] / 2 } } else { for i { 2 / u[i] } } } }",
    );
    assert!(Analysis::of(&failing).reused_accumulator(var(&failing, "t")).is_none());
}

#[test]
fn reads_include_the_shapes_evaluated_before_the_loops() {
    let program = prepared("fn f(a: [[f64]], unused: f64) -> [[f64]] { for i { for j { a[i, j] } } }");
    let analysis = Analysis::of(&program);
    assert!(analysis.is_read(var(&program, "a")));
    assert!(!analysis.is_read(var(&program, "unused")));
    assert!(analysis.undeclared().is_none());
    let i = var(&program, "i");
    assert_eq!(analysis.enclosing(var(&program, "j")), [i]);
}

/// The element of the innermost comprehension (the body under every `for`).
fn innermost_element(program: &Program) -> (VarId, &Expr) {
    let mut found = None;
    let mut node = &program.body;
    loop {
        node = match &node.kind {
            ExprKind::For(node::For { index, body, .. }) => {
                found = Some((*index, &**body));
                body
            }
            ExprKind::Let(node::Let { body, .. }) | ExprKind::Assert(node::Assert { body, .. }) => body,
            _ => break,
        };
    }
    found.unwrap_or_else(|| panic!("a comprehension in {program}"))
}

#[test]
fn short_reduction_nests_run_side_by_side_only_where_order_cannot_show() {
    let levels = |source: &str| {
        let program = prepared(source);
        let analysis = Analysis::of(&program);
        let (index, element) = innermost_element(&program);
        analysis.jam(index, element).map(|jam| jam.levels.iter().map(|level| level.op).collect::<Vec<_>>())
    };
    // A convolution: two sums around a term whose only failure, a clamped read of an empty
    // axis, happens alike in any order; a `max` inside a `sum`; integers.
    let conv =
        "fn f(x: [[f32]], k: [[f32]]) -> [[f32]] { for i, j { sum di, dj { x[i + di - 2, j + dj - 2] * k[di, dj] } } }";
    assert_eq!(levels(conv), Some(vec![ReduceOp::Sum, ReduceOp::Sum]));
    let dilate = "fn f(x: [[i32]]) -> [[i32]] { for i, j { max d in 0..3 { x[i, j + d - 1] } } }";
    assert_eq!(levels(dilate), Some(vec![ReduceOp::Max]));
    // An epilogue around the nest (a distance's `sqrt`), reads along `j`.
    let norm = "fn f(a: [[f64]], b: [[f64]]) -> [[f64]] { for i, j { sqrt(sum k { a[i, k] * a[i, k] + b[k, j] }) } }";
    assert_eq!(levels(norm), Some(vec![ReduceOp::Sum]));
    // An argmax as the outermost reduction (a best and its position per element).
    let column_argmax = "fn f(a: [[f64]]) -> [[usize]] { for i, j { argmax k { a[k, j] + a[i, j] } } }";
    assert_eq!(levels(column_argmax), Some(vec![ReduceOp::ArgMax]));
    let argmin_of_sums = "fn f(t: [[[f64]]]) -> [usize] { for j { argmin i { sum k { t[i, k, j] } } } }";
    assert_eq!(levels(argmin_of_sums), Some(vec![ReduceOp::ArgMin, ReduceOp::Sum]));
    // A nest reading what its epilogue binds; a failure that depends on the values (a
    // divisor); a size that depends on the comprehension's index; an argmax inside another
    // reduction; an epilogue that can fail around an argmax (which would fail first one
    // element at a time, where side by side the argmax of no rows does).
    let bound_outside = "fn f(x: [[f64]]) -> [[f64]] { for i, j { let r = x[j]; sum k { r[k] * x[k, i] } } }";
    assert_eq!(levels(bound_outside), None);
    assert_eq!(levels("fn f(a: [[i64]], d: [i64]) -> [[i64]] { for i, j { sum k { a[i, k] / d[j] } } }"), None);
    assert_eq!(
        levels("fn f(a: [f64], n: usize) -> [[f64]] { for i in 0..n, j in 0..n { sum k in 0..j { a[k] } } }"),
        None
    );
    assert_eq!(levels("fn f(a: [[f64]]) -> [usize] { for j { max k { argmax l { a[l, j] + a[k, j] } } } }"), None);
    let failing_epilogue = "fn f(a: [[f64]], d: [usize]) -> [usize] { for j { argmax i { a[i, j] } / d[j] } }";
    assert_eq!(levels(failing_epilogue), None);
    assert_eq!(
        levels("fn f(a: [[f64]], d: [usize]) -> [usize] { for j { argmax i { a[i, j] } / 2 } }"),
        Some(vec![ReduceOp::ArgMax])
    );
}

#[test]
fn reads_across_the_side_by_side_index_read_a_transposed_copy() {
    // The reads of `b` across `j`, by the copy each reads side by side, and the axis moved.
    let transposed = |source: &str| {
        let program = prepared(source);
        let analysis = Analysis::of(&program);
        let (index, element) = innermost_element(&program);
        let jam = analysis.jam(index, element)?;
        let names = jam.transposed.values().map(|(copy, axis)| (program.var(*copy).name.clone(), *axis)).collect();
        Some((jam.levels.len(), names))
    };
    // A distance (not a contraction); the two reads of `b` read one copy.
    let distances =
        "fn f(a: [[f64]], b: [[f64]]) -> [[f64]] { for i, j { sqrt(sum k { (a[i, k] - b[j, k]) * (a[i, k] - b[j, k]) }) } }";
    let copy = ("__ein_b_by_0".to_string(), 0);
    assert_eq!(transposed(distances), Some((1, vec![copy.clone(), copy])));
    // A rank-3 array read across its middle axis.
    let middle = "fn f(a: [[f64]], u: [[[f64]]]) -> [[f64]] { for i, j { sum k { max(u[k, j, i], a[i, k]) } } }";
    assert_eq!(transposed(middle), Some((1, vec![("__ein_u_by_1".to_string(), 1)])));
    // No copy where no loop around reads the array again (a single row of results), nor for a
    // read that is not at the plain index.
    assert_eq!(
        transposed("fn f(a: [f64], b: [[f64]]) -> [f64] { for j in 0..b.len() { sum k { max(a[k], b[j, k]) } } }"),
        None
    );
    let shifted =
        "fn f(a: [[f64]], b: [[f64]]) -> [[f64]] { for i, j in 0..b.len() { sum k { a[i, k] * b[j / 2, k] } } }";
    assert_eq!(transposed(shifted), None);
    // Nor where each element is read once, along its rows (a mean per plane of a batch).
    let planes = "fn f(x: [[[[f32]]]]) -> [[f32]] { for b, c { sum h, w { x[b, c, h, w] } } }";
    assert_eq!(transposed(planes), None);
}

#[test]
fn remainders_that_wrap_at_most_once_are_recognised() {
    // Every remainder in the program, with whether it wraps at most once.
    let wraps = |source: &str| {
        let program = prepared(source);
        let analysis = Analysis::of(&program);
        nodes(&program)
            .into_iter()
            .filter_map(|node| match &node.kind {
                ExprKind::Binary(node::Binary { op: crate::ir::BinaryOp::Rem, lhs, rhs }) => {
                    Some(analysis.wrap(lhs, rhs).map(|wrap| wrap.within_one_turn))
                }
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    // The torus neighbours of Game of Life: `i + n - 1`, `i + 1`, `n - 1 + j`, `i + n`.
    let torus = "fn f(g: [[u8]]) -> [[(i64, i64, i64, i64)]] { let h = g.len(); let w = g.shape(1);
        for i in 0..h, j in 0..w { ((i + h - 1) % h, (i + 1) % h, (w - 1 + j) % w, (i + h) % h) } }";
    assert_eq!(wraps(torus), [Some(true); 4]);
    // By another loop's size (a wrap in that loop's interior only); by a literal, an offset
    // that can exceed the size, a scaled index: none.
    let others = "fn f(g: [[u8]]) -> [[(i64, i64, i64, i64)]] { let h = g.len(); let w = g.shape(1);
        for i in 0..h, j in 0..w { ((i + 1) % w, (i + 1) % 7, (i + 2) % h, (2 * i + j - j) % h) } }";
    assert_eq!(wraps(others), [Some(false), None, None, None]);
    // A fold's state read on a torus: its length is the range only at run time.
    let rule = "fn f(c0: [u8], n: i64) -> [u8] { fold t in 0..n, c = c0 { for i { \
        c[(i + c.len() - 1) % c.len()] + c[(i + 1) % c.len()] } } }";
    assert_eq!(wraps(rule), [Some(false), Some(false)]);
}

/// The scan step fact of the (first) scan over `index` in `source`: `None` for a serial scan,
/// else its operation, which side the accumulator is on, its `let` count and whether it may
/// run in parallel.
fn scan_fact(
    source: &str,
    index: &str,
) -> Option<(crate::ir::scan::StepOp, crate::ir::scan::AccumulatorSide, usize, bool)> {
    let program = prepared(source);
    let analysis = Analysis::of(&program);
    let fact = analysis.scan_step(var(&program, index))?;
    Some((fact.step.op, fact.step.side, fact.step.lets.len(), fact.parallel))
}

#[test]
fn scans_with_an_associative_step_are_blocked_and_parallel_when_their_value_cannot_fail() {
    use crate::ir::scan::{AccumulatorSide::*, StepOp::*};
    let prefix = "fn f(x: [f64]) -> [f64] { scan t, s = 0.0 { s + x[t] } }";
    assert_eq!(scan_fact(prefix, "t"), Some((Add, Left, 0, true)));
    let product = "fn f(x: [f32]) -> [f32] { scan t, p = 1.0 { x[t] * p } }";
    assert_eq!(scan_fact(product, "t"), Some((Mul, Right, 0, true)));
    let running_max = "fn f(x: [i32]) -> [i32] { scan t, m = x[0] { max(m, x[t]) } }";
    assert_eq!(scan_fact(running_max, "t"), Some((Max, Left, 0, true)));
    let method = "fn f(x: [f64]) -> [f64] { scan t, m = 0.0 { x[t].min(m) } }";
    assert_eq!(scan_fact(method, "t"), Some((Min, Right, 0, true)));
    let any = "fn f(x: [f64]) -> [bool] { scan t, seen = false { seen || x[t] > 0.0 } }";
    assert_eq!(scan_fact(any, "t"), Some((Or, Left, 0, true)));
    // A `let` before the combination is part of the step's value.
    let with_let = "fn f(x: [f64]) -> [f64] { scan t, s = 0.0 { let y = exp(x[t]); s + y * y } }";
    assert_eq!(scan_fact(with_let, "t"), Some((Add, Left, 1, true)));
    // A read that can fail (clamped: `x` may be empty while the scan runs) keeps the grouping
    // but not the parallel phases, which would evaluate values out of order.
    let clamped = "fn f(x: [f64], n: i64) -> [f64] { scan t in 0..n, s = 0.0 { s + x[t] } }";
    assert_eq!(scan_fact(clamped, "t"), Some((Add, Left, 0, false)));
}

#[test]
fn scans_whose_step_is_not_associative_are_serial() {
    for source in [
        "fn f(x: [f64]) -> [f64] { scan t, s = 0.0 { s - x[t] } }",
        "fn f(x: [f64]) -> [f64] { scan t, s = 0.0 { s * 0.5 + x[t] } }",
        "fn f(x: [f64]) -> [f64] { scan t, s = 1.0 { s + s * x[t] } }",
        "fn f(x: [f64]) -> [f64] { scan t, s = 0.0 { let y = s * x[t]; s + y } }",
        "fn f(x: [f64]) -> [f64] { scan t, s = 0.0 { if x[t] > 0.0 { s + x[t] } else { s } } }",
        "fn f(x: [f64]) -> [(f64, i64)] { scan t, (s, c) = (0.0, 0) { (s + x[t], c + 1) } }",
    ] {
        assert_eq!(scan_fact(source, "t"), None, "{source}");
    }
}

#[test]
fn elementwise_comprehensions_read_whole_elements_only_for_flat_runs() {
    // The arrays read, by name, when every use of the indices is a whole proven read.
    let sources = [
        ("fn f(a: [[u8]], b: [[u8]]) -> [[u8]] { for i, j { a[i, j] / 2 + b[i, j] / 2 } }", Some(vec!["a", "b"])),
        ("fn f(a: [[[f64]]]) -> [[[f64]]] { for p, i, j { a[p, i, j] * 2.0 } }", Some(vec!["a"])),
        // An index used as a value, a shifted or transposed read, another read of the array.
        ("fn f(a: [[i64]]) -> [[i64]] { for i, j { a[i, j] + i } }", None),
        ("fn f(a: [[f64]]) -> [[f64]] { for i, j { a[i, j] + a[i, j + 1] } }", None),
        ("fn f(a: [[f64]]) -> [[f64]] { for i, j in 0..a.len() { a[j, i] } }", None),
        ("fn f(a: [[f64]]) -> [[f64]] { for i, j { a[i, j] - a[0, 0] } }", None),
    ];
    expect_reads(&sources, 0);
}

#[test]
fn reads_ending_in_the_innermost_indices_may_merge_those_axes() {
    // The last two indices of the comprehension: every use of them ends a proven read.
    let sources = [
        // Lengths of the axes kept are allowed; other indices may be anything without `h`, `w`.
        ("fn f(x: [[[[f32]]]]) -> [[[f32]]] { for b, h, w { sum c { x[b, c, h, w] } } }", Some(vec!["x"])),
        ("fn f(x: [[[[f32]]]], s: [f32]) -> [[[[f32]]]] { for b, c, h, w { x[b, c, h, w] * s[c] } }", Some(vec!["x"])),
        ("fn f(x: [[[f32]]], k: [usize]) -> [[[f32]]] { for b, h, w { x[b, h, w] * (k[b] as f32) } }", Some(vec!["x"])),
        // A length of a merged axis, the indices in another order, an index as a value.
        ("fn f(x: [[[f32]]]) -> [[[f32]]] { for b, h, w { x[b, h, w] / (x.shape(2) as f32) } }", None),
        ("fn f(x: [[[f32]]]) -> [[[f32]]] { for b, h, w in 0..x.shape(1) { x[b, w, h] } }", None),
        ("fn f(x: [[[f32]]]) -> [[[f32]]] { for b, h, w { x[b, h, w] + (w as f32) } }", None),
    ];
    expect_reads(&sources, 2);
}

/// Each source's arrays read ([`reads_of`]) are the names expected, or none may run as one.
fn expect_reads(sources: &[(&str, Option<Vec<&str>>)], tail: usize) {
    for (source, expected) in sources {
        let expected = expected.as_ref().map(|names| names.iter().map(|name| name.to_string()).collect::<Vec<_>>());
        assert_eq!(reads_of(source, tail), expected, "{source}");
    }
}

/// The arrays read by the comprehension nest of `source`'s body as [`flat_reads`] (`tail` 0)
/// or [`tail_reads`] of its last `tail` indices give them, by name.
fn reads_of(source: &str, tail: usize) -> Option<Vec<String>> {
    let program = prepared(source);
    let mut node = &program.body;
    let mut indices = Vec::new();
    loop {
        node = match &node.kind {
            ExprKind::For(node::For { index, body, .. }) => {
                indices.push(*index);
                body
            }
            ExprKind::Let(node::Let { body, .. }) | ExprKind::Assert(node::Assert { body, .. }) => body,
            _ => break,
        };
    }
    let reads = match tail {
        0 => flat_reads(&indices, node),
        _ => tail_reads(&indices[indices.len() - tail..], node),
    };
    reads.map(|arrays| arrays.iter().map(|&array| program.var(array).name.clone()).collect::<Vec<_>>())
}

#[test]
fn interleaved_reads_are_whole_reads_by_literal_channel() {
    let cases: [(&str, Option<usize>); 8] = [
        ("fn f(img: [[[u8]]]) -> [[u8]] { for i, j { img[i, j, 0] / 2 + img[i, j, 2] / 2 } }", Some(3)),
        ("fn f(img: [[[f32]]]) -> [[f32]] { for i, j { img[i, j, 3] * img.shape(2) as f32 } }", Some(4)),
        // Only channel 0: one channel is no interleaving to exploit.
        ("fn f(img: [[[f32]]]) -> [[f32]] { for i, j { img[i, j, 0] } }", None),
        // A channel chosen at run time, or a loop over channels.
        ("fn f(img: [[[f32]]], c: i64) -> [[f32]] { for i, j { img[i, j, c] + img[i, j, 1] } }", None),
        ("fn f(img: [[[f32]]]) -> [[f32]] { for i, j { sum c { img[i, j, c] } + img[i, j, 1] } }", None),
        // A row read whole, or a vector's literal positions.
        ("fn f(img: [[[f32]]]) -> [[f32]] { for i, j { sum c { img[i][j][c] } + img[i, j, 1] } }", None),
        ("fn f(v: [f32], w: [f32]) -> [f32] { for i { v[0] + v[2] + w[i] } }", None),
        // A channel past any K (the read clamps): no copy, and no overflow.
        ("fn f(img: [[[f32]]]) -> [[f32]] { for i, j { img[i, j, 0] + img[i, j, 9223372036854775807] } }", None),
    ];
    for (source, expected) in cases {
        let program = prepared(source);
        let array = program.params[0];
        assert_eq!(interleaved_reads(array, &program.body), expected, "{source}");
    }
}
