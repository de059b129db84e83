//! The seed's two transposes written as its Numba code writes them, with 2D views: `a[y, x]` is
//! `a[(y, x)]`, `a.shape[0]` is `a.rows()`. Beside [`transpose`](crate::transpose)'s kernels,
//! which take flat slices and the shape as scalars; these compute the same transpose.

use ferrocuda_std::{kernel, shared, thread, Array2, Out2};

/// Tile edge of [`transpose_2d_tiled`] (Numba's `TILE_DIM`): it runs in blocks of
/// `TILE_2D × TILE_2D` threads, one block per tile of `a`.
pub const TILE_2D: usize = 32;

/// `out = aᵀ` (`out` is `a.cols() × a.rows()`), one thread per element, Numba's
///
/// ```python
/// @cuda.jit
/// def transpose_naive(a, out):
///     x, y = cuda.grid(2)
///     if y < a.shape[0] and x < a.shape[1]:
///         out[x, y] = a[y, x]
/// ```
///
/// Reads are coalesced (neighbouring threads, neighbouring columns); writes are `a.rows()` apart.
/// Launch with a 2D grid covering `a.cols()` (x) and `a.rows()` (y). Both views have at most
/// `u32::MAX` elements and the grid at most 2^32 threads per axis (the launch checks
/// `index32(a, out)`), so offsets and the grid index are 32-bit, as in CUDA C; `out` is
/// `a.cols() × a.rows()` (the launch checks `transposed(out, a)`), so `out`'s bounds check is
/// `a`'s.
#[kernel(index32(a, out), transposed(out, a))]
pub fn transpose_2d_naive(a: Array2<f32>, out: Out2<f32>) {
    // In 32 bits, as CUDA C's `unsigned` grid index: `index32` launches run at most 2^32
    // threads per axis (the launch checks it), so the truncation drops nothing.
    let (x, y) = thread::index_2d();
    let (x, y) = (x as u32 as usize, y as u32 as usize);
    if y < a.rows() && x < a.cols() {
        out.set((x, y), a[(y, x)]);
    }
}

/// `out = aᵀ` through a shared tile with one column of padding, so that reads and writes both
/// coalesce and the tile's column reads hit 32 different banks, Numba's
///
/// ```python
/// @cuda.jit
/// def transpose_tiled(a, out):
///     tile = cuda.shared.array((TILE_DIM, TILE_DIM + 1), float32)
///     x, y = cuda.grid(2)
///     tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
///     if y < a.shape[0] and x < a.shape[1]:
///         tile[ty, tx] = a[y, x]
///     cuda.syncthreads()
///     x = cuda.blockIdx.y * TILE_DIM + tx
///     y = cuda.blockIdx.x * TILE_DIM + ty
///     if y < out.shape[0] and x < out.shape[1]:
///         out[y, x] = tile[tx, ty]
/// ```
///
/// Launch with blocks of `(TILE_2D, TILE_2D)` (another shape would leave parts of the tile, and
/// of `out`, unwritten: the launch refuses it) and a grid of `(⌈cols/32⌉, ⌈rows/32⌉)`. Both
/// views have at most `u32::MAX` elements (`index32(a, out)`), so offsets are 32-bit, and `out`
/// is `a.cols() × a.rows()` (`transposed(out, a)`).
#[kernel(block(TILE_2D, TILE_2D), index32(a, out), transposed(out, a))]
pub fn transpose_2d_tiled(a: Array2<f32>, out: Out2<f32>) {
    let tile = shared!([[f32; TILE_2D + 1]; TILE_2D]);
    let (x, y) = thread::index_2d();
    let (t, b) = (thread::thread_idx(), thread::block_idx());
    let (tx, ty) = (t.x as usize, t.y as usize);
    if y < a.rows() && x < a.cols() {
        tile.set2(ty, tx, a[(y, x)]);
    }
    thread::sync_threads();
    let x = b.y as usize * TILE_2D + tx;
    let y = b.x as usize * TILE_2D + ty;
    if y < out.rows() && x < out.cols() {
        out.set((y, x), tile.get2(tx, ty));
    }
}
