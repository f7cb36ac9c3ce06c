//! Never-panic property test of the whole compiler: `ein_core::compile` (parser, checker, size
//! inference, passes, code generator) must answer every token stream with `Ok` or `Err`, never
//! a panic, a stack overflow or a hang. Output that compiles must also be syntactically valid
//! Rust, and no input may provoke an "ein internal error" (a checked program must go through the
//! later stages: user errors come only from the front stages, and any failure after type
//! checking is the compiler's fault).
//!
//! Inputs come from five generators, mixed per case (see [`Generator`]):
//! - random token streams over ein's vocabulary (names, keywords, reduction and function names,
//!   types, literals of every kind, punctuation with random spacing, nested groups of all four
//!   delimiters, including the invisible ones `macro_rules!` produces);
//! - mutations of a corpus of valid programs in both forms (token deletion, duplication, swap,
//!   replacement and insertion, group unwrapping, wrapping and re-delimiting, and splicing in a
//!   fragment of another program);
//! - random well-typed programs from `ein_testing::programs` (the generator of the optimiser's
//!   property test), in the item form or the expression form (the parameters then captured
//!   locals): nearly all are accepted, so they drive size inference, every pass and the code
//!   generator through large real programs, which token noise rarely reaches. They are the
//!   costliest cases (about ten times a corpus mutation), hence a small share;
//! - mutations of such programs (the same edits as the corpus mutations), which reach the
//!   checker's errors from deep inside programs;
//! - deep and long inputs (nesting, operator chains, `let` sequences) near and past the
//!   parser's limits, where recursion would overflow the stack.
//!
//! Every case has its own seed derived from the run's seed and the case number, so a failure is
//! reported with both and replays alone. Environment variables:
//! - `EIN_FUZZ_CASES`: how many cases (default [`DEFAULT_CASES`], sized to keep a debug run
//!   well under a minute; use 1000000 or more for a long run);
//! - `EIN_FUZZ_SEED`: the run's seed (decimal or `0x` hex; default [`DEFAULT_SEED`], so CI is
//!   reproducible);
//! - `EIN_FUZZ_CASE`: replay only this case number, printing its input and the outcome with the
//!   panic's full message and location.
//!
//! Cases run on worker threads with an 8 MiB stack, as rustc gives the thread that runs proc
//! macros; a stack overflow aborts the process, and the thread's name then tells which range of
//! cases to replay.
//!
//! Limits: accepted output is checked for Rust syntax only (syn), not compiled; whether it
//! type-checks and computes the right thing is what the differential tests in
//! `tests/integration` check, on fewer but meaningful programs.

use ein_testing::{env_number, panic_message, programs, Rng};
use proc_macro2::{Delimiter, Group, Punct, Spacing, TokenStream, TokenTree};
use std::fmt::Write as _;
use std::panic::{self, AssertUnwindSafe};
use std::str::FromStr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Cases per default run: about 30 s of CPU unoptimised, spread over the available cores.
const DEFAULT_CASES: usize = 100_000;
const DEFAULT_SEED: u64 = 0x00E1_F022_5EED;
/// Cases per worker thread name, so an abort (stack overflow) names a small range.
const CHUNK: usize = 500;
/// rustc runs proc macros on its main thread, which has 8 MiB of stack.
const WORKER_STACK: usize = 8 << 20;
/// A single compile slower than this fails the test (a hang or a blow-up). It is wall-clock
/// time on a possibly busy machine, so it is generous: typical cases take well under 10 ms
/// unoptimised, and the summary line names the slowest case of the run.
const SLOW: Duration = Duration::from_secs(20);
/// Stop collecting after this many distinct failures.
const MAX_FAILURES: usize = 20;

// ---------------------------------------------------------------------------------------------
// The test.

#[test]
fn compile_never_panics() {
    let seed = env_number("EIN_FUZZ_SEED").unwrap_or(DEFAULT_SEED);
    if let Some(case) = env_number("EIN_FUZZ_CASE") {
        replay(seed, case as usize);
        return;
    }
    let cases = env_number("EIN_FUZZ_CASES").map_or(DEFAULT_CASES, |cases| cases as usize);
    let start = Instant::now();
    let report = run(seed, cases);
    eprintln!(
        "never_panic: {cases} cases (seed {seed:#x}) in {:.1?}: {} accepted, {} rejected; \
         per generator (cases/accepted in compile time): {}; slowest case {} ({:.1?})",
        start.elapsed(),
        report.accepted,
        cases - report.accepted,
        report.per_generator(),
        report.slowest.0,
        report.slowest.1,
    );
    if !report.failures.is_empty() {
        let mut message = format!("{} distinct failure(s) in {cases} cases, seed {seed:#x}:\n", report.failures.len());
        for failure in &report.failures {
            let _ = writeln!(
                message,
                "\n--- case {} ({:?}): {}\n    replay: EIN_FUZZ_SEED={seed:#x} EIN_FUZZ_CASE={} \
                 cargo test -p ein-core --test never_panic\n    input: {}",
                failure.case, failure.generator, failure.problem, failure.case, failure.input,
            );
        }
        panic!("{message}");
    }
}

/// The corpus must stay valid as the language evolves: otherwise mutations start from noise.
#[test]
fn corpus_programs_compile() {
    for &(source, item_form) in CORPUS {
        let tokens =
            TokenStream::from_str(source).unwrap_or_else(|error| panic!("corpus does not lex: {error}\n{source}"));
        assert_eq!(starts_like_items(&tokens), item_form, "the form of this corpus program is misread:\n{source}");
        if let Err(error) = ein_core::compile(tokens) {
            panic!("corpus program rejected: {error}\n{source}");
        }
    }
}

#[derive(Default)]
struct Report {
    accepted: usize,
    /// Cases, accepted cases and time spent compiling, per generator.
    per_generator: [(usize, usize, Duration); Generator::ALL.len()],
    slowest: (usize, Duration),
    failures: Vec<Failure>,
}

impl Report {
    fn per_generator(&self) -> String {
        let parts: Vec<String> = Generator::ALL
            .iter()
            .zip(&self.per_generator)
            .map(|(generator, (cases, accepted, time))| format!("{generator:?} {cases}/{accepted} in {time:.1?}"))
            .collect();
        parts.join(", ")
    }

    fn merge(&mut self, other: Report) {
        self.accepted += other.accepted;
        for (total, part) in self.per_generator.iter_mut().zip(other.per_generator) {
            total.0 += part.0;
            total.1 += part.1;
            total.2 += part.2;
        }
        if other.slowest.1 > self.slowest.1 {
            self.slowest = other.slowest;
        }
        for failure in other.failures {
            let known = self.failures.iter().any(|known| known.problem == failure.problem);
            if self.failures.len() < MAX_FAILURES && !known {
                self.failures.push(failure);
            }
        }
    }
}

struct Failure {
    case: usize,
    generator: Generator,
    problem: String,
    input: String,
}

/// Runs cases `0..cases` on worker threads, chunk by chunk.
fn run(seed: u64, cases: usize) -> Report {
    let next_chunk = Arc::new(AtomicUsize::new(0));
    let total = Arc::new(Mutex::new(Report::default()));
    let workers = std::thread::available_parallelism().map_or(2, |count| count.get()).min(16);
    // Panics on fuzz threads are caught and reported with their input; the default hook would
    // print each one. Panics elsewhere (another test of this binary) still reach it.
    let previous_hook = Arc::new(panic::take_hook());
    let delegate = Arc::clone(&previous_hook);
    panic::set_hook(Box::new(move |info| {
        let fuzzing = std::thread::current().name().is_some_and(|name| name.starts_with("never_panic cases"));
        if !fuzzing {
            delegate(info);
        }
    }));
    let handles: Vec<_> = (0..workers)
        .map(|worker| {
            let (next_chunk, total) = (Arc::clone(&next_chunk), Arc::clone(&total));
            std::thread::Builder::new()
                .name(format!("never_panic worker {worker}"))
                .stack_size(WORKER_STACK)
                .spawn(move || loop {
                    let first = next_chunk.fetch_add(CHUNK, Ordering::Relaxed);
                    if first >= cases {
                        break;
                    }
                    let last = (first + CHUNK).min(cases);
                    // A named thread per chunk: a stack overflow's abort message names the range.
                    let chunk = std::thread::Builder::new()
                        .name(format!("never_panic cases {first}..{last} seed {seed:#x}"))
                        .stack_size(WORKER_STACK)
                        .spawn(move || run_chunk(seed, first..last))
                        .expect("spawn a fuzz thread");
                    let report = chunk.join().expect("a fuzz chunk failed outside catch_unwind");
                    total.lock().unwrap_or_else(|poison| poison.into_inner()).merge(report);
                })
                .expect("spawn a fuzz worker")
        })
        .collect();
    for handle in handles {
        handle.join().expect("a fuzz worker failed");
    }
    panic::set_hook(Box::new(move |info| previous_hook(info)));
    Arc::try_unwrap(total).ok().expect("workers are done").into_inner().unwrap_or_else(|poison| poison.into_inner())
}

fn run_chunk(seed: u64, cases: std::ops::Range<usize>) -> Report {
    // Token trees are not `Send`: every thread lexes its own vocabulary and corpus.
    let fuzz = Fuzz::new();
    let mut report = Report::default();
    for case in cases {
        let (generator, input) = fuzz.generate(&mut Rng::for_case(seed, case as u64));
        let kept = input.clone();
        let start = Instant::now();
        let outcome = check_one(input);
        let elapsed = start.elapsed();
        let slot = &mut report.per_generator[generator as usize];
        slot.0 += 1;
        slot.2 += elapsed;
        if elapsed > report.slowest.1 {
            report.slowest = (case, elapsed);
        }
        let problem = match outcome {
            Outcome::Accepted => {
                report.accepted += 1;
                slot.1 += 1;
                None
            }
            Outcome::Rejected => None,
            Outcome::Problem(problem) => Some(problem),
        };
        let problem = problem.or_else(|| (elapsed > SLOW).then(|| format!("took {elapsed:.1?}")));
        if let Some(problem) = problem {
            let failure = Failure { case, generator, problem, input: show(&kept) };
            report.merge(Report { failures: vec![failure], ..Report::default() });
        }
    }
    report
}

fn replay(seed: u64, case: usize) {
    std::thread::Builder::new()
        .name(format!("never_panic case {case} seed {seed:#x}"))
        .stack_size(WORKER_STACK)
        .spawn(move || replay_on_this_thread(seed, case))
        .expect("spawn the replay thread")
        .join()
        .unwrap_or_else(|payload| panic::resume_unwind(payload));
}

fn replay_on_this_thread(seed: u64, case: usize) {
    let (generator, input) = Fuzz::new().generate(&mut Rng::for_case(seed, case as u64));
    eprintln!("case {case} (seed {seed:#x}, {generator:?}):\n{}\n", show(&input));
    // The default hook stays, so a panic prints its location (and a backtrace with RUST_BACKTRACE).
    match check_one(input) {
        Outcome::Accepted => eprintln!("accepted"),
        Outcome::Rejected => eprintln!("rejected with an ordinary compile error"),
        Outcome::Problem(problem) => panic!("{problem}"),
    }
}

enum Outcome {
    Accepted,
    Rejected,
    Problem(String),
}

/// Compiles one input and judges the result.
fn check_one(input: TokenStream) -> Outcome {
    let expression_form = !starts_like_items(&input);
    let result = panic::catch_unwind(AssertUnwindSafe(|| ein_core::compile(input)));
    match result {
        Err(payload) => Outcome::Problem(format!("panic: {}", panic_message(&*payload))),
        Ok(Err(error)) => match error.into_iter().find(|error| error.to_string().contains("internal error")) {
            Some(internal) => Outcome::Problem(format!("internal error: {internal}")),
            None => Outcome::Rejected,
        },
        Ok(Ok(output)) => {
            let parsed = if expression_form {
                syn::parse2::<syn::Expr>(output.clone()).map(drop)
            } else {
                syn::parse2::<syn::File>(output.clone()).map(drop)
            };
            match parsed {
                Ok(()) => Outcome::Accepted,
                Err(error) => {
                    let mut text = show(&output);
                    if text.len() > 3000 {
                        let cut = (0..=3000).rev().find(|&at| text.is_char_boundary(at)).unwrap_or(0);
                        text.truncate(cut);
                        text.push_str(" …");
                    }
                    Outcome::Problem(format!("accepted, but the output is not valid Rust ({error}): {text}"))
                }
            }
        }
    }
}

/// Mirrors the parser's choice of form, to know what the output must parse as. syn's `peek`
/// sees through invisible groups (and skips empty ones), so this does too; Rust item keywords
/// other than `fn` and `pub` also choose the item form, which then rejects them.
fn starts_like_items(input: &TokenStream) -> bool {
    match first_visible(input) {
        Some(TokenTree::Punct(punct)) => punct.as_char() == '#',
        Some(TokenTree::Ident(ident)) => ITEM_KEYWORDS.iter().any(|keyword| ident == keyword),
        _ => false,
    }
}

const ITEM_KEYWORDS: &[&str] = &[
    "pub", "fn", "struct", "enum", "impl", "trait", "type", "const", "static", "use", "mod", "extern", "unsafe",
    "async",
];

fn first_visible(stream: &TokenStream) -> Option<TokenTree> {
    for tree in stream.clone() {
        match tree {
            TokenTree::Group(group) if group.delimiter() == Delimiter::None => {
                if let Some(first) = first_visible(&group.stream()) {
                    return Some(first);
                }
            }
            other => return Some(other),
        }
    }
    None
}

/// Token text as `to_string` gives it, but with the invisible groups that `macro_rules!`
/// produces made visible as `⟦ .. ⟧`, since they change how input parses.
fn show(stream: &TokenStream) -> String {
    let mut text = String::new();
    for tree in stream.clone() {
        if !text.is_empty() {
            text.push(' ');
        }
        match tree {
            TokenTree::Group(group) if group.delimiter() == Delimiter::None => {
                let _ = write!(text, "⟦ {} ⟧", show(&group.stream()));
            }
            TokenTree::Group(group) => {
                let (open, close) = match group.delimiter() {
                    Delimiter::Parenthesis => ("(", ")"),
                    Delimiter::Bracket => ("[", "]"),
                    _ => ("{", "}"),
                };
                let inner = show(&group.stream());
                if inner.is_empty() {
                    let _ = write!(text, "{open}{close}");
                } else {
                    let _ = write!(text, "{open} {inner} {close}");
                }
            }
            TokenTree::Punct(punct) if punct.spacing() == Spacing::Joint => {
                // Joint punctuation is written without the space that follows it.
                text.push(punct.as_char());
                text.push('\u{1}');
            }
            other => text.push_str(&other.to_string()),
        }
    }
    text.replace("\u{1} ", "").replace('\u{1}', "")
}

// ---------------------------------------------------------------------------------------------
// Token trees that can be edited.

#[derive(Clone)]
enum Tree {
    Leaf(TokenTree),
    Group(Delimiter, Vec<Tree>),
}

fn trees_of(stream: TokenStream) -> Vec<Tree> {
    stream
        .into_iter()
        .map(|tree| match tree {
            TokenTree::Group(group) => Tree::Group(group.delimiter(), trees_of(group.stream())),
            leaf => Tree::Leaf(leaf),
        })
        .collect()
}

fn stream_of(trees: &[Tree]) -> TokenStream {
    trees
        .iter()
        .map(|tree| match tree {
            Tree::Leaf(leaf) => leaf.clone(),
            Tree::Group(delimiter, inner) => TokenTree::Group(Group::new(*delimiter, stream_of(inner))),
        })
        .collect()
}

fn lex(source: &str) -> Vec<Tree> {
    let stream = TokenStream::from_str(source).unwrap_or_else(|error| panic!("does not lex: {source}: {error}"));
    trees_of(stream)
}

/// The token sequences random streams are made of: one entry may be several tokens (`+=`, `'a`).
const VOCABULARY: &[&str] = &[
    // Names ein programs use, and some they may not.
    "a",
    "b",
    "x",
    "w",
    "n",
    "m",
    "i",
    "j",
    "k",
    "t",
    "acc",
    "row",
    "re",
    "im",
    "_",
    "self",
    "r#for",
    // Keywords.
    "for",
    "in",
    "if",
    "else",
    "let",
    "fn",
    "pub",
    "as",
    "struct",
    "where",
    "match",
    "return",
    "mut",
    "crate",
    // Reductions, fold, methods and functions.
    "sum",
    "prod",
    "max",
    "min",
    "argmax",
    "argmin",
    "all",
    "any",
    "fold",
    "len",
    "shape",
    "exp",
    "ln",
    "sqrt",
    "sin",
    "cos",
    "tan",
    "tanh",
    "abs",
    "floor",
    "ceil",
    "pow",
    "powi",
    "clamp",
    "signum",
    "atan2",
    "hypot",
    "rem_euclid",
    "div_euclid",
    "is_nan",
    "mul_add",
    // Types.
    "f32",
    "f64",
    "i32",
    "i64",
    "usize",
    "bool",
    "f16",
    "u8",
    // Literals.
    "0",
    "1",
    "2",
    "3",
    "7",
    "64",
    "1000000",
    "0.0",
    "0.5",
    "1.0",
    "2.5",
    "1e3",
    "1e400",
    "1.5e-3",
    "2.0f32",
    "1f64",
    "3i32",
    "4usize",
    "5i64",
    "1.5i32",
    "2u8",
    "0x1F",
    "0b101",
    "0o17",
    "18446744073709551615",
    "18446744073709551616",
    "9223372036854775807",
    "9223372036854775808",
    "true",
    "false",
    "\"text\"",
    "'c'",
    "b'x'",
    "b\"bytes\"",
    "1.",
    "0.1.2",
    "'a",
    // Punctuation.
    "+",
    "-",
    "*",
    "/",
    "%",
    "==",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "&&",
    "||",
    "!",
    "=",
    ",",
    ";",
    ":",
    "::",
    ".",
    "..",
    "..=",
    "...",
    "->",
    "=>",
    "+=",
    "-=",
    "<<",
    ">>",
    "#",
    "&",
    "|",
    "^",
    "?",
    "@",
    "~",
    "$",
];

/// Valid programs, in both forms; `true` marks the item form.
const CORPUS: &[(&str, bool)] = &[
    ("fn matmul(a: [[f64]], b: [[f64]]) -> [[f64]] { for i, j { sum k { a[i, k] * b[k, j] } } }", true),
    ("pub fn mm(a: [[f32]], b: [[f32]], m: usize, n: usize, p: usize) -> [[f32]] { for i in 0..m, j in 0..p { sum k in 0..n { a[i, k] * b[k, j] } } }", true),
    ("/// Row-wise softmax.\npub fn softmax(x: [[f32]]) -> [[f32]] { for i, j { let m = max k { x[i, k] }; exp(x[i, j] - m) / sum k { exp(x[i, k] - m) } } }", true),
    ("fn permute(x: [[[f64]]]) -> [[[f64]]] { for a, b, c { x[c, a, b] } }", true),
    ("fn select(u: [f64], v: [f64]) -> [[f64]] { for i, j { if u[i] > v[j] { u[i] - v[j] } else { 0.0 } } }", true),
    ("fn shift(a: [f64]) -> [f64] { for i in 0..a.len() { a[i + 1] - a[i - 1] } }", true),
    ("fn reverse(a: [i64]) -> [i64] { let n = a.len(); for i in 0..n { a[n - 1 - i] } }", true),
    ("fn gather(a: [f64], idx: [usize]) -> [f64] { for i { a[idx[i]] } }", true),
    ("fn stride(a: [f64], n: usize) -> [f64] { for i in 0..n { a[2 * i] } }", true),
    ("fn conv(x: [f64], w: [f64]) -> [f64] { for i in 0..x.len() { sum k { x[i + k - w.len() / 2] * w[k] } } }", true),
    ("fn jacobi(x: [f64], steps: usize) -> [f64] { fold t in 0..steps, v = x { for i in 0..x.len() { (v[i - 1] + v[i] + v[i + 1]) / 3.0 } } }", true),
    ("fn path(wall: [[i64]]) -> [i64] { let cols = wall.shape(1); fold t in 0..wall.len() - 1, row = wall[0] { for j in 0..cols { wall[t + 1, j] + min(row[j], min(row[j - 1], row[j + 1])) } } }", true),
    ("fn reductions(a: [[f64]]) -> ([f64], [bool], [usize]) { (for i { max j { a[i, j] } }, for i { all j { a[i, j] > 0.0 } }, for i { argmin j { a[i, j] } }) }", true),
    ("fn kmeans(points: [[f64]], centroids: [[f64]]) -> [usize] { for p { argmin c { sum d { pow(points[p, d] - centroids[c, d], 2.0) } } } }", true),
    ("fn layernorm(x: [[f64]], eps: f64) -> [[f64]] { for i, j { let n = x.shape(1) as f64; let mean = sum k { x[i, k] } / n; let var = sum k { (x[i, k] - mean) * (x[i, k] - mean) } / n; (x[i, j] - mean) / sqrt(var + eps) } }", true),
    ("fn histogram(data: [i64], bins: usize) -> [i64] { for v in 0..bins { sum i { if data[i] == v { 1 } else { 0 } } } }", true),
    ("fn wrapping(a: [i64], b: [i64]) -> [i64] { for i { a[i] * b[i] + a[i] / max(abs(b[i]), 1) - a[i] % 7 + (-a[i]) % -3 } }", true),
    ("fn casts(x: [f64], k: [i64]) -> ([i64], [f64], [f32], [i32], [usize]) { (for i { x[i] as i64 }, for i { i as f64 + k[i] as f64 }, for i { x[i] as f32 }, for i { k[i] as i32 }, for i { (k[i] > 0) as usize }) }", true),
    ("fn sieve(m: usize) -> [bool] { for n in 0..m { n >= 2 && all d in 0..m { d < 2 || d * d > n || n % max(d, 2) != 0 } } }", true),
    ("fn fib(n: usize) -> (i64, i64) { fold t in 0..n, (x, y) = (0, 1) { (y, x + y) } }", true),
    ("fn horner(coef: [f64], x: [f64]) -> [f64] { for i { fold t in 0..coef.len(), acc = 0.0 { acc * x[i] + coef[t] } } }", true),
    ("fn complex(a: [f64], b: [f64]) -> [{ re: f64, im: f64 }] { for i { let z = { re: a[i], im: b[i] }; { re: z.re * z.re - z.im * z.im, im: 2.0 * z.re * z.im } } }", true),
    ("#[inline]\nfn stats(a: [f64]) -> (f64, f64) { let (s, m) = (sum i { a[i] }, max i { a[i] }); (m, s.sqrt()) }", true),
    ("fn rows(x: [[f32]]) -> [f32] { for i { let row = x[i]; sum j { row[j] * row[j] } } }", true),
    ("fn two(a: [f32]) -> [f32] { for i { a[i] * 2.0 } }\nfn three(a: [i32]) -> i32 { prod i { a[i] } + a.len() as i32 }", true),
    ("fn methods(a: [f64]) -> [f64] { for i { a[i].abs().sqrt().pow(1.5).max(0.25) } }", true),
    ("fn tuple(a: [f64]) -> [(f64, i64)] { for i { (a[i], i) } }", true),
    ("#[into(triad_into)]\npub fn triad(b: [f64], c: [f64], s: f64) -> [f64] { for i { b[i] + s * c[i] } }", true),
    ("#[into(split_into)]\nfn split(a: [[f64]]) -> ([[f64]], [[{ re: f64, im: f64 }]]) { (a, for i, j { { re: a[i, j], im: 0.0 } }) }", true),
    ("for i { sum k { a[i, k] * b[k] } }", false),
    ("for i, j { let m = max k { x[i, k] }; exp(x[i, j] - m) / sum k { exp(x[i, k] - m) } }", false),
    ("for i in 0..n { a[i] + a[i - 1] * s }", false),
    ("sum i, j { a[i, j] * a[i, j] }", false),
    ("for i { argmax j { a[i][j] } }", false),
    ("for i { { re: a[i] * b[i], im: a[i] + b[i] } }", false),
    ("let n = a.shape(2); fold t in 0..n, acc = 0.0 { acc + a[0, 0, t] }", false),
];

// ---------------------------------------------------------------------------------------------
// Generators.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Generator {
    RandomTokens,
    Mutation,
    TypedProgram,
    TypedMutation,
    Deep,
}

impl Generator {
    const ALL: [Generator; 5] = [
        Generator::RandomTokens,
        Generator::Mutation,
        Generator::TypedProgram,
        Generator::TypedMutation,
        Generator::Deep,
    ];
}

/// The lexed vocabulary and corpus.
struct Fuzz {
    vocabulary: Vec<Vec<Tree>>,
    corpus: Vec<Vec<Tree>>,
}

impl Fuzz {
    fn new() -> Fuzz {
        Fuzz {
            vocabulary: VOCABULARY.iter().map(|word| lex(word)).collect(),
            corpus: CORPUS.iter().map(|(source, _)| lex(source)).collect(),
        }
    }

    fn generate(&self, rng: &mut Rng) -> (Generator, TokenStream) {
        let roll = rng.below(1000);
        // Shares in thousandths, set so that a default run costs what it did with the former
        // small typed grammar: a typed program takes about 15 ms to compile unoptimised, a
        // mutated one 2 ms, a corpus mutation 1 ms, a random token stream 0.07 ms.
        if roll < 540 {
            (Generator::RandomTokens, stream_of(&self.random_trees(rng, 0)))
        } else if roll < 940 {
            let program = rng.pick(&self.corpus).clone();
            (Generator::Mutation, stream_of(&self.mutated(program, rng)))
        } else if roll < 955 {
            (Generator::TypedProgram, lex_stream(&typed_program(rng)))
        } else if roll < 995 {
            let program = lex(&typed_program(rng));
            (Generator::TypedMutation, stream_of(&self.mutated(program, rng)))
        } else {
            (Generator::Deep, lex_stream(&deep_input(rng)))
        }
    }

    fn word(&self, rng: &mut Rng) -> Vec<Tree> {
        let mut word = rng.pick(&self.vocabulary).clone();
        // Random spacing splits or joins operators (`+` `=` vs `+=`).
        if rng.percent(10) {
            for tree in &mut word {
                if let Tree::Leaf(TokenTree::Punct(punct)) = tree {
                    let spacing = if rng.percent(50) { Spacing::Joint } else { Spacing::Alone };
                    *tree = Tree::Leaf(TokenTree::Punct(Punct::new(punct.as_char(), spacing)));
                }
            }
        }
        word
    }

    fn random_trees(&self, rng: &mut Rng, depth: usize) -> Vec<Tree> {
        let length = if depth == 0 { rng.between(0, 30) } else { rng.between(0, 8) };
        let mut trees = Vec::new();
        for _ in 0..length {
            let roll = rng.below(100);
            if roll < 18 && depth < 5 {
                trees.push(Tree::Group(random_delimiter(rng), self.random_trees(rng, depth + 1)));
            } else if roll < 24 {
                trees.extend(self.fragment(rng));
            } else {
                trees.extend(self.word(rng));
            }
        }
        trees
    }

    /// A contiguous run of trees from some level of a corpus program.
    fn fragment(&self, rng: &mut Rng) -> Vec<Tree> {
        let mut level = rng.pick(&self.corpus).as_slice();
        while rng.percent(50) {
            let groups: Vec<&Vec<Tree>> = level
                .iter()
                .filter_map(|tree| match tree {
                    Tree::Group(_, inner) if !inner.is_empty() => Some(inner),
                    _ => None,
                })
                .collect();
            if groups.is_empty() {
                break;
            }
            level = rng.pick(&groups).as_slice();
        }
        if level.is_empty() {
            return Vec::new();
        }
        let start = rng.below(level.len());
        let end = rng.between(start + 1, level.len().min(start + 6));
        level[start..end].to_vec()
    }

    /// `program` after a few random edits: most inputs stay close to a valid program.
    fn mutated(&self, mut program: Vec<Tree>, rng: &mut Rng) -> Vec<Tree> {
        let mutations = match rng.below(10) {
            0..=5 => 1,
            6..=8 => 2,
            _ => rng.between(3, 8),
        };
        for _ in 0..mutations {
            let level = random_level(&mut program, rng);
            self.mutate_level(level, rng);
        }
        program
    }

    fn mutate_level(&self, level: &mut Vec<Tree>, rng: &mut Rng) {
        let length = level.len();
        let at = if length == 0 { 0 } else { rng.below(length) };
        match rng.below(9) {
            0 if length > 0 => {
                let count = if rng.percent(80) { 1 } else { rng.between(1, length - at) };
                level.drain(at..at + count);
            }
            1 if length > 0 => {
                let copy = level[at].clone();
                level.insert(at, copy);
            }
            2 if length > 1 => {
                let other = rng.below(length);
                level.swap(at, other);
            }
            3 if length > 0 => {
                let word = self.word(rng);
                level.splice(at..at + 1, word);
            }
            4 => {
                let word = self.word(rng);
                level.splice(at..at, word);
            }
            5 if length > 0 => {
                if let Tree::Group(_, inner) = &level[at] {
                    let inner = inner.clone();
                    level.splice(at..at + 1, inner);
                } else {
                    let wrapped = Tree::Group(random_delimiter(rng), vec![level[at].clone()]);
                    level[at] = wrapped;
                }
            }
            6 if length > 0 => {
                let end = rng.between(at + 1, length);
                let wrapped: Vec<Tree> = level.drain(at..end).collect();
                level.insert(at, Tree::Group(random_delimiter(rng), wrapped));
            }
            7 if length > 0 => {
                if let Tree::Group(delimiter, _) = &mut level[at] {
                    *delimiter = random_delimiter(rng);
                }
            }
            _ => {
                let fragment = self.fragment(rng);
                level.splice(at..at, fragment);
            }
        }
    }
}

/// The token list at the top or inside some (possibly nested) group of `program`.
fn random_level<'a>(program: &'a mut Vec<Tree>, rng: &mut Rng) -> &'a mut Vec<Tree> {
    let mut level = program;
    loop {
        let groups: Vec<usize> = (0..level.len()).filter(|&index| matches!(level[index], Tree::Group(..))).collect();
        if groups.is_empty() || rng.percent(30) {
            return level;
        }
        let index = *rng.pick(&groups);
        match &mut level[index] {
            Tree::Group(_, inner) => level = inner,
            Tree::Leaf(_) => unreachable!("filtered to groups"),
        }
    }
}

fn random_delimiter(rng: &mut Rng) -> Delimiter {
    *rng.pick(&[Delimiter::Parenthesis, Delimiter::Bracket, Delimiter::Brace, Delimiter::Brace, Delimiter::None])
}

fn lex_stream(source: &str) -> TokenStream {
    TokenStream::from_str(source).unwrap_or_else(|error| panic!("generated source does not lex: {error}\n{source}"))
}

/// A random well-typed program of the property test's generator, in the item form or (a
/// quarter of the time) the expression form, where the parameters become captured locals.
/// Mostly accepted, these drive the checker, passes and code generator through real programs;
/// their mutations reach the checker's errors from deep inside.
fn typed_program(rng: &mut Rng) -> String {
    let program = programs::generate(rng);
    if rng.percent(25) {
        program.body
    } else {
        program.source
    }
}

// ---------------------------------------------------------------------------------------------
// Deep and long inputs.

fn deep_input(rng: &mut Rng) -> String {
    let levels = *rng.pick(&[10, 100, 126, 127, 128, 129, 200, 254, 255, 256, 257, 300, 1000, 3000]);
    let repeat = |text: &str, count: usize| text.repeat(count);
    match rng.below(13) {
        0 => format!("{}a{}", repeat("(", levels), repeat(")", levels)),
        1 => format!("a{}", repeat(" + a", levels)),
        2 => format!("{}1.0", repeat("-", levels)),
        3 => format!("{}true", repeat("!", levels)),
        4 => format!("{}a{}", repeat("a[", levels), repeat("]", levels)),
        5 => format!("{}x", repeat("let x = 1.0; ", levels)),
        6 => format!("{}a[i]{}", repeat("for i { ", levels.min(300)), repeat(" }", levels.min(300))),
        7 => format!("{}a{}", repeat("{ ", levels), repeat(" }", levels)),
        8 => format!("x{}", repeat(".abs()", levels)),
        9 => format!("a{}", repeat("[0]", levels)),
        10 => format!("fn f(a: {}f32{}) -> f32 {{ 0.0 }}", repeat("[", levels), repeat("]", levels)),
        11 => format!("{}1.0{}", repeat("if true { ", levels), repeat(" } else { 0.0 }", levels)),
        _ => format!("x{}", repeat(" as f64", levels)),
    }
}
