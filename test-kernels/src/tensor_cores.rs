//! Tensor-core kernels (`ferrocuda_std::mma`, `copy_async`) for `tests/tensor_cores.rs`: one warp,
//! one 16×8 tile `d = a·b + c` per input type, from global slices and through shared memory
//! (`cp.async`, `ldmatrix`), and a warp whose lanes do not all reach the `mma`. Built to PTX at
//! sm_80 (the crate's `sm80` feature).

use ferrocuda_std::async_copy::{
    commit_async_copies, copy_async, copy_async_or_zeros, wait_async_copies,
};
use ferrocuda_std::half::{bf16, f16};
use ferrocuda_std::mma::{mma, FragA, FragB, FragC, MmaInput, SharedTile};
use ferrocuda_std::thread::{self, sync_threads};
use ferrocuda_std::{kernel, shared, warp, Out, Shared};

/// `d = a·b + c` on one 16×8 tile: `a` row-major 16×K, `b` row-major K×8, `c` and `d` 16×8.
#[inline(always)]
fn tile<T: MmaInput>(a: &[T], b: &[T], c: &[T::Acc], d: &Out<T::Acc>) {
    let fa = FragA::<T>::load(a, T::K);
    let fb = FragB::<T>::load(b, 8);
    let fc = FragC::from_fn(|r, col| c[r * 8 + col]);
    mma(&fa, &fb, &fc).for_each(|r, col, v| d.set(r * 8 + col, v));
}

/// One warp: `d = a·b + c`, f16 inputs (16×16 · 16×8), f32 accumulators.
#[kernel]
pub fn mma_f16(a: &[f16], b: &[f16], c: &[f32], d: Out<f32>) {
    tile(a, b, c, &d);
}

/// As [`mma_f16`], bf16 inputs.
#[kernel]
pub fn mma_bf16(a: &[bf16], b: &[bf16], c: &[f32], d: Out<f32>) {
    tile(a, b, c, &d);
}

/// As [`mma_f16`], f32 inputs as tf32 (16×8 · 8×8).
#[kernel]
pub fn mma_tf32(a: &[f32], b: &[f32], c: &[f32], d: Out<f32>) {
    tile(a, b, c, &d);
}

/// As [`mma_f16`], i8 inputs (16×32 · 32×8), i32 accumulators.
#[kernel]
pub fn mma_i8(a: &[i8], b: &[i8], c: &[i32], d: Out<i32>) {
    tile(a, b, c, &d);
}

/// As [`mma_f16`], with `a` and `b` staged in shared memory by `copy_async` (16 bytes a lane)
/// and read back with `FragA::load_shared` / `FragB::load_shared` (`ldmatrix` on the GPU).
#[kernel]
pub fn mma_f16_shared(a: &[f16], b: &[f16], c: &[f32], d: Out<f32>) {
    let ta = shared!([f16; 256]);
    let tb = shared!([f16; 128]);
    let lane = warp::lane_id() as usize;
    copy_async::<f16, 16>(&ta, 8 * lane, a, 8 * lane);
    if lane < 16 {
        copy_async::<f16, 16>(&tb, 8 * lane, b, 8 * lane);
    }
    commit_async_copies();
    wait_async_copies::<0>();
    sync_threads();
    let fa = FragA::load_shared(&ta, 0, 16);
    let fb = FragB::load_shared(&tb, 0, 8);
    let fc = FragC::from_fn(|r, col| c[r * 8 + col]);
    mma(&fa, &fb, &fc).for_each(|r, col, v| d.set(r * 8 + col, v));
}

/// One warp: `d = a'·b' + c` through [`SharedTile`]s, `a` 32×32 and `b` 32×16 (row-major f16)
/// staged whole in shared memory: `a'` is the 16×16 tile at (`row`, `col`) of the window of
/// `a`'s array that starts at element `start` (32 × 32, rows 32 apart), `b'` the 16×8 tile at
/// (`col`, 8) of `b`'s (32 × 16). A column that is not a multiple of 8 loads element by element
/// on the GPU (no `ldmatrix`); a window or tile past its bounds must stop the kernel.
#[kernel]
pub fn mma_f16_shared_tile(
    a: &[f16],
    b: &[f16],
    c: &[f32],
    d: Out<f32>,
    start: u32,
    row: u32,
    col: u32,
) {
    let ta = shared!([f16; 1024]);
    let tb = shared!([f16; 512]);
    let lane = warp::lane_id() as usize;
    for piece in [lane, lane + 32, lane + 64, lane + 96] {
        copy_async::<f16, 16>(&ta, 8 * piece, a, 8 * piece);
    }
    for piece in [lane, lane + 32] {
        copy_async::<f16, 16>(&tb, 8 * piece, b, 8 * piece);
    }
    commit_async_copies();
    wait_async_copies::<0>();
    sync_threads();
    let window_a = SharedTile::new(ta, start as usize, (32, 32), 32);
    let window_b = SharedTile::new(tb, 0, (32, 16), 16);
    let fa = window_a.frag_a(row as usize, col as usize);
    let fb = window_b.frag_b(col as usize, 8);
    let fc = FragC::from_fn(|r, cc| c[r * 8 + cc]);
    mma(&fa, &fb, &fc).for_each(|r, cc, v| d.set(r * 8 + cc, v));
}

/// `d = a·b + c` on one 16×8 tile through [`SharedTile`]s: `a` (16×K) and `b` (K×8, both
/// row-major) stored element by element into `ta` and `tb` (at least that long), and the
/// fragments read back through whole-tile windows (element by element: bf16 and tf32 have
/// no `ldmatrix` path, and outside CPU checked mode each read is unchecked).
#[inline(always)]
fn shared_tile_product<T: MmaInput>(
    (ta, tb): (Shared<T>, Shared<T>),
    a: &[T],
    b: &[T],
    c: &[T::Acc],
    d: &Out<T::Acc>,
) {
    let lane = warp::lane_id() as usize;
    for i in (lane..16 * T::K).step_by(32) {
        ta.set(i, a[i]);
    }
    for i in (lane..T::K * 8).step_by(32) {
        tb.set(i, b[i]);
    }
    sync_threads();
    let fa = SharedTile::new(ta, 0, (16, T::K), T::K).frag_a(0, 0);
    let fb = SharedTile::new(tb, 0, (T::K, 8), 8).frag_b(0, 0);
    let fc = FragC::from_fn(|r, col| c[r * 8 + col]);
    mma(&fa, &fb, &fc).for_each(|r, col, v| d.set(r * 8 + col, v));
}

/// [`mma_bf16`] through [`SharedTile`]s.
#[kernel]
pub fn mma_bf16_shared_tile(a: &[bf16], b: &[bf16], c: &[f32], d: Out<f32>) {
    let tiles = (shared!([bf16; 256]), shared!([bf16; 128]));
    shared_tile_product(tiles, a, b, c, &d);
}

/// [`mma_tf32`] through [`SharedTile`]s.
#[kernel]
pub fn mma_tf32_shared_tile(a: &[f32], b: &[f32], c: &[f32], d: Out<f32>) {
    let tiles = (shared!([f32; 128]), shared!([f32; 64]));
    shared_tile_product(tiles, a, b, c, &d);
}

/// A planted bug: lane 5 returns before the `mma` the rest of its warp waits in.
#[kernel]
pub fn mma_divergent(a: &[f16], b: &[f16], c: &[f32], d: Out<f32>) {
    if warp::lane_id() == 5 {
        return;
    }
    tile(a, b, c, &d);
}

/// As [`mma_divergent`], with the `mma` in the kernel's own body, where `#[kernel]` sees it:
/// the split path's block step (not a rendezvous) must report it too.
#[kernel]
pub fn mma_divergent_split(a: &[f16], b: &[f16], c: &[f32], d: Out<f32>) {
    if warp::lane_id() == 5 {
        return;
    }
    let fa = FragA::<f16>::load(a, 16);
    let fb = FragB::<f16>::load(b, 8);
    let fc = FragC::from_fn(|r, col| c[r * 8 + col]);
    let product = mma(&fa, &fb, &fc);
    product.for_each(|r, col, v| d.set(r * 8 + col, v));
}

/// Rows and columns of a block's tile of C, and the depth of one stage.
const BM: usize = 32;
const BN: usize = 32;
const BK: usize = 16;

/// Stages 8 elements of the row-major `rows`×`cols` matrix `src`, from (`row`, `col`), at
/// `dst[at..at + 8]`: one `copy_async` where the 8 are inside a row and 16-byte aligned, else
/// element by element with zeros outside the matrix (ragged edges).
#[inline(always)]
fn stage_8(dst: &Shared<f16>, at: usize, src: &[f16], (row, col): (usize, usize), cols: usize) {
    let start = row * cols + col;
    if col + 8 <= cols && start.is_multiple_of(8) && start < src.len() {
        copy_async::<f16, 16>(dst, at, src, start);
    } else {
        for e in 0..8 {
            let inside = col + e < cols && start + e < src.len();
            dst.set(at + e, if inside { src[start + e] } else { f16::ZERO });
        }
    }
}

/// Thread `t` stages its 8-element piece of the k-step at `kk` into `buffer` (0 or 1) of the
/// tiles: of A (32 rows × 2) for t < 64, else of B (16 × 4). `corner`: the block's first row and
/// column of C; `sizes`: n and k.
#[inline(always)]
fn stage_tiles(
    (ta, tb): (Shared<f16>, Shared<f16>),
    (a, b): (&[f16], &[f16]),
    t: usize,
    (row0, col0): (usize, usize),
    (n, k): (usize, usize),
    buffer: usize,
    kk: usize,
) {
    if t < 64 {
        let (r, cc) = (t / 2, 8 * (t % 2));
        let at = buffer * BM * BK + r * BK + cc;
        stage_8(&ta, at, a, (row0 + r, kk + cc), k);
    } else {
        let (r, cc) = ((t - 64) / 4, 8 * ((t - 64) % 4));
        let at = buffer * BK * BN + r * BN + cc;
        if kk + r < k {
            stage_8(&tb, at, b, (kk + r, col0 + cc), n);
        } else {
            stage_8(&tb, at, &[], (0, 0), 0);
        }
    }
}

/// The 16×16 A fragment at `at` of the A tiles (rows `row_stride` apart). Helpers take the
/// (`Copy`) shared handle by value: a `&local` in the body would keep the kernel off the split
/// path.
#[inline(always)]
fn a_fragment(ta: Shared<f16>, at: usize, row_stride: usize) -> FragA<f16> {
    FragA::load_shared(&ta, at, row_stride)
}

/// The 16×8 B fragment at `at` of the B tiles (rows `row_stride` apart).
#[inline(always)]
fn b_fragment(tb: Shared<f16>, at: usize, row_stride: usize) -> FragB<f16> {
    FragB::load_shared(&tb, at, row_stride)
}

/// `c = a·b` (`a` m×k, `b` k×n, `c` m×n, row-major) on tensor cores: blocks of 4 warps own a
/// 32×32 tile of `c`, each warp a 16×16 quarter (two `mma`s per k-step); the k-steps' 32×16 and
/// 16×32 tiles are staged by `copy_async` into two buffers, the next while the current one is
/// multiplied. Any sizes (ragged edges are zero-filled). Launch `[(n/32, m/32) rounded up, 128]`.
/// The `mma`s are statements of the body's loop, so on the CPU the kernel takes the split path
/// (each `mma` a sync point, no thread suspends).
#[kernel]
pub fn matmul_f16_tc(a: &[f16], b: &[f16], c: Out<f32>, m: u32, n: u32, k: u32) {
    let (m, n, k) = (m as usize, n as usize, k as usize);
    let ta = shared!([f16; 2 * BM * BK]);
    let tb = shared!([f16; 2 * BK * BN]);
    let t = thread::thread_idx().x as usize;
    let block = thread::block_idx();
    let (row0, col0) = (block.y as usize * BM, block.x as usize * BN);
    let warp = t / 32;
    let (wr, wc) = (16 * (warp / 2), 16 * (warp % 2));
    let mut left = FragC::<f32>::zero();
    let mut right = FragC::<f32>::zero();
    let steps = k.div_ceil(BK);
    stage_tiles((ta, tb), (a, b), t, (row0, col0), (n, k), 0, 0);
    commit_async_copies();
    let mut s = 0;
    while s < steps {
        if s + 1 < steps {
            let next = (s + 1) % 2;
            stage_tiles(
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
        let fa = a_fragment(ta, buffer * BM * BK + wr * BK, BK);
        let b_tile = buffer * BK * BN + wc;
        left = mma(&fa, &b_fragment(tb, b_tile, BN), &left);
        right = mma(&fa, &b_fragment(tb, b_tile + 8, BN), &right);
        sync_threads();
        s += 1;
    }
    for (offset, tile) in [(0, left), (8, right)] {
        tile.for_each(|r, col, v| {
            let (i, j) = (row0 + wr + r, col0 + wc + offset + col);
            if i < m && j < n {
                c.set(i * n + j, v);
            }
        });
    }
}

/// Lane `l` stages piece `l` (8 f16) of `src` into a shared tile by
/// [`copy_async_or_zeros`], asking to read it
/// unless `l % 3 == 2`, and writes the tile (256 elements) to `out`.
#[kernel]
pub fn copy_or_zeros(src: &[f16], out: Out<f16>) {
    let tile = shared!([f16; 256]);
    let lane = warp::lane_id() as usize;
    copy_async_or_zeros::<f16, 16>(&tile, 8 * lane, src, 8 * lane, lane % 3 != 2);
    commit_async_copies();
    wait_async_copies::<0>();
    sync_threads();
    for e in 0..8 {
        out.set(8 * lane + e, tile.get(8 * lane + e));
    }
}

/// `copy_async` of 4 `f32`s into a 16-element tile at index `0 - back` (wrapping: `back` 0 is
/// index 0, 4 is `usize::MAX - 3`, where `index + 4` wraps to 0), then the tile to `out`.
#[kernel]
pub fn copy_async_back(src: &[f32], out: Out<f32>, back: u32) {
    let tile = shared!([f32; 16]);
    let lane = warp::lane_id() as usize;
    if lane == 0 {
        copy_async::<f32, 16>(&tile, 0usize.wrapping_sub(back as usize), src, 0);
        for i in 4..16 {
            tile.set(i, 0.0);
        }
    }
    commit_async_copies();
    wait_async_copies::<0>();
    sync_threads();
    if lane < 16 {
        out.set(lane, tile.get(lane));
    }
}
