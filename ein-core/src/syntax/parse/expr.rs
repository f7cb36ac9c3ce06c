//! Expressions: blocks, binary operators by precedence climbing, casts, prefix operators and
//! postfix forms (`[..]`, `.0`, `.name`, `.method(..)`). Primary forms are in `primary`.
//!
//! Precedence, lowest first, as in Rust: `||`, `&&`, comparisons (non-associative), `+ -`,
//! `* / %`, `as`, prefix `- !`, postfix, primary.
//!
//! Note on stack frames: proc macros usually run unoptimised, where every temporary gets its own
//! stack slot. So the functions on the recursive path pass `Box<Expr>` around (not 112-byte
//! `Expr`s) and leave messages and node building to helpers off that path; nesting costs a few
//! kilobytes of stack per level, and `MAX_NESTING` levels stay well inside rustc's stack.

use super::primary::parse_primary;
use super::types::parse_pattern;
use super::{consume_punctuation, describe_next, expected, Context, MAX_TREE_DEPTH};
use crate::ops::{BinaryOp, Func, Scalar, UnaryOp};
use crate::syntax::ast::{Expr, ExprKind, Member, Pattern, UpdateOp};
use proc_macro2::extra::DelimSpan;
use proc_macro2::{Ident, Span};
use syn::parse::ParseStream;
use syn::{token, LitFloat, LitInt, Token};

/// The binding power of `+` and `-`: the upper bound of a range is parsed from here, so
/// `0..n + 1` works and nothing looser (a comparison, `&&`, a shift) is swallowed.
pub(super) const ADDITIVE_PRECEDENCE: u8 = 8;

/// Rust's binding powers: `||`, `&&`, comparisons, `|`, `^`, `&`, shifts, `+ -`, `* / %`.
fn precedence(op: BinaryOp) -> u8 {
    match op {
        BinaryOp::Or => 1,
        BinaryOp::And => 2,
        BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => 3,
        BinaryOp::BitOr => 4,
        BinaryOp::BitXor => 5,
        BinaryOp::BitAnd => 6,
        BinaryOp::Shl | BinaryOp::Shr => 7,
        BinaryOp::Add | BinaryOp::Sub => ADDITIVE_PRECEDENCE,
        BinaryOp::Mul | BinaryOp::Div | BinaryOp::Rem => 9,
    }
}

pub(super) fn node(kind: ExprKind, span: Span) -> Box<Expr> {
    Box::new(Expr { kind, span })
}

// ---------------------------------------------------------------------------------------------
// Blocks.

/// `(let pattern = value;)* value`: the inside of every `{ .. }` block, and the whole input of
/// the expression form. The `let`s nest into [`ExprKind::Let`], each one's body being the rest.
pub(super) fn parse_block_body(input: ParseStream, context: &Context) -> syn::Result<Box<Expr>> {
    let statements = parse_let_statements(input, context)?;
    if input.is_empty() {
        if let Some(last) = statements.last() {
            return Err(missing_block_value(last.semicolon));
        }
    }
    let mut body = parse_expression(input, context)?;
    if let (Some(op), ExprKind::Index { .. }) = (peek_update_operator(input), &body.kind) {
        body = parse_update(input, context, body, op)?;
    }
    // In an `accum` body, statements follow an update (`;` between them; optional after a
    // braced `if`/`for`), and the block is the updates in order.
    if is_update_statement(&body) && !input.is_empty() {
        if input.peek(Token![;]) {
            input.parse::<Token![;]>()?;
        }
        if !input.is_empty() {
            let rest = parse_block_body(input, context)?;
            let span = body.span.join(rest.span).unwrap_or(body.span);
            let mut items = vec![*body];
            match rest.kind {
                ExprKind::Updates(more) => items.extend(more),
                _ => items.push(*rest),
            }
            body = checked_node(context, ExprKind::Updates(items), span)?;
        }
    }
    if !input.is_empty() {
        return Err(trailing_token_error(input));
    }
    nest_let_statements(context, statements, body)
}

/// `+=`, `*=`, `|=` or `&=` at the head of `input`: an update of an `accum` body.
fn peek_update_operator(input: ParseStream) -> Option<UpdateOp> {
    [
        (input.peek(Token![+=]), UpdateOp::Add),
        (input.peek(Token![*=]), UpdateOp::Mul),
        (input.peek(Token![|=]), UpdateOp::Or),
        (input.peek(Token![&=]), UpdateOp::And),
    ]
    .into_iter()
    .find(|(present, _)| *present)
    .map(|(_, op)| op)
}

/// `target[indices] op= value`, the target already parsed: it must be a name indexed by every
/// axis it updates (`h[i, j]` or `h[i][j]`).
fn parse_update(input: ParseStream, context: &Context, target: Box<Expr>, op: UpdateOp) -> syn::Result<Box<Expr>> {
    let op_span = input.span();
    match op {
        UpdateOp::Add => drop(input.parse::<Token![+=]>()?),
        UpdateOp::Mul => drop(input.parse::<Token![*=]>()?),
        UpdateOp::Or => drop(input.parse::<Token![|=]>()?),
        UpdateOp::And => drop(input.parse::<Token![&=]>()?),
    }
    let value = parse_expression(input, context)?;
    let mut indices = Vec::new();
    let mut array = target;
    let target_span = array.span;
    let name = loop {
        match array.kind {
            ExprKind::Index { array: inner, indices: mut more } => {
                more.append(&mut indices);
                indices = more;
                array = inner;
            }
            ExprKind::Name(name) if !indices.is_empty() => break name,
            _ => {
                return Err(syn::Error::new(
                    target_span,
                    format!(
                        "the left side of `{}` must be an element of the accum's array, as in `h[i] {} value`",
                        op.symbol(),
                        op.symbol()
                    ),
                ))
            }
        }
    };
    let span = target_span.join(value.span).unwrap_or(target_span);
    checked_node(context, ExprKind::Update { target: name, indices, op, op_span, value }, span)
}

/// Whether `expr` is a statement of an `accum` body (an update, several, a conditional one, or
/// a loop or `let` around them), after which more statements may follow.
pub(super) fn is_update_statement(expr: &Expr) -> bool {
    match &expr.kind {
        ExprKind::Update { .. } | ExprKind::Updates(_) | ExprKind::When { .. } => true,
        ExprKind::For { body, .. } | ExprKind::Let { body, .. } => is_update_statement(body),
        _ => false,
    }
}

struct LetStatement {
    let_span: Span,
    pattern: Pattern,
    value: Box<Expr>,
    semicolon: Span,
}

fn parse_let_statements(input: ParseStream, context: &Context) -> syn::Result<Vec<LetStatement>> {
    let mut statements = Vec::new();
    while input.peek(Token![let]) {
        let let_token: Token![let] = input.parse()?;
        let pattern = parse_pattern(input, context)?;
        expect_let_equals(input)?;
        let value = parse_expression(input, context)?;
        let semicolon = expect_let_semicolon(input)?;
        statements.push(LetStatement { let_span: let_token.span, pattern, value, semicolon });
    }
    Ok(statements)
}

fn expect_let_equals(input: ParseStream) -> syn::Result<()> {
    if input.peek(Token![:]) && !input.peek(Token![::]) {
        return Err(syn::Error::new(input.span(), "ein `let` takes no type annotation: the type is inferred"));
    }
    if !input.peek(Token![=]) || input.peek(Token![==]) || input.peek(Token![=>]) {
        return Err(expected(input, "`=` after the pattern of `let`"));
    }
    input.parse::<Token![=]>()?;
    Ok(())
}

fn expect_let_semicolon(input: ParseStream) -> syn::Result<Span> {
    if !input.peek(Token![;]) {
        return Err(expected(input, "`;` after the value of `let`"));
    }
    let semicolon: Token![;] = input.parse()?;
    Ok(semicolon.span)
}

fn missing_block_value(semicolon: Span) -> syn::Error {
    syn::Error::new(semicolon, "expected an expression after this `;`: an ein block ends with its value")
}

fn trailing_token_error(input: ParseStream) -> syn::Error {
    if input.peek(Token![;]) {
        return syn::Error::new(
            input.span(),
            "unexpected `;`: an ein block ends with its value, and only `let` statements end with `;`",
        );
    }
    let error = expected(input, "an operator or the end of the expression");
    let assignment = (input.peek(Token![=]) && !input.peek(Token![==]) && !input.peek(Token![=>]))
        || input.peek(Token![+=])
        || input.peek(Token![-=])
        || input.peek(Token![*=])
        || input.peek(Token![/=])
        || input.peek(Token![%=])
        || input.peek(Token![&=])
        || input.peek(Token![|=])
        || input.peek(Token![^=])
        || input.peek(Token![<<=])
        || input.peek(Token![>>=]);
    let hint = if assignment {
        Some(
            "ein has no assignment: every value is defined once, by `let` or as the value of a block (an \
             `accum` body updates elements of its target, `h[k] += v`, inside its loops)",
        )
    } else if input.peek(Token![::]) {
        Some(
            "ein has no paths (`Vec::new()`, `f64::max(a, b)`) but std's constants of the number types \
             (`f64::INFINITY`, `i32::MAX`, `f64::consts::PI`): write any other constant as a literal or pass \
             it in as a parameter, call a scalar function by its name (`max(a, b)` or `a.max(b)`), and \
             declare a Rust function with `extern fn`",
        )
    } else if input.peek(Token![!]) && !input.peek(Token![!=]) {
        Some(
            "ein has no macros (`println!`, `vec!`, `assert!`): compute values in ein and print, collect or \
             check them in the Rust around the `ein!` block",
        )
    } else {
        None
    };
    match hint {
        Some(hint) => syn::Error::new(input.span(), format!("{error}; {hint}")),
        None => error,
    }
}

fn nest_let_statements(context: &Context, statements: Vec<LetStatement>, body: Box<Expr>) -> syn::Result<Box<Expr>> {
    let mut body = body;
    let mut depth = tree_depth(&body);
    for LetStatement { let_span, pattern, value, .. } in statements.into_iter().rev() {
        depth = pattern_size(&pattern) + depth.max(tree_depth(&value));
        context.check_tree_depth(depth, let_span)?;
        let span = let_span.join(body.span).unwrap_or(let_span);
        body = node(ExprKind::Let { pattern, value, body }, span);
    }
    Ok(body)
}

// ---------------------------------------------------------------------------------------------
// Operators.

/// A whole expression, at the lowest precedence.
pub(super) fn parse_expression(input: ParseStream, context: &Context) -> syn::Result<Box<Expr>> {
    parse_binary(input, context, 0)
}

/// Binary operators binding at least as tightly as `minimum` (precedence climbing: a loop per
/// level keeps chains left-associative without recursing once per operator).
pub(super) fn parse_binary(input: ParseStream, context: &Context, minimum: u8) -> syn::Result<Box<Expr>> {
    let mut chain = Chain { lhs: parse_cast(input, context)?, lhs_depth: None, lhs_is_comparison: false };
    while let Some(op) = peek_binary_operator(input) {
        if precedence(op) < minimum {
            break;
        }
        let op_span = consume_binary_operator(input, op, &chain)?;
        let rhs = parse_binary(input, context, precedence(op) + 1)?;
        chain = chain.extend(context, op, op_span, rhs)?;
    }
    Ok(chain.lhs)
}

/// A left-associative chain of binary operators, built so far.
struct Chain {
    lhs: Box<Expr>,
    /// Measured at the first operator, then tracked.
    lhs_depth: Option<usize>,
    /// Whether `lhs` is a comparison made at this level, which another comparison may not extend.
    lhs_is_comparison: bool,
}

impl Chain {
    fn extend(self, context: &Context, op: BinaryOp, op_span: Span, rhs: Box<Expr>) -> syn::Result<Chain> {
        let Chain { lhs, lhs_depth, .. } = self;
        let depth = 1 + lhs_depth.unwrap_or_else(|| tree_depth(&lhs)).max(tree_depth(&rhs));
        context.check_tree_depth(depth, op_span)?;
        let span = lhs.span.join(rhs.span).unwrap_or(op_span);
        let lhs = node(ExprKind::Binary { op, op_span, lhs, rhs }, span);
        Ok(Chain { lhs, lhs_depth: Some(depth), lhs_is_comparison: op.is_comparison() })
    }
}

fn consume_binary_operator(input: ParseStream, op: BinaryOp, chain: &Chain) -> syn::Result<Span> {
    if op.is_comparison() && chain.lhs_is_comparison {
        return Err(syn::Error::new(input.span(), "comparison operators cannot be chained: write `a < b && b < c`"));
    }
    consume_punctuation(input, op.symbol().len())
}

/// The binary operator at the head of `input`, if any. Longer tokens are tested first, and Rust
/// operators ein lacks (`+=`, `<<`, `->`, ..) are not mistaken for their first character.
fn peek_binary_operator(input: ParseStream) -> Option<BinaryOp> {
    let not_ein = input.peek(Token![+=])
        || input.peek(Token![-=])
        || input.peek(Token![*=])
        || input.peek(Token![/=])
        || input.peek(Token![%=])
        || input.peek(Token![&=])
        || input.peek(Token![|=])
        || input.peek(Token![^=])
        || input.peek(Token![<<=])
        || input.peek(Token![>>=])
        || input.peek(Token![->]);
    if not_ein {
        return None;
    }
    let candidates = [
        (input.peek(Token![||]), BinaryOp::Or),
        (input.peek(Token![&&]), BinaryOp::And),
        (input.peek(Token![==]), BinaryOp::Eq),
        (input.peek(Token![!=]), BinaryOp::Ne),
        (input.peek(Token![<=]), BinaryOp::Le),
        (input.peek(Token![>=]), BinaryOp::Ge),
        (input.peek(Token![<<]), BinaryOp::Shl),
        (input.peek(Token![>>]), BinaryOp::Shr),
        (input.peek(Token![<]), BinaryOp::Lt),
        (input.peek(Token![>]), BinaryOp::Gt),
        (input.peek(Token![+]), BinaryOp::Add),
        (input.peek(Token![-]), BinaryOp::Sub),
        (input.peek(Token![*]), BinaryOp::Mul),
        (input.peek(Token![/]), BinaryOp::Div),
        (input.peek(Token![%]), BinaryOp::Rem),
        (input.peek(Token![&]), BinaryOp::BitAnd),
        (input.peek(Token![|]), BinaryOp::BitOr),
        (input.peek(Token![^]), BinaryOp::BitXor),
    ];
    candidates.into_iter().find(|(present, _)| *present).map(|(_, op)| op)
}

/// `operand as f32 as i64 ..`: binds tighter than `*`, looser than prefix `-` (as in Rust).
fn parse_cast(input: ParseStream, context: &Context) -> syn::Result<Box<Expr>> {
    let operand = parse_unary(input, context)?;
    if input.peek(Token![as]) {
        return apply_casts(input, context, operand);
    }
    Ok(operand)
}

fn apply_casts(input: ParseStream, context: &Context, operand: Box<Expr>) -> syn::Result<Box<Expr>> {
    let mut operand = operand;
    let mut depth = tree_depth(&operand);
    while input.peek(Token![as]) {
        let as_token: Token![as] = input.parse()?;
        let (to, to_span) = parse_cast_target(input)?;
        depth += 1;
        context.check_tree_depth(depth, as_token.span)?;
        let span = operand.span.join(to_span).unwrap_or(as_token.span);
        operand = node(ExprKind::Cast { operand, to, to_span }, span);
    }
    Ok(operand)
}

fn parse_cast_target(input: ParseStream) -> syn::Result<(Scalar, Span)> {
    const MESSAGE: &str = "`as` converts to a scalar type: a primitive number (f32, i32, u8, usize, …) or bool";
    if !input.peek(syn::Ident) {
        return Err(syn::Error::new(
            input.span(),
            format!("expected a type after `as`, found {}; {MESSAGE}", describe_next(input)),
        ));
    }
    let name: Ident = input.parse()?;
    match Scalar::from_name(&name.to_string()) {
        Some(scalar) => Ok((scalar, name.span())),
        None => Err(syn::Error::new(name.span(), format!("cannot convert to `{name}`: {MESSAGE}"))),
    }
}

/// Prefix `-` and `!`, then a postfix expression. Every nested expression passes through here,
/// so this is where nesting is counted.
fn parse_unary(input: ParseStream, context: &Context) -> syn::Result<Box<Expr>> {
    let _guard = context.enter(input)?;
    let Some(op) = peek_unary_operator(input) else {
        return parse_postfix(input, context);
    };
    let op_span = consume_punctuation(input, 1)?;
    let operand = parse_unary(input, context)?;
    let span = op_span.join(operand.span).unwrap_or(op_span);
    checked_node(context, ExprKind::Unary { op, op_span, operand }, span)
}

fn peek_unary_operator(input: ParseStream) -> Option<UnaryOp> {
    if input.peek(Token![-]) && !input.peek(Token![-=]) && !input.peek(Token![->]) {
        Some(UnaryOp::Neg)
    } else if input.peek(Token![!]) && !input.peek(Token![!=]) {
        Some(UnaryOp::Not)
    } else {
        None
    }
}

// ---------------------------------------------------------------------------------------------
// Postfix forms.

/// A primary expression followed by any number of `[..]`, `.0`, `.name`, `.method(..)`.
fn parse_postfix(input: ParseStream, context: &Context) -> syn::Result<Box<Expr>> {
    let primary = parse_primary(input, context)?;
    if input.peek(token::Bracket) || (input.peek(Token![.]) && !input.peek(Token![..])) {
        return apply_postfix(input, context, primary);
    }
    Ok(primary)
}

fn apply_postfix(input: ParseStream, context: &Context, primary: Box<Expr>) -> syn::Result<Box<Expr>> {
    let mut expr = primary;
    let mut depth = tree_depth(&expr);
    // The second position of `t.0.1`, which the lexer delivered as one float literal `0.1`.
    let mut pending_position = None;
    loop {
        expr = if let Some((position, span)) = pending_position.take() {
            field(expr, Member::Position(position, span))
        } else if input.peek(token::Bracket) {
            parse_index(input, context, expr)?
        } else if input.peek(Token![.]) && !input.peek(Token![..]) {
            let (member_expr, second_position) = parse_member(input, context, expr)?;
            pending_position = second_position;
            member_expr
        } else {
            return Ok(expr);
        };
        depth = depth_on_spine(&expr, depth);
        context.check_tree_depth(depth, expr.span)?;
    }
}

/// `array[i, j]`: one node for all the positions inside one pair of brackets.
fn parse_index(input: ParseStream, context: &Context, array: Box<Expr>) -> syn::Result<Box<Expr>> {
    let content;
    let brackets = syn::bracketed!(content in input);
    if content.is_empty() {
        return Err(syn::Error::new(brackets.span.join(), "an index needs at least one position, e.g. `a[i]`"));
    }
    let indices = parse_comma_separated(&content, context, "`]`")?;
    let span = array.span.join(brackets.span.close()).unwrap_or(brackets.span.join());
    Ok(node(ExprKind::Index { array, indices }, span))
}

/// The second position of `t.0.1`, still to be applied.
type PendingPosition = Option<(usize, Span)>;

/// After `base`: `.0`, `.0.1`, `.name` or `.method(..)`. For `.0.1` the second position is
/// returned separately, for the caller to apply as the next postfix step.
fn parse_member(input: ParseStream, context: &Context, base: Box<Expr>) -> syn::Result<(Box<Expr>, PendingPosition)> {
    input.parse::<Token![.]>()?;
    if input.peek(LitInt) {
        let literal: LitInt = input.parse()?;
        let position = tuple_position(&literal.to_string(), literal.span())?;
        return Ok((field(base, Member::Position(position, literal.span())), None));
    }
    if input.peek(LitFloat) {
        let literal: LitFloat = input.parse()?;
        let text = literal.to_string();
        let span = literal.span();
        let Some((first, second)) = text.split_once('.') else {
            return Err(syn::Error::new(span, format!("expected a tuple position like `.0`, found `{text}`")));
        };
        let first = tuple_position(first, span)?;
        let second = tuple_position(second, span)?;
        return Ok((field(base, Member::Position(first, span)), Some((second, span))));
    }
    if input.peek(syn::Ident) {
        let name: Ident = input.parse()?;
        if input.peek(token::Paren) {
            return parse_method(input, context, base, name).map(|call| (call, None));
        }
        return Ok((field(base, Member::Named(name)), None));
    }
    Err(expected(input, "a field name, a tuple position or a method after `.`"))
}

fn tuple_position(text: &str, span: Span) -> syn::Result<usize> {
    if text.is_empty() || !text.bytes().all(|byte| byte.is_ascii_digit()) {
        return Err(syn::Error::new(span, format!("expected a tuple position like `.0`, found `{text}`")));
    }
    text.parse().map_err(|_| syn::Error::new(span, format!("tuple position `{text}` is too large")))
}

fn field(base: Box<Expr>, member: Member) -> Box<Expr> {
    let member_span = match &member {
        Member::Position(_, span) => *span,
        Member::Named(name) => name.span(),
    };
    let span = base.span.join(member_span).unwrap_or(member_span);
    node(ExprKind::Field { base, member }, span)
}

/// `receiver.len()`, `receiver.shape(k)`, or a scalar function with the receiver as its first
/// argument (`x.exp()`, `x.pow(y)`).
fn parse_method(input: ParseStream, context: &Context, receiver: Box<Expr>, name: Ident) -> syn::Result<Box<Expr>> {
    let text = name.to_string();
    let func = Func::from_name(&text);
    if func.is_none() && text != "len" && text != "shape" {
        // Iterator-style methods on arrays: ein's loops say the same.
        let iterator = match text.as_str() {
            "map" | "iter" | "into_iter" | "zip" | "enumerate" | "for_each" | "mapv" | "to_vec" => {
                Some("an array has no such method in ein: write a comprehension, `for i { f(x[i]) }`")
            }
            "sum" | "product" | "fold" | "reduce" | "count" => {
                Some("an array has no such method in ein: write a reduction, `sum i { x[i] }`, or a `fold`")
            }
            "filter" => Some("an array has no such method in ein: write a filter, `for i where c(x[i]) { x[i] }`"),
            _ => None,
        };
        let hint = match (iterator, Func::closest(&text, argument_count(input).map(|count| count + 1))) {
            (Some(iterator), _) => iterator.to_string(),
            (None, Some(close)) => format!("did you mean `{}`?", close.name()),
            (None, None) => format!("ein knows `len`, `shape` and Rust's scalar methods {}", function_list()),
        };
        return Err(syn::Error::new(name.span(), format!("unknown method `{text}`; {hint}")));
    }
    let content;
    let parentheses = syn::parenthesized!(content in input);
    let span = receiver.span.join(parentheses.span.close()).unwrap_or(name.span());
    let kind = match func {
        Some(func) => {
            let arguments = parse_comma_separated(&content, context, "`)`")?;
            check_method_arity(func, &name, parentheses.span, arguments.len())?;
            let mut args = Vec::with_capacity(arguments.len() + 1);
            args.push(*receiver);
            args.extend(arguments);
            ExprKind::Call { func, func_span: name.span(), args }
        }
        None if text == "len" => {
            if !content.is_empty() {
                return Err(syn::Error::new(content.span(), "`len` takes no arguments: write `a.len()`"));
            }
            ExprKind::Len { array: receiver }
        }
        None => {
            let (axis, axis_span) = parse_axis(&content, parentheses.span)?;
            ExprKind::Shape { array: receiver, axis, axis_span }
        }
    };
    Ok(node(kind, span))
}

fn check_method_arity(func: Func, name: &Ident, parentheses: DelimSpan, found: usize) -> syn::Result<()> {
    let expected_count = func.arity().saturating_sub(1);
    if found == expected_count {
        return Ok(());
    }
    let takes = match expected_count {
        0 => "no arguments".to_owned(),
        1 => "1 argument".to_owned(),
        count => format!("{count} arguments"),
    };
    let call_span = name.span().join(parentheses.close()).unwrap_or(name.span());
    Err(syn::Error::new(call_span, format!("`.{name}()` takes {takes} besides its receiver, found {found}")))
}

/// The inside of `.shape(k)`: one integer literal.
fn parse_axis(content: ParseStream, parentheses: DelimSpan) -> syn::Result<(usize, Span)> {
    const MESSAGE: &str = "the axis of `shape` must be an integer literal, e.g. `a.shape(1)`";
    if content.is_empty() {
        return Err(syn::Error::new(parentheses.join(), MESSAGE));
    }
    if !content.peek(LitInt) {
        return Err(syn::Error::new(content.span(), MESSAGE));
    }
    let literal: LitInt = content.parse()?;
    let axis = match literal.suffix() {
        "" | "usize" => literal.base10_parse::<usize>().ok(),
        _ => None,
    };
    let Some(axis) = axis else {
        return Err(syn::Error::new(literal.span(), MESSAGE));
    };
    if axis >= MAX_TREE_DEPTH {
        // No array can have this axis (ranks are bounded by the nesting and depth limits), and a
        // huge axis would make the expression form capture an array of that rank.
        return Err(syn::Error::new(
            literal.span(),
            format!("axis {axis} is out of range: no ein array has that many axes"),
        ));
    }
    if !content.is_empty() {
        return Err(expected(content, "`)` after the axis of `shape`"));
    }
    Ok((axis, literal.span()))
}

/// How many comma-separated arguments the parenthesised group next in `input` holds, for
/// suggesting a function of that arity; `input` itself is not advanced.
pub(super) fn argument_count(input: ParseStream) -> Option<usize> {
    let group: proc_macro2::Group = input.fork().parse().ok()?;
    let mut count = 0;
    let mut pending = false;
    for tree in group.stream() {
        match tree {
            proc_macro2::TokenTree::Punct(punct) if punct.as_char() == ',' => {
                count += usize::from(pending);
                pending = false;
            }
            _ => pending = true,
        }
    }
    Some(count + usize::from(pending))
}

/// "exp, ln, sqrt, …": the scalar functions, for messages.
pub(super) fn function_list() -> String {
    let names: Vec<&str> = Func::ALL.iter().map(|func| func.name()).collect();
    names.join(", ")
}

/// Expressions separated by commas up to the end of `content` (a trailing comma is fine);
/// `closing` names the delimiter for messages.
pub(super) fn parse_comma_separated(content: ParseStream, context: &Context, closing: &str) -> syn::Result<Vec<Expr>> {
    let mut items = Vec::new();
    while !content.is_empty() {
        items.push(*parse_expression(content, context)?);
        if content.is_empty() {
            break;
        }
        if content.peek(Token![..]) && closing == "`]`" {
            let error = expected(content, &format!("`,` or {closing}"));
            let hint = "ein has no slices: read elements (`a[k + 1]`), or build the part as an array \
                        (`for k in 0..2 { a[k + 1] }`)";
            return Err(syn::Error::new(content.span(), format!("{error}; {hint}")));
        }
        if !content.peek(Token![,]) {
            return Err(expected(content, &format!("`,` or {closing}")));
        }
        content.parse::<Token![,]>()?;
    }
    Ok(items)
}

// ---------------------------------------------------------------------------------------------
// Tree depth.

/// The depth of a node built on a left-hand "spine" child whose depth is known (the array of an
/// index, the base of a field, the receiver of a method): only the other children are measured.
fn depth_on_spine(node: &Expr, spine_depth: usize) -> usize {
    let side_depth = match &node.kind {
        ExprKind::Index { indices, .. } => indices.iter().map(tree_depth).max(),
        ExprKind::Call { args, .. } => args.iter().skip(1).map(tree_depth).max(),
        _ => None,
    };
    weight(&node.kind) + spine_depth.max(side_depth.unwrap_or(0))
}

/// Builds a node that no chain tracks the depth of (prefix operators, calls, `for`, reductions,
/// folds, scans, `if`, tuples, records), failing at `span` when it makes the tree too deep. Each of
/// these nests at most `MAX_NESTING` times, but each level can add many levels of tree.
pub(super) fn checked_node(context: &Context, kind: ExprKind, span: Span) -> syn::Result<Box<Expr>> {
    let node = node(kind, span);
    context.check_tree_depth(tree_depth(&node), span)?;
    Ok(node)
}

/// How many levels later stages make of one surface node: `a[i, j]` becomes two nested reads,
/// `for i, j` two nested comprehensions, `let (p, q) = t` a `let` per name plus one holding the
/// tuple, and a fold with a tuple accumulator the fold and such `let`s.
fn weight(kind: &ExprKind) -> usize {
    match kind {
        ExprKind::Index { indices, .. } => indices.len().max(1),
        ExprKind::For { binders, .. } | ExprKind::Reduce { binders, .. } => binders.len().max(1),
        ExprKind::Let { pattern, .. } => pattern_size(pattern),
        ExprKind::Fold { acc: acc @ Pattern::Tuple(..), .. } | ExprKind::Scan { acc: acc @ Pattern::Tuple(..), .. } => {
            1 + pattern_size(acc)
        }
        _ => 1,
    }
}

/// The names and tuples in a pattern (each becomes a `let` in the checked tree). Patterns nest
/// only through parentheses, so this recursion is bounded by `MAX_NESTING`.
fn pattern_size(pattern: &Pattern) -> usize {
    match pattern {
        Pattern::Name(_) => 1,
        Pattern::Tuple(items, _) => 1 + items.iter().map(pattern_size).sum::<usize>(),
    }
}

/// The depth of `expr`'s tree, measured no deeper than just past the limit, so the walk itself
/// stays shallow.
fn tree_depth(expr: &Expr) -> usize {
    fn measure(expr: &Expr, budget: usize) -> usize {
        if budget == 0 {
            return 0;
        }
        let own = weight(&expr.kind);
        let below = budget.saturating_sub(own);
        own + children(&expr.kind).into_iter().map(|child| measure(child, below)).max().unwrap_or(0)
    }
    measure(expr, MAX_TREE_DEPTH + 1)
}

fn children(kind: &ExprKind) -> Vec<&Expr> {
    kind.children()
}
