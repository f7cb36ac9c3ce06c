//! Unit tests of code generation on hand-built IR programs: the output parses as Rust and
//! contains the expected runtime calls. `samples` also lists wrappers that make each output a
//! complete Rust item, so an ignored test can write them into a scratch crate for a real
//! `cargo build`/`clippy` with warnings denied.

use super::generate;
use crate::ir::node;
use crate::ir::{
    BinaryOp, Bounds, Expr, ExprKind, Form, Func, FunctionHeader, Literal, NumberClass, Program, ReduceOp, Scalar,
    ScalarType, SizeCheck, Type, TypeParam, UnaryOp, VarId, VarInfo, VarKind,
};
use proc_macro2::{Span, TokenStream};
use quote::ToTokens;

fn span() -> Span {
    Span::call_site()
}

/// Builds a program's variable table alongside its body.
#[derive(Default)]
struct Builder {
    vars: Vec<VarInfo>,
    params: Vec<VarId>,
    type_params: Vec<TypeParam>,
}

impl Builder {
    fn declare(&mut self, name: &str, ty: Type, kind: VarKind) -> VarId {
        let id = VarId(self.vars.len() as u32);
        self.vars.push(VarInfo { name: name.to_string(), ty, kind, span: span() });
        id
    }

    fn param(&mut self, name: &str, ty: Type) -> VarId {
        let id = self.declare(name, ty, VarKind::Param);
        self.params.push(id);
        id
    }

    fn index(&mut self, name: &str) -> VarId {
        self.declare(name, Type::I64, VarKind::Index)
    }

    fn type_param(&mut self, witness: VarId, class: NumberClass) -> ScalarType {
        self.type_params.push(TypeParam {
            source: crate::ir::TypeSource::Capture(witness),
            class,
            signed: false,
            casts: Vec::new(),
        });
        ScalarType::Param(self.type_params.len() - 1)
    }

    fn var(&self, id: VarId) -> Expr {
        Expr::new(ExprKind::Var(id), self.vars[id.0 as usize].ty.clone(), span())
    }

    fn program(self, body: Expr) -> Program {
        Program { params: self.params, vars: self.vars, type_params: self.type_params, rust_calls: Vec::new(), body }
    }
}

fn array(scalar: Scalar, rank: usize) -> Type {
    Type::array(Type::scalar(scalar), rank)
}

fn f32_literal(value: f64) -> Expr {
    Expr::new(ExprKind::Literal(Literal::float(value)), Type::scalar(Scalar::F32), span())
}

fn i64_literal(value: i64) -> Expr {
    Expr::new(ExprKind::Literal(Literal::Int(value)), Type::I64, span())
}

fn for_each(index: VarId, size: Expr, body: Expr) -> Expr {
    let ty = body.ty.with_outer_axis();
    Expr::new(ExprKind::For(node::For { index, size: Box::new(size), body: Box::new(body) }), ty, span())
}

fn at(array: Expr, index: Expr, bounds: Bounds) -> Expr {
    let ty = array.ty.indexed().expect("indexing an array");
    Expr::new(ExprKind::Index(node::Index { array: Box::new(array), index: Box::new(index), bounds }), ty, span())
}

fn len(array: Expr, axis: usize) -> Expr {
    Expr::new(ExprKind::Len(node::Len { array: Box::new(array), axis }), Type::I64, span())
}

fn binary(op: BinaryOp, lhs: Expr, rhs: Expr) -> Expr {
    let ty = if op.is_comparison() || op.is_logical() { Type::BOOL } else { lhs.ty.clone() };
    Expr::new(ExprKind::Binary(node::Binary { op, lhs: Box::new(lhs), rhs: Box::new(rhs) }), ty, span())
}

fn reduce(op: ReduceOp, index: VarId, size: Expr, body: Expr) -> Expr {
    let ty = match op {
        ReduceOp::ArgMax | ReduceOp::ArgMin => Type::scalar(Scalar::Usize),
        ReduceOp::All | ReduceOp::Any => Type::BOOL,
        _ => body.ty.clone(),
    };
    Expr::new(ExprKind::Reduce(node::Reduce { op, index, size: Box::new(size), body: Box::new(body) }), ty, span())
}

fn call(func: Func, args: Vec<Expr>) -> Expr {
    let ty = args[0].ty.clone();
    Expr::new(ExprKind::Call(node::Call { func, args }), ty, span())
}

fn project(tuple: Expr, field: usize) -> Expr {
    let ty = match &tuple.ty {
        Type::Tuple { fields, .. } => fields[field].clone(),
        other => panic!("projecting {other:?}"),
    };
    Expr::new(ExprKind::Project(node::Project { tuple: Box::new(tuple), field }), ty, span())
}

fn header(name: &str) -> Form {
    header_into(name, None)
}

fn header_into(name: &str, into: Option<&str>) -> Form {
    Form::Function(Box::new(FunctionHeader {
        // With `into`, attributes to pass through to both functions (or, `must_use`, not).
        attrs: match into {
            Some(_) => vec![syn::parse_quote!(#[must_use]), syn::parse_quote!(#[inline])],
            None => Vec::new(),
        },
        vis: syn::parse_quote!(pub),
        name: proc_macro2::Ident::new(name, span()),
        into: into.map(|into| proc_macro2::Ident::new(into, span())),
        jvp: None,
        reverse: None,
        ret_span: span(),
    }))
}

/// A function with `#[into(name_into)]`: the returning function and the writing one.
fn with_into(name: &'static str, program: Program) -> (Sample, Sample) {
    let into = Box::leak(format!("{name}_into").into_boxed_str());
    let full =
        generate(&program, &header_into(name, Some(into)), &[]).unwrap_or_else(|error| panic!("{name}: {error}"));
    let file: syn::File = syn::parse2(full.clone()).unwrap_or_else(|error| panic!("{name}: {error}:\n{full}"));
    let [returning, writing] = file.items.as_slice() else { panic!("{name}: expected two items in\n{full}") };
    let sample = |name: &'static str, item: &syn::Item| {
        let full = item.to_token_stream();
        let tokens = portable_copy(full.clone()).unwrap_or_else(|error| panic!("{name}: {error}:\n{full}"));
        Sample { name, tokens, full, wrapper: None }
    };
    (sample(name, returning), sample(into, writing))
}

/// One generated sample: its Rust text and how to wrap it into a complete item.
struct Sample {
    name: &'static str,
    /// What the tests read: for a function, without its wide copies (see [`portable_copy`]).
    tokens: TokenStream,
    /// Everything generated.
    full: TokenStream,
    /// For an expression-form sample: `fn name(params) -> ret`, whose body it becomes.
    wrapper: Option<&'static str>,
}

fn function(name: &'static str, program: Program) -> Sample {
    let full = generate(&program, &header(name), &[]).unwrap_or_else(|error| panic!("{name}: {error}"));
    let tokens = portable_copy(full.clone()).unwrap_or_else(|error| panic!("{name}: {error}:\n{full}"));
    Sample { name, tokens, full, wrapper: None }
}

/// A generated function without its AVX-512 and AVX2+FMA copies, after checking that the
/// copies are there and are the same body as the portable one (the first two statements of the
/// function are `#[cfg(…)] { #[target_feature(…)] unsafe fn copy(same parameters) { body }
/// if … }`, the AVX-512 copy first).
pub(crate) fn portable_copy(tokens: TokenStream) -> Result<TokenStream, String> {
    let file: syn::File = syn::parse2(tokens).map_err(|error| format!("not items ({error})"))?;
    // The function, not its mirrored copies (`passes::by_columns`).
    let by_columns = |item: &syn::Item| {
        let mirrored = |name: String| crate::passes::by_columns::Mirror::ALL.iter().any(|m| name.ends_with(m.suffix()));
        matches!(item, syn::Item::Fn(copy) if mirrored(copy.sig.ident.to_string()))
    };
    let mut functions = file.items.into_iter().filter(|item| !is_settings_tracker(item) && !by_columns(item));
    let (Some(syn::Item::Fn(mut item)), None) = (functions.next(), functions.next()) else {
        return Err("not one function item (expected `fn`)".into());
    };
    let text = |tokens: &dyn ToTokens| tokens.to_token_stream().to_string();
    // Nor the calls of those copies.
    while item.block.stmts.first().is_some_and(|first| text(first).contains("columns_first")) {
        item.block.stmts.remove(0);
    }
    let mut copies = Vec::new();
    for features in ["avx512f,avx512vl,avx512bw,avx512dq,avx512cd,avx2,fma", "avx2,fma"] {
        if item.block.stmts.is_empty() {
            return Err("an empty function".into());
        }
        let syn::Stmt::Expr(syn::Expr::Block(dispatch), None) = item.block.stmts.remove(0) else {
            return Err(format!("no dispatch block for the {features} copy"));
        };
        let has_cfg = dispatch.attrs.iter().any(|attr| attr.path().is_ident("cfg"));
        let copy = dispatch.block.stmts.iter().find_map(|stmt| match stmt {
            syn::Stmt::Item(syn::Item::Fn(copy)) => Some(copy.clone()),
            _ => None,
        });
        let Some(copy) = copy.filter(|_| has_cfg) else {
            return Err(format!("no `#[cfg]` block with the {features} copy"));
        };
        let feature = copy.attrs.iter().find(|attr| attr.path().is_ident("target_feature"));
        if feature.map(|attr| text(attr)) != Some(format!("# [target_feature (enable = \"{features}\")]")) {
            return Err(format!("the copy is not compiled for {features}"));
        }
        copies.push(copy);
    }
    for copy in copies {
        let same_signature =
            text(&copy.sig.inputs) == text(&item.sig.inputs) && text(&copy.sig.output) == text(&item.sig.output);
        if !same_signature || copy.sig.unsafety.is_none() {
            return Err("a copy's signature differs".into());
        }
        let portable = syn::Block { brace_token: item.block.brace_token, stmts: item.block.stmts.clone() };
        if text(&copy.block) != text(&portable) {
            return Err("a copy's body differs from the portable body".into());
        }
    }
    Ok(item.to_token_stream())
}

fn expression(name: &'static str, program: Program, wrapper: &'static str) -> Sample {
    let tokens = generate(&program, &Form::Expression, &[]).unwrap_or_else(|error| panic!("{name}: {error}"));
    if let Err(error) = syn::parse2::<syn::Expr>(tokens.clone()) {
        panic!("{name} does not parse as an expression ({error}):\n{tokens}");
    }
    Sample { name, full: tokens.clone(), tokens, wrapper: Some(wrapper) }
}

fn text(sample: &Sample) -> String {
    sample.tokens.to_string()
}

/// The text with all whitespace removed, so that comparisons do not depend on how tokens
/// are spaced when printed.
fn squeeze(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

fn assert_contains(sample: &Sample, needles: &[&str]) {
    let text = squeeze(&text(sample));
    for needle in needles {
        assert!(text.contains(&squeeze(needle)), "{}: expected `{needle}` in\n{}", sample.name, sample.tokens);
    }
}

fn assert_lacks(sample: &Sample, needles: &[&str]) {
    let text = squeeze(&text(sample));
    for needle in needles {
        assert!(!text.contains(&squeeze(needle)), "{}: unexpected `{needle}` in\n{}", sample.name, sample.tokens);
    }
}

/// `fn matmul(a: [[f32]], b: [[f32]]) -> [[f32]] { for i, j { sum k { a[i, k] * b[k, j] } } }`
/// with the size of `k` asserted equal between `a` and `b`.
fn matmul() -> Sample {
    function("matmul", matmul_program())
}

fn matmul_program() -> Program {
    let mut b = Builder::default();
    let a = b.param("a", array(Scalar::F32, 2));
    let bm = b.param("b", array(Scalar::F32, 2));
    let (i, j, k) = (b.index("i"), b.index("j"), b.index("k"));
    let product = binary(
        BinaryOp::Mul,
        at(at(b.var(a), b.var(i), Bounds::Proven), b.var(k), Bounds::Proven),
        at(at(b.var(bm), b.var(k), Bounds::Proven), b.var(j), Bounds::Proven),
    );
    let sum = reduce(ReduceOp::Sum, k, len(b.var(a), 1), product);
    let body = for_each(i, len(b.var(a), 0), for_each(j, len(b.var(bm), 1), sum));
    let check = SizeCheck {
        left: len(b.var(a), 1),
        right: len(b.var(bm), 0),
        left_what: "axis 1 of `a`".into(),
        right_what: "axis 0 of `b`".into(),
        index_name: "k".into(),
        span: span(),
    };
    let ty = body.ty.clone();
    let body = Expr::new(ExprKind::Assert(node::Assert { checks: vec![check], body: Box::new(body) }), ty, span());
    b.program(body)
}

/// `fn shift(a: [f32]) -> [f32] { for i { a[i + 1] - a[i] } }`
fn shift() -> Sample {
    let mut b = Builder::default();
    let a = b.param("a", array(Scalar::F32, 1));
    let i = b.index("i");
    let next = at(b.var(a), binary(BinaryOp::Add, b.var(i), i64_literal(1)), Bounds::Clamped);
    let body = for_each(i, len(b.var(a), 0), binary(BinaryOp::Sub, next, at(b.var(a), b.var(i), Bounds::Proven)));
    function("shift", b.program(body))
}

/// `fn polar(p: [{re: f64, im: f64}]) -> [{r: f64, re: f64}]`: reads a record array (two
/// columns) and builds one.
fn polar() -> Sample {
    function("polar", polar_program())
}

fn polar_program() -> Program {
    let mut b = Builder::default();
    let record = Type::Tuple { fields: vec![Type::scalar(Scalar::F64); 2], names: vec!["re".into(), "im".into()] };
    let p = b.param("p", Type::array(record, 1));
    let i = b.index("i");
    let re = || project(at(b.var(p), b.var(i), Bounds::Proven), 0);
    let im = project(at(b.var(p), b.var(i), Bounds::Proven), 1);
    let norm = call(
        Func::Sqrt,
        vec![binary(BinaryOp::Add, binary(BinaryOp::Mul, re(), re()), binary(BinaryOp::Mul, im.clone(), im))],
    );
    let fields = vec![Type::scalar(Scalar::F64); 2];
    let element = Expr::new(
        ExprKind::Tuple(vec![norm, re()]),
        Type::Tuple { fields, names: vec!["r".into(), "re".into()] },
        span(),
    );
    let body = for_each(i, len(b.var(p), 0), element);
    b.program(body)
}

/// `fn transpose_add(a: [[f32]], b: [[f32]]) -> [[f32]] { for i, j { a[i, j] + b[j, i] } }`
/// (sizes from `a`; the checks that `b` agrees are left out here) and the same with a clamped
/// read, which may fail and so must not be reordered.
fn transpose_adds() -> (Sample, Sample) {
    let sample = |name: &'static str, bounds: Bounds| {
        let mut b = Builder::default();
        let a = b.param("a", array(Scalar::F32, 2));
        let bt = b.param("b", array(Scalar::F32, 2));
        let (i, j) = (b.index("i"), b.index("j"));
        let sum = binary(
            BinaryOp::Add,
            at(at(b.var(a), b.var(i), Bounds::Proven), b.var(j), Bounds::Proven),
            at(at(b.var(bt), b.var(j), bounds), b.var(i), Bounds::Proven),
        );
        let body = for_each(i, len(b.var(a), 0), for_each(j, len(b.var(a), 1), sum));
        function(name, b.program(body))
    };
    (sample("transpose_add", Bounds::Proven), sample("transpose_add_clamped", Bounds::Clamped))
}

/// `fn total(a: [f32]) -> f32 { sum k { a[k] } }`: a top-level, parallel reduction.
fn total() -> Sample {
    let mut b = Builder::default();
    let a = b.param("a", array(Scalar::F32, 1));
    let k = b.index("k");
    let body = reduce(ReduceOp::Sum, k, len(b.var(a), 0), at(b.var(a), b.var(k), Bounds::Proven));
    function("total", b.program(body))
}

/// `fn best(a: [f64]) -> usize { argmax k { a[k] } }` (top level) and
/// `fn row_best(m: [[i32]]) -> [usize] { for i { argmin k { m[i, k] } } }` (in a loop).
fn arg_reductions() -> (Sample, Sample) {
    let mut b = Builder::default();
    let a = b.param("a", array(Scalar::F64, 1));
    let k = b.index("k");
    let body = reduce(ReduceOp::ArgMax, k, len(b.var(a), 0), at(b.var(a), b.var(k), Bounds::Proven));
    let best = function("best", b.program(body));

    let mut b = Builder::default();
    let m = b.param("m", array(Scalar::I32, 2));
    let (i, k) = (b.index("i"), b.index("k"));
    let read = at(at(b.var(m), b.var(i), Bounds::Proven), b.var(k), Bounds::Proven);
    let body = for_each(i, len(b.var(m), 0), reduce(ReduceOp::ArgMin, k, len(b.var(m), 1), read));
    (best, function("row_best", b.program(body)))
}

/// `fn smooth(x: [f32], n: i64) -> [f32] { fold t in 0..n, acc = x { for i { (acc[i - 1] + acc[i]) * 0.5 } } }`
fn smooth() -> Sample {
    let mut b = Builder::default();
    let x = b.param("x", array(Scalar::F32, 1));
    let n = b.param("n", Type::I64);
    let t = b.index("t");
    let acc = b.declare("acc", array(Scalar::F32, 1), VarKind::Accumulator);
    let i = b.index("i");
    let previous = at(b.var(acc), binary(BinaryOp::Sub, b.var(i), i64_literal(1)), Bounds::Clamped);
    let average = binary(
        BinaryOp::Mul,
        binary(BinaryOp::Add, previous, at(b.var(acc), b.var(i), Bounds::Proven)),
        f32_literal(0.5),
    );
    let step = for_each(i, len(b.var(acc), 0), average);
    let ty = step.ty.clone();
    let body = Expr::new(
        ExprKind::Fold(node::Fold {
            index: t,
            count: Box::new(b.var(n)),
            acc,
            init: Box::new(b.var(x)),
            body: Box::new(step),
        }),
        ty,
        span(),
    );
    function("smooth", b.program(body))
}

/// `ein!(for i { a[i] * 2 + s })` and `ein!(sum k { a[k] })` over a captured `a` and `s`
/// whose element type rustc decides.
fn generic_expressions() -> (Sample, Sample) {
    let mut b = Builder::default();
    let a = b.declare("a", Type::I64, VarKind::Param);
    let s = b.declare("s", Type::I64, VarKind::Param);
    let element = b.type_param(a, NumberClass::Number);
    b.vars[a.0 as usize].ty = Type::array(Type::Scalar(element), 1);
    b.vars[s.0 as usize].ty = Type::Scalar(element);
    b.params = vec![a, s];
    let i = b.index("i");
    let two = Expr::new(ExprKind::Literal(Literal::Int(2)), Type::Scalar(element), span());
    let scaled = binary(BinaryOp::Mul, at(b.var(a), b.var(i), Bounds::Proven), two);
    let body = for_each(i, len(b.var(a), 0), binary(BinaryOp::Add, scaled, b.var(s)));
    let scale = expression("scale", b.program(body), "fn scale(a: &Vec<f64>, s: f64) -> ::ein::Array<f64, 1>");

    let mut b = Builder::default();
    let a = b.declare("a", Type::I64, VarKind::Param);
    let element = b.type_param(a, NumberClass::Number);
    b.vars[a.0 as usize].ty = Type::array(Type::Scalar(element), 1);
    b.params = vec![a];
    let k = b.index("k");
    let body = reduce(ReduceOp::Sum, k, len(b.var(a), 0), at(b.var(a), b.var(k), Bounds::Proven));
    (scale, expression("generic_sum", b.program(body), "fn generic_sum(a: Vec<i32>) -> i32"))
}

/// `fn softmax(x: [[f32]]) -> [[f32]] { for i, j { let m = max k x[i,k]; exp(x[i,j] - m) / sum k exp(x[i,k] - m) } }`
/// with a `let` of a row (`let r = x[i]`), a negation and a select on the way.
fn softmax() -> Sample {
    let mut b = Builder::default();
    let x = b.param("x", array(Scalar::F32, 2));
    let (i, j, k1, k2, k3) = (b.index("i"), b.index("j"), b.index("k"), b.index("k"), b.index("k"));
    let r = b.declare("r", array(Scalar::F32, 1), VarKind::Let);
    let m = b.declare("m", Type::scalar(Scalar::F32), VarKind::Let);
    let row = || at(b.var(r), b.var(k1), Bounds::Proven);
    let max = reduce(ReduceOp::Max, k1, len(b.var(r), 0), row());
    let exp_at = |index: VarId| {
        call(Func::Exp, vec![binary(BinaryOp::Sub, at(b.var(r), b.var(index), Bounds::Proven), b.var(m))])
    };
    let denominator = reduce(ReduceOp::Sum, k2, len(b.var(r), 0), exp_at(k2));
    let ratio = binary(BinaryOp::Div, exp_at(j), denominator);
    let denominator = reduce(ReduceOp::Sum, k3, len(b.var(r), 0), exp_at(k3));
    let ratio_again = binary(BinaryOp::Div, exp_at(j), denominator);
    let negative = Expr::new(
        ExprKind::Unary(node::Unary { op: UnaryOp::Neg, operand: Box::new(ratio_again) }),
        ratio.ty.clone(),
        span(),
    );
    let positive = binary(BinaryOp::Gt, b.var(m), f32_literal(0.0));
    let select = Expr::new(
        ExprKind::Select(node::Select {
            cond: Box::new(positive),
            then: Box::new(ratio),
            otherwise: Box::new(negative),
        }),
        Type::scalar(Scalar::F32),
        span(),
    );
    let inner = Expr::new(
        ExprKind::Let(node::Let {
            var: m,
            value: Box::new(max),
            body: Box::new(for_each(j, len(b.var(x), 1), select)),
        }),
        array(Scalar::F32, 1),
        span(),
    );
    let let_row = Expr::new(
        ExprKind::Let(node::Let {
            var: r,
            value: Box::new(at(b.var(x), b.var(i), Bounds::Proven)),
            body: Box::new(inner),
        }),
        array(Scalar::F32, 1),
        span(),
    );
    let body = for_each(i, len(b.var(x), 0), let_row);
    function("softmax", b.program(body))
}

fn samples() -> Vec<Sample> {
    let (best, row_best) = arg_reductions();
    let (scale, generic_sum) = generic_expressions();
    let (transpose_add, transpose_add_clamped) = transpose_adds();
    vec![
        matmul(),
        transpose_add,
        transpose_add_clamped,
        shift(),
        polar(),
        total(),
        best,
        row_best,
        smooth(),
        scale,
        generic_sum,
        softmax(),
        order(),
        literals(),
    ]
}

#[test]
fn matmul_sizes_come_from_lengths_and_the_check_runs_first() {
    let sample = matmul();
    assert_contains(
        &sample,
        &[
            "pub fn matmul",
            "a: &(impl ?::core::marker::Sized + ::ein::__private::AsView<::core::primitive::f32, 2>)",
            "-> ::ein::Array<::core::primitive::f32, 2>",
            "let a = ::ein::__private::AsView::<_, 2>::as_view(a);",
            "::ein::__private::check_same_size(a.size(1), b.size(0), \"k\", \"axis 1 of `a`\", \"axis 0 of `b`\", &__ein_site)",
            "let __ein_size_i = a.len_of(0);",
            // The element count is checked (no product can wrap) before the allocation.
            "let __ein_len = ::ein::__private::shape_len([__ein_size_i, __ein_size_j], &__ein_site_2);",
            "::ein::__private::Buffer::<::core::primitive::f32>::new(__ein_len)",
            // Each element sums over `k`: the rows' work, for the choice of serial or parallel.
            // In pieces of rows where the rows are too few for the pool.
            "::ein::__private::fill_pieces(&mut __ein_buffer, if __ein_size_j == 0 { 0 } else { __ein_size_i }, __ein_size_j, ::core::primitive::usize::saturating_mul(__ein_size_j, ::core::cmp::Ord::max(a.len_of(1), 1)), |__ein_start, __ein_end, __ein_piece_len, __ein_outs|",
            // Versioned: a copy for unit-stride last axes, the general one for any layout.
            "match (a.unit_inner(), b.unit_inner()) {",
            "(::core::option::Option::None, _) | (_, ::core::option::Option::None) => { let (a, b) = (a, b);",
            "(::core::option::Option::Some(a), ::core::option::Option::Some(b)) => {",
            "for _ in __ein_start..__ein_end { let (i, __ein_piece_first) = (__ein_next_piece.0 as ::core::primitive::i64, __ein_next_piece.1 * __ein_piece_len);",
            "let __ein_piece_count = if __ein_piece_len == __ein_size_j { __ein_size_j } else { ::core::cmp::Ord::min(__ein_piece_len, __ein_size_j - __ein_piece_first) };",
            // (A piece is the row but for a few long rows.)
            // A short sum (a plain fold, below `PLAIN_BELOW`) runs for 32 elements of the row
            // side by side (four AVX2 registers of f32), one accumulator each, a step of every
            // one before the next, then for eight ...
            "let mut __ein_jammed = 0usize; if a.len_of(1) < <::core::primitive::f32 as ::ein::__private::Accumulate>::PLAIN_BELOW { while __ein_jammed + 32 <= __ein_piece_count { let mut __ein_acc = [0.0f32; 32]; for __ein_position in 0..a.len_of(1) { for __ein_lane in 0..32 { __ein_acc[__ein_lane] = ::core::ops::Add::add(__ein_acc[__ein_lane], { let k = __ein_position as ::core::primitive::i64; let j = (__ein_piece_first + __ein_jammed + __ein_lane) as ::core::primitive::i64;",
            "::ein::__private::Fill::fill(__ein_outs, 32, |__ein_lane, __ein_slot| { ::ein::__private::Push::push(__ein_slot, { __ein_acc[__ein_lane] }); }); __ein_jammed += 32; } while __ein_jammed + 8 <= __ein_piece_count { let mut __ein_acc = [0.0f32; 8];",
            "::ein::__private::Fill::fill(__ein_outs, 8, |__ein_lane, __ein_slot| { ::ein::__private::Push::push(__ein_slot, { __ein_acc[__ein_lane] }); }); __ein_jammed += 8; } }",
            // ... and the rest of the row is one counted loop.
            "::ein::__private::Fill::fill(__ein_outs, __ein_piece_count - __ein_jammed, |__ein_position_2, __ein_slot_2| { let j = (__ein_piece_first + __ein_jammed + __ein_position_2) as ::core::primitive::i64;",
            "let __ein_sum_k = ::ein::__private::Accumulate::fold_range(a.len_of(1), 0.0f32, ::core::ops::Add::add, |__ein_position_3| { let k = __ein_position_3 as ::core::primitive::i64;",
            "unsafe { a.get_unchecked([i as ::core::primitive::usize, k as ::core::primitive::usize]) }",
            "::ein::__private::Push::push(__ein_slot_2, __ein_sum_k);",
            "__ein_buffer.into_array([__ein_size_i, __ein_size_j])",
        ],
    );
    let text = text(&sample);
    assert!(text.find("check_same_size").unwrap() < text.find("fill_pieces").unwrap());
    assert_eq!(text.matches("fold_range").count(), 2, "one reduction per copy");
}

#[test]
fn a_one_dimensional_output_is_one_counted_loop_per_chunk() {
    let sample = shift();
    assert_contains(
        &sample,
        &[
            "::ein::__private::fill_chunks(&mut __ein_buffer, __ein_size_i, 1, 1, 1, |__ein_start, __ein_end, __ein_outs|",
            // `a[i + 1]` clamps only at the edges: the loop runs in three parts.
            "let (__ein_low, __ein_high) = ::ein::__private::interior(__ein_start, __ein_end - __ein_start, &[(a.len_of(0), 1i64)]);",
            "::ein::__private::Fill::fill(__ein_outs, __ein_low, |__ein_position, __ein_slot| { let i = (__ein_start + __ein_position) as ::core::primitive::i64;",
            "::ein::__private::Fill::fill(__ein_outs, __ein_high - __ein_low, |__ein_position_2, __ein_slot_2| { let i = (__ein_start + __ein_low + __ein_position_2) as ::core::primitive::i64;",
            "unsafe { a.get_unchecked([i.wrapping_add(1i64) as ::core::primitive::usize]) }",
            "::ein::__private::Fill::fill(__ein_outs, __ein_end - __ein_start - __ein_high, |__ein_position_3, __ein_slot_3| { let i = (__ein_start + __ein_high + __ein_position_3) as ::core::primitive::i64;",
        ],
    );
    assert_lacks(&sample, &["for __ein_row"]);
    // Two copies (versioned) of the two edges clamp; the interiors do not.
    assert_eq!(text(&sample).matches("clamp_index").count(), 4);
}

#[test]
fn a_transposed_read_is_tiled_unless_the_body_may_fail() {
    let (plain, clamped) = transpose_adds();
    assert_contains(
        &plain,
        &[
            "::ein::__private::fill_chunks(&mut __ein_buffer, if __ein_size_j == 0 { 0 } else { __ein_size_i }, __ein_size_j, ::ein::__private::jammed_chunk_rows(__ein_size_i, ::ein::__private::TILE_HEIGHT), __ein_size_j, |__ein_start, __ein_end, __ein_outs|",
            "::ein::__private::Fill::fill_tiled(__ein_outs, (__ein_end - __ein_start, __ein_size_j), __ein_start, |__ein_row_2: ::core::primitive::usize| __ein_row_2 + 1, |__ein_row_2, __ein_column, __ein_slot| { let i = __ein_row_2 as ::core::primitive::i64; let j = __ein_column as ::core::primitive::i64;",
            "unsafe { b.get_unchecked([j as ::core::primitive::usize, i as ::core::primitive::usize]) }",
        ],
    );
    assert_contains(&clamped, &["::ein::__private::Fill::fill(__ein_outs, __ein_low,"]);
    assert_lacks(&clamped, &["fill_tiled", "TILE_HEIGHT"]);
    // Nothing is tiled when every read walks along rows.
    assert_lacks(&matmul(), &["fill_tiled"]);
}

#[test]
fn a_stack_of_transposed_matrices_is_tiled_in_rows_of_its_first_two_axes() {
    let stack = compiled("fn f(x: [[[f32]]]) -> [[[f32]]] { for c, i, j { x[c, j, i] * 2.0 } }");
    assert!(stack.contains("__ein_size_c*__ein_size_i},__ein_size_j,::ein::__private::jammed_chunk_rows("), "{stack}");
    // The pairs (c, i) are counted from the chunk's first row, not divided per element.
    let counted = "fill_tiled(__ein_outs,(__ein_end-__ein_start,__ein_size_j),(__ein_start/__ein_size_i,__ein_start%__ein_size_i),";
    assert!(stack.contains(counted), "{stack}");
    assert!(
        stack.contains("let(c,i)=(__ein_row_2.0as::core::primitive::i64,__ein_row_2.1as::core::primitive::i64);"),
        "{stack}"
    );
    // An index read nowhere is bound to nothing.
    let inner_only = compiled("fn f(y: [[f32]], n: usize) -> [[[f32]]] { for c in 0..n, i, j { y[j, i] } }");
    assert!(inner_only.contains("let(_,i)=(__ein_row_2.0"), "{inner_only}");
    // Not deeper stacks (their rows are matrices), nor bodies that may fail.
    let deeper = compiled("fn f(x: [[[[f32]]]]) -> [[[[f32]]]] { for d, c, i, j { x[d, c, j, i] } }");
    assert!(!deeper.contains("fill_tiled"), "{deeper}");
    let failing = compiled("fn f(x: [[[i32]]]) -> [[[i32]]] { for c, i, j { x[c, j, i] / x[c, i, j] } }");
    assert!(!failing.contains("fill_tiled"), "{failing}");
}

#[test]
fn nested_loop_nests_are_versioned_once() {
    let sample = smooth();
    // The fold's comprehension is versioned on `acc`, once.
    assert_eq!(text(&sample).matches("unit_inner").count(), 1, "{}", sample.tokens);
    let sample = softmax();
    assert_eq!(text(&sample).matches("unit_inner").count(), 1, "{}", sample.tokens);
}

#[test]
fn a_shifted_read_is_clamped() {
    let sample = shift();
    assert_contains(
        &sample,
        &[
            "::ein::__private::clamp_index(i.wrapping_add(1i64), a.len_of(0), \"a\", 0, &__ein_site)",
            "unsafe { a.get_unchecked([i as ::core::primitive::usize]) }",
        ],
    );
}

#[test]
fn records_are_stored_and_read_by_column() {
    let sample = polar();
    assert_contains(
        &sample,
        &[
            "p: (&(impl ?::core::marker::Sized + ::ein::__private::AsView<::core::primitive::f64, 1>), &(impl ?::core::marker::Sized + ::ein::__private::AsView<::core::primitive::f64, 1>))",
            "-> (::ein::Array<::core::primitive::f64, 1>, ::ein::Array<::core::primitive::f64, 1>)",
            "let p = (::ein::__private::AsView::<_, 1>::as_view(p.0), ::ein::__private::AsView::<_, 1>::as_view(p.1));",
            "unsafe { p.0.get_unchecked([i as ::core::primitive::usize]) }",
            "(::ein::__private::Buffer::<::core::primitive::f64>::new(__ein_size_i), ::ein::__private::Buffer::<::core::primitive::f64>::new(__ein_size_i))",
            "(__ein_buffer.0.into_array([__ein_size_i]), __ein_buffer.1.into_array([__ein_size_i]))",
        ],
    );
    // Each read of `p[i].re` reads only the `re` column.
    assert_lacks(&sample, &["unsafe { p.0.get_unchecked([i as ::core::primitive::usize]) }, unsafe { p.1"]);
}

#[test]
fn a_top_level_sum_is_a_parallel_reduce() {
    let sample = total();
    assert_contains(
        &sample,
        &[
            "match (a.unit_inner(),) { #[allow(unused_variables)] (::core::option::Option::None,) => { let (a,) = (a,);",
            // Each chunk's loop is in a closure of the generated function (and so compiled with
            // its target features), not a closure per value called from the runtime.
            // The view is copied into the chunk's closure (kept in registers, see `local_copies`).
            "::ein::__private::reduce(a.len_of(0), |__ein_start, __ein_end| { #[allow(unused_variables)] let (a,) = (a,); ::ein::__private::Accumulate::fold_range(__ein_end - __ein_start, 0.0f32, ::core::ops::Add::add, |__ein_step| { let __ein_position = __ein_start + __ein_step; let k = __ein_position as ::core::primitive::i64; unsafe { a.get_unchecked([k as ::core::primitive::usize]) } }) }, ::core::ops::Add::add)",
            "(::core::option::Option::Some(a),) => { ::ein::__private::reduce(",
        ],
    );
}

#[test]
fn argmax_keeps_the_first_best_and_reports_empty_ranges() {
    let (best, row_best) = arg_reductions();
    assert_contains(
        &best,
        &[
            // Versioned for unit strides, each chunk with its own copy of the view.
            "match { match (a.unit_inner(),) { #[allow(unused_variables)] (::core::option::Option::None,) => { let (a,) = (a,);",
            "::ein::__private::reduce(a.len_of(0), |__ein_start, __ein_end| { #[allow(unused_variables)] let (a,) = (a,); ::ein::__private::arg_range::<_, true>(__ein_start, __ein_end, ::core::option::Option::None, __ein_start == 0, |__ein_position| {",
            "(::core::option::Option::Some(a),) => { ::ein::__private::reduce(",
            "if __ein_right > __ein_left {",
            "::ein::__private::empty_arg_reduction(\"argmax\", \"k\", &__ein_site)",
        ],
    );
    assert_contains(
        &row_best,
        &[
            "let mut __ein_best_k = ::core::option::Option::None;",
            "__ein_best_k = ::ein::__private::arg_range::<_, false>(0, __ein_count_k, __ein_best_k, true,",
            "::ein::__private::empty_arg_reduction(\"argmin\", \"k\", &__ein_site)",
            "-> ::ein::Array<::core::primitive::usize, 1>",
        ],
    );
}

#[test]
fn a_fold_keeps_its_array_accumulator_in_an_owned_store() {
    let sample = smooth();
    assert_contains(
        &sample,
        &[
            "let __ein_count_t = ::ein::__private::check_size(n, \"t\", &__ein_site) as ::core::primitive::i64;",
            // The parameter is read in place by the first step, not copied into the state.
            "let __ein_acc_initial = ::ein::__private::IntoView::into_view(x);",
            "let mut __ein_acc_state = ::core::option::Option::<::ein::Array<::core::primitive::f32, 1>>::None;",
            "for _t in 0..__ein_count_t",
            "let acc = match &__ein_acc_state { \
                 ::core::option::Option::Some(__ein_current) => __ein_current.view(), \
                 ::core::option::Option::None => __ein_acc_initial, \
             };",
            // Each step's array is built in the allocation of the accumulator of the step before.
            "let mut __ein_acc_spare = ::core::option::Option::None;",
            "::ein::__private::Buffer::recycle(&mut __ein_acc_spare, __ein_size_i)",
            "__ein_acc_spare = ::core::option::Option::replace(&mut __ein_acc_state, __ein_store);",
            // The buffer not returned is kept for the next call.
            "::ein::__private::Buffer::retire(__ein_acc_spare);",
            // Only a fold of no steps copies its initial array.
            "let __ein_acc_state = match __ein_acc_state { \
                 ::core::option::Option::Some(__ein_acc_state) => __ein_acc_state, \
                 ::core::option::Option::None => __ein_acc_initial.to_array(), \
             };",
            "0.5f32",
        ],
    );
    assert_lacks(&sample, &["x.to_array()"]);
}

#[test]
fn generic_expressions_leave_element_types_to_rustc() {
    let (scale, generic_sum) = generic_expressions();
    assert_contains(
        &scale,
        &[
            // A local generic function of the captured locals, the element type a parameter
            // bounded by what the program does with it, passed on its own at the user's token.
            "fn __ein_expression<EinElem0: ::ein::Num>(__ein_element_0: ::core::marker::PhantomData<EinElem0>, __ein_a: &(impl ?::core::marker::Sized + ::ein::__private::AsView<EinElem0, 1>), __ein_s: EinElem0) -> ::ein::Array<EinElem0, 1>",
            "let __ein_result = __ein_expression(::ein::AsView::<_, 1>::element_type(&a), &a, s); __ein_result",
            "let __ein_a = ::ein::__private::AsView::<_, 1>::as_view(__ein_a);",
            "::ein::__private::Buffer::new(__ein_size_i)",
            "::ein::__private::Fill::fill(__ein_outs, __ein_end - __ein_start, |__ein_position, __ein_slot| { let i = (__ein_start + __ein_position) as ::core::primitive::i64;",
            "::ein::__private::Num::add(::ein::__private::Num::mul(unsafe { __ein_a.get_unchecked([i as ::core::primitive::usize]) }, ::ein::__private::Num::from_int_literal::<{ 2i64 }>()), __ein_s)",
        ],
    );
    assert_lacks(&scale, &["f64", "f32"]);
    // The scalar parameter is copied into the chunk closure, so that LLVM keeps it in a
    // register instead of reloading it through the captured reference after every write.
    assert_contains(
        &scale,
        &["|__ein_start, __ein_end, __ein_outs| { #[allow(unused_variables)] let (__ein_a, __ein_s) = (__ein_a, __ein_s);"],
    );
    assert_contains(
        &generic_sum,
        &[
            "::ein::__private::reduce(__ein_a.len_of(0), |__ein_start, __ein_end| { #[allow(unused_variables)] let (__ein_a,) = (__ein_a,); ::ein::__private::Accumulate::fold_range(__ein_end - __ein_start, ::ein::__private::zero(::core::marker::PhantomData::<EinElem0>),",
            "::ein::__private::Num::add",
        ],
    );
}

#[test]
fn softmax_binds_rows_and_evaluates_both_sides_of_a_select() {
    let sample = softmax();
    assert_contains(
        &sample,
        &[
            "let r = unsafe { x.sub_unchecked::<1, 1>([i as ::core::primitive::usize]) };",
            // The reduction's result is the `let`'s variable.
            "let m = ::ein::__private::Accumulate::fold_range(r.len_of(0), ::core::primitive::f32::NEG_INFINITY, ::core::primitive::f32::max, |__ein_position| { let k = __ein_position as ::core::primitive::i64; unsafe { r.get_unchecked([k as ::core::primitive::usize]) } });",
            "::ein::__private::Float::exp(",
            "if m > 0.0f32",
        ],
    );
    // Two distinct index variables named `k`, in sibling reductions, may share the name.
    assert_lacks(&sample, &["for k_"]);
}

/// `fn order(a: [i64], idx: [i64], d: i64) -> [i64] { for i { a[idx[i]] / d + sum k { a[k] } } }`:
/// the division (which may fail) is evaluated before the reduction's loop, as the IR orders it.
fn order() -> Sample {
    let mut b = Builder::default();
    let a = b.param("a", array(Scalar::I64, 1));
    let idx = b.param("idx", array(Scalar::I64, 1));
    let d = b.param("d", Type::I64);
    let (i, k) = (b.index("i"), b.index("k"));
    let gather = at(b.var(a), at(b.var(idx), b.var(i), Bounds::Proven), Bounds::Clamped);
    let quotient = binary(BinaryOp::Div, gather, b.var(d));
    let total = reduce(ReduceOp::Sum, k, len(b.var(a), 0), at(b.var(a), b.var(k), Bounds::Proven));
    let body = for_each(i, len(b.var(idx), 0), binary(BinaryOp::Add, quotient, total));
    function("order", b.program(body))
}

/// Literals of every kind, and a negated one: `(-3, i64::MIN, -0.0, NaN, 2.5e-8, 7 as f32)`.
fn literals() -> Sample {
    let mut b = Builder::default();
    let x = b.param("x", Type::scalar(Scalar::F64));
    let int = |value: i64| i64_literal(value);
    let float = |value: f64| Expr::new(ExprKind::Literal(Literal::float(value)), Type::scalar(Scalar::F64), span());
    let negated =
        Expr::new(ExprKind::Unary(node::Unary { op: UnaryOp::Neg, operand: Box::new(int(3)) }), Type::I64, span());
    let cast = Expr::new(
        ExprKind::Cast(node::Cast { operand: Box::new(int(7)), to: ScalarType::Known(Scalar::F32), saturating: false }),
        Type::scalar(Scalar::F32),
        span(),
    );
    let items = vec![
        negated,
        int(i64::MIN),
        float(-0.0),
        float(f64::NAN),
        binary(BinaryOp::Mul, b.var(x), float(2.5e-8)),
        cast,
    ];
    let ty = Type::tuple(items.iter().map(|item| item.ty.clone()).collect());
    let body = Expr::new(ExprKind::Tuple(items), ty, span());
    function("literals", b.program(body))
}

#[test]
fn operands_that_may_fail_are_evaluated_in_order() {
    let sample = order();
    let text = squeeze(&text(&sample));
    let division =
        text.find(&squeeze("let __ein_operand = ::ein::__private::int_div(")).expect("the division is bound");
    let reduction = text.find(&squeeze("fold_range")).expect("the reduction loop");
    assert!(division < reduction, "{}", sample.tokens);
    // `a[idx[i]]`: the inner read is computed before the outer `unsafe` block.
    assert_contains(&sample, &["let __ein_at = ::ein::__private::clamp_index(unsafe { idx.get_unchecked("]);
}

#[test]
fn literals_are_spelled_exactly() {
    let sample = literals();
    assert_contains(
        &sample,
        &["(-3i64, ::core::primitive::i64::MIN, -0.0f64, ::core::primitive::f64::NAN, x * 2.5e-8f64, 7.0f32)"],
    );
}

#[test]
fn types_and_runtime_items_are_named_by_absolute_paths() {
    const PRELUDE_SENSITIVE: [&str; 11] =
        ["f32", "f64", "i32", "i64", "usize", "bool", "Vec", "Option", "Some", "None", "Result"];
    fn check(tokens: TokenStream, name: &str) {
        let mut previous: Option<proc_macro2::TokenTree> = None;
        for tree in tokens {
            if let proc_macro2::TokenTree::Group(group) = &tree {
                check(group.stream(), name);
            }
            if let proc_macro2::TokenTree::Ident(ident) = &tree {
                let after_path =
                    matches!(&previous, Some(proc_macro2::TokenTree::Punct(punct)) if punct.as_char() == ':');
                assert!(
                    !PRELUDE_SENSITIVE.contains(&ident.to_string().as_str()) || after_path,
                    "{name}: `{ident}` is not part of an absolute path"
                );
            }
            previous = Some(tree);
        }
    }
    for sample in samples() {
        check(sample.tokens.clone(), sample.name);
    }
}

#[test]
fn generation_is_deterministic() {
    let first: Vec<String> = samples().iter().map(text).collect();
    let second: Vec<String> = samples().iter().map(text).collect();
    assert_eq!(first, second);
}

#[test]
fn unsupported_shapes_are_internal_errors_not_panics() {
    let mut b = Builder::default();
    let a = b.param("a", array(Scalar::F32, 1));
    // A variable that is not in scope.
    let body = Expr::new(ExprKind::Var(VarId(7)), array(Scalar::F32, 1), span());
    let _ = a;
    let error = generate(&b.program(body), &Form::Expression, &[]).unwrap_err();
    assert!(error.to_string().starts_with("ein internal error in codegen:"), "{error}");
}

/// Writes every sample into `$EIN_CODEGEN_SCRATCH/src/lib.rs` (a crate depending on `ein`),
/// to be built with `RUSTFLAGS=-Dwarnings cargo clippy`.
#[test]
#[ignore = "writes generated samples for an external compile check; set EIN_CODEGEN_SCRATCH"]
fn write_samples_for_a_scratch_crate() {
    let directory = std::env::var("EIN_CODEGEN_SCRATCH").expect("EIN_CODEGEN_SCRATCH names the scratch crate");
    let mut source = String::from("#![deny(warnings)]\n#![allow(dead_code)]\n");
    for sample in samples() {
        match sample.wrapper {
            None => source.push_str(&format!("{}\n\n", sample.full)),
            Some(wrapper) => source.push_str(&format!("pub {wrapper} {}\n\n", sample.tokens)),
        }
    }
    std::fs::write(format!("{directory}/src/lib.rs"), source).expect("scratch crate is writable");
}

#[test]
fn a_matvec_with_contiguous_rows_runs_its_loops() {
    let tokens: TokenStream =
        "fn f(a: [[f32]], x: [f32]) -> [f32] { for i { sum j { a[i, j] * x[j] } } }".parse().unwrap();
    let generated = portable_copy(crate::compile(tokens).expect("compiles")).expect("one function");
    let text = squeeze(&generated.to_string());
    // Small, or rows contiguous: the loop nest; otherwise the GEMV path.
    assert!(
        text.contains(&squeeze("contraction_is_small(&[__ein_size_i, __ein_size_j]) || a.unit_inner().is_some()")),
        "{generated}"
    );
    assert!(text.contains(&squeeze("::ein::__private::contract(")), "{generated}");
}

#[test]
fn chunk_closures_copy_locals_but_not_literals() {
    // Without the passes, `let flag = true` stays a binding of its own; parameters, lets and
    // views are copied; a literal (a lone `true` token) never would be.
    let tokens: TokenStream =
        "fn f(a: [f64], s: f64) -> [f64] { let flag = true; for i { if flag { a[i] * s } else { 0.0 } } }"
            .parse()
            .unwrap();
    let mut units = crate::check::check_input(crate::syntax::parse_input(tokens).expect("parses")).expect("checks");
    let unit = units.remove(0);
    let generated = portable_copy(generate(&unit.program, &unit.form, &[]).expect("generates")).expect("one function");
    let text = squeeze(&generated.to_string());
    assert!(text.contains(&squeeze("let (a, s, flag) = (a, s, flag);")), "{generated}");
    assert!(!text.contains("let(true"), "{generated}");
}

/// The generated function for `source`, without its wide copies, whitespace removed.
fn compiled(source: &str) -> String {
    let tokens: TokenStream = source.parse().expect("test source tokenises");
    squeeze(&portable_copy(crate::compile(tokens).expect("compiles")).expect("one function").to_string())
}

#[test]
fn a_fold_stops_at_a_fixed_point_only_when_that_cannot_change_the_result() {
    // Mandelbrot's frozen state, kept whole or rebuilt from its fields, either way round.
    let frozen = compiled(
        "fn f(c: [f64], n: usize) -> [i64] { for i { fold t in 0..n, s = (0.0, 0) {
            let escaped = s.0 * s.0 > 4.0;
            if escaped { s } else { (s.0 * s.0 + c[i], s.1 + 1) } }.1 } }",
    );
    assert!(frozen.contains(&squeeze("if escaped { break; }")), "{frozen}");
    // Elements side by side keep their state once stopped; the last few finish alone.
    assert!(frozen.contains(&squeeze("__ein_stopped += ::core::primitive::usize::from(__ein_stops);")), "{frozen}");
    assert!(frozen.contains(&squeeze("if __ein_stopped * 4 >= 32 * 3 { break; }")), "{frozen}");
    assert!(frozen.contains(&squeeze("for _ in __ein_resume..__ein_count_t {")), "{frozen}");
    let rebuilt = compiled(
        "fn f(c: [f64], n: usize) -> [i64] { for i { fold t in 0..n, (z, k) = (0.0, 0) {
            if z * z <= 4.0 { (z * z + c[i], k + 1) } else { (z, k) } }.1 } }",
    );
    assert!(rebuilt.contains("break"), "{rebuilt}");
    // A condition that depends on the step, or a body that can fail (integer division):
    // every step runs.
    let stepped = compiled(
        "fn f(a: [f64], n: usize) -> [f64] { for i { fold t in 0..n, x = a[i] { if t > 3 { x } else { x * 0.5 } } } }",
    );
    assert!(!stepped.contains("break"), "{stepped}");
    let failing = compiled("fn f(a: [i64], n: usize) -> [i64] { for i { fold t in 0..n, x = a[i] { if x > 100 { x } else { x + 100 / a[i] } } } }");
    assert!(!failing.contains("break"), "{failing}");
}

/// Whether `item` is the `const _` that makes cargo track the build settings (see
/// [`super::build_settings_tracker`]).
fn is_settings_tracker(item: &syn::Item) -> bool {
    matches!(item, syn::Item::Const(constant) if constant.ident == "_")
}

#[test]
fn every_invocation_reads_the_build_settings_through_option_env() {
    let tracker = squeeze(&super::build_settings_tracker().to_string());
    assert!(tracker.contains(&squeeze(r#"::core::option_env!("EIN_DUMP")"#)), "{tracker}");
    assert!(tracker.contains(&squeeze(r#"::core::option_env!("EIN_NO_VERSIONING")"#)), "{tracker}");
    // Once beside the functions of an item-form invocation, once inside an expression's block.
    let items: TokenStream =
        "fn f(a: [f64]) -> [f64] { for i { a[i] } } fn g(a: [f64]) -> f64 { sum i { a[i] } }".parse().unwrap();
    let items = squeeze(&crate::compile(items).expect("compiles").to_string());
    assert_eq!(items.matches(&tracker).count(), 1, "{items}");
    let expression: TokenStream = "for i in 0..3 { i * 2 }".parse().unwrap();
    let expression = crate::compile(expression).expect("compiles");
    let block: syn::ExprBlock = syn::parse2(expression.clone()).expect("one block expression");
    assert!(
        matches!(block.block.stmts.first(), Some(syn::Stmt::Item(item)) if is_settings_tracker(item)),
        "{expression}"
    );
}

/// Every function generated for `source` (several with `#[into]`), each without its AVX2 copy,
/// whitespace removed.
fn compiled_items(source: &str) -> Vec<String> {
    let tokens: TokenStream = source.parse().expect("test source tokenises");
    let file: syn::File = syn::parse2(crate::compile(tokens).expect("compiles")).expect("items");
    file.items
        .iter()
        .filter(|item| !is_settings_tracker(item))
        .map(|item| squeeze(&portable_copy(item.to_token_stream()).expect("a function").to_string()))
        .collect()
}

#[test]
fn into_writes_a_comprehension_straight_into_out() {
    let (returning, writing) = with_into("matmul", matmul_program());
    assert_contains(&returning, &["#[must_use]", "#[inline]", "pub fn matmul(", "__ein_buffer.into_array("]);
    assert_contains(
        &writing,
        &[
            "#[doc = \" Writes what [`matmul`] returns into `out`",
            "#[inline] pub fn matmul_into(out: &mut (impl ?::core::marker::Sized + ::ein::__private::AsViewMut<::core::primitive::f32, 2>), a: &(impl ?::core::marker::Sized + ::ein::__private::AsView<::core::primitive::f32, 2>),",
            "let __ein_out = ::ein::__private::AsViewMut::<_, 2>::as_view_mut(out);",
            "let mut __ein_buffer = ::ein::__private::Destination::new(__ein_out, [__ein_size_i, __ein_size_j], \"`out`\", &__ein_site",
            "::ein::__private::fill_pieces(&mut __ein_buffer, if __ein_size_j == 0 { 0 } else { __ein_size_i }, __ein_size_j,",
            "__ein_buffer.finish();",
        ],
    );
    // Nothing returned, nothing allocated, nothing copied; `must_use` would lint on `()`.
    assert_lacks(&writing, &["into_array", "Buffer::", "write_into", "must_use", ") ->"]);
    let text = text(&writing);
    assert!(text.find("check_same_size").unwrap() < text.find("Destination").unwrap());
    assert!(text.find("Destination").unwrap() < text.find("fill_pieces").unwrap());
}

#[test]
fn into_writes_every_column_of_an_array_of_records() {
    let (_, writing) = with_into("polar", polar_program());
    assert_contains(
        &writing,
        &[
            "pub fn polar_into(out: (&mut (impl ?::core::marker::Sized + ::ein::__private::AsViewMut<::core::primitive::f64, 1>), &mut (impl ?::core::marker::Sized + ::ein::__private::AsViewMut<::core::primitive::f64, 1>)),",
            "let __ein_out = (::ein::__private::AsViewMut::<_, 1>::as_view_mut(out.0), ::ein::__private::AsViewMut::<_, 1>::as_view_mut(out.1));",
            "(::ein::__private::Destination::new(__ein_out.0, [__ein_size_i], \"`out.0`\",",
            "::ein::__private::Destination::new(__ein_out.1, [__ein_size_i], \"`out.1`\",",
            "__ein_buffer.0.finish(); __ein_buffer.1.finish();",
        ],
    );
}

#[test]
fn into_copies_other_results_after_checking_every_part() {
    let items = compiled_items(
        "#[into(g)] fn f(a: [[f64]], b: [[f64]]) -> ([[f64]], [[f64]]) { (for i, j { a[i, j] + b[i, j] }, a) }",
    );
    let [_, writing] = items.as_slice() else { panic!("two functions expected: {items:?}") };
    assert!(!writing.contains("Destination"), "{writing}");
    let checks =
        [writing.find("check_out(&__ein_out.0,"), writing.find("check_out(&__ein_out.1,a.shape(),\"`out.1`\"")];
    let writes = [writing.find("write_into(__ein_out.0,"), writing.find("write_into(__ein_out.1,a,\"`out.1`\"")];
    let [Some(first_check), Some(second_check)] = checks else { panic!("{writing}") };
    let [Some(first_write), Some(_)] = writes else { panic!("{writing}") };
    assert!(first_check < first_write && second_check < first_write, "{writing}");

    // The comprehension at the end of the `let`s is the result, written in place.
    let items = compiled_items("#[into(g)] fn f(a: [f64]) -> [f64] { let m = max i { a[i] }; for i { a[i] - m } }");
    assert!(items[1].contains("Destination::new(__ein_out,"), "{}", items[1]);
    assert!(!items[1].contains("write_into"), "{}", items[1]);
}

#[test]
fn a_window_read_clamps_only_at_the_edges_of_its_window() {
    // `j + dj - 2` with `dj` in `0..k.shape(1)`: the interior keeps both extremes of the window
    // in range, `-2` and `-2 + size - 1`; the read along `j` is unchecked there.
    let source = "fn conv(img: [[f32]], k: [[f32]]) -> [[f32]] { for i, j { sum di, dj { img[i + di - 2, j + dj - 2] * k[di, dj] } } }";
    let items = squeeze(&crate::compile(source.parse().unwrap()).expect("compiles").to_string());
    let window = squeeze(
        "::ein::__private::interior(0, __ein_size_j, &[(img.len_of(1), -2i64), (img.len_of(1), \
         ::core::primitive::i64::saturating_add(-2i64, ::core::primitive::i64::saturating_sub(k.size(1), 1)))]);",
    );
    assert!(items.contains(&window), "{items}");
    // The edges clamp both axes; the interior clamps the row only.
    let interior = items.split("__ein_high-__ein_low").nth(1).expect("an interior loop");
    let interior = interior.split("__ein_high+").next().expect("before the last edge");
    assert_eq!(interior.matches("clamp_index").count(), 1, "{interior}");
}

#[test]
fn a_window_shifted_by_a_run_time_radius_clamps_only_at_its_edges() {
    // The README's convolution with `r = w.len() / 2`: the shift is computed before the loop,
    // exactly, and the interior reads unchecked, side by side.
    let source = "fn conv(x: [f32], w: [f32]) -> [f32] { let r = w.len() / 2; for i in 0..x.len() { sum k { x[i + k - r] * w[k] } } }";
    let items = squeeze(&crate::compile(source.parse().unwrap()).expect("compiles").to_string());
    assert!(items.contains("let__ein_shift=::ein::__private::exact_shift(0i64,&[],&[r]);"), "{items}");
    let interior = items.split("__ein_high-__ein_low").nth(1).expect("an interior loop");
    let interior = interior.split("__ein_high+").next().expect("before the last edge");
    assert_eq!(interior.matches("clamp_index").count(), 0, "{interior}");
}

#[test]
fn a_reduction_whose_whole_range_is_interior_reads_unclamped() {
    // A CSR row: `vals[s + k]` for `k` in `0..counts[r]` is tested once per row; where the
    // whole row lies in `vals`, the fold reads it unchecked (the gather `x[cols[..]]` clamps
    // either way).
    let source = "fn spmv(start: [i64], counts: [i64], cols: [i64], vals: [f64], x: [f64]) -> [f64] { \
                  for r { let s = start[r]; sum k in 0..counts[r] { vals[s + k] * x[cols[s + k]] } } }";
    let items = squeeze(&crate::compile(source.parse().unwrap()).expect("compiles").to_string());
    let test = squeeze(
        "::ein::__private::interior(0, __ein_count, &[(vals.len_of(0), __ein_shift), (cols.len_of(0), __ein_shift_2)]);",
    );
    assert!(items.contains(&test), "{items}");
    let unclamped = items.split("if__ein_low==0&&__ein_high==__ein_count{").nth(1).expect("a versioned fold");
    let (unclamped, clamped) = unclamped.split_once("}else{").expect("two folds");
    assert_eq!(unclamped.matches("clamp_index").count(), 1, "{unclamped}");
    assert_eq!(clamped.matches("clamp_index").count(), 3, "{clamped}");
    // Inside a comprehension's interior that already keeps a window read in range, no test;
    // at its edges, one per element.
    let source = "fn conv(x: [f32], w: [f32]) -> [f32] { for i in 0..x.len() { sum k { x[i + k - 1] * w[k] } } }";
    let items = squeeze(&crate::compile(source.parse().unwrap()).expect("compiles").to_string());
    let interior = items.split("__ein_high-__ein_low").nth(1).expect("an interior loop");
    let interior = interior.split("__ein_high+").next().expect("before the last edge");
    assert!(!interior.contains("interior(0,"), "{interior}");
    let edge = items.split("__ein_high-__ein_low").next().expect("the first edge");
    assert!(edge.contains("interior(0,__ein_count"), "{edge}");
}

#[test]
fn wrapping_remainders_compare_only_at_the_edges() {
    // `(j + w - 1) % w` wraps where `j - 1` leaves `0..w`, `(j + 1) % w` where `j + 1` does: the
    // loop over `j` splits like one with reads shifted by -1 and 1; in its interior the
    // remainders are sums, with no compare and select.
    let source = "fn f(g: [[u8]]) -> [[u8]] { let w = g.shape(1); for i, j in 0..w { g[i, (j + w - 1) % w] + g[i, (j + 1) % w] } }";
    let items = squeeze(&crate::compile(source.parse().unwrap()).expect("compiles").to_string());
    let split = squeeze(
        "::ein::__private::interior(0, __ein_size_j, &[(::ein::__private::wrap_modulus(g.size(1)), -1i64), \
         (::ein::__private::wrap_modulus(g.size(1)), 1i64)]);",
    );
    assert!(items.contains(&split), "{items}");
    let interior = items.split("__ein_high-__ein_low").nth(1).expect("an interior loop");
    let interior = interior.split("__ein_high+").next().expect("before the last edge");
    assert!(!interior.contains("__ein_wrapped"), "{interior}");
    let edge = items.split("__ein_high-__ein_low").next().expect("the first edge");
    assert!(edge.contains("__ein_wrapped"), "{edge}");
    // A fold's state on a torus (rule 110): its length equals the range only at run time, so
    // the edges divide; the interior is as cheap.
    let source = "fn f(c0: [i32], n: i64) -> [i32] { fold t in 0..n, c = c0 { for i { \
                  c[(i + c.len() - 1) % c.len()] * 4 + c[i] * 2 + c[(i + 1) % c.len()] } } }";
    let items = squeeze(&crate::compile(source.parse().unwrap()).expect("compiles").to_string());
    assert!(items.contains("::ein::__private::wrap_modulus("), "{items}");
    let interior = items.split("__ein_high-__ein_low").nth(1).expect("an interior loop");
    let interior = interior.split("__ein_high+").next().expect("before the last edge");
    assert!(!interior.contains("int_rem"), "{interior}");
    let edge = items.split("__ein_high-__ein_low").next().expect("the first edge");
    assert!(edge.contains("int_rem") && !edge.contains("__ein_wrapped"), "{edge}");
    // A modulus that changes inside the loop is no wrap, even in an interior made for a
    // guard (`n >= 2`): it divides there too.
    let source = "fn f(m: usize) -> [bool] { for n in 0..m { n >= 2 && all d in 0..m { d < 2 || d * d > n || n % max(d, 2) != 0 } } }";
    let items = squeeze(&crate::compile(source.parse().unwrap()).expect("compiles").to_string());
    let interior = items.split("__ein_high-__ein_low").nth(1).expect("an interior loop");
    let interior = interior.split("__ein_high+").next().expect("before the last edge");
    assert!(interior.contains("int_rem"), "{interior}");
}

#[test]
fn index_guards_compare_only_at_the_edges() {
    // `j - 1 >= 0 && j - 1 < n` (as reverse mode writes the adjoint of a clamped read) and
    // `0 < j` hold where `j - 1` is in `0..n`, `j + 2 < m` where `j + 2` is below `m`: the loop
    // over `j` splits like one with reads shifted by -1, and by 2 for a bound `m`; in its
    // interior the guards are `true`. `j < k[j]` is no guard (its bound depends on `j`).
    let source = "fn f(a: [f32], k: [i64], m: i64) -> [f32] { let n = a.len(); \
                  for j { (if j - 1 >= 0 && j - 1 < n { a[j - 1] } else { 0.0 }) \
                  + (if 0 < j { 1.0 } else { 2.0 }) + (if j + 2 < m { 3.0 } else { 4.0 }) \
                  + (if j < k[j] { 5.0 } else { 6.0 }) } }";
    let items = squeeze(&crate::compile(source.parse().unwrap()).expect("compiles").to_string());
    let split = squeeze(
        "::ein::__private::interior(__ein_start, __ein_end - __ein_start, &[(::core::primitive::usize::MAX, \
         -1i64), (::ein::__private::size_or_zero(a.size(0)), 0i64), (::core::primitive::usize::MAX, -1i64), \
         (::ein::__private::size_or_zero(m), 2i64), (a.len_of(0), -1i64)]);",
    );
    assert!(items.contains(&split), "{items}");
    let interior = items.split("__ein_high-__ein_low").nth(1).expect("an interior loop");
    let interior = interior.split("__ein_high+").next().expect("before the last edge");
    assert_eq!(interior.matches(">=").count(), 0, "{interior}");
    assert_eq!(interior.matches("<").count(), 1, "the guard on `k[j]` stays: {interior}");
    let edge = items.split("__ein_high-__ein_low").next().expect("the first edge");
    assert!(edge.contains(">="), "{edge}");
}

/// The generated code of the item-form `source`, as text.
fn compiled_text(source: &str) -> String {
    let tokens: TokenStream = source.parse().expect("test source tokenises");
    crate::compile(tokens).expect("compiles").to_string()
}

#[test]
fn an_accum_is_one_runtime_call_with_its_loops_in_a_closure_and_checked_updates() {
    let text = compiled_text(
        "pub fn scatter(idx: [i64], v: [f64], s: f64) -> [f64] { accum y = for j in 0..10 { 0.0 } { for i { y[idx[i]] += v[i] * (s * 2.0) } } }",
    );
    // Once in each copy: portable, AVX2 and AVX-512.
    assert_eq!(text.matches(":: ein :: __private :: accum (").count(), 3, "{text}");
    assert!(text.contains(":: ein :: __private :: accum_position ("), "{text}");
    // A float `+=` on a known type, after the index is checked; the identity `-0.0` for the
    // other groups; the update is not inside an `unsafe` block.
    assert!(text.contains("copies : false"), "{text}");
    assert!(
        text.contains("accum_position (__ein_update , __ein_data . len () , 0) ? ; __ein_data [__ein_position_3] +="),
        "{text}"
    );
    assert!(text.contains(":: ein :: __private :: Num :: neg (:: ein :: __private :: zero"), "{text}");
    assert!(!text.contains("unsafe { __ein_data"), "{text}");
    // Cheap integer updates are written through the runtime's copies, the index checked
    // against the copy's length.
    let counts =
        compiled_text("pub fn f(idx: [i64]) -> [i32] { accum y = for j in 0..10 { 0 } { for i { y[idx[i]] += 2 } } }");
    assert!(counts.contains("copies : true"), "{counts}");
    assert!(
        counts.contains(":: ein :: __private :: in_copies (__ein_start_2 , __ein_end_2 , __ein_copies"),
        "{counts}"
    );
    assert!(
        counts.contains(
            "accum_position (__ein_update , __ein_copy . len () , 0) ? ; \
             let __ein_element = & __ein_copy [__ein_position_3] ; \
             __ein_element . set (:: ein :: __private :: Num :: add (__ein_element . get () , __ein_update_2)) ;"
        ),
        "{counts}"
    );
    // A costly one is applied to the data in a plain loop.
    let costly = compiled_text(
        "pub fn f(idx: [i64], v: [f64]) -> [i64] { accum y = for j in 0..10 { 0 } { for i { y[idx[i]] += exp(v[i]) as i64 } } }",
    );
    assert!(costly.contains("copies : false"), "{costly}");
    assert!(!costly.contains("in_copies"), "{costly}");
    // Mixed operators: no identity, so one serial pass.
    let mixed = compiled_text("pub fn f(x: [f64]) -> [f64] { accum y = x { for i { y[i] += 1.0; y[i] *= 2.0 } } }");
    assert!(mixed.contains(":: core :: option :: Option :: None"), "{mixed}");
}

#[test]
fn tuple_reductions_feed_one_lane_set_per_component_in_one_pass() {
    let top = compiled("fn f(x: [f64]) -> (f64, i64) { sum k { (x[k], 1) } }");
    // One parallel reduce (in each of the two versions for `x`'s strides), the body computed
    // once per step (one read of `x`), one accumulator per leaf.
    assert_eq!(top.matches("::ein::__private::reduce(").count(), 2, "{top}");
    assert_eq!(top.matches("::ein::__private::Lanes::new(").count(), 4, "{top}");
    assert_eq!(top.matches("x.get_unchecked(").count(), 2, "{top}");
    let nested = compiled(
        "fn f(a: [[f32]]) -> [{ s: f32, q: f32 }] { for i { sum k { { s: a[i, k], q: a[i, k] * a[i, k] } } } }",
    );
    assert!(!nested.contains("::ein::__private::reduce("), "{nested}");
    assert_eq!(nested.matches("::ein::__private::Lanes::new(").count(), 4, "{nested}");
}

#[test]
fn a_function_calling_polynomial_math_asks_for_the_avx512_copy() {
    let math = compiled_text("pub fn f(x: [f32]) -> [f32] { for i { exp(x[i]) } }");
    assert!(math.contains(":: ein :: __private :: widest_simd (true)"), "{math}");
    assert!(math.contains(":: ein :: __private :: wide_simd (true)"), "{math}");
    let plain = compiled_text("pub fn g(x: [f32]) -> [f32] { for i { sqrt(x[i]) * pow(x[i], 1.5) } }");
    assert!(plain.contains(":: ein :: __private :: widest_simd (false)"), "{plain}");
    assert!(!plain.contains("(true)"), "{plain}");
}

#[test]
fn arrays_built_by_the_generated_code_are_read_at_unit_stride() {
    // The README's softmax: the row of exponentials is built once per row, then summed and
    // divided by; its reads add the last index unscaled (they were gathers at AVX-512).
    let source = quote::quote! {
        fn softmax(x: [[f32]]) -> [[f32]] {
            for i, j {
                let m = max k { x[i, k] };
                exp(x[i, j] - m) / sum k { exp(x[i, k] - m) }
            }
        }
    };
    let code = squeeze(&crate::compile(source).expect("compiles").to_string());
    assert!(code.contains("__ein_row.get_unit_unchecked("), "{code}");
    assert!(!code.contains("__ein_row.get_unchecked("), "{code}");
    // The parameter's layout is not known: its reads keep the view's strides.
    assert!(code.contains("x.get_unchecked("), "{code}");
}

#[test]
fn column_reductions_run_side_by_side_in_wide_blocks() {
    // A comprehension over the last axis around a long reduction down the rows: blocks of a
    // kibibyte of each row (256 f32 columns, 128 f64), then of 64, then of 8, and chunks of
    // at least the widest block where the output allows.
    let source = quote::quote! {
        fn column_sums(a: [[f32]]) -> [f32] { for j { sum i { a[i, j] } } }
    };
    let code = squeeze(&crate::compile(source).expect("compiles").to_string());
    for width in [256, 64, 8] {
        assert!(code.contains(&squeeze(&format!("while __ein_jammed + {width} <= __ein_end - __ein_start"))), "{code}");
    }
    assert!(code.contains(&squeeze("::ein::__private::jammed_chunk_rows(__ein_size_j, 256)")), "{code}");
    // The wide blocks ask for the run of the row they read eight steps later; the narrow ones
    // (whose lanes fill one at a time) do not.
    for width in [256, 64] {
        let hint = format!("a.prefetch_run([__ein_position + 8, __ein_start + __ein_jammed], {width});");
        assert!(code.contains(&squeeze(&hint)), "{code}");
    }
    assert!(!code.contains(&squeeze("__ein_jammed], 8);")), "{code}");
    let source = quote::quote! {
        fn column_sums(a: [[f64]]) -> [f64] { for j { sum i { a[i, j] } } }
    };
    let code = squeeze(&crate::compile(source).expect("compiles").to_string());
    assert!(code.contains(&squeeze("while __ein_jammed + 128 <= __ein_end - __ein_start")), "{code}");
    assert!(!code.contains(&squeeze("while __ein_jammed + 256 <=")), "{code}");
    // An argmin's candidates side by side keep blocks of 8 (a short distance per candidate:
    // the lanes' accumulators stay in registers).
    let source = quote::quote! {
        fn nearest(a: [[f64]], b: [[f64]]) -> [usize] {
            for i { argmin j { sum k { (a[i, k] - b[j, k]) * (a[i, k] - b[j, k]) } } }
        }
    };
    let code = squeeze(&crate::compile(source).expect("compiles").to_string());
    assert!(code.contains(&squeeze("while __ein_jammed + 8 <= __ein_count_j")), "{code}");
    assert!(!code.contains(&squeeze("while __ein_jammed + 64 <= __ein_count_j")), "{code}");
}

#[test]
fn all_and_any_down_columns_run_side_by_side() {
    let source = quote::quote! { fn f(m: [[f64]]) -> ([bool], [bool]) { (for j { all i { m[i, j] > 0.0 } }, for j { any i { m[i, j] < -1.0 } }) } };
    let code = squeeze(&crate::compile(source).expect("compiles").to_string());
    // Blocks of 32 columns, one accumulator each, `true` for `all` and `false` for `any`.
    assert!(code.contains("=[true;32];") && code.contains("=[false;32];"), "{code}");
}

#[test]
fn a_transposed_copy_is_read_side_by_side_only_where_it_was_made() {
    // Nearest centroid: the copy of `c` with `j` last is made only for short rows (its moved
    // axis is empty otherwise), and every side-by-side variant first checks it was made.
    let source = "fn f(x: [[f32]], c: [[f32]]) -> [usize] { for i { argmin j { sum k { (x[i, k] - c[j, k]) * (x[i, k] - c[j, k]) } } } }";
    let code = squeeze(&crate::compile(source.parse().unwrap()).expect("compiles").to_string());
    assert!(code.contains("<256i64{c.size(0)}else{0i64}"), "{code}");
    let made = "__ein_c_by_0.len_of(1)==c.len_of(0)";
    let variants = code.matches("if__ein_c_by_0.len_of(1)==c.len_of(0)").count();
    assert!(variants > 0 && variants == code.matches(made).count(), "{code}");
}

#[test]
fn argmax_down_columns_runs_side_by_side_without_a_copy() {
    let compiled = |source: proc_macro2::TokenStream| squeeze(&crate::compile(source).expect("compiles").to_string());
    // Blocks of 128 f64 columns: a best value and a position per column, by selects.
    let code = compiled(quote::quote! { fn f(m: [[f64]]) -> [usize] { for j { argmax i { m[i, j] } } } });
    assert!(code.contains("::core::default::Default>::default();128];") && code.contains("=[0usize;128];"), "{code}");
    // The sums of an argmax's steps side by side too, reading `t` as it is: no transposed copy
    // for the argmax's candidates (which a column at a time would read across).
    let code =
        compiled(quote::quote! { fn f(t: [[[f32]]]) -> [usize] { for j { argmax i { sum k { t[i, k, j] } } } } });
    assert!(code.contains("=[0usize;256];") && !code.contains("_by_0"), "{code}");
}

#[test]
fn matrix_parameters_read_element_by_element_get_a_column_major_copy() {
    let compiled = |source: proc_macro2::TokenStream| squeeze(&crate::compile(source).expect("compiles").to_string());
    let code = compiled(quote::quote! { fn f(m: [[f64]], k: i64) -> [f64] { for i { m[i, k] } } });
    // Taken for column-major views, given their reversed axes; a clamped read's error still
    // names axis 1 of `m`, which the copy reads as its axis 0.
    let call = "if::ein::__private::columns_first(&[::ein::__private::AsView::<_,2>::as_view(m).layout()]){return__ein_f_by_columns(&::ein::__private::AsView::<_,2>::as_view(m).reversed_axes(),k);}";
    assert!(code.contains(call), "{code}");
    assert!(code.contains("fn__ein_f_by_columns(") && code.contains("m.len_of(0),\"m\",1,"), "{code}");
    // A row of the matrix keeps one copy.
    let code = compiled(quote::quote! { fn f(m: [[f64]]) -> [f64] { for i { let r = m[i]; sum j { r[j] } } } });
    assert!(!code.contains("by_columns"), "{code}");
}

#[test]
fn stacks_read_element_by_element_get_a_copy_for_stacks_of_transposes() {
    let compiled = |source: proc_macro2::TokenStream| squeeze(&crate::compile(source).expect("compiles").to_string());
    let code = compiled(
        quote::quote! { fn f(x: [[[f32]]], m: [[f32]]) -> [[[f32]]] { for c, i, j { x[c, i, j + 1] * m[i, j] } } },
    );
    // Tested after the column-major copy; given the stack with its last two axes swapped and
    // the matrix as it is. A clamped read's error still names axis 2 of `x`, which the copy
    // reads as its axis 1.
    let view = "::ein::__private::AsView::<_,3>::as_view(x)";
    let reversed = format!("if::ein::__private::columns_first(&[{view}.layout(),::ein::__private::AsView::<_,2>::as_view(m).layout()]){{return__ein_f_by_columns(");
    let swapped = format!("if::ein::__private::stacked_columns_first(&[{view}.layout()]){{return__ein_f_by_stacked_columns(&{view}.swapped_last_axes(),m);}}");
    let (at_reversed, at_swapped) = (code.find(&reversed), code.find(&swapped));
    assert!(at_reversed.is_some() && at_swapped.is_some() && at_reversed < at_swapped, "{code}");
    let copy = &code[code.find("fn__ein_f_by_stacked_columns(").expect("the stacked copy")..];
    assert!(copy.contains("x.len_of(1),\"x\",2,"), "{code}");
    // No stack, no such copy.
    let code = compiled(quote::quote! { fn f(m: [[f64]], k: i64) -> [f64] { for i { m[i, k] } } });
    assert!(!code.contains("stacked"), "{code}");
}

#[test]
fn the_expression_form_runs_column_reductions_side_by_side() {
    // Element types rustc decides: the lanes of each column in arrays of the most lanes any
    // type has (an array length may not depend on a type parameter); and a column-major copy.
    let code = squeeze(&crate::compile(quote::quote! { for j { sum i { a[i, j] } } }).expect("compiles").to_string());
    assert!(code.contains("::ein::__private::LANE_BLOCK];"), "{code}");
    assert!(code.contains("__ein_expression_by_columns(") && code.contains("columns_first"), "{code}");
    let code =
        squeeze(&crate::compile(quote::quote! { for c, j { sum i { a[c, i, j] } } }).expect("compiles").to_string());
    assert!(code.contains("__ein_expression_by_stacked_columns(") && code.contains("stacked_columns_first"), "{code}");
}

#[test]
fn reductions_of_costly_steps_compute_them_a_block_at_a_time() {
    let compiled = |source: proc_macro2::TokenStream| squeeze(&crate::compile(source).expect("compiles").to_string());
    // Two polynomial math functions per step, at the top level and inside a comprehension.
    let code = compiled(quote::quote! {
        fn loss(z: [f64], y: [f64]) -> f64 { sum i { y[i] * ln(1.0 / (1.0 + exp(-z[i]))) } }
    });
    assert!(code.contains("::ein::__private::Accumulate::fold_range_buffered("), "{code}");
    let code =
        compiled(quote::quote! { fn rows(z: [[f32]]) -> [f32] { for i { max j { sin(z[i, j]) * exp(z[i, j]) } } } });
    assert!(code.contains("::ein::__private::Accumulate::fold_range_buffered("), "{code}");
    // A tuple reduction's components and a scan's steps (parallel, or serial in a loop):
    // computed into a buffer first.
    for source in [
        quote::quote! { fn f(z: [f64]) -> (f64, f64) { sum i { (ln(1.0 / (1.0 + exp(-z[i]))), z[i]) } } },
        quote::quote! { fn f(z: [f64]) -> [f64] { scan i, acc = 0.0 { acc + ln(1.0 / (1.0 + exp(-z[i]))) } } },
        quote::quote! { fn f(z: [[f64]]) -> [[f64]] { for b { scan i, acc = 0.0 { acc + ln(1.0 / (1.0 + exp(-z[b, i]))) } } } },
    ] {
        let code = compiled(source);
        assert!(code.contains(&squeeze("= [::core::default::Default::default();")), "{code}");
    }
    // One call, or none, or `sin` and `cos` of one argument (one computation once inlined):
    // the plain fold, which inlines such a step at both its call sites.
    for source in [
        quote::quote! { fn f(x: [f32], k: [f32]) -> f32 { sum j { k[j] * sin(x[j] * 2.0) + cos(x[j] * 2.0) } } },
        quote::quote! { fn f(z: [f64]) -> f64 { sum i { exp(z[i]) } } },
        quote::quote! { fn f(z: [f64], y: [f64]) -> f64 { sum i { z[i] * y[i] } } },
    ] {
        let code = compiled(source);
        assert!(
            code.contains("::ein::__private::Accumulate::fold_range(") && !code.contains("fold_range_buffered"),
            "{code}"
        );
    }
}

#[test]
fn scalar_reductions_of_heavy_steps_compute_the_steps_in_parallel() {
    let compiled = |source: proc_macro2::TokenStream| squeeze(&crate::compile(source).expect("compiles").to_string());
    // Each step a row sum: the steps' values in parallel, folded in order.
    let code = compiled(quote::quote! { fn total(a: [[f64]]) -> f64 { sum i, j { a[i, j] * 2.0 } } });
    assert!(code.contains("::ein::__private::fold_values("), "{code}");
    // A step with no loop is folded as it is computed.
    let code = compiled(quote::quote! { fn total(a: [f64]) -> f64 { sum i { a[i] * 2.0 } } });
    assert!(!code.contains("fold_values"), "{code}");
    // A step that builds an array, or that can fail (a gather), keeps its order.
    let code = compiled(quote::quote! {
        fn total(a: [[f64]]) -> f64 { sum i { let r = for j { a[i, j] * 2.0 }; sum j { r[j] * sum k { r[k] } } } }
    });
    assert!(!code.contains("fold_values"), "{code}");
    let code = compiled(quote::quote! { fn total(a: [[f64]], g: [i64]) -> f64 { sum i { sum j { a[i, g[j]] } } } });
    assert!(!code.contains("fold_values"), "{code}");
}

#[test]
fn f32_trig_in_a_comprehension_gets_a_fast_copy_of_its_chunk() {
    let compiled = |source: proc_macro2::TokenStream| squeeze(&crate::compile(source).expect("compiles").to_string());
    for source in [
        quote::quote! { fn f(u: [f32]) -> [f32] { for i { sin(u[i]) } } },
        quote::quote! { fn f(a: [[f32]]) -> [[f32]] { for i, j { cos(a[i, j]) } } },
        quote::quote! { fn f(u: [f32], v: [f32]) -> [f32] { for i { sum k { sin(u[i] * v[k]) } } } },
        quote::quote! { fn f(a: [[f32]]) -> [f32] { for i { let r = a[i]; sum j { sin(r[j]) } } } },
        // The expression form, whose element types rustc decides.
        quote::quote! { for i { sin(u[i]) * 2.0 } },
    ] {
        let code = compiled(source);
        assert!(
            code.contains("::ein::__private::Float::sin_fast(") || code.contains("::ein::__private::Float::cos_fast("),
            "{code}"
        );
        assert!(code.contains("::ein::__private::Fill::rewind("), "{code}");
    }
    // A top-level reduction: each chunk is folded again exactly if its flag is set.
    let code = compiled(quote::quote! { fn f(x: [f32], k: [f32]) -> f32 { sum j { k[j] * sin(x[j] * 2.0) } } });
    assert!(
        code.contains("::ein::__private::Float::sin_fast(") && code.contains("=::core::cell::Cell::new(false);"),
        "{code}"
    );
    // A body that builds an array (whose parallel loops the flag cannot reach): only that
    // array's own comprehension has a fast copy, with a flag of its own.
    let code = compiled(
        quote::quote! { fn f(a: [[f32]]) -> [f32] { for i { let r = for j { sin(a[i, j]) }; sum j { r[j] * r[0] } } } },
    );
    let flags = code.matches("=::core::cell::Cell::new(false);").count();
    assert!(flags > 0 && flags == code.matches("::ein::__private::fill_chunks(&mut__ein_buffer_2,").count(), "{code}");
    // Not for f64 (no fast path), nor a body that can fail (a garbage value could make it
    // fail where the exact one would not).
    for source in [
        quote::quote! { fn f(u: [f64]) -> [f64] { for i { sin(u[i]) } } },
        quote::quote! { fn f(u: [f32], g: [i64]) -> [f32] { for i { sin(u[g[i]]) } } },
    ] {
        let code = compiled(source);
        assert!(!code.contains("_fast(") && !code.contains("rewind"), "{code}");
    }
}

#[test]
fn sums_over_leading_axes_run_side_by_side_at_any_length() {
    // Both sums of the nest may be long: after the variants for plain outer folds comes one,
    // taken unconditionally, that groups the outer fold in lanes too (its steps below the
    // last whole row of lanes into lane `a % LANES`, then the tree, then the rest in order).
    let source = "fn f(x: [[[f64]]]) -> [f64] { for c { sum a, b { x[a, b, c] * x[a, b, c] } } }";
    let code = squeeze(&crate::compile(source.parse().unwrap()).expect("compiles").to_string());
    let grouped =
        "let__ein_outer_full=ifx.len_of(0)<<::core::primitive::f64as::ein::__private::Accumulate>::PLAIN_BELOW{0}";
    assert!(code.contains(grouped), "{code}");
    assert!(code.contains("else{&mut__ein_acc}"), "{code}");
    // The last variant, wide blocks of 128 columns first.
    assert!(
        code.contains(&format!(
            "}}else{{while__ein_jammed+128<=__ein_end-__ein_start{{letmut__ein_acc=[0.0f64;128];{grouped}"
        )),
        "{code}"
    );
}

#[test]
fn folds_per_element_run_side_by_side() {
    // Each scalar of the state an array across 32 elements (then 8): every element's initial
    // value, then each step for all of them; the count is checked once per block.
    let source = "fn f(x0: [f64], k: [f64], steps: i64) -> [f64] { for i { fold t in 0..steps, (s, n) = (x0[i], 0) { (s * 0.999 + k[i], n + 1) }.0 } }";
    let code = squeeze(&crate::compile(source.parse().unwrap()).expect("compiles").to_string());
    for width in [32, 8] {
        let block = format!("while__ein_jammed+{width}<=__ein_end-__ein_start{{let__ein_count_t=");
        assert!(code.contains(&block), "{code}");
    }
    assert!(code.contains("letmut__ein_acc_lanes=[::core::default::Default::default();32];"), "{code}");
    assert!(code.contains("for_in0..__ein_count_t{for__ein_lanein0..32{"), "{code}");
    // Chunks at least a block wide, however long each element's fold.
    assert!(code.contains("::ein::__private::jammed_chunk_rows(__ein_size_i,32)"), "{code}");
}

#[test]
fn a_fold_per_element_reads_the_lets_before_it_from_arrays_beside_its_state() {
    // `g` is computed with each element's initial value and kept in an array across the
    // block; `u`, read only after the fold, is not kept.
    let source = "fn f(x0: [f64], k: [f64], steps: i64) -> [f64] { for i { let u = x0[i] * 3.0; let g = k[i] * 0.02; let r = fold t in 0..steps, s = x0[i] { s * 0.999 + g }; r + u } }";
    let code = squeeze(&crate::compile(source.parse().unwrap()).expect("compiles").to_string());
    assert!(code.contains("letmut__ein_g_lanes=[::core::default::Default::default();32];"), "{code}");
    assert!(code.contains("__ein_g_lanes[__ein_lane]=g;"), "{code}");
    assert!(code.contains("letg=__ein_g_lanes[__ein_lane];"), "{code}");
    assert!(!code.contains("u_lanes"), "{code}");
}

#[test]
fn sums_that_read_along_the_outer_index_run_a_column_at_a_time() {
    // `x[k, j, i]` reads along `i`: each column `k` computes its rows side by side, and no
    // transposed copy of `x` is made for `k` (it would cost a pass of strided reads).
    let source = "fn f(x: [[[f64]]]) -> [[f64]] { for i, k { sum j { x[k, j, i] } } }";
    let code = squeeze(&crate::compile(source.parse().unwrap()).expect("compiles").to_string());
    assert!(code.contains("::ein::__private::Fill::fill_columns("), "{code}");
    assert!(!code.contains("__ein_x_by_"), "{code}");
    // Read along the inner index, the rows are written as before.
    let source = "fn f(x: [[[f64]]]) -> [[f64]] { for i, k { sum j { x[i, j, k] } } }";
    let code = squeeze(&crate::compile(source.parse().unwrap()).expect("compiles").to_string());
    let row_major = code.split("fn__ein_f_by_columns").next().unwrap_or_default();
    assert!(!row_major.contains("fill_columns"), "{code}");
}

#[test]
fn a_read_that_no_step_changes_leaves_the_fold_and_is_kept_per_element() {
    // `c[i]` in the step is read once before the fold (hoisting), and the folds side by side
    // keep it per element beside the state, as a `let` before the fold would be.
    let source = "fn f(c: [f64], n: usize) -> [i64] { for i { fold t in 0..n, (z, k) = (0.0, 0) {
        if z * z > 4.0 { (z, k) } else { (z * z + c[i], k + 1) } }.1 } }";
    let code = squeeze(&crate::compile(source.parse().unwrap()).expect("compiles").to_string());
    assert!(code.contains("__ein_stopped+=::core::primitive::usize::from(__ein_stops);"), "{code}");
    assert!(code.contains("__ein_value_lanes[__ein_lane]=__ein_value;"), "{code}");
    assert!(code.contains("let__ein_value=__ein_value_lanes[__ein_lane];"), "{code}");
}

#[test]
fn floats_near_std_constants_are_spelled_so_clippy_accepts_them() {
    // clippy's deny-by-default `approx_constant` refuses literals like `3.14` in the crate the
    // code expands in: a constant is spelled by its path, a value near one by its bits.
    let code = compiled(
        "fn f(x: [f64], y: [f32]) -> ([f64], [f32]) {
            (for i { x[i] * f64::consts::PI + 3.14 - 2.5 }, for i { y[i] * 0.318 - f32::consts::LN_2 })
        }",
    );
    for spelled in [
        "::core::f64::consts::PI",
        &format!("from_bits({}u64)", "3.14".parse::<f64>().unwrap().to_bits()),
        "2.5f64",
        &format!("from_bits({}u32)", "0.318".parse::<f32>().unwrap().to_bits()),
        "::core::f32::consts::LN_2",
    ] {
        assert!(code.contains(spelled), "`{spelled}` not in {code}");
    }
    assert!(!code.contains("3.14f64") && !code.contains("0.318f32"), "{code}");
}

#[test]
fn short_first_axes_still_give_the_pool_chunks() {
    // Rank 3: rows of the first two axes, one run per chunk where the arrays are contiguous.
    let batch = compiled("fn f(x: [[[f32]]]) -> [[[f32]]] { for c, i, j { x[c, i, j] * 2.0 } }");
    assert!(batch.contains("__ein_size_c*__ein_size_i},__ein_size_j,"), "{batch}");
    assert!(batch.contains("x.flat_rows_of(2usize,__ein_start,__ein_end,__ein_size_j)"), "{batch}");
    // Rank 2 with a row for a body: the same rows.
    let rows = compiled("fn f(x: [[[f32]]]) -> [[[f32]]] { for c, i { x[c, i] } }");
    assert!(rows.contains("__ein_size_c*__ein_size_i},__ein_size_axis_2,"), "{rows}");
    // Rank 2 of scalars: rows in pieces.
    let matrix = compiled("fn f(x: [[f32]]) -> [[f32]] { for i, j { x[i, j] * 2.0 } }");
    assert!(matrix.contains("::ein::__private::fill_pieces("), "{matrix}");
    assert!(matrix.contains("x.flat_rows(__ein_start,__ein_end,__ein_piece_len)"), "{matrix}");
    // Rows that may fail keep whole rows of the first axis, even empty ones.
    let failing = compiled("fn f(x: [[[i32]]], y: [[[i32]]]) -> [[[i32]]] { for c, i, j { x[c, i, j] / y[c, i, j] } }");
    assert!(failing.contains("::ein::__private::fill_chunks(&mut__ein_buffer,__ein_size_c,"), "{failing}");
    let failing = compiled("fn f(x: [[i32]], y: [[i32]]) -> [[i32]] { for i, j { x[i, j] / y[i, j] } }");
    assert!(!failing.contains("fill_pieces"), "{failing}");
}
