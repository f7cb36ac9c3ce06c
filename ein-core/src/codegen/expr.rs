//! Scalar and tuple expressions: literals, operators, scalar functions, casts, `let`, `if`
//! (select), tuples, projections and size assertions. Arithmetic follows the shared
//! semantics: floats use Rust's operators, integers wrap (division by zero is an ein error),
//! and element types left to rustc go through the runtime's `Num`/`Float`/`CastTo` traits.

use super::code::{tuple_tokens, ArrayValue, Block, Code, Prec, Value};
use super::{has_array, internal, primitive, Gen};
use crate::ir::node;
use crate::ir::{
    BinaryOp, Expr, ExprKind, Func, Literal, NumberClass, Scalar, ScalarType, SizeCheck, Type, UnaryOp, VarId,
};
use crate::ops::{Domain, Failure};
use crate::passes::purity;
use proc_macro2::{Ident, Span, TokenStream};
use quote::{quote, quote_spanned, ToTokens};

impl Gen<'_> {
    /// Generates any expression.
    pub(super) fn value(&mut self, expr: &Expr, block: &mut Block) -> syn::Result<Value> {
        self.value_named(expr, block, None)
    }

    /// Generates any expression; a view local it introduces for an array result is named
    /// `hint` (the variable of the `let` it is bound to) when given.
    pub(super) fn value_named(&mut self, expr: &Expr, block: &mut Block, hint: Option<Ident>) -> syn::Result<Value> {
        let plain = Value::Plain;
        match &expr.kind {
            ExprKind::Literal(literal) => Ok(plain(self.literal(literal, expr)?)),
            ExprKind::Var(var) => self.lookup(*var, expr.span),
            ExprKind::For(_) => {
                if let Some((_, columns)) = self.destination.take_if(|(tail, _)| *tail == expr.id) {
                    // Written into the caller's `out` (an `#[into]` function's result): no value.
                    self.comprehension(expr, block, hint, Some(&columns))?;
                    return Ok(Value::Tuple(Vec::new()));
                }
                match self.comprehension(expr, block, hint, None)? {
                    Some(array) => Ok(Value::Array(array)),
                    None => Err(internal(expr.span, "a comprehension without a value")),
                }
            }
            ExprKind::Reduce(_) => match &self.jammed {
                // Computed side by side already (see `Gen::jam_step`).
                Some((root, result)) if *root == expr.id => Ok(plain(result.clone())),
                _ => Ok(plain(self.reduce(expr, block, hint)?)),
            },
            ExprKind::Filter(_) => self.filter(expr, block, hint),
            ExprKind::Fold(_) => match &self.jammed {
                // Computed side by side already (see `Gen::jammed_folds`).
                Some((root, result)) if *root == expr.id => Ok(plain(result.clone())),
                _ => self.fold(expr, block, hint),
            },
            ExprKind::Scan(_) => self.scan(expr, block, hint),
            ExprKind::Accum(_) => self.accum(expr, block, hint),
            ExprKind::Let(node::Let { var, value, body }) => {
                self.bind_let(*var, value, block)?;
                self.value_named(body, block, hint)
            }
            ExprKind::Index(_) => self.read(expr, &[], block, hint),
            ExprKind::Select(node::Select { cond, then, otherwise }) => {
                self.select(expr, cond, then, otherwise, block, hint)
            }
            ExprKind::Tuple(items) => self.tuple(expr, items, block),
            ExprKind::Project(_) => self.project(expr, block, hint),
            ExprKind::Unary(node::Unary { op, operand }) => Ok(plain(self.unary(*op, operand, block)?)),
            ExprKind::Binary(node::Binary { op, lhs, rhs }) => Ok(plain(self.binary(expr, *op, lhs, rhs, block)?)),
            ExprKind::Call(node::Call { func, args }) => Ok(plain(self.call(expr, *func, args, block)?)),
            ExprKind::Extern(node::Extern { name, args, site, .. }) => {
                // The user's function, called by the name they declared (resolved where the
                // macro was called) or, in the expression form, through the closure made at
                // their call; pure and infallible by the user's promise.
                let refs: Vec<&Expr> = args.iter().collect();
                let codes = self.operands(&refs, block)?;
                let function = match site {
                    None => name.to_token_stream(),
                    Some(site) => self
                        .rust_calls
                        .get(*site)
                        .ok_or_else(|| internal(expr.span, "a Rust call site without its closure"))?
                        .to_token_stream(),
                };
                Ok(plain(call(function, &codes.iter().collect::<Vec<_>>())))
            }
            ExprKind::Cast(node::Cast { operand, to, saturating }) => {
                Ok(plain(self.cast(operand, *to, *saturating, block)?))
            }
            ExprKind::Len(node::Len { array, axis }) => {
                let array = self.array(array, block, None)?;
                let first = array.views().first().ok_or_else(|| internal(expr.span, "an array with no column"))?;
                let axis = proc_macro2::Literal::usize_unsuffixed(*axis);
                Ok(plain(Code::expr(quote!(#first.size(#axis)), Prec::Atom)))
            }
            ExprKind::Assert(node::Assert { checks, body }) => {
                self.size_checks(checks, block)?;
                self.value_named(body, block, hint)
            }
            ExprKind::Contract(contraction) => self.contraction(expr, contraction, block, hint),
        }
    }

    /// Generates an expression of scalar or tuple type (no array inside).
    pub(super) fn scalar(&mut self, expr: &Expr, block: &mut Block) -> syn::Result<Code> {
        match self.value(expr, block)? {
            Value::Plain(code) => Ok(code),
            _ => Err(internal(expr.span, format!("expected a scalar or tuple, found type {:?}", expr.ty))),
        }
    }

    /// Generates an array-typed expression.
    pub(super) fn array(&mut self, expr: &Expr, block: &mut Block, hint: Option<Ident>) -> syn::Result<ArrayValue> {
        match self.value_named(expr, block, hint)? {
            Value::Array(array) => Ok(array),
            _ => Err(internal(expr.span, format!("expected an array, found type {:?}", expr.ty))),
        }
    }

    pub(super) fn lookup(&self, var: VarId, span: Span) -> syn::Result<Value> {
        self.env.get(&var).cloned().ok_or_else(|| {
            let name = self.program.vars.get(var.0 as usize).map_or("?", |info| info.name.as_str());
            internal(span, format!("variable `{name}` (#{}) used out of scope", var.0))
        })
    }

    /// `let var = value;` for the body that follows.
    pub(super) fn bind_let(&mut self, var: VarId, value: &Expr, block: &mut Block) -> syn::Result<()> {
        let name = self.names.var(var).clone();
        if has_array(&value.ty) {
            // Arrays are cheap views: an array that is already a local is aliased rather than
            // copied into another one.
            let generated = self.value_named(value, block, Some(name))?;
            self.env.insert(var, generated);
        } else {
            let code = match self.value_named(value, block, Some(name.clone()))? {
                Value::Plain(code) => code,
                _ => return Err(internal(value.span, format!("expected a scalar, found type {:?}", value.ty))),
            };
            // A reduction may already have named its result after the variable.
            if !code.is(&name) {
                block.push_let(name.clone(), code);
            }
            self.env.insert(var, Value::Plain(Code::name(&name)));
        }
        Ok(())
    }

    fn literal(&mut self, literal: &Literal, expr: &Expr) -> syn::Result<Code> {
        match scalar_type(&expr.ty, expr.span)? {
            ScalarType::Known(scalar) => {
                // A `usize` or `isize` literal beyond 32 bits (`4294967296`) is spelled as on a
                // 64-bit target; rustc refuses it on a 32-bit one, as it would Rust's own.
                let value = Const::of(literal, scalar).or_else(|| match *literal {
                    Literal::Int(value) => scalar.wrap(i128::from(value)).map(Const::Int),
                    _ => None,
                });
                let value =
                    value.ok_or_else(|| internal(expr.span, format!("literal {literal:?} of type {scalar}")))?;
                Ok(value.code(scalar))
            }
            ScalarType::Param(_) => Ok(param_literal(literal, expr.span)),
        }
    }

    fn unary(&mut self, op: UnaryOp, operand: &Expr, block: &mut Block) -> syn::Result<Code> {
        let ty = scalar_type(&operand.ty, operand.span)?;
        // `-1.5`, `-3`: one literal (`-128` fits an `i8` where `128` does not).
        if let (UnaryOp::Neg, ExprKind::Literal(literal)) = (op, &operand.kind) {
            match ty {
                ScalarType::Known(scalar) => {
                    if let Some(value) = Const::of(literal, scalar).and_then(|value| value.negate(scalar)) {
                        return Ok(value.code(scalar));
                    }
                }
                ScalarType::Param(_) => {
                    if let Literal::Int(value) = literal {
                        if let Some(negated) = value.checked_neg() {
                            return Ok(param_literal(&Literal::Int(negated), operand.span));
                        }
                    }
                }
            }
        }
        let code = self.scalar(operand, block)?;
        Ok(match (op, ty) {
            // An integer's complement through the trait where rustc decides the type.
            (UnaryOp::Not, ScalarType::Param(_)) => call(quote!(::ein::__private::Int::complement), &[&code]),
            (UnaryOp::Not, _) => prefix(quote!(!), &code),
            (UnaryOp::Neg, ScalarType::Known(scalar)) if scalar.is_float() => prefix(quote!(-), &code),
            (UnaryOp::Neg, ScalarType::Known(scalar)) if scalar.is_int() => method(&code, "wrapping_neg", &[]),
            (UnaryOp::Neg, ScalarType::Known(scalar)) => {
                return Err(internal(operand.span, format!("negation of a {scalar}")));
            }
            // Through the trait, not `-`: its result type is the operand's, which lets rustc
            // infer an operand typed only by its use (`Num::from_float_literal(1.0, 1.0)`).
            (UnaryOp::Neg, ScalarType::Param(_)) => call(quote!(::ein::__private::Num::neg), &[&code]),
        })
    }

    /// Whether `comparison` is a guard on the index of a loop whose interior this code is for
    /// ([`crate::analysis::Guard`]): `Gen::fill_loop` computed that interior with it.
    fn holds_in_interior(&self, comparison: &Expr) -> bool {
        let guards = self.wrap_interior.iter().flat_map(|index| self.analysis.interior_guards(*index));
        guards.into_iter().any(|guard| guard.comparison == comparison.id)
    }

    /// Whether `wrap` is one that `Gen::fill_loop` computed the interior of its index's loop
    /// with, this code being for that interior: a remainder whose modulus changes inside the
    /// loop (`n % max(d, 2)` under `all d`) is none, and divides.
    fn wraps_in_interior(&self, wrap: &crate::analysis::Wrap<'_>) -> bool {
        self.wrap_interior.contains(&wrap.index)
            && self.analysis.interior_wraps(wrap.index).iter().any(|known| known.same_interior(wrap))
    }

    /// The code of `expr`, the binary operation `lhs op rhs` (its span is the site an integer
    /// division by zero reports).
    fn binary(&mut self, expr: &Expr, op: BinaryOp, lhs: &Expr, rhs: &Expr, block: &mut Block) -> syn::Result<Code> {
        if op.is_comparison() && self.holds_in_interior(expr) {
            return Ok(Code::literal(quote!(true), Prec::Atom));
        }
        let codes = self.operands(&[lhs, rhs], block)?;
        let (left, right) = (&codes[0], &codes[1]);
        let ty = scalar_type(&lhs.ty, lhs.span)?;
        let symbol: TokenStream = match op.symbol().parse() {
            Ok(symbol) => symbol,
            Err(_) => return Err(internal(lhs.span, format!("operator {op:?}"))),
        };
        let opens_angle = op.symbol().starts_with('<');
        if op.is_comparison() {
            return Ok(infix_after(left, symbol, right, Prec::Compare, opens_angle));
        }
        if op.is_logical() {
            // Both sides are evaluated (ein has no short circuit): `&`/`|` — no branch, so
            // nothing to mispredict on data-dependent conditions (Game of Life's rule), and
            // loops over them vectorise — unless the right side is expensive (a loop or a
            // function call) and cannot panic, where `&&`/`||` may skip it at no difference.
            let skip = !right.may_panic && purity::is_expensive(rhs);
            return Ok(match (op, skip) {
                (BinaryOp::And, true) => infix(left, quote!(&&), right, Prec::And),
                (BinaryOp::Or, true) => infix(left, quote!(||), right, Prec::Or),
                (BinaryOp::And, false) => infix(left, quote!(&), right, Prec::BitAnd),
                _ => infix(left, quote!(|), right, Prec::BitOr),
            });
        }
        if op.is_bitwise() || op.is_shift() {
            return self.bitwise(op, ty, left, right, lhs.span);
        }
        let division = matches!(op, BinaryOp::Div | BinaryOp::Rem);
        // Element types rustc decides go through `Num` (below) even for floats, whose
        // functions are Rust's operators: their `Self` arguments let rustc infer an operand
        // typed only by its use (`Num::from_float_literal(0.5, 0.5)`).
        let float = matches!(ty, ScalarType::Known(scalar) if scalar.is_float());
        Ok(match ty {
            _ if float => {
                let prec = if matches!(op, BinaryOp::Add | BinaryOp::Sub) { Prec::Add } else { Prec::Mul };
                infix_after(left, symbol, right, prec, opens_angle)
            }
            ScalarType::Known(scalar) if scalar.is_int() => {
                let nonzero_divisor = match &rhs.kind {
                    ExprKind::Literal(literal) => Const::of(literal, scalar).is_some_and(|value| !value.is_zero()),
                    _ => false,
                };
                let wrap = if op == BinaryOp::Rem { self.analysis.wrap(lhs, rhs) } else { None };
                if let Some(wrap) = wrap.filter(|wrap| self.wraps_in_interior(wrap)) {
                    // In the loop's interior, whether it wraps is known.
                    return Ok(if wrap.subtracts { method(left, "wrapping_sub", &[right]) } else { left.clone() });
                }
                if wrap.is_some_and(|wrap| wrap.within_one_turn) {
                    // `0 <= left < 2 * right`: one compare and a select, no division.
                    let (value, modulus) = (self.names.fresh("wrapped"), self.names.fresh("modulus"));
                    let (left_tokens, right_tokens) = (&left.tokens, &right.tokens);
                    let tokens = quote! {{
                        let (#value, #modulus) = (#left_tokens, #right_tokens);
                        if #value >= #modulus { #value.wrapping_sub(#modulus) } else { #value }
                    }};
                    let mut code = Code::from_parts(tokens, Prec::Block, &[left, right], None);
                    code.block_start = true;
                    return Ok(code);
                }
                match op {
                    BinaryOp::Add => method(left, "wrapping_add", &[right]),
                    BinaryOp::Sub => method(left, "wrapping_sub", &[right]),
                    BinaryOp::Mul => method(left, "wrapping_mul", &[right]),
                    // A literal divisor that is not zero cannot fail: the wrapping method is
                    // exactly ein's semantics (`MIN / -1 == MIN`).
                    BinaryOp::Div if nonzero_divisor => method(left, "wrapping_div", &[right]),
                    BinaryOp::Rem if nonzero_divisor => method(left, "wrapping_rem", &[right]),
                    _ => {
                        let site = self.site(expr.span);
                        let site = Code::expr(quote!(&#site), Prec::Unary);
                        let function = if op == BinaryOp::Div {
                            quote!(::ein::__private::int_div)
                        } else {
                            quote!(::ein::__private::int_rem)
                        };
                        call(function, &[left, right, &site]).panics(true)
                    }
                }
            }
            ScalarType::Known(scalar) => return Err(internal(lhs.span, format!("arithmetic on {scalar}"))),
            ScalarType::Param(_) => {
                let name = match op {
                    BinaryOp::Add => "add",
                    BinaryOp::Sub => "sub",
                    BinaryOp::Mul => "mul",
                    BinaryOp::Div => "div",
                    _ => "rem",
                };
                let name = Ident::new(name, Span::call_site());
                if !division {
                    return Ok(call(quote!(::ein::__private::Num::#name), &[left, right]));
                }
                let site = self.site(expr.span);
                let site = Code::expr(quote!(&#site), Prec::Unary);
                call(quote!(::ein::__private::Num::#name), &[left, right, &site]).panics(true)
            }
        })
    }

    /// `left op right` for a bitwise operator or a shift: Rust's operators on booleans and
    /// integers, a shift's amount wrapped to the type's bits as release-mode Rust does
    /// (`wrapping_shl(amount as u32)`); an element type rustc decides goes through `Int`.
    fn bitwise(&mut self, op: BinaryOp, ty: ScalarType, left: &Code, right: &Code, span: Span) -> syn::Result<Code> {
        Ok(match (op, ty) {
            (_, ScalarType::Param(_)) => {
                let name = match op {
                    BinaryOp::BitAnd => "bit_and",
                    BinaryOp::BitOr => "bit_or",
                    BinaryOp::BitXor => "bit_xor",
                    BinaryOp::Shl => "shift_left",
                    _ => "shift_right",
                };
                let name = Ident::new(name, Span::call_site());
                call(quote!(::ein::__private::Int::#name), &[left, right])
            }
            (BinaryOp::BitAnd, _) => infix(left, quote!(&), right, Prec::BitAnd),
            (BinaryOp::BitOr, _) => infix(left, quote!(|), right, Prec::BitOr),
            (BinaryOp::BitXor, _) => infix(left, quote!(^), right, Prec::BitXor),
            (BinaryOp::Shl | BinaryOp::Shr, ScalarType::Known(scalar)) if scalar.is_int() => {
                let amount = right.operand(Prec::Cast);
                let amount = Code::from_parts(quote!(#amount as ::core::primitive::u32), Prec::Cast, &[right], None);
                method(left, if op == BinaryOp::Shl { "wrapping_shl" } else { "wrapping_shr" }, &[&amount])
            }
            _ => return Err(internal(span, format!("`{}` on {ty:?}", op.symbol()))),
        })
    }

    /// `::ein::__private::<Trait>::<name>(args…)`: every function goes through the runtime
    /// trait its domain names (note [one table of functions] in `ops.rs`), whether rustc or ein
    /// knows the element type; a call that can fail also gets the site it reports.
    fn call(&mut self, expr: &Expr, func: Func, args: &[Expr], block: &mut Block) -> syn::Result<Code> {
        if args.len() != func.arity() {
            return Err(internal(expr.span, format!("`{}` with {} arguments", func.name(), args.len())));
        }
        let refs: Vec<&Expr> = args.iter().collect();
        let codes = self.operands(&refs, block)?;
        let mut codes: Vec<&Code> = codes.iter().collect();
        let float = match scalar_type(&args[0].ty, args[0].span)? {
            ScalarType::Known(scalar) => scalar.is_float(),
            ScalarType::Param(index) => self.class(index, args[0].span)? == NumberClass::Float,
        };
        let runtime_trait = match func.domain() {
            // `pow`: the checker chose float or integer power by the base's type.
            _ if func.has_exponent() && float => quote!(Float),
            _ if func.has_exponent() => quote!(Int),
            Domain::Float => quote!(Float),
            Domain::Int => quote!(Int),
            Domain::Signed => quote!(Signed),
            Domain::Number => quote!(Num),
        };
        // Spanned at the first argument: where rustc reports an element type of the expression
        // form that the function does not take (the traits word that message for users).
        let name = Ident::new(func.name(), args[0].span);
        let path = quote_spanned!(args[0].span=> ::ein::__private::#runtime_trait::#name);
        if let (Some(flag), Func::Sin | Func::Cos) = (&self.fast_trig, func) {
            // The fast path of a chunk that is run again exactly if `flag` is set
            // ([`Gen::fast_trig`]).
            let name = Ident::new(&format!("{}_fast", func.name()), args[0].span);
            let flag = Code::expr(quote!(&#flag), Prec::Unary);
            codes.push(&flag);
            return Ok(call(quote_spanned!(args[0].span=> ::ein::__private::Float::#name), &codes));
        }
        if func.failure() == Failure::Never {
            return Ok(call(path, &codes));
        }
        let site = self.site(expr.span);
        let site = Code::expr(quote!(&#site), Prec::Unary);
        codes.push(&site);
        Ok(call(path, &codes).panics(purity::call_may_fail(func, args)))
    }

    fn cast(&mut self, operand: &Expr, to: ScalarType, saturating: bool, block: &mut Block) -> syn::Result<Code> {
        let from = scalar_type(&operand.ty, operand.span)?;
        if from == to {
            return self.scalar(operand, block);
        }
        if let (ExprKind::Literal(literal), ScalarType::Known(from), ScalarType::Known(to)) = (&operand.kind, from, to)
        {
            let value = Const::of(literal, from).and_then(|value| match value {
                Const::Int(value) if saturating => Some(Const::Int(value.clamp(i64::MIN.into(), i64::MAX.into()))),
                value => value.cast(to),
            });
            if let Some(value) = value {
                return Ok(value.code(to));
            }
        }
        let code = self.scalar(operand, block)?;
        if saturating {
            if to != ScalarType::I64 {
                return Err(internal(operand.span, format!("a saturating conversion to {to:?}")));
            }
            return self.index_i64(code, from, operand.span);
        }
        Ok(match (from, to) {
            (ScalarType::Known(from), ScalarType::Known(to)) => {
                if to == Scalar::Bool {
                    return Err(internal(operand.span, format!("cast from {from} to bool")));
                }
                let ty = primitive(to);
                if from == Scalar::Bool && to.is_float() {
                    // Rust has no `bool as f32`: go through an integer (0 or 1, exactly).
                    let tokens = code.operand(Prec::Cast);
                    Code::from_parts(
                        quote!(#tokens as ::core::primitive::u8 as #ty),
                        Prec::Cast,
                        &[&code],
                        code.leads(Prec::Cast),
                    )
                } else {
                    let tokens = code.operand(Prec::Cast);
                    Code::from_parts(quote!(#tokens as #ty), Prec::Cast, &[&code], code.leads(Prec::Cast))
                }
            }
            (ScalarType::Param(_), ScalarType::Known(to)) => {
                let ty = primitive(to);
                call(quote!(::ein::__private::CastTo::<#ty>::cast_to), &[&code])
            }
            (_, ScalarType::Param(_)) => call(quote!(::ein::__private::CastTo::cast_to), &[&code]),
        })
    }

    /// `if c { a } else { b }`: both sides are evaluated, one is chosen; arrays that cannot
    /// fail (`Analysis::lazy_select`) are built only on the side chosen, which is the same.
    fn select(
        &mut self,
        expr: &Expr,
        cond: &Expr,
        then: &Expr,
        otherwise: &Expr,
        block: &mut Block,
        hint: Option<Ident>,
    ) -> syn::Result<Value> {
        if !has_array(&expr.ty) {
            let mut codes = self.operands(&[cond, then, otherwise], block)?;
            if codes[1].may_panic || codes[2].may_panic {
                // Evaluate both sides whatever the condition, in order (errors propagate).
                for (code, base) in codes.iter_mut().zip(["condition", "then", "else"]) {
                    if code.may_panic && !code.simple {
                        let name = self.names.fresh(base);
                        block.push_let(name.clone(), code.clone());
                        *code = Code::name(&name);
                    }
                }
            }
            let (condition, then, otherwise) = (&codes[0].tokens, codes[1].tail(), codes[2].tail());
            let tokens = quote!(if #condition { #then } else { #otherwise });
            let mut code = Code::from_parts(tokens, Prec::Block, &[&codes[0], &codes[1], &codes[2]], None);
            code.block_start = true;
            return Ok(Value::Plain(code));
        }
        if self.analysis.lazy_select(expr) {
            return self.lazy_select(expr, [cond, then, otherwise], block, hint);
        }
        let mut condition = self.scalar(cond, block)?;
        let at = block.len();
        let then = self.value(then, block)?;
        let otherwise = self.value(otherwise, block)?;
        self.settle(&mut condition, at, block);
        let name = hint.unwrap_or_else(|| self.names.fresh("select"));
        // Plain views on both sides: in a loop versioned for unit strides one side may hold
        // a `UnitView` where the other holds a `View`.
        let (then, otherwise) = (plain_view_tokens(&then), plain_view_tokens(&otherwise));
        let condition = &condition.tokens;
        block.push_let(name.clone(), Code::expr(quote!(if #condition { #then } else { #otherwise }), Prec::Block));
        Ok(self.value_at(&expr.ty, &name, None))
    }

    /// An array `if` whose sides cannot fail: the condition, then only the side it chooses,
    /// built into owned storage (`if c { …; a } else { …; b }`) that the value is read from
    /// and that a fold may move into its state.
    fn lazy_select(
        &mut self,
        expr: &Expr,
        parts: [&Expr; 3],
        block: &mut Block,
        hint: Option<Ident>,
    ) -> syn::Result<Value> {
        let [cond, then, otherwise] = parts;
        let condition = self.scalar(cond, block)?;
        let mut sides = Vec::new();
        for side in [then, otherwise] {
            let (side_block, owned) = self.nested(false, |generator, side_block| {
                let value = generator.value(side, side_block)?;
                generator.owned(&value, &side.ty, side.span, side_block)
            })?;
            sides.push(side_block.finish(Some(&owned)));
        }
        let chosen = self.names.fresh("chosen");
        let (condition, then, otherwise) = (&condition.tokens, &sides[0], &sides[1]);
        block.push(quote!(let #chosen = if #condition { #then } else { #otherwise };));
        let name = hint.unwrap_or_else(|| self.names.fresh("select"));
        let views = super::reduce::views_of_state(&expr.ty, &chosen.to_token_stream());
        let read = block.push_view(name.clone(), views, None);
        Ok(self.stored_value(&expr.ty, &name.to_token_stream(), Some(&name), &read, &chosen, Vec::new()))
    }

    fn tuple(&mut self, expr: &Expr, items: &[Expr], block: &mut Block) -> syn::Result<Value> {
        if !has_array(&expr.ty) {
            let refs: Vec<&Expr> = items.iter().collect();
            let codes = self.operands(&refs, block)?;
            let tokens = tuple_tokens(codes.iter().map(|code| code.tokens.clone()).collect());
            let parts: Vec<&Code> = codes.iter().collect();
            let mut code = Code::from_parts(tokens, Prec::Atom, &parts, None);
            code.simple = codes.iter().all(|code| code.simple);
            return Ok(Value::Plain(code));
        }
        let mut values = Vec::new();
        for item in items {
            let value = match self.value(item, block)? {
                // Fields are evaluated here, in order, even if a projection drops them later.
                Value::Plain(code) if !code.simple => {
                    let name = self.names.fresh("field");
                    block.push_let(name.clone(), code);
                    Value::Plain(Code::name(&name))
                }
                value => value,
            };
            values.push(value);
        }
        Ok(Value::Tuple(values))
    }

    /// `t.0` / `r.re`; on an element read (`p[i].re`) only the projected columns are read.
    fn project(&mut self, expr: &Expr, block: &mut Block, hint: Option<Ident>) -> syn::Result<Value> {
        let mut path = Vec::new();
        let mut inner = expr;
        while let ExprKind::Project(node::Project { tuple, field }) = &inner.kind {
            path.push(*field);
            inner = tuple;
        }
        path.reverse();
        if matches!(inner.kind, ExprKind::Index(_)) {
            return self.read(inner, &path, block, hint);
        }
        let mut value = self.value(inner, block)?;
        for field in path {
            value = project_value(value, field, expr.span)?;
        }
        Ok(value)
    }

    /// One `check_same_size` call per check, in order.
    pub(super) fn size_checks(&mut self, checks: &[SizeCheck], block: &mut Block) -> syn::Result<()> {
        for check in checks {
            let codes = self.operands(&[&check.left, &check.right], block)?;
            let (left, right) = (&codes[0].tokens, &codes[1].tokens);
            let site = self.site(check.span);
            let (index, left_what, right_what) = (&check.index_name, &check.left_what, &check.right_what);
            block.push(quote! {
                ::ein::__private::check_same_size(#left, #right, #index, #left_what, #right_what, &#site);
            });
        }
        Ok(())
    }

    /// What the checker learned about type parameter `index`.
    pub(super) fn class(&self, index: usize, span: Span) -> syn::Result<NumberClass> {
        self.program
            .type_params
            .get(index)
            .map(|param| param.class)
            .ok_or_else(|| internal(span, format!("type parameter {index} is not declared")))
    }
}

/// The scalar type of a scalar-typed node.
pub(super) fn scalar_type(ty: &Type, span: Span) -> syn::Result<ScalarType> {
    ty.as_scalar().ok_or_else(|| internal(span, format!("expected a scalar, found type {ty:?}")))
}

/// Field `field` of a value.
fn project_value(value: Value, field: usize, span: Span) -> syn::Result<Value> {
    match value {
        Value::Plain(code) => {
            let receiver = code.operand(Prec::Atom);
            let position = syn::Index::from(field);
            let mut projected =
                Code::from_parts(quote!(#receiver.#position), Prec::Atom, &[&code], code.leads(Prec::Atom));
            projected.simple = code.simple;
            Ok(Value::Plain(projected))
        }
        Value::Tuple(mut values) if field < values.len() => Ok(values.swap_remove(field)),
        // A field of every element of an array of tuples: its columns.
        Value::Array(array) => match array.views_unread() {
            super::code::Tree::Node(columns) if field < columns.len() => {
                Ok(Value::Array(array.derived(columns[field].clone())))
            }
            _ => Err(internal(span, format!("field {field} of a value without it"))),
        },
        _ => Err(internal(span, format!("field {field} of a value without it"))),
    }
}

/// `op x`
fn prefix(op: TokenStream, code: &Code) -> Code {
    let operand = code.operand(Prec::Unary);
    Code::from_parts(quote!(#op #operand), Prec::Unary, &[code], None)
}

/// `left op right` for a left-associative operator of precedence `prec` (comparisons do not
/// associate at all).
pub(super) fn infix(left: &Code, op: TokenStream, right: &Code, prec: Prec) -> Code {
    infix_after(left, op, right, prec, false)
}

/// [`infix`] for an operator that may start with `<` (`opens_angle`): `x as T < y` would parse
/// `T<` as the start of generic arguments, so a left operand that is a cast, or that may end
/// in one (`a + i as f64 < b`: any operand looser than a unary one), is parenthesised.
pub(super) fn infix_after(left: &Code, op: TokenStream, right: &Code, prec: Prec, opens_angle: bool) -> Code {
    let left_min = if prec == Prec::Compare { Prec::Compare.tighter() } else { prec };
    let (left_tokens, leftmost) = if opens_angle && left.prec <= Prec::Cast {
        let tokens = &left.tokens;
        (quote!((#tokens)), None)
    } else {
        (left.operand(left_min), left.leads(left_min))
    };
    let right_tokens = right.operand(prec.tighter());
    Code::from_parts(quote!(#left_tokens #op #right_tokens), prec, &[left, right], leftmost)
}

/// `receiver.name(args)`
pub(super) fn method(receiver: &Code, name: &str, args: &[&Code]) -> Code {
    let tokens = receiver.operand(Prec::Atom);
    let name = Ident::new(name, Span::call_site());
    let arg_tokens = args.iter().map(|arg| &arg.tokens);
    let mut parts = vec![receiver];
    parts.extend_from_slice(args);
    Code::from_parts(quote!(#tokens.#name(#(#arg_tokens),*)), Prec::Atom, &parts, receiver.leads(Prec::Atom))
}

/// `path(args)`
pub(super) fn call(path: TokenStream, args: &[&Code]) -> Code {
    let arg_tokens = args.iter().map(|arg| &arg.tokens);
    Code::from_parts(quote!(#path(#(#arg_tokens),*)), Prec::Atom, args, None)
}

/// A literal of an element type rustc decides (a type parameter of the expression form's
/// generic function): `Num::from_int_literal` (checked to be in range) / `from_float_literal`, which are
/// `as` (exactly the interpreter's semantics) and fold to a constant. The range check's call
/// carries the literal's span, so rustc's note on a literal out of range points at it.
fn param_literal(literal: &Literal, span: proc_macro2::Span) -> Code {
    match *literal {
        Literal::Bool(value) => Code::literal(quote!(#value), Prec::Atom),
        Literal::Int(value) => {
            // Checked against the type's range when rustc knows the type (a compile error).
            let value = Const::Int(i128::from(value)).code(Scalar::I64).tokens;
            Code::expr(
                quote::quote_spanned!(span=> ::ein::__private::Num::from_int_literal::<{ #value }>()),
                Prec::Atom,
            )
        }
        Literal::Float(value, as_f32) => {
            let (value, as_f32) = (Const::F64(value).code(Scalar::F64), Const::F32(as_f32).code(Scalar::F32));
            call(quote!(::ein::__private::Num::from_float_literal), &[&value, &as_f32])
        }
    }
}

/// A float literal from its text (`{:?}` of a finite float: the shortest text that reads back
/// as the same number, with a `.0` or an exponent, so it is never an integer literal).
pub(super) fn float_literal(text: String) -> proc_macro2::Literal {
    text.parse().unwrap_or_else(|_| proc_macro2::Literal::f64_unsuffixed(0.0))
}

/// A constant of a concrete scalar type, to spell literals and fold casts of literals with
/// Rust's `as` semantics. Only folds that every target agrees on are made (an `isize` or
/// `usize` result must be the same on 32-bit targets); others are left to the `as` at run
/// time, so the macro, which runs on the host, never assumes the target's pointer width.
#[derive(Clone, Copy, Debug)]
enum Const {
    /// The value of an integer type, exactly (inside the type's range).
    Int(i128),
    F32(f32),
    F64(f64),
    Bool(bool),
}

impl Const {
    /// The value of `literal` as a `ty`.
    fn of(literal: &Literal, ty: Scalar) -> Option<Const> {
        match *literal {
            Literal::Int(value) => Const::Int(i128::from(value)).cast(ty),
            Literal::Float(_, as_f32) if ty == Scalar::F32 => Some(Const::F32(as_f32)),
            Literal::Float(value, _) => Const::F64(value).cast(ty),
            Literal::Bool(value) if ty == Scalar::Bool => Some(Const::Bool(value)),
            Literal::Bool(_) => None,
        }
    }

    /// `self as ty`; `None` where Rust has no such cast or targets disagree on its value.
    fn cast(self, ty: Scalar) -> Option<Const> {
        Some(match (self, ty) {
            (Const::Bool(value), Scalar::Bool) => Const::Bool(value),
            (_, Scalar::Bool) => return None,
            (Const::Bool(value), _) => return Const::Int(i128::from(value)).cast(ty),
            (Const::Int(value), Scalar::F32) => Const::F32(value as f32),
            (Const::Int(value), Scalar::F64) => Const::F64(value as f64),
            (Const::Int(value), int) => Const::Int(int.wrap_on_every_target(value)?),
            (Const::F32(value), Scalar::F32) => Const::F32(value),
            (Const::F32(value), Scalar::F64) => Const::F64(f64::from(value)),
            (Const::F32(value), int) => Const::Int(int.saturate_on_every_target(f64::from(value))?),
            (Const::F64(value), Scalar::F32) => Const::F32(value as f32),
            (Const::F64(value), Scalar::F64) => Const::F64(value),
            (Const::F64(value), int) => Const::Int(int.saturate_on_every_target(value)?),
        })
    }

    fn is_zero(self) -> bool {
        match self {
            Const::Int(value) => value == 0,
            Const::F32(value) => value == 0.0,
            Const::F64(value) => value == 0.0,
            Const::Bool(value) => !value,
        }
    }

    /// `-self` as a `ty` (integers wrap); `None` for booleans.
    fn negate(self, ty: Scalar) -> Option<Const> {
        match self {
            Const::F32(value) => Some(Const::F32(-value)),
            Const::F64(value) => Some(Const::F64(-value)),
            Const::Int(value) => Const::Int(-value).cast(ty),
            Const::Bool(_) => None,
        }
    }

    /// The constant spelled for type `ty`.
    fn code(self, ty: Scalar) -> Code {
        let path = |name: &str| {
            let ty = primitive(ty);
            let name = Ident::new(name, Span::call_site());
            Code::literal(quote!(#ty::#name), Prec::Atom)
        };
        let signed = |magnitude: TokenStream, negative: bool| {
            if negative {
                Code::literal(quote!(-#magnitude), Prec::Unary)
            } else {
                Code::literal(magnitude, Prec::Atom)
            }
        };
        match self {
            Const::Bool(value) => Code::literal(quote!(#value), Prec::Atom),
            Const::F32(value) if value.is_nan() => path("NAN"),
            Const::F32(value) if value.is_infinite() => path(if value > 0.0 { "INFINITY" } else { "NEG_INFINITY" }),
            Const::F32(value) => {
                let (magnitude, bits) = (value.abs(), proc_macro2::Literal::u32_suffixed(value.abs().to_bits()));
                let spelled = float_magnitude(
                    ty,
                    (f64::from(magnitude), format!("{magnitude:?}")),
                    |&(_, _, single)| single == magnitude,
                    bits,
                );
                signed(spelled, value.is_sign_negative())
            }
            Const::F64(value) if value.is_nan() => path("NAN"),
            Const::F64(value) if value.is_infinite() => path(if value > 0.0 { "INFINITY" } else { "NEG_INFINITY" }),
            Const::F64(value) => {
                let (magnitude, bits) = (value.abs(), proc_macro2::Literal::u64_suffixed(value.abs().to_bits()));
                let spelled = float_magnitude(
                    ty,
                    (magnitude, format!("{magnitude:?}")),
                    |&(_, double, _)| double == magnitude,
                    bits,
                );
                signed(spelled, value.is_sign_negative())
            }
            // An integer value of a float type only arises from a cast, handled above.
            Const::Int(value) if ty == Scalar::F32 => Const::F32(value as f32).code(ty),
            Const::Int(value) if ty == Scalar::F64 => Const::F64(value as f64).code(ty),
            Const::Int(_) if ty == Scalar::Bool => Code::literal(quote!(false), Prec::Atom),
            // `-128i8` would negate `128i8`, which does not exist: the minimum is spelled by path.
            Const::Int(value) if ty.int_range().is_some_and(|(low, _)| low < 0 && value == low) => path("MIN"),
            Const::Int(value) => signed(int_literal(value.unsigned_abs(), ty).into_token_stream(), value < 0),
        }
    }
}

/// A finite non-negative float of type `ty` (`f32` or `f64`; its value and shortest literal
/// text in that type), spelled so that clippy's
/// deny-by-default `approx_constant` accepts it in the users' crates this code expands in:
/// std's constant by its path where it is one (`exact`), its `bits` (`f64::from_bits`) where
/// its shortest literal is within that literal's last decimal of one (`3.14`), its literal
/// otherwise.
fn float_magnitude(
    ty: Scalar,
    (magnitude, text): (f64, String),
    exact: impl Fn(&(&str, f64, f32)) -> bool,
    bits: proc_macro2::Literal,
) -> TokenStream {
    let module = Ident::new(ty.name(), Span::call_site());
    if let Some(&(name, ..)) = crate::ops::FLOAT_CONSTANTS.iter().find(|constant| exact(constant)) {
        let name = Ident::new(name, Span::call_site());
        return quote!(::core::#module::consts::#name);
    }
    let decimals = match text.split_once('.') {
        Some((_, decimals)) if !text.contains('e') => decimals.len(),
        _ => 0,
    };
    let close = |&&(_, double, _): &&(&str, f64, f32)| (magnitude - double).abs() <= 10f64.powi(-(decimals as i32));
    if decimals >= 2 && crate::ops::FLOAT_CONSTANTS.iter().any(|constant| close(&constant)) {
        let ty = primitive(ty);
        return quote!(#ty::from_bits(#bits));
    }
    float_literal(format!("{text}{}", ty.name())).into_token_stream()
}

/// The literal `magnitude` with the suffix of `ty` (`5u8`, `7usize`).
fn int_literal(magnitude: u128, ty: Scalar) -> proc_macro2::Literal {
    format!("{magnitude}{}", ty.name()).parse().unwrap_or_else(|_| proc_macro2::Literal::u128_unsuffixed(magnitude))
}

/// The tokens of a value as one Rust expression, every array as its plain `View`
/// (`IntoView::into_view`, whichever of `View` and `UnitView` holds it).
pub(super) fn plain_view_tokens(value: &Value) -> TokenStream {
    match value {
        Value::Plain(code) => code.tokens.clone(),
        Value::Array(array) => {
            array.views().map(&mut |view| quote!(::ein::__private::IntoView::into_view(#view))).tuple()
        }
        Value::Tuple(fields) => super::code::tuple_tokens(fields.iter().map(plain_view_tokens).collect()),
    }
}
