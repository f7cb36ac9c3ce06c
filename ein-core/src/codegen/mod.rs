//! Stage 6, codegen: a checked, typed IR [`Program`] → Rust tokens that call the runtime
//! through `::ein::__private` (absolute paths only, so user items named `f32`, `Vec`, `core`…
//! cannot capture anything). Never panics: an IR shape it cannot translate is reported as an
//! "ein internal error in codegen" (`syn::Error`), which is always a bug in an earlier stage.
//!
//! How values are represented (see [`code::Value`]):
//! - scalars and tuples of scalars are Rust expressions ([`code::Code`]), placed so that they
//!   are evaluated in the IR's order wherever evaluation could panic;
//! - an array is a `View` per column (arrays of tuples are tuples of arrays, SoA), always a
//!   cheap local; the owned `Array` behind a computed array lives in a hidden local declared
//!   in the block that uses it, so it outlives every view of it;
//! - a tuple that contains arrays is a tuple of such values.
//!
//! Statements go into a [`code::Block`] per Rust block (function or closure body, loop body).
//! What generated code reads is known without looking at it: a loop nest reads the locals of
//! the IR variables free in the part of the IR it evaluates (its body, not its sizes), and a
//! view `let` is kept when code printing its views was generated ([`code::ViewRead`]).
//! Comprehensions are filled chunk by chunk through `fill_chunks` (parallel over chunks of the
//! outermost axis), their innermost loops counted `Fill::fill` loops; reductions are
//! `Accumulate::fold_range` (several accumulators for floats) inside other loops and
//! `reduce` (parallel, deterministic) at the top level; folds are plain loops. Each
//! outermost loop nest is versioned for inputs whose last axis is contiguous (`EIN_NO_VERSIONING`
//! set at build time turns that off, to compare). Reads the checker proved in bounds are
//! `get_unchecked`; reads shifted along an innermost loop's index (`a[j + 1]`) are unchecked in
//! the loop's interior, which the runtime computes; all others are clamped by `clamp_index`.
//!
//! Files: `names` (identifiers), `code` (expressions, blocks, values), `expr` (scalar and tuple
//! expressions, `let`, `if`), `arrays` (comprehensions, reads, storage), `reduce` (reductions
//! and folds), `contract`, `scan`, `accum`, `filter` (those forms).

mod accum;
mod arrays;
mod code;
mod contract;
mod expr;
mod filter;
mod names;
mod reduce;
mod scan;
#[cfg(test)]
pub(crate) mod tests;

use crate::analysis::{self, Analysis};
use crate::ir::{
    Expr, ExprKind, Form, FunctionHeader, NodeId, NumberClass, Program, Scalar, ScalarType, Type, TypeParam,
    TypeSource, VarId,
};
use crate::passes::by_columns::Mirror;
use arrays::column_scalars;
use code::{tuple_tokens, ArrayValue, Block, Code, Prec, Tree, Value, ViewRead};
use names::Names;
use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::{quote, quote_spanned, ToTokens};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Display;
use syn::ext::IdentExt;

/// A copy of a function for callers whose arrays lie otherwise than row by row
/// (`passes::by_columns`): generated beside the function, which calls it when the arrays its
/// mirror reads lie so.
pub struct MirroredCopy {
    /// The copy, through the pipeline.
    pub program: Program,
    /// The parameters it reads through the mirror's axes.
    pub params: Vec<VarId>,
    pub mirror: Mirror,
}

/// Generates the Rust item (function form) or block expression (expression form) for one
/// checked program, with its mirrored `copies` (any of them; they are optimisations only).
pub fn generate(program: &Program, form: &Form, copies: &[MirroredCopy]) -> syn::Result<TokenStream> {
    let mut program = program.clone();
    analysis::prepare(&mut program);
    let analysis = Analysis::of(&program);
    match form {
        Form::Expression => {
            let variants = copies
                .iter()
                .filter_map(|copy| {
                    mirrored_copy(copy, ParamStyle::Captured, |generator| {
                        let name = generator.names.fresh(&format!("expression_{}", copy.mirror.suffix()));
                        let (item, ..) = generator.expression_item(&name, &[])?;
                        Ok((name, copy, item))
                    })
                })
                .collect();
            Gen::new(&program, &analysis, ParamStyle::Captured)?.expression_form(variants)
        }
        Form::Function(header) => {
            let mut variants = TokenStream::new();
            let mut dispatch = Vec::new();
            for copy in copies {
                let name = format!("__ein_{}_{}", header.name.unraw(), copy.mirror.suffix());
                let name = Ident::new(&name, header.name.span());
                // The function's `cfg`s and lint levels, hidden, and silent about its name.
                let mut attrs = header.carried_attrs();
                attrs.push(syn::parse_quote!(#[doc(hidden)]));
                attrs.push(syn::parse_quote!(#[allow(dead_code, non_snake_case, clippy::too_many_arguments)]));
                let variant_header = FunctionHeader {
                    attrs,
                    vis: syn::Visibility::Inherited,
                    name: name.clone(),
                    into: None,
                    jvp: None,
                    reverse: None,
                    ret_span: header.ret_span,
                };
                let generated = mirrored_copy(copy, ParamStyle::Reference, |generator| {
                    generator.function_form(&variant_header, &[])
                });
                if let Some(generated) = generated {
                    variants.extend(generated);
                    dispatch.push((name, copy));
                }
            }
            let returning = Gen::new(&program, &analysis, ParamStyle::Reference)?.function_form(header, &dispatch)?;
            let Some(into) = &header.into else {
                return Ok(quote!(#returning #variants));
            };
            let writing = Gen::new(&program, &analysis, ParamStyle::Reference)?.writing_form(header, into)?;
            Ok(quote!(#returning #variants #writing))
        }
    }
}

/// A generated mirrored copy a function calls, by name.
type Dispatch<'c> = (Ident, &'c MirroredCopy);

/// What `generate` makes of a mirrored copy; `None` where it fails: the copy is an
/// optimisation only, left out rather than failing the build.
fn mirrored_copy<R>(
    copy: &MirroredCopy,
    style: ParamStyle,
    generate: impl FnOnce(&mut Gen<'_>) -> syn::Result<R>,
) -> Option<R> {
    let mut variant = copy.program.clone();
    analysis::prepare(&mut variant);
    let analysis = Analysis::of(&variant);
    let mut generator = Gen::new(&variant, &analysis, style).ok()?;
    generator.mirrored = Some((copy.mirror, copy.params.clone()));
    generate(&mut generator).ok()
}

/// The environment variables read at expansion time that change what the macro emits
/// (`EIN_DUMP`, `EIN_NO_VERSIONING`), read again through `option_env!` in the user's crate: a
/// proc macro's own reads are invisible to cargo, rustc's are recorded in the crate's
/// dependency info, so changing either variable rebuilds the crate (and re-runs the macro).
/// An item: emitted once per invocation, beside the functions or inside the expression's block.
pub fn build_settings_tracker() -> TokenStream {
    quote! {
        const _: () = {
            let _ = ::core::option_env!("EIN_DUMP");
            let _ = ::core::option_env!("EIN_NO_VERSIONING");
        };
    }
}

/// One array column of the caller's `out` in an `#[into]` function: the `ViewMut` local that
/// reaches it, and how the user names it in messages ("`out`", "`out.1`").
#[derive(Clone)]
struct OutColumn {
    view: TokenStream,
    what: String,
    /// The user's `#[into(name)]` token, where a shape mismatch is reported.
    site: Ident,
}

/// An internal error: the IR broke an invariant code generation relies on.
pub(crate) fn internal(span: Span, message: impl Display) -> syn::Error {
    syn::Error::new(span, format!("ein internal error in codegen: {message}"))
}

/// Whether [`Gen::owned_as`] may move an array out of its store (when the store is ours to
/// move), or must copy it because views of the store may still be read later.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stores {
    MayMove,
    Copy,
}

/// How parameters reach the generated code.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ParamStyle {
    /// Function form: arrays arrive as `&impl AsView<T, N>`.
    Reference,
    /// Expression form: arrays are captured locals of any storage implementing `AsView`.
    Captured,
}

/// The generator's state for one program.
/// The comprehensions that should build a fold's next accumulator's arrays in the
/// allocations of the accumulator of the step before, each with its spare
/// (`Option<Array>`, that array), and the spares taken.
struct Recycle {
    builders: Vec<(NodeId, Ident)>,
    used: BTreeSet<Ident>,
}

struct Gen<'p> {
    program: &'p Program,
    /// The facts about the program that decide what is generated (see [`crate::analysis`]).
    analysis: &'p Analysis<'p>,
    names: Names,
    /// The generated value of every variable in scope.
    env: BTreeMap<VarId, Value>,
    /// While the epilogue of a [`crate::analysis::Jam`] is generated: its nest's root and the
    /// code of that nest's result for the iteration at hand.
    jammed: Option<(NodeId, Code)>,
    /// While the leaf of a [`crate::analysis::Jam`] is generated side by side: its reads that
    /// read a transposed copy instead of their array ([`crate::analysis::Jam::transposed`]).
    transposed_reads: BTreeMap<NodeId, (VarId, usize)>,
    /// In a mirrored copy (`passes::by_columns`), its mirror and the parameters it reads
    /// through the mirror's axes: a run-time error names the user's axis, not the one read.
    mirrored: Option<(Mirror, Vec<VarId>)>,
    /// `let __ein_site_N = Site { .. };` statements, emitted at the top.
    sites: Vec<TokenStream>,
    /// How many loop bodies (comprehension rows, reduction and fold bodies) enclose the
    /// code being generated: at 0, a reduction is the top-level kind that runs in parallel.
    loop_depth: usize,
    /// How many Rust blocks (closures, loop bodies) enclose the code being generated.
    level: usize,
    /// Stores already moved out (by their local and field path).
    moved: Vec<(Ident, Vec<usize>)>,
    /// Identifiers reused by every comprehension / reduction (each use is in its own closure).
    row: Ident,
    outs: Ident,
    /// Inside a loop nest that is being versioned for unit-stride views (see
    /// [`Gen::versioned`]): nested loop nests are not versioned again.
    in_versioned: bool,
    /// Never version (the `EIN_NO_VERSIONING` switch, for comparing diagnostics and speed).
    no_versioning: bool,
    /// Clamped reads known in range here: the interior of an innermost loop (see
    /// `Gen::fill_loop`), where `array[.., index + offset, ..]` (at `axis`) needs no clamp.
    interior: Vec<analysis::Interior<'p>>,
    /// The indices whose loop interior this is for their wrapping remainders
    /// ([`analysis::Wrap`]) and guards ([`analysis::Guard`]): there `(index + c) % n` is
    /// `index + c`, or that less `n`, and a guard is `true`.
    wrap_interior: Vec<VarId>,
    /// A fold's spare array and the comprehensions that may build the next accumulator in its
    /// allocation ([`Recycle`]).
    recycle: Option<Recycle>,
    /// In an `#[into]` function: the comprehension that builds the result, with the columns
    /// of `out` it is written into directly (see [`Gen::writing_form`]); taken by it.
    destination: Option<(NodeId, Vec<OutColumn>)>,
    /// Expression form: the user's identifier of every captured local, by parameter, read
    /// once by the prologue into the parameter's generated local.
    captured: BTreeMap<VarId, Ident>,
    /// Expression form: the local holding the closure of each Rust function call site
    /// (`Program::rust_calls`; note [Rust calls of the expression form]).
    rust_calls: Vec<Ident>,
    /// While the fast copy of a comprehension's chunk is generated ([`Gen::fast_trig_flag`]):
    /// the `Cell<bool>` that its `sin` and `cos` set when an argument is beyond their fast
    /// path, after which the chunk runs again with the exact functions.
    fast_trig: Option<Ident>,
}

impl<'p> Gen<'p> {
    fn new(program: &'p Program, analysis: &'p Analysis<'p>, style: ParamStyle) -> syn::Result<Gen<'p>> {
        let mut names = Names::new(program, analysis)?;
        // A captured local is read once, by a prologue outside any `unsafe` block, into a
        // generated local: user expressions (a `static mut`, say) are never evaluated inside
        // the `unsafe` blocks of unchecked reads, and a captured `const` is not mistaken for a
        // pattern by a `let` of its own name.
        let captured = match style {
            ParamStyle::Captured => names.rename_captures(&program.params),
            ParamStyle::Reference => BTreeMap::new(),
        };
        let row = names.fresh("row");
        let outs = names.fresh("outs");
        let rust_calls = (0..program.rust_calls.len()).map(|site| names.fresh(&format!("call_{site}"))).collect();
        let mut generator = Gen {
            program,
            analysis,
            names,
            env: BTreeMap::new(),
            jammed: None,
            transposed_reads: BTreeMap::new(),
            mirrored: None,
            sites: Vec::new(),
            loop_depth: 0,
            level: 0,
            moved: Vec::new(),
            row,
            outs,
            in_versioned: false,
            no_versioning: std::env::var_os("EIN_NO_VERSIONING").is_some(),
            interior: Vec::new(),
            wrap_interior: Vec::new(),
            recycle: None,
            destination: None,
            captured,
            rust_calls,
            fast_trig: None,
        };
        for &param in &program.params {
            let name = generator.names.var(param).clone();
            let ty = generator.program.var(param).ty.clone();
            let value = generator.value_at(&ty, &name, None);
            generator.env.insert(param, value);
        }
        Ok(generator)
    }

    /// The function; it calls the mirrored copies in `dispatch`, the first whose test the
    /// layouts of its arrays pass.
    fn function_form(&mut self, header: &FunctionHeader, dispatch: &[Dispatch<'_>]) -> syn::Result<TokenStream> {
        if !self.program.type_params.is_empty() {
            return Err(internal(header.name.span(), "a function has element types left to rustc"));
        }
        let body = self.body()?;
        let ret_type = owned_type(&self.program.body.ty, header.ret_span)?;
        let prologue: TokenStream =
            dispatch.iter().map(|(variant, copy)| self.mirrored_dispatch(variant, &[], copy)).collect();
        self.item(
            &header.attrs,
            &header.vis,
            &header.name,
            &TokenStream::new(),
            Vec::new(),
            Some(ret_type),
            &prologue,
            &body,
        )
    }

    /// `if columns_first(&[layouts]) { return variant(args); }` (`stacked_columns_first` for a
    /// stacked copy): the call of the mirrored copy `variant` with the `leading` parameters,
    /// then the mirrored views of the parameters it reads so (those read) and the others as
    /// they are, where their layouts call for it.
    fn mirrored_dispatch(&self, variant: &Ident, leading: &[Ident], copy: &MirroredCopy) -> TokenStream {
        let view = |param: VarId| {
            let name = self.names.var(param);
            let rank = Literal::usize_unsuffixed(self.program.var(param).ty.rank());
            quote!(::ein::__private::AsView::<_, #rank>::as_view(#name))
        };
        let read: Vec<VarId> = copy.params.iter().copied().filter(|&param| self.names.is_referenced(param)).collect();
        if read.is_empty() {
            return TokenStream::new();
        }
        let layouts = read.iter().map(|&param| {
            let view = view(param);
            quote!(#view.layout())
        });
        let (test, mirrored_view) = match copy.mirror {
            Mirror::Reversed => (quote!(::ein::__private::columns_first), quote!(reversed_axes)),
            Mirror::LastTwoSwapped => (quote!(::ein::__private::stacked_columns_first), quote!(swapped_last_axes)),
        };
        let leading = leading.iter().map(|param| quote!(#param));
        let args = leading.chain(self.program.params.iter().map(|&param| {
            if read.contains(&param) {
                let view = view(param);
                quote!(&#view.#mirrored_view())
            } else {
                let name = self.names.var(param);
                quote!(#name)
            }
        }));
        quote! {
            if #test(&[#(#layouts),*]) {
                return #variant(#(#args),*);
            }
        }
    }

    /// The `#[into(name)]` companion: `name(out, params..)` computes what the function returns
    /// and writes it into `out` — any storage implementing `AsViewMut`, a tuple of them for a
    /// result of several arrays (or an array of records) — whose shape must match the
    /// result's (checked before anything is written). A result built by a comprehension is
    /// filled straight into `out` (through a staging buffer when `out` is not contiguous), which
    /// saves the allocation and the page faults of a new array; any other result is computed
    /// as usual and then copied.
    fn writing_form(&mut self, header: &FunctionHeader, into: &Ident) -> syn::Result<TokenStream> {
        if !self.program.type_params.is_empty() {
            return Err(internal(header.name.span(), "a function has element types left to rustc"));
        }
        let ty = self.program.body.ty.clone();
        let taken: BTreeSet<String> =
            self.program.params.iter().map(|&param| self.program.var(param).name.clone()).collect();
        let out = ["out", "output", "destination", "ein_out"]
            .into_iter()
            .find(|name| !taken.contains(*name))
            .map(|name| Ident::new(name, into.span()))
            .ok_or_else(|| internal(into.span(), "no free name for `out`"))?;
        let out_type = out_type(&ty, header.ret_span)?;
        let views = self.names.fresh("out");
        let site = self.site(into.span());
        let mut columns = Vec::new();
        out_columns(&ty, false, &views.to_token_stream(), &out.to_string(), &site, &mut columns)?;
        let body = &self.program.body;
        // Only a result built by one comprehension is written in place: all of `out` is then
        // checked before any of it is written. The parts of other results are all computed,
        // then all checked, then copied.
        let tail = analysis::tail_of(body);
        if let ExprKind::For(_) = tail.kind {
            self.destination = Some((tail.id, columns.clone()));
        }

        let mut block = Block::new();
        let out_views = out_views(&ty, &out.to_token_stream());
        block.push(quote!(let #views = #out_views;));
        let value = self.value(body, &mut block)?;
        let mut copies = Vec::new();
        self.copies_to_out(&value, &ty, &mut columns.as_slice(), &mut copies)?;
        for (OutColumn { view: target, what, site }, view) in &copies {
            block.push(quote!(::ein::__private::check_out(&#target, #view.shape(), #what, &#site);));
        }
        for (OutColumn { view: target, what, site }, view) in &copies {
            block.push(quote!(::ein::__private::write_into(#target, #view, #what, &#site);));
        }
        let body_tokens = block.finish(None);

        let name = &header.name;
        let doc = format!(
            " Writes what [`{name}`] returns into `{out}`, which must have its shape (checked before \
             anything is written). A result built by a comprehension is computed straight into \
             `{out}` when it is contiguous; any other is computed, then copied."
        );
        let mut attrs = vec![syn::parse_quote!(#[doc = #doc])];
        // `#[must_use]` on a function returning nothing would itself be linted.
        attrs.extend(header.attrs.iter().filter(|attr| !attr.path().is_ident("must_use")).cloned());
        self.item(
            &attrs,
            &header.vis,
            into,
            &TokenStream::new(),
            vec![(out, out_type)],
            None,
            &TokenStream::new(),
            &body_tokens,
        )
    }

    /// The copies a value of type `ty` needs into the next of the `#[into]` function's out
    /// columns (see [`Gen::writing_form`]): a view per array column; none for `()`, which marks a
    /// result a comprehension already wrote in place.
    fn copies_to_out(
        &self,
        value: &Value,
        ty: &Type,
        columns: &mut &[OutColumn],
        copies: &mut Vec<(OutColumn, TokenStream)>,
    ) -> syn::Result<()> {
        let body_span = self.program.body.span;
        let mut next = |view: Option<&TokenStream>| -> syn::Result<()> {
            let Some((column, rest)) = columns.split_first() else {
                return Err(internal(body_span, "more result columns than out columns"));
            };
            *columns = rest;
            copies.extend(view.map(|view| (column.clone(), view.clone())));
            Ok(())
        };
        match (value, ty) {
            (Value::Tuple(written), Type::Array { elem, .. }) if written.is_empty() => {
                (0..column_scalars(elem).len()).try_for_each(|_| next(None))
            }
            (Value::Array(array), Type::Array { .. }) => {
                array.views().leaves().into_iter().try_for_each(|view| next(Some(view)))
            }
            (Value::Tuple(values), Type::Tuple { fields, .. }) if values.len() == fields.len() => values
                .iter()
                .zip(fields)
                .try_for_each(|(value, field)| self.copies_to_out(value, field, columns, copies)),
            _ => Err(internal(body_span, format!("an `#[into]` result of type {ty:?}"))),
        }
    }

    /// The generated function `name`, in three copies (portable, AVX2+FMA and AVX-512, one
    /// chosen at run time): its `generics` (`<…>` or nothing), the parameters (after `leading`
    /// ones such as `out`), their views, the sites, then `body`; `prologue` first of all.
    #[allow(clippy::too_many_arguments)]
    fn item(
        &mut self,
        attrs: &[syn::Attribute],
        vis: &syn::Visibility,
        name: &Ident,
        generics: &TokenStream,
        leading: Vec<(Ident, TokenStream)>,
        ret_type: Option<TokenStream>,
        prologue: &TokenStream,
        body: &TokenStream,
    ) -> syn::Result<TokenStream> {
        let mut params = Vec::new();
        let mut args = Vec::new();
        let mut rebinds = Vec::new();
        for (param, ty) in leading {
            params.push(quote!(#param: #ty));
            args.push(param);
        }
        let mut column_checks = Vec::new();
        for &param in &self.program.params {
            let info = self.program.var(param);
            let (param_ty, span) = (info.ty.clone(), info.span);
            let param_name = self.names.var(param).clone();
            let ty = param_type(&param_ty, span)?;
            // Generated code reads exactly the parameters the program reads (the analysis's
            // `is_read`); an unread one was named `_…` already.
            if self.names.is_referenced(param) {
                if let Some(views) = rebind(&param_ty, &param_name.to_token_stream(), ParamStyle::Reference) {
                    rebinds.push(quote!(let #param_name = #views;));
                }
                let what = param_name.to_string();
                self.column_shape_checks(&param_ty, &param_name.to_token_stream(), &what, span, &mut column_checks);
            }
            params.push(quote!(#param_name: #ty));
            args.push(param_name);
        }
        let ret = ret_type.map(|ty| quote!(-> #ty));
        let sites = &self.sites;
        let inner = quote! {
            #(#rebinds)*
            #(#sites)*
            #(#column_checks)*
            #body
        };
        // The same body twice more, compiled for AVX-512 and for AVX2 and FMA, one of them
        // taken when the CPU has its features and the run-time choice names it (see
        // `ein-runtime/src/dispatch.rs`); a copy is left out when the whole crate is built for
        // its features already.
        // SAFETY (of each generated `unsafe fn` and its call): its only precondition is the CPU
        // features, which `widest_simd` / `wide_simd` checked; its body is the portable copy's,
        // which holds no user expression (ein's language has none), so making it an unsafe
        // context hides no user operation from rustc.
        // Whether the loops call ein's polynomial math: such a function takes the AVX-512 copy
        // by default (see `DEFAULT_MATH_COPY` in the runtime's dispatch).
        let math = calls_polynomial_math(&self.program.body);
        let copies = WIDE_COPIES.iter().map(|&(copy_name, features, choice)| {
            let copy = self.names.fresh(copy_name);
            let enable = features.join(",");
            let choice = Ident::new(choice, Span::call_site());
            quote! {
                #[cfg(all(target_arch = "x86_64", not(all(#(target_feature = #features),*))))]
                {
                    // SAFETY (of this `unsafe fn`): it is unsafe only because of its target
                    // features, which the run-time choice below checks before calling it.
                    #[target_feature(enable = #enable)]
                    #[allow(clippy::too_many_arguments)]
                    unsafe fn #copy #generics (#(#params),*) #ret {
                        #inner
                    }
                    if ::ein::__private::#choice(#math) {
                        // SAFETY: the run-time choice checked that this CPU has these features.
                        return unsafe { #copy(#(#args),*) };
                    }
                }
            }
        });
        let copies: Vec<TokenStream> = copies.collect();
        Ok(quote! {
            #(#attrs)*
            #vis fn #name #generics (#(#params),*) #ret {
                #prologue
                #(#copies)*
                #inner
            }
        })
    }

    /// The expression form: the program as a local generic function of the captured locals,
    /// called on them. Its type parameters are the element types rustc decides, each bounded
    /// by what the program does with it, so that rustc checks the body once, generically, and
    /// a captured local of the wrong type is reported at the user's token, in the call. With
    /// `variants`, the names, copies and items of its mirrored copies (see
    /// [`Gen::function_form`]).
    fn expression_form(&mut self, variants: Vec<(Ident, &MirroredCopy, TokenStream)>) -> syn::Result<TokenStream> {
        let name = self.names.fresh("expression");
        let dispatch: Vec<Dispatch<'_>> = variants.iter().map(|(name, copy, _)| (name.clone(), *copy)).collect();
        let variant = variants.iter().map(|(.., item)| item);
        let (item, closures, args) = self.expression_item(&name, &dispatch)?;
        // Bound to a local before it is returned, so that the use site's type is not an
        // expectation on the arguments: a result of the wrong type is one error, at the whole
        // invocation, and use-site literals are still inferred from it.
        let result = self.names.fresh("result");
        Ok(quote! {
            {
                #item
                #(#variant)*
                #(#closures)*
                let #result = #name(#(#args),*);
                #result
            }
        })
    }

    /// The expression form's generic function `name` (calling the mirrored copies in
    /// `dispatch` where the arrays lie so), the closures made at the user's Rust calls, and the
    /// arguments it is called with.
    fn expression_item(
        &mut self,
        name: &Ident,
        dispatch: &[Dispatch<'_>],
    ) -> syn::Result<(TokenStream, Vec<TokenStream>, Vec<TokenStream>)> {
        let body = self.body()?;
        let body_span = self.program.body.span;
        let mut bounds = Vec::new();
        let mut closures = Vec::new();
        let mut leading = Vec::new();
        let mut leading_args = Vec::new();
        for (index, param) in self.program.type_params.iter().enumerate() {
            let name = type_param_name(index);
            let bound = match param.class {
                NumberClass::Float => quote!(::ein::Float),
                NumberClass::Int => quote!(::ein::Int),
                NumberClass::Number => quote!(::ein::Num),
                NumberClass::Bool | NumberClass::Any => quote!(::ein::Element),
            };
            let signed = param.signed.then(|| quote!(+ ::ein::Signed));
            let casts = param.casts.iter().map(|to| {
                let to = primitive(*to);
                quote!(+ ::ein::__private::CastTo<#to>)
            });
            bounds.push(quote!(#name: #bound #signed #(#casts)*));
            let marker = quote!(::core::marker::PhantomData<#name>);
            match param.source {
                // The result of the closure made at a Rust call, passed on its own at the
                // user's call: a bound it fails is reported there.
                TypeSource::CallResult(site) => {
                    let (closure, span) = (&self.rust_calls[site], self.program.rust_calls[site].name.span());
                    leading.push((self.names.fresh(&format!("result_{index}")), marker));
                    leading_args.push(quote_spanned!(span=> ::ein::__private::result_of(&#closure)));
                }
                // Use-site literals: passing `PhantomData` of `{integer}` / `{float}` lets
                // rustc's own fallback apply where nothing constrains them.
                TypeSource::UseSite => {
                    leading.push((self.names.fresh(&format!("literal_{index}")), marker));
                    let zero = match param.class {
                        NumberClass::Float => quote!(0.0),
                        _ => quote!(0),
                    };
                    leading_args.push(quote!(::ein::__private::marker_of(&#zero)));
                }
                // The element type of a captured array, passed on its own at the user's token:
                // a bound it fails is reported there rather than at the whole invocation.
                TypeSource::Capture(witness) => {
                    let Type::Array { elem, rank } = &self.program.var(witness).ty else { continue };
                    if **elem != Type::Scalar(ScalarType::Param(index)) {
                        continue;
                    }
                    let user =
                        self.captured.get(&witness).ok_or_else(|| internal(body_span, "an uncaptured witness"))?;
                    let (span, rank) = (user.span(), Literal::usize_unsuffixed(*rank));
                    leading.push((self.names.fresh(&format!("element_{index}")), marker));
                    leading_args.push(quote_spanned!(span=> ::ein::AsView::<_, #rank>::element_type(&#user)));
                }
            }
        }
        // Each Rust function call site: a closure made at the user's call, which rustc types
        // from the function's signature (note [Rust calls of the expression form]).
        for (site, call) in self.program.rust_calls.iter().enumerate() {
            let generic = Ident::new(&format!("EinCall{site}"), Span::call_site());
            let params = call.params.iter().map(spelled);
            let ret = spelled(&call.ret);
            bounds.push(quote!(#generic: ::core::ops::Fn(#(#params),*) -> #ret + ::core::marker::Sync));
            // The generic function's parameter and the closure outside share a name (an item
            // does not see the locals around it).
            leading.push((self.rust_calls[site].clone(), generic.to_token_stream()));
            let span = call.name.span();
            let arguments: Vec<Ident> = (0..call.params.len())
                .map(|position| Ident::new(&format!("__ein_argument_{position}"), span))
                .collect();
            let name = &call.name;
            let closure = &self.rust_calls[site];
            // The closure's parameter types are the arguments' (their markers): rustc then
            // types the call against them, and a wrong argument is reported at the call. It is
            // the closure clippy would write as plain `sigmoid`, but that would move a local
            // closure and could not type a generic function's parameter.
            let markers = call.params.iter().map(|param| self.type_marker(param, span));
            let typed = Ident::new(&format!("typed_closure{}", call.params.len()), span);
            closures.push(quote_spanned!(span=>
                #[allow(clippy::redundant_closure)]
                let #closure = ::ein::__private::#typed(#(#markers,)* |#(#arguments),*| #name(#(#arguments),*));
            ));
            leading_args.push(closure.to_token_stream());
        }
        let generics = if bounds.is_empty() { TokenStream::new() } else { quote!(<#(#bounds),*>) };
        let mut args = leading_args;
        for &param in &self.program.params {
            let info = self.program.var(param);
            let user = self.captured.get(&param).ok_or_else(|| internal(info.span, "a parameter was not captured"))?;
            // Spanned at the user's token: a captured local of the wrong type or rank is
            // reported there.
            let span = user.span();
            let reference = |_, column: &TokenStream| quote_spanned!(span=> &#column);
            let arg = match &info.ty {
                // A captured integer of any width becomes the integer type the program uses it
                // as (a `usize` length beside an index is an `i64`), checked.
                Type::Scalar(ScalarType::Known(scalar)) if scalar.is_int() => {
                    let ty = primitive(*scalar);
                    let name = user.to_string();
                    quote_spanned!(span=> ::ein::__private::captured_int::<#ty, _>(#user, #name))
                }
                _ => map_array_columns(&info.ty, &user.to_token_stream(), &mut { reference }),
            };
            args.push(arg);
        }
        let ret_type = owned_type(&self.program.body.ty, self.program.body.span)?;
        let attrs: Vec<syn::Attribute> = vec![syn::parse_quote!(#[allow(clippy::too_many_arguments)])];
        let leading_names: Vec<Ident> = leading.iter().map(|(param, _)| param.clone()).collect();
        let prologue: TokenStream =
            dispatch.iter().map(|(variant, copy)| self.mirrored_dispatch(variant, &leading_names, copy)).collect();
        let item =
            self.item(&attrs, &syn::Visibility::Inherited, name, &generics, leading, Some(ret_type), &prologue, &body)?;
        Ok((item, closures, args))
    }

    /// A `PhantomData` of scalar type `ty` where the expression form calls its generic function:
    /// spelled when known, through the captured local for a captured element type, inferred
    /// otherwise.
    fn type_marker(&self, ty: &ScalarType, span: Span) -> TokenStream {
        let inferred = quote_spanned!(span=> ::core::marker::PhantomData);
        let ScalarType::Param(index) = ty else {
            let spelled = spelled(ty);
            return quote_spanned!(span=> ::core::marker::PhantomData::<#spelled>);
        };
        let Some(witness) = self.program.type_params.get(*index).and_then(TypeParam::witness) else {
            return inferred;
        };
        match (&self.program.var(witness).ty, self.captured.get(&witness)) {
            (Type::Array { rank, .. }, Some(user)) => {
                let rank = Literal::usize_unsuffixed(*rank);
                quote_spanned!(span=> ::ein::AsView::<_, #rank>::element_type(&#user))
            }
            (Type::Scalar(_), Some(user)) => quote_spanned!(span=> ::ein::__private::marker_of(&#user)),
            _ => inferred,
        }
    }

    /// The program's statements and its result, converted to owned storage.
    fn body(&mut self) -> syn::Result<TokenStream> {
        let mut block = Block::new();
        let body = &self.program.body;
        let value = self.value(body, &mut block)?;
        let result = self.owned(&value, &body.ty, body.span, &mut block)?;
        Ok(block.finish(Some(&result)))
    }

    /// The value of the local `name` of type `ty` (views for arrays); `read` is its flag if it
    /// is a view `let` that may be left out ([`Block::push_view`]).
    fn value_at(&self, ty: &Type, name: &Ident, read: Option<ViewRead>) -> Value {
        value_at_path(ty, &name.to_token_stream(), Some(name), &read)
    }

    /// Converts a value to owned storage (arrays become `Array`s: moved out of their store
    /// when it is ours to move, copied otherwise). Copies are made by statements first, so
    /// that no view is used after its store was moved.
    fn owned(&mut self, value: &Value, ty: &Type, span: Span, block: &mut Block) -> syn::Result<Code> {
        self.owned_as(value, ty, span, block, Stores::MayMove)
    }

    /// [`Gen::owned`], with the choice of whether stores may be moved at all.
    fn owned_as(
        &mut self,
        value: &Value,
        ty: &Type,
        span: Span,
        block: &mut Block,
        stores: Stores,
    ) -> syn::Result<Code> {
        match (value, ty) {
            (Value::Plain(code), _) => Ok(code.clone()),
            (Value::Array(array), _) => {
                if let Some(store) = array.store.as_ref().filter(|_| stores == Stores::MayMove) {
                    let key = (store.root.clone(), store.fields.clone());
                    if store.level == self.level && !self.moved.contains(&key) {
                        self.moved.push(key);
                        return Ok(store.place());
                    }
                }
                let copy = array.views().map(&mut |view| quote!(#view.to_array())).tuple();
                let name = self.names.fresh("copy");
                block.push_let(name.clone(), Code::expr(copy, Prec::Atom));
                Ok(Code::name(&name))
            }
            (Value::Tuple(values), Type::Tuple { fields, .. }) if values.len() == fields.len() => {
                let mut items = Vec::new();
                for (value, field) in values.iter().zip(fields) {
                    let mut item = self.owned_as(value, field, span, block, stores)?;
                    // A scalar field may be read through views of a store that another field
                    // moves (`(acc.0, acc.1)`): read it first, unless it is a local, a literal
                    // or a field of a local (`simple`), which reads no view.
                    if matches!(value, Value::Plain(_)) && !item.simple {
                        let name = self.names.fresh("field");
                        block.push_let(name.clone(), item);
                        item = Code::name(&name);
                    }
                    items.push(item.tokens);
                }
                Ok(Code::expr(tuple_tokens(items), Prec::Atom))
            }
            (Value::Tuple(_), _) => Err(internal(span, format!("a tuple value of type {ty:?}"))),
        }
    }

    /// Binds `code` to a fresh local at position `at` of `block` if statements were added to
    /// the block since it was generated and it could panic: the IR evaluates it before them.
    fn settle(&mut self, code: &mut Code, at: usize, block: &mut Block) {
        if block.len() > at && code.may_panic && !code.simple {
            let name = self.names.fresh("operand");
            block.insert_let(at, name.clone(), code.clone());
            *code = Code::name(&name);
        }
    }

    /// Generates scalar operands in order: if a later one needs statements, earlier ones that
    /// could panic are bound to locals before those statements (the IR's evaluation order).
    fn operands(&mut self, exprs: &[&crate::ir::Expr], block: &mut Block) -> syn::Result<Vec<Code>> {
        let mut codes: Vec<Code> = Vec::new();
        for expr in exprs {
            let at = block.len();
            let code = self.scalar(expr, block)?;
            self.settle_all(&mut codes, at, block);
            codes.push(code);
        }
        Ok(codes)
    }

    /// [`Gen::settle`] for several codes generated in this order before position `at`.
    fn settle_all(&mut self, codes: &mut [Code], at: usize, block: &mut Block) {
        if block.len() > at {
            let mut offset = 0;
            for earlier in codes.iter_mut() {
                let before = block.len();
                self.settle(earlier, at + offset, block);
                offset += block.len() - before;
            }
        }
    }

    /// A local holding the user's source location `span`, for run-time error messages.
    fn site(&mut self, span: Span) -> Ident {
        let name = self.names.fresh("site");
        let start = span.start();
        let site = if start.line > 0 {
            // The compiler tells the macro where the token is: spell the numbers, with
            // `file!()` naming the file being compiled.
            let line = Literal::u32_suffixed(u32::try_from(start.line).unwrap_or(u32::MAX));
            let column = Literal::u32_suffixed(u32::try_from(start.column + 1).unwrap_or(u32::MAX));
            quote!(::ein::__private::Site { file: ::core::file!(), line: #line, column: #column })
        } else {
            // Older compilers do not tell: `line!()`/`column!()` spanned at the user's token
            // expand to its position. (Clippy may then lint the literals they expand to as if
            // the user had written them, hence the first branch wherever possible.)
            quote_spanned! {span=>
                ::ein::__private::Site { file: ::core::file!(), line: ::core::line!(), column: ::core::column!() }
            }
        };
        self.sites.push(quote!(let #name = #site;));
        name
    }

    /// A `PhantomData` of type parameter `index`'s element type, as a value.
    fn marker(&self, index: usize, span: Span) -> syn::Result<TokenStream> {
        if index >= self.program.type_params.len() {
            return Err(internal(span, format!("type parameter {index} is not declared")));
        }
        let name = type_param_name(index);
        Ok(quote!(::core::marker::PhantomData::<#name>))
    }

    /// The views that a loop nest generated next could be versioned on: every array column in
    /// scope that is a plain local (taken before the nest is generated, so that locals the nest
    /// declares itself are never among them), in a deterministic order.
    fn version_candidates(&self) -> Vec<Ident> {
        let mut found = Vec::new();
        if !self.in_versioned && !self.no_versioning {
            self.env.values().for_each(|value| local_names(value, false, &mut found));
        }
        found.into_iter().map(|local| local.name).collect()
    }

    /// The locals (see [`local_names`]) of the variables in `inside`: those a loop nest reads
    /// from the enclosing code, where `inside` are the free variables of the IR the nest
    /// evaluates itself (its body: not its sizes, which are computed before it), and the
    /// transposed copies of those arrays, which its loops run side by side may read instead
    /// (so a nest may leave one unread: the statements that name them allow that).
    fn nest_locals(&self, inside: &BTreeSet<VarId>, scalars: bool) -> Vec<Local> {
        let copies = inside.iter().flat_map(|&var| self.analysis.transposed_copies_of(var));
        let vars: BTreeSet<VarId> = inside.iter().copied().chain(copies).collect();
        let mut found = Vec::new();
        for var in &vars {
            if let Some(value) = self.env.get(var) {
                local_names(value, scalars, &mut found);
            }
        }
        found
    }

    /// The flag of a fast copy of the chunk code that evaluates `body` (a comprehension's
    /// element), when `body` calls `sin` or `cos` on `f32`s and may run twice: the chunk then
    /// runs with `Float::sin_fast`/`cos_fast` (an all-f32 reduction by π/2, valid for
    /// |x| ≤ 12868, twice the lanes of the exact functions' f64 one), which set the flag for
    /// an argument beyond that; then the chunk's outputs are rewound and it runs again with
    /// the exact functions. Both give the same bits wherever the fast path holds, so the
    /// result does not depend on the chunking. Only for bodies that cannot fail (a garbage
    /// value must not raise an error the exact run would not), call no Rust function (which
    /// might see it) and evaluate no array of their own (whose nested parallel loops would
    /// need the flag to be `Sync`).
    fn fast_trig_flag(&mut self, body: &Expr) -> Option<Ident> {
        let eligible = self.fast_trig.is_none()
            && calls_f32_trig(body)
            && !self.analysis.may_fail(body)
            && evaluates_no_array(body)
            && !calls_rust(body);
        eligible.then(|| self.names.fresh("beyond_fast_trig"))
    }

    /// Runs `generate` for the fast copy of chunk code whose `sin` and `cos` set `flag`
    /// ([`Gen::fast_trig_flag`]).
    fn fast_copy<T>(&mut self, flag: &Ident, generate: impl FnOnce(&mut Self) -> syn::Result<T>) -> syn::Result<T> {
        self.fast_trig = Some(flag.clone());
        let result = generate(self);
        self.fast_trig = None;
        result
    }

    /// Runs `generate` for a loop nest that [`Gen::versioned`] will wrap (nested nests are
    /// then left alone: they run inside one copy or the other already).
    fn versioning<T>(&mut self, generate: impl FnOnce(&mut Self) -> syn::Result<T>) -> syn::Result<T> {
        let outer = std::mem::replace(&mut self.in_versioned, true);
        let result = generate(self);
        self.in_versioned = outer;
        result
    }

    /// For a parameter (at `path`, named `what`) holding arrays of tuples or records — a
    /// `#[vjp]` cotangent, whose columns the caller passes one by one — a check per column and
    /// axis that the column has the first column's shape: the program reads every column at
    /// the first one's indices.
    fn column_shape_checks(
        &mut self,
        ty: &Type,
        path: &TokenStream,
        what: &str,
        span: Span,
        checks: &mut Vec<TokenStream>,
    ) {
        match ty {
            Type::Array { elem, rank } if matches!(**elem, Type::Tuple { .. }) => {
                let tree = tree_at(elem, path);
                let columns = tree.leaves();
                let mut labels = Vec::new();
                column_labels(elem, "", &mut labels);
                let (Some(first), Some(first_label)) = (columns.first(), labels.first()) else { return };
                let site = self.site(span);
                for (column, label) in columns.iter().zip(&labels).skip(1) {
                    for axis in 0..*rank {
                        let axis_literal = Literal::usize_unsuffixed(axis);
                        let column_what = format!("axis {axis} of `{what}{label}`");
                        let first_what = format!(
                            "axis {axis} of `{what}{first_label}` (each column of `{what}` has the shape of the result)"
                        );
                        checks.push(quote! {
                            ::ein::__private::check_same_size(
                                #column.size(#axis_literal), #first.size(#axis_literal), "", #column_what, #first_what, &#site,
                            );
                        });
                    }
                }
            }
            Type::Tuple { fields, .. } => {
                for (position, field) in fields.iter().enumerate() {
                    let index = syn::Index::from(position);
                    self.column_shape_checks(field, &quote!(#path.#index), &format!("{what}.{position}"), span, checks);
                }
            }
            _ => {}
        }
    }

    /// A loop nest in two copies: one over the `candidates` it reads (those among the locals
    /// of `inside`, see [`Gen::nest_locals`]), each rebound to `View::unit_inner()` — the same
    /// view as a `UnitView`, whose reads add the last index unscaled, so that LLVM sees
    /// contiguous reads it can vectorise even where the view's memory escapes into an outlined
    /// closure (a stride of 1 stored in a field did not survive that: the conv kernels read
    /// element by element) — run when every one of them is contiguous along its
    /// last axis; the other, unchanged, for every other layout. Both copies compute exactly
    /// the same values: only what LLVM knows about the strides differs. Returns the tokens and
    /// whether they were versioned (some candidate is read).
    ///
    /// Where `nest_ir` (the IR the nest evaluates) reads some of them only by channel, as
    /// interleaved images ([`analysis::interleaved_reads`]), a third copy runs first when those
    /// hold pixels of that many contiguous channels (`View::packed_inner`) and the others are
    /// contiguous along their last axis.
    fn versioned(
        &self,
        candidates: &[Ident],
        inside: &BTreeSet<VarId>,
        nest_ir: &Expr,
        nest: TokenStream,
    ) -> (TokenStream, bool) {
        let read = self.nest_locals(inside, false);
        let used: Vec<&Local> =
            candidates.iter().filter_map(|candidate| read.iter().find(|local| local.name == *candidate)).collect();
        if used.is_empty() {
            return (nest, false);
        }
        let mut strides = BTreeMap::new();
        for &var in inside {
            if let Some(Value::Array(array)) = self.env.get(&var) {
                if let (Some(local), Some(stride)) = (array.as_local(), analysis::interleaved_reads(var, nest_ir)) {
                    strides.insert(local.clone(), stride);
                }
            }
        }
        let strides: Vec<Option<usize>> = used.iter().map(|local| strides.get(&local.name).copied()).collect();
        used.iter().for_each(|local| local.mark_read());
        let tuple = |items: Vec<TokenStream>| tuple_tokens(items);
        let any_none = (0..used.len()).map(|position| {
            tuple(
                (0..used.len())
                    .map(|slot| if slot == position { quote!(::core::option::Option::None) } else { quote!(_) })
                    .collect(),
            )
        });
        let used: Vec<&Ident> = used.iter().map(|local| &local.name).collect();
        let units = tuple(used.iter().map(|view| quote!(#view.unit_inner())).collect());
        let views = tuple(used.iter().map(|view| view.to_token_stream()).collect());
        let somes = tuple(used.iter().map(|view| quote!(::core::option::Option::Some(#view))).collect());
        // The general copy rebinds the views to locals of its own too, so that LLVM knows no
        // output write can change them and keeps their pointers and strides in registers.
        let versioned = quote! {
            match #units {
                #[allow(unused_variables)]
                #(#any_none)|* => {
                    let #views = #views;
                    #nest
                }
                #[allow(unused_variables)]
                #somes => {
                    #nest
                }
            }
        };
        if strides.iter().all(Option::is_none) {
            return (versioned, true);
        }
        let packed = tuple(
            used.iter()
                .zip(&strides)
                .map(|(view, stride)| match stride {
                    Some(stride) => {
                        let stride = Literal::usize_unsuffixed(*stride);
                        quote!(#view.packed_inner::<#stride>())
                    }
                    None => quote!(#view.unit_inner()),
                })
                .collect(),
        );
        let versioned = quote! {
            match #packed {
                #[allow(unused_variables)]
                #somes => {
                    #nest
                }
                _ => #versioned
            }
        };
        (versioned, true)
    }

    /// The statement that starts a loop nest that is the body of a closure the runtime calls
    /// once per chunk: a copy of every scalar and view local of the enclosing code it reads
    /// (the locals of `inside`, see [`Gen::nest_locals`]) into a local of its own; empty if
    /// there is none. The closure captures those by reference, through a pointer LLVM cannot
    /// see past: without the copy, any output write might change them, so they would be
    /// reloaded per element and the loop would not vectorise (measured: pathfinder's
    /// `wall[t + 1, j]` reloaded `t`; a row array built inside softmax's rows reloaded `x`).
    fn local_copies(&self, inside: &BTreeSet<VarId>) -> TokenStream {
        let locals = self.nest_locals(inside, true);
        if locals.is_empty() {
            return TokenStream::new();
        }
        locals.iter().for_each(Local::mark_read);
        let names = tuple_tokens(locals.iter().map(|local| local.name.to_token_stream()).collect());
        quote! {
            #[allow(unused_variables)]
            let #names = #names;
        }
    }

    /// Generates `body` in a new block one level deeper (a closure or loop body).
    fn nested<T>(
        &mut self,
        in_loop: bool,
        body: impl FnOnce(&mut Self, &mut Block) -> syn::Result<T>,
    ) -> syn::Result<(Block, T)> {
        let mut block = Block::new();
        self.level += 1;
        self.loop_depth += usize::from(in_loop);
        let result = body(self, &mut block);
        self.level -= 1;
        self.loop_depth -= usize::from(in_loop);
        Ok((block, result?))
    }
}

/// Whether a type contains an array.
fn has_array(ty: &Type) -> bool {
    ty.has_array()
}

/// The locals a value lives in, each once, in order: its views that are exactly a local, and
/// with `scalars` its scalars that are.
fn local_names(value: &Value, scalars: bool, found: &mut Vec<Local>) {
    let (name, read) = match value {
        Value::Plain(code) if scalars => (code.local.as_ref(), None),
        Value::Plain(_) => (None, None),
        Value::Array(array) => (array.as_local(), array.read_flag()),
        Value::Tuple(fields) => return fields.iter().for_each(|field| local_names(field, scalars, found)),
    };
    if let Some(name) = name.filter(|name| !found.iter().any(|local| local.name == **name)) {
        found.push(Local { name: name.clone(), read });
    }
}

/// A local a value lives in, with the flag of its `let` if that is a view `let` that may be
/// left out ([`Block::push_view`]).
struct Local {
    name: Ident,
    read: Option<ViewRead>,
}

impl Local {
    /// Code that prints the local is being generated.
    fn mark_read(&self) {
        self.read.iter().for_each(ViewRead::mark);
    }
}

/// The value of `path` of type `ty` (views for arrays), which is the local `local` if given;
/// `read` is the flag of the view `let` it reads, if it may be left out.
fn value_at_path(ty: &Type, path: &TokenStream, local: Option<&Ident>, read: &Option<ViewRead>) -> Value {
    match ty {
        Type::Array { elem, .. } => Value::Array(ArrayValue::bound(tree_at(elem, path), None, read.clone(), local)),
        Type::Tuple { fields, .. } if has_array(ty) => Value::Tuple(
            fields
                .iter()
                .enumerate()
                .map(|(position, field)| {
                    let position = syn::Index::from(position);
                    value_at_path(field, &quote!(#path.#position), None, read)
                })
                .collect(),
        ),
        _ => Value::Plain(Code { simple: true, local: local.cloned(), ..Code::expr(path.clone(), Prec::Atom) }),
    }
}

/// The column tree of an array with element type `elem` stored at `path`.
fn tree_at(elem: &Type, path: &TokenStream) -> Tree {
    match elem {
        Type::Tuple { fields, .. } => Tree::Node(
            fields
                .iter()
                .enumerate()
                .map(|(position, field)| {
                    let position = syn::Index::from(position);
                    tree_at(field, &quote!(#path.#position))
                })
                .collect(),
        ),
        _ => Tree::Leaf(path.clone()),
    }
}

/// The absolute path of a concrete scalar type.
fn primitive(scalar: Scalar) -> TokenStream {
    let name = Ident::new(scalar.name(), Span::call_site());
    quote!(::core::primitive::#name)
}

/// A scalar type as Rust spells it: a primitive, or the expression form's generic parameter
/// for an element type rustc decides ([`type_param_name`]).
fn spelled(ty: &ScalarType) -> TokenStream {
    match ty {
        ScalarType::Known(scalar) => primitive(*scalar),
        ScalarType::Param(index) => type_param_name(*index).to_token_stream(),
    }
}

/// The name of type parameter `index` in the expression form's generic function.
fn type_param_name(index: usize) -> Ident {
    Ident::new(&format!("EinElem{index}"), Span::call_site())
}

/// The type of a function parameter: arrays by reference to any storage.
fn param_type(ty: &Type, span: Span) -> syn::Result<TokenStream> {
    match ty {
        Type::Scalar(scalar) => Ok(spelled(scalar)),
        Type::Array { elem, rank } => {
            let rank = Literal::usize_unsuffixed(*rank);
            column_types(elem, span, &mut |scalar| {
                let scalar = spelled(&scalar);
                quote!(&(impl ?::core::marker::Sized + ::ein::__private::AsView<#scalar, #rank>))
            })
        }
        Type::Tuple { fields, .. } => {
            Ok(tuple_tokens(fields.iter().map(|field| param_type(field, span)).collect::<syn::Result<_>>()?))
        }
    }
}

/// The owned Rust type of a result: `::ein::Array` for arrays (a tuple of them for arrays of
/// tuples).
fn owned_type(ty: &Type, span: Span) -> syn::Result<TokenStream> {
    match ty {
        Type::Scalar(scalar) => Ok(spelled(scalar)),
        Type::Array { elem, rank } => {
            let rank = Literal::usize_unsuffixed(*rank);
            column_types(elem, span, &mut |scalar| {
                let scalar = spelled(&scalar);
                quote!(::ein::Array<#scalar, #rank>)
            })
        }
        Type::Tuple { fields, .. } => {
            Ok(tuple_tokens(fields.iter().map(|field| owned_type(field, span)).collect::<syn::Result<_>>()?))
        }
    }
}

/// The type of an `#[into]` function's `out` for a result of type `ty`: a mutable reference
/// to any storage implementing `AsViewMut` per array column, in the result's tuple structure.
fn out_type(ty: &Type, span: Span) -> syn::Result<TokenStream> {
    match ty {
        Type::Scalar(_) => Err(internal(span, "an `#[into]` result with a scalar part")),
        Type::Array { elem, rank } => {
            let rank = Literal::usize_unsuffixed(*rank);
            column_types(elem, span, &mut |scalar| {
                let scalar = spelled(&scalar);
                quote!(&mut (impl ?::core::marker::Sized + ::ein::__private::AsViewMut<#scalar, #rank>))
            })
        }
        Type::Tuple { fields, .. } => {
            Ok(tuple_tokens(fields.iter().map(|field| out_type(field, span)).collect::<syn::Result<_>>()?))
        }
    }
}

/// The `ViewMut`s of `out` (at `path`, of [`out_type`]), as one expression.
fn out_views(ty: &Type, path: &TokenStream) -> TokenStream {
    map_array_columns(
        ty,
        path,
        &mut |rank, column| quote!(::ein::__private::AsViewMut::<_, #rank>::as_view_mut(#column)),
    )
}

/// The out columns of a result of type `ty`, in order: the view at `path` (of [`out_views`])
/// and the user's name for it (`what`, e.g. `out.1`); `in_array` inside an array's elements.
fn out_columns(
    ty: &Type,
    in_array: bool,
    path: &TokenStream,
    what: &str,
    site: &Ident,
    columns: &mut Vec<OutColumn>,
) -> syn::Result<()> {
    match ty {
        Type::Array { elem, .. } => out_columns(elem, true, path, what, site, columns),
        Type::Tuple { fields, .. } => fields.iter().enumerate().try_for_each(|(position, field)| {
            let index = syn::Index::from(position);
            out_columns(field, in_array, &quote!(#path.#index), &format!("{what}.{position}"), site, columns)
        }),
        Type::Scalar(_) if in_array => {
            columns.push(OutColumn { view: path.clone(), what: format!("`{what}`"), site: site.clone() });
            Ok(())
        }
        Type::Scalar(_) => Err(internal(site.span(), "an `#[into]` result with a scalar part")),
    }
}

/// One type per column of an element type, in its tuple structure.
fn column_types(
    elem: &Type,
    span: Span,
    column: &mut impl FnMut(ScalarType) -> TokenStream,
) -> syn::Result<TokenStream> {
    match elem {
        Type::Scalar(scalar) => Ok(column(*scalar)),
        Type::Tuple { fields, .. } => {
            Ok(tuple_tokens(fields.iter().map(|field| column_types(field, span, column)).collect::<syn::Result<_>>()?))
        }
        Type::Array { .. } => Err(internal(span, "an array of arrays")),
    }
}

/// The statement value that turns a parameter into views (`None` if it has no array).
fn rebind(ty: &Type, path: &TokenStream, style: ParamStyle) -> Option<TokenStream> {
    has_array(ty).then(|| {
        map_array_columns(ty, path, &mut |rank, column| match style {
            ParamStyle::Captured => quote!(::ein::__private::AsView::<_, #rank>::as_view(&#column)),
            ParamStyle::Reference => quote!(::ein::__private::AsView::<_, #rank>::as_view(#column)),
        })
    })
}

/// The label of every scalar leaf of an element type, in column order: `.re`, `.1.x`.
fn column_labels(elem: &Type, prefix: &str, labels: &mut Vec<String>) {
    match elem {
        Type::Tuple { fields, names } => {
            for (position, field) in fields.iter().enumerate() {
                let name = names.get(position).cloned().unwrap_or_else(|| position.to_string());
                column_labels(field, &format!("{prefix}.{name}"), labels);
            }
        }
        _ => labels.push(prefix.to_string()),
    }
}

/// The value of type `ty` at `path` as one expression, with every array column (the path of
/// one column of an array, and the array's rank) replaced by `column(rank, path)`; scalars and
/// parts without arrays stay as they are.
fn map_array_columns(
    ty: &Type,
    path: &TokenStream,
    column: &mut impl FnMut(Literal, &TokenStream) -> TokenStream,
) -> TokenStream {
    match ty {
        Type::Array { elem, rank } => {
            let rank = Literal::usize_unsuffixed(*rank);
            tree_at(elem, path).map(&mut |tokens| column(rank.clone(), tokens)).tuple()
        }
        Type::Tuple { fields, .. } if has_array(ty) => tuple_tokens(
            fields
                .iter()
                .enumerate()
                .map(|(position, field)| {
                    let position = syn::Index::from(position);
                    map_array_columns(field, &quote!(#path.#position), column)
                })
                .collect(),
        ),
        _ => path.clone(),
    }
}

/// The wide copies of every generated function, widest first: the name of the copy, its target
/// features, and the runtime's function that says whether to take it (it checks the CPU).
const WIDE_COPIES: [(&str, &[&str], &str); 2] = [
    ("widest", &["avx512f", "avx512vl", "avx512bw", "avx512dq", "avx512cd", "avx2", "fma"], "widest_simd"),
    ("wide", &["avx2", "fma"], "wide_simd"),
];

/// Whether some node of `expr` (itself included) satisfies `test`.
fn any_node(expr: &Expr, test: &impl Fn(&Expr) -> bool) -> bool {
    let mut found = test(expr);
    expr.for_each_child(|child| found = found || any_node(child, test));
    found
}

/// Whether `expr` calls `sin` or `cos` on an `f32`, or on a float type rustc decides (the
/// expression form's), which have a fast path ([`Gen::fast_trig_flag`]; `f64`'s "fast" path
/// is its exact one and never sets the flag).
fn calls_f32_trig(expr: &Expr) -> bool {
    use crate::ops::Func;
    any_node(expr, &|node| {
        matches!(&node.kind, ExprKind::Call(call)
        if matches!(call.func, Func::Sin | Func::Cos)
            && call.args.first().is_some_and(|arg| matches!(
                arg.ty,
                Type::Scalar(ScalarType::Known(Scalar::F32) | ScalarType::Param(_))
            )))
    })
}

/// Whether `expr` calls a Rust function the block declared with `extern fn`.
fn calls_rust(expr: &Expr) -> bool {
    any_node(expr, &|node| matches!(node.kind, ExprKind::Extern(_)))
}

/// Whether every array `expr` evaluates is one that already exists, or a view of one (a
/// variable, a field of one, a row of one): then its code makes no closures of its own (no
/// nested `fill_chunks`, which would need the fast path's `Cell` flag to be `Sync`).
fn evaluates_no_array(expr: &Expr) -> bool {
    match &expr.kind {
        ExprKind::Var(_) => true,
        ExprKind::Project(project) if has_array(&expr.ty) => evaluates_no_array(&project.tuple),
        ExprKind::Index(index) if has_array(&expr.ty) => {
            evaluates_no_array(&index.array) && evaluates_no_array(&index.index)
        }
        _ if has_array(&expr.ty) => false,
        _ => {
            let mut none = true;
            expr.for_each_child(|child| none = none && evaluates_no_array(child));
            none
        }
    }
}

/// Whether `expr` calls one of ein's own polynomial math functions (`exp`, `ln`, `sin`, `cos`,
/// `tanh`: vectorisable, compute-bound), not a libm call such as `pow`, which no copy widens.
fn calls_polynomial_math(expr: &Expr) -> bool {
    use crate::ops::Func;
    any_node(expr, &|node| {
        matches!(&node.kind, ExprKind::Call(call)
            if matches!(call.func, Func::Exp | Func::Ln | Func::Sin | Func::Cos | Func::Tanh))
    })
}
