//! Stage 2, check: names, types, ranks, regularity and sizes. Turns the surface tree into the
//! typed IR ([`crate::ir`]), reporting every user error it can find with the span of the
//! offending token. After this stage, a failure is the compiler's fault, not the user's.

mod accum;
mod calls;
mod captures;
mod errors;
mod expr;
mod inline;
pub mod sizes;
mod types;

use crate::ir::node;
use crate::ir::{Expr, ExprKind, Form, FunctionHeader, Program, ScalarType, Type, Unit, VarId, VarInfo, VarKind};
use crate::ir::{NumberClass, TypeParam, TypeSource};
use crate::syntax::ast::{self, Input, TypeExpr};
pub use errors::{Checked, Errors, Reported};

use proc_macro2::Span;
use sizes::{LetValues, SizeUses};
use std::collections::BTreeSet;
use types::{Origin, Resolved, Unifier};

/// Checks every unit of an `ein!` invocation; all user errors are returned together. The
/// units are the functions emitted as Rust (see [`inline::Library`]): a private helper that
/// other functions of the block call is checked, and inlined at its calls, but is no unit.
pub fn check_input(input: Input) -> syn::Result<Vec<Unit>> {
    match input {
        Input::Expression(body) => Ok(vec![check_expression(&body)?]),
        Input::Functions(functions, externs) => {
            let library = std::rc::Rc::new(inline::Library::new(functions, externs));
            let mut errors = Errors::default();
            library.recursion_errors(&mut errors);
            let mut units: Vec<(usize, Unit)> = Vec::new();
            for position in library.check_order() {
                match check_function(&library, position) {
                    Ok(Some(unit)) => {
                        library.mark_checked(position, true);
                        if library.is_emitted(position) {
                            units.push((position, unit));
                        }
                    }
                    Ok(None) => library.mark_checked(position, false),
                    Err(error) => {
                        library.mark_checked(position, false);
                        errors.push_error(error);
                    }
                }
            }
            errors.finish()?;
            // Emitted in the order written, whatever order they were checked in.
            units.sort_by_key(|(position, _)| *position);
            Ok(units.into_iter().map(|(_, unit)| unit).collect())
        }
    }
}

fn check_expression(body: &ast::Expr) -> syn::Result<Unit> {
    let mut checker = Checker::new(FormKind::Expression);
    let mut params = Vec::new();
    for capture in captures::find_captures(body) {
        if capture.rank > captures::MAX_RANK {
            let message = format!(
                "`{}` would need rank {}; ein arrays have at most {} axes",
                capture.name,
                capture.rank,
                captures::MAX_RANK
            );
            checker.errors.push(capture.name.span(), message);
            continue;
        }
        let element = checker.unifier.fresh(NumberClass::Any, Origin::Capture(VarId(checker.vars.len() as u32)));
        let ty =
            if capture.rank == 0 { Type::Scalar(element) } else { Type::array(Type::Scalar(element), capture.rank) };
        let var = checker.declare(&capture.name.to_string(), ty, VarKind::Param, capture.name.span());
        checker.enter_scope(var);
        params.push(var);
    }
    let body = checker.expr(body);
    checker.finish(params, body, Form::Expression, None)
}

/// Checks function `position` of the block on its own; `Ok(None)` when it failed only through a
/// callee whose own errors are reported already.
fn check_function(library: &std::rc::Rc<inline::Library>, position: usize) -> syn::Result<Option<Unit>> {
    let function = &library.functions[position];
    let mut checker = Checker::new(FormKind::Function);
    checker.library = Some(library.clone());
    checker.call_stack.push(position);
    let emitted = library.is_emitted(position);
    let reverse = function.reverse.as_ref().map(|reverse| &reverse.name);
    for companion in [function.into.as_ref(), function.jvp.as_ref(), reverse].into_iter().flatten().filter(|_| !emitted)
    {
        let message = format!(
            "`{}` is a private helper of this block (other functions call it, and ein inlines it there), \
             so no Rust function `{companion}` is generated; make it `pub` (or `pub(crate)`) to have one",
            function.name
        );
        checker.errors.push(companion.span(), message);
    }
    let mut params = Vec::new();
    for param in &function.params {
        let name = param.name.to_string();
        if params.iter().any(|var: &VarId| checker.var(*var).name == name) {
            checker.errors.push(param.name.span(), format!("parameter `{name}` is declared twice"));
            continue;
        }
        // A helper that is only inlined has no Rust signature: any type will do.
        let ty = if emitted { checker.parameter_type(&param.ty) } else { checker.declared_type(&param.ty) };
        let ty = match ty {
            Ok(ty) => ty,
            Err(Reported) => continue,
        };
        let var = checker.declare(&name, ty, VarKind::Param, param.name.span());
        checker.enter_scope(var);
        params.push(var);
    }
    let declared = checker.declared_type(&function.ret);
    let body = checker.expr(&function.body);
    if let (Ok(body), Ok(declared)) = (&body, &declared) {
        if checker.unifier.unify_types(declared, &body.ty).is_err() {
            let message = format!(
                "the body has type {} but the function returns {}{}",
                checker.unifier.describe_type(&body.ty),
                checker.unifier.describe_type(declared),
                types::field_order_note(&body.ty, declared)
            );
            checker.errors.push(function.ret.span(), message);
        }
    }
    let header = FunctionHeader {
        attrs: function.attrs.clone(),
        vis: function.vis.clone(),
        name: function.name.clone(),
        into: function.into.clone(),
        jvp: function.jvp.clone(),
        reverse: function.reverse.clone(),
        ret_span: function.ret.span(),
    };
    let declared = declared.ok();
    if checker.errors.is_empty() && checker.failed_callee {
        return Ok(None);
    }
    checker.finish(params, body, Form::Function(Box::new(header)), declared).map(Some)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum FormKind {
    Expression,
    Function,
}

/// The checker's state for one unit.
struct Checker {
    form: FormKind,
    vars: Vec<VarInfo>,
    /// Variables in lexical scope by the name they go by there, innermost last. The name is the
    /// variable's own, except in an inlined call, where a parameter names its argument.
    scope: Vec<(String, VarId)>,
    /// Names are looked up in `scope[scope_floor..]` only: an inlined callee sees its own
    /// parameters, not its caller's names, although the caller's variables still enclose it
    /// (and may be used by sizes inferred inside it).
    scope_floor: usize,
    unifier: Unifier,
    errors: Errors,
    size_uses: SizeUses,
    lets: LetValues,
    /// The initial value of each fold accumulator bound by name to an array: every step's
    /// value has its shape (checked), so sizes read from the accumulator are the initial
    /// value's.
    accumulator_inits: LetValues,
    /// Size checks over parameters only: run once, before everything.
    global_checks: Vec<crate::ir::SizeCheck>,
    /// Index names bound anywhere so far, for "used outside its comprehension" errors.
    index_names: Vec<(String, Span)>,
    /// Indices hidden by a rebinding (already reported), whose missing size is not news.
    shadowed_indices: Vec<VarId>,
    /// The item form's functions, for calls between them (`None` in the expression form).
    library: Option<std::rc::Rc<inline::Library>>,
    /// The functions being checked or inlined, outermost first (positions in the library).
    call_stack: Vec<usize>,
    /// Calls inlined so far in this unit, against a budget.
    inlined_calls: usize,
    /// A call failed because its callee did (whose errors are reported with the callee).
    failed_callee: bool,
    /// Names bound to a value that failed to check (already reported): their uses are
    /// neither checked nor reported again.
    poisoned: Vec<VarId>,
    /// The expression form's calls of Rust functions, in order (types still slots).
    rust_calls: Vec<crate::ir::RustCall>,
    /// The types of integer literals above `i64::MAX` (`11400714819323198485`): only a `u64`
    /// holds them, so one that nothing else types is a `u64` (see [`Checker::finish`]).
    wide_literals: Vec<ScalarType>,
    /// The accums whose bodies are being checked, innermost last.
    accums: Vec<accum::AccumFrame>,
    /// The `for` loops that are statements of an accum body (found before it is checked):
    /// they build no array, so their ranges may depend on enclosing indices.
    update_loops: std::collections::HashSet<*const ast::Expr>,
}

impl Checker {
    fn new(form: FormKind) -> Checker {
        Checker {
            form,
            vars: Vec::new(),
            scope: Vec::new(),
            scope_floor: 0,
            unifier: Unifier::default(),
            errors: Errors::default(),
            size_uses: SizeUses::default(),
            lets: LetValues::new(),
            accumulator_inits: LetValues::new(),
            global_checks: Vec::new(),
            index_names: Vec::new(),
            shadowed_indices: Vec::new(),
            library: None,
            call_stack: Vec::new(),
            inlined_calls: 0,
            failed_callee: false,
            poisoned: Vec::new(),
            rust_calls: Vec::new(),
            wide_literals: Vec::new(),
            accums: Vec::new(),
            update_loops: std::collections::HashSet::new(),
        }
    }

    /// Puts `var` in scope under its own name.
    fn enter_scope(&mut self, var: VarId) {
        let name = self.var(var).name.clone();
        self.scope.push((name, var));
    }

    fn declare(&mut self, name: &str, ty: Type, kind: VarKind, span: Span) -> VarId {
        crate::ir::declare(&mut self.vars, VarInfo { name: name.to_string(), ty, kind, span })
    }

    fn var(&self, var: VarId) -> &VarInfo {
        &self.vars[var.0 as usize]
    }

    fn lookup(&self, name: &str) -> Option<VarId> {
        self.scope[self.scope_floor..].iter().rev().find(|(bound, _)| bound == name).map(|(_, var)| *var)
    }

    /// A parameter's declared type: a scalar or an array of scalars.
    fn parameter_type(&mut self, ty: &TypeExpr) -> Checked<Type> {
        let resolved = self.declared_type(ty)?;
        match &resolved {
            Type::Scalar(_) => Ok(resolved),
            Type::Array { elem, .. } if matches!(**elem, Type::Scalar(_)) => Ok(resolved),
            _ => {
                self.errors.push(
                    ty.span(),
                    "parameters must be scalars or arrays of scalars; pass the fields of records as separate arrays",
                );
                // Still bound with its type, so its uses are checked without "unknown name" noise.
                Ok(resolved)
            }
        }
    }

    fn declared_type(&mut self, ty: &TypeExpr) -> Checked<Type> {
        match ty {
            TypeExpr::Scalar(scalar, _) => Ok(Type::scalar(*scalar)),
            TypeExpr::Array(inner, span) => {
                let inner = self.declared_type(inner)?;
                if matches!(&inner, Type::Tuple { fields, .. } if fields.iter().any(|f| !matches!(f, Type::Scalar(_))))
                {
                    self.errors.push(*span, "array elements must be numbers, booleans, or tuples/records of them");
                    return Err(Reported);
                }
                Ok(inner.with_outer_axis())
            }
            TypeExpr::Tuple(items, _) => {
                let fields = items.iter().map(|item| self.declared_type(item)).collect::<Vec<_>>();
                Ok(Type::tuple(fields.into_iter().collect::<Checked<Vec<_>>>()?))
            }
            TypeExpr::Record(fields, _) => {
                let mut names = Vec::new();
                let mut types = Vec::new();
                for (name, field) in fields {
                    if names.contains(&name.to_string()) {
                        self.errors.push(name.span(), format!("field `{name}` appears twice"));
                    }
                    names.push(name.to_string());
                    types.push(self.declared_type(field));
                }
                let fields = types.into_iter().collect::<Checked<Vec<_>>>()?;
                Ok(Type::Tuple { fields, names })
            }
        }
    }

    /// Resolves types, wraps global size checks, proves bounds: the last barrier.
    fn finish(
        mut self,
        params: Vec<VarId>,
        body: Checked<Expr>,
        form: Form,
        declared: Option<Type>,
    ) -> syn::Result<Unit> {
        let body = match body {
            Ok(body) if self.errors.is_empty() => body,
            _ => {
                self.errors.finish()?;
                return Err(syn::Error::new(Span::call_site(), "ein internal error: a check failed without a message"));
            }
        };
        // The declared return type decides literal defaults before resolution.
        if let Some(declared) = &declared {
            let _ = self.unifier.unify_types(declared, &body.ty);
        }
        // A literal above `i64::MAX` is a `u64` unless something else typed it (then it is out
        // of that type's range, reported below), in both forms: a Rust use site could not
        // choose another type for it.
        for literal in std::mem::take(&mut self.wide_literals) {
            if matches!(self.unifier.shallow(literal), ScalarType::Param(_)) {
                let _ = self.unifier.unify(literal, ScalarType::Known(crate::ops::Scalar::U64));
            }
        }
        // In the expression form, literals nothing constrains but which reach the result are
        // typed by the Rust use site (`let f: u64 = ein!(…)`), as Rust types them.
        let mut by_use_site = BTreeSet::new();
        // So are those passed to a Rust function, typed by its parameters (`scale(a[i], 2.0)`).
        if matches!(form, Form::Expression) {
            self.unifier.open_literals(&body.ty, &mut by_use_site);
            for call in &self.rust_calls {
                for &param in &call.params {
                    self.unifier.open_literals(&Type::Scalar(param), &mut by_use_site);
                }
            }
        }
        let mut type_params = TypeParams::default();
        let mut body = body;
        let mut resolve = |ty: &mut Type| resolve_type(&self.unifier, &by_use_site, &mut type_params, ty);
        resolve_expr(&mut body, &mut resolve);
        let mut global_checks = std::mem::take(&mut self.global_checks);
        for check in &mut global_checks {
            resolve_expr(&mut check.left, &mut resolve);
            resolve_expr(&mut check.right, &mut resolve);
        }
        let mut vars = std::mem::take(&mut self.vars);
        for info in &mut vars {
            resolve(&mut info.ty);
        }
        let mut rust_calls = std::mem::take(&mut self.rust_calls);
        for call in &mut rust_calls {
            for scalar in call.params.iter_mut().chain([&mut call.ret]) {
                let mut ty = Type::Scalar(*scalar);
                resolve(&mut ty);
                if let Type::Scalar(resolved) = ty {
                    *scalar = resolved;
                }
            }
        }
        let mut lets = std::mem::take(&mut self.lets);
        for value in lets.values_mut() {
            resolve_expr(value, &mut resolve);
        }
        if !global_checks.is_empty() {
            let (ty, span) = (body.ty.clone(), body.span);
            body = Expr::new(ExprKind::Assert(node::Assert { checks: global_checks, body: Box::new(body) }), ty, span);
        }
        for (span, message) in literals_out_of_range(&body) {
            self.errors.push(span, message);
        }
        if !self.errors.is_empty() {
            self.errors.finish()?;
        }
        let mut type_params = type_params.params;
        mark_bounds(&body, &mut type_params);
        let mut program = Program { params, vars, type_params, rust_calls, body };
        sizes::prove_bounds(&mut program, &lets);
        Ok(Unit { program, form })
    }
}

/// Marks the type parameters that a function of signed numbers is applied to or a negated
/// integer literal takes, and those of no number class cast to an integer type (the class
/// lattice has neither "signed" nor "a number or `bool`"; rustc checks them through the
/// bounds this adds).
fn mark_bounds(expr: &Expr, type_params: &mut [TypeParam]) {
    match &expr.kind {
        ExprKind::Call(node::Call { func, args }) => {
            if let (crate::ops::Domain::Signed, Some(Type::Scalar(ScalarType::Param(index)))) =
                (func.domain(), args.first().map(|arg| &arg.ty))
            {
                if let Some(param) = type_params.get_mut(*index) {
                    param.signed = true;
                }
            }
        }
        // A negated literal of an element type rustc decides: rustc refuses `-1` for an unsigned
        // type, as the item form does (see `literals_out_of_range`).
        ExprKind::Unary(node::Unary { op: crate::ir::UnaryOp::Neg, operand })
            if matches!(operand.kind, ExprKind::Literal(crate::ir::Literal::Int(_))) =>
        {
            if let Type::Scalar(ScalarType::Param(index)) = expr.ty {
                if let Some(param) = type_params.get_mut(index) {
                    param.signed = true;
                }
            }
        }
        ExprKind::Cast(node::Cast { operand, to: ScalarType::Known(to), .. }) => {
            if let Type::Scalar(ScalarType::Param(index)) = operand.ty {
                let param = type_params.get_mut(index);
                if let Some(param) = param.filter(|param| matches!(param.class, NumberClass::Any | NumberClass::Bool)) {
                    if !param.casts.contains(to) {
                        param.casts.push(*to);
                    }
                }
            }
        }
        _ => {}
    }
    expr.for_each_child(|child| mark_bounds(child, type_params));
}

/// Integer literals whose value their type cannot hold (`300` where a `u8` is meant, or a
/// negated one, `-1`, where an unsigned type is), and float literals beyond `f32`'s range
/// where an `f32` is meant (`1e39`), as rustc refuses them: known only once literal types are
/// resolved.
fn literals_out_of_range(body: &Expr) -> Vec<(Span, String)> {
    fn visit(expr: &Expr, found: &mut Vec<(Span, String)>) {
        if let (ExprKind::Literal(crate::ir::Literal::Float(value, as_f32)), Type::Scalar(ScalarType::Known(ty))) =
            (&expr.kind, &expr.ty)
        {
            // (An infinite `value` is `f32::INFINITY` itself.)
            if *ty == crate::ops::Scalar::F32 && as_f32.is_infinite() && value.is_finite() {
                let message =
                    format!("the literal `{value:?}` does not fit in `f32`, whose largest value is {:e}", f32::MAX);
                found.push((expr.span, message));
            }
            return;
        }
        // A literal's bits read as a `u64`: those above `i64::MAX` (`u64` literals, and the
        // operand of `-9223372036854775808`) are stored as negative `i64`s.
        let literal = match &expr.kind {
            ExprKind::Literal(crate::ir::Literal::Int(value)) => Some(i128::from(*value as u64)),
            ExprKind::Unary(node::Unary { op: crate::ir::UnaryOp::Neg, operand }) => match operand.kind {
                ExprKind::Literal(crate::ir::Literal::Int(value)) => Some(-i128::from(value as u64)),
                _ => None,
            },
            _ => None,
        };
        let Some(value) = literal else {
            expr.for_each_child(|child| visit(child, found));
            return;
        };
        // A negated literal is judged whole (`-128` fits an `i8`, though `128` does not).
        if let Type::Scalar(ScalarType::Known(ty)) = &expr.ty {
            if let Some((low, high)) = ty.int_range() {
                if !(low..=high).contains(&value) {
                    let message =
                        format!("the literal `{value}` does not fit in `{ty}`, whose values are {low}..={high}");
                    found.push((expr.span, message));
                }
            }
        }
    }
    let mut found = Vec::new();
    visit(body, &mut found);
    found
}

/// The type parameters of a unit, with what identifies each while resolving.
#[derive(Default)]
struct TypeParams {
    params: Vec<TypeParam>,
    keys: Vec<Resolved>,
}

/// Replaces checking-time slots by final types, registering a type parameter per element type
/// that rustc decides (a captured local's, or use-site literals').
fn resolve_type(unifier: &Unifier, by_use_site: &BTreeSet<usize>, type_params: &mut TypeParams, ty: &mut Type) {
    match ty {
        Type::Scalar(scalar) => *scalar = resolve_scalar(unifier, by_use_site, type_params, *scalar),
        Type::Array { elem, .. } => resolve_type(unifier, by_use_site, type_params, elem),
        Type::Tuple { fields, .. } => {
            fields.iter_mut().for_each(|field| resolve_type(unifier, by_use_site, type_params, field))
        }
    }
}

fn resolve_scalar(
    unifier: &Unifier,
    by_use_site: &BTreeSet<usize>,
    type_params: &mut TypeParams,
    scalar: ScalarType,
) -> ScalarType {
    let resolved = unifier.finish(scalar, by_use_site);
    let (source, class) = match resolved {
        Resolved::Known(known) => return ScalarType::Known(known),
        Resolved::Capture(witness, class) => (TypeSource::Capture(witness), class),
        Resolved::UseSite(_, class) => (TypeSource::UseSite, class),
        Resolved::CallResult(site, class) => (TypeSource::CallResult(site), class),
    };
    let position = match type_params.keys.iter().position(|key| key.same_param(&resolved)) {
        Some(position) => position,
        None => {
            type_params.params.push(TypeParam { source, class, signed: false, casts: Vec::new() });
            type_params.keys.push(resolved);
            type_params.params.len() - 1
        }
    };
    ScalarType::Param(position)
}

fn resolve_expr(expr: &mut Expr, resolve: &mut impl FnMut(&mut Type)) {
    resolve(&mut expr.ty);
    if let ExprKind::Cast(node::Cast { to, .. }) = &mut expr.kind {
        let mut ty = Type::Scalar(*to);
        resolve(&mut ty);
        if let Type::Scalar(scalar) = ty {
            *to = scalar;
        }
    }
    expr.for_each_child_mut(|child| resolve_expr(child, resolve));
}

#[cfg(test)]
mod tests;
