//! ein-core: the ein compiler as an ordinary library. Tokens flow one way through named stages:
//! `syntax` (tokens → AST) → `check` (AST → typed IR, its `sizes` part inferring every size and proving reads in bounds) →
//! `ad` (derivative companions, IR → IR) → `passes` (IR → IR) → `analysis` (facts about the final IR, keyed by node id) → `codegen`
//! (IR and facts → Rust tokens). `interp` is the reference interpreter of the IR: the semantic
//! oracle every other stage is tested against.
//!
//! These are developer docs: read them with `cargo doc -p ein-core --document-private-items`,
//! where the links into each stage's private modules resolve.
#![allow(rustdoc::private_intra_doc_links)]

pub mod ad;
pub mod analysis;
pub mod check;
pub mod codegen;
pub mod interp;
pub mod ir;
pub mod ops;
pub mod passes;
pub mod syntax;

use proc_macro2::TokenStream;

/// The macro's entry point: compiles one `ein!` invocation, or returns its compile errors as
/// tokens. Never panics on any input.
pub fn expand(input: TokenStream) -> TokenStream {
    let items = syntax::is_item_form(&input);
    match compile(input) {
        Ok(tokens) => tokens,
        Err(error) if items => error.to_compile_error(),
        // In expression position the errors must still be one expression, of a type that
        // fits anywhere (`!`), so rustc reports them and nothing after them.
        Err(error) => {
            let errors = error.to_compile_error();
            quote::quote!({ #errors ::core::unreachable!() })
        }
    }
}

/// The checked units, each followed by the derivatives its attributes ask for (`#[jvp(..)]`,
/// `#[vjp(..)]`, `#[grad(..)]`),
/// which go through the passes and code generation like any function.
fn with_companions(units: Vec<ir::Unit>) -> syn::Result<Vec<ir::Unit>> {
    let mut all = Vec::with_capacity(units.len());
    for unit in units {
        let mut companions = Vec::new();
        if let ir::Form::Function(header) = &unit.form {
            if let Some(name) = &header.jvp {
                companions.push(ad::jvp_unit(&unit, header, name)?);
            }
            if let Some(reverse) = &header.reverse {
                companions.push(ad::vjp_unit(&unit, header, reverse)?);
            }
        }
        all.push(unit);
        all.extend(companions);
    }
    Ok(all)
}

/// Compiles one `ein!` invocation to Rust tokens.
pub fn compile(input: TokenStream) -> syn::Result<TokenStream> {
    let units = with_companions(check::check_input(syntax::parse_input(input)?)?)?;
    let tracker = codegen::build_settings_tracker();
    let mut output = TokenStream::new();
    let expression = matches!(units.as_slice(), [ir::Unit { form: ir::Form::Expression, .. }]);
    if !expression {
        output.extend(tracker.clone());
    }
    for unit in units {
        let name = unit.name_for_dump();
        let span = match &unit.form {
            ir::Form::Function(header) => header.name.span(),
            ir::Form::Expression => unit.program.body.span,
        };
        let internal = |message| syn::Error::new(span, format!("ein internal error: {message}"));
        // Copies for column-major arrays and for stacks of transposed matrices, where the
        // program has them (`passes::by_columns`). An optimisation only: a copy the pipeline
        // refuses is left out.
        let copies: Vec<codegen::MirroredCopy> = passes::by_columns::Mirror::ALL
            .into_iter()
            .filter_map(|mirror| {
                let (variant, params) = passes::by_columns::mirrored(&unit.program, mirror)?;
                let program =
                    passes::run_pipeline(variant, &format!("{name} {}", mirror.suffix().replace('_', " "))).ok()?;
                Some(codegen::MirroredCopy { program, params, mirror })
            })
            .collect();
        let program = passes::run_pipeline(unit.program, &name).map_err(internal)?;
        let generated = codegen::generate(&program, &unit.form, &copies)?;
        if passes::dump_enabled() {
            eprintln!("== ein: {name}: generated Rust ==\n{generated}");
        }
        output.extend(generated);
    }
    if expression {
        output = quote::quote!({ #tracker #output });
    }
    Ok(output)
}
