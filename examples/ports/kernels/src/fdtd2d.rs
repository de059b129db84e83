//! PolyBench/GPU `CUDA/stencils/fdtd-2d/fdtd2d.cu`: three kernels per time step on a 2D grid of
//! 32×8 blocks (`DIM_THREAD_BLOCK_X`, `DIM_THREAD_BLOCK_Y`), each updating one field in place.
//! The original indexes with the compile-time `NY`; here `ny` is the run-time width.

use ferrocuda_std::prelude::*;

pub const DIM_THREAD_BLOCK_X: u32 = 32;
pub const DIM_THREAD_BLOCK_Y: u32 = 8;

/// `(i, j)`: `j` along x (columns), `i` along y (rows), as the original computes them.
#[inline(always)]
fn ij() -> (i32, i32) {
    let (b, d, t) = (
        thread::block_idx(),
        thread::block_dim(),
        thread::thread_idx(),
    );
    ((b.y * d.y + t.y) as i32, (b.x * d.x + t.x) as i32)
}

/// `ey[0][j] = _fict_[t]`; `ey[i][j] -= 0.5 (hz[i][j] - hz[i-1][j])` for `i > 0`.
#[kernel]
pub fn fdtd_step1_kernel(
    nx: i32,
    ny: i32,
    fict: &[f32],
    _ex: &[f32],
    ey: Out<f32>,
    hz: &[f32],
    t: i32,
) {
    let (i, j) = ij();
    if i < nx && j < ny {
        if i == 0 {
            ey.set(i * ny + j, fict.at(t));
        } else {
            *ey.at(i * ny + j) -= 0.5 * (hz.at(i * ny + j) - hz.at((i - 1) * ny + j));
        }
    }
}

/// `ex[i][j] -= 0.5 (hz[i][j] - hz[i][j-1])` for `j > 0`.
#[kernel]
pub fn fdtd_step2_kernel(nx: i32, ny: i32, ex: Out<f32>, _ey: &[f32], hz: &[f32], _t: i32) {
    let (i, j) = ij();
    if i < nx && j < ny && j > 0 {
        *ex.at(i * ny + j) -= 0.5 * (hz.at(i * ny + j) - hz.at(i * ny + (j - 1)));
    }
}

/// `hz[i][j] -= 0.7 (ex[i][j+1] - ex[i][j] + ey[i+1][j] - ey[i][j])`.
#[kernel]
pub fn fdtd_step3_kernel(nx: i32, ny: i32, ex: &[f32], ey: &[f32], hz: Out<f32>, _t: i32) {
    let (i, j) = ij();
    if i < nx - 1 && j < ny - 1 {
        *hz.at(i * ny + j) -= 0.7
            * (ex.at(i * ny + (j + 1)) - ex.at(i * ny + j) + ey.at((i + 1) * ny + j)
                - ey.at(i * ny + j));
    }
}
