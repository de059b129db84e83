//! Grid-wide synchronisation: a one-launch reduction, and a planted grid-sync divergence.

use ferrocuda_std::{kernel, shared, thread, Grid, Out, Shared};

/// Threads per block `grid_sum` is written for (a power of two, its shared tile's length).
pub const GRID_SUM_BLOCK: u32 = 256;

/// The sum of `value` over the block (a power-of-two count of at most `tile.len()` threads),
/// valid in thread 0; every thread of the block must call it.
fn block_sum(value: f32, tile: Shared<f32>) -> f32 {
    let t = thread::thread_idx().x as usize;
    tile.set(t, value);
    thread::sync_threads();
    let mut half = thread::block_dim().x as usize / 2;
    while half > 0 {
        if t < half {
            tile.set(t, tile.get(t) + tile.get(t + half));
        }
        thread::sync_threads();
        half /= 2;
    }
    let total = tile.get(0);
    // No thread overwrites the tile before every thread has read it.
    thread::sync_threads();
    total
}

/// `total[0] = Σ x[i]` in one launch: each block sums its grid-stride share into
/// `partial[block]`, the grid synchronises, and block 0 sums the partials. Blocks of
/// [`GRID_SUM_BLOCK`] threads; `partial` holds one element per block.
#[kernel]
pub fn grid_sum(x: &[f32], partial: Out<f32>, total: Out<f32>, grid: Grid) {
    let tile = shared!([f32; GRID_SUM_BLOCK as usize]);
    let mut sum = 0.0f32;
    for i in thread::grid_stride(x.len()) {
        sum += x[i];
    }
    let block_total = block_sum(sum, tile);
    let block = thread::block_idx().x as usize;
    let t = thread::thread_idx().x as usize;
    if t == 0 {
        partial.set(block, block_total);
    }
    grid.sync();
    if block == 0 {
        let blocks = thread::grid_dim().x as usize;
        let mut sum = 0.0f32;
        let mut j = t;
        while j < blocks {
            sum += partial.get(j);
            j += GRID_SUM_BLOCK as usize;
        }
        let all = block_sum(sum, tile);
        if t == 0 {
            total.set(0, all);
        }
    }
}

/// Planted bug: only block 0 reaches the grid sync; the others end without it.
#[kernel]
pub fn grid_sync_in_block_0_only(out: Out<u32>, grid: Grid) {
    if thread::block_idx().x == 0 {
        grid.sync();
    }
    if thread::thread_idx().x == 0 {
        out.set(thread::block_idx().x as usize, 1);
    }
}
