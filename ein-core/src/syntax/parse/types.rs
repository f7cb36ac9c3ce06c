//! Types (`f32`, `[T]`, `(A, B)`, `{ name: T }`) and patterns (`x`, `(a, (b, _))`).

use super::{describe_next, expected, Context};
use crate::ops::Scalar;
use crate::syntax::ast::{Pattern, TypeExpr};
use proc_macro2::Ident;
use syn::parse::ParseStream;
use syn::{token, Token};

const SUPPORTED_TYPES: &str =
    "f32, f64, i8, i16, i32, i64, isize, u8, u16, u32, u64, usize, bool, arrays `[T]`, tuples `(A, B)` and records `{ name: T }`";

/// `f32 f64 i32 i64 usize bool` | `[T]` | `(A, B, ..)` | `{ name: T, .. }`
pub(super) fn parse_type(input: ParseStream, context: &Context) -> syn::Result<TypeExpr> {
    let _guard = context.enter(input)?;
    if input.peek(token::Bracket) {
        parse_array_type(input, context)
    } else if input.peek(token::Paren) {
        parse_tuple_type(input, context)
    } else if input.peek(token::Brace) {
        parse_record_type(input, context)
    } else if input.peek(syn::Ident) {
        parse_scalar_type(input)
    } else {
        Err(syn::Error::new(
            input.span(),
            format!("expected a type, found {}; ein types are {SUPPORTED_TYPES}", describe_next(input)),
        ))
    }
}

fn parse_scalar_type(input: ParseStream) -> syn::Result<TypeExpr> {
    let name: Ident = input.parse()?;
    match Scalar::from_name(&name.to_string()) {
        Some(scalar) => Ok(TypeExpr::Scalar(scalar, name.span())),
        None => Err(syn::Error::new(name.span(), format!("unknown type `{name}`; ein types are {SUPPORTED_TYPES}"))),
    }
}

fn parse_array_type(input: ParseStream, context: &Context) -> syn::Result<TypeExpr> {
    let content;
    let brackets = syn::bracketed!(content in input);
    if content.is_empty() {
        return Err(syn::Error::new(brackets.span.join(), "expected an element type inside `[ ]`, e.g. `[f32]`"));
    }
    let element = parse_type(&content, context)?;
    if content.peek(Token![;]) {
        return Err(syn::Error::new(
            content.span(),
            "ein array types have no length: write `[f32]`, the size comes from the value",
        ));
    }
    if !content.is_empty() {
        return Err(expected(&content, "`]`"));
    }
    Ok(TypeExpr::Array(Box::new(element), brackets.span.join()))
}

fn parse_tuple_type(input: ParseStream, context: &Context) -> syn::Result<TypeExpr> {
    let content;
    let parentheses = syn::parenthesized!(content in input);
    let span = parentheses.span.join();
    if content.is_empty() {
        return Err(syn::Error::new(span, "the unit type `()` is not supported"));
    }
    let first = parse_type(&content, context)?;
    if content.is_empty() {
        // `(T)` only groups.
        return Ok(first);
    }
    expect_second_element(&content)?;
    let mut elements = vec![first];
    while !content.is_empty() {
        elements.push(parse_type(&content, context)?);
        expect_comma_or_end(&content, "`)`")?;
    }
    Ok(TypeExpr::Tuple(elements, span))
}

fn parse_record_type(input: ParseStream, context: &Context) -> syn::Result<TypeExpr> {
    let content;
    let braces = syn::braced!(content in input);
    let span = braces.span.join();
    if content.is_empty() {
        return Err(syn::Error::new(span, "a record type needs at least one field, e.g. `{ re: f64, im: f64 }`"));
    }
    let mut fields: Vec<(Ident, TypeExpr)> = Vec::new();
    while !content.is_empty() {
        let name = parse_field_name(&content, &fields)?;
        fields.push((name, parse_type(&content, context)?));
        expect_comma_or_end(&content, "`}`")?;
    }
    Ok(TypeExpr::Record(fields, span))
}

/// `name:` inside a record type.
fn parse_field_name(content: ParseStream, fields: &[(Ident, TypeExpr)]) -> syn::Result<Ident> {
    if !content.peek(syn::Ident) {
        return Err(expected(content, "a field name"));
    }
    let name: Ident = content.parse()?;
    if fields.iter().any(|(existing, _)| *existing == name) {
        return Err(syn::Error::new(name.span(), format!("duplicate field `{name}` in this record type")));
    }
    if !content.peek(Token![:]) || content.peek(Token![::]) {
        return Err(expected(content, &format!("`:` and a type after the field `{name}`")));
    }
    content.parse::<Token![:]>()?;
    Ok(name)
}

/// After the first element of a tuple (type or pattern): the `,`, then at least one more element.
fn expect_second_element(content: ParseStream) -> syn::Result<()> {
    if !content.peek(Token![,]) {
        return Err(expected(content, "`,` or `)`"));
    }
    let comma: Token![,] = content.parse()?;
    if content.is_empty() {
        return Err(syn::Error::new(comma.span, "one-element tuples are not supported"));
    }
    Ok(())
}

/// After an element of a list: the end of the group, or a `,` (maybe trailing).
fn expect_comma_or_end(content: ParseStream, closing: &str) -> syn::Result<()> {
    if content.is_empty() {
        return Ok(());
    }
    if !content.peek(Token![,]) {
        return Err(expected(content, &format!("`,` or {closing}")));
    }
    content.parse::<Token![,]>()?;
    Ok(())
}

/// The left side of `let` and of a fold accumulator: `x`, `_` or `(p, q, ..)`.
pub(super) fn parse_pattern(input: ParseStream, context: &Context) -> syn::Result<Pattern> {
    let _guard = context.enter(input)?;
    if input.peek(Token![_]) {
        // `_` binds a name that no expression can mention, which is exactly "ignore this".
        let underscore: Token![_] = input.parse()?;
        Ok(Pattern::Name(Ident::new("_", underscore.span)))
    } else if input.peek(syn::Ident) {
        Ok(Pattern::Name(input.parse()?))
    } else if input.peek(token::Paren) {
        parse_tuple_pattern(input, context)
    } else if input.peek(Token![mut]) {
        let error = expected(input, "a name or a tuple pattern like `(a, b)`");
        let hint = "ein's names are bound once and never change: drop `mut` and compute a new value \
                    (`for`, `fold`, `accum`) where Rust would update one";
        Err(syn::Error::new(input.span(), format!("{error}; {hint}")))
    } else {
        Err(expected(input, "a name or a tuple pattern like `(a, b)`"))
    }
}

fn parse_tuple_pattern(input: ParseStream, context: &Context) -> syn::Result<Pattern> {
    let content;
    let parentheses = syn::parenthesized!(content in input);
    let span = parentheses.span.join();
    if content.is_empty() {
        return Err(syn::Error::new(span, "`()` is not a pattern: ein has no unit value"));
    }
    let first = parse_pattern(&content, context)?;
    if content.is_empty() {
        // `(x)` only groups.
        return Ok(first);
    }
    expect_second_element(&content)?;
    let mut elements = vec![first];
    while !content.is_empty() {
        elements.push(parse_pattern(&content, context)?);
        expect_comma_or_end(&content, "`)`")?;
    }
    Ok(Pattern::Tuple(elements, span))
}
