//! The IR validator: checks the invariants written on [`crate::ir`] (every variable bound
//! exactly once and used only in its scope, node types following their typing rules, sizes
//! free of indices). Run after the checker and after every pass in debug builds and tests.

use crate::ir::{Expr, ExprKind, Program, ReduceOp, ScalarType, Type, VarId, VarKind};

pub fn validate(program: &Program) -> Result<(), String> {
    let mut validator = Validator { program, in_scope: Vec::new(), bound: vec![false; program.vars.len()] };
    for param in &program.params {
        validator.bind(*param)?;
    }
    validator.expr(&program.body)
}

struct Validator<'a> {
    program: &'a Program,
    in_scope: Vec<VarId>,
    bound: Vec<bool>,
}

impl Validator<'_> {
    fn bind(&mut self, var: VarId) -> Result<(), String> {
        let slot = self.bound.get_mut(var.0 as usize).ok_or_else(|| format!("variable #{} is not declared", var.0))?;
        if *slot {
            return Err(format!("variable `{}` (#{}) is bound twice", self.program.var(var).name, var.0));
        }
        *slot = true;
        self.in_scope.push(var);
        Ok(())
    }

    fn scoped(&mut self, vars: &[VarId], body: &Expr) -> Result<(), String> {
        let depth = self.in_scope.len();
        for var in vars {
            self.bind(*var)?;
        }
        let result = self.expr(body);
        self.in_scope.truncate(depth);
        result
    }

    fn size(&mut self, size: &Expr, what: &str) -> Result<(), String> {
        if size.ty != Type::I64 {
            return Err(format!("{what} has type {:?}, not i64", size.ty));
        }
        for var in crate::ir::visit::free_vars(size) {
            if matches!(self.program.var(var).kind, VarKind::Index | VarKind::Accumulator) {
                return Err(format!("{what} depends on `{}`", self.program.var(var).name));
            }
        }
        self.expr(size)
    }

    fn expr(&mut self, expr: &Expr) -> Result<(), String> {
        let expect = |ok: bool, rule: &str| if ok { Ok(()) } else { Err(format!("ill-typed node: {rule}")) };
        match &expr.kind {
            ExprKind::Var(var) => {
                if !self.in_scope.contains(var) {
                    return Err(format!("variable `{}` (#{}) used out of scope", self.program.var(*var).name, var.0));
                }
                expect(self.program.var(*var).ty == expr.ty, "a variable has its declared type")
            }
            ExprKind::Literal(_) => expect(matches!(expr.ty, Type::Scalar(_)), "literals are scalars"),
            ExprKind::For { index, size, body } => {
                self.size(size, "a comprehension size")?;
                self.scoped(&[*index], body)?;
                expect(expr.ty == body.ty.with_outer_axis(), "for has type [body]")
            }
            ExprKind::Reduce { op, index, size, body } => {
                self.size(size, "a reduction size")?;
                self.scoped(&[*index], body)?;
                let wanted = match op {
                    ReduceOp::ArgMax | ReduceOp::ArgMin => Type::Scalar(ScalarType::USIZE),
                    _ => body.ty.clone(),
                };
                expect(expr.ty == wanted, "reduction result type")
            }
            ExprKind::Fold { index, count, acc, init, body } => {
                self.size(count, "a fold count")?;
                self.expr(init)?;
                self.scoped(&[*index, *acc], body)?;
                expect(expr.ty == init.ty && body.ty == init.ty, "fold body, init and result agree")
            }
            ExprKind::Let { var, value, body } => {
                self.expr(value)?;
                self.scoped(&[*var], body)?;
                expect(self.program.var(*var).ty == value.ty && expr.ty == body.ty, "let types")
            }
            ExprKind::Index { array, index, .. } => {
                self.expr(array)?;
                self.expr(index)?;
                expect(array.ty.indexed().as_ref() == Some(&expr.ty), "index removes one axis")
            }
            ExprKind::Select { cond, then, otherwise } => {
                self.expr(cond)?;
                self.expr(then)?;
                self.expr(otherwise)?;
                expect(cond.ty == Type::BOOL && then.ty == otherwise.ty && expr.ty == then.ty, "select types")
            }
            ExprKind::Project { tuple, field } => {
                self.expr(tuple)?;
                let field_ty = match &tuple.ty {
                    Type::Tuple { fields, .. } => fields.get(*field),
                    _ => None,
                };
                expect(field_ty == Some(&expr.ty), "projection of an existing field")
            }
            ExprKind::Binary { lhs, rhs, op } => {
                self.expr(lhs)?;
                self.expr(rhs)?;
                let result_ok = if op.is_comparison() || op.is_logical() { expr.ty == Type::BOOL } else { expr.ty == lhs.ty };
                expect(lhs.ty == rhs.ty && result_ok, "binary operands agree")
            }
            ExprKind::Len { array, axis } => {
                self.expr(array)?;
                expect(*axis < array.ty.rank() && expr.ty == Type::I64, "len of an existing axis")
            }
            _ => {
                let mut result = Ok(());
                expr.for_each_child(|child| {
                    if result.is_ok() {
                        result = self.expr(child);
                    }
                });
                result
            }
        }
    }
}
