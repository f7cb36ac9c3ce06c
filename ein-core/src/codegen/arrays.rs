//! Arrays: comprehensions (allocated once, filled chunk by chunk through `fill_chunks`, the
//! outermost axis in parallel, the innermost as a counted `Fill::fill` loop), array reads (a
//! chain of `Index` nodes folded into one access) and sizes.

use super::code::{tuple_tokens, ArrayValue, Block, Code, Prec, Store, Tree, Value};
use super::expr::{call, scalar_type};
use super::{has_array, internal, primitive, tree_at, Gen, OutColumn};
use crate::analysis::{self, Work};
use crate::ir::node;
use crate::ir::{visit, Bounds, Expr, ExprKind, Literal, NumberClass, Scalar, ScalarType, Type, VarId};
use proc_macro2::{Ident, Span, TokenStream};
use quote::{quote, ToTokens};
use std::collections::BTreeSet;

/// One axis of an output: its length as a `usize` (a local or a literal) and the matching
/// `i64` loop bound.
#[derive(Clone)]
struct Dim {
    len: Code,
    end: Code,
}

impl<'p> Gen<'p> {
    /// A size as a `usize`, checked non-negative (`what`: the index it sizes, for the error).
    pub(super) fn size_usize(&mut self, size: &Expr, what: &str, block: &mut Block) -> syn::Result<Code> {
        match &size.kind {
            ExprKind::Len(node::Len { array, axis }) => {
                // An axis length is never negative: no check.
                let array = self.array(array, block, None)?;
                let first = array.views().first().ok_or_else(|| internal(size.span, "an array with no column"))?;
                let axis = proc_macro2::Literal::usize_unsuffixed(*axis);
                Ok(Code::expr(quote!(#first.len_of(#axis)), Prec::Atom))
            }
            ExprKind::Literal(Literal::Int(value)) if *value >= 0 => {
                let literal = proc_macro2::Literal::usize_suffixed(*value as usize);
                Ok(Code::literal(literal.into_token_stream(), Prec::Atom))
            }
            _ => {
                let code = self.scalar(size, block)?;
                let site = self.site(size.span);
                let tokens = &code.tokens;
                let check = quote!(::ein::__private::check_size(#tokens, #what, &#site));
                Ok(Code::from_parts(check, Prec::Atom, &[&code], None).panics(true))
            }
        }
    }

    /// A size as the `i64` end of a loop range, checked non-negative.
    pub(super) fn size_end(&mut self, size: &Expr, what: &str, block: &mut Block) -> syn::Result<Code> {
        match &size.kind {
            ExprKind::Len(node::Len { array, axis }) => {
                let array = self.array(array, block, None)?;
                let first = array.views().first().ok_or_else(|| internal(size.span, "an array with no column"))?;
                let axis = proc_macro2::Literal::usize_unsuffixed(*axis);
                Ok(Code::expr(quote!(#first.size(#axis)), Prec::Atom))
            }
            ExprKind::Literal(Literal::Int(value)) if *value >= 0 => {
                let literal = proc_macro2::Literal::i64_suffixed(*value);
                Ok(Code::literal(literal.into_token_stream(), Prec::Atom))
            }
            _ => {
                let checked = self.size_usize(size, what, block)?;
                let tokens = &checked.tokens;
                Ok(Code::from_parts(quote!(#tokens as ::core::primitive::i64), Prec::Cast, &[&checked], None))
            }
        }
    }

    /// A dimension of an output, computed once (before the loops that fill it).
    fn dim(&mut self, size: &Expr, what: &str, block: &mut Block) -> syn::Result<Dim> {
        let len = self.size_usize(size, what, block)?;
        if len.simple {
            let end = match &size.kind {
                ExprKind::Literal(Literal::Int(value)) => {
                    Code::literal(proc_macro2::Literal::i64_suffixed(*value).into_token_stream(), Prec::Atom)
                }
                _ => {
                    let tokens = &len.tokens;
                    Code::from_parts(quote!(#tokens as ::core::primitive::i64), Prec::Cast, &[&len], None)
                }
            };
            return Ok(Dim { len, end });
        }
        let name = self.names.fresh(&format!("size_{what}"));
        block.push_let(name.clone(), len);
        let end = Code::expr(quote!(#name as ::core::primitive::i64), Prec::Cast);
        Ok(Dim { len: Code::name(&name), end })
    }

    /// Materialises a comprehension: the maximal chain of directly nested `for`s gives the
    /// outer axes, the body's symbolic shape the inner ones; every size is computed and
    /// checked before any loop runs (sizes never depend on indices). One buffer per column
    /// is filled by `fill_chunks`, a chunk of consecutive values of the outermost index at a
    /// time; the chunk's code is versioned for unit-stride inputs ([`Gen::versioned`]).
    ///
    /// With `out` (columns of an `#[into]` function's `out`, see [`Gen::writing_form`]), the
    /// buffers are those columns (`Destination`s, checked to have the comprehension's shape
    /// before any loop runs), and there is no array value: `Ok(None)`.
    pub(super) fn comprehension(
        &mut self,
        expr: &Expr,
        block: &mut Block,
        hint: Option<Ident>,
        out: Option<&[OutColumn]>,
    ) -> syn::Result<Option<ArrayValue>> {
        let mut chain: Vec<(VarId, &Expr)> = Vec::new();
        let mut body = expr;
        while let ExprKind::For(node::For { index, size, body: inner }) = &body.kind {
            chain.push((*index, size));
            body = inner;
        }
        let Type::Array { elem, rank } = &expr.ty else {
            return Err(internal(expr.span, "a comprehension that is not an array"));
        };
        let mut dims = Vec::new();
        for (index, size) in &chain {
            let name = self.program.var(*index).name.clone();
            dims.push(self.dim(size, &name, block)?);
        }
        if body.ty.rank() > 0 {
            let sizes = self.analysis.body_shape(chain[0].0).ok_or_else(|| {
                internal(body.span, "the shape of a comprehension body cannot be computed before its loops")
            })?;
            let indices: BTreeSet<VarId> = chain.iter().map(|(index, _)| *index).collect();
            let names = self.inner_index_names(body);
            for (axis, size) in sizes.iter().enumerate() {
                if !visit::free_vars(size).is_disjoint(&indices) {
                    return Err(internal(size.span, "a size depends on a comprehension index"));
                }
                let what = names.get(axis).cloned().unwrap_or_else(|| format!("axis {}", chain.len() + axis));
                dims.push(self.dim(size, &what, block)?);
            }
        }
        if dims.len() != *rank {
            return Err(internal(expr.span, format!("a comprehension of rank {rank} with {} axes", dims.len())));
        }

        // The buffers: one per column, of the product of all lengths.
        let lens: Vec<&TokenStream> = dims.iter().map(|dim| &dim.len.tokens).collect();
        let columns = column_scalars(elem);
        let total = match lens.as_slice() {
            [len] => (*len).clone(),
            _ => {
                // Checked once, before anything is allocated: after it, no product of these
                // lengths (the row length below) can wrap.
                let site = self.site(expr.span);
                let name = self.names.fresh("len");
                let count = quote!(::ein::__private::shape_len([#(#lens),*], &#site));
                block.push_let(name.clone(), Code::expr(count, Prec::Atom).panics(true));
                name.into_token_stream()
            }
        };
        let recycled = match &mut self.recycle {
            Some(recycle) if columns.len() == 1 => {
                let spare = recycle.builders.iter().find(|(builder, _)| *builder == expr.id).map(|(_, spare)| spare);
                let spare = spare.cloned();
                if let Some(spare) = &spare {
                    recycle.used.insert(spare.clone());
                }
                spare
            }
            _ => None,
        };
        let shape = quote!([#(#lens),*]);
        let mut out_columns = out.unwrap_or_default().iter();
        let buffers = column_tree(elem, &mut |scalar| match (scalar, &recycled, out_columns.next()) {
            (_, _, Some(OutColumn { view, what, site })) => {
                quote!(::ein::__private::Destination::new(#view, #shape, #what, &#site))
            }
            (_, Some(spare), None) => quote!(::ein::__private::Buffer::recycle(&mut #spare, #total)),
            (scalar, None, None) => match scalar {
                ScalarType::Known(scalar) => {
                    let ty = primitive(scalar);
                    quote!(::ein::__private::Buffer::<#ty>::new(#total))
                }
                // rustc infers the element type from what the rows push.
                ScalarType::Param(_) => quote!(::ein::__private::Buffer::new(#total)),
            },
        });
        let buffer = self.names.fresh("buffer");
        block.push(quote!(let mut #buffer = #buffers;));

        let (outer, _) = chain[0];
        let tiled = self.analysis.is_tiled(outer);
        let by_columns = match chain[..] {
            [_, (inner, _)] => self.analysis.column_jam(outer, inner, body).map(|_| inner),
            _ => None,
        };
        // The rows, in chunks of consecutive rows (one chunk per parallel task). Where the
        // rows are the loops of the axes after the first two, the rows are those of the first
        // two axes taken as one (`for c, y, x` has rows `(c, y)`), so that an output whose first
        // axis is short (3 channels, a batch of 2) still splits into a chunk for every thread.
        // Not where a row may fail: rows of no elements would then be visited, and the row
        // count is only known to fit in `usize` for rows with elements.
        let may_fail = self.analysis.may_fail(body);
        let collapsed =
            by_columns.is_none() && (chain.len() >= 3 || (chain.len() == 2 && has_array(&body.ty))) && !may_fail;
        let row_axes = if collapsed { 2 } else { 1 };
        // A two-axis comprehension of scalars runs its rows in pieces (`fill_pieces`) where
        // they are too few for the pool's threads: 3 rows of a million elements split into
        // pieces of rows. Not where a row may fail, for the same reason.
        let pieces = chain.len() == 2 && !has_array(&body.ty) && !tiled && by_columns.is_none() && !may_fail;
        let piece_len = self.names.fresh("piece_len");
        let rows = product(&lens[..row_axes]);
        let row_len = match &lens[row_axes..] {
            [] => quote!(1),
            rest => product(rest),
        };
        let outer_name = self.names.var(outer).clone();
        let outer_used = self.names.is_referenced(outer);
        let (start, end) = (self.names.fresh("start"), self.names.fresh("end"));
        let row = self.row.clone();
        let outs = self.outs.clone();
        let candidates = self.version_candidates();
        // What the chunk reads from outside: the body's free variables (the sizes were
        // computed above).
        let mut inside = visit::free_vars(body);
        chain.iter().for_each(|(index, _)| {
            inside.remove(index);
        });
        let generate_chunk = |generator: &mut Self| -> syn::Result<TokenStream> {
            let (chunk_block, ()) = generator.versioning(|generator| {
                generator.nested(true, |generator, chunk_block| {
                    if tiled {
                        // The analysis tiles matrices and stacks of them, whose elements may
                        // not fail: each row is one index or two taken as one, then a column.
                        if chain.len() != row_axes + 1 {
                            return Err(internal(body.span, "a tiled comprehension of another depth"));
                        }
                        let count = Code::expr(quote!(#end - #start), Prec::Add);
                        let row_indices: Vec<VarId> = chain[..row_axes].iter().map(|(index, _)| *index).collect();
                        let tile_rows = (&row_indices[..], &start, &dims[1].len.tokens);
                        let (column, row_len) = (chain[row_axes].0, &dims[row_axes].len);
                        generator.fill_tiles(tile_rows, column, &count, row_len, body, chunk_block)
                    } else if let Some(inner) = by_columns {
                        let count = Code::expr(quote!(#end - #start), Prec::Add);
                        generator.fill_columns((outer, &start), inner, &count, &dims[1].len, body, chunk_block)
                    } else if chain.len() == 1 && !has_array(&body.ty) {
                        // One element per row: the whole chunk is one counted loop.
                        let count = Code::expr(quote!(#end - #start), Prec::Add);
                        let offset = start.to_token_stream();
                        generator.fill_loop(outer, &count, Some(offset), body, chunk_block)
                    } else {
                        // Runs of whole rows only: `flat_rows` refuses rows of more than a piece.
                        let run_len = if pieces { piece_len.to_token_stream() } else { row_len.clone() };
                        let flat = generator.flat_runs(&chain, row_axes, body, (&start, &end), &run_len, &dims);
                        let (first, last, inner_dims, prelude) = flat.unwrap_or_else(|| {
                            let inner_dims = dims[row_axes..chain.len()].to_vec();
                            (start.clone(), end.clone(), inner_dims, TokenStream::new())
                        });
                        if collapsed {
                            let rows = generator.collapsed_loop(
                                &chain,
                                &dims[1].len.tokens,
                                &inner_dims,
                                (&first, &last),
                                body,
                            )?;
                            chunk_block.push(quote!(#prelude #rows));
                            return Ok(());
                        }
                        if pieces {
                            let indices = (outer, chain[1].0);
                            let lens = (&dims[1].len.tokens, &inner_dims[0].len.tokens);
                            let pieces = generator.piece_loop(indices, &piece_len, lens, (&first, &last), body)?;
                            chunk_block.push(quote!(#prelude #pieces));
                            return Ok(());
                        }
                        let (row_block, ()) = generator.nested(true, |generator, row_block| {
                            if outer_used {
                                row_block.push(quote!(let #outer_name = #row as ::core::primitive::i64;));
                            }
                            generator.env.insert(outer, Value::Plain(Code::name(&outer_name)));
                            generator.write_axes(&chain[1..], &inner_dims, body, row_block)
                        })?;
                        let row_param = if outer_used { row.to_token_stream() } else { quote!(_) };
                        let row_tokens = row_block.finish(None);
                        chunk_block.push(quote!(#prelude for #row_param in #first..#last { #row_tokens }));
                        Ok(())
                    }
                })
            })?;
            Ok(generator.versioned(&candidates, &inside, body, chunk_block.finish(None)).0)
        };
        let chunk_tokens = match self.fast_trig_flag(body) {
            Some(flag) => {
                let exact = generate_chunk(self)?;
                let fast = self.fast_copy(&flag, generate_chunk)?;
                quote! {
                    let #flag = ::core::cell::Cell::new(false);
                    { #fast }
                    if #flag.get() {
                        ::ein::__private::Fill::rewind(#outs);
                        #exact
                    }
                }
            }
            None => generate_chunk(self)?,
        };
        let copies = self.local_copies(&inside);
        let chunk_tokens = quote!(#copies #chunk_tokens);
        // Elements computed side by side need chunks at least a block wide (a fold per element
        // of 5000 steps got chunks of 3 elements, each alone: 12× the swapped hand loop).
        let widest = match chain.len() == 1 && !has_array(&body.ty) {
            _ if by_columns.is_some() => Some(super::reduce::JAM_WIDEST),
            true if self.analysis.jam(outer, body).is_some() => Some(super::reduce::JAM_WIDEST),
            true if self.analysis.jammed_fold(outer, body).is_some() => Some(super::reduce::FOLD_JAM_WIDE),
            _ => None,
        };
        let min_chunk_rows = match widest {
            _ if tiled => quote!(::ein::__private::jammed_chunk_rows(#rows, ::ein::__private::TILE_HEIGHT)),
            Some(widest) => {
                let widest = proc_macro2::Literal::usize_unsuffixed(widest);
                quote!(::ein::__private::jammed_chunk_rows(#rows, #widest))
            }
            None => quote!(1),
        };
        // Rows of no elements are still visited, as the semantics evaluates their `let`s (see
        // `fill_chunks`); when nothing in them can fail, there is nothing to see, so none are.
        // (That also keeps the product of the collapsed rows' lengths from wrapping: with
        // elements, the rows hold at most the checked total.)
        let rows =
            if chain.len() > 1 && !may_fail { quote!(if #row_len == 0 { 0 } else { #rows }) } else { rows.clone() };
        let work = match self.analysis.row_work(outer) {
            Some(work) => self.work(work, &dims)?.tokens(),
            None => return Err(internal(expr.span, "a comprehension without a work estimate")),
        };
        // The estimate is of a row of the first axis, which holds a collapsed row per index of
        // the second; a collapsed row writes its elements at least.
        let work = match collapsed {
            true => {
                let second_len = &dims[1].len.tokens;
                quote!(::core::cmp::Ord::max((#work) / ::core::cmp::Ord::max(#second_len, 1), #row_len))
            }
            false => work,
        };
        block.push(match pieces {
            true => quote! {
                ::ein::__private::fill_pieces(&mut #buffer, #rows, #row_len, #work, |#start, #end, #piece_len, #outs| {
                    #chunk_tokens
                });
            },
            false => quote! {
                ::ein::__private::fill_chunks(&mut #buffer, #rows, #row_len, #min_chunk_rows, #work, |#start, #end, #outs| {
                    #chunk_tokens
                });
            },
        });

        if out.is_some() {
            for column in tree_at(elem, &buffer.to_token_stream()).leaves() {
                block.push(quote!(#column.finish();));
            }
            return Ok(None);
        }

        // The arrays and their views.
        let store = self.names.fresh("store");
        let arrays = tree_at(elem, &buffer.into_token_stream()).map(&mut |column| quote!(#column.into_array(#shape)));
        block.push_let(store.clone(), Code::expr(arrays.tuple(), Prec::Atom));
        Ok(Some(self.views_of_store(elem, store, hint, block)))
    }

    /// An elementwise comprehension over `chain` whose reads are all `x[i, j, …]`
    /// ([`analysis::flat_reads`]) runs the rows `start..end` of a chunk as one row when every
    /// array it reads holds them contiguously (`View::flat_rows` of the runtime), so
    /// short rows cost no per-row loop. Failing that, one whose reads all end in its innermost
    /// indices, `x[…, h, w]` ([`analysis::tail_reads`]), runs those axes as one
    /// (`View::flat_tail`) where every such array holds them contiguously: a 7 × 7 plane is
    /// one row of 49. Returns the rows to loop over (`first..last`: one, or the chunk's), the
    /// inner axes' lengths to loop with (1, …, 1 and the element count of the merged axes,
    /// or the axes'), and the statement that chooses between the two and rebinds the arrays'
    /// views to the runs. `row_axes`: how many leading axes the rows are of (1, or 2 for
    /// collapsed rows, whose runs are `View::flat_rows_of`).
    #[allow(clippy::type_complexity)]
    fn flat_runs(
        &mut self,
        chain: &[(VarId, &Expr)],
        row_axes: usize,
        body: &Expr,
        (start, end): (&Ident, &Ident),
        row_len: &TokenStream,
        dims: &[Dim],
    ) -> Option<(Ident, Ident, Vec<Dim>, TokenStream)> {
        let indices: Vec<VarId> = chain.iter().map(|(index, _)| *index).collect();
        let (&last_index, _) = indices.split_last()?;
        if indices.len() < 2 || has_array(&body.ty) {
            return None;
        }
        let whole = analysis::flat_reads(&indices, body).filter(|_| self.analysis.jam(last_index, body).is_none());
        if let Some(views) = whole.and_then(|arrays| self.run_views(arrays)) {
            let (first, last) = (self.names.fresh("first"), self.names.fresh("last"));
            let runs = views
                .iter()
                .map(|view| match row_axes {
                    1 => quote!(#view.flat_rows(#start, #end, #row_len)),
                    _ => quote!(#view.flat_rows_of(#row_axes, #start, #end, #row_len)),
                })
                .collect();
            let leading = [quote!(#first, #last,), quote!(0, 1,), quote!(#start, #end,)];
            let count = quote!((#end - #start) * #row_len);
            let (inner_dims, prelude) = self.merged_axes(&views, runs, &dims[row_axes..indices.len()], leading, count);
            return Some((first, last, inner_dims, prelude));
        }
        // The rows stay apart; the longest tail of inner axes whose reads allow it is merged.
        for merged in (2..=indices.len().saturating_sub(row_axes)).rev() {
            let tail = &indices[indices.len() - merged..];
            let Some(views) = analysis::tail_reads(tail, body).and_then(|arrays| self.run_views(arrays)) else {
                continue;
            };
            let (kept, tail_dims) = dims[row_axes..indices.len()].split_at(indices.len() - row_axes - merged);
            let axis_lens: Vec<&TokenStream> = tail_dims.iter().map(|dim| &dim.len.tokens).collect();
            let runs = views.iter().map(|view| quote!(#view.flat_tail([#(#axis_lens),*]))).collect();
            let count = quote!(1usize #(* #axis_lens)*);
            let leading = [TokenStream::new(), TokenStream::new(), TokenStream::new()];
            let (merged_dims, prelude) = self.merged_axes(&views, runs, tail_dims, leading, count);
            let inner_dims = kept.iter().cloned().chain(merged_dims).collect();
            return Some((start.clone(), end.clone(), inner_dims, prelude));
        }
        None
    }

    /// The loop over the collapsed rows `first..last` of a comprehension over `chain` (rows of
    /// its first two axes taken as one, the second of length `second_len`): binds the two
    /// indices to the row's and writes the inner axes (lengths `inner_dims`).
    fn collapsed_loop(
        &mut self,
        chain: &[(VarId, &Expr)],
        second_len: &TokenStream,
        inner_dims: &[Dim],
        (first, last): (&Ident, &Ident),
        body: &Expr,
    ) -> syn::Result<TokenStream> {
        let next = self.names.fresh("next_row");
        let (start_row, next_row) = counted_position(&next, first, second_len);
        let bound = tuple_tokens(chain[..2].iter().map(|(index, _)| self.names.pattern(*index)).collect());
        let (row_block, ()) = self.nested(true, |generator, row_block| {
            row_block.push(quote! {
                let #bound = (#next.0 as ::core::primitive::i64, #next.1 as ::core::primitive::i64);
                #next_row
            });
            for (index, _) in &chain[..2] {
                let name = generator.names.var(*index).clone();
                generator.env.insert(*index, Value::Plain(Code::name(&name)));
            }
            generator.write_axes(&chain[2..], inner_dims, body, row_block)
        })?;
        let row_tokens = row_block.finish(None);
        Ok(quote!(#start_row for _ in #first..#last { #row_tokens }))
    }

    /// The loop over the pieces `first..last` of rows of a two-axis comprehension (`outer`,
    /// `inner`) of scalars, each piece `piece_len` elements of a row of `row_len` but the last
    /// of a row (`fill_pieces`): binds `outer` to the piece's row and fills its elements. Where
    /// a piece is a row, `run_len` elements: the row's, or the chunk's when its rows run as one
    /// (`flat_runs`, which then loops over one "row").
    fn piece_loop(
        &mut self,
        (outer, inner): (VarId, VarId),
        piece_len: &Ident,
        (row_len, run_len): (&TokenStream, &TokenStream),
        (first, last): (&Ident, &Ident),
        body: &Expr,
    ) -> syn::Result<TokenStream> {
        let (per_row, next) = (self.names.fresh("pieces_per_row"), self.names.fresh("next_piece"));
        let (start_piece, next_piece) = counted_position(&next, first, &per_row.to_token_stream());
        let (piece_first, count) = (self.names.fresh("piece_first"), self.names.fresh("piece_count"));
        let outer_name = self.names.var(outer).clone();
        let row_pattern = self.names.pattern(outer);
        let (piece_block, ()) = self.nested(true, |generator, piece_block| {
            piece_block.push(quote! {
                let (#row_pattern, #piece_first) = (#next.0 as ::core::primitive::i64, #next.1 * #piece_len);
                #next_piece
                let #count = if #piece_len == #row_len {
                    #run_len
                } else {
                    ::core::cmp::Ord::min(#piece_len, #row_len - #piece_first)
                };
            });
            generator.env.insert(outer, Value::Plain(Code::name(&outer_name)));
            let offset = Some(piece_first.to_token_stream());
            generator.fill_loop(inner, &Code::name(&count), offset, body, piece_block)
        })?;
        let piece_tokens = piece_block.finish(None);
        Ok(quote! {
            let #per_row = ::core::primitive::usize::div_ceil(#row_len, #piece_len);
            #start_piece
            for _ in #first..#last { #piece_tokens }
        })
    }

    /// The local views of `arrays` (each once), if each is a local view with no transposed
    /// copy.
    pub(super) fn run_views(&self, arrays: std::collections::BTreeSet<VarId>) -> Option<Vec<Ident>> {
        let mut views = Vec::new();
        for array in arrays {
            if self.analysis.transposed_copies_of(array).next().is_some() {
                return None;
            }
            match self.env.get(&array) {
                Some(Value::Array(value)) => {
                    let view = value.as_local()?;
                    if !views.contains(view) {
                        views.push(view.clone());
                    }
                }
                _ => return None,
            }
        }
        (!views.is_empty()).then_some(views)
    }

    /// The lengths to loop with over axes `dims` that may be merged into one, and the `let`
    /// that binds them and rebinds the `views`: when every one of `runs` is `Some`, the views
    /// become those runs and the lengths 1, …, 1, `count`, else the axes' own. `leading`:
    /// names bound first, their values when merged and when not.
    fn merged_axes(
        &mut self,
        views: &[Ident],
        runs: Vec<TokenStream>,
        dims: &[Dim],
        [pattern, merged, apart]: [TokenStream; 3],
        count: TokenStream,
    ) -> (Vec<Dim>, TokenStream) {
        let lens: Vec<Ident> = dims.iter().map(|_| self.names.fresh("run_len")).collect();
        let inner_dims = lens
            .iter()
            .map(|len| Dim {
                len: Code::name(len),
                end: Code::expr(quote!(#len as ::core::primitive::i64), Prec::Cast),
            })
            .collect();
        let ones = lens[..lens.len().saturating_sub(1)].iter().map(|_| quote!(1));
        let axis_lens = dims.iter().map(|dim| dim.len.tokens.clone());
        let runs = tuple_tokens(runs);
        let somes = tuple_tokens(views.iter().map(|view| quote!(::core::option::Option::Some(#view))).collect());
        let prelude = quote! {
            let (#pattern #(#lens,)* #(#views,)*) = match #runs {
                #somes => (#merged #(#ones,)* #count, #(#views,)*),
                _ => (#apart #(#axis_lens,)* #(#views,)*),
            };
        };
        (inner_dims, prelude)
    }

    /// A work estimate of the analysis as a `usize` (see [`Work`]): `dims` are the lengths of
    /// the comprehension's axes. A size that would need statements of its own (or could panic)
    /// to print counts as [`analysis::UNKNOWN_SIZE`].
    fn work(&mut self, work: &Work<'_>, dims: &[Dim]) -> syn::Result<Printed> {
        Ok(match work {
            Work::Const(value) => Printed::Const(*value),
            Work::Axis(axis) => match dims.get(*axis) {
                Some(dim) => Printed::Tokens(dim.len.tokens.clone()),
                None => return Err(internal(Span::call_site(), format!("a work estimate of axis {axis}"))),
            },
            Work::Size(size) => self.size_work(size)?,
            Work::Sum(left, right) => self.work(left, dims)?.add(self.work(right, dims)?),
            Work::Product(left, right) => self.work(left, dims)?.mul(self.work(right, dims)?),
            Work::AtLeastOne(work) => self.work(work, dims)?.at_least_one(),
        })
    }

    /// A work estimate with no comprehension axis in it (a reduction step's), as a `usize`
    /// expression.
    pub(super) fn work_tokens(&mut self, work: &Work<'_>) -> syn::Result<TokenStream> {
        Ok(self.work(work, &[])?.tokens())
    }

    /// A loop size of a work estimate, evaluated before the loops.
    fn size_work(&mut self, size: &Expr) -> syn::Result<Printed> {
        let unknown = Printed::Const(analysis::UNKNOWN_SIZE);
        let mut scratch = Block::new();
        if let ExprKind::Len(_) = &size.kind {
            // An axis length is a `usize` already.
            let code = self.size_usize(size, "", &mut scratch)?;
            if scratch.len() == 0 && !code.may_panic {
                return Ok(Printed::Tokens(code.tokens));
            }
            return Ok(unknown);
        }
        let code = self.scalar(size, &mut scratch)?;
        if scratch.len() > 0 || code.may_panic {
            return Ok(unknown);
        }
        let tokens = &code.tokens;
        Ok(Printed::Tokens(quote!(::ein::__private::size_or_zero(#tokens))))
    }

    /// `let name = store.view();` (per column) and the array value over it.
    pub(super) fn views_of_store(
        &mut self,
        elem: &Type,
        store: Ident,
        hint: Option<Ident>,
        block: &mut Block,
    ) -> ArrayValue {
        let name = hint.unwrap_or_else(|| self.names.fresh("view"));
        let views = tree_at(elem, &store.to_token_stream()).map(&mut |column| quote!(#column.view()));
        let read = block.push_view(name.clone(), views.tuple(), None);
        let store = Store { root: store, fields: Vec::new(), level: self.level };
        ArrayValue::bound(tree_at(elem, &name.to_token_stream()), Some(store), Some(read), Some(&name))
    }

    /// The loops of the remaining directly nested axes (their lengths computed already), then
    /// the body's elements. The innermost axis of a scalar body is a counted [`Gen::fill_loop`].
    fn write_axes(
        &mut self,
        chain: &[(VarId, &Expr)],
        dims: &[Dim],
        body: &Expr,
        block: &mut Block,
    ) -> syn::Result<()> {
        let Some(((index, _), rest)) = chain.split_first() else {
            return self.write_elements(body, block);
        };
        if rest.is_empty() && !has_array(&body.ty) {
            return self.fill_loop(*index, &dims[0].len, None, body, block);
        }
        let name = self.names.var(*index).clone();
        let (inner, ()) = self.nested(true, |generator, inner| {
            generator.env.insert(*index, Value::Plain(Code::name(&name)));
            generator.write_axes(rest, &dims[1..], body, inner)
        })?;
        let end = &dims[0].end.tokens;
        let inner = inner.finish(None);
        block.push(quote!(for #name in 0..#end { #inner }));
        Ok(())
    }

    /// `Fill::fill(outs, count, |position, slot| { let index = (offset + position) as i64;
    /// Push::push(slot, body); })`: the innermost loop of a comprehension with a scalar (or
    /// tuple) body, a counted loop that checks once that its `count` elements fit.
    fn fill_loop(
        &mut self,
        index: VarId,
        count: &Code,
        offset: Option<TokenStream>,
        body: &Expr,
        block: &mut Block,
    ) -> syn::Result<()> {
        let (reads, wraps) = (self.analysis.interior_reads(index), self.analysis.interior_wraps(index));
        let guards = self.analysis.interior_guards(index);
        if reads.is_empty() && wraps.is_empty() && guards.is_empty() {
            return self.fill_run(index, count.tokens.clone(), offset, body, block);
        }
        // Clamped reads of `array[.., index + shift, ..]`: split the loop into its edges, where
        // they clamp, and its interior, where they cannot leave the array and read unchecked.
        // Elements are still computed in order, so failures happen exactly where they did.
        // A window read `index + w + shift`, `w` in `0..size`, needs both extremes in range:
        // `shift` and `shift + size - 1` (with no steps, `size <= 0`, nothing is read).
        // A wrapping remainder `(index + c) % n` is known not to wrap, or to wrap, where
        // `index + shift` is in `0..n`, as a read shifted by `shift` of an axis of length `n`.
        // A comparison `index + shift >= 0` or `index + shift < bound` (a guard) holds
        // where `index + shift` is in `0..bound` (`usize::MAX` when it has no upper side).
        let mut shifts = Vec::new();
        for guard in guards {
            shifts.push(match guard.bound {
                Some(bound) => {
                    let (bound, shift) = (self.scalar(bound, block)?.tokens, guard.shift.max(0));
                    quote!((::ein::__private::size_or_zero(#bound), #shift))
                }
                None => {
                    let shift = guard.shift.min(0);
                    quote!((::core::primitive::usize::MAX, #shift))
                }
            });
        }
        for wrap in wraps {
            let modulus = self.scalar(wrap.modulus, block)?.tokens;
            let shift = wrap.shift;
            shifts.push(quote!((::ein::__private::wrap_modulus(#modulus), #shift)));
        }
        match self.read_shifts(reads, body.span, block)? {
            Some(read_shifts) => shifts.extend(read_shifts),
            None => return self.fill_run(index, count.tokens.clone(), offset, body, block),
        }
        let (low, high) = (self.names.fresh("low"), self.names.fresh("high"));
        let count = count.operand(Prec::Add);
        let start = offset.clone().unwrap_or_else(|| quote!(0));
        block.push(quote! {
            let (#low, #high) = ::ein::__private::interior(#start, #count, &[#(#shifts),*]);
        });
        let shifted = |base: &Ident| match &offset {
            Some(offset) => quote!(#offset + #base),
            None => base.to_token_stream(),
        };
        self.fill_run(index, low.to_token_stream(), offset.clone(), body, block)?;
        let outer = self.interior.len();
        self.interior.extend(reads.iter().cloned());
        self.wrap_interior.push(index);
        let interior = self.fill_run(index, quote!(#high - #low), Some(shifted(&low)), body, block);
        self.wrap_interior.pop();
        self.interior.truncate(outer);
        interior?;
        self.fill_run(index, quote!(#count - #high), Some(shifted(&high)), body, block)
    }

    /// The `(axis length, shift)` pairs for the runtime's `interior` that keep `reads` in
    /// range (see [`Gen::fill_loop`]), computed before the loop; `None` when an array is not a
    /// view here.
    pub(super) fn read_shifts(
        &mut self,
        reads: &[crate::analysis::Interior<'p>],
        span: Span,
        block: &mut Block,
    ) -> syn::Result<Option<Vec<TokenStream>>> {
        let mut shifts = Vec::new();
        for read in reads {
            let view = match self.env.get(&read.array) {
                Some(Value::Array(array)) => array.views().first().cloned(),
                _ => None,
            };
            let Some(view) = view else { return Ok(None) };
            let axis = proc_macro2::Literal::usize_unsuffixed(read.axis);
            // A shift with terms is computed here, before the loop, exactly (`exact_shift`).
            let literal = read.shift.literal;
            let shift = if read.shift.terms.is_empty() {
                literal.to_token_stream()
            } else {
                let (mut added, mut subtracted) = (Vec::new(), Vec::new());
                for (negated, term) in &read.shift.terms {
                    let term = self.scalar(term, block)?.tokens;
                    if *negated {
                        subtracted.push(term)
                    } else {
                        added.push(term)
                    }
                }
                let name = self.names.fresh("shift");
                block.push(quote! {
                    let #name = ::ein::__private::exact_shift(#literal, &[#(#added),*], &[#(#subtracted),*]);
                });
                name.into_token_stream()
            };
            shifts.push(quote!((#view.len_of(#axis), #shift)));
            if let Some((window, negated)) = read.window {
                let size = self
                    .analysis
                    .window_size(window)
                    .ok_or_else(|| internal(span, "a window read without its reduction"))?;
                let size = self.scalar(size, block)?.tokens;
                // The window's far end: `size - 1` steps after (or before, subtracted) the shift.
                let combine = if negated { quote!(saturating_sub) } else { quote!(saturating_add) };
                shifts.push(quote! {
                    (#view.len_of(#axis), ::core::primitive::i64::#combine(#shift, ::core::primitive::i64::saturating_sub(#size, 1)))
                });
            }
        }
        Ok(Some(shifts))
    }

    /// The reads of `reads` (interior reads of a loop whose body is `body`) that some read in
    /// `body` makes outside the interiors already in force here: a reduction inside a
    /// comprehension's interior needs no second test for the window reads that interior
    /// covers.
    pub(super) fn uncovered(
        &self,
        reads: &[crate::analysis::Interior<'p>],
        body: &Expr,
    ) -> Vec<crate::analysis::Interior<'p>> {
        fn any_uncovered(generator: &Gen<'_>, read: &crate::analysis::Interior<'_>, expr: &Expr) -> bool {
            if let ExprKind::Index(_) = &expr.kind {
                let (base, positions) = expr.read_chain();
                let at_read = matches!(base.kind, ExprKind::Var(array) if array == read.array);
                if let Some(&(position, Bounds::Clamped)) = positions.get(read.axis).filter(|_| at_read) {
                    if generator.analysis.is_position_of(read, position)
                        && !generator.is_interior(base, read.axis, position)
                    {
                        return true;
                    }
                }
            }
            let mut found = false;
            expr.for_each_child(|child| found = found || any_uncovered(generator, read, child));
            found
        }
        reads.iter().filter(|read| any_uncovered(self, read, body)).cloned().collect()
    }

    /// One `Fill::fill` loop of `count` elements whose index starts at `offset`; an element
    /// that is a nest of short reductions ([`crate::analysis::Jam`]) first runs side by side
    /// for blocks of elements ([`Gen::jammed_run`]).
    fn fill_run(
        &mut self,
        index: VarId,
        count: TokenStream,
        offset: Option<TokenStream>,
        body: &Expr,
        block: &mut Block,
    ) -> syn::Result<()> {
        let jammed = match (self.analysis.jam(index, body), self.analysis.jammed_fold(index, body)) {
            (Some(jam), _) => Some(self.jammed_run(index, &jam, body, &count, &offset, block)?),
            (None, Some(fold)) => Some(self.jammed_folds(index, &fold, body, &count, &offset, block)?),
            (None, None) => None,
        };
        let (count, offset) = match jammed {
            Some(done) => {
                let offset = match offset {
                    Some(offset) => quote!(#offset + #done),
                    None => done.to_token_stream(),
                };
                (quote!(#count - #done), Some(offset))
            }
            None => (count, offset),
        };
        let outs = self.outs.clone();
        let position = self.names.fresh("position");
        let name = self.names.var(index).clone();
        let used = self.names.is_referenced(index);
        let (inner, value) = self.nested(true, |generator, inner| {
            if used {
                let at = match &offset {
                    Some(offset) => quote!((#offset + #position)),
                    None => position.to_token_stream(),
                };
                inner.push(quote!(let #name = #at as ::core::primitive::i64;));
            }
            generator.env.insert(index, Value::Plain(Code::name(&name)));
            generator.scalar(body, inner)
        })?;
        let mut inner = inner;
        let slot = self.names.fresh("slot");
        let value = &value.tokens;
        inner.push(quote!(::ein::__private::Push::push(#slot, #value);));
        let position_param = if used { position.to_token_stream() } else { quote!(_) };
        let inner = inner.finish(None);
        block.push(quote! {
            ::ein::__private::Fill::fill(#outs, #count, |#position_param, #slot| { #inner });
        });
        Ok(())
    }

    /// `Fill::fill_tiled(outs, (rows, row_len), start, |row| row + 1, |row, column, slot| {
    /// let i = row as i64; let j = column as i64; Push::push(slot, body); })`: the
    /// comprehension whose body reads across rows, written tile by tile. Its rows are those of
    /// `row_indices`: one index (`for i, j`), or two taken as one (`for c, i, j`, rows
    /// `(c, i)`, the second's length `second_len`), counted as pairs from the chunk's first
    /// (one division per chunk, not one per element).
    fn fill_tiles(
        &mut self,
        (row_indices, start, second_len): (&[VarId], &Ident, &TokenStream),
        inner: VarId,
        rows: &Code,
        row_len: &Code,
        body: &Expr,
        block: &mut Block,
    ) -> syn::Result<()> {
        let outs = self.outs.clone();
        let (row, column, slot) = (self.names.fresh("row"), self.names.fresh("column"), self.names.fresh("slot"));
        let inner_name = self.names.var(inner).clone();
        let outer_used = row_indices.iter().any(|&index| self.names.is_referenced(index));
        let inner_used = self.names.is_referenced(inner);
        let (first_row, next_row, bind_row) = match row_indices {
            [outer] => {
                let outer_name = self.names.var(*outer).clone();
                (
                    start.to_token_stream(),
                    quote!(|#row: ::core::primitive::usize| #row + 1),
                    quote!(let #outer_name = #row as ::core::primitive::i64;),
                )
            }
            [first, second] => {
                let bound = tuple_tokens(vec![self.names.pattern(*first), self.names.pattern(*second)]);
                let (high, low) = (self.names.fresh("high"), self.names.fresh("low"));
                let moved = next_part((&high.to_token_stream(), &low.to_token_stream()), second_len);
                (
                    quote!((#start / #second_len, #start % #second_len)),
                    quote!(|(#high, #low): (::core::primitive::usize, ::core::primitive::usize)| { #moved }),
                    quote!(let #bound = (#row.0 as ::core::primitive::i64, #row.1 as ::core::primitive::i64);),
                )
            }
            _ => return Err(internal(Span::call_site(), "tiles over rows of more than two axes")),
        };
        let (mut element, value) = self.nested(true, |generator, element| {
            if outer_used {
                element.push(bind_row);
            }
            if inner_used {
                element.push(quote!(let #inner_name = #column as ::core::primitive::i64;));
            }
            for &index in row_indices.iter().chain([&inner]) {
                let name = generator.names.var(index).clone();
                generator.env.insert(index, Value::Plain(Code::name(&name)));
            }
            generator.scalar(body, element)
        })?;
        let value = &value.tokens;
        element.push(quote!(::ein::__private::Push::push(#slot, #value);));
        let row_param = if outer_used { row.to_token_stream() } else { quote!(_) };
        let column_param = if inner_used { column.to_token_stream() } else { quote!(_) };
        let (rows, row_len, element) = (&rows.tokens, &row_len.tokens, element.finish(None));
        block.push(quote! {
            ::ein::__private::Fill::fill_tiled(
                #outs,
                (#rows, #row_len),
                #first_row,
                #next_row,
                |#row_param, #column_param, #slot| { #element },
            );
        });
        Ok(())
    }

    /// `Fill::fill_columns(outs, rows, row_len, |column, column_outs| { let j = column as i64;
    /// … })`: the two-axis comprehension `for i, j { body }` whose element is a
    /// [`crate::analysis::Analysis::column_jam`], a column at a time, each column's `rows`
    /// elements (`i` from `start`) computed side by side as a rank-1 comprehension's are
    /// ([`Gen::fill_run`]).
    fn fill_columns(
        &mut self,
        (outer, start): (VarId, &Ident),
        inner: VarId,
        rows: &Code,
        row_len: &Code,
        body: &Expr,
        block: &mut Block,
    ) -> syn::Result<()> {
        let (column, column_outs) = (self.names.fresh("column"), self.names.fresh("column_outs"));
        let inner_name = self.names.var(inner).clone();
        let inner_used = self.names.is_referenced(inner);
        let outs = std::mem::replace(&mut self.outs, column_outs.clone());
        let filled = self.nested(true, |generator, column_block| {
            if inner_used {
                column_block.push(quote!(let #inner_name = #column as ::core::primitive::i64;));
            }
            generator.env.insert(inner, Value::Plain(Code::name(&inner_name)));
            generator.fill_run(outer, rows.tokens.clone(), Some(start.to_token_stream()), body, column_block)
        });
        self.outs = outs;
        let (column_block, ()) = filled?;
        let column_param = if inner_used { column.to_token_stream() } else { quote!(_) };
        let (outs, rows, row_len, column_block) =
            (&self.outs, &rows.tokens, &row_len.tokens, column_block.finish(None));
        block.push(quote! {
            ::ein::__private::Fill::fill_columns(#outs, #rows, #row_len, |#column_param, #column_outs| { #column_block });
        });
        Ok(())
    }

    /// Writes the elements of `body`, in row-major order, into the current chunk's outs:
    /// loops for nested comprehensions (a counted fill for the innermost), a push for a
    /// scalar or tuple, a copy for an array.
    fn write_elements(&mut self, body: &Expr, block: &mut Block) -> syn::Result<()> {
        let outs = self.outs.clone();
        match &body.kind {
            ExprKind::For(node::For { index, size, body: inner }) => {
                let what = self.program.var(*index).name.clone();
                if !has_array(&inner.ty) {
                    let count = self.size_usize(size, &what, block)?;
                    return self.fill_loop(*index, &count, None, inner, block);
                }
                let end = self.size_end(size, &what, block)?;
                let name = self.names.var(*index).clone();
                let (inner, ()) = self.nested(true, |generator, inner_block| {
                    generator.env.insert(*index, Value::Plain(Code::name(&name)));
                    generator.write_elements(inner, inner_block)
                })?;
                let (end, inner) = (&end.tokens, inner.finish(None));
                block.push(quote!(for #name in 0..#end { #inner }));
                Ok(())
            }
            ExprKind::Let(node::Let { var, value, body }) => {
                self.bind_let(*var, value, block)?;
                self.write_elements(body, block)
            }
            ExprKind::Assert(node::Assert { checks, body }) => {
                self.size_checks(checks, block)?;
                self.write_elements(body, block)
            }
            // A row that is a scan: its states straight into the outs, no array of its own.
            ExprKind::Scan(scan) if !has_array(&scan.init.ty) => {
                let (len, initial) = self.scan_start(scan, block)?;
                self.scan_states(scan, &len, &initial, block)
            }
            _ if !has_array(&body.ty) => {
                let value = self.scalar(body, block)?;
                let value = &value.tokens;
                block.push(quote!(::ein::__private::Push::push(#outs, #value);));
                Ok(())
            }
            _ => {
                let array = self.array(body, block, None)?;
                let views = array.views().tuple();
                block.push(quote!(::ein::__private::CopyInto::copy_into(&#views, #outs);));
                Ok(())
            }
        }
    }

    /// A read `a[i][j]…`: the chain of `Index` nodes over one base becomes one access, of the
    /// columns selected by `projection` (`p[i].re` reads only the `re` column).
    pub(super) fn read(
        &mut self,
        expr: &Expr,
        projection: &[usize],
        block: &mut Block,
        hint: Option<Ident>,
    ) -> syn::Result<Value> {
        if let Some(&(copy, axis)) = self.transposed_reads.get(&expr.id) {
            let read = transposed_read(expr, copy, axis, &self.program.var(copy).ty);
            return self.read(&read, projection, block, hint);
        }
        let mut indices: Vec<(&Expr, Bounds)> = Vec::new();
        let mut base = expr;
        while let ExprKind::Index(node::Index { array, index, bounds }) = &base.kind {
            indices.push((index, *bounds));
            base = array;
        }
        indices.reverse();
        let Type::Array { elem, rank } = &base.ty else {
            return Err(internal(base.span, "indexing a value that is not an array"));
        };
        if indices.len() > *rank {
            return Err(internal(expr.span, format!("{} indices into an array of rank {rank}", indices.len())));
        }
        let array = self.array(base, block, None)?;
        // Marked read below unless a view `let` of a part of it is all that reads it.
        let first = array.views_unread().first().ok_or_else(|| internal(base.span, "an array with no column"))?.clone();
        let (mut views, mut elem) = (array.views_unread().clone(), (**elem).clone());
        for &field in projection {
            (views, elem) = match (views, elem) {
                (Tree::Node(mut columns), Type::Tuple { mut fields, .. })
                    if field < columns.len() && field < fields.len() =>
                {
                    (columns.swap_remove(field), fields.swap_remove(field))
                }
                _ => return Err(internal(expr.span, format!("field {field} of an element without it"))),
            };
        }

        // Errors name the user's array; arrays the user never named get an empty name, which
        // the runtime words as "a computed array" (as the interpreter does).
        let array_name = match &base.kind {
            ExprKind::Var(var) if !self.program.var(*var).is_synthetic() => self.program.var(*var).name.clone(),
            _ => String::new(),
        };
        // Each axis's index is evaluated, then clamped, before the next axis's index (the
        // IR's order, which matters only for which error is reported first).
        let mut positions: Vec<Code> = Vec::new();
        for (axis, (index, bounds)) in indices.iter().enumerate() {
            let at = block.len();
            let code = self.scalar(index, block)?;
            self.settle_all(&mut positions, at, block);
            let ty = scalar_type(&index.ty, index.span)?;
            let position = match bounds {
                // Safety argument for `get_unchecked`/`sub_unchecked` below: a `Proven` index
                // is one the prover (`sizes::prove_bounds`, re-run on the optimised IR by
                // `passes::validate_bounds`) showed in `0..len` of this axis (an index variable,
                // possibly plus c ≥ 0, whose range is the axis, or the axis less d ≥ c, by
                // construction or by an `Assert` that ran before the loop; or a remainder of a
                // non-negative sum by the axis's length), so it is in range and the conversion
                // to usize is exact.
                Bounds::Proven => self.proven_position(code, ty, index.span)?,
                // A `Clamped` index goes through `clamp_index`, which returns a value in
                // `0..len` of this axis or panics (empty axis): also in range.
                // Safety argument for an interior read: `fill_loop` runs this code only for the
                // positions `interior` (in the runtime) returned for this array's axis length
                // and this shift, where `index + shift` lies in `0..len`; for a window read
                // `index + w + shift`, `w` a reduction index in `0..size` (`size` invariant in
                // the loop, computed before it), for both `shift` and `shift + size - 1`, so
                // for every `w` the reduction reaches.
                Bounds::Clamped if self.is_interior(base, axis, index) => self.proven_position(code, ty, index.span)?,
                Bounds::Clamped => {
                    let index_i64 = self.index_i64(code, ty, index.span)?;
                    let site = self.site(index.span);
                    let axis_literal = proc_macro2::Literal::usize_unsuffixed(axis);
                    let named_axis = match (&base.kind, &self.mirrored) {
                        (ExprKind::Var(var), Some((mirror, params))) if params.contains(var) => {
                            mirror.axis(axis, indices.len())
                        }
                        _ => axis,
                    };
                    let named_axis = proc_macro2::Literal::usize_unsuffixed(named_axis);
                    let tokens = &index_i64.tokens;
                    let clamp = quote! {
                        ::ein::__private::clamp_index(#tokens, #first.len_of(#axis_literal), #array_name, #named_axis, &#site)
                    };
                    Code::from_parts(clamp, Prec::Atom, &[&index_i64], None).panics(true)
                }
            };
            positions.push(position);
        }
        // `unsafe` blocks must not nest, and several columns must not clamp twice: such
        // positions are computed first, in order.
        let columns = views.leaves().len();
        if positions.iter().any(|position| position.has_unsafe || columns > 1 && position.may_panic) {
            for position in positions.iter_mut().filter(|position| !position.simple) {
                let name = self.names.fresh("at");
                block.push_let(name.clone(), position.clone());
                *position = Code::name(&name);
            }
        }
        let may_panic = positions.iter().any(|position| position.may_panic);
        let position_tokens = positions.iter().map(|position| &position.tokens);
        let at = quote!([#(#position_tokens),*]);

        let remaining = rank - indices.len();
        if remaining == 0 {
            array.mark_read();
            // A view known to have last stride 1 is read with the last index unscaled.
            let get = if array.unit_last() { quote!(get_unit_unchecked) } else { quote!(get_unchecked) };
            // SAFETY (of the generated block): every position in `at` is in range (the
            // argument at `positions` above), and `at` holds only ein's own index code: user
            // expressions (captured locals) were read into locals by the prologue; for
            // `get_unit_unchecked`, the view's last stride is 1 (`ArrayValue::unit_last`: an
            // array's own view, or a sub-view of one at leading indices).
            let reads = views.map(&mut |view| quote!(unsafe { #view.#get(#at) }));
            let (tokens, block_start) = match &reads {
                Tree::Leaf(read) => (read.clone(), true),
                node => (node.tuple(), false),
            };
            return Ok(Value::Plain(Code {
                tokens,
                prec: Prec::Atom,
                simple: false,
                may_panic,
                has_unsafe: true,
                block_start,
                local: None,
            }));
        }
        let (k, m) =
            (proc_macro2::Literal::usize_unsuffixed(indices.len()), proc_macro2::Literal::usize_unsuffixed(remaining));
        // SAFETY (of the generated block): as for `get_unchecked` above.
        let subs = views.map(&mut |view| quote!(unsafe { #view.sub_unchecked::<#k, #m>(#at) }));
        let name = hint.unwrap_or_else(|| self.names.fresh("sub"));
        let read = if may_panic {
            // Clamping can fail: the read happens here even if the view is never used.
            array.mark_read();
            block.push_let(name.clone(), Code::expr(subs.tuple(), Prec::Atom));
            None
        } else {
            Some(block.push_view(name.clone(), subs.tuple(), array.read_flag()))
        };
        // A sub-array at leading indices keeps the last axis, and its stride.
        let sub = ArrayValue::bound(tree_at(&elem, &name.to_token_stream()), None, read, Some(&name));
        Ok(Value::Array(sub.with_unit_last(array.unit_last())))
    }

    /// The names of the indices of the comprehensions nested (through `let`s and asserts)
    /// in an array-typed body, outermost first: what its inner axes are called in errors.
    fn inner_index_names(&self, body: &Expr) -> Vec<String> {
        let mut names = Vec::new();
        let mut current = body;
        loop {
            match &current.kind {
                ExprKind::Let(node::Let { body, .. }) | ExprKind::Assert(node::Assert { body, .. }) => current = body,
                ExprKind::For(node::For { index, body, .. }) => {
                    names.push(self.program.var(*index).name.clone());
                    current = body;
                }
                ExprKind::Scan(node::Scan { index, .. }) => {
                    names.push(self.program.var(*index).name.clone());
                    return names;
                }
                _ => return names,
            }
        }
    }

    /// Whether the clamped read of `base` at `axis` by `index` is one the enclosing innermost
    /// loop's interior keeps in range.
    fn is_interior(&self, base: &Expr, axis: usize, index: &Expr) -> bool {
        let ExprKind::Var(array) = &base.kind else { return false };
        self.interior
            .iter()
            .any(|read| read.array == *array && read.axis == axis && self.analysis.is_position_of(read, index))
    }

    /// A proven-in-range index as a `usize` position.
    fn proven_position(&mut self, code: Code, ty: ScalarType, span: Span) -> syn::Result<Code> {
        Ok(match ty {
            ScalarType::Known(Scalar::Usize) => code,
            // Proven in `0..len`, so every integer type converts exactly.
            ScalarType::Known(int) if int.is_int() => {
                let tokens = code.operand(Prec::Cast);
                Code::from_parts(
                    quote!(#tokens as ::core::primitive::usize),
                    Prec::Cast,
                    &[&code],
                    code.leads(Prec::Cast),
                )
            }
            ScalarType::Param(_) => {
                call(quote!(::ein::__private::CastTo::<::core::primitive::usize>::cast_to), &[&code])
            }
            ScalarType::Known(other) => return Err(internal(span, format!("an index of type {other}"))),
        })
    }

    /// An index or size of any integer type as the `i64` that `clamp_index` takes and sizes
    /// are (`u64` and `usize` values above `i64::MAX` saturate, as the semantics says; see
    /// `node::Cast::saturating`).
    pub(super) fn index_i64(&mut self, code: Code, ty: ScalarType, span: Span) -> syn::Result<Code> {
        Ok(match ty {
            ScalarType::Known(Scalar::I64) => code,
            // Every value of these fits an `i64` (`isize` on targets of at most 64 bits).
            ScalarType::Known(
                Scalar::I8 | Scalar::I16 | Scalar::I32 | Scalar::Isize | Scalar::U8 | Scalar::U16 | Scalar::U32,
            ) => {
                let tokens = code.operand(Prec::Cast);
                Code::from_parts(
                    quote!(#tokens as ::core::primitive::i64),
                    Prec::Cast,
                    &[&code],
                    code.leads(Prec::Cast),
                )
            }
            ScalarType::Known(unsigned @ (Scalar::U64 | Scalar::Usize)) => {
                let (tokens, ty) = (&code.tokens, primitive(unsigned));
                let saturated = quote! {
                    ::core::cmp::Ord::min(#tokens, ::core::primitive::i64::MAX as #ty) as ::core::primitive::i64
                };
                Code::from_parts(saturated, Prec::Cast, &[&code], None)
            }
            ScalarType::Param(index) => {
                if self.class(index, span)? != NumberClass::Int {
                    return Err(internal(span, "an index of a non-integer element type"));
                }
                call(quote!(::ein::__private::IntoSize::into_size), &[&code])
            }
            ScalarType::Known(other) => return Err(internal(span, format!("an index of type {other}"))),
        })
    }
}

/// The scalar type of every column of an element type, in order.
pub(super) fn column_scalars(elem: &Type) -> Vec<ScalarType> {
    match elem {
        Type::Scalar(scalar) => vec![*scalar],
        Type::Tuple { fields, .. } => fields.iter().flat_map(column_scalars).collect(),
        Type::Array { elem, .. } => column_scalars(elem),
    }
}

/// One expression per column, in the element type's tuple structure.
pub(super) fn column_tree(elem: &Type, column: &mut impl FnMut(ScalarType) -> TokenStream) -> TokenStream {
    match elem {
        Type::Scalar(scalar) => column(*scalar),
        Type::Tuple { fields, .. } => {
            super::code::tuple_tokens(fields.iter().map(|field| column_tree(field, column)).collect())
        }
        Type::Array { elem, .. } => column_tree(elem, column),
    }
}

/// A work estimate as printed: a constant, or a `usize` expression evaluated before the loops
/// (saturating: it only steers parallelism).
enum Printed {
    Const(usize),
    Tokens(TokenStream),
}

impl Printed {
    fn tokens(&self) -> TokenStream {
        match self {
            Printed::Const(value) => proc_macro2::Literal::usize_unsuffixed(*value).into_token_stream(),
            Printed::Tokens(tokens) => tokens.clone(),
        }
    }

    fn add(self, other: Printed) -> Printed {
        match (self, other) {
            (Printed::Const(left), Printed::Const(right)) => Printed::Const(left.saturating_add(right)),
            (Printed::Const(0), work) | (work, Printed::Const(0)) => work,
            (left, right) => {
                let (left, right) = (left.tokens(), right.tokens());
                Printed::Tokens(quote!(::core::primitive::usize::saturating_add(#left, #right)))
            }
        }
    }

    fn mul(self, other: Printed) -> Printed {
        match (self, other) {
            (Printed::Const(left), Printed::Const(right)) => Printed::Const(left.saturating_mul(right)),
            (Printed::Const(1), work) | (work, Printed::Const(1)) => work,
            (left, right) => {
                let (left, right) = (left.tokens(), right.tokens());
                Printed::Tokens(quote!(::core::primitive::usize::saturating_mul(#left, #right)))
            }
        }
    }

    fn at_least_one(self) -> Printed {
        match self {
            Printed::Const(value) => Printed::Const(value.max(1)),
            Printed::Tokens(tokens) => Printed::Tokens(quote!(::core::cmp::Ord::max(#tokens, 1))),
        }
    }
}

/// A position `next`, `(row, part)`, in rows of `parts` parts, counted from the part `first`
/// of them all on: the statement that starts it and the one that moves it on a part. Counted
/// rather than divided per part: a part may be a handful of elements.
fn counted_position(next: &Ident, first: &Ident, parts: &TokenStream) -> (TokenStream, TokenStream) {
    let start = quote!(let mut #next = (#first / #parts, #first % #parts););
    let moved = next_part((&quote!(#next.0), &quote!(#next.1)), parts);
    (start, quote!(#next = #moved;))
}

/// The position after `(row, part)` in rows of `parts` parts: the next part of the row, or
/// the first of the next row.
fn next_part((row, part): (&TokenStream, &TokenStream), parts: &TokenStream) -> TokenStream {
    quote!(if #part + 1 == #parts { (#row + 1, 0) } else { (#row, #part + 1) })
}

/// `a * b * c`
fn product(factors: &[&TokenStream]) -> TokenStream {
    let mut tokens = TokenStream::new();
    for (position, factor) in factors.iter().enumerate() {
        if position > 0 {
            tokens.extend(quote!(*));
        }
        tokens.extend((*factor).clone());
    }
    tokens
}

/// The read `array[e_0]…[e_{r-1}]` as a read of `copy`, the array with `axis` moved last
/// (`passes::transpose`): the same indices with their bounds, `e_axis` last.
/// SAFETY (of the unchecked reads `read` then prints for it): where the copy was made, its
/// axis lengths are the array's in that order (`transposition_of` recognises only such a copy;
/// where it would not pay its last axis is empty, and the loops that read it run only after
/// checking that its last axis has the array's length, `Gen::jam_step`), so each index is in
/// range on the copy's axis exactly where it was on the array's; the analysis lists only reads
/// whose indices are all proven (`AcrossRead`).
pub(super) fn transposed_read(read: &Expr, copy: VarId, axis: usize, copy_type: &Type) -> Expr {
    let (_, positions) = read.read_chain();
    let mut positions: Vec<(Expr, Bounds)> =
        positions.into_iter().map(|(position, bounds)| (position.clone(), bounds)).collect();
    if axis < positions.len() {
        let moved = positions.remove(axis);
        positions.push(moved);
    }
    Expr::read_of(Expr::new(ExprKind::Var(copy), copy_type.clone(), read.span), positions)
}
