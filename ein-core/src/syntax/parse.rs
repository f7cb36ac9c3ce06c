//! Stage 1, syntax: the parser from `ein!` tokens to the surface tree ([`super::ast`]).
//!
//! Hand-written over syn's `ParseStream`, because ein is not Rust syntax (no `syn::Expr`). It
//! promises: it never panics and never recurses without bound, every node keeps a precise span,
//! and every error is a `syn::Error` on the smallest offending token, in plain words.
//!
//! Layout: this file holds the entry point and the shared helpers; `items` parses functions,
//! `types` parses types and patterns, `expr` parses blocks, operators and postfix forms, and
//! `primary` the forms operators apply to.
//!
//! Spans: a node's span covers all of its text (`a[i, j]`, `x + y`, `sum k { .. }`) where
//! `Span::join` works (nightly compilers and unit tests). On stable compilers `join` fails, and
//! each node falls back to its most telling token: the operator of a binary node, the keyword of
//! a `for`/`if`/`let`, the function name of a call, the brackets of an index.

mod expr;
mod items;
mod primary;
mod types;

pub(crate) use primary::unknown_function;

#[cfg(test)]
mod tests;

use super::ast::Input;
use proc_macro2::{Delimiter, Spacing, Span, TokenStream, TokenTree};
use std::cell::Cell;
use syn::parse::{ParseStream, Parser};
use syn::Token;

/// Parses one `ein!` invocation: typed functions when it starts like an item (`#[..]`, `pub`,
/// `fn`, or another Rust item keyword, which then gets the message for items), otherwise one
/// expression (a block body: `let` statements, then a value).
pub fn parse_input(input: TokenStream) -> syn::Result<Input> {
    if input.is_empty() {
        return Err(syn::Error::new(Span::call_site(), "expected an ein expression or function"));
    }
    check_group_nesting(&input)?;
    let parse = |stream: ParseStream| -> syn::Result<Input> {
        if starts_like_an_item(stream) {
            let context = Context { item_form: true, ..Context::default() };
            items::parse_functions(stream, &context)
        } else {
            expr::parse_block_body(stream, &Context::default()).map(|body| Input::Expression(*body))
        }
    };
    parse.parse2(input)
}

/// Whether `input` is the item form (functions) rather than an expression, as
/// [`parse_input`] decides it: what the macro's output, errors included, must be.
pub fn is_item_form(input: &TokenStream) -> bool {
    let peek = |stream: ParseStream| -> syn::Result<bool> {
        let items = starts_like_an_item(stream);
        // The rest is not this function's business.
        stream.parse::<TokenStream>()?;
        Ok(items)
    };
    peek.parse2(input.clone()).unwrap_or(false)
}

fn starts_like_an_item(input: ParseStream) -> bool {
    input.peek(Token![#])
        || input.peek(Token![pub])
        || input.peek(Token![fn])
        || input.peek(Token![struct])
        || input.peek(Token![enum])
        || input.peek(Token![impl])
        || input.peek(Token![trait])
        || input.peek(Token![type])
        || input.peek(Token![const])
        || input.peek(Token![static])
        || input.peek(Token![use])
        || input.peek(Token![mod])
        || input.peek(Token![extern])
        || input.peek(Token![unsafe])
        || input.peek(Token![async])
}

/// syn's token buffer recurses once per nested group, so input nested deeper than the parser
/// would accept anyway is refused before syn sees it (without recursing here).
fn check_group_nesting(input: &TokenStream) -> syn::Result<()> {
    let mut pending = vec![(input.clone(), 0usize)];
    while let Some((stream, depth)) = pending.pop() {
        for tree in stream {
            if let TokenTree::Group(group) = tree {
                if depth >= MAX_NESTING {
                    return Err(syn::Error::new(group.span_open(), too_deep_message()));
                }
                pending.push((group.stream(), depth + 1));
            }
        }
    }
    Ok(())
}

/// How deeply the parser may recurse (parentheses, blocks, operands of `-`/`!`, nested types):
/// a bound that keeps the parser's stack under a megabyte on any input, even unoptimised (about
/// 4 to 6 KB per level; see the note in `expr`).
const MAX_NESTING: usize = 128;

/// How deep the finished tree may grow. Left-associative chains (`a + b + c`, `a[i][j]`, long
/// `let` sequences) deepen the tree without deepening the parser; this bound keeps every later
/// recursive stage (and dropping the tree) safe. Measured unoptimised, the checker needs about
/// 13 KB of stack per level (it overflowed rustc's 8 MiB at about 620 levels), so 256 levels
/// keep the whole pipeline under about 4 MB; `tests/never_panic.rs` probes the limit.
const MAX_TREE_DEPTH: usize = 256;

/// State shared by the whole parse of one invocation.
#[derive(Default)]
struct Context {
    nesting: Cell<usize>,
    /// Whether this is the item form, where a call of a name that is no scalar function may
    /// name another function of the block (resolved by the checker).
    item_form: bool,
}

/// Holds one level of nesting until dropped.
struct NestingGuard<'context> {
    nesting: &'context Cell<usize>,
}

impl Drop for NestingGuard<'_> {
    fn drop(&mut self) {
        self.nesting.set(self.nesting.get().saturating_sub(1));
    }
}

impl Context {
    /// Enters one level of nesting, or fails at the next token when there are too many.
    fn enter(&self, input: ParseStream) -> syn::Result<NestingGuard<'_>> {
        let level = self.nesting.get() + 1;
        if level > MAX_NESTING {
            return Err(syn::Error::new(input.span(), too_deep_message()));
        }
        self.nesting.set(level);
        Ok(NestingGuard { nesting: &self.nesting })
    }

    /// Fails at `span` when a tree of `depth` levels would be too deep.
    fn check_tree_depth(&self, depth: usize, span: Span) -> syn::Result<()> {
        if depth > MAX_TREE_DEPTH {
            return Err(syn::Error::new(span, too_deep_message()));
        }
        Ok(())
    }
}

fn too_deep_message() -> String {
    format!(
        "expression nested too deeply: ein allows {MAX_NESTING} levels of nesting and chains of about \
         {MAX_TREE_DEPTH} operations or `let`s (each `let` of a block holds the rest of it); split a long \
         expression with `let`, and a long block into functions"
    )
}

/// "expected {what}, found `x`", at the next token.
fn expected(input: ParseStream, what: &str) -> syn::Error {
    syn::Error::new(input.span(), format!("expected {what}, found {}", describe_next(input)))
}

/// The next token as a user would name it in a message: `` `;` ``, `` `+=` ``, `` `(` ``.
fn describe_next(input: ParseStream) -> String {
    let cursor = input.cursor();
    if cursor.eof() {
        // At the end of a group, syn's span is the group's closing delimiter: name it.
        return match input.span().source_text().as_deref() {
            Some(close @ (")" | "]" | "}")) => format!("`{close}`"),
            _ => "the end of the input".to_owned(),
        };
    }
    if let Some((lifetime, _)) = cursor.lifetime() {
        return format!("`{lifetime}`");
    }
    if let Some((punct, mut rest)) = cursor.punct() {
        // Show a multi-character operator (`+=`, `::`, `..=`) whole, not just its first character.
        let mut text = String::from(punct.as_char());
        let mut spacing = punct.spacing();
        while spacing == Spacing::Joint && text.len() < 3 {
            let Some((next, after)) = rest.punct() else { break };
            text.push(next.as_char());
            spacing = next.spacing();
            rest = after;
        }
        return format!("`{text}`");
    }
    if let Some((ident, _)) = cursor.ident() {
        return format!("`{ident}`");
    }
    if let Some((literal, _)) = cursor.literal() {
        return format!("`{literal}`");
    }
    match cursor.any_group() {
        Some((_, Delimiter::Parenthesis, _, _)) => "`(`".to_owned(),
        Some((_, Delimiter::Bracket, _, _)) => "`[`".to_owned(),
        Some((_, Delimiter::Brace, _, _)) => "`{`".to_owned(),
        _ => "an unexpected token".to_owned(),
    }
}

/// Consumes `length` punctuation characters (one operator such as `<=`) and returns their span.
fn consume_punctuation(input: ParseStream, length: usize) -> syn::Result<Span> {
    input.step(|cursor| {
        let mut rest = *cursor;
        let mut span: Option<Span> = None;
        for _ in 0..length {
            let Some((punct, next)) = rest.punct() else {
                return Err(cursor.error("expected an operator"));
            };
            span = Some(match span {
                None => punct.span(),
                Some(first) => first.join(punct.span()).unwrap_or(first),
            });
            rest = next;
        }
        Ok((span.unwrap_or_else(|| cursor.span()), rest))
    })
}
