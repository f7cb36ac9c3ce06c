//! The program generator behind [`generate`](super::generate): a recursive writer of source
//! text that keeps track of the types, names and symbolic sizes in scope, plus templates of the
//! shapes the optimiser rewrites.

use super::{GeneratedProgram, ParamKind, ParamSpec, Sc};
use crate::Rng;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

const NUMBERS: [Sc; 5] = [Sc::F64, Sc::F32, Sc::I64, Sc::I32, Sc::Usize];
const FIELD_NAMES: [&str; 3] = ["re", "im", "w"];

/// An array element or a non-array value: a scalar, a tuple or a record of scalars.
#[derive(Clone, PartialEq, Eq, Debug)]
enum Elem {
    Scalar(Sc),
    Tuple(Vec<Sc>),
    /// Fields named `FIELD_NAMES[..len]`.
    Record(Vec<Sc>),
}

impl Elem {
    fn fields(&self) -> &[Sc] {
        match self {
            Elem::Scalar(_) => &[],
            Elem::Tuple(fields) | Elem::Record(fields) => fields,
        }
    }

    fn text(&self) -> String {
        match self {
            Elem::Scalar(sc) => sc.name().to_string(),
            Elem::Tuple(fields) => format!("({})", fields.iter().map(|sc| sc.name()).collect::<Vec<_>>().join(", ")),
            Elem::Record(fields) => format!(
                "{{ {} }}",
                fields
                    .iter()
                    .enumerate()
                    .map(|(k, sc)| format!("{}: {}", FIELD_NAMES[k], sc.name()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    /// A value of this tuple or record type from the text of its fields' values:
    /// `(a, b)` or `{ re: a, im: b }`.
    fn literal(&self, parts: &[String]) -> String {
        match self {
            Elem::Record(_) => format!(
                "{{ {} }}",
                parts
                    .iter()
                    .enumerate()
                    .map(|(k, part)| format!("{}: {part}", FIELD_NAMES[k]))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            _ => format!("({})", parts.join(", ")),
        }
    }

    /// `.1` or `.im`: the syntax of field `k`.
    fn member(&self, k: usize) -> String {
        match self {
            Elem::Record(_) => format!(".{}", FIELD_NAMES[k]),
            _ => format!(".{k}"),
        }
    }
}

/// The symbolic size of an axis.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Dim {
    /// One of the program's size symbols, whose value each input set draws.
    Sym(usize),
    /// A literal size.
    Lit(i64),
    /// An explicit size expression with nothing else known about it (may be negative).
    Opaque(usize),
}

#[derive(Clone, PartialEq, Debug)]
enum Ty {
    Elem(Elem),
    Array(Elem, Vec<Dim>),
}

impl Ty {
    fn text(&self) -> String {
        match self {
            Ty::Elem(elem) => elem.text(),
            Ty::Array(elem, dims) => format!("{}{}{}", "[".repeat(dims.len()), elem.text(), "]".repeat(dims.len())),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Param,
    Let,
    Accumulator,
}

/// A named value in scope.
#[derive(Clone, Debug)]
struct Binding {
    name: String,
    ty: Ty,
    kind: Kind,
    /// For integer scalars that hold a size usable in `0..n` (parameters and top-level lets).
    size_of: Option<Dim>,
    /// For arrays: whether the checker can take an index's size from this array (its shape
    /// does not come from a fold accumulator).
    source: bool,
}

/// An index variable in scope.
#[derive(Clone, Debug)]
struct IndexVar {
    name: String,
    dim: Dim,
    /// Directly indexes an array the checker can take its size from.
    sourced: bool,
    /// Not to be mentioned right now (to make a reduction invariant in an inner index).
    hidden: bool,
}

/// A generated expression that may be reused later (with its bound names renamed), so that the
/// program contains alpha-equivalent repeats for CSE.
struct Memo {
    text: String,
    sc: Sc,
    binders: Vec<String>,
}

/// The state of writing one program.
pub(super) struct Generator<'r> {
    rng: &'r mut Rng,
    symbols: usize,
    params: Vec<ParamSpec>,
    /// Values in scope, innermost last.
    vars: Vec<Binding>,
    /// Index variables in scope, innermost last.
    indices: Vec<IndexVar>,
    /// The size text of each `Dim::Opaque`, and its integer type.
    opaque: Vec<(String, Sc)>,
    memo: Vec<Memo>,
    /// Every name created so far, in order (a memo's binders are a slice of it).
    created: Vec<String>,
    counter: usize,
    /// Compound nodes still allowed; at 0 only leaves are generated.
    budget: i32,
    /// Loops (comprehensions, reductions, folds) enclosing the current point.
    loop_depth: usize,
    /// Whether the array last built by `select`, `fold` or `let_block` can give an index its
    /// size (their callers read it right after the call).
    last_source: bool,
    /// Generate only code that cannot fail (no clamped reads, integer division, argmax, sizes
    /// other than lengths, folds), as the `inline` pass requires of the producers it fuses.
    clean: bool,
}

/// How many nested loops the generator opens by choice (an array that must be built may add one).
const MAX_LOOP_DEPTH: usize = 4;

impl<'r> Generator<'r> {
    pub(super) fn new(rng: &'r mut Rng) -> Generator<'r> {
        Generator {
            rng,
            symbols: 1,
            params: Vec::new(),
            vars: Vec::new(),
            indices: Vec::new(),
            opaque: Vec::new(),
            memo: Vec::new(),
            created: Vec::new(),
            counter: 0,
            budget: 0,
            loop_depth: 0,
            last_source: true,
            clean: false,
        }
    }

    /// Runs `f` in clean mode (see [`Generator::clean`]) with the given chance.
    fn maybe_clean<T>(&mut self, percent: u32, f: impl FnOnce(&mut Self) -> T) -> T {
        let saved = self.clean;
        if self.rng.percent(percent) {
            self.clean = true;
        }
        let result = f(self);
        self.clean = saved;
        result
    }

    fn fresh(&mut self, prefix: &str) -> String {
        self.counter += 1;
        let name = format!("{prefix}{}", self.counter);
        self.created.push(name.clone());
        name
    }

    /// Brings a fresh name of type `ty` into scope (the caller removes it when its block ends).
    fn bind(&mut self, prefix: &str, ty: Ty, kind: Kind, source: bool) -> String {
        let name = self.fresh(prefix);
        self.vars.push(Binding { name: name.clone(), ty, kind, size_of: None, source });
        name
    }

    /// Brings a fresh scalar name into scope for each of `fields` (a tuple pattern's names).
    fn bind_fields(&mut self, prefix: &str, fields: &[Sc], kind: Kind) -> Vec<String> {
        fields.iter().map(|sc| self.bind(prefix, Ty::Elem(Elem::Scalar(*sc)), kind, false)).collect()
    }

    // -----------------------------------------------------------------------------------------
    // The whole program.

    pub(super) fn program(mut self) -> GeneratedProgram {
        self.symbols = 1 + self.rng.below(3);
        self.make_params();
        self.budget = 30 + self.rng.below(40) as i32;
        let mut body = String::new();
        let lets = self.rng.weighted(&[30, 35, 25, 10]);
        for _ in 0..lets {
            let statement = self.top_level_let();
            let _ = writeln!(body, "    {statement}");
        }
        // A third of the programs end in one of the shapes the optimiser rewrites, with random
        // holes; the rest are free-form.
        let templated = if self.rng.percent(35) { self.template() } else { None };
        let (ret, result) = match templated {
            Some((ret, statements, result)) => {
                for statement in statements {
                    let _ = writeln!(body, "    {statement}");
                }
                (ret, result)
            }
            None => {
                let ret = self.return_type();
                let depth = 5 + self.rng.below(2) as u32;
                let result = self.value(&ret, depth);
                (ret, result)
            }
        };
        let _ = writeln!(body, "    {result}");
        let params: Vec<String> = self
            .params
            .iter()
            .map(|param| {
                let ty = match &param.kind {
                    ParamKind::Array { sc, dims, .. } => {
                        format!("{}{}{}", "[".repeat(dims.len()), sc.name(), "]".repeat(dims.len()))
                    }
                    ParamKind::Scalar { sc, .. } => sc.name().to_string(),
                };
                format!("{}: {ty}", param.name)
            })
            .collect();
        let mut source = format!("fn f({}) -> {} {{\n{body}}}", params.join(", "), ret.text());
        // A quarter of the programs are written as a private helper holding the body, with its
        // parameters in reverse order, and `f` calling it: the checker inlines the call (drawn
        // last, so the rest of the program is what the same seed drew before calls existed).
        if self.rng.percent(25) {
            let reversed: Vec<String> = params.iter().rev().cloned().collect();
            let arguments: Vec<&str> = self.params.iter().rev().map(|param| param.name.as_str()).collect();
            let ret = ret.text();
            source = format!(
                "fn f({}) -> {ret} {{\n    let result = helper({});\n    result\n}}\nfn helper({}) -> {ret} {{\n{body}}}",
                params.join(", "),
                arguments.join(", "),
                reversed.join(", ")
            );
        }
        GeneratedProgram { source, body, params: self.params, symbols: self.symbols }
    }

    fn make_params(&mut self) {
        let symbols = self.symbols;
        let mut used = vec![false; symbols];
        let mut add_array = |generator: &mut Generator, prefix: &str, sc: Sc, rank: usize, gather: bool| {
            let dims: Vec<usize> = (0..rank).map(|_| generator.rng.below(symbols)).collect();
            for &symbol in &dims {
                used[symbol] = true;
            }
            let name = format!("{prefix}{}", generator.params.len());
            generator.params.push(ParamSpec { name, kind: ParamKind::Array { sc, dims, gather } });
        };
        let floats = 1 + self.rng.weighted(&[40, 40, 20]);
        for _ in 0..floats {
            let rank = 1 + self.rng.weighted(&[40, 45, 15]);
            add_array(self, "x", Sc::F64, rank, false);
        }
        if self.rng.percent(30) {
            let rank = 1 + self.rng.below(2);
            add_array(self, "w", Sc::I64, rank, false);
        }
        if self.rng.percent(35) {
            add_array(self, "idx", Sc::Usize, 1, true);
        }
        if self.rng.percent(12) {
            add_array(self, "jdx", Sc::I64, 1, true);
        }
        if self.rng.percent(20) {
            add_array(self, "mask", Sc::Bool, 1, false);
        }
        if self.rng.percent(15) {
            let rank = 1 + self.rng.below(2);
            add_array(self, "h", Sc::F32, rank, false);
        }
        let unused: Vec<usize> = (0..symbols).filter(|&symbol| !used[symbol]).collect();
        for symbol in unused {
            {
                let name = format!("x{}", self.params.len());
                self.params.push(ParamSpec {
                    name,
                    kind: ParamKind::Array { sc: Sc::F64, dims: vec![symbol], gather: false },
                });
            }
        }
        if self.rng.percent(50) {
            let symbol = self.rng.below(symbols);
            self.add_scalar_param("n", Sc::Usize, Some(symbol));
        }
        if self.rng.percent(30) {
            let symbol = if self.rng.percent(70) { Some(self.rng.below(symbols)) } else { None };
            self.add_scalar_param("c", Sc::I64, symbol);
        }
        if self.rng.percent(40) {
            self.add_scalar_param("s", Sc::F64, None);
        }
        if self.rng.percent(20) {
            self.add_scalar_param("b", Sc::Bool, None);
        }
        if self.rng.percent(12) {
            self.add_scalar_param("e", Sc::F32, None);
        }
        if self.rng.percent(12) {
            self.add_scalar_param("z", Sc::I32, None);
        }
        // Parameters in a random order.
        for position in (1..self.params.len()).rev() {
            let other = self.rng.below(position + 1);
            self.params.swap(position, other);
        }
        for param in &self.params {
            let binding = match &param.kind {
                ParamKind::Array { sc, dims, .. } => Binding {
                    name: param.name.clone(),
                    ty: Ty::Array(Elem::Scalar(*sc), dims.iter().map(|&symbol| Dim::Sym(symbol)).collect()),
                    kind: Kind::Param,
                    size_of: None,
                    source: true,
                },
                ParamKind::Scalar { sc, size_of } => Binding {
                    name: param.name.clone(),
                    ty: Ty::Elem(Elem::Scalar(*sc)),
                    kind: Kind::Param,
                    size_of: size_of.map(Dim::Sym),
                    source: false,
                },
            };
            self.vars.push(binding);
        }
    }

    fn add_scalar_param(&mut self, prefix: &str, sc: Sc, size_of: Option<usize>) {
        let name = format!("{prefix}{}", self.params.len());
        self.params.push(ParamSpec { name, kind: ParamKind::Scalar { sc, size_of } });
    }

    fn return_type(&mut self) -> Ty {
        match self.rng.weighted(&[36, 10, 8, 24, 8, 7, 7]) {
            0 => {
                let rank = 1 + self.rng.weighted(&[45, 40, 15]);
                let dims = self.new_dims(rank);
                Ty::Array(Elem::Scalar(Sc::F64), dims)
            }
            1 => {
                let sc = *self.rng.pick(&[Sc::I64, Sc::Bool, Sc::Usize, Sc::F32, Sc::I32]);
                let rank = 1 + self.rng.below(2);
                let dims = self.new_dims(rank);
                Ty::Array(Elem::Scalar(sc), dims)
            }
            2 => {
                let elem = self.compound_elem();
                let rank = 1 + self.rng.below(2);
                let dims = self.new_dims(rank);
                Ty::Array(elem, dims)
            }
            3 => Ty::Elem(Elem::Scalar(Sc::F64)),
            4 => Ty::Elem(Elem::Scalar(*self.rng.pick(&[Sc::I64, Sc::Usize, Sc::Bool, Sc::F32]))),
            _ => Ty::Elem(self.compound_elem()),
        }
    }

    fn compound_elem(&mut self) -> Elem {
        let count = 2 + self.rng.below(2);
        let fields: Vec<Sc> =
            (0..count).map(|_| *self.rng.pick(&[Sc::F64, Sc::F64, Sc::I64, Sc::Usize, Sc::Bool])).collect();
        if self.rng.percent(50) {
            Elem::Tuple(fields)
        } else {
            Elem::Record(fields)
        }
    }

    /// A statement `let … = …;` of the function body.
    fn top_level_let(&mut self) -> String {
        match self.rng.weighted(&[50, 25, 12, 13, 8]) {
            0 => {
                let rank = 1 + self.rng.weighted(&[45, 45, 10]);
                let dims = self.new_dims(rank);
                let ty = Ty::Array(Elem::Scalar(*self.rng.pick(&[Sc::F64, Sc::F64, Sc::F64, Sc::I64, Sc::Bool])), dims);
                self.let_statement(&ty, 4)
            }
            1 => {
                let ty = Ty::Elem(Elem::Scalar(*self.rng.pick(&[Sc::F64, Sc::F64, Sc::I64, Sc::Usize, Sc::Bool])));
                self.let_statement(&ty, 3)
            }
            2 => {
                let elem = self.compound_elem();
                let ty = if matches!(elem, Elem::Record(_)) || self.rng.percent(30) {
                    Ty::Elem(elem)
                } else {
                    Ty::Elem(Elem::Tuple(elem.fields().to_vec()))
                };
                self.let_statement(&ty, 3)
            }
            4 => self.filter_let(),
            _ => {
                // A size: `let m = x0.shape(1);`, usable in `0..m` everywhere after it.
                let symbol = self.rng.below(self.symbols);
                let (text, sc) = self.size_text(Dim::Sym(symbol));
                let name = self.fresh("m");
                self.vars.push(Binding {
                    name: name.clone(),
                    ty: Ty::Elem(Elem::Scalar(sc)),
                    kind: Kind::Let,
                    size_of: Some(Dim::Sym(symbol)),
                    source: false,
                });
                format!("let {name} = {text};")
            }
        }
    }

    /// `let p = for i in 0..n where c { e };`: a filter, which may only stand outside every loop;
    /// its length, known only at run time, is a size (`p.len()`) of its own for what follows.
    fn filter_let(&mut self) -> String {
        let dim = self.new_dim();
        let sc = *self.rng.pick(&[Sc::F64, Sc::F64, Sc::I64, Sc::Bool]);
        let index = self.fresh("i");
        self.indices.push(IndexVar { name: index.clone(), dim, sourced: false, hidden: false });
        self.loop_depth += 1;
        let condition = self.condition(3);
        let element = self.scalar(sc, 3);
        self.loop_depth -= 1;
        self.indices.pop();
        let (size, _) = self.size_text(dim);
        let name = self.fresh("p");
        self.opaque.push((format!("{name}.len()"), Sc::I64));
        let length = Dim::Opaque(self.opaque.len() - 1);
        self.vars.push(Binding {
            name: name.clone(),
            ty: Ty::Array(Elem::Scalar(sc), vec![length]),
            kind: Kind::Let,
            size_of: None,
            source: true,
        });
        format!("let {name} = for {index} in 0..{size} where {condition} {{ {element} }};")
    }

    /// `let v = value;` or `let (p, q) = tuple;`, adding the names to the scope (the caller
    /// removes them when the block ends).
    fn let_statement(&mut self, ty: &Ty, depth: u32) -> String {
        let clean_chance = if matches!(ty, Ty::Array(..)) { 45 } else { 0 };
        let (value, source) = self.maybe_clean(clean_chance, |generator| generator.value_with_source(ty, depth));
        match ty {
            Ty::Elem(Elem::Tuple(fields)) if self.rng.percent(60) => {
                let names = self.bind_fields("p", fields, Kind::Let);
                format!("let ({}) = {value};", names.join(", "))
            }
            _ => {
                let prefix = if matches!(ty, Ty::Array(..)) { "g" } else { "v" };
                let name = self.bind(prefix, ty.clone(), Kind::Let, source);
                format!("let {name} = {value};")
            }
        }
    }

    // -----------------------------------------------------------------------------------------
    // Sizes.

    fn new_dims(&mut self, rank: usize) -> Vec<Dim> {
        (0..rank).map(|_| self.new_dim()).collect()
    }

    fn new_dim(&mut self) -> Dim {
        let visible: Vec<Dim> = self.indices.iter().filter(|index| !index.hidden).map(|index| index.dim).collect();
        if !visible.is_empty() && self.rng.percent(40) {
            return *self.rng.pick(&visible);
        }
        let opaque = if self.clean { 0 } else { 6 };
        match self.rng.weighted(&[84, 10, opaque]) {
            0 => Dim::Sym(self.rng.below(self.symbols)),
            1 => Dim::Lit(self.rng.between(1, 3)),
            _ => {
                let text = self.opaque_size();
                self.opaque.push(text);
                Dim::Opaque(self.opaque.len() - 1)
            }
        }
    }

    /// A size expression of parameters only, which may be anything (even negative), and its type.
    fn opaque_size(&mut self) -> (String, Sc) {
        let symbol = self.rng.below(self.symbols);
        let (base, sc) = self.size_text(Dim::Sym(symbol));
        let free_i64: Vec<String> = self
            .vars
            .iter()
            .filter(|b| b.kind == Kind::Param && b.ty == Ty::Elem(Elem::Scalar(Sc::I64)))
            .map(|b| b.name.clone())
            .collect();
        match self.rng.below(4) {
            0 if !free_i64.is_empty() => (self.rng.pick(&free_i64).clone(), Sc::I64),
            0 | 1 => (format!("{base} + 1"), sc),
            2 => (format!("{base} - 1"), sc),
            _ if sc == Sc::I64 => (format!("2 * {base} - 3"), sc),
            _ => (format!("{base} * 2"), sc),
        }
    }

    /// An expression for the size of `dim`, and its type (an integer): `n0`, `x1.shape(1)`, `3`.
    fn size_text(&mut self, dim: Dim) -> (String, Sc) {
        match dim {
            Dim::Lit(value) => (value.to_string(), Sc::I64),
            Dim::Opaque(k) => (format!("({})", self.opaque[k].0), self.opaque[k].1),
            Dim::Sym(symbol) => {
                let mut options: Vec<(String, Sc)> = Vec::new();
                for binding in self.vars.iter().filter(|_| !self.clean) {
                    if binding.size_of == Some(dim) {
                        if let Ty::Elem(Elem::Scalar(sc)) = binding.ty {
                            options.push((binding.name.clone(), sc));
                        }
                    }
                }
                for param in &self.params {
                    if let ParamKind::Array { dims, .. } = &param.kind {
                        for (axis, &s) in dims.iter().enumerate() {
                            if s == symbol {
                                let text = if axis == 0 && self.rng.percent(70) {
                                    format!("{}.len()", param.name)
                                } else {
                                    format!("{}.shape({axis})", param.name)
                                };
                                options.push((text, Sc::I64));
                            }
                        }
                    }
                }
                if options.is_empty() {
                    return ("2".to_string(), Sc::I64);
                }
                let choice = self.rng.below(options.len());
                options.swap_remove(choice)
            }
        }
    }

    /// The size of `dim` as an `i64` expression, for index arithmetic.
    fn size_i64(&mut self, dim: Dim) -> String {
        let (text, sc) = self.size_text(dim);
        if sc == Sc::I64 {
            text
        } else {
            format!("({text} as i64)")
        }
    }

    /// A dimension for a new reduction index: mostly one that an array in scope has, so the index
    /// can take its size from it.
    fn reduction_dim(&mut self) -> Dim {
        if self.rng.percent(85) {
            let mut dims: Vec<Dim> = Vec::new();
            for binding in &self.vars {
                if let Ty::Array(_, array_dims) = &binding.ty {
                    if binding.source {
                        dims.extend(array_dims.iter().copied());
                    }
                }
            }
            if !dims.is_empty() {
                return *self.rng.pick(&dims);
            }
        }
        self.new_dim()
    }

    // -----------------------------------------------------------------------------------------
    // Values of any type.

    fn value(&mut self, ty: &Ty, depth: u32) -> String {
        self.value_with_source(ty, depth).0
    }

    /// The text and, for arrays, whether its shape can give an index its size.
    fn value_with_source(&mut self, ty: &Ty, depth: u32) -> (String, bool) {
        match ty {
            Ty::Elem(elem) => (self.elem(elem, depth), false),
            Ty::Array(elem, dims) => self.array(elem, dims, depth),
        }
    }

    fn elem(&mut self, elem: &Elem, depth: u32) -> String {
        match elem {
            Elem::Scalar(sc) => self.scalar(*sc, depth),
            _ => self.compound(elem, depth),
        }
    }

    fn spend(&mut self, depth: u32) -> bool {
        if depth == 0 || self.budget <= 0 {
            return false;
        }
        self.budget -= 1;
        true
    }

    /// Chooses a binding matching `accept`, preferring the innermost one 40% of the time.
    fn pick_var(&mut self, accept: impl Fn(&Binding) -> bool) -> Option<usize> {
        let matching: Vec<usize> = (0..self.vars.len()).filter(|&k| accept(&self.vars[k])).collect();
        if matching.is_empty() {
            return None;
        }
        if self.rng.percent(40) {
            return matching.last().copied();
        }
        Some(*self.rng.pick(&matching))
    }

    // -----------------------------------------------------------------------------------------
    // Tuples and records.

    fn compound(&mut self, elem: &Elem, depth: u32) -> String {
        let target = Ty::Elem(elem.clone());
        if !self.spend(depth) {
            if let Some(k) = self.pick_var(|b| b.ty == target) {
                return self.vars[k].name.clone();
            }
            if self.rng.percent(50) {
                if let Some(read) = self.read(elem, 0) {
                    return read;
                }
            }
            return self.compound_literal(elem, 0);
        }
        let fold = if self.clean { 0 } else { 12 };
        match self.rng.weighted(&[40, 12, 15, 8, fold, 8]) {
            1 => {
                if let Some(k) = self.pick_var(|b| b.ty == target) {
                    return self.vars[k].name.clone();
                }
                self.compound_literal(elem, depth - 1)
            }
            2 => self.read(elem, depth - 1).unwrap_or_else(|| self.compound_literal(elem, depth - 1)),
            3 => self.select(&target, depth),
            4 => self.fold(&target, depth),
            5 => self.let_block(&target, depth),
            _ => self.compound_literal(elem, depth - 1),
        }
    }

    fn compound_literal(&mut self, elem: &Elem, depth: u32) -> String {
        let parts: Vec<String> = elem.fields().iter().map(|sc| self.scalar(*sc, depth)).collect();
        elem.literal(&parts)
    }

    // -----------------------------------------------------------------------------------------
    // Arrays.

    fn array(&mut self, elem: &Elem, dims: &[Dim], depth: u32) -> (String, bool) {
        let target = Ty::Array(elem.clone(), dims.to_vec());
        let existing = self.pick_var(|b| b.ty == target);
        if !self.spend(depth) {
            if let Some(k) = existing {
                return (self.vars[k].name.clone(), self.vars[k].source);
            }
            if let Some(read) = self.partial_read(elem, dims, 0) {
                return read;
            }
            return self.comprehension(elem, dims, 0);
        }
        let can_loop = self.loop_depth < MAX_LOOP_DEPTH;
        let weights = [
            if existing.is_some() { 20 } else { 0 },
            if can_loop { 40 } else { 5 },
            14,
            6,
            8,
            if can_loop && dims.len() <= 2 && !self.clean { 5 } else { 0 },
            if can_loop && !self.clean { 5 } else { 0 },
            if can_loop && dims.len() == 1 && !self.clean { 5 } else { 0 },
            if can_loop && matches!(elem, Elem::Scalar(_)) && !self.clean { 5 } else { 0 },
        ];
        match self.rng.weighted(&weights) {
            0 => {
                let k = existing.expect("weighted");
                (self.vars[k].name.clone(), self.vars[k].source)
            }
            2 => match self.partial_read(elem, dims, depth - 1) {
                Some(read) => read,
                None => self.comprehension(elem, dims, depth - 1),
            },
            3 => {
                let text = self.select(&target, depth);
                (text, self.last_source)
            }
            4 => {
                let text = self.let_block(&target, depth);
                (text, self.last_source)
            }
            5 => {
                let text = self.fold(&target, depth);
                (text, self.last_source)
            }
            6 => {
                // `(for j { .. })[e]`: one axis more, indexed directly.
                let mut outer = vec![self.new_dim()];
                outer.extend_from_slice(dims);
                let (inner, source) =
                    self.maybe_clean(65, |generator| generator.comprehension(elem, &outer, depth - 1));
                let index = self.index_expr(outer[0], source, depth - 1);
                (format!("({inner})[{index}]"), source)
            }
            7 => self.scan(elem, dims[0], depth),
            8 => self.accum(elem, dims, depth),
            _ => self.comprehension(elem, dims, depth - 1),
        }
    }

    /// `for i, j in 0..n { body }` over a prefix of `dims` (the body builds the rest).
    fn comprehension(&mut self, elem: &Elem, dims: &[Dim], depth: u32) -> (String, bool) {
        let count = 1 + self.rng.below(dims.len().min(3));
        let base = self.indices.len();
        for &dim in &dims[..count] {
            let name = self.fresh("i");
            self.indices.push(IndexVar { name, dim, sourced: false, hidden: false });
        }
        self.loop_depth += 1;
        let (body, source) =
            if count == dims.len() { (self.elem(elem, depth), true) } else { self.array(elem, &dims[count..], depth) };
        self.loop_depth -= 1;
        let binders: Vec<IndexVar> = self.indices.drain(base..).collect();
        let binders = self.binder_list(&binders);
        let body = if matches!(elem, Elem::Record(_))
            && count == dims.len()
            && body.starts_with("{ ")
            && !body.starts_with("{ let ")
            && self.rng.percent(50)
        {
            // `for i { re: .., im: .. }`: the record is the body itself.
            body[1..body.len() - 1].trim().to_string()
        } else {
            body
        };
        (format!("for {binders} {{ {body} }}"), source)
    }

    /// `i, j in 0..n`: an index whose size the checker can infer is left bare most of the time.
    fn binder_list(&mut self, binders: &[IndexVar]) -> String {
        let parts: Vec<String> = binders
            .iter()
            .map(|binder| {
                if binder.sourced && self.rng.percent(78) {
                    binder.name.clone()
                } else {
                    let (size, _) = self.size_text(binder.dim);
                    format!("{} in 0..{size}", binder.name)
                }
            })
            .collect();
        parts.join(", ")
    }

    /// `x[e]` or `x[e1, e2]` of an array with more axes, giving an array of `dims`.
    fn partial_read(&mut self, elem: &Elem, dims: &[Dim], depth: u32) -> Option<(String, bool)> {
        let candidates: Vec<usize> = (0..self.vars.len())
            .filter(|&k| match &self.vars[k].ty {
                Ty::Array(e, d) => e == elem && d.len() > dims.len() && d[d.len() - dims.len()..] == *dims,
                Ty::Elem(_) => false,
            })
            .collect();
        let sizes: Vec<Dim> = self.indices.iter().filter(|index| !index.hidden).map(|index| index.dim).collect();
        let clean = self.clean;
        let candidates: Vec<usize> = candidates
            .into_iter()
            .filter(|&k| match &self.vars[k].ty {
                Ty::Array(_, d) => {
                    !clean
                        || (self.vars[k].kind != Kind::Accumulator
                            && d[..d.len() - dims.len()].iter().all(|dim| sizes.contains(dim)))
                }
                Ty::Elem(_) => false,
            })
            .collect();
        if candidates.is_empty() {
            return None;
        }
        let k = *self.rng.pick(&candidates);
        let (name, source) = (self.vars[k].name.clone(), self.vars[k].source);
        let Ty::Array(_, array_dims) = self.vars[k].ty.clone() else { unreachable!() };
        let leading = &array_dims[..array_dims.len() - dims.len()];
        let positions: Vec<String> = leading.iter().map(|&dim| self.index_expr(dim, source, depth)).collect();
        Some((format_read(self.rng, &name, &positions), source))
    }

    // -----------------------------------------------------------------------------------------
    // Reads and index expressions.

    /// The sizes of visible indices that no array read has given a size yet.
    fn unsourced_dims(&self) -> Vec<Dim> {
        self.indices.iter().filter(|index| !index.hidden && !index.sourced).map(|index| index.dim).collect()
    }

    /// A full read of an array of `elem` (with a field projection for arrays of tuples when
    /// `elem` is a scalar and the chance comes up): `x0[i, k]`, `g3[i][2 * j]`, `t[i].re`.
    fn read(&mut self, elem: &Elem, depth: u32) -> Option<String> {
        let want = elem.clone();
        let candidates: Vec<(usize, Option<usize>)> = (0..self.vars.len())
            .flat_map(|k| {
                let mut found = Vec::new();
                if let Ty::Array(e, _) = &self.vars[k].ty {
                    if *e == want {
                        found.push((k, None));
                    }
                    if let Elem::Scalar(sc) = &want {
                        for (field, field_sc) in e.fields().iter().enumerate() {
                            if field_sc == sc {
                                found.push((k, Some(field)));
                            }
                        }
                    }
                }
                found
            })
            .collect();
        // Clean code reads only where every axis has an index of its size (proven in bounds).
        let candidates: Vec<(usize, Option<usize>)> = if self.clean {
            let sizes: Vec<Dim> = self.indices.iter().filter(|index| !index.hidden).map(|index| index.dim).collect();
            candidates
                .into_iter()
                .filter(|(k, _)| match &self.vars[*k].ty {
                    Ty::Array(_, dims) => {
                        self.vars[*k].kind != Kind::Accumulator && dims.iter().all(|dim| sizes.contains(dim))
                    }
                    Ty::Elem(_) => false,
                })
                .collect()
        } else {
            candidates
        };
        if candidates.is_empty() {
            return None;
        }
        // Prefer an array that an index still without a size can index (so the loop that binds
        // it reads with it, as real programs do), else now and then the innermost array (often a
        // let-bound comprehension).
        let wanting = self.unsourced_dims();
        let focused: Vec<(usize, Option<usize>)> = candidates
            .iter()
            .copied()
            .filter(|(k, _)| match &self.vars[*k].ty {
                Ty::Array(_, dims) => self.vars[*k].source && dims.iter().any(|dim| wanting.contains(dim)),
                Ty::Elem(_) => false,
            })
            .collect();
        let (k, field) = if !focused.is_empty() && self.rng.percent(75) {
            *self.rng.pick(&focused)
        } else if self.rng.percent(35) {
            *candidates.last().expect("non-empty")
        } else {
            *self.rng.pick(&candidates)
        };
        let (name, source) = (self.vars[k].name.clone(), self.vars[k].source);
        let Ty::Array(array_elem, dims) = self.vars[k].ty.clone() else { unreachable!() };
        let positions: Vec<String> = dims.iter().map(|&dim| self.index_expr(dim, source, depth)).collect();
        let mut text = format_read(self.rng, &name, &positions);
        if let Some(field) = field {
            text.push_str(&array_elem.member(field));
        }
        Some(text)
    }

    /// An index for an axis of size `dim` of an array (`source`: the array can give an index its
    /// size). Mostly an index variable of the same size (a read proven in bounds), otherwise
    /// affine arithmetic, a gather, a literal, or now and then an index of another size.
    fn index_expr(&mut self, dim: Dim, source: bool, depth: u32) -> String {
        let visible: Vec<usize> = (0..self.indices.len()).filter(|&k| !self.indices[k].hidden).collect();
        let same: Vec<usize> = visible.iter().copied().filter(|&k| self.indices[k].dim == dim).collect();
        let unsourced: Vec<usize> = same.iter().copied().filter(|&k| !self.indices[k].sourced).collect();
        let choice = if self.clean { 0 } else { self.rng.weighted(&[64, 12, if depth > 0 { 10 } else { 2 }, 5, 3]) };
        let bare = |generator: &mut Generator, k: usize| {
            if source {
                generator.indices[k].sourced = true;
            }
            generator.indices[k].name.clone()
        };
        match choice {
            0 if !same.is_empty() => {
                let k = if !unsourced.is_empty() && source && self.rng.percent(80) {
                    *self.rng.pick(&unsourced)
                } else if self.rng.percent(50) {
                    *same.last().expect("non-empty")
                } else {
                    *self.rng.pick(&same)
                };
                bare(self, k)
            }
            1 if !visible.is_empty() => {
                let k = *self.rng.pick(&visible);
                let name = self.indices[k].name.clone();
                match self.rng.below(5) {
                    0 => format!("{name} + 1"),
                    1 => format!("{name} - 1"),
                    2 => format!("2 * {name}"),
                    3 => format!("{name} * 2 + 1"),
                    _ => {
                        let size = self.size_i64(dim);
                        format!("{size} - 1 - {name}")
                    }
                }
            }
            2 => {
                // A gather `idx2[i]` (its values are indices, some out of range), or any integer:
                // `argmax k { .. }`, `c0 / 2`.
                let gathers: Vec<(String, usize)> = self
                    .vars
                    .iter()
                    .filter_map(|b| match (&b.ty, b.kind) {
                        (Ty::Array(Elem::Scalar(Sc::Usize | Sc::I64), dims), Kind::Param) if dims.len() == 1 => visible
                            .iter()
                            .position(|&k| self.indices[k].dim == dims[0])
                            .map(|k| (b.name.clone(), visible[k])),
                        _ => None,
                    })
                    .collect();
                if !gathers.is_empty() && self.rng.percent(50) {
                    let (name, k) = self.rng.pick(&gathers).clone();
                    return format!("{name}[{}]", bare(self, k));
                }
                let sc = *self.rng.pick(&[Sc::Usize, Sc::Usize, Sc::I64, Sc::I32]);
                if depth > 0 {
                    self.scalar(sc, depth.min(2))
                } else {
                    self.read(&Elem::Scalar(sc), 0).unwrap_or_else(|| "0".to_string())
                }
            }
            3 => self.rng.pick(&["0", "1", "2"]).to_string(),
            4 if !visible.is_empty() => {
                // An index of another size: a size check if it is inferred, else a clamped read.
                let k = *self.rng.pick(&visible);
                self.indices[k].name.clone()
            }
            _ => {
                if !same.is_empty() {
                    let k = *self.rng.pick(&same);
                    bare(self, k)
                } else if let Some(&k) = visible.last() {
                    format!("{} + 1", self.indices[k].name)
                } else {
                    "0".to_string()
                }
            }
        }
    }

    // -----------------------------------------------------------------------------------------
    // Scalars.

    fn scalar(&mut self, sc: Sc, depth: u32) -> String {
        if !self.spend(depth) {
            return self.scalar_leaf(sc);
        }
        if self.rng.percent(12) {
            if let Some(text) = self.reuse(sc) {
                return text;
            }
        }
        let can_loop = self.loop_depth < MAX_LOOP_DEPTH;
        let numeric = sc != Sc::Bool;
        let wanting = !self.unsourced_dims().is_empty();
        // leaf, read, arithmetic, unary, call, cast, select, reduction, fold, let, projection,
        // direct comprehension read, comparison/logic
        let weights = [
            8,
            if wanting { 45 } else { 22 },
            if numeric { 18 } else { 0 },
            4,
            if numeric && sc != Sc::Usize { 8 } else { 0 },
            6,
            6,
            if can_loop { 16 } else { 0 },
            if can_loop && !self.clean { 5 } else { 0 },
            6,
            4,
            if can_loop && !self.clean { 3 } else { 0 },
            if sc == Sc::Bool { 30 } else { 0 },
        ];
        let text = match self.rng.weighted(&weights) {
            0 => self.scalar_leaf(sc),
            1 => self.read(&Elem::Scalar(sc), depth - 1).unwrap_or_else(|| self.scalar_leaf(sc)),
            2 => self.arithmetic(sc, depth),
            3 => match sc {
                Sc::Bool => format!("(!{})", self.scalar(sc, depth - 1)),
                _ => format!("(-{})", self.scalar(sc, depth - 1)),
            },
            4 => self.call(sc, depth),
            5 => self.cast(sc, depth),
            6 => self.select(&Ty::Elem(Elem::Scalar(sc)), depth),
            7 => self.reduction(sc, depth),
            8 => self.fold(&Ty::Elem(Elem::Scalar(sc)), depth),
            9 => self.let_block(&Ty::Elem(Elem::Scalar(sc)), depth),
            10 => self.projection(sc, depth),
            11 => {
                let visible: Vec<Dim> =
                    self.indices.iter().filter(|index| !index.hidden).map(|index| index.dim).collect();
                let dim =
                    if !visible.is_empty() && self.rng.percent(75) { *self.rng.pick(&visible) } else { self.new_dim() };
                let (inner, source) =
                    self.maybe_clean(65, |generator| generator.comprehension(&Elem::Scalar(sc), &[dim], depth - 1));
                let index = self.index_expr(dim, source, depth - 1);
                format!("({inner})[{index}]")
            }
            _ => self.condition(depth),
        };
        text
    }

    fn scalar_leaf(&mut self, sc: Sc) -> String {
        let target = Ty::Elem(Elem::Scalar(sc));
        let visible: Vec<usize> = (0..self.indices.len()).filter(|&k| !self.indices[k].hidden).collect();
        let roll = self.rng.below(100);
        if roll < 30 {
            if let Some(k) = self.pick_var(|b| b.ty == target) {
                return self.vars[k].name.clone();
            }
        }
        if roll < 60 {
            if let Some(read) = self.read(&Elem::Scalar(sc), 0) {
                return read;
            }
        }
        if roll < 75 && !visible.is_empty() {
            let k = *self.rng.pick(&visible);
            let name = self.indices[k].name.clone();
            return match sc {
                Sc::I64 => name,
                Sc::Bool => format!("({name} < 2)"),
                _ => format!("({name} as {})", sc.name()),
            };
        }
        if roll < 82 && sc == Sc::I64 {
            let arrays: Vec<(String, usize)> = self
                .vars
                .iter()
                .filter_map(|b| match &b.ty {
                    Ty::Array(_, dims) => Some((b.name.clone(), dims.len())),
                    Ty::Elem(_) => None,
                })
                .collect();
            if !arrays.is_empty() {
                let (name, rank) = self.rng.pick(&arrays).clone();
                let axis = self.rng.below(rank);
                return if axis == 0 && self.rng.percent(50) {
                    format!("{name}.len()")
                } else {
                    format!("{name}.shape({axis})")
                };
            }
        }
        self.literal(sc)
    }

    fn literal(&mut self, sc: Sc) -> String {
        match sc {
            Sc::F64 | Sc::F32 => {
                let value = *self.rng.pick(&["0.0", "1.0", "0.5", "2.0", "1.5", "3.0", "0.25"]);
                if self.rng.percent(10) {
                    format!("{value}{}", sc.name())
                } else if self.rng.percent(15) {
                    format!("(-{value})")
                } else {
                    value.to_string()
                }
            }
            Sc::I64 | Sc::I32 | Sc::Usize => {
                let value = self.rng.between(0, 4);
                if self.rng.percent(10) {
                    format!("{value}{}", sc.name())
                } else {
                    value.to_string()
                }
            }
            Sc::Bool => self.rng.pick(&["true", "false"]).to_string(),
        }
    }

    fn arithmetic(&mut self, sc: Sc, depth: u32) -> String {
        let op = if self.clean && sc.is_int() {
            *self.rng.pick(&["+", "-", "*"])
        } else {
            *self.rng.pick(&["+", "-", "*", "*", "/", "%", "+"])
        };
        let left = self.scalar(sc, depth - 1);
        let right = if matches!(op, "/" | "%") && sc.is_int() && self.rng.percent(70) {
            // Mostly nonzero divisors, so that most programs run to the end.
            match sc {
                Sc::Usize => self.rng.pick(&["1", "2", "3"]).to_string(),
                _ => self.rng.pick(&["1", "2", "3", "(-2)"]).to_string(),
            }
        } else {
            self.scalar(sc, depth - 1)
        };
        format!("({left} {op} {right})")
    }

    fn call(&mut self, sc: Sc, depth: u32) -> String {
        let text = if sc.is_float() {
            let func = *self.rng.pick(&[
                "exp", "ln", "sqrt", "sin", "cos", "tan", "tanh", "abs", "floor", "ceil", "pow", "min", "max",
                "signum", "round", "trunc", "exp2", "log2", "cbrt", "hypot", "atan2", "powi", "clamp",
            ]);
            let mut args: Vec<String> = vec![self.scalar(sc, depth - 1)];
            match func {
                "pow" | "min" | "max" | "hypot" | "atan2" => args.push(self.scalar(sc, depth - 1)),
                // `powi`'s exponent is an `i32`: a literal, typed so by the checker.
                "powi" => args.push(self.rng.pick(&["2", "3", "(-1)", "0"]).to_string()),
                // Bounds in order cannot fail; arbitrary ones may (not in clean mode).
                "clamp" if self.clean || self.rng.percent(60) => {
                    args.extend(["(-1.0)".to_string(), self.rng.pick(&["0.5", "1.0", "2.0"]).to_string()])
                }
                "clamp" => args.extend([self.scalar(sc, depth - 1), self.scalar(sc, depth - 1)]),
                _ => {}
            }
            // Method syntax a quarter of the time: `(x).pow(y)`, `(x).exp()`.
            if self.rng.percent(25) {
                format!("({}).{func}({})", args[0], args[1..].join(", "))
            } else {
                format!("{func}({})", args.join(", "))
            }
        } else {
            let x = self.scalar(sc, depth - 1);
            match self.rng.below(8) {
                0 => format!("abs({x})"),
                1 => format!("min({x}, {})", self.scalar(sc, depth - 1)),
                2 => format!("max({x}, {})", self.scalar(sc, depth - 1)),
                // Integer `pow`: a `u32` exponent (a literal), wrapping.
                3 => format!("({x}).pow({})", self.rng.between(0, 3)),
                4 => format!("clamp({x}, 1, {})", self.rng.between(1, 4)),
                // A literal divisor cannot be zero; an arbitrary one may (not in clean mode).
                5 | 6 => {
                    let func = if self.rng.percent(50) { "rem_euclid" } else { "div_euclid" };
                    let divisor = if self.clean || self.rng.percent(70) {
                        self.rng.between(1, 3).to_string()
                    } else {
                        self.scalar(sc, depth - 1)
                    };
                    format!("({x}).{func}({divisor})")
                }
                // `signum` is for signed types only.
                _ if sc == Sc::Usize => format!("abs({x})"),
                _ => format!("signum({x})"),
            }
        };
        self.remember(&text, sc, self.created.len());
        text
    }

    fn cast(&mut self, sc: Sc, depth: u32) -> String {
        let from = match sc {
            Sc::Bool => return self.condition(depth),
            Sc::F64 | Sc::F32 => *self.rng.pick(&[Sc::F64, Sc::F32, Sc::I64, Sc::I32, Sc::Usize]),
            _ => *self.rng.pick(&[Sc::F64, Sc::F32, Sc::I64, Sc::I32, Sc::Usize, Sc::Bool]),
        };
        format!("({} as {})", self.scalar(from, depth - 1), sc.name())
    }

    /// A `bool`: a comparison, `&&`, `||`, `!`.
    fn condition(&mut self, depth: u32) -> String {
        let depth = depth.max(1);
        match self.rng.weighted(&[60, 25, 15]) {
            0 => {
                let sc = *self.rng.pick(&NUMBERS);
                let op = *self.rng.pick(&["<", "<=", ">", ">=", "==", "!="]);
                format!("({} {op} {})", self.scalar(sc, depth - 1), self.scalar(sc, depth - 1))
            }
            1 => {
                let op = *self.rng.pick(&["&&", "||"]);
                format!("({} {op} {})", self.scalar(Sc::Bool, depth - 1), self.scalar(Sc::Bool, depth - 1))
            }
            _ => {
                let op = *self.rng.pick(&["==", "!="]);
                format!("({} {op} {})", self.scalar(Sc::Bool, depth - 1), self.scalar(Sc::Bool, depth - 1))
            }
        }
    }

    fn projection(&mut self, sc: Sc, depth: u32) -> String {
        // A tuple or record value in scope or built here, then one of its fields.
        let candidates: Vec<(usize, usize)> = (0..self.vars.len())
            .flat_map(|k| match &self.vars[k].ty {
                Ty::Elem(elem @ (Elem::Tuple(_) | Elem::Record(_))) => {
                    elem.fields().iter().enumerate().filter(|(_, f)| **f == sc).map(|(field, _)| (k, field)).collect()
                }
                _ => Vec::new(),
            })
            .collect();
        if !candidates.is_empty() && self.rng.percent(50) {
            let (k, field) = *self.rng.pick(&candidates);
            let Ty::Elem(elem) = self.vars[k].ty.clone() else { unreachable!() };
            return format!("{}{}", self.vars[k].name, elem.member(field));
        }
        let mut elem = self.compound_elem();
        let field = self.rng.below(elem.fields().len());
        match &mut elem {
            Elem::Tuple(fields) | Elem::Record(fields) => fields[field] = sc,
            Elem::Scalar(_) => {}
        }
        let value = self.compound(&elem, depth - 1);
        format!("({value}){}", elem.member(field))
    }

    fn select(&mut self, ty: &Ty, depth: u32) -> String {
        let cond = self.scalar(Sc::Bool, depth - 1);
        let (then, source) = self.value_with_source(ty, depth - 1);
        let otherwise = self.value(ty, depth - 1);
        self.last_source = source;
        format!("(if {cond} {{ {then} }} else {{ {otherwise} }})")
    }

    /// `sum k { .. }` and friends. Inside nested loops, the innermost index is hidden now and
    /// then, so the reduction does not depend on it (what let-lifting moves out).
    fn reduction(&mut self, sc: Sc, depth: u32) -> String {
        let start = self.created.len();
        let (op, body_sc) = match sc {
            Sc::Bool => (*self.rng.pick(&["all", "any"]), Sc::Bool),
            Sc::Usize if !self.clean && self.rng.percent(70) => (
                *self.rng.pick(&["argmax", "argmin"]),
                *self.rng.pick(&[Sc::F64, Sc::F64, Sc::I64, Sc::F32, Sc::I32, Sc::Usize]),
            ),
            _ => (*self.rng.pick(&["sum", "sum", "prod", "max", "min", "max"]), sc),
        };
        let count = if op.starts_with("arg") || !self.rng.percent(15) { 1 } else { 2 };
        let hidden = self.hide_inner_indices();
        let base = self.indices.len();
        for _ in 0..count {
            let dim = self.reduction_dim();
            let name = self.fresh("k");
            self.indices.push(IndexVar { name, dim, sourced: false, hidden: false });
        }
        self.loop_depth += 1;
        let body = self.scalar(body_sc, depth - 1);
        // Now and then a reduction of a pair, component-wise, of which one component is used:
        // the other (of any number type) is reduced alongside in the same pass.
        let pair = ["sum", "prod", "max", "min"].contains(&op) && self.rng.percent(20);
        let other = if pair {
            let other_sc = *self.rng.pick(&[Sc::F64, Sc::I64, Sc::F32, Sc::I32]);
            Some(self.scalar(other_sc, depth - 1))
        } else {
            None
        };
        self.loop_depth -= 1;
        let binders: Vec<IndexVar> = self.indices.drain(base..).collect();
        self.unhide(&hidden);
        let binders = self.binder_list(&binders);
        let text = match other {
            Some(other) if self.rng.percent(50) => format!("(({op} {binders} {{ ({body}, {other}) }}).0)"),
            Some(other) => format!("(({op} {binders} {{ {{ other: {other}, value: {body} }} }}).value)"),
            None => format!("({op} {binders} {{ {body} }})"),
        };
        self.remember(&text, sc, start);
        text
    }

    /// Hides the innermost visible index (sometimes the two innermost) when at least two are
    /// visible; returns what to unhide.
    fn hide_inner_indices(&mut self) -> Vec<usize> {
        let visible: Vec<usize> = (0..self.indices.len()).filter(|&k| !self.indices[k].hidden).collect();
        if visible.len() < 2 || !self.rng.percent(40) {
            return Vec::new();
        }
        let count = if visible.len() >= 3 && self.rng.percent(30) { 2 } else { 1 };
        let hidden: Vec<usize> = visible[visible.len() - count..].to_vec();
        for &k in &hidden {
            self.indices[k].hidden = true;
        }
        hidden
    }

    fn unhide(&mut self, hidden: &[usize]) {
        for &k in hidden {
            self.indices[k].hidden = false;
        }
    }

    /// `fold t in 0..n, acc = init { body }` for a scalar, tuple/record or array accumulator;
    /// for an array, sometimes one part of a state that is a tuple holding the array and a
    /// scalar (`(fold t in 0..n, (a, s) = (init, v) { (next, w) }).0`).
    fn fold(&mut self, ty: &Ty, depth: u32) -> String {
        let dim = if self.rng.percent(70) { Dim::Sym(self.rng.below(self.symbols)) } else { self.new_dim() };
        if matches!(ty, Ty::Array(..)) && self.rng.percent(25) {
            return self.fold_with_side(ty, dim, depth);
        }
        let (init, source) = self.value_with_source(ty, depth - 1);
        let text = self.accumulation("fold", dim, ty, init, depth);
        self.last_source = source;
        text
    }

    /// The array part of a fold over `(array, scalar)`: both parts step together, each step
    /// reading both.
    fn fold_with_side(&mut self, ty: &Ty, dim: Dim, depth: u32) -> String {
        let init = self.value(ty, depth - 1);
        let side_sc = *self.rng.pick(&[Sc::F64, Sc::F64, Sc::I64]);
        let side_init = self.scalar(side_sc, depth - 1);
        let (count, _) = self.size_text(dim);
        let index = self.fresh("t");
        let scope = self.vars.len();
        let array = self.bind("acc", ty.clone(), Kind::Accumulator, false);
        let side = self.bind("acc", Ty::Elem(Elem::Scalar(side_sc)), Kind::Accumulator, false);
        self.indices.push(IndexVar { name: index.clone(), dim, sourced: false, hidden: false });
        self.loop_depth += 1;
        let next = self.value(ty, depth - 1);
        let side_next = self.scalar(side_sc, depth - 1);
        self.loop_depth -= 1;
        self.indices.pop();
        self.vars.truncate(scope);
        self.last_source = false;
        format!(
            "((fold {index} in 0..{count}, ({array}, {side}) = ({init}, {side_init}) {{ ({next}, {side_next}) }}).0)"
        )
    }

    /// `scan t in 0..n, acc = init { body }` for a scalar, tuple or record state: an array of
    /// one axis, `dim`, holding every state.
    fn scan(&mut self, elem: &Elem, dim: Dim, depth: u32) -> (String, bool) {
        let ty = Ty::Elem(elem.clone());
        let init = self.value(&ty, depth - 1);
        (self.accumulation("scan", dim, &ty, init, depth), false)
    }

    /// `accum h = init { for t in 0..n { [if c] h[e, ..] op= v } }` for an array of scalars:
    /// indices are any index expressions (some out of range: an error in both), updates
    /// `+=`/`*=` on numbers, `|=`/`&=` on `bool`s, sometimes two, sometimes conditional,
    /// sometimes under a second loop.
    fn accum(&mut self, elem: &Elem, dims: &[Dim], depth: u32) -> (String, bool) {
        let Elem::Scalar(sc) = *elem else {
            return self.comprehension(elem, dims, depth - 1);
        };
        let (init, _) = self.array(elem, dims, depth - 1);
        let target = self.fresh("h");
        let dim = if self.rng.percent(70) { Dim::Sym(self.rng.below(self.symbols)) } else { self.new_dim() };
        let (count, _) = self.size_text(dim);
        let index = self.fresh("t");
        self.indices.push(IndexVar { name: index.clone(), dim, sourced: false, hidden: false });
        self.loop_depth += 1;
        // A second loop, inside the first (its size never names the outer index).
        let inner = self.rng.percent(20).then(|| {
            let dim = if self.rng.percent(70) { Dim::Sym(self.rng.below(self.symbols)) } else { Dim::Lit(2) };
            let (count, _) = self.size_text(dim);
            let index = self.fresh("u");
            self.indices.push(IndexVar { name: index.clone(), dim, sourced: false, hidden: false });
            self.loop_depth += 1;
            format!("for {index} in 0..{count}")
        });
        let updates = 1 + usize::from(self.rng.percent(25));
        let mut statements = Vec::new();
        for _ in 0..updates {
            let indices: Vec<String> = dims.iter().map(|&axis| self.index_expr(axis, false, depth - 1)).collect();
            let value = self.scalar(sc, depth - 1);
            let op = match (sc, self.rng.percent(80)) {
                (Sc::Bool, true) => "|=",
                (Sc::Bool, false) => "&=",
                (_, true) => "+=",
                (_, false) => "*=",
            };
            let update = format!("{target}[{}] {op} {value}", indices.join(", "));
            statements.push(if self.rng.percent(30) {
                let condition = self.scalar(Sc::Bool, depth - 1);
                format!("if {condition} {{ {update} }}")
            } else {
                update
            });
        }
        let mut body = statements.join("; ");
        if let Some(inner) = inner {
            self.loop_depth -= 1;
            self.indices.pop();
            body = format!("{inner} {{ {body} }}");
        }
        self.loop_depth -= 1;
        self.indices.pop();
        (format!("(accum {target} = {init} {{ for {index} in 0..{count} {{ {body} }} }})"), false)
    }

    /// The loop of a fold or scan (`keyword`) over `dim` from `init`: often a step that
    /// combines the accumulator with a value (`acc + v`, `max(acc, v)`, a record of such), which
    /// scans run in blocks, else any value of the type.
    fn accumulation(&mut self, keyword: &str, dim: Dim, ty: &Ty, init: String, depth: u32) -> String {
        let (count, _) = self.size_text(dim);
        let index = self.fresh("t");
        let scope = self.vars.len();
        let tuple_fields = match ty {
            Ty::Elem(Elem::Tuple(fields)) if self.rng.percent(60) => Some(fields.clone()),
            _ => None,
        };
        let pattern = match &tuple_fields {
            Some(fields) => format!("({})", self.bind_fields("q", fields, Kind::Accumulator).join(", ")),
            None => self.bind("acc", ty.clone(), Kind::Accumulator, false),
        };
        self.indices.push(IndexVar { name: index.clone(), dim, sourced: false, hidden: false });
        self.loop_depth += 1;
        let body = match ty {
            Ty::Elem(Elem::Scalar(sc)) if self.rng.percent(60) => {
                let acc = pattern.clone();
                let step = self.scalar(*sc, depth - 1);
                match (sc, self.rng.below(4)) {
                    (Sc::Bool, 0) => format!("({acc} && {step})"),
                    (Sc::Bool, 1) => format!("({step} || {acc})"),
                    (Sc::Bool, _) => format!("({acc} != {step})"),
                    (_, 0) => format!("({acc} + {step})"),
                    (_, 1) => format!("max({acc}, {step})"),
                    (_, 2) => format!("({step} * {acc})"),
                    _ => format!("({acc} * {step})"),
                }
            }
            Ty::Elem(elem @ (Elem::Tuple(_) | Elem::Record(_))) if self.rng.percent(60) => {
                let fields = elem.fields().to_vec();
                let parts: Vec<String> = fields
                    .iter()
                    .enumerate()
                    .map(|(k, sc)| {
                        let acc_field = match &tuple_fields {
                            Some(_) => self.vars[scope + k].name.clone(),
                            None => format!("{pattern}{}", elem.member(k)),
                        };
                        let step = self.scalar(*sc, depth - 1);
                        match sc {
                            Sc::Bool => format!("({acc_field} || {step})"),
                            _ => format!("({acc_field} + {step})"),
                        }
                    })
                    .collect();
                elem.literal(&parts)
            }
            _ => self.value(ty, depth - 1),
        };
        self.loop_depth -= 1;
        self.indices.pop();
        self.vars.truncate(scope);
        format!("({keyword} {index} in 0..{count}, {pattern} = {init} {{ {body} }})")
    }

    /// `{ let v = ..; body }` with one or two bindings, often an array consumed by the body.
    fn let_block(&mut self, ty: &Ty, depth: u32) -> String {
        let scope = self.vars.len();
        let count = 1 + usize::from(self.rng.percent(30));
        let mut statements = Vec::new();
        for _ in 0..count {
            let let_ty = match self.rng.weighted(&[50, 35, 15]) {
                0 => {
                    let rank = 1 + usize::from(self.rng.percent(35));
                    let mut dims = Vec::new();
                    for _ in 0..rank {
                        // Often the size of an index in scope, so the body can read it element-wise.
                        let visible: Vec<Dim> =
                            self.indices.iter().filter(|index| !index.hidden).map(|index| index.dim).collect();
                        let dim = if !visible.is_empty() && self.rng.percent(50) {
                            *self.rng.pick(&visible)
                        } else {
                            self.new_dim()
                        };
                        dims.push(dim);
                    }
                    Ty::Array(Elem::Scalar(*self.rng.pick(&[Sc::F64, Sc::F64, Sc::F64, Sc::I64])), dims)
                }
                1 => Ty::Elem(Elem::Scalar(*self.rng.pick(&[Sc::F64, Sc::F64, Sc::I64, Sc::Bool, Sc::Usize]))),
                _ => {
                    let elem = self.compound_elem();
                    Ty::Elem(Elem::Tuple(elem.fields().to_vec()))
                }
            };
            let hidden = if matches!(let_ty, Ty::Elem(_)) { self.hide_inner_indices() } else { Vec::new() };
            let statement = self.let_statement(&let_ty, depth - 1);
            self.unhide(&hidden);
            statements.push(statement);
        }
        let (body, source) = self.value_with_source(ty, depth - 1);
        self.vars.truncate(scope);
        self.last_source = source;
        format!("{{ {} {body} }}", statements.join(" "))
    }

    // -----------------------------------------------------------------------------------------
    // Alpha-equivalent repeats.

    fn remember(&mut self, text: &str, sc: Sc, created_from: usize) {
        if self.memo.len() < 32 {
            let binders = self.created[created_from..].to_vec();
            self.memo.push(Memo { text: text.to_string(), sc, binders });
        }
    }

    /// A remembered expression of type `sc` whose free names are all visible here, with its
    /// bound names renamed (alpha-equivalent, so CSE may share it).
    fn reuse(&mut self, sc: Sc) -> Option<String> {
        let visible: BTreeSet<String> = self
            .vars
            .iter()
            .map(|b| b.name.clone())
            .chain(self.indices.iter().filter(|index| !index.hidden).map(|index| index.name.clone()))
            .collect();
        let usable: Vec<usize> = (0..self.memo.len())
            .filter(|&k| {
                let memo = &self.memo[k];
                memo.sc == sc
                    && tokens(&memo.text)
                        .iter()
                        .filter(|token| is_variable_name(token))
                        .all(|token| visible.contains(*token) || memo.binders.iter().any(|binder| binder == *token))
            })
            .collect();
        if usable.is_empty() {
            return None;
        }
        let k = *self.rng.pick(&usable);
        let (text, binders) = (self.memo[k].text.clone(), self.memo[k].binders.clone());
        Some(self.alpha_copy(&text, &binders))
    }

    /// `text` with each of `binders` renamed to a fresh name.
    fn alpha_copy(&mut self, text: &str, binders: &[String]) -> String {
        let renames: BTreeMap<String, String> = binders.iter().map(|old| (old.clone(), self.fresh("r"))).collect();
        tokens(text).into_iter().map(|token| renames.get(token).cloned().unwrap_or_else(|| token.to_string())).collect()
    }
}

// =============================================================================================
// Templates: the shapes the optimiser exists for, with random holes.

impl Generator<'_> {
    /// Returns the result type, extra `let` statements for the function body, and the result.
    fn template(&mut self) -> Option<(Ty, Vec<String>, String)> {
        match self.rng.below(6) {
            0 | 1 => self.rows_template(),
            2 => self.producer_consumer_template(),
            3 => self.direct_read_template(),
            _ => self.contraction_template(),
        }
    }

    /// A float array parameter of exactly these size symbols, added if there is none.
    fn ensure_param(&mut self, symbols: &[usize]) -> String {
        let dims: Vec<Dim> = symbols.iter().map(|&symbol| Dim::Sym(symbol)).collect();
        let wanted = Ty::Array(Elem::Scalar(Sc::F64), dims);
        let existing: Vec<String> =
            self.vars.iter().filter(|b| b.kind == Kind::Param && b.ty == wanted).map(|b| b.name.clone()).collect();
        if !existing.is_empty() && self.rng.percent(80) {
            return self.rng.pick(&existing).clone();
        }
        let name = format!("x{}", self.params.len());
        self.params.push(ParamSpec {
            name: name.clone(),
            kind: ParamKind::Array { sc: Sc::F64, dims: symbols.to_vec(), gather: false },
        });
        self.vars.push(Binding { name: name.clone(), ty: wanted, kind: Kind::Param, size_of: None, source: true });
        name
    }

    /// Einsums the `contract` pass turns into one node (matmul, its transposes, matvec, dot,
    /// batched, scaled, with let-bound or sub-array operands), and near misses it must leave
    /// alone (a factor inside the sum, a non-linear or affine operand, `max` instead of `sum`).
    fn contraction_template(&mut self) -> Option<(Ty, Vec<String>, String)> {
        let symbol = |generator: &mut Generator| generator.rng.below(generator.symbols);
        let (si, sk, sj, sp) = (symbol(self), symbol(self), symbol(self), symbol(self));
        let (i, j, k, p) = (self.fresh("i"), self.fresh("j"), self.fresh("k"), self.fresh("p"));
        let mut statements = Vec::new();
        // Scale: none, before or after the sum.
        let scale = match self.rng.below(4) {
            0 => {
                let factor = self.scalar(Sc::F64, 1);
                Some((factor, true))
            }
            1 => Some(("2.0".to_string(), false)),
            _ => None,
        };
        let scaled = |sum: String, scale: &Option<(String, bool)>| match scale {
            Some((factor, true)) => format!("{factor} * {sum}"),
            Some((factor, false)) => format!("{sum} * {factor}"),
            None => sum,
        };
        // Near misses: the product as the pass must not take it.
        let product = |generator: &mut Generator, left: String, right: String| match generator.rng.below(10) {
            0 => format!("exp({left}) * {right}"),
            1 => {
                let factor = generator.scalar(Sc::F64, 1);
                format!("{factor} * {left} * {right}")
            }
            _ => format!("{left} * {right}"),
        };
        let op = if self.rng.percent(10) { "max" } else { "sum" };
        let (ret, result) = match self.rng.below(6) {
            0 | 1 => {
                // Matrix product, operands possibly transposed or let-bound, output possibly transposed.
                let a = if self.rng.percent(25) { self.ensure_param(&[sk, si]) } else { self.ensure_param(&[si, sk]) };
                let transposed_a = matches!(&self.vars.iter().find(|b| b.name == a).expect("param").ty, Ty::Array(_, d) if d[0] == Dim::Sym(sk) && d[1] == Dim::Sym(si) && si != sk);
                let b = self.ensure_param(&[sk, sj]);
                let b = if self.rng.percent(25) {
                    // A let-bound (clean) operand of the same shape.
                    let g = self.fresh("g");
                    let (u, v) = (self.fresh("i"), self.fresh("i"));
                    statements.push(format!("let {g} = for {u}, {v} {{ {b}[{u}, {v}] * 0.5 }};"));
                    g
                } else {
                    b
                };
                let left = if transposed_a { format!("{a}[{k}, {i}]") } else { format!("{a}[{i}, {k}]") };
                let right = if self.rng.percent(8) { format!("{b}[{k} + 1, {j}]") } else { format!("{b}[{k}, {j}]") };
                let body = product(self, left, right);
                let sum = scaled(format!("{op} {k} {{ {body} }}"), &scale);
                if self.rng.percent(20) {
                    (
                        Ty::Array(Elem::Scalar(Sc::F64), vec![Dim::Sym(sj), Dim::Sym(si)]),
                        format!("for {j}, {i} {{ {sum} }}"),
                    )
                } else {
                    (
                        Ty::Array(Elem::Scalar(Sc::F64), vec![Dim::Sym(si), Dim::Sym(sj)]),
                        format!("for {i}, {j} {{ {sum} }}"),
                    )
                }
            }
            2 => {
                // Matrix-vector.
                let a = self.ensure_param(&[si, sk]);
                let v = self.ensure_param(&[sk]);
                let body = product(self, format!("{a}[{i}, {k}]"), format!("{v}[{k}]"));
                let sum = scaled(format!("{op} {k} {{ {body} }}"), &scale);
                (Ty::Array(Elem::Scalar(Sc::F64), vec![Dim::Sym(si)]), format!("for {i} {{ {sum} }}"))
            }
            3 => {
                // Dot product, not inside any loop.
                let v = self.ensure_param(&[sk]);
                let w = if self.rng.percent(30) { v.clone() } else { self.ensure_param(&[sk]) };
                let body = product(self, format!("{v}[{k}]"), format!("{w}[{k}]"));
                (Ty::Elem(Elem::Scalar(Sc::F64)), scaled(format!("{op} {k} {{ {body} }}"), &scale))
            }
            4 => {
                // Batched: the batch label in both operands.
                let a = self.ensure_param(&[sp, si, sk]);
                let b = self.ensure_param(&[sp, sk, sj]);
                let body = product(self, format!("{a}[{p}, {i}, {k}]"), format!("{b}[{p}, {k}, {j}]"));
                let sum = scaled(format!("{op} {k} {{ {body} }}"), &scale);
                (
                    Ty::Array(Elem::Scalar(Sc::F64), vec![Dim::Sym(sp), Dim::Sym(si), Dim::Sym(sj)]),
                    format!("for {p}, {i}, {j} {{ {sum} }}"),
                )
            }
            _ => {
                // Two summed labels, and a sub-array operand `a[p]` under an outer loop.
                let l = self.fresh("l");
                let a = self.ensure_param(&[sp, sk, sj]);
                let b = self.ensure_param(&[sk, sj]);
                let body = product(self, format!("{a}[{p}][{k}, {l}]"), format!("{b}[{k}, {l}]"));
                let sum = scaled(format!("{op} {k}, {l} {{ {body} }}"), &scale);
                (Ty::Array(Elem::Scalar(Sc::F64), vec![Dim::Sym(sp)]), format!("for {p} {{ {sum} }}"))
            }
        };
        Some((ret, statements, result))
    }

    /// Softmax / layernorm style: `for i, j { let m = red k { f(x[i, k]) }; g(x[i, j], m, ..) }`,
    /// where the row statistics do not depend on `j` (let-lifting moves them out of `for j`), are
    /// sometimes written inline twice with different index names (CSE shares them), and may use
    /// one another.
    fn rows_template(&mut self) -> Option<(Ty, Vec<String>, String)> {
        let matrices: Vec<(String, Vec<Dim>)> = self
            .vars
            .iter()
            .filter_map(|b| match &b.ty {
                Ty::Array(Elem::Scalar(Sc::F64), dims) if dims.len() == 2 && b.kind == Kind::Param => {
                    Some((b.name.clone(), dims.clone()))
                }
                _ => None,
            })
            .collect();
        if matrices.is_empty() {
            return None;
        }
        let (x, dims) = self.rng.pick(&matrices).clone();
        let (i, j) = (self.fresh("i"), self.fresh("j"));
        let scope = self.vars.len();
        self.indices.push(IndexVar { name: i.clone(), dim: dims[0], sourced: true, hidden: false });
        self.indices.push(IndexVar { name: j.clone(), dim: dims[1], sourced: true, hidden: true });
        // Row statistics: each is let-bound or written inline (then possibly twice).
        let mut statements = Vec::new();
        let mut stats: Vec<(String, Vec<String>)> = Vec::new();
        for _ in 0..1 + self.rng.below(3) {
            let start = self.created.len();
            let previous = stats.last().map(|(text, binders)| (text.clone(), binders.clone()));
            let previous = match previous {
                Some((text, binders)) if self.rng.percent(60) => Some(self.alpha_copy(&text, &binders)),
                _ => None,
            };
            let text = self.row_reduction(&x, &i, dims[1], previous.as_deref());
            let binders = self.created[start..].to_vec();
            if self.rng.percent(55) {
                let name = self.bind("m", Ty::Elem(Elem::Scalar(Sc::F64)), Kind::Let, false);
                statements.push(format!("let {name} = {text};"));
                stats.push((name, Vec::new()));
            } else {
                stats.push((text, binders));
            }
        }
        // Statistics that do not depend on `i` either, now and then (lifted out of both loops).
        if self.rng.percent(25) {
            let row = self.indices.len() - 2;
            self.indices[row].hidden = true;
            let text = self.scalar(Sc::F64, 2);
            self.indices[row].hidden = false;
            stats.push((text, Vec::new()));
        }
        let last = self.indices.len() - 1;
        self.indices[last].hidden = false;
        let element = format!("{x}[{i}, {j}]");
        let stat = |generator: &mut Generator| {
            let (text, binders) = generator.rng.pick(&stats).clone();
            generator.alpha_copy(&text, &binders)
        };
        let body = match self.rng.below(5) {
            0 => {
                let m = stat(self);
                let denominator = {
                    let previous = Some(m.clone());
                    self.row_reduction(&x, &i, dims[1], previous.as_deref())
                };
                format!("exp({element} - {m}) / {denominator}")
            }
            1 => {
                let (m, v) = (stat(self), stat(self));
                format!("({element} - {m}) / sqrt({v} + 0.00001)")
            }
            2 => {
                let m = stat(self);
                format!("if {element} > {m} {{ {element} }} else {{ {m} }}")
            }
            3 => {
                let (m, v) = (stat(self), stat(self));
                let other = self.scalar(Sc::F64, 2);
                format!("{element} * {m} + {v} * {other}")
            }
            _ => {
                let m = stat(self);
                let other = self.scalar(Sc::F64, 3);
                format!("({other} - {m}) * {element}")
            }
        };
        self.indices.truncate(self.indices.len() - 2);
        self.vars.truncate(scope);
        let binders = if self.rng.percent(25) {
            format!("{i} in 0..{}, {j}", self.size_text(dims[0]).0)
        } else {
            format!("{i}, {j}")
        };
        let result = if statements.is_empty() {
            format!("for {binders} {{ {body} }}")
        } else {
            format!("for {binders} {{ {} {body} }}", statements.join(" "))
        };
        Some((Ty::Array(Elem::Scalar(Sc::F64), dims), Vec::new(), result))
    }

    /// `red k { f(x[i, k], previous) }` over the row `i` of `x`.
    fn row_reduction(&mut self, x: &str, i: &str, dim: Dim, previous: Option<&str>) -> String {
        let k = self.fresh("k");
        self.indices.push(IndexVar { name: k.clone(), dim, sourced: true, hidden: false });
        let read = if self.rng.percent(20) { format!("{x}[{i}][{k}]") } else { format!("{x}[{i}, {k}]") };
        let body = match (previous, self.rng.below(5)) {
            (Some(previous), 0 | 1) => format!("exp({read} - {previous})"),
            (Some(previous), 2) => format!("({read} - {previous}) * ({read} - {previous})"),
            (_, 0) => read,
            (_, 1) => format!("abs({read})"),
            (_, 2) => format!("{read} * {read}"),
            _ => {
                let other = self.scalar(Sc::F64, 2);
                format!("({read} + {other})")
            }
        };
        self.indices.pop();
        let op = *self.rng.pick(&["sum", "sum", "max", "min", "prod"]);
        let binder = if self.rng.percent(20) { format!("{k} in 0..{}", self.size_text(dim).0) } else { k };
        format!("{op} {binder} {{ {body} }}")
    }

    /// `let g = for i { e }; … g[j] …`: a comprehension consumed element-wise (fused by
    /// `inline` when it cannot fail), inside a reduction, or several times.
    fn producer_consumer_template(&mut self) -> Option<(Ty, Vec<String>, String)> {
        let dim = self.reduction_dim();
        let rank = 1 + usize::from(self.rng.percent(30));
        let mut dims = vec![dim];
        if rank == 2 {
            dims.push(self.reduction_dim());
        }
        let (value, source) =
            self.maybe_clean(70, |generator| generator.comprehension(&Elem::Scalar(Sc::F64), &dims, 3));
        let g = self.bind("g", Ty::Array(Elem::Scalar(Sc::F64), dims.clone()), Kind::Let, source);
        let statement = format!("let {g} = {value};");
        let j = self.fresh("j");
        self.indices.push(IndexVar { name: j.clone(), dim, sourced: source, hidden: false });
        let shape = if rank == 2 { 2 } else { *self.rng.pick(&[0, 1, 3]) };
        let (ret, result) = match shape {
            0 => {
                // Element-wise, once per element.
                let other = self.scalar(Sc::F64, 3);
                let op = *self.rng.pick(&["+", "*", "-"]);
                (Ty::Array(Elem::Scalar(Sc::F64), vec![dim]), format!("for {j} {{ {g}[{j}] {op} {other} }}"))
            }
            1 => {
                // Inside a reduction, next to an invariant statistic of the same producer.
                let k = self.fresh("k");
                let other = self.scalar(Sc::F64, 2);
                (
                    Ty::Array(Elem::Scalar(Sc::F64), vec![dim]),
                    format!("for {j} {{ {g}[{j}] - sum {k} {{ {g}[{k}] * {other} }} }}"),
                )
            }
            2 => {
                let (i2, k) = (self.fresh("i"), self.fresh("k"));
                self.indices.push(IndexVar { name: i2.clone(), dim: dims[1], sourced: source, hidden: false });
                let other = self.scalar(Sc::F64, 2);
                self.indices.pop();
                (
                    Ty::Array(Elem::Scalar(Sc::F64), dims.clone()),
                    format!("for {j}, {i2} {{ {g}[{j}, {i2}] * max {k} {{ {g}[{j}, {k}] }} + {other} }}"),
                )
            }
            _ => {
                // Free-form consumers of `g` in scope.
                let ret = Ty::Array(Elem::Scalar(Sc::F64), vec![dim]);
                let body = self.scalar(Sc::F64, 4);
                (ret, format!("for {j} {{ {g}[{j}] + {body} }}"))
            }
        };
        self.indices.pop();
        self.vars.pop();
        Some((ret, vec![statement], result))
    }

    /// `for i { (for j { e })[i] … }`: a comprehension indexed directly.
    fn direct_read_template(&mut self) -> Option<(Ty, Vec<String>, String)> {
        let dim = self.reduction_dim();
        let i = self.fresh("i");
        self.indices.push(IndexVar { name: i.clone(), dim, sourced: false, hidden: false });
        let (producer, source) =
            self.maybe_clean(75, |generator| generator.comprehension(&Elem::Scalar(Sc::F64), &[dim], 3));
        if source {
            self.indices.last_mut().expect("pushed").sourced = true;
        }
        let other = self.scalar(Sc::F64, 3);
        let index = self.indices.pop().expect("pushed");
        let binder = if index.sourced && self.rng.percent(80) {
            i.clone()
        } else {
            format!("{i} in 0..{}", self.size_text(dim).0)
        };
        let op = *self.rng.pick(&["+", "*", "-"]);
        Some((
            Ty::Array(Elem::Scalar(Sc::F64), vec![dim]),
            Vec::new(),
            format!("for {binder} {{ ({producer})[{i}] {op} {other} }}"),
        ))
    }
}

/// `x[a, b]` or `x[a][b]`.
fn format_read(rng: &mut Rng, name: &str, positions: &[String]) -> String {
    if positions.len() > 1 && rng.percent(30) {
        let mut text = name.to_string();
        for position in positions {
            let _ = write!(text, "[{position}]");
        }
        text
    } else {
        format!("{name}[{}]", positions.join(", "))
    }
}

/// Splits source text into identifier tokens, number tokens and single other characters, so
/// that concatenating the tokens gives the text back.
fn tokens(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    while start < bytes.len() {
        let byte = bytes[start];
        let mut end = start + 1;
        if byte.is_ascii_alphabetic() || byte == b'_' {
            while end < bytes.len() && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'_') {
                end += 1;
            }
        } else if byte.is_ascii_digit() {
            while end < bytes.len() && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'_') {
                end += 1;
            }
            if end + 1 < bytes.len() && bytes[end] == b'.' && bytes[end + 1].is_ascii_digit() {
                end += 1;
                while end < bytes.len() && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'_') {
                    end += 1;
                }
            }
        } else {
            // Keep multi-byte UTF-8 characters whole (the generator writes none, but be safe).
            while end < bytes.len() && !text.is_char_boundary(end) {
                end += 1;
            }
        }
        out.push(&text[start..end]);
        start = end;
    }
    out
}

/// The generator's variable names end in a digit; type names (`f64`, `i32`) are not variables.
fn is_variable_name(token: &str) -> bool {
    let first = token.as_bytes()[0];
    (first.is_ascii_alphabetic() || first == b'_')
        && token.as_bytes()[token.len() - 1].is_ascii_digit()
        && !matches!(token, "f32" | "f64" | "i32" | "i64")
}
