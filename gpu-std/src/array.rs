//! [`Array2`], [`Array3`] (inputs) and [`Out2`], [`Out3`] (outputs): kernel parameters that carry
//! their shape, indexed `a[(row, col)]` and `out.set((row, col), v)`, Numba's `a[y, x]`.
//!
//! Each is row-major with a stride (pitch) per axis, in elements: element `(i, j)` of a 2D view
//! is at `i * strides[0] + j`, the last axis being contiguous. The host checks at every launch that
//! the shape and strides fit the memory behind the view (`ferrocuda_host::Array2::new` and
//! friends), so an index below the shape is always in bounds and one check per axis suffices: the
//! access itself is unchecked. A view's bounds check is one comparison per axis; where the kernel
//! has already compared its coordinates with `rows()` and `cols()`, LLVM drops it.
//!
//! A view named in `#[kernel(index32(..))]` computes its offsets in 32 bits (one `IMAD` per axis
//! instead of three, as CUDA C's `unsigned` indices): the launch checks that its memory and
//! each extent have at most `u32::MAX` elements, so every offset below the shape fits.

use crate::Out;

/// A read-only `D`-dimensional view of `T`s that a kernel takes as a parameter; see [`Array2`].
pub struct Array<'a, T, const D: usize> {
    data: &'a [T],
    shape: [usize; D],
    strides: [usize; D],
    /// Offsets in 32 bits: see [`Array::assume_index32`].
    index32: bool,
}

/// A 2D kernel input, `rows() × cols()`, read as `a[(row, col)]`:
///
/// ```ignore
/// #[kernel]
/// pub fn transpose(a: Array2<f32>, out: Out2<f32>) {
///     let (x, y) = thread::index_2d();
///     if y < a.rows() && x < a.cols() {
///         out.set((x, y), a[(y, x)]);
///     }
/// }
/// ```
///
/// Launched with a `ferrocuda_host::Array2` (host data or a device buffer, with its shape).
pub type Array2<'a, T> = Array<'a, T, 2>;
/// A 3D kernel input, indexed `a[(plane, row, col)]`.
pub type Array3<'a, T> = Array<'a, T, 3>;

/// A `D`-dimensional output view that every thread may write, each to its own elements; see
/// [`Out2`]. As [`Out`], which it wraps: elements no thread writes keep their value.
pub struct OutArray<'a, T, const D: usize> {
    out: Out<'a, T>,
    shape: [usize; D],
    strides: [usize; D],
    /// Offsets in 32 bits: see [`Array::assume_index32`].
    index32: bool,
}

/// A 2D kernel output, `rows() × cols()`, written as `out.set((row, col), value)`. Launched with a
/// `ferrocuda_host::Out2` (host memory or a device buffer borrowed mutably, with its shape).
pub type Out2<'a, T> = OutArray<'a, T, 2>;
/// A 3D kernel output, written as `out.set((plane, row, col), value)`.
pub type Out3<'a, T> = OutArray<'a, T, 3>;

/// An index of a `D`-dimensional view: `(usize, usize)` for 2D, `(usize, usize, usize)` for 3D,
/// or `[usize; D]`.
pub trait ArrayIndex<const D: usize>: Copy {
    /// The coordinates, outermost axis first.
    fn coordinates(self) -> [usize; D];
}

impl ArrayIndex<2> for (usize, usize) {
    #[inline(always)]
    fn coordinates(self) -> [usize; 2] {
        [self.0, self.1]
    }
}
impl ArrayIndex<3> for (usize, usize, usize) {
    #[inline(always)]
    fn coordinates(self) -> [usize; 3] {
        [self.0, self.1, self.2]
    }
}
impl<const D: usize> ArrayIndex<D> for [usize; D] {
    #[inline(always)]
    fn coordinates(self) -> [usize; D] {
        self
    }
}

/// The element offset of `index` in a view of `shape` and `strides`, or the out-of-bounds stop;
/// in 32 bits where `index32` (every offset below the shape fits in a `u32`).
#[inline(always)]
#[track_caller]
fn offset<const D: usize>(
    what: &str,
    index: [usize; D],
    shape: &[usize; D],
    strides: &[usize; D],
    index32: bool,
) -> usize {
    let mut inside = true;
    let (mut offset, mut offset32) = (0usize, 0u32);
    for k in 0..D {
        inside &= index[k] < shape[k];
        // Wrapping: only used once every coordinate is known to be below the shape, where the
        // host's launch check guarantees no overflow. In 32 bits: each term and sum is at most
        // the largest offset, below 2^32 (`assume_index32`), so the truncated operands give
        // the exact value (a stride past u32::MAX only meets the index 0 of an axis of one).
        offset = offset.wrapping_add(index[k].wrapping_mul(strides[k]));
        offset32 = offset32.wrapping_add((index[k] as u32).wrapping_mul(strides[k] as u32));
    }
    if !inside {
        out_of_bounds(what, &index, shape);
    }
    if index32 {
        offset32 as usize
    } else {
        offset
    }
}

/// Tells the compiler that a view's memory and extents fit in a `u32` (so that compares of
/// 32-bit coordinates with them are 32-bit too).
///
/// # Safety
/// `len` and every extent must be at most `u32::MAX`.
#[inline(always)]
unsafe fn assume_fits_u32<const D: usize>(len: usize, shape: &[usize; D]) {
    // SAFETY: the caller's contract.
    unsafe {
        core::hint::assert_unchecked(len <= u32::MAX as usize);
        for &extent in shape {
            core::hint::assert_unchecked(extent <= u32::MAX as usize);
        }
    }
}

/// The extents through a `u32`: the same values where they fit (`assume_index32`), and the
/// compiler sees their upper halves are zero, so compares of 32-bit coordinates with them are
/// 32-bit (an assumption alone does not narrow them).
#[inline(always)]
fn narrowed<const D: usize>(shape: [usize; D]) -> [usize; D] {
    shape.map(|extent| crate::hint::opaque(extent as u32) as usize)
}

/// Stops the thread for an index outside the shape: traps on the GPU, panics with both on the CPU.
#[cold]
#[inline(never)]
#[track_caller]
fn out_of_bounds(what: &str, index: &[usize], shape: &[usize]) -> ! {
    // The GPU has no panic message to give: it traps, as `mem::out_of_bounds`.
    #[cfg(target_arch = "nvptx64")]
    {
        let _ = (what, index, shape);
        // SAFETY: `trap` aborts the kernel; it has no preconditions.
        unsafe { core::arch::nvptx::trap() }
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        panic!("index {index:?} out of bounds for {what} of shape {shape:?}")
    }
}

impl<T, const D: usize> Clone for Array<'_, T, D> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T, const D: usize> Copy for Array<'_, T, D> {}

impl<'a, T, const D: usize> Array<'a, T, D> {
    /// A view of `data` with `shape` and `strides` (in elements, outermost axis first).
    ///
    /// # Safety
    /// Every index below `shape` must have its offset (`Σ index[k] × strides[k]`) below
    /// `data.len()`, computed without overflow.
    #[inline(always)]
    pub unsafe fn from_parts(data: &'a [T], shape: [usize; D], strides: [usize; D]) -> Self {
        Array {
            data,
            shape,
            strides,
            index32: false,
        }
    }

    /// The same view, computing its offsets in 32 bits: what `#[kernel(index32(a))]` makes of
    /// a parameter after the launch checked it.
    ///
    /// # Safety
    /// The memory behind the view (`as_slice().len()`) and every extent of the shape must be at
    /// most `u32::MAX`.
    #[inline(always)]
    pub unsafe fn assume_index32(self) -> Self {
        // SAFETY: the caller's contract.
        unsafe { assume_fits_u32(self.data.len(), &self.shape) };
        Array {
            shape: narrowed(self.shape),
            index32: true,
            ..self
        }
    }

    /// The memory behind the view, padding included.
    #[inline(always)]
    pub fn as_slice(&self) -> &'a [T] {
        self.data
    }

    /// The element at `index`, or `None` outside the shape.
    #[inline(always)]
    pub fn get(&self, index: impl ArrayIndex<D>) -> Option<&'a T> {
        let index = index.coordinates();
        if (0..D).all(|k| index[k] < self.shape[k]) {
            let at = offset("an array", index, &self.shape, &self.strides, self.index32);
            // SAFETY: `index` is below the shape, so `at` is in bounds (`from_parts`' contract).
            Some(unsafe { self.data.get_unchecked(at) })
        } else {
            None
        }
    }
}

impl<'a, T, const D: usize, I: ArrayIndex<D>> core::ops::Index<I> for Array<'a, T, D> {
    type Output = T;

    /// # Panics
    /// If a coordinate is not below its axis' extent (on the GPU: traps).
    #[inline(always)]
    #[track_caller]
    fn index(&self, index: I) -> &T {
        let at = offset(
            "an array",
            index.coordinates(),
            &self.shape,
            &self.strides,
            self.index32,
        );
        // SAFETY: `offset` returned, so every coordinate is below the shape: `at` is in bounds
        // (`from_parts`' contract).
        unsafe { self.data.get_unchecked(at) }
    }
}

impl<T, const D: usize> Clone for OutArray<'_, T, D> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T, const D: usize> Copy for OutArray<'_, T, D> {}

impl<'a, T: bytemuck::Pod, const D: usize> OutArray<'a, T, D> {
    /// An output view over `out` with `shape` and `strides`.
    ///
    /// # Safety
    /// As [`Array::from_parts`], with `out.len()`.
    #[inline(always)]
    pub unsafe fn from_parts(out: Out<'a, T>, shape: [usize; D], strides: [usize; D]) -> Self {
        OutArray {
            out,
            shape,
            strides,
            index32: false,
        }
    }

    /// The same view, computing its offsets in 32 bits, as [`Array::assume_index32`].
    ///
    /// # Safety
    /// As [`Array::assume_index32`], with `as_out().len()`.
    #[inline(always)]
    pub unsafe fn assume_index32(self) -> Self {
        // SAFETY: the caller's contract.
        unsafe { assume_fits_u32(self.out.len(), &self.shape) };
        OutArray {
            shape: narrowed(self.shape),
            index32: true,
            ..self
        }
    }

    /// The whole buffer as a 1D [`Out`], padding included.
    #[inline(always)]
    pub fn as_out(&self) -> Out<'a, T> {
        self.out
    }

    /// The element offset of `index`, or the out-of-bounds stop.
    #[inline(always)]
    #[track_caller]
    fn offset_of(&self, index: impl ArrayIndex<D>) -> usize {
        let (shape, strides) = (&self.shape, &self.strides);
        offset(
            "an output",
            index.coordinates(),
            shape,
            strides,
            self.index32,
        )
    }

    /// Writes `value` at `index`.
    ///
    /// # Panics
    /// If a coordinate is not below its axis' extent (on the GPU: traps).
    #[inline(always)]
    #[track_caller]
    pub fn set(&self, index: impl ArrayIndex<D>, value: T) {
        let at = self.offset_of(index);
        // SAFETY: every coordinate is below the shape, so `at` is in bounds of `out`.
        unsafe { self.out.set_unchecked(at, value) }
    }

    /// Reads the element at `index`: its value before the launch, or what a thread wrote.
    ///
    /// # Panics
    /// If a coordinate is not below its axis' extent.
    #[inline(always)]
    #[track_caller]
    pub fn get(&self, index: impl ArrayIndex<D>) -> T {
        let at = self.offset_of(index);
        // SAFETY: as in `set`.
        unsafe { self.out.get_unchecked(at) }
    }
}

/// `shape()` and `strides()` of every view, `rows()` and `cols()` of the 2D views, and
/// `planes()` of the 3D ones.
macro_rules! axis_names {
    ($view:ident) => {
        impl<T, const D: usize> $view<'_, T, D> {
            /// The extent of each axis, outermost first.
            #[inline(always)]
            pub fn shape(&self) -> [usize; D] {
                self.shape
            }

            /// Elements between neighbours along each axis (the last is 1 for views from the
            /// host).
            #[inline(always)]
            pub fn strides(&self) -> [usize; D] {
                self.strides
            }
        }
        impl<T> $view<'_, T, 2> {
            /// The number of rows (the first axis).
            #[inline(always)]
            pub fn rows(&self) -> usize {
                self.shape[0]
            }
            /// The number of columns (the second, contiguous axis).
            #[inline(always)]
            pub fn cols(&self) -> usize {
                self.shape[1]
            }
        }
        impl<T> $view<'_, T, 3> {
            /// The number of planes (the first axis).
            #[inline(always)]
            pub fn planes(&self) -> usize {
                self.shape[0]
            }
            /// The number of rows (the second axis).
            #[inline(always)]
            pub fn rows(&self) -> usize {
                self.shape[1]
            }
            /// The number of columns (the third, contiguous axis).
            #[inline(always)]
            pub fn cols(&self) -> usize {
                self.shape[2]
            }
        }
    };
}
axis_names!(Array);
axis_names!(OutArray);

#[cfg(all(test, not(target_arch = "nvptx64")))]
mod tests {
    use super::*;

    #[test]
    fn a_pitched_2d_view_reads_row_major_with_its_stride() {
        // 2 × 3 with a pitch of 4: the fourth element of each row is padding.
        let data = [0, 1, 2, 99, 10, 11, 12, 99];
        // SAFETY: the largest offset below the shape is 1 × 4 + 2 = 6 < 8.
        let a = unsafe { Array2::from_parts(&data[..], [2, 3], [4, 1]) };
        assert_eq!((a.rows(), a.cols()), (2, 3));
        assert_eq!((a[(0, 2)], a[(1, 0)], a[[1, 2]]), (2, 10, 12));
        assert_eq!((a.get((1, 3)), a.get((2, 0))), (None, None));
    }

    #[test]
    #[should_panic(expected = "index [0, 3] out of bounds for an array of shape [2, 3]")]
    fn a_column_past_the_shape_panics_even_where_the_padding_is_memory() {
        let data = [0u32; 8];
        // SAFETY: as above.
        let a = unsafe { Array2::from_parts(&data[..], [2, 3], [4, 1]) };
        let _ = a[(0, 3)];
    }

    #[test]
    fn a_3d_output_writes_where_its_strides_say() {
        let mut data = [0u16; 2 * 2 * 3];
        // SAFETY: the output covers the whole local array, used only through it.
        let out = unsafe { Out::from_raw_parts(data.as_mut_ptr(), data.len()) };
        // SAFETY: the largest offset below [2, 2, 3] is 6 + 3 + 2 = 11 < 12.
        let o = unsafe { Out3::from_parts(out, [2, 2, 3], [6, 3, 1]) };
        o.set((1, 0, 2), 7);
        o.set((0, 1, 0), 5);
        assert_eq!((o.planes(), o.rows(), o.cols()), (2, 2, 3));
        assert_eq!(o.get((1, 0, 2)), 7);
        assert_eq!(data[8], 7);
        assert_eq!(data[3], 5);
    }
}
