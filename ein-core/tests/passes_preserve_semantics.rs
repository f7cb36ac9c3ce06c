//! Semantic property test of the optimiser: every pass of `ein_core::passes::PIPELINE` must keep
//! the meaning of every program, as the reference interpreter (`ein_core::interp`) sees it.
//!
//! How: `ein_testing::programs` writes random, well-typed item-form programs as SOURCE TEXT
//! (`fn f(x0: [[f64]], n0: usize, ..) -> T { .. }`), so each one goes through the real parser and
//! checker (a checker that rejects a program the generator believes well-typed shows up in the
//! acceptance rate, which must stay at or above [`MIN_ACCEPTANCE`]; a checked program that the
//! interpreter cannot run, or that the validator rejects, is reported as a checker bug). Each
//! accepted program runs on several random input sets (random shapes including empty and
//! length-1 axes; sizes mostly consistent so that size checks pass, sometimes not), then the
//! passes run ONE AT A TIME; after each pass the IR is validated with `passes::validate`, every
//! read marked proven in bounds is proven again (`passes::validate_bounds`), and every
//! input set is run again and compared with the result before that pass.
//!
//! The generator's documentation lists what the programs cover: every construct of the language,
//! and the shapes the optimiser rewrites (invariant reductions, alpha-equivalent repeats,
//! let-bound producers, einsums and their near misses). The summary printed by every run shows
//! how many programs each pass changed and which run-time errors the inputs provoked, so a drift
//! of the generator away from what the passes rewrite is visible.
//!
//! What "the same answer" means (the policy this test enforces):
//! - success before ⇒ success after, with a value equal up to [`FLOAT_TOLERANCE`] relative
//!   (absolute near zero; NaN equals NaN; infinities exactly). The passes do no float algebra,
//!   so in practice results are bit-identical; the tolerance only absorbs documented
//!   summation-order freedom, should a pass ever use it.
//! - error before ⇒ error after. An internal error ("internal error: …") after a pass is always a
//!   failure, and so is a run-time error that the pass turned into a success or vice versa.
//! - The error MESSAGE must stay the same, with one documented exception: passes listed in
//!   [`PASSES_THAT_REORDER_FAILURES`] may evaluate failing code in a different order (the
//!   `inline` pass fuses a producer that may fail into its once-per-element consumer, so the
//!   producer's failures interleave with the consumer's). ein programs are pure and the
//!   semantics does not order two independent failures, so for those passes a different message
//!   is accepted when it is one the program before the pass can raise: its template (numbers
//!   blanked) is among the failure sites of that program's IR (a clamped read of that axis of
//!   that array, an integer division, an argmax/argmin over that index, a size of that index, that
//!   size check). Such changes are counted and printed. Every other pass (`simplify`, `hoist`,
//!   `cse`, `contract`) promises never to move code that can fail, so any message change there
//!   is a failure — except one that reports the same failure naming another of the USER's arrays
//!   (`x` instead of its alias `let g = x`, after copy propagation or CSE): the same read, under a
//!   name the user wrote. Naming a pass-made temporary (`__ein_…`) is a failure: those must read
//!   "a computed array". Failures of this kind are grouped as "the same kind of failure now
//!   names something else".
//! - A checked program whose ORIGINAL run ends in an internal error, or whose IR the validator
//!   rejects, is a checker (or interpreter) bug and fails the test too.
//!
//! Environment variables:
//! - `EIN_PROPERTY_CASES`: how many ACCEPTED programs to test (default [`DEFAULT_CASES`], each on
//!   [`INPUTS_PER_PROGRAM`] input sets; a debug run of the default takes about 5–10 s on two
//!   cores);
//! - `EIN_PROPERTY_SEED`: the run's seed (decimal or `0x` hex; default [`DEFAULT_SEED`]);
//! - `EIN_PROPERTY_CASE`: replay one case number only, printing its source, the IR after every
//!   pass and every outcome.
//!
//! Every case derives its own generator from (seed, case number), so a failure is reported with
//! the seed, the case number, the pass, the program source, the inputs and both outcomes, and
//! replays alone. Failures are grouped by (pass, problem), with the smallest examples printed.

use ein_core::interp::{self, ArrayValue, Value};
use ein_core::ir::node;
use ein_core::ir::{Bounds, Expr, ExprKind, Program, ReduceOp};
use ein_core::ops::BinaryOp;
use ein_core::passes::{validate, validate_bounds, PIPELINE};
use ein_testing::programs::{self, GeneratedProgram};
use ein_testing::{env_number, panic_message, Rng};
use proc_macro2::TokenStream;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::panic::{self, AssertUnwindSafe};
use std::str::FromStr;
use std::time::Instant;

/// Accepted programs per default run.
const DEFAULT_CASES: usize = 1500;
const DEFAULT_SEED: u64 = 0x005E_ED0F_E1A5;
/// Random input sets each program runs on.
const INPUTS_PER_PROGRAM: usize = 4;
/// The share of generated programs the checker must accept.
const MIN_ACCEPTANCE: f64 = 0.90;
/// Relative float tolerance of `Value::approx_eq`.
const FLOAT_TOLERANCE: f64 = 1e-9;
/// Passes allowed to surface a different one of the program's own failures first (see the
/// module docs).
const PASSES_THAT_REORDER_FAILURES: &[&str] = &["inline"];
/// Cases are handed to the worker threads in chunks of this many case numbers.
const CHUNK: usize = 50;
/// Failures are grouped by pass and problem; this many examples are kept per group (the
/// smallest programs, which are the easiest to read).
const EXAMPLES_PER_GROUP: usize = 2;
/// The checker needs a few kilobytes of stack per level, unoptimised.
const WORKER_STACK: usize = 16 << 20;

// =============================================================================================
// The test.

#[test]
fn every_pass_preserves_the_interpreters_answer() {
    let seed = env_number("EIN_PROPERTY_SEED").unwrap_or(DEFAULT_SEED);
    if let Some(case) = env_number("EIN_PROPERTY_CASE") {
        replay(seed, case);
        return;
    }
    let wanted = env_number("EIN_PROPERTY_CASES").map_or(DEFAULT_CASES, |cases| cases as usize);
    let start = Instant::now();
    let stats = run_cases(seed, wanted);
    let elapsed = start.elapsed();
    let generated = stats.accepted + stats.rejected;
    let acceptance = stats.accepted as f64 / generated.max(1) as f64;
    let mut summary = format!(
        "passes_preserve_semantics: seed {seed:#x}: {generated} programs generated, {} accepted ({:.1}%), \
         {} rejected, tested in {elapsed:.1?}\n  input runs: {} succeeded, {} failed with a run-time error \
         (before the passes)\n  programs changed by each pass: {}\n  error messages changed by reordering passes \
         (accepted, see module docs): {}",
        stats.accepted,
        acceptance * 100.0,
        stats.rejected,
        stats.runs_ok,
        stats.runs_error,
        PIPELINE
            .iter()
            .zip(&stats.changed_by_pass)
            .map(|(pass, count)| format!("{} {count}", pass.name))
            .collect::<Vec<_>>()
            .join(", "),
        stats.reordered,
    );
    if !stats.error_kinds.is_empty() {
        let mut kinds: Vec<(&String, &usize)> = stats.error_kinds.iter().collect();
        kinds.sort_by(|a, b| b.1.cmp(a.1));
        let _ = write!(summary, "\n  run-time errors before the passes, by kind:");
        for (kind, count) in kinds {
            let _ = write!(summary, "\n    {count} × {kind}");
        }
    }
    if !stats.rejections.is_empty() {
        let mut reasons: Vec<(&String, &usize)> = stats.rejections.iter().collect();
        reasons.sort_by(|a, b| b.1.cmp(a.1));
        let _ = write!(summary, "\n  most common rejections:");
        for (reason, count) in reasons.into_iter().take(6) {
            let _ = write!(summary, "\n    {count} × {reason}");
        }
    }
    eprintln!("{summary}");
    if !stats.failures.is_empty() {
        let total: usize = stats.failures.values().map(|(count, _)| count).sum();
        let mut message = format!("{total} failing case(s) in {} group(s), seed {seed:#x}:\n", stats.failures.len());
        for ((pass, problem), (count, _)) in &stats.failures {
            let _ = writeln!(message, "  {count} × pass `{pass}`: {problem}");
        }
        for ((pass, problem), (count, examples)) in &stats.failures {
            let _ = write!(message, "\n===== pass `{pass}`: {problem} ({count} case(s)); smallest example(s):\n");
            for failure in examples {
                let _ = write!(message, "\n{failure}");
            }
        }
        panic!("{message}");
    }
    assert!(
        acceptance >= MIN_ACCEPTANCE,
        "the checker accepted only {:.1}% of generated programs (at least {:.0}% required): the generator \
         has drifted from the language, or the checker rejects valid programs; see the rejections above",
        acceptance * 100.0,
        MIN_ACCEPTANCE * 100.0
    );
    assert!(stats.accepted >= wanted, "only {} programs were accepted, {wanted} wanted", stats.accepted);
}

#[derive(Default)]
struct Stats {
    accepted: usize,
    rejected: usize,
    rejections: BTreeMap<String, usize>,
    runs_ok: usize,
    runs_error: usize,
    /// Run-time errors of the checked programs, by kind (names and numbers blanked).
    error_kinds: BTreeMap<String, usize>,
    changed_by_pass: Vec<usize>,
    reordered: usize,
    /// Per (pass, problem): how many cases, and the smallest examples.
    failures: BTreeMap<(String, String), (usize, Vec<Failure>)>,
}

impl Stats {
    fn add(&mut self, outcome: CaseOutcome) {
        if self.changed_by_pass.is_empty() {
            self.changed_by_pass = vec![0; PIPELINE.len()];
        }
        match outcome {
            CaseOutcome::Rejected(reason) => {
                self.rejected += 1;
                *self.rejections.entry(reason).or_default() += 1;
            }
            CaseOutcome::Tested(tested) => {
                self.accepted += 1;
                self.runs_ok += tested.runs_ok;
                self.runs_error += tested.runs_error;
                for kind in tested.error_kinds {
                    *self.error_kinds.entry(kind).or_default() += 1;
                }
                for (total, changed) in self.changed_by_pass.iter_mut().zip(&tested.changed_by_pass) {
                    *total += usize::from(*changed);
                }
                self.reordered += tested.reordered;
                if let Some(failure) = tested.failure {
                    let (count, examples) =
                        self.failures.entry((failure.pass.clone(), failure.problem.clone())).or_default();
                    *count += 1;
                    examples.push(*failure);
                    examples.sort_by_key(|example| example.source.len());
                    examples.truncate(EXAMPLES_PER_GROUP);
                }
            }
        }
    }
}

/// Runs cases in chunks of consecutive numbers until `wanted` programs have been accepted (or
/// far too many were rejected). Deterministic: each case depends only on (seed, number).
fn run_cases(seed: u64, wanted: usize) -> Stats {
    let workers = std::thread::available_parallelism().map_or(2, |count| count.get()).clamp(1, 8);
    let mut stats = Stats::default();
    let mut next = 0u64;
    while stats.accepted < wanted && stats.rejected <= wanted {
        let chunk_start = next;
        next += (CHUNK * workers) as u64;
        let mut outcomes: Vec<(u64, CaseOutcome)> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..workers)
                .map(|worker| {
                    std::thread::Builder::new()
                        .name(format!("cases from {chunk_start}"))
                        .stack_size(WORKER_STACK)
                        .spawn_scoped(scope, move || {
                            let mut outcomes = Vec::new();
                            let mut case = chunk_start + worker as u64;
                            while case < chunk_start + (CHUNK * workers) as u64 {
                                outcomes.push((case, run_case(seed, case, false)));
                                case += workers as u64;
                            }
                            outcomes
                        })
                        .expect("spawn a worker")
                })
                .collect();
            handles.into_iter().flat_map(|handle| handle.join().expect("worker thread")).collect()
        });
        outcomes.sort_by_key(|(case, _)| *case);
        for (_, outcome) in outcomes {
            if stats.accepted >= wanted {
                break;
            }
            stats.add(outcome);
        }
    }
    stats
}

fn replay(seed: u64, case: u64) {
    let outcome = std::thread::Builder::new()
        .stack_size(WORKER_STACK)
        .spawn(move || run_case(seed, case, true))
        .expect("spawn")
        .join()
        .expect("replay thread");
    match outcome {
        CaseOutcome::Rejected(reason) => eprintln!("case {case} was rejected by the checker: {reason}"),
        CaseOutcome::Tested(tested) => match tested.failure {
            Some(failure) => panic!("{failure}"),
            None => eprintln!("case {case}: every pass preserved every answer"),
        },
    }
}

// =============================================================================================
// One case: generate, check, run the passes one by one, compare.

enum CaseOutcome {
    Rejected(String),
    Tested(Tested),
}

#[derive(Default)]
struct Tested {
    runs_ok: usize,
    runs_error: usize,
    error_kinds: Vec<String>,
    changed_by_pass: Vec<bool>,
    reordered: usize,
    failure: Option<Box<Failure>>,
}

struct Failure {
    seed: u64,
    case: u64,
    /// The pass after which the difference appeared, or a description of the stage.
    pass: String,
    problem: String,
    source: String,
    inputs: Option<String>,
    before: Option<String>,
    after: Option<String>,
    ir_before: Option<String>,
    ir_after: Option<String>,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "--- case {} (seed {:#x}), pass `{}`: {}", self.case, self.seed, self.pass, self.problem)?;
        writeln!(
            f,
            "    replay: EIN_PROPERTY_SEED={:#x} EIN_PROPERTY_CASE={} cargo test -p ein-core --test passes_preserve_semantics",
            self.seed, self.case
        )?;
        writeln!(f, "    source:\n{}", indent(&self.source, 8))?;
        if let Some(inputs) = &self.inputs {
            writeln!(f, "    inputs: {inputs}")?;
        }
        if let Some(before) = &self.before {
            writeln!(f, "    before the pass: {before}")?;
        }
        if let Some(after) = &self.after {
            writeln!(f, "    after the pass:  {after}")?;
        }
        if let Some(ir) = &self.ir_before {
            writeln!(f, "    IR before the pass:\n{}", indent(ir, 8))?;
        }
        if let Some(ir) = &self.ir_after {
            writeln!(f, "    IR after the pass:\n{}", indent(ir, 8))?;
        }
        Ok(())
    }
}

fn indent(text: &str, by: usize) -> String {
    let pad = " ".repeat(by);
    text.lines().map(|line| format!("{pad}{line}")).collect::<Vec<_>>().join("\n")
}

/// The result of one interpreter run, panics included.
type Outcome = Result<Value, String>;

fn interpret(program: &Program, args: &[Value]) -> Outcome {
    match panic::catch_unwind(AssertUnwindSafe(|| interp::run(program, args.to_vec(), &[]))) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(error.message),
        Err(payload) => Err(format!("PANIC in the interpreter: {}", panic_message(&*payload))),
    }
}

fn is_internal(message: &str) -> bool {
    message.starts_with("internal error") || message.starts_with("PANIC")
}

fn run_case(seed: u64, case: u64, verbose: bool) -> CaseOutcome {
    let mut rng = Rng::for_case(seed, case);
    let generated = programs::generate(&mut rng);
    let source = generated.source.clone();
    if verbose {
        eprintln!("case {case} source:\n{source}");
    }
    let failure = |pass: &str, problem: String| Failure {
        seed,
        case,
        pass: pass.to_string(),
        problem,
        source: source.clone(),
        inputs: None,
        before: None,
        after: None,
        ir_before: None,
        ir_after: None,
    };
    let tested_failure = |failure: Failure| {
        CaseOutcome::Tested(Tested {
            failure: Some(Box::new(failure)),
            changed_by_pass: vec![false; PIPELINE.len()],
            ..Tested::default()
        })
    };

    // Source → IR through the real front end.
    let tokens = match TokenStream::from_str(&source) {
        Ok(tokens) => tokens,
        Err(error) => return CaseOutcome::Rejected(format!("does not lex: {error}")),
    };
    let checked = panic::catch_unwind(AssertUnwindSafe(|| {
        let input = ein_core::syntax::parse_input(tokens).map_err(|error| format!("parse error: {error}"))?;
        ein_core::check::check_input(input).map_err(|error| format!("check error: {error}"))
    }));
    let units = match checked {
        Ok(Ok(units)) => units,
        Ok(Err(reason)) => {
            if verbose {
                eprintln!("rejected: {reason}");
            }
            return CaseOutcome::Rejected(rejection_key(&reason));
        }
        Err(payload) => {
            return tested_failure(failure("checker", format!("the front end panicked: {}", panic_message(&*payload))))
        }
    };
    let Some(unit) = units.into_iter().next() else {
        return tested_failure(failure("checker", "the checker returned no unit".to_string()));
    };
    let mut program = unit.program;
    if let Err(error) = validate(&program) {
        let mut failure = failure("checker", format!("the checker produced IR the validator rejects: {error}"));
        failure.ir_after = Some(program.to_string());
        return tested_failure(failure);
    }

    // Inputs and the original answers.
    let inputs: Vec<Vec<Value>> = (0..INPUTS_PER_PROGRAM).map(|_| generated.inputs(&mut rng)).collect();
    let mut outcomes: Vec<Outcome> = inputs.iter().map(|args| interpret(&program, args)).collect();
    let mut tested = Tested { changed_by_pass: vec![false; PIPELINE.len()], ..Tested::default() };
    for (args, outcome) in inputs.iter().zip(&outcomes) {
        match outcome {
            Ok(_) => tested.runs_ok += 1,
            Err(message) if is_internal(message) => {
                let mut failure = failure(
                    "checker",
                    "the checked program (before any pass) fails with an internal error: the checker let through \
                     a program the interpreter cannot run, or the interpreter is wrong"
                        .to_string(),
                );
                failure.inputs = Some(describe_args(&generated, args));
                failure.before = Some(describe_outcome(outcome));
                failure.ir_before = Some(program.to_string());
                tested.failure = Some(Box::new(failure));
                return CaseOutcome::Tested(tested);
            }
            Err(message) => {
                tested.runs_error += 1;
                tested.error_kinds.push(name_blind(message));
            }
        }
        if verbose {
            eprintln!("input {}\n  checked program: {}", describe_args(&generated, args), describe_outcome(outcome));
        }
    }
    if verbose {
        eprintln!("checked IR:\n{program}");
    }

    // The passes, one at a time.
    for (position, pass) in PIPELINE.iter().enumerate() {
        let before_text = program.to_string();
        let run = pass.run;
        let copy = program.clone();
        let after = match panic::catch_unwind(AssertUnwindSafe(move || run(copy))) {
            Ok(after) => after,
            Err(payload) => {
                let mut failure = failure(pass.name, format!("the pass panicked: {}", panic_message(&*payload)));
                failure.ir_before = Some(before_text);
                tested.failure = Some(Box::new(failure));
                return CaseOutcome::Tested(tested);
            }
        };
        let after_text = after.to_string();
        tested.changed_by_pass[position] = after_text != before_text;
        if verbose {
            eprintln!(
                "IR after `{}`{}:\n{after_text}",
                pass.name,
                if after_text == before_text { " (unchanged)" } else { "" }
            );
        }
        if let Err(error) = validate(&after).and_then(|()| validate_bounds(&after)) {
            let mut failure = failure(pass.name, format!("the pass produced IR the validator rejects: {error}"));
            failure.ir_before = Some(before_text);
            failure.ir_after = Some(after_text);
            tested.failure = Some(Box::new(failure));
            return CaseOutcome::Tested(tested);
        }
        let reorders = PASSES_THAT_REORDER_FAILURES.contains(&pass.name);
        let possible = if reorders { possible_errors(&program) } else { BTreeSet::new() };
        let mut new_outcomes = Vec::with_capacity(outcomes.len());
        for (args, before) in inputs.iter().zip(&outcomes) {
            let now = interpret(&after, args);
            if verbose {
                eprintln!("  after `{}`: {}", pass.name, describe_outcome(&now));
            }
            let verdict = compare(before, &now, reorders, &possible);
            match verdict {
                Verdict::Same => {}
                Verdict::Reordered => tested.reordered += 1,
                Verdict::Different(problem) => {
                    let mut failure = failure(pass.name, problem);
                    failure.inputs = Some(describe_args(&generated, args));
                    failure.before = Some(describe_outcome(before));
                    failure.after = Some(describe_outcome(&now));
                    failure.ir_before = Some(before_text);
                    failure.ir_after = Some(after_text);
                    tested.failure = Some(Box::new(failure));
                    return CaseOutcome::Tested(tested);
                }
            }
            new_outcomes.push(now);
        }
        outcomes = new_outcomes;
        program = after;
    }
    CaseOutcome::Tested(tested)
}

/// An error message with numbers and names blanked (`a computed array` counts as a name).
fn name_blind(message: &str) -> String {
    rejection_key(&error_template(message).replace("a computed array", "`…`"))
}

/// Groups rejection messages for the summary: the first line, names and numbers blanked.
fn rejection_key(reason: &str) -> String {
    let first = reason.lines().next().unwrap_or(reason);
    let mut key = String::new();
    let mut in_quote = false;
    for character in first.chars() {
        if character == '`' {
            in_quote = !in_quote;
            if in_quote {
                key.push_str("`…");
            } else {
                key.push('`');
            }
            continue;
        }
        if !in_quote {
            key.push(character);
        }
    }
    key
}

enum Verdict {
    Same,
    /// A different failure of the same program surfaced first (allowed for reordering passes),
    /// or the same failure naming an alias of the array the program read.
    Reordered,
    Different(String),
}

fn compare(before: &Outcome, after: &Outcome, reorders: bool, possible: &BTreeSet<String>) -> Verdict {
    match (before, after) {
        (Ok(left), Ok(right)) => {
            if left.approx_eq(right, FLOAT_TOLERANCE) {
                Verdict::Same
            } else {
                Verdict::Different("the pass changed the value".to_string())
            }
        }
        (Ok(_), Err(message)) => Verdict::Different(if is_internal(message) {
            "a program that ran became an internal error".to_string()
        } else {
            "a program that ran now fails".to_string()
        }),
        (Err(_), Ok(_)) => Verdict::Different("a program that failed now succeeds".to_string()),
        (Err(left), Err(right)) => {
            if left == right {
                Verdict::Same
            } else if is_internal(right) {
                Verdict::Different("a run-time error became an internal error".to_string())
            } else if reorders && possible.contains(&error_template(right)) {
                Verdict::Reordered
            } else if name_blind(left) == name_blind(right) && !right.contains(ein_core::ir::SYNTHETIC_PREFIX) {
                // The same failure, naming another of the user's arrays: copy propagation and CSE
                // read `x` where the program read an alias of it, e.g. `let g = x; g[0]`.
                Verdict::Reordered
            } else if name_blind(left) == name_blind(right) {
                Verdict::Different(
                    "the pass changed the error message: the same kind of failure now names something else".to_string(),
                )
            } else {
                Verdict::Different("the pass changed the error message".to_string())
            }
        }
    }
}

fn describe_outcome(outcome: &Outcome) -> String {
    match outcome {
        Ok(value) => format!("Ok({})", describe_value(value)),
        Err(message) => format!("Err({message:?})"),
    }
}

fn describe_args(generated: &GeneratedProgram, args: &[Value]) -> String {
    generated
        .params
        .iter()
        .zip(args)
        .map(|(param, value)| format!("{} = {}", param.name, describe_value(value)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A compact rendering: scalars as Rust literals, arrays as nested lists.
fn describe_value(value: &Value) -> String {
    match value {
        Value::F32(v) => format!("{v:?}f32"),
        Value::F64(v) => format!("{v:?}"),
        Value::I8(v) => format!("{v}i8"),
        Value::I16(v) => format!("{v}i16"),
        Value::I32(v) => format!("{v}i32"),
        Value::I64(v) => format!("{v}"),
        Value::Isize(v) => format!("{v}isize"),
        Value::U8(v) => format!("{v}u8"),
        Value::U16(v) => format!("{v}u16"),
        Value::U32(v) => format!("{v}u32"),
        Value::U64(v) => format!("{v}u64"),
        Value::Usize(v) => format!("{v}usize"),
        Value::Bool(v) => format!("{v}"),
        Value::Tuple(items) => format!("({})", items.iter().map(describe_value).collect::<Vec<_>>().join(", ")),
        Value::Array(array) => {
            fn nested(array: &ArrayValue, axis: usize, offset: usize) -> (String, usize) {
                if axis == array.shape.len() {
                    return (describe_value(&array.elements[offset]), 1);
                }
                let stride: usize = array.shape[axis + 1..].iter().product();
                let parts: Vec<String> = (0..array.shape[axis])
                    .map(|position| nested(array, axis + 1, offset + position * stride).0)
                    .collect();
                (format!("[{}]", parts.join(", ")), 0)
            }
            if array.shape.iter().product::<usize>() == 0 {
                format!("<empty array of shape {:?}>", array.shape)
            } else {
                nested(array, 0, 0).0
            }
        }
    }
}

// =============================================================================================
// The failures a program can raise, as message templates (numbers blanked), from its IR.

/// Blanks every number that is not part of a name: "size of index `k3` is -2" becomes
/// "size of index `k3` is #".
fn error_template(message: &str) -> String {
    let mut out = String::new();
    let characters: Vec<char> = message.chars().collect();
    let mut position = 0;
    while position < characters.len() {
        let character = characters[position];
        let previous = if position > 0 { Some(characters[position - 1]) } else { None };
        let in_name = previous.is_some_and(|p| p.is_alphanumeric() || p == '_');
        let is_number_start = character.is_ascii_digit()
            || (character == '-' && characters.get(position + 1).is_some_and(char::is_ascii_digit) && !in_name);
        if is_number_start && !in_name {
            position += 1;
            while position < characters.len() && characters[position].is_ascii_digit() {
                position += 1;
            }
            out.push('#');
            continue;
        }
        out.push(character);
        position += 1;
    }
    out
}

fn possible_errors(program: &Program) -> BTreeSet<String> {
    let mut templates = BTreeSet::new();
    collect_errors(program, &program.body, &mut templates);
    templates
}

fn collect_errors(program: &Program, expr: &Expr, templates: &mut BTreeSet<String>) {
    let name = |var: &ein_core::ir::VarId| program.vars[var.0 as usize].name.clone();
    match &expr.kind {
        ExprKind::Index(node::Index { array, bounds: Bounds::Clamped, .. }) => {
            let mut axis = 0;
            let mut current: &Expr = array;
            let described = loop {
                match &current.kind {
                    ExprKind::Index(node::Index { array, .. }) => {
                        axis += 1;
                        current = array;
                    }
                    ExprKind::Var(var) => break format!("empty axis {axis} of `{}`", name(var)),
                    _ => break format!("empty axis {axis} of a computed array"),
                }
            };
            templates.insert(error_template(&format!("read from {described}")));
        }
        ExprKind::Binary(node::Binary { op: BinaryOp::Div | BinaryOp::Rem, .. }) => {
            templates.insert("integer division by zero".to_string());
        }
        ExprKind::Reduce(node::Reduce { op, index, .. }) => {
            if matches!(op, ReduceOp::ArgMax | ReduceOp::ArgMin) {
                templates.insert(format!("{} over an empty range of index `{}`", op.name(), name(index)));
            }
            templates.insert(format!("size of index `{}` is #", name(index)));
        }
        ExprKind::For(node::For { index, .. }) => {
            templates.insert(format!("size of index `{}` is #", name(index)));
            templates.insert("size of axis # of an empty comprehension is #".to_string());
        }
        ExprKind::Fold(node::Fold { index, .. }) => {
            templates.insert(format!("size of index `{}` is #", name(index)));
        }
        ExprKind::Assert(node::Assert { checks, .. }) => {
            for check in checks {
                templates.insert(format!(
                    "size mismatch for index `{}`: {} has # elements but {} has #",
                    check.index_name,
                    error_template(&check.left_what),
                    error_template(&check.right_what)
                ));
            }
        }
        _ => {}
    }
    expr.for_each_child(|child| collect_errors(program, child, templates));
}
