//! Codegen stub (being written).
use crate::ir::{Form, Program};
use proc_macro2::TokenStream;

pub fn generate(program: &Program, form: &Form) -> TokenStream {
    let _ = (program, form);
    TokenStream::new()
}
