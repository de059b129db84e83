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
#[kernel(same_len(input, out), instances(f32 as transpose_naive, f64))]
pub fn transpose_naive<T: Number>(input: &[T], out: Out<T>, rows: u32, cols: u32) {
    let (x, y) = thread::index_2d();
    let (rows, cols) = (rows as usize, cols as usize);
    if x < cols && y < rows {
        out.set(x * rows + y, input[y * cols + x]);
    }
}

/// Through a shared-memory tile, so that both reads and writes are coalesced. The tile has one
/// column of padding (`TILE + 1` elements per row) so that reading a tile column of f32 hits 32
/// different shared-memory banks instead of one (of f64, 32 different 8-byte bank pairs).
///
/// Launch with blocks of `(TRANSPOSE_TILE, TRANSPOSE_ROWS)` and a grid of
/// `(⌈cols/TILE⌉, ⌈rows/TILE⌉)`.
#[kernel(same_len(input, out), instances(f32 as transpose_tiled, f64))]
pub fn transpose_tiled<T: Number>(input: &[T], out: Out<T>, rows: u32, cols: u32) {
    let tile = shared!([T; TRANSPOSE_TILE * PITCH]);
    let d = thread::block_dim();
    assert!(
        d.x as usize == TRANSPOSE_TILE && d.y as usize == TRANSPOSE_ROWS && d.z == 1,
        "transpose_tiled needs blocks of TRANSPOSE_TILE × TRANSPOSE_ROWS threads"
    );
    // Checked once here (`same_len` makes `out` as long), so that the accesses below, each
    // within `rows` and `cols`, can skip the per-element bounds checks.
    assert!(
        input.len() as u64 >= rows as u64 * cols as u64,
        "transpose_tiled: input is shorter than rows × cols"
    );
    let b = thread::block_idx();
    let tile_side = TRANSPOSE_TILE as u64;
    if b.x as u64 * tile_side >= cols as u64 || b.y as u64 * tile_side >= rows as u64 {
        // A block past the matrix has nothing to move (all its threads return: no barrier is
        // left half-reached). Past this, coordinates fit in u32: a tile starts below `cols`
        // (`rows`), at a multiple of 32, so its last coordinate is at most `u32::MAX`.
        return;
    }
    let t = thread::thread_idx();
    // The masks change nothing (the block shape is asserted) but let the compiler see that the
    // tile indices are in bounds.
    let (tx, ty) = (
        t.x & (TRANSPOSE_TILE as u32 - 1),
        t.y & (TRANSPOSE_ROWS as u32 - 1),
    );
    let (block_col, block_row) = (b.x * TRANSPOSE_TILE as u32, b.y * TRANSPOSE_TILE as u32);
    let at = |row: u32, col: u32, width: u32| row as usize * width as usize + col as usize;
    let mut j = 0;
    while j < TRANSPOSE_TILE as u32 {
        let (x, y) = (block_col + tx, block_row + ty + j);
        if x < cols && y < rows {
            // SAFETY: y < rows and x < cols, so the index is below rows·cols ≤ input.len().
            let value = unsafe { *input.get_unchecked(at(y, x, cols)) };
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
            // SAFETY: y < cols and x < rows, so the index is below rows·cols ≤ input.len(),
            // which is out.len() (`same_len`).
            unsafe { out.set_unchecked(at(y, x, rows), value) };
        }
        j += TRANSPOSE_ROWS as u32;
    }
}
