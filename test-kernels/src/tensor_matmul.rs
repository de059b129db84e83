//! A tensor-core matrix product in the shape of the library's (`ferrocuda-kernels-tc`), for the
//! CPU executor's benchmark and tests (`benches/matmul_cpu.rs`, `tests/tensor_cores.rs`): 64×64
//! block tiles, 4 warps of 2×4 `m16n8k16` accumulators, stages of depth 32 double-buffered by
//! `copy_async`, and each k16 step written as eight `acc_ij = mma(&fa_i, &fb_j, &acc_ij);`
//! statements of the body, which `#[kernel]` makes one block step of the split path.

use crate::tensor_cores::{a_fragment, b_fragment, stage_8};
use ferrocuda_std::async_copy::{commit_async_copies, wait_async_copies};
use ferrocuda_std::half::f16;
use ferrocuda_std::mma::{mma, FragC};
use ferrocuda_std::thread::{self, sync_threads};
use ferrocuda_std::{kernel, shared, Out, Shared};

/// Rows and columns of a block's tile of C, and the depth of one stage.
const BM: usize = 64;
const BN: usize = 64;
const BK: usize = 32;

/// Thread `t` (of 128) stages its two 8-element pieces of A's 64×32 tile and two of B's 32×64
/// tile for the stage at depth `kk` into `buffer` (0 or 1). `corner`: the block's first row and
/// column of C; `sizes`: n and k.
#[inline(always)]
fn stage(
    (ta, tb): (Shared<f16>, Shared<f16>),
    (a, b): (&[f16], &[f16]),
    t: usize,
    (row0, col0): (usize, usize),
    (n, k): (usize, usize),
    buffer: usize,
    kk: usize,
) {
    for piece in [t, t + 128] {
        let (r, cc) = (piece / (BK / 8), 8 * (piece % (BK / 8)));
        stage_8(
            &ta,
            buffer * BM * BK + r * BK + cc,
            a,
            (row0 + r, kk + cc),
            k,
        );
        let (r, cc) = (piece / (BN / 8), 8 * (piece % (BN / 8)));
        let at = buffer * BK * BN + r * BN + cc;
        if kk + r < k {
            stage_8(&tb, at, b, (kk + r, col0 + cc), n);
        } else {
            stage_8(&tb, at, &[], (0, 0), 0);
        }
    }
}

/// `c = a·b` (`a` m×k, `b` k×n, `c` m×n, row-major, any sizes) on tensor cores, as the
/// library's kernel is shaped: blocks of 4 warps own a 64×64 tile of `c`, each warp a 32×32
/// quarter (2×4 accumulators). Launch `[(n/64, m/64) rounded up, 128]`.
#[kernel]
pub fn matmul_f16_tc64(a: &[f16], b: &[f16], c: Out<f32>, m: u32, n: u32, k: u32) {
    let (m, n, k) = (m as usize, n as usize, k as usize);
    let ta = shared!([f16; 2 * BM * BK]);
    let tb = shared!([f16; 2 * BK * BN]);
    let t = thread::thread_idx().x as usize;
    let block = thread::block_idx();
    let (row0, col0) = (block.y as usize * BM, block.x as usize * BN);
    let warp = t / 32;
    let (wr, wc) = (32 * (warp / 2), 32 * (warp % 2));
    let mut acc00 = FragC::<f32>::zero();
    let mut acc01 = FragC::<f32>::zero();
    let mut acc02 = FragC::<f32>::zero();
    let mut acc03 = FragC::<f32>::zero();
    let mut acc10 = FragC::<f32>::zero();
    let mut acc11 = FragC::<f32>::zero();
    let mut acc12 = FragC::<f32>::zero();
    let mut acc13 = FragC::<f32>::zero();
    let stages = k.div_ceil(BK);
    stage((ta, tb), (a, b), t, (row0, col0), (n, k), 0, 0);
    commit_async_copies();
    let mut s = 0;
    while s < stages {
        if s + 1 < stages {
            let next = (s + 1) % 2;
            stage(
                (ta, tb),
                (a, b),
                t,
                (row0, col0),
                (n, k),
                next,
                (s + 1) * BK,
            );
        }
        commit_async_copies();
        wait_async_copies::<1>();
        sync_threads();
        let buffer = s % 2;
        let mut kk = 0;
        while kk < BK {
            let a_at = buffer * BM * BK + wr * BK + kk;
            let fa0 = a_fragment(ta, a_at, BK);
            let fa1 = a_fragment(ta, a_at + 16 * BK, BK);
            let b_at = buffer * BK * BN + kk * BN + wc;
            let fb0 = b_fragment(tb, b_at, BN);
            let fb1 = b_fragment(tb, b_at + 8, BN);
            let fb2 = b_fragment(tb, b_at + 16, BN);
            let fb3 = b_fragment(tb, b_at + 24, BN);
            acc00 = mma(&fa0, &fb0, &acc00);
            acc01 = mma(&fa0, &fb1, &acc01);
            acc02 = mma(&fa0, &fb2, &acc02);
            acc03 = mma(&fa0, &fb3, &acc03);
            acc10 = mma(&fa1, &fb0, &acc10);
            acc11 = mma(&fa1, &fb1, &acc11);
            acc12 = mma(&fa1, &fb2, &acc12);
            acc13 = mma(&fa1, &fb3, &acc13);
            kk += 16;
        }
        sync_threads();
        s += 1;
    }
    let tiles = [
        (0, 0, acc00),
        (0, 8, acc01),
        (0, 16, acc02),
        (0, 24, acc03),
        (16, 0, acc10),
        (16, 8, acc11),
        (16, 16, acc12),
        (16, 24, acc13),
    ];
    for (dr, dc, tile) in tiles {
        tile.for_each(|r, col, v| {
            let (i, j) = (row0 + wr + dr + r, col0 + wc + dc + col);
            if i < m && j < n {
                c.set(i * n + j, v);
            }
        });
    }
}
