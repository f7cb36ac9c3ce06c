//! The evaluator: a direct recursive walk of the IR with an environment indexed by `VarId`.
//! Every failure, including a broken IR invariant, is a `RuntimeError`; nothing here panics.

use super::datum::{ArrayView, Datum};
use super::scalar;
use super::value::RuntimeError;
use crate::ir::node;
use crate::ir::{
    BinaryOp, Bounds, Expr, ExprKind, Func, Literal, Program, ReduceOp, Scalar, ScalarType, SizeCheck, Type, UnaryOp,
    VarId,
};
use std::rc::Rc;

type Result<T> = std::result::Result<T, RuntimeError>;

/// Deeper expression trees than this are refused rather than risking a stack overflow (a
/// recursion of the evaluator per nesting level; real programs are far shallower).
const MAXIMUM_NESTING: usize = 400;

pub(super) struct Interpreter<'p> {
    program: &'p Program,
    externs: &'p super::Externs,
    /// Concrete types of `ScalarType::Param(k)`.
    type_args: &'p [Scalar],
    /// The current value of every variable, `None` while unbound.
    environment: Vec<Option<Datum>>,
    depth: usize,
    /// Differentiating (`run_dual`): every float is a dual number (see `dual.rs`).
    pub(super) duals: bool,
}

impl<'p> Interpreter<'p> {
    pub(super) fn new(program: &'p Program, type_args: &'p [Scalar], externs: &'p super::Externs) -> Interpreter<'p> {
        Interpreter { program, externs, type_args, environment: vec![None; program.vars.len()], depth: 0, duals: false }
    }

    pub(super) fn resolve(&self, ty: ScalarType) -> Result<Scalar> {
        match ty {
            ScalarType::Known(scalar) => Ok(scalar),
            ScalarType::Param(position) => self
                .type_args
                .get(position)
                .copied()
                .ok_or_else(|| RuntimeError::new(format!("no type argument given for T{position}"))),
        }
    }

    pub(super) fn var_name(&self, var: VarId) -> String {
        match self.program.vars.get(var.0 as usize) {
            Some(info) => info.name.clone(),
            None => format!("#{}", var.0),
        }
    }

    /// Binds `var` to `value`, returning what it was bound to before (for restoring).
    pub(super) fn bind(&mut self, var: VarId, value: Datum) -> Result<Option<Datum>> {
        match self.environment.get_mut(var.0 as usize) {
            Some(slot) => Ok(slot.replace(value)),
            None => Err(RuntimeError::internal(format!("variable #{} is not declared", var.0))),
        }
    }

    pub(super) fn restore(&mut self, var: VarId, previous: Option<Datum>) {
        if let Some(slot) = self.environment.get_mut(var.0 as usize) {
            *slot = previous;
        }
    }

    fn lookup(&self, var: VarId) -> Result<Datum> {
        match self.environment.get(var.0 as usize) {
            Some(Some(value)) => Ok(value.clone()),
            Some(None) => Err(RuntimeError::internal(format!("variable `{}` is used unbound", self.var_name(var)))),
            None => Err(RuntimeError::internal(format!("variable #{} is not declared", var.0))),
        }
    }

    pub(super) fn scalar_type_of(&self, ty: &Type) -> Result<Scalar> {
        match ty {
            Type::Scalar(scalar) => self.resolve(*scalar),
            other => Err(RuntimeError::internal(format!("expected a scalar type, found {other}"))),
        }
    }

    pub(super) fn eval(&mut self, expr: &Expr) -> Result<Datum> {
        if self.depth >= MAXIMUM_NESTING {
            return Err(RuntimeError::internal("expression nested too deeply to interpret"));
        }
        self.depth += 1;
        let result = self.eval_node(expr);
        self.depth -= 1;
        if self.duals {
            return result.map(|value| super::dual::promote(&value));
        }
        result
    }

    /// One node. Every arm is its own function so that this frame, which every level of
    /// recursion carries, stays small (debug builds do not share stack slots between arms).
    fn eval_node(&mut self, expr: &Expr) -> Result<Datum> {
        match &expr.kind {
            ExprKind::Literal(literal) => self.eval_literal(*literal, &expr.ty),
            ExprKind::Var(var) => self.lookup(*var),
            ExprKind::For(node::For { index, size, body }) => self.eval_for(expr, *index, size, body),
            ExprKind::Filter(node::For { index, size, body }) => self.eval_filter(*index, size, body),
            ExprKind::Reduce(node::Reduce { op, index, size, body }) => self.eval_reduce(expr, *op, *index, size, body),
            ExprKind::Fold(node::Fold { index, count, acc, init, body }) => {
                self.eval_fold(*index, count, *acc, init, body)
            }
            ExprKind::Scan(scan) => self.eval_scan(scan),
            ExprKind::Accum(accum) => self.eval_accum(accum),
            ExprKind::Let(node::Let { var, value, body }) => self.eval_let(*var, value, body),
            ExprKind::Index(node::Index { array, index, bounds }) => self.eval_index(array, index, *bounds),
            ExprKind::Select(node::Select { cond, then, otherwise }) => self.eval_select(cond, then, otherwise),
            ExprKind::Tuple(items) => self.eval_tuple(items),
            ExprKind::Project(node::Project { tuple, field }) => self.eval_project(tuple, *field),
            ExprKind::Unary(node::Unary { op, operand }) => self.eval_unary(*op, operand),
            ExprKind::Binary(node::Binary { op, lhs, rhs }) => self.eval_binary(*op, lhs, rhs),
            ExprKind::Call(node::Call { func, args }) => self.eval_call(*func, args),
            ExprKind::Extern(node::Extern { name, args, site, derivative }) => {
                self.eval_extern(name, args, site.is_some(), derivative.as_ref(), &expr.ty)
            }
            ExprKind::Cast(node::Cast { operand, to, saturating }) => self.eval_cast(operand, *to, *saturating),
            ExprKind::Len(node::Len { array, axis }) => self.eval_len(array, *axis),
            ExprKind::Assert(node::Assert { checks, body }) => self.eval_assert(checks, body),
            ExprKind::Contract(contraction) => self.eval_contract(expr, contraction),
        }
    }

    fn eval_literal(&self, literal: Literal, ty: &Type) -> Result<Datum> {
        scalar::literal(literal, self.scalar_type_of(ty)?)
    }

    fn eval_let(&mut self, var: VarId, value: &Expr, body: &Expr) -> Result<Datum> {
        let value = self.eval(value)?;
        let previous = self.bind(var, value)?;
        let result = self.eval(body)?;
        self.restore(var, previous);
        Ok(result)
    }

    fn eval_select(&mut self, cond: &Expr, then: &Expr, otherwise: &Expr) -> Result<Datum> {
        let cond = self.eval(cond)?;
        // Both sides are evaluated (predication): an error in either propagates.
        let then = self.eval(then)?;
        let otherwise = self.eval(otherwise)?;
        match cond {
            Datum::Bool(true) => Ok(then),
            Datum::Bool(false) => Ok(otherwise),
            other => Err(RuntimeError::internal(format!("select on a {}", other.kind_name()))),
        }
    }

    fn eval_tuple(&mut self, items: &[Expr]) -> Result<Datum> {
        let fields = items.iter().map(|item| self.eval(item)).collect::<Result<Rc<[Datum]>>>()?;
        Ok(Datum::Tuple(fields))
    }

    fn eval_project(&mut self, tuple: &Expr, field: usize) -> Result<Datum> {
        let tuple = self.eval(tuple)?;
        project(tuple, field)
    }

    fn eval_unary(&mut self, op: UnaryOp, operand: &Expr) -> Result<Datum> {
        let operand = self.eval(operand)?;
        scalar::unary(op, operand)
    }

    fn eval_binary(&mut self, op: BinaryOp, lhs: &Expr, rhs: &Expr) -> Result<Datum> {
        let lhs = self.eval(lhs)?;
        let rhs = self.eval(rhs)?;
        scalar::binary(op, lhs, rhs)
    }

    fn eval_call(&mut self, func: Func, args: &[Expr]) -> Result<Datum> {
        let arguments = args.iter().map(|argument| self.eval(argument)).collect::<Result<Vec<Datum>>>()?;
        scalar::call(func, arguments)
    }

    /// A registered Rust function on the arguments' values; its result must have the declared
    /// type (the compiled call is typed by rustc).
    /// A Rust function: an `extern fn` of the block, or (`rust_call`) one the expression form
    /// calls, both run as registered in [`super::Externs`].
    /// With dual-number arguments, the tangent comes from the declared `derivative`.
    fn eval_extern(
        &mut self,
        name: &proc_macro2::Ident,
        args: &[Expr],
        rust_call: bool,
        derivative: Option<&proc_macro2::Ident>,
        ty: &Type,
    ) -> Result<Datum> {
        let arguments = args.iter().map(|argument| self.eval(argument)).collect::<Result<Vec<Datum>>>()?;
        let tangents = super::dual::tangents_of_arguments(&arguments);
        let arguments: Vec<_> = arguments.iter().map(Datum::to_value).collect();
        if let Some(tangents) = tangents.filter(|_| super::has_float(ty)) {
            let value = self.eval_extern_values(name, &arguments, rust_call, ty)?;
            let Some(derivative) = derivative else {
                return Err(RuntimeError::new(format!("`extern fn {name}` has no declared derivative")));
            };
            let with_tangents: Vec<_> = arguments.into_iter().chain(tangents).collect();
            let tangent = self.eval_extern_values(derivative, &with_tangents, false, ty)?;
            return super::dual::with_tangent(&value, &tangent);
        }
        self.eval_extern_values(name, &arguments, rust_call, ty)
    }

    fn eval_extern_values(
        &mut self,
        name: &proc_macro2::Ident,
        arguments: &[super::Value],
        rust_call: bool,
        ty: &Type,
    ) -> Result<Datum> {
        let described = if rust_call { format!("the Rust function `{name}`") } else { format!("`extern fn {name}`") };
        let Some(function) = self.externs.get(&name.to_string()) else {
            return Err(RuntimeError::new(format!(
                "the interpreter was given no Rust function for {described} (see `interp::Externs`)"
            )));
        };
        let result = Datum::from_value(function(arguments))?;
        let wanted = self.scalar_type_of(ty)?;
        if result.scalar_type() != Some(wanted) {
            return Err(RuntimeError::new(format!(
                "the interpreter's `{name}` returned a {} where {described} returns `{wanted}`",
                result.kind_name()
            )));
        }
        Ok(result)
    }

    fn eval_cast(&mut self, operand: &Expr, to: ScalarType, saturating: bool) -> Result<Datum> {
        let operand = self.eval(operand)?;
        let to = self.resolve(to)?;
        // A size or index beyond `i64` (a `u64` above `i64::MAX`) counts as `i64::MAX`.
        if saturating && to == crate::ir::Scalar::I64 {
            if let Some(value) = operand.to_i64() {
                return Ok(Datum::i64(value));
            }
        }
        scalar::cast(operand, to)
    }

    fn eval_len(&mut self, array: &Expr, axis: usize) -> Result<Datum> {
        match self.eval(array)? {
            Datum::Array(view) => match view.shape().get(axis) {
                Some(&length) => Ok(Datum::i64(length_to_i64(length))),
                None => {
                    Err(RuntimeError::internal(format!("`len` of axis {axis} of a rank-{} array", view.shape().len())))
                }
            },
            other => Err(RuntimeError::internal(format!("`len` of a {}", other.kind_name()))),
        }
    }

    fn eval_assert(&mut self, checks: &[SizeCheck], body: &Expr) -> Result<Datum> {
        for check in checks {
            self.check_size(check)?;
        }
        self.eval(body)
    }

    pub(super) fn check_size(&mut self, check: &SizeCheck) -> Result<()> {
        let left = self.eval_integer(&check.left)?;
        let right = self.eval_integer(&check.right)?;
        if left == right {
            return Ok(());
        }
        // Worded exactly like the runtime's message, so compiled and interpreted errors agree.
        let noun = if left == 1 { "element" } else { "elements" };
        let what = match check.index_name.as_str() {
            "" => "shape mismatch".to_owned(),
            index => format!("size mismatch for index `{index}`"),
        };
        Err(RuntimeError::new(format!(
            "{what}: {} has {left} {noun} but {} has {right}",
            check.left_what, check.right_what
        )))
    }

    fn eval_integer(&mut self, expr: &Expr) -> Result<i64> {
        let value = self.eval(expr)?;
        value
            .to_i64()
            .ok_or_else(|| RuntimeError::internal(format!("expected an integer, found a {}", value.kind_name())))
    }

    /// The iteration count of `index`; negative sizes, and `i64::MAX` (where unsigned values
    /// above it saturate), are the user's error.
    pub(super) fn eval_size(&mut self, size: &Expr, index: VarId) -> Result<usize> {
        let size = self.eval_integer(size)?;
        match usize::try_from(size) {
            Ok(count) if size != i64::MAX => Ok(count),
            Ok(_) => Err(RuntimeError::new(format!("size of index `{}` is i64::MAX or more", self.var_name(index)))),
            Err(_) => Err(RuntimeError::new(format!("size of index `{}` is {size}", self.var_name(index)))),
        }
    }

    fn eval_for(&mut self, whole: &Expr, index: VarId, size: &Expr, body: &Expr) -> Result<Datum> {
        let count = self.eval_size(size, index)?;
        if count == 0 {
            let mut shape = vec![0];
            if body.ty.rank() > 0 {
                shape.extend(self.empty_comprehension_inner_shape(whole)?);
            }
            return Ok(Datum::Array(ArrayView::new(shape, Vec::new())?));
        }
        let mut elements = Vec::new();
        // The shape of the body's value (empty for scalars and tuples), fixed by iteration 0.
        let mut inner_shape: Option<Vec<usize>> = None;
        let mut previous = None;
        for position in 0..count {
            let bound = self.bind(index, Datum::i64(length_to_i64(position)))?;
            if position == 0 {
                previous = bound;
            }
            let value = self.eval(body)?;
            let value_shape = match &value {
                Datum::Array(view) => view.shape(),
                _ => &[],
            };
            match &inner_shape {
                None => inner_shape = Some(value_shape.to_vec()),
                Some(expected) if expected.as_slice() != value_shape => {
                    return Err(RuntimeError::internal(format!(
                        "irregular comprehension over `{}`: element 0 has shape {expected:?}, element {position} has shape {value_shape:?}",
                        self.var_name(index)
                    )));
                }
                Some(_) => {}
            }
            match value {
                Datum::Array(view) => elements.extend_from_slice(view.elements()),
                Datum::Tuple(fields) if fields.iter().any(|field| matches!(field, Datum::Array(_))) => {
                    return Err(RuntimeError::internal("a comprehension of tuples holding arrays"));
                }
                element => elements.push(element),
            }
        }
        self.restore(index, previous);
        let mut shape = vec![count];
        shape.extend(inner_shape.unwrap_or_default());
        Ok(Datum::Array(ArrayView::new(shape, elements)?))
    }

    /// A filter: at each index in order, the pair (condition, element) is evaluated (both,
    /// whatever the condition: an error in either fails the program, the first in index
    /// order); the elements whose condition holds, in order, make a rank-1 array.
    fn eval_filter(&mut self, index: VarId, size: &Expr, body: &Expr) -> Result<Datum> {
        let count = self.eval_size(size, index)?;
        let previous = self.bind(index, Datum::i64(0))?;
        let mut kept = Vec::new();
        for position in 0..count {
            self.bind(index, Datum::i64(length_to_i64(position)))?;
            let pair = self.eval(body)?;
            let Datum::Tuple(pair) = pair else {
                return Err(RuntimeError::internal("a filter whose body is not a (condition, element) pair"));
            };
            match &pair[..] {
                [Datum::Bool(true), element] => kept.push(element.clone()),
                [Datum::Bool(false), _] => {}
                _ => return Err(RuntimeError::internal("a filter whose body is not a (condition, element) pair")),
            }
        }
        self.restore(index, previous);
        Ok(Datum::Array(ArrayView::new(vec![kept.len()], kept)?))
    }

    /// The axes of the body of an empty comprehension, which is never evaluated: its shape
    /// expressions (regularity: sizes never depend on the index) evaluated in the enclosing
    /// scope.
    fn empty_comprehension_inner_shape(&mut self, whole: &Expr) -> Result<Vec<usize>> {
        let unknown = || RuntimeError::internal("cannot determine the shape of an empty comprehension");
        let sizes = crate::ir::shape::shape_of(self.program, whole).ok_or_else(unknown)?;
        if sizes.len() != whole.ty.rank() {
            return Err(unknown());
        }
        let mut shape = Vec::new();
        for (axis, size) in sizes.iter().enumerate().skip(1) {
            let length = self.eval_integer(size)?;
            let length = usize::try_from(length)
                .map_err(|_| RuntimeError::new(format!("size of axis {axis} of an empty comprehension is {length}")))?;
            shape.push(length);
        }
        Ok(shape)
    }

    fn eval_reduce(&mut self, whole: &Expr, op: ReduceOp, index: VarId, size: &Expr, body: &Expr) -> Result<Datum> {
        let count = self.eval_size(size, index)?;
        let previous = self.bind(index, Datum::i64(0))?;
        let result = match op {
            ReduceOp::ArgMax | ReduceOp::ArgMin => {
                if count == 0 {
                    return Err(RuntimeError::new(format!(
                        "{} over an empty range of index `{}`",
                        op.name(),
                        self.var_name(index)
                    )));
                }
                let better = if op == ReduceOp::ArgMax { BinaryOp::Gt } else { BinaryOp::Lt };
                let mut best = self.eval(body)?;
                let mut best_position = 0usize;
                for position in 1..count {
                    self.bind(index, Datum::i64(length_to_i64(position)))?;
                    let value = self.eval(body)?;
                    // Strict comparison: ties keep the first index.
                    if let Datum::Bool(true) = scalar::binary(better, value.clone(), best.clone())? {
                        best = value;
                        best_position = position;
                    }
                }
                Datum::usize(best_position)
            }
            _ => {
                // A tuple or record reduces component-wise: each scalar leaf has its own
                // accumulator, combined exactly as a scalar reduction of that leaf would be.
                let mut accumulator = self.reduction_identity(op, &whole.ty)?;
                // A `max`/`min` of dual numbers takes its chosen element's tangent.
                let mut values = Vec::new();
                for position in 0..count {
                    self.bind(index, Datum::i64(length_to_i64(position)))?;
                    let mut value = self.eval(body)?;
                    if matches!(op, ReduceOp::Max | ReduceOp::Min)
                        && matches!(value, Datum::Dual32(..) | Datum::Dual64(..))
                    {
                        values.push(value.clone());
                        value = super::dual::primal(&value);
                    }
                    accumulator = combine_components(op, accumulator, value)?;
                }
                if values.is_empty() {
                    accumulator
                } else {
                    super::dual::max_tangent(&values, &accumulator)?
                }
            }
        };
        self.restore(index, previous);
        Ok(result)
    }

    /// The value of an empty `op` reduction of type `ty`: the scalar identity, or a tuple of
    /// the identities of its components.
    fn reduction_identity(&self, op: ReduceOp, ty: &Type) -> Result<Datum> {
        match ty {
            Type::Tuple { fields, .. } => {
                let fields =
                    fields.iter().map(|field| self.reduction_identity(op, field)).collect::<Result<Rc<[Datum]>>>()?;
                Ok(Datum::Tuple(fields))
            }
            scalar => scalar::identity(op, self.scalar_type_of(scalar)?),
        }
    }

    fn eval_fold(&mut self, index: VarId, count: &Expr, acc: VarId, init: &Expr, body: &Expr) -> Result<Datum> {
        let count = self.eval_size(count, index)?;
        let mut accumulator = self.eval(init)?;
        let previous_index = self.bind(index, Datum::i64(0))?;
        let previous_accumulator = self.bind(acc, accumulator.clone())?;
        for position in 0..count {
            self.bind(index, Datum::i64(length_to_i64(position)))?;
            self.bind(acc, accumulator)?;
            accumulator = self.eval(body)?;
        }
        self.restore(index, previous_index);
        self.restore(acc, previous_accumulator);
        Ok(accumulator)
    }

    /// Every state of the scan, in order. An associative step uses the grouping of note
    /// [scan grouping] (`crate::ir::scan`), exactly as generated code computes it.
    fn eval_scan(&mut self, scan: &node::Scan) -> Result<Datum> {
        let node::Scan { index, count, acc, init, body } = scan;
        let (index, acc) = (*index, *acc);
        let count = self.eval_size(count, index)?;
        let mut accumulator = self.eval(init)?;
        let initial = accumulator.clone();
        let previous_index = self.bind(index, Datum::i64(0))?;
        let previous_accumulator = self.bind(acc, accumulator.clone())?;
        let mut states = Vec::with_capacity(count.min(1 << 20));
        match crate::ir::scan::associative_step(scan) {
            None => {
                for position in 0..count {
                    self.bind(index, Datum::i64(length_to_i64(position)))?;
                    self.bind(acc, accumulator)?;
                    accumulator = self.eval(body)?;
                    states.push(accumulator.clone());
                }
            }
            Some(step) => {
                // `accumulator` runs through the block from the block's offset; `total` folds
                // the block's own values, from its first; the next block starts at
                // `offset ⊕ total`.
                let mut offset = accumulator.clone();
                let mut total: Option<Datum> = None;
                for position in 0..count {
                    if position % crate::ir::scan::SCAN_BLOCK == 0 {
                        if let Some(total) = total.take() {
                            offset = combine_step(&step, offset, total)?;
                            accumulator = offset.clone();
                        }
                    }
                    self.bind(index, Datum::i64(length_to_i64(position)))?;
                    let mut bound = Vec::new();
                    for (var, value) in &step.lets {
                        let value = self.eval(value)?;
                        bound.push((*var, self.bind(*var, value)?));
                    }
                    let value = self.eval(step.value)?;
                    for (var, previous) in bound.into_iter().rev() {
                        self.restore(var, previous);
                    }
                    accumulator = combine_step(&step, accumulator, value.clone())?;
                    total = Some(match total {
                        Some(total) => combine_step(&step, total, value)?,
                        None => value,
                    });
                    states.push(accumulator.clone());
                }
            }
        }
        self.restore(index, previous_index);
        self.restore(acc, previous_accumulator);
        stack_states(states, &initial, count)
    }

    fn eval_index(&mut self, array_expr: &Expr, index_expr: &Expr, bounds: Bounds) -> Result<Datum> {
        let array = self.eval(array_expr)?;
        let index = self.eval_integer(index_expr)?;
        let Datum::Array(view) = array else {
            return Err(RuntimeError::internal(format!("indexing a {}", array.kind_name())));
        };
        let length = view.shape().first().copied().unwrap_or(0);
        let position = match bounds {
            Bounds::Proven => match usize::try_from(index) {
                Ok(position) if position < length => position,
                _ => {
                    return Err(RuntimeError::internal(format!(
                        "index {index} out of range 0..{length} in {}, a read proven in bounds",
                        self.describe_axis(array_expr)
                    )));
                }
            },
            Bounds::Clamped => {
                if length == 0 {
                    return Err(RuntimeError::new(format!("read from {}", self.describe_axis(array_expr))));
                }
                usize::try_from(index.max(0)).unwrap_or(usize::MAX).min(length - 1)
            }
        };
        view.index(position).ok_or_else(|| {
            RuntimeError::internal(format!("index {position} out of range of a view of length {length}"))
        })
    }

    /// Names the axis that `array_expr[..]` reads: "empty axis 1 of `a`" for `a[i][j]`.
    fn describe_axis(&self, array_expr: &Expr) -> String {
        let mut axis = 0;
        let mut current = array_expr;
        loop {
            match &current.kind {
                ExprKind::Index(node::Index { array, .. }) => {
                    axis += 1;
                    current = array;
                }
                ExprKind::Var(var) if !self.program.var(*var).is_synthetic() => {
                    return format!("empty axis {axis} of `{}`", self.var_name(*var))
                }
                _ => return format!("empty axis {axis} of a computed array"),
            }
        }
    }
}

/// One step of a reduction, `accumulator ⊕ value`, component by component for tuples.
fn combine_components(op: ReduceOp, accumulator: Datum, value: Datum) -> Result<Datum> {
    match (accumulator, value) {
        (Datum::Tuple(accumulators), Datum::Tuple(values)) if accumulators.len() == values.len() => {
            let fields = accumulators
                .iter()
                .zip(values.iter())
                .map(|(accumulator, value)| combine_components(op, accumulator.clone(), value.clone()))
                .collect::<Result<Rc<[Datum]>>>()?;
            Ok(Datum::Tuple(fields))
        }
        (Datum::Tuple(_), _) | (_, Datum::Tuple(_)) => {
            Err(RuntimeError::internal("a tuple reduction whose body's value has another shape"))
        }
        (accumulator, value) => scalar::combine(op, accumulator, value),
    }
}

/// `running ⊕ value` with the operands in the step's written order (the accumulator's side).
fn combine_step(step: &crate::ir::scan::AssociativeStep<'_>, running: Datum, value: Datum) -> Result<Datum> {
    use crate::ir::scan::{AccumulatorSide, StepOp};
    let (left, right) = match step.side {
        AccumulatorSide::Left => (running, value),
        AccumulatorSide::Right => (value, running),
    };
    match step.op {
        StepOp::Add => scalar::binary(BinaryOp::Add, left, right),
        StepOp::Mul => scalar::binary(BinaryOp::Mul, left, right),
        StepOp::And => scalar::binary(BinaryOp::And, left, right),
        StepOp::Or => scalar::binary(BinaryOp::Or, left, right),
        StepOp::Max => scalar::call(Func::Max, vec![left, right]),
        StepOp::Min => scalar::call(Func::Min, vec![left, right]),
    }
}

/// A scan's `count` states stacked on a new first axis (`Type::stacked`): one array, each
/// element a state, or for a state that is an array (reverse mode's tape of a fold) its
/// elements, each state of the initial state's shape; for a tuple holding an array, the tuple
/// of each part's stack.
fn stack_states(states: Vec<Datum>, initial: &Datum, count: usize) -> Result<Datum> {
    match initial {
        Datum::Tuple(fields) if fields.iter().any(holds_array) => {
            let mut parts: Vec<Vec<Datum>> = fields.iter().map(|_| Vec::with_capacity(states.len())).collect();
            for state in states {
                let Datum::Tuple(values) = state else {
                    return Err(RuntimeError::internal("a scan of tuples with a state that is not one"));
                };
                for (part, value) in parts.iter_mut().zip(values.iter()) {
                    part.push(value.clone());
                }
            }
            let stacked = parts.into_iter().zip(fields.iter()).map(|(part, field)| stack_states(part, field, count));
            Ok(Datum::Tuple(stacked.collect::<Result<Vec<Datum>>>()?.into()))
        }
        Datum::Array(first) => {
            let shape = first.shape().to_vec();
            let mut elements = Vec::new();
            for state in states {
                match state {
                    Datum::Array(view) if view.shape() == shape.as_slice() => {
                        elements.extend_from_slice(view.elements())
                    }
                    Datum::Array(view) => {
                        return Err(RuntimeError::new(format!(
                            "a fold's state changed shape from {shape:?} to {:?}; reverse mode saves its states, \
                             which must keep the shape of its initial value",
                            view.shape()
                        )))
                    }
                    _ => return Err(RuntimeError::internal("a scan of arrays with a state that is not one")),
                }
            }
            Ok(Datum::Array(ArrayView::new(std::iter::once(count).chain(shape).collect(), elements)?))
        }
        _ => Ok(Datum::Array(ArrayView::new(vec![count], states)?)),
    }
}

/// Whether a value is or holds an array.
fn holds_array(value: &Datum) -> bool {
    match value {
        Datum::Array(_) => true,
        Datum::Tuple(fields) => fields.iter().any(holds_array),
        _ => false,
    }
}

/// Field `field` of a tuple, or of every element of an array of tuples.
fn project(value: Datum, field: usize) -> Result<Datum> {
    let missing = |length: usize| RuntimeError::internal(format!("field {field} of a tuple of {length}"));
    match value {
        Datum::Tuple(fields) => fields.get(field).cloned().ok_or_else(|| missing(fields.len())),
        Datum::Array(view) => {
            let elements = view
                .elements()
                .iter()
                .map(|element| match element {
                    Datum::Tuple(fields) => fields.get(field).cloned().ok_or_else(|| missing(fields.len())),
                    other => Err(RuntimeError::internal(format!("projection of a {}", other.kind_name()))),
                })
                .collect::<Result<Vec<Datum>>>()?;
            Ok(Datum::Array(ArrayView::new(view.shape().to_vec(), elements)?))
        }
        other => Err(RuntimeError::internal(format!("projection of a {}", other.kind_name()))),
    }
}

/// A length as `i64`: lengths of real arrays always fit.
fn length_to_i64(length: usize) -> i64 {
    i64::try_from(length).unwrap_or(i64::MAX)
}
