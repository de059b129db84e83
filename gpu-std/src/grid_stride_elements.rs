//! A grid-stride loop over a slice's elements rather than its indices:
//! [`thread::grid_stride_elements`](crate::thread::grid_stride_elements).
//!
//! Why a second form of [`grid_stride`](crate::thread::grid_stride): a kernel that only reads
//! `x[i]` needs the index for nothing but the address, yet `for i in grid_stride(x.len())` keeps
//! two 64-bit induction variables on the GPU (LLVM's loop strength reduction adds a pointer
//! beside the index, and the index stays for the loop's test). Stepping a pointer and testing it
//! against the slice's end is one 64-bit add and one 64-bit compare per element, fewer than
//! CUDA C's `size_t` loop (which recomputes the address from the index).

#[cfg(target_arch = "nvptx64")]
use crate::backend::{Backend, Machine};
#[cfg(not(target_arch = "nvptx64"))]
use crate::grid_stride::GridStride;
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
        let (next, end, step_bytes) = strided_span(elements_of(x), x.len());
        GridStrideElements {
            next,
            end,
            step_bytes,
            _slice: PhantomData,
        }
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        GridStrideElements {
            slice: x,
            indices: crate::grid_stride::grid_stride(x.len()),
        }
    }
}

/// This thread's first element of the `len` at `base` in a grid-stride loop, the end of its
/// elements (capped), and the step in bytes: the loop visits `next`, `next + step_bytes`, ...
/// while below the end.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
fn strided_span<T>(base: *const T, len: usize) -> (*const T, *const T, usize) {
    let (index, threads) = (Machine::index_1d(), crate::grid_stride::grid_size_1d());
    let size = core::mem::size_of::<T>();
    let start = base.wrapping_add(index.min(len));
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
    let end = base.wrapping_byte_add((len * size).min(room));
    (start, end, step_bytes)
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

    /// CPU: the indices' chunked fold (no call in the inner loop).
    #[cfg(not(target_arch = "nvptx64"))]
    #[inline(always)]
    fn fold<B, F: FnMut(B, &'a T) -> B>(self, init: B, mut f: F) -> B {
        let slice = self.slice;
        self.indices.fold(init, |acc, i| f(acc, &slice[i]))
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
        #[cfg(target_arch = "nvptx64")]
        {
            let mut f = f;
            let size = core::mem::size_of::<T>();
            // The elements from `next` on below `end` (capped, so maybe not at an element's
            // end: rounded up).
            let count = (self.end.addr().saturating_sub(self.next.addr())).div_ceil(size);
            let step = self.step_bytes / size;
            fold_strided::<CHUNK, _, B>(self.next, count, step, init, |acc, base, i| {
                // SAFETY: `fold_strided` passes `base + i` at an offset from `next` that is a
                // multiple of the step, below `count`: below `end`, an element of this thread's
                // sequence (see `next`), which the reference borrows for `'a`.
                f(acc, unsafe { &*base.add(i as usize) })
            })
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            const { assert!(CHUNK > 0 && CHUNK <= 1 << 31) };
            self.fold(init, f)
        }
    }
}

/// This thread's pairs `(&a[i], &b[i])` in a grid-stride loop over the shorter length (as
/// [`Iterator::zip`]): for each `i` of [`grid_stride`](crate::thread::grid_stride)`(len)`, in
/// the same order, on the GPU and the CPU executor alike. For loops over two slices of the same
/// length (a `same_len` launch fact makes the shorter length free) that need `i` only for the
/// two elements:
///
/// ```ignore
/// let mut sum = 0.0;
/// thread::grid_stride_zip(a, b).for_each(|(&x, &y)| sum = x.mul_add(y, sum));
/// ```
///
/// `for_each` and `fold` run a 32-bit index over chunks of 2^31 elements (each address one
/// `IMAD.WIDE.U32`, as CUDA C's `int` loop), where `for i in grid_stride(n)` keeps a 64-bit
/// index and LLVM adds a 64-bit pointer per slice beside it; a `for` loop steps a 64-bit index.
#[inline(always)]
pub fn grid_stride_zip<'a, A, B>(a: &'a [A], b: &'a [B]) -> GridStrideZip<'a, A, B> {
    let indices = crate::grid_stride::grid_stride(a.len().min(b.len()));
    #[cfg(target_arch = "nvptx64")]
    {
        GridStrideZip {
            a: elements_of(a),
            b: elements_of(b),
            indices,
            _slices: PhantomData,
        }
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        GridStrideZip { a, b, indices }
    }
}

/// The pairs of a grid-stride loop over two slices, from [`grid_stride_zip`].
#[derive(Clone, Debug)]
pub struct GridStrideZip<'a, A, B> {
    /// GPU: the first slice's elements (its pointer, or a constant global's if it is empty).
    #[cfg(target_arch = "nvptx64")]
    a: *const A,
    /// GPU: the second slice's elements, as `a`.
    #[cfg(target_arch = "nvptx64")]
    b: *const B,
    #[cfg(target_arch = "nvptx64")]
    _slices: PhantomData<(&'a [A], &'a [B])>,
    #[cfg(not(target_arch = "nvptx64"))]
    a: &'a [A],
    #[cfg(not(target_arch = "nvptx64"))]
    b: &'a [B],
    /// The indices, all below both lengths.
    indices: crate::grid_stride::GridStride,
}

impl<'a, A, B> Iterator for GridStrideZip<'a, A, B> {
    type Item = (&'a A, &'a B);

    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    fn next(&mut self) -> Option<(&'a A, &'a B)> {
        let i = self.indices.next()?;
        // SAFETY: `grid_stride(n)` yields indices below `n`, the shorter of the two lengths, so
        // both are elements of the slices, which the references borrow for `'a`.
        Some(unsafe { (&*self.a.add(i), &*self.b.add(i)) })
    }

    /// The loop of `for_each`, `fold` and the like: a 32-bit index (see [`grid_stride_zip`]).
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    fn fold<Acc, F: FnMut(Acc, Self::Item) -> Acc>(self, init: Acc, f: F) -> Acc {
        self.fold_in_chunks::<{ 1 << 31 }, Acc, F>(init, f)
    }

    #[cfg(not(target_arch = "nvptx64"))]
    #[inline(always)]
    fn next(&mut self) -> Option<(&'a A, &'a B)> {
        let i = self.indices.next()?;
        Some((&self.a[i], &self.b[i]))
    }

    /// CPU: the indices' chunked fold (no call in the inner loop).
    #[cfg(not(target_arch = "nvptx64"))]
    #[inline(always)]
    fn fold<Acc, F: FnMut(Acc, Self::Item) -> Acc>(self, init: Acc, mut f: F) -> Acc {
        let (a, b) = (self.a, self.b);
        self.indices.fold(init, |acc, i| {
            // SAFETY: `grid_stride(n)` yields indices below `n` (each thread's run ends at `n`
            // at most: `grid_stride_bounds`), the shorter of the two lengths, so both are
            // elements of the slices. Unchecked, since the chunk's loop (`fold_chunk`, a
            // function of its own) cannot see that: a compare and branch per element.
            unsafe { f(acc, (a.get_unchecked(i), b.get_unchecked(i))) }
        })
    }
}

impl<'a, A, B> GridStrideZip<'a, A, B> {
    /// [`Iterator::fold`] with the 32-bit index restarted every `CHUNK` (at most 2^31)
    /// elements; public (hidden) only so that tests can run small chunks.
    #[doc(hidden)]
    #[inline(always)]
    pub fn fold_in_chunks<const CHUNK: usize, Acc, F: FnMut(Acc, (&'a A, &'a B)) -> Acc>(
        self,
        init: Acc,
        f: F,
    ) -> Acc {
        #[cfg(target_arch = "nvptx64")]
        {
            let mut f = f;
            let (start, count, step) = self.indices.remaining();
            let bases = (self.a.wrapping_add(start), self.b.wrapping_add(start));
            fold_strided::<CHUNK, _, Acc>(bases, count, step, init, |acc, (a, b), i| {
                // SAFETY: `fold_strided` passes `i` at an offset from `start`, this thread's
                // next index, that is a multiple of the step and below `count`: one of this
                // thread's indices, below both lengths, so both are elements of the slices.
                let pair = unsafe { (&*a.add(i as usize), &*b.add(i as usize)) };
                f(acc, pair)
            })
        }
        #[cfg(not(target_arch = "nvptx64"))]
        {
            const { assert!(CHUNK > 0 && CHUNK <= 1 << 31) };
            self.fold(init, f)
        }
    }
}

/// Where a chunk of [`fold_strided`] starts: a pointer per slice.
#[cfg(target_arch = "nvptx64")]
pub(crate) trait ChunkBase: Copy {
    /// `self` moved on by `elements` (maybe past the end: never used then).
    fn advanced(self, elements: usize) -> Self;
}

#[cfg(target_arch = "nvptx64")]
impl<T> ChunkBase for *const T {
    #[inline(always)]
    fn advanced(self, elements: usize) -> Self {
        self.wrapping_add(elements)
    }
}

#[cfg(target_arch = "nvptx64")]
impl<A, B> ChunkBase for (*const A, *const B) {
    #[inline(always)]
    fn advanced(self, elements: usize) -> Self {
        (self.0.wrapping_add(elements), self.1.wrapping_add(elements))
    }
}

/// The loop of every grid-stride `fold` on the GPU: `f(acc, base, i)` for each of the `count`
/// offsets from `start` that are multiples of `step` (`step > 0`), in order, as `base + i` with
/// `i` a 32-bit index restarted at each chunk of `CHUNK` (at most 2^31) offsets and `base` the
/// chunk's start.
///
/// Why 32 bits: an address is then one wide multiply-add of `i` (CUDA C's `int` loops), where
/// a 64-bit index is two adds and a 64-bit compare per element. `i` goes through
/// [`hint::opaque`](crate::hint::opaque), so that LLVM's loop strength reduction does not turn
/// the addresses back into 64-bit pointers per slice. Only the chunk's start and the offsets
/// left are carried from chunk to chunk.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
pub(crate) fn fold_strided<const CHUNK: usize, P: ChunkBase, Acc>(
    start: P,
    count: usize,
    step: usize,
    init: Acc,
    mut f: impl FnMut(Acc, P, u32) -> Acc,
) -> Acc {
    const { assert!(CHUNK > 0 && CHUNK <= 1 << 31) };
    let chunk_step = step.min(CHUNK) as u32;
    let (mut acc, mut base, mut left) = (init, start, count);
    while left > 0 {
        let in_chunk = left.min(CHUNK) as u32;
        let mut i = 0;
        while i < in_chunk {
            let offset = crate::hint::opaque(i);
            // SAFETY: `offset` is `i`, which the loop's test bounds.
            unsafe { core::hint::assert_unchecked(offset < in_chunk) };
            acc = f(acc, base, offset);
            // No overflow: `i < in_chunk ≤ 2^31` and `chunk_step ≤ 2^31`.
            i += chunk_step;
        }
        // The next offset of the sequence: `i` is the first multiple of the step from
        // `in_chunk` on (or, for a step over `CHUNK`, the step itself).
        let advance = if step > CHUNK { step } else { i as usize };
        left = left.saturating_sub(advance);
        base = base.advanced(advance);
    }
    acc
}

/// The base of a loop's pointers into `x`: for an empty slice, never read (the loop's end is
/// its start) but a constant global's rather than the empty slice's placeholder (see
/// [`placeholder`]). A select, not a branch, so that no two loops' pointers are merged.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
fn elements_of<T>(x: &[T]) -> *const T {
    if x.is_empty() {
        placeholder::<T>()
    } else {
        x.as_ptr()
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
