//! Accumulations: a copy of the initial array, every update applied in the row-major order of
//! the update loops, with the grouping of note [accum grouping] (`crate::ir::accum`), exactly as
//! generated code computes it.

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
        let mut target = Target { name: &accum.target, shape, data: view.elements().to_vec(), ops: &accum.ops };
        // The grouping applies to the first loop, when every update has one operator.
        let grouped = uniform_op(accum).zip(first_loop(&accum.updates).map(|first| first as *const node::For));
        self.accum_nest(&accum.updates, &mut target, grouped.map(|(op, first)| (op, first, elem)))?;
        Ok(Datum::Array(ArrayView::new(target.shape, target.data)?))
    }

    /// Applies the updates of `expr` (a nest of loops, `let`s and checks around a tuple of
    /// updates). `grouped`: the operator, the loop whose iterations are grouped and the element
    /// type, until that loop is reached.
    fn accum_nest(
        &mut self,
        expr: &Expr,
        target: &mut Target<'_>,
        grouped: Option<(UpdateOp, *const node::For, Scalar)>,
    ) -> Result<()> {
        match &expr.kind {
            ExprKind::Let(node::Let { var, value, body }) => {
                let value = self.eval(value)?;
                let previous = self.bind(*var, value)?;
                self.accum_nest(body, target, grouped)?;
                self.restore(*var, previous);
                Ok(())
            }
            ExprKind::Assert(node::Assert { checks, body }) => {
                for check in checks {
                    self.check_size(check)?;
                }
                self.accum_nest(body, target, grouped)
            }
            ExprKind::For(for_node) => {
                let node::For { index, size, body } = for_node;
                let count = self.eval_size(size, *index)?;
                let groups = match grouped {
                    Some((_, first, _)) if std::ptr::eq(first, for_node) => {
                        let nested = first_loop(body).is_some();
                        accum_groups(count, target.data.len(), nested)
                    }
                    _ => 1,
                };
                let previous = self.bind(*index, Datum::i64(0))?;
                if groups == 1 {
                    self.accum_range(*index, 0..count, body, target)?;
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
                        self.accum_range(*index, group_range(count, groups, group), body, target)?;
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

    fn accum_range(
        &mut self,
        index: crate::ir::VarId,
        range: std::ops::Range<usize>,
        body: &Expr,
        target: &mut Target<'_>,
    ) -> Result<()> {
        for position in range {
            let position = i64::try_from(position).map_err(|_| RuntimeError::internal("a position above i64::MAX"))?;
            self.bind(index, Datum::i64(position))?;
            self.accum_nest(body, target, None)?;
        }
        Ok(())
    }

    /// One iteration's tuple of `(condition, indices.., value)` per update, applied in order.
    fn apply_updates(&mut self, value: Datum, target: &mut Target<'_>) -> Result<()> {
        let Datum::Tuple(fields) = value else {
            return Err(RuntimeError::internal("the updates of an accum are not a tuple"));
        };
        let rank = target.shape.len();
        if fields.len() != target.ops.len() * (rank + 2) {
            return Err(RuntimeError::internal("an accum's update tuple has the wrong length"));
        }
        for (group, op) in fields.chunks(rank + 2).zip(target.ops) {
            let Datum::Bool(condition) = group[0] else {
                return Err(RuntimeError::internal("an update's condition is not a bool"));
            };
            if !condition {
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
            let old = std::mem::replace(slot, Datum::Bool(false));
            *slot = combine(*op, old, group[rank + 1].clone())?;
        }
        Ok(())
    }
}

/// The message of an update out of range, worded as the runtime's (without `ein: ` and the
/// source location).
pub(crate) fn out_of_range(index: i64, axis: usize, target: &str, size: usize) -> String {
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
