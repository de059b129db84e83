//! Transpose of a row-major f32 matrix: `out` (`cols × rows`) = `input` (`rows × cols`)ᵀ.

use ferrocuda_std::{kernel, shared, thread, Out};

/// Side of the tiles of [`transpose_tiled`].
pub const TRANSPOSE_TILE: usize = 32;
/// Rows of threads per block of [`transpose_tiled`]: each thread moves `TILE / ROWS` elements.
pub const TRANSPOSE_ROWS: usize = 8;
/// Floats per row of the shared tile: one more than the tile, against bank conflicts.
const PITCH: usize = TRANSPOSE_TILE + 1;

/// One thread per element: reads are coalesced (consecutive threads, consecutive columns), writes
/// are strided by `rows`, which wastes most of each memory transaction. Launch with a 2D grid
/// covering `cols` (x) and `rows` (y).
#[kernel(same_len(input, out))]
pub fn transpose_naive(input: &[f32], out: Out<f32>, rows: u32, cols: u32) {
    let (x, y) = thread::index_2d();
    let (rows, cols) = (rows as usize, cols as usize);
    if x < cols && y < rows {
        out.set(x * rows + y, input[y * cols + x]);
    }
}

/// Through a shared-memory tile, so that both reads and writes are coalesced. The tile has one
/// column of padding (`TILE + 1` floats per row) so that reading a tile column hits 32 different
/// shared-memory banks instead of one.
///
/// Launch with blocks of `(TRANSPOSE_TILE, TRANSPOSE_ROWS)` and a grid of
/// `(⌈cols/TILE⌉, ⌈rows/TILE⌉)`.
#[kernel(same_len(input, out))]
pub fn transpose_tiled(input: &[f32], out: Out<f32>, rows: u32, cols: u32) {
    let tile = shared!([f32; TRANSPOSE_TILE * PITCH]);
    let d = thread::block_dim();
    assert!(
        d.x as usize == TRANSPOSE_TILE && d.y as usize == TRANSPOSE_ROWS && d.z == 1,
        "transpose_tiled needs blocks of TRANSPOSE_TILE × TRANSPOSE_ROWS threads"
    );
    let (rows, cols) = (rows as usize, cols as usize);
    let t = thread::thread_idx();
    let (tx, ty) = (t.x as usize, t.y as usize);
    let b = thread::block_idx();
    let (block_col, block_row) = (b.x as usize * TRANSPOSE_TILE, b.y as usize * TRANSPOSE_TILE);
    let mut j = 0;
    while j < TRANSPOSE_TILE {
        let (x, y) = (block_col + tx, block_row + ty + j);
        if x < cols && y < rows {
            tile.set((ty + j) * PITCH + tx, input[y * cols + x]);
        }
        j += TRANSPOSE_ROWS;
    }
    thread::sync_threads();
    let mut j = 0;
    while j < TRANSPOSE_TILE {
        // Output row `block_col + ty + j` (an input column), output column `block_row + tx`.
        let (x, y) = (block_row + tx, block_col + ty + j);
        if x < rows && y < cols {
            out.set(y * rows + x, tile.get(tx * PITCH + ty + j));
        }
        j += TRANSPOSE_ROWS;
    }
}
