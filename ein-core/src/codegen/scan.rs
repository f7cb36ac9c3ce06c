//! Scans: every state written into an output column (SoA for tuple states). A scan with an
//! associative step (see the analysis's `ScanStep` and note [scan grouping] in `ir/scan.rs`)
//! whose value cannot fail, outside any loop, runs the runtime's three-phase parallel `scan`;
//! any other is one serial pass, which for an associative step keeps the same block grouping
//! (a running state and the block's own total), so both give the same bits.

use super::code::{Block, Code, Prec, Value};
use super::{has_array, internal, primitive, tree_at, Gen};
use crate::analysis::ScanStep;
use crate::ir::node;
use crate::ir::scan::{AccumulatorSide, StepOp};
use crate::ir::{Expr, ExprKind, NumberClass, ScalarType, Type};
use proc_macro2::{Ident, Span, TokenStream};
use quote::{quote, ToTokens};

/// How many values of a costly step a scan computes at a time (see `parallel_scan`): a divisor
/// of the runtime's `SCAN_BLOCK`, the grouping's blocks.
const SCAN_BLOCK: usize = 64;

impl<'p> Gen<'p> {
    /// A scan as an array value: its length and initial state, one buffer per column, the
    /// states written (in parallel or serially), then the arrays.
    pub(super) fn scan(&mut self, expr: &Expr, block: &mut Block, hint: Option<Ident>) -> syn::Result<Value> {
        let ExprKind::Scan(scan) = &expr.kind else {
            return Err(internal(expr.span, "not a scan"));
        };
        if has_array(&scan.init.ty) {
            return self.fold_states(scan, true, block, hint);
        }
        let Type::Array { elem, .. } = &expr.ty else {
            return Err(internal(expr.span, "a scan that is not an array"));
        };
        let (len, initial) = self.scan_start(scan, block)?;
        let buffer = self.names.fresh("buffer");
        let buffers = super::arrays::column_tree(elem, &mut |scalar| match scalar {
            ScalarType::Known(scalar) => {
                let ty = primitive(scalar);
                quote!(::ein::__private::Buffer::<#ty>::new(#len))
            }
            // rustc infers the element type from what is pushed.
            ScalarType::Param(_) => quote!(::ein::__private::Buffer::new(#len)),
        });
        block.push(quote!(let mut #buffer = #buffers;));
        let step = self.analysis.scan_step(scan.index).filter(|step| step.parallel && self.loop_depth == 0);
        match step {
            Some(step) => self.parallel_scan(scan, step, &buffer, &initial, block)?,
            None => {
                let outs = self.outs.clone();
                let (fill_block, ()) =
                    self.nested(true, |generator, fill_block| generator.scan_states(scan, &len, &initial, fill_block))?;
                let fill = fill_block.finish(None);
                // One row of `len` elements: one chunk, on the calling thread, in order.
                block.push(quote! {
                    ::ein::__private::fill_chunks(&mut #buffer, 1, #len, 1, 1, |_, _, #outs| { #fill });
                });
            }
        }
        let store = self.names.fresh("store");
        let arrays = tree_at(elem, &buffer.into_token_stream()).map(&mut |column| quote!(#column.into_array([#len])));
        block.push_let(store.clone(), Code::expr(arrays.tuple(), Prec::Atom));
        Ok(Value::Array(self.views_of_store(elem, store, hint, block)))
    }

    /// The scan's length (a checked `usize` local) and its initial state (a local), computed in
    /// the IR's order: the count first.
    pub(super) fn scan_start(&mut self, scan: &node::Scan, block: &mut Block) -> syn::Result<(Ident, Ident)> {
        let what = self.program.var(scan.index).name.clone();
        let len = self.size_usize(&scan.count, &what, block)?;
        let len_name = self.names.fresh(&format!("len_{what}"));
        block.push_let(len_name.clone(), len);
        let initial = self.scalar(&scan.init, block)?;
        let initial_name = self.names.fresh("initial");
        block.push_let(initial_name.clone(), initial);
        Ok((len_name, initial_name))
    }

    /// Writes the scan's `len` states into the current outs, in one serial pass from `initial`:
    /// the step as written, or for an associative step the grouping of note [scan grouping].
    pub(super) fn scan_states(
        &mut self,
        scan: &node::Scan,
        len: &Ident,
        initial: &Ident,
        block: &mut Block,
    ) -> syn::Result<()> {
        let outs = self.outs.clone();
        let acc_name = self.names.var(scan.acc).clone();
        let position = self.names.fresh("position");
        let slot = self.names.fresh("slot");
        let step = self.analysis.scan_step(scan.index).filter(|step| !self.exact_step(scan, step));
        let Some(step) = step else {
            // The step as written: `acc = body; push(acc)`.
            let (mut element, assigns) = self.nested(true, |generator, element| {
                generator.bind_index(scan.index, &position, element);
                generator.env.insert(scan.acc, Value::Plain(Code::name(&acc_name)));
                generator.fold_step(scan.acc, &acc_name, &scan.body, element)
            })?;
            element.push(quote!(::ein::__private::Push::push(#slot, #acc_name);));
            let element = element.finish(None);
            let binding =
                if assigns { quote!(let mut #acc_name = #initial;) } else { quote!(let #acc_name = #initial;) };
            let position_param = self.position_param(scan, &position);
            block.push(quote! {
                #binding
                ::ein::__private::Fill::fill(#outs, #len, |#position_param, #slot| { #element });
            });
            return Ok(());
        };
        // The running state from the block's offset, and the block's own total.
        let [offset, total, value] = ["offset", "total", "value"].map(|name| self.names.fresh(name));
        let (value_block, ()) = self.nested(true, |generator, value_block| {
            generator.bind_index(scan.index, &position, value_block);
            generator.step_value(step, &value, value_block)
        })?;
        let value_block = value_block.finish(None);
        let ty = self.scan_scalar(scan)?;
        let next_offset = self.combine_into(step, ty, &offset, &total)?;
        let grown = self.combine_into(step, ty, &total, &value)?;
        let running = self.combine_into(step, ty, &acc_name, &value)?;
        let combine_and_push = quote! {
            if #position % ::ein::__private::SCAN_BLOCK == 0 {
                if #position != 0 {
                    #next_offset
                    #acc_name = #offset;
                }
                #total = #value;
            } else {
                #grown
            }
            #running
            ::ein::__private::Push::push(#slot, #acc_name);
        };
        let states = if self.analysis.costly_step(&scan.body) {
            // A costly step's values a block at a time into a buffer (a loop LLVM vectorises),
            // then combined in order: the same values, in the same order (the combine cannot
            // fail, so a failing value still fails first).
            let [values, block_start, count, offset_in, slot_in] =
                ["values", "block_start", "count", "offset_in", "slot_in"].map(|name| self.names.fresh(name));
            quote! {
                let mut #values = [::core::default::Default::default(); #SCAN_BLOCK];
                let mut #block_start = 0usize;
                while #block_start < #len {
                    let #count = (#len - #block_start).min(#SCAN_BLOCK);
                    for (#offset_in, #slot_in) in #values[..#count].iter_mut().enumerate() {
                        let #position = #block_start + #offset_in;
                        #value_block
                        *#slot_in = #value;
                    }
                    ::ein::__private::Fill::fill(#outs, #count, |#offset_in, #slot| {
                        let (#position, #value) = (#block_start + #offset_in, #values[#offset_in]);
                        #combine_and_push
                    });
                    #block_start += #count;
                }
            }
        } else {
            quote! {
                ::ein::__private::Fill::fill(#outs, #len, |#position, #slot| {
                    #value_block
                    #combine_and_push
                });
            }
        };
        block.push(quote! {
            let mut #acc_name = #initial;
            let mut #offset = #initial;
            let mut #total = #initial;
            #states
        });
        Ok(())
    }

    /// `scan(&mut buffer, initial, |start, end| total, |start, end, offset, outs| rescan,
    /// |a, b| a ⊕ b)`: the runtime's three phases (see `ein-runtime/src/scan.rs`), the loops in
    /// closures of ours.
    fn parallel_scan(
        &mut self,
        scan: &node::Scan,
        step: &ScanStep<'p>,
        buffer: &Ident,
        initial: &Ident,
        block: &mut Block,
    ) -> syn::Result<()> {
        let ty = self.scan_scalar(scan)?;
        let names = ["start", "end", "position", "value", "total", "offset", "slot", "left", "right"];
        let [start, end, position, value, total, offset, slot, left, right] = names.map(|name| self.names.fresh(name));
        let outs = self.outs.clone();
        let acc_name = self.names.var(scan.acc).clone();
        let index = scan.index;
        let referenced = self.names.is_referenced(index);
        let position_param = self.position_param(scan, &position);

        // A costly step's values are computed a block at a time into a buffer (a loop LLVM
        // vectorises), then combined in order; otherwise each value as it is combined. The
        // same values, combined in the same order.
        let buffered = self.analysis.costly_step(&scan.body);
        let [values, block_start, len, offset_in, slot_in] =
            ["values", "block_start", "len", "offset_in", "slot_in"].map(|name| self.names.fresh(name));

        // Phase 1: a block's total, from its first value.
        let (first_block, ()) = self.nested(true, |generator, first| {
            if referenced {
                first.push(quote!(let #position = #start;));
            }
            generator.bind_index(index, &position, first);
            generator.step_value(step, &value, first)
        })?;
        let (total_block, ()) = self.nested(true, |generator, inner| {
            generator.bind_index(index, &position, inner);
            generator.step_value(step, &value, inner)
        })?;
        let grown = self.combine_into(step, ty, &total, &value)?;
        let (first, inner) = (first_block.finish(None), total_block.finish(None));
        let totals = if buffered {
            quote! {
                let mut #total = { #first #value };
                let mut #values = [::core::default::Default::default(); #SCAN_BLOCK];
                let mut #block_start = #start + 1;
                while #block_start < #end {
                    let #len = (#end - #block_start).min(#SCAN_BLOCK);
                    for (#offset_in, #slot_in) in #values[..#len].iter_mut().enumerate() {
                        let #position_param = #block_start + #offset_in;
                        #inner
                        *#slot_in = #value;
                    }
                    for &#value in &#values[..#len] {
                        #grown
                    }
                    #block_start += #len;
                }
                #total
            }
        } else {
            quote! {
                let mut #total = { #first #value };
                for #position_param in #start + 1..#end {
                    #inner
                    #grown
                }
                #total
            }
        };

        // Phase 3: a block rescanned from its offset.
        let running = self.combine_into(step, ty, &acc_name, &value)?;
        let rescan = if buffered {
            let (values_block, ()) = self.nested(true, |generator, values_block| {
                if referenced {
                    values_block.push(quote!(let #position = #block_start + #offset_in;));
                }
                generator.bind_index(index, &position, values_block);
                generator.step_value(step, &value, values_block)
            })?;
            let values_block = values_block.finish(None);
            let offset_pattern = if referenced { offset_in.to_token_stream() } else { quote!(_) };
            quote! {
                let mut #acc_name = #offset;
                let mut #values = [::core::default::Default::default(); #SCAN_BLOCK];
                let mut #block_start = #start;
                while #block_start < #end {
                    let #len = (#end - #block_start).min(#SCAN_BLOCK);
                    for (#offset_pattern, #slot_in) in #values[..#len].iter_mut().enumerate() {
                        #values_block
                        *#slot_in = #value;
                    }
                    ::ein::__private::Fill::fill(#outs, #len, |#offset_in, #slot| {
                        let #value = #values[#offset_in];
                        #running
                        ::ein::__private::Push::push(#slot, #acc_name);
                    });
                    #block_start += #len;
                }
            }
        } else {
            let (mut element, ()) = self.nested(true, |generator, element| {
                if referenced {
                    element.push(quote!(let #position = #start + #position;));
                }
                generator.bind_index(index, &position, element);
                generator.step_value(step, &value, element)
            })?;
            element.push(quote! {
                #running
                ::ein::__private::Push::push(#slot, #acc_name);
            });
            let element = element.finish(None);
            quote! {
                let mut #acc_name = #offset;
                ::ein::__private::Fill::fill(#outs, #end - #start, |#position_param, #slot| { #element });
            }
        };

        let mut free = crate::ir::visit::free_vars(&scan.body);
        free.remove(&scan.index);
        free.remove(&scan.acc);
        // Both closures evaluate the body: they read the same locals.
        let copies = self.local_copies(&free);
        let combined = self.combine(step, ty, &left, &right)?;
        block.push(quote! {
            ::ein::__private::scan(
                &mut #buffer,
                #initial,
                |#start, #end| { #copies #totals },
                |#start, #end, #offset, #outs| { #copies #rescan },
                |#left, #right| #combined,
            );
        });
        Ok(())
    }

    /// `let value = f(t);` after the step's `let`s.
    fn step_value(&mut self, step: &ScanStep<'p>, value: &Ident, block: &mut Block) -> syn::Result<()> {
        for (var, let_value) in &step.step.lets {
            self.bind_let(*var, let_value, block)?;
        }
        let code = self.scalar(step.step.value, block)?;
        block.push_let(value.clone(), code);
        Ok(())
    }

    /// The closure or loop parameter for the position: `_` when the scan's index is not read.
    fn position_param(&self, scan: &node::Scan, position: &Ident) -> TokenStream {
        if self.names.is_referenced(scan.index) {
            position.to_token_stream()
        } else {
            quote!(_)
        }
    }

    /// Whether the step's operation is exact (integers, booleans), so that grouping cannot
    /// change a state and the serial pass may run the step as written.
    fn exact_step(&self, scan: &node::Scan, _: &ScanStep<'p>) -> bool {
        match &scan.init.ty {
            Type::Scalar(ScalarType::Known(scalar)) => !scalar.is_float(),
            _ => false,
        }
    }

    /// The scalar type of an associative scan's state.
    fn scan_scalar(&self, scan: &node::Scan) -> syn::Result<ScalarType> {
        match &scan.init.ty {
            Type::Scalar(scalar) if !has_array(&scan.init.ty) => Ok(*scalar),
            other => Err(internal(scan.init.span, format!("an associative scan of {other:?}"))),
        }
    }

    /// `target = target ⊕ other;` as a statement. A float `+` or `*` is written `target += other`
    /// whichever side the step has the accumulator on (clippy's `assign_op_pattern` flags the
    /// long form, even when generated): IEEE addition and multiplication are commutative, bit
    /// for bit, so only the payload of a NaN made from two NaNs could tell the orders apart.
    fn combine_into(
        &self,
        step: &ScanStep<'p>,
        ty: ScalarType,
        target: &Ident,
        other: &Ident,
    ) -> syn::Result<TokenStream> {
        let float = match ty {
            ScalarType::Known(scalar) => scalar.is_float(),
            ScalarType::Param(index) => self.class(index, Span::call_site())? == NumberClass::Float,
        };
        // A type parameter has no `+=` (its bound is `ein::Float`): it gets `Num::add`.
        let known = float && matches!(ty, ScalarType::Known(_));
        Ok(match step.step.op {
            StepOp::Add if known => quote!(#target += #other;),
            StepOp::Mul if known => quote!(#target *= #other;),
            _ => {
                let combined = self.combine(step, ty, target, other)?;
                quote!(#target = #combined;)
            }
        })
    }

    /// `left ⊕ right`, the operands in the step's written order (the accumulator's side).
    fn combine(&self, step: &ScanStep<'p>, ty: ScalarType, left: &Ident, right: &Ident) -> syn::Result<TokenStream> {
        let (left, right) = match step.step.side {
            AccumulatorSide::Left => (left, right),
            AccumulatorSide::Right => (right, left),
        };
        let float = match ty {
            ScalarType::Known(scalar) => scalar.is_float(),
            ScalarType::Param(index) => self.class(index, Span::call_site())? == NumberClass::Float,
        };
        let method = |name: &str| {
            let name = Ident::new(name, Span::call_site());
            quote!(#left.#name(#right))
        };
        Ok(match (step.step.op, ty) {
            (StepOp::And, _) => quote!(#left && #right),
            (StepOp::Or, _) => quote!(#left || #right),
            (StepOp::Add, _) if float => quote!(#left + #right),
            (StepOp::Mul, _) if float => quote!(#left * #right),
            (StepOp::Add, ScalarType::Known(scalar)) if scalar.is_int() => method("wrapping_add"),
            (StepOp::Mul, ScalarType::Known(scalar)) if scalar.is_int() => method("wrapping_mul"),
            (StepOp::Add, ScalarType::Param(_)) => quote!(::ein::__private::Num::add(#left, #right)),
            (StepOp::Mul, ScalarType::Param(_)) => quote!(::ein::__private::Num::mul(#left, #right)),
            (StepOp::Max, _) => quote!(::ein::__private::Num::max(#left, #right)),
            (StepOp::Min, _) => quote!(::ein::__private::Num::min(#left, #right)),
            (op, ty) => return Err(internal(Span::call_site(), format!("a scan step {op:?} on {ty:?}"))),
        })
    }
}
