//! [`AsView`]: borrowing any supported storage (ein arrays and views, ndarray arrays of any
//! storage and strides, `Vec`s, slices and Rust arrays) as a [`View`] without copying.

use ndarray::{ArrayBase, Data, Dim, Dimension, IxDyn};

use crate::array::Array;
use crate::view::View;

/// Borrow any storage as a view without copying.
pub trait AsView<T, const N: usize> {
    /// A view of all of `self`.
    fn as_view(&self) -> View<'_, T, N>;
}

impl<T, const N: usize> AsView<T, N> for Array<T, N> {
    #[inline]
    fn as_view(&self) -> View<'_, T, N> {
        Array::view(self)
    }
}

impl<T, const N: usize> AsView<T, N> for View<'_, T, N> {
    #[inline]
    fn as_view(&self) -> View<'_, T, N> {
        *self
    }
}

impl<T> AsView<T, 1> for Vec<T> {
    #[inline]
    fn as_view(&self) -> View<'_, T, 1> {
        View::from_slice(self, [self.len()])
    }
}

impl<T> AsView<T, 1> for [T] {
    #[inline]
    fn as_view(&self) -> View<'_, T, 1> {
        View::from_slice(self, [self.len()])
    }
}

impl<T, const M: usize> AsView<T, 1> for [T; M] {
    #[inline]
    fn as_view(&self) -> View<'_, T, 1> {
        View::from_slice(self, [M])
    }
}

impl<A: AsView<T, N> + ?Sized, T, const N: usize> AsView<T, N> for &A {
    #[inline]
    fn as_view(&self) -> View<'_, T, N> {
        (**self).as_view()
    }
}

impl<A: AsView<T, N> + ?Sized, T, const N: usize> AsView<T, N> for &mut A {
    #[inline]
    fn as_view(&self) -> View<'_, T, N> {
        (**self).as_view()
    }
}

/// A view of an ndarray whose rank is known to be `N`.
#[inline]
fn view_of_ndarray<S, D, T, const N: usize>(array: &ArrayBase<S, D>) -> View<'_, T, N>
where
    S: Data<Elem = T>,
    D: Dimension,
{
    let mut shape = [0usize; N];
    let mut strides = [0isize; N];
    shape.copy_from_slice(array.shape());
    strides.copy_from_slice(array.strides());
    // SAFETY: ndarray's `as_ptr` addresses the element at index [0; N] and its strides (in
    // elements, possibly negative or zero) address every in-range element from there; those
    // elements are borrowed through `array` for the view's lifetime, and ndarray keeps element
    // counts within isize.
    unsafe { View::from_raw_parts(array.as_ptr(), shape, strides) }
}

impl<S, T, const N: usize> AsView<T, N> for ArrayBase<S, Dim<[usize; N]>>
where
    S: Data<Elem = T>,
    Dim<[usize; N]>: Dimension,
{
    #[inline]
    fn as_view(&self) -> View<'_, T, N> {
        view_of_ndarray(self)
    }
}

impl<S, T, const N: usize> AsView<T, N> for ArrayBase<S, IxDyn>
where
    S: Data<Elem = T>,
{
    #[inline]
    fn as_view(&self) -> View<'_, T, N> {
        if self.ndim() != N {
            wrong_dynamic_rank(self.ndim(), N);
        }
        view_of_ndarray(self)
    }
}

#[cold]
#[inline(never)]
fn wrong_dynamic_rank(actual: usize, expected: usize) -> ! {
    panic!(
        "ein: an ndarray of dynamic rank with {actual} axes was given where an array with {expected} axes is expected"
    )
}
