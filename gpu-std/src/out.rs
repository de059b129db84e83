//! [`Out`], the kernel parameter type for outputs.

use crate::backend::global;
use crate::index::ElementIndex;
use core::marker::PhantomData;

// The CPU executor's elementwise loop's plain-store handle (the split path; host only).
#[cfg(not(target_arch = "nvptx64"))]
#[doc(hidden)]
pub mod owned;

/// An output buffer that every thread of a launch may write, each to its own elements.
///
/// A `&mut [T]` cannot be handed to thousands of threads at once, so kernels take `Out<T>`: a
/// shared handle with [`set`](Out::set), which checks the index (on the GPU an out-of-bounds write
/// traps and the launch fails; on the CPU it panics and the launch returns an error naming the
/// thread). Elements no thread writes keep the value they had: the host copies outputs in as
/// well as out, so the GPU and the CPU executor agree.
///
/// Two threads writing the same element is a race: the GPU keeps one of the values. On the CPU
/// executor each write is a relaxed atomic store, so such a race is never undefined behaviour.
///
/// For hand-tuned code, [`as_mut_ptr`](Out::as_mut_ptr) gives the raw pointer, to use in
/// `unsafe` blocks.
///
/// # Block-scope atomics
/// [`atomic_add`](Out::atomic_add) and the other `atomic_*` methods are atomic among every
/// thread of the launch (CUDA's `atomicAdd`). The `atomic_*_block` methods
/// ([`atomic_add_block`](Out::atomic_add_block), ...) are atomic only among the threads of the
/// calling thread's block (CUDA's `atomicAdd_block`, PTX `atom.global` at `.cta` scope): for
/// elements that one block alone updates during the launch, as when blocks own disjoint parts
/// of an output. Threads of two blocks updating one element with them is a race, as two
/// `set`s are: updates may be lost, on the GPU and on the CPU executor, but it is never
/// undefined behaviour. On the CPU executor, which runs a block's threads on one OS thread and
/// switches between them only at barriers and warp operations, each is a relaxed atomic load
/// and store (one `mov` each on x86-64) rather than a locked instruction, which is a full fence
/// and keeps the core from overlapping the cache misses of one update with the next. Checked
/// mode does not look at atomics: it does not report two blocks using one element.
pub struct Out<'a, T> {
    ptr: *mut T,
    len: usize,
    /// Checked mode's race check of this output (null: none). Host only: checked mode is the CPU
    /// executor's (a language feature there, not a machine primitive), as every `cfg` below.
    #[cfg(not(target_arch = "nvptx64"))]
    check: *const crate::cpu::OutputShadow,
    _buffer: PhantomData<&'a [core::cell::Cell<T>]>,
}

impl<T> Clone for Out<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Out<'_, T> {}

// SAFETY: an `Out` only moves `T` values in and out of its buffer (`T: Pod`), and on the host every
// access is an atomic store or load, so sharing it between the executor's worker threads cannot
// produce a data race.
unsafe impl<T: Send> Send for Out<'_, T> {}
// SAFETY: as for `Send`.
unsafe impl<T: Send> Sync for Out<'_, T> {}

impl<'a, T: bytemuck::Pod> Out<'a, T> {
    /// An `Out` over `len` elements at `ptr`.
    ///
    /// # Safety
    /// `ptr` must be valid for reads and writes of `len` elements of `T`, suitably aligned (or
    /// anything when `len == 0`), for `'a`, and not accessed other than through `Out` meanwhile.
    /// On the GPU it must be global memory (a kernel's output buffer): the atomics address it
    /// as such (`atom.global`).
    #[inline(always)]
    pub unsafe fn from_raw_parts(ptr: *mut T, len: usize) -> Self {
        Out {
            ptr,
            len,
            #[cfg(not(target_arch = "nvptx64"))]
            check: core::ptr::null(),
            _buffer: PhantomData,
        }
    }

    /// As [`from_raw_parts`](Out::from_raw_parts), with checked mode's race check when the
    /// running launch tracks this output (the CPU entries' rebuilding).
    ///
    /// # Safety
    /// As [`from_raw_parts`](Out::from_raw_parts).
    #[inline(always)]
    pub(crate) unsafe fn from_launch(ptr: *mut T, len: usize) -> Self {
        // SAFETY: forwarded to the caller.
        let out = unsafe { Self::from_raw_parts(ptr, len) };
        #[cfg(not(target_arch = "nvptx64"))]
        let out = Out {
            check: crate::cpu::output_shadow(ptr as *const u8),
            ..out
        };
        out
    }

    crate::index::len_methods!();

    /// Writes `value` at `index` (a `usize`, or any [`ElementIndex`]: `u32`, `i32`, ...).
    ///
    /// # Panics
    /// If `index` is negative or `>= self.len()` (on the GPU: traps, and the launch reports the
    /// failure).
    #[inline(always)]
    #[track_caller]
    pub fn set<I: ElementIndex>(&self, index: I, value: T) {
        let index = self.checked(index);
        // SAFETY: `index` is in bounds, checked just above.
        unsafe { self.set_unchecked(index, value) }
    }

    /// Reads the element at `index`: its value before the launch, or what a thread wrote.
    ///
    /// # Panics
    /// If `index` is negative or `>= self.len()`.
    #[inline(always)]
    #[track_caller]
    pub fn get<I: ElementIndex>(&self, index: I) -> T {
        let index = self.checked(index);
        // SAFETY: `index` is in bounds, checked just above.
        unsafe { self.get_unchecked(index) }
    }

    /// The element at `index`, to read, change and write back, as CUDA's `out[i] += v`:
    /// `*out.at(i) += v`. It is read here and written back when the returned [`OutElement`]
    /// is dropped (at the end of the statement, for `*out.at(i) += v`), with one bounds check.
    /// For the element this thread owns: two threads updating one element is a race (lost
    /// updates, reported by checked mode), as two `set`s are; use
    /// [`atomic_add`](Out::atomic_add) and the other atomics for elements threads share.
    ///
    /// ```
    /// use ferrocuda_std::{kernel, thread, Out};
    /// /// `y[i] += a * x[i]`.
    /// #[kernel]
    /// pub fn axpy_in_place(a: f32, x: &[f32], y: Out<f32>) {
    ///     let i = thread::index_1d();
    ///     if i < y.len() {
    ///         *y.at(i) += a * x[i];
    ///     }
    /// }
    /// ```
    ///
    /// # Panics
    /// If `index` is negative or `>= self.len()`.
    #[inline(always)]
    #[track_caller]
    pub fn at<I: ElementIndex>(&self, index: I) -> OutElement<'_, 'a, T> {
        let index = self.checked(index);
        OutElement {
            // SAFETY: `index` is in bounds, checked just above.
            value: unsafe { self.get_unchecked(index) },
            out: self,
            index,
            at: core::panic::Location::caller(),
        }
    }

    /// `index` as a `usize` if it is in bounds; panics (on the GPU: traps) if not.
    #[inline(always)]
    #[track_caller]
    fn checked<I: ElementIndex>(&self, index: I) -> usize {
        crate::index::checked_index(index, self.len, "an output")
    }

    /// Writes `value` at `index` without checking the index.
    ///
    /// # Safety
    /// `index < self.len()`.
    #[inline(always)]
    #[track_caller]
    pub unsafe fn set_unchecked(&self, index: usize, value: T) {
        // SAFETY: forwarded to the caller.
        unsafe { self.store(index, value, core::panic::Location::caller()) }
    }

    /// `set_unchecked` with the write's place in the kernel's source given, for checked mode.
    ///
    /// # Safety
    /// `index < self.len()`.
    #[inline(always)]
    unsafe fn store(&self, index: usize, value: T, at: &'static core::panic::Location<'static>) {
        #[cfg(not(target_arch = "nvptx64"))]
        if !self.check.is_null() {
            // SAFETY: `check` came from this launch's shadows for this buffer; `index` is in
            // bounds (the caller's contract).
            unsafe {
                let bits = crate::cpu::value_bits(&value);
                crate::cpu::check_output(self.check, index, Some(bits), at)
            }
        }
        #[cfg(target_arch = "nvptx64")]
        let _ = at;
        // SAFETY: the caller guarantees `index` is in bounds of the buffer `from_raw_parts` got.
        unsafe { global::store(self.ptr.add(index), value) }
    }

    /// Reads the element at `index` without checking the index.
    ///
    /// # Safety
    /// `index < self.len()`.
    #[inline(always)]
    #[track_caller]
    pub unsafe fn get_unchecked(&self, index: usize) -> T {
        #[cfg(not(target_arch = "nvptx64"))]
        if !self.check.is_null() {
            // SAFETY: as in `set_unchecked`.
            unsafe {
                crate::cpu::check_output(self.check, index, None, core::panic::Location::caller())
            }
        }
        // SAFETY: the caller guarantees `index` is in bounds of the buffer `from_raw_parts` got.
        unsafe { global::load(self.ptr.add(index)) }
    }

    /// A hint that element `index` is about to be read or written: on the CPU executor the core
    /// starts bringing its cache line in (x86 `prefetcht0`), so that a loop whose accesses jump
    /// around memory (a group-by's or histogram's updates) can have the cache misses of several
    /// iterations under way at once, as a plain loop has them on an out-of-order core; on the
    /// GPU `prefetch.global.L2`. It changes no value and is not an access (checked mode does not
    /// see it); an index past the end does nothing.
    #[inline(always)]
    pub fn prefetch(&self, index: usize) {
        if index >= self.len {
            return;
        }
        crate::backend::global::prefetch(self.ptr.wrapping_add(index));
    }

    /// The buffer's first element, for raw access in `unsafe` code.
    #[inline(always)]
    pub fn as_mut_ptr(&self) -> *mut T {
        self.ptr
    }
}

impl<T: crate::atomic::Atomic> Out<'_, T> {
    #[inline(always)]
    #[track_caller]
    fn atomic_element(&self, index: usize) -> *mut T {
        if index >= self.len {
            crate::mem::out_of_bounds("an output", index, self.len);
        }
        // SAFETY: `index` is in bounds, checked just above.
        unsafe { self.ptr.add(index) }
    }

    crate::atomic::atomic_methods!(Device, "every thread of the launch");
    crate::atomic::atomic_methods!(
        BlockGlobal,
        "this block's threads only: see [block-scope atomics](Out#block-scope-atomics)",
        atomic_add_block,
        atomic_sub_block,
        atomic_min_block,
        atomic_max_block,
        atomic_exchange_block,
        atomic_compare_exchange_block
    );
}

#[cfg(all(test, not(target_arch = "nvptx64")))]
mod tests {
    use super::Out;

    #[test]
    fn set_and_get_round_trip_for_several_widths() {
        let mut a = [0u8; 3];
        let mut b = [0.0f64; 2];
        let mut c = [[0u16; 3]; 2];
        // SAFETY: each `Out` covers a whole local array, used only through it until the end.
        let oa = unsafe { Out::from_raw_parts(a.as_mut_ptr(), a.len()) };
        let ob = unsafe { Out::from_raw_parts(b.as_mut_ptr(), b.len()) };
        let oc = unsafe { Out::from_raw_parts(c.as_mut_ptr(), c.len()) };
        oa.set(2, 7);
        ob.set(1, -2.5);
        oc.set(0, [1, 2, 3]);
        assert_eq!((oa.get(2), ob.get(1), oc.get(0)), (7, -2.5, [1, 2, 3]));
        assert_eq!((a, b, c), ([0, 0, 7], [0.0, -2.5], [[1, 2, 3], [0, 0, 0]]));
    }

    #[test]
    fn block_scope_atomics_update_and_return_the_old_value_and_prefetch_changes_nothing() {
        let mut a = [5u32, 7, 0];
        let mut f = [1.5f32, -2.0];
        // SAFETY: each `Out` covers a whole local array, used only through it until the end.
        let oa = unsafe { Out::from_raw_parts(a.as_mut_ptr(), a.len()) };
        let of = unsafe { Out::from_raw_parts(f.as_mut_ptr(), f.len()) };
        oa.prefetch(1);
        oa.prefetch(3);
        oa.prefetch(usize::MAX);
        assert_eq!(oa.atomic_add_block(0, 3), 5);
        assert_eq!(oa.atomic_sub_block(1, 9), 7);
        assert_eq!(oa.atomic_max_block(2, 4), 0);
        assert_eq!(oa.atomic_min_block(2, 9), 4);
        assert_eq!(oa.atomic_exchange_block(0, 1), 8);
        assert_eq!(oa.atomic_compare_exchange_block(0, 1, 2), Ok(1));
        assert_eq!(oa.atomic_compare_exchange_block(0, 1, 3), Err(2));
        assert_eq!(of.atomic_add_block(0, 0.25), 1.5);
        assert_eq!(of.atomic_max_block(1, f32::NAN), -2.0);
        assert_eq!((a, f), ([2, 7u32.wrapping_sub(9), 4], [1.75, -2.0]));
    }

    #[test]
    #[should_panic(expected = "index 3 out of bounds for an output of length 3")]
    fn set_past_the_end_panics_with_index_and_length() {
        let mut a = [0u32; 3];
        // SAFETY: the `Out` covers the local array, used only through it.
        let o = unsafe { Out::from_raw_parts(a.as_mut_ptr(), a.len()) };
        o.set(3, 1);
    }
}

/// One element of an [`Out`], read by [`Out::at`] and written back when dropped: `*out.at(i) +=
/// v` is `out.set(i, out.get(i) + v)` with one bounds check. Dereferences to the value.
pub struct OutElement<'o, 'a, T: bytemuck::Pod> {
    out: &'o Out<'a, T>,
    index: usize,
    value: T,
    /// Where `Out::at` was called, for checked mode's report of the write.
    at: &'static core::panic::Location<'static>,
}

impl<T: bytemuck::Pod> core::ops::Deref for OutElement<'_, '_, T> {
    type Target = T;
    #[inline(always)]
    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T: bytemuck::Pod> core::ops::DerefMut for OutElement<'_, '_, T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut T {
        &mut self.value
    }
}

impl<T: bytemuck::Pod> Drop for OutElement<'_, '_, T> {
    #[inline(always)]
    fn drop(&mut self) {
        // SAFETY: `Out::at` checked `index` against the output's length.
        unsafe { self.out.store(self.index, self.value, self.at) }
    }
}
