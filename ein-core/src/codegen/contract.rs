//! Contractions ([`Contraction`]): one call to the runtime's `contract` (or `contract_scalar`
//! for a dot product), which picks a GEMM, a GEMV, a dot product or plain loops at run time
//! from the sizes and strides (see `ein-runtime/src/gemm.rs`).
//!
//! The sizes are computed (and checked non-negative) first, in label order, then the scale,
//! then the operands' views: the order `Contraction` evaluates its children in.

use super::code::{Block, Code, Prec, Value};
use super::{internal, Gen};
use crate::ir::{Contraction, Expr, Type};
use proc_macro2::{Ident, Literal, TokenStream};
use quote::{quote, ToTokens};

impl Gen<'_> {
    pub(super) fn contraction(
        &mut self,
        expr: &Expr,
        contraction: &Contraction,
        block: &mut Block,
        hint: Option<Ident>,
    ) -> syn::Result<Value> {
        let mut sizes: Vec<TokenStream> = Vec::new();
        for label in &contraction.labels {
            let size = self.size_usize(&label.size, &label.name, block)?;
            if size.simple {
                sizes.push(size.tokens);
            } else {
                let name = self.names.fresh(&format!("size_{}", label.name));
                block.push_let(name.clone(), size);
                sizes.push(name.into_token_stream());
            }
        }
        let scale = match &contraction.scale {
            Some(scale) => {
                let factor = self.scalar(&scale.factor, block)?;
                let factor = &factor.tokens;
                quote!(::core::option::Option::Some(#factor))
            }
            None => quote!(::core::option::Option::None),
        };
        let mut views = Vec::new();
        for operand in [&contraction.left, &contraction.right] {
            let array = self.array(&operand.array, block, None)?;
            let view = array.views.first().ok_or_else(|| internal(operand.array.span, "an operand with no column"))?;
            views.push(view.clone());
        }
        let (left, right) = (&views[0], &views[1]);
        let axes = |axes: &[usize]| {
            let axes = axes.iter().map(|&axis| Literal::usize_unsuffixed(axis));
            quote!(&[#(#axes),*])
        };
        let outputs = Literal::usize_unsuffixed(contraction.outputs);
        let (left_axes, right_axes) = (axes(&contraction.left.axes), axes(&contraction.right.axes));
        let spec = quote! {
            &::ein::__private::ContractionSpec { outputs: #outputs, left: #left_axes, right: #right_axes }
        };
        let (output_sizes, summed_sizes) = sizes.split_at(contraction.outputs);
        if contraction.outputs == 0 {
            let name = self.names.fresh("dot");
            let call = quote! {
                ::ein::__private::contract_scalar(#spec, &[#(#summed_sizes),*], #scale, #left, #right)
            };
            block.push_let(name.clone(), Code::expr(call, Prec::Atom));
            return Ok(Value::Plain(Code::name(&name)));
        }
        let Type::Array { elem, .. } = &expr.ty else {
            return Err(internal(expr.span, "a contraction with output labels that is not an array"));
        };
        let store = self.names.fresh("contracted");
        let call = quote! {
            ::ein::__private::contract(#spec, [#(#output_sizes),*], &[#(#summed_sizes),*], #scale, #left, #right)
        };
        block.push_let(store.clone(), Code::expr(call, Prec::Atom));
        Ok(Value::Array(self.views_of_store(elem, store.into_token_stream(), hint, block)))
    }
}
