//! Kernels over 2D and 3D views (`Array2`/`Array3` in, `Out2`/`Out3` out), for
//! tests/arrays.rs: a 3D map, a pitched 2D input, and a planted out-of-bounds 2D write.

use ferrocuda_std::{kernel, thread, Array2, Array3, Out, Out2, Out3};

/// `out[(p, r, c)] = 2 a[(p, r, c)] + p - r / 8 + c / 64`: each coordinate leaves its own mark, so a mixed
/// up axis shows. x covers columns, y rows, the grid's z planes (one block deep).
#[kernel]
pub fn map_3d(a: Array3<f32>, out: Out3<f32>) {
    let (c, r) = thread::index_2d();
    let p = thread::block_idx().z as usize;
    if p < a.planes() && r < a.rows() && c < a.cols() {
        let mark = p as f32 - r as f32 / 8.0 + c as f32 / 64.0;
        out.set((p, r, c), 2.0 * a[(p, r, c)] + mark);
    }
}

/// `sums[r]` = the sum of row `r` of `a`, one thread per row: reads only the first `a.cols()`
/// elements of each row of a pitched view, never its padding.
#[kernel]
pub fn row_sums(a: Array2<f64>, sums: Out<f64>) {
    let r = thread::index_1d();
    if r < a.rows() && r < sums.len() {
        let mut sum = 0.0;
        for c in 0..a.cols() {
            sum += a[(r, c)];
        }
        sums.set(r, sum);
    }
}

/// Thread 0 writes 1 at `(row, col)` of `out`: a planted out-of-bounds write when either is past
/// the shape.
#[kernel]
pub fn write_at_2d(out: Out2<u32>, row: u32, col: u32) {
    if thread::index_1d() == 0 {
        out.set((row as usize, col as usize), 1);
    }
}

/// Planted race: every thread of the launch writes element `(0, 0)`.
#[kernel]
pub fn all_write_one_2d(out: Out2<u32>) {
    let t = thread::index_1d();
    out.set((0, 0), t as u32);
}

/// Thread 0 writes `(0, 1)`; after a barrier thread 1 reads it and writes it plus one: ordered,
/// so no race (the result is 2).
#[kernel]
pub fn hand_over_2d(out: Out2<u32>) {
    let t = thread::thread_idx().x;
    if t == 0 {
        out.set((0, 1), 1);
    }
    thread::sync_threads();
    if t == 1 {
        out.set((0, 1), out.get((0, 1)) + 1);
    }
}
