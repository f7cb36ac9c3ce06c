//! Dual numbers: the interpreter's forward-mode differentiation, the oracle that `#[jvp]`
//! companions (`crate::ad`) are tested against. A float that depends on an input tangent is a
//! [`Datum::Dual32`]/[`Datum::Dual64`] (value, tangent); every other float is a plain one (tangent
//! zero). The evaluator runs the *primal* program unchanged: the scalar operations below carry
//! the tangents, and [`max_tangent`] gives a `max`/`min` reduction the tangent of its chosen
//! element. Shares no code with `crate::ad`; the rules are those of DESIGN.md §1.2 (kinks: the
//! argument returned, the first on ties; 0 for `abs` at 0 and for step functions).

use super::datum::Datum;
use super::scalar;
use super::value::RuntimeError;
use crate::ops::{BinaryOp, Func, Scalar, UnaryOp};
use std::rc::Rc;

type Result<T> = std::result::Result<T, RuntimeError>;

/// The value and tangent of a float datum (dual or plain: tangent 0), as plain datums of its
/// type; `None` for anything else.
pub(super) fn split(datum: &Datum) -> Option<(Datum, Datum)> {
    Some(match *datum {
        Datum::F32(value) => (Datum::F32(value), Datum::F32(0.0)),
        Datum::F64(value) => (Datum::F64(value), Datum::F64(0.0)),
        Datum::Dual32(value, tangent) => (Datum::F32(value), Datum::F32(tangent)),
        Datum::Dual64(value, tangent) => (Datum::F64(value), Datum::F64(tangent)),
        _ => return None,
    })
}

/// A dual of a plain value and tangent of one float type.
fn join(value: Datum, tangent: Datum) -> Result<Datum> {
    match (value, tangent) {
        (Datum::F32(value), Datum::F32(tangent)) => Ok(Datum::Dual32(value, tangent)),
        (Datum::F64(value), Datum::F64(tangent)) => Ok(Datum::Dual64(value, tangent)),
        (value, tangent) => Err(RuntimeError::internal(format!(
            "a dual number of a {} and a {}",
            value.kind_name(),
            tangent.kind_name()
        ))),
    }
}

fn is_dual(datum: &Datum) -> bool {
    matches!(datum, Datum::Dual32(..) | Datum::Dual64(..))
}

fn as_f64(datum: &Datum) -> f64 {
    match *datum {
        Datum::F32(value) | Datum::Dual32(value, _) => f64::from(value),
        Datum::F64(value) | Datum::Dual64(value, _) => value,
        _ => f64::NAN,
    }
}

/// `value` as a plain float of `like`'s type.
fn float_as(value: f64, like: &Datum) -> Datum {
    match like {
        Datum::F32(_) | Datum::Dual32(..) => Datum::F32(value as f32),
        _ => Datum::F64(value),
    }
}

/// A float (or a tuple's floats) as a dual number with tangent 0: when differentiating, every
/// float is one, constants included, so that `0 · ∞` in any term shows as NaN.
pub(super) fn promote(datum: &Datum) -> Datum {
    match datum {
        Datum::F32(value) => Datum::Dual32(*value, 0.0),
        Datum::F64(value) => Datum::Dual64(*value, 0.0),
        Datum::Tuple(fields)
            if fields.iter().any(|field| matches!(field, Datum::F32(_) | Datum::F64(_) | Datum::Tuple(_))) =>
        {
            Datum::Tuple(fields.iter().map(promote).collect::<Rc<[Datum]>>())
        }
        other => other.clone(),
    }
}

/// The plain value of a datum: duals lose their tangent, inside tuples too.
pub(super) fn primal(datum: &Datum) -> Datum {
    match datum {
        Datum::Dual32(value, _) => Datum::F32(*value),
        Datum::Dual64(value, _) => Datum::F64(*value),
        Datum::Tuple(fields) => Datum::Tuple(fields.iter().map(primal).collect::<Rc<[Datum]>>()),
        other => other.clone(),
    }
}

pub(super) fn unary(op: UnaryOp, operand: &Datum) -> Option<Result<Datum>> {
    let (value, tangent) = split(operand).filter(|_| is_dual(operand))?;
    Some((|| join(scalar::unary(op, value)?, scalar::unary(op, tangent)?))())
}

/// `left op right` when either is a dual: the value as plain arithmetic gives it, the tangent
/// by the sum, product and quotient rules in the same float type.
pub(super) fn binary(op: BinaryOp, left: &Datum, right: &Datum) -> Option<Result<Datum>> {
    if !is_dual(left) && !is_dual(right) {
        return None;
    }
    let (Some((a, da)), Some((b, db))) = (split(left), split(right)) else {
        return Some(Err(RuntimeError::internal(format!(
            "`{}` applied to {} and {}",
            op.symbol(),
            left.kind_name(),
            right.kind_name()
        ))));
    };
    // Textbook dual numbers: a plain operand is a dual with tangent 0, and its terms count (so
    // `inf * 2.0` has the tangent `dinf * 2.0 + inf * 0`, NaN). Where `ad` leaves such a term
    // out (a structural zero), its answer is finite where this one is NaN, never the reverse.
    let (da, db) = (Some(da), Some(db));
    Some((|| {
        let value = scalar::binary(op, a.clone(), b.clone())?;
        if !matches!(value, Datum::F32(_) | Datum::F64(_)) {
            return Ok(value);
        }
        let arithmetic = |op, x: Datum, y: Datum| scalar::binary(op, x, y);
        let sum = |x: Option<Datum>, y: Option<Datum>| -> Result<Option<Datum>> {
            Ok(match (x, y) {
                (Some(x), Some(y)) => Some(arithmetic(BinaryOp::Add, x, y)?),
                (x, y) => x.or(y),
            })
        };
        let negated = |x: Option<Datum>| x.map(|x| scalar::unary(UnaryOp::Neg, x)).transpose();
        let tangent = match op {
            BinaryOp::Add => sum(da, db)?,
            BinaryOp::Sub => sum(da, negated(db)?)?,
            BinaryOp::Mul => sum(
                da.map(|da| arithmetic(BinaryOp::Mul, da, b.clone())).transpose()?,
                db.map(|db| arithmetic(BinaryOp::Mul, a.clone(), db)).transpose()?,
            )?,
            // (da - (a / b) db) / b
            BinaryOp::Div => {
                let shifted =
                    sum(da, negated(db.map(|db| arithmetic(BinaryOp::Mul, value.clone(), db)).transpose()?)?)?;
                shifted.map(|shifted| arithmetic(BinaryOp::Div, shifted, b)).transpose()?
            }
            // a - b trunc(a / b)
            BinaryOp::Rem => {
                let quotient = scalar::call(Func::Trunc, vec![arithmetic(BinaryOp::Div, a, b)?])?;
                sum(da, negated(db.map(|db| arithmetic(BinaryOp::Mul, quotient, db)).transpose()?)?)?
            }
            _ => return Err(RuntimeError::internal(format!("`{}` of floats gave a float", op.symbol()))),
        };
        match tangent {
            Some(tangent) => join(value, tangent),
            None => Ok(value),
        }
    })())
}

/// A cast of a dual: to a float, the tangent converted too; to an integer, the value only.
pub(super) fn cast(value: &Datum, to: Scalar) -> Option<Result<Datum>> {
    let (value, tangent) = split(value).filter(|_| is_dual(value))?;
    Some((|| {
        let converted = scalar::cast(value, to)?;
        if to.is_float() {
            join(converted, scalar::cast(tangent, to)?)
        } else {
            Ok(converted)
        }
    })())
}

/// `func(args…)` when an argument is a dual: the value from the plain arguments, the tangent
/// from the derivative table below.
pub(super) fn call(func: Func, args: &[Datum]) -> Option<Result<Datum>> {
    if !args.iter().any(is_dual) {
        return None;
    }
    Some((|| {
        let plain: Vec<Datum> = args.iter().map(primal).collect();
        let value = scalar::call(func, plain)?;
        if !matches!(value, Datum::F32(_) | Datum::F64(_)) {
            return Ok(value);
        }
        let x: Vec<f64> = args.iter().map(as_f64).collect();
        // Plain float arguments have tangent 0 (their terms count, as for arithmetic).
        let dx: Vec<Option<f64>> = args.iter().map(|arg| split(arg).map(|(_, tangent)| as_f64(&tangent))).collect();
        match tangent_of(func, &x, &dx, as_f64(&value), args) {
            Some(tangent) => join(value.clone(), float_as(tangent, &value)),
            None => Ok(value),
        }
    })())
}

/// The tangent of `func` at `x` (its result `y`) for argument tangents `dx` (`None` for an
/// integer argument), computed in f64; `None` for a function with no float slope.
fn tangent_of(func: Func, x: &[f64], dx: &[Option<f64>], y: f64, args: &[Datum]) -> Option<f64> {
    let a = x[0];
    let argument = |k: usize| x.get(k).copied().unwrap_or(f64::NAN);
    let slope = |k: usize| dx.get(k).copied().flatten();
    let sum = |terms: &[Option<f64>]| terms.iter().flatten().copied().reduce(|x, y| x + y);
    let da = slope(0);
    match func {
        Func::Signum | Func::Floor | Func::Ceil | Func::Round | Func::Trunc => None,
        Func::Fract => da,
        Func::Abs => da.map(|da| {
            if a > 0.0 {
                da
            } else if a < 0.0 {
                -da
            } else {
                0.0
            }
        }),
        Func::Sqrt => da.map(|da| da / (2.0 * y)),
        Func::Cbrt => da.map(|da| da / (3.0 * y * y)),
        Func::Recip => da.map(|da| -da * y * y),
        Func::ToDegrees => da.map(f64::to_degrees),
        Func::ToRadians => da.map(f64::to_radians),
        Func::Exp => da.map(|da| da * y),
        Func::Exp2 => da.map(|da| da * y * std::f64::consts::LN_2),
        Func::ExpM1 => da.map(|da| da * (y + 1.0)),
        Func::Ln => da.map(|da| da / a),
        Func::Ln1p => da.map(|da| da / (1.0 + a)),
        Func::Log2 => da.map(|da| da / (a * std::f64::consts::LN_2)),
        Func::Log10 => da.map(|da| da / (a * std::f64::consts::LN_10)),
        Func::Sin => da.map(|da| da * a.cos()),
        Func::Cos => da.map(|da| -da * a.sin()),
        Func::Tan => da.map(|da| da * (1.0 + y * y)),
        Func::Asin => da.map(|da| da / (1.0 - a * a).sqrt()),
        Func::Acos => da.map(|da| -da / (1.0 - a * a).sqrt()),
        Func::Atan => da.map(|da| da / (1.0 + a * a)),
        Func::Sinh => da.map(|da| da * a.cosh()),
        Func::Cosh => da.map(|da| da * a.sinh()),
        Func::Tanh => da.map(|da| da * (1.0 - y * y)),
        Func::Asinh => da.map(|da| da / (a * a + 1.0).sqrt()),
        Func::Acosh => da.map(|da| da / (a * a - 1.0).sqrt()),
        Func::Atanh => da.map(|da| da / (1.0 - a * a)),
        Func::Powi => da.map(|da| integer_power_tangent(a, da, &args[1])),
        Func::Pow | Func::Powf if split(&args[1]).is_none() => da.map(|da| integer_power_tangent(a, da, &args[1])),
        Func::Pow | Func::Powf => {
            let e = argument(1);
            sum(&[da.map(|da| da * e * a.powf(e - 1.0)), slope(1).map(|de| de * y * a.ln())])
        }
        Func::Atan2 => {
            let norm = a * a + argument(1) * argument(1);
            sum(&[da.map(|da| argument(1) * da), slope(1).map(|dx| -(a * dx))]).map(|t| t / norm)
        }
        Func::Hypot => sum(&[da.map(|da| a * da), slope(1).map(|db| argument(1) * db)]).map(|t| t / y),
        Func::Copysign => da.map(|da| da * 1f64.copysign(a) * 1f64.copysign(argument(1))),
        Func::MulAdd => sum(&[da.map(|da| da * argument(1)), slope(1).map(|db| a * db), slope(2)]),
        Func::Min | Func::Max => {
            let other = argument(1);
            let other_wins = if func == Func::Min { other < a } else { other > a };
            Some(if other_wins || a.is_nan() { slope(1) } else { da }.unwrap_or(0.0))
        }
        Func::Clamp => Some(
            if a < argument(1) {
                slope(1)
            } else if a > argument(2) {
                slope(2)
            } else {
                da
            }
            .unwrap_or(0.0),
        ),
        Func::IsNan
        | Func::IsFinite
        | Func::IsInfinite
        | Func::RemEuclid
        | Func::DivEuclid
        | Func::CountOnes
        | Func::CountZeros
        | Func::LeadingZeros
        | Func::TrailingZeros => None,
    }
}

/// `d(a^n) = n a^(n-1) da` for an integer `n`, 0 for `n = 0`.
fn integer_power_tangent(a: f64, da: f64, n: &Datum) -> f64 {
    match n.to_i64() {
        Some(0) | None => 0.0,
        Some(n) => da * n as f64 * a.powf(n as f64 - 1.0),
    }
}

/// The tangent of a `max`/`min` reduction: that of the first element equal to the result
/// (none for an empty range or a result no element has). `values` are the body's values in
/// index order; `result` the reduction's plain value.
pub(super) fn max_tangent(values: &[Datum], result: &Datum) -> Result<Datum> {
    let Some((result_value, zero)) = split(result) else { return Ok(result.clone()) };
    let chosen = values.iter().find_map(|value| {
        let (value, tangent) = split(value)?;
        matches!(scalar::binary(BinaryOp::Eq, value, result_value.clone()), Ok(Datum::Bool(true))).then_some(tangent)
    });
    join(result_value, chosen.unwrap_or(zero))
}

/// The tangents of an extern call's float arguments (0 for a plain one), if any argument is a
/// dual number; `None` when none is.
pub(super) fn tangents_of_arguments(arguments: &[Datum]) -> Option<Vec<super::value::Value>> {
    if !arguments.iter().any(is_dual) {
        return None;
    }
    let floats = arguments.iter().filter_map(split);
    Some(floats.map(|(_, tangent)| tangent.to_value()).collect())
}

/// The tangent part of a result: each float's tangent (0 for a plain one), integers 0 and
/// booleans `false` (tangents of integer and boolean parts are zero).
pub(super) fn tangent(datum: &Datum) -> Datum {
    match datum {
        Datum::Dual32(_, tangent) => Datum::F32(*tangent),
        Datum::Dual64(_, tangent) => Datum::F64(*tangent),
        Datum::F32(_) => Datum::F32(0.0),
        Datum::F64(_) => Datum::F64(0.0),
        Datum::Int(ty, _) => Datum::Int(*ty, 0),
        Datum::Bool(_) => Datum::Bool(false),
        Datum::Tuple(fields) => Datum::Tuple(fields.iter().map(tangent).collect::<Rc<[Datum]>>()),
        Datum::Array(view) => view.map(tangent),
    }
}

/// A value with a tangent: floats become duals, elementwise; the two must have one shape.
pub(super) fn with_tangent(value: &Datum, tangent_of_value: &Datum) -> Result<Datum> {
    let mismatch = || RuntimeError::new("a tangent must have its parameter's type and shape".to_string());
    match (value, tangent_of_value) {
        (Datum::F32(value), Datum::F32(tangent)) => Ok(Datum::Dual32(*value, *tangent)),
        (Datum::F64(value), Datum::F64(tangent)) => Ok(Datum::Dual64(*value, *tangent)),
        (Datum::Tuple(values), Datum::Tuple(tangents)) if values.len() == tangents.len() => {
            let fields = values.iter().zip(tangents.iter()).map(|(v, t)| with_tangent(v, t));
            Ok(Datum::Tuple(fields.collect::<Result<Rc<[Datum]>>>()?))
        }
        (Datum::Array(values), Datum::Array(tangents)) if values.shape() == tangents.shape() => {
            values.zip_with(tangents, with_tangent).map(Datum::Array)
        }
        (Datum::Array(_), _) | (Datum::Tuple(_), _) => Err(mismatch()),
        // Integers and booleans have no tangent.
        (value, _) => Ok(value.clone()),
    }
}
