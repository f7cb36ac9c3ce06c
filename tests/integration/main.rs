//! Integration tests of `ein`, in one test binary so the suite compiles once.
//!
//! - Differential tests (`linear_algebra`, `stencils`, `reductions`, `scan`, `scalars`, `structure`,
//!   `shapes`, `edge_cases`, `expression_form`): every program is compiled by `ein!` and also
//!   parsed, checked and run by the reference interpreter (`ein_core::interp`) on the same
//!   random inputs, for several shape cases (always including an empty axis, length-1 axes and
//!   larger sizes, some above the parallel grain size) in several memory layouts (row-major,
//!   transposed, stepped, reversed, and a mixed plan with a broadcast argument); the answers
//!   must agree. See `harness.rs`.
//! - `calls`: functions of one block calling each other (inlined) and `extern fn`s, whose
//!   Rust functions the interpreter is given too (`differential!` with `with { .. }`).
//! - `storage`: inputs of every supported storage type (`Vec`, slices, Rust arrays,
//!   `ein::Array`/`View`, ndarray), in both forms, against the interpreter.
//! - `errors`: run-time errors (size mismatches, empty `argmax`, empty reads, negative sizes
//!   and fold counts, division by zero) panic with the documented message in compiled code and
//!   fail the same way in the interpreter.
//! - `harness_checks`: the harness itself (layouts have the strides they claim; every kind of
//!   disagreement fails a run).
//! - `jvp`: `#[jvp]` companions (forward-mode derivatives), compiled against the interpreted
//!   companion and the primal's dual numbers ([`differential_jvp!`]).
//! - `vjp`: `#[vjp]` and `#[grad]` companions (reverse mode), compiled against the interpreted
//!   companion, which must be the transpose of the primal's dual numbers ([`differential_vjp!`]);
//!   `finite_differences`: compiled `#[grad]`s against central differences of the compiled
//!   primal, in f64.
//! - `ui`: trybuild compile-fail tests of the diagnostics.
//!
//! A test states its program once, with [`differential!`] (item form) or
//! [`differential_expr!`] (expression form):
//!
//! ```text
//! differential! {
//!     matvec: fn(a: [[f64]], x: [f64]) -> [f64] { for i { sum j { a[i, j] * x[j] } } }
//!     cases [m, n] in [[3, 4], [1, 1], [0, 5], [6, 0]];
//!     args (a = array([m, n]), x = array([n]));
//! }
//! ```
//!
//! `cases` binds size variables for each shape case; `args` lists every parameter in order, as
//! `array(shape)` (optionally `.within(low, high)`) or `scalar(value)`, written in terms of the
//! size variables. Element types come from the program's signature by inference. Every case runs
//! under every [`harness::LayoutPlan`]; at least three cases must complete without a run-time
//! error (cases where compiled code and interpreter fail with the same error also agree). In
//! [`differential_expr!`], `ein!(…) -> Type;` binds the result to a local of that type (the Rust
//! use site that types literals the block leaves open); without it the type is rustc's choice.

/// A differential test of an item-form program: `name: fn(params) -> ret { body }`, then the
/// shape cases and the arguments. The program's tokens go both to `ein::ein!` (as `fn run`) and,
/// stringified, to `ein_core` for the interpreter.
macro_rules! differential {
    // With more items in the block (helpers `run` calls, `extern fn`s) and the interpreter's
    // Rust functions for the `extern fn`s (`harness::extern1`).
    (
        $(#[$attr:meta])*
        $name:ident: fn ( $($params:tt)* ) -> $ret:tt $body:tt
        with { $($items:tt)* }
        $(externs ($($extern:expr),* $(,)?);)?
        cases [$($size:ident),+ $(,)?] in [$($case:expr),+ $(,)?];
        args ($($arg:ident = $spec:expr),* $(,)?);
    ) => {
        $(#[$attr])*
        #[test]
        fn $name() {
            ::ein::ein! { fn run($($params)*) -> $ret $body $($items)* }
            let register = |externs: ::ein_core::interp::Externs| {
                $($(let externs = ($extern)(externs);)*)?
                externs
            };
            differential!(@runs $name, (fn run($($params)*) -> $ret $body $($items)*),
                with register,
                cases [$($size),+] in [$($case),+]; args ($($arg = $spec),*);
                |_plan| run($($arg.pass()),*));
        }
    };
    (
        $(#[$attr:meta])*
        $name:ident: fn ( $($params:tt)* ) -> $ret:tt $body:tt
        cases [$($size:ident),+ $(,)?] in [$($case:expr),+ $(,)?];
        args ($($arg:ident = $spec:expr),* $(,)?);
    ) => {
        differential! {
            $(#[$attr])*
            $name: fn ($($params)*) -> $ret $body
            with {}
            cases [$($size),+] in [$($case),+];
            args ($($arg = $spec),*);
        }
    };
    // Every case under every layout plan: the arguments are instantiated, `$compiled` (which
    // may use the arguments and the plan) runs, and its outcome is checked.
    (
        @runs $name:ident, ($($source:tt)*), cases [$($size:ident),+] in [$($case:expr),+];
        args ($($arg:ident = $spec:expr),*); |$plan:ident| $compiled:expr
    ) => {
        differential!(@runs $name, ($($source)*), with |externs| externs,
            cases [$($size),+] in [$($case),+]; args ($($arg = $spec),*); |$plan| $compiled);
    };
    (
        @runs $name:ident, ($($source:tt)*), with $register:expr, cases [$($size:ident),+] in [$($case:expr),+];
        args ($($arg:ident = $spec:expr),*); |$plan:ident| $compiled:expr
    ) => {
        let oracle = $crate::harness::Oracle::new(stringify!($name), stringify!($($source)*), $crate::harness::Form::Item)
            .with_externs($register);
        let cases = [$($case),+];
        for (case_index, case) in cases.iter().enumerate() {
            let [$($size),+] = *case;
            let sizes = [$((stringify!($size), $size)),+];
            for $plan in $crate::harness::LayoutPlan::all(case_index) {
                let mut trial = oracle.start(case_index, &sizes, $plan);
                $(let $arg = ($spec).instantiate(&mut trial, stringify!($arg));)*
                $(let $arg = $arg.arg();)*
                let outcome = trial.compiled(|| $compiled);
                trial.check(outcome, vec![$($arg.input()),*]);
            }
        }
        oracle.finish(3);
    };
}

/// [`differential!`] for the `#[into(run_into)]` companion of a program returning one array:
/// each run calls `run` for the result's shape, then `run_into` with an `out` of that shape in
/// the plan's layout ([`harness::written_into`]), and checks what `out` holds against the
/// interpreter.
macro_rules! differential_into {
    (
        $(#[$attr:meta])*
        $name:ident: fn ( $($params:tt)* ) -> $ret:tt $body:tt
        cases [$($size:ident),+ $(,)?] in [$($case:expr),+ $(,)?];
        args ($($arg:ident = $spec:expr),* $(,)?);
    ) => {
        $(#[$attr])*
        #[test]
        fn $name() {
            ::ein::ein! { #[into(run_into)] fn run($($params)*) -> $ret $body }
            differential!(@runs $name, (fn run($($params)*) -> $ret $body),
                cases [$($size),+] in [$($case),+]; args ($($arg = $spec),*);
                |plan| {
                    let like = run($($arg.pass()),*);
                    $crate::harness::written_into(&like, plan.out_layout(), |out| run_into(out, $($arg.pass()),*))
                });
        }
    };
}

/// A differential test of an expression-form `ein!(…)`: the `let`s declare the Rust locals it
/// captures (arrays are captured as ndarray views, scalars by value); the interpreter gets the
/// same values by name and takes each type parameter's concrete type from the local that
/// witnesses it.
macro_rules! differential_expr {
    (
        $(#[$attr:meta])*
        $name:ident:
        cases [$($size:ident),+ $(,)?] in [$($case:expr),+ $(,)?];
        let $($local:ident = $spec:expr),+ $(,)?;
        ein!($($expr:tt)*) $(-> $result:ty)?;
        $(externs ($($extern:expr),* $(,)?);)?
    ) => {
        $(#[$attr])*
        #[test]
        fn $name() {
            // The Rust functions the expression calls, for the interpreter (`harness::extern1`).
            let register = |externs: ::ein_core::interp::Externs| {
                $($(let externs = ($extern)(externs);)*)?
                externs
            };
            let oracle = $crate::harness::Oracle::new(
                stringify!($name),
                stringify!($($expr)*),
                $crate::harness::Form::Expression,
            )
            .with_externs(register);
            let cases = [$($case),+];
            for (case_index, case) in cases.iter().enumerate() {
                let [$($size),+] = *case;
                let sizes = [$((stringify!($size), $size)),+];
                for plan in $crate::harness::LayoutPlan::all(case_index) {
                    let mut trial = oracle.start(case_index, &sizes, plan);
                    $(let $local = ($spec).instantiate(&mut trial, stringify!($local));)+
                    $(let $local = $local.arg();)+
                    let outcome = trial.compiled(|| {
                        $(let $local = $local.local();)+
                        let result $(: $result)? = ::ein::ein!($($expr)*);
                        result
                    });
                    trial.check(outcome, vec![$($local.input()),+]);
                }
            }
            oracle.finish(3);
        }
    };
}

/// [`differential!`] for the `#[jvp(run_jvp)]` companion: compiled `run_jvp` against the
/// interpreted companion, which must also equal the primal's dual numbers
/// ([`harness::Oracle::jvp`]); `args` list the primal's arguments then the tangents `d_…`.
macro_rules! differential_jvp {
    (
        $(#[$attr:meta])*
        $name:ident: fn ( $($params:tt)* ) -> $ret:tt $body:tt
        cases [$($size:ident),+ $(,)?] in [$($case:expr),+ $(,)?];
        args ($($arg:ident = $spec:expr),* $(,)?);
    ) => {
        differential_jvp! {
            $(#[$attr])*
            $name: fn ($($params)*) -> $ret $body
            with {}
            cases [$($size),+] in [$($case),+];
            args ($($arg = $spec),*);
        }
    };
    (
        $(#[$attr:meta])*
        $name:ident: fn ( $($params:tt)* ) -> $ret:tt $body:tt
        with { $($items:tt)* }
        $(externs ($($extern:expr),* $(,)?);)?
        cases [$($size:ident),+ $(,)?] in [$($case:expr),+ $(,)?];
        args ($($arg:ident = $spec:expr),* $(,)?);
    ) => {
        $(#[$attr])*
        #[test]
        fn $name() {
            ::ein::ein! { #[jvp(run_jvp)] fn run($($params)*) -> $ret $body $($items)* }
            let register = |externs: ::ein_core::interp::Externs| {
                $($(let externs = ($extern)(externs);)*)?
                externs
            };
            let oracle = $crate::harness::Oracle::new(
                stringify!($name),
                stringify!(fn run($($params)*) -> $ret $body $($items)*),
                $crate::harness::Form::Item,
            )
            .with_externs(register)
            .jvp();
            let cases = [$($case),+];
            for (case_index, case) in cases.iter().enumerate() {
                let [$($size),+] = *case;
                let sizes = [$((stringify!($size), $size)),+];
                for plan in $crate::harness::LayoutPlan::all(case_index) {
                    let mut trial = oracle.start(case_index, &sizes, plan);
                    $(let $arg = ($spec).instantiate(&mut trial, stringify!($arg));)*
                    $(let $arg = $arg.arg();)*
                    let outcome = trial.compiled(|| run_jvp($($arg.pass()),*));
                    trial.check(outcome, vec![$($arg.input()),*]);
                }
            }
            oracle.finish(3);
        }
    };
}

/// [`differential!`] for the `#[vjp(run_vjp)]` companion (or, starting with `grad`, the
/// `#[grad(run_vjp)]` one): compiled `run_vjp` against the interpreted companion, which must also
/// be the transpose of the primal's dual numbers ([`harness::Oracle::vjp`]); `args` list the
/// primal's arguments then (for `vjp`) `cotangent`.
macro_rules! differential_vjp {
    (
        $(#[$attr:meta])*
        $kind:ident $name:ident: fn ( $($params:tt)* ) -> $ret:tt $body:tt
        cases [$($size:ident),+ $(,)?] in [$($case:expr),+ $(,)?];
        args ($($arg:ident = $spec:expr),* $(,)?);
    ) => {
        differential_vjp! {
            $(#[$attr])*
            $kind $name: fn ($($params)*) -> $ret $body
            with {}
            cases [$($size),+] in [$($case),+];
            args ($($arg = $spec),*);
        }
    };
    (
        $(#[$attr:meta])*
        $kind:ident $name:ident: fn ( $($params:tt)* ) -> $ret:tt $body:tt
        with { $($items:tt)* }
        $(externs ($($extern:expr),* $(,)?);)?
        cases [$($size:ident),+ $(,)?] in [$($case:expr),+ $(,)?];
        args ($($arg:ident = $spec:expr),* $(,)?);
    ) => {
        $(#[$attr])*
        #[test]
        fn $name() {
            ::ein::ein! { #[$kind(run_vjp)] fn run($($params)*) -> $ret $body $($items)* }
            let register = |externs: ::ein_core::interp::Externs| {
                $($(let externs = ($extern)(externs);)*)?
                externs
            };
            let oracle = $crate::harness::Oracle::new(
                stringify!($name),
                stringify!(fn run($($params)*) -> $ret $body $($items)*),
                $crate::harness::Form::Item,
            )
            .with_externs(register)
            .vjp(stringify!($kind) == "grad");
            let cases = [$($case),+];
            for (case_index, case) in cases.iter().enumerate() {
                let [$($size),+] = *case;
                let sizes = [$((stringify!($size), $size)),+];
                for plan in $crate::harness::LayoutPlan::all(case_index) {
                    let mut trial = oracle.start(case_index, &sizes, plan);
                    $(let $arg = ($spec).instantiate(&mut trial, stringify!($arg));)*
                    $(let $arg = $arg.arg();)*
                    let outcome = trial.compiled(|| run_vjp($($arg.pass()),*));
                    trial.check(outcome, vec![$($arg.input()),*]);
                }
            }
            oracle.finish(3);
        }
    };
}

/// Compiles a program with `ein!` as `$module::run` and keeps its tokens for the interpreter as
/// `$module::SOURCE`: for tests that call one program by hand on chosen inputs.
macro_rules! program {
    ($module:ident: fn ( $($params:tt)* ) -> $ret:tt $body:tt) => {
        mod $module {
            ::ein::ein! { pub fn run($($params)*) -> $ret $body }
            #[allow(dead_code)] // Some programs are only run compiled.
            pub const SOURCE: &str = stringify!(fn run($($params)*) -> $ret $body);
        }
    };
}

mod harness;

mod accum;
mod calls;
mod contractions;
mod edge_cases;
mod errors;
mod expression_form;
mod filter;
mod finite_differences;
mod functions;
mod harness_checks;
mod inference;
mod linear_algebra;
mod random_views;
mod reductions;
mod scalars;
mod scan;
mod shapes;
mod soundness;
mod stencils;
mod storage;
mod structure;
mod tuple_reductions;
mod types;

mod hygiene;
mod into;
mod jvp;
mod ui;
mod vjp;
