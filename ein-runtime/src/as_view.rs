//! [`AsView`]: borrowing any supported storage (ein arrays and views, ndarray arrays of any
//! storage and strides, `Vec`s, slices and Rust arrays) as a [`View`] without copying; and
//! [`AsViewMut`]: borrowing any mutable one of them as a [`ViewMut`], to write into.

use std::marker::PhantomData;

use ndarray::{ArrayBase, Data, DataMut, Dim, Dimension, IxDyn};

use crate::array::Array;
use crate::view::View;
use crate::view_mut::ViewMut;

/// Borrow any storage as a view without copying.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an array of rank {N} with `{T}` elements, which is how ein reads it here",
    label = "read as an array of rank {N} with `{T}` elements"
)]
pub trait AsView<T, const N: usize> {
    /// A view of all of `self`.
    fn as_view(&self) -> View<'_, T, N>;

    /// The element type, as a value: the expression form passes it on its own for each element
    /// type rustc decides, so that one that does not fit is reported at the captured local.
    #[doc(hidden)]
    #[inline]
    fn element_type(&self) -> PhantomData<T> {
        PhantomData
    }
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
    // SAFETY: ndarray's `as_ptr` addresses the element at index [0; N] (non-null and aligned
    // even when the array is empty) and its strides (in elements, possibly negative or zero)
    // address every in-range element from there; those elements are borrowed through `array`
    // for the view's lifetime; and ndarray's shapes obey the same rule as ein's (its
    // `size_of_shape_checked`: non-zero lengths multiply to at most isize::MAX), which a debug
    // or checked build asserts again in `from_raw_parts`.
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

/// Borrow any mutable storage as a mutable view without copying.
pub trait AsViewMut<T, const N: usize> {
    /// A mutable view of all of `self`.
    fn as_view_mut(&mut self) -> ViewMut<'_, T, N>;
}

impl<T, const N: usize> AsViewMut<T, N> for Array<T, N> {
    #[inline]
    fn as_view_mut(&mut self) -> ViewMut<'_, T, N> {
        Array::view_mut(self)
    }
}

impl<T, const N: usize> AsViewMut<T, N> for ViewMut<'_, T, N> {
    #[inline]
    fn as_view_mut(&mut self) -> ViewMut<'_, T, N> {
        self.reborrow()
    }
}

impl<T> AsViewMut<T, 1> for Vec<T> {
    #[inline]
    fn as_view_mut(&mut self) -> ViewMut<'_, T, 1> {
        let len = self.len();
        ViewMut::from_slice(self, [len])
    }
}

impl<T> AsViewMut<T, 1> for [T] {
    #[inline]
    fn as_view_mut(&mut self) -> ViewMut<'_, T, 1> {
        let len = self.len();
        ViewMut::from_slice(self, [len])
    }
}

impl<T, const M: usize> AsViewMut<T, 1> for [T; M] {
    #[inline]
    fn as_view_mut(&mut self) -> ViewMut<'_, T, 1> {
        ViewMut::from_slice(self, [M])
    }
}

impl<A: AsViewMut<T, N> + ?Sized, T, const N: usize> AsViewMut<T, N> for &mut A {
    #[inline]
    fn as_view_mut(&mut self) -> ViewMut<'_, T, N> {
        (**self).as_view_mut()
    }
}

/// A mutable view of an ndarray whose rank is known to be `N`.
#[inline]
fn view_mut_of_ndarray<S, D, T, const N: usize>(array: &mut ArrayBase<S, D>) -> ViewMut<'_, T, N>
where
    S: DataMut<Elem = T>,
    D: Dimension,
{
    // `view_mut` first makes the elements unique to `array`: copy-on-write storage (`ArcArray`
    // shared with a clone, `CowArray` borrowing a view) copies them here, which moves them and
    // may change their strides, so the pointer and strides are read from this view, after.
    let mut unique = array.view_mut();
    let mut shape = [0usize; N];
    let mut strides = [0isize; N];
    shape.copy_from_slice(unique.shape());
    strides.copy_from_slice(unique.strides());
    let ptr = unique.as_mut_ptr();
    // SAFETY: `ptr` addresses the element at index [0; N] of an ndarray mutable view, whose
    // strides (in elements, possibly negative) address a distinct element for every in-range
    // index (ndarray does not allow aliasing in mutable views); those elements are held by
    // `array` alone, now unshared, and borrowed mutably through it for the view's lifetime; and
    // ndarray's shapes obey ein's rule (non-zero lengths multiply to at most isize::MAX).
    unsafe { ViewMut::from_raw_parts(ptr, shape, strides) }
}

impl<S, T, const N: usize> AsViewMut<T, N> for ArrayBase<S, Dim<[usize; N]>>
where
    S: DataMut<Elem = T>,
    Dim<[usize; N]>: Dimension,
{
    #[inline]
    fn as_view_mut(&mut self) -> ViewMut<'_, T, N> {
        view_mut_of_ndarray(self)
    }
}

impl<S, T, const N: usize> AsViewMut<T, N> for ArrayBase<S, IxDyn>
where
    S: DataMut<Elem = T>,
{
    #[inline]
    fn as_view_mut(&mut self) -> ViewMut<'_, T, N> {
        if self.ndim() != N {
            wrong_dynamic_rank(self.ndim(), N);
        }
        view_mut_of_ndarray(self)
    }
}

#[cold]
#[inline(never)]
fn wrong_dynamic_rank(actual: usize, expected: usize) -> ! {
    let axes = |count: usize| if count == 1 { "axis" } else { "axes" };
    panic!(
        "ein: an ndarray of dynamic rank with {actual} {} was given where an array with {expected} {} is expected",
        axes(actual),
        axes(expected)
    )
}
