//! Kernels that exercise the language surface of ferrocuda-std: parameter names the generated
//! code also uses, `f32` methods through the prelude, two-dimensional padded shared tiles, a
//! `const` of the kernel body as a shared size, and a `#[pod]` struct passed by value. Each is
//! built to PTX (tests/ptx.rs) and run on the CPU executor against a reference.

use ferrocuda_std::prelude::*;

/// Threads per block of [`named_like_internals`] and [`local_const_shared`]'s tile.
pub const NAMED_BLOCK: u32 = 32;

/// Parameters named like the variables of the code `#[kernel]` and `launch!` generate
/// (`block`, `params`, `grid`, `args`, `address`) and a shared size named like its static
/// (`SITE`): through a shared tile, `grid[i] = params[j] * args + block + address` with `j` the
/// mirror of `i` in its block of 32 (0 where `j` is past the end of `params`).
#[kernel(same_len(params, grid))]
pub fn named_like_internals(block: u32, params: &[f32], grid: Out<f32>, args: f32, address: u32) {
    const SITE: usize = NAMED_BLOCK as usize;
    let tile = shared!([f32; SITE]);
    let t = thread::thread_idx().x as usize;
    let i = thread::index_1d();
    let value = if i < params.len() {
        params[i] * args + block as f32
    } else {
        0.0
    };
    tile.set(t, value);
    thread::sync_threads();
    if i < grid.len() {
        grid.set(i, tile.get(SITE - 1 - t) + address as f32);
    }
}

/// Results per input of [`math_methods`].
pub const METHOD_OUTPUTS: usize = 8;

/// `ferrocuda_std::math` through method syntax (`math::Float`, from the prelude): for `v = x[i]`,
/// `out[8 i ..]` = `v.exp()`, `v.exp2()`, `v.ln()`, `v.sqrt()`, `v.mul_add(v, v)`, `v.sinpi()`,
/// `v.cospi()`, `v.normal_cdf()`.
#[kernel]
pub fn math_methods(x: &[f32], out: Out<f32>) {
    let i = thread::index_1d();
    if i < x.len() && METHOD_OUTPUTS * (i + 1) <= out.len() {
        let v = x[i];
        let results = [
            v.exp(),
            v.exp2(),
            v.ln(),
            v.sqrt(),
            v.mul_add(v, v),
            v.sinpi(),
            v.cospi(),
            v.normal_cdf(),
        ];
        let mut j = 0;
        while j < METHOD_OUTPUTS {
            out.set(METHOD_OUTPUTS * i + j, results[j]);
            j += 1;
        }
    }
}

/// Tile edge of [`transpose_padded`].
pub const TILE: usize = 32;

/// `out` (cols × rows) = the transpose of `input` (rows × cols, row-major), through a padded
/// `[[f32; 33]; 32]` shared tile read and written one element at a time (`get2`/`set2`): the
/// column reads of the second phase fall in 32 different banks. Blocks of (32, any y ≤ 32)
/// threads, one block per 32 × 32 tile of `input`.
#[kernel]
pub fn transpose_padded(input: &[f32], out: Out<f32>, rows: u32, cols: u32) {
    let tile = shared!([[f32; TILE + 1]; TILE]);
    let (tx, ty) = (
        thread::thread_idx().x as usize,
        thread::thread_idx().y as usize,
    );
    let step = thread::block_dim().y as usize;
    let (rows, cols) = (rows as usize, cols as usize);
    let (row0, col0) = (
        thread::block_idx().y as usize * TILE,
        thread::block_idx().x as usize * TILE,
    );
    let mut j = ty;
    while j < TILE {
        let (r, c) = (row0 + j, col0 + tx);
        if r < rows && c < cols {
            tile.set2(j, tx, input[r * cols + c]);
        }
        j += step;
    }
    thread::sync_threads();
    let mut j = ty;
    while j < TILE {
        // Row `col0 + j` of `out` is column `col0 + j` of `input`.
        let (r, c) = (col0 + j, row0 + tx);
        if r < cols && c < rows {
            out.set(r * rows + c, tile.get2(tx, j));
        }
        j += step;
    }
}

/// Each block of 32 threads reverses its 32 elements of `x` into `out`, through a shared array
/// whose size is a `const` declared in the kernel body (elements past the end of `x` count as
/// 0).
#[kernel(same_len(x, out))]
pub fn local_const_shared(x: &[f32], out: Out<f32>) {
    const N: usize = NAMED_BLOCK as usize;
    let tile = shared!([f32; N]);
    let t = thread::thread_idx().x as usize;
    let i = thread::index_1d();
    tile.set(t, if i < x.len() { x[i] } else { 0.0 });
    thread::sync_threads();
    if i < out.len() {
        out.set(i, tile.get(N - 1 - t));
    }
}

/// An affine map with a clamp, passed to [`apply_affine`] by value: plain data through
/// `#[pod]`, with no bytemuck dependency in this crate.
#[pod]
#[repr(C)]
#[derive(Debug, PartialEq)]
pub struct Affine {
    /// Multiplies the input.
    pub scale: f32,
    /// Added after the scale.
    pub offset: f32,
    /// The result is clamped to `[low, high]`.
    pub low: f32,
    /// See `low`.
    pub high: f32,
    /// Added to the index before it is stored beside the value.
    pub tag: u32,
}

/// `out[2 i] = clamp(x[i] * map.scale + map.offset, map.low, map.high)` and
/// `out[2 i + 1] = i + map.tag` (as f32).
#[kernel]
pub fn apply_affine(x: &[f32], map: Affine, out: Out<f32>) {
    let i = thread::index_1d();
    if i < x.len() && 2 * i + 1 < out.len() {
        let v = x[i].mul_add(map.scale, map.offset);
        let v = if v < map.low {
            map.low
        } else if v > map.high {
            map.high
        } else {
            v
        };
        out.set(2 * i, v);
        out.set(2 * i + 1, (i as u32 + map.tag) as f32);
    }
}
