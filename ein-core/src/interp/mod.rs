//! Reference interpreter of the typed Phi IR: the semantic oracle that the passes and the code
//! generator are tested against. It implements `docs/semantics.md` literally (sequential
//! reductions in index order, both sides of a select evaluated, clamped reads, wrapping
//! integers) and never panics: every failure, including a program that breaks the IR's
//! invariants ("internal error: …"), is a [`RuntimeError`].
//!
//! Speed is secondary, but arrays are shared views internally, so binding or indexing an array
//! never copies it.

mod accum;
mod contract;
mod datum;
mod dual;
mod eval;
mod scalar;
mod value;

#[cfg(test)]
mod tests;

pub use value::{ArrayValue, RuntimeError, Value};

use crate::ir::{Program, Type};
use crate::ops::Scalar;
use datum::Datum;
use eval::Interpreter;

/// Runs `program` on `args` (in the order of [`Program::params`]: arrays as [`Value::Array`],
/// scalars as scalar values). `type_args[k]` is the concrete type of `ScalarType::Param(k)`.
/// Arguments are checked against the parameter types (rank, element type, shape consistency)
/// and a mismatch is an error naming the parameter.
pub fn run(program: &Program, args: Vec<Value>, type_args: &[Scalar]) -> Result<Value, RuntimeError> {
    run_with_externs(program, args, type_args, &Externs::default())
}

/// The Rust functions that a program's `extern fn` declarations name, for the interpreter,
/// which cannot call Rust by name: a test registers the same function the compiled code
/// calls, wrapped to take and give [`Value`]s. A call of one not registered is a run-time
/// error naming it.
#[derive(Default)]
pub struct Externs {
    functions: Vec<Registered>,
}

type ExternFunction = Box<dyn Fn(&[Value]) -> Value>;

struct Registered {
    name: String,
    function: ExternFunction,
    /// The parameter and result types, where the test gave them.
    signature: Option<(Vec<Scalar>, Scalar)>,
}

impl Externs {
    /// Registers `function` as the Rust function `name`.
    pub fn with(mut self, name: &str, function: impl Fn(&[Value]) -> Value + 'static) -> Externs {
        self.functions.push(Registered { name: name.to_string(), function: Box::new(function), signature: None });
        self
    }

    /// Registers `function` as the Rust function `name` of the given scalar parameter and
    /// result types: the expression form's Rust calls are typed by rustc, and a test learns
    /// the types it chose from here (see [`Externs::signature`]).
    pub fn with_signature(
        mut self,
        name: &str,
        params: Vec<Scalar>,
        ret: Scalar,
        function: impl Fn(&[Value]) -> Value + 'static,
    ) -> Externs {
        let signature = Some((params, ret));
        self.functions.push(Registered { name: name.to_string(), function: Box::new(function), signature });
        self
    }

    /// The parameter and result types registered for `name`.
    pub fn signature(&self, name: &str) -> Option<(&[Scalar], Scalar)> {
        let registered = self.functions.iter().find(|registered| registered.name == name)?;
        registered.signature.as_ref().map(|(params, ret)| (params.as_slice(), *ret))
    }

    fn get(&self, name: &str) -> Option<&ExternFunction> {
        self.functions.iter().find(|registered| registered.name == name).map(|registered| &registered.function)
    }
}

/// [`run`], with the Rust functions of the program's `extern fn`s.
pub fn run_with_externs(
    program: &Program,
    args: Vec<Value>,
    type_args: &[Scalar],
    externs: &Externs,
) -> Result<Value, RuntimeError> {
    if type_args.len() != program.type_params.len() {
        return Err(RuntimeError::new(format!(
            "the program has {} type parameters but {} type arguments were given",
            program.type_params.len(),
            type_args.len()
        )));
    }
    if args.len() != program.params.len() {
        return Err(RuntimeError::new(format!(
            "the program takes {} arguments but {} were given",
            program.params.len(),
            args.len()
        )));
    }
    let mut interpreter = Interpreter::new(program, type_args, externs);
    for (&param, argument) in program.params.iter().zip(args) {
        let info = program
            .vars
            .get(param.0 as usize)
            .ok_or_else(|| RuntimeError::internal(format!("parameter #{} is not declared", param.0)))?;
        let argument = converted_capture(argument, &info.ty, &info.name)?;
        if let Some(problem) = mismatch(&interpreter, &argument, &info.ty)? {
            return Err(RuntimeError::new(format!("argument `{}` should be {}: {problem}", info.name, info.ty)));
        }
        interpreter.bind(param, Datum::from_value(argument)?)?;
    }
    let result = interpreter.eval(&program.body)?;
    Ok(result.to_value())
}

/// An integer argument of another width than its integer parameter, converted (what the
/// expression form does with a captured local: a `usize` length used beside an index is an
/// `i64`; `ein::__private::captured_int`); an error naming it when the value does not fit.
/// Any other argument as it is (in the function form Rust has given every argument its
/// parameter's type).
fn converted_capture(argument: Value, ty: &Type, name: &str) -> Result<Value, RuntimeError> {
    let Type::Scalar(crate::ir::ScalarType::Known(scalar)) = ty else { return Ok(argument) };
    let wide: i128 = match argument {
        Value::I8(value) => value.into(),
        Value::I16(value) => value.into(),
        Value::I32(value) => value.into(),
        Value::I64(value) => value.into(),
        Value::Isize(value) => value as i128,
        Value::U8(value) => value.into(),
        Value::U16(value) => value.into(),
        Value::U32(value) => value.into(),
        Value::U64(value) => value.into(),
        Value::Usize(value) => value as i128,
        _ => return Ok(argument),
    };
    let converted = match scalar {
        Scalar::I8 => i8::try_from(wide).ok().map(Value::I8),
        Scalar::I16 => i16::try_from(wide).ok().map(Value::I16),
        Scalar::I32 => i32::try_from(wide).ok().map(Value::I32),
        Scalar::I64 => i64::try_from(wide).ok().map(Value::I64),
        Scalar::Isize => isize::try_from(wide).ok().map(Value::Isize),
        Scalar::U8 => u8::try_from(wide).ok().map(Value::U8),
        Scalar::U16 => u16::try_from(wide).ok().map(Value::U16),
        Scalar::U32 => u32::try_from(wide).ok().map(Value::U32),
        Scalar::U64 => u64::try_from(wide).ok().map(Value::U64),
        Scalar::Usize => usize::try_from(wide).ok().map(Value::Usize),
        _ => return Ok(argument),
    };
    converted.ok_or_else(|| RuntimeError::new(format!("captured `{name}` = {wide} does not fit in {scalar}")))
}

/// Forward-mode differentiation by dual numbers, the oracle of `#[jvp]` companions: runs
/// `program` on `args` with `tangents[k]` the tangent of the `k`-th parameter whose type has a
/// float part (in parameter order, of that parameter's type and shape), and returns the result
/// and its tangent (integer and boolean parts of the tangent zero).
pub fn run_dual(
    program: &Program,
    args: Vec<Value>,
    tangents: Vec<Value>,
    externs: &Externs,
) -> Result<(Value, Value), RuntimeError> {
    if args.len() != program.params.len() {
        return Err(RuntimeError::new(format!(
            "the program takes {} arguments but {} were given",
            program.params.len(),
            args.len()
        )));
    }
    let mut interpreter = Interpreter::new(program, &[], externs);
    interpreter.duals = true;
    let mut tangents = tangents.into_iter();
    for (&param, argument) in program.params.iter().zip(args) {
        let info = program
            .vars
            .get(param.0 as usize)
            .ok_or_else(|| RuntimeError::internal(format!("parameter #{} is not declared", param.0)))?;
        if let Some(problem) = mismatch(&interpreter, &argument, &info.ty)? {
            return Err(RuntimeError::new(format!("argument `{}` should be {}: {problem}", info.name, info.ty)));
        }
        let mut datum = Datum::from_value(argument)?;
        if has_float(&info.ty) {
            let tangent = tangents
                .next()
                .ok_or_else(|| RuntimeError::new(format!("no tangent was given for `{}`", info.name)))?;
            datum = dual::with_tangent(&datum, &Datum::from_value(tangent)?)?;
        }
        interpreter.bind(param, datum)?;
    }
    let result = interpreter.eval(&program.body)?;
    Ok((result.to_value(), dual::tangent(&result).to_value()))
}

pub(super) fn has_float(ty: &Type) -> bool {
    match ty {
        Type::Scalar(crate::ir::ScalarType::Known(scalar)) => scalar.is_float(),
        Type::Scalar(_) => false,
        Type::Array { elem, .. } => has_float(elem),
        Type::Tuple { fields, .. } => fields.iter().any(has_float),
    }
}

/// Why `value` does not have type `ty`, or `None` if it does.
fn mismatch(interpreter: &Interpreter<'_>, value: &Value, ty: &Type) -> Result<Option<String>, RuntimeError> {
    let got = || Some(format!("got {}", value.describe()));
    Ok(match ty {
        Type::Scalar(scalar) => {
            let expected = interpreter.resolve(*scalar)?;
            if value.scalar_type() == Some(expected) {
                None
            } else {
                got()
            }
        }
        Type::Tuple { fields, .. } => match value {
            Value::Tuple(items) if items.len() == fields.len() => {
                for (position, (item, field)) in items.iter().zip(fields).enumerate() {
                    if let Some(problem) = mismatch(interpreter, item, field)? {
                        return Ok(Some(format!("field {position}: {problem}")));
                    }
                }
                None
            }
            _ => got(),
        },
        Type::Array { elem, rank } => match value {
            Value::Array(array) if array.shape.len() != *rank => {
                Some(format!("got an array of rank {} (shape {:?})", array.shape.len(), array.shape))
            }
            Value::Array(array) => {
                let count = array.shape.iter().try_fold(1usize, |product, &length| product.checked_mul(length));
                if count != Some(array.elements.len()) {
                    return Ok(Some(format!(
                        "shape {:?} does not match its {} elements",
                        array.shape,
                        array.elements.len()
                    )));
                }
                for (position, element) in array.elements.iter().enumerate() {
                    if matches!(element, Value::Array(_)) {
                        return Ok(Some(format!("element {position} is an array")));
                    }
                    if let Some(problem) = mismatch(interpreter, element, elem)? {
                        return Ok(Some(format!("element {position}: {problem}")));
                    }
                }
                None
            }
            _ => got(),
        },
    })
}
