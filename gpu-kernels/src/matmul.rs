//! Matrix product `C = A·B` of row-major f32 matrices: A is `m × k`, B is `k × n`, C is `m × n`.

use gpu_std::{kernel, shared, thread, Out};

/// Side of the square tiles of [`matmul_tiled`]; launch it with `TILE × TILE` blocks.
pub const TILE: usize = 16;

/// One thread per element of C, reading A and B straight from global memory. Launch with a 2D
/// grid covering `n` columns (x) and `m` rows (y).
#[kernel]
pub fn matmul_naive(a: &[f32], b: &[f32], c: Out<f32>, m: u32, n: u32, k: u32) {
    let (col, row) = thread::index_2d();
    let (m, n, k) = (m as usize, n as usize, k as usize);
    if row < m && col < n {
        let mut acc = 0.0f32;
        for j in 0..k {
            acc += a[row * k + j] * b[j * n + col];
        }
        c.set(row * n + col, acc);
    }
}

/// Tiled through shared memory: each block computes a `TILE × TILE` tile of C, loading matching
/// tiles of A and B once into shared memory per step, so each input element is read from global
/// memory `n / TILE` times instead of `n`. Edge tiles are padded with zeros: any `m`, `n`, `k`.
///
/// Launch with blocks of `(TILE, TILE)` and a grid of `(⌈n/TILE⌉, ⌈m/TILE⌉)`.
#[kernel]
pub fn matmul_tiled(a: &[f32], b: &[f32], c: Out<f32>, m: u32, n: u32, k: u32) {
    let a_tile = shared!([f32; TILE * TILE]);
    let b_tile = shared!([f32; TILE * TILE]);
    let d = thread::block_dim();
    assert!(
        d.x as usize == TILE && d.y as usize == TILE && d.z == 1,
        "matmul_tiled needs blocks of TILE × TILE threads"
    );
    let (m, n, k) = (m as usize, n as usize, k as usize);
    let t = thread::thread_idx();
    let (tx, ty) = (t.x as usize, t.y as usize);
    let b_idx = thread::block_idx();
    let row = b_idx.y as usize * TILE + ty;
    let col = b_idx.x as usize * TILE + tx;
    let mut acc = 0.0f32;
    for step in 0..k.div_ceil(TILE) {
        let a_col = step * TILE + tx;
        let b_row = step * TILE + ty;
        let a_value = if row < m && a_col < k {
            a[row * k + a_col]
        } else {
            0.0
        };
        let b_value = if b_row < k && col < n {
            b[b_row * n + col]
        } else {
            0.0
        };
        a_tile.set(ty * TILE + tx, a_value);
        b_tile.set(ty * TILE + tx, b_value);
        thread::sync_threads();
        for j in 0..TILE {
            acc += a_tile.get(ty * TILE + j) * b_tile.get(j * TILE + tx);
        }
        thread::sync_threads();
    }
    if row < m && col < n {
        c.set(row * n + col, acc);
    }
}
