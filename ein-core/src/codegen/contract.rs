//! Contractions ([`Contraction`]): the sizes are computed (and checked non-negative) first, in
//! label order; then, if the contraction is small (`contraction_is_small`: a GEMM's set-up
//! would cost more than it saves) or a matrix–vector product whose matrix rows are contiguous,
//! the original loop nest (`Contraction::loops`) runs as any other code; else one call to the
//! runtime's `contract` (`contract_chain` for three operands) with the scale and the operands'
//! views, which picks a GEMM, a GEMV or dot products from the sizes and strides (see
//! `ein-runtime/src/gemm.rs` and `chain.rs`).

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
        let ty = &expr.ty;
        let (small, loops) = self.nested(false, |generator, small| {
            let value = generator.value(&contraction.loops, small)?;
            generator.owned(&value, ty, expr.span, small)
        })?;
        let loops = small.finish(Some(&loops));
        // The operands' views, once (they cannot fail and contain no loop).
        let mut views = Vec::new();
        for operand in &contraction.operands {
            let array = self.array(&operand.array, block, None)?;
            let view =
                array.views().first().ok_or_else(|| internal(operand.array.span, "an operand with no column"))?;
            views.push(view.clone());
        }
        let mut large = Block::new();
        let call = self.contraction_call(contraction, &sizes, &views, &mut large)?;
        let large = large.finish(Some(&call));
        // A matrix–vector product whose matrix rows are contiguous runs as the loop nest: one
        // vectorised dot product per row, in parallel, measured faster than the GEMV path
        // (4096² f32: 2.3–2.8 ms against 3.3–3.5 ms); other layouts take the GEMV.
        let rows_contiguous = match contraction.matvec_matrix() {
            Some(matrix) => {
                let view = &views[matrix];
                quote!(|| #view.unit_inner().is_some())
            }
            None => TokenStream::new(),
        };
        let name = self.names.fresh("contracted");
        let choice = quote! {
            if ::ein::__private::contraction_is_small(&[#(#sizes),*]) #rows_contiguous { #loops } else { #large }
        };
        block.push_let(name.clone(), Code::expr(choice, Prec::Block));
        let Type::Array { elem, .. } = &expr.ty else {
            return Err(internal(expr.span, "a contraction with output labels that is not an array"));
        };
        Ok(Value::Array(self.views_of_store(elem, name, hint, block)))
    }

    /// The runtime call for a contraction whose sizes are bound to `sizes` and whose operands
    /// are viewed by `views`.
    fn contraction_call(
        &mut self,
        contraction: &Contraction,
        sizes: &[TokenStream],
        views: &[TokenStream],
        block: &mut Block,
    ) -> syn::Result<Code> {
        let scale = match &contraction.scale {
            Some(scale) => {
                let factor = self.scalar(&scale.factor, block)?;
                let factor = &factor.tokens;
                quote!(::core::option::Option::Some(#factor))
            }
            None => quote!(::core::option::Option::None),
        };
        let axes: Vec<TokenStream> = contraction
            .operands
            .iter()
            .map(|operand| {
                let axes = operand.axes.iter().map(|&axis| Literal::usize_unsuffixed(axis));
                quote!(&[#(#axes),*])
            })
            .collect();
        let outputs = Literal::usize_unsuffixed(contraction.outputs);
        let (output_sizes, summed_sizes) = sizes.split_at(contraction.outputs);
        // Inside a loop versioned for unit strides an operand may be a `UnitView`.
        let views: Vec<TokenStream> =
            views.iter().map(|view| quote!(::ein::__private::IntoView::into_view(#view))).collect();
        let call = match (&views[..], &axes[..]) {
            ([left, right], [left_axes, right_axes]) => quote! {
                ::ein::__private::contract(
                    &::ein::__private::ContractionSpec { outputs: #outputs, left: #left_axes, right: #right_axes },
                    [#(#output_sizes),*], &[#(#summed_sizes),*], #scale, #left, #right,
                )
            },
            ([first, second, third], [first_axes, second_axes, third_axes]) => quote! {
                ::ein::__private::contract_chain(
                    &::ein::__private::ChainSpec { outputs: #outputs, operands: [#first_axes, #second_axes, #third_axes] },
                    [#(#output_sizes),*], &[#(#summed_sizes),*], #scale, #first, #second, #third,
                )
            },
            _ => return Err(internal(contraction.loops.span, "a contraction of neither two nor three operands")),
        };
        Ok(Code::expr(call, Prec::Atom))
    }
}
