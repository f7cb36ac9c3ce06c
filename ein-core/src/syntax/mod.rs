//! Stage 1, syntax: tokens to the surface tree ([`ast`]), every node keeping its span.

pub mod ast;
mod parse;

pub(crate) use parse::unknown_function;
pub use parse::{is_item_form, parse_input};
