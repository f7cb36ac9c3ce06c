//! Part of stage 2 (check), sizes: size inference and bounds proofs (README, "Semantics a user must know";
//! `docs/semantics.md` §4.11 and §4.15). An index without an explicit size takes it from the
//! arrays it directly indexes (`a[i]` → `len(a, 0)`); several distinct candidates become
//! equality checks run before the loops (once, when they mention only parameters); sizes equal
//! by construction (same array and axis, or the same definition reached through `let`s) need no
//! check.
//! Afterwards [`prove_bounds`] marks every read `a[i]` whose index range lies within the axis
//! (equals it, or falls short of it by construction) as [`Bounds::Proven`], so generated code
//! reads it without clamping.

use crate::ir::node;
use crate::ir::shape::{raw_shape, simplify_lengths};
use crate::ir::{Bounds, Expr, ExprKind, Literal, Program, ScalarType, SizeCheck, Type, VarId, VarInfo};
use crate::ops::{BinaryOp, Scalar};
use proc_macro2::Span;
use std::collections::BTreeMap;

/// One array axis that an index variable directly indexes.
#[derive(Clone, Debug)]
pub struct Candidate {
    /// `len(array, axis)`, simplified.
    pub size: Expr,
    /// "axis 1 of `a`", for errors.
    pub what: String,
    /// The user's index token.
    pub span: Span,
}

/// How an index reads an axis: `a[i]`, or shifted, `a[i + 1]`, `a[i - 2]`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Read {
    Plain,
    Shifted,
}

/// The candidates recorded so far, per index variable: from plain reads, and from shifted
/// ones, which give the size only where no plain read does (a stencil written with shifts
/// only, `for i { a[i + 1] - a[i - 1] }`, ranges over `a`; its edge reads are clamped).
#[derive(Default)]
pub struct SizeUses {
    uses: BTreeMap<VarId, Vec<Candidate>>,
    shifted: BTreeMap<VarId, Vec<Candidate>>,
    /// The first read whose position uses an index without sizing it (`a[2 * i]`), per index:
    /// where to point when nothing sizes the index.
    mentioned: BTreeMap<VarId, Span>,
}

impl SizeUses {
    /// Records that `index` indexes axis `axis` of `array` (an expression of array type).
    pub fn record(&mut self, vars: &[VarInfo], index: VarId, array: &Expr, axis: usize, span: Span, read: Read) {
        let size = simplify_lengths(crate::ir::shape::length(array.clone(), axis));
        let what = describe(vars, &size);
        let uses = match read {
            Read::Plain => &mut self.uses,
            Read::Shifted => &mut self.shifted,
        };
        uses.entry(index).or_default().push(Candidate { size, what, span });
    }

    /// Records that the read at `span` computes its position from `index` without sizing it.
    pub fn mention(&mut self, index: VarId, span: Span) {
        self.mentioned.entry(index).or_insert(span);
    }

    /// The read recorded by [`SizeUses::mention`] for `index`, if any.
    pub fn mentioned(&self, index: VarId) -> Option<Span> {
        self.mentioned.get(&index).copied()
    }

    /// The candidates of `index`: its plain reads', or if it has none, its shifted reads'.
    pub fn take(&mut self, index: VarId) -> Vec<Candidate> {
        let shifted = self.shifted.remove(&index).unwrap_or_default();
        match self.uses.remove(&index) {
            Some(plain) if !plain.is_empty() => plain,
            _ => shifted,
        }
    }
}

/// "axis 1 of `a`" for `len(a, 1)`, "axis 0 of `s.1`" for a field of a named tuple; a
/// generic phrase otherwise.
pub fn describe(vars: &[VarInfo], size: &Expr) -> String {
    if let ExprKind::Len(node::Len { array, axis }) = &size.kind {
        if let Some(path) = path_text(vars, array) {
            return format!("axis {axis} of `{path}`");
        }
    }
    "a computed array".to_string()
}

/// `a`, or `s.1.0`: a variable the user named, or fields of one.
fn path_text(vars: &[VarInfo], expr: &Expr) -> Option<String> {
    match &expr.kind {
        ExprKind::Var(var) => {
            vars.get(var.0 as usize).filter(|info| !info.is_synthetic()).map(|info| info.name.clone())
        }
        ExprKind::Project(node::Project { tuple, field }) => {
            let name = match &tuple.ty {
                Type::Tuple { names, .. } if *field < names.len() => names[*field].clone(),
                _ => field.to_string(),
            };
            Some(format!("{}.{name}", path_text(vars, tuple)?))
        }
        _ => None,
    }
}

/// The `let`-bound values in scope, used to see through `let`s when comparing sizes.
pub type LetValues = BTreeMap<VarId, Expr>;

/// The chosen size of an index and the checks that make its other candidates agree.
pub struct Resolved {
    pub size: Expr,
    pub checks: Vec<SizeCheck>,
}

/// Picks the size of `index` from its candidates. `usable` says whether a size expression can
/// be evaluated at the binder (its variables are in scope there and none is an index).
/// `None` when no candidate is usable.
pub fn resolve(
    index_name: &str,
    candidates: Vec<Candidate>,
    lets: &LetValues,
    usable: impl Fn(&Expr) -> bool,
) -> Option<Resolved> {
    let mut chosen: Vec<(String, Candidate)> = Vec::new();
    for candidate in candidates {
        let canonical_size = canonical(&candidate.size, lets);
        let size = if usable(&canonical_size) {
            canonical_size
        } else if usable(&candidate.size) {
            candidate.size.clone()
        } else {
            continue;
        };
        let candidate_key = key(&canonical(&size, lets));
        if chosen.iter().any(|(existing, _)| *existing == candidate_key) {
            continue;
        }
        chosen.push((candidate_key, Candidate { size, ..candidate }));
    }
    let mut chosen = chosen.into_iter().map(|(_, candidate)| candidate);
    let first = chosen.next()?;
    let checks = chosen
        .map(|other| SizeCheck {
            left: first.size.clone(),
            right: other.size,
            left_what: first.what.clone(),
            right_what: other.what,
            index_name: index_name.to_string(),
            span: other.span,
        })
        .collect();
    Some(Resolved { size: first.size, checks })
}

/// A size expression with `let`s seen through: `len(b, 0)` for `let b = for i { a[i] }`
/// becomes `len(a, 0)`, and a scalar `let n = len(a, 0)` becomes its value. Values that would
/// need real work to recompute (reductions, reads) are left as the variable.
pub fn canonical(size: &Expr, lets: &LetValues) -> Expr {
    canonical_to_depth(size, lets, 0)
}

/// `array` (a variable, or fields of one: `t.0.1`) with its variable replaced by the `let`
/// value it names when that value is itself such a path; `None` when nothing is replaced.
fn through_path_lets(array: &Expr, lets: &LetValues) -> Option<Expr> {
    match &array.kind {
        ExprKind::Var(var) => lets.get(var).filter(|value| is_path(value)).cloned(),
        ExprKind::Project(node::Project { tuple, field }) => {
            let tuple = through_path_lets(tuple, lets)?;
            let kind = ExprKind::Project(node::Project { tuple: Box::new(tuple), field: *field });
            Some(Expr::new(kind, array.ty.clone(), array.span))
        }
        _ => None,
    }
}

/// The value that `array` (a variable, or fields of one) names through `let`s: `r` of `let (r,
/// s) = (a[i], 1.0)` is `a[i]`, so its length is `len(a, 1)` even though `a[i]` cannot be
/// evaluated where the index over `r` is bound. `None` for a parameter, an index or an
/// accumulator (nothing to see through).
fn value_through_lets(array: &Expr, lets: &LetValues, depth: usize) -> Option<Expr> {
    if depth > 64 {
        return None;
    }
    match &array.kind {
        ExprKind::Var(var) => lets.get(var).cloned(),
        ExprKind::Project(node::Project { tuple, field }) => {
            let tuple = value_through_lets(tuple, lets, depth + 1)?;
            match tuple.kind {
                ExprKind::Tuple(mut items) if *field < items.len() => {
                    let item = items.swap_remove(*field);
                    Some(value_through_lets(&item, lets, depth + 1).unwrap_or(item))
                }
                tuple_kind => {
                    let tuple = Expr::new(tuple_kind, tuple.ty, tuple.span);
                    let kind = ExprKind::Project(node::Project { tuple: Box::new(tuple), field: *field });
                    Some(Expr::new(kind, array.ty.clone(), array.span))
                }
            }
        }
        _ => None,
    }
}

/// A variable, or fields of one.
fn is_path(expr: &Expr) -> bool {
    match &expr.kind {
        ExprKind::Var(_) => true,
        ExprKind::Project(node::Project { tuple, .. }) => is_path(tuple),
        _ => false,
    }
}

fn canonical_to_depth(size: &Expr, lets: &LetValues, depth: usize) -> Expr {
    if depth > 64 {
        return size.clone();
    }
    match &size.kind {
        ExprKind::Len(node::Len { array, axis }) => {
            if let Some(value) = value_through_lets(array, lets, depth) {
                if let Some(sizes) = raw_shape(&value) {
                    if let Some(axis_size) = sizes.into_iter().nth(*axis) {
                        let axis_size = simplify_lengths(axis_size);
                        if !has_opaque_length(&axis_size) {
                            return canonical_to_depth(&axis_size, lets, depth + 1);
                        }
                    }
                }
            }
            // A part of a tuple named by a pattern (`x` of `let (x, v) = t`, bound to `t.0`):
            // the length of that part of the tuple's own name.
            if let Some(path) = through_path_lets(array, lets) {
                let kind = ExprKind::Len(node::Len { array: Box::new(path), axis: *axis });
                return canonical_to_depth(&Expr::new(kind, size.ty.clone(), size.span), lets, depth + 1);
            }
            size.clone()
        }
        ExprKind::Var(var) => match lets.get(var) {
            Some(value) if value.ty.rank() == 0 && is_cheap(value) => canonical_to_depth(value, lets, depth + 1),
            _ => size.clone(),
        },
        _ => {
            let mut rebuilt = size.clone();
            rebuilt.for_each_child_mut(|child| *child = canonical_to_depth(child, lets, depth + 1));
            rebuilt
        }
    }
}

/// The terms of a sum and difference with their signs (`true`: added), into `terms`. Unlike
/// [`crate::ir::shape::linear_sum`] it splits sums of any integer type: index expressions are
/// seen here with their casts to 64 bits removed (`i as usize + 1`).
pub fn signed_terms(expr: &Expr, added: bool, terms: &mut Vec<(Expr, bool)>) {
    match &expr.kind {
        ExprKind::Binary(node::Binary { op: BinaryOp::Add, lhs, rhs }) => {
            signed_terms(lhs, added, terms);
            signed_terms(rhs, added, terms);
        }
        ExprKind::Binary(node::Binary { op: BinaryOp::Sub, lhs, rhs }) => {
            signed_terms(lhs, added, terms);
            signed_terms(rhs, !added, terms);
        }
        _ => terms.push((expr.clone(), added)),
    }
}

/// `left - right` when it is a nonzero constant however the variables are chosen (`len(a, 0)
/// - 1` against `len(a, 0)`): a size check between them can never hold.
pub fn constant_difference(left: &Expr, right: &Expr, lets: &LetValues) -> Option<i64> {
    // The non-literal terms (canonical text, sign), sorted, and the literal total.
    let linear = |size: &Expr| -> Option<(Vec<(String, bool)>, i64)> {
        let size = canonical(size, lets);
        let sum = crate::ir::shape::linear_sum(&size)?;
        let mut symbols: Vec<(String, bool)> =
            sum.terms.iter().map(|(subtracted, term)| (key(term), *subtracted)).collect();
        symbols.sort();
        Some((symbols, sum.constant))
    };
    let (left_symbols, left_constant) = linear(left)?;
    let (right_symbols, right_constant) = linear(right)?;
    let difference = left_constant.checked_sub(right_constant)?;
    (left_symbols == right_symbols && difference != 0).then_some(difference)
}

/// The operand of a cast to a 64-bit integer type (`i as usize`), which keeps the value of an
/// index (never negative, and a length fits `isize`).
pub fn cast_to_64_bits(expr: &Expr) -> Option<&Expr> {
    match &expr.kind {
        ExprKind::Cast(node::Cast {
            operand,
            to: ScalarType::Known(Scalar::I64 | Scalar::Isize | Scalar::U64 | Scalar::Usize),
            ..
        }) => Some(operand),
        _ => None,
    }
}

/// `len` of something other than a variable: would mean evaluating an array just for its size.
fn has_opaque_length(expr: &Expr) -> bool {
    let mut found =
        matches!(&expr.kind, ExprKind::Len(node::Len { array, .. }) if !matches!(array.kind, ExprKind::Var(_)));
    expr.for_each_child(|child| found |= has_opaque_length(child));
    found
}

/// Size arithmetic: literals, variables, lengths, casts, arithmetic and calls as cheap as it
/// (`min`, `max`: a saturated size `min(n, i64::MAX as usize) as i64`) over them.
fn is_cheap(expr: &Expr) -> bool {
    let own = match &expr.kind {
        ExprKind::Call(node::Call { func, .. }) => !func.is_dear(),
        kind => matches!(
            kind,
            ExprKind::Literal(_)
                | ExprKind::Var(_)
                | ExprKind::Len(_)
                | ExprKind::Cast(_)
                | ExprKind::Binary(_)
                | ExprKind::Unary(_)
        ),
    };
    let mut children = true;
    if !matches!(expr.kind, ExprKind::Len(_)) {
        expr.for_each_child(|child| children &= is_cheap(child));
    }
    own && children
}

/// A canonical text for an expression, to compare sizes: equal texts mean equal values.
/// Alpha-equivalence (the IR's one notion of "the same term") is exactly what sizes need.
pub fn key(expr: &Expr) -> String {
    crate::ir::visit::alpha_key(expr)
}

/// Marks reads `a[i + c]` as proven in bounds where the range of `i` keeps them within the
/// axis: equal to it (by construction, or through a size check that dominates the read),
/// shortened by at least `c`, or an enclosing index's range that does (`Prover::below_axis`).
pub fn prove_bounds(program: &mut Program, lets: &LetValues) {
    let mut prover = Prover {
        lets,
        ranges: BTreeMap::new(),
        aliases: BTreeMap::new(),
        equalities: Vec::new(),
        bound_order: BTreeMap::new(),
    };
    prover.walk(&mut program.body);
}

struct Prover<'a> {
    lets: &'a LetValues,
    /// The size of each index variable in scope: its canonical form and that form's key.
    ranges: BTreeMap<VarId, (String, Expr)>,
    /// `let`-bound variables whose value is an index variable plus a literal `c ≥ 0` (fusion
    /// turns a producer's index into such a `let`): the index variable and `c`.
    aliases: BTreeMap<VarId, (VarId, i64)>,
    /// Size equalities established by enclosing checks.
    equalities: Vec<(String, String)>,
    /// The order in which index variables were bound (outer loops first).
    bound_order: BTreeMap<VarId, usize>,
}

/// An integer sum: a coefficient per term (by canonical key, with the term) and a literal.
#[derive(Clone, Default)]
struct Linear {
    terms: BTreeMap<String, (i64, Expr)>,
    literal: i64,
}

impl Linear {
    /// `self + factor * other`, `None` on overflow.
    fn add(&mut self, other: &Linear, factor: i64) -> Option<()> {
        self.literal = self.literal.checked_add(other.literal.checked_mul(factor)?)?;
        for (term_key, (coefficient, term)) in &other.terms {
            let entry = self.terms.entry(term_key.clone()).or_insert((0, term.clone()));
            entry.0 = entry.0.checked_add(coefficient.checked_mul(factor)?)?;
            if entry.0 == 0 {
                self.terms.remove(term_key);
            }
        }
        Some(())
    }
}

impl Prover<'_> {
    fn walk(&mut self, expr: &mut Expr) {
        match &mut expr.kind {
            ExprKind::For(node::For { index, size, body })
            | ExprKind::Filter(node::For { index, size, body })
            | ExprKind::Reduce(node::Reduce { index, size, body, .. }) => {
                self.walk(size);
                let range = canonical(size, self.lets);
                self.bound_order.insert(*index, self.ranges.len());
                self.ranges.insert(*index, (key(&range), range));
                self.walk(body);
            }
            ExprKind::Fold(node::Fold { index, count, acc, init, body })
            | ExprKind::Scan(node::Scan { index, count, acc, init, body }) => {
                self.walk(count);
                self.walk(init);
                let range = canonical(count, self.lets);
                self.bound_order.insert(*index, self.ranges.len());
                self.ranges.insert(*index, (key(&range), range));
                let before = self.equalities.len();
                let accumulator = Expr::new(ExprKind::Var(*acc), init.ty.clone(), init.span);
                self.keeps_shape(accumulator, init);
                self.walk(body);
                self.equalities.truncate(before);
            }
            ExprKind::Let(node::Let { var, value, body }) => {
                self.walk(value);
                if let Some((index, offset)) = self.index_plus_offset(value) {
                    self.aliases.insert(*var, (index, offset));
                }
                self.walk(body);
            }
            ExprKind::Assert(node::Assert { checks, body }) => {
                let before = self.equalities.len();
                for check in checks.iter() {
                    let left = key(&canonical(&check.left, self.lets));
                    let right = key(&canonical(&check.right, self.lets));
                    self.equalities.push((left, right));
                }
                self.walk(body);
                self.equalities.truncate(before);
            }
            ExprKind::Index(node::Index { array, index, bounds }) => {
                self.walk(array);
                self.walk(index);
                let axis = simplify_lengths(crate::ir::shape::length((**array).clone(), 0));
                let axis = key(&canonical(&axis, self.lets));
                if self.is_wrapped(index, &axis) {
                    *bounds = Bounds::Proven;
                    return;
                }
                // `a[i + c]` (c ≥ 0, often 0) with `i` in `0..n - d`: in bounds when `n` is
                // the axis's length and d ≥ c. A negative size never gets this far: it panics
                // before its loop runs.
                let proven = match self.index_plus_offset(index) {
                    Some((var, offset)) => self.below_axis(var, offset, &axis, 0),
                    None => false,
                };
                if proven || self.within_by_ranges(index, &axis) {
                    *bounds = Bounds::Proven;
                }
            }
            _ => expr.for_each_child_mut(|child| self.walk(child)),
        }
    }

    /// Adds the equalities that hold in a fold's or scan's body: every step's value has the
    /// initial value's shape (the IR's invariant on [`ExprKind::Fold`], checked at the head of
    /// the body where not equal by construction), so each length of the accumulator, or of an
    /// array part of it (`accumulator` is the accumulator or such a part), is the initial
    /// value's: `v[j]` in `fold t, v = v0 { for i { sum j { a[i, j] * v[j] } } }` is in bounds
    /// under the check `len(a, 1) == len(v0, 0)`.
    fn keeps_shape(&mut self, accumulator: Expr, init: &Expr) {
        match &init.ty {
            Type::Array { .. } => {
                let Some(shape) = raw_shape(init) else { return };
                for (axis, size) in shape.into_iter().enumerate() {
                    let length = simplify_lengths(crate::ir::shape::length(accumulator.clone(), axis));
                    let left = key(&canonical(&length, self.lets));
                    let right = key(&canonical(&simplify_lengths(size), self.lets));
                    self.equalities.push((left, right));
                }
            }
            Type::Tuple { fields, .. } => {
                for (field, ty) in fields.iter().enumerate().filter(|(_, ty)| ty.has_array()) {
                    let part = |tuple: &Expr| crate::ir::shape::project(tuple, field, ty);
                    self.keeps_shape(part(&accumulator), &part(init));
                }
            }
            _ => {}
        }
    }

    /// Whether `var + offset` is below the axis of key `axis` for every value of the index
    /// `var` (at least 0, so `offset ≥ 0` keeps the read at or above 0): its range is the axis
    /// (`offset ≤ 0`), the axis shortened by at least `offset` (`0..n - d`, `d ≥ offset`), or
    /// an enclosing index plus `c` (`j` in `0..i + c`: `j + offset ≤ i + c - 1 + offset`,
    /// which must then hold of `i`, a triangle's reads `m[j]` under `i` in `0..len(m)`).
    fn below_axis(&self, var: VarId, offset: i64, axis: &str, depth: usize) -> bool {
        let Some((range_key, range)) = self.ranges.get(&var) else { return false };
        if offset <= 0 && self.equal(range_key, axis) {
            return true;
        }
        // `if c { n } else { 0 }` (a transposed copy's moved axis, `passes::transpose`): at
        // most `n`, or no iterations.
        if let ExprKind::Select(node::Select { then, otherwise, .. }) = &range.kind {
            if offset <= 0
                && matches!(otherwise.kind, ExprKind::Literal(Literal::Int(0)))
                && self.equal(&key(then), axis)
            {
                return true;
            }
        }
        if let ExprKind::Binary(node::Binary { op: BinaryOp::Sub, lhs, rhs }) = &range.kind {
            if let ExprKind::Literal(Literal::Int(shortened_by)) = rhs.kind {
                if shortened_by >= offset && self.equal(&key(lhs), axis) {
                    return true;
                }
            }
        }
        // Ranges are bound outside in, so the chain ends; the depth only bounds the work.
        match var_plus_offset(range) {
            Some((outer, c)) if depth < 8 && self.ranges.contains_key(&outer) => {
                let Some(outer_offset) = offset.checked_add(c).and_then(|sum| sum.checked_sub(1)) else { return false };
                self.below_axis(outer, outer_offset, axis, depth + 1)
            }
            _ => false,
        }
    }

    /// Whether `position`, a sum of index variables, lengths and other terms, lies in `0..n`
    /// for the axis of key `axis` (length `n`) wherever it is read, by the ranges of the
    /// indices alone: each index `v` in `0..r` is at least 0 and at most `r - 1`, so replacing
    /// it by its largest value (innermost first; its range may mention outer indices) bounds
    /// the sum from above where it is added and from below where it is subtracted, until what
    /// is left is `n - c` (c ≥ 1) above and at least 0 below, other indices and lengths
    /// dropped on the side they only move away from. `t + l` with `t` in `0..n - l` is at most
    /// `n - 1`; `n - 1 - t` with `t` in `0..n` at least 0. A range that is negative panics
    /// before its loop runs, and a loop over `0..r` runs only when `r ≥ 1`.
    fn within_by_ranges(&self, position: &Expr, axis: &str) -> bool {
        let position = cast_to_64_bits(position).filter(|operand| operand.ty == Type::I64).unwrap_or(position);
        if position.ty != Type::I64 {
            return false;
        }
        let Some(sum) = self.linear(position) else { return false };
        let below = self.bounded(sum.clone(), true).is_some_and(|upper| {
            let mut axis_coefficient = 0;
            let rest_only_lowers = upper.terms.iter().all(|(term_key, (coefficient, term))| {
                if self.equal(term_key, axis) {
                    axis_coefficient += coefficient;
                    true
                } else {
                    *coefficient < 0 && self.never_negative(term)
                }
            });
            rest_only_lowers && axis_coefficient == 1 && upper.literal <= -1
        });
        below
            && self.bounded(sum, false).is_some_and(|lower| {
                lower.literal >= 0
                    && lower.terms.values().all(|(coefficient, term)| *coefficient > 0 && self.never_negative(term))
            })
    }

    /// `sum` with each index variable added (`upper`) or subtracted (not `upper`) replaced by
    /// its largest value, innermost first, at most eight times.
    fn bounded(&self, mut sum: Linear, upper: bool) -> Option<Linear> {
        for _ in 0..8 {
            let innermost = sum
                .terms
                .iter()
                .filter_map(|(term_key, (coefficient, term))| match term.kind {
                    ExprKind::Var(var) if (*coefficient > 0) == upper && self.ranges.contains_key(&var) => {
                        Some((self.bound_order.get(&var).copied().unwrap_or(0), term_key.clone(), *coefficient, var))
                    }
                    _ => None,
                })
                .max_by_key(|(order, ..)| *order);
            let Some((_, term_key, coefficient, var)) = innermost else { return Some(sum) };
            let mut largest = self.linear(&self.ranges[&var].1)?;
            largest.literal = largest.literal.checked_sub(1)?;
            sum.terms.remove(&term_key);
            sum.add(&largest, coefficient)?;
        }
        None
    }

    /// Whether a term is never negative: an index variable or an array's length.
    fn never_negative(&self, term: &Expr) -> bool {
        match term.kind {
            ExprKind::Var(var) => self.ranges.contains_key(&var),
            ExprKind::Len(_) => true,
            _ => false,
        }
    }

    /// `expr` (canonical) as a [`Linear`] sum; aliases of indices (`let k = i + 1`) are seen
    /// through.
    fn linear(&self, expr: &Expr) -> Option<Linear> {
        let mut terms = Vec::new();
        signed_terms(&canonical(expr, self.lets), true, &mut terms);
        let mut sum = Linear::default();
        for (term, added) in terms {
            let sign = if added { 1 } else { -1 };
            match term.kind {
                ExprKind::Literal(Literal::Int(value)) => {
                    sum.literal = sum.literal.checked_add(value.checked_mul(sign)?)?
                }
                ExprKind::Var(var) if self.aliases.contains_key(&var) => {
                    let (index, offset) = self.aliases[&var];
                    let span = term.span;
                    let index = Expr::new(ExprKind::Var(index), Type::I64, span);
                    let alias = Linear { terms: BTreeMap::from([(key(&index), (1, index))]), literal: offset };
                    sum.add(&alias, sign)?;
                }
                _ => {
                    let one = Linear { terms: BTreeMap::from([(key(&term), (1, term))]), literal: 0 };
                    sum.add(&one, sign)?;
                }
            }
        }
        Some(sum)
    }

    /// `i + c` (see [`var_plus_offset`]) with `i` an index variable, seen through aliases and
    /// a cast to a 64-bit integer (`(i + 1) as usize`: an `i64` that is never negative here,
    /// so the cast keeps its value).
    fn index_plus_offset(&self, expr: &Expr) -> Option<(VarId, i64)> {
        let expr = cast_to_64_bits(expr).filter(|operand| operand.ty == Type::I64).unwrap_or(expr);
        let (var, offset) = var_plus_offset(expr)?;
        match self.aliases.get(&var) {
            Some(&(index, alias_offset)) => Some((index, alias_offset.checked_add(offset)?)),
            None => Some((var, offset)),
        }
    }

    /// Whether `index` is `e % n` (through `let`s) with `n` the axis's length and `e` never
    /// negative: the wrap-around read of a torus, `g[(i + h - 1) % h]`. Then it lies in
    /// `0..n`: Rust's `%` of a non-negative dividend by a positive divisor; a zero divisor
    /// panics before the read. `e` is an integer sum of indices (each at least 0, below its
    /// range, which is at most `isize::MAX`), lengths and literals, so it wraps only for an
    /// index beyond 2^62, which a loop reaches only after 2^62 steps.
    fn is_wrapped(&self, index: &Expr, axis: &str) -> bool {
        let index = canonical(index, self.lets);
        let ExprKind::Binary(node::Binary { op: BinaryOp::Rem, lhs, rhs }) = &index.kind else { return false };
        let divisor = key(rhs);
        index.ty == Type::I64
            && self.equal(&divisor, axis)
            && self.lower_bound(lhs, &divisor).is_some_and(|bound| bound >= 0)
    }

    /// A lower bound on the integer `expr` (canonical) wherever it is evaluated as the dividend
    /// of `% divisor`, where the divisor is at least 1: indices are at least 0, lengths at
    /// least 0, and a size equal to the divisor at least 1.
    fn lower_bound(&self, expr: &Expr, divisor: &str) -> Option<i64> {
        if self.equal(&key(expr), divisor) {
            return Some(1);
        }
        match &expr.kind {
            ExprKind::Literal(Literal::Int(value)) => Some(*value),
            ExprKind::Var(var) if self.ranges.contains_key(var) => Some(0),
            ExprKind::Len(_) => Some(0),
            ExprKind::Binary(node::Binary { op: BinaryOp::Add, lhs, rhs }) => {
                self.lower_bound(lhs, divisor)?.checked_add(self.lower_bound(rhs, divisor)?)
            }
            ExprKind::Binary(node::Binary { op: BinaryOp::Sub, lhs, rhs }) => match rhs.kind {
                ExprKind::Literal(Literal::Int(value)) => self.lower_bound(lhs, divisor)?.checked_sub(value),
                _ => None,
            },
            _ => None,
        }
    }

    /// Whether two size keys are equal under the checks in force (transitively).
    fn equal(&self, left: &str, right: &str) -> bool {
        let mut reached = vec![left.to_string()];
        let mut changed = true;
        while changed {
            changed = false;
            for (a, b) in &self.equalities {
                for (from, to) in [(a, b), (b, a)] {
                    if reached.contains(from) && !reached.contains(to) {
                        reached.push(to.clone());
                        changed = true;
                    }
                }
            }
        }
        reached.iter().any(|key| key == right)
    }
}

/// `i` or `i + c` / `c + i` with a literal `c ≥ 0`: the index variable and `c`.
fn var_plus_offset(index: &Expr) -> Option<(VarId, i64)> {
    crate::ir::shape::var_plus_literal(index).filter(|(_, offset)| *offset >= 0)
}

#[cfg(test)]
mod tests;
