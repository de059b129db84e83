//! Kernels for the profiler's tests (`ptx-emu/tests/profile.rs`): variants whose counters show
//! what the library's kernels avoid.

use ferrocuda_std::{kernel, shared, thread, Out};

/// Side of the tile, and rows of threads per block, as the library's `transpose_tiled`.
const TILE: u32 = 32;
const ROWS: u32 = 8;

/// The library's `transpose_tiled` without its tile's padding column: reading a column of the
/// 32 × 32 `f32` tile reads 32 words 32 apart, all in one bank, a 32-way bank conflict (the
/// seed's lesson; `transpose_tiled` pads each row to 33 elements). Blocks of 32 × 8 threads.
#[kernel(same_len(input, out), len(input = rows * cols), block(32, 8))]
pub fn transpose_tiled_unpadded(input: &[f32], out: Out<f32>, rows: u32, cols: u32) {
    let tile = shared!([f32; 32 * 32]);
    let (t, b) = (thread::thread_idx(), thread::block_idx());
    let (tx, ty) = (t.x, t.y);
    let (block_col, block_row) = (b.x * TILE, b.y * TILE);
    let mut j = 0;
    while j < TILE {
        let (x, y) = (block_col + tx, block_row + ty + j);
        if x < cols && y < rows {
            tile.set(
                ((ty + j) * TILE + tx) as usize,
                input[(y * cols + x) as usize],
            );
        }
        j += ROWS;
    }
    thread::sync_threads();
    let mut j = 0;
    while j < TILE {
        let (x, y) = (block_row + tx, block_col + ty + j);
        if x < rows && y < cols {
            out.set(
                (y * rows + x) as usize,
                tile.get((tx * TILE + ty + j) as usize),
            );
        }
        j += ROWS;
    }
}
