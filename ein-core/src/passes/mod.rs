//! Stage 4, passes: the optimisation pipeline, a plain list of named IR → IR functions
//! (Futhark's habit: that list is what makes dumping, disabling and bisecting passes cheap).
//! With `EIN_DUMP=1` in the environment of the build, the IR before and after every pass is
//! printed to stderr. In every build the IR is validated ([`validate()`]) as the checker gives
//! it and after the last pass, where every read marked proven in bounds is also proven again
//! ([`validate_bounds`]); debug builds of the compiler validate after every pass too, and a
//! failure names the pass.

pub mod by_columns;
mod contract;
mod cse;
mod field_lets;
mod filter_reductions;
mod fuse_reductions;
mod hoist;
mod inline;
pub(crate) mod purity;
mod share_rows;
mod share_steps;
mod simplify;
mod split_lets;
mod transpose;
mod validate;

use crate::ir::{node, Expr, ExprKind, Program, VarId, VarInfo};
pub use transpose::transposition_of;
pub use validate::{validate, validate_bounds};

/// One optimisation: a name (for dumps and errors) and the rewrite.
pub struct Pass {
    pub name: &'static str,
    pub run: fn(Program) -> Program,
}

/// The standard pipeline, in order. A tuple accumulator's projected array fields are bound
/// first (`field_lets`), as a tuple pattern binds them. Fusion first (inlining, then reductions of a filter's result
/// reading its input instead; so producers disappear before anything is
/// lifted out of them), then lifting, then sharing what lifting made visible, then lifting
/// again what sharing exposed; then costly terms that the reductions of every element of a
/// comprehension compute alike are given one array (step sharing), and a final clean-up; then
/// expensive terms a reduction and the comprehension after it both compute are given one array; contractions are recognised last, in the
/// loop nests the other passes left (after fusion and lifting, and so that no other pass needs
/// to look inside a contraction). Splitting an element's `let`s into comprehensions of their
/// own comes after everything else: it only serves code generation (each part runs side by
/// side), and the passes before would lift or fuse what it splits.
pub const PIPELINE: &[Pass] = &[
    Pass { name: "inline", run: inline::inline },
    Pass { name: "filter-reductions", run: filter_reductions::filter_reductions },
    Pass { name: "field-lets", run: field_lets::field_lets },
    Pass { name: "simplify", run: simplify::simplify },
    Pass { name: "hoist", run: hoist::hoist },
    Pass { name: "cse", run: cse::eliminate_common_subexpressions },
    Pass { name: "hoist-again", run: hoist::hoist },
    Pass { name: "share-steps", run: share_steps::share_steps },
    Pass { name: "simplify-again", run: simplify::simplify },
    Pass { name: "share-rows", run: share_rows::share_rows },
    Pass { name: "contract", run: contract::contract },
    Pass { name: "transpose", run: transpose::transpose_across },
    Pass { name: "fuse-reductions", run: fuse_reductions::fuse_reductions },
    Pass { name: "split-lets", run: split_lets::split_lets },
];

/// Runs `rewrite` on the program's body with its variable table, which it may extend (the
/// passes that declare variables of their own).
fn rewrite_body(mut program: Program, rewrite: impl FnOnce(Expr, &mut Vec<VarInfo>) -> Expr) -> Program {
    let mut vars = std::mem::take(&mut program.vars);
    program.body = rewrite(program.body.take(), &mut vars);
    program.vars = vars;
    program
}

/// `lets` (in order) around `body`.
fn bind_lets(lets: Vec<(VarId, Expr)>, body: Expr) -> Expr {
    lets.into_iter().rev().fold(body, |inner, (var, value)| {
        let (ty, span) = (inner.ty.clone(), inner.span);
        Expr::new(ExprKind::Let(node::Let { var, value: Box::new(value), body: Box::new(inner) }), ty, span)
    })
}

/// Whether `EIN_DUMP` asks for dumps.
pub fn dump_enabled() -> bool {
    std::env::var_os("EIN_DUMP").is_some_and(|value| !value.is_empty() && value != "0")
}

/// Runs every pass of [`PIPELINE`] on a checked program.
pub fn run_pipeline(program: Program, unit_name: &str) -> Result<Program, String> {
    run_passes(program, unit_name, PIPELINE)
}

/// Runs the given passes, dumping and validating as described in the module docs.
pub fn run_passes(mut program: Program, unit_name: &str, passes: &[Pass]) -> Result<Program, String> {
    let dump = dump_enabled();
    if dump {
        eprintln!("== ein: {unit_name}: checked IR ==\n{program}");
    }
    // In every build (so that no program compiles in one profile and not in another); after
    // each pass only in debug builds, to name the pass that broke an invariant.
    validate(&program).map_err(|error| format!("the checker produced invalid IR: {error}"))?;
    for pass in passes {
        program = (pass.run)(program);
        if dump {
            eprintln!("== ein: {unit_name}: after {} ==\n{program}", pass.name);
        }
        if cfg!(debug_assertions) {
            validate(&program)
                .and_then(|()| validate_bounds(&program))
                .map_err(|error| format!("pass `{}` produced invalid IR: {error}", pass.name))?;
        }
    }
    // In every build: the invariants hold, and no read reaches code generation unchecked
    // unless the prover agrees.
    validate(&program)
        .and_then(|()| validate_bounds(&program))
        .map_err(|error| format!("the optimised IR is invalid: {error}"))?;
    Ok(program)
}

#[cfg(test)]
mod contract_tests;
#[cfg(test)]
mod tests;
