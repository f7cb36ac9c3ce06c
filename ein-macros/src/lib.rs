//! The `ein!` procedural macro: a thin shim that hands tokens to `ein_core` and turns its errors into compile errors.

use proc_macro::TokenStream;

/// Compiles an ein program. See the `ein` crate documentation for the language.
#[proc_macro]
pub fn ein(input: TokenStream) -> TokenStream {
    ein_core::expand(input.into()).into()
}
