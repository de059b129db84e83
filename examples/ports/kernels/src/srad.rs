//! Rodinia `cuda/srad/srad_v2/srad_kernel.cu`: speckle-reducing anisotropic diffusion, two kernels
//! per iteration on a 2D grid of 16×16 blocks, each staging its tile and halo in shared memory.
//!
//! One difference: the original loads every halo from `index_n`, `index_s`, `index_w` and
//! `index_e` first and overwrites it at the image's edge, so at the edge it reads outside the
//! image (index_n is negative in the first block row). Rust's bounds checks stop that thread, so
//! here the edge's value is loaded instead of, not after, the out-of-bounds one: the same result.
//! `srad_cuda_1` declares `n, s, w, e` at its top without values and assigns them in the
//! original's nine cases after its barriers (issue 30: such a `let` once kept a kernel off the
//! CPU executor's split path).

use ferrocuda_std::prelude::*;

/// `BLOCK_SIZE`: 16×16 blocks; the image's sides are multiples of it.
pub const BLOCK_SIZE: usize = 16;
const B: i32 = BLOCK_SIZE as i32;

/// Directional derivatives and the saturated diffusion coefficient of each pixel.
#[kernel(block(BLOCK_SIZE, BLOCK_SIZE))]
#[allow(clippy::too_many_arguments)]
pub fn srad_cuda_1(
    e_c: Out<f32>,
    w_c: Out<f32>,
    n_c: Out<f32>,
    s_c: Out<f32>,
    j_cuda: &[f32],
    c_cuda: Out<f32>,
    cols: i32,
    _rows: i32,
    q0sqr: f32,
) {
    let (bx, by) = (thread::block_idx().x as i32, thread::block_idx().y as i32);
    let (tx, ty) = (thread::thread_idx().x as i32, thread::thread_idx().y as i32);
    let (x, y) = (tx as usize, ty as usize);
    let (grid_x, grid_y) = (thread::grid_dim().x as i32, thread::grid_dim().y as i32);

    let index = cols * B * by + B * bx + cols * ty + tx;
    let index_n = cols * B * by + B * bx + tx - cols;
    let index_s = cols * B * by + B * bx + cols * B + tx;
    let index_w = cols * B * by + B * bx + cols * ty - 1;
    let index_e = cols * B * by + B * bx + cols * ty + B;
    // The original's `float n, w, e, s, ...;`, assigned after the barriers.
    let (n, s, w, e);

    let temp = shared!([[f32; BLOCK_SIZE]; BLOCK_SIZE]);
    let temp_result = shared!([[f32; BLOCK_SIZE]; BLOCK_SIZE]);
    let north = shared!([[f32; BLOCK_SIZE]; BLOCK_SIZE]);
    let south = shared!([[f32; BLOCK_SIZE]; BLOCK_SIZE]);
    let east = shared!([[f32; BLOCK_SIZE]; BLOCK_SIZE]);
    let west = shared!([[f32; BLOCK_SIZE]; BLOCK_SIZE]);

    // load data to shared memory
    north.set2(
        y,
        x,
        if by == 0 {
            j_cuda.at(B * bx + tx)
        } else {
            j_cuda.at(index_n)
        },
    );
    south.set2(
        y,
        x,
        if by == grid_y - 1 {
            j_cuda.at(cols * B * (grid_y - 1) + B * bx + cols * (B - 1) + tx)
        } else {
            j_cuda.at(index_s)
        },
    );
    thread::sync_threads();
    west.set2(
        y,
        x,
        if bx == 0 {
            j_cuda.at(cols * B * by + cols * ty)
        } else {
            j_cuda.at(index_w)
        },
    );
    east.set2(
        y,
        x,
        if bx == grid_x - 1 {
            j_cuda.at(cols * B * by + B * (grid_x - 1) + cols * ty + B - 1)
        } else {
            j_cuda.at(index_e)
        },
    );
    thread::sync_threads();
    temp.set2(y, x, j_cuda.at(index));
    thread::sync_threads();

    let jc = temp.get2(y, x);
    let last = BLOCK_SIZE - 1;
    if y == 0 && x == 0 {
        // nw
        n = north.get2(y, x) - jc;
        s = temp.get2(y + 1, x) - jc;
        w = west.get2(y, x) - jc;
        e = temp.get2(y, x + 1) - jc;
    } else if y == 0 && x == last {
        // ne
        n = north.get2(y, x) - jc;
        s = temp.get2(y + 1, x) - jc;
        w = temp.get2(y, x - 1) - jc;
        e = east.get2(y, x) - jc;
    } else if y == last && x == last {
        // se
        n = temp.get2(y - 1, x) - jc;
        s = south.get2(y, x) - jc;
        w = temp.get2(y, x - 1) - jc;
        e = east.get2(y, x) - jc;
    } else if y == last && x == 0 {
        // sw
        n = temp.get2(y - 1, x) - jc;
        s = south.get2(y, x) - jc;
        w = west.get2(y, x) - jc;
        e = temp.get2(y, x + 1) - jc;
    } else if y == 0 {
        // n
        n = north.get2(y, x) - jc;
        s = temp.get2(y + 1, x) - jc;
        w = temp.get2(y, x - 1) - jc;
        e = temp.get2(y, x + 1) - jc;
    } else if x == last {
        // e
        n = temp.get2(y - 1, x) - jc;
        s = temp.get2(y + 1, x) - jc;
        w = temp.get2(y, x - 1) - jc;
        e = east.get2(y, x) - jc;
    } else if y == last {
        // s
        n = temp.get2(y - 1, x) - jc;
        s = south.get2(y, x) - jc;
        w = temp.get2(y, x - 1) - jc;
        e = temp.get2(y, x + 1) - jc;
    } else if x == 0 {
        // w
        n = temp.get2(y - 1, x) - jc;
        s = temp.get2(y + 1, x) - jc;
        w = west.get2(y, x) - jc;
        e = temp.get2(y, x + 1) - jc;
    } else {
        // the data elements which are not on the borders
        n = temp.get2(y - 1, x) - jc;
        s = temp.get2(y + 1, x) - jc;
        w = temp.get2(y, x - 1) - jc;
        e = temp.get2(y, x + 1) - jc;
    }

    let g2 = (n * n + s * s + w * w + e * e) / (jc * jc);
    let l = (n + s + w + e) / jc;
    let num = (0.5 * g2) - ((1.0 / 16.0) * (l * l));
    let den = 1.0 + (0.25 * l);
    let qsqr = num / (den * den);
    // diffusion coefficient (equ 33)
    let den = (qsqr - q0sqr) / (q0sqr * (1.0 + q0sqr));
    let c = 1.0 / (1.0 + den);
    // saturate diffusion coefficient
    temp_result.set2(y, x, c.clamp(0.0, 1.0));
    thread::sync_threads();

    c_cuda.set(index, temp_result.get2(y, x));
    e_c.set(index, e);
    w_c.set(index, w);
    s_c.set(index, s);
    n_c.set(index, n);
}

/// The divergence and the image update (equ 58, 61), `J` in place.
#[kernel(block(BLOCK_SIZE, BLOCK_SIZE))]
#[allow(clippy::too_many_arguments)]
pub fn srad_cuda_2(
    e_c: &[f32],
    w_c: &[f32],
    n_c: &[f32],
    s_c: &[f32],
    j_cuda: Out<f32>,
    c_cuda: &[f32],
    cols: i32,
    _rows: i32,
    lambda: f32,
    _q0sqr: f32,
) {
    let (bx, by) = (thread::block_idx().x as i32, thread::block_idx().y as i32);
    let (tx, ty) = (thread::thread_idx().x as i32, thread::thread_idx().y as i32);
    let (x, y) = (tx as usize, ty as usize);
    let (grid_x, grid_y) = (thread::grid_dim().x as i32, thread::grid_dim().y as i32);

    let index = cols * B * by + B * bx + cols * ty + tx;
    let index_s = cols * B * by + B * bx + cols * B + tx;
    let index_e = cols * B * by + B * bx + cols * ty + B;

    let south_c = shared!([[f32; BLOCK_SIZE]; BLOCK_SIZE]);
    let east_c = shared!([[f32; BLOCK_SIZE]; BLOCK_SIZE]);
    let c_cuda_temp = shared!([[f32; BLOCK_SIZE]; BLOCK_SIZE]);
    let c_cuda_result = shared!([[f32; BLOCK_SIZE]; BLOCK_SIZE]);
    let temp = shared!([[f32; BLOCK_SIZE]; BLOCK_SIZE]);

    // load data to shared memory
    temp.set2(y, x, j_cuda.get(index));
    thread::sync_threads();
    south_c.set2(
        y,
        x,
        if by == grid_y - 1 {
            c_cuda.at(cols * B * (grid_y - 1) + B * bx + cols * (B - 1) + tx)
        } else {
            c_cuda.at(index_s)
        },
    );
    thread::sync_threads();
    east_c.set2(
        y,
        x,
        if bx == grid_x - 1 {
            c_cuda.at(cols * B * by + B * (grid_x - 1) + cols * ty + B - 1)
        } else {
            c_cuda.at(index_e)
        },
    );
    thread::sync_threads();
    c_cuda_temp.set2(y, x, c_cuda.at(index));
    thread::sync_threads();

    let cc = c_cuda_temp.get2(y, x);
    let last = BLOCK_SIZE - 1;
    let cn = cc;
    let cs = if y == last {
        south_c.get2(y, x)
    } else {
        c_cuda_temp.get2(y + 1, x)
    };
    let cw = cc;
    let ce = if x == last {
        east_c.get2(y, x)
    } else {
        c_cuda_temp.get2(y, x + 1)
    };

    // divergence (equ 58)
    let d_sum = cn * n_c.at(index) + cs * s_c.at(index) + cw * w_c.at(index) + ce * e_c.at(index);
    // image update (equ 61)
    c_cuda_result.set2(y, x, temp.get2(y, x) + 0.25 * lambda * d_sum);
    thread::sync_threads();
    j_cuda.set(index, c_cuda_result.get2(y, x));
}
