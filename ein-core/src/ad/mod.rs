//! Differentiation (DESIGN.md §1.2): companions of item-form functions built as checked IR from
//! the checked primal, before the passes, so a derivative is fused, hoisted, parallel and
//! vectorised exactly like user code. Forward mode (`#[jvp(name)]`) is here; reverse mode is
//! planned in `docs/differentiation.md`.
//!
//! The interpreter's dual-number evaluation (`interp::run_dual`) is the independent oracle: it
//! shares no code with this module.

mod build;
mod derivatives;
mod jvp;

pub use jvp::jvp_program;

use crate::ir::{Form, FunctionHeader, Unit};

/// The `#[jvp(name)]` companion of a checked unit: `name(params.., tangents..) -> (value,
/// tangent)`, one tangent parameter per parameter with a float part, in order (see
/// [`jvp_program`]). The user's attributes stay on the primal function only.
pub fn jvp_unit(unit: &Unit, header: &FunctionHeader, name: &proc_macro2::Ident) -> syn::Result<Unit> {
    let program = jvp_program(&unit.program)?;
    let doc = format!(" The forward-mode derivative of [`{}`]: its value and the tangent of the result.", header.name);
    let companion = FunctionHeader {
        attrs: vec![syn::parse_quote!(#[doc = #doc])],
        vis: header.vis.clone(),
        name: name.clone(),
        into: None,
        jvp: None,
        ret_span: header.ret_span,
    };
    Ok(Unit { program, form: Form::Function(companion) })
}
