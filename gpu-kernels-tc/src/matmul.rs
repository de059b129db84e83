//! Matrix product `C = A·B` on tensor cores: A (`m × k`) and B (`k × n`) row-major f16, bf16 or
//! f32 (used as tf32), C (`m × n`) row-major f32, accumulated in f32.
//!
//! The algorithm (the shared spec with the CUDA C twin in `src/workloads/cuda_c`, so that their
//! SASS compares like for like):
//! - a block of [`THREADS`] = 128 threads (4 warps in 2 × 2) computes a [`BM`] × [`BN`] = 64 × 64
//!   tile of C; each warp a 32 × 32 quarter, 2 (m16) × 4 (n8) `mma.sync` accumulators;
//! - K advances by stages of [`TileInput::BK`] elements; each stage's A (64 × BK) and B (BK × 64)
//!   tiles are copied into shared memory by `cp.async`, 16 bytes a copy, two copies of each per
//!   thread, double-buffered: the next stage is in flight while the warps multiply the current
//!   one (a group committed per stage, `wait_group 1`, a barrier);
//! - shared rows are padded ([`TileInput::PAD_A`], [`TileInput::PAD_B`]) so that the fragment
//!   loads (`ldmatrix` for f16/bf16) hit 8 (or 32) different banks;
//! - ragged edges: a 16-byte piece wholly outside A or B is zero-filled by a `cp.async` that
//!   reads nothing (src-size 0). When the row length (`k` for A, `n` for B) is not a multiple of
//!   the piece, or the matrix does not start 16-byte aligned, pieces are not 16-byte aligned in
//!   global memory and the stage is written element by element instead (zeros outside); stores
//!   of C are bounds-checked. Any `m`, `n`, `k` ≥ 1.
//!
//! f16 and bf16: BK = 32, two m16n8k16 steps a stage, rows padded by 8 halves (A 64 × 40,
//! B 32 × 72), fragments by `ldmatrix` (A `.x4`, B `.x2.trans`).
//!
//! tf32 (f32 inputs), where this kernel deviates from the spec's text: BK = 16 f32 as the spec
//! says, which is two m16n8k8 steps a stage, not the "four k8 steps" it also says (that would
//! need BK = 32, twice the shared memory). A's rows are padded by 4 f32, not 8: with 20 f32
//! between rows the 8 rows × 4 columns of one fragment load fall in 32 different banks (with 24
//! they would not); B's by 8 (72 f32 between rows, likewise). `ldmatrix` moves 16-bit elements,
//! so tf32 fragments are loaded element by element from shared memory.

use ferrocuda_std::async_copy::{commit_async_copies, copy_async, wait_async_copies};
use ferrocuda_std::half::{bf16, f16};
use ferrocuda_std::mma::{mma, FragA, FragB, FragC, MmaInput};
use ferrocuda_std::thread::{self, sync_threads};
use ferrocuda_std::{kernel, shared, Out, Shared};

/// Rows of C per block.
pub const BM: usize = 64;
/// Columns of C per block.
pub const BN: usize = 64;
/// Threads per block: 4 warps, 2 × 2 over the block's tile, 32 × 32 of C each.
pub const THREADS: usize = 128;
/// Bytes per `cp.async`.
const COPY_BYTES: usize = 16;

/// An input type of [`matmul_tc`] and its tile geometry: [`f16`](struct@f16), [`bf16`], and `f32`
/// (multiplied as tf32: the 10 high fraction bits of each input).
pub trait TileInput: MmaInput<Acc = f32> {
    /// Depth of one stage (elements of K staged at once).
    const BK: usize;
    /// Padding of each shared row of the A tile, elements.
    const PAD_A: usize;
    /// Padding of each shared row of the B tile, elements.
    const PAD_B: usize;
    /// Elements between rows of the shared A tile.
    const A_STRIDE: usize = Self::BK + Self::PAD_A;
    /// Elements between rows of the shared B tile.
    const B_STRIDE: usize = BN + Self::PAD_B;
    /// Elements of one stage of A in shared memory.
    const A_STAGE: usize = BM * Self::A_STRIDE;
    /// Elements of one stage of B in shared memory.
    const B_STAGE: usize = Self::BK * Self::B_STRIDE;
    /// Elements per `cp.async` (16 bytes).
    const PER_COPY: usize = COPY_BYTES / core::mem::size_of::<Self>();
}

impl TileInput for f16 {
    const BK: usize = 32;
    const PAD_A: usize = 8;
    const PAD_B: usize = 8;
}

impl TileInput for bf16 {
    const BK: usize = 32;
    const PAD_A: usize = 8;
    const PAD_B: usize = 8;
}

impl TileInput for f32 {
    const BK: usize = 16;
    const PAD_A: usize = 4;
    const PAD_B: usize = 8;
}

/// `c = a·b` on tensor cores (see the [module](self)): `a` `m × k`, `b` `k × n`, `c` `m × n`, all
/// row-major; `a` and `b` at least `m·k` and `k·n` long. Entries `matmul_tc_f16`,
/// `matmul_tc_bf16` and `matmul_tc_f32` (tf32). PTX for sm_80 and newer.
///
/// Launch with blocks of [`THREADS`] and a grid of `(⌈n/BN⌉, ⌈m/BM⌉)`.
#[kernel(block(THREADS), instances(f16, bf16, f32))]
pub fn matmul_tc<T: TileInput>(a: &[T], b: &[T], c: Out<f32>, m: u32, n: u32, k: u32) {
    let a_tiles = shared!([T; 2 * <T as TileInput>::A_STAGE]);
    let b_tiles = shared!([T; 2 * <T as TileInput>::B_STAGE]);
    block_product(
        (&a_tiles, &b_tiles),
        a,
        b,
        &c,
        (m as usize, n as usize, k as usize),
    );
}

/// Whether `s` starts 16-byte aligned, so that its aligned pieces can be `cp.async` sources.
#[inline(always)]
fn aligned<T>(s: &[T]) -> bool {
    (s.as_ptr() as usize).is_multiple_of(COPY_BYTES)
}

/// Stages the [`TileInput::PER_COPY`] elements of the row-major `rows × cols` matrix `src` from
/// (`row`, `col`) at `dst[at..]`, zeros outside the matrix. With `whole` (`cols` a multiple of
/// the piece, `src` aligned, `col` a multiple of the piece) one `cp.async`; else element by
/// element.
#[inline(always)]
fn stage_piece<T: TileInput>(
    dst: &Shared<T>,
    at: usize,
    src: &[T],
    (row, col): (usize, usize),
    (rows, cols): (usize, usize),
    whole: bool,
) {
    let inside = row < rows && col < cols;
    if whole {
        if inside {
            copy_async::<T, COPY_BYTES>(dst, at, src, row * cols + col);
        } else {
            // Reads nothing (src-size 0) and fills the piece with zeros.
            copy_async::<T, COPY_BYTES>(dst, at, &src[..0], 0);
        }
    } else {
        for e in 0..T::PER_COPY {
            let value = if inside && col + e < cols {
                src[row * cols + col + e]
            } else {
                T::zeroed()
            };
            dst.set(at + e, value);
        }
    }
}

/// The block's 64 × 64 tile of `c`, staging through `a_tiles` and `b_tiles` (two stages each).
#[inline(always)]
fn block_product<T: TileInput>(
    (a_tiles, b_tiles): (&Shared<T>, &Shared<T>),
    a: &[T],
    b: &[T],
    c: &Out<f32>,
    (m, n, k): (usize, usize, usize),
) {
    // Each thread stages two pieces of A and two of B per stage.
    const {
        assert!(BM * T::BK == 2 * THREADS * T::PER_COPY);
        assert!(T::BK * BN == 2 * THREADS * T::PER_COPY);
        assert!(T::BK.is_multiple_of(T::K));
    }
    let t = thread::thread_idx().x as usize;
    let block = thread::block_idx();
    let (row0, col0) = (block.y as usize * BM, block.x as usize * BN);
    let warp = t / 32;
    let (wr, wc) = (32 * (warp / 2), 32 * (warp % 2));
    let a_whole = k.is_multiple_of(T::PER_COPY) && aligned(a);
    let b_whole = n.is_multiple_of(T::PER_COPY) && aligned(b);
    let stage = |buffer: usize, k0: usize| {
        for half in 0..2 {
            let piece = t + half * THREADS;
            let per_row = T::BK / T::PER_COPY;
            let (r, col) = (piece / per_row, T::PER_COPY * (piece % per_row));
            let at = buffer * T::A_STAGE + r * T::A_STRIDE + col;
            stage_piece(a_tiles, at, a, (row0 + r, k0 + col), (m, k), a_whole);
            let per_row = BN / T::PER_COPY;
            let (r, col) = (piece / per_row, T::PER_COPY * (piece % per_row));
            let at = buffer * T::B_STAGE + r * T::B_STRIDE + col;
            stage_piece(b_tiles, at, b, (k0 + r, col0 + col), (k, n), b_whole);
        }
    };
    let mut acc = [[FragC::<f32>::zero(); 4]; 2];
    let stages = k.div_ceil(T::BK);
    stage(0, 0);
    commit_async_copies();
    let mut s = 0;
    while s < stages {
        if s + 1 < stages {
            stage((s + 1) % 2, (s + 1) * T::BK);
        }
        // An empty group after the last stage keeps `wait_group 1` meaning "stage s landed".
        commit_async_copies();
        wait_async_copies::<1>();
        sync_threads();
        let (a_stage, b_stage) = ((s % 2) * T::A_STAGE, (s % 2) * T::B_STAGE);
        for step in 0..T::BK / T::K {
            let kk = step * T::K;
            // `from_fn` over constant sizes, not loops over indices: it unrolls, so the
            // fragments and accumulators stay in registers (indexed by a loop counter, they
            // went to local memory: a 160-byte stack frame).
            let fa: [FragA<T>; 2] = core::array::from_fn(|i| {
                let at = a_stage + (wr + 16 * i) * T::A_STRIDE + kk;
                FragA::load_shared(a_tiles, at, T::A_STRIDE)
            });
            let fb: [FragB<T>; 4] = core::array::from_fn(|j| {
                let at = b_stage + kk * T::B_STRIDE + wc + 8 * j;
                FragB::load_shared(b_tiles, at, T::B_STRIDE)
            });
            acc =
                core::array::from_fn(|i| core::array::from_fn(|j| mma(&fa[i], &fb[j], &acc[i][j])));
        }
        // Everyone is done reading this buffer before it is staged again.
        sync_threads();
        s += 1;
    }
    let _: [[(); 4]; 2] = core::array::from_fn(|i| {
        core::array::from_fn(|j| {
            acc[i][j].for_each(|r, col, v| {
                let (y, x) = (row0 + wr + 16 * i + r, col0 + wc + 8 * j + col);
                if y < m && x < n {
                    c.set(y * n + x, v);
                }
            })
        })
    });
}
