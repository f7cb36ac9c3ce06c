//! Differentiation (DESIGN.md §1.2): companions of item-form functions built as checked IR from
//! the checked primal, before the passes, so a derivative is fused, hoisted, parallel and
//! vectorised exactly like user code: forward mode (`#[jvp(name)]`, `jvp.rs`) and reverse mode
//! (`#[vjp(name)]`, `#[grad(name)]`, `vjp.rs`); `docs/differentiation.md` is the design.
//!
//! The interpreter's dual-number evaluation (`interp::run_dual`) is the independent oracle: it
//! shares no code with this module.
//!
//! Note [mixed accums]. An accum mixing `+=` and `*=` on one array applies its updates serially,
//! in its loops' row-major order, so each element ends as a chain `((h₀ + a₁)·m₂ + a₃)·m₄…` of
//! its own updates. Differentiating a chain needs, per update, the element it found (`f`) and
//! the product of the multipliers after it at its element (`s`): `∂h/∂h₀ = ∏m`, `∂h/∂a = s`,
//! `∂h/∂m = f·s`. Both are histories of an accum (`AccumValue`): `f` the primal's run forwards,
//! `s` that of the accum of its multipliers alone (each `+=` a `*= 1`, from ones) run backwards,
//! whose final array is `∏m`. Forward mode needs only `f`: its tangent is the dual-number
//! accumulation `dh += da`, `dh *= m; dh += f·dm`, an accum of the same loops. Both histories
//! are serial, as the primal is.

mod build;
mod derivatives;
mod jvp;
mod lift;
mod vjp;

pub use jvp::jvp_program;
pub use vjp::vjp_program;

use crate::ir::{Companion, CompanionKind, Form, FunctionHeader, Unit};

/// The `#[jvp(name)]` companion of a checked unit: `name(params.., tangents..) -> (value,
/// tangent)`, one tangent parameter per parameter with a float part, in order (see
/// [`jvp_program`]). Of the user's attributes it carries only the `cfg`s and lint levels.
pub fn jvp_unit(unit: &Unit, header: &FunctionHeader, name: &proc_macro2::Ident) -> syn::Result<Unit> {
    let program = jvp_program(&unit.program)?;
    let doc = format!(" The forward-mode derivative of [`{}`]: its value and the tangent of the result.", header.name);
    let companion = FunctionHeader {
        attrs: companion_attrs(header, &doc),
        vis: header.vis.clone(),
        name: name.clone(),
        into: None,
        jvp: None,
        reverse: None,
        ret_span: header.ret_span,
    };
    Ok(Unit { program, form: Form::Function(Box::new(companion)) })
}

/// The reverse-mode companion of a checked unit: `#[vjp(name)]` gives `name(params..,
/// cotangent) -> (value, d_p..)`, `#[grad(name)]` (a float scalar result only) `name(params..)
/// -> (value, d_p..)`; one adjoint per parameter with a float part, or per parameter of
/// `wrt(..)`, in order.
pub fn vjp_unit(unit: &Unit, header: &FunctionHeader, companion: &Companion) -> syn::Result<Unit> {
    let program = &unit.program;
    let grad = companion.kind == CompanionKind::Grad;
    if grad
        && !matches!(&program.body.ty, crate::ir::Type::Scalar(scalar) if build::has_float(&crate::ir::Type::Scalar(*scalar)))
    {
        return Err(syn::Error::new(
            header.ret_span,
            format!(
                "`#[grad({})]` needs a function returning one float (`f32` or `f64`); for other results use \
                 `#[vjp(name)]`, which takes the result's cotangent",
                companion.name
            ),
        ));
    }
    let mut wrt = Vec::new();
    for name in &companion.wrt {
        let found = program.params.iter().find(|param| *name == program.var(**param).name);
        match found {
            Some(param) if build::has_float(&program.var(*param).ty) => wrt.push(*param),
            Some(_) => {
                return Err(syn::Error::new(name.span(), format!("`{name}` has no float part: it has no derivative")));
            }
            None => {
                return Err(syn::Error::new(name.span(), format!("`{name}` is not a parameter of `{}`", header.name)))
            }
        }
    }
    if companion.wrt.is_empty() {
        wrt = program.params.iter().copied().filter(|param| build::has_float(&program.var(*param).ty)).collect();
    }
    let program = vjp_program(program, grad, &wrt)?;
    let what = if grad { "gradient" } else { "reverse-mode derivative (vector–Jacobian product)" };
    let doc =
        format!(" The {what} of [`{}`]: its value and the adjoint of each differentiated parameter.", header.name);
    let companion = FunctionHeader {
        attrs: companion_attrs(header, &doc),
        vis: header.vis.clone(),
        name: companion.name.clone(),
        into: None,
        jvp: None,
        reverse: None,
        ret_span: header.ret_span,
    };
    Ok(Unit { program, form: Form::Function(Box::new(companion)) })
}

/// A user's scan whose state holds an array (its value every state stacked) has no
/// derivative yet: the error, at the scan.
fn differentiable_scan(scan: &crate::ir::node::Scan, span: proc_macro2::Span) -> syn::Result<()> {
    if !scan.init.ty.has_array() {
        return Ok(());
    }
    Err(syn::Error::new(
        span,
        "a `scan` whose state holds an array has no derivative yet: differentiate a `fold` (its last \
         state), or scan each element (`for i { scan t in 0..n, s = a[i] { .. } }`)",
    ))
}

/// A derivative companion's attributes: its documentation, the primal function's `cfg`s and
/// lint levels ([`FunctionHeader::carried_attrs`]), and silence about its parameter count.
fn companion_attrs(header: &FunctionHeader, doc: &str) -> Vec<syn::Attribute> {
    let mut attrs = vec![syn::parse_quote!(#[doc = #doc])];
    attrs.extend(header.carried_attrs());
    // The tangents double the parameters: that many is ein's doing, not the user's.
    attrs.push(syn::parse_quote!(#[allow(clippy::too_many_arguments)]));
    attrs
}

#[cfg(test)]
mod tests;
