//! The item form: `#[attrs] pub fn name(x: [f32], n: usize) -> [f32] { body }`, one or more.

use super::primary::parse_body;
use super::types::parse_type;
use super::{expected, Context};
use crate::syntax::ast::{Function, Param};
use proc_macro2::Ident;
use syn::parse::ParseStream;
use syn::{token, Token};

/// One or more functions, up to the end of the input.
pub(super) fn parse_functions(input: ParseStream, context: &Context) -> syn::Result<Vec<Function>> {
    let mut functions = Vec::new();
    while !input.is_empty() {
        functions.push(parse_function(input, context)?);
    }
    Ok(functions)
}

fn parse_function(input: ParseStream, context: &Context) -> syn::Result<Function> {
    let attrs = syn::Attribute::parse_outer(input)?;
    let vis: syn::Visibility = input.parse()?;
    if !input.peek(Token![fn]) {
        return Err(expected(input, "`fn`: an ein item is a function `fn name(params) -> type { body }`"));
    }
    let fn_token: Token![fn] = input.parse()?;
    if !input.peek(syn::Ident) {
        return Err(expected(input, "the function's name after `fn`"));
    }
    let name: Ident = input.parse()?;
    if input.peek(Token![<]) {
        return Err(syn::Error::new(input.span(), "ein functions take no generic parameters"));
    }
    if !input.peek(token::Paren) {
        return Err(expected(input, "the parameter list `(name: type, ..)`"));
    }
    let content;
    let parentheses = syn::parenthesized!(content in input);
    let params = parse_parameters(&content, context)?;
    if !input.peek(Token![->]) {
        // Point just where `-> type` belongs.
        return Err(syn::Error::new(parentheses.span.close(), "an ein function needs a return type, e.g. `-> [f32]`"));
    }
    input.parse::<Token![->]>()?;
    let ret = parse_type(input, context)?;
    if !input.peek(token::Brace) {
        return Err(expected(input, "the function body `{ .. }`"));
    }
    let (body, braces) = parse_body(input, context, "the function")?;
    let span = fn_token.span.join(braces.close()).unwrap_or(name.span());
    Ok(Function { attrs, vis, name, params, ret, body: *body, span })
}

/// `name: type, ..` inside the parameter list (a trailing comma is fine).
fn parse_parameters(content: ParseStream, context: &Context) -> syn::Result<Vec<Param>> {
    let mut params: Vec<Param> = Vec::new();
    while !content.is_empty() {
        if !content.peek(syn::Ident) {
            return Err(expected(content, "a parameter name"));
        }
        let name: Ident = content.parse()?;
        if params.iter().any(|param| param.name == name) {
            return Err(syn::Error::new(name.span(), format!("duplicate parameter `{name}`")));
        }
        if !content.peek(Token![:]) || content.peek(Token![::]) {
            return Err(expected(
                content,
                &format!("`:` and a type after the parameter `{name}`, e.g. `{name}: [f32]`"),
            ));
        }
        content.parse::<Token![:]>()?;
        let ty = parse_type(content, context)?;
        params.push(Param { name, ty });
        if content.is_empty() {
            break;
        }
        if !content.peek(Token![,]) {
            return Err(expected(content, "`,` or `)`"));
        }
        content.parse::<Token![,]>()?;
    }
    Ok(params)
}
