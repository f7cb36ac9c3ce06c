//! Typing of scalar function calls, from the function table (`ops.rs`, note [one table of
//! functions]): the first argument must lie in the function's domain, later arguments have the
//! first one's type or a fixed one (`powi`'s `i32`, integer `pow`'s `u32`), and the result is
//! the first argument's type or `bool`. Errors land on the offending argument.

use super::{Checked, Checker, Reported};
use crate::ir::node;
use crate::ir::{Expr, ExprKind, NumberClass, ScalarType};
use crate::ops::{Domain, Func, Operand, Scalar};
use crate::syntax::ast;
use proc_macro2::Span;

impl Checker {
    pub(super) fn call(&mut self, func: Func, func_span: Span, args: &[ast::Expr], span: Span) -> Checked<Expr> {
        let args = self.all(args)?;
        if args.len() != func.arity() {
            // The parser rejects these with a message of its own (and the span of the call).
            let message = format!("ein internal error: a call of `{}` with {} argument(s)", func.name(), args.len());
            self.errors.push(func_span, message);
            return Err(Reported);
        }
        let mut scalars = Vec::with_capacity(args.len());
        for (position, arg) in args.iter().enumerate() {
            let Some(scalar) = arg.ty.as_scalar() else {
                let found = self.unifier.describe_type(&arg.ty);
                let name = func.name();
                let array = match &arg.kind {
                    ExprKind::Var(var) => self.var(*var).name.clone(),
                    _ => "a".to_string(),
                };
                let more = if func.arity() > 1 { ".." } else { "" };
                let hint = if position == 0 {
                    format!("apply it to each element, e.g. `for i {{ {array}[i].{name}({more}) }}`")
                } else {
                    format!("index the array, e.g. `{array}[i]`")
                };
                self.errors.push(arg.span, format!("`{name}` works on single values, not {found}; {hint}"));
                return Err(Reported);
            };
            scalars.push(scalar);
        }
        let base = scalars[0];
        let domain = match func.has_exponent() {
            true if self.integer_power(base, scalars[1]) => Domain::Int,
            true => Domain::Float,
            false => func.domain(),
        };
        self.require_domain(func, domain, base, args[0].span)?;
        for ((operand, &scalar), arg) in func.operands().iter().zip(&scalars[1..]).zip(&args[1..]) {
            let (wanted, same_as_first) = match (operand, domain) {
                (Operand::Same, _) | (Operand::Exponent, Domain::Float) => (base, true),
                (Operand::I32, _) => (ScalarType::Known(Scalar::I32), false),
                (Operand::Exponent, _) => (ScalarType::Known(Scalar::U32), false),
            };
            if let Err(mismatch) = self.unifier.unify(wanted, scalar) {
                let message = if same_as_first {
                    let mut hint = self.conversion_hint(base, scalar);
                    if func.has_exponent() && self.unifier.class_of(scalar) == NumberClass::Int {
                        hint.push_str("; or use `powi` for an `i32` exponent");
                    }
                    format!(
                        "mismatched argument types: `{}` takes its arguments of one type, found {} and {}; {hint}",
                        func.name(),
                        mismatch.left,
                        mismatch.right
                    )
                } else {
                    let wanted = mismatch.left.trim_matches('`');
                    format!(
                        "the exponent of `{}` is `{wanted}`, found {}; cast it with `as {wanted}`",
                        func.name(),
                        mismatch.right
                    )
                };
                self.errors.push(arg.span, message);
                return Err(Reported);
            }
        }
        let ty = func.output().of(&args[0].ty);
        Ok(Expr::new(ExprKind::Call(node::Call { func, args }), ty, span))
    }

    /// Whether `pow(base, exponent)` is std's integer `pow` (exponent `u32`) rather than ein's
    /// float `pow` (`powf`): the base is an integer, or its type is still open and the exponent
    /// is an integer (`x.pow(2)` on a captured `x`).
    fn integer_power(&self, base: ScalarType, exponent: ScalarType) -> bool {
        match self.unifier.class_of(base) {
            NumberClass::Int => true,
            NumberClass::Any | NumberClass::Number => self.unifier.class_of(exponent) == NumberClass::Int,
            NumberClass::Float | NumberClass::Bool => false,
        }
    }

    /// Requires the first argument of `func` to lie in `domain`: a known type must be in it, an
    /// open one is narrowed to the domain's class (a float or an integer; for `Signed`, a number,
    /// leaving unsigned element types of the expression form to rustc).
    fn require_domain(&mut self, func: Func, domain: Domain, base: ScalarType, span: Span) -> Checked<()> {
        let name = func.name();
        let fits = match self.unifier.shallow(base) {
            ScalarType::Known(scalar) => domain.contains(scalar),
            ScalarType::Param(_) => {
                let class = match domain {
                    Domain::Float => NumberClass::Float,
                    Domain::Int => NumberClass::Int,
                    Domain::Signed | Domain::Number => NumberClass::Number,
                };
                self.unifier.require(base, class).is_ok()
            }
        };
        if fits {
            return Ok(());
        }
        let found = self.unifier.describe(base);
        let hint = match (domain, self.unifier.class_of(base)) {
            (Domain::Float, NumberClass::Int) => format!("; cast it first, e.g. `(x as f64).{name}()`"),
            (Domain::Signed, NumberClass::Int) => "; cast it to a signed type first, e.g. `x as i64`".to_string(),
            _ => String::new(),
        };
        let wanted = domain.describe();
        self.errors.push(span, format!("`{name}` needs {wanted}, found {found}{hint}"));
        Err(Reported)
    }
}
