//! The item form: `#[attrs] pub fn name(x: [f32], n: usize) -> [f32] { body }`, one or more, each
//! optionally with ein's `#[into(name_into)]` (a second function that writes into `out`) and
//! `#[jvp(name_jvp)]` (its forward-mode derivative, see `crate::ad`), and
//! `extern fn name(x: f64) -> f64;` declarations of Rust functions the block calls per element.

use super::primary::parse_body;
use super::types::parse_type;
use super::{expected, Context};
use crate::ir::{Companion, CompanionKind};
use crate::syntax::ast::{ExternFunction, Function, Input, Param, TypeExpr};
use proc_macro2::Ident;
use syn::parse::Parse;
use syn::parse::ParseStream;
use syn::{token, Token};

/// One or more functions and `extern fn` declarations, up to the end of the input.
pub(super) fn parse_functions(input: ParseStream, context: &Context) -> syn::Result<Input> {
    let mut functions = Vec::new();
    let mut externs: Vec<ExternFunction> = Vec::new();
    while !input.is_empty() {
        if input.peek(Token![extern]) {
            externs.push(parse_extern(input, context)?);
        } else {
            functions.push(parse_function(input, context)?);
        }
    }
    let mut names: Vec<&Ident> = Vec::new();
    for name in functions.iter().map(|function| &function.name).chain(externs.iter().map(|function| &function.name)) {
        if names.contains(&name) {
            return Err(syn::Error::new(
                name.span(),
                format!("`{name}` is already the name of a function in this `ein!` block"),
            ));
        }
        if crate::ops::Func::from_name(&name.to_string()).is_some() {
            return Err(syn::Error::new(
                name.span(),
                format!("`{name}` is one of ein's scalar functions, which calls of `{name}` would mean; name this function differently"),
            ));
        }
        names.push(name);
    }
    // The companions (`#[into(..)]`, `#[jvp(..)]`) are Rust functions too: no name twice.
    let mut taken: Vec<Ident> = functions.iter().map(|function| function.name.clone()).collect();
    for companion in functions
        .iter()
        .flat_map(|function| {
            [function.into.as_ref(), function.jvp.as_ref(), function.reverse.as_ref().map(|reverse| &reverse.name)]
        })
        .flatten()
    {
        if taken.contains(companion) {
            return Err(syn::Error::new(
                companion.span(),
                format!("`{companion}` is already the name of a function in this `ein!` block"),
            ));
        }
        taken.push(companion.clone());
    }
    Ok(Input::Functions(functions, externs))
}

/// `extern fn name(x: f64, ..) -> f64;`: scalars in and out, since ein calls it per element.
fn parse_extern(input: ParseStream, context: &Context) -> syn::Result<ExternFunction> {
    input.parse::<Token![extern]>()?;
    if input.peek(syn::LitStr) {
        let abi: syn::LitStr = input.parse()?;
        return Err(syn::Error::new(
            abi.span(),
            "an ein `extern fn` names a Rust function (`extern fn gamma(x: f64) -> f64;`); declare a foreign one in Rust and wrap it",
        ));
    }
    if !input.peek(Token![fn]) {
        return Err(expected(input, "`fn` after `extern`: `extern fn name(x: f64) -> f64;`"));
    }
    input.parse::<Token![fn]>()?;
    let (name, params, ret) = parse_signature(input, context, "an `extern fn`", "`-> f64`")?;
    for ty in params.iter().map(|param| &param.ty).chain([&ret]) {
        if !matches!(ty, TypeExpr::Scalar(..)) {
            return Err(syn::Error::new(
                ty.span(),
                format!(
                    "`extern fn {name}` must take and return single values (`f64`, `i32`, `bool`, …): \
                     ein calls it once per element; map it over an array with `for i {{ {name}(a[i]) }}`"
                ),
            ));
        }
    }
    let derivative = parse_derivative(input, &name)?;
    if input.peek(token::Brace) {
        return Err(syn::Error::new(
            input.span(),
            "an `extern fn` has no body here: it declares a Rust function defined outside the `ein!` block; end it with `;`",
        ));
    }
    if !input.peek(Token![;]) {
        return Err(expected(input, "`;` after the `extern fn` declaration"));
    }
    input.parse::<Token![;]>()?;
    Ok(ExternFunction { name, params, ret, derivative })
}

/// `with d = name` after an `extern fn`'s signature: its derivative, for `#[jvp]`.
fn parse_derivative(input: ParseStream, name: &Ident) -> syn::Result<Option<Ident>> {
    let usage = format!(
        "write `extern fn {name}(..) -> T with d = {name}_d;`, naming a Rust function that takes the arguments, \
         then one tangent per float argument, and returns the tangent of the result"
    );
    if !input.peek(syn::Ident) || !input.fork().parse::<Ident>().is_ok_and(|word| word == "with") {
        return Ok(None);
    }
    input.parse::<Ident>()?;
    let key: Ident = input.parse().map_err(|_| syn::Error::new(input.span(), usage.clone()))?;
    if key != "d" || !input.peek(Token![=]) {
        return Err(syn::Error::new(key.span(), usage));
    }
    input.parse::<Token![=]>()?;
    let derivative: Ident = input.parse().map_err(|_| syn::Error::new(input.span(), usage))?;
    Ok(Some(derivative))
}

fn parse_function(input: ParseStream, context: &Context) -> syn::Result<Function> {
    let (attrs, EinAttributes { into, jvp, reverse }) = split_ein_attributes(syn::Attribute::parse_outer(input)?)?;
    let vis: syn::Visibility = input.parse()?;
    if !input.peek(Token![fn]) {
        return Err(expected(input, "`fn`: an ein item is a function `fn name(params) -> type { body }`"));
    }
    let fn_token: Token![fn] = input.parse()?;
    let (name, params, ret) = parse_signature(input, context, "an ein function", "`-> [f32]`")?;
    if !input.peek(token::Brace) {
        return Err(expected(input, "the function body `{ .. }`"));
    }
    let (body, braces) = parse_body(input, context, "the function")?;
    if let Some(into) = &into {
        if *into == name {
            return Err(syn::Error::new(
                into.span(),
                format!("`#[into({into})]` names the function itself; give the writing function its own name, e.g. `{name}_into`"),
            ));
        }
        only_arrays(&ret, into)?;
    }
    for (kind, companion) in [("jvp", jvp.as_ref()), ("vjp", reverse.as_ref().map(|reverse| &reverse.name))] {
        if let Some(companion) = companion.filter(|companion| **companion == name) {
            return Err(syn::Error::new(
                companion.span(),
                format!(
                    "`{companion}` names the function itself; give the derivative its own name, e.g. `{name}_{kind}`"
                ),
            ));
        }
    }
    let span = fn_token.span.join(braces.close()).unwrap_or(name.span());
    Ok(Function { attrs, vis, name, params, ret, into, jvp, reverse, body: *body, span })
}

/// `name(params) -> type` after `fn`; `what` names the item in errors ("an ein function"),
/// `example` is a return type to suggest.
fn parse_signature(
    input: ParseStream,
    context: &Context,
    what: &str,
    example: &str,
) -> syn::Result<(Ident, Vec<Param>, TypeExpr)> {
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
        return Err(syn::Error::new(parentheses.span.close(), format!("{what} needs a return type, e.g. {example}")));
    }
    input.parse::<Token![->]>()?;
    let ret = parse_type(input, context)?;
    Ok((name, params, ret))
}

/// ein's own attributes of a function: its companions.
struct EinAttributes {
    into: Option<Ident>,
    jvp: Option<Ident>,
    reverse: Option<Companion>,
}

/// Takes ein's own attributes out of a function's attributes (the rest pass through):
/// `#[into(name)]` and the derivatives `#[jvp(name)]`, `#[vjp(name)]`, `#[grad(name)]` (the
/// last two optionally `(name, wrt(a, b))`).
fn split_ein_attributes(attrs: Vec<syn::Attribute>) -> syn::Result<(Vec<syn::Attribute>, EinAttributes)> {
    let mut kept = Vec::new();
    let mut found = EinAttributes { into: None, jvp: None, reverse: None };
    for attr in attrs {
        let Some(kind) = attr.path().get_ident().map(ToString::to_string) else {
            kept.push(attr);
            continue;
        };
        let usage = match kind.as_str() {
            "into" => "write `#[into(name)]`, naming the function to generate that writes the result into `out`",
            "jvp" => "write `#[jvp(name)]`, naming the function to generate that returns the value and its tangent",
            "vjp" => "write `#[vjp(name)]` or `#[vjp(name, wrt(a, b))]`, naming the function to generate that returns the value and the parameters' adjoints",
            "grad" => "write `#[grad(name)]` or `#[grad(name, wrt(a, b))]`, naming the function to generate that returns the value and its gradient",
            _ => {
                kept.push(attr);
                continue;
            }
        };
        let syn::Meta::List(list) = &attr.meta else {
            return Err(syn::Error::new_spanned(&attr, format!("`{kind}` needs a name: {usage}")));
        };
        let expected = || syn::Error::new_spanned(&list.tokens, format!("expected one function name: {usage}"));
        let (name, wrt) = if kind == "vjp" || kind == "grad" {
            let (name, wrt) = list.parse_args_with(parse_reverse_arguments).map_err(|_| expected())?;
            (name, checked_wrt(wrt)?)
        } else {
            (list.parse_args::<Ident>().map_err(|_| expected())?, Vec::new())
        };
        let duplicate = match kind.as_str() {
            "into" => found.into.replace(name).is_some(),
            "jvp" => found.jvp.replace(name).is_some(),
            _ => {
                let kind = if kind == "grad" { CompanionKind::Grad } else { CompanionKind::Vjp };
                found.reverse.replace(Companion { kind, name, wrt }).is_some()
            }
        };
        if duplicate {
            let what = if kind == "vjp" || kind == "grad" {
                "`#[vjp(..)]` or `#[grad(..)]`".to_string()
            } else {
                format!("`#[{kind}(..)]`")
            };
            return Err(syn::Error::new_spanned(&attr, format!("a function takes at most one {what}")));
        }
    }
    Ok((kept, found))
}

/// `name` or `name, wrt(a, b, ..)` (the `wrt` keyword and the names).
type ReverseArguments = (Ident, Option<(Ident, Vec<Ident>)>);

fn parse_reverse_arguments(input: ParseStream) -> syn::Result<ReverseArguments> {
    let name: Ident = input.parse()?;
    let mut wrt = None;
    if input.peek(Token![,]) {
        input.parse::<Token![,]>()?;
        let key: Ident = input.parse()?;
        if key != "wrt" {
            return Err(syn::Error::new(key.span(), "expected `wrt(..)`"));
        }
        let content;
        syn::parenthesized!(content in input);
        wrt = Some((key, content.parse_terminated(Ident::parse, Token![,])?.into_iter().collect()));
    }
    if !input.is_empty() {
        return Err(input.error("unexpected tokens"));
    }
    Ok((name, wrt))
}

/// The parameters a `wrt(..)` names: at least one, each once.
fn checked_wrt(wrt: Option<(Ident, Vec<Ident>)>) -> syn::Result<Vec<Ident>> {
    let Some((key, names)) = wrt else { return Ok(Vec::new()) };
    if names.is_empty() {
        return Err(syn::Error::new(
            key.span(),
            "`wrt()` names no parameter: name the ones to differentiate by, or leave `wrt(..)` out for every \
             float parameter",
        ));
    }
    for (position, name) in names.iter().enumerate() {
        if names[..position].contains(name) {
            return Err(syn::Error::new(name.span(), format!("`{name}` is named twice in `wrt(..)`")));
        }
    }
    Ok(names)
}

/// `#[into]` writes arrays into the caller's: every part of the result must be an array.
fn only_arrays(ty: &TypeExpr, into: &Ident) -> syn::Result<()> {
    match ty {
        TypeExpr::Array(..) => Ok(()),
        TypeExpr::Tuple(fields, _) => fields.iter().try_for_each(|field| only_arrays(field, into)),
        TypeExpr::Record(fields, _) => fields.iter().try_for_each(|(_, field)| only_arrays(field, into)),
        TypeExpr::Scalar(..) => Err(syn::Error::new(
            ty.span(),
            format!(
                "`#[into({into})]` writes the result into arrays the caller owns, but this part of it is a scalar; \
                 return scalars from a function without `#[into]`"
            ),
        )),
    }
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
