//! The IR validator: checks the invariants written on [`crate::ir`] (every variable bound
//! exactly once and used only in its scope, node types following their typing rules, sizes
//! free of indices but those of reductions and accum loops). Run after the checker and the
//! last pass in every build, and after every pass in debug builds and tests.

use super::purity::may_fail;
use crate::check::sizes::{self, LetValues};
use crate::ir::node;
use crate::ir::visit::{walk_in, Scope, Visitor};
use crate::ir::{Bounds, Contraction, Expr, ExprKind, Literal, Program, ReduceOp, ScalarType, Type, VarId, VarKind};

/// Re-proves every read marked [`Bounds::Proven`] (the mark that lets generated code read
/// without a check): the marks are cleared, the one bounds prover ([`sizes::prove_bounds`])
/// runs again on the program as it is now, with the `let`s it has now, and every read marked
/// before must be marked again. Whatever a pass concluded by its own reasoning, an unchecked
/// read reaches code generation only if this prover agrees. Run after the whole pipeline,
/// in every build (and after every pass in debug builds, to name the pass).
pub fn validate_bounds(program: &Program) -> Result<(), String> {
    let mut lets = LetValues::new();
    collect_lets(&program.body, &mut lets);
    let mut reproved = program.clone();
    forget_proofs(&mut reproved.body);
    sizes::prove_bounds(&mut reproved, &lets);
    let (mut claimed, mut proven) = (Vec::new(), Vec::new());
    reads(&program.body, &mut claimed);
    reads(&reproved.body, &mut proven);
    for (&(read, bounds), &(_, again)) in claimed.iter().zip(&proven) {
        if bounds == Bounds::Proven && again != Bounds::Proven {
            let read = crate::ir::expr_to_string(program, read);
            return Err(format!("the read `{read}` is marked proven in bounds, but the prover cannot prove it"));
        }
    }
    Ok(())
}

/// The value of every `let` (each variable is bound once, so one map serves every scope).
fn collect_lets(expr: &Expr, lets: &mut LetValues) {
    if let ExprKind::Let(node::Let { var, value, .. }) = &expr.kind {
        lets.insert(*var, (**value).clone());
    }
    expr.for_each_child(|child| collect_lets(child, lets));
}

fn forget_proofs(expr: &mut Expr) {
    if let ExprKind::Index(node::Index { bounds, .. }) = &mut expr.kind {
        *bounds = Bounds::Clamped;
    }
    expr.for_each_child_mut(forget_proofs);
}

/// Every read, in evaluation order, with its mark.
fn reads<'a>(expr: &'a Expr, found: &mut Vec<(&'a Expr, Bounds)>) {
    if let ExprKind::Index(node::Index { bounds, .. }) = &expr.kind {
        found.push((expr, *bounds));
    }
    expr.for_each_child(|child| reads(child, found));
}

pub fn validate(program: &Program) -> Result<(), String> {
    let mut update_loops = Vec::new();
    collect_update_loops(&program.body, &mut update_loops);
    let mut validator = Validator { program, bound: vec![false; program.vars.len()], update_loops, error: None };
    for param in &program.params {
        validator.bind(*param)?;
    }
    walk_in(&program.body, &mut Scope::of(program.params.iter().copied()), &mut validator);
    validator.error.map_or(Ok(()), Err)
}

fn collect_update_loops(expr: &Expr, found: &mut Vec<*const Expr>) {
    if let ExprKind::Accum(accum) = &expr.kind {
        crate::ir::accum::update_loops(&accum.updates, found);
    }
    expr.for_each_child(|child| collect_update_loops(child, found));
}

/// Checks each node as the walk enters it (its children are built, so their types are known);
/// the walk keeps the scope. Stops at the first broken invariant.
struct Validator<'a> {
    program: &'a Program,
    /// Whether each variable was bound already (every variable is bound exactly once).
    bound: Vec<bool>,
    /// The loops of accums' update nests, whose ranges may depend on indices.
    update_loops: Vec<*const Expr>,
    error: Option<String>,
}

impl Visitor<'_> for Validator<'_> {
    fn enter(&mut self, expr: &Expr, scope: &Scope) -> bool {
        if self.error.is_none() {
            if let Err(error) = self.node(expr, scope) {
                self.error = Some(error);
            }
        }
        self.error.is_none()
    }
}

impl Validator<'_> {
    fn bind(&mut self, var: VarId) -> Result<(), String> {
        let slot = self.bound.get_mut(var.0 as usize).ok_or_else(|| format!("variable #{} is not declared", var.0))?;
        if *slot {
            return Err(format!("variable `{}` (#{}) is bound twice", self.program.var(var).name, var.0));
        }
        *slot = true;
        Ok(())
    }

    fn size(&self, size: &Expr, what: &str) -> Result<(), String> {
        self.size_of_type(size, what)?;
        for var in crate::ir::visit::free_vars(size) {
            if matches!(self.program.var(var).kind, VarKind::Index | VarKind::Accumulator) {
                return Err(format!("{what} depends on `{}`", self.program.var(var).name));
            }
        }
        Ok(())
    }

    /// A size of type `i64` (a reduction's range may depend on indices: it shapes no array).
    fn size_of_type(&self, size: &Expr, what: &str) -> Result<(), String> {
        if size.ty != Type::I64 {
            return Err(format!("{what} has type {:?}, not i64", size.ty));
        }
        Ok(())
    }

    /// The invariants written on [`Contraction`] (its children are walked like any others).
    fn contraction(&self, expr: &Expr, contraction: &Contraction) -> Result<(), String> {
        let fail = |rule: &str| Err(format!("invalid contraction: {rule}"));
        if contraction.outputs > contraction.labels.len() {
            return fail("more output labels than labels");
        }
        for (position, label) in contraction.labels.iter().enumerate() {
            self.size(&label.size, "a contraction size")?;
            let cannot_fail = match &label.size.kind {
                ExprKind::Len(_) => true,
                ExprKind::Literal(Literal::Int(value)) => *value >= 0,
                _ => false,
            };
            if position >= contraction.outputs && !cannot_fail {
                return fail("a summed size that may fail");
            }
        }
        let elem = Type::Scalar(contraction.elem);
        let float_or_param = match contraction.elem {
            ScalarType::Known(scalar) => scalar.is_float(),
            ScalarType::Param(_) => true,
        };
        if !float_or_param {
            return fail("the element type is not a float");
        }
        if let Some(scale) = &contraction.scale {
            if scale.factor.ty != elem || may_fail(&scale.factor) {
                return fail("the scale is not an element that cannot fail");
            }
        }
        if !(2..=3).contains(&contraction.operands.len()) {
            return fail("it has neither two nor three operands");
        }
        let mut uses = vec![0usize; contraction.labels.len()];
        for operand in &contraction.operands {
            let Type::Array { elem: operand_elem, rank } = &operand.array.ty else {
                return fail("an operand is not an array");
            };
            if **operand_elem != elem || *rank != operand.axes.len() || may_fail(&operand.array) {
                return fail("an operand is not an array of the element type, one label per axis, that cannot fail");
            }
            let mut seen = vec![false; contraction.labels.len()];
            for &label in &operand.axes {
                match seen.get_mut(label) {
                    Some(slot) if !*slot => *slot = true,
                    _ => return fail("an operand axis with a missing or repeated label"),
                }
                uses[label] += 1;
            }
        }
        for (position, count) in uses.iter().enumerate() {
            let needed = if position < contraction.outputs { 1 } else { 2 };
            if *count < needed {
                return fail("an output label in no operand, or a summed label in fewer than two");
            }
        }
        if contraction.outputs == 0 {
            return fail("it has no output label");
        }
        if expr.ty != Type::array(elem, contraction.outputs) {
            return fail("its type is not that of its element and output labels");
        }
        if contraction.loops.ty != expr.ty {
            return fail("its loop nest has another type");
        }
        Ok(())
    }

    /// The typing rule of `expr`'s variant, and its binders' uniqueness.
    fn node(&mut self, expr: &Expr, scope: &Scope) -> Result<(), String> {
        for var in expr.binders() {
            self.bind(var)?;
        }
        let expect = |ok: bool, rule: &str| if ok { Ok(()) } else { Err(format!("ill-typed node: {rule}")) };
        match &expr.kind {
            ExprKind::Var(var) => {
                let info = self
                    .program
                    .vars
                    .get(var.0 as usize)
                    .ok_or_else(|| format!("variable #{} is not declared", var.0))?;
                if !scope.contains(*var) {
                    return Err(format!("variable `{}` (#{}) used out of scope", info.name, var.0));
                }
                expect(info.ty == expr.ty, "a variable has its declared type")
            }
            ExprKind::Literal(_) => expect(matches!(expr.ty, Type::Scalar(_)), "literals are scalars"),
            ExprKind::For(node::For { size, body, .. }) => {
                if self.update_loops.contains(&(expr as *const Expr)) {
                    self.size_of_type(size, "an accum loop's size")?;
                } else {
                    self.size(size, "a comprehension size")?;
                }
                expect(expr.ty == body.ty.with_outer_axis(), "for has type [body]")
            }
            ExprKind::Filter(node::For { size, body, .. }) => {
                self.size(size, "a filter size")?;
                let element = match &body.ty {
                    Type::Tuple { fields, .. } if fields.len() == 2 && fields[0] == Type::BOOL => Some(&fields[1]),
                    _ => None,
                };
                expect(
                    element.is_some_and(|element| !element.has_array() && expr.ty == element.with_outer_axis()),
                    "a filter's body is (bool, element) and the filter is [element]",
                )
            }
            ExprKind::Reduce(node::Reduce { op, size, body, .. }) => {
                self.size_of_type(size, "a reduction size")?;
                let wanted = match op {
                    ReduceOp::ArgMax | ReduceOp::ArgMin => Type::Scalar(ScalarType::USIZE),
                    _ => body.ty.clone(),
                };
                expect(expr.ty == wanted, "reduction result type")
            }
            ExprKind::Fold(node::Fold { count, init, body, .. }) => {
                self.size(count, "a fold count")?;
                expect(expr.ty == init.ty && body.ty == init.ty, "fold body, init and result agree")
            }
            ExprKind::Scan(node::Scan { count, init, body, .. }) => {
                self.size(count, "a scan count")?;
                // Any state (an array, or a tuple holding one, only as reverse mode's tape of a
                // fold), its states stacked (`Type::stacked`).
                expect(
                    body.ty == init.ty && expr.ty == init.ty.stacked(),
                    "scan body and init agree, and the scan is [init]",
                )
            }
            ExprKind::Let(node::Let { var, value, body }) => {
                expect(self.program.var(*var).ty == value.ty && expr.ty == body.ty, "let types")
            }
            ExprKind::Accum(accum) => expect(
                expr.ty == crate::ir::accum::value_type(accum) && crate::ir::accum::well_typed(accum),
                "accum is [scalar] like its init (its history one axis more than its nest), its updates a nest of \
                 (bool, i64.., element) tuples",
            ),
            ExprKind::Index(node::Index { array, .. }) => {
                expect(array.ty.indexed().as_ref() == Some(&expr.ty), "index removes one axis")
            }
            ExprKind::Select(node::Select { cond, then, otherwise }) => {
                expect(cond.ty == Type::BOOL && then.ty == otherwise.ty && expr.ty == then.ty, "select types")
            }
            ExprKind::Project(node::Project { tuple, field }) => {
                let field_ty = match &tuple.ty {
                    Type::Tuple { fields, .. } => fields.get(*field),
                    _ => None,
                };
                expect(field_ty == Some(&expr.ty), "projection of an existing field")
            }
            ExprKind::Binary(node::Binary { lhs, rhs, op }) => {
                let result_ok =
                    if op.is_comparison() || op.is_logical() { expr.ty == Type::BOOL } else { expr.ty == lhs.ty };
                expect(lhs.ty == rhs.ty && result_ok, "binary operands agree")
            }
            ExprKind::Len(node::Len { array, axis }) => {
                expect(*axis < array.ty.rank() && expr.ty == Type::I64, "len of an existing axis")
            }
            ExprKind::Contract(contraction) => self.contraction(expr, contraction),
            ExprKind::Extern(node::Extern { args, .. }) => expect(
                matches!(expr.ty, Type::Scalar(_)) && args.iter().all(|arg| matches!(arg.ty, Type::Scalar(_))),
                "extern calls take and give scalars",
            ),
            ExprKind::Tuple(_) | ExprKind::Unary(_) | ExprKind::Call(_) | ExprKind::Cast(_) | ExprKind::Assert(_) => {
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checked(source: &str) -> Program {
        let tokens: proc_macro2::TokenStream = source.parse().expect("test source tokenises");
        let input = crate::syntax::parse_input(tokens).expect("parses");
        crate::check::check_input(input).expect("checks").remove(0).program
    }

    /// Applies `edit` to the first node (in pre-order) that `is_target` picks.
    fn edit_first<F: FnOnce(&mut Expr)>(program: &mut Program, is_target: fn(&Expr) -> bool, edit: F) {
        fn visit<F: FnOnce(&mut Expr)>(expr: &mut Expr, is_target: fn(&Expr) -> bool, edit: &mut Option<F>) {
            if edit.is_none() {
                return;
            }
            if is_target(expr) {
                if let Some(edit) = edit.take() {
                    edit(expr);
                }
                return;
            }
            expr.for_each_child_mut(|child| visit(child, is_target, edit));
        }
        let mut edit = Some(edit);
        visit(&mut program.body, is_target, &mut edit);
        assert!(edit.is_none(), "no node to edit");
    }

    fn is_for(expr: &Expr) -> bool {
        matches!(expr.kind, ExprKind::For(_))
    }

    fn is_let(expr: &Expr) -> bool {
        matches!(expr.kind, ExprKind::Let(_))
    }

    #[test]
    fn a_checked_program_is_valid_and_broken_invariants_are_named() {
        let source = "fn f(a: [f64]) -> [f64] { let s = 2.0; for i in 0..a.len() { a[i] * s } }";
        let program = checked(source);
        assert_eq!(validate(&program), Ok(()));

        // A `let` variable used in its own value: out of scope there.
        let mut out_of_scope = checked(source);
        edit_first(&mut out_of_scope, is_let, |expr| {
            let ExprKind::Let(node::Let { var, value, .. }) = &mut expr.kind else { unreachable!() };
            **value = Expr::new(ExprKind::Var(*var), value.ty.clone(), value.span);
        });
        let error = validate(&out_of_scope).unwrap_err();
        assert!(error.contains("`s`") && error.contains("used out of scope"), "{error}");

        // An index's size depending on the index (regularity).
        let mut irregular = checked(source);
        edit_first(&mut irregular, is_for, |expr| {
            let ExprKind::For(node::For { index, size, .. }) = &mut expr.kind else { unreachable!() };
            **size = Expr::new(ExprKind::Var(*index), Type::I64, size.span);
        });
        let error = validate(&irregular).unwrap_err();
        assert!(error.contains("a comprehension size depends on `i`"), "{error}");

        // The same variable bound by two nested binders.
        let mut twice = checked(source);
        edit_first(&mut twice, is_for, |expr| {
            let ExprKind::For(node::For { index, body, .. }) = &mut expr.kind else { unreachable!() };
            let (var, inner) = (*index, body.take());
            let (ty, span) = (inner.ty.clone(), inner.span);
            let zero = crate::ir::shape::int(0, span);
            **body =
                Expr::new(ExprKind::Let(node::Let { var, value: Box::new(zero), body: Box::new(inner) }), ty, span);
        });
        let error = validate(&twice).unwrap_err();
        assert!(error.contains("is bound twice"), "{error}");

        // A comprehension whose type is not `[body]` (found by the `let` around it, whose type
        // is its body's: parents are checked first).
        let mut ill_typed = checked(source);
        edit_first(&mut ill_typed, is_for, |expr| expr.ty = Type::array(Type::I64, 1));
        let error = validate(&ill_typed).unwrap_err();
        assert!(error.starts_with("ill-typed node: let types"), "{error}");
    }
}
