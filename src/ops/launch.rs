//! Launch shapes the ops share: threads per block, blocks for a grid-stride loop on this device,
//! and the grid of a 2D tiled launch (checked against the device's grid limits).

use crate::{Error, Module, Result};

/// Threads per block of the 1D launches here: a multiple of the warp size that fills an SM well.
pub(super) const THREADS_1D: u32 = 256;

/// Threads for one block that reduces `values` partial results: a whole number of warps, at most
/// a full block, so that a second pass over a few partials does not wake a thousand threads.
pub(super) fn reduce_threads(values: u32) -> u32 {
    values.next_multiple_of(32).clamp(32, 1024)
}

/// Blocks for a grid-stride kernel over `n` elements: enough to fill the device, never more than
/// the elements need. A GPU gets 8 blocks per SM, to hide memory latency; the CPU executor 2 per
/// worker thread, since every block of a cooperative kernel costs it a coroutine per thread.
pub(super) fn grid_stride_blocks(kernels: &Module, n: usize, threads: u32) -> u32 {
    let device = kernels.device();
    let per_unit = if device.is_gpu() { 8 } else { 2 };
    let fill = device.properties().multiprocessors.max(1) * per_unit;
    let needed = n.div_ceil(threads as usize).max(1);
    fill.min(u32::try_from(needed).unwrap_or(u32::MAX))
}

/// The grid of a 2D launch whose blocks each cover `tile.0` columns (x) and `tile.1` rows (y)
/// of a `cols × rows` domain, `(⌈cols/tile.0⌉, ⌈rows/tile.1⌉)`, or [`Error::InvalidInput`] if
/// that is more blocks than the device's grid allows (65,535 in y on CUDA GPUs). `cols` and
/// `rows` come with their names for the message, e.g. `(n, "columns")`.
pub(super) fn grid_2d(
    op: &'static str,
    kernels: &Module,
    cols: (usize, &str),
    rows: (usize, &str),
    tile: (usize, usize),
) -> Result<(u32, u32)> {
    let max = kernels.device().properties().max_grid_dim;
    let x = cols.0.div_ceil(tile.0);
    let y = rows.0.div_ceil(tile.1);
    for ((count, what), side, blocks, limit, axis) in
        [(cols, tile.0, x, max.x, "x"), (rows, tile.1, y, max.y, "y")]
    {
        if blocks > limit as usize {
            return Err(Error::InvalidInput {
                op,
                detail: format!(
                    "{count} {what} need {blocks} blocks of {side} in {axis}, more than the \
                     device's limit of {limit}"
                ),
            });
        }
    }
    Ok((x as u32, y as u32))
}
