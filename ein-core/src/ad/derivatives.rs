//! The tangent of each scalar function of `ops.rs` (one row per function), built as IR: exact
//! derivatives of the mathematical functions (ein's own `exp`, `ln`, `sin`, `cos`, `tanh` are
//! those functions to rounding). At kinks: `abs` has slope 0 at 0, `min`/`max`/`clamp` pass the
//! tangent of the argument they return (the first on ties), `floor`/`round`/`signum`/… have
//! slope 0, `copysign` the sign it gives.

use super::build::{add, binary, call as call_of, float_like, negate, select, Block};
use super::jvp::{Dual, Jvp};
use crate::ir::{BinaryOp, Expr, Type};
use crate::ops::Func;
use std::f64::consts::{LN_10, LN_2};

/// The primal and tangent of `func(args…)`, whose result (of type `ty`) is a float.
pub(super) fn call(jvp: &mut Jvp, func: Func, args: &[Expr], ty: &Type, block: &mut Block) -> syn::Result<Dual> {
    let mut duals = Vec::with_capacity(args.len());
    for arg in args {
        let mut dual = jvp.dual(arg, block)?;
        dual.primal = jvp.atom(dual.primal, block);
        duals.push(dual);
    }
    let primals: Vec<Expr> = duals.iter().map(|dual| dual.primal.clone()).collect();
    if duals.iter().all(|dual| dual.tangent.is_none()) {
        return Ok(Dual::constant(call_of(func, primals)));
    }
    debug_assert!(matches!(ty, Type::Scalar(_)));
    let result = jvp.atom(call_of(func, primals.clone()), block);
    let x = primals[0].clone();
    let dx = duals[0].tangent.clone();
    let operand = |position: usize| (primals[position].clone(), duals[position].tangent.clone());
    let mul = |a: Expr, b: Expr| binary(BinaryOp::Mul, a, b);
    let div = |a: Expr, b: Expr| binary(BinaryOp::Div, a, b);
    let plus = |a: Expr, b: Expr| binary(BinaryOp::Add, a, b);
    let minus = |a: Expr, b: Expr| binary(BinaryOp::Sub, a, b);
    let number = |value: f64| float_like(value, &x);
    // `dx · factor`, zero when `dx` is.
    let times = |tangent: Option<Expr>, factor: Expr| tangent.map(|t| mul(t, factor));
    let square = |value: &Expr| mul(value.clone(), value.clone());
    let sqrt = |value: Expr| call_of(Func::Sqrt, vec![value]);
    let y = result.clone();
    let tangent = match func {
        Func::Signum | Func::Floor | Func::Ceil | Func::Round | Func::Trunc => None,
        Func::Fract => dx,
        Func::Abs => dx.map(|t| {
            let positive = binary(BinaryOp::Gt, x.clone(), number(0.0));
            let negative = binary(BinaryOp::Lt, x.clone(), number(0.0));
            select(positive, t.clone(), select(negative, negate(t), number(0.0)))
        }),
        Func::Sqrt => dx.map(|t| div(t, mul(number(2.0), y.clone()))),
        Func::Cbrt => dx.map(|t| div(t, mul(number(3.0), square(&y)))),
        Func::Recip => dx.map(|t| negate(mul(t, square(&y)))),
        Func::ToDegrees | Func::ToRadians => dx.map(|t| call_of(func, vec![t])),
        Func::Exp => times(dx, y.clone()),
        Func::Exp2 => times(dx, mul(y.clone(), number(LN_2))),
        Func::ExpM1 => times(dx, plus(y.clone(), number(1.0))),
        Func::Ln => dx.map(|t| div(t, x.clone())),
        Func::Ln1p => dx.map(|t| div(t, plus(x.clone(), number(1.0)))),
        Func::Log2 => dx.map(|t| div(t, mul(x.clone(), number(LN_2)))),
        Func::Log10 => dx.map(|t| div(t, mul(x.clone(), number(LN_10)))),
        Func::Sin => times(dx, call_of(Func::Cos, vec![x.clone()])),
        Func::Cos => dx.map(|t| negate(mul(t, call_of(Func::Sin, vec![x.clone()])))),
        Func::Tan => times(dx, plus(number(1.0), square(&y))),
        Func::Asin => dx.map(|t| div(t, sqrt(minus(number(1.0), square(&x))))),
        Func::Acos => dx.map(|t| negate(div(t, sqrt(minus(number(1.0), square(&x)))))),
        Func::Atan => dx.map(|t| div(t, plus(number(1.0), square(&x)))),
        Func::Sinh => times(dx, call_of(Func::Cosh, vec![x.clone()])),
        Func::Cosh => times(dx, call_of(Func::Sinh, vec![x.clone()])),
        Func::Tanh => times(dx, minus(number(1.0), square(&y))),
        Func::Asinh => dx.map(|t| div(t, sqrt(plus(square(&x), number(1.0))))),
        Func::Acosh => dx.map(|t| div(t, sqrt(minus(square(&x), number(1.0))))),
        Func::Atanh => dx.map(|t| div(t, minus(number(1.0), square(&x)))),
        // x^n with an integer n: n x^(n-1), and 0 for n = 0 (no 0 · ∞ at x = 0).
        Func::Powi => {
            let (n, _) = operand(1);
            dx.map(|t| integer_power_slope(t, &x, n, func))
        }
        Func::Pow | Func::Powf if !is_float(&primals[1]) => {
            let (n, _) = operand(1);
            dx.map(|t| integer_power_slope(t, &x, n, func))
        }
        // x^e: e x^(e-1) dx + x^e ln(x) de.
        Func::Pow | Func::Powf => {
            let (e, de) = operand(1);
            let power = |exponent: Expr| call_of(Func::Powf, vec![x.clone(), exponent]);
            add(
                times(dx, mul(e.clone(), power(minus(e, number(1.0))))),
                times(de, mul(y.clone(), call_of(Func::Ln, vec![x.clone()]))),
            )
        }
        // atan2(y, x) for the receiver y: (x dy - y dx) / (x² + y²), both scaled by the larger
        // magnitude `s` so that the squares neither overflow nor underflow: (x' dy - y' dx) /
        // (s (x'² + y'²)) with x' = x / s, y' = y / s.
        Func::Atan2 => {
            let (across, d_across) = operand(1);
            let magnitude = |value: &Expr| call_of(Func::Abs, vec![value.clone()]);
            let scale = call_of(Func::Max, vec![magnitude(&x), magnitude(&across)]);
            let scaled = div(x.clone(), scale.clone());
            let across_scaled = div(across, scale.clone());
            let norm = mul(scale, plus(square(&scaled), square(&across_scaled)));
            add(times(dx, across_scaled), d_across.map(|t| negate(mul(scaled, t)))).map(|t| div(t, norm))
        }
        Func::Hypot => {
            let (other, d_other) = operand(1);
            add(times(dx, x.clone()), times(d_other, other)).map(|t| div(t, y.clone()))
        }
        // |x| with the sign of s: dx · sign(x) · sign(s) (std's sign: ±0 count).
        Func::Copysign => {
            let (sign, _) = operand(1);
            let unit = |of: Expr| call_of(Func::Copysign, vec![number(1.0), of]);
            times(dx, mul(unit(x.clone()), unit(sign)))
        }
        Func::MulAdd => {
            let (factor, d_factor) = operand(1);
            let (_, d_addend) = operand(2);
            add(add(times(dx, factor), times(d_factor, x.clone())), d_addend)
        }
        // The argument returned: the other one only where it wins strictly, or `x` is NaN
        // (std's `min`/`max` ignore a NaN operand).
        Func::Min | Func::Max => {
            let (other, d_other) = operand(1);
            let wins = if func == Func::Min { BinaryOp::Lt } else { BinaryOp::Gt };
            let other_wins =
                binary(BinaryOp::Or, binary(wins, other, x.clone()), binary(BinaryOp::Ne, x.clone(), x.clone()));
            let zero = number(0.0);
            Some(select(other_wins, d_other.unwrap_or_else(|| zero.clone()), dx.unwrap_or(zero)))
        }
        Func::Clamp => {
            let (low, d_low) = operand(1);
            let (high, d_high) = operand(2);
            let zero = number(0.0);
            let or_zero = |tangent: Option<Expr>| tangent.unwrap_or_else(|| zero.clone());
            let inside = select(binary(BinaryOp::Gt, x.clone(), high), or_zero(d_high), or_zero(dx));
            Some(select(binary(BinaryOp::Lt, x.clone(), low), or_zero(d_low), inside))
        }
        Func::IsNan
        | Func::IsFinite
        | Func::IsInfinite
        | Func::RemEuclid
        | Func::DivEuclid
        | Func::CountOnes
        | Func::CountZeros
        | Func::LeadingZeros
        | Func::TrailingZeros => None,
    };
    Ok(Dual { primal: result, tangent })
}

fn is_float(expr: &Expr) -> bool {
    super::build::has_float(&expr.ty)
}

/// `dx · n x^(n-1)` for an integer exponent `n` (`powi`'s `i32`, `pow`'s), 0 where `n = 0`.
fn integer_power_slope(dx: Expr, x: &Expr, n: Expr, func: Func) -> Expr {
    let n_ty = n.ty.clone();
    let one = Expr::new(crate::ir::ExprKind::Literal(crate::ir::Literal::Int(1)), n_ty.clone(), n.span);
    let zero = Expr::new(crate::ir::ExprKind::Literal(crate::ir::Literal::Int(0)), n_ty, n.span);
    let mut lower = call_of(func, vec![x.clone(), binary(BinaryOp::Sub, n.clone(), one)]);
    // `n - 1` wraps at the type's least value: there x^(n-1) is x^n / x.
    let least = match &n.ty {
        Type::Scalar(crate::ir::ScalarType::Known(scalar)) => scalar.int_range().map(|(least, _)| least),
        _ => None,
    };
    if let Some(least) = least.and_then(|least| i64::try_from(least).ok()).filter(|least| *least < 0) {
        let least = Expr::new(crate::ir::ExprKind::Literal(crate::ir::Literal::Int(least)), n.ty.clone(), n.span);
        let divided = binary(BinaryOp::Div, call_of(func, vec![x.clone(), n.clone()]), x.clone());
        lower = select(binary(BinaryOp::Eq, n.clone(), least), divided, lower);
    }
    let Type::Scalar(float) = x.ty.clone() else { return dx };
    let n_float = Expr::new(
        crate::ir::ExprKind::Cast(crate::ir::node::Cast { operand: Box::new(n.clone()), to: float, saturating: false }),
        x.ty.clone(),
        n.span,
    );
    let tangent = binary(BinaryOp::Mul, dx, binary(BinaryOp::Mul, n_float, lower));
    // x^0 is 1 everywhere: its tangent is 0 even where `dx` is infinite.
    select(binary(BinaryOp::Eq, n, zero), float_like(0.0, x), tangent)
}
