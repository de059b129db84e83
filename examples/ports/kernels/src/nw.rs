//! Rodinia `cuda/nw/needle_kernel.cu`: Needleman-Wunsch alignment scores in 16×16 tiles, a
//! wavefront of tiles per launch (`needle_cuda_shared_1` for the upper-left half of the tile
//! diagonals, `needle_cuda_shared_2` for the rest) and, inside a tile, a wavefront of cells: one
//! anti-diagonal per barrier.

use ferrocuda_std::prelude::*;

/// `BLOCK_SIZE`: one thread per tile column, 16×16 tiles.
pub const BLOCK_SIZE: usize = 16;
const B: i32 = BLOCK_SIZE as i32;

/// `maximum(a, b, c)` of the original (a `__device__ __host__` function).
#[inline(always)]
pub fn maximum(a: i32, b: i32, c: i32) -> i32 {
    let k = if a <= b { b } else { a };
    if k <= c {
        c
    } else {
        k
    }
}

/// One cell of the tile's wavefront: `temp[y][x] = max(nw + ref, w - penalty, n - penalty)`.
#[inline(always)]
fn cell(
    temp: Shared<[i32; BLOCK_SIZE + 1]>,
    r: Shared<[i32; BLOCK_SIZE]>,
    y: usize,
    x: usize,
    penalty: i32,
) {
    temp.set2(
        y,
        x,
        maximum(
            temp.get2(y - 1, x - 1) + r.get2(y - 1, x - 1),
            temp.get2(y, x - 1) - penalty,
            temp.get2(y - 1, x) - penalty,
        ),
    );
}

/// The tile at tile coordinates `(b_index_y, b_index_x) = (i - 1 - bx, bx)`.
#[kernel(block(BLOCK_SIZE, 1))]
pub fn needle_cuda_shared_1(
    referrence: &[i32],
    matrix_cuda: Out<i32>,
    cols: i32,
    penalty: i32,
    i: i32,
    _block_width: i32,
) {
    let bx = thread::block_idx().x as i32;
    let tx = thread::thread_idx().x as i32;
    let t = tx as usize;
    let b_index_x = bx;
    let b_index_y = i - 1 - bx;

    let index = cols * B * b_index_y + B * b_index_x + tx + (cols + 1);
    let index_n = cols * B * b_index_y + B * b_index_x + tx + 1;
    let index_w = cols * B * b_index_y + B * b_index_x + cols;
    let index_nw = cols * B * b_index_y + B * b_index_x;

    let temp = shared!([[i32; BLOCK_SIZE + 1]; BLOCK_SIZE + 1]);
    let r = shared!([[i32; BLOCK_SIZE]; BLOCK_SIZE]); // `ref`

    if tx == 0 {
        temp.set2(0, 0, matrix_cuda.get(index_nw));
    }
    for ty in 0..B {
        r.set2(ty as usize, t, referrence.at(index + cols * ty));
    }
    thread::sync_threads();
    temp.set2(t + 1, 0, matrix_cuda.get(index_w + cols * tx));
    thread::sync_threads();
    temp.set2(0, t + 1, matrix_cuda.get(index_n));
    thread::sync_threads();

    for m in 0..B {
        if tx <= m {
            cell(temp, r, (m - tx + 1) as usize, t + 1, penalty);
        }
        thread::sync_threads();
    }
    for m in (0..B - 1).rev() {
        if tx <= m {
            cell(temp, r, (B - tx) as usize, (tx + B - m) as usize, penalty);
        }
        thread::sync_threads();
    }
    for ty in 0..B {
        matrix_cuda.set(index + ty * cols, temp.get2(ty as usize + 1, t + 1));
    }
}

/// The tile at tile coordinates `(block_width - bx - 1, bx + block_width - i)`.
#[kernel(block(BLOCK_SIZE, 1))]
pub fn needle_cuda_shared_2(
    referrence: &[i32],
    matrix_cuda: Out<i32>,
    cols: i32,
    penalty: i32,
    i: i32,
    block_width: i32,
) {
    let bx = thread::block_idx().x as i32;
    let tx = thread::thread_idx().x as i32;
    let t = tx as usize;
    let b_index_x = bx + block_width - i;
    let b_index_y = block_width - bx - 1;

    let index = cols * B * b_index_y + B * b_index_x + tx + (cols + 1);
    let index_n = cols * B * b_index_y + B * b_index_x + tx + 1;
    let index_w = cols * B * b_index_y + B * b_index_x + cols;
    let index_nw = cols * B * b_index_y + B * b_index_x;

    let temp = shared!([[i32; BLOCK_SIZE + 1]; BLOCK_SIZE + 1]);
    let r = shared!([[i32; BLOCK_SIZE]; BLOCK_SIZE]);

    for ty in 0..B {
        r.set2(ty as usize, t, referrence.at(index + cols * ty));
    }
    thread::sync_threads();
    if tx == 0 {
        temp.set2(0, 0, matrix_cuda.get(index_nw));
    }
    temp.set2(t + 1, 0, matrix_cuda.get(index_w + cols * tx));
    thread::sync_threads();
    temp.set2(0, t + 1, matrix_cuda.get(index_n));
    thread::sync_threads();

    for m in 0..B {
        if tx <= m {
            cell(temp, r, (m - tx + 1) as usize, t + 1, penalty);
        }
        thread::sync_threads();
    }
    for m in (0..B - 1).rev() {
        if tx <= m {
            cell(temp, r, (B - tx) as usize, (tx + B - m) as usize, penalty);
        }
        thread::sync_threads();
    }
    for ty in 0..B {
        matrix_cuda.set(index + ty * cols, temp.get2(ty as usize + 1, t + 1));
    }
}
