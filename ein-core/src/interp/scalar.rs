//! Scalar operations of the interpreter, exactly as `docs/semantics.md` fixes them: Rust float
//! arithmetic, wrapping integer arithmetic, an error for integer division by zero, Rust `as`
//! casts, and std's functions for the built-in ones.

use super::datum::Datum;
use super::value::RuntimeError;
use crate::ir::Literal;
use crate::ops::{BinaryOp, Failure, FloatAnswer, FloatOperand, Func, ReduceOp, Scalar, UnaryOp};
use std::rc::Rc;

type Result<T> = std::result::Result<T, RuntimeError>;

/// A literal converted to its node's scalar type with Rust `as` semantics.
pub(super) fn literal(literal: Literal, to: Scalar) -> Result<Datum> {
    match literal {
        Literal::Int(value) => cast(Datum::i64(value), to),
        Literal::Float(_, as_f32) if to == Scalar::F32 => Ok(Datum::F32(as_f32)),
        Literal::Float(value, _) if to != Scalar::Bool => cast(Datum::F64(value), to),
        Literal::Bool(value) if to == Scalar::Bool => Ok(Datum::Bool(value)),
        _ => Err(RuntimeError::internal(format!("literal {literal:?} cannot have type {to}"))),
    }
}

pub(super) fn unary(op: UnaryOp, operand: Datum) -> Result<Datum> {
    if let Some(dual) = super::dual::unary(op, &operand) {
        return dual;
    }
    Ok(match (op, operand) {
        (UnaryOp::Neg, Datum::F32(value)) => Datum::F32(-value),
        (UnaryOp::Neg, Datum::F64(value)) => Datum::F64(-value),
        // Wrapping, unsigned types included (`0u8.wrapping_neg()`).
        (UnaryOp::Neg, Datum::Int(ty, value)) => Datum::int(ty, -value),
        (UnaryOp::Not, Datum::Bool(value)) => Datum::Bool(!value),
        // The bitwise complement: `!v` is `-v - 1` in two's complement, wrapped to the type.
        (UnaryOp::Not, Datum::Int(ty, value)) => Datum::int(ty, !value),
        (op, operand) => {
            return Err(RuntimeError::internal(format!("{op:?} applied to a {}", operand.kind_name())));
        }
    })
}

/// Arithmetic and comparison on two floats of one type.
macro_rules! float_binary {
    ($op:expr, $left:expr, $right:expr, $variant:ident) => {
        match $op {
            BinaryOp::Add => Datum::$variant($left + $right),
            BinaryOp::Sub => Datum::$variant($left - $right),
            BinaryOp::Mul => Datum::$variant($left * $right),
            BinaryOp::Div => Datum::$variant($left / $right),
            BinaryOp::Rem => Datum::$variant($left % $right),
            BinaryOp::Eq => Datum::Bool($left == $right),
            BinaryOp::Ne => Datum::Bool($left != $right),
            BinaryOp::Lt => Datum::Bool($left < $right),
            BinaryOp::Le => Datum::Bool($left <= $right),
            BinaryOp::Gt => Datum::Bool($left > $right),
            BinaryOp::Ge => Datum::Bool($left >= $right),
            BinaryOp::And
            | BinaryOp::Or
            | BinaryOp::BitAnd
            | BinaryOp::BitOr
            | BinaryOp::BitXor
            | BinaryOp::Shl
            | BinaryOp::Shr => return Err(operator_mismatch($op, stringify!($variant))),
        }
    };
}

/// Wrapping arithmetic and comparison on two integers of type `ty`: computed exactly in
/// `i128` (every operand of a 64-bit or narrower type fits, and so does every product), then
/// wrapped into the type, which is what Rust's `wrapping_*` methods give. Truncating division
/// and remainder as Rust's; `MIN / -1` wraps to `MIN`. Bitwise operators act on the two's
/// complement bits (an `i128` of the type's value has them, sign-extended); a shift's amount is
/// wrapped to the type's bits (`wrapping_shl`), `>>` arithmetic (an unsigned value is
/// non-negative, so that is logical for it).
fn int_binary(op: BinaryOp, ty: Scalar, left: i128, right: i128) -> Result<Datum> {
    Ok(match op {
        BinaryOp::Add => Datum::int(ty, left + right),
        BinaryOp::Sub => Datum::int(ty, left - right),
        BinaryOp::Mul => Datum::int(ty, left.wrapping_mul(right)),
        BinaryOp::Div | BinaryOp::Rem if right == 0 => return Err(division_by_zero()),
        BinaryOp::Div => Datum::int(ty, left / right),
        BinaryOp::Rem => Datum::int(ty, left % right),
        BinaryOp::Eq => Datum::Bool(left == right),
        BinaryOp::Ne => Datum::Bool(left != right),
        BinaryOp::Lt => Datum::Bool(left < right),
        BinaryOp::Le => Datum::Bool(left <= right),
        BinaryOp::Gt => Datum::Bool(left > right),
        BinaryOp::Ge => Datum::Bool(left >= right),
        BinaryOp::BitAnd => Datum::int(ty, left & right),
        BinaryOp::BitOr => Datum::int(ty, left | right),
        BinaryOp::BitXor => Datum::int(ty, left ^ right),
        BinaryOp::Shl | BinaryOp::Shr => {
            let Some(bits) = ty.bits() else { return Err(operator_mismatch(op, ty.name())) };
            // The amount's low bits, as `n as u32` then the mask of `wrapping_shl` keep them.
            let amount = (right & i128::from(bits - 1)) as u32;
            match op {
                BinaryOp::Shl => Datum::int(ty, left.wrapping_shl(amount)),
                _ => Datum::int(ty, left >> amount),
            }
        }
        BinaryOp::And | BinaryOp::Or => return Err(operator_mismatch(op, ty.name())),
    })
}

fn division_by_zero() -> RuntimeError {
    RuntimeError::new("integer division by zero")
}

fn operator_mismatch(op: BinaryOp, operands: &str) -> RuntimeError {
    RuntimeError::internal(format!("`{}` applied to {operands} operands", op.symbol()))
}

pub(super) fn binary(op: BinaryOp, left: Datum, right: Datum) -> Result<Datum> {
    if let Some(dual) = super::dual::binary(op, &left, &right) {
        return dual;
    }
    Ok(match (left, right) {
        (Datum::F32(left), Datum::F32(right)) => float_binary!(op, left, right, F32),
        (Datum::F64(left), Datum::F64(right)) => float_binary!(op, left, right, F64),
        (Datum::Int(ty, left), Datum::Int(other, right)) if ty == other => int_binary(op, ty, left, right)?,
        (Datum::Bool(left), Datum::Bool(right)) => match op {
            BinaryOp::And => Datum::Bool(left && right),
            BinaryOp::Or => Datum::Bool(left || right),
            BinaryOp::Eq => Datum::Bool(left == right),
            BinaryOp::Ne => Datum::Bool(left != right),
            BinaryOp::Lt => Datum::Bool(!left & right),
            BinaryOp::Le => Datum::Bool(left <= right),
            BinaryOp::Gt => Datum::Bool(left & !right),
            BinaryOp::Ge => Datum::Bool(left >= right),
            BinaryOp::BitAnd => Datum::Bool(left & right),
            BinaryOp::BitOr => Datum::Bool(left | right),
            BinaryOp::BitXor => Datum::Bool(left ^ right),
            _ => return Err(operator_mismatch(op, "bool")),
        },
        // Tuples compare for (in)equality field by field, like Rust's tuple `PartialEq`.
        (Datum::Tuple(left), Datum::Tuple(right)) if matches!(op, BinaryOp::Eq | BinaryOp::Ne) => {
            let equal = tuples_equal(&left, &right)?;
            Datum::Bool(if op == BinaryOp::Eq { equal } else { !equal })
        }
        (left, right) => {
            return Err(RuntimeError::internal(format!(
                "`{}` applied to {} and {}",
                op.symbol(),
                left.kind_name(),
                right.kind_name()
            )));
        }
    })
}

fn tuples_equal(left: &Rc<[Datum]>, right: &Rc<[Datum]>) -> Result<bool> {
    if left.len() != right.len() {
        return Err(RuntimeError::internal("`==` applied to tuples of different lengths"));
    }
    for (l, r) in left.iter().zip(right.iter()) {
        if !matches!(binary(BinaryOp::Eq, l.clone(), r.clone())?, Datum::Bool(true)) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// A scalar function, by its row of the function table (note [one table of functions] in
/// `ops.rs`): std's function on floats; on integers the exact `i128` answer wrapped into the
/// type (wrapping `abs` and `pow`, as ein's arithmetic). Bounds and divisors are checked first,
/// so a failing call is an ein error, never a panic of the interpreter.
pub(super) fn call(func: Func, arguments: Vec<Datum>) -> Result<Datum> {
    if arguments.len() != func.arity() {
        return Err(RuntimeError::internal(format!(
            "`{}` takes {} arguments, given {}",
            func.name(),
            func.arity(),
            arguments.len()
        )));
    }
    if let Some(dual) = super::dual::call(func, &arguments) {
        return dual;
    }
    check_failure(func, &arguments)?;
    let mismatch = || function_mismatch(func, &arguments);
    match &arguments[0] {
        Datum::F32(_) => {
            let floats: Option<Vec<FloatOperand<f32>>> = arguments
                .iter()
                .map(|argument| match *argument {
                    Datum::F32(value) => Some(FloatOperand::Float(value)),
                    _ => exponent(argument),
                })
                .collect();
            match func.apply_f32(&floats.ok_or_else(mismatch)?) {
                Some(FloatAnswer::Float(value)) => Ok(Datum::F32(value)),
                Some(FloatAnswer::Bool(value)) => Ok(Datum::Bool(value)),
                None => Err(mismatch()),
            }
        }
        Datum::F64(_) => {
            let floats: Option<Vec<FloatOperand<f64>>> = arguments
                .iter()
                .map(|argument| match *argument {
                    Datum::F64(value) => Some(FloatOperand::Float(value)),
                    _ => exponent(argument),
                })
                .collect();
            match func.apply_f64(&floats.ok_or_else(mismatch)?) {
                Some(FloatAnswer::Float(value)) => Ok(Datum::F64(value)),
                Some(FloatAnswer::Bool(value)) => Ok(Datum::Bool(value)),
                None => Err(mismatch()),
            }
        }
        &Datum::Int(ty, _) => {
            let integers = arguments.iter().map(|argument| match argument {
                Datum::Int(_, value) => Some(*value),
                _ => None,
            });
            let integers: Option<Vec<i128>> = integers.collect();
            let bits = ty.bits().ok_or_else(mismatch)?;
            match (func.apply_int(&integers.ok_or_else(mismatch)?, bits), func.output().scalar(ty)) {
                (Some(value), Scalar::Bool) => Ok(Datum::Bool(value != 0)),
                (Some(value), result) => Ok(Datum::int(result, value)),
                (None, _) => Err(mismatch()),
            }
        }
        _ => Err(mismatch()),
    }
}

/// An `i32` argument of a float function (`powi`'s exponent).
fn exponent<F>(argument: &Datum) -> Option<FloatOperand<F>> {
    match *argument {
        Datum::Int(Scalar::I32, value) => i32::try_from(value).ok().map(FloatOperand::I32),
        _ => None,
    }
}

/// The run-time errors of calls: an integer divisor of zero, `clamp` bounds out of order.
fn check_failure(func: Func, arguments: &[Datum]) -> Result<()> {
    match (func.failure(), arguments) {
        (Failure::Never, _) => Ok(()),
        (Failure::ZeroDivisor, [_, Datum::Int(_, 0)]) => Err(division_by_zero()),
        (Failure::ZeroDivisor, _) => Ok(()),
        (Failure::Bounds, [_, low, high]) => {
            let in_order = match (low, high) {
                (Datum::F32(low), Datum::F32(high)) => low <= high,
                (Datum::F64(low), Datum::F64(high)) => low <= high,
                (Datum::Int(_, low), Datum::Int(_, high)) => low <= high,
                _ => return Err(function_mismatch(func, arguments)),
            };
            if in_order {
                Ok(())
            } else {
                Err(clamp_bounds(func, low, high))
            }
        }
        (Failure::Bounds, _) => Err(function_mismatch(func, arguments)),
    }
}

/// `clamp`'s error, worded as the runtime's `ein::__private::Num::clamp` words it.
fn clamp_bounds(func: Func, low: &Datum, high: &Datum) -> RuntimeError {
    RuntimeError::new(format!(
        "`{}` needs min <= max (and no NaN bound), but min is {} and max is {}",
        func.name(),
        show(low),
        show(high)
    ))
}

/// A scalar as Rust's `Debug` writes it.
fn show(value: &Datum) -> String {
    match value {
        Datum::F32(value) => format!("{value:?}"),
        Datum::F64(value) => format!("{value:?}"),
        Datum::Int(_, value) => value.to_string(),
        other => other.kind_name().to_string(),
    }
}

fn call_binary(func: Func, left: Datum, right: Datum) -> Result<Datum> {
    call(func, vec![left, right])
}

fn function_mismatch(func: Func, arguments: &[Datum]) -> RuntimeError {
    let kinds: Vec<&str> = arguments.iter().map(Datum::kind_name).collect();
    RuntimeError::internal(format!("`{}` applied to {}", func.name(), kinds.join(", ")))
}

/// A float converted with Rust `as`: to a float, rounded to nearest; to an integer, truncated
/// toward zero and saturated at the type's bounds, NaN becoming 0.
fn cast_float(value: f64, to: Scalar) -> Result<Datum> {
    Ok(match to {
        Scalar::F32 => Datum::F32(value as f32),
        Scalar::F64 => Datum::F64(value),
        Scalar::Bool => return Err(RuntimeError::internal("a number cannot be cast to bool")),
        int => match int.saturate(value) {
            Some(value) => Datum::Int(int, value),
            None => return Err(RuntimeError::internal(format!("a cast to {int}"))),
        },
    })
}

/// Rust `as`: float → int saturates (NaN → 0), int → int wraps or extends, int → float rounds
/// to nearest, bool → number is 0 or 1 (floats included, as `b as u8 as f32`).
pub(super) fn cast(value: Datum, to: Scalar) -> Result<Datum> {
    if let Some(dual) = super::dual::cast(&value, to) {
        return dual;
    }
    Ok(match value {
        // An f32 widens to f64 exactly, so casting through f64 rounds once, as Rust does.
        Datum::F32(value) if to == Scalar::F32 => Datum::F32(value),
        Datum::F32(value) => cast_float(f64::from(value), to)?,
        Datum::F64(value) => cast_float(value, to)?,
        Datum::Int(_, value) => match to {
            // One rounding from the exact integer, as Rust's `as` does.
            Scalar::F32 => Datum::F32(value as f32),
            Scalar::F64 => Datum::F64(value as f64),
            Scalar::Bool => return Err(RuntimeError::internal("a number cannot be cast to bool")),
            int => Datum::int(int, value),
        },
        Datum::Bool(value) if to == Scalar::Bool => Datum::Bool(value),
        Datum::Bool(value) => cast(Datum::Int(Scalar::U8, i128::from(value)), to)?,
        other => return Err(RuntimeError::internal(format!("cannot cast a {} to {to}", other.kind_name()))),
    })
}

/// The starting accumulator of `sum`, `prod`, `max`, `min`, `all` and `any` at type `ty`.
pub(super) fn identity(op: ReduceOp, ty: Scalar) -> Result<Datum> {
    use Scalar as S;
    let range = ty.int_range();
    Ok(match (op, ty, range) {
        (ReduceOp::Sum, S::F32, _) => Datum::F32(0.0),
        (ReduceOp::Sum, S::F64, _) => Datum::F64(0.0),
        (ReduceOp::Sum, int, Some(_)) => Datum::Int(int, 0),
        (ReduceOp::Prod, S::F32, _) => Datum::F32(1.0),
        (ReduceOp::Prod, S::F64, _) => Datum::F64(1.0),
        (ReduceOp::Prod, int, Some(_)) => Datum::Int(int, 1),
        (ReduceOp::Max, S::F32, _) => Datum::F32(f32::NEG_INFINITY),
        (ReduceOp::Max, S::F64, _) => Datum::F64(f64::NEG_INFINITY),
        (ReduceOp::Max, int, Some((low, _))) => Datum::Int(int, low),
        (ReduceOp::Min, S::F32, _) => Datum::F32(f32::INFINITY),
        (ReduceOp::Min, S::F64, _) => Datum::F64(f64::INFINITY),
        (ReduceOp::Min, int, Some((_, high))) => Datum::Int(int, high),
        (ReduceOp::All, S::Bool, _) => Datum::Bool(true),
        (ReduceOp::Any, S::Bool, _) => Datum::Bool(false),
        (op, ty, _) => return Err(RuntimeError::internal(format!("`{}` reduction of type {ty}", op.name()))),
    })
}

/// One step of `sum`, `prod`, `max`, `min`, `all` or `any`: `accumulator ⊕ value`.
pub(super) fn combine(op: ReduceOp, accumulator: Datum, value: Datum) -> Result<Datum> {
    match op {
        ReduceOp::Sum => binary(BinaryOp::Add, accumulator, value),
        ReduceOp::Prod => binary(BinaryOp::Mul, accumulator, value),
        ReduceOp::Max => call_binary(Func::Max, accumulator, value),
        ReduceOp::Min => call_binary(Func::Min, accumulator, value),
        ReduceOp::All => binary(BinaryOp::And, accumulator, value),
        ReduceOp::Any => binary(BinaryOp::Or, accumulator, value),
        ReduceOp::ArgMax | ReduceOp::ArgMin => {
            Err(RuntimeError::internal(format!("`{}` has no accumulator step", op.name())))
        }
    }
}
