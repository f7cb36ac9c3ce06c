//! The interpreter's public values: what tests pass in and get back. Arrays are plain row-major
//! vectors here; the evaluator uses shared views internally (see `eval.rs`).

use crate::ops::Scalar;
use std::fmt;

/// A run-time value of the language.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    F32(f32),
    F64(f64),
    I8(i8),
    I16(i16),
    I32(i32),
    I64(i64),
    Isize(isize),
    U8(u8),
    U16(u16),
    U32(u32),
    U64(u64),
    Usize(usize),
    Bool(bool),
    /// A tuple or record (fields in order; names live only in the type).
    Tuple(Vec<Value>),
    Array(ArrayValue),
}

/// A rectangular array of any rank >= 1, row-major.
#[derive(Clone, Debug, PartialEq)]
pub struct ArrayValue {
    pub shape: Vec<usize>,
    /// `shape.iter().product()` elements, each a scalar or a tuple of scalars (never an array).
    pub elements: Vec<Value>,
}

/// A failure while running a program: a user-facing run-time error (size mismatch, negative
/// size, read from an empty axis, integer division by zero, argmax over an empty range, bad
/// arguments) or an "internal error" (a program that breaks the IR's invariants).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuntimeError {
    pub message: String,
}

impl RuntimeError {
    pub fn new(message: impl Into<String>) -> RuntimeError {
        RuntimeError { message: message.into() }
    }

    /// A failure that a checked program can never cause: the interpreter or an earlier stage is
    /// wrong.
    pub fn internal(message: impl fmt::Display) -> RuntimeError {
        RuntimeError { message: format!("internal error: {message}") }
    }
}

impl fmt::Display for RuntimeError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(&self.message)
    }
}

impl std::error::Error for RuntimeError {}

impl Value {
    /// The scalar type of a scalar value; `None` for tuples and arrays.
    pub fn scalar_type(&self) -> Option<Scalar> {
        match self {
            Value::F32(_) => Some(Scalar::F32),
            Value::F64(_) => Some(Scalar::F64),
            Value::I8(_) => Some(Scalar::I8),
            Value::I16(_) => Some(Scalar::I16),
            Value::I32(_) => Some(Scalar::I32),
            Value::I64(_) => Some(Scalar::I64),
            Value::Isize(_) => Some(Scalar::Isize),
            Value::U8(_) => Some(Scalar::U8),
            Value::U16(_) => Some(Scalar::U16),
            Value::U32(_) => Some(Scalar::U32),
            Value::U64(_) => Some(Scalar::U64),
            Value::Usize(_) => Some(Scalar::Usize),
            Value::Bool(_) => Some(Scalar::Bool),
            Value::Tuple(_) | Value::Array(_) => None,
        }
    }

    /// Equality for tests: floats of the same type are equal when both are NaN, or when they
    /// differ by at most `rel_tol * max(1, |a|, |b|)` (relative, and absolute near zero);
    /// infinities must match exactly. Everything else, including the variant, must be equal.
    pub fn approx_eq(&self, other: &Value, rel_tol: f64) -> bool {
        match (self, other) {
            (Value::F32(left), Value::F32(right)) => floats_close(f64::from(*left), f64::from(*right), rel_tol),
            (Value::F64(left), Value::F64(right)) => floats_close(*left, *right, rel_tol),
            (Value::Tuple(left), Value::Tuple(right)) => {
                left.len() == right.len() && left.iter().zip(right).all(|(l, r)| l.approx_eq(r, rel_tol))
            }
            (Value::Array(left), Value::Array(right)) => left.approx_eq(right, rel_tol),
            _ => self == other,
        }
    }

    /// A short description of the value's kind for error messages: `f32`, `a tuple of 2`,
    /// `an array of shape [2, 3]`.
    pub fn describe(&self) -> String {
        match self {
            Value::Tuple(fields) => format!("a tuple of {}", fields.len()),
            Value::Array(array) => format!("an array of shape {:?}", array.shape),
            scalar => scalar.scalar_type().map(|s| s.name().to_string()).unwrap_or_default(),
        }
    }
}

fn floats_close(left: f64, right: f64, rel_tol: f64) -> bool {
    if left.is_nan() || right.is_nan() {
        return left.is_nan() && right.is_nan();
    }
    if left == right {
        return true;
    }
    if left.is_infinite() || right.is_infinite() {
        return false;
    }
    let scale = left.abs().max(right.abs()).max(1.0);
    (left - right).abs() <= rel_tol * scale
}

impl ArrayValue {
    /// An array of the given shape whose element at each multi-index (row-major order) is
    /// `element(index)`.
    pub fn from_fn(shape: impl Into<Vec<usize>>, mut element: impl FnMut(&[usize]) -> Value) -> ArrayValue {
        let shape = shape.into();
        let count: usize = shape.iter().product();
        let mut elements = Vec::with_capacity(count);
        let mut index = vec![0; shape.len()];
        for _ in 0..count {
            elements.push(element(&index));
            // Odometer increment, last axis fastest.
            for axis in (0..shape.len()).rev() {
                index[axis] += 1;
                if index[axis] < shape[axis] {
                    break;
                }
                index[axis] = 0;
            }
        }
        ArrayValue { shape, elements }
    }

    /// A rank-1 array.
    pub fn vector(elements: Vec<Value>) -> ArrayValue {
        ArrayValue { shape: vec![elements.len()], elements }
    }

    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// The element at a full multi-index, if it is in range.
    pub fn get(&self, index: &[usize]) -> Option<&Value> {
        if index.len() != self.shape.len() {
            return None;
        }
        let mut position = 0usize;
        for (&coordinate, &length) in index.iter().zip(&self.shape) {
            if coordinate >= length {
                return None;
            }
            position = position.checked_mul(length)?.checked_add(coordinate)?;
        }
        self.elements.get(position)
    }

    /// [`Value::approx_eq`] elementwise; shapes must be equal.
    pub fn approx_eq(&self, other: &ArrayValue, rel_tol: f64) -> bool {
        self.shape == other.shape
            && self.elements.len() == other.elements.len()
            && self.elements.iter().zip(&other.elements).all(|(l, r)| l.approx_eq(r, rel_tol))
    }
}

impl From<ArrayValue> for Value {
    fn from(array: ArrayValue) -> Value {
        Value::Array(array)
    }
}
