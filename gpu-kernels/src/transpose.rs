//! Transpose of a row-major f32 or f64 matrix: `out` (`cols × rows`) = `input` (`rows × cols`)ᵀ.
//! Each kernel is generic: its `f32` instance keeps the kernel's name as its PTX entry
//! (`transpose_tiled`), the `f64` one is `transpose_tiled_f64`.

use ferrocuda_std::{kernel, shared, thread, Number, Out};

/// Side of the tiles of [`transpose_tiled`].
pub const TRANSPOSE_TILE: usize = 32;
/// Rows of threads per block of [`transpose_tiled`]: each thread moves `TILE / ROWS` elements.
pub const TRANSPOSE_ROWS: usize = 8;
/// Elements per row of the shared tile: one more than the tile, against bank conflicts.
const PITCH: usize = TRANSPOSE_TILE + 1;

/// One thread per element: reads are coalesced (consecutive threads, consecutive columns), writes
/// are strided by `rows`, which wastes most of each memory transaction. Launch with a 2D grid
/// covering `cols` (x) and `rows` (y).
///
/// `input` and `out` have `rows·cols` elements, at most `u32::MAX` (the launch checks it), so
/// indices are 32-bit, as in CUDA C.
#[kernel(same_len(input, out), len(input = rows * cols), instances(f32 as transpose_naive, f64))]
pub fn transpose_naive<T: Number>(input: &[T], out: Out<T>, rows: u32, cols: u32) {
    let (x, y) = thread::index_2d();
    if x < cols as usize && y < rows as usize {
        let (x, y) = (x as u32, y as u32);
        // SAFETY: x < cols and y < rows, so y·cols + x and x·rows + y are at most rows·cols - 1:
        // no u32 wraps, since rows·cols = input.len() ≤ u32::MAX (`len(input = rows * cols)`),
        // and both are in bounds of `input` and of `out`, which is as long (`same_len`).
        unsafe {
            let value = *input.get_unchecked((y * cols + x) as usize);
            out.set_unchecked((x * rows + y) as usize, value);
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
    let b = thread::block_idx();
    if (b.x | b.y) >= 1 << (32 - TRANSPOSE_TILE.trailing_zeros()) {
        // A tile starting at 2^32 or beyond is past the matrix (whose sides are u32s) and has
        // nothing to move; all its threads return, so no barrier is left half-reached. Past
        // this, a tile starts at a multiple of 32 below 2^32, so its coordinates (at most 31
        // more) fit in u32.
        return;
    }
    let t = thread::thread_idx();
    // The masks change nothing (the launch checked the block shape) but let the compiler see
    // that the tile indices are in bounds.
    let (tx, ty) = (
        t.x & (TRANSPOSE_TILE as u32 - 1),
        t.y & (TRANSPOSE_ROWS as u32 - 1),
    );
    let (block_col, block_row) = (b.x * TRANSPOSE_TILE as u32, b.y * TRANSPOSE_TILE as u32);
    let mut j = 0;
    while j < TRANSPOSE_TILE as u32 {
        let (x, y) = (block_col + tx, block_row + ty + j);
        if x < cols && y < rows {
            // SAFETY: y < rows and x < cols, so y·cols + x ≤ rows·cols - 1 does not wrap
            // (rows·cols = input.len() ≤ u32::MAX, `len(input = rows * cols)`) and is in bounds.
            let value = unsafe { *input.get_unchecked((y * cols + x) as usize) };
            tile.set(((ty + j) as usize) * PITCH + tx as usize, value);
        }
        j += TRANSPOSE_ROWS as u32;
    }
    thread::sync_threads();
    let mut j = 0;
    while j < TRANSPOSE_TILE as u32 {
        // Output row `block_col + ty + j` (an input column), output column `block_row + tx`.
        let (x, y) = (block_row + tx, block_col + ty + j);
        if x < rows && y < cols {
            let value = tile.get(tx as usize * PITCH + (ty + j) as usize);
            // SAFETY: y < cols and x < rows, so y·rows + x ≤ rows·cols - 1 does not wrap and is
            // in bounds of `out`, as long as `input` (`same_len`, `len(input = rows * cols)`).
            unsafe { out.set_unchecked((y * rows + x) as usize, value) };
        }
        j += TRANSPOSE_ROWS as u32;
    }
}
