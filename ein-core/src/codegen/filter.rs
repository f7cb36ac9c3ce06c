//! Filters (`for i where cond { e }`): one call of the runtime's `filter` with a closure that
//! runs a chunk of indices and pushes the elements whose condition holds. The analysis says
//! whether the chunks may run in parallel (nothing in the condition or element can fail);
//! otherwise one serial pass, so failures come in index order. The kept elements arrive as a
//! vector of (tuples of) scalars; an array of tuples is split into one array per field.

use super::code::{Block, Code, Prec, Value};
use super::{internal, tree_at, Gen};
use crate::ir::node;
use crate::ir::{Expr, ExprKind, Type};
use proc_macro2::Ident;
use quote::{quote, ToTokens};

impl Gen<'_> {
    pub(super) fn filter(&mut self, expr: &Expr, block: &mut Block, hint: Option<Ident>) -> syn::Result<Value> {
        let ExprKind::Filter(node::For { index, size, body }) = &expr.kind else {
            return Err(internal(expr.span, "not a filter"));
        };
        let Type::Array { elem, .. } = &expr.ty else {
            return Err(internal(expr.span, "a filter that is not an array"));
        };
        let index = *index;
        let what = self.program.var(index).name.clone();
        let count = self.size_usize(size, &what, block)?;
        let parallel = self.analysis.filter_in_parallel(body);
        let [position, start, end, kept, pair, vector, length, element, store] =
            ["position", "start", "end", "kept", "pair", "kept_elements", "kept_length", "element", "store"]
                .map(|name| self.names.fresh(name));
        let (step_block, pair_code) = self.nested(true, |generator, step_block| {
            generator.bind_index(index, &position, step_block);
            generator.scalar(body, step_block)
        })?;
        let step = step_block.finish(Some(&pair_code));
        let mut free = crate::ir::visit::free_vars(body);
        free.remove(&index);
        let chunk = quote! {
            for #position in #start..#end {
                let #pair = { #step };
                #kept.push_if(#pair.0, #pair.1);
            }
        };
        let copies = self.local_copies(&free);
        let count = &count.tokens;
        block.push(quote! {
            let #vector = ::ein::__private::filter(#count, #parallel, |#start, #end, #kept| { #copies #chunk });
            let #length = #vector.len();
        });
        // One array per field: a scalar element's vector is the array itself.
        let columns = match &**elem {
            Type::Tuple { .. } => tree_at(elem, &element.to_token_stream())
                .map(&mut |field| {
                    quote! {
                        ::ein::__private::Array::from_vec(
                            [#length],
                            #vector.iter().map(|#element| #field).collect(),
                        )
                    }
                })
                .tuple(),
            _ => quote!(::ein::__private::Array::from_vec([#length], #vector)),
        };
        block.push_let(store.clone(), Code::expr(columns, Prec::Atom));
        Ok(Value::Array(self.views_of_store(elem, store, hint, block)))
    }
}
