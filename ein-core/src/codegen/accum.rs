//! Accumulations: the initial array copied (or moved) into a buffer, then the runtime's
//! `accum` runs a closure of ours over groups of the outer loop's iterations (note [accum
//! grouping] in `ir/accum.rs`): the loops below it, and per iteration each update's
//! condition, indices and value computed in order, the indices checked against the target's
//! shape (an index out of range returns an error the runtime reports), the update applied.
//! An accum's history (`AccumValue`, only in derivatives) is the same loops run serially by the
//! runtime's `accum_history`, each update recording the element it finds before applying.

use super::code::{Block, Code, Prec, Value};
use super::reduce::names_a_variable;
use super::{internal, spelled, Gen, Stores};
use crate::ir::accum::{first_loop, uniform_op};
use crate::ir::node;
use crate::ir::{Expr, ExprKind, NumberClass, ScalarType, Type, UpdateOp};
use proc_macro2::{Ident, Literal, TokenStream};
use quote::{quote, ToTokens};

/// What the closure's code needs to apply an update.
struct Target {
    data: Ident,
    shape: Ident,
    rank: usize,
    elem: ScalarType,
    float: bool,
    /// Where updates are recorded instead of applied (the runtime's `AccumSink`), if they are.
    record: Option<Ident>,
    /// The distinct operators of the updates, numbered by position.
    distinct: Vec<UpdateOp>,
    /// How many low bits of a recorded key hold the operator's number.
    op_bits: u32,
    /// For a history: where the elements found go.
    history: Option<HistoryNames>,
    /// When the updates go to the runtime's four copies of the target (`in_copies`): the
    /// local holding the copies, and the name of the copy an update writes.
    copies: Option<(Ident, Ident)>,
}

/// The names a history's closure writes to, and its direction.
struct HistoryNames {
    /// The elements found, in the order the updates apply.
    found: Ident,
    /// The update loops' sizes.
    sizes: Ident,
    reversed: bool,
}

impl<'p> Gen<'p> {
    pub(super) fn accum(&mut self, expr: &Expr, block: &mut Block, hint: Option<Ident>) -> syn::Result<Value> {
        let ExprKind::Accum(accum) = &expr.kind else {
            return Err(internal(expr.span, "not an accum"));
        };
        if accum.value != node::AccumValue::Final {
            return self.accum_history(expr, accum, block, hint);
        }
        let (elem_type, target_name, mut target) = self.accum_target(accum, block)?;
        let (data, elem) = (target.data.clone(), target.elem);
        let [start, end, position] = ["start", "end", "position"].map(|name| self.names.fresh(name));

        // `let`s and checks before the first loop run once, before the groups.
        let mut current = &*accum.updates;
        loop {
            match &current.kind {
                ExprKind::Let(node::Let { var, value, body }) => {
                    self.bind_let(*var, value, block)?;
                    current = body;
                }
                ExprKind::Assert(node::Assert { checks, body }) => {
                    self.size_checks(checks, block)?;
                    current = body;
                }
                _ => break,
            }
        }
        let (outer, index, body) = match &current.kind {
            ExprKind::For(node::For { index, size, body }) => {
                let what = self.program.var(*index).name.clone();
                let size = self.size_usize(size, &what, block)?;
                let outer = self.names.fresh(&format!("len_{what}"));
                block.push_let(outer.clone(), size);
                (outer.into_token_stream(), Some(*index), &**body)
            }
            // No loop: the updates are applied once.
            _ => (quote!(1usize), None, current),
        };
        // Integer and boolean updates give the same result in any grouping.
        let exact = match elem {
            ScalarType::Known(scalar) => !scalar.is_float(),
            ScalarType::Param(param) => {
                matches!(self.class(param, expr.span)?, NumberClass::Int | NumberClass::Bool)
            }
        };
        let nested = first_loop(body).is_some();
        let partitioned = self.analysis.accum_partitioned(&accum.updates);
        // The distinct operators, numbered in order of appearance: a recorded update's key
        // holds its operator's number in its low `op_bits` bits.
        let mut distinct: Vec<UpdateOp> = Vec::new();
        for op in &accum.ops {
            if !distinct.contains(op) {
                distinct.push(*op);
            }
        }
        let op_bits = usize::BITS - (distinct.len().max(1) - 1).leading_zeros();
        let sink = self.names.fresh("sink");
        (target.distinct, target.op_bits) = (distinct, op_bits);
        // Cheap exact updates are written through the runtime's copies (serially, four
        // iterations at a time, into one array unless the runtime gives four). Every update is
        // inside the innermost loop (the checker's rule), which writes the copies in turn. Float
        // updates, whose order is fixed, measured no faster written so.
        let [copies, copy, stride] = ["copies", "copy", "stride"].map(|name| self.names.fresh(name));
        let in_copies = exact && self.analysis.accum_in_copies(&accum.updates);
        if in_copies {
            target.copies = Some((copies.clone(), copy.clone()));
        }
        let apply_closure = self.accum_closure(body, index, accum, &target, [&start, &end, &position])?;
        let (stride_param, copies_binding) = if in_copies {
            let shape = &target.shape;
            let binding = quote! {
                let #copies = ::ein::__private::accum_copies(
                    #data,
                    #shape.iter().product::<::core::primitive::usize>(),
                    #stride,
                );
            };
            (stride.to_token_stream(), binding)
        } else {
            (quote!(_), TokenStream::new())
        };
        target.copies = None;
        target.record = Some(sink.clone());
        let record_closure = self.accum_closure(body, index, accum, &target, [&start, &end, &position])?;
        let ty = spelled(&elem);
        let identity = match uniform_op(accum) {
            Some(op) => {
                let identity = identity(op, &ty);
                quote!(::core::option::Option::Some(#identity))
            }
            None => quote!(::core::option::Option::None),
        };
        let [op, left, right] = ["op", "left", "right"].map(|name| self.names.fresh(name));
        let combined: Vec<TokenStream> = target
            .distinct
            .iter()
            .map(|update| match update {
                UpdateOp::Add => quote!(::ein::__private::Num::add(#left, #right)),
                UpdateOp::Mul => quote!(::ein::__private::Num::mul(#left, #right)),
                UpdateOp::Or => quote!(#left | #right),
                UpdateOp::And => quote!(#left & #right),
            })
            .collect();
        let apply = match &combined[..] {
            [only] => quote!(|_: ::core::primitive::usize, #left: #ty, #right: #ty| #only),
            [first @ .., last] => {
                let numbers = (0..first.len()).map(Literal::usize_unsuffixed);
                quote! {
                    |#op: ::core::primitive::usize, #left: #ty, #right: #ty| match #op {
                        #(#numbers => #first,)*
                        _ => #last,
                    }
                }
            }
            [] => return Err(internal(expr.span, "an accum without updates")),
        };
        let op_bits = Literal::u32_suffixed(target.op_bits);
        let site = self.site(expr.span);
        let name = Literal::string(&accum.target);
        let result = self.names.fresh("accumulated");
        let call = quote! {
            ::ein::__private::accum(
                #target_name,
                #name,
                &#site,
                #outer,
                #identity,
                ::ein::__private::AccumPlan {
                    nested: #nested,
                    exact: #exact,
                    partitioned: #partitioned,
                    op_bits: #op_bits,
                    copies: #in_copies,
                },
                |#start: ::core::primitive::usize,
                 #end: ::core::primitive::usize,
                 #data: &mut [#ty],
                 #stride_param: ::core::primitive::usize|
                 -> ::core::result::Result<(), ::ein::__private::AccumError> {
                    #copies_binding
                    #apply_closure
                    ::core::result::Result::Ok(())
                },
                |#start: ::core::primitive::usize,
                 #end: ::core::primitive::usize,
                 #sink: &mut ::ein::__private::AccumSink<#ty>|
                 -> ::core::result::Result<(), ::ein::__private::AccumError> {
                    #record_closure
                    ::core::result::Result::Ok(())
                },
                #apply,
            )
        };
        block.push_let(result.clone(), Code::expr(call, Prec::Atom));
        Ok(Value::Array(self.views_of_store(&elem_type, result, hint, block)))
    }

    /// The body of one of the runtime's closures over outer iterations `start..end` (`names`:
    /// start, end, position): local copies of what it reads, then the loop, its updates
    /// applied to the data or recorded, as `target.record` says.
    fn accum_closure(
        &mut self,
        body: &Expr,
        index: Option<crate::ir::VarId>,
        accum: &node::Accum,
        target: &Target,
        [start, end, position]: [&Ident; 3],
    ) -> syn::Result<TokenStream> {
        // The update loop is versioned for contiguous inputs, as comprehensions are (a
        // histogram's byte reads then need no stride).
        let candidates = self.version_candidates();
        let (closure, ()) = self.versioning(|generator| {
            generator.nested(true, |generator, closure| {
                let (loop_block, ()) = generator.nested(true, |generator, loop_block| {
                    if let Some(index) = index {
                        generator.bind_index(index, position, loop_block);
                    }
                    generator.accum_nest(body, accum, target, loop_block, 1)
                })?;
                let loop_body = loop_block.finish(None);
                let referenced = index.is_some_and(|index| generator.names.is_referenced(index));
                let position = if referenced { position.to_token_stream() } else { quote!(_) };
                closure.push(match &target.copies {
                    // The innermost loop: its iterations write the copies in turn.
                    Some((copies, copy)) if first_loop(body).is_none() => quote! {
                        ::ein::__private::in_copies(#start, #end, #copies, |#position, #copy| {
                            #loop_body
                            ::core::result::Result::Ok(())
                        })?;
                    },
                    _ => quote!(for #position in #start..#end { #loop_body }),
                });
                Ok(())
            })
        })?;
        let inside = crate::ir::visit::free_vars(&accum.updates);
        let (closure, _) = self.versioned(&candidates, &inside, &accum.updates, closure.finish(None));
        let copies = self.local_copies(&inside);
        Ok(quote!(#copies #closure))
    }

    /// The loops, `let`s and checks below the outer loop (`level` loops around `expr`), then
    /// the updates.
    fn accum_nest(
        &mut self,
        expr: &Expr,
        accum: &node::Accum,
        target: &Target,
        block: &mut Block,
        level: usize,
    ) -> syn::Result<()> {
        match &expr.kind {
            ExprKind::Let(node::Let { var, value, body }) => {
                self.bind_let(*var, value, block)?;
                self.accum_nest(body, accum, target, block, level)
            }
            ExprKind::Assert(node::Assert { checks, body }) => {
                self.size_checks(checks, block)?;
                self.accum_nest(body, accum, target, block, level)
            }
            ExprKind::For(node::For { index, size, body }) => {
                let what = self.program.var(*index).name.clone();
                let end = self.size_end(size, &what, block)?;
                let index_name = self.names.var(*index).clone();
                let (loop_block, ()) = self.nested(true, |generator, loop_block| {
                    generator.env.insert(*index, Value::Plain(Code::name(&index_name)));
                    generator.accum_nest(body, accum, target, loop_block, level + 1)
                })?;
                let (end, loop_body) = (&end.tokens, loop_block.finish(None));
                let index_pattern = self.names.pattern(*index);
                let range = match &target.history {
                    Some(history) => {
                        // Every iteration meets the same size (sizes never depend on an index).
                        let (sizes, axis) = (&history.sizes, Literal::usize_unsuffixed(level));
                        block.push(quote!(#sizes[#axis] = (#end) as ::core::primitive::usize;));
                        if history.reversed {
                            quote!((0..#end).rev())
                        } else {
                            quote!(0..#end)
                        }
                    }
                    None => quote!(0..#end),
                };
                block.push(match &target.copies {
                    // The innermost loop: its iterations write the copies in turn.
                    Some((copies, copy)) if first_loop(body).is_none() => {
                        let position = self.names.fresh("position");
                        let (position_pattern, bind) = if self.names.is_referenced(*index) {
                            (position.to_token_stream(), quote!(let #index_name = #position as ::core::primitive::i64;))
                        } else {
                            (quote!(_), TokenStream::new())
                        };
                        quote! {
                            ::ein::__private::in_copies(
                                0,
                                (#end) as ::core::primitive::usize,
                                #copies,
                                |#position_pattern, #copy| {
                                    #bind
                                    #loop_body
                                    ::core::result::Result::Ok(())
                                },
                            )?;
                        }
                    }
                    _ => quote!(for #index_pattern in #range { #loop_body }),
                });
                Ok(())
            }
            _ => self.apply_updates(expr, accum, target, block),
        }
    }

    /// Each update's condition, indices and value, bound in order, then applied.
    fn apply_updates(
        &mut self,
        expr: &Expr,
        accum: &node::Accum,
        target: &Target,
        block: &mut Block,
    ) -> syn::Result<()> {
        let width = target.rank + 2;
        let count = accum.ops.len() * width;
        let mut fields: Vec<Code> = match &expr.kind {
            ExprKind::Tuple(items) => {
                let items: Vec<&Expr> = items.iter().collect();
                self.operands(&items, block)?
            }
            _ => {
                let code = self.scalar(expr, block)?;
                let name = self.names.fresh("updates");
                block.push_let(name.clone(), code);
                (0..count)
                    .map(|field| {
                        let field = syn::Index::from(field);
                        Code::expr(quote!(#name.#field), Prec::Atom)
                    })
                    .collect()
            }
        };
        if fields.len() != count {
            return Err(internal(expr.span, "an accum's update tuple has the wrong length"));
        }
        // Every field is evaluated, in order, whether or not its update applies.
        let mut locals = Vec::with_capacity(count);
        for (position, field) in fields.drain(..).enumerate() {
            let name = self.names.fresh(if position % width == 0 { "condition" } else { "update" });
            block.push_let(name.clone(), field);
            locals.push(name);
        }
        let (data, shape) = (&target.data, &target.shape);
        let mut updates: Vec<(&[Ident], &UpdateOp)> = locals.chunks(width).zip(&accum.ops).collect();
        if target.history.as_ref().is_some_and(|history| history.reversed) {
            updates.reverse();
        }
        for (group, op) in updates {
            let condition = &group[0];
            let value = &group[width - 1];
            let mut offset = TokenStream::new();
            let mut positions = Vec::new();
            for (axis, index) in group[1..width - 1].iter().enumerate() {
                let axis_literal = Literal::usize_unsuffixed(axis);
                let position = self.names.fresh("position");
                // A rank-1 target's length is its buffer's: checked against it, the write needs
                // no second bounds check.
                let size = if let (1, Some((_, copy))) = (target.rank, &target.copies) {
                    quote!(#copy.len())
                } else if target.rank == 1 && target.record.is_none() {
                    quote!(#data.len())
                } else {
                    quote!(#shape[#axis_literal])
                };
                positions.push(quote! {
                    let #position = ::ein::__private::accum_position(#index, #size, #axis_literal)?;
                });
                offset =
                    if axis == 0 { quote!(#position) } else { quote!((#offset) * #shape[#axis_literal] + #position) };
            }
            if let Some(sink) = &target.record {
                let number = target.distinct.iter().position(|distinct| distinct == op).unwrap_or(0);
                let key = if target.op_bits == 0 {
                    offset
                } else {
                    let (bits, number) = (Literal::u32_unsuffixed(target.op_bits), Literal::usize_unsuffixed(number));
                    quote!((#offset) << #bits | #number)
                };
                block.push(quote! {
                    if #condition {
                        #(#positions)*
                        #sink.push(#key, #value);
                    }
                });
                continue;
            }
            if let Some((_, copy)) = &target.copies {
                let cell = self.names.fresh("element");
                let current = quote!(#cell.get());
                let updated = match op {
                    UpdateOp::Add if target.float && matches!(target.elem, ScalarType::Known(_)) => {
                        quote!(#current + #value)
                    }
                    UpdateOp::Mul if target.float && matches!(target.elem, ScalarType::Known(_)) => {
                        quote!(#current * #value)
                    }
                    UpdateOp::Add => quote!(::ein::__private::Num::add(#current, #value)),
                    UpdateOp::Mul => quote!(::ein::__private::Num::mul(#current, #value)),
                    UpdateOp::Or => quote!(#current | #value),
                    UpdateOp::And => quote!(#current & #value),
                };
                block.push(quote! {
                    if #condition {
                        #(#positions)*
                        let #cell = &#copy[#offset];
                        #cell.set(#updated);
                    }
                });
                continue;
            }
            let slot = quote!(#data[#offset]);
            let apply = match op {
                UpdateOp::Add if target.float && matches!(target.elem, ScalarType::Known(_)) => {
                    quote!(#slot += #value;)
                }
                UpdateOp::Mul if target.float && matches!(target.elem, ScalarType::Known(_)) => {
                    quote!(#slot *= #value;)
                }
                UpdateOp::Add => quote!(#slot = ::ein::__private::Num::add(#slot, #value);),
                UpdateOp::Mul => quote!(#slot = ::ein::__private::Num::mul(#slot, #value);),
                UpdateOp::Or => quote!(#slot |= #value;),
                UpdateOp::And => quote!(#slot &= #value;),
            };
            let Some(history) = &target.history else {
                block.push(quote! {
                    if #condition {
                        #(#positions)*
                        #apply
                    }
                });
                continue;
            };
            let found = &history.found;
            let zero = match target.elem {
                ScalarType::Known(crate::ir::Scalar::Bool) => quote!(false),
                _ => {
                    let ty = spelled(&target.elem);
                    quote!(::ein::__private::zero(::core::marker::PhantomData::<#ty>))
                }
            };
            block.push(quote! {
                if #condition {
                    #(#positions)*
                    #found.push(#slot);
                    #apply
                } else {
                    #found.push(#zero);
                }
            });
        }
        Ok(())
    }

    /// An accum's initial array copied (or moved) into a buffer named `target`, its shape
    /// bound: the buffer's element type and name, and what applying updates to it needs (no
    /// recording, no history).
    fn accum_target(&mut self, accum: &node::Accum, block: &mut Block) -> syn::Result<(Type, Ident, Target)> {
        let span = accum.init.span;
        let (elem_type, elem, rank) = match &accum.init.ty {
            Type::Array { elem, rank } => match &**elem {
                Type::Scalar(scalar) => ((**elem).clone(), *scalar, *rank),
                _ => return Err(internal(span, "an accum of tuples")),
            },
            _ => return Err(internal(span, "an accum that is not an array")),
        };
        let float = match elem {
            ScalarType::Known(scalar) => scalar.is_float(),
            ScalarType::Param(index) => self.class(index, span)? == NumberClass::Float,
        };
        let initial = self.value(&accum.init, block)?;
        // A variable's store may still be read after the accum: only a computed one is moved.
        let stores = if names_a_variable(&accum.init) { Stores::Copy } else { Stores::MayMove };
        let initial = self.owned_as(&initial, &accum.init.ty, span, block, stores)?;
        let [target_name, shape, data] = ["target", "shape", "data"].map(|name| self.names.fresh(name));
        block.push_let(target_name.clone(), initial);
        block.push(quote!(let #shape = #target_name.shape();));
        let target = Target {
            data,
            shape,
            rank,
            elem,
            float,
            record: None,
            distinct: Vec::new(),
            op_bits: 0,
            history: None,
            copies: None,
        };
        Ok((elem_type, target_name, target))
    }

    /// An accum's history (`AccumValue::Before…`): its init copied into a buffer, then the
    /// runtime's `accum_history` runs the whole update nest serially (backwards for
    /// `BeforeReversed`), each update recording the element it finds.
    fn accum_history(
        &mut self,
        expr: &Expr,
        accum: &node::Accum,
        block: &mut Block,
        hint: Option<Ident>,
    ) -> syn::Result<Value> {
        let (elem_type, target_name, mut target) = self.accum_target(accum, block)?;
        let (data, elem) = (target.data.clone(), target.elem);
        let [found, sizes] = ["found", "sizes"].map(|name| self.names.fresh(name));
        let reversed = accum.value == node::AccumValue::BeforeReversed;
        target.history = Some(HistoryNames { found: found.clone(), sizes: sizes.clone(), reversed });
        let (body, ()) =
            self.nested(true, |generator, body| generator.accum_nest(&accum.updates, accum, &target, body, 0))?;
        let body = body.finish(None);
        let ty = spelled(&elem);
        let axes = Literal::usize_unsuffixed(expr.ty.rank());
        let updates = Literal::usize_unsuffixed(accum.ops.len());
        let site = self.site(expr.span);
        let name = Literal::string(&accum.target);
        let result = self.names.fresh("history");
        let call = quote! {
            ::ein::__private::accum_history::<#ty, _, #axes>(
                #target_name,
                #name,
                &#site,
                #reversed,
                #updates,
                |#data: &mut [#ty],
                 #found: &mut ::std::vec::Vec<#ty>,
                 #sizes: &mut [::core::primitive::usize]|
                 -> ::core::result::Result<(), ::ein::__private::AccumError> {
                    #body
                    ::core::result::Result::Ok(())
                },
            )
        };
        block.push_let(result.clone(), Code::expr(call, Prec::Atom));
        Ok(Value::Array(self.views_of_store(&elem_type, result, hint, block)))
    }
}

/// The value a group's private array starts from (note [accum grouping]): `-0.0` (an integer
/// 0) for `+=`, 1 for `*=`.
fn identity(op: UpdateOp, ty: &TokenStream) -> TokenStream {
    let marker = quote!(::core::marker::PhantomData::<#ty>);
    match op {
        UpdateOp::Add => quote!(::ein::__private::Num::neg(::ein::__private::zero(#marker))),
        UpdateOp::Mul => quote!(::ein::__private::one(#marker)),
        UpdateOp::Or => quote!(false),
        UpdateOp::And => quote!(true),
    }
}
