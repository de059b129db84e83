//! Rodinia `cuda/hotspot/hotspot.cu`: `calculate_temp`, a 2D stencil run `iteration` time steps per
//! launch in a shared tile (the "pyramid": each step the valid area shrinks by one cell per side,
//! so a 16×16 block computes a (16 - 2·iteration)² small block), with a barrier loop that `break`s.

use crate::in_range;
use ferrocuda_std::prelude::*;

/// `BLOCK_SIZE`: blocks are `BLOCK_SIZE × BLOCK_SIZE` threads.
pub const BLOCK_SIZE: usize = 16;

/// One launch: `iteration` time steps of the temperature grid, `temp_src` to `temp_dst`.
/// (`time_elapsed` is passed and unused, as in the original.)
#[kernel(block(BLOCK_SIZE, BLOCK_SIZE))]
#[allow(clippy::too_many_arguments)]
pub fn calculate_temp(
    iteration: i32,
    power: &[f32],
    temp_src: &[f32],
    temp_dst: Out<f32>,
    grid_cols: i32,
    grid_rows: i32,
    border_cols: i32,
    border_rows: i32,
    cap: f32,
    rx: f32,
    ry: f32,
    rz: f32,
    step: f32,
    _time_elapsed: f32,
) {
    let temp_on_cuda = shared!([[f32; BLOCK_SIZE]; BLOCK_SIZE]);
    let power_on_cuda = shared!([[f32; BLOCK_SIZE]; BLOCK_SIZE]);
    let temp_t = shared!([[f32; BLOCK_SIZE]; BLOCK_SIZE]); // saving temporary temperature result
    let amb_temp = 80.0f32;
    const B: i32 = BLOCK_SIZE as i32;

    let bx = thread::block_idx().x as i32;
    let by = thread::block_idx().y as i32;
    let tx = thread::thread_idx().x as i32;
    let ty = thread::thread_idx().y as i32;
    // Shared tiles take `usize` coordinates; tx and ty are never negative.
    let (sx, sy) = (tx as usize, ty as usize);

    let step_div_cap = step / cap;
    let rx_1 = 1.0 / rx;
    let ry_1 = 1.0 / ry;
    let rz_1 = 1.0 / rz;

    // each block finally computes result for a small block after N iterations
    let small_block_rows = B - iteration * 2; // EXPAND_RATE
    let small_block_cols = B - iteration * 2;

    // the boundary for the block according to the boundary of its small block
    let blk_y = small_block_rows * by - border_rows;
    let blk_x = small_block_cols * bx - border_cols;
    let blk_y_max = blk_y + B - 1;
    let blk_x_max = blk_x + B - 1;

    // the global thread coordination
    let yidx = blk_y + ty;
    let xidx = blk_x + tx;

    // load data if it is within the valid input range
    let (load_yidx, load_xidx) = (yidx, xidx);
    let index = grid_cols * load_yidx + load_xidx;
    if in_range(load_yidx, 0, grid_rows - 1) && in_range(load_xidx, 0, grid_cols - 1) {
        temp_on_cuda.set2(sy, sx, temp_src.at(index));
        power_on_cuda.set2(sy, sx, power.at(index));
    }
    thread::sync_threads();

    // effective range within this block that falls within the valid range of the input data
    let valid_y_min = if blk_y < 0 { -blk_y } else { 0 };
    let valid_y_max = if blk_y_max > grid_rows - 1 {
        B - 1 - (blk_y_max - grid_rows + 1)
    } else {
        B - 1
    };
    let valid_x_min = if blk_x < 0 { -blk_x } else { 0 };
    let valid_x_max = if blk_x_max > grid_cols - 1 {
        B - 1 - (blk_x_max - grid_cols + 1)
    } else {
        B - 1
    };

    let n = (ty - 1).max(valid_y_min) as usize;
    let s = (ty + 1).min(valid_y_max) as usize;
    let w = (tx - 1).max(valid_x_min) as usize;
    let e = (tx + 1).min(valid_x_max) as usize;

    let mut computed = false;
    for i in 0..iteration {
        computed = false;
        if in_range(tx, i + 1, B - i - 2)
            && in_range(ty, i + 1, B - i - 2)
            && in_range(tx, valid_x_min, valid_x_max)
            && in_range(ty, valid_y_min, valid_y_max)
        {
            computed = true;
            let t = temp_on_cuda.get2(sy, sx);
            temp_t.set2(
                sy,
                sx,
                t + step_div_cap
                    * (power_on_cuda.get2(sy, sx)
                        + (temp_on_cuda.get2(s, sx) + temp_on_cuda.get2(n, sx) - 2.0 * t) * ry_1
                        + (temp_on_cuda.get2(sy, e) + temp_on_cuda.get2(sy, w) - 2.0 * t) * rx_1
                        + (amb_temp - t) * rz_1),
            );
        }
        thread::sync_threads();
        if i == iteration - 1 {
            break;
        }
        if computed {
            // Assign the computation range
            temp_on_cuda.set2(sy, sx, temp_t.get2(sy, sx));
        }
        thread::sync_threads();
    }
    // update the global memory: after the last iteration, only threads coordinated within the
    // small block perform the calculation and switch on `computed`
    if computed {
        temp_dst.set(index, temp_t.get2(sy, sx));
    }
}
