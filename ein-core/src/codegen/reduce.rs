//! Reductions and folds. A reduction inside a loop body (comprehension row, reduction or fold
//! body) is a serial `Accumulate::fold_range` (several independent accumulators for floats, so
//! that it vectorises without fast-math); one at the top level, producing a scalar, is the
//! runtime's deterministic parallel `reduce`, given a closure that folds one chunk (with
//! `fold_range`, or `arg_range` for argmax/argmin). `argmax`/`argmin` keep the first element
//! and replace it only on a strictly greater (smaller) value, so ties go to the first index
//! and a leading NaN wins, exactly as the serial semantics (`arg_range` compares in lanes and
//! gives that answer). A fold is a plain loop; an array
//! accumulator is an owned store, viewed afresh each iteration.

use super::code::{tuple_tokens, Block, Code, Prec, Store, Tree, Value};
use super::expr::scalar_type;
use super::{has_array, internal, primitive, tree_at, Gen, Stores};
use crate::analysis::{FixedPoint, Jam, JammedFold};
use crate::ir::node;
use crate::ir::visit;
use crate::ir::{BinaryOp, Bounds, Expr, ExprKind, NumberClass, ReduceOp, Scalar, ScalarType, Type, VarId};
use proc_macro2::{Ident, Span, TokenStream};
use quote::{quote, ToTokens};

/// How two partial results of a reduction combine: always a function item, never a closure.
/// A closure written in the AVX2+FMA copy of a function inherits its target features, and
/// the runtime's out-of-line lane combine (`combine_lanes`), compiled without them, could
/// then not inline it: a call per combine, 3–5× slower on short reductions. A function item
/// from `core` or the runtime has no target features and inlines anywhere.
enum Step {
    /// `path(a, b)`
    Path(TokenStream),
    /// `a.name(b)` on a concrete integer type.
    Method(Scalar, &'static str),
}

impl Step {
    /// The combining function, for `fold_range` and `reduce`.
    fn function(&self) -> TokenStream {
        match self {
            Step::Path(path) => path.clone(),
            Step::Method(scalar, name) => {
                let (ty, name) = (primitive(*scalar), Ident::new(name, Span::call_site()));
                quote!(#ty::#name)
            }
        }
    }
}

/// How many elements of a comprehension a [`Jam`] computes side by side: eight lanes of f32
/// (one AVX2 register), two registers of f64.
const JAM_WIDTH: usize = 8;

/// How many elements' folds run side by side first ([`Gen::jammed_folds`]): enough
/// independent chains to hide each step's latency (four AVX2 registers of f64 per scalar of
/// the state, eight of f32), few enough that the states stay in L1.
pub(super) const FOLD_JAM_WIDE: usize = 32;

/// The bytes of each accumulator of a comprehension's [`Jam`] of short reductions in its wide
/// blocks (before those of [`JAM_WIDTH`]): four AVX2 registers, so each step's loop overhead
/// and broadcast weight serve 32 f32 elements.
const JAM_PLAIN_BYTES: usize = 128;

/// How many a [`Jam`] whose innermost reduction is long (grouped in lanes) computes side by
/// side after its widest blocks ([`JAM_WIDE_BYTES`]): each step of that reduction then reads a
/// run of this many consecutive elements of a row (256 bytes of f32), where [`JAM_WIDTH`] would
/// read half a cache line per row — a column sum `for j { sum i { a[i, j] } }` walks down the
/// rows, and eight columns at a time it ran 4× slower than a row-by-row hand loop. A multiple
/// of [`JAM_WIDTH`].
const JAM_WIDE: usize = 64;

/// The bytes of a row each step of the widest blocks of such a [`Jam`] reads: 256 f32 elements
/// (128 f64). A sum over a middle axis, `for i, k { sum j { a[i, j, k] } }` of 256³ f32, took
/// 2.2× a hand loop's time in blocks of [`JAM_WIDE`] and 1.0–1.2× in blocks of 256, whose
/// lanes (16 KiB) still fit the L1 cache.
const JAM_WIDE_BYTES: usize = 1024;

/// The most elements of any wide block (of f32), which a rank-1 comprehension's chunk of rows
/// should hold when there are enough.
pub(super) const JAM_WIDEST: usize = JAM_WIDE_BYTES / 4;

/// How many steps ahead a wide block of side-by-side sums asks for the run of a row it will
/// read ([`Gen::jam_prefetches`]). Column means of 4096 × 2048 f32 on 2 threads, written out
/// by hand in this shape: 1.8 ms without hints, 0.78–0.90 ms 8 or 16 steps ahead (0.48–0.65
/// ms for a loop streaming whole rows, which would round differently).
const PREFETCH_AHEAD: usize = 8;

/// One way to run a [`Jam`]'s nest side by side (see [`Gen::jam_step`]): its steps, valid (the
/// same bits as one iteration at a time) where `condition` holds (always, if there is none),
/// each for blocks of as many iterations as its width says, widest first (the iterations a
/// wide block leaves go to the narrower ones).
struct JamVariant {
    condition: Option<TokenStream>,
    steps: Vec<(usize, TokenStream)>,
}

impl JamVariant {
    /// The variants' loops (each made by `loop_of` from a width and its step; a variant's
    /// loops one after the other), the first variant whose condition holds taken:
    /// `if a { .. } else if b { .. } else { .. }`.
    fn choose(
        variants: &[JamVariant],
        loop_of: impl Fn(&proc_macro2::Literal, &TokenStream) -> TokenStream,
    ) -> TokenStream {
        let branches: Vec<TokenStream> = variants
            .iter()
            .map(|JamVariant { condition, steps }| {
                let loops =
                    steps.iter().map(|(width, step)| loop_of(&proc_macro2::Literal::usize_unsuffixed(*width), step));
                let body = quote!(#(#loops)*);
                match condition {
                    Some(condition) => quote!(if #condition { #body }),
                    None => quote!({ #body }),
                }
            })
            .collect();
        quote!(#(#branches)else*)
    }
}

/// One reduction of a [`Jam`]'s nest for a block of iterations side by side ([`Gen::jam_step`]):
/// `acc` holds its result for each, `position` is its index, `count` its length.
struct JamLevel {
    acc: Ident,
    position: Ident,
    count: TokenStream,
    rule: LevelRule,
}

/// How a [`JamLevel`] takes its steps.
enum LevelRule {
    /// A fold from `identity` by `combine`; `accumulate` is the element type's `Accumulate`.
    Fold { identity: TokenStream, combine: TokenStream, accumulate: TokenStream },
    /// An `argmax` (`greatest`) or `argmin`, the nest's outermost reduction, with one
    /// iteration's rule: the first step's `value` is the `best`, then a value replaces it only
    /// when strictly `better` (ties to the first, a leading NaN kept); `acc` holds the best's
    /// position. `empty` panics for an empty range.
    Arg { best: Ident, value: Ident, better: Ident, value_ty: TokenStream, greatest: bool, empty: TokenStream },
}

impl JamLevel {
    /// The level's accumulators for `width` iterations, before its first step.
    fn start(&self, width: &proc_macro2::Literal) -> TokenStream {
        let (acc, count) = (&self.acc, &self.count);
        match &self.rule {
            LevelRule::Fold { identity, .. } => quote!(let mut #acc = [#identity; #width];),
            LevelRule::Arg { best, value_ty, empty, .. } => quote! {
                if #count == 0 {
                    #empty;
                }
                let mut #best = [<#value_ty as ::core::default::Default>::default(); #width];
                let mut #acc = [0usize; #width];
            },
        }
    }

    /// The level's step for iteration `lane`, whose value is `value`.
    fn take(&self, lane: &Ident, value: TokenStream) -> TokenStream {
        let acc = &self.acc;
        match &self.rule {
            LevelRule::Fold { combine, .. } => quote!(#acc[#lane] = #combine(#acc[#lane], #value);),
            LevelRule::Arg { best, value: new, better, greatest, .. } => {
                let (position, beats) = (&self.position, if *greatest { quote!(>) } else { quote!(<) });
                // Selects, not branches: a compare across the lanes.
                quote! {
                    let #new = #value;
                    let #better = (#position == 0) | (#new #beats #best[#lane]);
                    #best[#lane] = if #better { #new } else { #best[#lane] };
                    #acc[#lane] = if #better { #position } else { #acc[#lane] };
                }
            }
        }
    }
}

impl<'p> Gen<'p> {
    /// A reduction; `hint` names the local holding its result, if one is needed.
    pub(super) fn reduce(&mut self, expr: &Expr, block: &mut Block, hint: Option<Ident>) -> syn::Result<Code> {
        let ExprKind::Reduce(node::Reduce { op, index, size, body }) = &expr.kind else {
            return Err(internal(expr.span, "not a reduction"));
        };
        if let Type::Tuple { .. } = &body.ty {
            // `sum`/`prod`/`max`/`min` of tuples and records (the checker allows no other).
            return self.component_reduce(*op, *index, size, body, block, hint);
        }
        let ty = scalar_type(&body.ty, body.span)?;
        match (op, self.loop_depth > 0) {
            (ReduceOp::ArgMax | ReduceOp::ArgMin, true) => {
                self.serial_arg_reduce(expr, *op, *index, size, body, block, hint)
            }
            (ReduceOp::ArgMax | ReduceOp::ArgMin, false) => {
                self.parallel_arg_reduce(expr, *op, *index, size, body, block, hint)
            }
            (_, true) => self.serial_reduce(*op, *index, size, body, ty, block, hint),
            (_, false) => self.parallel_reduce(*op, *index, size, body, ty, block),
        }
    }

    /// The value an empty reduction gives.
    fn identity(&mut self, op: ReduceOp, ty: ScalarType, span: Span) -> syn::Result<Code> {
        let constant = |name: &str, scalar: Scalar| {
            let (ty, name) = (primitive(scalar), Ident::new(name, Span::call_site()));
            Code::literal(quote!(#ty::#name), Prec::Atom)
        };
        let literal = |tokens: TokenStream| Code::literal(tokens, Prec::Atom);
        Ok(match (op, ty) {
            (ReduceOp::All, _) => literal(quote!(true)),
            (ReduceOp::Any, _) => literal(quote!(false)),
            (ReduceOp::Sum | ReduceOp::Prod, ScalarType::Known(scalar)) => {
                let one = op == ReduceOp::Prod;
                match scalar {
                    Scalar::F32 => literal(if one { quote!(1.0f32) } else { quote!(0.0f32) }),
                    Scalar::F64 => literal(if one { quote!(1.0f64) } else { quote!(0.0f64) }),
                    Scalar::Bool => return Err(internal(span, format!("`{}` over booleans", op.name()))),
                    int => {
                        let value = u8::from(one);
                        let tokens: TokenStream = format!("{value}{}", int.name())
                            .parse()
                            .map_err(|_| internal(span, format!("a literal of type {int}")))?;
                        literal(tokens)
                    }
                }
            }
            (ReduceOp::Max, ScalarType::Known(Scalar::Bool)) => literal(quote!(false)),
            (ReduceOp::Min, ScalarType::Known(Scalar::Bool)) => literal(quote!(true)),
            (ReduceOp::Max, ScalarType::Known(scalar)) if scalar.is_float() => constant("NEG_INFINITY", scalar),
            (ReduceOp::Min, ScalarType::Known(scalar)) if scalar.is_float() => constant("INFINITY", scalar),
            (ReduceOp::Max, ScalarType::Known(scalar)) => constant("MIN", scalar),
            (ReduceOp::Min, ScalarType::Known(scalar)) => constant("MAX", scalar),
            (ReduceOp::ArgMax | ReduceOp::ArgMin, _) => {
                return Err(internal(span, "argmax/argmin have no identity"));
            }
            (_, ScalarType::Param(param)) => {
                let function = match op {
                    ReduceOp::Sum => "zero",
                    ReduceOp::Prod => "one",
                    ReduceOp::Max => "lowest",
                    _ => "highest",
                };
                let function = Ident::new(function, Span::call_site());
                let marker = self.marker(param, span)?;
                Code::expr(quote!(::ein::__private::#function(#marker)), Prec::Atom)
            }
        })
    }

    /// How partial results of `op` over `ty` combine.
    fn step(&self, op: ReduceOp, ty: ScalarType, span: Span) -> syn::Result<Step> {
        let num = |name: &str| {
            let name = Ident::new(name, Span::call_site());
            Step::Path(quote!(::ein::__private::Num::#name))
        };
        Ok(match (op, ty) {
            // Both sides are values already: `&`/`|` on them is `&&`/`||`.
            (ReduceOp::All, _) => Step::Path(quote!(::core::ops::BitAnd::bitand)),
            (ReduceOp::Any, _) => Step::Path(quote!(::core::ops::BitOr::bitor)),
            (ReduceOp::Sum, ScalarType::Known(scalar)) if scalar.is_float() => {
                Step::Path(quote!(::core::ops::Add::add))
            }
            (ReduceOp::Prod, ScalarType::Known(scalar)) if scalar.is_float() => {
                Step::Path(quote!(::core::ops::Mul::mul))
            }
            (ReduceOp::Sum, ScalarType::Known(scalar)) if scalar.is_int() => Step::Method(scalar, "wrapping_add"),
            (ReduceOp::Prod, ScalarType::Known(scalar)) if scalar.is_int() => Step::Method(scalar, "wrapping_mul"),
            (ReduceOp::Max | ReduceOp::Min, ScalarType::Known(scalar)) if scalar.is_float() => {
                let (ty, name) = (primitive(scalar), Ident::new(op.name(), Span::call_site()));
                Step::Path(quote!(#ty::#name))
            }
            (ReduceOp::Max, ScalarType::Known(_)) => Step::Path(quote!(::core::cmp::Ord::max)),
            (ReduceOp::Min, ScalarType::Known(_)) => Step::Path(quote!(::core::cmp::Ord::min)),
            (ReduceOp::Sum, ScalarType::Param(_)) => num("add"),
            (ReduceOp::Prod, ScalarType::Param(_)) => num("mul"),
            (ReduceOp::Max, ScalarType::Param(_)) => num("max"),
            (ReduceOp::Min, ScalarType::Param(_)) => num("min"),
            _ => return Err(internal(span, format!("`{}` over {ty:?}", op.name()))),
        })
    }

    /// Binds a loop index (`let k = position as i64;` when read) and records its value.
    pub(super) fn bind_index(&mut self, index: VarId, position: &Ident, block: &mut Block) -> Ident {
        let name = self.names.var(index).clone();
        if self.names.is_referenced(index) {
            block.push(quote!(let #name = #position as ::core::primitive::i64;));
        }
        self.env.insert(index, Value::Plain(Code::name(&name)));
        name
    }

    /// `|position| { let k = position as i64; body }`: the closure giving a reduction's value
    /// at a position of its index, for the runtime's `fold_range` and `arg_range`.
    fn value_closure(&mut self, index: VarId, body: &Expr) -> syn::Result<TokenStream> {
        let position = self.names.fresh("position");
        let (value_block, value) = self.nested(true, |generator, value_block| {
            generator.bind_index(index, &position, value_block);
            generator.scalar(body, value_block)
        })?;
        let position_param = if self.names.is_referenced(index) { position.to_token_stream() } else { quote!(_) };
        let value_body = value_block.finish(Some(&value));
        Ok(quote!(|#position_param| { #value_body }))
    }

    /// The runtime's fold of a reduction whose step is `body`: `fold_range`, or for a costly
    /// step `fold_range_buffered` (the same bits; see `Analysis::costly_step`).
    fn fold_function(&self, body: &Expr) -> TokenStream {
        if self.analysis.costly_step(body) {
            quote!(::ein::__private::Accumulate::fold_range_buffered)
        } else {
            quote!(::ein::__private::Accumulate::fold_range)
        }
    }

    /// `let acc = Accumulate::fold_range(n, identity, op, |position| body)`: in order, with
    /// several independent accumulators for floats (the runtime documents the grouping).
    #[allow(clippy::too_many_arguments)]
    fn serial_reduce(
        &mut self,
        op: ReduceOp,
        index: VarId,
        size: &Expr,
        body: &Expr,
        ty: ScalarType,
        block: &mut Block,
        hint: Option<Ident>,
    ) -> syn::Result<Code> {
        let what = self.program.var(index).name.clone();
        let count = self.size_usize(size, &what, block)?;
        let identity = self.identity(op, ty, body.span)?;
        let step = self.step(op, ty, body.span)?;
        let acc = hint.unwrap_or_else(|| self.names.fresh(&format!("{}_{what}", op.name())));
        let combine = step.function();
        let identity = &identity.tokens;
        let fold = self.fold_function(body);
        let reads = self.uncovered(self.analysis.interior_reads(index), body);
        let shifts = if reads.is_empty() { None } else { self.read_shifts(&reads, body.span, block)? };
        let tokens = match shifts {
            None => {
                let (count, value) = (&count.tokens, self.value_closure(index, body)?);
                quote!(#fold(#count, #identity, #combine, #value))
            }
            // Clamped reads that stay in range wherever the whole range does (`vals[s + k]`,
            // a CSR row): tested once, the fold runs without clamping them when they do.
            // Either way it is the same fold of the same values, so the same bits.
            Some(shifts) => {
                let (count_name, low, high) =
                    (self.names.fresh("count"), self.names.fresh("low"), self.names.fresh("high"));
                block.push_let(count_name.clone(), count);
                block.push(quote! {
                    let (#low, #high) = ::ein::__private::interior(0, #count_name, &[#(#shifts),*]);
                });
                let clamped = self.value_closure(index, body)?;
                let outer = self.interior.len();
                self.interior.extend(reads);
                let unclamped = self.value_closure(index, body);
                self.interior.truncate(outer);
                let unclamped = unclamped?;
                quote! {
                    if #low == 0 && #high == #count_name {
                        #fold(#count_name, #identity, #combine, #unclamped)
                    } else {
                        #fold(#count_name, #identity, #combine, #clamped)
                    }
                }
            }
        };
        block.push_let(acc.clone(), Code::expr(tokens, Prec::Atom));
        Ok(Code::name(&acc))
    }

    /// A reduction of tuples or records, component by component, in one pass over the index:
    /// the body is computed once per step and each scalar leaf is fed to its own
    /// `ein::__private::Lanes`, which groups it exactly as a scalar reduction of that leaf over
    /// the same range (so each component has the bits of the scalar reduction of it alone).
    /// In a loop the whole range is one fold; at the top level, the runtime's parallel `reduce`
    /// over the same fixed chunks as a scalar reduction, chunk results combined component-wise.
    fn component_reduce(
        &mut self,
        op: ReduceOp,
        index: VarId,
        size: &Expr,
        body: &Expr,
        block: &mut Block,
        hint: Option<Ident>,
    ) -> syn::Result<Code> {
        let what = self.program.var(index).name.clone();
        let count = self.size_usize(size, &what, block)?;
        let mut leaves = Vec::new();
        scalar_leaves(&body.ty, &mut Vec::new(), &mut leaves);
        let mut components = Vec::new();
        for (path, ty) in &leaves {
            let identity = self.identity(op, *ty, body.span)?.tokens;
            let combine = self.step(op, *ty, body.span)?.function();
            let fields: Vec<syn::Index> = path.iter().map(|&field| syn::Index::from(field)).collect();
            components.push((self.names.fresh(&format!("{}_{what}", op.name())), identity, combine, fields));
        }
        let parallel = self.loop_depth == 0;
        let position = self.names.fresh("position");
        let candidates = if parallel { self.version_candidates() } else { Vec::new() };
        let generate = |generator: &mut Self| {
            generator.nested(true, |generator, value_block| {
                generator.bind_index(index, &position, value_block);
                generator.scalar(body, value_block)
            })
        };
        let (value_block, value) = if parallel { self.versioning(generate)? } else { generate(self)? };
        let value_body = value_block.finish(Some(&value));
        let names = ["value_at", "value", "count", "blocks_end", "block_start", "lane", "step", "start", "end"];
        let [value_at, value, steps, blocks_end, block_start, lane, step, start, end] =
            names.map(|name| self.names.fresh(name));
        let referenced = self.names.is_referenced(index);
        let value_function = match (parallel, referenced) {
            (true, true) => quote! {
                |#step: ::core::primitive::usize| {
                    let #position = #start + #step;
                    #value_body
                }
            },
            (false, true) => quote!(|#position: ::core::primitive::usize| { #value_body }),
            (_, false) => quote!(|_: ::core::primitive::usize| { #value_body }),
        };
        let accumulators: Vec<&Ident> = components.iter().map(|(name, ..)| name).collect();
        let identities = components.iter().map(|(_, identity, ..)| identity);
        let feed = |method: TokenStream, at: &Ident| {
            let calls = components
                .iter()
                .map(|(name, _, combine, fields)| quote!(#name.#method(#at, #value #(.#fields)*, #combine);));
            quote!(#(#calls)*)
        };
        let (feed_lanes, feed_in_order) = (feed(quote!(lane), &lane), feed(quote!(push), &step));
        let finished: Vec<TokenStream> =
            components.iter().map(|(name, _, combine, _)| quote!(#name.finish(#combine))).collect();
        let result = rebuild_tuple(&body.ty, &mut finished.into_iter());
        let range = if parallel { quote!(#end - #start) } else { count.tokens.clone() };
        // The steps below `blocks_end` go to the lanes a block at a time, the others in order.
        // A costly step is computed at one call site, a block at a time into a buffer (see
        // `Analysis::costly_step`); the values and their grouping are the same.
        let feed_steps = if self.analysis.costly_step(body) {
            let [values, len, offset] = ["values", "len", "offset"].map(|name| self.names.fresh(name));
            quote! {
                let mut #values = [::core::default::Default::default(); ::ein::__private::LANE_BLOCK];
                while #block_start < #steps {
                    let #len = ::ein::__private::LANE_BLOCK.min(#steps - #block_start);
                    for (#offset, #value) in #values[..#len].iter_mut().enumerate() {
                        *#value = #value_at(#block_start + #offset);
                    }
                    if #block_start < #blocks_end {
                        for (#lane, #value) in #values.into_iter().enumerate() {
                            #feed_lanes
                        }
                    } else {
                        for (#offset, #value) in #values[..#len].iter().copied().enumerate() {
                            let #step = #block_start + #offset;
                            #feed_in_order
                        }
                    }
                    #block_start += #len;
                }
            }
        } else {
            quote! {
                while #block_start < #blocks_end {
                    for #lane in 0..::ein::__private::LANE_BLOCK {
                        let #value = #value_at(#block_start + #lane);
                        #feed_lanes
                    }
                    #block_start += ::ein::__private::LANE_BLOCK;
                }
                for #step in #blocks_end..#steps {
                    let #value = #value_at(#step);
                    #feed_in_order
                }
            }
        };
        let fold = quote! {{
            let #steps = #range;
            #(let mut #accumulators = ::ein::__private::Lanes::new(#steps, #identities);)*
            let #value_at = #value_function;
            let #blocks_end = ::ein::__private::lane_blocks_end(#steps, &[#(#accumulators.block_limit()),*]);
            let mut #block_start = 0usize;
            #feed_steps
            #result
        }};
        let acc = hint.unwrap_or_else(|| self.names.fresh(&format!("{}_{what}", op.name())));
        if !parallel {
            block.push_let(acc.clone(), Code::expr(fold, Prec::Atom));
            return Ok(Code::name(&acc));
        }
        let [left, right] = ["left", "right"].map(|name| self.names.fresh(name));
        let combined: Vec<TokenStream> = components
            .iter()
            .map(|(_, _, combine, fields)| quote!(#combine(#left #(.#fields)*, #right #(.#fields)*)))
            .collect();
        let combined = rebuild_tuple(&body.ty, &mut combined.into_iter());
        let mut free = crate::ir::visit::free_vars(body);
        free.remove(&index);
        let copies = self.local_copies(&free);
        let count = &count.tokens;
        let call = quote! {
            ::ein::__private::reduce(#count, |#start, #end| { #copies #fold }, |#left, #right| #combined)
        };
        let (tokens, versioned) = self.versioned(&candidates, &free, body, call);
        let code = if versioned {
            Code { block_start: true, ..Code::expr(tokens, Prec::Block) }
        } else {
            Code::expr(tokens, Prec::Atom)
        };
        block.push_let(acc.clone(), Code { has_unsafe: true, ..code.panics(true) });
        Ok(Code::name(&acc))
    }

    /// The leading blocks of [`FOLD_JAM_WIDE`], then [`JAM_WIDTH`], elements of a
    /// comprehension's run of `count` elements from `offset` whose element `body` computes
    /// `fold` ([`crate::analysis::Analysis::jammed_fold`]), the elements' folds side by side:
    /// each scalar of the state one array across the block, every element's initial value,
    /// then each step for every element before the next step (independent chains the CPU
    /// overlaps and LLVM vectorises, where one fold alone waits on each step's latency), then
    /// the rest of each element, pushed in order. Returns the local holding the number of
    /// elements written.
    pub(super) fn jammed_folds(
        &mut self,
        index: VarId,
        jammed: &JammedFold<'_>,
        body: &Expr,
        count: &TokenStream,
        offset: &Option<TokenStream>,
        block: &mut Block,
    ) -> syn::Result<Ident> {
        let fold = jammed.fold;
        let exit = self.analysis.fixed_point(fold.index);
        let [done, lane, slot, stopped, resume] =
            ["jammed", "lane", "slot", "stopped", "resume"].map(|name| self.names.fresh(name));
        let at = match offset {
            Some(offset) => quote!(#offset + #done + #lane),
            None => quote!(#done + #lane),
        };
        // The count is checked in each block, as each element checks it: a comprehension
        // with no elements (an empty row) checks nothing.
        let what = self.program.var(fold.index).name.clone();
        let (count_block, end) =
            self.nested(true, |generator, count_block| generator.size_end(&fold.count, &what, count_block))?;
        let end = count_block.finish(Some(&end));
        let steps = self.names.fresh(&format!("count_{what}"));
        let (element_name, step_name, acc_name) =
            (self.names.var(index).clone(), self.names.var(fold.index).clone(), self.names.var(fold.acc).clone());
        let mut leaves = Vec::new();
        scalar_leaves(&fold.init.ty, &mut Vec::new(), &mut leaves);
        let states: Vec<Ident> = leaves.iter().map(|_| self.names.fresh(&format!("{acc_name}_lanes"))).collect();
        let fields: Vec<Vec<syn::Index>> =
            leaves.iter().map(|(path, _)| path.iter().map(|&field| syn::Index::from(field)).collect()).collect();
        let state_at_lane = rebuild_tuple(&fold.init.ty, &mut states.iter().map(|state| quote!(#state[#lane])));
        let value = self.names.fresh("value");
        let store = quote!(#(#states[#lane] = #value #(.#fields)*;)*);
        // `let i = …` where the code reads the element's index.
        let bind_element = |generator: &mut Self, reads: bool, code: &mut Block| {
            if reads {
                code.push(quote!(let #element_name = (#at) as ::core::primitive::i64;));
            }
            generator.env.insert(index, Value::Plain(Code::name(&element_name)));
        };
        // The element's `let`s before the fold that its initial value or step read (and those
        // they read), computed with the initial value; those the step reads are kept for
        // each element in arrays beside the state's.
        let mut needed = visit::free_vars(&fold.init);
        needed.extend(jammed.stored.iter().copied());
        let mut prologue = Vec::new();
        for &(var, value) in jammed.prologue.iter().rev() {
            if needed.contains(&var) {
                needed.extend(visit::free_vars(value));
                prologue.push((var, value));
            }
        }
        prologue.reverse();
        let mut kept = Vec::new();
        for &(var, value) in prologue.iter().filter(|(var, _)| jammed.stored.contains(var)) {
            let mut leaves = Vec::new();
            scalar_leaves(&value.ty, &mut Vec::new(), &mut leaves);
            let name = self.names.var(var).clone();
            let arrays: Vec<Ident> = leaves.iter().map(|_| self.names.fresh(&format!("{name}_lanes"))).collect();
            let paths: Vec<Vec<syn::Index>> =
                leaves.iter().map(|(path, _)| path.iter().map(|&field| syn::Index::from(field)).collect()).collect();
            kept.push((var, value, name, arrays, paths));
        }
        let reads_index =
            visit::mentions(&fold.init, index) || prologue.iter().any(|(_, value)| visit::mentions(value, index));
        let (init_block, initial) = self.nested(true, |generator, init_block| {
            bind_element(generator, reads_index, init_block);
            for &(var, value) in &prologue {
                generator.bind_let(var, value, init_block)?;
            }
            for (_, _, name, arrays, paths) in &kept {
                init_block.push(quote!(#(#arrays[#lane] = #name #(.#paths)*;)*));
            }
            generator.scalar(&fold.init, init_block)
        })?;
        let init_tokens = init_block.finish(Some(&initial));
        let (step_block, next) = self.nested(true, |generator, step_block| {
            bind_element(generator, visit::mentions(&fold.body, index), step_block);
            for (var, value, name, arrays, _) in &kept {
                if visit::mentions(&fold.body, *var) {
                    let rebuilt = rebuild_tuple(&value.ty, &mut arrays.iter().map(|array| quote!(#array[#lane])));
                    step_block.push(quote!(let #name = #rebuilt;));
                }
                generator.env.insert(*var, Value::Plain(Code::name(name)));
            }
            if visit::mentions(&fold.body, fold.acc) {
                step_block.push(quote!(let #acc_name = #state_at_lane;));
            }
            generator.env.insert(fold.index, Value::Plain(Code::name(&step_name)));
            generator.env.insert(fold.acc, Value::Plain(Code::name(&acc_name)));
            let Some(exit) = exit else { return generator.scalar(&fold.body, step_block) };
            // A fold that stops at a fixed point: each element keeps its state from the step
            // its condition says so (as alone, where every later step would keep it too); the
            // step counts the elements stopped.
            let stops = generator.names.fresh("stops");
            let condition = generator.fixed_point_stops(exit, step_block)?;
            step_block.push_let(stops.clone(), condition);
            step_block.push(quote!(#stopped += ::core::primitive::usize::from(#stops);));
            let next = generator.scalar(exit.next, step_block)?;
            let next = &next.tokens;
            Ok(Code::expr(quote!(if #stops { #acc_name } else { #next }), Prec::Block))
        })?;
        let step_tokens = step_block.finish(Some(&next));
        let step_param = if visit::mentions(&fold.body, fold.index) { step_name.to_token_stream() } else { quote!(_) };
        let (value_block, element) = self.nested(true, |generator, value_block| {
            bind_element(generator, jammed.epilogue_reads_index, value_block);
            let result = Code::expr(state_at_lane.clone(), Prec::Atom);
            let outer = generator.jammed.replace((jammed.root.id, result));
            let element = generator.scalar(body, value_block);
            generator.jammed = outer;
            element
        })?;
        let element = value_block.finish(Some(&element));
        let kept_arrays: Vec<&Ident> = kept.iter().flat_map(|(_, _, _, arrays, _)| arrays).collect();
        let outs = self.outs.clone();
        let widths = [FOLD_JAM_WIDE, JAM_WIDTH].map(proc_macro2::Literal::usize_unsuffixed);
        let loops = widths.iter().map(|width| {
            // With a fixed point, the block goes on side by side while more than a quarter of
            // its elements run; then each element still running finishes alone from the step
            // reached (a stopped one takes one step that keeps its state): a block with one
            // slow element costs about what one element at a time does.
            let (start_step, end_step, finish) = match exit {
                Some(_) => (
                    quote!(let mut #stopped = 0usize;),
                    quote! {
                        #resume += 1;
                        if #stopped * 4 >= #width * 3 { break; }
                    },
                    quote! {
                        for #lane in 0..#width {
                            for #step_param in #resume..#steps {
                                let mut #stopped = 0usize;
                                let #value = { #step_tokens };
                                #store
                                if #stopped > 0 { break; }
                            }
                        }
                    },
                ),
                None => (TokenStream::new(), TokenStream::new(), TokenStream::new()),
            };
            let resume_from = exit.map(|_| quote!(let mut #resume = 0i64;));
            quote! {
                while #done + #width <= #count {
                    let #steps = { #end };
                    #(let mut #states = [::core::default::Default::default(); #width];)*
                    #(let mut #kept_arrays = [::core::default::Default::default(); #width];)*
                    for #lane in 0..#width {
                        let #value = { #init_tokens };
                        #store
                    }
                    #resume_from
                    for #step_param in 0..#steps {
                        #start_step
                        for #lane in 0..#width {
                            let #value = { #step_tokens };
                            #store
                        }
                        #end_step
                    }
                    #finish
                    ::ein::__private::Fill::fill(#outs, #width, |#lane, #slot| {
                        ::ein::__private::Push::push(#slot, { #element });
                    });
                    #done += #width;
                }
            }
        });
        block.push(quote! {
            let mut #done = 0usize;
            #(#loops)*
        });
        Ok(done)
    }

    /// The leading blocks of [`JAM_WIDE_BYTES`], [`JAM_WIDE`] or [`JAM_WIDTH`] elements of a
    /// comprehension's run of `count` elements from `offset`, computed side by side
    /// ([`Gen::jam_step`]), each pushed in order. Returns the local holding the number of elements written.
    pub(super) fn jammed_run(
        &mut self,
        index: VarId,
        jam: &Jam<'_>,
        body: &Expr,
        count: &TokenStream,
        offset: &Option<TokenStream>,
        block: &mut Block,
    ) -> syn::Result<Ident> {
        let (done, lane, slot) = (self.names.fresh("jammed"), self.names.fresh("lane"), self.names.fresh("slot"));
        let at = match offset {
            Some(offset) => quote!(#offset + #done + #lane),
            None => quote!(#done + #lane),
        };
        let first = match offset {
            Some(offset) => quote!(#offset + #done),
            None => quote!(#done),
        };
        let (variants, acc) = self.jam_step(index, jam, &lane, &at, Some(&first), block)?;
        let (value_block, value) = self.jam_value(index, jam, body, &at, &acc, &lane)?;
        let value = value_block.finish(Some(&value));
        let outs = self.outs.clone();
        let loops = JamVariant::choose(&variants, |width, step| {
            quote! {
                while #done + #width <= #count {
                    #step
                    ::ein::__private::Fill::fill(#outs, #width, |#lane, #slot| {
                        ::ein::__private::Push::push(#slot, { #value });
                    });
                    #done += #width;
                }
            }
        });
        block.push(quote! {
            let mut #done = 0usize;
            #loops
        });
        Ok(done)
    }

    /// The accumulators of a [`Jam`] for a block of iterations side by side, the `lane`-th
    /// at index `at` (a `usize` expression of `lane`): each reduction of the nest keeps one
    /// accumulator per iteration, and each of its steps is taken for every iteration (a loop
    /// LLVM vectorises across the loop's index) before the next. Up to three variants, each
    /// with the condition under which it is exactly what one iteration at a time computes:
    /// every reduction of the nest a plain fold (fewer values than the runtime's
    /// `PLAIN_BELOW`), in blocks of [`JAM_WIDTH`]; every outer one a plain fold, the innermost
    /// one of any length grouped as `Accumulate::fold_range` groups it — its steps in order,
    /// step `p` into lane `p % LANES`, below the last whole block of lanes, then their tree,
    /// then the remaining steps in order — in blocks of [`JAM_WIDE_BYTES`], then of
    /// [`JAM_WIDE`], then of [`JAM_WIDTH`], when `wide_from` gives the index of a block's first
    /// iteration (a comprehension's elements), else of [`JAM_WIDTH`] only (an `argmin`'s
    /// candidates: a short distance each, whose narrow lanes stay in registers); and, where an
    /// outer fold may be long too (a sum over the leading axes per last index), every fold of
    /// any length grouped so, unconditionally, in the same blocks. An outermost
    /// `argmax`/`argmin` ([`LevelRule::Arg`]) is plain at any length, and with it the plain
    /// variant runs in the wide blocks (it walks down columns). Each variant is its own loop in
    /// the caller, so the common short case keeps the small loop LLVM optimises best. Returns
    /// the variants and the local holding the outermost reduction's results.
    fn jam_step(
        &mut self,
        index: VarId,
        jam: &Jam<'_>,
        lane: &Ident,
        at: &TokenStream,
        wide_from: Option<&TokenStream>,
        block: &mut Block,
    ) -> syn::Result<(Vec<JamVariant>, Ident)> {
        let mut levels = Vec::new();
        for reduce in &jam.levels {
            let what = self.program.var(reduce.index).name.clone();
            let count = self.size_usize(&reduce.size, &what, block)?.tokens;
            let ty = scalar_type(&reduce.body.ty, reduce.body.span)?;
            let spelled = super::spelled(&ty);
            let rule = match reduce.op {
                ReduceOp::ArgMax | ReduceOp::ArgMin => {
                    let (op_name, site) = (reduce.op.name(), self.site(jam.root.span));
                    LevelRule::Arg {
                        best: self.names.fresh("best"),
                        value: self.names.fresh("value"),
                        better: self.names.fresh("better"),
                        value_ty: spelled,
                        greatest: reduce.op == ReduceOp::ArgMax,
                        empty: quote!(::ein::__private::empty_arg_reduction(#op_name, #what, &#site)),
                    }
                }
                op => LevelRule::Fold {
                    identity: self.identity(op, ty, reduce.body.span)?.tokens,
                    combine: self.step(op, ty, reduce.body.span)?.function(),
                    accumulate: quote!(<#spelled as ::ein::__private::Accumulate>),
                },
            };
            levels.push(JamLevel { acc: self.names.fresh("acc"), position: self.names.fresh("position"), count, rule });
        }
        let name = self.names.var(index).clone();
        let used = self.names.is_referenced(index);
        let (leaf_block, leaf) = self.nested(true, |generator, leaf_block| {
            for (reduce, level) in jam.levels.iter().zip(&levels) {
                generator.bind_index(reduce.index, &level.position, leaf_block);
            }
            if used {
                leaf_block.push(quote!(let #name = (#at) as ::core::primitive::i64;));
            }
            generator.env.insert(index, Value::Plain(Code::name(&name)));
            let outer = std::mem::replace(&mut generator.transposed_reads, jam.transposed.clone());
            let leaf = generator.scalar(jam.leaf, leaf_block);
            generator.transposed_reads = outer;
            leaf
        })?;
        // Inside out: the innermost reduction folds the leaf, each outer one its inner
        // reduction's accumulators once that has run.
        let leaf = leaf_block.finish(Some(&leaf));
        // Floats are grouped in lanes (an element type rustc decides may be one, unless it is
        // an integer: one lane, in order, where the lanes variant is the plain fold).
        let float_leaf = match &jam.leaf.ty {
            Type::Scalar(ScalarType::Known(scalar)) => scalar.is_float(),
            Type::Scalar(ScalarType::Param(param)) => {
                self.program.type_params.get(*param).is_some_and(|param| param.class != NumberClass::Int)
            }
            _ => false,
        };
        let Some(innermost) = levels.last() else {
            return Err(internal(jam.leaf.span, "an empty jam"));
        };
        let (position, count) = (&innermost.position, &innermost.count);
        // Every step of the innermost reduction in order, each for the `width` iterations.
        let plain_innermost = |width: &proc_macro2::Literal, prefetch: &TokenStream| {
            let (start, take) = (innermost.start(width), innermost.take(lane, quote!({ #leaf })));
            quote! {
                #start
                for #position in 0..#count {
                    #prefetch
                    for #lane in 0..#width {
                        #take
                    }
                }
            }
        };
        // The lanes of the innermost reduction (a fold of floats), `width` iterations side by
        // side. Lane `l` takes the steps `l, l + LANES, …` in order, as in `fold_range`; the
        // lanes are filled one after the other (each lane's accumulators stay in registers:
        // best for a short expensive step, a distance) or, `in_order`, a step into lane
        // `step % LANES` at a time (the steps' reads in order: best for a wide block walking
        // down a column).
        let [row, block_start, full, lanes, lane_of, width_left] =
            ["row", "block_start", "full", "lanes", "lane_of", "width_left"].map(|name| self.names.fresh(name));
        // An array's length may not depend on a type parameter: for an element type rustc
        // decides, room for the most lanes of any type, of which `LANES` are used.
        let lane_slots = |accumulate: &TokenStream| match &jam.leaf.ty {
            Type::Scalar(ScalarType::Param(_)) => quote!(::ein::__private::LANE_BLOCK),
            _ => quote!(#accumulate::LANES),
        };
        // How many of `count` steps go to the lanes, as in `fold_range`: none below
        // `PLAIN_BELOW` (the plain fold), else the whole rows of lanes.
        let lanes_end = |count: &TokenStream, accumulate: &TokenStream| quote!(if #count < #accumulate::PLAIN_BELOW { 0 } else { #count - #count % #accumulate::LANES });
        // The pairwise tree of `fold_range` over the lanes `lanes`, for each of `width`
        // iterations, into `lanes[0]`.
        let tree = |lanes: &Ident, combine: &TokenStream, accumulate: &TokenStream, width: &proc_macro2::Literal| {
            quote! {
                let mut #width_left = #accumulate::LANES;
                while #width_left > 1 {
                    #width_left /= 2;
                    for #lane_of in 0..#width_left {
                        for #lane in 0..#width {
                            #lanes[#lane_of][#lane] = #combine(#lanes[#lane_of][#lane], #lanes[#lane_of + #width_left][#lane]);
                        }
                    }
                }
            }
        };
        let lanes_innermost = |width: &proc_macro2::Literal, in_order: bool, prefetch: &TokenStream| {
            let LevelRule::Fold { identity, combine, accumulate } = &innermost.rule else {
                return TokenStream::new();
            };
            let fold = |range: TokenStream, acc: &Ident| {
                quote! {
                    for #position in #range {
                        for #lane in 0..#width {
                            #acc[#lane] = #combine(#acc[#lane], { #leaf });
                        }
                    }
                }
            };
            let fill_lanes = if in_order {
                quote! {
                    for #block_start in (0..#full).step_by(#accumulate::LANES) {
                        for #lane_of in 0..#accumulate::LANES {
                            let #position = #block_start + #lane_of;
                            #prefetch
                            for #lane in 0..#width {
                                #lanes[#lane_of][#lane] = #combine(#lanes[#lane_of][#lane], { #leaf });
                            }
                        }
                    }
                }
            } else {
                let lane_steps = fold(quote!((#lane_of..#full).step_by(#accumulate::LANES)), &row);
                quote! {
                    for #lane_of in 0..#accumulate::LANES {
                        let mut #row = [#identity; #width];
                        #lane_steps
                        #lanes[#lane_of] = #row;
                    }
                }
            };
            let innermost_acc = &innermost.acc;
            let tail = fold(quote!(#full..#count), innermost_acc);
            let (end, slots, tree) =
                (lanes_end(count, accumulate), lane_slots(accumulate), tree(&lanes, combine, accumulate, width));
            quote! {
                let #full = #end;
                let mut #lanes = [[#identity; #width]; #slots];
                #fill_lanes
                #tree
                let mut #innermost_acc = #lanes[0];
                #tail
            }
        };
        // Each outer fold's lanes and how many of its steps go to them, for the variant whose
        // outer folds are grouped as `fold_range` groups them.
        let outer_lanes: Vec<[Ident; 2]> =
            levels.iter().map(|_| ["outer_full", "outer_lanes"].map(|name| self.names.fresh(name))).collect();
        // The outer reductions around an innermost step: plain folds (the outermost may be an
        // argmax), or, `grouped`, each fold grouped as `fold_range` groups it — its steps below
        // the last whole row of lanes each into lane `step % LANES` (the step's inner
        // reduction taken into a reference to that lane's accumulators), then the lanes' tree,
        // then the remaining steps in order.
        let nest = |width: &proc_macro2::Literal, innermost_step: TokenStream, grouped: bool| {
            let mut step = innermost_step;
            for (depth, level) in levels.iter().enumerate().rev() {
                let into_outer = match depth.checked_sub(1).map(|outer| &levels[outer]) {
                    Some(outer) => {
                        let acc = &level.acc;
                        let take = outer.take(lane, quote!(#acc[#lane]));
                        quote!(for #lane in 0..#width { #take })
                    }
                    None => TokenStream::new(),
                };
                let (start, position, count, acc) = (level.start(width), &level.position, &level.count, &level.acc);
                step = match &level.rule {
                    _ if depth + 1 == levels.len() => quote!(#step #into_outer),
                    LevelRule::Fold { identity, combine, accumulate } if grouped => {
                        let [full, lanes] = &outer_lanes[depth];
                        let (end, slots) = (lanes_end(count, accumulate), lane_slots(accumulate));
                        let tree = tree(lanes, combine, accumulate, width);
                        quote! {
                            #start
                            let #full = #end;
                            let mut #lanes = [[#identity; #width]; #slots];
                            for #position in 0..#count {
                                if #position == #full && #full > 0 {
                                    #tree
                                    #acc = #lanes[0];
                                }
                                let #acc = if #position < #full { &mut #lanes[#position % #accumulate::LANES] } else { &mut #acc };
                                #step
                            }
                            if #full == #count && #full > 0 {
                                #tree
                                #acc = #lanes[0];
                            }
                            #into_outer
                        }
                    }
                    _ => quote! {
                        #start
                        for #position in 0..#count {
                            #step
                        }
                        #into_outer
                    },
                };
            }
            step
        };
        let element_bytes = if matches!(jam.leaf.ty, Type::Scalar(ScalarType::Known(Scalar::F64))) { 8 } else { 4 };
        let widest = JAM_WIDE_BYTES / element_bytes;
        let [narrow, wide_width, widest_width] =
            [JAM_WIDTH, JAM_WIDE, widest].map(proc_macro2::Literal::usize_unsuffixed);
        let positions: Vec<Ident> = levels.iter().map(|level| level.position.clone()).collect();
        let prefetches = |width: usize| match wide_from {
            Some(first) => self.jam_prefetches(index, jam, &positions, first, width),
            None => TokenStream::new(),
        };
        let (prefetch_widest, prefetch_wide, no_prefetch) =
            (prefetches(widest), prefetches(JAM_WIDE), TokenStream::new());
        // Where each reduction of the nest is a plain fold (an argmax always is): its count,
        // a literal one's value, and the element type's `Accumulate`.
        let plain: Vec<Option<(TokenStream, Option<i64>, TokenStream)>> = levels
            .iter()
            .zip(&jam.levels)
            .map(|(level, reduce)| match &level.rule {
                LevelRule::Fold { accumulate, .. } => {
                    let literal = match reduce.size.kind {
                        ExprKind::Literal(crate::ir::Literal::Int(value)) => Some(value),
                        _ => None,
                    };
                    Some((level.count.clone(), literal, accumulate.clone()))
                }
                LevelRule::Arg { .. } => None,
            })
            .collect();
        // Of several literal counts of one type only the largest is compared, and a count
        // only once: the others would be comparisons clippy denies as redundant.
        let all_plain = |conditions: &[Option<(TokenStream, Option<i64>, TokenStream)>]| {
            let mut kept: Vec<&(TokenStream, Option<i64>, TokenStream)> = Vec::new();
            for condition in conditions.iter().flatten() {
                let (count, literal, accumulate) = condition;
                let same = |other: &&(TokenStream, Option<i64>, TokenStream)| match (literal, other.1) {
                    (Some(_), Some(_)) => other.2.to_string() == accumulate.to_string(),
                    _ => other.0.to_string() == count.to_string() && other.2.to_string() == accumulate.to_string(),
                };
                match kept.iter().position(same) {
                    Some(position) if kept[position].1 < *literal => kept[position] = condition,
                    Some(_) => {}
                    None => kept.push(condition),
                }
            }
            let conditions = kept.iter().map(|(count, _, accumulate)| quote!(#count < #accumulate::PLAIN_BELOW));
            (!kept.is_empty()).then(|| quote!(#(#conditions)&&*))
        };
        let plain_steps = if let LevelRule::Arg { .. } = levels[0].rule {
            // An argmax is plain at any length: a wide block of a comprehension walks down
            // its columns as a wide block of long sums does.
            match wide_from {
                Some(_) => vec![
                    (widest, nest(&widest_width, plain_innermost(&widest_width, &prefetch_widest), false)),
                    (JAM_WIDE, nest(&wide_width, plain_innermost(&wide_width, &prefetch_wide), false)),
                    (JAM_WIDTH, nest(&narrow, plain_innermost(&narrow, &no_prefetch), false)),
                ],
                None => vec![(JAM_WIDTH, nest(&narrow, plain_innermost(&narrow, &no_prefetch), false))],
            }
        } else {
            let plain_wide = JAM_PLAIN_BYTES / element_bytes;
            let plain_wide_width = proc_macro2::Literal::usize_unsuffixed(plain_wide);
            let mut steps = vec![(JAM_WIDTH, nest(&narrow, plain_innermost(&narrow, &no_prefetch), false))];
            if wide_from.is_some() {
                steps.insert(
                    0,
                    (plain_wide, nest(&plain_wide_width, plain_innermost(&plain_wide_width, &no_prefetch), false)),
                );
            }
            steps
        };
        let mut variants = vec![JamVariant { condition: all_plain(&plain), steps: plain_steps }];
        // Integers are folded in order at any length (one lane): the plain variant is all.
        // Floats: the innermost reduction grouped in lanes under plain outer folds, then, where
        // an outer fold may be long too, every fold grouped (exact at any lengths, a little
        // slower than the plain loops where they apply).
        let lanes_steps = |grouped: bool| {
            if wide_from.is_some() {
                vec![
                    (widest, nest(&widest_width, lanes_innermost(&widest_width, true, &prefetch_widest), grouped)),
                    (JAM_WIDE, nest(&wide_width, lanes_innermost(&wide_width, true, &prefetch_wide), grouped)),
                    (JAM_WIDTH, nest(&narrow, lanes_innermost(&narrow, false, &no_prefetch), grouped)),
                ]
            } else {
                vec![(JAM_WIDTH, nest(&narrow, lanes_innermost(&narrow, false, &no_prefetch), grouped))]
            }
        };
        if let (true, LevelRule::Fold { .. }, Some((_, outer_plain))) =
            (float_leaf, &innermost.rule, plain.split_last())
        {
            variants.push(JamVariant { condition: all_plain(outer_plain), steps: lanes_steps(false) });
            if outer_plain.iter().any(Option::is_some) {
                variants.push(JamVariant { condition: None, steps: lanes_steps(true) });
            }
        }
        // A transposed copy has the array's length on its last axis only where it was made
        // (`passes::transpose` leaves that axis empty where the copy would not pay), and the
        // unchecked reads of it need that length: the variants that read it run only then;
        // otherwise the iterations go one at a time, reading the array itself.
        let copies: std::collections::BTreeSet<(VarId, usize)> = jam.transposed.values().copied().collect();
        let mut made = Vec::new();
        for (copy, axis) in copies {
            let array = self.analysis.transposed_source(copy).map(|(array, _)| array);
            let view = |generator: &Self, var: VarId| match generator.env.get(&var) {
                Some(Value::Array(array)) => array.views().first().cloned(),
                _ => None,
            };
            let (Some(copy_view), Some(array_view)) = (view(self, copy), array.and_then(|array| view(self, array)))
            else {
                return Err(internal(jam.leaf.span, "a transposed copy or its array not in scope"));
            };
            let last = proc_macro2::Literal::usize_unsuffixed(self.program.var(copy).ty.rank().saturating_sub(1));
            let axis = proc_macro2::Literal::usize_unsuffixed(axis);
            made.push(quote!(#copy_view.len_of(#last) == #array_view.len_of(#axis)));
        }
        if !made.is_empty() {
            for variant in &mut variants {
                variant.condition = Some(match variant.condition.take() {
                    Some(condition) => quote!(#(#made)&&* && #condition),
                    None => quote!(#(#made)&&*),
                });
            }
        }
        Ok((variants, levels[0].acc.clone()))
    }

    /// Hints for a wide block of a [`Jam`] ([`PREFETCH_AHEAD`]): for each read of the leaf
    /// whose last index is the comprehension's `index` and which walks down the innermost
    /// reduction (its index at another axis), every index a plain variable, a prefetch of the
    /// run of `width` elements that the step [`PREFETCH_AHEAD`] steps later reads
    /// (`View::prefetch_run`). `positions` are the reductions' position locals (outermost
    /// first), `first` the index of the block's first iteration.
    fn jam_prefetches(
        &self,
        index: VarId,
        jam: &Jam<'_>,
        positions: &[Ident],
        first: &TokenStream,
        width: usize,
    ) -> TokenStream {
        let mut reads = Vec::new();
        collect_reads(jam.leaf, &mut reads);
        // Names the leaf binds are not in scope where the hints go, before the leaf.
        let bound_in_leaf = crate::ir::visit::bound_vars(jam.leaf);
        let Some(innermost) = jam.levels.last().map(|level| level.index) else { return TokenStream::new() };
        let (ahead, count) =
            (proc_macro2::Literal::usize_unsuffixed(PREFETCH_AHEAD), proc_macro2::Literal::usize_unsuffixed(width));
        let mut hints: Vec<String> = Vec::new();
        let mut tokens = TokenStream::new();
        for read in reads {
            let read = match jam.transposed.get(&read.id) {
                Some(&(copy, axis)) => super::arrays::transposed_read(read, copy, axis, &self.program.var(copy).ty),
                None => read.clone(),
            };
            let (base, at) = read.read_chain();
            let (ExprKind::Var(array), Type::Array { rank, .. }) = (&base.kind, &base.ty) else { continue };
            let Some(Value::Array(array)) = self.env.get(array) else { continue };
            let Tree::Leaf(view) = array.views_unread() else { continue };
            let plain_var = |position: &Expr| match position.kind {
                ExprKind::Var(var) => Some(var),
                _ => None,
            };
            let vars: Option<Vec<VarId>> = at.iter().map(|(position, _)| plain_var(position)).collect();
            let Some(vars) = vars else { continue };
            let walks_down = vars[..vars.len().saturating_sub(1)].contains(&innermost);
            let whole = vars.len() == *rank && at.iter().all(|(_, bounds)| *bounds == Bounds::Proven);
            if !whole || !walks_down || vars.last() != Some(&index) {
                continue;
            }
            let position_tokens: Option<Vec<TokenStream>> = vars
                .iter()
                .map(|var| {
                    if *var == index {
                        return Some(quote!(#first));
                    }
                    if *var == innermost {
                        let position = positions.last()?;
                        return Some(quote!(#position + #ahead));
                    }
                    if let Some(level) = jam.levels.iter().position(|level| level.index == *var) {
                        let position = &positions[level];
                        return Some(quote!(#position));
                    }
                    if bound_in_leaf.contains(var) {
                        return None;
                    }
                    match self.env.get(var) {
                        Some(Value::Plain(code)) if code.simple => {
                            let code = &code.tokens;
                            Some(quote!((#code) as ::core::primitive::usize))
                        }
                        _ => None,
                    }
                })
                .collect();
            let Some(position_tokens) = position_tokens else { continue };
            let hint = quote!(#view.prefetch_run([#(#position_tokens),*], #count););
            if !hints.contains(&hint.to_string()) {
                hints.push(hint.to_string());
                tokens.extend(hint);
            }
        }
        tokens
    }

    /// The loop body for the `lane`-th iteration of a [`Jam`] (index `at`), its nest's result
    /// taken from `acc`: the epilogue around the nest, evaluated one iteration at a time.
    fn jam_value(
        &mut self,
        index: VarId,
        jam: &Jam<'_>,
        body: &Expr,
        at: &TokenStream,
        acc: &Ident,
        lane: &Ident,
    ) -> syn::Result<(Block, Code)> {
        let name = self.names.var(index).clone();
        let used = jam.epilogue_reads_index;
        let result = Code::expr(quote!(#acc[#lane]), Prec::Atom);
        self.nested(true, |generator, value_block| {
            if used {
                value_block.push(quote!(let #name = (#at) as ::core::primitive::i64;));
            }
            generator.env.insert(index, Value::Plain(Code::name(&name)));
            let outer = generator.jammed.replace((jam.root.id, result));
            let value = generator.scalar(body, value_block);
            generator.jammed = outer;
            value
        })
    }

    /// `reduce(n, |start, end| fold_range(…, |step| body at start + step), op)`, versioned for
    /// unit-stride views. Each chunk's loop is in a closure of ours, compiled with our target
    /// features (see `ein-runtime/src/reduce.rs`, `reduce`).
    fn parallel_reduce(
        &mut self,
        op: ReduceOp,
        index: VarId,
        size: &Expr,
        body: &Expr,
        ty: ScalarType,
        block: &mut Block,
    ) -> syn::Result<Code> {
        let what = self.program.var(index).name.clone();
        let count = self.size_usize(size, &what, block)?;
        let identity = self.identity(op, ty, body.span)?;
        let step = self.step(op, ty, body.span)?;
        let position = self.names.fresh("position");
        let candidates = self.version_candidates();
        let flat = self.flat_chain(op, ty, index, body)?;
        let [start, end, offset] = ["start", "end", "step"].map(|name| self.names.fresh(name));
        let generate_value = |generator: &mut Self| -> syn::Result<TokenStream> {
            let (value_block, value) = generator.versioning(|generator| {
                generator.nested(true, |generator, value_block| {
                    generator.bind_index(index, &position, value_block);
                    generator.scalar(body, value_block)
                })
            })?;
            Ok(value_block.finish(Some(&value)))
        };
        let value_body = generate_value(self)?;
        // Steps folded as they are computed (in this thread) may run `sin` and `cos` on their
        // fast path ([`Gen::fast_trig_flag`]), the chunk folded again if it did not hold.
        let fast_trig = match self.analysis.step_work(index) {
            None => self.fast_trig_flag(body),
            Some(_) => None,
        };
        let fast_value_body = match &fast_trig {
            Some(flag) => Some(self.fast_copy(flag, generate_value)?),
            None => None,
        };
        let flat_fold = match &flat {
            Some(chain) => Some(self.versioning(|generator| generator.flat_fold(chain, (&start, &end)))?),
            None => None,
        };
        let (offset_param, position_binding) = if self.names.is_referenced(index) {
            (offset.to_token_stream(), quote!(let #position = #start + #offset;))
        } else {
            (quote!(_), TokenStream::new())
        };
        let combine = step.function();
        let (count, identity) = (&count.tokens, &identity.tokens);
        let mut free = crate::ir::visit::free_vars(body);
        free.remove(&index);
        // Steps that each run loops have their values computed in parallel, then folded in
        // order; others are folded as they are computed.
        let (fold_function, work) = match self.analysis.step_work(index) {
            Some(work) => {
                let work = self.work_tokens(work)?;
                (quote!(::ein::__private::fold_values), quote!(#work,))
            }
            None => (self.fold_function(body), TokenStream::new()),
        };
        let fold = quote! {
            #fold_function(#end - #start, #work #identity, #combine, |#offset_param| {
                #position_binding
                #value_body
            })
        };
        let fold = match fast_trig.zip(fast_value_body) {
            Some((flag, fast_value_body)) => {
                let fast = self.names.fresh("fast");
                quote! {{
                    let #flag = ::core::cell::Cell::new(false);
                    let #fast = #fold_function(#end - #start, #work #identity, #combine, |#offset_param| {
                        #position_binding
                        #fast_value_body
                    });
                    if #flag.get() { #fold } else { #fast }
                }}
            }
            None => fold,
        };
        let fold = match flat_fold.zip(flat.as_ref()) {
            Some(((runs, somes, count, flat_value), chain)) => {
                let fold_function = self.fold_function(chain.inner);
                quote! {{
                    #runs {
                        #somes => #fold_function(#count, #identity, #combine, #flat_value),
                        _ => #fold,
                    }
                }}
            }
            None => fold,
        };
        let copies = self.local_copies(&free);
        let chunk = if copies.is_empty() { fold } else { quote!({ #copies #fold }) };
        let call = quote! {
            ::ein::__private::reduce(#count, |#start, #end| #chunk, #combine)
        };
        let (tokens, versioned) = self.versioned(&candidates, &free, body, call);
        let code = if versioned {
            Code { block_start: true, ..Code::expr(tokens, Prec::Block) }
        } else {
            Code::expr(tokens, Prec::Atom)
        };
        Ok(Code { has_unsafe: true, ..code.panics(true) })
    }

    /// An exact reduction (integers, `bool`s) whose body is a chain of reductions with its
    /// operator, `sum i, j, … { e }`, where `e` uses the indices only as whole reads
    /// `x[i, j, …]` ([`crate::analysis::flat_reads`]) and the inner sizes are lengths or
    /// literals (they cannot fail, and no index changes them): the chain, its inner sizes, its
    /// innermost body and the views it reads. Its rows may then run as one loop where the
    /// arrays hold them contiguously ([`Gen::flat_fold`]): narrow rows cost no loop each, and
    /// an exact operator gives the same result in any order.
    fn flat_chain<'e>(
        &mut self,
        op: ReduceOp,
        ty: ScalarType,
        index: VarId,
        body: &'e Expr,
    ) -> syn::Result<Option<FlatChain<'e>>> {
        let exact = match ty {
            ScalarType::Known(scalar) => !scalar.is_float(),
            ScalarType::Param(param) => {
                matches!(self.class(param, body.span)?, NumberClass::Int | NumberClass::Bool)
            }
        };
        let (mut indices, mut sizes, mut inner) = (vec![index], Vec::new(), body);
        while let ExprKind::Reduce(node::Reduce { op: inner_op, index, size, body }) = &inner.kind {
            let fixed = match &size.kind {
                ExprKind::Len(_) => true,
                ExprKind::Literal(crate::ir::Literal::Int(value)) => *value >= 0,
                _ => false,
            };
            if *inner_op != op || !fixed || crate::ir::visit::free_vars(size).iter().any(|var| indices.contains(var)) {
                return Ok(None);
            }
            indices.push(*index);
            sizes.push(&**size);
            inner = body;
        }
        if !exact || sizes.is_empty() || matches!(op, ReduceOp::ArgMax | ReduceOp::ArgMin) {
            return Ok(None);
        }
        let views = crate::analysis::flat_reads(&indices, inner).and_then(|arrays| self.run_views(arrays));
        Ok(views.map(|views| FlatChain { indices, sizes, inner, views }))
    }

    /// For a [`FlatChain`] over the rows `start..end`: the row length's statements and the
    /// `match` head on the views' runs (`flat_rows`), the pattern that matches when every
    /// view has one (rebinding the views to them), the number
    /// of elements, and the closure giving the innermost body at a position of the run (every
    /// index but the last 0).
    fn flat_fold(
        &mut self,
        chain: &FlatChain<'_>,
        (start, end): (&Ident, &Ident),
    ) -> syn::Result<(TokenStream, TokenStream, TokenStream, TokenStream)> {
        let mut block = Block::new();
        let mut lens = Vec::new();
        for (size, index) in chain.sizes.iter().zip(&chain.indices[1..]) {
            let what = self.program.var(*index).name.clone();
            lens.push(self.size_usize(size, &what, &mut block)?.tokens);
        }
        let row_len = self.names.fresh("row_len");
        let prelude = block.finish(None);
        let runs = chain.views.iter().map(|view| quote!(#view.flat_rows(#start, #end, #row_len))).collect();
        let runs = tuple_tokens(runs);
        let runs = quote!(#prelude let #row_len = 1usize #(* #lens)*; match #runs);
        let somes = tuple_tokens(chain.views.iter().map(|view| quote!(::core::option::Option::Some(#view))).collect());
        let Some((last, outer)) = chain.indices.split_last() else {
            return Err(internal(chain.inner.span, "an empty chain of reductions"));
        };
        let [position, first] = ["position", "first"].map(|name| self.names.fresh(name));
        let (value_block, value) = self.nested(true, |generator, value_block| {
            if outer.iter().any(|index| generator.names.is_referenced(*index)) {
                value_block.push(quote!(let #first = 0usize;));
            }
            for index in outer {
                generator.bind_index(*index, &first, value_block);
            }
            generator.bind_index(*last, &position, value_block);
            generator.scalar(chain.inner, value_block)
        })?;
        let position_param = if self.names.is_referenced(*last) { position.to_token_stream() } else { quote!(_) };
        let value_body = value_block.finish(Some(&value));
        let count = quote!((#end - #start) * #row_len);
        Ok((runs, somes, count, quote!(|#position_param| { #value_body })))
    }

    /// The comparison that makes `value` the new best of an argmax/argmin.
    fn better(op: ReduceOp, value: &Ident, best: &Ident) -> TokenStream {
        if op == ReduceOp::ArgMax {
            quote!(#value > #best)
        } else {
            quote!(#value < #best)
        }
    }

    /// `argmax`/`argmin` in a loop: the runtime's `arg_range` (values in order, comparisons
    /// in lanes), after a leading part computed side by side where the body allows it.
    #[allow(clippy::too_many_arguments)]
    fn serial_arg_reduce(
        &mut self,
        expr: &Expr,
        op: ReduceOp,
        index: VarId,
        size: &Expr,
        body: &Expr,
        block: &mut Block,
        hint: Option<Ident>,
    ) -> syn::Result<Code> {
        let what = self.program.var(index).name.clone();
        let count_code = self.size_usize(size, &what, block)?;
        let count = self.names.fresh(&format!("count_{what}"));
        block.push_let(count.clone(), count_code);
        let best = self.names.fresh(&format!("best_{what}"));
        let (value, top, better) = (self.names.fresh("value"), self.names.fresh("top"), self.names.fresh("better"));
        let comparison = Gen::better(op, &value, &top);
        block.push(quote!(let mut #best = ::core::option::Option::None;));
        // Leading blocks of iterations whose values are computed side by side, compared in
        // order (nearest neighbour, k-means assignment: a short distance per candidate).
        let start = match self.analysis.jam(index, body) {
            Some(jam) => {
                let (done, lane) = (self.names.fresh("jammed"), self.names.fresh("lane"));
                let at = quote!(#done + #lane);
                let (variants, acc) = self.jam_step(index, &jam, &lane, &at, None, block)?;
                let (value_block, jam_value) = self.jam_value(index, &jam, body, &at, &acc, &lane)?;
                let value_tokens = value_block.finish(Some(&jam_value));
                let loops = JamVariant::choose(&variants, |width, step| {
                    quote! {
                        while #done + #width <= #count {
                            #step
                            for #lane in 0..#width {
                                let #value = { #value_tokens };
                                let #better = match #best {
                                    ::core::option::Option::Some((#top, _)) => #comparison,
                                    ::core::option::Option::None => true,
                                };
                                if #better {
                                    #best = ::core::option::Option::Some((#value, #done + #lane));
                                }
                            }
                            #done += #width;
                        }
                    }
                });
                block.push(quote! {
                    let mut #done = 0usize;
                    #loops
                });
                done.into_token_stream()
            }
            None => quote!(0),
        };
        let value_at = self.value_closure(index, body)?;
        let greatest = op == ReduceOp::ArgMax;
        block.push(quote! {
            #best = ::ein::__private::arg_range::<_, #greatest>(#start, #count, #best, true, #value_at);
        });
        self.arg_result(expr, op, &what, best.into_token_stream(), block, hint)
    }

    /// `match best { Some((_, at)) => at, None => empty_arg_reduction(..) }`, bound to a local.
    fn arg_result(
        &mut self,
        expr: &Expr,
        op: ReduceOp,
        what: &str,
        best: TokenStream,
        block: &mut Block,
        hint: Option<Ident>,
    ) -> syn::Result<Code> {
        let site = self.site(expr.span);
        let at = self.names.fresh("at");
        let result = hint.unwrap_or_else(|| self.names.fresh(&format!("{}_{what}", op.name())));
        let op_name = op.name();
        let tokens = quote! {
            match #best {
                ::core::option::Option::Some((_, #at)) => #at,
                ::core::option::Option::None => ::ein::__private::empty_arg_reduction(#op_name, #what, &#site),
            }
        };
        block.push_let(result.clone(), Code::expr(tokens, Prec::Block));
        Ok(Code::name(&result))
    }

    /// `argmax`/`argmin` at the top level: a parallel reduction over `Option<(value,
    /// position)>`, each chunk folded by the runtime's `arg_range`, the chunks combined so
    /// that ties go to the first index. Within a chunk that does not start the range, a NaN is
    /// never the first best (the serial semantics would only ever compare it, never keep it);
    /// only position 0 may keep a NaN.
    #[allow(clippy::too_many_arguments)]
    fn parallel_arg_reduce(
        &mut self,
        expr: &Expr,
        op: ReduceOp,
        index: VarId,
        size: &Expr,
        body: &Expr,
        block: &mut Block,
        hint: Option<Ident>,
    ) -> syn::Result<Code> {
        let what = self.program.var(index).name.clone();
        let count = self.size_usize(size, &what, block)?;
        // Versioned for unit-stride views, as a top-level sum is: a dot product per
        // candidate (`argmax j { sum k { q[k] * keys[j, k] } }`) then vectorises.
        let candidates = self.version_candidates();
        let value_at = self.versioning(|generator| generator.value_closure(index, body))?;
        let names = ["left", "right", "left_at", "right_at", "start", "end"];
        let [left, right, left_at, right_at, start, end] = names.map(|name| self.names.fresh(name));
        let greatest = op == ReduceOp::ArgMax;
        let combine_comparison = Gen::better(op, &right, &left);
        let mut free = crate::ir::visit::free_vars(body);
        free.remove(&index);
        let copies = self.local_copies(&free);
        let (count,) = (&count.tokens,);
        let tokens = quote! {
            ::ein::__private::reduce(
                #count,
                |#start, #end| {
                    #copies
                    ::ein::__private::arg_range::<_, #greatest>(
                        #start, #end, ::core::option::Option::None, #start == 0, #value_at,
                    )
                },
                |#left, #right| match (#left, #right) {
                    (::core::option::Option::Some((#left, #left_at)), ::core::option::Option::Some((#right, #right_at))) => {
                        if #combine_comparison {
                            ::core::option::Option::Some((#right, #right_at))
                        } else {
                            ::core::option::Option::Some((#left, #left_at))
                        }
                    }
                    (#left, ::core::option::Option::None) | (::core::option::Option::None, #left) => #left,
                },
            )
        };
        let (tokens, versioned) = self.versioned(&candidates, &free, body, tokens);
        let best = if versioned { quote!({ #tokens }) } else { tokens };
        self.arg_result(expr, op, &what, best, block, hint)
    }

    /// `let mut acc = init; for t in 0..count { acc = body; }`, with an owned store for an
    /// accumulator that holds arrays.
    pub(super) fn fold(&mut self, expr: &Expr, block: &mut Block, hint: Option<Ident>) -> syn::Result<Value> {
        let ExprKind::Fold(fold) = &expr.kind else {
            return Err(internal(expr.span, "not a fold"));
        };
        self.fold_states(fold, false, block, hint)
    }

    /// A fold, or with `saved` a scan whose state holds an array: the same loop, each state
    /// then copied onto the runtime's `Tape`, which becomes the scan's array.
    pub(super) fn fold_states(
        &mut self,
        fold: &node::Fold,
        saved: bool,
        block: &mut Block,
        hint: Option<Ident>,
    ) -> syn::Result<Value> {
        let node::Fold { index, count, acc, init, body } = fold;
        let (index, acc) = (*index, *acc);
        let what = self.program.var(index).name.clone();
        let mut end = self.size_end(count, &what, block)?;
        if end.may_panic {
            // The count is checked before the initial value is computed.
            let name = self.names.fresh(&format!("count_{what}"));
            block.push_let(name.clone(), end);
            end = Code::name(&name);
        }
        let index_name = self.names.var(index).clone();
        let acc_name = self.names.var(acc).clone();
        let ty = init.ty.clone();
        if !has_array(&ty) && !saved {
            let initial = self.scalar(init, block)?;
            let exit = self.analysis.fixed_point(index);
            let (loop_block, assigns) = self.nested(true, |generator, loop_block| {
                generator.env.insert(index, Value::Plain(Code::name(&index_name)));
                generator.env.insert(acc, Value::Plain(Code::name(&acc_name)));
                match exit {
                    Some(exit) => generator.fold_step_until_fixed(exit, &acc_name, loop_block).map(|()| true),
                    None => generator.fold_step(acc, &acc_name, body, loop_block),
                }
            })?;
            let (initial, end, body_tokens) = (&initial.tokens, &end.tokens, loop_block.finish(None));
            let binding =
                if assigns { quote!(let mut #acc_name = #initial;) } else { quote!(let #acc_name = #initial;) };
            block.push(quote! {
                #binding
                for #index_name in 0..#end { #body_tokens }
            });
            return Ok(Value::Plain(Code::name(&acc_name)));
        }

        let initial = self.value(init, block)?;
        let state = self.names.fresh(&format!("{acc_name}_state"));
        // An array state that starts as an array the fold may not move (a parameter, a `let`
        // read again later) is read in place by the first step, not copied first: the state
        // is `None` until a step has made one (a copy only if no step runs).
        let borrowed = match (&initial, &ty) {
            (Value::Array(_), Type::Array { .. }) if !saved && names_a_variable(init) => {
                let views = self.names.fresh(&format!("{acc_name}_initial"));
                // Plain views, as the state's are (a loop versioned for unit strides holds a
                // `UnitView` of a parameter).
                let tokens = super::expr::plain_view_tokens(&initial);
                block.push(quote!(let #views = #tokens;));
                Some(views)
            }
            _ => None,
        };
        let initial = match &borrowed {
            Some(_) => {
                let owned = super::owned_type(&ty, init.span)?;
                Code::expr(quote!(::core::option::Option::<#owned>::None), Prec::Atom)
            }
            // A store reached through a variable may still be read after the fold starts (by
            // its body, or after it), so only a value computed by `init` itself is moved.
            None => {
                let stores = if names_a_variable(init) { Stores::Copy } else { Stores::MayMove };
                self.owned_as(&initial, &ty, init.span, block, stores)?
            }
        };
        let tape = if saved { Some((self.names.fresh("tape"), self.site(init.span))) } else { None };
        let acc_read = self.names.is_referenced(acc);
        // An array of the accumulator built by a comprehension each step is built in the
        // allocation of the same array of the accumulator of the step before (two allocations
        // in all, not one per step): one spare per field path.
        let mut spares: Vec<(Vec<usize>, Ident)> = Vec::new();
        let mut builders = Vec::new();
        for (path, builder) in self.analysis.reused_accumulator(index).unwrap_or_default() {
            let spare = match spares.iter().find(|(known, _)| known == path) {
                Some((_, spare)) => spare.clone(),
                None => {
                    let spare = self.names.fresh(&format!("{acc_name}_spare"));
                    spares.push((path.clone(), spare.clone()));
                    spare
                }
            };
            builders.push((*builder, spare));
        }
        let outer_recycle = match builders.is_empty() {
            false => self.recycle.replace(super::Recycle { builders, used: std::collections::BTreeSet::new() }),
            true => self.recycle.take(),
        };
        let result = self.nested(true, |generator, loop_block| {
            generator.env.insert(index, Value::Plain(Code::name(&index_name)));
            if acc_read {
                let value = match &borrowed {
                    Some(views) => {
                        let current = generator.names.fresh("current");
                        let current_views = views_of_state(&ty, &current.to_token_stream());
                        let init = quote! {
                            match &#state {
                                ::core::option::Option::Some(#current) => #current_views,
                                ::core::option::Option::None => #views,
                            }
                        };
                        let read = loop_block.push_view(acc_name.clone(), init, None);
                        generator.value_at(&ty, &acc_name, Some(read))
                    }
                    None => generator.state_value(&ty, &state.to_token_stream(), &acc_name, loop_block),
                };
                generator.env.insert(acc, value);
            }
            let value = generator.value(body, loop_block)?;
            // A comprehension records the spare it took.
            let used = generator.recycle.as_ref().map(|recycle| recycle.used.clone()).unwrap_or_default();
            let recycled: Vec<&(Vec<usize>, Ident)> = spares.iter().filter(|(_, spare)| used.contains(spare)).collect();
            let owned = generator.owned(&value, &ty, body.span, loop_block)?;
            let owned = &owned.tokens;
            // The new state, and the old one as an `Option` (`None` when the first step read
            // a borrowed initial array: it has no state of its own to hand on).
            let (new_state, old_state) = match &borrowed {
                None => {
                    (quote!(#owned), quote!(::core::option::Option::Some(::core::mem::replace(&mut #state, #owned))))
                }
                Some(_) => (
                    quote!(::core::option::Option::Some(#owned)),
                    quote!(::core::option::Option::replace(&mut #state, #owned)),
                ),
            };
            match recycled.as_slice() {
                [] => loop_block.push(quote!(#state = #new_state;)),
                [(path, spare)] if path.is_empty() => loop_block.push(quote!(#spare = #old_state;)),
                _ => {
                    let old = generator.names.fresh("old_state");
                    let refills = recycled.iter().map(|(path, spare)| {
                        let fields = path.iter().map(|&position| syn::Index::from(position));
                        quote!(#spare = ::core::option::Option::Some(#old #(.#fields)*);)
                    });
                    loop_block.push(quote! {
                        if let ::core::option::Option::Some(#old) = #old_state {
                            #(#refills)*
                        }
                    });
                }
            }
            let recycled: Vec<Ident> = recycled.into_iter().map(|(_, spare)| spare.clone()).collect();
            if let Some((tape, site)) = &tape {
                let tapes = state_columns(&ty, &tape.to_token_stream());
                for ((rank, tape), (_, column)) in tapes.into_iter().zip(state_columns(&ty, &state.to_token_stream())) {
                    loop_block.push(match rank {
                        0 => quote!(#tape.push(#column);),
                        _ => quote!(#tape.push(&#column.view(), &#site);),
                    });
                }
            }
            Ok(recycled)
        });
        self.recycle = outer_recycle;
        let (loop_block, recycled) = result?;
        let (initial, end, body_tokens) = (&initial.tokens, &end.tokens, loop_block.finish(None));
        let spare_binding = quote!(#(let mut #recycled = ::core::option::Option::None;)*);
        let tape_binding = tape.as_ref().map(|(tape, _)| {
            let tapes = tape_tree(&ty, &state.to_token_stream(), &mut |rank, column| match rank {
                0 => quote!(::std::vec::Vec::with_capacity((#end) as usize)),
                _ => quote!(::ein::__private::Tape::new(&#column.view(), (#end) as usize)),
            });
            quote!(let mut #tape = #tapes;)
        });
        block.push(quote! {
            let mut #state = #initial;
            #tape_binding
            #spare_binding
            for #index_name in 0..#end { #body_tokens }
            // The buffer not returned is kept for the next call's first step.
            #(::ein::__private::Buffer::retire(#recycled);)*
        });
        if let Some(views) = &borrowed {
            // No step ran: the fold's value is its initial array, copied as before.
            let copy = super::map_array_columns(&ty, &views.to_token_stream(), &mut |_, view| quote!(#view.to_array()));
            block.push(quote! {
                let #state = match #state {
                    ::core::option::Option::Some(#state) => #state,
                    ::core::option::Option::None => #copy,
                };
            });
        }
        if let Some((tape, _)) = tape {
            return self.finished_tapes(&ty, &tape.to_token_stream(), end, hint, block);
        }
        let name = hint.unwrap_or(acc_name);
        let read = block.push_view(name.clone(), views_of_state(&ty, &state.to_token_stream()), None);
        Ok(self.stored_value(&ty, &name.to_token_stream(), Some(&name), &read, &state, Vec::new()))
    }

    /// A fold's state at `path` (its owned storage) as a step reads it: an array through a
    /// view local (`name`), a tuple field by field, each array a view local of its own (so a
    /// loop reading it is versioned for unit strides, as it is for an array state), each scalar
    /// read from the state where it is used (the state changes only at the step's end).
    fn state_value(&mut self, ty: &Type, path: &TokenStream, name: &Ident, block: &mut Block) -> Value {
        match ty {
            Type::Tuple { fields, .. } if has_array(ty) => Value::Tuple(
                fields
                    .iter()
                    .enumerate()
                    .map(|(position, field)| {
                        let index = syn::Index::from(position);
                        let name =
                            self.names.fresh(&format!("{}_{position}", name.to_string().trim_start_matches("__ein_")));
                        self.state_value(field, &quote!(#path.#index), &name, block)
                    })
                    .collect(),
            ),
            Type::Array { .. } => {
                let read = block.push_view(name.clone(), views_of_state(ty, path), None);
                self.value_at(ty, name, Some(read))
            }
            _ => Value::Plain(Code::expr(path.clone(), Prec::Atom)),
        }
    }

    /// The value of a saved fold's tapes ([`tape_tree`], under `tape`) once `end` states are
    /// on them: the states stacked (`Type::stacked`), an array per array part of the state
    /// (its tapes finished with an axis more) and per scalar or tuple of scalars (its `Vec`s
    /// as arrays of length `end`), in a tuple for a tuple holding an array.
    fn finished_tapes(
        &mut self,
        ty: &Type,
        tape: &TokenStream,
        end: &TokenStream,
        hint: Option<Ident>,
        block: &mut Block,
    ) -> syn::Result<Value> {
        let (elem, finished) = match ty {
            Type::Tuple { fields, .. } if has_array(ty) => {
                let mut parts = Vec::new();
                for (position, field) in fields.iter().enumerate() {
                    let position = syn::Index::from(position);
                    parts.push(self.finished_tapes(field, &quote!(#tape.#position), end, None, block)?);
                }
                return Ok(Value::Tuple(parts));
            }
            Type::Array { elem, rank } => {
                let rank = proc_macro2::Literal::usize_unsuffixed(rank + 1);
                (&**elem, tree_at(elem, tape).map(&mut |tape| quote!(#tape.finish::<#rank>())))
            }
            other => (
                other,
                tree_at(other, tape)
                    .map(&mut |tape| quote!(::ein::__private::Array::from_vec([(#end) as usize], #tape))),
            ),
        };
        let store = self.names.fresh("store");
        block.push_let(store.clone(), Code::expr(finished.tuple(), Prec::Atom));
        Ok(Value::Array(self.views_of_store(elem, store, hint, block)))
    }

    /// The assignment of a fold body to a plain accumulator; `false` when the body is the
    /// accumulator itself (nothing to assign).
    /// One step of a fold that stops at a fixed point (see [`FixedPoint`]): the `let`s, then
    /// `if stop { break; }`, then `acc = next;`.
    fn fold_step_until_fixed(&mut self, exit: &FixedPoint<'p>, acc_name: &Ident, block: &mut Block) -> syn::Result<()> {
        let stops = self.fixed_point_stops(exit, block)?.tokens;
        block.push(quote!(if #stops { break; }));
        let next = self.scalar(exit.next, block)?;
        let next = &next.tokens;
        block.push(quote!(#acc_name = #next;));
        Ok(())
    }

    /// The step's `let`s of a fold with a fixed point (into `block`), and the `bool` that says
    /// whether this step keeps the accumulator (and so every later one does): the condition,
    /// or the negation of a local holding it (`!(x <= y)` on floats is what clippy's
    /// `neg_cmp_op_on_partial_ord` asks users not to write).
    fn fixed_point_stops(&mut self, exit: &FixedPoint<'_>, block: &mut Block) -> syn::Result<Code> {
        for (var, value) in &exit.lets {
            self.bind_let(*var, value, block)?;
        }
        let cond = self.scalar(exit.cond, block)?;
        if exit.stop_when {
            return Ok(cond);
        }
        let keep = self.names.fresh("keep");
        block.push_let(keep.clone(), cond);
        Ok(Code::expr(quote!(!#keep), Prec::Unary))
    }

    pub(super) fn fold_step(
        &mut self,
        acc: VarId,
        acc_name: &Ident,
        body: &Expr,
        block: &mut Block,
    ) -> syn::Result<bool> {
        // The step's `let`s first, so that `let …; acc + x` is `acc += x` too.
        let mut body = body;
        while let ExprKind::Let(node::Let { var, value, body: rest }) = &body.kind {
            self.bind_let(*var, value, block)?;
            body = rest;
        }
        // `acc = acc + x` on floats is written `acc += x` (a known type: a type parameter's
        // bound, `ein::Float`, has no `+=`).
        if let ExprKind::Binary(node::Binary { op, lhs, rhs }) = &body.kind {
            let float = matches!(body.ty, Type::Scalar(ScalarType::Known(scalar)) if scalar.is_float());
            if float && op.is_arithmetic() && matches!(lhs.kind, ExprKind::Var(var) if var == acc) {
                let value = self.scalar(rhs, block)?;
                let value = &value.tokens;
                let assign: TokenStream = match op {
                    BinaryOp::Add => quote!(+=),
                    BinaryOp::Sub => quote!(-=),
                    BinaryOp::Mul => quote!(*=),
                    BinaryOp::Div => quote!(/=),
                    _ => quote!(%=),
                };
                block.push(quote!(#acc_name #assign #value;));
                return Ok(true);
            }
        }
        let value = self.scalar(body, block)?;
        if value.is(acc_name) {
            return Ok(false);
        }
        let value = &value.tokens;
        block.push(quote!(#acc_name = #value;));
        Ok(true)
    }

    /// The value of views at `views` (the local `local`, if it is one, with `read` the flag of
    /// its `let`) over the owned state at `state` (movable at this level).
    pub(super) fn stored_value(
        &self,
        ty: &Type,
        views: &TokenStream,
        local: Option<&Ident>,
        read: &super::code::ViewRead,
        state: &Ident,
        fields: Vec<usize>,
    ) -> Value {
        let store = Store { root: state.clone(), fields, level: self.level };
        match ty {
            Type::Array { elem, .. } => Value::Array(super::code::ArrayValue::bound(
                tree_at(elem, views),
                Some(store),
                Some(read.clone()),
                local,
            )),
            Type::Tuple { fields, .. } if has_array(ty) => Value::Tuple(
                fields
                    .iter()
                    .enumerate()
                    .map(|(position, field)| {
                        let mut fields = store.fields.clone();
                        fields.push(position);
                        let position = syn::Index::from(position);
                        self.stored_value(field, &quote!(#views.#position), None, read, state, fields)
                    })
                    .collect(),
            ),
            // Scalars are read from the state itself, not through the views, so that they
            // stay readable after an array of the state was moved out.
            _ => Value::Plain(store.place()),
        }
    }
}

/// A chain of exact reductions over whole reads that may run as one loop ([`Gen::flat_chain`]).
struct FlatChain<'e> {
    /// The chain's indices, outermost first.
    indices: Vec<VarId>,
    /// The sizes of all but the outermost.
    sizes: Vec<&'e Expr>,
    /// The innermost body.
    inner: &'e Expr,
    /// The local views of the arrays it reads.
    views: Vec<Ident>,
}

/// The scalar leaves of a tuple type, depth first: each one's path of fields and type.
fn scalar_leaves(ty: &Type, path: &mut Vec<usize>, leaves: &mut Vec<(Vec<usize>, ScalarType)>) {
    match ty {
        Type::Scalar(scalar) => leaves.push((path.clone(), *scalar)),
        Type::Tuple { fields, .. } => {
            for (position, field) in fields.iter().enumerate() {
                path.push(position);
                scalar_leaves(field, path, leaves);
                path.pop();
            }
        }
        Type::Array { .. } => {}
    }
}

/// A tuple of type `ty` whose scalar leaves are `leaves`, in depth-first order.
fn rebuild_tuple(ty: &Type, leaves: &mut impl Iterator<Item = TokenStream>) -> TokenStream {
    match ty {
        Type::Tuple { fields, .. } => {
            let items = fields.iter().map(|field| rebuild_tuple(field, leaves)).collect();
            super::tuple_tokens(items)
        }
        _ => leaves.next().unwrap_or_default(),
    }
}

/// Whether the value of `expr` may be (or contain) the value of a variable rather than only
/// values `expr` computes: its tail, through `let`s, checks, tuples, fields and both sides of a
/// select, is a variable.
pub(super) fn names_a_variable(expr: &Expr) -> bool {
    match &expr.kind {
        ExprKind::Var(_) => true,
        ExprKind::Let(node::Let { body, .. }) | ExprKind::Assert(node::Assert { body, .. }) => names_a_variable(body),
        ExprKind::Project(node::Project { tuple, .. }) => names_a_variable(tuple),
        ExprKind::Tuple(items) => items.iter().any(names_a_variable),
        ExprKind::Select(node::Select { then, otherwise, .. }) => names_a_variable(then) || names_a_variable(otherwise),
        _ => false,
    }
}

/// The columns of a saved fold's state of type `ty` (reverse mode's tape, `Type::stacked`),
/// each with the rank of the array it is a column of (0 for a scalar), by path under `path`:
/// through tuples holding arrays part by part, then through the tuples of an element.
fn state_columns(ty: &Type, path: &TokenStream) -> Vec<(usize, TokenStream)> {
    match ty {
        Type::Tuple { fields, .. } if has_array(ty) => fields
            .iter()
            .enumerate()
            .flat_map(|(position, field)| {
                let position = syn::Index::from(position);
                state_columns(field, &quote!(#path.#position))
            })
            .collect(),
        Type::Array { elem, rank } => {
            tree_at(elem, path).leaves().into_iter().map(|leaf| (*rank, leaf.clone())).collect()
        }
        other => tree_at(other, path).leaves().into_iter().map(|leaf| (0, leaf.clone())).collect(),
    }
}

/// The tapes of a saved fold's state: one per column ([`state_columns`]), a runtime `Tape`
/// for an array's, a `Vec` for a scalar's, in a tuple of the same nesting as the state's
/// columns; `column(rank, state_column)` makes one.
fn tape_tree(
    ty: &Type,
    state: &TokenStream,
    column: &mut impl FnMut(usize, &TokenStream) -> TokenStream,
) -> TokenStream {
    let columns = |elem: &Type, rank: usize, column: &mut dyn FnMut(usize, &TokenStream) -> TokenStream| {
        tree_at(elem, state).map(&mut |leaf| column(rank, leaf)).tuple()
    };
    match ty {
        Type::Tuple { fields, .. } if has_array(ty) => {
            let parts: Vec<TokenStream> = fields
                .iter()
                .enumerate()
                .map(|(position, field)| {
                    let position = syn::Index::from(position);
                    tape_tree(field, &quote!(#state.#position), column)
                })
                .collect();
            super::code::tuple_tokens(parts)
        }
        Type::Array { elem, rank } => columns(elem, *rank, column),
        other => columns(other, 0, column),
    }
}

/// Views of an owned state of type `ty` (arrays viewed, scalars copied), as one expression.
pub(super) fn views_of_state(ty: &Type, state: &TokenStream) -> TokenStream {
    super::map_array_columns(ty, state, &mut |_, column| quote!(#column.view()))
}

/// The reads (`Index` chains, outermost node) in `expr`, in order.
fn collect_reads<'e>(expr: &'e Expr, reads: &mut Vec<&'e Expr>) {
    if matches!(expr.kind, ExprKind::Index(_)) {
        reads.push(expr);
        return;
    }
    expr.for_each_child(|child| collect_reads(child, reads));
}
