//! Accumulations (`accum h = init { for i { h[k[i]] += w[i] } }`): how their updates are
//! grouped so that they run in parallel and deterministically (note [accum grouping]); the one
//! definition the interpreter, the analysis and code generation share.
//!
//! Note [accum grouping]. The updates of an accum are applied in the row-major order of its
//! loops. Integer (wrapping) and boolean updates are exact in any order, but float `+=` and
//! `*=` are not, so the order is fixed by the sizes alone, never by the thread count: the
//! outermost loop's `n` iterations are split into `G = accum_groups(n, len, nested)` groups of
//! consecutive iterations (group `g` runs `g·n/G .. (g+1)·n/G`). Group 0 applies its updates,
//! in order, to a copy of `init`; every other group applies its own, in order, to a private
//! array holding the operator's identity (`-0.0` for `+`, so that an untouched element keeps
//! its sign; `1` for `*`; `false` for `|=`; `true` for `&=`). The G arrays are then combined
//! element by element, neighbours first (`(a₀ ⊕ a₁) ⊕ (a₂ ⊕ a₃)`, an odd one out carried up
//! to the next level). With `G = 1` (every accum with fewer than [`ACCUM_MIN_GROUP`]
//! outer iterations, or whose target is larger than the work) this is the serial loop from
//! `init`, exactly (compiled code may still run it in parallel, partitioned by ranges of the
//! target, each range applying its updates in the serial order: the same bits). A target
//! index out of range fails the program; compiled code reports the failure of the first group
//! that has one, which is the first in index order. Compiled code groups exact (integer,
//! boolean) updates in at most as many groups as it has threads: the same result.

use super::{node, Expr, ExprKind, Type, UpdateOp};

/// The loops of an accum's update nest (the `For`s reached through its loops, `let`s and
/// checks), which may have ranges depending on indices: they build no array.
pub fn update_loops(updates: &Expr, found: &mut Vec<*const Expr>) {
    match &updates.kind {
        ExprKind::For(node::For { body, .. }) => {
            found.push(updates);
            update_loops(body, found);
        }
        ExprKind::Let(node::Let { body, .. }) | ExprKind::Assert(node::Assert { body, .. }) => {
            update_loops(body, found)
        }
        _ => {}
    }
}

/// The first loop of an accum's updates under its `let`s and size checks, if any.
pub fn first_loop(updates: &Expr) -> Option<&node::For> {
    match &updates.kind {
        ExprKind::For(for_node) => Some(for_node),
        ExprKind::Let(node::Let { body, .. }) | ExprKind::Assert(node::Assert { body, .. }) => first_loop(body),
        _ => None,
    }
}

/// The first loop of an accum's update nest whose range depends on something the nest binds
/// above it (`for r { for k in 0..rowptr[r + 1] - rowptr[r] { .. } }`): an accum's loops build
/// no array, so their ranges may, but a history (one axis per loop) needs every range fixed.
pub fn irregular_loop(updates: &Expr) -> Option<&Expr> {
    fn find<'a>(expr: &'a Expr, above: &mut Vec<super::VarId>) -> Option<&'a Expr> {
        let (bound, body) = match &expr.kind {
            ExprKind::For(node::For { index, size, body }) => {
                let free = super::visit::free_vars(size);
                if above.iter().any(|var| free.contains(var)) {
                    return Some(expr);
                }
                (Some(*index), body)
            }
            ExprKind::Let(node::Let { var, body, .. }) => (Some(*var), body),
            ExprKind::Assert(node::Assert { body, .. }) => (None, body),
            _ => return None,
        };
        above.extend(bound);
        let found = find(body, above);
        above.truncate(above.len() - usize::from(bound.is_some()));
        found
    }
    find(updates, &mut Vec::new())
}

/// The one operator of all of an accum's updates, when they share one: only then are its
/// updates grouped (note [accum grouping]); mixed operators (`+=` and `*=` on one array) are
/// applied serially, in order.
pub fn uniform_op(accum: &node::Accum) -> Option<UpdateOp> {
    let first = *accum.ops.first()?;
    accum.ops.iter().all(|op| *op == first).then_some(first)
}

/// The type of an accum node's value: its init's for the final array, and for a history
/// (`node::AccumValue`) the target's element with one axis per loop of the update nest and
/// one for the updates of an iteration.
pub fn value_type(accum: &node::Accum) -> Type {
    match (&accum.value, &accum.init.ty) {
        (node::AccumValue::Final, ty) => ty.clone(),
        (_, Type::Array { elem, .. }) => Type::array((**elem).clone(), accum.updates.ty.rank() + 1),
        (_, other) => other.clone(),
    }
}

/// The type of the tuple an accum's updates give per iteration: `(bool, i64 × rank, elem)`
/// per update.
pub fn update_tuple_type(elem: &Type, rank: usize, updates: usize) -> Type {
    let group = std::iter::once(Type::BOOL).chain(std::iter::repeat_n(Type::I64, rank)).chain([elem.clone()]);
    let group: Vec<Type> = group.collect();
    Type::tuple(group.iter().cloned().cycle().take(group.len() * updates).collect())
}

/// The typing rule of an accum: the init an array of scalars, the updates a nest (any number
/// of axes) of tuples of [`update_tuple_type`], at least one update.
pub fn well_typed(accum: &node::Accum) -> bool {
    let Type::Array { elem, rank } = &accum.init.ty else { return false };
    let tuple = match &accum.updates.ty {
        Type::Array { elem, .. } => &**elem,
        other => other,
    };
    matches!(**elem, Type::Scalar(_))
        && !accum.ops.is_empty()
        && *tuple == update_tuple_type(elem, *rank, accum.ops.len())
}

/// The fewest outer iterations a group has (below `2·ACCUM_MIN_GROUP`, one group: serial).
pub const ACCUM_MIN_GROUP: usize = 4096;

/// The most groups an accum is split into (each holds a private copy of the target).
pub const ACCUM_MAX_GROUPS: usize = 64;

/// How much work one outer iteration is counted as when the outer loop's body holds another
/// loop (whose size may only be known inside it): an estimate, fixed so the grouping depends
/// on nothing but the sizes.
pub const ACCUM_NESTED_WORK: usize = 64;

/// What a private copy of the target costs, in updates per element: filling it and adding it
/// to another are streams, far cheaper per element than an update at a random place, but a
/// group with fewer updates per element than this was slower than the serial loop on two
/// threads (a float scatter-add of 2^22 updates against the serial loop: 2^20 bins in 4 groups
/// 2.8×, 2^18 bins in 16 groups 1.15×; at this cost one group 1.2× and 4 groups 0.8×).
pub const ACCUM_COPY_COST: usize = 4;

/// The number of groups of note [accum grouping] for an outer loop of `outer` iterations, a
/// target of `len` elements, and whether the outer loop's body holds another loop. Must equal
/// the runtime's `accum_groups` (`ein-runtime/src/accum.rs`).
pub fn accum_groups(outer: usize, len: usize, nested: bool) -> usize {
    let work = outer.saturating_mul(if nested { ACCUM_NESTED_WORK } else { 1 });
    let by_size = outer / ACCUM_MIN_GROUP.div_ceil(if nested { ACCUM_NESTED_WORK } else { 1 });
    let by_target = work.checked_div(len.saturating_mul(ACCUM_COPY_COST)).unwrap_or(ACCUM_MAX_GROUPS);
    let groups = by_size.min(by_target).min(ACCUM_MAX_GROUPS).min(outer);
    if groups < 2 {
        1
    } else {
        groups
    }
}

/// The outer iterations of group `group` of `groups` (note [accum grouping]).
pub fn group_range(outer: usize, groups: usize, group: usize) -> std::ops::Range<usize> {
    let start = |g: usize| ((g as u128 * outer as u128) / groups as u128) as usize;
    start(group)..start(group + 1)
}

/// The order in which `count` arrays are combined: a list of levels, each a list of pairs
/// `(left, right)` of positions in the previous level's list (neighbours first; an odd one out
/// is carried up as `(position, None)`).
pub fn combine_levels(count: usize) -> Vec<Vec<(usize, Option<usize>)>> {
    let mut levels = Vec::new();
    let mut width = count;
    while width > 1 {
        let level: Vec<(usize, Option<usize>)> =
            (0..width.div_ceil(2)).map(|pair| (2 * pair, (2 * pair + 1 < width).then_some(2 * pair + 1))).collect();
        width = level.len();
        levels.push(level);
    }
    levels
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_depend_only_on_sizes() {
        assert_eq!(accum_groups(100, 10, false), 1);
        assert_eq!(accum_groups(1 << 24, 256, false), ACCUM_MAX_GROUPS);
        assert_eq!(accum_groups(1 << 22, 1 << 20, false), 1);
        assert_eq!(accum_groups(1 << 22, 1 << 18, false), 4);
        assert_eq!(accum_groups(1 << 20, 1 << 20, false), 1);
        assert_eq!(accum_groups(1 << 20, 0, false), ACCUM_MAX_GROUPS);
        assert_eq!(accum_groups(1000, 256, true), 15);
        let ranges: Vec<_> = (0..3).map(|g| group_range(10, 3, g)).collect();
        assert_eq!(ranges, [0..3, 3..6, 6..10]);
        assert_eq!(
            combine_levels(5),
            vec![vec![(0, Some(1)), (2, Some(3)), (4, None)], vec![(0, Some(1)), (2, None)], vec![(0, Some(1))]]
        );
        assert!(combine_levels(1).is_empty());
    }
}
