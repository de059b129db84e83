//! A grid-stride loop over a slice's elements rather than its indices:
//! [`thread::grid_stride_elements`](crate::thread::grid_stride_elements).
//!
//! Why a second form of [`grid_stride`](crate::thread::grid_stride): a kernel that only reads
//! `x[i]` needs the index for nothing but the address, yet `for i in grid_stride(x.len())` keeps
//! two 64-bit induction variables on the GPU (LLVM's loop strength reduction adds a pointer
//! beside the index, and the index stays for the loop's test). Stepping a pointer and testing it
//! against the slice's end is one 64-bit add and one 64-bit compare per element, fewer than
//! CUDA C's `size_t` loop (which recomputes the address from the index).

#[cfg(not(target_arch = "nvptx64"))]
use crate::thread::GridStride;
#[cfg(target_arch = "nvptx64")]
use core::marker::PhantomData;

/// This thread's elements of `x` in a grid-stride loop: `&x[i]` for each `i` of
/// [`grid_stride`](crate::thread::grid_stride)`(x.len())`, in the same order, on the GPU and the
/// CPU executor alike. For loops that read `x[i]` and need `i` for nothing else:
///
/// ```ignore
/// let mut sum = 0.0;
/// for &v in thread::grid_stride_elements(x) {
///     sum += v;
/// }
/// ```
///
/// Zero-sized elements do not compile (a pointer that never moves cannot count them; use
/// `grid_stride(x.len())`).
#[inline(always)]
pub fn grid_stride_elements<T>(x: &[T]) -> GridStrideElements<'_, T> {
    const {
        assert!(
            core::mem::size_of::<T>() > 0,
            "grid_stride_elements of zero-sized elements"
        )
    };
    #[cfg(target_arch = "nvptx64")]
    {
        let (index, threads) = (crate::thread::index_1d(), crate::thread::grid_size_1d());
        // The base of every pointer below: for an empty slice, never read (the loop's end is
        // its start) but a constant global's rather than the empty slice's placeholder (see
        // `placeholder`). A select, not a branch, so that no two loops' pointers are merged.
        let base = if x.is_empty() {
            placeholder::<T>()
        } else {
            x.as_ptr()
        };
        let size = core::mem::size_of::<T>();
        let start = base.wrapping_add(index.min(x.len()));
        // A step of more than `isize::MAX` bytes leaves any slice (whose bytes fit in `isize`)
        // after one element: the smallest multiple of the size above `isize::MAX` does the
        // same, and keeps the step a whole number of elements.
        let step_bytes = match threads.checked_mul(size) {
            Some(bytes) if bytes <= isize::MAX as usize => bytes,
            _ => (isize::MAX as usize / size + 1) * size,
        };
        // The end is capped at address `usize::MAX - step_bytes`, so that `next + step_bytes`
        // cannot wrap past the top of the address space while `next < end`. Only an allocation
        // ending within `step_bytes` of 2^64 could lose elements to the cap; GPU addresses are
        // below 2^49 (the virtual address space of NVIDIA's GPUs).
        let room = (usize::MAX - step_bytes).saturating_sub(base.addr());
        GridStrideElements {
            next: start,
            end: base.wrapping_byte_add((x.len() * size).min(room)),
            step_bytes,
            _slice: PhantomData,
        }
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        GridStrideElements {
            slice: x,
            indices: crate::thread::grid_stride(x.len()),
        }
    }
}

/// The elements of a grid-stride loop, from [`grid_stride_elements`].
#[derive(Clone, Debug)]
pub struct GridStrideElements<'a, T> {
    /// GPU: this thread's next element of the slice, if its address is below `end`. A pointer,
    /// not an address, so that the compiler sees the loads come from the slice (a kernel's
    /// input: read through the read-only cache).
    #[cfg(target_arch = "nvptx64")]
    next: *const T,
    /// GPU: the slice's end, capped (see [`grid_stride_elements`]). A pointer too, so that
    /// the loop compares the two without converting either.
    #[cfg(target_arch = "nvptx64")]
    end: *const T,
    #[cfg(target_arch = "nvptx64")]
    step_bytes: usize,
    #[cfg(target_arch = "nvptx64")]
    _slice: PhantomData<&'a [T]>,
    #[cfg(not(target_arch = "nvptx64"))]
    slice: &'a [T],
    #[cfg(not(target_arch = "nvptx64"))]
    indices: GridStride,
}

impl<'a, T> Iterator for GridStrideElements<'a, T> {
    type Item = &'a T;

    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    fn next(&mut self) -> Option<&'a T> {
        if self.next < self.end {
            let element = self.next;
            // No wrap: `end ≤ usize::MAX - step_bytes` and `next < end`.
            self.next = self.next.wrapping_byte_add(self.step_bytes);
            // SAFETY: `next` starts at element `min(index, len)` of the slice and moves by whole
            // elements (`step_bytes` is a multiple of the size), so while
            // it is below the slice's end (`end`, capped lower) it is the address of an element,
            // which the reference borrows for `'a`: initialised, aligned, and not written while
            // the borrow lasts (the slice is shared).
            Some(unsafe { &*element })
        } else {
            None
        }
    }

    /// The loop of `for_each`, `fold`, `sum` and the like: an index in 32 bits, whose address
    /// is one wide multiply-add (what CUDA C's `int` loops get), rather than a 64-bit pointer
    /// and its 64-bit compare; over chunks of 2^31 elements, so any length works.
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    fn fold<B, F: FnMut(B, &'a T) -> B>(self, init: B, f: F) -> B {
        self.fold_in_chunks::<{ 1 << 31 }, B, F>(init, f)
    }

    #[cfg(not(target_arch = "nvptx64"))]
    #[inline(always)]
    fn next(&mut self) -> Option<&'a T> {
        let i = self.indices.next()?;
        Some(&self.slice[i])
    }
}

impl<'a, T> GridStrideElements<'a, T> {
    /// [`Iterator::fold`] with the 32-bit index restarted every `CHUNK` (at most 2^31)
    /// elements; public (hidden) only so that tests can run small chunks.
    #[doc(hidden)]
    #[inline(always)]
    pub fn fold_in_chunks<const CHUNK: usize, B, F: FnMut(B, &'a T) -> B>(
        self,
        init: B,
        f: F,
    ) -> B {
        const { assert!(CHUNK > 0 && CHUNK <= 1 << 31) };
        #[cfg(target_arch = "nvptx64")]
        {
            let mut f = f;
            let size = core::mem::size_of::<T>();
            let step = self.step_bytes / size;
            let chunk_step = step.min(CHUNK) as u32;
            let mut acc = init;
            let mut base = self.next;
            while base < self.end {
                let count = (self.end.addr() - base.addr()).div_ceil(size).min(CHUNK) as u32;
                let mut i = 0;
                while i < count {
                    // SAFETY: `base` is an element of this thread's sequence (see `next`), and
                    // `base + i·size` for `i < count`, a multiple of the step, is below `end`:
                    // an element of the slice, as `next` would reach it, which the reference
                    // borrows for `'a`.
                    acc = f(acc, unsafe { &*base.add(crate::hint::opaque(i) as usize) });
                    // No overflow: `i < count ≤ 2^31` and `chunk_step ≤ 2^31`.
                    i += chunk_step;
                }
                // The next element of the sequence: `i` is the first multiple of the step from
                // `count` on (or, for a step over `CHUNK`, the step itself). No wrap: at most
                // `step_bytes` past `end`, which the cap keeps below 2^64.
                let advance = if step > CHUNK { step } else { i as usize };
                base = base.wrapping_add(advance);
            }
            acc
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            self.fold(init, f)
        }
    }
}

/// A pointer for an empty slice's loop, whose elements are never read: a constant global's
/// (aligned for any element of alignment up to 16), not the empty slice's placeholder pointer.
/// The loop's pointer starts from one or the other, and for LLVM's NVPTX backend a load is
/// read-only (`ld.global.nc`) only if every pointer it may come from is a read-only kernel
/// parameter or a constant global: the empty slice's integer placeholder would hide that the
/// loads are the input's.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
fn placeholder<T>() -> *const T {
    #[repr(C, align(16))]
    struct Aligned([u8; 16]);
    static PLACEHOLDER: Aligned = Aligned([0; 16]);
    if core::mem::align_of::<T>() <= 16 {
        (&raw const PLACEHOLDER).cast()
    } else {
        core::ptr::NonNull::dangling().as_ptr()
    }
}
