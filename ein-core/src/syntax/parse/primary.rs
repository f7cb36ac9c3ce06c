//! Primary expressions: literals, names, calls, comprehensions, reductions, folds, scans, `if`,
//! parentheses and tuples, records and blocks, with ein's disambiguations (a reduction, a call or
//! a plain name; a record or a block).

use super::expr::{
    argument_count, checked_node, function_list, node, parse_binary, parse_block_body, parse_comma_separated,
    parse_expression, ADDITIVE_PRECEDENCE,
};
use super::types::parse_pattern;
use super::{expected, Context};
use crate::ops::{Func, ReduceOp, Scalar, UnaryOp};
use crate::syntax::ast::{Binder, Expr, ExprKind, Literal, Pattern};
use proc_macro2::extra::DelimSpan;
use proc_macro2::{Ident, Span};
use syn::parse::ParseStream;
use syn::{token, LitFloat, LitInt, Token};

pub(super) fn parse_primary(input: ParseStream, context: &Context) -> syn::Result<Box<Expr>> {
    if input.peek(syn::Lit) {
        return parse_literal(input);
    }
    if input.peek(Token![for]) {
        return parse_for(input, context);
    }
    if input.peek(Token![if]) {
        return parse_if(input, context);
    }
    if input.peek(token::Paren) {
        return parse_parenthesized(input, context);
    }
    if input.peek(token::Brace) {
        return parse_braces(input, context).map(|(expr, _)| expr);
    }
    if input.peek(syn::Ident) {
        return parse_named(input, context);
    }
    Err(not_an_expression(input))
}

fn not_an_expression(input: ParseStream) -> syn::Error {
    if input.peek(Token![self]) {
        return syn::Error::new(
            input.span(),
            "ein has no `self`: `ein!(..)` reads Rust locals by name; bind what it needs first, \
             e.g. `let w = &self.w;`, and use `w`",
        );
    }
    if input.peek(token::Bracket) {
        return syn::Error::new(input.span(), "ein has no array literals: build an array with `for i in 0..n { .. }`");
    }
    let statement = if input.peek(Token![match]) {
        Some("ein has no `match`: choose with `if c { .. } else if d { .. } else { .. }`")
    } else if input.peek(Token![return]) {
        Some("ein has no `return`: a block's value is its last expression")
    } else if input.peek(Token![while]) || input.peek(Token![loop]) {
        Some("ein has no `while` or `loop`: repeat a step a known number of times with `fold t in 0..n, acc = init { .. }`")
    } else {
        None
    };
    if let Some(hint) = statement {
        let error = expected(input, "an expression");
        return syn::Error::new(input.span(), format!("{error}; {hint}"));
    }
    if input.peek(Token![#]) {
        // A `///` comment reaches the macro as `#[doc = "…"]`.
        let fork = input.fork();
        let doc = fork
            .call(syn::Attribute::parse_outer)
            .is_ok_and(|attrs| attrs.iter().any(|attr| attr.path().is_ident("doc")));
        let hint = if doc {
            "a doc comment (`///`, `/** */`) documents a function, not a line of its body: write `//` here"
        } else {
            "attributes go on functions (`#[grad(..)]`, `#[into(..)]`), not inside their bodies"
        };
        return syn::Error::new(input.span(), format!("{}; {hint}", expected(input, "an expression")));
    }
    if input.peek(Token![*]) {
        let error = expected(input, "an expression");
        let hint = "ein has no `**` (write a power as `x.powi(2)`, `x.powf(y)` or `x * x`) and no dereference";
        return syn::Error::new(input.span(), format!("{error}; {hint}"));
    }
    expected(input, "an expression")
}

// ---------------------------------------------------------------------------------------------
// Literals.

fn parse_literal(input: ParseStream) -> syn::Result<Box<Expr>> {
    let (literal, span) = match input.parse::<syn::Lit>()? {
        syn::Lit::Bool(literal) => (Literal::Bool(literal.value), literal.span),
        syn::Lit::Int(literal) => (int_literal(&literal)?, literal.span()),
        syn::Lit::Float(literal) => (float_literal(&literal)?, literal.span()),
        syn::Lit::Verbatim(literal) => {
            return Err(syn::Error::new(literal.span(), format!("unsupported literal `{literal}`")));
        }
        other => {
            return Err(syn::Error::new(
                other.span(),
                "ein has no string, character or byte literals: its values are numbers and booleans",
            ));
        }
    };
    Ok(node(ExprKind::Literal(literal), span))
}

fn int_literal(literal: &LitInt) -> syn::Result<Literal> {
    let span = literal.span();
    let suffix = literal_suffix(literal.suffix(), span)?;
    // `1f32` is a float written without a fractional part, of any size a float holds.
    if let Some(suffix) = suffix.filter(|suffix| suffix.is_float()) {
        let value = literal.base10_parse::<f64>().ok().filter(|value| value.is_finite());
        let Some(value) = value else {
            return Err(syn::Error::new(span, "float literal out of range"));
        };
        let as_f32 = literal.base10_parse::<f32>().unwrap_or(f32::INFINITY);
        return Ok(Literal::Float { value, as_f32, suffix: Some(suffix) });
    }
    let value = literal
        .base10_parse::<u64>()
        .map_err(|_| syn::Error::new(span, "integer literal too large: ein integers have 64 bits"))?;
    Ok(Literal::Int { value, suffix })
}

fn float_literal(literal: &LitFloat) -> syn::Result<Literal> {
    let span = literal.span();
    let value = literal.base10_parse::<f64>().ok().filter(|value| value.is_finite());
    let Some(value) = value else {
        return Err(syn::Error::new(span, "float literal out of range"));
    };
    // Out of `f32`'s range this is infinite, refused once the literal's type is known.
    let as_f32 = literal.base10_parse::<f32>().unwrap_or(f32::INFINITY);
    let suffix = literal_suffix(literal.suffix(), span)?;
    if let Some(suffix) = suffix.filter(|suffix| !suffix.is_float()) {
        return Err(syn::Error::new(span, format!("a literal with a fractional part cannot be `{suffix}`")));
    }
    Ok(Literal::Float { value, as_f32, suffix })
}

fn literal_suffix(suffix: &str, span: Span) -> syn::Result<Option<Scalar>> {
    if suffix.is_empty() {
        return Ok(None);
    }
    match Scalar::from_name(suffix) {
        Some(scalar) if scalar != Scalar::Bool => Ok(Some(scalar)),
        _ => Err(syn::Error::new(
            span,
            format!(
                "unsupported literal suffix `{suffix}`: ein numbers are Rust's primitive numbers but the 128-bit ones"
            ),
        )),
    }
}

// ---------------------------------------------------------------------------------------------
// Constants of the number types.

/// `f64::INFINITY`, `i32::MAX`, `u64::BITS`, `f32::consts::PI` (also after `std::` or
/// `core::`, and as `std::f64::consts::PI`): std's constants of the number types, as literals
/// of that type (a minimum, `NEG_INFINITY` and `f64::MIN`, as the negated literal). `name` (the
/// first segment) is already consumed, `::` is next. Not `isize`'s and `usize`'s, whose values
/// depend on the target's pointer width, which the macro does not know.
fn parse_constant(input: ParseStream, name: Ident) -> syn::Result<Box<Expr>> {
    let mut segments = vec![name];
    while input.peek(Token![::]) {
        input.parse::<Token![::]>()?;
        segments.push(input.parse::<Ident>()?);
    }
    let start = segments[0].span();
    let texts: Vec<String> = segments.iter().map(|segment| segment.to_string()).collect();
    if input.peek(token::Paren) {
        let message = format!(
            "`{}` is a path: call a scalar function by its name (`max(a, b)` or `a.max(b)`) and declare a \
             Rust function with `extern fn`",
            texts.join("::")
        );
        return Err(syn::Error::new(start, message));
    }
    let span = start.join(segments[segments.len() - 1].span()).unwrap_or(start);
    let path: Vec<&str> = texts.iter().map(String::as_str).collect();
    let path = match path.as_slice() {
        ["std" | "core", rest @ ..] => rest,
        all => all,
    };
    let found = match path {
        [ty, constant] | [ty, "consts", constant] => Scalar::from_name(ty).map(|ty| (ty, *constant, path.len() == 3)),
        _ => None,
    };
    let unknown = |detail: String| {
        let written = texts.join("::");
        syn::Error::new(
            span,
            format!(
                "unknown constant `{written}`{detail}; ein knows std's constants of the number types \
                 (`f64::INFINITY`, `f32::EPSILON`, `i32::MAX`, `u8::BITS`, `f64::consts::PI`, …): write any other \
                 value as a literal or pass it in as a parameter"
            ),
        )
    };
    let Some((ty, constant, in_consts)) = found else { return Err(unknown(String::new())) };
    if matches!(ty, Scalar::Isize | Scalar::Usize) {
        let detail = format!(": `{}`'s constants depend on the target (use `i64`'s or `u64`'s)", ty.name());
        return Err(unknown(detail));
    }
    let float = |value: f64, as_f32: f32| Literal::Float { value, as_f32, suffix: Some(ty) };
    let int = |value: u64| Literal::Int { value, suffix: Some(ty) };
    // (the literal, whether it is negated)
    let value = match (ty, constant) {
        (Scalar::F32 | Scalar::F64, _) if in_consts => {
            crate::ops::float_constant(constant).map(|(value, as_f32)| (float(value, as_f32), false))
        }
        (Scalar::F32 | Scalar::F64, _) => {
            float_limit(constant).map(|(double, single, negated)| (float(double, single), negated))
        }
        (_, "BITS") => {
            ty.bits().map(|bits| (Literal::Int { value: u64::from(bits), suffix: Some(Scalar::U32) }, false))
        }
        (_, "MAX") => ty.int_range().map(|(_, high)| (int(high as u64), false)),
        (_, "MIN") => ty.int_range().map(|(low, _)| (int(low.unsigned_abs() as u64), low < 0)),
        _ => None,
    };
    let Some((literal, negated)) = value else { return Err(unknown(String::new())) };
    let literal = node(ExprKind::Literal(literal), span);
    Ok(match negated {
        true => node(ExprKind::Unary { op: UnaryOp::Neg, op_span: span, operand: literal }, span),
        false => literal,
    })
}

/// `f32::NAME` and `f64::NAME` as magnitudes of each type and whether they are negated (`MIN`,
/// `NEG_INFINITY`).
fn float_limit(name: &str) -> Option<(f64, f32, bool)> {
    Some(match name {
        "MAX" => (f64::MAX, f32::MAX, false),
        "MIN" => (f64::MAX, f32::MAX, true),
        "MIN_POSITIVE" => (f64::MIN_POSITIVE, f32::MIN_POSITIVE, false),
        "EPSILON" => (f64::EPSILON, f32::EPSILON, false),
        "INFINITY" => (f64::INFINITY, f32::INFINITY, false),
        "NEG_INFINITY" => (f64::INFINITY, f32::INFINITY, true),
        "NAN" => (f64::NAN, f32::NAN, false),
        _ => return None,
    })
}

// ---------------------------------------------------------------------------------------------
// Names, calls, reductions and folds.

/// An identifier starts a reduction (`sum k { .. }`), a fold (`fold t in 0..n, ..`), a scan
/// (`scan t in 0..n, ..`), a call
/// (`exp(x)`), or is a plain name. A reduction's name followed by anything but a binder is a
/// plain name, so a variable may be called `sum`.
fn parse_named(input: ParseStream, context: &Context) -> syn::Result<Box<Expr>> {
    let name: Ident = input.parse()?;
    let text = name.to_string();
    if input.peek(Token![::]) && (Scalar::from_name(&text).is_some() || text == "std" || text == "core") {
        return parse_constant(input, name);
    }
    if input.peek(syn::Ident) {
        if let Some(op) = ReduceOp::from_name(&text) {
            return parse_reduction(input, context, op, name);
        }
        if text == "fold" {
            return parse_fold(input, context, name);
        }
        if text == "scan" {
            return parse_scan(input, context, name);
        }
        if text == "accum" {
            return parse_accum(input, context, name);
        }
    }
    if input.peek(token::Paren) {
        return parse_call(input, context, name);
    }
    Ok(node(ExprKind::Name(name.clone()), name.span()))
}

/// `exp(x)`, `pow(x, y)`, `max(a, b)`: `name` is already consumed, `(` is next.
fn parse_call(input: ParseStream, context: &Context, name: Ident) -> syn::Result<Box<Expr>> {
    let text = name.to_string();
    let func = Func::from_name(&text);
    // In the expression form any other name is a Rust function, which rustc resolves and types;
    // a reduction's name called like a function is a slip for the reduction.
    if func.is_none() && !context.item_form && ReduceOp::from_name(&text).is_some() {
        return Err(unknown_function(&name, argument_count(input), &[]));
    }
    let content;
    let parentheses = syn::parenthesized!(content in input);
    let args = parse_comma_separated(&content, context, "`)`")?;
    let span = name.span().join(parentheses.span.close()).unwrap_or(name.span());
    let Some(func) = func else {
        // A function of the block, an `extern fn` or a Rust function: the checker resolves it.
        return checked_node(context, ExprKind::Apply { name, args }, span);
    };
    if args.len() != func.arity() {
        return Err(arity_error(func, span, args.len()));
    }
    checked_node(context, ExprKind::Call { func, func_span: name.span(), args }, span)
}

/// "unknown function `x`", with a hint: the reduction it names, the methods for an axis length
/// (`len(x, 0)`, `size(x)`), a close name among the scalar
/// functions and `block` (the names of the block's own functions, item form only), or the list
/// of scalar functions (and, in the item form, how to define or declare it).
pub(crate) fn unknown_function(name: &Ident, arguments: Option<usize>, block: &[String]) -> syn::Error {
    let text = name.to_string();
    let hint = if ReduceOp::from_name(&text).is_some() {
        format!("; `{text}` is a reduction: write `{text} k {{ .. }}`")
    } else if matches!(
        text.as_str(),
        "len" | "length" | "size" | "shape" | "dim" | "numel" | "rows" | "cols" | "nrows" | "ncols"
    ) {
        // Before the close scalar names (`len` is close to `ln`).
        "; an array's axis lengths are methods: `a.len()` for axis 0, `a.shape(k)` for axis k".to_string()
    } else {
        String::new()
    };
    let close_in_block = crate::ops::closest_name(&text, block);
    let hint = match (hint.is_empty(), close_in_block, Func::closest(&text, arguments)) {
        (true, Some(close), _) => format!("; did you mean `{close}`?"),
        (true, None, Some(close)) => format!("; did you mean `{}`?", close.name()),
        (true, None, None) if !block.is_empty() => {
            format!(
                "; ein's functions are Rust's scalar methods ({}) and the functions of its block: define it there \
                 (`fn {text}(x: f64) -> f64 {{ .. }}`) or declare a Rust function with `extern fn {text}(x: f64) -> f64;`",
                function_list(),
            )
        }
        (true, None, None) => format!("; ein's functions are Rust's scalar methods: {}", function_list()),
        (false, ..) => hint,
    };
    syn::Error::new(name.span(), format!("unknown function `{text}`{hint}"))
}

fn arity_error(func: Func, span: Span, found: usize) -> syn::Error {
    let plural = if func.arity() == 1 { "" } else { "s" };
    syn::Error::new(span, format!("`{}` takes {} argument{plural}, found {found}", func.name(), func.arity()))
}

/// `for i, j in 0..n { body }`
fn parse_for(input: ParseStream, context: &Context) -> syn::Result<Box<Expr>> {
    let for_token: Token![for] = input.parse()?;
    let binders = parse_binders(input, context, "`for`")?;
    if input.peek(Token![where]) {
        let where_token: Token![where] = input.parse()?;
        if binders.len() != 1 {
            return Err(syn::Error::new(
                where_token.span,
                "a filter `for i where cond { e }` takes exactly one index: its result is a rank-1 array \
                 (filter the elements of a flattened index instead)",
            ));
        }
        let cond = parse_expression(input, context)?;
        let (body, braces) = parse_body(input, context, "`for … where`")?;
        let span = for_token.span.join(braces.close()).unwrap_or(for_token.span);
        let binder = binders.into_iter().next().ok_or_else(|| syn::Error::new(where_token.span, "no index"))?;
        return checked_node(context, ExprKind::Filter { binder, where_span: where_token.span, cond, body }, span);
    }
    let (body, braces) = parse_body(input, context, "`for`")?;
    let span = for_token.span.join(braces.close()).unwrap_or(for_token.span);
    checked_node(context, ExprKind::For { binders, body }, span)
}

/// `sum k, l in 0..n { body }`: `op_name` is already consumed, the first binder is next.
fn parse_reduction(input: ParseStream, context: &Context, op: ReduceOp, op_name: Ident) -> syn::Result<Box<Expr>> {
    let owner = format!("`{}`", op.name());
    let binders = parse_binders(input, context, &owner)?;
    let (body, braces) = parse_body(input, context, &owner)?;
    let op_span = op_name.span();
    let span = op_span.join(braces.close()).unwrap_or(op_span);
    checked_node(context, ExprKind::Reduce { op, op_span, binders, body }, span)
}

/// `fold t in 0..n, acc = init { body }`: `fold` is already consumed, the index is next.
fn parse_fold(input: ParseStream, context: &Context, fold_name: Ident) -> syn::Result<Box<Expr>> {
    let name: Ident = input.parse()?;
    if !input.peek(Token![in]) {
        return Err(syn::Error::new(
            name.span(),
            "a fold needs an explicit count: `fold t in 0..n, acc = init { .. }`",
        ));
    }
    input.parse::<Token![in]>()?;
    let size = parse_range(input, context)?;
    let after = "`,` and the accumulator after the fold's range: `fold t in 0..n, acc = init { .. }`";
    let (acc, init, body, span) = parse_accumulation(input, context, &fold_name, after)?;
    checked_node(context, ExprKind::Fold { index: name, count: size, acc, init, body }, span)
}

/// `scan t in 0..n, acc = init { body }` or `scan t, acc = init { body }`: `scan` is already
/// consumed, the index is next.
fn parse_scan(input: ParseStream, context: &Context, scan_name: Ident) -> syn::Result<Box<Expr>> {
    let name: Ident = input.parse()?;
    let count = if input.peek(Token![in]) {
        input.parse::<Token![in]>()?;
        Some(parse_range(input, context)?)
    } else {
        None
    };
    let after = "`,` and the accumulator after the scan's index: `scan t in 0..n, acc = init { .. }`";
    let (acc, init, body, span) = parse_accumulation(input, context, &scan_name, after)?;
    checked_node(context, ExprKind::Scan { index: name, count, acc, init, body }, span)
}

/// `accum h = init { body }`: `accum` is already consumed, the target's name is next.
fn parse_accum(input: ParseStream, context: &Context, accum_name: Ident) -> syn::Result<Box<Expr>> {
    let target: Ident = input.parse()?;
    if !input.peek(Token![=]) || input.peek(Token![==]) || input.peek(Token![=>]) {
        return Err(expected(input, "`=` and the initial array: `accum h = init { h[i] += .. }`"));
    }
    input.parse::<Token![=]>()?;
    let init = parse_expression(input, context)?;
    let (body, braces) = parse_body(input, context, "`accum`")?;
    let span = accum_name.span().join(braces.close()).unwrap_or(accum_name.span());
    checked_node(context, ExprKind::Accum { target, init, body }, span)
}

/// The rest of a fold or scan (`keyword`) after its range: `, acc = init { body }`, and the
/// span of the whole construct. `after_range` is what a missing `,` expects.
fn parse_accumulation(
    input: ParseStream,
    context: &Context,
    keyword: &Ident,
    after_range: &str,
) -> syn::Result<(Pattern, Box<Expr>, Box<Expr>, Span)> {
    if !input.peek(Token![,]) {
        return Err(expected(input, after_range));
    }
    input.parse::<Token![,]>()?;
    let acc = parse_pattern(input, context)?;
    if !input.peek(Token![=]) || input.peek(Token![==]) || input.peek(Token![=>]) {
        return Err(expected(input, "`=` and the accumulator's initial value"));
    }
    input.parse::<Token![=]>()?;
    let init = parse_expression(input, context)?;
    let (body, braces) = parse_body(input, context, &format!("`{keyword}`"))?;
    let span = keyword.span().join(braces.close()).unwrap_or(keyword.span());
    Ok((acc, init, body, span))
}

/// `i`, `i in 0..n`, comma separated, at least one; `owner` names the construct for messages.
fn parse_binders(input: ParseStream, context: &Context, owner: &str) -> syn::Result<Vec<Binder>> {
    let mut binders = Vec::new();
    loop {
        if !input.peek(syn::Ident) {
            let after = if binders.is_empty() { owner } else { "`,`" };
            return Err(expected(input, &format!("an index name after {after}")));
        }
        let name: Ident = input.parse()?;
        let size = if input.peek(Token![in]) {
            input.parse::<Token![in]>()?;
            Some(parse_range(input, context)?)
        } else {
            None
        };
        binders.push(Binder { name, size });
        if !input.peek(Token![,]) {
            return Ok(binders);
        }
        input.parse::<Token![,]>()?;
    }
}

/// `0..n`, returning `n`. Ranges always start at 0 (they give sizes, not intervals). `n` is
/// parsed at the additive level and never takes a `{`, which starts the body.
fn parse_range(input: ParseStream, context: &Context) -> syn::Result<Box<Expr>> {
    const MESSAGE: &str = "ranges start at 0: write `0..n`";
    if !input.peek(LitInt) {
        return Err(syn::Error::new(input.span(), MESSAGE));
    }
    let start: LitInt = input.parse()?;
    if start.base10_digits() != "0" {
        return Err(syn::Error::new(start.span(), MESSAGE));
    }
    if input.peek(Token![..=]) {
        return Err(syn::Error::new(input.span(), "ein ranges exclude their end: write `0..n`"));
    }
    if !input.peek(Token![..]) || input.peek(Token![...]) {
        return Err(expected(input, "`..` after `0`, as in `0..n`"));
    }
    input.parse::<Token![..]>()?;
    if input.is_empty() || input.peek(token::Brace) || input.peek(Token![,]) {
        return Err(syn::Error::new(input.span(), "a range needs an end: `0..n`"));
    }
    parse_binary(input, context, ADDITIVE_PRECEDENCE)
}

// ---------------------------------------------------------------------------------------------
// `if`, parentheses, braces.

/// `if c { a } else { b }` and `else if` chains; the `else` is required (a select).
fn parse_if(input: ParseStream, context: &Context) -> syn::Result<Box<Expr>> {
    // `else if` recurses here directly, so the chain is counted as nesting.
    let _guard = context.enter(input)?;
    let if_token: Token![if] = input.parse()?;
    let cond = parse_expression(input, context)?;
    let (then, braces) = parse_body(input, context, "`if`")?;
    if !input.peek(Token![else]) && super::expr::is_update_statement(&then) {
        // A conditional update of an `accum` body: no `else`.
        let span = if_token.span.join(braces.close()).unwrap_or(if_token.span);
        return checked_node(context, ExprKind::When { cond, body: then }, span);
    }
    if !input.peek(Token![else]) {
        return Err(syn::Error::new(if_token.span, "`if` in ein is a select and needs an `else` branch"));
    }
    input.parse::<Token![else]>()?;
    let (otherwise, end) = parse_else(input, context)?;
    let span = if_token.span.join(end).unwrap_or(if_token.span);
    checked_node(context, ExprKind::If { cond, then, otherwise }, span)
}

/// What follows `else`, and the span of its last token.
fn parse_else(input: ParseStream, context: &Context) -> syn::Result<(Box<Expr>, Span)> {
    if input.peek(Token![if]) {
        let nested = parse_if(input, context)?;
        let end = nested.span;
        return Ok((nested, end));
    }
    if input.peek(token::Brace) {
        let (otherwise, braces) = parse_body(input, context, "`else`")?;
        return Ok((otherwise, braces.close()));
    }
    Err(expected(input, "`{` or `if` after `else`"))
}

/// `(e)` groups (its span widened to the parentheses); `(a, b, ..)` is a tuple.
fn parse_parenthesized(input: ParseStream, context: &Context) -> syn::Result<Box<Expr>> {
    let content;
    let parentheses = syn::parenthesized!(content in input);
    let span = parentheses.span.join();
    if content.is_empty() {
        return Err(syn::Error::new(span, "`()` is not an ein value: ein has no unit type"));
    }
    let mut first = parse_expression(&content, context)?;
    if content.is_empty() {
        first.span = span;
        return Ok(first);
    }
    parse_tuple_rest(&content, context, *first, span)
}

/// After `(first`: `, b, ..)`.
fn parse_tuple_rest(content: ParseStream, context: &Context, first: Expr, span: Span) -> syn::Result<Box<Expr>> {
    if !content.peek(Token![,]) {
        return Err(expected(content, "`,` or `)`"));
    }
    let comma: Token![,] = content.parse()?;
    if content.is_empty() {
        return Err(syn::Error::new(comma.span, "one-element tuples are not supported"));
    }
    let mut elements = vec![first];
    elements.extend(parse_comma_separated(content, context, "`)`")?);
    checked_node(context, ExprKind::Tuple(elements), span)
}

/// A braced body after `for`, a reduction, `fold`, `if`/`else` or a function signature;
/// `owner` names it for messages. Returns the body and the braces.
pub(super) fn parse_body(input: ParseStream, context: &Context, owner: &str) -> syn::Result<(Box<Expr>, DelimSpan)> {
    if !input.peek(token::Brace) {
        return Err(expected(input, &format!("`{{` to start the body of {owner}")));
    }
    parse_braces(input, context)
}

/// `{ .. }`: a record when it starts with `name:` (a block cannot: ein has no type ascription,
/// and `name::` is a path), otherwise a block. So `for i { re: x, im: y }` is a record body.
fn parse_braces(input: ParseStream, context: &Context) -> syn::Result<(Box<Expr>, DelimSpan)> {
    let content;
    let braces = syn::braced!(content in input);
    if content.is_empty() {
        return Err(syn::Error::new(
            braces.span.join(),
            "empty braces: a block needs a value, and a record at least one field",
        ));
    }
    let is_record = content.peek(syn::Ident) && content.peek2(Token![:]) && !content.peek2(Token![::]);
    let expr = if is_record {
        parse_record(&content, context, braces.span.join())?
    } else {
        parse_block_body(&content, context)?
    };
    Ok((expr, braces.span))
}

/// The inside of `{ name: value, .. }` (a trailing comma is fine).
fn parse_record(content: ParseStream, context: &Context, span: Span) -> syn::Result<Box<Expr>> {
    let mut fields: Vec<(Ident, Expr)> = Vec::new();
    while !content.is_empty() {
        let name = parse_field_name(content, &fields)?;
        let value = parse_expression(content, context)?;
        fields.push((name, *value));
        if content.is_empty() {
            break;
        }
        if !content.peek(Token![,]) {
            return Err(expected(content, "`,` or `}`"));
        }
        content.parse::<Token![,]>()?;
    }
    checked_node(context, ExprKind::Record(fields), span)
}

/// `name:` inside a record literal.
fn parse_field_name(content: ParseStream, fields: &[(Ident, Expr)]) -> syn::Result<Ident> {
    if !content.peek(syn::Ident) {
        return Err(expected(content, "a field name"));
    }
    let name: Ident = content.parse()?;
    if fields.iter().any(|(existing, _)| *existing == name) {
        return Err(syn::Error::new(name.span(), format!("duplicate field `{name}` in this record")));
    }
    if !content.peek(Token![:]) || content.peek(Token![::]) {
        return Err(expected(content, &format!("`:` and a value after the field `{name}`")));
    }
    content.parse::<Token![:]>()?;
    Ok(name)
}
