//! [`Array`]: the owned, row-major, contiguous N-dimensional array that ein outputs are, and
//! its zero-copy conversion into ndarray.

use std::fmt;
use std::ops::Index;

use crate::view::{checked_element_count, Nested, View};
use crate::view_mut::ViewMut;

/// Owned, row-major, contiguous. Zero-copy into ndarray.
///
/// Invariant: every axis length, and the product of the non-zero lengths, is at most
/// `isize::MAX` (ndarray's rule), and the elements are exactly the product of the lengths.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Array<T, const N: usize> {
    /// The elements in row-major order; `data.len()` is the product of `shape`.
    data: Vec<T>,
    shape: [usize; N],
}

impl<T, const N: usize> Array<T, N> {
    /// An array of `shape` over `data` in row-major order; panics unless `data.len()` is the
    /// product of `shape`, and unless the product of the non-zero lengths of `shape` is at most
    /// `isize::MAX`.
    #[track_caller]
    pub fn from_vec(shape: [usize; N], data: Vec<T>) -> Self {
        if checked_element_count(&shape, "an array") != data.len() {
            panic!("ein: {} elements cannot form an array of shape {shape:?}", data.len());
        }
        Array { data, shape }
    }

    /// The length of every axis.
    #[inline]
    pub fn shape(&self) -> [usize; N] {
        self.shape
    }

    /// The length of axis 0; panics for a rank-0 array, which has no axes.
    #[inline]
    pub fn len(&self) -> usize {
        match self.shape.first() {
            Some(&length) => length,
            None => panic!("ein: a rank-0 array has no axis 0, so no len()"),
        }
    }

    /// True if the array has no elements (some axis has length 0).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The elements in row-major order.
    #[inline]
    pub fn as_slice(&self) -> &[T] {
        &self.data
    }

    /// The elements in row-major order, without copying.
    #[inline]
    pub fn into_vec(self) -> Vec<T> {
        self.data
    }

    /// A view of the whole array.
    #[inline]
    pub fn view(&self) -> View<'_, T, N> {
        View::from_slice(&self.data, self.shape)
    }

    /// A mutable view of the whole array.
    #[inline]
    pub fn view_mut(&mut self) -> ViewMut<'_, T, N> {
        ViewMut::from_slice(&mut self.data, self.shape)
    }

    /// Position of `index` in `data`, or None if any index is out of range.
    #[inline]
    fn position(&self, index: [usize; N]) -> Option<usize> {
        let mut position = 0;
        for (&index_on_axis, &length) in index.iter().zip(&self.shape) {
            if index_on_axis >= length {
                return None;
            }
            position = position * length + index_on_axis;
        }
        Some(position)
    }

    /// The element at `index`, or None if any index is out of range.
    #[inline]
    pub fn get(&self, index: [usize; N]) -> Option<&T> {
        let position = self.position(index)?;
        self.data.get(position)
    }

    /// Converts into an ndarray without copying the elements.
    pub fn into_ndarray(self) -> ndarray::Array<T, ndarray::Dim<[usize; N]>>
    where
        ndarray::Dim<[usize; N]>: ndarray::Dimension,
    {
        use ndarray::Dimension;
        let mut dimension = ndarray::Dim::<[usize; N]>::zeros(N);
        dimension.slice_mut().copy_from_slice(&self.shape);
        // from_shape_vec takes ownership of the Vec and keeps its allocation.
        match ndarray::Array::from_shape_vec(dimension, self.data) {
            Ok(array) => array,
            Err(error) => panic!("ein: converting an Array into ndarray failed: {error}"),
        }
    }
}

impl<T, const N: usize> Index<[usize; N]> for Array<T, N> {
    type Output = T;

    #[inline]
    fn index(&self, index: [usize; N]) -> &T {
        match self.position(index) {
            Some(position) => &self.data[position],
            None => panic!("ein: index {index:?} is out of bounds for an array of shape {:?}", self.shape),
        }
    }
}

impl<T, const N: usize> From<Array<T, N>> for ndarray::Array<T, ndarray::Dim<[usize; N]>>
where
    ndarray::Dim<[usize; N]>: ndarray::Dimension,
{
    fn from(array: Array<T, N>) -> Self {
        array.into_ndarray()
    }
}

impl<T: Copy + fmt::Debug, const N: usize> fmt::Debug for Array<T, N> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("Array")
            .field("shape", &self.shape)
            .field("elements", &Nested::new(&self.view()))
            .finish()
    }
}
