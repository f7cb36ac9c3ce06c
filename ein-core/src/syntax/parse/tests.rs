//! Unit tests of the parser: the tree it builds (printed as S-expressions), its spans, and its
//! errors (message and position).

use super::parse_input;
use crate::ops::{Scalar, UnaryOp};
use crate::syntax::ast::{Binder, Expr, ExprKind, Function, Input, Literal, Member, Pattern, TypeExpr};
use proc_macro2::{Span, TokenStream};
use quote::quote;

// ---------------------------------------------------------------------------------------------
// Printing the tree compactly.

fn show(expr: &Expr) -> String {
    match &expr.kind {
        ExprKind::Literal(literal) => show_literal(literal),
        ExprKind::Name(name) => name.to_string(),
        ExprKind::For { binders, body } => format!("(for {} {})", show_binders(binders), show(body)),
        ExprKind::Reduce { op, binders, body, .. } => {
            format!("({} {} {})", op.name(), show_binders(binders), show(body))
        }
        ExprKind::Filter { binder, cond, body, .. } => {
            format!("(filter {} {} {})", show_binder(binder), show(cond), show(body))
        }
        ExprKind::Fold { index, count, acc, init, body } => {
            format!("(fold ({index} {}) {} {} {})", show(count), show_pattern(acc), show(init), show(body))
        }
        ExprKind::Scan { index, count, acc, init, body } => {
            let range = count.as_ref().map_or(index.to_string(), |count| format!("({index} {})", show(count)));
            format!("(scan {range} {} {} {})", show_pattern(acc), show(init), show(body))
        }
        ExprKind::Accum { target, init, body } => format!("(accum {target} {} {})", show(init), show(body)),
        ExprKind::Update { target, indices, op, value, .. } => {
            format!("({} {target} {} {})", op.symbol(), show_all(indices), show(value))
        }
        ExprKind::Updates(items) => format!("(updates {})", show_all(items)),
        ExprKind::When { cond, body } => format!("(when {} {})", show(cond), show(body)),
        ExprKind::Index { array, indices } => format!("(index {} {})", show(array), show_all(indices)),
        ExprKind::Field { base, member } => {
            let member = match member {
                Member::Position(position, _) => position.to_string(),
                Member::Named(name) => name.to_string(),
            };
            format!("(. {} {member})", show(base))
        }
        ExprKind::Len { array } => format!("(len {})", show(array)),
        ExprKind::Shape { array, axis, .. } => format!("(shape {} {axis})", show(array)),
        ExprKind::Let { pattern, value, body } => {
            format!("(let {} {} {})", show_pattern(pattern), show(value), show(body))
        }
        ExprKind::If { cond, then, otherwise } => {
            format!("(if {} {} {})", show(cond), show(then), show(otherwise))
        }
        ExprKind::Tuple(elements) => format!("(tuple {})", show_all(elements)),
        ExprKind::Record(fields) => {
            let fields: Vec<String> = fields.iter().map(|(name, value)| format!("({name} {})", show(value))).collect();
            format!("(record {})", fields.join(" "))
        }
        ExprKind::Unary { op, operand, .. } => {
            let symbol = match op {
                crate::ops::UnaryOp::Neg => "neg",
                crate::ops::UnaryOp::Not => "!",
            };
            format!("({symbol} {})", show(operand))
        }
        ExprKind::Binary { op, lhs, rhs, .. } => format!("({} {} {})", op.symbol(), show(lhs), show(rhs)),
        ExprKind::Call { func, args, .. } => format!("(call {} {})", func.name(), show_all(args)),
        ExprKind::Apply { name, args } => format!("(apply {name} {})", show_all(args)),
        ExprKind::Cast { operand, to, .. } => format!("(as {} {to})", show(operand)),
    }
}

fn show_all(exprs: &[Expr]) -> String {
    exprs.iter().map(show).collect::<Vec<_>>().join(" ")
}

fn show_literal(literal: &Literal) -> String {
    match literal {
        Literal::Int { value, suffix } => format!("{value}{}", suffix.map(|s| s.name()).unwrap_or("")),
        Literal::Float { value, suffix, .. } => format!("{value:?}{}", suffix.map(|s| s.name()).unwrap_or("")),
        Literal::Bool(value) => value.to_string(),
    }
}

fn show_binder(binder: &Binder) -> String {
    match &binder.size {
        Some(size) => format!("({} {})", binder.name, show(size)),
        None => binder.name.to_string(),
    }
}

fn show_binders(binders: &[Binder]) -> String {
    format!("[{}]", binders.iter().map(show_binder).collect::<Vec<_>>().join(" "))
}

fn show_pattern(pattern: &Pattern) -> String {
    match pattern {
        Pattern::Name(name) => name.to_string(),
        Pattern::Tuple(elements, _) => {
            format!("({})", elements.iter().map(show_pattern).collect::<Vec<_>>().join(" "))
        }
    }
}

fn show_type(ty: &TypeExpr) -> String {
    match ty {
        TypeExpr::Scalar(scalar, _) => scalar.name().to_owned(),
        TypeExpr::Array(element, _) => format!("[{}]", show_type(element)),
        TypeExpr::Tuple(elements, _) => {
            format!("({})", elements.iter().map(show_type).collect::<Vec<_>>().join(", "))
        }
        TypeExpr::Record(fields, _) => {
            let fields: Vec<String> = fields.iter().map(|(name, ty)| format!("{name}: {}", show_type(ty))).collect();
            format!("{{{}}}", fields.join(", "))
        }
    }
}

fn show_function(function: &Function) -> String {
    let params: Vec<String> =
        function.params.iter().map(|param| format!("{}: {}", param.name, show_type(&param.ty))).collect();
    format!("(fn {} ({}) -> {} {})", function.name, params.join(", "), show_type(&function.ret), show(&function.body))
}

// ---------------------------------------------------------------------------------------------
// Running the parser.

fn expression_tree(tokens: TokenStream) -> Expr {
    match parse_input(tokens) {
        Ok(Input::Expression(expr)) => expr,
        Ok(Input::Functions(..)) => panic!("parsed as functions"),
        Err(error) => panic!("unexpected error: {error}"),
    }
}

/// The S-expression of an expression-form input.
fn expression(tokens: TokenStream) -> String {
    show(&expression_tree(tokens))
}

fn functions(tokens: TokenStream) -> Vec<Function> {
    match parse_input(tokens) {
        Ok(Input::Functions(functions, _)) => functions,
        Ok(Input::Expression(expr)) => panic!("parsed as an expression: {}", show(&expr)),
        Err(error) => panic!("unexpected error: {error}"),
    }
}

fn lex(source: &str) -> TokenStream {
    source.parse().unwrap_or_else(|error| panic!("test source does not lex: {error}"))
}

/// Parses `source` from text (so spans have real positions) as an expression.
fn expression_from_source(source: &str) -> Expr {
    expression_tree(lex(source))
}

/// The 1-based line and 0-based column where `span` starts, and the column where it ends.
fn position(span: Span) -> (usize, usize, usize) {
    (span.start().line, span.start().column, span.end().column)
}

/// The message and start position (line, column) of the error `source` must produce.
fn error(source: &str) -> (String, usize, usize) {
    match parse_input(lex(source)) {
        Ok(input) => panic!("expected an error, parsed {input:?}"),
        Err(error) => {
            let (line, column, _) = position(error.span());
            (error.to_string(), line, column)
        }
    }
}

/// Asserts that `source` fails with a message containing `message`, starting at `column` of
/// the first line (the text under the caret is `underlined`, checked against the source).
#[track_caller]
fn assert_error(source: &str, message: &str, underlined: &str) {
    let (actual_message, line, column) = error(source);
    assert!(actual_message.contains(message), "message `{actual_message}` lacks `{message}` (source `{source}`)");
    let line_text = source.lines().nth(line.saturating_sub(1)).unwrap_or("");
    let at = line_text.get(column..).unwrap_or("");
    assert!(
        at.starts_with(underlined),
        "error `{actual_message}` is at line {line} column {column} (`{at}`), expected at `{underlined}` (source `{source}`)"
    );
}

// ---------------------------------------------------------------------------------------------
// Literals, names and operators.

#[test]
fn literals() {
    assert_eq!(expression(quote!(3)), "3");
    assert_eq!(expression(quote!(3usize)), "3usize");
    assert_eq!(expression(quote!(7i32)), "7i32");
    assert_eq!(expression(quote!(1.5)), "1.5");
    assert_eq!(expression(quote!(1.0f32)), "1.0f32");
    assert_eq!(expression(quote!(2f64)), "2.0f64");
    assert_eq!(expression(quote!(1e3)), "1000.0");
    assert_eq!(expression(quote!(1_000)), "1000");
    assert_eq!(expression(quote!(true)), "true");
    assert_eq!(expression(quote!(false)), "false");
    assert_eq!(expression(quote!(-1)), "(neg 1)");
    assert_eq!(expression(quote!(x)), "x");
}

#[test]
fn arithmetic_precedence_and_associativity() {
    assert_eq!(expression(quote!(a + b * c)), "(+ a (* b c))");
    assert_eq!(expression(quote!(a * b + c)), "(+ (* a b) c)");
    assert_eq!(expression(quote!(a - b - c)), "(- (- a b) c)");
    assert_eq!(expression(quote!(a / b % c * d)), "(* (% (/ a b) c) d)");
    assert_eq!(expression(quote!((a + b) * c)), "(* (+ a b) c)");
    assert_eq!(expression(quote!(a - -b)), "(- a (neg b))");
    assert_eq!(expression(quote!(-a * b)), "(* (neg a) b)");
    assert_eq!(expression(quote!(--a)), "(neg (neg a))");
}

#[test]
fn logical_and_comparison_precedence() {
    assert_eq!(expression(quote!(a || b && c)), "(|| a (&& b c))");
    assert_eq!(expression(quote!(a && b || c)), "(|| (&& a b) c)");
    assert_eq!(expression(quote!(a < b + 1 && c == d)), "(&& (< a (+ b 1)) (== c d))");
    assert_eq!(expression(quote!(!a && b)), "(&& (! a) b)");
    assert_eq!(expression(quote!(!(a && b))), "(! (&& a b))");
    for (tokens, op) in [
        (quote!(a == b), "=="),
        (quote!(a != b), "!="),
        (quote!(a < b), "<"),
        (quote!(a <= b), "<="),
        (quote!(a > b), ">"),
        (quote!(a >= b), ">="),
    ] {
        assert_eq!(expression(tokens), format!("({op} a b)"));
    }
    // Parentheses make a chain explicit, as in Rust.
    assert_eq!(expression(quote!((a < b) == c)), "(== (< a b) c)");
    assert_eq!(expression(quote!(a<-b)), "(< a (neg b))");
}

#[test]
fn bitwise_operators_bind_as_in_rust() {
    // `* / %`, `+ -`, shifts, `&`, `^`, `|`, comparisons, `&&`, `||`, from the tightest.
    assert_eq!(expression(quote!(a | b ^ c & d << e + f)), "(| a (^ b (& c (<< d (+ e f)))))");
    assert_eq!(expression(quote!(a >> 1 << 2)), "(<< (>> a 1) 2)");
    assert_eq!(expression(quote!(a & 1 == 0)), "(== (& a 1) 0)");
    assert_eq!(expression(quote!(a | b && c ^ d)), "(&& (| a b) (^ c d))");
    assert_eq!(expression(quote!(!a & b)), "(& (! a) b)");
    assert_eq!(expression(quote!(x[i] >> 4 & 15)), "(& (>> (index x i) 4) 15)");
    // `<<` is one operator, not `<` twice; `a < <b` is still an error.
    assert_eq!(expression(quote!(a << b < c)), "(< (<< a b) c)");
}

#[test]
fn casts_bind_between_prefix_and_multiplication() {
    assert_eq!(expression(quote!(x as f32)), "(as x f32)");
    assert_eq!(expression(quote!(-x as f32)), "(as (neg x) f32)");
    assert_eq!(expression(quote!(a * b as f64)), "(* a (as b f64))");
    assert_eq!(expression(quote!(x as i64 as usize)), "(as (as x i64) usize)");
    assert_eq!(expression(quote!(a[i] as bool)), "(as (index a i) bool)");
    assert_eq!(expression(quote!(i as f32 / n as f32)), "(/ (as i f32) (as n f32))");
    // Unlike Rust, a cast target is one name, so a comparison may follow it.
    assert_eq!(expression(quote!(i as f32 < x)), "(< (as i f32) x)");
}

// ---------------------------------------------------------------------------------------------
// Postfix forms.

#[test]
fn indexing() {
    assert_eq!(expression(quote!(a[i])), "(index a i)");
    assert_eq!(expression(quote!(a[i, j])), "(index a i j)");
    assert_eq!(expression(quote!(a[i][j])), "(index (index a i) j)");
    assert_eq!(expression(quote!(a[i, j,])), "(index a i j)");
    assert_eq!(expression(quote!(a[i + 1, 2 * j])), "(index a (+ i 1) (* 2 j))");
    assert_eq!(expression(quote!(a[idx[i]])), "(index a (index idx i))");
    assert_eq!(expression(quote!(-a[i])), "(neg (index a i))");
}

#[test]
fn fields_and_tuple_positions() {
    assert_eq!(expression(quote!(t.0)), "(. t 0)");
    assert_eq!(expression(quote!(r.re)), "(. r re)");
    assert_eq!(expression(quote!(a[i].im)), "(. (index a i) im)");
    assert_eq!(expression(quote!(t.1.re)), "(. (. t 1) re)");
    // The lexer reads `t.0.1` as `t`, `.`, `0.1`.
    assert_eq!(expression_from_source_shown("t.0.1"), "(. (. t 0) 1)");
    assert_eq!(expression_from_source_shown("t.0.1.2"), "(. (. (. t 0) 1) 2)");
    assert_eq!(expression_from_source_shown("t.2.10[i]"), "(index (. (. t 2) 10) i)");
    assert_eq!(expression_from_source_shown("t.0 .1"), "(. (. t 0) 1)");
    assert_eq!(expression(quote!(r.len)), "(. r len)");
}

fn expression_from_source_shown(source: &str) -> String {
    show(&expression_from_source(source))
}

#[test]
fn methods() {
    assert_eq!(expression(quote!(a.len())), "(len a)");
    assert_eq!(expression(quote!(a.shape(1))), "(shape a 1)");
    assert_eq!(expression(quote!(a[i].len())), "(len (index a i))");
    assert_eq!(expression(quote!(x.exp())), "(call exp x)");
    assert_eq!(expression(quote!(x.pow(y))), "(call pow x y)");
    assert_eq!(expression(quote!(x.max(y))), "(call max x y)");
    assert_eq!(expression(quote!(x.abs().sqrt())), "(call sqrt (call abs x))");
    assert_eq!(expression(quote!(2.0.ln())), "(call ln 2.0)");
    assert_eq!(expression(quote!((a - b).abs())), "(call abs (- a b))");
    assert_eq!(expression(quote!(-x.exp())), "(neg (call exp x))");
}

#[test]
fn function_calls() {
    assert_eq!(expression(quote!(exp(x))), "(call exp x)");
    assert_eq!(expression(quote!(pow(x, 2.0))), "(call pow x 2.0)");
    assert_eq!(expression(quote!(max(a, b))), "(call max a b)");
    assert_eq!(expression(quote!(min(a, b,))), "(call min a b)");
    assert_eq!(expression(quote!(tanh(exp(x) + 1.0))), "(call tanh (+ (call exp x) 1.0))");
    for name in ["exp", "ln", "sqrt", "sin", "cos", "tan", "tanh", "abs", "floor", "ceil"] {
        let source = format!("{name}(x)");
        assert_eq!(expression_from_source_shown(&source), format!("(call {name} x)"));
    }
}

// ---------------------------------------------------------------------------------------------
// Comprehensions, reductions, folds.

#[test]
fn comprehensions() {
    assert_eq!(expression(quote!(for i { a[i] })), "(for [i] (index a i))");
    assert_eq!(expression(quote!(for i, j { a[i, j] })), "(for [i j] (index a i j))");
    assert_eq!(expression(quote!(for i in 0..n, j { a[j] })), "(for [(i n) j] (index a j))");
    assert_eq!(
        expression(quote!(for i in 0..n + 1 {
            i
        })),
        "(for [(i (+ n 1))] i)"
    );
    assert_eq!(
        expression(quote!(for i in 0..2 * n {
            i
        })),
        "(for [(i (* 2 n))] i)"
    );
    assert_eq!(
        expression(quote!(for i in 0..(n - 1) {
            i
        })),
        "(for [(i (- n 1))] i)"
    );
    assert_eq!(
        expression(quote!(for i in 0..a.len() {
            a[i]
        })),
        "(for [(i (len a))] (index a i))"
    );
    assert_eq!(expression(quote!(for i in 0..n, j in 0..m { i })), "(for [(i n) (j m)] i)");
    assert_eq!(expression(quote!(for i { for j { a[j, i] } })), "(for [i] (for [j] (index a j i)))");
}

#[test]
fn reductions() {
    assert_eq!(expression(quote!(sum k { a[k] })), "(sum [k] (index a k))");
    assert_eq!(expression(quote!(max k in 0..n { a[k] })), "(max [(k n)] (index a k))");
    assert_eq!(expression(quote!(sum k, l { a[k, l] })), "(sum [k l] (index a k l))");
    for name in ["sum", "prod", "max", "min", "argmax", "argmin", "all", "any"] {
        let source = format!("{name} k {{ a[k] }}");
        assert_eq!(expression_from_source_shown(&source), format!("({name} [k] (index a k))"));
    }
    assert_eq!(
        expression(quote!(for i, j { sum k { a[i, k] * b[k, j] } })),
        "(for [i j] (sum [k] (* (index a i k) (index b k j))))"
    );
    assert_eq!(expression(quote!(sum k { a[k] } / n)), "(/ (sum [k] (index a k)) n)");
}

#[test]
fn reduction_names_as_calls_and_plain_names() {
    assert_eq!(expression(quote!(max(a, b))), "(call max a b)");
    assert_eq!(expression(quote!(min(a, b) + max k { c[k] })), "(+ (call min a b) (max [k] (index c k)))");
    assert_eq!(expression(quote!(sum)), "sum");
    assert_eq!(expression(quote!(sum + 1)), "(+ sum 1)");
    assert_eq!(expression(quote!(max as f32)), "(as max f32)");
    assert_eq!(expression(quote!(any[i])), "(index any i)");
    assert_eq!(expression(quote!(let sum = 1; sum * 2)), "(let sum 1 (* sum 2))");
    assert_eq!(expression(quote!(fold + 1)), "(+ fold 1)");
}

#[test]
fn folds() {
    assert_eq!(
        expression(quote!(fold t in 0..n, acc = 0.0 { acc + a[t] })),
        "(fold (t n) acc 0.0 (+ acc (index a t)))"
    );
    assert_eq!(
        expression(quote!(fold t in 0..steps, (x, v) = (x0, v0) { (x + v, v - x) })),
        "(fold (t steps) (x v) (tuple x0 v0) (tuple (+ x v) (- v x)))"
    );
    assert_eq!(
        expression(quote!(fold t in 0..n, state = for i { a[i] } { for i { state[i] * 2.0 } })),
        "(fold (t n) state (for [i] (index a i)) (for [i] (* (index state i) 2.0)))"
    );
}

#[test]
fn scans() {
    assert_eq!(expression(quote!(scan t in 0..n, s = 0.0 { s + a[t] })), "(scan (t n) s 0.0 (+ s (index a t)))");
    // Without a range the length is inferred, as a comprehension's size.
    assert_eq!(
        expression(quote!(scan t, m = x[0] { max(m, x[t]) })),
        "(scan t m (index x 0) (call max m (index x t)))"
    );
    assert_eq!(
        expression(quote!(scan t, (s, c) = (0.0, 0) { (s + x[t], c + 1) })),
        "(scan t (s c) (tuple 0.0 0) (tuple (+ s (index x t)) (+ c 1)))"
    );
    // `scan` followed by anything but an index is a plain name.
    assert_eq!(expression(quote!(scan + 1)), "(+ scan 1)");
}

// ---------------------------------------------------------------------------------------------
// Blocks, `let`, `if`, tuples and records.

#[test]
fn let_statements_nest() {
    assert_eq!(expression(quote!(let x = 1; x)), "(let x 1 x)");
    assert_eq!(expression(quote!(let x = 1; let y = x + 1; x * y)), "(let x 1 (let y (+ x 1) (* x y)))");
    assert_eq!(expression(quote!(let (a, b) = t; a)), "(let (a b) t a)");
    assert_eq!(expression(quote!(let (a, (b, c)) = t; c)), "(let (a (b c)) t c)");
    assert_eq!(expression(quote!(let (a, _) = t; a)), "(let (a _) t a)");
    assert_eq!(expression(quote!(let (x) = t; x)), "(let x t x)");
    assert_eq!(
        expression(quote!(
            {
                let y = 2;
                y
            } * 3
        )),
        "(* (let y 2 y) 3)"
    );
    assert_eq!(expression(quote!({ x })), "x");
    assert_eq!(
        expression(quote!(for i, j { let m = max k { x[i, k] }; exp(x[i, j] - m) })),
        "(for [i j] (let m (max [k] (index x i k)) (call exp (- (index x i j) m))))"
    );
}

#[test]
fn if_else_selects() {
    assert_eq!(expression(quote!(if a < b { 1 } else { 2 })), "(if (< a b) 1 2)");
    assert_eq!(
        expression(quote!(if a {
            1
        } else if b {
            2
        } else {
            3
        })),
        "(if a 1 (if b 2 3))"
    );
    assert_eq!(expression(quote!(if sum k { a[k] } > 0.0 { 1 } else { 0 })), "(if (> (sum [k] (index a k)) 0.0) 1 0)");
    assert_eq!(
        expression(quote!(
            if c {
                let y = 1;
                y
            } else {
                2
            } + 1
        )),
        "(+ (if c (let y 1 y) 2) 1)"
    );
    assert_eq!(expression(quote!(if { c } { 1 } else { 2 })), "(if c 1 2)");
}

#[test]
fn tuples_and_parentheses() {
    assert_eq!(expression(quote!((a, b))), "(tuple a b)");
    assert_eq!(expression(quote!((a, b,))), "(tuple a b)");
    assert_eq!(expression(quote!((a, (b, c), d))), "(tuple a (tuple b c) d)");
    assert_eq!(expression(quote!((a))), "a");
    assert_eq!(expression(quote!((a + b))), "(+ a b)");
    assert_eq!(expression(quote!((a, b).1)), "(. (tuple a b) 1)");
}

#[test]
fn records_and_blocks_are_told_apart() {
    assert_eq!(expression(quote!({ re: x, im: y })), "(record (re x) (im y))");
    assert_eq!(expression(quote!({ re: x, im: y, })), "(record (re x) (im y))");
    assert_eq!(expression(quote!({ re: a + b })), "(record (re (+ a b)))");
    assert_eq!(expression(quote!(for i { { re: a[i], im: 0.0 } })), "(for [i] (record (re (index a i)) (im 0.0)))");
    // A body that starts with `name:` is a record, without doubled braces.
    assert_eq!(
        expression(quote!(for i { re: a[i], im: b[i] })),
        "(for [i] (record (re (index a i)) (im (index b i))))"
    );
    assert_eq!(expression(quote!({ re })), "re");
    assert_eq!(expression(quote!({ re: x }.re)), "(. (record (re x)) re)");
}

// ---------------------------------------------------------------------------------------------
// The item form and types.

#[test]
fn softmax_function() {
    let parsed = functions(quote! {
        pub fn softmax(x: [[f32]]) -> [[f32]] {
            for i, j {
                let m = max k { x[i, k] };
                exp(x[i, j] - m) / sum k { exp(x[i, k] - m) }
            }
        }
    });
    assert_eq!(parsed.len(), 1);
    assert!(matches!(parsed[0].vis, syn::Visibility::Public(_)));
    assert_eq!(
        show_function(&parsed[0]),
        "(fn softmax (x: [[f32]]) -> [[f32]] (for [i j] (let m (max [k] (index x i k)) \
         (/ (call exp (- (index x i j) m)) (sum [k] (call exp (- (index x i k) m)))))))"
    );
}

#[test]
fn several_functions_with_attributes_and_visibility() {
    let parsed = functions(quote! {
        /// Adds one.
        #[inline]
        fn inc(a: [f64], by: f64,) -> [f64] { for i { a[i] + by } }
        pub(crate) fn total(a: [f64]) -> f64 { sum i { a[i] } }
        fn nothing() -> i64 { 0 }
    });
    assert_eq!(parsed.len(), 3);
    assert_eq!(parsed[0].attrs.len(), 2);
    assert!(matches!(parsed[0].vis, syn::Visibility::Inherited));
    assert!(matches!(parsed[1].vis, syn::Visibility::Restricted(_)));
    assert_eq!(show_function(&parsed[0]), "(fn inc (a: [f64], by: f64) -> [f64] (for [i] (+ (index a i) by)))");
    assert_eq!(show_function(&parsed[1]), "(fn total (a: [f64]) -> f64 (sum [i] (index a i)))");
    assert_eq!(show_function(&parsed[2]), "(fn nothing () -> i64 0)");
}

#[test]
fn types() {
    let parsed = functions(quote! {
        fn f(
            a: f32, b: f64, c: i32, d: i64, e: usize, g: bool,
            h: [[[f32]]],
            t: (f32, [i64], (bool, usize)),
            r: { re: f64, im: f64 },
            p: [{ x: f32, y: (f32, f32) }],
            q: (f32),
        ) -> ([f32], { n: usize }) { 0 }
    });
    let types: Vec<String> = parsed[0].params.iter().map(|param| show_type(&param.ty)).collect();
    assert_eq!(
        types,
        [
            "f32",
            "f64",
            "i32",
            "i64",
            "usize",
            "bool",
            "[[[f32]]]",
            "(f32, [i64], (bool, usize))",
            "{re: f64, im: f64}",
            "[{x: f32, y: (f32, f32)}]",
            "f32",
        ]
    );
    assert_eq!(show_type(&parsed[0].ret), "([f32], {n: usize})");
}

#[test]
fn the_input_form_follows_the_first_token() {
    assert!(matches!(
        parse_input(quote!(
            fn f() -> f32 {
                1.0
            }
        )),
        Ok(Input::Functions(..))
    ));
    assert!(matches!(
        parse_input(quote!(
            pub fn f() -> f32 {
                1.0
            }
        )),
        Ok(Input::Functions(..))
    ));
    assert!(matches!(
        parse_input(quote!(
            #[inline]
            fn f() -> f32 {
                1.0
            }
        )),
        Ok(Input::Functions(..))
    ));
    assert!(matches!(parse_input(quote!(let x = 1; x)), Ok(Input::Expression(_))));
    assert!(matches!(parse_input(quote!(for i { a[i] })), Ok(Input::Expression(_))));
}

// ---------------------------------------------------------------------------------------------
// Spans.

/// The source text a span covers (single-line sources).
fn covered(source: &str, span: Span) -> &str {
    let (_, start, end) = position(span);
    source.get(start..end).unwrap_or("<out of range>")
}

#[test]
fn node_spans_cover_their_text() {
    let source = "x + a[i, j] * 2.5";
    let expr = expression_from_source(source);
    assert_eq!(covered(source, expr.span), source);
    let ExprKind::Binary { op_span, lhs, rhs, .. } = &expr.kind else { panic!("not binary") };
    assert_eq!(covered(source, *op_span), "+");
    assert_eq!(covered(source, lhs.span), "x");
    assert_eq!(covered(source, rhs.span), "a[i, j] * 2.5");
    let ExprKind::Binary { lhs: index, rhs: literal, .. } = &rhs.kind else { panic!("not binary") };
    assert_eq!(covered(source, index.span), "a[i, j]");
    assert_eq!(covered(source, literal.span), "2.5");
    let ExprKind::Index { indices, .. } = &index.kind else { panic!("not an index") };
    assert_eq!(covered(source, indices[1].span), "j");
}

#[test]
fn spans_of_calls_reductions_and_comprehensions() {
    let source = "for i in 0..n { sum k { pow(a[i], 2.0) } }";
    let expr = expression_from_source(source);
    assert_eq!(covered(source, expr.span), source);
    let ExprKind::For { binders, body } = &expr.kind else { panic!("not a for") };
    assert_eq!(covered(source, binders[0].name.span()), "i");
    assert_eq!(covered(source, binders[0].size.as_ref().map(|size| size.span).unwrap_or_else(Span::call_site)), "n");
    assert_eq!(covered(source, body.span), "sum k { pow(a[i], 2.0) }");
    let ExprKind::Reduce { op_span, body, .. } = &body.kind else { panic!("not a reduction") };
    assert_eq!(covered(source, *op_span), "sum");
    assert_eq!(covered(source, body.span), "pow(a[i], 2.0)");
    let ExprKind::Call { func_span, .. } = &body.kind else { panic!("not a call") };
    assert_eq!(covered(source, *func_span), "pow");
}

#[test]
fn spans_of_members_methods_casts_and_groups() {
    let source = "(t.0.1 + r.re.exp()) as f32";
    let expr = expression_from_source(source);
    assert_eq!(covered(source, expr.span), source);
    let ExprKind::Cast { operand, to_span, .. } = &expr.kind else { panic!("not a cast") };
    assert_eq!(covered(source, *to_span), "f32");
    assert_eq!(covered(source, operand.span), "(t.0.1 + r.re.exp())");
    let ExprKind::Binary { lhs, rhs, .. } = &operand.kind else { panic!("not binary") };
    assert_eq!(covered(source, lhs.span), "t.0.1");
    let ExprKind::Field { base, member: Member::Position(1, member_span) } = &lhs.kind else { panic!("not .1") };
    assert_eq!(covered(source, *member_span), "0.1");
    assert!(matches!(base.kind, ExprKind::Field { member: Member::Position(0, _), .. }));
    assert_eq!(covered(source, rhs.span), "r.re.exp()");
    let ExprKind::Call { func_span, args, .. } = &rhs.kind else { panic!("not a call") };
    assert_eq!(covered(source, *func_span), "exp");
    assert_eq!(covered(source, args[0].span), "r.re");
}

#[test]
fn spans_of_let_if_and_records() {
    let source = "let x = { re: 1.0, im: 2.0 }; if c { x } else { y }";
    let expr = expression_from_source(source);
    assert_eq!(covered(source, expr.span), source);
    let ExprKind::Let { pattern, value, body } = &expr.kind else { panic!("not a let") };
    assert_eq!(covered(source, pattern.span()), "x");
    assert_eq!(covered(source, value.span), "{ re: 1.0, im: 2.0 }");
    assert_eq!(covered(source, body.span), "if c { x } else { y }");
}

#[test]
fn function_span_covers_the_item() {
    let source = "pub fn f(a: [f32]) -> { re: f32 } { a.len() }";
    let Ok(Input::Functions(parsed, _)) = parse_input(lex(source)) else { panic!("did not parse") };
    assert_eq!(covered(source, parsed[0].span), "fn f(a: [f32]) -> { re: f32 } { a.len() }");
    assert_eq!(covered(source, parsed[0].name.span()), "f");
    assert_eq!(covered(source, parsed[0].params[0].ty.span()), "[f32]");
    assert_eq!(covered(source, parsed[0].ret.span()), "{ re: f32 }");
    assert_eq!(covered(source, parsed[0].body.span), "a.len()");
}

// ---------------------------------------------------------------------------------------------
// Errors: message and position.

#[test]
fn empty_input() {
    let error = parse_input(TokenStream::new()).map(|_| ()).unwrap_err();
    assert_eq!(error.to_string(), "expected an ein expression or function");
}

#[test]
fn unexpected_tokens_are_named() {
    assert_error("a + ;", "expected an expression, found `;`", ";");
    assert_error("a b", "expected an operator or the end of the expression, found `b`", "b");
    assert_error("a * Vec::new()", "found `::`; ein has no paths (`Vec::new()`, `f64::max(a, b)`)", "::");
    assert_error("f64::max(a, b)", "`f64::max` is a path: call a scalar function by its name", "f64");
    assert_error("a * f64::TINY", "unknown constant `f64::TINY`; ein knows std's constants", "f64");
    assert_error("i64::consts::PI", "unknown constant `i64::consts::PI`", "i64");
    assert_error("bool::MAX", "unknown constant `bool::MAX`; ein knows", "bool");
    assert_error("usize::MAX", "unknown constant `usize::MAX`: `usize`'s constants depend on the target", "usize");
    assert_error("a ^= 2", "found `^=`; ein has no assignment", "^=");
    assert_error("a <<= 2", "found `<<=`; ein has no assignment", "<<=");
    assert_error("a[1..3]", "found `..`; ein has no slices", "..");
    assert_error("let mut b = a; b", "found `mut`; ein's names are bound once and never change", "mut");
    assert_error("match a { _ => 1 }", "found `match`; ein has no `match`", "match");
    assert_error("return a", "found `return`; ein has no `return`", "return");
    assert_error("while a { b }", "found `while`; ein has no `while` or `loop`", "while");
    assert_error("a ** 2.0", "found `*`; ein has no `**` (write a power as `x.powi(2)`", "*");
    assert_error("println!(a)", "found `!`; ein has no macros (`println!`", "!");
    assert_error("a; b", "unexpected `;`: an ein block ends with its value", "; b");
    assert_error("a += 1", "found `+=`; ein has no assignment", "+=");
    assert_error("for i { a[i] = 1.0 }", "found `=`; ein has no assignment", "= 1.0");
    assert_error("a = 1", "found `=`", "=");
    assert_error("a..b", "found `..`", "..");
    assert_error("x + \"s\"", "ein has no string, character or byte literals", "\"s\"");
    assert_error("[1, 2]", "ein has no array literals", "[1, 2]");
    assert_error("a * (b + )", "expected an expression, found `)`", ")");
    assert_error("a[i + ]", "expected an expression, found `]`", "]");
    assert_error("sum k { a[k] + }", "expected an expression, found `}`", "}");
    assert_error("a[i j]", "expected `,` or `]`, found `j`", "j");
    assert_error(
        "{ let y = 1;\n/// the sum\ny + 1 }",
        "a doc comment (`///`, `/** */`) documents a function",
        "/// the sum",
    );
    assert_error("{ #[inline] y }", "attributes go on functions", "#");
    assert_error("exp(x y)", "expected `,` or `)`, found `y`", "y");
    assert_error("{ re: 1 im: 2 }", "expected `,` or `}`, found `im`", "im");
    assert_error("Foo::MAX", "found `::`", "::");
    assert_error("x.await", "expected a field name, a tuple position or a method after `.`, found `await`", "await");
}

#[test]
fn statement_errors() {
    assert_error("let x = 1; x; y", "unexpected `;`", "; y");
    assert_error("let x = 1;", "expected an expression after this `;`", ";");
    assert_error("let x = 1 x", "expected `;` after the value of `let`, found `x`", "x");
    assert_error("let x: f32 = 1; x", "ein `let` takes no type annotation", ":");
    assert_error("let x == 1; x", "expected `=` after the pattern of `let`, found `==`", "==");
    assert_error("let 3 = 1; x", "expected a name or a tuple pattern like `(a, b)`, found `3`", "3");
    assert_error("let (a,) = t; a", "one-element tuples are not supported", ",)");
    assert_error("let () = t; a", "`()` is not a pattern", "()");
    assert_error("{}", "empty braces", "{}");
    assert_error("for i {}", "empty braces", "{}");
    assert_error("{ let y = 1; }", "expected an expression after this `;`", "; }");
}

#[test]
fn comparison_chains_are_rejected() {
    assert_error("a < b < c", "comparison operators cannot be chained", "< c");
    assert_error("a == b != c", "comparison operators cannot be chained", "!= c");
    assert_error("a < b + 1 >= c", "comparison operators cannot be chained", ">= c");
}

#[test]
fn tuple_and_unit_errors() {
    assert_error("(a,)", "one-element tuples are not supported", ",)");
    assert_error("x + ()", "`()` is not an ein value", "()");
    assert_error("(a b)", "expected `,` or `)`, found `b`", "b");
}

#[test]
fn literal_errors() {
    assert_error("3u128", "unsupported literal suffix `u128`", "3u128");
    assert_error("1bool", "unsupported literal suffix `bool`", "1bool");
    assert_error("1.5usize", "a literal with a fractional part cannot be `usize`", "1.5usize");
    assert_error("x * 99999999999999999999", "integer literal too large", "99999999999999999999");
    assert_error("1e999", "float literal out of range", "1e999");
}

#[test]
fn call_and_method_errors() {
    assert_error("pow(x)", "`pow` takes 2 arguments, found 1", "pow");
    assert_error("exp(x, y)", "`exp` takes 1 argument, found 2", "exp");
    assert_error("exp()", "`exp` takes 1 argument, found 0", "exp");
    // An unknown name in the item form (see `unknown_function`'s hints in the checker's and
    // the UI tests); in the expression form, a Rust function that rustc resolves.
    assert_eq!(expression(quote!(1 + foo(x))), "(+ 1 (apply foo x))");
    assert_eq!(expression(quote!(sqr(x, 2))), "(apply sqr x 2)");
    assert_error("sum(x)", "unknown function `sum`; `sum` is a reduction: write `sum k { .. }`", "sum");
    assert_error("x.clmap(0.0, 1.0)", "unknown method `clmap`; did you mean `clamp`?", "clmap");
    // Iterator methods point at the loop that says the same (`map` is not `max`).
    for (method, source, loop_kind) in
        [("map", "x.map(f)", "comprehension"), ("iter", "x.iter()", "comprehension"), ("sum", "x.sum()", "reduction")]
    {
        let message = format!("unknown method `{method}`; an array has no such method in ein: write a {loop_kind}");
        assert_error(source, &message, method);
    }
    assert_error("x.clamp(0.0)", "`.clamp()` takes 2 arguments besides its receiver, found 1", "clamp(0.0)");
    assert_error("sum(x)", "`sum` is a reduction: write `sum k { .. }`", "sum");
    assert_error(
        "x.foo()",
        "unknown method `foo`; ein knows `len`, `shape` and Rust's scalar methods abs, signum",
        "foo",
    );
    assert_error("x.pow()", "`.pow()` takes 1 argument besides its receiver, found 0", "pow");
    assert_error("x.exp(2)", "`.exp()` takes no arguments besides its receiver, found 1", "exp");
    assert_error("a.len(0)", "`len` takes no arguments", "0");
    assert_error("a.shape(k)", "the axis of `shape` must be an integer literal", "k");
    assert_error("a.shape()", "the axis of `shape` must be an integer literal", "()");
    assert_error("a.shape(1.5)", "the axis of `shape` must be an integer literal", "1.5");
    assert_error("a.shape(-1)", "the axis of `shape` must be an integer literal", "-1");
    assert_error("a.shape(1, 2)", "expected `)` after the axis of `shape`, found `,`", ", 2");
    assert_error("a[]", "an index needs at least one position", "[]");
    assert_error("t.1e5", "expected a tuple position like `.0`, found `1e5`", "1e5");
    assert_error("t.0.1f32", "expected a tuple position like `.0`, found `1f32`", "0.1f32");
    assert_error("t.0u8", "expected a tuple position like `.0`, found `0u8`", "0u8");
}

#[test]
fn cast_errors() {
    assert_error("x as u128", "cannot convert to `u128`: `as` converts to a scalar type", "u128");
    assert_error("x as [f32]", "expected a type after `as`, found `[`", "[f32]");
}

#[test]
fn comprehension_and_reduction_errors() {
    assert_error("for i in 1..n { i }", "ranges start at 0: write `0..n`", "1..n");
    assert_error("for i in n { i }", "ranges start at 0: write `0..n`", "n {");
    assert_error("for i in 0..=n { i }", "ein ranges exclude their end", "..=");
    assert_error("for i in 0..{ i }", "a range needs an end: `0..n`", "{ i }");
    assert_error("for i in 0 { i }", "expected `..` after `0`", "{ i }");
    assert_error("for { 1 }", "expected an index name after `for`, found `{`", "{ 1 }");
    assert_error("for i, { 1 }", "expected an index name after `,`, found `{`", "{ 1 }");
    assert_error("for i j { 1 }", "expected `{` to start the body of `for`, found `j`", "j");
    assert_error("for (i, j) { 1 }", "expected an index name after `for`, found `(`", "(i, j)");
    assert_error("sum k in 0..n", "expected `{` to start the body of `sum`, found the end of the input", "");
    assert_error("max k l { 1 }", "expected `{` to start the body of `max`, found `l`", "l");
}

#[test]
fn fold_errors() {
    assert_error(
        "fold t, acc = 0 { acc }",
        "a fold needs an explicit count: `fold t in 0..n, acc = init { .. }`",
        "t,",
    );
    assert_error("fold t in 0..n acc = 0 { acc }", "expected `,` and the accumulator", "acc =");
    assert_error("fold t in 0..n, acc 0 { acc }", "expected `=` and the accumulator's initial value, found `0`", "0 {");
    assert_error("fold t in 0..n, 1 = 0 { acc }", "expected a name or a tuple pattern", "1 =");
    assert_error("fold t in 0..n, acc = 0", "expected `{` to start the body of `fold`", "");
}

#[test]
fn scan_errors() {
    assert_error("scan t in 0..n acc = 0 { acc }", "expected `,` and the accumulator after the scan's index", "acc =");
    assert_error("scan t acc = 0 { acc }", "expected `,` and the accumulator after the scan's index", "acc =");
    assert_error("scan t, acc 0 { acc }", "expected `=` and the accumulator's initial value, found `0`", "0 {");
    assert_error("scan t in 0..n, acc = 0", "expected `{` to start the body of `scan`", "");
}

#[test]
fn if_errors() {
    assert_error("if c { 1 }", "`if` in ein is a select and needs an `else` branch", "if");
    assert_error("1 + if c { 1 } else if d { 2 }", "needs an `else` branch", "if d");
    assert_error("if c { 1 } else 2", "expected `{` or `if` after `else`, found `2`", "2");
    assert_error("if c 1 else { 2 }", "expected `{` to start the body of `if`, found `1`", "1");
}

#[test]
fn record_errors() {
    assert_error("{ re: 1, re: 2 }", "duplicate field `re` in this record", "re: 2");
    assert_error("{ re: 1, 2 }", "expected a field name, found `2`", "2");
    assert_error("{ re: 1, im }", "expected `:` and a value after the field `im`", "}");
}

#[test]
fn function_errors() {
    assert_error("fn f(a: [f32]) { a }", "an ein function needs a return type, e.g. `-> [f32]`", ") {");
    assert_error(
        "fn f(a: u128) -> f32 { a }",
        "unknown type `u128`; ein types are f32, f64, i8, i16, i32, i64, isize, u8, u16, u32, u64, usize, bool",
        "u128",
    );
    assert_error("fn f(a: Vec<f32>) -> f32 { a }", "unknown type `Vec`", "Vec");
    assert_error("fn f(a: [f32; 3]) -> f32 { a }", "ein array types have no length", "; 3");
    assert_error("fn f(a: []) -> f32 { a }", "expected an element type inside `[ ]`", "[]");
    assert_error("fn f(a: ()) -> f32 { a }", "the unit type `()` is not supported", "()");
    assert_error("fn f(a: (f32,)) -> f32 { a }", "one-element tuples are not supported", ",)");
    assert_error("fn f(a: {}) -> f32 { a }", "a record type needs at least one field", "{}");
    assert_error("fn f(a: { x: f32, x: f64 }) -> f32 { a }", "duplicate field `x` in this record type", "x: f64");
    assert_error("fn f(a: &[f32]) -> f32 { a }", "expected a type, found `&`", "&");
    assert_error("fn f(a [f32]) -> f32 { a }", "expected `:` and a type after the parameter `a`", "[f32]");
    assert_error("fn f(a: f32 b: f32) -> f32 { a }", "expected `,` or `)`, found `b`", "b:");
    assert_error("fn f(a: f32, a: f32) -> f32 { a }", "duplicate parameter `a`", "a: f32)");
    assert_error("fn f(&self) -> f32 { 1 }", "expected a parameter name, found `&`", "&self");
    assert_error("fn f<T>(a: T) -> f32 { 1 }", "ein functions take no generic parameters", "<T>");
    assert_error("fn (a: f32) -> f32 { a }", "expected the function's name after `fn`", "(a");
    assert_error("fn f -> f32 { 1 }", "expected the parameter list", "->");
    assert_error("fn f() -> f32 where { 1 }", "expected the function body `{ .. }`, found `where`", "where");
    assert_error("fn f() -> f32 { 1 } 2", "expected `fn`", "2");
    assert_error("pub struct S;", "expected `fn`", "struct");
    assert_error("struct S;", "expected `fn`: an ein item is a function", "struct");
    assert_error("impl S {}", "expected `fn`: an ein item is a function", "impl");
    assert_error("const N: usize = 3;", "expected `fn`: an ein item is a function", "const");
    assert_error("fn f() -> f32 { 1; }", "unexpected `;`", "; }");
}

#[test]
fn into_attribute_names_the_writing_function() {
    let parsed = functions(quote! {
        /// Doubles.
        #[into(double_into)]
        #[inline]
        fn double(a: [f64]) -> [f64] { for i { a[i] * 2.0 } }
        #[into(split_into)]
        fn split(a: [f64]) -> ([f64], [{ re: f64, im: f64 }]) { (a, for i { { re: a[i], im: 0.0 } }) }
        fn plain(a: [f64]) -> [f64] { a }
    });
    // Taken out of the attributes that pass through to Rust.
    assert_eq!(parsed[0].attrs.len(), 2);
    assert!(parsed[0].attrs.iter().all(|attr| !attr.path().is_ident("into")));
    assert_eq!(parsed[0].into.as_ref().map(ToString::to_string).as_deref(), Some("double_into"));
    assert_eq!(parsed[1].into.as_ref().map(ToString::to_string).as_deref(), Some("split_into"));
    assert!(parsed[2].into.is_none());
}

#[test]
fn into_attribute_errors() {
    let body = "fn f(a: [f32]) -> [f32] { a }";
    assert_error(&format!("#[into] {body}"), "`into` needs a name: write `#[into(name)]`", "#[into]");
    assert_error(&format!("#[into = g] {body}"), "`into` needs a name", "#[into = g]");
    assert_error(&format!("#[into(g, h)] {body}"), "expected one function name", "g, h");
    assert_error(&format!("#[into(1)] {body}"), "expected one function name", "1)");
    assert_error(&format!("#[into(g)] #[into(h)] {body}"), "a function takes at most one `#[into(..)]`", "#[into(h)]");
    assert_error(&format!("#[into(f)] {body}"), "`#[into(f)]` names the function itself", "f)");
    assert_error(&format!("#[into(g)] {body} fn g() -> f32 {{ 1.0 }}"), "`g` is already the name of a function", "g)");
    assert_error(
        &format!("#[into(g)] {body} #[into(g)] fn h(a: [f32]) -> [f32] {{ a }}"),
        "`g` is already the name of a function",
        "g)] fn h",
    );
    assert_error(
        "#[into(g)] fn f(a: [f32]) -> ([f32], f32) { (a, 1.0) }",
        "`#[into(g)]` writes the result into arrays the caller owns, but this part of it is a scalar",
        "f32) {",
    );
    assert_error("#[into(g)] fn f(a: [f32]) -> f32 { 1.0 }", "this part of it is a scalar", "f32 {");
}

#[test]
fn errors_point_into_later_lines() {
    let source = "fn f(a: [f32]) -> [f32] {\n    for i {\n        a[i] +\n    }\n}";
    let (message, line, column) = error(source);
    assert_eq!(message, "expected an expression, found `}`");
    assert_eq!((line, column), (4, 4));
    let (message, line, column) = error("let x = 1;\nlet y = pow(x);\ny");
    assert_eq!(message, "`pow` takes 2 arguments, found 1");
    assert_eq!((line, column), (2, 8));
}

// ---------------------------------------------------------------------------------------------
// Depth limits: deep input is an error, never a stack overflow.

const TOO_DEEP: &str = "expression nested too deeply";

fn nested(open: &str, middle: &str, close: &str, levels: usize) -> String {
    format!("{}{middle}{}", open.repeat(levels), close.repeat(levels))
}

fn error_message(source: &str) -> String {
    error(source).0
}

#[test]
fn reasonable_nesting_parses() {
    assert_eq!(expression_from_source_shown(&nested("(", "x", ")", 100)), "x");
    let layered = expression_from_source_shown(&nested("{ for i { sum k { exp(a[", "k", "]) } } }", 20));
    assert!(layered.starts_with("(for [i] (sum [k] (call exp (index a (for [i]"));
    let mixed = nested("-(f[", "x", "] + 1)", 40);
    assert!(expression_from_source_shown(&mixed).starts_with("(neg (+ (index f (neg"));
}

#[test]
fn deep_nesting_is_an_error() {
    assert!(error_message(&nested("(", "x", ")", 200)).contains(TOO_DEEP));
    assert!(error_message(&nested("(", "x", ")", 5000)).contains(TOO_DEEP));
    assert!(error_message(&nested("a[", "i", "]", 3000)).contains(TOO_DEEP));
    assert!(error_message(&nested("{ ", "x", " }", 3000)).contains(TOO_DEEP));
    assert!(error_message(&nested("exp(", "x", ")", 3000)).contains(TOO_DEEP));
    assert!(error_message(&format!("{}x", "-".repeat(5000))).contains(TOO_DEEP));
    assert!(error_message(&format!("{}x", "!".repeat(5000))).contains(TOO_DEEP));
    assert!(error_message(&format!("{}x", "for i in 0..".repeat(3000))).contains(TOO_DEEP));
    assert!(error_message(&format!("{}1{}", "if c { 1 } else ".repeat(3000), "")).contains(TOO_DEEP));
    assert!(error_message(&format!("let {} = t; x", nested("(", "x", ", y)", 3000))).contains(TOO_DEEP));
    assert!(error_message(&format!("fn f(a: {}) -> f32 {{ 1 }}", nested("[", "f32", "]", 3000))).contains(TOO_DEEP));
}

/// Later stages make several levels of one surface node (`a[i, j]` is two reads, `for i, j` two
/// comprehensions, `let (p, q) = t` three `let`s), so those count in the depth too; and nodes
/// made at every level of nesting (prefix operators, calls, `for`, `if`) are counted as well.
#[test]
fn wide_nodes_and_wrappers_count_in_the_depth() {
    let indices = |count: usize| vec!["0"; count].join(", ");
    assert!(expression_from_source_shown(&format!("a[{}]", indices(200))).starts_with("(index a 0 0"));
    assert!(error_message(&format!("a[{}]", indices(300))).contains(TOO_DEEP));
    let binders = |count: usize| (0..count).map(|n| format!("i{n}")).collect::<Vec<_>>().join(", ");
    assert!(error_message(&format!("for {} {{ 1.0 }}", binders(300))).contains(TOO_DEEP));
    assert!(error_message(&format!("sum {} {{ 1.0 }}", binders(300))).contains(TOO_DEEP));
    assert!(error_message(&format!("let ({}) = t; 1.0", binders(300))).contains(TOO_DEEP));
    assert!(error_message(&format!("fold t in 0..3, ({}) = s {{ s }}", binders(300))).contains(TOO_DEEP));
    let chain = vec!["a"; 200].join(" + ");
    assert!(error_message(&format!("{}({chain}){}", "exp(".repeat(100), ")".repeat(100))).contains(TOO_DEEP));
    assert!(error_message(&format!("{}({chain})", "-".repeat(100))).contains(TOO_DEEP));
    assert!(error_message(&format!("{}({chain}){}", "for i { ".repeat(100), " }".repeat(100))).contains(TOO_DEEP));
}

#[test]
fn huge_shape_axes_are_refused() {
    assert!(parse_input(lex("a.shape(200)")).is_ok());
    assert_error("a.shape(18446744073709551615)", "axis 18446744073709551615 is out of range", "18446744073709551615");
    assert_error("a.shape(1000000)", "no ein array has that many axes", "1000000");
}

#[test]
fn long_chains_are_limited_too() {
    let terms = |count: usize, separator: &str| vec!["a"; count].join(separator);
    assert!(expression_from_source_shown(&terms(200, " + ")).starts_with("(+ (+ (+"));
    assert!(error_message(&terms(300, " + ")).contains(TOO_DEEP));
    assert!(error_message(&terms(20_000, " + ")).contains(TOO_DEEP));
    assert!(error_message(&terms(20_000, " && ")).contains(TOO_DEEP));
    assert!(error_message(&format!("a{}", "[i]".repeat(20_000))).contains(TOO_DEEP));
    assert!(error_message(&format!("t{}", ".0".repeat(20_000))).contains(TOO_DEEP));
    assert!(error_message(&format!("t{}", ".0.1".repeat(20_000))).contains(TOO_DEEP));
    assert!(error_message(&format!("x{}", " as f32".repeat(20_000))).contains(TOO_DEEP));
    assert!(error_message(&format!("{} x", "let x = 1;".repeat(20_000))).contains(TOO_DEEP));
    // Chains inside chains: the depth of the finished tree counts, not the parser's.
    let staircase = nested("(", "a", &format!(" + {})", terms(30, " + ")), 60);
    assert!(error_message(&staircase).contains(TOO_DEEP));
}

// ---------------------------------------------------------------------------------------------
// Robustness: mangled and random input gives errors, never panics.

const SAMPLES: &[&str] = &[
    "pub fn softmax ( x : [ [ f32 ] ] ) -> [ [ f32 ] ] { for i , j { let m = max k { x [ i , k ] } ; exp ( x [ i , j ] - m ) / sum k { exp ( x [ i , k ] - m ) } } }",
    "fold t in 0 .. n , ( a , b ) = ( 0.0 , 1.0 ) { ( b , a + b ) }",
    "for i in 0 .. n + 1 , j { if a [ i ] < b [ j ] && ! c { { re : 1.0 , im : x . 0 . 1 } } else { r . re . max ( 2.0 ) as f32 } }",
    "# [ inline ] fn f ( t : ( f32 , { a : i64 } ) , n : usize , ) -> bool { any i in 0 .. n { t . 1 . a == a . shape ( 0 ) as i64 } }",
    "let ( a , _ ) = t ; argmin k { pow ( a [ k ] , 2.0 ) . abs ( ) } % 3usize",
];

#[test]
fn mangled_samples_never_panic() {
    for sample in SAMPLES {
        assert!(parse_input(lex(sample)).is_ok(), "sample does not parse: {sample}");
        let words: Vec<&str> = sample.split(' ').collect();
        let mut variants: Vec<Vec<&str>> = Vec::new();
        for at in 0..words.len() {
            let mut deleted = words.clone();
            deleted.remove(at);
            variants.push(deleted);
            variants.push(words[..at].to_vec());
            let mut doubled = words.clone();
            doubled.insert(at, words[at]);
            variants.push(doubled);
            if at + 1 < words.len() {
                let mut swapped = words.clone();
                swapped.swap(at, at + 1);
                variants.push(swapped);
            }
        }
        for variant in variants {
            if let Ok(tokens) = variant.join(" ").parse::<TokenStream>() {
                let _ = parse_input(tokens);
            }
        }
    }
}

#[test]
fn random_token_soup_never_panics() {
    const FRAGMENTS: &[&str] = &[
        "for", "i", "k", "in", "0", "0..", "..", "n", "{", "}", "(", ")", "[", "]", ",", ";", "let", "=", "+", "-",
        "*", "/", "%", "<", "<=", "==", "!", "&&", "||", "as", "f32", "if", "else", "sum", "max", "fold", "exp", "pow",
        ".", ".0", "0.1", "1.5f32", "3usize", "len()", "shape", "re:", ":", "fn", "pub", "->", "#", "_", "true",
        "\"s\"", "'a", "::", "..=", "+=", "<<", "x", "a[i]",
    ];
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        // xorshift64*: deterministic, so a failure reproduces.
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_f491_4f6c_dd1d)
    };
    let mut parsed = 0;
    for _ in 0..20_000 {
        let length = (next() % 16) as usize;
        let words: Vec<&str> = (0..length).map(|_| FRAGMENTS[(next() % FRAGMENTS.len() as u64) as usize]).collect();
        if let Ok(tokens) = words.join(" ").parse::<TokenStream>() {
            parsed += 1;
            let _ = parse_input(tokens);
        }
    }
    assert!(parsed > 1_000, "too few random inputs lexed: {parsed}");
}

#[test]
fn extern_and_block_call_errors() {
    assert_error("extern \"C\" fn g(x: f64) -> f64;", "an ein `extern fn` names a Rust function", "\"C\"");
    assert_error("extern fn g(x: f64) -> f64 { x }", "an `extern fn` has no body here", "{ x }");
    assert_error("extern fn g(x: f64) -> f64", "expected `;` after the `extern fn` declaration", "");
    assert_error("extern fn g(x: f64);", "an `extern fn` needs a return type, e.g. `-> f64`", ");");
    assert_error(
        "extern fn g(x: f64) -> (f64, f64);",
        "`extern fn g` must take and return single values",
        "(f64, f64)",
    );
    assert_error(
        "fn g(x: f64) -> f64 { x } extern fn g(x: f64) -> f64;",
        "`g` is already the name of a function",
        "g(x: f64) -> f64;",
    );
    assert_error("fn max(x: f64) -> f64 { x }", "`max` is one of ein's scalar functions", "max");
    // A call of an unknown name is the checker's to resolve.
    assert_eq!(show(&functions(lex("fn f(a: f64) -> f64 { helper(a, 1) }"))[0].body), "(apply helper a 1)");
}

#[test]
fn accum_bodies_are_updates() {
    use crate::syntax::ast::{ExprKind, UpdateOp};
    let parsed = expression_from_source(
        "accum h = for b in 0..4 { 0 } { for k { h[d[k]] += 1; if c { h[0] *= 2 } h[1][2] |= x; } }",
    );
    assert_eq!(
        show(&parsed),
        "(accum h (for [(b 4)] 0) (for [k] (updates (+= h (index d k) 1) (when c (*= h 0 2)) (|= h 1 2 x))))"
    );
    let ExprKind::Accum { target, body, .. } = &parsed.kind else { panic!("an accum: {parsed:?}") };
    assert_eq!(target.to_string(), "h");
    let ExprKind::For { body, .. } = &body.kind else { panic!("a loop") };
    let ExprKind::Updates(items) = &body.kind else { panic!("updates: {body:?}") };
    assert_eq!(items.len(), 3);
    assert!(matches!(&items[0].kind, ExprKind::Update { op: UpdateOp::Add, indices, .. } if indices.len() == 1));
    assert!(matches!(&items[1].kind, ExprKind::When { .. }));
    assert!(matches!(&items[2].kind, ExprKind::Update { op: UpdateOp::Or, indices, .. } if indices.len() == 2));
    // `if` without `else` stays an error where it is not an update.
    assert!(error("if c { 1 }").0.contains("needs an `else` branch"));
    assert!(error("accum h = x { (a, b)[0] += 1 }").0.contains("must be an element of the accum's array"));
}

#[test]
fn filters_parse_with_one_index_and_a_condition() {
    assert_eq!(expression(quote!(for i where x[i] > 0.0 { x[i] })), "(filter i (> (index x i) 0.0) (index x i))");
    assert_eq!(
        expression(quote!(for i in 0..n where x[i] > 0.0 { (i, x[i]) })),
        "(filter (i n) (> (index x i) 0.0) (tuple i (index x i)))"
    );
}

#[test]
fn constants_of_the_number_types_are_typed_literals() {
    let literal = |source: &str| match expression_from_source(source).kind {
        ExprKind::Literal(literal) => (literal, false),
        ExprKind::Unary { op: UnaryOp::Neg, operand, .. } => match operand.kind {
            ExprKind::Literal(literal) => (literal, true),
            other => panic!("{source}: {other:?}"),
        },
        other => panic!("{source}: {other:?}"),
    };
    let float = |source: &str| match literal(source) {
        (Literal::Float { value, as_f32, suffix }, negated) => (value, as_f32, suffix, negated),
        other => panic!("{source}: {other:?}"),
    };
    let int = |source: &str| match literal(source) {
        (Literal::Int { value, suffix }, negated) => (value, suffix, negated),
        other => panic!("{source}: {other:?}"),
    };
    assert_eq!(
        float("std::f64::consts::PI"),
        (std::f64::consts::PI, std::f64::consts::PI as f32, Some(Scalar::F64), false)
    );
    assert_eq!(float("f32::consts::TAU"), (std::f64::consts::TAU, std::f32::consts::TAU, Some(Scalar::F32), false));
    assert_eq!(float("f32::MIN"), (f64::MAX, f32::MAX, Some(Scalar::F32), true));
    assert_eq!(float("core::f64::NEG_INFINITY"), (f64::INFINITY, f32::INFINITY, Some(Scalar::F64), true));
    assert!(float("f64::NAN").0.is_nan());
    assert_eq!(int("i8::MIN"), (128, Some(Scalar::I8), true));
    assert_eq!(int("u64::MAX"), (u64::MAX, Some(Scalar::U64), false));
    assert_eq!(int("u16::MIN"), (0, Some(Scalar::U16), false));
    assert_eq!(int("i32::BITS"), (32, Some(Scalar::U32), false));
}
