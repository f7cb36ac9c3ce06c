//! Accumulations: a copy of the initial array, every update applied in the row-major order of
//! the update loops, with the grouping of note [accum grouping] (`crate::ir::accum`), exactly as
//! generated code computes it; and the history of an accum's updates (`AccumValue`), serially.

use super::datum::{ArrayView, Datum};
use super::eval::Interpreter;
use super::scalar;
use super::value::RuntimeError;
use crate::ir::accum::{accum_groups, combine_levels, first_loop, group_range, uniform_op};
use crate::ir::node;
use crate::ir::{BinaryOp, Expr, ExprKind, Scalar, UpdateOp};

type Result<T> = std::result::Result<T, RuntimeError>;

/// The array being updated and what the updates need to know about it.
struct Target<'a> {
    name: &'a str,
    shape: Vec<usize>,
    data: Vec<Datum>,
    ops: &'a [UpdateOp],
    /// Where the element each update finds is recorded, for a history.
    history: Option<History>,
}

/// The history being recorded (`node::AccumValue`): the elements found, in the order the
/// updates are applied, and the sizes of the update loops met so far.
struct History {
    found: Vec<Datum>,
    shape: Vec<usize>,
    reversed: bool,
    /// What an update whose condition fails records.
    zero: Datum,
}

impl Interpreter<'_> {
    pub(super) fn eval_accum(&mut self, accum: &node::Accum) -> Result<Datum> {
        let init = self.eval(&accum.init)?;
        let Datum::Array(view) = init else {
            return Err(RuntimeError::internal("the initial value of an accum is not an array"));
        };
        let elem = match &accum.init.ty {
            crate::ir::Type::Array { elem, .. } => self.scalar_type_of(elem)?,
            other => return Err(RuntimeError::internal(format!("an accum of {other}"))),
        };
        let shape = view.shape().to_vec();
        let history = match accum.value {
            node::AccumValue::Final => None,
            reversed @ (node::AccumValue::Before | node::AccumValue::BeforeReversed) => Some(History {
                found: Vec::new(),
                shape: vec![0; accum.updates.ty.rank()],
                reversed: reversed == node::AccumValue::BeforeReversed,
                zero: zero(elem),
            }),
        };
        let mut target =
            Target { name: &accum.target, shape, data: view.elements().to_vec(), ops: &accum.ops, history };
        // The grouping applies to the first loop, when every update has one operator and the
        // final array is wanted (a history is serial).
        let grouped = uniform_op(accum)
            .filter(|_| target.history.is_none())
            .zip(first_loop(&accum.updates).map(|first| first as *const node::For));
        self.accum_nest(&accum.updates, &mut target, grouped.map(|(op, first)| (op, first, elem)), 0)?;
        match target.history {
            None => Ok(Datum::Array(ArrayView::new(target.shape, target.data)?)),
            Some(History { mut found, mut shape, reversed, .. }) => {
                if reversed {
                    found.reverse();
                }
                shape.push(accum.ops.len());
                Ok(Datum::Array(ArrayView::new(shape, found)?))
            }
        }
    }

    /// Applies the updates of `expr` (a nest of loops, `let`s and checks around a tuple of
    /// updates). `grouped`: the operator, the loop whose iterations are grouped and the element
    /// type, until that loop is reached; `level`: the number of loops around `expr`.
    fn accum_nest(
        &mut self,
        expr: &Expr,
        target: &mut Target<'_>,
        grouped: Option<(UpdateOp, *const node::For, Scalar)>,
        level: usize,
    ) -> Result<()> {
        match &expr.kind {
            ExprKind::Let(node::Let { var, value, body }) => {
                let value = self.eval(value)?;
                let previous = self.bind(*var, value)?;
                self.accum_nest(body, target, grouped, level)?;
                self.restore(*var, previous);
                Ok(())
            }
            ExprKind::Assert(node::Assert { checks, body }) => {
                for check in checks {
                    self.check_size(check)?;
                }
                self.accum_nest(body, target, grouped, level)
            }
            ExprKind::For(for_node) => {
                let node::For { index, size, body } = for_node;
                let count = self.eval_size(size, *index)?;
                if let Some(history) = &mut target.history {
                    // Every iteration meets the same size (sizes never depend on an index).
                    if let Some(recorded) = history.shape.get_mut(level) {
                        *recorded = count;
                    }
                }
                let groups = match grouped {
                    Some((_, first, _)) if std::ptr::eq(first, for_node) => {
                        let nested = first_loop(body).is_some();
                        accum_groups(count, target.data.len(), nested)
                    }
                    _ => 1,
                };
                let previous = self.bind(*index, Datum::i64(0))?;
                if groups == 1 {
                    self.accum_range(*index, 0..count, body, target, level + 1)?;
                } else {
                    let (op, _, elem) = grouped.ok_or_else(|| RuntimeError::internal("accum groups"))?;
                    let identity = identity(op, elem)?;
                    let mut arrays = Vec::with_capacity(groups);
                    for group in 0..groups {
                        let fresh = if group == 0 {
                            std::mem::take(&mut target.data)
                        } else {
                            vec![identity.clone(); arrays.first().map_or(0, Vec::len)]
                        };
                        target.data = fresh;
                        self.accum_range(*index, group_range(count, groups, group), body, target, level + 1)?;
                        arrays.push(std::mem::take(&mut target.data));
                    }
                    for level in combine_levels(groups) {
                        let mut next = Vec::with_capacity(level.len());
                        for (left, right) in level {
                            let left_array = std::mem::take(&mut arrays[left]);
                            next.push(match right {
                                None => left_array,
                                Some(right) => {
                                    let right_array = std::mem::take(&mut arrays[right]);
                                    let pairs = left_array.into_iter().zip(right_array);
                                    pairs.map(|(a, b)| combine(op, a, b)).collect::<Result<Vec<Datum>>>()?
                                }
                            });
                        }
                        arrays = next;
                    }
                    target.data = arrays.pop().ok_or_else(|| RuntimeError::internal("accum groups"))?;
                }
                self.restore(*index, previous);
                Ok(())
            }
            _ => {
                let value = self.eval(expr)?;
                self.apply_updates(value, target)
            }
        }
    }

    /// The iterations `range` of a loop at depth `level` (backwards for a reversed history).
    fn accum_range(
        &mut self,
        index: crate::ir::VarId,
        range: std::ops::Range<usize>,
        body: &Expr,
        target: &mut Target<'_>,
        level: usize,
    ) -> Result<()> {
        let reversed = target.history.as_ref().is_some_and(|history| history.reversed);
        let positions: Box<dyn Iterator<Item = usize>> = if reversed { Box::new(range.rev()) } else { Box::new(range) };
        for position in positions {
            let position = i64::try_from(position).map_err(|_| RuntimeError::internal("a position above i64::MAX"))?;
            self.bind(index, Datum::i64(position))?;
            self.accum_nest(body, target, None, level)?;
        }
        Ok(())
    }

    /// One iteration's tuple of `(condition, indices.., value)` per update, applied in order
    /// (in reverse order for a reversed history), each element found recorded for a history.
    fn apply_updates(&mut self, value: Datum, target: &mut Target<'_>) -> Result<()> {
        let Datum::Tuple(fields) = value else {
            return Err(RuntimeError::internal("the updates of an accum are not a tuple"));
        };
        let rank = target.shape.len();
        if fields.len() != target.ops.len() * (rank + 2) {
            return Err(RuntimeError::internal("an accum's update tuple has the wrong length"));
        }
        let mut updates: Vec<(&[Datum], &UpdateOp)> = fields.chunks(rank + 2).zip(target.ops).collect();
        if target.history.as_ref().is_some_and(|history| history.reversed) {
            updates.reverse();
        }
        for (group, op) in updates {
            let Datum::Bool(condition) = group[0] else {
                return Err(RuntimeError::internal("an update's condition is not a bool"));
            };
            if !condition {
                if let Some(history) = &mut target.history {
                    history.found.push(history.zero.clone());
                }
                continue;
            }
            let mut offset = 0usize;
            for (axis, (index, &size)) in group[1..=rank].iter().zip(&target.shape).enumerate() {
                let index = index.to_i64().ok_or_else(|| RuntimeError::internal("an update index"))?;
                let position = usize::try_from(index).ok().filter(|position| *position < size);
                let Some(position) = position else {
                    return Err(RuntimeError::new(out_of_range(index, axis, target.name, size)));
                };
                offset = offset * size + position;
            }
            let slot = target.data.get_mut(offset).ok_or_else(|| RuntimeError::internal("an update offset"))?;
            if let Some(history) = &mut target.history {
                history.found.push(slot.clone());
            }
            let old = std::mem::replace(slot, Datum::Bool(false));
            *slot = combine(*op, old, group[rank + 1].clone())?;
        }
        Ok(())
    }
}

/// The message of an update out of range, worded as the runtime's (without `ein: ` and the
/// source location).
pub(crate) fn out_of_range(index: i64, axis: usize, target: &str, size: usize) -> String {
    let index = if index == i64::MAX { "i64::MAX or more".to_string() } else { index.to_string() };
    format!("index {index} out of range for axis {axis} of `{target}` (size {size})")
}

/// `element op value`, the element on the left.
fn combine(op: UpdateOp, element: Datum, value: Datum) -> Result<Datum> {
    let op = match op {
        UpdateOp::Add => BinaryOp::Add,
        UpdateOp::Mul => BinaryOp::Mul,
        UpdateOp::Or => BinaryOp::Or,
        UpdateOp::And => BinaryOp::And,
    };
    scalar::binary(op, element, value)
}

/// The zero of an element type.
fn zero(elem: Scalar) -> Datum {
    match elem {
        Scalar::F32 => Datum::F32(0.0),
        Scalar::F64 => Datum::F64(0.0),
        Scalar::Bool => Datum::Bool(false),
        _ => Datum::int(elem, 0),
    }
}

/// The identity a group's private array starts from (note [accum grouping]).
fn identity(op: UpdateOp, elem: Scalar) -> Result<Datum> {
    Ok(match (op, elem) {
        (UpdateOp::Add, Scalar::F32) => Datum::F32(-0.0),
        (UpdateOp::Add, Scalar::F64) => Datum::F64(-0.0),
        (UpdateOp::Mul, Scalar::F32) => Datum::F32(1.0),
        (UpdateOp::Mul, Scalar::F64) => Datum::F64(1.0),
        (UpdateOp::Add, _) => Datum::int(elem, 0),
        (UpdateOp::Mul, _) => Datum::int(elem, 1),
        (UpdateOp::Or, _) => Datum::Bool(false),
        (UpdateOp::And, _) => Datum::Bool(true),
    })
}
