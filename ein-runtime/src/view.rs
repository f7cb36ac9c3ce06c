//! [`View`]: a borrowed, strided, N-dimensional window onto elements owned elsewhere (an
//! [`Array`], an ndarray, a `Vec` or a slice), which is how every ein input is read.
//!
//! A view is a pointer to the element at index `[0, …, 0]`, a shape and strides counted in
//! elements. Strides may be negative (reversed axes) or zero (broadcast axes), so element
//! addresses may lie before the pointer; the only promise is that every in-range index
//! addresses an element that lives, unchanged, for `'a`.
//!
//! Shapes obey ndarray's rule (its `size_of_shape_checked`): the product of the non-zero axis
//! lengths, hence every length, is at most `isize::MAX`. Every safe constructor checks it
//! ([`element_count`]), so no product of lengths the runtime computes from a shape can wrap.

use std::fmt;
use std::marker::PhantomData;

use crate::array::Array;
use crate::errors::internal_error;

/// How a view's elements lie in memory ([`View::layout`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// The last axis contiguous: row-major (C order).
    Rows,
    /// The first axis contiguous: column-major (Fortran order, a transposed matrix).
    Columns,
    /// Rank 3 or more, the axis before the last contiguous and the last not: a stack of
    /// transposed matrices (`permuted_axes([0, 2, 1])`, `swap_axes(1, 2)`).
    StackedColumns,
    /// None of these, or too few long axes to say.
    Other,
}

/// Whether generated code should take a function's column-major copy for arrays of these
/// layouts: at least one lies column by column, and none row by row.
pub fn columns_first(layouts: &[Layout]) -> bool {
    layouts.contains(&Layout::Columns) && !layouts.contains(&Layout::Rows)
}

/// Whether generated code should take a function's copy for stacks of transposed matrices
/// (its arrays of rank 3 or more read with their last two axes swapped) for arrays of these
/// layouts: at least one is such a stack, and none lies row by row.
pub fn stacked_columns_first(layouts: &[Layout]) -> bool {
    layouts.contains(&Layout::StackedColumns) && !layouts.contains(&Layout::Rows)
}

/// Borrowed strided view; strides are in elements and may be negative or zero.
///
/// Invariant: every axis length, and the product of the non-zero lengths, is at most
/// `isize::MAX`; every in-range index addresses an element valid to read, and not mutated, for
/// `'a`.
pub struct View<'a, T, const N: usize> {
    /// Address of the element at index `[0; N]` (meaningless if the view has no elements).
    ptr: *const T,
    shape: [usize; N],
    strides: [isize; N],
    _marker: PhantomData<&'a T>,
}

// A view is a shared borrow: copying it copies the borrow, whatever T is.
impl<T, const N: usize> Clone for View<'_, T, N> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T, const N: usize> Copy for View<'_, T, N> {}

// SAFETY: a view only reads through `ptr`, like `&'a T`, which is Send and Sync when T: Sync.
unsafe impl<T: Sync, const N: usize> Send for View<'_, T, N> {}
// SAFETY: as above.
unsafe impl<T: Sync, const N: usize> Sync for View<'_, T, N> {}

/// The panic of [`View::from_slice`] for a slice of the wrong length (out of line).
#[cold]
#[inline(never)]
#[track_caller]
fn slice_length_mismatch(len: usize, shape: &[usize]) -> ! {
    panic!("ein: a slice of {len} elements cannot be viewed with shape {shape:?}");
}

/// Row-major (C order) strides for `shape`, in elements. For a shape that obeys the rule of
/// [`element_count`] no product wraps: each stride is a product of non-zero lengths, or 0 once
/// an axis of length 0 has been passed.
#[inline]
pub(crate) fn row_major_strides<const N: usize>(shape: [usize; N]) -> [isize; N] {
    let mut strides = [0isize; N];
    let mut step = 1usize;
    for axis in (0..N).rev() {
        strides[axis] = step as isize;
        step = step.wrapping_mul(shape[axis]);
    }
    strides
}

/// The number of elements of a view of `shape` and `strides` if they lie contiguously in
/// row-major order, that is at `ptr`, `ptr + 1`, …: always for an empty view; otherwise when
/// every axis longer than 1 has the stride a row-major array would (the stride of an axis of
/// length 1 is never used, so it may be anything). `None` if they do not, or if the shape breaks
/// the rule of [`element_count`] (which no view's does).
pub(crate) fn contiguous_len<const N: usize>(shape: [usize; N], strides: [isize; N]) -> Option<usize> {
    let count = element_count(&shape)?;
    if count == 0 {
        return Some(0);
    }
    let mut expected_stride = 1isize;
    for axis in (0..N).rev() {
        if shape[axis] != 1 && strides[axis] != expected_stride {
            return None;
        }
        // No axis is empty and the count fits in isize, so no partial product wraps.
        expected_stride = expected_stride.wrapping_mul(shape[axis] as isize);
    }
    Some(count)
}

/// The number of elements of an array or view of `shape`, if the shape obeys ndarray's rule
/// (`size_of_shape_checked`): the product of its non-zero lengths is at most `isize::MAX`.
/// `None` otherwise. Under the rule no product of lengths taken from the shape can overflow —
/// the element count, a row-major stride, a count of rows — and every length fits in `isize`
/// and `i64`. Zero lengths are left out of the product so that an empty array may still have
/// long axes (`[0, 1 << 40]`), but not absurd ones (`[0, 1 << 63]`, whose row count would not
/// fit in `isize`).
#[inline]
pub(crate) fn element_count(shape: &[usize]) -> Option<usize> {
    let mut nonzero = 1usize;
    for &length in shape.iter().filter(|&&length| length != 0) {
        nonzero = nonzero.checked_mul(length)?;
    }
    if nonzero > isize::MAX as usize {
        return None;
    }
    Some(if shape.contains(&0) { 0 } else { nonzero })
}

/// The element count of `shape` ([`element_count`]); panics with an `ein: ` message naming
/// `what` (e.g. "a view") and the shape if the shape breaks its rule.
#[inline]
#[track_caller]
pub(crate) fn checked_element_count(shape: &[usize], what: &str) -> usize {
    match element_count(shape) {
        Some(count) => count,
        None => shape_too_large(shape, what),
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn shape_too_large(shape: &[usize], what: &str) -> ! {
    panic!(
        "ein: {what} of shape {shape:?} would have more elements than memory can address (the product of its non-zero lengths exceeds isize::MAX)"
    )
}

/// Offset in elements of `index` from the element at `[0; N]`, given `strides` (`K <= N`: the
/// first `K` axes). Wrapping: for an in-range index of a view the true offset fits in `isize`
/// (the element lies in the same allocation as the one at `[0; N]`), so wrapping changes
/// nothing; for an index of an empty sub-view, whose address is never read, or an axis of
/// length 1 with an arbitrary stride, it keeps a debug build from panicking on an overflow that
/// does not matter.
#[inline]
pub(crate) fn offset_of<const K: usize, const N: usize>(index: [usize; K], strides: &[isize; N]) -> isize {
    // K <= N, so zip stops after the K indexed axes.
    index.iter().zip(strides).fold(0isize, |offset, (&index_on_axis, &stride)| {
        offset.wrapping_add((index_on_axis as isize).wrapping_mul(stride))
    })
}

/// The promise of the unchecked accessors, checked where it can be: `index` (of the first `K`
/// axes) in range of `shape` — a panic at the caller in the checked build, an internal error
/// in a debug build, nothing otherwise.
#[inline]
#[cfg_attr(ein_checked, track_caller)]
fn check_in_range<const K: usize, const N: usize>(what: &str, index: &[usize; K], shape: &[usize; N]) {
    #[cfg(ein_checked)]
    if !(0..K).all(|axis| index[axis] < shape[axis]) {
        checked_build_out_of_range(what, index, shape);
    }
    debug_assert!(
        (0..K).all(|axis| index[axis] < shape[axis]),
        "ein: internal error: {what} {index:?} out of range for shape {shape:?}"
    );
}

/// Panics (in the checked build, `--cfg ein_checked`) for an index out of range of `shape`.
#[cfg(ein_checked)]
#[cold]
#[inline(never)]
#[track_caller]
pub(crate) fn checked_build_out_of_range(what: &str, index: &[usize], shape: &[usize]) -> ! {
    panic!("ein: checked build: {what} {index:?} is out of range for a view of shape {shape:?}")
}

impl<'a, T, const N: usize> View<'a, T, N> {
    /// A view of the elements at `ptr + Σ index[k] * strides[k]` for `index < shape`.
    ///
    /// # Safety
    /// `ptr` must be non-null and aligned. For every index in range, the addressed element must
    /// be valid to read, and not mutated, for `'a`; if the view is contiguous in row-major order
    /// that includes forming a slice over them ([`View::as_slice`]). Every axis length, and the
    /// product of the non-zero lengths, must be at most `isize::MAX` (ndarray's rule; a debug or
    /// checked build panics otherwise).
    #[inline]
    #[cfg_attr(any(debug_assertions, ein_checked), track_caller)]
    pub unsafe fn from_raw_parts(ptr: *const T, shape: [usize; N], strides: [isize; N]) -> Self {
        if cfg!(any(debug_assertions, ein_checked)) {
            checked_element_count(&shape, "a view");
        }
        View { ptr, shape, strides, _marker: PhantomData }
    }

    /// A row-major view of `data`; panics unless `data.len()` is the product of `shape`, and
    /// unless the product of the non-zero lengths of `shape` is at most `isize::MAX`.
    ///
    /// Inlined, so that the strides are constants where the shape is known: generated code
    /// views the arrays it builds itself with this, and reads them in loops that LLVM only
    /// vectorises with plain loads (not gathers) once it sees the last stride is 1.
    #[inline]
    #[track_caller]
    pub fn from_slice(data: &'a [T], shape: [usize; N]) -> Self {
        if checked_element_count(&shape, "a view") != data.len() {
            slice_length_mismatch(data.len(), &shape);
        }
        // SAFETY: row-major strides over a slice of exactly product(shape) elements address
        // only elements of that slice, which is borrowed for 'a; the shape obeys the rule of
        // `element_count`, as just checked.
        unsafe { View::from_raw_parts(data.as_ptr(), shape, row_major_strides(shape)) }
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

    /// The address of the element at index `[0; N]` (dangling if the view is empty).
    #[inline]
    pub fn as_ptr(&self) -> *const T {
        self.ptr
    }

    /// Asks the CPU to start loading the `count` elements from `index` along the last axis,
    /// when that axis has stride 1 (a run of memory); a hint only, which changes no value. Any
    /// index will do, in range or not: the address is computed with wrapping arithmetic and
    /// never dereferenced, and a prefetch never faults. Generated code calls it for the row a
    /// block of side-by-side sums reads some steps later: with rows a page or more apart, each
    /// step's short run gives the hardware prefetchers no stream to follow. Does nothing on
    /// targets other than x86-64.
    #[inline]
    pub fn prefetch_run(&self, index: [usize; N], count: usize) {
        #[cfg(target_arch = "x86_64")]
        {
            if N == 0 || self.strides[N - 1] != 1 {
                return;
            }
            let offset = index
                .iter()
                .zip(&self.strides)
                .fold(0isize, |sum, (&at, &stride)| sum.wrapping_add((at as isize).wrapping_mul(stride)));
            let start = self.ptr.wrapping_offset(offset).cast::<i8>();
            let bytes = count.saturating_mul(std::mem::size_of::<T>());
            for byte in (0..bytes).step_by(64) {
                // SAFETY: `_mm_prefetch` needs SSE, which every x86-64 CPU has; a prefetch
                // reads nothing architecturally and never faults, whatever the address.
                unsafe {
                    std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(start.wrapping_add(byte))
                };
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (index, count);
    }

    /// The length of `axis`.
    #[inline]
    pub fn len_of(&self, axis: usize) -> usize {
        self.shape[axis]
    }

    /// Axis length as i64 (what ein sizes are).
    #[inline]
    pub fn size(&self, axis: usize) -> i64 {
        // The view's invariant: every length is at most isize::MAX, hence fits in i64, so the
        // cast is exact (never negative).
        self.shape[axis] as i64
    }

    /// The total number of elements.
    #[inline]
    pub fn element_count(&self) -> usize {
        // The view's invariant: the product of the non-zero lengths fits in isize, so no
        // partial product overflows (once a 0 is reached the product stays 0).
        self.shape.iter().fold(1usize, |count, &length| count.wrapping_mul(length))
    }

    /// Offset in elements of `index` from `ptr`.
    #[inline]
    fn offset_of<const K: usize>(&self, index: [usize; K]) -> isize {
        offset_of(index, &self.strides)
    }

    /// Sub-array at the outermost `K` axes; `M` must equal `N - K` (asserted).
    ///
    /// # Safety
    /// Every index must be in range: `index[k] < self.shape()[k]`. The checked build
    /// (`--cfg ein_checked`) checks it, and panics at the caller if not.
    #[inline]
    #[cfg_attr(ein_checked, track_caller)]
    pub unsafe fn sub_unchecked<const K: usize, const M: usize>(&self, index: [usize; K]) -> View<'a, T, M> {
        if K + M != N {
            internal_error(format_args!("sub-view of rank {M} taken at {K} axes of a view of rank {N}"));
        }
        check_in_range("sub-view index", &index, &self.shape);
        let mut shape = [0usize; M];
        let mut strides = [0isize; M];
        shape.copy_from_slice(&self.shape[K..]);
        strides.copy_from_slice(&self.strides[K..]);
        // Wrapping: the sub-view may be empty, so its first element need not exist.
        let ptr = self.ptr.wrapping_offset(self.offset_of(index));
        // The sub-view's axes are some of this view's, so its shape obeys the invariant, and
        // its in-range indices address elements this view does (the caller's promise).
        View { ptr, shape, strides, _marker: PhantomData }
    }

    /// The same elements with the axes in reverse order: element `[i₀, …, iₙ₋₁]` of the result
    /// is element `[iₙ₋₁, …, i₀]` of this view (a transposed matrix). A column-major array's
    /// reversed view is row-major.
    #[inline]
    pub fn reversed_axes(self) -> Self {
        let (mut shape, mut strides) = (self.shape, self.strides);
        shape.reverse();
        strides.reverse();
        // The same axes in another order: the shape obeys the invariant, and every in-range
        // index addresses an element this view addresses.
        View { ptr: self.ptr, shape, strides, _marker: PhantomData }
    }

    /// The same elements with the last two axes swapped: element `[…, i, j]` of the result is
    /// element `[…, j, i]` of this view (a stack of transposed matrices). The identity below
    /// rank 2. A stack of transposed row-major matrices swapped back is row-major.
    #[inline]
    pub fn swapped_last_axes(self) -> Self {
        let (mut shape, mut strides) = (self.shape, self.strides);
        if N >= 2 {
            shape.swap(N - 2, N - 1);
            strides.swap(N - 2, N - 1);
        }
        // As for `reversed_axes`: the same axes in another order.
        View { ptr: self.ptr, shape, strides, _marker: PhantomData }
    }

    /// How the elements lie: [`Layout::Rows`] when the last axis is contiguous and the first is
    /// not (row-major, the layout generated loops are planned for), [`Layout::Columns`] when the
    /// first is and the last is not (column-major: a transposed matrix, Fortran order),
    /// [`Layout::StackedColumns`] when neither, and the rank is 3 or more, and the axis before
    /// the last is contiguous (a stack of transposed matrices); else [`Layout::Other`] (rank
    /// below 2, an axis of length 1 or less at either end, or strided).
    #[inline]
    pub fn layout(&self) -> Layout {
        let unit = |axis: usize| self.strides[axis] == 1 && self.shape[axis] > 1;
        let long = N >= 2 && self.shape[0] > 1 && self.shape[N - 1] > 1;
        match (long, long && unit(0), long && unit(N - 1)) {
            (true, false, true) => Layout::Rows,
            (true, true, false) => Layout::Columns,
            // The first axis may be short here (one matrix of a stack), but not the last two.
            (_, false, _) if N >= 3 && unit(N - 2) && self.shape[N - 1] > 1 && !unit(N - 1) => Layout::StackedColumns,
            _ => Layout::Other,
        }
    }

    /// The same view as a [`UnitView`], whose type says its last axis is contiguous, if it is
    /// (stride 1, or length at most 1, where the stride is never used); `None` otherwise.
    /// Generated code runs a copy of a loop nest over such views, where LLVM sees unit-stride
    /// reads it can vectorise, and keeps the general copy for other layouts.
    #[inline]
    pub fn unit_inner(self) -> Option<UnitView<'a, T, N>> {
        let Some(last) = N.checked_sub(1) else {
            return Some(UnitView(self));
        };
        if self.strides[last] != 1 && self.shape[last] > 1 {
            return None;
        }
        let mut strides = self.strides;
        // Unchanged for stride 1; for a length of 0 or 1 no in-range index multiplies it by
        // anything but 0, so every in-range index still addresses the same element.
        strides[last] = 1;
        Some(UnitView(View { ptr: self.ptr, shape: self.shape, strides, _marker: PhantomData }))
    }

    /// The same view as a [`UnitView`] whose type also says that it holds pixels of `PACK`
    /// contiguous channels: its last axis has length `PACK` and stride 1, the axis before it
    /// stride `PACK` (or length at most 1), if so; `None` otherwise. A view of rank below 2
    /// needs only the last axis's length and stride. Generated code runs a copy of a loop nest
    /// over such views where the nest reads an array only at literal positions of its last
    /// axis below `PACK` (channels of an interleaved image, `img[i, j, 0]`).
    #[inline]
    pub fn packed_inner<const PACK: usize>(self) -> Option<UnitView<'a, T, N, PACK>> {
        let UnitView(mut view) = self.unit_inner()?;
        if N == 0 || view.shape[N - 1] != PACK {
            return None;
        }
        if let Some(axis) = N.checked_sub(2) {
            if view.strides[axis] != PACK as isize && view.shape[axis] > 1 {
                return None;
            }
            // As in `unit_inner`: for a length of 0 or 1 the stride multiplies only 0.
            view.strides[axis] = PACK as isize;
        }
        Some(UnitView(view))
    }

    /// Rows `start..end` of the first axis as one run along the last axis, if they lie
    /// contiguously in row-major order and each holds `row_len` elements: shape
    /// `[1, …, 1, count]`, `count` their number of elements, element `[0, …, 0, k]` the `k`-th
    /// of them in row-major order. `None` for other layouts, other row lengths or rows out of
    /// range. Generated code runs an elementwise comprehension whose reads are all
    /// `x[i, j, …]` as one loop over such runs, so short rows cost no per-row overhead.
    #[inline]
    pub fn flat_rows(self, start: usize, end: usize, row_len: usize) -> Option<Self> {
        let last = N.checked_sub(1)?;
        if start > end || end > self.shape[0] {
            return None;
        }
        let mut rows_shape = self.shape;
        rows_shape[0] = end - start;
        let count = contiguous_len(rows_shape, self.strides)?;
        if Some(count) != rows_shape[0].checked_mul(row_len) {
            return None;
        }
        let mut shape = [1usize; N];
        shape[last] = count;
        let mut strides = self.strides;
        strides[last] = 1;
        // Wrapping: with no elements, the first need not exist.
        let ptr = self.ptr.wrapping_offset((start as isize).wrapping_mul(self.strides[0]));
        // The `count` elements of rows `start..end` (in range) lie at ptr, ptr + 1, …: every
        // in-range index of the new shape addresses one of them, and the count is at most
        // this view's element count, so the shape obeys the invariant.
        Some(View { ptr, shape, strides, _marker: PhantomData })
    }

    /// [`View::flat_rows`] with the first `row_axes` axes taken as one axis of rows (row `r`
    /// the `r`-th of them in row-major order), for comprehensions whose chunks are rows of
    /// their first two axes: rows `start..end` of `row_len` elements as one run of shape
    /// `[1, …, 1, count]`, if the whole view lies contiguously in row-major order and holds
    /// those rows. `None` otherwise.
    #[inline]
    pub fn flat_rows_of(self, row_axes: usize, start: usize, end: usize, row_len: usize) -> Option<Self> {
        let last = N.checked_sub(1)?;
        let rows = element_count(self.shape.get(..row_axes)?)?;
        if start > end || end > rows {
            return None;
        }
        let total = contiguous_len(self.shape, self.strides)?;
        if Some(total) != rows.checked_mul(row_len) {
            return None;
        }
        let mut shape = [1usize; N];
        // Rows in range of a view of `total` elements: neither product wraps.
        shape[last] = (end - start) * row_len;
        let mut strides = self.strides;
        strides[last] = 1;
        // Wrapping: with no elements, the first need not exist.
        let ptr = self.ptr.wrapping_add(start * row_len);
        // The whole view lies at ptr, ptr + 1, …, so rows `start..end` are the `count`
        // elements from `start * row_len` on: every in-range index of the new shape addresses
        // one of them, and the count is at most this view's, so the shape obeys the invariant.
        Some(View { ptr, shape, strides, _marker: PhantomData })
    }

    /// The last `K` axes as one, if they have lengths `lens` and lie contiguously in row-major
    /// order (the last of stride 1, each other one step of the axes after it): shape
    /// `[…, 1, …, 1, count]`, `count` the product of `lens`, element `[p…, 0, …, 0, k]` the
    /// `k`-th of the tail at `p…` in row-major order. `None` for other layouts or lengths.
    /// Generated code runs the innermost axes of a comprehension whose reads all end in
    /// `[…, h, w]` as one loop over such tails (a 7 × 7 plane as one row of 49).
    #[inline]
    pub fn flat_tail<const K: usize>(self, lens: [usize; K]) -> Option<Self> {
        let first = N.checked_sub(K).filter(|_| K > 0)?;
        if self.shape[first..] != lens {
            return None;
        }
        let empty = lens.contains(&0);
        let mut expected_stride = 1isize;
        for axis in (first..N).rev() {
            if !empty && self.shape[axis] != 1 && self.strides[axis] != expected_stride {
                return None;
            }
            // The view's element count fits in isize, and no length is 0 here unless the
            // strides are not compared: no product that matters wraps.
            expected_stride = expected_stride.wrapping_mul(self.shape[axis] as isize);
        }
        let count = if empty { 0 } else { lens.iter().product() };
        let mut shape = self.shape;
        shape[first..].fill(1);
        shape[N - 1] = count;
        let mut strides = self.strides;
        strides[N - 1] = 1;
        // The leading axes are unchanged; an index `[p…, 0, …, 0, k]` with `k < count` is the
        // element `k` places after `[p…, 0, …, 0]` in the contiguous tail, which holds `count`
        // elements (none when empty): every in-range index addresses an element of this view.
        Some(View { ptr: self.ptr, shape, strides, _marker: PhantomData })
    }

    /// The elements as a slice, if they lie contiguously in row-major order.
    pub fn as_slice(&self) -> Option<&'a [T]> {
        match contiguous_len(self.shape, self.strides)? {
            0 => Some(&[]),
            // SAFETY: the view has `count` elements at ptr, ptr + 1, …, all valid for 'a.
            count => Some(unsafe { std::slice::from_raw_parts(self.ptr, count) }),
        }
    }
}

impl<'a, T: Copy, const N: usize> View<'a, T, N> {
    /// The element at `index`.
    ///
    /// # Safety
    /// Every index must be in range: `index[k] < self.shape()[k]`. The checked build
    /// (`--cfg ein_checked`) checks it, and panics at the caller if not.
    #[inline]
    #[cfg_attr(ein_checked, track_caller)]
    pub unsafe fn get_unchecked(&self, index: [usize; N]) -> T {
        check_in_range("index", &index, &self.shape);
        // SAFETY: in-range indices address valid elements (the caller's promise).
        unsafe { *self.ptr.offset(self.offset_of(index)) }
    }

    /// [`View::get_unchecked`] with the last index added at the constant stride 1, for views
    /// whose last stride is 1 (or whose last length is at most 1): generated code reads the
    /// arrays it built itself, and their sub-arrays, this way, so that LLVM sees unit-stride
    /// reads (a stride of 1 in a field is a run-time value to it, and such reads of a row
    /// built per iteration became gather instructions).
    ///
    /// # Safety
    /// Every index must be in range, `index[k] < self.shape()[k]`, and the last axis's stride
    /// must be 1 or its length at most 1 (so that the only in-range last index is 0): then the
    /// address is [`View::get_unchecked`]'s. The checked build (`--cfg ein_checked`) checks
    /// both, and panics at the caller if not.
    #[inline]
    #[cfg_attr(ein_checked, track_caller)]
    pub unsafe fn get_unit_unchecked(&self, index: [usize; N]) -> T {
        // SAFETY: the caller's promise, which is `get_packed_unchecked`'s with `PACK` 0.
        unsafe { self.get_packed_unchecked::<0>(index) }
    }

    /// [`View::get_unit_unchecked`] with, if `PACK` is not 0 and the rank at least 2, the
    /// index before the last multiplied by the constant `PACK` ([`UnitView`]'s reads).
    ///
    /// # Safety
    /// As [`View::get_unit_unchecked`], and the axis before the last must have stride `PACK`
    /// or length at most 1 (when `PACK` is not 0 and the rank at least 2).
    #[inline]
    #[cfg_attr(ein_checked, track_caller)]
    // SAFETY: sound under the contract above: replacing a stride by the constant it equals (or
    // one that only multiplies 0) leaves every in-range address unchanged.
    pub unsafe fn get_packed_unchecked<const PACK: usize>(&self, index: [usize; N]) -> T {
        check_in_range("index", &index, &self.shape);
        let mut strides = self.strides;
        if let Some(last) = strides.last_mut() {
            #[cfg(ein_checked)]
            if *last != 1 && self.shape[N - 1] > 1 {
                internal_error(format_args!("a unit-stride read of a view with strides {:?}", self.strides));
            }
            *last = 1;
        }
        if PACK > 0 && N >= 2 {
            #[cfg(ein_checked)]
            if self.strides[N - 2] != PACK as isize && self.shape[N - 2] > 1 {
                internal_error(format_args!("a read at stride {PACK} of a view with strides {:?}", self.strides));
            }
            strides[N - 2] = PACK as isize;
        }
        // SAFETY: in-range indices address valid elements (the caller's promise), and with a
        // length of at most 1 a replaced stride only ever multiplies 0.
        unsafe { *self.ptr.offset(offset_of(index, &strides)) }
    }

    /// The element at `index`, or None if any index is out of range.
    #[inline]
    pub fn get(&self, index: [usize; N]) -> Option<T> {
        if (0..N).all(|axis| index[axis] < self.shape[axis]) {
            // SAFETY: just checked.
            Some(unsafe { self.get_unchecked(index) })
        } else {
            None
        }
    }

    /// Copy into a new row-major Array; panics with an `ein: ` message if there is not memory
    /// enough for it (a broadcast view may have far more elements than the memory it reads).
    pub fn to_array(&self) -> Array<T, N> {
        let mut data = crate::memory::output_vec(self.element_count());
        match self.as_slice() {
            Some(elements) => data.extend_from_slice(elements),
            // `data` has room for every element, so no push reallocates.
            None => self.for_each(|value| data.push(value)),
        }
        Array::from_vec(self.shape, data)
    }

    /// Row-major iteration over elements (by value).
    pub fn iter(&self) -> impl Iterator<Item = T> + 'a {
        Elements { view: *self, index: [0; N], remaining: self.element_count() }
    }

    /// Calls `visit` on every element in row-major order; faster than [`View::iter`] because
    /// the innermost axis is a plain strided loop.
    pub(crate) fn for_each(&self, mut visit: impl FnMut(T)) {
        if let Some(elements) = self.as_slice() {
            elements.iter().for_each(|&value| visit(value));
            return;
        }
        // Not contiguous, so N >= 1 and no axis is empty.
        let inner_length = self.shape[N - 1];
        let inner_stride = self.strides[N - 1];
        for_each_row_start(self.shape, |row_start| {
            let row = self.ptr.wrapping_offset(self.offset_of(row_start));
            for position in 0..inner_length {
                // SAFETY: `row_start` (with 0 on the inner axis) plus `position` on the inner
                // axis is an in-range index, so it addresses an element valid to read for 'a,
                // in the allocation `row` points into, and the product is its true offset.
                visit(unsafe { *row.offset(position as isize * inner_stride) });
            }
        });
    }
}

/// Calls `row(start)` with the index of the first element of every row (the last axis) of
/// `shape`, in row-major order: an odometer over the outer axes. `N` must be at least 1 and no
/// axis empty.
pub(crate) fn for_each_row_start<const N: usize>(shape: [usize; N], mut row: impl FnMut([usize; N])) {
    let mut start = [0usize; N];
    loop {
        row(start);
        // Advance the odometer over the outer axes; finished when it wraps around.
        let mut axis = N - 1;
        loop {
            if axis == 0 {
                return;
            }
            axis -= 1;
            start[axis] += 1;
            if start[axis] < shape[axis] {
                break;
            }
            start[axis] = 0;
        }
    }
}

/// Row-major iterator over a view's elements.
struct Elements<'a, T, const N: usize> {
    view: View<'a, T, N>,
    /// Index of the next element (meaningless once `remaining` is 0).
    index: [usize; N],
    remaining: usize,
}

impl<T: Copy, const N: usize> Iterator for Elements<'_, T, N> {
    type Item = T;

    #[inline]
    fn next(&mut self) -> Option<T> {
        if self.remaining == 0 {
            return None;
        }
        // SAFETY: while elements remain, `index` is in range.
        let value = unsafe { self.view.get_unchecked(self.index) };
        self.remaining -= 1;
        for axis in (0..N).rev() {
            self.index[axis] += 1;
            if self.index[axis] < self.view.shape[axis] {
                break;
            }
            self.index[axis] = 0;
        }
        Some(value)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl<T: Copy, const N: usize> ExactSizeIterator for Elements<'_, T, N> {}

/// Formats a view's elements as nested lists: the sub-array at `index` with its first `axis`
/// axes fixed.
pub(crate) struct Nested<'view, 'a, T, const N: usize> {
    view: &'view View<'a, T, N>,
    index: [usize; N],
    axis: usize,
}

impl<'view, 'a, T, const N: usize> Nested<'view, 'a, T, N> {
    /// All of `view`.
    pub(crate) fn new(view: &'view View<'a, T, N>) -> Self {
        Nested { view, index: [0; N], axis: 0 }
    }
}

impl<T: Copy + fmt::Debug, const N: usize> fmt::Debug for Nested<'_, '_, T, N> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.axis == N {
            // SAFETY: every axis of `index` was set below its length by an enclosing level.
            return fmt::Debug::fmt(&unsafe { self.view.get_unchecked(self.index) }, formatter);
        }
        let mut list = formatter.debug_list();
        for position in 0..self.view.shape[self.axis] {
            let mut index = self.index;
            index[self.axis] = position;
            list.entry(&Nested { view: self.view, index, axis: self.axis + 1 });
        }
        list.finish()
    }
}

impl<T: Copy + fmt::Debug, const N: usize> fmt::Debug for View<'_, T, N> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("View")
            .field("shape", &self.shape)
            .field("strides", &self.strides)
            .field("elements", &Nested::new(self))
            .finish()
    }
}

/// A [`View`] whose last axis has stride 1 (see [`View::unit_inner`]), known by its type:
/// reads add the last index unscaled, so LLVM sees unit-stride reads even where the view is
/// kept in memory that escapes (a closure the optimiser leaves outlined captures it), which a
/// stride stored in a field does not survive. Everything else goes through [`Deref`] to the
/// view.
///
/// A `PACK` above 0 says more: the axis before the last has stride `PACK` too (or length at
/// most 1), as in an interleaved image `[h, w, 3]` read by channel (`img[i, j, 0]`), whose
/// reads along `j` LLVM then sees at the constant stride 3 and de-interleaves with shuffles
/// (see [`View::packed_inner`]). It is ignored by views of rank below 2.
///
/// [`Deref`]: std::ops::Deref
pub struct UnitView<'a, T, const N: usize, const PACK: usize = 0>(View<'a, T, N>);

impl<T, const N: usize, const PACK: usize> Clone for UnitView<'_, T, N, PACK> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T, const N: usize, const PACK: usize> Copy for UnitView<'_, T, N, PACK> {}

impl<'a, T, const N: usize, const PACK: usize> std::ops::Deref for UnitView<'a, T, N, PACK> {
    type Target = View<'a, T, N>;

    #[inline]
    fn deref(&self) -> &View<'a, T, N> {
        &self.0
    }
}

impl<'a, T, const N: usize, const PACK: usize> UnitView<'a, T, N, PACK> {
    /// The plain view.
    #[inline]
    pub fn view(self) -> View<'a, T, N> {
        self.0
    }

    /// [`View::len_of`], the constant `PACK` for the last axis if `PACK` is not 0 (see
    /// [`View::packed_inner`]): a literal channel's read is then seen to be in range, so its
    /// position is the constant (a clamp to the run-time length would hide it from LLVM).
    #[inline]
    pub fn len_of(&self, axis: usize) -> usize {
        if PACK > 0 && axis + 1 == N {
            PACK
        } else {
            self.0.len_of(axis)
        }
    }

    /// [`View::flat_rows`], still a `UnitView` (the run's stride is 1; the run's other axes
    /// have length 1, so no `PACK` is kept).
    #[inline]
    pub fn flat_rows(self, start: usize, end: usize, row_len: usize) -> Option<UnitView<'a, T, N>> {
        self.0.flat_rows(start, end, row_len).map(UnitView)
    }

    /// [`View::flat_rows_of`], still a `UnitView` (as [`UnitView::flat_rows`]).
    #[inline]
    pub fn flat_rows_of(self, row_axes: usize, start: usize, end: usize, row_len: usize) -> Option<UnitView<'a, T, N>> {
        self.0.flat_rows_of(row_axes, start, end, row_len).map(UnitView)
    }

    /// [`View::flat_tail`], still a `UnitView` (the tail's stride is 1; no `PACK` is kept).
    #[inline]
    pub fn flat_tail<const K: usize>(self, lens: [usize; K]) -> Option<UnitView<'a, T, N>> {
        self.0.flat_tail(lens).map(UnitView)
    }

    /// [`View::sub_unchecked`], still contiguous along its last axis (the same axis, when the
    /// sub-view has any), and with the same stride `PACK` before it (the same axis, when the
    /// sub-view has two).
    ///
    /// # Safety
    /// Every index must be in range, `index[k] < self.shape()[k]` (the promise of
    /// [`View::sub_unchecked`], which this passes on). The sub-view's last two axes are this
    /// view's last two, so wrapping it keeps `UnitView`'s invariant.
    #[inline]
    #[cfg_attr(ein_checked, track_caller)]
    // SAFETY: sound under the contract above: the sub-view keeps this view's last two axes and
    // their strides, so `PACK` and the unit stride still hold of it.
    pub unsafe fn sub_unchecked<const K: usize, const M: usize>(&self, index: [usize; K]) -> UnitView<'a, T, M, PACK> {
        // SAFETY: the indices are in range (the caller's promise), all `sub_unchecked` asks.
        UnitView(unsafe { self.0.sub_unchecked(index) })
    }
}

/// The plain [`View`] of whichever of [`View`] and [`UnitView`] generated code holds for an
/// array: code that takes the plain view (a contraction's operands) is written once for both,
/// as a loop versioned for unit strides holds the second where its other copy holds the first.
pub trait IntoView<'a, T, const N: usize> {
    /// The plain view.
    fn into_view(self) -> View<'a, T, N>;
}

impl<'a, T, const N: usize> IntoView<'a, T, N> for View<'a, T, N> {
    #[inline]
    fn into_view(self) -> View<'a, T, N> {
        self
    }
}

impl<'a, T, const N: usize, const PACK: usize> IntoView<'a, T, N> for UnitView<'a, T, N, PACK> {
    #[inline]
    fn into_view(self) -> View<'a, T, N> {
        self.0
    }
}

impl<T: Copy, const N: usize, const PACK: usize> UnitView<'_, T, N, PACK> {
    /// [`View::get_unchecked`], the last index added with the constant stride 1 (and the one
    /// before it multiplied by the constant `PACK`, if that is not 0).
    ///
    /// # Safety
    /// Every index must be in range, `index[k] < self.shape()[k]`: then the address is the
    /// plain view's for the same index (its last stride is 1, or its last length at most 1 so
    /// the only in-range last index is 0; likewise `PACK` before it), an element valid to
    /// read for `'a`.
    #[inline]
    #[cfg_attr(ein_checked, track_caller)]
    pub unsafe fn get_unchecked(&self, index: [usize; N]) -> T {
        // SAFETY: the indices are in range (the caller's promise), and the strides are the
        // constants (`unit_inner`, `packed_inner`).
        unsafe { self.0.get_packed_unchecked::<PACK>(index) }
    }
}
