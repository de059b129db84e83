//! Transpose of a row-major f32 or f64 matrix: `out` (`cols × rows`) = `input` (`rows × cols`)ᵀ.
//! Each kernel is generic: its `f32` instance keeps the kernel's name as its PTX entry
//! (`transpose_tiled`), the `f64` one is `transpose_tiled_f64`.
//!
//! Each comes twice: with 32-bit indices (as CUDA C's `unsigned`), for matrices of at most
//! `u32::MAX` elements (the launch checks `len(input = rows * cols)`), and `_wide`, with 64-bit
//! ones, for larger matrices (`ops::transpose` picks it when the first cannot take the input).
//! One body each, generic over the index ([`MatrixIndex`]).

use ferrocuda_std::{kernel, shared, thread, Number, Out, Shared};

/// Side of the tiles of [`transpose_tiled`].
pub const TRANSPOSE_TILE: usize = 32;
/// Rows of threads per block of [`transpose_tiled`]: each thread moves `TILE / ROWS` elements.
pub const TRANSPOSE_ROWS: usize = 8;
/// Elements per row of the shared tile: one more than the tile, against bank conflicts.
const PITCH: usize = TRANSPOSE_TILE + 1;

/// The integer type a transpose indexes its matrix with: `u32` (matrices of at most `u32::MAX`
/// elements, the index arithmetic of CUDA C's `unsigned`) or `usize` (any matrix whose sides
/// are `u32`s: `rows·cols < 2^64`).
pub trait MatrixIndex:
    Copy + PartialOrd + core::ops::Add<Output = Self> + core::ops::Mul<Output = Self>
{
    /// `v`, exactly.
    fn of(v: u32) -> Self;
    /// The value as an element offset.
    fn offset(self) -> usize;
}

impl MatrixIndex for u32 {
    #[inline(always)]
    fn of(v: u32) -> Self {
        v
    }
    #[inline(always)]
    fn offset(self) -> usize {
        self as usize
    }
}

impl MatrixIndex for usize {
    #[inline(always)]
    fn of(v: u32) -> Self {
        v as usize
    }
    #[inline(always)]
    fn offset(self) -> usize {
        self
    }
}

/// One thread per element: reads are coalesced (consecutive threads, consecutive columns), writes
/// are strided by `rows`, which wastes most of each memory transaction. Launch with a 2D grid
/// covering `cols` (x) and `rows` (y).
///
/// `input` and `out` have `rows·cols` elements, at most `u32::MAX` (the launch checks it), so
/// indices are 32-bit, as in CUDA C.
#[kernel(same_len(input, out), len(input = rows * cols), instances(f32 as transpose_naive, f64))]
pub fn transpose_naive<T: Number>(input: &[T], out: Out<T>, rows: u32, cols: u32) {
    // In the body, where the CPU expansion reads the thread's position from its loop's
    // variables rather than thread-local storage (a helper's call cannot be rewritten).
    let at = thread::index_2d();
    // SAFETY: `input` and `out` have rows·cols ≤ u32::MAX elements (`same_len`,
    // `len(input = rows * cols)`, both checked by the launch).
    unsafe { naive::<T, u32>(input, out, rows, cols, at) }
}

/// [`transpose_naive`] with 64-bit indices, for matrices of more than `u32::MAX` elements.
/// `input` and `out` must have `rows·cols` elements (checked once per thread).
#[kernel(same_len(input, out), instances(f32 as transpose_naive_wide, f64))]
pub fn transpose_naive_wide<T: Number>(input: &[T], out: Out<T>, rows: u32, cols: u32) {
    assert!(
        input.len() as u64 == rows as u64 * cols as u64,
        "transpose_naive_wide: input.len() must be rows·cols"
    );
    // SAFETY: `input` and `out` have rows·cols elements (asserted, and `same_len`), and in
    // usize rows·cols < 2^64 does not wrap.
    unsafe { naive::<T, usize>(input, out, rows, cols, thread::index_2d()) }
}

/// The body of [`transpose_naive`] and [`transpose_naive_wide`], for the thread at `(x, y)`
/// (`thread::index_2d()`).
///
/// # Safety
/// `input` and `out` have `rows·cols` elements, a number `I` holds.
#[inline(always)]
unsafe fn naive<T: Number, I: MatrixIndex>(
    input: &[T],
    out: Out<T>,
    rows: u32,
    cols: u32,
    (x, y): (usize, usize),
) {
    if x < cols as usize && y < rows as usize {
        let (x, y, rows, cols) = (I::of(x as u32), I::of(y as u32), I::of(rows), I::of(cols));
        // SAFETY: x < cols and y < rows, so y·cols + x and x·rows + y are at most rows·cols - 1:
        // no `I` wraps, since `I` holds rows·cols (the caller's contract), and both are in
        // bounds of `input` and of `out`, which have rows·cols elements.
        unsafe {
            let value = *input.get_unchecked((y * cols + x).offset());
            out.set_unchecked((x * rows + y).offset(), value);
        }
    }
}

/// Through a shared-memory tile, so that both reads and writes are coalesced. The tile has one
/// column of padding (`TILE + 1` elements per row) so that reading a tile column of f32 hits 32
/// different shared-memory banks instead of one (of f64, 32 different 8-byte bank pairs).
///
/// Launch with blocks of `(TRANSPOSE_TILE, TRANSPOSE_ROWS)` (another shape would leave parts of
/// `out` unwritten: the launch refuses it) and a grid of `(⌈cols/TILE⌉, ⌈rows/TILE⌉)`. `input`
/// and `out` have `rows·cols` elements, at most `u32::MAX` (the launch checks it), so indices
/// are 32-bit, as in CUDA C.
#[kernel(
    same_len(input, out),
    len(input = rows * cols),
    block(TRANSPOSE_TILE, TRANSPOSE_ROWS),
    instances(f32 as transpose_tiled, f64)
)]
pub fn transpose_tiled<T: Number>(input: &[T], out: Out<T>, rows: u32, cols: u32) {
    let tile = shared!([T; TRANSPOSE_TILE * PITCH]);
    if past_the_matrix() {
        return;
    }
    // SAFETY (both): `input` and `out` have rows·cols ≤ u32::MAX elements (`same_len`,
    // `len(input = rows * cols)`, checked by the launch), and the block is not past the matrix.
    unsafe { tile_in::<T, u32>(input, tile, rows, cols) };
    thread::sync_threads();
    unsafe { tile_out::<T, u32>(tile, out, rows, cols) };
}

/// [`transpose_tiled`] with 64-bit indices, for matrices of more than `u32::MAX` elements,
/// launched as it is. `input` and `out` must have `rows·cols` elements (checked once per
/// thread).
#[kernel(
    same_len(input, out),
    block(TRANSPOSE_TILE, TRANSPOSE_ROWS),
    instances(f32 as transpose_tiled_wide, f64)
)]
pub fn transpose_tiled_wide<T: Number>(input: &[T], out: Out<T>, rows: u32, cols: u32) {
    let tile = shared!([T; TRANSPOSE_TILE * PITCH]);
    assert!(
        input.len() as u64 == rows as u64 * cols as u64,
        "transpose_tiled_wide: input.len() must be rows·cols"
    );
    if past_the_matrix() {
        return;
    }
    // SAFETY (both): `input` and `out` have rows·cols elements (asserted, and `same_len`), which
    // in usize does not wrap (< 2^64), and the block is not past the matrix.
    unsafe { tile_in::<T, usize>(input, tile, rows, cols) };
    thread::sync_threads();
    unsafe { tile_out::<T, usize>(tile, out, rows, cols) };
}

/// Whether this block's tile starts at 2^32 or beyond: past the matrix (whose sides are u32s),
/// with nothing to move. All its threads return, so no barrier is left half-reached; past this,
/// a tile starts at a multiple of 32 below 2^32, so its coordinates (at most 31 more) fit in
/// u32.
#[inline(always)]
fn past_the_matrix() -> bool {
    let b = thread::block_idx();
    (b.x | b.y) >= 1 << (32 - TRANSPOSE_TILE.trailing_zeros())
}

/// The thread's coordinates in the tile, and the tile's first column and row in the input. The
/// masks change nothing (the launch checked the block shape) but let the compiler see that the
/// tile indices are in bounds.
#[inline(always)]
fn tile_coordinates() -> (u32, u32, u32, u32) {
    let (t, b) = (thread::thread_idx(), thread::block_idx());
    (
        t.x & (TRANSPOSE_TILE as u32 - 1),
        t.y & (TRANSPOSE_ROWS as u32 - 1),
        b.x * TRANSPOSE_TILE as u32,
        b.y * TRANSPOSE_TILE as u32,
    )
}

/// The first half of [`transpose_tiled`] and [`transpose_tiled_wide`]: this thread's elements
/// of the block's tile of `input`, into `tile`.
///
/// # Safety
/// As [`naive`], and the block is not [`past_the_matrix`].
#[inline(always)]
unsafe fn tile_in<T: Number, I: MatrixIndex>(
    input: &[T],
    tile: Shared<'_, T>,
    rows: u32,
    cols: u32,
) {
    let (tx, ty, block_col, block_row) = tile_coordinates();
    let mut j = 0;
    while j < TRANSPOSE_TILE as u32 {
        let (x, y) = (block_col + tx, block_row + ty + j);
        if x < cols && y < rows {
            // SAFETY: y < rows and x < cols, so y·cols + x ≤ rows·cols - 1 does not wrap (`I`
            // holds rows·cols, the caller's contract) and is in bounds of `input`.
            let at = (I::of(y) * I::of(cols) + I::of(x)).offset();
            let value = unsafe { *input.get_unchecked(at) };
            tile.set(((ty + j) as usize) * PITCH + tx as usize, value);
        }
        j += TRANSPOSE_ROWS as u32;
    }
}

/// The second half, after the barrier: this thread's elements of the tile, transposed, into
/// `out`.
///
/// # Safety
/// As [`tile_in`].
#[inline(always)]
unsafe fn tile_out<T: Number, I: MatrixIndex>(
    tile: Shared<'_, T>,
    out: Out<T>,
    rows: u32,
    cols: u32,
) {
    let (tx, ty, block_col, block_row) = tile_coordinates();
    let mut j = 0;
    while j < TRANSPOSE_TILE as u32 {
        // Output row `block_col + ty + j` (an input column), output column `block_row + tx`.
        let (x, y) = (block_row + tx, block_col + ty + j);
        if x < rows && y < cols {
            let value = tile.get(tx as usize * PITCH + (ty + j) as usize);
            // SAFETY: y < cols and x < rows, so y·rows + x ≤ rows·cols - 1 does not wrap and is
            // in bounds of `out`, which has rows·cols elements (the caller's contract).
            let at = (I::of(y) * I::of(rows) + I::of(x)).offset();
            unsafe { out.set_unchecked(at, value) };
        }
        j += TRANSPOSE_ROWS as u32;
    }
}
