//! Stage 5, analysis: every fact code generation needs about the final IR, computed once per
//! program after the passes and looked up by node ([`NodeId`]) or by binder ([`VarId`], unique
//! per program): what may fail, what contains loops, which reads are shifted copies of a loop
//! index (and so need no clamp inside the loop's interior), which comprehensions are written
//! tile by tile, the work of a row (for the runtime's grain), which folds stop at a fixed
//! point, which folds may build their next accumulator in the previous one's memory, which
//! scans have an associative step (and may run in parallel), and the shapes of array-typed
//! comprehension bodies. Codegen asks; it does not re-derive.
//!
//! Each fact has one definition, here: the per-node tables are caches of it, filled in one
//! bottom-up walk (a node outside the tables, which codegen never makes, is computed directly).

mod fixed_point;
mod work;

pub use fixed_point::FixedPoint;
pub use work::{Work, UNKNOWN_SIZE};

use crate::ir::node;
use crate::ir::scan::AssociativeStep;
use crate::ir::visit::{self, bound_vars, free_vars, walk, Scope};
use crate::ir::{
    number_nodes, Bounds, Expr, ExprKind, Literal, NodeId, NumberClass, Program, ReduceOp, Scalar, ScalarType, Type,
    VarId,
};
use crate::passes::purity;
use std::collections::{BTreeMap, BTreeSet};

/// The most IR nodes an accum's updates may have to be written four iterations at a time
/// (see [`Analysis::accum_in_copies`]): a few updates with their index arithmetic.
pub const ACCUM_COPIES_MAX_NODES: usize = 96;

/// The analysis of one numbered program.
pub struct Analysis<'p> {
    program: &'p Program,
    /// Per node, by id: the program's nodes, then those of [`Analysis::body_shapes`].
    nodes: Vec<Facts>,
    /// Per comprehension index: the clamped reads in its body that its interior keeps in range.
    interior_reads: BTreeMap<VarId, Vec<Interior<'p>>>,
    /// Per comprehension index: the remainders in its body that wrap at most once around it.
    interior_wraps: BTreeMap<VarId, Vec<Wrap<'p>>>,
    /// Per comprehension index: the comparisons in its body true in its interior.
    interior_guards: BTreeMap<VarId, Vec<Guard<'p>>>,
    /// Per reduction index: the reduction's size.
    reduction_sizes: BTreeMap<VarId, &'p Expr>,
    /// Per comprehension or reduction index: its size (the index is in `0..size`).
    index_sizes: BTreeMap<VarId, &'p Expr>,
    /// The outer indices of two-axis comprehensions written tile by tile.
    tiled: BTreeSet<VarId>,
    /// Per comprehension's outer index: the work of one of its rows.
    row_work: BTreeMap<VarId, Work<'p>>,
    /// Per fold index: the fold's early exit.
    fixed_points: BTreeMap<VarId, FixedPoint<'p>>,
    /// Per reduction index: the work of one step, when steps may be computed in parallel.
    step_work: BTreeMap<VarId, Work<'p>>,
    /// Per fold index: the comprehensions that build each next accumulator's arrays, with the
    /// field path of the array each builds, when they may build it in the memory of the same
    /// array of the accumulator before ([`Analysis::reused_accumulator`]).
    reused_accumulators: BTreeMap<VarId, Vec<(Vec<usize>, NodeId)>>,
    /// The array `if`s that build only the side they choose ([`Analysis::lazy_select`]).
    lazy_selects: BTreeSet<NodeId>,
    /// Per scan index: the scan's associative step, when it has one (note [scan grouping] in
    /// `ir/scan.rs`).
    scan_steps: BTreeMap<VarId, ScanStep<'p>>,
    /// Per comprehension's outer index, for array-typed bodies: the body's axis sizes, valid
    /// before the comprehension's loops (numbered after the program's nodes).
    body_shapes: BTreeMap<VarId, Vec<Expr>>,
    /// Per variable: whether generated code reads it (see [`Analysis::is_read`]).
    reads: Vec<bool>,
    /// The copies of arrays with one axis moved last (`passes::transpose`), by array and axis.
    transposed_copies: BTreeMap<(VarId, usize), VarId>,
    /// Per variable: the variables in scope where it is bound, outermost first.
    enclosing: Vec<Vec<VarId>>,
    /// The first variable the body uses or binds that the program does not declare (an IR
    /// bug, which codegen reports).
    undeclared: Option<(VarId, proc_macro2::Span)>,
}

/// The facts of one node (and the subtree under it).
#[derive(Clone, Copy, Debug, Default)]
struct Facts {
    /// Evaluating the subtree can raise a run-time error ([`purity::fails_here`] somewhere).
    may_fail: bool,
    /// The subtree contains a loop (a comprehension, reduction, fold or contraction).
    has_loop: bool,
    /// The node is `v`, `v + c`, `c + v` or `v - c` of type `i64`, for a literal `c` of modest
    /// size: `(v, c)` (`-c` for a difference).
    shift: Option<(VarId, i64)>,
}

/// A clamped read that cannot leave its array in the interior of an innermost loop:
/// `array[.., index + shift, ..]`, the shifted index at `axis`, or a window read
/// `array[.., index ± w + shift, ..]` where `w` is the index of a reduction inside the loop
/// whose size ([`Analysis::window_size`]) can be computed before the loop. The shift is a
/// literal plus terms computable before the loop (`x[i + k - r]`, `r = w.len() / 2`), in any
/// grouping.
#[derive(Clone, Debug)]
pub struct Interior<'p> {
    pub index: VarId,
    pub array: VarId,
    pub axis: usize,
    pub shift: Shift<'p>,
    /// The window's index and whether it is subtracted (`x[i - k]`, a trailing window).
    pub window: Window,
}

/// Terms of a sum, each with whether it is subtracted.
pub type SignedTerms<'e> = Vec<(bool, &'e Expr)>;

/// A window's index and whether it is subtracted, if a read has a window.
pub type Window = Option<(VarId, bool)>;

/// The part of a read's position that does not move with the loop: a literal and terms that
/// mention no variable bound in the loop, each added or subtracted.
#[derive(Clone, Debug)]
pub struct Shift<'p> {
    pub literal: i64,
    pub terms: SignedTerms<'p>,
}

impl Shift<'_> {
    /// Equal up to the order of the terms.
    fn same_as(&self, other: &Shift<'_>) -> bool {
        let keys = |shift: &Shift<'_>| {
            let mut keys: Vec<(bool, String)> =
                shift.terms.iter().map(|(negated, term)| (*negated, crate::ir::visit::alpha_key(term))).collect();
            keys.sort();
            keys
        };
        self.literal == other.literal && keys(self) == keys(other)
    }
}

impl Interior<'_> {
    fn same_as(&self, other: &Interior<'_>) -> bool {
        (self.index, self.array, self.axis, self.window) == (other.index, other.array, other.axis, other.window)
            && self.shift.same_as(&other.shift)
    }
}

/// A remainder `(index + c) % modulus` that wraps at most once ([`Analysis::wrap`]). Where
/// `0 <= index + shift < modulus` (a loop's interior, like a clamped read shifted by `shift`)
/// it is `index + c`, less `modulus` when `subtracts`: no compare.
#[derive(Clone, Copy, Debug)]
pub struct Wrap<'e> {
    pub index: VarId,
    pub modulus: &'e Expr,
    pub shift: i64,
    pub subtracts: bool,
    /// Whether the index's loop runs over `0..modulus`, so that `index + c < 2 * modulus`
    /// everywhere in it (outside the interior too).
    pub within_one_turn: bool,
}

impl Wrap<'_> {
    /// Whether `other` needs the same interior: equal shift and the same modulus up to the
    /// names of bound variables (one interior serves both).
    pub fn same_interior(&self, other: &Wrap<'_>) -> bool {
        self.shift == other.shift
            && crate::ir::visit::alpha_key(self.modulus) == crate::ir::visit::alpha_key(other.modulus)
    }
}

/// A comparison of a loop's shifted index that holds wherever `0 <= index + shift < bound`
/// ([`Analysis::guard`]): in the loop's interior, like a clamped read shifted by `shift` along
/// an axis of length `bound` (no bound: the lower side alone), it is `true` and needs no
/// compare. Derivatives of clamped stencils are full of them (`if j - 1 >= 0 && j - 1 < n`).
#[derive(Clone, Copy, Debug)]
pub struct Guard<'e> {
    pub comparison: NodeId,
    pub index: VarId,
    pub bound: Option<&'e Expr>,
    pub shift: i64,
}

/// A loop body computed for several consecutive iterations side by side (see
/// [`Analysis::jam`]): `levels`, outermost first, are the nested reductions from `root`,
/// `leaf` their innermost term. A step of each reduction is taken for every element before the next, a
/// vector across the comprehension's index; each reduction grouped as `fold_range` groups it
/// (a plain fold below the runtime's `PLAIN_BELOW`; an `argmax`/`argmin`, which compares in
/// order, plain at any length), that gives the same bits as one element at a time.
pub struct Jam<'e> {
    /// The outermost reduction of the nest (the body itself, or inside its epilogue).
    pub root: &'e Expr,
    pub levels: Vec<&'e node::Reduce>,
    pub leaf: &'e Expr,
    /// Whether the body outside the nest reads the loop's index.
    pub epilogue_reads_index: bool,
    /// The leaf's reads across the loop's index ([`AcrossRead`]), by node: side by side they
    /// read the copy of their array with that axis last (`passes::transpose`), whose axis
    /// lengths are the array's in that order; one at a time, the array itself.
    pub transposed: BTreeMap<NodeId, (VarId, usize)>,
}

/// A fold computed for several consecutive elements of a comprehension side by side (see
/// [`Analysis::jammed_fold`]): `root` is the fold's node in the element, `fold` the fold.
pub struct JammedFold<'e> {
    pub root: &'e Expr,
    pub fold: &'e node::Fold,
    /// Whether the element outside the fold reads the comprehension's index.
    pub epilogue_reads_index: bool,
    /// The `let`s before the fold in the element, in order (loop-free, and nothing outside
    /// the fold can fail): computed for each element with its initial value.
    pub prologue: Vec<(VarId, &'e Expr)>,
    /// Those of them the fold reads (numbers: `let c = { re: cre[x], im: cim[y] }`), kept
    /// for each element beside its state.
    pub stored: BTreeSet<VarId>,
}

/// The `let`s on the way from `expr` down to the node `root` (evaluated before it, in order),
/// into `lets`: through `let` bodies, the values of `let`s that hold `root`, and projections
/// (`{ let v = c[i]; fold … }.1`, a read the hoisting pass moved out of the fold).
fn prologue_lets<'e>(expr: &'e Expr, root: NodeId, lets: &mut Vec<(VarId, &'e Expr)>) {
    match &expr.kind {
        ExprKind::Let(node::Let { value, .. }) if contains_node(value, root) => prologue_lets(value, root, lets),
        ExprKind::Let(node::Let { var, value, body }) => {
            lets.push((*var, value));
            prologue_lets(body, root, lets);
        }
        ExprKind::Project(node::Project { tuple, .. }) => prologue_lets(tuple, root, lets),
        _ => {}
    }
}

/// The key of a call of a transcendental function with its arguments, `sin` and `cos` of one
/// argument one key: once inlined they share their reduction and polynomials.
fn transcendental_key(expr: &Expr) -> Option<String> {
    let ExprKind::Call(node::Call { func, args }) = &expr.kind else { return None };
    if func.cost() != crate::ops::Cost::Transcendental {
        return None;
    }
    let family = match func {
        crate::ops::Func::Sin | crate::ops::Func::Cos => "sincos",
        other => other.name(),
    };
    let arguments: Vec<String> = args.iter().map(visit::alpha_key).collect();
    Some(format!("{family}({})", arguments.join(", ")))
}

/// Whether `expr` holds the node `id`.
fn contains_node(expr: &Expr, id: NodeId) -> bool {
    let mut found = expr.id == id;
    expr.for_each_child(|child| found = found || contains_node(child, id));
    found
}

/// Whether `expr`, outside the subtree `skip`, mentions `var`.
fn mentions_outside(expr: &Expr, skip: &Expr, var: VarId) -> bool {
    if expr.id == skip.id {
        return false;
    }
    if matches!(expr.kind, ExprKind::Var(found) if found == var) {
        return true;
    }
    let mut found = false;
    expr.for_each_child(|child| found |= mentions_outside(child, skip, var));
    found
}

/// A read `b[e_0, …, e_{r-1}]` of every axis of an array variable `b` of rank `r` at least 2,
/// all proven in bounds, where exactly one axis `axis`, not the last, is read at the plain
/// index variable `index` and no other index mentions it: across `index`, a gather; in a copy of `b` with `axis`
/// moved last, a read along it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AcrossRead {
    /// The read (the outermost `Index` node of its chain).
    pub read: NodeId,
    pub array: VarId,
    pub axis: usize,
}

/// `read` as an [`AcrossRead`] of `index`, if it is one.
fn across_read(read: &Expr, index: VarId) -> Option<AcrossRead> {
    let (base, positions) = read.read_chain();
    // Proven indices stay proven in the copy, whose axis lengths are the array's.
    if positions.iter().any(|&(_, bounds)| bounds != Bounds::Proven) {
        return None;
    }
    let positions: Vec<&Expr> = positions.into_iter().map(|(position, _)| position).collect();
    let ExprKind::Var(array) = base.kind else { return None };
    let rank = base.ty.rank();
    if rank < 2 || positions.len() != rank {
        return None;
    }
    let at_index: Vec<usize> =
        (0..rank).filter(|&axis| matches!(positions[axis].kind, ExprKind::Var(var) if var == index)).collect();
    let mentioning = positions.iter().filter(|position| visit::mentions(position, index)).count();
    match at_index[..] {
        [axis] if axis + 1 < rank && mentioning == 1 => Some(AcrossRead { read: read.id, array, axis }),
        _ => None,
    }
}

/// The one loop in `expr`, if it has exactly one and that is a reduction (whatever its body).
fn only_loop(expr: &Expr) -> Option<&Expr> {
    only_loop_of_any_kind(expr).filter(|only| matches!(only.kind, ExprKind::Reduce(_)))
}

/// The one loop in `expr` (whatever its body), if it has exactly one.
fn only_loop_of_any_kind(expr: &Expr) -> Option<&Expr> {
    fn find<'e>(expr: &'e Expr, found: &mut Vec<&'e Expr>) {
        if purity::is_loop(expr) {
            found.push(expr);
        } else {
            expr.for_each_child(|child| find(child, found));
        }
    }
    let mut found = Vec::new();
    find(expr, &mut found);
    match found.as_slice() {
        [only] => Some(*only),
        _ => None,
    }
}

/// A scan whose step is associative: computed in blocks (note [scan grouping]).
#[derive(Clone, Debug)]
pub struct ScanStep<'p> {
    pub step: AssociativeStep<'p>,
    /// Nothing in the step's value (`f(t)` and its `let`s) can fail, so its blocks may run in
    /// parallel, each step's value computed twice and out of order.
    pub parallel: bool,
}

/// Numbers `program`'s nodes (see [`number_nodes`]): the analysis keys its facts by them.
pub fn prepare(program: &mut Program) {
    number_nodes(program);
}

impl<'p> Analysis<'p> {
    /// Analyses a program numbered by [`prepare`].
    pub fn of(program: &'p Program) -> Analysis<'p> {
        let mut analysis = Analysis {
            program,
            nodes: Vec::new(),
            interior_reads: BTreeMap::new(),
            interior_wraps: BTreeMap::new(),
            interior_guards: BTreeMap::new(),
            reduction_sizes: BTreeMap::new(),
            index_sizes: BTreeMap::new(),
            tiled: BTreeSet::new(),
            row_work: BTreeMap::new(),
            fixed_points: BTreeMap::new(),
            step_work: BTreeMap::new(),
            reused_accumulators: BTreeMap::new(),
            lazy_selects: purity::infallible_array_selects(&program.body),
            scan_steps: BTreeMap::new(),
            body_shapes: BTreeMap::new(),
            reads: vec![false; program.vars.len()],
            transposed_copies: BTreeMap::new(),
            enclosing: vec![Vec::new(); program.vars.len()],
            undeclared: None,
        };
        analysis.record_reduction_sizes(&program.body);
        analysis.record_facts(&program.body);
        analysis.record_shapes(&program.body);
        analysis.record_structure(&program.body, false);
        analysis.record_scopes();
        analysis
    }

    /// Whether generated code reads `var`: a use in the program, or in the shape of an
    /// array-typed comprehension body (evaluated before the loops).
    pub fn is_read(&self, var: VarId) -> bool {
        self.reads.get(var.0 as usize).copied().unwrap_or(false)
    }

    /// The variables in scope where `var` is bound, outermost first.
    pub fn enclosing(&self, var: VarId) -> &[VarId] {
        self.enclosing.get(var.0 as usize).map_or(&[], Vec::as_slice)
    }

    /// A variable the body uses or binds but the program does not declare, with where.
    pub fn undeclared(&self) -> Option<(VarId, proc_macro2::Span)> {
        self.undeclared
    }

    /// Whether a filter whose body (the pair of condition and element) is `body` may run in
    /// parallel chunks, each step evaluated twice and out of order: when nothing in it can
    /// fail (otherwise one serial pass, so the first failure in index order is the one seen).
    pub fn filter_in_parallel(&self, body: &Expr) -> bool {
        !self.may_fail(body)
    }

    /// Whether an accum whose updates are `updates` should, when it has one group, be run in
    /// parallel partitioned by ranges of its target (see `ein-runtime/src/accum.rs`) rather than
    /// serially: when making an update costs more than recording and replaying it (16 bytes
    /// written and read): a transcendental function, a Rust function or a reduction in it.
    /// Measured (2 threads, 2^22 updates into 2^22 bins): `y[k[i]] += v[i]` 59 ms partitioned
    /// against 39 ms serial; `y[k[i]] += exp(sin(v[i]) * 0.5)` 111 ms against 297 ms.
    pub fn accum_partitioned(&self, updates: &Expr) -> bool {
        let mut costly = false;
        walk(updates, &mut |expr: &Expr, _: &Scope| {
            costly |= match &expr.kind {
                ExprKind::Call(node::Call { func, .. }) => func.cost() == crate::ops::Cost::Transcendental,
                ExprKind::Extern(_) | ExprKind::Reduce(_) => true,
                _ => false,
            };
            !costly
        });
        costly
    }

    /// Whether an accum's updates are cheap enough to be written four iterations of their
    /// innermost loop at a time, each into its own copy of the target (the runtime's
    /// `in_copies`, whose module documents why): below the nest of loops, `let`s and checks,
    /// no loop and no call of a transcendental or Rust function, and at most
    /// [`ACCUM_COPIES_MAX_NODES`] nodes in all, since the innermost loop's body is inlined five
    /// times.
    pub fn accum_in_copies(&self, updates: &Expr) -> bool {
        fn cheap(expr: &Expr) -> bool {
            let mut cheap = !purity::has_loop(expr);
            walk(expr, &mut |inner: &Expr, _: &Scope| {
                cheap &= match &inner.kind {
                    ExprKind::Call(node::Call { func, .. }) => func.cost() != crate::ops::Cost::Transcendental,
                    ExprKind::Extern(_) => false,
                    _ => true,
                };
                cheap
            });
            cheap
        }
        fn nest_is_cheap(expr: &Expr) -> bool {
            match &expr.kind {
                ExprKind::Let(node::Let { value, body, .. }) => cheap(value) && nest_is_cheap(body),
                ExprKind::Assert(node::Assert { body, .. }) => nest_is_cheap(body),
                ExprKind::For(node::For { size, body, .. }) => cheap(size) && nest_is_cheap(body),
                _ => cheap(expr),
            }
        }
        let mut nodes = 0usize;
        walk(updates, &mut |_: &Expr, _: &Scope| {
            nodes += 1;
            true
        });
        nodes <= ACCUM_COPIES_MAX_NODES && nest_is_cheap(updates)
    }

    /// Whether a reduction's step is costly enough to be computed a block at a time into a
    /// buffer (`Accumulate::fold_range_buffered`, which documents why): two or more calls of
    /// transcendental or Rust functions, which LLVM would not inline at the two places the
    /// plain fold calls the step. `sin` and `cos` of one argument count once: their shared
    /// reduction and polynomials are one computation once inlined (MRI-Q's step, 1.5x slower
    /// buffered). Measured (f64, one thread, AVX-512): `ln(1 / (1 + exp(-z)))` 20 → 3.8 ns
    /// per step; a product of two reads 0.07 → 0.13 ns in cache, so not for those.
    pub fn costly_step(&self, body: &Expr) -> bool {
        let (mut calls, mut rust_calls) = (BTreeSet::new(), 0);
        walk(body, &mut |expr: &Expr, _: &Scope| {
            match &expr.kind {
                ExprKind::Extern(_) => rust_calls += 1,
                _ => calls.extend(transcendental_key(expr)),
            }
            true
        });
        calls.len() + rust_calls >= 2
    }

    /// The comprehensions that build the arrays of scalars of a fold body's value (of type
    /// `ty`, at field `path` of the accumulator), each exactly once per step if at all: its
    /// tail under `let`s, through the initial array an accum moves (accums chained like a
    /// gradient's), through both sides of an `if` built lazily (only one runs), and through
    /// the fields of a tuple.
    fn accumulator_builders(
        &self,
        body: &Expr,
        ty: &Type,
        path: &mut Vec<usize>,
        builders: &mut Vec<(Vec<usize>, NodeId)>,
    ) {
        let tail = tail_of(body);
        match (&tail.kind, ty) {
            (ExprKind::For(_), Type::Array { elem, .. }) if matches!(**elem, Type::Scalar(_)) => {
                builders.push((path.clone(), tail.id))
            }
            (ExprKind::Accum(accum @ node::Accum { value: node::AccumValue::Final, .. }), _) => {
                self.accumulator_builders(&accum.init, ty, path, builders)
            }
            (ExprKind::Select(node::Select { then, otherwise, .. }), _) if self.lazy_select(tail) => {
                self.accumulator_builders(then, ty, path, builders);
                self.accumulator_builders(otherwise, ty, path, builders);
            }
            (ExprKind::Tuple(items), Type::Tuple { fields, .. }) => {
                for (position, (item, field)) in items.iter().zip(fields).enumerate() {
                    path.push(position);
                    self.accumulator_builders(item, field, path, builders);
                    path.pop();
                }
            }
            _ => {}
        }
    }

    /// Whether an `if` whose sides hold arrays may build only the side its condition chooses:
    /// when neither can fail where it is evaluated, skipping one is unobservable (the semantics
    /// evaluates both; `purity::infallible_array_selects`). A fold whose body is such an `if`
    /// may build either side in the memory of the accumulator before
    /// ([`Analysis::reused_accumulator`]).
    pub fn lazy_select(&self, select: &Expr) -> bool {
        self.lazy_selects.contains(&select.id)
    }

    /// Whether evaluating `expr` can raise a run-time error.
    pub fn may_fail(&self, expr: &Expr) -> bool {
        self.facts(expr).may_fail
    }

    /// Whether `expr` may be evaluated out of order, or not at all, without any observable
    /// difference: it cannot fail and runs no loop. Only such a body is tiled (the order
    /// decides which error a failing program reports first), and only such a size is computed
    /// early for a work estimate.
    pub fn can_reorder(&self, expr: &Expr) -> bool {
        let facts = self.facts(expr);
        !facts.may_fail && !facts.has_loop
    }

    /// The size of the reduction over `window`, for a window read's [`Interior`].
    pub fn window_size(&self, window: VarId) -> Option<&'p Expr> {
        self.reduction_sizes.get(&window).copied()
    }

    /// Whether `position` is the index of the read `read` (its index, window and shift, in
    /// any grouping).
    pub fn is_position_of(&self, read: &Interior<'_>, position: &Expr) -> bool {
        split_position(position, read.index).is_some_and(|(rest, literal)| {
            let (window, terms) = take_window(rest, |var| Some(var) == read.window.map(|(window, _)| window));
            window == read.window && read.shift.same_as(&Shift { literal, terms })
        })
    }

    /// The clamped reads in the body of the comprehension or reduction over `index` that stay
    /// in range in the loop's interior (each once).
    pub fn interior_reads(&self, index: VarId) -> &[Interior<'p>] {
        self.interior_reads.get(&index).map_or(&[], Vec::as_slice)
    }

    /// The comparisons in the body of the comprehension over `index` that hold in its
    /// interior ([`Guard`]).
    pub fn interior_guards(&self, index: VarId) -> &[Guard<'p>] {
        self.interior_guards.get(&index).map_or(&[], Vec::as_slice)
    }

    /// The remainders in the body of the comprehension over `index` that wrap at most once
    /// around it (each modulus and shift once): in the loop's interior they need no compare.
    pub fn interior_wraps(&self, index: VarId) -> &[Wrap<'p>] {
        self.interior_wraps.get(&index).map_or(&[], Vec::as_slice)
    }

    /// Whether the two- or three-axis comprehension whose outer index is `outer` is written
    /// tile by tile: its scalar body reads across the rows of its last two axes (a transposed
    /// read) and may be evaluated in any order.
    pub fn is_tiled(&self, outer: VarId) -> bool {
        self.tiled.contains(&outer)
    }

    /// The work of one row of the comprehension whose outer index is `outer`.
    pub fn row_work(&self, outer: VarId) -> Option<&Work<'p>> {
        self.row_work.get(&outer)
    }

    /// The work of one step of the reduction over `index`, when its steps may be computed in
    /// any order and each runs loops: its body is a nest of reductions of scalars (no array is
    /// built) that cannot fail. A reduction to a final scalar computes the values of such
    /// steps in parallel, then folds them in order (the same bits): `sum i, j` over a 4096²
    /// matrix is one chunk of 4096 heavy steps.
    pub fn step_work(&self, index: VarId) -> Option<&Work<'p>> {
        self.step_work.get(&index)
    }

    /// The early exit of the fold over `index`, if it has one.
    pub fn fixed_point(&self, index: VarId) -> Option<&FixedPoint<'p>> {
        self.fixed_points.get(&index)
    }

    /// The comprehensions that build the arrays of each next accumulator of the fold (or scan)
    /// over `index`, each with the field path of its array in the accumulator (empty for an array
    /// accumulator), when they may build it in the memory of the same array of the accumulator
    /// before: an array of scalars built whole by one comprehension, or by one on each side of
    /// an `if` that builds only the side it chooses ([`Analysis::lazy_select`]).
    pub fn reused_accumulator(&self, index: VarId) -> Option<&[(Vec<usize>, NodeId)]> {
        self.reused_accumulators.get(&index).map(Vec::as_slice)
    }

    /// The associative step of the scan over `index`, if it has one (note [scan grouping]).
    pub fn scan_step(&self, index: VarId) -> Option<&ScanStep<'p>> {
        self.scan_steps.get(&index)
    }

    /// The axis sizes of the array-typed body of the comprehension whose outer index is
    /// `outer`, valid before its loops; `None` where they can only be known inside them.
    pub fn body_shape(&self, outer: VarId) -> Option<&[Expr]> {
        self.body_shapes.get(&outer).map(Vec::as_slice)
    }

    /// The body of a loop over `index` (a comprehension's element, an `argmax`'s value) as a
    /// [`Jam`], when it is one: a nest of reductions (`sum`, `prod`, `max`, `min` of a number
    /// type, `all`, `any`, at most three deep; the outermost may be an `argmax`/`argmin`)
    /// around a term with no loop, none of whose sizes depends on
    /// `index` or on another reduction's index, inside an epilogue with no other loop (the
    /// `sqrt` of a distance); all of it can fail only where every order of evaluation fails
    /// alike (iterations side by side are computed interleaved, so an error that depends on
    /// the values could be reported for another iteration first); and every read in the term
    /// that depends on `index` reads along it, or across it from an array that has a
    /// transposed copy in scope ([`AcrossRead`], listed in [`Jam::transposed`]).
    pub fn jam<'e>(&self, index: VarId, body: &'e Expr) -> Option<Jam<'e>> {
        self.with_copies(self.jam_with_across(index, body)?)
    }

    /// Whether `body`, a reduction (`sum`, `prod`, `max`, `min`) of a tuple of numbers whose
    /// step is written as a tuple (`sum i { (a[i, j], a[i, j] * a[i, j]) }`, as
    /// `passes::fuse_reductions` makes them), would be a [`Jam`] over `index` as one
    /// reduction per component (`passes::split_lets` splits it so: side by side, each
    /// component walks its columns in vectors, where the tuple would go one element at a time).
    /// Not where two components call one transcendental or Rust function with one argument
    /// (`sin` and `cos` of one argument count as one): one step computes it once for both
    /// (MRI-Q's, 1.8× slower split).
    pub fn jam_by_components(&self, index: VarId, body: &Expr) -> bool {
        let ExprKind::Reduce(node::Reduce { body: step, .. }) = &body.kind else { return false };
        let ExprKind::Tuple(components) = &step.kind else { return false };
        let mut seen = BTreeSet::new();
        let shares_a_call = components.iter().any(|component| {
            let mut calls = BTreeSet::new();
            walk(component, &mut |expr: &Expr, _: &Scope| {
                calls.extend(match &expr.kind {
                    ExprKind::Extern(_) => Some(visit::alpha_key(expr)),
                    _ => transcendental_key(expr),
                });
                true
            });
            calls.into_iter().any(|call| !seen.insert(call))
        });
        matches!(body.ty, Type::Tuple { .. })
            && !shares_a_call
            && self.nest_with_across(index, body, true).and_then(|nest| self.with_copies(nest)).is_some()
    }

    /// A [`Jam`] whose reads across its index each read a transposed copy in scope, if every
    /// one has a copy.
    fn with_copies<'e>(&self, (mut jam, across): (Jam<'e>, Vec<AcrossRead>)) -> Option<Jam<'e>> {
        for read in across {
            let copy = *self.transposed_copies.get(&(read.array, read.axis))?;
            jam.transposed.insert(read.read, (copy, read.axis));
        }
        Some(jam)
    }

    /// The [`Jam`] of the element `body` of a two-axis comprehension `for outer, inner { body }`
    /// when its elements run side by side down the columns instead of along the rows
    /// (`Fill::fill_columns`): the element is a [`Jam`] over `outer` whose reads all read
    /// along `outer` (`x[k, j, i]` in `for i, k { sum j { … } }`, a column-major array seen
    /// through `passes::by_columns`), but not one over `inner` that reads along it — one
    /// iteration at a time would walk each sum down a column, and a transposed copy of the
    /// array for `inner` would cost a pass of strided reads. A jam computes each element as
    /// alone and fails only where every order fails alike, so the column order keeps the
    /// bits and the errors.
    pub fn column_jam<'e>(&self, outer: VarId, inner: VarId, body: &'e Expr) -> Option<Jam<'e>> {
        // `outer` starts the nest (its root has a row's work), and `body` ends it.
        if body.ty.has_array() || !self.row_work.contains_key(&outer) {
            return None;
        }
        let along_inner = self.jam_with_across(inner, body).is_some_and(|(_, across)| across.is_empty());
        match self.jam_with_across(outer, body)? {
            (jam, across) if across.is_empty() && !along_inner => Some(jam),
            _ => None,
        }
    }

    /// The fold that the element `body` of a comprehension over `index` computes, when
    /// several elements' folds may run side by side, one step of each in turn
    /// ([`Gen::jammed_folds`](crate::codegen)): it is the only loop in `body`, its state holds
    /// no array, its count depends neither on `index` nor on what `body` binds (every element
    /// takes the same steps), it reads of what `body` binds only the `let`s of numbers before
    /// it (the folds run before the rest of the element; those `let`s are computed with each
    /// element's initial value and kept beside its state), its initial value and step hold no loop (a step of plain arithmetic,
    /// whose chain of dependent operations the other elements' steps fill), and nothing
    /// can fail in another order: its initial value and step only by reads of empty axes, the
    /// rest of the element not at all (its count, if negative, fails alike for every element,
    /// before any of them starts). Each element's fold computes the same values in the same
    /// order as alone, so the bits are the same. A fold that stops at a fixed point
    /// ([`Analysis::fixed_point`]) keeps each element's state from its stopping step on; the
    /// elements side by side stop together, or the last few finish alone (code generation).
    pub fn jammed_fold<'e>(&self, index: VarId, body: &'e Expr) -> Option<JammedFold<'e>> {
        let root = only_loop_of_any_kind(body)?;
        let ExprKind::Fold(fold) = &root.kind else { return None };
        let mut prologue = Vec::new();
        prologue_lets(body, root.id, &mut prologue);
        // The fold may read the `let`s of numbers before it, each lane's kept beside its state.
        let readable: BTreeSet<VarId> =
            prologue.iter().filter(|(_, value)| !value.ty.has_array()).map(|(var, _)| *var).collect();
        let bound: BTreeSet<VarId> = bound_vars(body).difference(&readable).copied().collect();
        let count_vars = free_vars(&fold.count);
        let prologue_fits = prologue.iter().all(|(_, value)| !self.facts(value).has_loop);
        let fits = prologue_fits
            && !fold.init.ty.has_array()
            && !self.facts(&fold.init).has_loop
            && !self.facts(&fold.body).has_loop
            && !count_vars.contains(&index)
            && count_vars.is_disjoint(&bound)
            && free_vars(root).is_disjoint(&bound)
            && purity::fails_only_on_empty_axes(&fold.init)
            && purity::fails_only_on_empty_axes(&fold.body)
            && !purity::fails_outside(body, root);
        let epilogue_reads_index = mentions_outside(body, root, index);
        let read = free_vars(root);
        let stored = readable.intersection(&read).copied().collect();
        fits.then_some(JammedFold { root, fold, epilogue_reads_index, prologue, stored })
    }

    /// The array and axis that `copy` is a transposed copy of (`passes::transpose`), if it is
    /// one.
    pub fn transposed_source(&self, copy: VarId) -> Option<(VarId, usize)> {
        self.transposed_copies.iter().find(|(_, &made)| made == copy).map(|(&source, _)| source)
    }

    /// The transposed copies of `array` (`passes::transpose`): code that reads `array` in a
    /// loop run side by side may read them instead.
    pub fn transposed_copies_of(&self, array: VarId) -> impl Iterator<Item = VarId> + '_ {
        self.transposed_copies.range((array, 0)..=(array, usize::MAX)).map(|(_, &copy)| copy)
    }

    /// The reads that alone keep the loop over `index` from running side by side
    /// ([`Analysis::jam`]), if it would and each is an [`AcrossRead`]: reads of an array
    /// variable at exactly `index` on an axis that is not its last (`b[j, k]`), which a copy of
    /// the array with that axis last would turn into reads along `index`.
    pub fn across_reads(&self, index: VarId, body: &Expr) -> Option<Vec<AcrossRead>> {
        let (_, across) = self.jam_with_across(index, body)?;
        (!across.is_empty()).then_some(across)
    }

    /// [`Analysis::jam`], with the reads that cross `index` (each an [`AcrossRead`]) allowed and
    /// listed: any other read that depends on `index` must read along it.
    fn jam_with_across<'e>(&self, index: VarId, body: &'e Expr) -> Option<(Jam<'e>, Vec<AcrossRead>)> {
        self.nest_with_across(index, body, false)
    }

    /// [`Analysis::jam_with_across`]; `by_components` also accepts an outermost reduction of a
    /// tuple of numbers whose step is a tuple (the leaf), as [`Analysis::jam_by_components`]
    /// splits it.
    fn nest_with_across<'e>(
        &self,
        index: VarId,
        body: &'e Expr,
        by_components: bool,
    ) -> Option<(Jam<'e>, Vec<AcrossRead>)> {
        let root = only_loop(body)?;
        let mut levels = Vec::new();
        let mut bound = BTreeSet::from([index]);
        let mut node = root;
        // A scalar type's class: a known type's, or an element type rustc decides (the
        // expression form) by what the program does with it.
        let class = |ty: &Type| match ty {
            Type::Scalar(ScalarType::Known(Scalar::Bool)) => Some(NumberClass::Bool),
            Type::Scalar(ScalarType::Known(_)) => Some(NumberClass::Number),
            Type::Scalar(ScalarType::Param(param)) => self.program.type_params.get(*param).map(|param| param.class),
            _ => None,
        };
        let number = |ty: &Type| matches!(class(ty), Some(NumberClass::Number | NumberClass::Float | NumberClass::Int));
        while let ExprKind::Reduce(reduce) = &node.kind {
            // Folds with an identity: sums, products, extrema of numbers, and `all`/`any` of
            // booleans (both sides evaluated: no short circuit to keep).
            let folds = match reduce.op {
                ReduceOp::Sum | ReduceOp::Prod | ReduceOp::Max | ReduceOp::Min => {
                    let components = match (&node.ty, &reduce.body.kind) {
                        (Type::Tuple { fields, .. }, ExprKind::Tuple(_)) => fields.iter().all(number),
                        _ => false,
                    };
                    number(&node.ty) || (by_components && levels.is_empty() && components)
                }
                ReduceOp::All | ReduceOp::Any => class(&node.ty) == Some(NumberClass::Bool),
                // Outermost only: a best value and its position per iteration, taken with one
                // iteration's rule (the first step's value, replaced only when strictly better).
                ReduceOp::ArgMax | ReduceOp::ArgMin => levels.is_empty() && number(&reduce.body.ty),
            };
            if !folds || levels.len() == 3 || !free_vars(&reduce.size).is_disjoint(&bound) {
                return None;
            }
            bound.insert(reduce.index);
            levels.push(reduce);
            node = &reduce.body;
        }
        // The nest runs before the epilogue: it may not read what the epilogue binds.
        let mut across = Vec::new();
        let fails_alike = match &root.kind {
            // An argmax of an empty range fails in every iteration alike (its size does not
            // depend on `index`), and side by side before the epilogue: nothing there may fail.
            ExprKind::Reduce(node::Reduce { op: ReduceOp::ArgMax | ReduceOp::ArgMin, size, body: step, .. }) => {
                purity::fails_only_on_empty_axes(size)
                    && purity::fails_only_on_empty_axes(step)
                    && !purity::fails_outside(body, root)
            }
            _ => purity::fails_only_on_empty_axes(body),
        };
        let jammable = !levels.is_empty()
            && free_vars(root).is_disjoint(&bound_vars(body))
            && !self.facts(node).has_loop
            && fails_alike
            && self.reads_along_or_across(node, index, &mut across);
        let epilogue_reads_index = mentions_outside(body, root, index);
        let jam = Jam { root, levels, leaf: node, epilogue_reads_index, transposed: BTreeMap::new() };
        jammable.then_some((jam, across))
    }

    /// Whether every read in `expr` that depends on `index` reads along it
    /// ([`Analysis::reads_along`]) or is an [`AcrossRead`] (listed in `across`).
    fn reads_along_or_across(&self, expr: &Expr, index: VarId, across: &mut Vec<AcrossRead>) -> bool {
        if let ExprKind::Index(_) = &expr.kind {
            if self.reads_along(expr, index) {
                return true;
            }
            return match across_read(expr, index) {
                Some(read) => {
                    across.push(read);
                    true
                }
                None => false,
            };
        }
        let mut fine = true;
        expr.for_each_child(|child| fine &= self.reads_along_or_across(child, index, across));
        fine
    }

    /// Whether every read in `expr` that depends on `index` reads along it: `index` (shifted,
    /// or in a window) is the read's last index and no other mentions it. Side by side, such
    /// reads are consecutive elements (vector loads); any other read would be a gather, and
    /// one iteration at a time is then faster (a distance to `b[j, k]` across `j`).
    fn reads_along(&self, expr: &Expr, index: VarId) -> bool {
        let mut along = true;
        if let ExprKind::Index(read) = &expr.kind {
            if visit::mentions(&read.index, index) {
                let last = matches!(expr.ty, Type::Scalar(_));
                let shifted = split_position(&read.index, index)
                    .is_some_and(|(rest, _)| rest.iter().all(|(_, term)| !visit::mentions(term, index)));
                along &= last && shifted;
            }
            return along && self.reads_along(&read.array, index);
        }
        expr.for_each_child(|child| along &= self.reads_along(child, index));
        along
    }

    /// The integer remainder `lhs % rhs` when it wraps at most once where `v + shift` lies in
    /// `0..rhs`: `lhs` is `v + c` (in any order of terms) for the index `v` of a loop it is
    /// evaluated in, and `c` is `0`, `1`, `rhs - 1` or `rhs` (the torus reads `(i + n - 1) % n`
    /// and `(i + 1) % n`). Where the loop runs over `0..rhs` itself, `0 <= lhs < 2 * rhs`
    /// everywhere in it ([`Wrap::within_one_turn`]): the remainder is then `lhs - rhs` when
    /// `lhs >= rhs`, else `lhs`, a compare and a select instead of a division. Otherwise (a
    /// modulus only known equal to the range at run time: an accumulator's length, a
    /// parameter) only the loop's interior knows it, and a literal modulus, which can hardly
    /// be the range, is no wrap.
    pub fn wrap<'e>(&self, lhs: &Expr, rhs: &'e Expr) -> Option<Wrap<'e>> {
        let modulus = crate::ir::visit::alpha_key(rhs);
        let sum = crate::ir::shape::linear_sum(lhs)?;
        let mut terms = sum.terms;
        // The index terms, those over `0..rhs` first.
        let index_of = |term: &Expr| match &term.kind {
            ExprKind::Var(var) => {
                let size = self.index_sizes.get(var)?;
                Some((*var, crate::ir::visit::alpha_key(size) == modulus))
            }
            _ => None,
        };
        let mut indices: Vec<(usize, (VarId, bool))> = terms
            .iter()
            .enumerate()
            .filter_map(|(at, (subtracted, term))| Some((at, index_of(term).filter(|_| !*subtracted)?)))
            .collect();
        indices.sort_by_key(|(_, (_, within_one_turn))| !within_one_turn);
        let (position, (index, within_one_turn)) = indices.first().copied()?;
        if !within_one_turn && matches!(rhs.kind, ExprKind::Literal(_)) {
            return None;
        }
        terms.remove(position);
        let is_modulus = |term: &Expr| crate::ir::visit::alpha_key(term) == modulus;
        let (shift, subtracts) = match (terms.as_slice(), sum.constant) {
            ([], 0) => (0, false),
            ([], 1) => (1, false),
            ([(false, one)], 0) if is_modulus(one) => (0, true),
            ([(false, one)], -1) if is_modulus(one) => (-1, true),
            _ => return None,
        };
        Some(Wrap { index, modulus: rhs, shift, subtracts, within_one_turn })
    }

    /// `comparison` as a [`Guard`] on the index `v` of a loop: `v + c >= k`, `v + c > k`,
    /// `k <= v + c` or `k < v + c` for literals `c` and `k` (the lower side alone, shift
    /// `c - k`, or `c - k - 1` when strict), or `v + c < n` or `n > v + c` for an `i64` bound
    /// `n` that cannot fail.
    pub fn guard<'e>(&self, comparison: &'e Expr) -> Option<Guard<'e>> {
        use crate::ir::BinaryOp::{Ge, Gt, Le, Lt};
        let ExprKind::Binary(node::Binary { op, lhs, rhs }) = &comparison.kind else { return None };
        // The shifted index on the left: `a < b` is `b > a`, `a <= b` is `b >= a`.
        let (op, shifted, other) = match (op, self.facts(lhs).shift, self.facts(rhs).shift) {
            (Ge | Gt | Lt, Some(_), _) => (*op, &**lhs, &**rhs),
            (Le, _, Some(_)) => (Ge, &**rhs, &**lhs),
            (Lt, _, Some(_)) => (Gt, &**rhs, &**lhs),
            (Gt, _, Some(_)) => (Lt, &**rhs, &**lhs),
            _ => return None,
        };
        let (index, c) = self.facts(shifted).shift?;
        self.index_sizes.get(&index)?;
        let literal = match other.kind {
            ExprKind::Literal(Literal::Int(k)) if k.unsigned_abs() <= 1 << 20 => Some(k),
            _ => None,
        };
        let (bound, shift) = match op {
            Ge => (None, c - literal?),
            Gt => (None, c - literal? - 1),
            _ => {
                let bounded = other.ty == Type::scalar(Scalar::I64) && !self.facts(other).may_fail;
                (Some(Some(other).filter(|_| bounded && !visit::mentions(other, index))?), c)
            }
        };
        Some(Guard { comparison: comparison.id, index, bound, shift })
    }

    fn facts(&self, expr: &Expr) -> Facts {
        match self.nodes.get(expr.id.0 as usize) {
            Some(facts) => *facts,
            None => node_facts(expr, |child| self.facts(child)),
        }
    }

    /// Fills [`Analysis::nodes`] for the subtree, numbered in pre-order: children first, then
    /// the node from its children's facts.
    fn record_facts(&mut self, expr: &Expr) {
        let id = expr.id.0 as usize;
        if self.nodes.len() <= id {
            self.nodes.resize(id + 1, Facts::default());
        }
        expr.for_each_child(|child| self.record_facts(child));
        let facts = node_facts(expr, |child| self.nodes[child.id.0 as usize]);
        self.nodes[id] = facts;
    }

    /// The shapes of array-typed comprehension bodies, numbered after every node so far and
    /// analysed like them.
    fn record_shapes(&mut self, expr: &Expr) {
        if let ExprKind::For(node::For { index, .. }) = &expr.kind {
            let body = comprehension_body(expr);
            if body.ty.rank() > 0 {
                if let Some(mut sizes) = crate::ir::shape::shape_of(self.program, body) {
                    for size in &mut sizes {
                        let mut next = self.nodes.len() as u32;
                        number_from(size, &mut next);
                        self.record_facts(size);
                    }
                    self.body_shapes.insert(*index, sizes);
                }
            }
        }
        expr.for_each_child(|child| self.record_shapes(child));
    }

    /// [`Analysis::reads`] and [`Analysis::enclosing`], in one walk.
    fn record_scopes(&mut self) {
        let program = self.program;
        let (mut reads, mut enclosing) = (std::mem::take(&mut self.reads), std::mem::take(&mut self.enclosing));
        let mut transposed_copies = BTreeMap::new();
        let mut undeclared = None;
        fn mark(
            reads: &mut [bool],
            undeclared: &mut Option<(VarId, proc_macro2::Span)>,
            var: VarId,
            span: proc_macro2::Span,
        ) {
            match reads.get_mut(var.0 as usize) {
                Some(read) => *read = true,
                None => {
                    undeclared.get_or_insert((var, span));
                }
            }
        }
        walk(&program.body, &mut |expr: &Expr, scope: &Scope| {
            if let ExprKind::Var(var) = &expr.kind {
                mark(&mut reads, &mut undeclared, *var, expr.span);
            }
            let mut scope = scope.vars().to_vec();
            for var in expr.binders() {
                match enclosing.get_mut(var.0 as usize) {
                    Some(outer) => *outer = scope.clone(),
                    None => {
                        undeclared.get_or_insert((var, expr.span));
                    }
                }
                scope.push(var);
            }
            // A transposed copy is read by the side-by-side loops it was made for (instead of
            // the array, see `Jam::transposed`).
            if let ExprKind::Let(node::Let { var, value, .. }) = &expr.kind {
                if let Some(copy_of) = crate::passes::transposition_of(value) {
                    transposed_copies.insert(copy_of, *var);
                    mark(&mut reads, &mut undeclared, *var, expr.span);
                }
            }
            if let ExprKind::For(node::For { body, .. }) = &expr.kind {
                if body.ty.rank() > 0 {
                    for size in crate::ir::shape::shape_of(program, body).unwrap_or_default() {
                        for var in free_vars(&size) {
                            mark(&mut reads, &mut undeclared, var, size.span);
                        }
                    }
                }
            }
            true
        });
        (self.reads, self.enclosing, self.undeclared) = (reads, enclosing, undeclared);
        self.transposed_copies = transposed_copies;
    }

    /// The per-binder facts: interior reads, tiling, row work, fixed points, reused
    /// accumulators. `nested` marks the body of a comprehension (not the root of a nest).
    fn record_structure(&mut self, expr: &'p Expr, nested: bool) {
        match &expr.kind {
            ExprKind::For(node::For { index, body, .. }) => {
                let mut reads = Vec::new();
                let inside = bound_vars(body);
                self.collect_interior_reads(*index, body, &inside, &mut reads);
                if !reads.is_empty() {
                    self.interior_reads.insert(*index, reads);
                }
                let (mut wraps, mut guards) = (Vec::new(), Vec::new());
                self.collect_interior_compares(*index, body, &inside, &mut wraps, &mut guards);
                if !wraps.is_empty() {
                    self.interior_wraps.insert(*index, wraps);
                }
                if !guards.is_empty() {
                    self.interior_guards.insert(*index, guards);
                }
                if !nested {
                    self.record_comprehension(expr);
                }
            }
            ExprKind::Fold(node::Fold { index, acc, body, init, .. }) => {
                if let Some(exit) = FixedPoint::of(self, body, *acc, *index) {
                    self.fixed_points.insert(*index, exit);
                }
                let mut builders = Vec::new();
                self.accumulator_builders(body, &init.ty, &mut Vec::new(), &mut builders);
                if !builders.is_empty() {
                    self.reused_accumulators.insert(*index, builders);
                }
            }
            ExprKind::Reduce(node::Reduce { index, body, .. }) => {
                // A reduction has no edges: where its whole range is interior, it runs
                // without clamping (`Gen::serial_reduce`).
                let inside = bound_vars(body);
                let mut reads = Vec::new();
                self.collect_interior_reads(*index, body, &inside, &mut reads);
                if !reads.is_empty() {
                    self.interior_reads.insert(*index, reads);
                }
                if self.facts(body).has_loop && only_scalar_reductions(body) && !self.may_fail(body) {
                    let mut inside = inside;
                    inside.insert(*index);
                    self.step_work.insert(*index, self.loops_work(body, &inside).at_least_one());
                }
            }
            ExprKind::Scan(scan) => {
                // A state holding arrays is copied onto the scan's tape each step: its arrays
                // may be built in the memory of the state before, as a fold's are.
                let mut builders = Vec::new();
                self.accumulator_builders(&scan.body, &scan.init.ty, &mut Vec::new(), &mut builders);
                if !builders.is_empty() {
                    self.reused_accumulators.insert(scan.index, builders);
                }
                if let Some(step) = crate::ir::scan::associative_step(scan) {
                    let parallel =
                        !step.lets.iter().any(|(_, value)| self.may_fail(value)) && !self.may_fail(step.value);
                    self.scan_steps.insert(scan.index, ScanStep { step, parallel });
                }
            }
            _ => {}
        }
        let comprehension = matches!(expr.kind, ExprKind::For(_));
        let mut children = Vec::new();
        expr.for_each_child(|child| children.push(child));
        let last = children.len().saturating_sub(1);
        for (position, child) in children.into_iter().enumerate() {
            // Only a comprehension's body, directly, continues its nest.
            let continues = comprehension && position == last && matches!(child.kind, ExprKind::For(_));
            self.record_structure(child, continues);
        }
    }

    /// The facts of the nest rooted at the comprehension `root`: tiling and row work.
    fn record_comprehension(&mut self, root: &'p Expr) {
        let mut chain = Vec::new();
        let mut body = root;
        while let ExprKind::For(node::For { index, size, body: inner }) = &body.kind {
            chain.push((*index, &**size));
            body = inner;
        }
        let outer = chain[0].0;
        // A matrix, or a stack of them whose rows are those of the first two axes taken as
        // one (`for c, i, j`: rows `(c, i)`, tiled across `i` and `j`).
        if let [.., (outer, _), (inner, _)] = chain[..] {
            let shallow = chain.len() <= 3;
            if shallow && !body.ty.has_array() && self.can_reorder(body) && reads_across_rows(body, outer, inner) {
                self.tiled.insert(chain[0].0);
            }
        }
        let mut inside = bound_vars(body);
        inside.extend(chain.iter().map(|(index, _)| *index));
        // The lengths of the inner axes of the nest, computed before its loops.
        let mut work = Work::Const(1);
        for (axis, (_, size)) in chain.iter().enumerate().skip(1) {
            let length = match &size.kind {
                ExprKind::Literal(Literal::Int(value)) => Work::Const(usize::try_from(*value).unwrap_or(0)),
                _ => Work::Axis(axis),
            };
            work = work.times(length);
        }
        let element = self.loops_work(body, &inside).at_least_one();
        self.row_work.insert(outer, work.times(element));
    }

    /// The iterations of the loops in `expr` (each loop's size times the work of its body),
    /// zero if it has none.
    fn loops_work(&self, expr: &'p Expr, inside: &BTreeSet<VarId>) -> Work<'p> {
        match &expr.kind {
            ExprKind::For(node::For { size, body, .. })
            | ExprKind::Filter(node::For { size, body, .. })
            | ExprKind::Reduce(node::Reduce { size, body, .. }) => {
                let body_work = self.loops_work(body, inside).at_least_one();
                self.size_work(size, inside).times(body_work)
            }
            ExprKind::Fold(node::Fold { count, init, body, .. })
            | ExprKind::Scan(node::Scan { count, init, body, .. }) => {
                let body_work = self.loops_work(body, inside).at_least_one();
                self.loops_work(init, inside).plus(self.size_work(count, inside).times(body_work))
            }
            ExprKind::Contract(_) => Work::Const(work::UNKNOWN_SIZE),
            _ => {
                let mut children = Vec::new();
                expr.for_each_child(|child| children.push(child));
                children.into_iter().fold(Work::Const(0), |work, child| work.plus(self.loops_work(child, inside)))
            }
        }
    }

    /// A loop size as work: the size itself when it can be computed before the loops (it
    /// cannot fail and reads nothing bound inside them), else a guess.
    fn size_work(&self, size: &'p Expr, inside: &BTreeSet<VarId>) -> Work<'p> {
        if let ExprKind::Literal(Literal::Int(value)) = &size.kind {
            return Work::Const(usize::try_from(*value).unwrap_or(0));
        }
        if self.can_reorder(size) && free_vars(size).is_disjoint(inside) {
            Work::Size(size)
        } else {
            Work::Const(work::UNKNOWN_SIZE)
        }
    }

    /// The clamped reads in `body` of an array bound outside it (not in `inside`) whose index
    /// along some axis is `index + shift`, each once.
    fn collect_interior_reads(
        &self,
        index: VarId,
        body: &'p Expr,
        inside: &BTreeSet<VarId>,
        found: &mut Vec<Interior<'p>>,
    ) {
        if let ExprKind::Index(_) = &body.kind {
            let mut chain = Vec::new();
            let mut base = body;
            while let ExprKind::Index(node::Index { array, index: position, bounds }) = &base.kind {
                chain.push((&**position, *bounds));
                base = array;
            }
            chain.reverse();
            if let ExprKind::Var(array) = &base.kind {
                if base.ty.rank() > 0 && !inside.contains(array) {
                    for (axis, (position, bounds)) in chain.iter().enumerate() {
                        if *bounds != Bounds::Clamped {
                            continue;
                        }
                        let read = self.interior_shift(position, index, inside).map(|(window, shift)| Interior {
                            index,
                            array: *array,
                            axis,
                            shift,
                            window,
                        });
                        if let Some(read) = read.filter(|read| !found.iter().any(|known| known.same_as(read))) {
                            found.push(read);
                        }
                    }
                }
            }
            for (position, _) in chain {
                self.collect_interior_reads(index, position, inside, found);
            }
            return;
        }
        body.for_each_child(|child| self.collect_interior_reads(index, child, inside, found));
    }

    /// What in `body` needs no compare in the interior of the loop over `index`, in one walk:
    /// the remainders that wrap at most once around it ([`Analysis::wrap`]), by a modulus bound
    /// outside `body` (so computable before the loop), each shift once; and the comparisons
    /// that are [`Guard`]s on it, with a bound bound outside `body`.
    fn collect_interior_compares(
        &self,
        index: VarId,
        body: &'p Expr,
        inside: &BTreeSet<VarId>,
        wraps: &mut Vec<Wrap<'p>>,
        guards: &mut Vec<Guard<'p>>,
    ) {
        match &body.kind {
            ExprKind::Binary(node::Binary { op: crate::ir::BinaryOp::Rem, lhs, rhs }) => {
                let wrap = self.wrap(lhs, rhs).filter(|wrap| wrap.index == index && free_vars(rhs).is_disjoint(inside));
                if let Some(wrap) = wrap {
                    if !wraps.iter().any(|other| other.same_interior(&wrap)) {
                        wraps.push(wrap);
                    }
                }
            }
            ExprKind::Binary(binary) if binary.op.is_comparison() => {
                let outside = |guard: &Guard| guard.bound.is_none_or(|bound| free_vars(bound).is_disjoint(inside));
                if let Some(guard) = self.guard(body).filter(|guard| guard.index == index && outside(guard)) {
                    guards.push(guard);
                }
            }
            _ => {}
        }
        body.for_each_child(|child| self.collect_interior_compares(index, child, inside, wraps, guards));
    }

    fn record_reduction_sizes(&mut self, expr: &'p Expr) {
        match &expr.kind {
            ExprKind::Reduce(node::Reduce { index, size, .. }) => {
                self.reduction_sizes.insert(*index, size);
                self.index_sizes.insert(*index, size);
            }
            ExprKind::For(node::For { index, size, .. }) | ExprKind::Filter(node::For { index, size, .. }) => {
                self.index_sizes.insert(*index, size);
            }
            _ => {}
        }
        expr.for_each_child(|child| self.record_reduction_sizes(child));
    }

    /// `position` as `index`, at most one window index added or subtracted ([`Analysis::is_window`])
    /// and a shift computable before the loop over `index`, whose body binds `inside`: the
    /// window and the shift, if it is one.
    fn interior_shift(
        &self,
        position: &'p Expr,
        index: VarId,
        inside: &BTreeSet<VarId>,
    ) -> Option<(Window, Shift<'p>)> {
        let (rest, literal) = split_position(position, index)?;
        let (window, terms) = take_window(rest, |var| self.is_window(var, index, inside));
        let before_loop = |term: &Expr| {
            let reads = free_vars(term);
            self.can_reorder(term) && reads.is_disjoint(inside) && !reads.contains(&index)
        };
        (literal.unsigned_abs() <= 1 << 20 && terms.iter().all(|(_, term)| before_loop(term)))
            .then_some((window, Shift { literal, terms }))
    }

    /// Whether `window` is the index of a reduction inside the loop (in `inside`) whose size
    /// can be computed before the loop: then its range bounds a window read's offsets.
    fn is_window(&self, window: VarId, index: VarId, inside: &BTreeSet<VarId>) -> bool {
        inside.contains(&window)
            && self.reduction_sizes.get(&window).is_some_and(|size| {
                let reads = free_vars(size);
                // Computed before the loop over `index`: it must not read that index either
                // (`sum k in 0..i + 1 { x[i + k] }`, a window that grows with `i`).
                self.can_reorder(size) && reads.is_disjoint(inside) && !reads.contains(&index)
            })
    }
}

/// `position` as `index` (added, once) plus the rest: its other terms, each added or
/// subtracted ([`crate::ir::shape::linear_sum`]), and its literal.
fn split_position(position: &Expr, index: VarId) -> Option<(SignedTerms<'_>, i64)> {
    if position.ty != Type::scalar(Scalar::I64) {
        return None;
    }
    let sum = crate::ir::shape::linear_sum(position)?;
    let is_index = |term: &Expr| matches!(term.kind, ExprKind::Var(var) if var == index);
    let mut found = sum.terms.iter().filter(|(_, term)| is_index(term));
    match (found.next(), found.next()) {
        (Some((false, _)), None) => {}
        _ => return None,
    }
    Some((sum.terms.into_iter().filter(|(_, term)| !is_index(term)).collect(), sum.constant))
}

/// The first of `terms` that is a variable `is_window` accepts, with its sign, and the others.
fn take_window(terms: SignedTerms<'_>, is_window: impl Fn(VarId) -> bool) -> (Window, SignedTerms<'_>) {
    let mut window = None;
    let mut rest = Vec::new();
    for (negated, term) in terms {
        match term.kind {
            ExprKind::Var(var) if window.is_none() && is_window(var) => window = Some((var, negated)),
            _ => rest.push((negated, term)),
        }
    }
    (window, rest)
}

/// The facts of `expr` from those of its children.
fn node_facts(expr: &Expr, child_facts: impl Fn(&Expr) -> Facts) -> Facts {
    let mut facts = Facts { may_fail: purity::fails_here(expr), has_loop: purity::is_loop(expr), shift: shift(expr) };
    expr.for_each_child(|child| {
        let child = child_facts(child);
        facts.may_fail |= child.may_fail;
        facts.has_loop |= child.has_loop;
    });
    facts
}

/// See [`Facts::shift`].
fn shift(expr: &Expr) -> Option<(VarId, i64)> {
    if expr.ty != Type::scalar(Scalar::I64) {
        return None;
    }
    crate::ir::shape::var_plus_literal(expr).filter(|(_, offset)| offset.unsigned_abs() <= 1 << 20)
}

/// Numbers a tree made by the analysis itself, from `next` on.
fn number_from(expr: &mut Expr, next: &mut u32) {
    expr.id = NodeId(*next);
    *next += 1;
    expr.for_each_child_mut(|child| number_from(child, next));
}

/// The body of the comprehension nest rooted at `expr`: under every directly nested `for`.
fn comprehension_body(expr: &Expr) -> &Expr {
    match &expr.kind {
        ExprKind::For(node::For { body, .. }) => comprehension_body(body),
        _ => expr,
    }
}

/// The arrays an elementwise comprehension over `indices` (outermost first) with body `body`
/// reads, when it may run as one loop over its elements in memory order: every use of an
/// index is as the whole index of a proven read `x[i, j, …]` of an array bound outside the
/// body, of rank the number of indices, and those arrays are used in no other way. (Whether
/// each lies row-major contiguous, with the comprehension's shape, is checked at run time.)
pub fn flat_reads(indices: &[VarId], body: &Expr) -> Option<BTreeSet<VarId>> {
    reads_ending_in(indices, body, true)
}

/// The arrays `body` reads, when its innermost axes `tail` (outermost first) may run as one:
/// every use of those indices is as the last indices of a proven read `x[…, h, w]` of an
/// array bound outside the body (its other indices anything that does not mention them), and
/// those arrays are used in no other way but lengths of their other axes. (Whether each holds
/// those axes contiguously, with the comprehension's lengths, is checked at run time.)
pub fn tail_reads(tail: &[VarId], body: &Expr) -> Option<BTreeSet<VarId>> {
    reads_ending_in(tail, body, false)
}

/// [`flat_reads`] (`whole`: the reads have no other indices) and [`tail_reads`].
fn reads_ending_in(indices: &[VarId], body: &Expr, whole: bool) -> Option<BTreeSet<VarId>> {
    /// The array of a proven read ending in `indices`, and its other indices.
    fn read_ending_in<'e>(indices: &[VarId], whole: bool, expr: &'e Expr) -> Option<(VarId, Vec<&'e Expr>)> {
        let mut positions = Vec::new();
        let mut base = expr;
        while let ExprKind::Index(node::Index { array, index, bounds }) = &base.kind {
            if *bounds != Bounds::Proven {
                return None;
            }
            positions.push(&**index);
            base = array;
        }
        positions.reverse();
        let ExprKind::Var(array) = base.kind else { return None };
        let rank = base.ty.rank();
        let first = positions.len().checked_sub(indices.len())?;
        let by_index =
            |(position, index): (&&Expr, &VarId)| matches!(position.kind, ExprKind::Var(var) if var == *index);
        let ends =
            positions.len() == rank && (!whole || first == 0) && positions[first..].iter().zip(indices).all(by_index);
        ends.then(|| (array, positions[..first].to_vec()))
    }
    fn visit(
        indices: &[VarId],
        whole: bool,
        expr: &Expr,
        reads: &mut BTreeSet<VarId>,
        others: &mut BTreeSet<VarId>,
    ) -> bool {
        if let Some((array, leading)) = read_ending_in(indices, whole, expr) {
            reads.insert(array);
            return leading.into_iter().all(|position| visit(indices, whole, position, reads, others));
        }
        // The length of an axis before those merged is unchanged (`sum c in 0..len(x, 1)`).
        if let ExprKind::Len(node::Len { array, axis }) = &expr.kind {
            if matches!(array.kind, ExprKind::Var(_)) && axis + indices.len() < array.ty.rank() {
                return true;
            }
        }
        if let ExprKind::Var(var) = expr.kind {
            if indices.contains(&var) {
                return false;
            }
            others.insert(var);
        }
        let mut flat = true;
        expr.for_each_child(|child| flat = flat && visit(indices, whole, child, reads, others));
        flat
    }
    let (mut reads, mut others) = (BTreeSet::new(), BTreeSet::new());
    let flat = visit(indices, whole, body, &mut reads, &mut others)
        && reads.is_disjoint(&others)
        && reads.is_subset(&free_vars(body));
    flat.then_some(reads)
}

/// The number of channels `K` of `array`'s pixels if `nest` reads it as an interleaved image
/// `[h, w, K]`: every use of `array` in `nest` is a whole read whose last index is a literal
/// (a channel, `img[i, j, 0]`), `K` being one more than the largest, from 2 to 8 (or a
/// length). Generated code then versions the nest for views whose pixels are `K` contiguous
/// channels (`View::packed_inner`), where LLVM sees the channels' reads at constant
/// positions and a constant stride, and de-interleaves them with shuffles (rgb → grey: 6×
/// slower than a hand loop over `chunks_exact(3)` without it, as fast with it).
pub fn interleaved_reads(array: VarId, nest: &Expr) -> Option<usize> {
    fn visit(array: VarId, expr: &Expr, largest: &mut Option<i64>) -> bool {
        let (base, positions) = expr.read_chain();
        if matches!(base.kind, ExprKind::Var(var) if var == array) && !positions.is_empty() {
            let channel = match positions.last().map(|(position, _)| &position.kind) {
                Some(ExprKind::Literal(Literal::Int(channel)))
                    if positions.len() == base.ty.rank() && positions.len() >= 2 =>
                {
                    *channel
                }
                _ => return false,
            };
            *largest = Some(largest.map_or(channel, |largest| largest.max(channel)));
            return positions.iter().all(|(position, _)| visit(array, position, largest));
        }
        match &expr.kind {
            ExprKind::Len(node::Len { array: of, .. }) if matches!(of.kind, ExprKind::Var(_)) => true,
            ExprKind::Var(var) => *var != array,
            _ => {
                let mut only_channels = true;
                expr.for_each_child(|child| only_channels = only_channels && visit(array, child, largest));
                only_channels
            }
        }
    }
    let mut largest = None;
    if !visit(array, nest, &mut largest) {
        return None;
    }
    let stride = usize::try_from(largest?.checked_add(1)?).ok()?;
    (2..=8).contains(&stride).then_some(stride)
}

/// The expression that gives `body` its value, under its `let`s and size checks (what builds a
/// fold's next accumulator, or an `#[into]` function's result).
pub fn tail_of(body: &Expr) -> &Expr {
    match &body.kind {
        ExprKind::Let(node::Let { body, .. }) | ExprKind::Assert(node::Assert { body, .. }) => tail_of(body),
        _ => body,
    }
}

/// Whether `body` reads some array with the inner index `inner` in an axis other than its
/// last and not in its last (`b[j, i]` inside `for i, j`): consecutive elements of a row then
/// read a column, a cache line apiece, unless the loops are tiled.
fn reads_across_rows(body: &Expr, outer: VarId, inner: VarId) -> bool {
    if let ExprKind::Index(_) = &body.kind {
        let mut indices = Vec::new();
        let mut base = body;
        while let ExprKind::Index(node::Index { array, index, .. }) = &base.kind {
            indices.push(&**index);
            base = array;
        }
        indices.reverse();
        if let (Some((last, others)), Type::Array { rank, .. }) = (indices.split_last(), &base.ty) {
            let in_last = free_vars(last);
            let across = indices.len() == *rank
                && !in_last.contains(&inner)
                && others.iter().any(|index| free_vars(index).contains(&inner))
                && (in_last.contains(&outer) || in_last.is_empty());
            if across {
                return true;
            }
        }
    }
    let mut found = false;
    body.for_each_child(|child| found |= reads_across_rows(child, outer, inner));
    found
}

/// Whether every loop in `expr` is a reduction and every array in it a variable or a read of
/// one (a view): code for it builds no array, so nothing is held across its evaluations.
fn only_scalar_reductions(expr: &Expr) -> bool {
    let builds = match &expr.kind {
        ExprKind::For(_)
        | ExprKind::Filter(_)
        | ExprKind::Fold(_)
        | ExprKind::Scan(_)
        | ExprKind::Accum(_)
        | ExprKind::Contract(_) => true,
        ExprKind::Var(_) | ExprKind::Index(_) => false,
        _ => expr.ty.has_array(),
    };
    let mut only = !builds;
    expr.for_each_child(|child| only &= only_scalar_reductions(child));
    only
}

#[cfg(test)]
mod tests;
