//! Kernels written as their CUDA originals compute indices, in `i32` and `u32`
//! (`ferrocuda_std::ElementIndex`), with CUDA's `out[i] += v` (`Out::at`): issue 30, point 7.

use ferrocuda_std::prelude::*;

/// Block size of [`smooth_i32`].
pub const SMOOTH_BLOCK: u32 = 128;

/// `out[i] += 2 x[i] + x[i - 1] + x[i + 1]` (missing neighbours are 0) for `i < n`, with `x[i]`
/// staged through a shared tile indexed by the `u32` thread index, and every index in `i32`.
#[kernel]
pub fn smooth_i32(x: &[f32], out: Out<f32>, n: i32) {
    let tile = shared!([f32; SMOOTH_BLOCK as usize]);
    let t = thread::thread_idx().x;
    let i = (thread::block_idx().x * thread::block_dim().x + t) as i32;
    tile.set(t, if i < n { x.at(i) } else { 0.0 });
    thread::sync_threads();
    if i < n {
        let left = if i >= 1 { x.at(i - 1) } else { 0.0 };
        let right = if i + 1 < n { x.at(i + 1) } else { 0.0 };
        *out.at(i) += 2.0 * tile.get(t) + left + right;
    }
}

/// Reads `x[i + shift]` for a signed `shift`: a negative index is a planted out-of-bounds read.
#[kernel]
pub fn read_shifted_i32(x: &[f32], out: Out<f32>, shift: i32) {
    let i = thread::index_1d() as i32;
    if i < out.len() as i32 {
        out.set(i, x.at(i + shift));
    }
}
