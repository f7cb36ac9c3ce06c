//! Building outputs: an uninitialised [`Buffer`] is filled chunk by chunk — a chunk is a run of
//! consecutive rows — each chunk through an [`Out`] that writes sequentially, on rayon's pool
//! when the output is large ([`fill_chunks`]). Inner loops write through [`Fill::fill`], a
//! counted loop that checks once that its elements fit and then has each pushed into its
//! [`Slot`] (so LLVM sees a plain loop over contiguous memory and can vectorise it). Arrays of
//! tuples are tuples of buffers ([`Columns`]), written the same way and with [`Push`] and
//! [`CopyInto`]. A result written into an array the caller owns (numpy's `out=`) is filled the
//! same way through a [`Destination`] — in place when that array is contiguous in row-major
//! order, otherwise staged in a buffer that [`Destination::finish`] copies into it.
//!
//! Soundness rests on three facts: chunks are disjoint, so every chunk's `Out` may be handed
//! to a different thread; an `Out` can only ever write inside its chunk (every write is
//! checked, per element for `push` and once per loop for `fill`); and a buffer only becomes an
//! [`Array`] once `fill_chunks` has seen every chunk written in full (checked once per chunk).
//! The last rests on the `Out` that `fill_chunks` checks being the one it made for the chunk:
//! so nothing outside this crate can make an `Out` (`Out::new` is crate-private; were it public,
//! a closure could replace its chunk's `Out` with a full one over memory of its own, leaving the
//! chunk unwritten but passing the check), nor a [`Slot`] or [`Cursor`] (private fields), nor
//! implement [`Columns`] or [`Fill`] (sealed).

use std::marker::PhantomData;
use std::mem::{ManuallyDrop, MaybeUninit};

use rayon::prelude::*;

use crate::array::Array;
use crate::errors::{internal_error, Site};
use crate::view::{checked_element_count, element_count, View};
use crate::view_mut::ViewMut;

/// Outputs are filled in parallel once they are at least this many steps of estimated work
/// (elements, times the loop iterations inside each), and each parallel chunk gets about this
/// many (so tiny outputs never touch the thread pool). Also the parallel threshold of
/// [`crate::private::reduce`].
pub const GRAIN: usize = 1 << 14;

/// Whether parallel loops can pay: the pool has more than one thread. On one, rayon would run
/// every task on that thread anyway, after handing the work over from the calling thread
/// (about 10 µs from outside the pool, more than a 64 KiB element-wise loop takes), so the
/// work runs here, in the same chunks and order.
#[inline]
pub fn parallel_pool() -> bool {
    rayon::current_num_threads() > 1
}

/// The least work, in steps, run in parallel when called from outside rayon's pool: handing
/// work to the pool's sleeping threads and waiting for them costs some 15 µs there (a
/// 256 × 256 `u8` difference, 65536 steps, took 16 µs in parallel on two threads against
/// 1.2 µs serially), where a task inside the pool hands work over cheaply.
pub const OUTSIDE_GRAIN: usize = 1 << 17;

/// Whether `work` steps are worth running in parallel: at least [`GRAIN`] (inside the pool)
/// or [`OUTSIDE_GRAIN`] (called from outside it), on a pool of more than one thread.
#[inline]
pub fn parallel_worth(work: usize) -> bool {
    let least = if rayon::current_thread_index().is_some() { GRAIN } else { OUTSIDE_GRAIN };
    work >= least && parallel_pool()
}

/// An uninitialised output buffer of `len` elements, filled chunk by chunk.
pub struct Buffer<T> {
    elements: Vec<MaybeUninit<T>>,
    /// The elements `0..initialised` have been written.
    initialised: usize,
}

impl<T: Copy> Buffer<T> {
    /// A buffer of `len` uninitialised elements. Panics with an `ein: ` message if the memory
    /// cannot be had, or if `len` exceeds `isize::MAX` (no array may have more elements, even
    /// of a zero-sized type).
    #[inline]
    pub fn new(len: usize) -> Self {
        if len > isize::MAX as usize {
            too_long_output(len);
        }
        let mut elements = crate::memory::output_vec(len);
        // SAFETY: the capacity is at least `len` (output_vec reserved it), and MaybeUninit
        // needs no initialisation.
        unsafe { elements.set_len(len) };
        Buffer { elements, initialised: 0 }
    }

    /// A buffer of `len` uninitialised elements in the allocation of the array in `spare`
    /// (taken out of it), if it has room for them; else in one a fold of an earlier call left
    /// ([`Buffer::retire`]); in a new allocation otherwise. Folds hand the accumulator of the
    /// step before to the next step's output this way, so that an iterated stencil ping-pongs
    /// between two allocations instead of allocating (and page faulting) a new array every
    /// step, and a fold called again starts from the buffer its last call did not return.
    pub fn recycle<const N: usize>(spare: &mut Option<Array<T, N>>, len: usize) -> Self
    where
        T: 'static,
    {
        let kept = || {
            let worth = len.saturating_mul(std::mem::size_of::<T>()) >= RETIRED_MIN_BYTES;
            // At most twice the room needed: a much larger block stays for a larger array.
            worth.then(|| crate::memory::take_spare::<T>(len, len.saturating_mul(2))).flatten()
        };
        let Some(mut data) = spare.take().map(Array::into_vec).or_else(kept) else {
            return Buffer::new(len);
        };
        if data.capacity() < len {
            return Buffer::new(len);
        }
        data.clear();
        let mut data = ManuallyDrop::new(data);
        let capacity = data.capacity();
        // SAFETY: MaybeUninit<T> has T's size and alignment, so the allocation, the Vec<T>'s own
        // of `capacity` elements, is one of `capacity` MaybeUninit<T> allocated with the same
        // layout; length 0, so nothing is claimed initialised. `data` is in a ManuallyDrop, so
        // the allocation has one owner.
        let mut elements = unsafe { Vec::from_raw_parts(data.as_mut_ptr().cast::<MaybeUninit<T>>(), 0, capacity) };
        // SAFETY: len <= capacity (checked above), and MaybeUninit needs no initialisation.
        unsafe { elements.set_len(len) };
        Buffer { elements, initialised: 0 }
    }

    /// Keeps the allocation of a fold's last spare array, if large, for a later fold's first
    /// step ([`Buffer::recycle`]; at most 64 MiB are kept in all, with accumulations' arrays).
    pub fn retire<const N: usize>(spare: Option<Array<T, N>>)
    where
        T: Send + 'static,
    {
        if let Some(array) = spare {
            let data = array.into_vec();
            if data.capacity().saturating_mul(std::mem::size_of::<T>()) >= RETIRED_MIN_BYTES {
                crate::memory::keep_spare(data);
            }
        }
    }

    /// Panics unless every element was written exactly (each chunk's Out finished full).
    #[inline]
    pub fn into_array<const N: usize>(self, shape: [usize; N]) -> Array<T, N> {
        let len = self.elements.len();
        if element_count(&shape) != Some(len) {
            internal_error(format_args!("a buffer of {len} elements cannot become an array of shape {shape:?}"));
        }
        self.check_written();
        let mut elements = ManuallyDrop::new(self.elements);
        // SAFETY: all `len` elements are initialised (`check_written`: `fill_chunks` records a
        // length only once every chunk's own `Out` came back full), and MaybeUninit<T> has T's
        // layout, so the allocation is a valid Vec<T> of the same length and capacity; the
        // ManuallyDrop leaves it one owner.
        let data = unsafe { Vec::from_raw_parts(elements.as_mut_ptr().cast::<T>(), len, elements.capacity()) };
        Array::from_vec(shape, data)
    }
}

/// The smallest fold spare kept for a later call ([`Buffer::retire`]): below it the C
/// allocator keeps freed blocks itself, and a fresh one costs little.
const RETIRED_MIN_BYTES: usize = 1 << 20;

impl<T> Buffer<T> {
    /// The number of elements.
    pub fn len(&self) -> usize {
        self.elements.len()
    }

    /// True if the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.elements.is_empty()
    }

    /// Panics (an internal error) unless every element was written.
    fn check_written(&self) {
        let len = self.elements.len();
        if self.initialised != len {
            internal_error(format_args!(
                "only {} of the {len} elements of an output buffer were written",
                self.initialised
            ));
        }
    }

    /// The elements; panics (an internal error) unless every one was written.
    fn written_elements(&self) -> &[T] {
        self.check_written();
        // SAFETY: all elements are initialised, as just checked (see `into_array`), and
        // MaybeUninit<T> has T's layout; the slice borrows `self`.
        unsafe { std::slice::from_raw_parts(self.elements.as_ptr().cast::<T>(), self.elements.len()) }
    }
}

impl<T: Send> Buffer<T> {
    /// Fills the whole buffer in consecutive blocks of `block` elements (the last one may be
    /// shorter): `f(b, out)` must write block `b` through `out`, an [`Out`] over that block
    /// alone, which is checked full afterwards. On rayon's pool when `parallel`, else in order
    /// on the calling thread. For scans, whose blocks are not rows of a rectangle.
    pub(crate) fn fill_blocks<F>(&mut self, block: usize, parallel: bool, f: F)
    where
        F: for<'a> Fn(usize, &mut Out<'a, T>) + Sync + Send,
    {
        if self.initialised != 0 || block == 0 {
            internal_error(format_args!("fill_blocks on a written buffer or in blocks of 0"));
        }
        let fill = |(number, chunk): (usize, &mut [MaybeUninit<T>])| {
            let len = chunk.len();
            let mut out = Out::new(chunk);
            f(number, &mut out);
            if !out.is_full() {
                short_chunk(number * block, number * block + 1, len);
            }
        };
        if parallel && parallel_pool() {
            self.elements.par_chunks_mut(block).enumerate().for_each(fill);
        } else {
            self.elements.chunks_mut(block).enumerate().for_each(fill);
        }
        // Only reached if no block panicked, so every block was written and checked full.
        self.initialised = self.elements.len();
    }
}

/// Sequential writer over one chunk (consecutive rows) of a Buffer. Only this crate makes them
/// (see the module documentation for why that matters):
///
/// ```compile_fail,E0624
/// // A full `Out` over memory of one's own, to swap for the chunk's own in `fill_chunks`.
/// let mut own = [std::mem::MaybeUninit::<f64>::uninit(); 4];
/// let out = ein_runtime::private::Out::new(&mut own);
/// ```
///
/// The chunk is held as a raw pointer and a length (with the `&'a mut` borrow it came from in
/// the type), and every write goes through a pointer derived from that one base pointer, never
/// through a fresh `&mut` to the chunk: a [`Slot`] can outlive the [`Fill::fill`] run that made
/// it (two nested runs can swap their `&mut Slot`s), and a reborrow of the whole chunk by a later
/// write would invalidate the pointer such a slot still holds.
pub struct Out<'a, T> {
    /// The chunk's first element.
    start: *mut MaybeUninit<T>,
    /// The chunk's length.
    len: usize,
    /// The elements `start[..written]` have been written.
    written: usize,
    /// The chunk is borrowed mutably, exclusively, for `'a`.
    _chunk: PhantomData<&'a mut [MaybeUninit<T>]>,
}

// SAFETY: an Out stands for the `&'a mut [MaybeUninit<T>]` it was made from (it writes only
// inside that chunk, which it holds exclusively), and that is Send when T: Send.
unsafe impl<T: Send> Send for Out<'_, T> {}
// SAFETY: as above; through a shared `&Out` nothing is read or written but the counters, and
// `&mut [MaybeUninit<T>]` is Sync when T: Sync.
unsafe impl<T: Sync> Sync for Out<'_, T> {}

impl<'a, T> Out<'a, T> {
    /// A writer that fills `chunk` from its start. Crate-private: `fill_chunks` trusts that the
    /// `Out` it checks full is the one it made for the chunk.
    #[inline]
    pub(crate) fn new(chunk: &'a mut [MaybeUninit<T>]) -> Self {
        Out { start: chunk.as_mut_ptr(), len: chunk.len(), written: 0, _chunk: PhantomData }
    }

    /// Writes the next element; panics if the chunk is already full.
    #[inline]
    pub fn push(&mut self, value: T) {
        if self.written < self.len {
            // SAFETY: just checked that the position is inside the chunk, which `self` holds
            // exclusively; MaybeUninit<T> needs no initialisation to be overwritten.
            unsafe { self.start.add(self.written).write(MaybeUninit::new(value)) };
            self.written += 1;
        } else {
            chunk_overflow(self.len);
        }
    }

    /// Writes `values` as the next elements; panics if they do not fit in the chunk.
    #[inline]
    pub fn push_slice(&mut self, values: &[T])
    where
        T: Copy,
    {
        // `written <= len` always, so the subtraction cannot wrap.
        if values.len() > self.len - self.written {
            chunk_overflow(self.len);
        }
        // SAFETY: the `values.len()` elements from `written` on are inside the chunk (just
        // checked), which `self` holds exclusively; the values are a separate borrow, so the
        // two do not overlap.
        unsafe {
            std::ptr::copy_nonoverlapping(values.as_ptr(), self.start.add(self.written).cast::<T>(), values.len())
        };
        self.written += values.len();
    }

    /// A raw cursor at the next unwritten element, after checking that `count` more elements
    /// fit (panics otherwise).
    #[inline]
    fn reserve(&mut self, count: usize) -> Cursor<T> {
        // `written <= len` always, so the subtraction cannot wrap.
        if count > self.len - self.written {
            chunk_overflow(self.len);
        }
        // SAFETY: `written <= len`, so the pointer is inside the chunk or one past its end.
        let next = unsafe { self.start.add(self.written) };
        Cursor {
            next,
            #[cfg(ein_checked)]
            reserved: count,
        }
    }

    /// Records that `count` more elements were written.
    ///
    /// # Safety
    /// The `count` elements after the ones already written must have been written (through a
    /// cursor from [`Out::reserve`] of at least `count`).
    #[inline]
    unsafe fn commit(&mut self, count: usize) {
        // The caller's promise makes this at most `len`; the checked build checks it.
        #[cfg(ein_checked)]
        if count > self.len - self.written {
            panic!(
                "ein: checked build: {count} elements committed after {} of an output chunk of {}",
                self.written, self.len
            );
        }
        self.written += count;
    }

    /// How many elements have been written.
    #[inline]
    pub fn written(&self) -> usize {
        self.written
    }

    /// True once every element of the chunk has been written.
    #[inline]
    pub fn is_full(&self) -> bool {
        self.written == self.len
    }
}

#[cold]
#[inline(never)]
fn too_long_output(len: usize) -> ! {
    panic!("ein: an output of {len} elements is more than an array may have (isize::MAX)")
}

#[cold]
#[inline(never)]
fn chunk_overflow(len: usize) -> ! {
    internal_error(format_args!("more than {len} elements written to an output chunk of {len}"))
}

#[cold]
#[inline(never)]
fn short_chunk(start: usize, end: usize, row_len: usize) -> ! {
    internal_error(format_args!(
        "output rows {start}..{end} were not filled: their code wrote fewer than their {} elements",
        (end - start) * row_len
    ))
}

/// A pointer to a buffer's first element that may cross threads: [`fill_chunks`] only ever
/// turns it into disjoint chunks. Opaque outside this crate: the only use of one is the unsafe
/// [`Columns::outs`].
#[derive(Debug)]
pub struct RowsPointer<T>(*mut MaybeUninit<T>);

impl<T> Clone for RowsPointer<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for RowsPointer<T> {}

// SAFETY: the pointer is only used to build `Out`s over disjoint chunks, each used by one thread
// at a time, which is what `&mut [T]` allows across threads when T: Send.
unsafe impl<T: Send> Send for RowsPointer<T> {}
// SAFETY: as above; sharing the pointer itself gives no access.
unsafe impl<T: Send> Sync for RowsPointer<T> {}

mod sealed {
    /// Only this crate implements [`super::Columns`] and [`super::Fill`]: `fill_chunks` trusts
    /// their implementations.
    pub trait Sealed {}
}

/// A buffer, or a (nested) tuple of buffers for arrays of tuples (SoA). Implemented for
/// `Buffer<T>`, for `Destination<'_, T, N>` (which writes like a buffer) and for tuples `(A,)`,
/// `(A, B)`, … up to 8 of Columns.
pub trait Columns: Send + sealed::Sealed {
    /// The writers for one chunk: an [`Out`] per buffer, in the same tuple structure.
    ///
    /// Deliberately without `where Self: 'a`: [`fill_chunks`] takes a closure over `Outs<'a>`
    /// for every `'a`, and with that bound rustc would demand `Self: 'static`, ruling out a
    /// [`Destination`], which borrows the caller's array. Element types are `'static` instead
    /// (ein's are scalars), so an `Out<'a, T>` is well-formed for every `'a`.
    type Outs<'a>: Send;

    /// The start of every buffer, shareable across threads.
    #[doc(hidden)]
    type Pointers: Copy + Send + Sync;

    /// True if every buffer has exactly `len` elements.
    #[doc(hidden)]
    fn has_len(&self, len: usize) -> bool;

    /// The start of every buffer.
    #[doc(hidden)]
    fn pointers(&mut self) -> Self::Pointers;

    /// The writers for elements `start..start + len` of every buffer.
    ///
    /// # Safety
    /// `pointers` must come from a buffer of at least `start + len` elements that is not
    /// otherwise accessed for `'a`, and no two live `Outs` may cover the same element.
    #[doc(hidden)]
    unsafe fn outs<'a>(pointers: Self::Pointers, start: usize, len: usize) -> Self::Outs<'a>;

    /// True if every writer is full.
    #[doc(hidden)]
    fn is_full(outs: &Self::Outs<'_>) -> bool;

    /// Records that elements `0..len` of every buffer are written.
    ///
    /// # Safety
    /// They must have been: `Buffer::into_array` and `Destination::finish` trust this record.
    #[doc(hidden)]
    unsafe fn mark_initialised(&mut self, len: usize);
}

impl<T> sealed::Sealed for Buffer<T> {}

impl<T: Copy + Send + 'static> Columns for Buffer<T> {
    type Outs<'a> = Out<'a, T>;
    type Pointers = RowsPointer<T>;

    fn has_len(&self, len: usize) -> bool {
        self.elements.len() == len
    }

    fn pointers(&mut self) -> RowsPointer<T> {
        RowsPointer(self.elements.as_mut_ptr())
    }

    #[inline]
    unsafe fn outs<'a>(pointers: RowsPointer<T>, start: usize, len: usize) -> Out<'a, T> {
        // SAFETY: the caller promises the chunk `start..start + len` lies inside the buffer
        // (one allocation of MaybeUninit<T>, which need no initialisation) and is accessed by
        // nothing else for 'a.
        Out::new(unsafe { std::slice::from_raw_parts_mut(pointers.0.add(start), len) })
    }

    #[inline]
    fn is_full(outs: &Out<'_, T>) -> bool {
        outs.is_full()
    }

    unsafe fn mark_initialised(&mut self, len: usize) {
        // Max: a later, shorter fill cannot un-write elements.
        self.initialised = self.initialised.max(len);
    }
}

/// The caller's array (numpy's `out=`) as the columns an output is filled into, through the same
/// [`Out`]s as a [`Buffer`], so that everything generated for buffers works unchanged: the
/// array's own elements when they lie contiguously in row-major order (the order `Out`s write
/// in), filled in place; otherwise a buffer of the same length, copied into the array by
/// [`Destination::finish`].
pub struct Destination<'a, T, const N: usize> {
    storage: DestinationStorage<'a, T, N>,
}

/// Where a [`Destination`] is written.
enum DestinationStorage<'a, T, const N: usize> {
    /// The target's elements themselves, in row-major order.
    Direct(&'a mut [MaybeUninit<T>]),
    /// A buffer of the target's shape, to copy into the (non-contiguous) target once full.
    Staged { buffer: Buffer<T>, target: ViewMut<'a, T, N> },
}

impl<'a, T: Copy + Send, const N: usize> Destination<'a, T, N> {
    /// The destination that writes a result of `shape` into `target`; panics, naming `what`
    /// (already formatted, e.g. "`out`" or "`out.1`") and the user's `site`, unless `target`
    /// has that shape: "ein: `out` has shape [4, 3] but the result written into it has shape
    /// [4, 5] (at src/x.rs:3:5)".
    pub fn new(target: ViewMut<'a, T, N>, shape: [usize; N], what: &str, site: &Site) -> Self {
        if target.shape() != shape {
            wrong_destination_shape(what, &target.shape(), &shape, site);
        }
        let storage = match target.try_into_slice_mut() {
            Ok(elements) => {
                let len = elements.len();
                // SAFETY: MaybeUninit<T> has T's layout. Viewing initialised `T`s as possibly
                // uninitialised ones is unsound only if something could leave one of them
                // uninitialised, or skip a drop, before the borrow ends; but T: Copy has no drop,
                // and the slice is only ever written through `Out`s (this destination keeps it
                // private), which write initialised values only. So the elements stay valid
                // `T`s throughout, whether or not every one gets written.
                let elements = unsafe { std::slice::from_raw_parts_mut(elements.as_mut_ptr().cast(), len) };
                DestinationStorage::Direct(elements)
            }
            Err(target) => {
                // A mutable view's shape obeys the rule of `element_count`.
                let len = checked_element_count(&target.shape(), "a mutable view");
                DestinationStorage::Staged { buffer: Buffer::new(len), target }
            }
        };
        Destination { storage }
    }

    /// Completes the write: copies a staged buffer into the target, after checking that every
    /// element was written (an internal error otherwise); nothing for a target filled in place.
    pub fn finish(self) {
        match self.storage {
            DestinationStorage::Direct(_) => {}
            DestinationStorage::Staged { buffer, mut target } => {
                let shape = target.shape();
                target.assign(&View::from_slice(buffer.written_elements(), shape));
            }
        }
    }
}

/// Writes `from` into `target` (numpy's `out=` for a result that is already an array or a
/// view); panics, naming `what` and `site` as [`Destination::new`] does, unless the two have
/// the same shape.
pub fn write_into<T: Copy, const N: usize>(
    mut target: ViewMut<'_, T, N>,
    from: View<'_, T, N>,
    what: &str,
    site: &Site,
) {
    if target.shape() != from.shape() {
        wrong_destination_shape(what, &target.shape(), &from.shape(), site);
    }
    target.assign(&from);
}

/// Panics, naming `what` and `site` as [`Destination::new`] does, unless `target` has `shape`:
/// how a result of several parts checks every part of `out` before [`write_into`] writes any.
#[inline]
pub fn check_out<T, const N: usize>(target: &ViewMut<'_, T, N>, shape: [usize; N], what: &str, site: &Site) {
    if target.shape() != shape {
        wrong_destination_shape(what, &target.shape(), &shape, site);
    }
}

#[cold]
#[inline(never)]
fn wrong_destination_shape(what: &str, target: &[usize], result: &[usize], site: &Site) -> ! {
    panic!("ein: {what} has shape {target:?} but the result written into it has shape {result:?} (at {site})")
}

impl<T, const N: usize> sealed::Sealed for Destination<'_, T, N> {}

impl<T: Copy + Send + 'static, const N: usize> Columns for Destination<'_, T, N> {
    type Outs<'b> = Out<'b, T>;
    type Pointers = RowsPointer<T>;

    fn has_len(&self, len: usize) -> bool {
        match &self.storage {
            DestinationStorage::Direct(elements) => elements.len() == len,
            DestinationStorage::Staged { buffer, .. } => buffer.has_len(len),
        }
    }

    fn pointers(&mut self) -> RowsPointer<T> {
        match &mut self.storage {
            DestinationStorage::Direct(elements) => RowsPointer(elements.as_mut_ptr()),
            DestinationStorage::Staged { buffer, .. } => buffer.pointers(),
        }
    }

    #[inline]
    unsafe fn outs<'b>(pointers: RowsPointer<T>, start: usize, len: usize) -> Out<'b, T> {
        // SAFETY: the caller promises the chunk `start..start + len` lies inside the elements
        // behind `pointers` (the target's or the buffer's, one allocation either way) and is
        // accessed by nothing else for 'b.
        Out::new(unsafe { std::slice::from_raw_parts_mut(pointers.0.add(start), len) })
    }

    #[inline]
    fn is_full(outs: &Out<'_, T>) -> bool {
        outs.is_full()
    }

    unsafe fn mark_initialised(&mut self, len: usize) {
        match &mut self.storage {
            // The target's elements were initialised all along.
            DestinationStorage::Direct(_) => {}
            // SAFETY: the caller's promise.
            DestinationStorage::Staged { buffer, .. } => unsafe { buffer.mark_initialised(len) },
        }
    }
}

/// A raw pointer to the next unwritten element of an [`Out`], valid for as many elements as
/// were reserved. Only [`Fill::reserve`] makes one (its fields are private), and only the
/// unsafe [`Fill::slot`] uses one.
#[doc(hidden)]
pub struct Cursor<T> {
    next: *mut MaybeUninit<T>,
    /// How many elements were reserved from `next` on, for the checked build's check in
    /// [`Fill::slot`].
    #[cfg(ein_checked)]
    reserved: usize,
}

impl<T> Clone for Cursor<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Cursor<T> {}

/// The place of one element of a [`Fill::fill`] run: generated code pushes exactly one value
/// into it ([`Push`]), which `fill` checks (a check LLVM removes when the push is
/// unconditional, as in generated code). Only [`Fill::slot`] makes one (its fields are private).
pub struct Slot<T> {
    target: *mut MaybeUninit<T>,
    written: bool,
}

impl<T> Push<T> for Slot<T> {
    #[inline(always)]
    fn push(&mut self, value: T) {
        // SAFETY: a slot is only made by `Fill::slot`, for an element inside a reserved run of
        // an Out, a pointer derived from the Out's base pointer (never invalidated by a later
        // reborrow: the Out never makes a `&mut` to its chunk). Slots live only in `fill` runs
        // (no safe code can make or keep one elsewhere: a `&mut Slot` is all it is given, and a
        // Slot is neither Send nor Default), so a slot is used while its chunk is still held
        // by the chunk's Out inside `fill_chunks`, even one swapped into an enclosing run of
        // another Out of the same chunk; MaybeUninit<T> needs no initialisation to be
        // overwritten.
        unsafe { (*self.target).write(value) };
        self.written = true;
    }
}

/// Writes a counted run of elements (a scalar column into an Out, a tuple into a tuple of
/// Outs, recursively): the inner loops of generated code. One check per call that the run
/// fits, none per element once LLVM has seen that every element is pushed.
pub trait Fill: sealed::Sealed {
    /// Raw cursors at the next unwritten element of every column.
    #[doc(hidden)]
    type Cursor: Copy;

    /// The place of one element in every column: a [`Slot`] or a tuple of them.
    type Slot;

    /// Checks that `count` more elements fit in every column (panics otherwise) and returns
    /// the cursors at the next unwritten elements.
    #[doc(hidden)]
    fn reserve(&mut self, count: usize) -> Self::Cursor;

    /// The unwritten slots at `offset` from the cursors.
    ///
    /// # Safety
    /// `offset` must be below the `count` the cursors were reserved for, and the outs must stay
    /// mutably borrowed, and unwritten otherwise, while the slots live.
    #[doc(hidden)]
    unsafe fn slot(cursor: Self::Cursor, offset: usize) -> Self::Slot;

    /// True if a value was pushed into every column's slot.
    #[doc(hidden)]
    fn is_written(slot: &Self::Slot) -> bool;

    /// Records that `count` more elements were written in every column.
    ///
    /// # Safety
    /// They must have been, through cursors reserved for at least `count`.
    #[doc(hidden)]
    unsafe fn commit(&mut self, count: usize);

    /// Forgets every element written so far in every column, so that the chunk is written
    /// again from its start: generated code that ran a chunk on a fast path which turned out
    /// not to hold for its inputs (`Float::sin_fast`) runs it again after this. The
    /// elements are overwritten without being dropped: a leak at worst, never unsound (and
    /// ein's element types have no destructors).
    #[doc(hidden)]
    fn rewind(&mut self);

    /// Writes `count` elements after the ones already written: `value(k, slot)` must push the
    /// `k`-th into `slot`. `value` is called in order `0, 1, …, count - 1`. Panics before
    /// calling it if the elements do not fit, and if a call pushes nothing.
    #[inline(always)]
    fn fill(&mut self, count: usize, mut value: impl FnMut(usize, &mut Self::Slot)) {
        let cursor = self.reserve(count);
        for offset in 0..count {
            // SAFETY: offset < count, which `reserve` checked fits; `self` stays borrowed
            // mutably, so nothing else writes to the outs while the slot lives.
            let mut slot = unsafe { Self::slot(cursor, offset) };
            value(offset, &mut slot);
            if !Self::is_written(&slot) {
                unwritten_element();
            }
        }
        // SAFETY: every element of the run was pushed, as just checked. Had `value` panicked,
        // the elements written so far would merely stay unrecorded.
        unsafe { self.commit(count) };
    }

    /// Writes the next `rows * row_len` elements — `rows` rows of `row_len` — in tiles of
    /// `TILE` columns: for each tile, every row's columns in that tile, so that a read that
    /// walks across rows (a transposed operand) stays within a few cache lines per tile.
    /// `value(position, column, slot)` must push the element at (row, `column`) into `slot`;
    /// it is called once per element. A row's `position` is what the caller counts rows by:
    /// `first_row` for row 0, `next_row` of the row before's for the others (a row number, or
    /// a pair of indices whose rows are taken as one, counted rather than divided per row).
    /// Panics before calling it if the elements do not fit, and if a call pushes nothing.
    #[inline(always)]
    fn fill_tiled<R: Copy>(
        &mut self,
        (rows, row_len): (usize, usize),
        first_row: R,
        next_row: impl Fn(R) -> R,
        mut value: impl FnMut(R, usize, &mut Self::Slot),
    ) {
        let Some(count) = rows.checked_mul(row_len) else {
            internal_error(format_args!("{rows} rows of {row_len} elements overflow usize"));
        };
        let cursor = self.reserve(count);
        let mut tile_start = 0;
        while tile_start < row_len {
            // Not `tile_start + TILE`, which could wrap for a row of nearly usize::MAX elements.
            let tile_end = tile_start + (row_len - tile_start).min(TILE);
            let mut position = first_row;
            for row in 0..rows {
                for column in tile_start..tile_end {
                    // SAFETY: row < rows and column < row_len, so the offset is below `count`,
                    // which `reserve` checked fits; `self` stays borrowed mutably.
                    let mut slot = unsafe { Self::slot(cursor, row * row_len + column) };
                    value(position, column, &mut slot);
                    if !Self::is_written(&slot) {
                        unwritten_element();
                    }
                }
                if row + 1 < rows {
                    position = next_row(position);
                }
            }
            tile_start = tile_end;
        }
        // SAFETY: the tiles cover every (row, column) once, so all `count` elements were
        // pushed, as checked one by one.
        unsafe { self.commit(count) };
    }

    /// Writes the next `rows * row_len` elements — `rows` rows of `row_len` — a column at a
    /// time: `column(c, outs)` must fill the `rows` elements of column `c`, top to bottom,
    /// through `outs` (a [`Column`], itself a [`Fill`]), so that code computing a column's
    /// rows side by side (reads along the rows' index, `x[k, j, i]` in `for i, k`) writes them
    /// as it would a run of a row. Called for columns `0, 1, …, row_len - 1` in order. Panics
    /// before calling it if the elements do not fit, and if a column is left short.
    #[inline(always)]
    fn fill_columns(&mut self, rows: usize, row_len: usize, mut column: impl FnMut(usize, &mut Column<Self>))
    where
        Self: Sized,
    {
        let Some(count) = rows.checked_mul(row_len) else {
            internal_error(format_args!("{rows} rows of {row_len} elements overflow usize"));
        };
        let cursor = self.reserve(count);
        for first in 0..row_len {
            let mut outs = Column { cursor, first, stride: row_len, rows, written: 0 };
            column(first, &mut outs);
            if outs.written != rows {
                unwritten_element();
            }
        }
        // SAFETY: every column's `rows` elements were pushed (each checked as it was written,
        // and each column's count just now), so all `count` elements were.
        unsafe { self.commit(count) };
    }
}

/// One column of a run of rows being written by [`Fill::fill_columns`]: filling it writes
/// the column's elements top to bottom, `stride` apart in the outs.
pub struct Column<F: Fill> {
    cursor: F::Cursor,
    first: usize,
    stride: usize,
    rows: usize,
    written: usize,
}

/// A [`Column`]'s cursor: the outs' cursors, and where and how far apart its elements lie.
#[derive(Clone, Copy)]
pub struct ColumnCursor<C> {
    outs: C,
    first: usize,
    stride: usize,
}

impl<F: Fill> sealed::Sealed for Column<F> {}

impl<F: Fill> Fill for Column<F> {
    type Cursor = ColumnCursor<F::Cursor>;
    type Slot = F::Slot;

    #[inline(always)]
    fn rewind(&mut self) {
        self.written = 0;
    }

    #[inline(always)]
    fn reserve(&mut self, count: usize) -> Self::Cursor {
        if count > self.rows - self.written {
            internal_error(format_args!(
                "{count} more elements of a column of {} rows with {} written",
                self.rows, self.written
            ));
        }
        let first = self.first + self.written * self.stride;
        ColumnCursor { outs: self.cursor, first, stride: self.stride }
    }

    // SAFETY (the contract): callers pass an `offset` below the count `reserve` returned the
    // cursor for, with the column (so the outs) borrowed mutably while the slot lives, as
    // `Fill::slot` requires; the body relies on nothing else.
    #[inline(always)]
    unsafe fn slot(cursor: Self::Cursor, offset: usize) -> Self::Slot {
        // SAFETY: `offset` is below the count reserved, so the element lies in the column's
        // rows, inside the `rows * row_len` elements `fill_columns` reserved of the outs.
        unsafe { F::slot(cursor.outs, cursor.first + offset * cursor.stride) }
    }

    #[inline(always)]
    fn is_written(slot: &Self::Slot) -> bool {
        F::is_written(slot)
    }

    // SAFETY (the contract): callers promise the `count` elements were written through a
    // cursor reserved for at least `count`; the column only counts them (`reserve` keeps
    // `written` within its rows), and `fill_columns` commits the outs once every column is
    // full.
    #[inline(always)]
    unsafe fn commit(&mut self, count: usize) {
        self.written += count;
    }
}

/// The width of the tiles [`Fill::fill_tiled`] writes an output in; their height is the
/// chunk's. Narrow tiles over tall chunks ([`TILE_HEIGHT`] rows) keep a transposed read within
/// a few lines of each of a few rows of its array per tile, and visit each of those rows' pages
/// once per chunk: at 2048² f32 on 2 threads, `out[i, j] = x[j, i] * 2 + y[j, i]` took 15 ms
/// in 32 × 32 tiles, 5.1–5.6 ms in 8-wide tiles of 64 rows (1.6 ms contiguous).
pub const TILE: usize = 8;

/// The height of the chunks generated code asks [`fill_chunks`] for when it tiles, through
/// [`jammed_chunk_rows`].
pub const TILE_HEIGHT: usize = 64;

/// The fewest rows per chunk generated code asks [`fill_chunks`] for when a chunk should be
/// a block of up to `widest` rows (a multiple of 8): a rank-1 comprehension's elements
/// computed side by side (a chunk narrower than a block would compute every element alone),
/// or a tiled one's rows. A whole block per chunk unless that leaves fewer than two chunks
/// per thread of the pool, never fewer than 8 rows; the results are the same for any
/// chunking.
#[inline]
pub fn jammed_chunk_rows(rows: usize, widest: usize) -> usize {
    let per_thread = rows / (2 * rayon::current_num_threads()).max(1);
    (per_thread - per_thread % 8).clamp(8, widest.max(8))
}

#[cold]
#[inline(never)]
fn unwritten_element() -> ! {
    internal_error(format_args!("an element of an output was not written by its code"))
}

impl<T> sealed::Sealed for Out<'_, T> {}

impl<T> Fill for Out<'_, T> {
    type Cursor = Cursor<T>;
    type Slot = Slot<T>;

    #[inline(always)]
    fn rewind(&mut self) {
        self.written = 0;
    }

    #[inline(always)]
    fn reserve(&mut self, count: usize) -> Cursor<T> {
        Out::reserve(self, count)
    }

    #[inline(always)]
    unsafe fn slot(cursor: Cursor<T>, offset: usize) -> Slot<T> {
        #[cfg(ein_checked)]
        if offset >= cursor.reserved {
            panic!(
                "ein: checked build: output slot {offset} is outside the {} elements reserved for it",
                cursor.reserved
            );
        }
        // SAFETY: the caller promises `offset` is inside the reserved run, which lies inside
        // the Out's chunk (`reserve` checked that it fits).
        Slot { target: unsafe { cursor.next.add(offset) }, written: false }
    }

    #[inline(always)]
    fn is_written(slot: &Slot<T>) -> bool {
        slot.written
    }

    #[inline(always)]
    unsafe fn commit(&mut self, count: usize) {
        // SAFETY: the caller's promise.
        unsafe { Out::commit(self, count) };
    }
}

/// Pushes a value (a scalar into an Out, a tuple into a tuple of Outs, recursively).
pub trait Push<V> {
    /// Writes `value` as the next element of every column.
    fn push(&mut self, value: V);
}

impl<T> Push<T> for Out<'_, T> {
    #[inline]
    fn push(&mut self, value: T) {
        Out::push(self, value);
    }
}

/// Copies a view's elements in row-major order into the outs (views and tuples of views).
pub trait CopyInto<O> {
    /// Appends all of `self`'s elements, in row-major order, to `outs`.
    fn copy_into(&self, outs: &mut O);
}

impl<'a, T: Copy, const N: usize, const PACK: usize> CopyInto<Out<'a, T>> for crate::view::UnitView<'_, T, N, PACK> {
    #[inline]
    fn copy_into(&self, outs: &mut Out<'a, T>) {
        self.view().copy_into(outs);
    }
}

impl<'a, T: Copy, const N: usize> CopyInto<Out<'a, T>> for View<'_, T, N> {
    #[inline]
    fn copy_into(&self, outs: &mut Out<'a, T>) {
        match self.as_slice() {
            Some(elements) => outs.push_slice(elements),
            None => {
                let count = self.element_count();
                let cursor = outs.reserve(count);
                let mut offset = 0;
                self.for_each(|value| {
                    // `for_each` visits exactly `count` elements; checked anyway, as it is cheap
                    // next to a strided read.
                    if offset < count {
                        // SAFETY: offset < count, and `reserve` checked that `count` elements
                        // from the cursor on lie inside the chunk, which `outs` borrows mutably.
                        unsafe { (*cursor.next.add(offset)).write(value) };
                        offset += 1;
                    }
                });
                // SAFETY: `offset` elements were written (all `count` of them, as above; fewer
                // would leave the chunk short, which `fill_chunks` reports).
                unsafe { outs.commit(offset) };
            }
        }
    }
}

macro_rules! impl_tuples {
    ($(($($column:ident $value:ident $position:tt),+))+) => {$(
        impl<$($column),+> sealed::Sealed for ($($column,)+) {}

        impl<$($column: Columns),+> Columns for ($($column,)+) {
            type Outs<'a> = ($($column::Outs<'a>,)+);
            type Pointers = ($($column::Pointers,)+);

            fn has_len(&self, len: usize) -> bool {
                $(self.$position.has_len(len))&&+
            }

            fn pointers(&mut self) -> Self::Pointers {
                ($(self.$position.pointers(),)+)
            }

            #[inline]
            unsafe fn outs<'a>(pointers: Self::Pointers, start: usize, len: usize) -> Self::Outs<'a> {
                // SAFETY: the caller's promise holds for every column.
                unsafe { ($($column::outs(pointers.$position, start, len),)+) }
            }

            #[inline]
            fn is_full(outs: &Self::Outs<'_>) -> bool {
                $($column::is_full(&outs.$position))&&+
            }

            unsafe fn mark_initialised(&mut self, len: usize) {
                // SAFETY: the caller's promise holds for every column.
                $(unsafe { self.$position.mark_initialised(len) };)+
            }
        }

        impl<$($column: Fill),+> Fill for ($($column,)+) {
            type Cursor = ($($column::Cursor,)+);
            type Slot = ($($column::Slot,)+);

            #[inline(always)]
            fn rewind(&mut self) {
                $(self.$position.rewind();)+
            }

            #[inline(always)]
            fn reserve(&mut self, count: usize) -> Self::Cursor {
                ($(self.$position.reserve(count),)+)
            }

            #[inline(always)]
            unsafe fn slot(cursor: Self::Cursor, offset: usize) -> Self::Slot {
                // SAFETY: the caller's promise holds for every column.
                unsafe { ($($column::slot(cursor.$position, offset),)+) }
            }

            #[inline(always)]
            fn is_written(slot: &Self::Slot) -> bool {
                $($column::is_written(&slot.$position))&&+
            }

            #[inline(always)]
            unsafe fn commit(&mut self, count: usize) {
                // SAFETY: the caller's promise holds for every column.
                $(unsafe { self.$position.commit(count) };)+
            }
        }

        impl<$($column: Push<$value>, $value),+> Push<($($value,)+)> for ($($column,)+) {
            #[inline]
            fn push(&mut self, value: ($($value,)+)) {
                $(self.$position.push(value.$position);)+
            }
        }

        impl<$($column: CopyInto<$value>, $value),+> CopyInto<($($value,)+)> for ($($column,)+) {
            #[inline]
            fn copy_into(&self, outs: &mut ($($value,)+)) {
                $(self.$position.copy_into(&mut outs.$position);)+
            }
        }
    )+};
}

impl_tuples! {
    (A0 V0 0)
    (A0 V0 0, A1 V1 1)
    (A0 V0 0, A1 V1 1, A2 V2 2)
    (A0 V0 0, A1 V1 1, A2 V2 2, A3 V3 3)
    (A0 V0 0, A1 V1 1, A2 V2 2, A3 V3 3, A4 V4 4)
    (A0 V0 0, A1 V1 1, A2 V2 2, A3 V3 3, A4 V4 4, A5 V5 5)
    (A0 V0 0, A1 V1 1, A2 V2 2, A3 V3 3, A4 V4 4, A5 V5 5, A6 V6 6)
    (A0 V0 0, A1 V1 1, A2 V2 2, A3 V3 3, A4 V4 4, A5 V5 5, A6 V6 6, A7 V7 7)
}

/// Fills `rows` rows of `row_len` elements each, calling `f(start, end, outs)` once per chunk
/// of consecutive rows `start..end`, where `outs` must receive exactly the chunk's
/// `(end - start) * row_len` elements, in row-major order, in every column.
///
/// `work_per_row` estimates the steps one row takes (`row_len` when each element is a few
/// operations; more when elements run loops). Runs on rayon's pool when rows > 1 and
/// `rows * work_per_row` steps are worth it (`parallel_worth`), in chunks of about `GRAIN` steps and at
/// least `min_chunk_rows` rows (at least one); otherwise the whole output is one chunk, filled
/// on the calling thread. Each chunk's outs are checked full after `f` returns (panic
/// otherwise).
///
/// Every column must have exactly `rows * row_len` elements. When `row_len` is 0 but there are
/// rows, `f` is still called, once, for all of them on the calling thread: a row's code may
/// compute values (and fail: an empty read, a division by zero) before it writes its elements,
/// and the language evaluates those for every row, even one with no elements. (Generated code
/// whose rows cannot fail passes 0 rows when `row_len` is 0: there is nothing to evaluate.)
#[inline]
pub fn fill_chunks<C: Columns, F>(
    columns: &mut C,
    rows: usize,
    row_len: usize,
    min_chunk_rows: usize,
    work_per_row: usize,
    f: F,
) where
    F: for<'a> Fn(usize, usize, &mut C::Outs<'a>) + Sync + Send,
{
    let Some(len) = rows.checked_mul(row_len) else {
        internal_error(format_args!("{rows} rows of {row_len} elements overflow usize"));
    };
    if !columns.has_len(len) {
        internal_error(format_args!(
            "fill_chunks of {rows} rows of {row_len} elements given buffers of another length"
        ));
    }
    if rows == 0 {
        return;
    }
    let pointers = columns.pointers();
    if len == 0 {
        // SAFETY: the one chunk (all rows, of no elements) writes nothing, and `columns` is
        // mutably borrowed, hence not otherwise accessed, until it is done.
        unsafe { fill_chunk::<C, F>(pointers, 0, rows, 0, &f) };
        return;
    }
    let work_per_row = work_per_row.max(1);
    if rows > 1 && parallel_worth(rows.saturating_mul(work_per_row)) {
        let rows_per_chunk = GRAIN.div_ceil(work_per_row).max(min_chunk_rows);
        fill_in_parallel::<C, F>(pointers, rows, row_len, rows_per_chunk, &f);
    } else {
        // SAFETY: the one chunk is the whole of every buffer, and `columns` is mutably
        // borrowed, hence not otherwise accessed, until it is done.
        unsafe { fill_chunk::<C, F>(pointers, 0, rows, row_len, &f) };
    }
    // SAFETY: only reached if no chunk panicked, so every chunk was written and checked full.
    unsafe { columns.mark_initialised(len) };
}

/// The chunks of [`fill_chunks`] on rayon's pool (kept out of line: small outputs never get
/// here).
fn fill_in_parallel<C: Columns, F>(pointers: C::Pointers, rows: usize, row_len: usize, rows_per_chunk: usize, f: &F)
where
    F: for<'a> Fn(usize, usize, &mut C::Outs<'a>) + Sync + Send,
{
    let chunks = rows.div_ceil(rows_per_chunk);
    (0..chunks).into_par_iter().for_each(|chunk| {
        // chunk < chunks = ceil(rows / rows_per_chunk), so start < rows: no overflow.
        let start = chunk * rows_per_chunk;
        let end = rows.min(start.saturating_add(rows_per_chunk));
        // SAFETY: the chunks `start..end` are disjoint, each visited once, non-empty, and inside
        // the buffers (rows of `row_len` elements, `rows * row_len` of them, as `fill_chunks`
        // checked); `fill_chunks` holds `columns` mutably borrowed until every one is done.
        unsafe { fill_chunk::<C, F>(pointers, start, end, row_len, f) };
    });
}

/// The fewest elements of a piece of a row that [`fill_pieces`] splits off.
pub const PIECE_MIN: usize = 2048;

/// [`fill_chunks`] for outputs whose rows may be split, so that a few long rows (a matrix of
/// 3 rows of a million elements) still give every thread of the pool work: calls
/// `f(start, end, piece_len, outs)` once per chunk of consecutive pieces `start..end`, where
/// each row is `row_len.div_ceil(piece_len)` pieces of `piece_len` elements (the last of a
/// row possibly shorter), piece `p` of a row the elements `p * piece_len..` of it, and `outs`
/// must receive exactly the chunk's elements, in row-major order, in every column. Chunks
/// never split a piece.
///
/// `piece_len` is `row_len` (a piece is a row, chunked as by `fill_chunks`) unless the rows
/// are fewer than two per thread of the pool and splitting leaves pieces of at least
/// `PIECE_MIN` (2048) elements; then it is a multiple of 64 (whole cache lines of any element
/// type) and each chunk one piece. Only code whose elements cannot fail calls it, so where
/// pieces fall cannot change an error, and rows of no elements are not visited at all.
#[inline]
pub fn fill_pieces<C: Columns, F>(columns: &mut C, rows: usize, row_len: usize, work_per_row: usize, f: F)
where
    F: for<'a> Fn(usize, usize, usize, &mut C::Outs<'a>) + Sync + Send,
{
    // Rows of no elements are not visited: nothing in them can fail.
    let rows = if row_len == 0 { 0 } else { rows };
    let work = rows.saturating_mul(work_per_row.max(1));
    let threads = rayon::current_num_threads();
    let split = rows > 0 && rows < 2 * threads && parallel_worth(work);
    let pieces_per_row = if split { (2 * threads).div_ceil(rows) } else { 1 };
    let piece_len = row_len.div_ceil(pieces_per_row).next_multiple_of(64).max(PIECE_MIN);
    if piece_len >= row_len {
        return fill_chunks(columns, rows, row_len, 1, work_per_row, |start, end, outs| f(start, end, row_len, outs));
    }
    let Some(len) = rows.checked_mul(row_len) else {
        internal_error(format_args!("{rows} rows of {row_len} elements overflow usize"));
    };
    if !columns.has_len(len) {
        internal_error(format_args!(
            "fill_pieces of {rows} rows of {row_len} elements given buffers of another length"
        ));
    }
    // 0 < piece_len < row_len, so a row has at least two pieces and at most `row_len`, and
    // there are at most `len` pieces in all.
    let pieces_per_row = row_len.div_ceil(piece_len);
    let pieces = rows * pieces_per_row;
    let pointers = columns.pointers();
    (0..pieces).into_par_iter().for_each(|piece| {
        let (row, first) = (piece / pieces_per_row, piece % pieces_per_row * piece_len);
        let count = piece_len.min(row_len - first);
        // SAFETY: row < rows and first < row_len, so the piece's `count` elements from
        // `row * row_len + first` lie inside the `len` of every buffer; pieces are disjoint
        // and each visited once, and `columns` stays mutably borrowed until all are done.
        let mut outs = unsafe { C::outs(pointers, row * row_len + first, count) };
        f(piece, piece + 1, piece_len, &mut outs);
        if !C::is_full(&outs) {
            internal_error(format_args!(
                "output piece {piece} (row {row}, elements {first}..{}) was not filled by its code",
                first + count
            ));
        }
    });
    // SAFETY: only reached if no piece panicked, so every piece was written and checked full.
    unsafe { columns.mark_initialised(len) };
}

/// Fills rows `start..end` through `f` and checks that it wrote every element.
///
/// # Safety
/// `start < end`, the rows `start..end` of `row_len` elements must lie inside every buffer
/// behind `pointers`, and nothing else may access them meanwhile.
#[inline]
unsafe fn fill_chunk<C: Columns, F>(pointers: C::Pointers, start: usize, end: usize, row_len: usize, f: &F)
where
    F: for<'a> Fn(usize, usize, &mut C::Outs<'a>) + Sync + Send,
{
    // SAFETY: the caller's promise; `end * row_len` does not overflow, as the rows lie inside
    // a buffer.
    let mut outs = unsafe { C::outs(pointers, start * row_len, (end - start) * row_len) };
    f(start, end, &mut outs);
    if !C::is_full(&outs) {
        short_chunk(start, end, row_len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::as_view::AsViewMut;
    use crate::test_support::size;
    use ein_testing::expect_panic;
    use ndarray::{s, Array2, Axis};
    use std::sync::atomic::{AtomicUsize, Ordering};

    const SITE: Site = Site { file: "src/x.rs", line: 3, column: 5 };

    #[test]
    fn a_retired_fold_spare_is_the_next_folds_first_buffer() {
        // i16, which nothing else in these tests keeps, so that no other test takes it first.
        let len = RETIRED_MIN_BYTES * 2;
        let spare = Array::from_vec([len], vec![7i16; len]);
        let address = spare.as_slice().as_ptr() as usize;
        Buffer::retire(Some(spare));
        // A buffer of a quarter of it (1 MiB, worth keeping too) does not take it: at most
        // twice the room asked for.
        let small = Buffer::<i16>::recycle::<1>(&mut None, len / 4);
        assert_ne!(small.elements.as_ptr() as usize, address);
        let reused = Buffer::<i16>::recycle::<1>(&mut None, len - 1);
        assert_eq!(reused.elements.as_ptr() as usize, address);
        assert_eq!(reused.len(), len - 1);
        // Taken once: the next fold allocates afresh.
        let fresh = Buffer::<i16>::recycle::<1>(&mut None, len);
        assert_ne!(fresh.elements.as_ptr() as usize, address);
    }

    #[test]
    fn fills_a_small_buffer_serially_in_one_chunk() {
        let mut buffer = Buffer::<i64>::new(6);
        let caller = std::thread::current().id();
        let calls = AtomicUsize::new(0);
        fill_chunks(&mut buffer, 2, 3, 1, 3, |start, end, out| {
            assert_eq!(std::thread::current().id(), caller);
            assert_eq!((start, end), (0, 2));
            calls.fetch_add(1, Ordering::Relaxed);
            for row in start..end {
                out.fill(3, |column, slot| slot.push((row * 10 + column) as i64));
            }
        });
        assert_eq!(calls.into_inner(), 1);
        let array = buffer.into_array([2, 3]);
        assert_eq!(array.as_slice(), &[0, 1, 2, 10, 11, 12]);
        assert_eq!(array.shape(), [2, 3]);
    }

    #[test]
    fn fills_a_large_buffer_in_parallel_chunks_of_whole_rows() {
        crate::test_support::in_pool(2, || {
            let rows = size(1000, 200);
            let row_len = 100;
            assert!(rows * row_len > GRAIN);
            let rows_seen = AtomicUsize::new(0);
            let chunks = AtomicUsize::new(0);
            let mut buffer = Buffer::<f64>::new(rows * row_len);
            fill_chunks(&mut buffer, rows, row_len, 1, row_len, |start, end, out| {
                assert!(start < end && end <= rows);
                assert!(end - start <= GRAIN.div_ceil(row_len));
                chunks.fetch_add(1, Ordering::Relaxed);
                rows_seen.fetch_add(end - start, Ordering::Relaxed);
                for row in start..end {
                    out.fill(row_len, |column, slot| slot.push((row * row_len + column) as f64));
                }
            });
            assert_eq!(rows_seen.into_inner(), rows);
            assert!(chunks.into_inner() > 1);
            let array = buffer.into_array([rows, row_len]);
            assert!(array.as_slice().iter().enumerate().all(|(position, &value)| value == position as f64));
        })
    }

    #[test]
    fn a_long_one_dimensional_output_is_cut_into_chunks_of_many_elements() {
        crate::test_support::in_pool(2, || {
            let n = size(100_003, GRAIN * 2 + 3);
            let chunks = AtomicUsize::new(0);
            let mut buffer = Buffer::<usize>::new(n);
            fill_chunks(&mut buffer, n, 1, 1, 1, |start, end, out| {
                chunks.fetch_add(1, Ordering::Relaxed);
                assert!(end - start == GRAIN || end == n);
                out.fill(end - start, |offset, slot| slot.push((start + offset) * 3));
            });
            assert_eq!(chunks.into_inner(), n.div_ceil(GRAIN));
            let array = buffer.into_array([n]);
            assert!(array.as_slice().iter().enumerate().all(|(position, &value)| value == position * 3));
        })
    }

    #[test]
    fn few_long_rows_are_cut_into_pieces_and_many_rows_stay_whole() {
        // (rows, row_len, the pieces expected on 4 threads: at least two per thread in all).
        let cases = [
            (1, size(100_000, GRAIN * 2), 8),
            (3, size(50_003, GRAIN), 9),
            // Pieces of at least PIECE_MIN: two per row, the second shorter.
            (7, 3000, 14),
            // Too little work to hand over; as many rows as chunks wanted.
            (2, 3000, 0),
            (8, 50_000, 0),
            (64, 300, 0),
            (5, 100, 0),
            (0, 5000, 0),
            (3, 0, 0),
        ];
        for (rows, row_len, expected_pieces) in cases {
            crate::test_support::in_pool(4, || {
                let pieces = std::sync::Mutex::new(Vec::new());
                let mut buffer = Buffer::<usize>::new(rows * row_len);
                fill_pieces(&mut buffer, rows, row_len, row_len, |start, end, piece_len, out| {
                    assert!(piece_len == row_len || (piece_len % 64 == 0 && piece_len >= PIECE_MIN));
                    let per_row = row_len.div_ceil(piece_len);
                    for piece in start..end {
                        let (row, first) = (piece / per_row, piece % per_row * piece_len);
                        let count = piece_len.min(row_len - first);
                        out.fill(count, |offset, slot| slot.push(row * row_len + first + offset));
                    }
                    if piece_len < row_len {
                        pieces.lock().unwrap().push(start);
                    }
                });
                let array = buffer.into_array([rows, row_len]);
                assert!(array.as_slice().iter().enumerate().all(|(position, &value)| value == position));
                let mut pieces = pieces.into_inner().unwrap();
                pieces.sort_unstable();
                assert_eq!(pieces, (0..expected_pieces).collect::<Vec<_>>(), "{rows} rows of {row_len}");
            });
        }
        // On one thread nothing is split.
        crate::test_support::in_pool(1, || {
            let mut buffer = Buffer::<u8>::new(100_000);
            fill_pieces(&mut buffer, 1, 100_000, 100_000, |start, end, piece_len, out| {
                assert_eq!((start, end, piece_len), (0, 1, 100_000));
                out.fill(100_000, |_, slot| slot.push(1));
            });
        });
    }

    #[test]
    fn only_work_worth_the_hand_over_runs_in_parallel() {
        let chunks_of = |n: usize| {
            let chunks = AtomicUsize::new(0);
            let mut buffer = Buffer::<u8>::new(n);
            fill_chunks(&mut buffer, n, 1, 1, 1, |start, end, out| {
                chunks.fetch_add(1, Ordering::Relaxed);
                out.fill(end - start, |_, slot| slot.push(1));
            });
            chunks.into_inner()
        };
        // 4 grains of work: one chunk from outside the pool (or on a pool of one thread), four
        // from inside a pool of two; 16 grains are worth handing over from outside too.
        let n = GRAIN * 4;
        assert!(n < OUTSIDE_GRAIN);
        assert_eq!(chunks_of(n), 1);
        assert_eq!(crate::test_support::in_pool(2, || chunks_of(n)), 4);
        assert_eq!(crate::test_support::in_pool(1, || chunks_of(n)), 1);
        if !cfg!(miri) && parallel_pool() {
            assert_eq!(chunks_of(OUTSIDE_GRAIN), OUTSIDE_GRAIN / GRAIN);
        }
    }

    #[test]
    fn rows_longer_than_a_grain_are_one_chunk_each() {
        crate::test_support::in_pool(2, || {
            let (rows, row_len) = (3, GRAIN + 1);
            let mut buffer = Buffer::<u8>::new(rows * row_len);
            fill_chunks(&mut buffer, rows, row_len, 1, row_len, |start, end, out| {
                assert_eq!(end, start + 1);
                out.fill(row_len, |_, slot| slot.push(start as u8));
            });
            let array = buffer.into_array([rows, row_len]);
            assert_eq!(array.as_slice()[row_len * 2 + 5], 2);
        })
    }

    #[test]
    fn fills_a_tuple_of_two_buffers() {
        for (rows, row_len) in [(3, 4), (size(300, 200), 100)] {
            let mut columns = (Buffer::<i32>::new(rows * row_len), Buffer::<f32>::new(rows * row_len));
            fill_chunks(&mut columns, rows, row_len, 1, row_len, |start, end, outs| {
                for row in start..end {
                    if row % 2 == 0 {
                        outs.fill(row_len, |column, slots| slots.push(((row + column) as i32, (row * column) as f32)));
                    } else {
                        for column in 0..row_len {
                            outs.push(((row + column) as i32, (row * column) as f32));
                        }
                    }
                }
            });
            let (first, second) = columns;
            let first = first.into_array([rows, row_len]);
            let second = second.into_array([rows, row_len]);
            for row in 0..rows {
                for column in 0..row_len {
                    assert_eq!(first[[row, column]], (row + column) as i32);
                    assert_eq!(second[[row, column]], (row * column) as f32);
                }
            }
        }
    }

    #[test]
    fn fills_nested_tuples() {
        let mut columns = (Buffer::<i64>::new(4), (Buffer::<bool>::new(4), Buffer::<usize>::new(4)));
        fill_chunks(&mut columns, 1, 4, 1, 4, |_, _, outs| {
            outs.fill(3, |position, slots| slots.push((position as i64, (position % 2 == 0, position * 2))));
            outs.push((3, (false, 6)));
        });
        let (numbers, (flags, doubles)) = columns;
        assert_eq!(numbers.into_array([4]).as_slice(), &[0, 1, 2, 3]);
        assert_eq!(flags.into_array([4]).as_slice(), &[true, false, true, false]);
        assert_eq!(doubles.into_array([2, 2]).as_slice(), &[0, 2, 4, 6]);
    }

    #[test]
    fn fill_calls_its_function_in_order_and_writes_nothing_for_a_count_of_zero() {
        let mut buffer = Buffer::<usize>::new(3);
        fill_chunks(&mut buffer, 1, 3, 1, 3, |_, _, out| {
            out.fill(0, |_, _| panic!("nothing to write"));
            let mut order = Vec::new();
            out.fill(3, |offset, slot| {
                order.push(offset);
                slot.push(offset + 1);
            });
            assert_eq!(order, [0, 1, 2]);
        });
        assert_eq!(buffer.into_array([3]).as_slice(), &[1, 2, 3]);
    }

    #[test]
    fn copy_into_copies_views_and_tuples_of_views() {
        let data: Vec<i32> = (0..12).collect();
        let matrix = View::from_slice(&data, [3, 4]);
        // SAFETY: a transposed view over the same 12 elements.
        let transposed = unsafe { View::from_raw_parts(data.as_ptr(), [4, 3], [1, 4]) };
        let mut columns = (Buffer::<i32>::new(24), Buffer::<i32>::new(24));
        fill_chunks(&mut columns, 2, 12, 1, 12, |start, end, outs| {
            for row in start..end {
                if row == 0 {
                    (matrix, transposed).copy_into(outs);
                } else {
                    (transposed, matrix).copy_into(outs);
                }
            }
        });
        let (first, second) = columns;
        let transposed_data: Vec<i32> = (0..4).flat_map(|j| (0..3).map(move |i| i * 4 + j)).collect();
        let first = first.into_array([2, 12]).into_vec();
        let second = second.into_array([2, 12]).into_vec();
        assert_eq!(&first[..12], &data[..]);
        assert_eq!(&first[12..], &transposed_data[..]);
        assert_eq!(&second[..12], &transposed_data[..]);
        assert_eq!(&second[12..], &data[..]);
    }

    #[test]
    fn zero_rows_call_nothing_and_empty_rows_are_visited_once() {
        let mut buffer = Buffer::<f32>::new(0);
        fill_chunks(&mut buffer, 0, 5, 1, 5, |_, _, _| panic!("no rows"));
        assert_eq!(buffer.into_array([0, 5]).shape(), [0, 5]);
        let mut buffer = Buffer::<f32>::new(0);
        let calls = AtomicUsize::new(0);
        fill_chunks(&mut buffer, 1_000_000, 0, 1, 0, |start, end, _| {
            assert_eq!((start, end), (0, 1_000_000));
            calls.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(calls.into_inner(), 1);
        assert_eq!(buffer.into_array([1_000_000, 0]).shape(), [1_000_000, 0]);
    }

    #[test]
    fn a_short_chunk_panics_as_an_internal_error() {
        crate::test_support::in_pool(2, || {
            for rows in [2, size(1000, 200)] {
                let message = expect_panic(move || {
                    let mut buffer = Buffer::<i32>::new(rows * 100);
                    fill_chunks(&mut buffer, rows, 100, 1, 100, |start, end, out| {
                        for row in start..end {
                            let count = if row == 1 { 99 } else { 100 };
                            out.fill(count, |value, slot| slot.push(value as i32));
                        }
                    });
                });
                let chunk_end = if rows == 2 { 2 } else { GRAIN.div_ceil(100) };
                assert_eq!(
                    message,
                    format!(
                        "ein: internal error: output rows 0..{chunk_end} were not filled: their code wrote fewer than their {} elements (this is a bug in ein; please report it)",
                        chunk_end * 100
                    )
                );
            }
        })
    }

    #[test]
    fn a_short_column_of_a_tuple_panics() {
        let message = expect_panic(|| {
            let mut columns = (Buffer::<i32>::new(2), Buffer::<i32>::new(2));
            fill_chunks(&mut columns, 1, 2, 1, 2, |_, _, outs| {
                outs.push((1, 1));
                outs.0.push(2);
            });
        });
        assert!(message.starts_with("ein: internal error: output rows 0..1 were not filled"));
    }

    #[test]
    fn writing_past_the_end_panics() {
        let message = expect_panic(|| {
            let mut buffer = Buffer::<i32>::new(2);
            fill_chunks(&mut buffer, 1, 2, 1, 2, |_, _, out| (0..3).for_each(|value| out.push(value)));
        });
        assert_eq!(
            message,
            "ein: internal error: more than 2 elements written to an output chunk of 2 (this is a bug in ein; please report it)"
        );
        let message = expect_panic(|| {
            let mut buffer = Buffer::<i32>::new(4);
            fill_chunks(&mut buffer, 2, 2, 1, 2, |start, end, out| {
                for _ in start..end {
                    out.fill(3, |value, slot| slot.push(value as i32));
                }
            });
        });
        assert!(message.starts_with("ein: internal error: more than 4 elements"));
        let message = expect_panic(|| {
            let mut columns = (Buffer::<i32>::new(2), Buffer::<i32>::new(2));
            fill_chunks(&mut columns, 1, 2, 1, 2, |_, _, outs| {
                outs.1.push(0);
                outs.fill(2, |_, slots| slots.push((1, 1)));
            });
        });
        assert!(message.starts_with("ein: internal error: more than 2 elements"));
        for data in [vec![1, 2, 3], vec![1, 2, 3, 4, 5, 6]] {
            let message = expect_panic(move || {
                let mut buffer = Buffer::<i32>::new(2);
                let view = if data.len() == 3 {
                    View::from_slice(&data, [3])
                } else {
                    // SAFETY: every other element of six.
                    unsafe { View::from_raw_parts(data.as_ptr(), [3], [2]) }
                };
                fill_chunks(&mut buffer, 1, 2, 1, 2, |_, _, out| view.copy_into(out));
            });
            assert!(message.starts_with("ein: internal error: more than 2 elements"));
        }
    }

    #[test]
    fn an_unfilled_buffer_cannot_become_an_array() {
        let message = expect_panic(|| Buffer::<i32>::new(3).into_array([3]));
        assert_eq!(
            message,
            "ein: internal error: only 0 of the 3 elements of an output buffer were written (this is a bug in ein; please report it)"
        );
        let message = expect_panic(|| {
            let mut buffer = Buffer::<i32>::new(4);
            fill_chunks(&mut buffer, 2, 2, 1, 2, |_, _, out| out.fill(4, |value, slot| slot.push(value as i32)));
            buffer.into_array([4, 1, 2])
        });
        assert!(message
            .starts_with("ein: internal error: a buffer of 4 elements cannot become an array of shape [4, 1, 2]"));
    }

    #[test]
    fn a_buffer_left_unfinished_by_a_panic_stays_unfinished() {
        let mut buffer = Buffer::<i32>::new(4);
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            fill_chunks(&mut buffer, 2, 2, 1, 2, |_, _, out| {
                out.fill(4, |value, slot| {
                    slot.push(if value == 3 { panic!("user code panicked") } else { value as i32 })
                })
            })
        }));
        assert!(outcome.is_err());
        assert!(expect_panic(move || buffer.into_array([4])).contains("only 0 of the 4"));
    }

    #[test]
    fn fill_chunks_rejects_buffers_of_the_wrong_length() {
        let message = expect_panic(|| {
            let mut buffer = Buffer::<i32>::new(5);
            fill_chunks(&mut buffer, 2, 2, 1, 2, |_, _, _| {});
        });
        assert!(message.starts_with("ein: internal error: fill_chunks of 2 rows of 2 elements"));
    }

    #[test]
    fn an_element_left_unpushed_panics() {
        let message = expect_panic(|| {
            let mut buffer = Buffer::<i32>::new(3);
            fill_chunks(&mut buffer, 1, 3, 1, 3, |_, _, out| {
                out.fill(3, |offset, slot| {
                    if offset != 1 {
                        slot.push(0);
                    }
                })
            });
        });
        assert_eq!(
            message,
            "ein: internal error: an element of an output was not written by its code (this is a bug in ein; please report it)"
        );
    }

    #[test]
    fn tiled_fills_write_every_element_once_and_chunks_respect_the_minimum_height() {
        for (rows, row_len) in [(1, 1), (3, 70), (size(100, 40), 33), (size(700, 70), 64), (5, 0)] {
            let heights = std::sync::Mutex::new(Vec::new());
            let mut buffer = Buffer::<usize>::new(rows * row_len);
            fill_chunks(&mut buffer, rows, row_len, TILE_HEIGHT, row_len, |start, end, out| {
                heights.lock().unwrap().push((start, end));
                let mut visits = vec![0; (end - start) * row_len];
                // Rows counted as pairs (row / 7, row % 7), as for rows of two axes taken as one.
                let next = |(high, low): (usize, usize)| if low == 6 { (high + 1, 0) } else { (high, low + 1) };
                out.fill_tiled((end - start, row_len), (start / 7, start % 7), next, |(high, low), column, slot| {
                    let row = high * 7 + low;
                    visits[(row - start) * row_len + column] += 1;
                    slot.push(row * 1000 + column);
                });
                assert!(visits.iter().all(|&count| count == 1));
            });
            let heights = heights.into_inner().unwrap();
            if rows * row_len >= GRAIN {
                assert!(heights.iter().all(|&(start, end)| end - start >= TILE_HEIGHT || end == rows));
            }
            let array = buffer.into_array([rows, row_len]);
            for row in 0..rows {
                for column in 0..row_len {
                    assert_eq!(array[[row, column]], row * 1000 + column);
                }
            }
        }
        let message = expect_panic(|| {
            let mut buffer = Buffer::<i32>::new(4);
            fill_chunks(&mut buffer, 2, 2, 1, 2, |_, _, out| {
                out.fill_tiled((3, 2), 0, |row| row + 1, |_, _, slot| slot.push(0))
            });
        });
        assert!(message.starts_with("ein: internal error: more than 4 elements"));
    }

    #[test]
    fn column_fills_write_every_element_once_in_place() {
        for (rows, row_len) in [(1, 1), (3, 70), (size(100, 40), 33), (5, 0), (0, 4)] {
            let mut buffers = (Buffer::<usize>::new(rows * row_len), Buffer::<u8>::new(rows * row_len));
            let chunks = std::sync::Mutex::new(Vec::new());
            fill_chunks(&mut buffers, rows, row_len, 8, row_len, |start, end, out| {
                chunks.lock().unwrap().push((start, end));
                let mut columns = Vec::new();
                out.fill_columns(end - start, row_len, |column, outs| {
                    columns.push(column);
                    // Each column in two runs, as a side-by-side block and its tail write it.
                    let half = (end - start) / 2;
                    outs.fill(half, |row, slot| slot.push(((start + row) * 1000 + column, 1)));
                    outs.fill(end - start - half, |row, slot| slot.push(((start + half + row) * 1000 + column, 2)));
                });
                assert_eq!(columns, (0..row_len).collect::<Vec<_>>());
            });
            let (values, runs) = (buffers.0.into_array([rows, row_len]), buffers.1.into_array([rows, row_len]));
            for row in 0..rows {
                for column in 0..row_len {
                    assert_eq!(values[[row, column]], row * 1000 + column);
                    let chunks = chunks.lock().unwrap();
                    let Some(&(start, end)) = chunks.iter().find(|(start, end)| (*start..*end).contains(&row)) else {
                        panic!("row {row} in no chunk");
                    };
                    assert_eq!(runs[[row, column]], if row - start < (end - start) / 2 { 1 } else { 2 });
                }
            }
        }
        let short = expect_panic(|| {
            let mut buffer = Buffer::<i32>::new(4);
            fill_chunks(&mut buffer, 2, 2, 1, 2, |start, end, out| {
                out.fill_columns(end - start, 2, |_, outs| outs.fill(1, |_, slot| slot.push(0)))
            });
        });
        assert!(short.contains("was not written"), "{short}");
        let long = expect_panic(|| {
            let mut buffer = Buffer::<i32>::new(4);
            fill_chunks(&mut buffer, 2, 2, 2, 2, |start, end, out| {
                out.fill_columns(end - start, 2, |_, outs| outs.fill(3, |_, slot| slot.push(0)))
            });
        });
        assert!(long.starts_with("ein: internal error: 3 more elements of a column of 2 rows"), "{long}");
    }

    #[test]
    fn jammed_chunks_are_a_block_wide_unless_that_leaves_threads_idle() {
        let in_pool = |threads: usize, rows: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| jammed_chunk_rows(rows, 64))
        };
        // Two chunks per thread at least, in whole multiples of 8, between 8 and the block.
        assert_eq!(in_pool(2, 4096), 64);
        assert_eq!(in_pool(2, 100), 24);
        assert_eq!(in_pool(16, 4096), 64);
        assert_eq!(in_pool(16, 512), 16);
        assert_eq!(in_pool(16, 100), 8);
        assert_eq!(in_pool(1, 0), 8);
        assert_eq!(in_pool(1, 1), 8);
    }

    #[test]
    #[cfg_attr(miri, ignore = "an allocation Miri cannot make stops Miri instead of failing")]
    fn an_output_that_cannot_be_allocated_panics_instead_of_aborting() {
        let message = expect_panic(|| Buffer::<f64>::new(1 << 60));
        assert!(
            message.starts_with("ein: cannot allocate 1152921504606846976 elements (9223372036854775808 bytes)"),
            "{message}"
        );
        let message = expect_panic(|| Buffer::<u8>::new(usize::MAX / 2));
        assert!(
            message.starts_with("ein: cannot allocate 9223372036854775807 elements (9223372036854775807 bytes)"),
            "{message}"
        );
        let message =
            expect_panic(|| Buffer::<f32>::recycle::<1>(&mut Some(Array::from_vec([2], vec![0.0; 2])), 1 << 62));
        assert!(message.starts_with("ein: cannot allocate 4611686018427387904 elements"), "{message}");
        // Zero-sized elements need no memory, but no array may have more than isize::MAX.
        let message = expect_panic(|| Buffer::<()>::new(usize::MAX));
        assert_eq!(
            message,
            "ein: an output of 18446744073709551615 elements is more than an array may have (isize::MAX)"
        );
        assert_eq!(Buffer::<()>::new(isize::MAX as usize).len(), isize::MAX as usize);
    }

    /// The checks `Buffer::into_array` rests on, each failing on its own: a chunk's closure that
    /// writes too little, buffers of another length than the rows, and a buffer recovered (with
    /// `catch_unwind`) from a fill that panicked. None of them lets an unwritten element be read.
    #[test]
    fn no_safe_call_turns_an_unwritten_buffer_into_an_array() {
        crate::test_support::in_pool(2, || {
            use std::panic::{catch_unwind, AssertUnwindSafe};
            let message = expect_panic(|| {
                let mut buffer = Buffer::<i64>::new(6);
                fill_chunks(&mut buffer, 2, 3, 1, 3, |_, _, out| out.push(1));
            });
            assert!(message.starts_with("ein: internal error: output rows 0..2 were not filled"), "{message}");
            let message = expect_panic(|| {
                let mut buffer = Buffer::<i64>::new(6);
                fill_chunks(&mut buffer, 2, 2, 1, 2, |_, _, out| out.fill(4, |_, slot| slot.push(1)));
            });
            assert!(message.starts_with(
                "ein: internal error: fill_chunks of 2 rows of 2 elements given buffers of another length"
            ));
            let message = expect_panic(|| {
                let mut columns = (Buffer::<i64>::new(6), Buffer::<i64>::new(5));
                fill_chunks(&mut columns, 2, 3, 1, 3, |_, _, outs| outs.fill(6, |_, slots| slots.push((1, 2))));
            });
            assert!(message.starts_with(
                "ein: internal error: fill_chunks of 2 rows of 3 elements given buffers of another length"
            ));
            let message = expect_panic(|| {
                let mut buffer = Buffer::<i64>::new(1 << 16);
                let filled = catch_unwind(AssertUnwindSafe(|| {
                    fill_chunks(&mut buffer, 1 << 16, 1, 1, 1, |start, end, out| {
                        if start > 0 {
                            panic!("ein: a failing element");
                        }
                        out.fill(end - start, |_, slot| slot.push(0));
                    })
                }));
                assert!(filled.is_err());
                buffer.into_array([1 << 16])
            });
            assert!(message.starts_with("ein: internal error: only 0 of the 65536 elements"), "{message}");
            // A chunk's closure may swap the outs of two columns of the same type: each is still
            // the `Out` of a real chunk, checked full, so both columns are written (swapped).
            let mut columns = (Buffer::<i64>::new(4), Buffer::<i64>::new(4));
            fill_chunks(&mut columns, 2, 2, 1, 2, |start, end, outs| {
                std::mem::swap(&mut outs.0, &mut outs.1);
                outs.fill((end - start) * 2, |offset, slots| slots.push((offset as i64, -(offset as i64))));
            });
            let (first, second) = columns;
            assert_eq!(first.into_array([4]).as_slice(), [0, -1, -2, -3]);
            assert_eq!(second.into_array([4]).as_slice(), [0, 1, 2, 3]);
        })
    }

    /// Nested runs on two columns may swap their slots, so that a slot outlives the run that made
    /// it; it still writes its own element, even after its Out has written more (the Out never
    /// reborrows its chunk, which would invalidate the slot's pointer: Miri checks this one).
    #[test]
    fn nested_runs_may_swap_their_slots() {
        let mut columns = (Buffer::<i64>::new(2), Buffer::<i64>::new(2));
        fill_chunks(&mut columns, 1, 2, 1, 2, |_, _, (first, second)| {
            first.fill(1, |_, outer| {
                second.fill(1, |_, inner| {
                    std::mem::swap(outer, inner);
                    inner.push(10);
                });
                second.push(21);
                outer.push(20);
            });
            first.push(11);
        });
        let (first, second) = columns;
        assert_eq!(first.into_array([2]).as_slice(), [10, 11]);
        assert_eq!(second.into_array([2]).as_slice(), [20, 21]);
    }

    #[test]
    fn heavy_rows_run_in_parallel_even_when_the_output_is_small() {
        let rows = 64;
        let calls = AtomicUsize::new(0);
        let mut buffer = Buffer::<usize>::new(rows);
        // 64 elements of 4096 steps each: 256 Ki steps, in chunks of GRAIN / 4096 = 4 rows.
        fill_chunks(&mut buffer, rows, 1, 1, 4096, |start, end, out| {
            assert_eq!(end - start, 4);
            calls.fetch_add(1, Ordering::Relaxed);
            out.fill(end - start, |offset, slot| slot.push(start + offset));
        });
        assert_eq!(calls.into_inner(), 16);
        assert_eq!(buffer.into_array([rows]).as_slice(), &(0..rows).collect::<Vec<_>>()[..]);
        // Light rows of a small output stay in one chunk, whatever their length says.
        let mut buffer = Buffer::<u8>::new(8);
        let caller = std::thread::current().id();
        fill_chunks(&mut buffer, 8, 1, 1, 1, |start, end, out| {
            assert_eq!((start, end, std::thread::current().id()), (0, 8, caller));
            out.fill(8, |_, slot| slot.push(1));
        });
    }

    #[test]
    fn a_recycled_buffer_reuses_the_spare_allocation_when_it_has_room() {
        let array = Array::from_vec([2, 3], vec![1.0f32; 6]);
        let address = array.as_slice().as_ptr();
        let mut spare = Some(array);
        let mut buffer = Buffer::recycle(&mut spare, 4);
        assert!(spare.is_none());
        fill_chunks(&mut buffer, 4, 1, 1, 1, |start, end, out| {
            out.fill(end - start, |offset, slot| slot.push(offset as f32))
        });
        let array = buffer.into_array([4]);
        assert_eq!(array.as_slice(), &[0.0, 1.0, 2.0, 3.0]);
        assert_eq!(array.as_slice().as_ptr(), address);
        // Too small a spare, or none: a new allocation.
        let mut spare = Some(array);
        let buffer = Buffer::<f32>::recycle(&mut spare, 9);
        assert_eq!(buffer.len(), 9);
        assert!(spare.is_none());
        let mut none: Option<Array<f32, 1>> = None;
        assert_eq!(Buffer::recycle(&mut none, 3).len(), 3);
        // A recycled buffer is as unwritten as a new one.
        let mut spare = Some(Array::from_vec([2], vec![7, 8]));
        let message = expect_panic(move || Buffer::<i32>::recycle(&mut spare, 2).into_array([2]));
        assert!(message.contains("only 0 of the 2"));
    }

    /// Fills `destination` as rows of `row_len`, the element at (`row`, `column`) being
    /// `row * 1000 + column`, through `fill` on even rows and `push` on odd ones; returns the
    /// number of chunks.
    fn fill_numbered<const N: usize>(destination: &mut Destination<'_, i64, N>, rows: usize, row_len: usize) -> usize {
        let chunks = AtomicUsize::new(0);
        fill_chunks(destination, rows, row_len, 1, row_len, |start, end, out| {
            chunks.fetch_add(1, Ordering::Relaxed);
            for row in start..end {
                if row % 2 == 0 {
                    out.fill(row_len, |column, slot| slot.push((row * 1000 + column) as i64));
                } else {
                    (0..row_len).for_each(|column| out.push((row * 1000 + column) as i64));
                }
            }
        });
        chunks.into_inner()
    }

    /// The numbers `fill_numbered` writes, as an ndarray.
    fn numbered(rows: usize, row_len: usize) -> Array2<i64> {
        Array2::from_shape_fn((rows, row_len), |(row, column)| (row * 1000 + column) as i64)
    }

    /// The address of the elements a destination writes: the target's own if it writes in
    /// place, None if it stages them.
    fn direct_address<T, const N: usize>(destination: &Destination<'_, T, N>) -> Option<*const T> {
        match &destination.storage {
            DestinationStorage::Direct(elements) => Some(elements.as_ptr().cast()),
            DestinationStorage::Staged { .. } => None,
        }
    }

    #[test]
    fn a_contiguous_destination_is_filled_in_place() {
        let mut target = Array2::<i64>::from_elem((3, 4), -1);
        let address = target.as_ptr();
        let mut destination = Destination::new(target.as_view_mut(), [3, 4], "`out`", &SITE);
        assert_eq!(direct_address(&destination), Some(address));
        assert_eq!(fill_numbered(&mut destination, 3, 4), 1);
        destination.finish();
        assert_eq!(target.as_ptr(), address);
        assert_eq!(target, numbered(3, 4));
        // Rows 1..3 of a wider array are contiguous too: written in place, the rest untouched.
        let mut target = Array2::<i64>::from_elem((4, 5), -1);
        let row_1 = target.as_ptr().wrapping_add(5);
        let mut rows = target.slice_mut(s![1..3, ..]);
        let mut destination = Destination::new(rows.as_view_mut(), [2, 5], "`out`", &SITE);
        assert_eq!(direct_address(&destination), Some(row_1));
        fill_numbered(&mut destination, 2, 5);
        destination.finish();
        assert_eq!(target.slice(s![1..3, ..]), numbered(2, 5));
        assert!(target.slice(s![0, ..]).iter().chain(target.slice(s![3, ..])).all(|&value| value == -1));
        // Std and ein storage.
        let mut target = vec![0i64; 6];
        let address = target.as_ptr();
        let mut destination = Destination::new(target.as_view_mut(), [6], "`out`", &SITE);
        assert_eq!(direct_address(&destination), Some(address));
        fill_numbered(&mut destination, 1, 6);
        destination.finish();
        assert_eq!(target, [0, 1, 2, 3, 4, 5]);
        let mut target = Array::from_vec([2, 2], vec![0i64; 4]);
        let mut destination = Destination::new(target.view_mut(), [2, 2], "`out`", &SITE);
        fill_numbered(&mut destination, 2, 2);
        destination.finish();
        assert_eq!(target.as_slice(), &[0, 1, 1000, 1001]);
    }

    #[test]
    fn a_non_contiguous_destination_is_staged_and_copied_by_finish() {
        // Transposed: a 4 x 3 array written as its 3 x 4 transpose.
        let mut storage = Array2::<i64>::from_elem((4, 3), -1);
        let mut transposed = storage.view_mut().reversed_axes();
        let mut destination = Destination::new(transposed.as_view_mut(), [3, 4], "`out`", &SITE);
        assert_eq!(direct_address(&destination), None);
        fill_numbered(&mut destination, 3, 4);
        // Nothing reaches the target before `finish`.
        match &destination.storage {
            DestinationStorage::Staged { target, .. } => assert!(target.as_view().iter().all(|value| value == -1)),
            DestinationStorage::Direct(_) => unreachable!(),
        }
        destination.finish();
        assert_eq!(storage.t(), numbered(3, 4));
        assert_eq!(storage[[3, 1]], 1003);
        // Reversed rows.
        let mut storage = Array2::<i64>::from_elem((3, 4), -1);
        let mut reversed = storage.view_mut();
        reversed.invert_axis(Axis(0));
        let mut destination = Destination::new(reversed.as_view_mut(), [3, 4], "`out`", &SITE);
        assert_eq!(direct_address(&destination), None);
        fill_numbered(&mut destination, 3, 4);
        destination.finish();
        assert_eq!(storage.slice(s![..;-1, ..]), numbered(3, 4));
        assert_eq!(storage[[0, 0]], 2000);
        // Stepped: every other column, the others untouched.
        let mut storage = Array2::<i64>::from_elem((2, 6), -1);
        let mut stepped = storage.slice_mut(s![.., ..;2]);
        let mut destination = Destination::new(stepped.as_view_mut(), [2, 3], "`out`", &SITE);
        fill_numbered(&mut destination, 2, 3);
        destination.finish();
        assert_eq!(storage.slice(s![.., ..;2]), numbered(2, 3));
        assert!(storage.slice(s![.., 1..;2]).iter().all(|&value| value == -1));
    }

    #[test]
    fn a_large_destination_is_filled_in_parallel_chunks() {
        crate::test_support::in_pool(2, || {
            let (rows, row_len) = (size(1000, 200), 100);
            assert!(rows * row_len > GRAIN);
            let mut target = Array2::<i64>::zeros((rows, row_len));
            let address = target.as_ptr();
            let mut destination = Destination::new(target.as_view_mut(), [rows, row_len], "`out`", &SITE);
            assert_eq!(direct_address(&destination), Some(address));
            assert!(fill_numbered(&mut destination, rows, row_len) > 1);
            destination.finish();
            assert_eq!(target, numbered(rows, row_len));
            let mut storage = Array2::<i64>::zeros((row_len, rows));
            let mut transposed = storage.view_mut().reversed_axes();
            let mut destination = Destination::new(transposed.as_view_mut(), [rows, row_len], "`out`", &SITE);
            assert_eq!(direct_address(&destination), None);
            assert!(fill_numbered(&mut destination, rows, row_len) > 1);
            destination.finish();
            assert_eq!(storage.t(), numbered(rows, row_len));
        })
    }

    #[test]
    fn an_empty_destination_writes_nothing_but_visits_its_rows() {
        // Rows of no elements are still visited, once, all together: their code may fail.
        // A function, not a closure returning a closure: only a function's signature can say
        // that the visitor takes an `Out` of any lifetime, as `fill_chunks` requires.
        fn visits(
            rows: usize,
            row_len: usize,
            calls: &AtomicUsize,
        ) -> impl for<'a> Fn(usize, usize, &mut Out<'a, f32>) + Sync + Send + '_ {
            move |start, end, _| {
                assert!(rows > 0 && row_len == 0 && (start, end) == (0, rows), "nothing to write");
                calls.fetch_add(1, Ordering::Relaxed);
            }
        }
        for (rows, row_len) in [(0, 5), (3, 0), (0, 0)] {
            let calls = AtomicUsize::new(0);
            let mut target = Array2::<f32>::zeros((rows, row_len));
            let mut destination = Destination::new(target.as_view_mut(), [rows, row_len], "`out`", &SITE);
            fill_chunks(&mut destination, rows, row_len, 1, row_len, visits(rows, row_len, &calls));
            destination.finish();
            assert_eq!(target.shape(), [rows, row_len]);
            let mut transposed = target.view_mut().reversed_axes();
            let mut destination = Destination::new(transposed.as_view_mut(), [row_len, rows], "`out`", &SITE);
            fill_chunks(&mut destination, row_len, rows, 1, rows, visits(row_len, rows, &calls));
            destination.finish();
            // One of the two layouts has rows of no elements unless both or neither are empty.
            assert_eq!(calls.load(Ordering::Relaxed), usize::from((rows == 0) != (row_len == 0)));
        }
        let mut nothing: Vec<f32> = Vec::new();
        let mut destination = Destination::new(nothing.as_view_mut(), [0], "`out`", &SITE);
        let calls = AtomicUsize::new(0);
        fill_chunks(&mut destination, 1, 0, 1, 0, visits(1, 0, &calls));
        destination.finish();
        assert!(nothing.is_empty());
        assert_eq!(calls.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn fills_a_tuple_of_two_destinations() {
        for (rows, row_len) in [(3, 4), (size(300, 200), 100)] {
            let mut first = Array2::<i32>::zeros((rows, row_len));
            let mut second_storage = Array2::<f32>::zeros((row_len, rows));
            let mut second = second_storage.view_mut().reversed_axes();
            let mut columns = (
                Destination::new(first.as_view_mut(), [rows, row_len], "`out.0`", &SITE),
                Destination::new(second.as_view_mut(), [rows, row_len], "`out.1`", &SITE),
            );
            assert!(direct_address(&columns.0).is_some() && direct_address(&columns.1).is_none());
            fill_chunks(&mut columns, rows, row_len, 1, row_len, |start, end, outs| {
                for row in start..end {
                    if row % 2 == 0 {
                        outs.fill(row_len, |column, slots| slots.push(((row + column) as i32, (row * column) as f32)));
                    } else {
                        (0..row_len).for_each(|column| outs.push(((row + column) as i32, (row * column) as f32)));
                    }
                }
            });
            let (first_destination, second_destination) = columns;
            first_destination.finish();
            second_destination.finish();
            for row in 0..rows {
                for column in 0..row_len {
                    assert_eq!(first[[row, column]], (row + column) as i32);
                    assert_eq!(second_storage[[column, row]], (row * column) as f32);
                }
            }
        }
    }

    #[test]
    fn a_destination_of_the_wrong_shape_panics() {
        let message = expect_panic(|| {
            let mut target = Array2::<f64>::zeros((4, 3));
            Destination::new(target.as_view_mut(), [4, 5], "`out`", &SITE);
        });
        assert_eq!(
            message,
            "ein: `out` has shape [4, 3] but the result written into it has shape [4, 5] (at src/x.rs:3:5)"
        );
        let message = expect_panic(|| {
            let mut target = vec![0u8; 3];
            Destination::new(target.as_view_mut(), [0], "`out.1`", &SITE);
        });
        assert_eq!(
            message,
            "ein: `out.1` has shape [3] but the result written into it has shape [0] (at src/x.rs:3:5)"
        );
        let message = expect_panic(|| {
            let mut target = Array2::<f64>::zeros((4, 3));
            let result = Array::from_vec([3, 4], vec![0.0; 12]);
            write_into(target.as_view_mut(), result.view(), "`out`", &SITE);
        });
        assert_eq!(
            message,
            "ein: `out` has shape [4, 3] but the result written into it has shape [3, 4] (at src/x.rs:3:5)"
        );
    }

    #[test]
    fn write_into_copies_any_layout_into_any_layout() {
        let result = numbered(3, 4);
        let mut target = Array2::<i64>::zeros((3, 4));
        write_into(target.as_view_mut(), crate::AsView::as_view(&result), "`out`", &SITE);
        assert_eq!(target, result);
        // A transposed result into a reversed target.
        let mut storage = Array2::<i64>::zeros((4, 3));
        let mut reversed = storage.view_mut();
        reversed.invert_axis(Axis(1));
        let transposed = result.t();
        write_into(reversed.as_view_mut(), crate::AsView::as_view(&transposed), "`out`", &SITE);
        assert_eq!(storage.slice(s![.., ..;-1]), result.t());
        assert_eq!(storage[[0, 0]], 2000);
    }

    #[test]
    fn an_unfilled_staged_destination_cannot_finish_but_a_direct_one_keeps_its_old_values() {
        let message = expect_panic(|| {
            let mut storage = Array2::<i32>::zeros((4, 3));
            let mut transposed = storage.view_mut().reversed_axes();
            Destination::new(transposed.as_view_mut(), [3, 4], "`out`", &SITE).finish();
        });
        assert_eq!(
            message,
            "ein: internal error: only 0 of the 12 elements of an output buffer were written (this is a bug in ein; please report it)"
        );
        let mut target = vec![7i32; 4];
        Destination::new(target.as_view_mut(), [4], "`out`", &SITE).finish();
        assert_eq!(target, [7, 7, 7, 7]);
    }
}
