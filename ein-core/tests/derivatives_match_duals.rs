//! Property tests of differentiation: for random programs of the property generator
//! (`ein_testing::programs`, every construct of the language), on random inputs and tangents:
//!
//! - the `#[jvp]` companion built by `ein_core::ad`, run by the interpreter, must give the value
//!   and tangent that the interpreter's dual numbers (`interp::run_dual`, which shares no code
//!   with `ad`) give for the primal;
//! - the `#[vjp]` companion must be its transpose: for a random cotangent `ct` and tangents `t`,
//!   ⟨vjp(ct), t⟩ = ⟨ct, dual tangent(t)⟩ to rounding, and its value must be the primal's.
//!
//! Each companion must pass the IR validator, go through the whole optimiser, and keep its
//! answer there; and the program with the companion's attribute must compile (`ein_core::compile`)
//! to Rust that parses. Programs a transformation refuses with a user-facing error (differentiating
//! through an `extern fn`, constructs reverse mode does not handle yet, …) are counted and
//! printed, never passed silently; an "internal error" is a failure. Tangents are compared
//! where the dual numbers' value and tangent are finite (see [`tangents_agree`]).
//!
//! Environment: `EIN_AD_CASES` (programs with a float parameter to test per mode, default
//! [`DEFAULT_CASES`]), `EIN_PROPERTY_SEED`, `EIN_AD_CASE` (replay one case, printing it).

use ein_core::ad::{jvp_program, vjp_program};
use ein_core::interp::{self, ArrayValue, Value};
use ein_core::ir::Program;
use ein_core::passes::{run_pipeline, validate, validate_bounds};
use ein_testing::programs;
use ein_testing::{env_number, panic_message, Rng};
use proc_macro2::TokenStream;
use std::collections::BTreeMap;
use std::panic::{self, AssertUnwindSafe};
use std::str::FromStr;

const DEFAULT_CASES: usize = 400;
const DEFAULT_SEED: u64 = 0x005E_ED0F_E1A5;
const INPUTS_PER_PROGRAM: usize = 3;
/// Relative tolerance (absolute near zero): the companion and the oracle round tangents
/// differently (the oracle computes function slopes in f64, the companion in the program's type;
/// the optimiser may sum in another order).
const TOLERANCE: f64 = 1e-3;
const WORKER_STACK: usize = 32 << 20;

#[test]
fn jvp_agrees_with_dual_numbers() {
    property(Mode::Jvp);
}

#[test]
fn vjp_is_the_transpose_of_dual_numbers() {
    property(Mode::Vjp);
}

#[derive(Clone, Copy, Debug)]
enum Mode {
    Jvp,
    Vjp,
}

fn property(mode: Mode) {
    let seed = env_number("EIN_PROPERTY_SEED").unwrap_or(DEFAULT_SEED);
    let wanted = env_number("EIN_AD_CASES").map_or(DEFAULT_CASES, |cases| cases as usize);
    let only = env_number("EIN_AD_CASE");
    let report = std::thread::Builder::new()
        .stack_size(WORKER_STACK)
        .spawn(move || run(mode, seed, wanted, only))
        .expect("spawn")
        .join()
        .expect("worker");
    eprintln!(
        "derivatives_match_duals ({mode:?}): seed {seed:#x}: {} programs with a float parameter differentiated, {} input \
         runs agreed ({} both failed), {} refused by the transformation: {:?}",
        report.tested, report.agreed, report.both_failed, report.refused_total, report.refused
    );
    if !report.failures.is_empty() {
        panic!(
            "{} failure(s); the first ones:\n\n{}",
            report.failures.len(),
            report.failures.iter().take(3).cloned().collect::<Vec<_>>().join("\n\n")
        );
    }
    assert!(only.is_some() || report.tested >= wanted, "only {} programs were tested", report.tested);
    assert!(report.agreed > report.tested, "too few successful runs to mean anything: {}", report.agreed);
}

#[derive(Default)]
struct Report {
    tested: usize,
    agreed: usize,
    both_failed: usize,
    refused_total: usize,
    refused: BTreeMap<String, usize>,
    failures: Vec<String>,
}

fn run(mode: Mode, seed: u64, wanted: usize, only: Option<u64>) -> Report {
    let mut report = Report::default();
    let mut case = only.unwrap_or(0);
    while report.tested < wanted && case < 50 * wanted as u64 {
        run_case(mode, seed, case, &mut report, only.is_some());
        if only.is_some() {
            break;
        }
        case += 1;
    }
    report
}

fn run_case(mode: Mode, seed: u64, case: u64, report: &mut Report, verbose: bool) {
    let mut rng = Rng::for_case(seed, case);
    let generated = programs::generate(&mut rng);
    let Some(program) = check(&generated.source) else { return };
    if !program.params.iter().any(|param| has_float(&program.var(*param).ty)) {
        return;
    }
    let fail = |report: &mut Report, problem: String| {
        report.failures.push(format!(
            "case {case} (replay: EIN_PROPERTY_SEED={seed:#x} EIN_AD_CASE={case} cargo test -p ein-core --test derivatives_match_duals {mode:?}): \
             {problem}\nsource:\n{}",
            generated.source
        ))
    };
    let wrt: Vec<_> = program.params.iter().copied().filter(|param| has_float(&program.var(*param).ty)).collect();
    let transformed = panic::catch_unwind(AssertUnwindSafe(|| match mode {
        Mode::Jvp => jvp_program(&program),
        Mode::Vjp => vjp_program(&program, false, &wrt),
    }));
    let jvp = match transformed {
        Ok(Ok(jvp)) => jvp,
        Ok(Err(error)) if error.to_string().contains("internal error") => return fail(report, error.to_string()),
        Ok(Err(error)) => {
            report.refused_total += 1;
            *report.refused.entry(error.to_string().split(':').next().unwrap_or_default().to_string()).or_default() +=
                1;
            return;
        }
        Err(payload) => return fail(report, format!("the transformation panicked: {}", panic_message(&*payload))),
    };
    report.tested += 1;
    if verbose {
        eprintln!("source:\n{}\njvp IR:\n{jvp}", generated.source);
    }
    if let Err(error) = validate(&jvp).and_then(|()| validate_bounds(&jvp)) {
        return fail(report, format!("the companion breaks an IR invariant: {error}\nIR:\n{jvp}"));
    }
    let optimised = match panic::catch_unwind(AssertUnwindSafe(|| run_pipeline(jvp.clone(), "jvp"))) {
        Ok(Ok(optimised)) => optimised,
        Ok(Err(error)) => return fail(report, format!("the optimiser rejects the companion: {error}\nIR:\n{jvp}")),
        Err(payload) => return fail(report, format!("the optimiser panicked: {}", panic_message(&*payload))),
    };
    if let Err(problem) = compiles_with_companion(&generated.source, mode) {
        return fail(report, problem);
    }
    for _ in 0..INPUTS_PER_PROGRAM {
        let args = generated.inputs(&mut rng);
        let tangents: Vec<Value> = program
            .params
            .iter()
            .zip(&args)
            .filter(|(param, _)| has_float(&program.var(**param).ty))
            .map(|(_, arg)| random_tangent(arg, &mut rng))
            .collect();
        let expected = interp::run_dual(&program, args.clone(), tangents.clone(), &interp::Externs::default());
        if let Mode::Vjp = mode {
            match check_transpose(&program, &jvp, &optimised, &args, &tangents, &expected, &mut rng) {
                Ok(true) => report.agreed += 1,
                Ok(false) => report.both_failed += 1,
                Err(problem) => {
                    return fail(report, format!("{problem}\ninputs: {args:?}\ntangents: {tangents:?}\nIR:\n{jvp}"))
                }
            }
            continue;
        }
        let all_args: Vec<Value> = args.iter().cloned().chain(tangents.iter().cloned()).collect();
        for (what, companion) in [("companion", &jvp), ("optimised companion", &optimised)] {
            let got = panic::catch_unwind(AssertUnwindSafe(|| interp::run(companion, all_args.clone(), &[])));
            let got = match got {
                Ok(got) => got,
                Err(payload) => return fail(report, format!("the interpreter panicked: {}", panic_message(&*payload))),
            };
            match (&expected, got) {
                (Ok((value, tangent)), Ok(Value::Tuple(pair))) if pair.len() == 2 => {
                    if !(value.approx_eq(&pair[0], TOLERANCE) && tangents_agree(value, tangent, &pair[1])) {
                        return fail(
                            report,
                            format!(
                                "the {what} disagrees with dual numbers\ninputs: {args:?}\ntangents: {tangents:?}\n\
                                 duals: {value:?}, {tangent:?}\n{what}: {:?}, {:?}\nIR:\n{companion}",
                                pair[0], pair[1]
                            ),
                        );
                    }
                    report.agreed += 1;
                }
                (Err(_), Err(error)) if !error.message.contains("internal error") => report.both_failed += 1,
                (expected, got) => {
                    return fail(
                        report,
                        format!(
                            "the {what} gives {got:?}, dual numbers {expected:?}\ninputs: {args:?}\nIR:\n{companion}"
                        ),
                    )
                }
            }
        }
    }
}

/// ⟨vjp(ct), t⟩ = ⟨ct, jvp(t)⟩ for a random cotangent `ct` of the result's shape, the
/// right-hand side from dual numbers (`duals`); and the companion's value is the primal's, in
/// the companion and the optimised companion. `Ok(false)`: both failed at run time (or the
/// derivative is undefined there); `Err`: a disagreement.
fn check_transpose(
    primal: &Program,
    companion: &Program,
    optimised: &Program,
    args: &[Value],
    tangents: &[Value],
    duals: &Result<(Value, Value), interp::RuntimeError>,
    rng: &mut Rng,
) -> Result<bool, String> {
    let _ = primal;
    let (value, tangent) = match duals {
        Ok(pair) => pair,
        Err(_) => {
            // The primal fails: so must the companion (given any cotangent of the right type).
            return Ok(false);
        }
    };
    // No cotangent where the value is not finite: there is no derivative there.
    let cotangent = random_cotangent(value, rng);
    let expected = dot(&cotangent, tangent);
    let all_args: Vec<Value> = args.iter().cloned().chain([cotangent.clone()]).collect();
    for (what, program) in [("companion", companion), ("optimised companion", optimised)] {
        let got = panic::catch_unwind(AssertUnwindSafe(|| interp::run(program, all_args.clone(), &[])))
            .map_err(|payload| format!("the interpreter panicked: {}", panic_message(&*payload)))?;
        let outputs = match got {
            Ok(Value::Tuple(outputs)) if outputs.len() == tangents.len() + 1 => outputs,
            other => return Err(format!("the {what} gives {other:?}; the primal succeeds with {value:?}")),
        };
        if !value.approx_eq(&outputs[0], TOLERANCE) {
            return Err(format!("the {what}'s value {:?} is not the primal's {value:?}", outputs[0]));
        }
        let (Some(expected), Some(got)) = (expected, dot_all(&outputs[1..], tangents)) else { return Ok(false) };
        let scale = expected.1.max(got.1).max(1.0);
        if (expected.0 - got.0).abs() > TOLERANCE * scale {
            return Err(format!(
                "the {what} is not the transpose of dual numbers: ⟨vjp(ct), t⟩ = {} but ⟨ct, jvp(t)⟩ = {}\n\
                 cotangent: {cotangent:?}\nadjoints: {:?}\ndual tangent: {tangent:?}",
                got.0,
                expected.0,
                &outputs[1..]
            ));
        }
    }
    Ok(true)
}

/// ⟨a, b⟩ over the float leaves, with the sum of the terms' magnitudes (for the tolerance);
/// `None` if any term is not finite.
fn dot(a: &Value, b: &Value) -> Option<(f64, f64)> {
    match (a, b) {
        (Value::F64(x), Value::F64(y)) => finite_term(*x * *y),
        (Value::F32(x), Value::F32(y)) => finite_term(f64::from(*x) * f64::from(*y)),
        (Value::Tuple(xs), Value::Tuple(ys)) if xs.len() == ys.len() => dot_all(xs, ys),
        (Value::Array(xs), Value::Array(ys)) if xs.shape == ys.shape => dot_all(&xs.elements, &ys.elements),
        (Value::Array(_) | Value::Tuple(_), _) | (_, Value::Array(_) | Value::Tuple(_)) => None,
        _ => Some((0.0, 0.0)),
    }
}

fn dot_all(xs: &[Value], ys: &[Value]) -> Option<(f64, f64)> {
    if xs.len() != ys.len() {
        return None;
    }
    xs.iter().zip(ys).try_fold((0.0, 0.0), |(sum, size), (x, y)| {
        let (term, magnitude) = dot(x, y)?;
        Some((sum + term, size + magnitude))
    })
}

fn finite_term(term: f64) -> Option<(f64, f64)> {
    term.is_finite().then_some((term, term.abs()))
}

/// Tangents agree where the dual numbers' tangent and value are finite: at an infinite or NaN
/// value the derivative does not exist, and a NaN or infinite tangent means it does not exist
/// there or overflowed; IEEE arithmetic then gives several defensible answers (`0 · ∞` is NaN in
/// one grouping of the terms and left out as a structural zero in another: a fold's tangent is a
/// zero from the start, a dual number's only from its first step).
fn tangents_agree(value: &Value, expected: &Value, got: &Value) -> bool {
    let undefined = |value: f64, tangent: f64| !value.is_finite() || !tangent.is_finite();
    match (value, expected, got) {
        (Value::F64(value), Value::F64(expected), Value::F64(_)) if undefined(*value, *expected) => true,
        (Value::F32(value), Value::F32(expected), Value::F32(_))
            if undefined(f64::from(*value), f64::from(*expected)) =>
        {
            true
        }
        (Value::Tuple(values), Value::Tuple(expected), Value::Tuple(got)) => {
            expected.len() == got.len()
                && values.len() == got.len()
                && values.iter().zip(expected).zip(got).all(|((v, e), g)| tangents_agree(v, e, g))
        }
        (Value::Array(values), Value::Array(expected), Value::Array(got)) => {
            expected.shape == got.shape
                && values
                    .elements
                    .iter()
                    .zip(&expected.elements)
                    .zip(&got.elements)
                    .all(|((v, e), g)| tangents_agree(v, e, g))
        }
        (_, expected, got) => expected.approx_eq(got, TOLERANCE),
    }
}

/// The program with `#[jvp(run_jvp)]` or `#[vjp(run_vjp)]` goes through the whole compiler,
/// code generation included, to Rust that parses.
fn compiles_with_companion(source: &str, mode: Mode) -> Result<(), String> {
    let companion = match mode {
        Mode::Jvp => "run_jvp",
        Mode::Vjp => "run_vjp",
    };
    let attribute = format!("#[{}({companion})]", &companion[4..]);
    let tokens = TokenStream::from_str(&format!("{attribute} {source}")).map_err(|error| error.to_string())?;
    let compiled = panic::catch_unwind(AssertUnwindSafe(|| ein_core::compile(tokens)))
        .map_err(|payload| format!("the compiler panicked: {}", panic_message(&*payload)))?;
    let output = compiled.map_err(|error| format!("the compiler rejects the program with its companion: {error}"))?;
    if !output.to_string().contains(&format!("fn {companion}")) {
        return Err(format!("the generated Rust defines no `{companion}`"));
    }
    syn::parse2::<syn::File>(output).map(drop).map_err(|error| format!("the generated Rust does not parse: {error}"))
}

fn check(source: &str) -> Option<Program> {
    let tokens = TokenStream::from_str(source).ok()?;
    let input = ein_core::syntax::parse_input(tokens).ok()?;
    let units = ein_core::check::check_input(input).ok()?;
    units.into_iter().next().map(|unit| unit.program)
}

fn has_float(ty: &ein_core::ir::Type) -> bool {
    use ein_core::ir::{ScalarType, Type};
    match ty {
        Type::Scalar(ScalarType::Known(scalar)) => scalar.is_float(),
        Type::Scalar(_) => false,
        Type::Array { elem, .. } => has_float(elem),
        Type::Tuple { fields, .. } => fields.iter().any(has_float),
    }
}

/// A cotangent of `value`'s type and shape: random floats in [-1, 1], 0 where the value is not
/// finite, other scalars as they are.
fn random_cotangent(value: &Value, rng: &mut Rng) -> Value {
    match value {
        Value::F64(value) if !value.is_finite() => Value::F64(0.0),
        Value::F32(value) if !value.is_finite() => Value::F32(0.0),
        Value::Tuple(fields) => Value::Tuple(fields.iter().map(|field| random_cotangent(field, rng)).collect()),
        Value::Array(array) => Value::Array(ArrayValue {
            shape: array.shape.clone(),
            elements: array.elements.iter().map(|element| random_cotangent(element, rng)).collect(),
        }),
        other => random_tangent(other, rng),
    }
}

/// A tangent of `value`'s type and shape: random floats in [-1, 1], other scalars as they are.
fn random_tangent(value: &Value, rng: &mut Rng) -> Value {
    match value {
        Value::F64(_) => Value::F64(rng.uniform(-1.0, 1.0)),
        Value::F32(_) => Value::F32(rng.uniform(-1.0, 1.0) as f32),
        Value::Tuple(fields) => Value::Tuple(fields.iter().map(|field| random_tangent(field, rng)).collect()),
        Value::Array(array) => Value::Array(ArrayValue {
            shape: array.shape.clone(),
            elements: array.elements.iter().map(|element| random_tangent(element, rng)).collect(),
        }),
        other => other.clone(),
    }
}
