//! [`ViewMut`]: a mutably borrowed, strided, N-dimensional window onto elements owned elsewhere
//! (an [`Array`](crate::Array), an ndarray, a `Vec` or a slice), which is how ein writes a
//! result into an array the caller already owns.
//!
//! Like a [`View`], a mutable view is a pointer to the element at index `[0, …, 0]`, a shape and
//! strides counted in elements, and strides may be negative (reversed axes). Unlike a view, it
//! comes from `&mut` storage, so no stride is zero and no two in-range indices address the same
//! element: every in-range index addresses its own element, which the view holds exclusively
//! for `'a`.

use std::fmt;
use std::marker::PhantomData;

use crate::errors::internal_error;
use crate::view::{
    checked_element_count, contiguous_len, for_each_row_start, offset_of, row_major_strides, Nested, View,
};

/// Mutably borrowed strided view; strides are in elements and may be negative, never zero.
///
/// Invariant: every axis length, and the product of the non-zero lengths, is at most
/// `isize::MAX`; every in-range index addresses its own element, valid to read and write, and
/// accessed through nothing else, for `'a`.
pub struct ViewMut<'a, T, const N: usize> {
    /// Address of the element at index `[0; N]` (meaningless if the view has no elements).
    ptr: *mut T,
    shape: [usize; N],
    strides: [isize; N],
    _marker: PhantomData<&'a mut T>,
}

// SAFETY: a mutable view is an exclusive borrow of its elements, like `&'a mut T`, which is Send
// when T: Send.
unsafe impl<T: Send, const N: usize> Send for ViewMut<'_, T, N> {}
// SAFETY: through a shared `&ViewMut` the elements can only be read (`as_view`), like through a
// shared `&&'a mut T`, which is Sync when T: Sync.
unsafe impl<T: Sync, const N: usize> Sync for ViewMut<'_, T, N> {}

impl<'a, T, const N: usize> ViewMut<'a, T, N> {
    /// A mutable view of the elements at `ptr + Σ index[k] * strides[k]` for `index < shape`.
    ///
    /// # Safety
    /// `ptr` must be non-null and aligned. For every index in range, the addressed element must
    /// be valid to read and write for `'a`, and accessed by nothing but this view meanwhile;
    /// distinct indices must address distinct elements (so no stride of an axis longer than 1
    /// is zero, and no two axes overlap). If the view is contiguous in row-major order, that
    /// includes forming a slice over the elements ([`ViewMut::as_slice_mut`]). Every axis
    /// length, and the product of the non-zero lengths, must be at most `isize::MAX` (ndarray's
    /// rule; a debug or checked build panics otherwise).
    #[inline]
    #[cfg_attr(any(debug_assertions, ein_checked), track_caller)]
    pub unsafe fn from_raw_parts(ptr: *mut T, shape: [usize; N], strides: [isize; N]) -> Self {
        if cfg!(any(debug_assertions, ein_checked)) {
            checked_element_count(&shape, "a mutable view");
        }
        ViewMut { ptr, shape, strides, _marker: PhantomData }
    }

    /// A row-major mutable view of `data`; panics unless `data.len()` is the product of `shape`,
    /// and unless the product of the non-zero lengths of `shape` is at most `isize::MAX`.
    #[track_caller]
    pub fn from_slice(data: &'a mut [T], shape: [usize; N]) -> Self {
        if checked_element_count(&shape, "a mutable view") != data.len() {
            panic!("ein: a slice of {} elements cannot be viewed with shape {shape:?}", data.len());
        }
        // SAFETY: row-major strides over a slice of exactly product(shape) elements address
        // distinct elements of that slice, which is borrowed mutably (so exclusively) for 'a;
        // the shape obeys the rule of `element_count`, as just checked.
        unsafe { ViewMut::from_raw_parts(data.as_mut_ptr(), shape, row_major_strides(shape)) }
    }

    /// The length of every axis.
    #[inline]
    pub fn shape(&self) -> [usize; N] {
        self.shape
    }

    /// The distance in elements between neighbours along every axis.
    #[inline]
    pub fn strides(&self) -> [isize; N] {
        self.strides
    }

    /// A read-only view of the same elements, for as long as `self` is borrowed.
    #[inline]
    pub fn as_view(&self) -> View<'_, T, N> {
        // SAFETY: every in-range index addresses an element valid to read for 'a, which outlives
        // the shared borrow of `self`; nothing mutates it meanwhile, since only this view may,
        // and it is borrowed. The shape is `self`'s, so it obeys the same rule.
        unsafe { View::from_raw_parts(self.ptr, self.shape, self.strides) }
    }

    /// The same mutable view, for as long as `self` is borrowed (so `self` can be used again
    /// afterwards).
    #[inline]
    pub fn reborrow(&mut self) -> ViewMut<'_, T, N> {
        ViewMut { ptr: self.ptr, shape: self.shape, strides: self.strides, _marker: PhantomData }
    }

    /// The elements as a slice, if they lie contiguously in row-major order (as
    /// [`View::as_slice`] decides: an empty view always does, and the strides of axes of length
    /// 1 do not matter).
    #[inline]
    pub fn as_slice_mut(&mut self) -> Option<&mut [T]> {
        self.reborrow().into_slice_mut()
    }

    /// The elements as a slice for all of `'a`, if they lie contiguously in row-major order (as
    /// [`ViewMut::as_slice_mut`]).
    #[inline]
    pub fn into_slice_mut(self) -> Option<&'a mut [T]> {
        self.try_into_slice_mut().ok()
    }

    /// The elements as a slice for all of `'a` if they lie contiguously in row-major order;
    /// `self`, unchanged, otherwise.
    pub(crate) fn try_into_slice_mut(self) -> Result<&'a mut [T], Self> {
        match contiguous_len(self.shape, self.strides) {
            None => Err(self),
            Some(0) => Ok(&mut []),
            // SAFETY: the view's `count` elements are at ptr, ptr + 1, …, each valid to read and
            // write, and held by this view alone, for 'a; `self` is consumed, so the slice
            // takes over that exclusive access.
            Some(count) => Ok(unsafe { std::slice::from_raw_parts_mut(self.ptr, count) }),
        }
    }

    /// Copies `from` into these elements, element by element (any strides on either side).
    /// The shapes must be equal: callers check that first, with a message for the user, so a
    /// difference here is an internal error.
    pub fn assign(&mut self, from: &View<'_, T, N>)
    where
        T: Copy,
    {
        if self.shape != from.shape() {
            internal_error(format_args!(
                "a view of shape {:?} assigned to a mutable view of shape {:?}",
                from.shape(),
                self.shape
            ));
        }
        if let (Some(source), Some(target)) = (from.as_slice(), self.as_slice_mut()) {
            target.copy_from_slice(source);
            return;
        }
        // Not both contiguous, so N >= 1 and no axis is empty (an empty view is contiguous, and
        // the two have the same shape).
        let inner_length = self.shape[N - 1];
        let source_stride = from.strides()[N - 1];
        let target_stride = self.strides[N - 1];
        let target = self.ptr;
        for_each_row_start(self.shape, |row_start| {
            let source_row = from.as_ptr().wrapping_offset(offset_of(row_start, &from.strides()));
            let target_row = target.wrapping_offset(offset_of(row_start, &self.strides));
            for position in 0..inner_length {
                let position = position as isize;
                // SAFETY: `row_start` (with 0 on the inner axis) plus `position` on the inner
                // axis is an in-range index of both views (they have the same shape), so it
                // addresses an element of `from` valid to read and one of `self` valid to write.
                // They are not the same element: `self` holds its elements exclusively, and
                // `from`'s are not mutated while it lives. The products are the true offsets of
                // in-range elements, so they fit in isize.
                unsafe { *target_row.offset(position * target_stride) = *source_row.offset(position * source_stride) };
            }
        });
    }
}

impl<T: Copy + fmt::Debug, const N: usize> fmt::Debug for ViewMut<'_, T, N> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("ViewMut")
            .field("shape", &self.shape)
            .field("strides", &self.strides)
            .field("elements", &Nested::new(&self.as_view()))
            .finish()
    }
}
