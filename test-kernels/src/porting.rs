//! What ports of CUDA code need (issue 30): indices computed in `i32` and `u32`
//! (`ferrocuda_std::ElementIndex`), CUDA's `out[i] += v` (`Out::at`), `bool` parameters.

// Nothing #[kernel] generates for these kernels may warn, on the host or in the PTX build
// (issue 30, point 9: `_`-prefixed parameters warned).
#![deny(warnings)]

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

/// The side of [`transpose_tiles_i32`]'s blocks and shared tile.
pub const TILE: usize = 8;

/// Each `TILE × TILE` tile of `x` (row-major, `width` columns) transposed in place in `out`,
/// through a shared tile indexed in `i32` on both axes (`Shared::get2`/`set2` take any
/// `ElementIndex`, as `Out` and slices do). `shift` moves the tile read's row: 0 in use, -1
/// plants a negative index in thread `(0, 0)`.
#[kernel(block(TILE, TILE))]
pub fn transpose_tiles_i32(x: &[f32], out: Out<f32>, width: i32, shift: i32) {
    let tile = shared!([[f32; TILE]; TILE]);
    let (t, b) = (thread::thread_idx(), thread::block_idx());
    let (tx, ty) = (t.x as i32, t.y as i32);
    let (x0, y0) = (b.x as i32 * TILE as i32, b.y as i32 * TILE as i32);
    tile.set2(ty, tx, x.at((y0 + ty) * width + x0 + tx));
    thread::sync_threads();
    out.set((y0 + ty) * width + x0 + tx, tile.get2(tx + shift, ty));
}

/// `out[i] = if negate { -x[i] } else { x[i] } * scale`, or `x[i]` untouched when `!apply`:
/// `bool` parameters, as CUDA kernels take them.
#[kernel(same_len(x, out))]
pub fn with_flags(x: &[f32], negate: bool, scale: f32, apply: bool, out: Out<f32>) {
    let i = thread::index_1d();
    if i < x.len() {
        let v = if negate { -x[i] } else { x[i] };
        out.set(i, if apply { v * scale } else { x[i] });
    }
}

/// A kernel named as one at the crate's root (`test_kernels::add_next`), as two ported programs
/// each with a `mean_kernel` are: PTX entries share one namespace per crate, so this one's is
/// `porting_add_next`; it is launched by its path all the same. `out[i] = x[i] + 1`.
#[kernel(same_len(x, out), name = "porting_add_next")]
pub fn add_next(x: &[f32], out: Out<f32>) {
    let i = thread::index_1d();
    if i < x.len() {
        out.set(i, x[i] + 1.0);
    }
}

/// Parameters a port keeps but does not use, each kind `_`-prefixed, around a barrier (the split
/// path) and in an elementwise body.
#[kernel(same_len(x, out))]
pub fn unused_parameters(
    x: &[f32],
    _weights: &[f32],
    _scratch: Out<f32>,
    _k: u32,
    _flag: bool,
    out: Out<f32>,
) {
    let i = thread::index_1d();
    thread::sync_threads();
    if i < x.len() {
        out.set(i, x[i]);
    }
}
