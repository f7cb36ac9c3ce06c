//! The evaluator's internal values. Arrays are shared, immutable row-major storage plus a view
//! (leading axes removed, offset), so binding, passing and indexing an array never copies its
//! elements: `a[i]` on a matrix is a row view of `a`'s storage.

use super::value::{ArrayValue, RuntimeError, Value};
use crate::ops::Scalar;
use std::rc::Rc;

#[derive(Clone, Debug)]
pub(super) enum Datum {
    F32(f32),
    F64(f64),
    /// An integer of the given type; the value is always inside the type's range (see
    /// [`Datum::int`]), so every integer type shares one exact arithmetic.
    Int(Scalar, i128),
    Bool(bool),
    /// A dual number (value, tangent) of `f32`/`f64`: only when differentiating (see `dual.rs`).
    Dual32(f32, f32),
    Dual64(f64, f64),
    Tuple(Rc<[Datum]>),
    Array(ArrayView),
}

/// A view of a rectangular array: the axes `full_shape[first_axis..]` of `storage`, starting
/// at element `offset`. Every view covers a contiguous block because only outermost axes are
/// ever indexed.
#[derive(Clone, Debug)]
pub(super) struct ArrayView {
    /// Elements are scalars or tuples of scalars, never arrays.
    storage: Rc<[Datum]>,
    full_shape: Rc<[usize]>,
    first_axis: usize,
    offset: usize,
}

impl Datum {
    pub(super) fn scalar_type(&self) -> Option<Scalar> {
        match self {
            Datum::F32(_) | Datum::Dual32(..) => Some(Scalar::F32),
            Datum::F64(_) | Datum::Dual64(..) => Some(Scalar::F64),
            Datum::Int(ty, _) => Some(*ty),
            Datum::Bool(_) => Some(Scalar::Bool),
            Datum::Tuple(_) | Datum::Array(_) => None,
        }
    }

    /// A description for internal errors: the scalar type, `tuple` or `array`.
    pub(super) fn kind_name(&self) -> &'static str {
        match self {
            Datum::Tuple(_) => "tuple",
            Datum::Array(_) => "array",
            scalar => scalar.scalar_type().map(Scalar::name).unwrap_or("?"),
        }
    }

    /// `value` as an integer of type `ty`, wrapped into its range as Rust's wrapping
    /// arithmetic and `as` casts do (two's complement, 64-bit `isize`/`usize`).
    pub(super) fn int(ty: Scalar, value: i128) -> Datum {
        Datum::Int(ty, ty.wrap(value).unwrap_or(value))
    }

    pub(super) fn i64(value: i64) -> Datum {
        Datum::Int(Scalar::I64, value.into())
    }

    pub(super) fn usize(value: usize) -> Datum {
        Datum::Int(Scalar::Usize, value as i128)
    }

    /// An integer of any type as `i64`; values above `i64::MAX` saturate (an index that large
    /// clamps to the end of any axis anyway).
    pub(super) fn to_i64(&self) -> Option<i64> {
        match self {
            Datum::Int(_, value) => Some(i64::try_from(*value).unwrap_or(if *value < 0 { i64::MIN } else { i64::MAX })),
            _ => None,
        }
    }

    /// Converts a public value without checking it against a type (see `run` for that).
    pub(super) fn from_value(value: Value) -> Result<Datum, RuntimeError> {
        Ok(match value {
            Value::F32(value) => Datum::F32(value),
            Value::F64(value) => Datum::F64(value),
            Value::I8(value) => Datum::Int(Scalar::I8, value.into()),
            Value::I16(value) => Datum::Int(Scalar::I16, value.into()),
            Value::I32(value) => Datum::Int(Scalar::I32, value.into()),
            Value::I64(value) => Datum::Int(Scalar::I64, value.into()),
            Value::Isize(value) => Datum::Int(Scalar::Isize, value as i128),
            Value::U8(value) => Datum::Int(Scalar::U8, value.into()),
            Value::U16(value) => Datum::Int(Scalar::U16, value.into()),
            Value::U32(value) => Datum::Int(Scalar::U32, value.into()),
            Value::U64(value) => Datum::Int(Scalar::U64, value.into()),
            Value::Usize(value) => Datum::Int(Scalar::Usize, value as i128),
            Value::Bool(value) => Datum::Bool(value),
            Value::Tuple(fields) => {
                Datum::Tuple(fields.into_iter().map(Datum::from_value).collect::<Result<Rc<[Datum]>, _>>()?)
            }
            Value::Array(array) => {
                let elements = array.elements.into_iter().map(Datum::from_value).collect::<Result<Vec<Datum>, _>>()?;
                Datum::Array(ArrayView::new(array.shape, elements)?)
            }
        })
    }

    pub(super) fn to_value(&self) -> Value {
        match self {
            Datum::F32(value) | Datum::Dual32(value, _) => Value::F32(*value),
            Datum::F64(value) | Datum::Dual64(value, _) => Value::F64(*value),
            // In range by construction, so each `as` is exact.
            Datum::Int(ty, value) => match ty {
                Scalar::I8 => Value::I8(*value as i8),
                Scalar::I16 => Value::I16(*value as i16),
                Scalar::I32 => Value::I32(*value as i32),
                Scalar::Isize => Value::Isize(*value as isize),
                Scalar::U8 => Value::U8(*value as u8),
                Scalar::U16 => Value::U16(*value as u16),
                Scalar::U32 => Value::U32(*value as u32),
                Scalar::U64 => Value::U64(*value as u64),
                Scalar::Usize => Value::Usize(*value as usize),
                _ => Value::I64(*value as i64),
            },
            Datum::Bool(value) => Value::Bool(*value),
            Datum::Tuple(fields) => Value::Tuple(fields.iter().map(Datum::to_value).collect()),
            Datum::Array(view) => Value::Array(ArrayValue {
                shape: view.shape().to_vec(),
                elements: view.elements().iter().map(Datum::to_value).collect(),
            }),
        }
    }
}

impl ArrayView {
    /// An array of `shape` (rank >= 1) holding `elements` row-major; the count must match and
    /// no element may be an array.
    pub(super) fn new(shape: Vec<usize>, elements: Vec<Datum>) -> Result<ArrayView, RuntimeError> {
        if shape.is_empty() {
            return Err(RuntimeError::internal("an array must have at least one axis"));
        }
        let count = shape.iter().try_fold(1usize, |product, &length| product.checked_mul(length));
        if count != Some(elements.len()) {
            return Err(RuntimeError::new(format!(
                "an array of shape {shape:?} needs {} elements but has {}",
                count.map_or_else(|| "too many".to_string(), |count| count.to_string()),
                elements.len()
            )));
        }
        if elements.iter().any(|element| matches!(element, Datum::Array(_))) {
            return Err(RuntimeError::internal("an array element is itself an array"));
        }
        Ok(ArrayView { storage: elements.into(), full_shape: shape.into(), first_axis: 0, offset: 0 })
    }

    pub(super) fn shape(&self) -> &[usize] {
        self.full_shape.get(self.first_axis..).unwrap_or(&[])
    }

    /// Number of elements in the view. Cannot overflow: the storage holds the product of the
    /// full shape, of which this is a factor.
    pub(super) fn element_count(&self) -> usize {
        self.shape().iter().product()
    }

    /// The view's elements, row-major.
    pub(super) fn elements(&self) -> &[Datum] {
        self.storage.get(self.offset..self.offset + self.element_count()).unwrap_or(&[])
    }

    /// The array of `f(element)` for each element, of the same shape.
    pub(super) fn map(&self, f: impl Fn(&Datum) -> Datum) -> Datum {
        let elements = self.elements().iter().map(f).collect();
        Datum::Array(ArrayView { storage: elements, full_shape: self.shape().into(), first_axis: 0, offset: 0 })
    }

    /// The array of `f(mine, theirs)` element by element; the shapes must be equal.
    pub(super) fn zip_with(
        &self,
        other: &ArrayView,
        f: impl Fn(&Datum, &Datum) -> Result<Datum, RuntimeError>,
    ) -> Result<ArrayView, RuntimeError> {
        let elements = self.elements().iter().zip(other.elements()).map(|(mine, theirs)| f(mine, theirs));
        ArrayView::new(self.shape().to_vec(), elements.collect::<Result<Vec<Datum>, RuntimeError>>()?)
    }

    /// `self[position]` on the outermost axis: an element for rank 1, else a sub-array view.
    /// `None` when `position` is out of range.
    pub(super) fn index(&self, position: usize) -> Option<Datum> {
        let shape = self.shape();
        let (&length, inner) = shape.split_first()?;
        if position >= length {
            return None;
        }
        if inner.is_empty() {
            return self.storage.get(self.offset + position).cloned();
        }
        let stride: usize = inner.iter().product();
        Some(Datum::Array(ArrayView {
            storage: Rc::clone(&self.storage),
            full_shape: Rc::clone(&self.full_shape),
            first_axis: self.first_axis + 1,
            offset: self.offset + position * stride,
        }))
    }
}
