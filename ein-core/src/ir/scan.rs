//! Scans whose step is associative, and the fixed grouping that makes them parallel and
//! deterministic (note [scan grouping]); the one definition the interpreter, the analysis and
//! code generation share.
//!
//! Note [scan grouping]. A scan `scan t in 0..n, acc = init { acc ⊕ f(t) }` (or
//! `{ f(t) ⊕ acc }`), with `⊕` one of `+ * max min && ||` and `f` not reading `acc`, is
//! computed in blocks of [`SCAN_BLOCK`] consecutive steps, a number that depends on nothing
//! but itself (never on the thread count). With `offset_0 = init`, `total_b = f(bB) ⊕ f(bB + 1)
//! ⊕ … ⊕ f(bB + B - 1)` folded left to right, and `offset_{b+1} = offset_b ⊕ total_b`, the state
//! after step `i` of block `b` is `(…((offset_b ⊕ f(bB)) ⊕ f(bB + 1)) …) ⊕ f(i)`. The first block
//! is exactly the serial scan, so scans of at most `B` steps are plain serial scans; longer
//! float scans may differ from a serial loop in the last bits, never from run to run or
//! machine to machine. Integer and boolean operations are associative, so for them the
//! grouping changes nothing. (`a ⊕ b` keeps the written order of the operands: with the
//! accumulator on the right, `offset ⊕ total` is `total ⊕ offset`; generated code writes a
//! float `+` or `*` as `a += b` either way, the same bits, IEEE `+` and `*` being commutative,
//! but for the payload of a NaN made from two NaNs.) Generated code runs
//! the blocks' totals and their rescans in parallel when nothing in `f` can fail; otherwise
//! it computes the same grouping in one serial pass, so errors come in index order.

use super::node;
use super::visit::mentions;
use super::{Expr, ExprKind, Func, Type, VarId};
use crate::ops::BinaryOp;

/// The number of consecutive steps of an associative scan grouped together (note
/// [scan grouping]); must equal the runtime's `SCAN_BLOCK`.
pub const SCAN_BLOCK: usize = 4096;

/// The associative operation of a scan's step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepOp {
    Add,
    Mul,
    Max,
    Min,
    /// `&&` on booleans (both sides evaluated, as ever).
    And,
    /// `||` on booleans.
    Or,
}

/// Which operand of the step is the accumulator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccumulatorSide {
    /// `acc ⊕ f(t)`
    Left,
    /// `f(t) ⊕ acc`
    Right,
}

/// The parts of a step `let …; acc ⊕ value` (see [`associative_step`]).
#[derive(Clone, Debug)]
pub struct AssociativeStep<'e> {
    pub op: StepOp,
    pub side: AccumulatorSide,
    /// The `let`s before the combination, in order; none reads the accumulator.
    pub lets: Vec<(VarId, &'e Expr)>,
    /// `f(t)`: the operand that is not the accumulator; it does not read the accumulator.
    pub value: &'e Expr,
}

/// The step of `scan` when it is `let …; acc ⊕ f(t)` or `let …; f(t) ⊕ acc` for a scalar
/// accumulator and an associative built-in `⊕`, with neither the `let`s nor `f` reading the
/// accumulator; `None` otherwise (the scan is then serial, in order).
pub fn associative_step(scan: &node::Scan) -> Option<AssociativeStep<'_>> {
    if !matches!(scan.body.ty, Type::Scalar(_)) {
        return None;
    }
    let acc = scan.acc;
    let mut lets = Vec::new();
    let mut tail = &*scan.body;
    while let ExprKind::Let(node::Let { var, value, body }) = &tail.kind {
        if mentions(value, acc) {
            return None;
        }
        lets.push((*var, &**value));
        tail = body;
    }
    let (op, left, right) = match &tail.kind {
        ExprKind::Binary(node::Binary { op, lhs, rhs }) => {
            let op = match op {
                BinaryOp::Add => StepOp::Add,
                BinaryOp::Mul => StepOp::Mul,
                BinaryOp::And => StepOp::And,
                BinaryOp::Or => StepOp::Or,
                _ => return None,
            };
            (op, &**lhs, &**rhs)
        }
        ExprKind::Call(node::Call { func: func @ (Func::Max | Func::Min), args }) if args.len() == 2 => {
            let op = if *func == Func::Max { StepOp::Max } else { StepOp::Min };
            (op, &args[0], &args[1])
        }
        _ => return None,
    };
    let is_acc = |expr: &Expr| matches!(expr.kind, ExprKind::Var(var) if var == acc);
    let (side, value) = if is_acc(left) {
        (AccumulatorSide::Left, right)
    } else if is_acc(right) {
        (AccumulatorSide::Right, left)
    } else {
        return None;
    };
    if mentions(value, acc) {
        return None;
    }
    Some(AssociativeStep { op, side, lets, value })
}
