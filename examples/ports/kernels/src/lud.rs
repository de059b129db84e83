//! Rodinia `cuda/lud/cuda/lud_kernel.cu`: LU decomposition in place (Doolittle, no pivoting) in
//! 16×16 tiles, three launches per tile step: `lud_diagonal` factors the diagonal tile in one
//! block, `lud_perimeter` solves the tiles right of it (with `L`) and below it (with `U`), one
//! block per pair, and `lud_internal` updates the trailing matrix, one block per tile.
//! Indices are `i32`, as the original's `int`s; the shared tiles take them as they are.

use ferrocuda_std::prelude::*;

/// `BLOCK_SIZE`: the tile's side.
pub const BLOCK_SIZE: usize = 16;
const B: i32 = BLOCK_SIZE as i32;

/// Factors the diagonal tile at `(offset, offset)` in place: `L` (unit diagonal, not stored)
/// below the diagonal, `U` on and above it. One block of `BLOCK_SIZE` threads, one per column.
#[kernel(block(BLOCK_SIZE, 1))]
pub fn lud_diagonal(m: Out<f32>, matrix_dim: i32, offset: i32) {
    let shadow = shared!([[f32; BLOCK_SIZE]; BLOCK_SIZE]);
    let tx = thread::thread_idx().x as i32;

    let mut array_offset = offset * matrix_dim + offset;
    for i in 0..B {
        shadow.set2(i, tx, m.get(array_offset + tx));
        array_offset += matrix_dim;
    }
    thread::sync_threads();
    for i in 0..B - 1 {
        if tx > i {
            for j in 0..i {
                let v = shadow.get2(tx, i) - shadow.get2(tx, j) * shadow.get2(j, i);
                shadow.set2(tx, i, v);
            }
            shadow.set2(tx, i, shadow.get2(tx, i) / shadow.get2(i, i));
        }
        thread::sync_threads();
        if tx > i {
            for j in 0..i + 1 {
                let v = shadow.get2(i + 1, tx) - shadow.get2(i + 1, j) * shadow.get2(j, tx);
                shadow.set2(i + 1, tx, v);
            }
        }
        thread::sync_threads();
    }
    // The first row is not modified: no need to write it back.
    let mut array_offset = (offset + 1) * matrix_dim + offset;
    for i in 1..B {
        m.set(array_offset + tx, shadow.get2(i, tx));
        array_offset += matrix_dim;
    }
}

/// Block `bx` solves the tile right of the diagonal tile, `(offset, offset + (bx + 1)·16)`, for
/// `U` (threads 0..16, a column each) and the tile below it, `(offset + (bx + 1)·16, offset)`,
/// for `L` (threads 16..32, a row each).
#[kernel(block(2 * BLOCK_SIZE, 1))]
pub fn lud_perimeter(m: Out<f32>, matrix_dim: i32, offset: i32) {
    let dia = shared!([[f32; BLOCK_SIZE]; BLOCK_SIZE]);
    let peri_row = shared!([[f32; BLOCK_SIZE]; BLOCK_SIZE]);
    let peri_col = shared!([[f32; BLOCK_SIZE]; BLOCK_SIZE]);
    let bx = thread::block_idx().x as i32;
    let tx = thread::thread_idx().x as i32;

    if tx < B {
        let idx = tx;
        let mut array_offset = offset * matrix_dim + offset;
        for i in 0..B / 2 {
            dia.set2(i, idx, m.get(array_offset + idx));
            array_offset += matrix_dim;
        }
        let mut array_offset = offset * matrix_dim + offset;
        for i in 0..B {
            peri_row.set2(i, idx, m.get(array_offset + (bx + 1) * B + idx));
            array_offset += matrix_dim;
        }
    } else {
        let idx = tx - B;
        let mut array_offset = (offset + B / 2) * matrix_dim + offset;
        for i in B / 2..B {
            dia.set2(i, idx, m.get(array_offset + idx));
            array_offset += matrix_dim;
        }
        let mut array_offset = (offset + (bx + 1) * B) * matrix_dim + offset;
        for i in 0..B {
            peri_col.set2(i, idx, m.get(array_offset + idx));
            array_offset += matrix_dim;
        }
    }
    thread::sync_threads();

    if tx < B {
        // peri-row
        let idx = tx;
        for i in 1..B {
            for j in 0..i {
                let v = peri_row.get2(i, idx) - dia.get2(i, j) * peri_row.get2(j, idx);
                peri_row.set2(i, idx, v);
            }
        }
    } else {
        // peri-col
        let idx = tx - B;
        for i in 0..B {
            for j in 0..i {
                let v = peri_col.get2(idx, i) - peri_col.get2(idx, j) * dia.get2(j, i);
                peri_col.set2(idx, i, v);
            }
            peri_col.set2(idx, i, peri_col.get2(idx, i) / dia.get2(i, i));
        }
    }
    thread::sync_threads();

    if tx < B {
        let idx = tx;
        let mut array_offset = (offset + 1) * matrix_dim + offset;
        for i in 1..B {
            m.set(array_offset + (bx + 1) * B + idx, peri_row.get2(i, idx));
            array_offset += matrix_dim;
        }
    } else {
        let idx = tx - B;
        let mut array_offset = (offset + (bx + 1) * B) * matrix_dim + offset;
        for i in 0..B {
            m.set(array_offset + idx, peri_col.get2(i, idx));
            array_offset += matrix_dim;
        }
    }
}

/// The trailing update of tile `(by + 1, bx + 1)` (counted from the diagonal tile):
/// `A -= L·U` with the perimeter tiles of its row and column, one element per thread.
#[kernel(block(BLOCK_SIZE, BLOCK_SIZE))]
pub fn lud_internal(m: Out<f32>, matrix_dim: i32, offset: i32) {
    let peri_row = shared!([[f32; BLOCK_SIZE]; BLOCK_SIZE]);
    let peri_col = shared!([[f32; BLOCK_SIZE]; BLOCK_SIZE]);
    let (b, t) = (thread::block_idx(), thread::thread_idx());
    let (bx, by) = (b.x as i32, b.y as i32);
    let (tx, ty) = (t.x as i32, t.y as i32);

    let global_row_id = offset + (by + 1) * B;
    let global_col_id = offset + (bx + 1) * B;

    peri_row.set2(
        ty,
        tx,
        m.get((offset + ty) * matrix_dim + global_col_id + tx),
    );
    peri_col.set2(
        ty,
        tx,
        m.get((global_row_id + ty) * matrix_dim + offset + tx),
    );
    thread::sync_threads();

    let mut sum = 0.0f32;
    for i in 0..B {
        sum += peri_col.get2(ty, i) * peri_row.get2(i, tx);
    }
    *m.at((global_row_id + ty) * matrix_dim + global_col_id + tx) -= sum;
}
