//! Unit tests of the interpreter (and of the IR printer) on hand-built IR programs.

use super::{run, ArrayValue, RuntimeError, Value};
use crate::ir::node;
use crate::ir::{
    BinaryOp, Bounds, Expr, ExprKind, Func, Literal, NumberClass, Program, ReduceOp, Scalar, ScalarType, SizeCheck,
    Type, TypeParam, UnaryOp, VarId, VarInfo, VarKind,
};
use proc_macro2::Span;

/// Builds programs by hand: declares variables and wraps IR nodes with their types.
#[derive(Default)]
struct Builder {
    vars: Vec<VarInfo>,
    params: Vec<VarId>,
    type_params: Vec<TypeParam>,
}

fn node(kind: ExprKind, ty: Type) -> Expr {
    Expr::new(kind, ty, Span::call_site())
}

impl Builder {
    fn declare(&mut self, name: &str, ty: Type, kind: VarKind) -> VarId {
        let id = VarId(self.vars.len() as u32);
        self.vars.push(VarInfo { name: name.to_string(), ty, kind, span: Span::call_site() });
        id
    }

    fn param(&mut self, name: &str, ty: Type) -> Expr {
        let id = self.declare(name, ty, VarKind::Param);
        self.params.push(id);
        self.use_var(id)
    }

    fn type_param(&mut self, witness: VarId, class: NumberClass) -> ScalarType {
        self.type_params.push(TypeParam {
            source: crate::ir::TypeSource::Capture(witness),
            class,
            signed: false,
            casts: Vec::new(),
        });
        ScalarType::Param(self.type_params.len() - 1)
    }

    fn use_var(&self, id: VarId) -> Expr {
        node(ExprKind::Var(id), self.vars[id.0 as usize].ty.clone())
    }

    /// `for name in 0..size { body(index) }`.
    fn comprehension(&mut self, name: &str, size: Expr, body: impl FnOnce(&mut Builder, Expr) -> Expr) -> Expr {
        let index = self.declare(name, Type::I64, VarKind::Index);
        let body = body(self, self.use_var(index));
        let ty = body.ty.with_outer_axis();
        node(ExprKind::For(node::For { index, size: Box::new(size), body: Box::new(body) }), ty)
    }

    /// `op name in 0..size { body(index) }`.
    fn reduce(&mut self, op: ReduceOp, name: &str, size: Expr, body: impl FnOnce(&mut Builder, Expr) -> Expr) -> Expr {
        let index = self.declare(name, Type::I64, VarKind::Index);
        let body = body(self, self.use_var(index));
        let ty = match op {
            ReduceOp::ArgMax | ReduceOp::ArgMin => Type::scalar(Scalar::Usize),
            _ => body.ty.clone(),
        };
        node(ExprKind::Reduce(node::Reduce { op, index, size: Box::new(size), body: Box::new(body) }), ty)
    }

    /// `fold name in 0..count, acc = init { body(index, acc) }`.
    fn fold(
        &mut self,
        name: &str,
        count: Expr,
        acc_name: &str,
        init: Expr,
        body: impl FnOnce(&mut Builder, Expr, Expr) -> Expr,
    ) -> Expr {
        let index = self.declare(name, Type::I64, VarKind::Index);
        let acc = self.declare(acc_name, init.ty.clone(), VarKind::Accumulator);
        let body = body(self, self.use_var(index), self.use_var(acc));
        let ty = init.ty.clone();
        node(
            ExprKind::Fold(node::Fold {
                index,
                count: Box::new(count),
                acc,
                init: Box::new(init),
                body: Box::new(body),
            }),
            ty,
        )
    }

    /// `let name = value; body(var)`.
    fn let_in(&mut self, name: &str, value: Expr, body: impl FnOnce(&mut Builder, Expr) -> Expr) -> Expr {
        let var = self.declare(name, value.ty.clone(), VarKind::Let);
        let body = body(self, self.use_var(var));
        let ty = body.ty.clone();
        node(ExprKind::Let(node::Let { var, value: Box::new(value), body: Box::new(body) }), ty)
    }

    fn finish(self, body: Expr) -> Program {
        Program { params: self.params, vars: self.vars, type_params: self.type_params, rust_calls: Vec::new(), body }
    }
}

fn f32_type() -> Type {
    Type::scalar(Scalar::F32)
}

fn f64_type() -> Type {
    Type::scalar(Scalar::F64)
}

fn int(value: i64) -> Expr {
    node(ExprKind::Literal(Literal::Int(value)), Type::I64)
}

fn typed_int(value: i64, ty: Type) -> Expr {
    node(ExprKind::Literal(Literal::Int(value)), ty)
}

fn float(value: f64, ty: Type) -> Expr {
    node(ExprKind::Literal(Literal::float(value)), ty)
}

fn read(array: Expr, index: Expr, bounds: Bounds) -> Expr {
    let ty = array.ty.indexed().expect("indexing a non-array in a test program");
    node(ExprKind::Index(node::Index { array: Box::new(array), index: Box::new(index), bounds }), ty)
}

fn at(array: Expr, index: Expr) -> Expr {
    read(array, index, Bounds::Proven)
}

fn clamped(array: Expr, index: Expr) -> Expr {
    read(array, index, Bounds::Clamped)
}

fn len(array: Expr, axis: usize) -> Expr {
    node(ExprKind::Len(node::Len { array: Box::new(array), axis }), Type::I64)
}

fn binary(op: BinaryOp, lhs: Expr, rhs: Expr) -> Expr {
    let ty = if op.is_comparison() { Type::BOOL } else { lhs.ty.clone() };
    node(ExprKind::Binary(node::Binary { op, lhs: Box::new(lhs), rhs: Box::new(rhs) }), ty)
}

fn add(lhs: Expr, rhs: Expr) -> Expr {
    binary(BinaryOp::Add, lhs, rhs)
}

fn mul(lhs: Expr, rhs: Expr) -> Expr {
    binary(BinaryOp::Mul, lhs, rhs)
}

fn tuple(items: Vec<Expr>) -> Expr {
    let ty = Type::tuple(items.iter().map(|item| item.ty.clone()).collect());
    node(ExprKind::Tuple(items), ty)
}

fn project(tuple: Expr, field: usize) -> Expr {
    let ty = match &tuple.ty {
        Type::Tuple { fields, .. } => fields[field].clone(),
        other => panic!("projecting a {other}"),
    };
    node(ExprKind::Project(node::Project { tuple: Box::new(tuple), field }), ty)
}

fn select(cond: Expr, then: Expr, otherwise: Expr) -> Expr {
    let ty = then.ty.clone();
    node(
        ExprKind::Select(node::Select { cond: Box::new(cond), then: Box::new(then), otherwise: Box::new(otherwise) }),
        ty,
    )
}

fn size_check(left: Expr, right: Expr, left_what: &str, right_what: &str, index_name: &str) -> SizeCheck {
    SizeCheck {
        left,
        right,
        left_what: left_what.to_string(),
        right_what: right_what.to_string(),
        index_name: index_name.to_string(),
        span: Span::call_site(),
    }
}

fn assert_sizes(checks: Vec<SizeCheck>, body: Expr) -> Expr {
    let ty = body.ty.clone();
    node(ExprKind::Assert(node::Assert { checks, body: Box::new(body) }), ty)
}

fn matrix(rows: &[&[f64]]) -> Value {
    let columns = rows.first().map_or(0, |row| row.len());
    Value::Array(ArrayValue::from_fn(vec![rows.len(), columns], |index| Value::F64(rows[index[0]][index[1]])))
}

fn f64_vector(values: &[f64]) -> Value {
    Value::Array(ArrayValue::vector(values.iter().map(|&value| Value::F64(value)).collect()))
}

fn i32_vector(values: &[i32]) -> Value {
    Value::Array(ArrayValue::vector(values.iter().map(|&value| Value::I32(value)).collect()))
}

fn error_of(result: Result<Value, RuntimeError>) -> String {
    match result {
        Ok(value) => panic!("expected an error, got {value:?}"),
        Err(error) => error.message,
    }
}

/// `for i, j { sum k { a[i, k] * b[k, j] } }` over f64, with the `k` size check.
fn matmul_program() -> Program {
    let mut builder = Builder::default();
    let matrix_type = Type::array(f64_type(), 2);
    let a = builder.param("a", matrix_type.clone());
    let b = builder.param("b", matrix_type);
    let body = builder.comprehension("i", len(a.clone(), 0), |builder, i| {
        builder.comprehension("j", len(b.clone(), 1), |builder, j| {
            builder.reduce(ReduceOp::Sum, "k", len(a.clone(), 1), |_, k| {
                mul(at(at(a.clone(), i.clone()), k.clone()), at(at(b.clone(), k), j.clone()))
            })
        })
    });
    let checks = vec![size_check(len(a.clone(), 1), len(b.clone(), 0), "axis 1 of `a`", "axis 0 of `b`", "k")];
    builder.finish(assert_sizes(checks, body))
}

#[test]
fn matmul() {
    let program = matmul_program();
    let a = matrix(&[&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]]);
    let b = matrix(&[&[7.0, 8.0], &[9.0, 10.0], &[11.0, 12.0]]);
    let expected = matrix(&[&[58.0, 64.0], &[139.0, 154.0]]);
    assert_eq!(run(&program, vec![a, b], &[]), Ok(expected));
}

#[test]
fn size_mismatch_reports_both_sizes() {
    let program = matmul_program();
    let a = matrix(&[&[1.0, 2.0, 3.0]]);
    let b = matrix(&[&[1.0], &[2.0], &[3.0], &[4.0]]);
    assert_eq!(
        error_of(run(&program, vec![a, b], &[])),
        "size mismatch for index `k`: axis 1 of `a` has 3 elements but axis 0 of `b` has 4"
    );
}

#[test]
fn matmul_of_empty_matrices_keeps_inner_axes() {
    let program = matmul_program();
    let a = Value::Array(ArrayValue { shape: vec![0, 3], elements: Vec::new() });
    let b = matrix(&[&[1.0, 2.0], &[3.0, 4.0], &[5.0, 6.0]]);
    let expected = Value::Array(ArrayValue { shape: vec![0, 2], elements: Vec::new() });
    assert_eq!(run(&program, vec![a, b.clone()], &[]), Ok(expected));
    // An empty contraction axis gives zeros.
    let a = Value::Array(ArrayValue { shape: vec![2, 0], elements: Vec::new() });
    let b = Value::Array(ArrayValue { shape: vec![0, 1], elements: Vec::new() });
    assert_eq!(run(&program, vec![a, b], &[]), Ok(matrix(&[&[0.0], &[0.0]])));
}

#[test]
fn partial_indexing_yields_rows() {
    // `for i { let row = a[len(a) - 1 - i]; (row, len(row)) }`: the rows in reverse, via
    // sub-array reads.
    let mut builder = Builder::default();
    let a = builder.param("a", Type::array(f64_type(), 2));
    let body = builder.comprehension("i", len(a.clone(), 0), |builder, i| {
        let last = binary(BinaryOp::Sub, len(a.clone(), 0), int(1));
        let row = clamped(a.clone(), binary(BinaryOp::Sub, last, i));
        builder.let_in("row", row, |_, row| row)
    });
    let program = builder.finish(body);
    let a = matrix(&[&[1.0, 2.0], &[3.0, 4.0], &[5.0, 6.0]]);
    let expected = matrix(&[&[5.0, 6.0], &[3.0, 4.0], &[1.0, 2.0]]);
    assert_eq!(run(&program, vec![a], &[]), Ok(expected));

    // `a[1]` alone is a row.
    let mut builder = Builder::default();
    let a = builder.param("a", Type::array(f64_type(), 2));
    let program = builder.finish(at(a, int(1)));
    let a = matrix(&[&[1.0, 2.0], &[3.0, 4.0]]);
    assert_eq!(run(&program, vec![a], &[]), Ok(f64_vector(&[3.0, 4.0])));
}

#[test]
fn clamped_reads_at_both_edges() {
    // `for i { x[i - 1] + x[i + 1] }`
    let mut builder = Builder::default();
    let x = builder.param("x", Type::array(f64_type(), 1));
    let body = builder.comprehension("i", len(x.clone(), 0), |_, i| {
        add(clamped(x.clone(), binary(BinaryOp::Sub, i.clone(), int(1))), clamped(x.clone(), add(i, int(1))))
    });
    let program = builder.finish(body);
    let result = run(&program, vec![f64_vector(&[1.0, 2.0, 3.0])], &[]);
    assert_eq!(result, Ok(f64_vector(&[3.0, 4.0, 5.0])));
    // Far out of range (and a usize index) clamps too.
    let mut builder = Builder::default();
    let x = builder.param("x", Type::array(f64_type(), 1));
    let huge = typed_int(-1, Type::scalar(Scalar::Usize));
    let program = builder.finish(add(clamped(x.clone(), int(i64::MIN)), clamped(x, huge)));
    assert_eq!(run(&program, vec![f64_vector(&[1.0, 2.0, 30.0])], &[]), Ok(Value::F64(31.0)));
}

#[test]
fn read_from_an_empty_axis_is_an_error() {
    let mut builder = Builder::default();
    let x = builder.param("x", Type::array(f64_type(), 1));
    let body = builder.comprehension("i", int(3), |_, i| clamped(x.clone(), i));
    let program = builder.finish(body);
    assert_eq!(error_of(run(&program, vec![f64_vector(&[])], &[])), "read from empty axis 0 of `x`");

    let mut builder = Builder::default();
    let a = builder.param("a", Type::array(f64_type(), 2));
    let program = builder.finish(clamped(at(a, int(0)), int(0)));
    let a = Value::Array(ArrayValue { shape: vec![2, 0], elements: Vec::new() });
    assert_eq!(error_of(run(&program, vec![a], &[])), "read from empty axis 1 of `a`");
}

#[test]
fn a_read_that_never_happens_is_not_an_error() {
    // `for i in 0..0 { x[i] }` on an empty `x`: nothing to read.
    let mut builder = Builder::default();
    let x = builder.param("x", Type::array(f64_type(), 1));
    let body = builder.comprehension("i", int(0), |_, i| clamped(x.clone(), i));
    let program = builder.finish(body);
    assert_eq!(run(&program, vec![f64_vector(&[])], &[]), Ok(f64_vector(&[])));
}

#[test]
fn select_evaluates_both_sides() {
    // `if n == 0 { 0 } else { 10 / n }` with n = 0 divides by zero in the unselected branch.
    let mut builder = Builder::default();
    let n = builder.param("n", Type::I64);
    let body = select(binary(BinaryOp::Eq, n.clone(), int(0)), int(0), binary(BinaryOp::Div, int(10), n));
    let program = builder.finish(body);
    assert_eq!(error_of(run(&program, vec![Value::I64(0)], &[])), "integer division by zero");
    assert_eq!(run(&program, vec![Value::I64(5)], &[]), Ok(Value::I64(2)));
}

#[test]
fn fold_with_a_tuple_accumulator() {
    // Fibonacci: `fold t in 0..n, acc = (0, 1) { (acc.1, acc.0 + acc.1) }`.
    let mut builder = Builder::default();
    let n = builder.param("n", Type::I64);
    let body = builder.fold("t", n, "acc", tuple(vec![int(0), int(1)]), |_, _, acc| {
        tuple(vec![project(acc.clone(), 1), add(project(acc.clone(), 0), project(acc, 1))])
    });
    let program = builder.finish(body);
    assert_eq!(run(&program, vec![Value::I64(10)], &[]), Ok(Value::Tuple(vec![Value::I64(55), Value::I64(89)])));
    assert_eq!(run(&program, vec![Value::I64(0)], &[]), Ok(Value::Tuple(vec![Value::I64(0), Value::I64(1)])));
    assert_eq!(error_of(run(&program, vec![Value::I64(-2)], &[])), "size of index `t` is -2");
}

#[test]
fn fold_with_an_array_accumulator() {
    // `fold t in 0..3, acc = x { for i { acc[i] + acc[i + 1] } }`: running pairwise sums.
    let mut builder = Builder::default();
    let x = builder.param("x", Type::array(f64_type(), 1));
    let body = builder.fold("t", int(2), "acc", x, |builder, _, acc| {
        builder.comprehension("i", len(acc.clone(), 0), |_, i| {
            add(at(acc.clone(), i.clone()), clamped(acc.clone(), add(i, int(1))))
        })
    });
    let program = builder.finish(body);
    // [1, 2, 4] -> [3, 6, 8] -> [9, 14, 16]
    assert_eq!(run(&program, vec![f64_vector(&[1.0, 2.0, 4.0])], &[]), Ok(f64_vector(&[9.0, 14.0, 16.0])));
}

fn arg_program(op: ReduceOp) -> Program {
    let mut builder = Builder::default();
    let x = builder.param("x", Type::array(f64_type(), 1));
    let body = builder.reduce(op, "k", len(x.clone(), 0), |_, k| at(x.clone(), k));
    builder.finish(body)
}

#[test]
fn argmax_and_argmin_ties_go_to_the_first_index() {
    let values = f64_vector(&[1.0, 3.0, -2.0, 3.0, -2.0]);
    assert_eq!(run(&arg_program(ReduceOp::ArgMax), vec![values.clone()], &[]), Ok(Value::Usize(1)));
    assert_eq!(run(&arg_program(ReduceOp::ArgMin), vec![values], &[]), Ok(Value::Usize(2)));
    // A NaN is never greater: it is skipped, unless it comes first.
    let with_nan = f64_vector(&[1.0, f64::NAN, 2.0]);
    assert_eq!(run(&arg_program(ReduceOp::ArgMax), vec![with_nan], &[]), Ok(Value::Usize(2)));
    let nan_first = f64_vector(&[f64::NAN, 5.0]);
    assert_eq!(run(&arg_program(ReduceOp::ArgMax), vec![nan_first], &[]), Ok(Value::Usize(0)));
}

#[test]
fn argmax_over_an_empty_range_is_an_error() {
    let empty = f64_vector(&[]);
    assert_eq!(
        error_of(run(&arg_program(ReduceOp::ArgMax), vec![empty.clone()], &[])),
        "argmax over an empty range of index `k`"
    );
    assert_eq!(
        error_of(run(&arg_program(ReduceOp::ArgMin), vec![empty], &[])),
        "argmin over an empty range of index `k`"
    );
}

#[test]
fn reductions_over_empty_ranges_give_identities() {
    let empty = f64_vector(&[]);
    let expectations = [
        (ReduceOp::Max, f64::NEG_INFINITY),
        (ReduceOp::Min, f64::INFINITY),
        (ReduceOp::Sum, 0.0),
        (ReduceOp::Prod, 1.0),
    ];
    for (op, expected) in expectations {
        assert_eq!(run(&arg_program(op), vec![empty.clone()], &[]), Ok(Value::F64(expected)), "{op:?}");
    }
    // Integers: MIN / MAX.
    let mut builder = Builder::default();
    let x = builder.param("x", Type::array(Type::scalar(Scalar::I32), 1));
    let largest = builder.reduce(ReduceOp::Max, "k", len(x.clone(), 0), |_, k| at(x.clone(), k));
    let smallest = builder.reduce(ReduceOp::Min, "l", len(x.clone(), 0), |_, l| at(x.clone(), l));
    let program = builder.finish(tuple(vec![largest, smallest]));
    assert_eq!(
        run(&program, vec![i32_vector(&[])], &[]),
        Ok(Value::Tuple(vec![Value::I32(i32::MIN), Value::I32(i32::MAX)]))
    );
    assert_eq!(
        run(&program, vec![i32_vector(&[4, -7, 9])], &[]),
        Ok(Value::Tuple(vec![Value::I32(9), Value::I32(-7)]))
    );
}

#[test]
fn float_max_ignores_nan_and_all_any_see_every_element() {
    let with_nan = f64_vector(&[1.0, f64::NAN, 0.5]);
    assert_eq!(run(&arg_program(ReduceOp::Max), vec![with_nan], &[]), Ok(Value::F64(1.0)));

    // `all k { x[k] > 0 }` and `any k { x[k] > 0 }`.
    let mut builder = Builder::default();
    let x = builder.param("x", Type::array(f64_type(), 1));
    let all = builder.reduce(ReduceOp::All, "k", len(x.clone(), 0), |_, k| {
        binary(BinaryOp::Gt, at(x.clone(), k), float(0.0, f64_type()))
    });
    let any = builder.reduce(ReduceOp::Any, "l", len(x.clone(), 0), |_, l| {
        binary(BinaryOp::Gt, at(x.clone(), l), float(0.0, f64_type()))
    });
    let program = builder.finish(tuple(vec![all, any]));
    let check = |values: &[f64], all: bool, any: bool| {
        assert_eq!(
            run(&program, vec![f64_vector(values)], &[]),
            Ok(Value::Tuple(vec![Value::Bool(all), Value::Bool(any)]))
        );
    };
    check(&[], true, false);
    check(&[1.0, -1.0], false, true);
    check(&[1.0, 2.0], true, true);
}

#[test]
fn negative_size_is_an_error() {
    let mut builder = Builder::default();
    let n = builder.param("n", Type::I64);
    let body = builder.comprehension("i", n, |_, _| float(1.0, f32_type()));
    let program = builder.finish(body);
    assert_eq!(error_of(run(&program, vec![Value::I64(-3)], &[])), "size of index `i` is -3");
    let expected = Value::Array(ArrayValue::vector(vec![Value::F32(1.0); 2]));
    assert_eq!(run(&program, vec![Value::I64(2)], &[]), Ok(expected));

    let mut builder = Builder::default();
    let n = builder.param("n", Type::I64);
    let body = builder.reduce(ReduceOp::Sum, "k", n, |_, _| float(1.0, f32_type()));
    let program = builder.finish(body);
    assert_eq!(error_of(run(&program, vec![Value::I64(-1)], &[])), "size of index `k` is -1");
}

#[test]
fn type_parameters_take_their_type_arguments() {
    // Expression form: `sum k { x[k] * 2 }` with the element type of `x` left to rustc.
    let mut builder = Builder::default();
    let witness = VarId(0);
    let element = builder.type_param(witness, NumberClass::Number);
    let element_type = Type::Scalar(element);
    let x = builder.param("x", Type::array(element_type.clone(), 1));
    let body = builder.reduce(ReduceOp::Sum, "k", len(x.clone(), 0), |_, k| {
        mul(at(x.clone(), k), typed_int(2, element_type.clone()))
    });
    let program = builder.finish(body);
    assert_eq!(run(&program, vec![i32_vector(&[1, 2, 3])], &[Scalar::I32]), Ok(Value::I32(12)));
    assert_eq!(run(&program, vec![f64_vector(&[0.5, 1.0])], &[Scalar::F64]), Ok(Value::F64(3.0)));
    // The argument must have the element type named by the type argument.
    let message = error_of(run(&program, vec![f64_vector(&[0.5])], &[Scalar::F32]));
    assert_eq!(message, "argument `x` should be [T0]: element 0: got f64");
    assert_eq!(
        error_of(run(&program, vec![f64_vector(&[0.5])], &[])),
        "the program has 1 type parameters but 0 type arguments were given"
    );
}

#[test]
fn arguments_are_checked_against_parameter_types() {
    let program = matmul_program();
    let vector = f64_vector(&[1.0]);
    let square = matrix(&[&[1.0]]);
    assert_eq!(
        error_of(run(&program, vec![square.clone(), vector], &[])),
        "argument `b` should be [[f64]]: got an array of rank 1 (shape [1])"
    );
    let single = Value::Array(ArrayValue { shape: vec![1, 1], elements: vec![Value::F32(1.0)] });
    assert_eq!(
        error_of(run(&program, vec![single, square.clone()], &[])),
        "argument `a` should be [[f64]]: element 0: got f32"
    );
    let ragged = Value::Array(ArrayValue { shape: vec![2, 2], elements: vec![Value::F64(1.0)] });
    assert_eq!(
        error_of(run(&program, vec![square.clone(), ragged], &[])),
        "argument `b` should be [[f64]]: shape [2, 2] does not match its 1 elements"
    );
    assert_eq!(
        error_of(run(&program, vec![square.clone(), Value::F64(1.0)], &[])),
        "argument `b` should be [[f64]]: got f64"
    );
    assert_eq!(error_of(run(&program, vec![square], &[])), "the program takes 2 arguments but 1 were given");
}

#[test]
fn integers_wrap() {
    let mut builder = Builder::default();
    let i32_type = Type::scalar(Scalar::I32);
    let big = builder.param("big", i32_type.clone());
    let small = builder.param("small", Type::I64);
    let body = tuple(vec![
        add(big.clone(), typed_int(1, i32_type.clone())),
        mul(big.clone(), typed_int(2, i32_type.clone())),
        binary(BinaryOp::Div, small.clone(), int(-1)),
        binary(BinaryOp::Rem, small.clone(), int(-1)),
        node(ExprKind::Unary(node::Unary { op: UnaryOp::Neg, operand: Box::new(small.clone()) }), Type::I64),
        node(ExprKind::Call(node::Call { func: Func::Abs, args: vec![small.clone()] }), Type::I64),
        binary(BinaryOp::Sub, typed_int(0, Type::scalar(Scalar::Usize)), typed_int(1, Type::scalar(Scalar::Usize))),
        binary(BinaryOp::Div, int(-7), int(2)),
        binary(BinaryOp::Rem, int(-7), int(2)),
    ]);
    let program = builder.finish(body);
    let result = run(&program, vec![Value::I32(i32::MAX), Value::I64(i64::MIN)], &[]);
    assert_eq!(
        result,
        Ok(Value::Tuple(vec![
            Value::I32(i32::MIN),
            Value::I32(-2),
            Value::I64(i64::MIN),
            Value::I64(0),
            Value::I64(i64::MIN),
            Value::I64(i64::MIN),
            Value::Usize(usize::MAX),
            Value::I64(-3),
            Value::I64(-1),
        ]))
    );
}

#[test]
fn casts_follow_rust_as() {
    let mut builder = Builder::default();
    let x = builder.param("x", f64_type());
    let cast = |operand: Expr, to: Scalar| {
        node(
            ExprKind::Cast(node::Cast { operand: Box::new(operand), to: ScalarType::Known(to), saturating: false }),
            Type::scalar(to),
        )
    };
    let body = tuple(vec![
        cast(x.clone(), Scalar::I32),
        cast(x.clone(), Scalar::Usize),
        cast(x.clone(), Scalar::F32),
        cast(int(-1), Scalar::Usize),
        cast(node(ExprKind::Literal(Literal::Bool(true)), Type::BOOL), Scalar::I64),
    ]);
    let program = builder.finish(body);
    let result = run(&program, vec![Value::F64(-1e20)], &[]);
    assert_eq!(
        result,
        Ok(Value::Tuple(vec![
            Value::I32(i32::MIN),
            Value::Usize(0),
            Value::F32(-1e20),
            Value::Usize(usize::MAX),
            Value::I64(1),
        ]))
    );
    let nan = run(&program, vec![Value::F64(f64::NAN)], &[]);
    let Ok(Value::Tuple(fields)) = nan else { panic!("expected a tuple, got {nan:?}") };
    assert_eq!(fields[0], Value::I32(0));
}

#[test]
fn float_division_by_zero_is_not_an_error() {
    let mut builder = Builder::default();
    let x = builder.param("x", f32_type());
    let program = builder.finish(binary(BinaryOp::Div, x, float(0.0, f32_type())));
    assert_eq!(run(&program, vec![Value::F32(1.0)], &[]), Ok(Value::F32(f32::INFINITY)));
}

#[test]
fn internal_errors_are_reported_not_panicked() {
    // A variable used outside its binder.
    let mut builder = Builder::default();
    let index = builder.declare("i", Type::I64, VarKind::Index);
    let program = builder.finish(node(ExprKind::Var(index), Type::I64));
    assert_eq!(error_of(run(&program, vec![], &[])), "internal error: variable `i` is used unbound");

    // An undeclared variable.
    let program = Builder::default().finish(node(ExprKind::Var(VarId(7)), Type::I64));
    assert!(error_of(run(&program, vec![], &[])).starts_with("internal error"));

    // An ill-typed operation.
    let program = Builder::default().finish(add(int(1), float(1.0, f64_type())));
    assert!(error_of(run(&program, vec![], &[])).starts_with("internal error"));

    // A proven read that is out of range.
    let mut builder = Builder::default();
    let x = builder.param("x", Type::array(f64_type(), 1));
    let program = builder.finish(at(x, int(5)));
    assert!(error_of(run(&program, vec![f64_vector(&[1.0])], &[])).starts_with("internal error"));

    // A tree nested deeper than the interpreter recurses.
    let mut deep = int(0);
    for _ in 0..100_000 {
        deep = add(deep, int(1));
    }
    let program = Builder::default().finish(deep);
    assert_eq!(error_of(run(&program, vec![], &[])), "internal error: expression nested too deeply to interpret");
    // `Expr`'s recursive drop would itself overflow the stack at this depth; leak it instead.
    std::mem::forget(program);
}

#[test]
fn trees_up_to_the_nesting_limit_evaluate() {
    // Binary operators, comprehensions, folds and lets, each 399 deep plus a leaf: the limit
    // is 400 levels, and a test thread's small stack must hold them.
    let mut deep = int(0);
    for _ in 0..399 {
        deep = add(deep, int(1));
    }
    let program = Builder::default().finish(deep);
    assert_eq!(run(&program, vec![], &[]), Ok(Value::I64(399)));

    let mut builder = Builder::default();
    let indices: Vec<VarId> = (0..399).map(|_| builder.declare("i", Type::I64, VarKind::Index)).collect();
    let mut deep = int(7);
    for &index in indices.iter().rev() {
        let ty = deep.ty.with_outer_axis();
        deep = node(ExprKind::For(node::For { index, size: Box::new(int(1)), body: Box::new(deep) }), ty);
    }
    let program = builder.finish(deep);
    let Ok(Value::Array(array)) = run(&program, vec![], &[]) else { panic!("expected an array") };
    assert_eq!((array.shape.len(), array.elements), (399, vec![Value::I64(7)]));

    let mut builder = Builder::default();
    let variables: Vec<(VarId, VarId)> = (0..399)
        .map(|_| {
            (builder.declare("t", Type::I64, VarKind::Index), builder.declare("acc", Type::I64, VarKind::Accumulator))
        })
        .collect();
    // The innermost body reads the innermost accumulator; every other body is the next fold.
    let mut deep = node(ExprKind::Var(variables[398].1), Type::I64);
    for &(index, acc) in variables.iter().rev() {
        let init = Box::new(int(5));
        deep = node(
            ExprKind::Fold(node::Fold { index, count: Box::new(int(1)), acc, init, body: Box::new(deep) }),
            Type::I64,
        );
    }
    let program = builder.finish(deep);
    assert_eq!(run(&program, vec![], &[]), Ok(Value::I64(5)));

    let mut builder = Builder::default();
    let lets: Vec<VarId> = (0..399).map(|_| builder.declare("x", Type::I64, VarKind::Let)).collect();
    let mut deep = int(3);
    for &var in lets.iter().rev() {
        deep = node(ExprKind::Let(node::Let { var, value: Box::new(int(1)), body: Box::new(deep) }), Type::I64);
    }
    let program = builder.finish(deep);
    assert_eq!(run(&program, vec![], &[]), Ok(Value::I64(3)));
}

#[test]
fn approx_eq_and_from_fn() {
    assert!(Value::F64(1.0).approx_eq(&Value::F64(1.0 + 1e-12), 1e-9));
    assert!(!Value::F64(1.0).approx_eq(&Value::F64(1.1), 1e-9));
    assert!(Value::F32(f32::NAN).approx_eq(&Value::F32(f32::NAN), 0.0));
    assert!(Value::F64(0.0).approx_eq(&Value::F64(1e-12), 1e-9));
    assert!(!Value::F64(f64::INFINITY).approx_eq(&Value::F64(f64::NEG_INFINITY), 1.0));
    assert!(!Value::F32(1.0).approx_eq(&Value::F64(1.0), 1.0));
    assert!(!Value::I64(1).approx_eq(&Value::I64(2), 1.0));
    let array = ArrayValue::from_fn(vec![2, 3], |index| Value::Usize(index[0] * 10 + index[1]));
    assert_eq!(array.elements, [0, 1, 2, 10, 11, 12].map(Value::Usize).to_vec());
    assert_eq!(array.get(&[1, 2]), Some(&Value::Usize(12)));
    assert_eq!(array.get(&[2, 0]), None);
    assert_eq!(Value::Usize(1).scalar_type(), Some(Scalar::Usize));
    assert_eq!(Value::Array(array).scalar_type(), None);
}

/// softmax over rows, hand-hoisted: a `let` per row, a select, a clamped read, a record type.
#[test]
fn printer_output_is_exact() {
    let mut builder = Builder::default();
    let x = builder.param("x", Type::array(f32_type(), 2));
    let body = builder.comprehension("i", len(x.clone(), 0), |builder, i| {
        let row_max = builder.reduce(ReduceOp::Max, "k", len(x.clone(), 1), |_, k| at(at(x.clone(), i.clone()), k));
        builder.let_in("m", row_max, |builder, m| {
            builder.comprehension("j", len(x.clone(), 1), |builder, j| {
                let shifted = binary(BinaryOp::Sub, clamped(at(x.clone(), i.clone()), j), m.clone());
                let exp = node(ExprKind::Call(node::Call { func: Func::Exp, args: vec![shifted] }), f32_type());
                // A second variable named `k`, to show disambiguation.
                let total = builder.reduce(ReduceOp::Sum, "k", len(x.clone(), 1), |_, k| {
                    let shifted = binary(BinaryOp::Sub, at(at(x.clone(), i.clone()), k), m.clone());
                    node(ExprKind::Call(node::Call { func: Func::Exp, args: vec![shifted] }), f32_type())
                });
                let negative = binary(BinaryOp::Lt, m.clone(), float(0.0, f32_type()));
                select(
                    negative,
                    float(-1.5, f32_type()),
                    binary(BinaryOp::Div, exp, mul(total, float(2.0, f32_type()))),
                )
            })
        })
    });
    let checks = vec![size_check(len(x.clone(), 1), len(x.clone(), 1), "axis 1 of `x`", "axis 1 of `x`", "j")];
    let program = builder.finish(assert_sizes(checks, body));
    let expected = "\
fn(x: [[f32]]) -> [[f32]]
assert len(x, 1) == len(x, 1) (j)
for i in 0..len(x, 0) {
  let m: f32 = max k#2 in 0..len(x, 1) { x[i][k#2] }
  for j in 0..len(x, 1) {
    if m < 0.0 { -1.5 } else { exp(x[i][j]~ - m) / (sum k#5 in 0..len(x, 1) { exp(x[i][k#5] - m) } * 2.0) }
  }
}";
    assert_eq!(program.to_string(), expected);
    let m_value = match &program.body.kind {
        ExprKind::Assert(node::Assert { body, .. }) => match &body.kind {
            ExprKind::For(node::For { body, .. }) => body,
            _ => unreachable!(),
        },
        _ => unreachable!(),
    };
    assert_eq!(
        crate::ir::expr_to_string(&program, m_value),
        "let m: f32 = max k#2 in 0..len(x, 1) { x[i][k#2] }\nfor j in 0..len(x, 1) {\n  if m < 0.0 { -1.5 } else { exp(x[i][j]~ - m) / (sum k#5 in 0..len(x, 1) { exp(x[i][k#5] - m) } * 2.0) }\n}"
    );
}

#[test]
fn printer_shows_types_tuples_folds_and_inline_lets() {
    let mut builder = Builder::default();
    let witness = VarId(0);
    let element = builder.type_param(witness, NumberClass::Float);
    let x = builder.param("x", Type::array(Type::Scalar(element), 1));
    let record = Type::Tuple { fields: vec![f64_type(), f64_type()], names: vec!["re".into(), "im".into()] };
    let z = builder.param("z", record.clone());
    let body =
        builder.fold("t", len(x.clone(), 0), "acc", tuple(vec![int(0), float(1.0, f64_type())]), |builder, t, acc| {
            let inner = builder.let_in("y", project(z.clone(), 1), |_, y| y);
            let negated =
                node(ExprKind::Unary(node::Unary { op: UnaryOp::Neg, operand: Box::new(int(-2)) }), Type::I64);
            tuple(vec![add(binary(BinaryOp::Sub, t, project(acc.clone(), 0)), negated), add(project(acc, 1), inner)])
        });
    let program = builder.finish(body);
    let expected = "\
fn<T0: Float>(x: [T0], z: {re: f64, im: f64}) -> (i64, f64)
fold t in 0..len(x, 0), acc: (i64, f64) = (0, 1.0) {
  (t - acc.0 + -(-2), acc.1 + { let y: f64 = z.im; y })
}";
    assert_eq!(program.to_string(), expected);
}

// ---------------------------------------------------------------------------------------------
// Scalar functions, by the function table.

mod functions {
    use super::super::datum::Datum;
    use super::super::scalar::call;
    use crate::ops::{Domain, Func, Scalar};

    fn int(ty: Scalar, value: i128) -> Datum {
        Datum::Int(ty, value)
    }

    fn int_of(datum: Datum) -> i128 {
        match datum {
            Datum::Int(_, value) => value,
            other => panic!("not an integer: {other:?}"),
        }
    }

    fn f64_of(datum: Datum) -> f64 {
        match datum {
            Datum::F64(value) => value,
            other => panic!("not an f64: {other:?}"),
        }
    }

    fn apply(func: Func, args: Vec<Datum>) -> Datum {
        call(func, args).unwrap_or_else(|error| panic!("{} failed: {error}", func.name()))
    }

    fn message(func: Func, args: Vec<Datum>) -> String {
        match call(func, args) {
            Ok(value) => panic!("{} returned {value:?}", func.name()),
            Err(error) => error.message,
        }
    }

    #[test]
    fn every_float_function_is_std_on_f32_and_f64() {
        let inputs = [-2.5f64, -1.0, -0.0, 0.0, 0.3, 1.0, 7.25, f64::INFINITY, f64::NAN, 1e300];
        for &func in Func::ALL {
            let count = func.arity();
            for &x in &inputs {
                let args64: Vec<Datum> = (0..count).map(|k| operand(func, k, x, false)).collect();
                let args32: Vec<Datum> = (0..count).map(|k| operand(func, k, x, true)).collect();
                let (Ok(result64), Ok(result32)) = (call(func, args64), call(func, args32)) else {
                    // Only integer functions refuse floats.
                    assert_eq!(func.domain(), Domain::Int, "{} failed on {x}", func.name());
                    continue;
                };
                let expected = std_f64(func, x);
                match result64 {
                    Datum::F64(value) => {
                        assert!(same(value, expected), "{}({x}) = {value}, std {expected}", func.name())
                    }
                    Datum::Bool(value) => assert_eq!(f64::from(u8::from(value)), expected, "{}({x})", func.name()),
                    other => panic!("{}: {other:?}", func.name()),
                }
                assert!(matches!(result32, Datum::F32(_) | Datum::Bool(_)), "{}: f32 in, f32 or bool out", func.name());
            }
        }
    }

    /// Argument `k` of a call of `func` on `x`: `x`, then 0.75 for a second float, 2.0 for a
    /// third, 3 for `powi`'s exponent.
    fn operand(func: Func, k: usize, x: f64, f32_arguments: bool) -> Datum {
        let value = match k {
            0 => x,
            1 if func.name() == "powi" => return Datum::Int(Scalar::I32, 3),
            1 if func.name() == "clamp" => -1.0,
            1 => 0.75,
            _ => 2.0,
        };
        if f32_arguments {
            Datum::F32(value as f32)
        } else {
            Datum::F64(value)
        }
    }

    /// std's answer for [`operand`]'s arguments, written out by hand (booleans as 0 or 1).
    fn std_f64(func: Func, x: f64) -> f64 {
        let b = |value: bool| f64::from(u8::from(value));
        match func.name() {
            "abs" => x.abs(),
            "signum" => x.signum(),
            "floor" => x.floor(),
            "ceil" => x.ceil(),
            "round" => x.round(),
            "trunc" => x.trunc(),
            "fract" => x.fract(),
            "sqrt" => x.sqrt(),
            "cbrt" => x.cbrt(),
            "recip" => x.recip(),
            "to_degrees" => x.to_degrees(),
            "to_radians" => x.to_radians(),
            "exp" => x.exp(),
            "exp2" => x.exp2(),
            "exp_m1" => x.exp_m1(),
            "ln" => x.ln(),
            "ln_1p" => x.ln_1p(),
            "log2" => x.log2(),
            "log10" => x.log10(),
            "powi" => x.powi(3),
            "powf" | "pow" => x.powf(0.75),
            "sin" => x.sin(),
            "cos" => x.cos(),
            "tan" => x.tan(),
            "asin" => x.asin(),
            "acos" => x.acos(),
            "atan" => x.atan(),
            "atan2" => x.atan2(0.75),
            "sinh" => x.sinh(),
            "cosh" => x.cosh(),
            "tanh" => x.tanh(),
            "asinh" => x.asinh(),
            "acosh" => x.acosh(),
            "atanh" => x.atanh(),
            "hypot" => x.hypot(0.75),
            "copysign" => x.copysign(0.75),
            "mul_add" => x.mul_add(0.75, 2.0),
            "min" => x.min(0.75),
            "max" => x.max(0.75),
            "clamp" => x.clamp(-1.0, 2.0),
            "is_nan" => b(x.is_nan()),
            "is_finite" => b(x.is_finite()),
            "is_infinite" => b(x.is_infinite()),
            other => panic!("no std answer written for `{other}`"),
        }
    }

    fn same(left: f64, right: f64) -> bool {
        left.to_bits() == right.to_bits() || left.is_nan() && right.is_nan()
    }

    #[test]
    fn integer_functions_wrap_at_the_type() {
        assert_eq!(int_of(apply(Func::Abs, vec![int(Scalar::I8, -128)])), -128);
        assert_eq!(int_of(apply(Func::Abs, vec![int(Scalar::I64, -5)])), 5);
        assert_eq!(int_of(apply(Func::Abs, vec![int(Scalar::U8, 200)])), 200);
        assert_eq!(int_of(apply(Func::Signum, vec![int(Scalar::I32, -9)])), -1);
        assert_eq!(int_of(apply(Func::Pow, vec![int(Scalar::U8, 3), int(Scalar::U32, 6)])), 729 % 256);
        assert_eq!(int_of(apply(Func::Pow, vec![int(Scalar::I16, -2), int(Scalar::U32, 15)])), -32768);
        assert_eq!(int_of(apply(Func::Pow, vec![int(Scalar::I64, 3), int(Scalar::U32, 4_000_000_000)])), {
            i128::from(3i64.wrapping_pow(4_000_000_000))
        });
        assert_eq!(int_of(apply(Func::RemEuclid, vec![int(Scalar::I32, -7), int(Scalar::I32, 3)])), 2);
        assert_eq!(int_of(apply(Func::RemEuclid, vec![int(Scalar::I32, -7), int(Scalar::I32, -3)])), 2);
        assert_eq!(int_of(apply(Func::DivEuclid, vec![int(Scalar::I32, -7), int(Scalar::I32, 3)])), -3);
        // MIN / -1 wraps, as ein's `/` does.
        let min = i128::from(i64::MIN);
        assert_eq!(int_of(apply(Func::DivEuclid, vec![int(Scalar::I64, min), int(Scalar::I64, -1)])), min);
        assert_eq!(int_of(apply(Func::RemEuclid, vec![int(Scalar::I64, min), int(Scalar::I64, -1)])), 0);
        assert_eq!(int_of(apply(Func::Clamp, vec![int(Scalar::U16, 9), int(Scalar::U16, 2), int(Scalar::U16, 5)])), 5);
        assert_eq!(int_of(apply(Func::Min, vec![int(Scalar::Usize, 9), int(Scalar::Usize, 2)])), 2);
        // Bit counts are `u32`s counted in the argument's width, as std's.
        for (func, ty, value, count) in [
            (Func::CountOnes, Scalar::I8, -1, 8),
            (Func::CountZeros, Scalar::I16, -2, 1),
            (Func::LeadingZeros, Scalar::U64, 1, 63),
            (Func::LeadingZeros, Scalar::Usize, 0, 64),
            (Func::TrailingZeros, Scalar::I32, i128::from(i32::MIN), 31),
        ] {
            let result = apply(func, vec![int(ty, value)]);
            assert!(matches!(result, Datum::Int(Scalar::U32, n) if n == count), "{}: {result:?}", func.name());
        }
    }

    #[test]
    fn failing_calls_are_ein_errors() {
        assert_eq!(message(Func::RemEuclid, vec![int(Scalar::U8, 7), int(Scalar::U8, 0)]), "integer division by zero");
        assert_eq!(message(Func::DivEuclid, vec![int(Scalar::I8, 7), int(Scalar::I8, 0)]), "integer division by zero");
        assert_eq!(
            message(Func::Clamp, vec![int(Scalar::I32, 1), int(Scalar::I32, 3), int(Scalar::I32, 2)]),
            "`clamp` needs min <= max (and no NaN bound), but min is 3 and max is 2"
        );
        assert_eq!(
            message(Func::Clamp, vec![Datum::F32(1.0), Datum::F32(f32::NAN), Datum::F32(2.0)]),
            "`clamp` needs min <= max (and no NaN bound), but min is NaN and max is 2.0"
        );
        // Equal bounds are fine; a NaN value is returned as it is, as std does.
        assert!(f64_of(apply(Func::Clamp, vec![Datum::F64(f64::NAN), Datum::F64(1.0), Datum::F64(1.0)])).is_nan());
        // Floats have no Euclidean division by zero error (the checker refuses them anyway).
        assert!(call(Func::Sqrt, vec![int(Scalar::I64, 4)]).is_err_and(|error| error.message.starts_with("internal")));
    }
}

/// `extern fn`s run the Rust functions registered for them, and fail by name otherwise.
#[test]
fn extern_calls_run_the_registered_functions() {
    let source = "extern fn halve(x: f64) -> f64; pub fn f(a: [f64]) -> [f64] { for i { halve(a[i]) + 1.0 } }";
    let tokens: proc_macro2::TokenStream = source.parse().expect("tokenises");
    let units = crate::check::check_input(crate::syntax::parse_input(tokens).expect("parses")).expect("checks");
    let program = &units[0].program;
    let externs = super::Externs::default().with("halve", |args| match args {
        [Value::F64(x)] => Value::F64(x / 2.0),
        _ => Value::Bool(false),
    });
    let result = super::run_with_externs(program, vec![f64_vector(&[2.0, 5.0])], &[], &externs);
    assert_eq!(result, Ok(f64_vector(&[2.0, 3.5])));
    let missing = run(program, vec![f64_vector(&[2.0])], &[]).map_err(|error| error.message);
    assert_eq!(
        missing,
        Err("the interpreter was given no Rust function for `extern fn halve` (see `interp::Externs`)".into())
    );
    let wrong = super::Externs::default().with("halve", |_| Value::I64(1));
    let wrong = super::run_with_externs(program, vec![f64_vector(&[2.0])], &[], &wrong).map_err(|error| error.message);
    assert_eq!(wrong, Err("the interpreter's `halve` returned a i64 where `extern fn halve` returns `f64`".into()));
}

/// Checks the one function in `source` and runs it on `args`.
fn run_source(source: &str, args: Vec<Value>) -> Result<Value, RuntimeError> {
    let tokens: proc_macro2::TokenStream = source.parse().expect("test source tokenises");
    let input = crate::syntax::parse_input(tokens).expect("parses");
    let program = crate::check::check_input(input).expect("checks").remove(0).program;
    run(&program, args, &[])
}

fn f64_elements(value: Value) -> Vec<f64> {
    let Value::Array(array) = value else { panic!("expected an array, got {value:?}") };
    array
        .elements
        .into_iter()
        .map(|element| match element {
            Value::F64(value) => value,
            other => panic!("expected f64, got {other:?}"),
        })
        .collect()
}

#[test]
fn scans_give_every_state() {
    let prefix = "fn f(x: [f64]) -> [f64] { scan t, s = 0.0 { s + x[t] } }";
    assert_eq!(f64_elements(run_source(prefix, vec![f64_vector(&[1.0, 2.0, 3.5])]).unwrap()), [1.0, 3.0, 6.5]);
    assert_eq!(f64_elements(run_source(prefix, vec![f64_vector(&[])]).unwrap()), Vec::<f64>::new());
    let running_max = "fn f(x: [i32]) -> [i32] { scan t, m = x[0] { max(m, x[t]) } }";
    let maxima = run_source(running_max, vec![i32_vector(&[3, 1, 4, 1, 5, 9, 2])]).unwrap();
    assert_eq!(maxima, Value::Array(ArrayValue::vector([3, 3, 4, 4, 5, 9, 9].map(Value::I32).to_vec())));
    // A record state: an array of records, one per step.
    let record = "fn f(x: [f64]) -> [{ sum: f64, count: i64 }] { scan t, r = { sum: 0.0, count: 0 } { { sum: r.sum + x[t], count: r.count + 1 } } }";
    let Value::Array(states) = run_source(record, vec![f64_vector(&[2.0, 5.0])]).unwrap() else { panic!("an array") };
    assert_eq!(states.elements[1], Value::Tuple(vec![Value::F64(7.0), Value::I64(2)]));
    // The step's failure is the program's (an empty read must happen), in index order.
    let clamped = "fn f(x: [f64], n: i64) -> [f64] { scan t in 0..n, s = 0.0 { s + x[t] } }";
    assert!(
        error_of(run_source(clamped, vec![f64_vector(&[]), Value::I64(2)])).contains("read from empty axis 0 of `x`")
    );
    assert_eq!(f64_elements(run_source(clamped, vec![f64_vector(&[]), Value::I64(0)]).unwrap()), Vec::<f64>::new());
}

#[test]
fn long_associative_scans_use_the_documented_block_grouping() {
    use crate::ir::scan::SCAN_BLOCK;
    let count = 2 * SCAN_BLOCK + 5;
    let values: Vec<f64> = (0..count).map(|i| 1.0 / (i as f64 + 3.0)).collect();
    // Note [scan grouping], written out: offsets chained from the blocks' own totals.
    let mut expected = Vec::new();
    let mut offset = 0.25;
    for block in values.chunks(SCAN_BLOCK) {
        let mut running = offset;
        for value in block {
            running += value;
            expected.push(running);
        }
        offset += block[1..].iter().fold(block[0], |total, value| total + value);
    }
    let mut serial = Vec::new();
    let mut running = 0.25;
    for value in &values {
        running += value;
        serial.push(running);
    }
    let bits = |states: &[f64]| states.iter().map(|state| state.to_bits()).collect::<Vec<u64>>();
    // The grouping is visible in the last bits: the test would not tell them apart otherwise.
    assert_ne!(bits(&expected), bits(&serial));
    let prefix = "fn f(x: [f64]) -> [f64] { scan t, s = 0.25 { s + x[t] } }";
    let states = f64_elements(run_source(prefix, vec![f64_vector(&values)]).unwrap());
    assert_eq!(bits(&states), bits(&expected));
    // The accumulator on the right, through a `let`: the same grouping (`+` commutes exactly).
    let flipped = "fn f(x: [f64]) -> [f64] { scan t, s = 0.25 { let y = x[t]; y + s } }";
    assert_eq!(bits(&f64_elements(run_source(flipped, vec![f64_vector(&values)]).unwrap())), bits(&expected));
    // A step that is not associative is the plain serial loop, however long.
    let damped = "fn f(x: [f64]) -> [f64] { scan t, s = 0.25 { s * 1.0 - 0.0 + x[t] } }";
    assert_eq!(bits(&f64_elements(run_source(damped, vec![f64_vector(&values)]).unwrap())), bits(&serial));
}

fn vector_of(values: Vec<Value>) -> Value {
    Value::Array(ArrayValue::vector(values))
}

#[test]
fn accums_apply_every_update_in_order() {
    let hist =
        "pub fn hist(data: [u8]) -> [u32] { accum h = for b in 0..4 { 0 } { for k { h[data[k] as usize] += 1 } } }";
    let data = vector_of([0u8, 3, 3, 1, 3].map(Value::U8).to_vec());
    assert_eq!(run_source(hist, vec![data]).unwrap(), vector_of([1u32, 1, 0, 3].map(Value::U32).to_vec()));
    // Several updates, a condition, a `let`, a 2-D target; integers wrap.
    let several = "fn f(a: [i64], x: [f64]) -> [[i32]] { accum h = for r in 0..2, c in 0..2 { 0 } { for i { let k = a[i]; if x[i] > 0.0 { h[k, 0] += 1; h[k, 1] += 2147483647 } } } }";
    let result =
        run_source(several, vec![vector_of([0i64, 1, 1].map(Value::I64).to_vec()), f64_vector(&[1.0, -1.0, 2.0])]);
    let Value::Array(grid) = result.unwrap() else { panic!("an array") };
    assert_eq!(grid.shape, [2, 2]);
    assert_eq!(grid.elements, [1, 2147483647, 1, 2147483647].map(Value::I32).to_vec());
    // `*=` and `|=`, with no loop at all.
    let product = "fn f(x: [f64]) -> [f64] { accum p = x { p[1] *= 3.0 } }";
    assert_eq!(f64_elements(run_source(product, vec![f64_vector(&[1.0, 2.0])]).unwrap()), [1.0, 6.0]);
    let seen = "fn f(k: [i64]) -> [bool] { accum s = for j in 0..3 { false } { for i { s[k[i]] |= true } } }";
    let flags = run_source(seen, vec![vector_of([2i64, 0].map(Value::I64).to_vec())]).unwrap();
    assert_eq!(flags, vector_of([true, false, true].map(Value::Bool).to_vec()));
}

#[test]
fn accum_indices_out_of_range_fail_naming_the_index_target_and_size() {
    let scatter =
        "fn f(idx: [i64], v: [f64]) -> [f64] { accum y = for j in 0..3 { 0.0 } { for i { y[idx[i]] += v[i] } } }";
    let index = vector_of([0i64, 7, -1].map(Value::I64).to_vec());
    assert_eq!(
        error_of(run_source(scatter, vec![index, f64_vector(&[1.0, 2.0, 3.0])])),
        "index 7 out of range for axis 0 of `y` (size 3)"
    );
    // A false condition applies nothing, so its index is never checked.
    let guarded = "fn f(idx: [i64]) -> [f64] { accum y = for j in 0..2 { 0.0 } { for i { if idx[i] < 2 { y[idx[i]] += 1.0 } } } }";
    let index = vector_of([1i64, 9].map(Value::I64).to_vec());
    assert_eq!(f64_elements(run_source(guarded, vec![index]).unwrap()), [0.0, 1.0]);
}

#[test]
fn long_float_accums_use_the_documented_grouping() {
    use crate::ir::accum::{accum_groups, group_range};
    let count = 3 * crate::ir::accum::ACCUM_MIN_GROUP + 7;
    let values: Vec<f64> = (0..count).map(|i| 1.0 / (i as f64 + 3.0)).collect();
    let groups = accum_groups(count, 2, false);
    assert_eq!(groups, 3);
    // Note [accum grouping], written out for two bins (even and odd positions).
    let mut arrays = Vec::new();
    for group in 0..groups {
        let mut own = if group == 0 { vec![0.5, 0.25] } else { vec![-0.0, -0.0] };
        for i in group_range(count, groups, group) {
            own[i % 2] += values[i];
        }
        arrays.push(own);
    }
    let expected: Vec<f64> = (0..2).map(|bin| (arrays[0][bin] + arrays[1][bin]) + arrays[2][bin]).collect();
    let source =
        "fn f(x: [f64]) -> [f64] { accum h = for b in 0..2 { 0.5 / (b as f64 + 1.0) } { for i { h[i % 2] += x[i] } } }";
    let result = f64_elements(run_source(source, vec![f64_vector(&values)]).unwrap());
    let bits = |values: &[f64]| values.iter().map(|value| value.to_bits()).collect::<Vec<u64>>();
    assert_eq!(bits(&result), bits(&expected));
}

#[test]
fn tuple_and_record_reductions_reduce_each_component() {
    let moments = "fn f(x: [f64]) -> (f64, f64) { sum k { (x[k], x[k] * x[k]) } }";
    assert_eq!(
        run_source(moments, vec![f64_vector(&[1.0, 2.0, 3.0])]),
        Ok(Value::Tuple(vec![Value::F64(6.0), Value::F64(14.0)]))
    );
    // Empty: the tuple of identities; a literal component is typed from the result (`i64`).
    assert_eq!(run_source(moments, vec![f64_vector(&[])]), Ok(Value::Tuple(vec![Value::F64(0.0), Value::F64(0.0)])));
    let counted = "fn f(x: [f64]) -> { s: f64, n: i64 } { sum k { { s: x[k], n: 1 } } }";
    assert_eq!(
        run_source(counted, vec![f64_vector(&[0.5, 0.25])]),
        Ok(Value::Tuple(vec![Value::F64(0.75), Value::I64(2)]))
    );
    // max and min are component-wise, not lexicographic; nested tuples too.
    let extremes = "fn f(x: [i32]) -> ((i32, i32), i32) { max k { ((x[k], -x[k]), x[k] * x[k]) } }";
    let result = run_source(extremes, vec![i32_vector(&[3, -5, 2])]);
    assert_eq!(result, Ok(Value::Tuple(vec![Value::Tuple(vec![Value::I32(3), Value::I32(5)]), Value::I32(25)])));
    let empty_min = "fn f(x: [f64]) -> (f64, f64) { min k { (x[k], 0.0 - x[k]) } }";
    assert_eq!(
        run_source(empty_min, vec![f64_vector(&[])]),
        Ok(Value::Tuple(vec![Value::F64(f64::INFINITY), Value::F64(f64::INFINITY)]))
    );
    // An array of tuples from a comprehension of tuple reductions.
    let rows = "fn f(x: [f64]) -> [(f64, f64)] { for i { prod k { (x[k], x[i]) } } }";
    let Value::Array(rows) = run_source(rows, vec![f64_vector(&[2.0, 3.0])]).unwrap() else { panic!("an array") };
    assert_eq!(rows.elements[1], Value::Tuple(vec![Value::F64(6.0), Value::F64(9.0)]));
}

#[test]
fn filters_keep_elements_in_index_order_and_evaluate_every_element() {
    let positives = "fn f(x: [f64]) -> [f64] { for i where x[i] > 0.0 { x[i] * 10.0 } }";
    assert_eq!(f64_elements(run_source(positives, vec![f64_vector(&[1.0, -2.0, 3.0])]).unwrap()), [10.0, 30.0]);
    assert_eq!(f64_elements(run_source(positives, vec![f64_vector(&[])]).unwrap()), Vec::<f64>::new());
    let reduced = "fn f(x: [f64]) -> f64 { let p = for i where x[i] > 0.0 { x[i] }; sum k { p[k] } }";
    assert_eq!(run_source(reduced, vec![f64_vector(&[1.0, -2.0, 3.0])]), Ok(Value::F64(4.0)));
    // The element is evaluated where the condition fails too (as both sides of an `if`).
    let divided = "fn f(x: [i32], d: i32) -> [i32] { for i where x[i] > 5 { x[i] / d } }";
    let error = run_source(divided, vec![i32_vector(&[1, 2]), Value::I32(0)]).map_err(|error| error.message);
    assert_eq!(error, Err("integer division by zero".into()));
}
