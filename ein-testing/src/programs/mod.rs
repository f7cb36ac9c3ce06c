//! Random well-typed ein programs, as source text, with random inputs for them: the generator of
//! the optimiser's semantic property test (`ein-core/tests/passes_preserve_semantics.rs`), also
//! fed to the never-panic test (`ein-core/tests/never_panic.rs`), whole and mutated.
//!
//! [`generate`] writes an item-form program (`fn f(x0: [[f64]], n0: usize, ..) -> T { .. }`), so
//! each one goes through the real parser and checker; [`GeneratedProgram::inputs`] draws input
//! sets for it (random shapes including empty and length-1 axes; sizes mostly consistent so
//! that size checks pass, sometimes not).
//!
//! The generator tracks types, scopes and symbolic sizes (`Dim`), and which index variables get
//! their size inferred from an array they directly index, so that most programs check (the
//! property test requires 90%). It covers comprehensions (1–3 indices per `for`, inferred and
//! explicit sizes), every reduction (sometimes of a pair or record, one component used), folds with scalar, tuple (named or pattern) and array
//! accumulators, scans with scalar, tuple and record states (often with the associative steps
//! `acc + v`, `v * acc`, `max(acc, v)`, `acc && v`, which scans group in blocks), accums of
//! arrays of scalars (one or two updates per step, some conditional), `let`s including tuple patterns, tuples, records and projections, affine
//! (`i + 1`, `2 * i`, `n - 1 - i`) and gathered (`x[idx[i]]`) indices that clamp, partial
//! indexing (`x[i]` as a row), selects, arithmetic, comparison and logical operators, scalar
//! functions (call and method syntax; std names such as `clamp`, `powi`, `rem_euclid`, whose
//! bounds and divisors are constants in clean mode), casts, `.len()` / `.shape(k)`, and the shapes the
//! optimiser rewrites: reductions inside comprehensions that do not depend on the inner index
//! (the generator hides the innermost index while it writes them: softmax/layernorm style),
//! repeated alpha-equivalent subexpressions (a generated reduction or call is reused later with
//! its bound indices renamed, `max k { x[i, k] }` … `max l { x[i, l] }`), let-bound
//! comprehensions consumed element-wise or inside reductions, and comprehensions indexed
//! directly (`(for j { .. })[i]`). A third of the programs end in a template of such a shape
//! with random holes (row statistics, producer and consumer, direct reads, and einsums for
//! `contract`: matmul and transposes, matvec, dot, batched, scaled, with let-bound or sub-array
//! operands, plus near misses it must not take). Producers are often generated in a "clean"
//! mode (nothing that can fail), because fusion only takes producers that cannot fail. A
//! quarter of the programs put the body in a private helper that `f` calls (inlined by the
//! checker).
//!
//! Everything is drawn from the [`Rng`] it is given, so a program and its inputs are a pure
//! function of the generator's seed: changing what this module draws changes what every seed
//! of the tests above means.

mod generator;

use crate::Rng;
use ein_core::interp::{ArrayValue, Value};

/// A random item-form program and what its inputs must look like; everything it draws comes
/// from `rng`.
pub fn generate(rng: &mut Rng) -> GeneratedProgram {
    generator::Generator::new(rng).program()
}

/// A program written by [`generate`].
pub struct GeneratedProgram {
    /// The whole program: `fn f(<params>) -> <type> {\n<body>}`, or, for a quarter of the
    /// programs, `f` calling a private `helper` (parameters reversed) whose body that is.
    pub source: String,
    /// The function's body alone: `let` statements, then the result expression. It is also a
    /// program of the expression form, one whose parameters are captured local variables.
    pub body: String,
    /// The parameters, in order.
    pub params: Vec<ParamSpec>,
    /// How many size symbols the parameters' shapes use (each input set draws a size for each).
    symbols: usize,
}

/// A parameter of a [`GeneratedProgram`].
#[derive(Clone, Debug)]
pub struct ParamSpec {
    pub name: String,
    kind: ParamKind,
}

/// What a parameter is, for drawing its inputs.
#[derive(Clone, Debug)]
enum ParamKind {
    /// `gather`: integer elements that are indices into arrays (some out of range).
    Array {
        sc: Sc,
        dims: Vec<usize>,
        gather: bool,
    },
    Scalar {
        sc: Sc,
        size_of: Option<usize>,
    },
}

/// A scalar type of ein.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Sc {
    F64,
    F32,
    I64,
    I32,
    Usize,
    Bool,
}

impl Sc {
    fn name(self) -> &'static str {
        match self {
            Sc::F64 => "f64",
            Sc::F32 => "f32",
            Sc::I64 => "i64",
            Sc::I32 => "i32",
            Sc::Usize => "usize",
            Sc::Bool => "bool",
        }
    }

    fn is_float(self) -> bool {
        matches!(self, Sc::F64 | Sc::F32)
    }

    fn is_int(self) -> bool {
        matches!(self, Sc::I64 | Sc::I32 | Sc::Usize)
    }
}

impl GeneratedProgram {
    /// One random input set: a value per size symbol, arrays shaped by them (sometimes one axis
    /// off by one, so that size checks fail), scalars.
    pub fn inputs(&self, rng: &mut Rng) -> Vec<Value> {
        let sizes: Vec<usize> = (0..self.symbols).map(|_| rng.weighted(&[7, 16, 30, 32, 15])).collect();
        let max_size = sizes.iter().copied().max().unwrap_or(0) as i64;
        let perturb = if rng.percent(7) {
            let arrays: Vec<usize> =
                (0..self.params.len()).filter(|&k| matches!(self.params[k].kind, ParamKind::Array { .. })).collect();
            if arrays.is_empty() {
                None
            } else {
                let which = *rng.pick(&arrays);
                let rank = match &self.params[which].kind {
                    ParamKind::Array { dims, .. } => dims.len(),
                    ParamKind::Scalar { .. } => 1,
                };
                Some((which, rng.below(rank), if rng.percent(50) { 1i64 } else { -1 }))
            }
        } else {
            None
        };
        self.params
            .iter()
            .enumerate()
            .map(|(position, param)| match &param.kind {
                ParamKind::Array { sc, dims, gather } => {
                    let mut shape: Vec<usize> = dims.iter().map(|&symbol| sizes[symbol]).collect();
                    if let Some((which, axis, delta)) = perturb {
                        if which == position {
                            shape[axis] = (shape[axis] as i64 + delta).max(0) as usize;
                        }
                    }
                    let count: usize = shape.iter().product();
                    let elements = (0..count).map(|_| scalar_value(rng, *sc, *gather, max_size)).collect();
                    Value::Array(ArrayValue { shape, elements })
                }
                ParamKind::Scalar { sc, size_of } => match (sc, size_of) {
                    (Sc::Usize, Some(symbol)) => {
                        Value::Usize(if rng.percent(90) { sizes[*symbol] } else { rng.below(6) })
                    }
                    (Sc::I64, Some(symbol)) => {
                        Value::I64(if rng.percent(85) { sizes[*symbol] as i64 } else { rng.between(-2, 5) })
                    }
                    (Sc::I64, None) => Value::I64(rng.between(-2, 5)),
                    _ => scalar_value(rng, *sc, false, max_size),
                },
            })
            .collect()
    }
}

fn float_value(rng: &mut Rng) -> f64 {
    if rng.percent(3) {
        return *rng.pick(&[f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0, 1e10, -1e-10]);
    }
    if rng.percent(80) {
        rng.between(-8, 8) as f64 * 0.25
    } else {
        (rng.next_u64() % 1_000_000) as f64 / 1_000_000.0 * 6.0 - 3.0
    }
}

fn scalar_value(rng: &mut Rng, sc: Sc, gather: bool, max_size: i64) -> Value {
    match sc {
        Sc::F64 => Value::F64(float_value(rng)),
        Sc::F32 => Value::F32(float_value(rng) as f32),
        Sc::I64 if gather => Value::I64(rng.between(-1, max_size + 1)),
        Sc::I64 => Value::I64(rng.between(-4, 6)),
        Sc::I32 => Value::I32(rng.between(-4, 6)),
        Sc::Usize if gather => Value::Usize(rng.between(0, max_size + 1) as usize),
        Sc::Usize => Value::Usize(rng.between(0, 6) as usize),
        Sc::Bool => Value::Bool(rng.percent(50)),
    }
}
