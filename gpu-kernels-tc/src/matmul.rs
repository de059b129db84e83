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
//!   reads nothing (src-size 0). When a row length (`k` for A, `n` for B) is not a multiple of
//!   the piece, or a matrix does not start 16-byte aligned, pieces are not 16-byte aligned in
//!   global memory and each stage (of both matrices: one block-uniform choice, so that the
//!   aligned path carries nothing of the other) is written element by element instead (zeros
//!   outside); stores of C are bounds-checked. Any `m`, `n`, `k` ≥ 1.
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

use ferrocuda_std::async_copy::{commit_async_copies, copy_async_or_zeros, wait_async_copies};
use ferrocuda_std::half::{bf16, f16};
use ferrocuda_std::mma::{mma_tiles, AccTile, MmaInput, SharedTile};
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
///
/// The k-step of a stage is one statement, `acc = mma_tiles(&a_tile, &b_tile, &acc);`: the
/// warp's 32 × BK of A by BK × 32 of B into its 2 × 4 accumulators ([`AccTile`]), each operand a
/// [`SharedTile`] (the warp's part of the stage) whose range is checked when it is made, so the
/// fragment loads inside it, at constant places, check nothing. On the GPU that is the
/// `ldmatrix`s (tf32: `ld.shared`s) and 16 `mma.sync`s written out, the accumulators in registers. On the
/// CPU executor `#[kernel]` sees the barriers and the `mma_tiles`, so the kernel takes the split
/// path, and the product is one block-level step per stage that reads both tiles straight from
/// shared memory.
#[kernel(block(THREADS), instances(f16, bf16, f32))]
pub fn matmul_tc<T: TileInput>(a: &[T], b: &[T], c: Out<f32>, m: u32, n: u32, k: u32) {
    let a_tiles = shared!([T; 2 * <T as TileInput>::A_STAGE]);
    let b_tiles = shared!([T; 2 * <T as TileInput>::B_STAGE]);
    let sizes = (m, n, k);
    let (m, n, k) = (m as usize, n as usize, k as usize);
    check_lengths((a, b), (m, n, k));
    // `block(THREADS)`: the launch checked that `t < THREADS`. The `%` (an `and`, once) says so
    // to the compiler, which then proves each staging copy and each warp's tiles inside the
    // shared arrays: no range check is left in the k-step.
    let t = thread::thread_idx().x as usize % THREADS;
    let block = thread::block_idx();
    let (row0, col0) = (block.y as usize * BM, block.x as usize * BN);
    let warp = t / 32;
    let (wr, wc) = (32 * (warp / 2), 32 * (warp % 2));
    // A block's corner is below `m` and `n` (`u32`s) in a launch of the documented grid, and
    // only a staging place: a wrapped one would stage wrong numbers, never out of bounds.
    let corner = (
        block.y.wrapping_mul(BM as u32),
        block.x.wrapping_mul(BN as u32),
    );
    let staging = Staging::new((a, b), sizes, corner, t as u32);
    let mut acc = AccTile::<f32, 2, 4>::zero();
    staging.stage((a_tiles, b_tiles), 0, 0);
    commit_async_copies();
    // Stage `stage` (elements `stage·BK..` of K) is in buffer `stage % 2`. `u32` counters, as
    // `k` is: `stage·BK < k` for every stage, so nothing overflows.
    let bk = T::BK as u32;
    let stages = sizes.2.div_ceil(bk);
    let mut stage: u32 = 0;
    while stage < stages {
        if stage + 1 < stages {
            staging.stage((a_tiles, b_tiles), (stage + 1) % 2, (stage + 1) * bk);
        }
        // An empty group after the last stage keeps `wait_group 1` meaning "this stage landed".
        commit_async_copies();
        wait_async_copies::<1>();
        sync_threads();
        let buffer = (stage % 2) as usize;
        // This warp's 32 rows of the A stage and 32 columns of the B stage.
        let a_stage = buffer * T::A_STAGE + wr * T::A_STRIDE;
        let a_tile = SharedTile::new(a_tiles, a_stage, (32, T::BK), T::A_STRIDE);
        let b_stage = buffer * T::B_STAGE + wc;
        let b_tile = SharedTile::new(b_tiles, b_stage, (T::BK, 32), T::B_STRIDE);
        acc = mma_tiles(&a_tile, &b_tile, &acc);
        // Everyone is done reading this buffer before it is staged again.
        sync_threads();
        stage += 1;
    }
    let (y, x) = (row0 + wr, col0 + wc);
    acc.for_each(|r, cc, v| {
        let (y, x) = (y + r, x + cc);
        if y < m && x < n {
            c.set(y * n + x, v);
        }
    });
}

/// Stops the kernel (a panic on the CPU, a trap on the GPU) unless `a` holds `m × k` elements
/// and `b` `k × n`: once, before the k-step, whose loads then need no bounds checks of their own.
#[inline(always)]
#[track_caller]
fn check_lengths<T>((a, b): (&[T], &[T]), (m, n, k): (usize, usize, usize)) {
    assert!(
        a.len() >= m * k && b.len() >= k * n,
        "matmul_tc: a has {} elements, b {}: m × k = {} and k × n = {} needed",
        a.len(),
        b.len(),
        m * k,
        k * n
    );
}

/// Whether `s` starts 16-byte aligned, so that its aligned pieces can be `cp.async` sources.
#[inline(always)]
fn aligned<T>(s: &[T]) -> bool {
    (s.as_ptr() as usize).is_multiple_of(COPY_BYTES)
}

/// What one thread stages of each stage: two [`TileInput::PER_COPY`]-element pieces of A's
/// 64 × BK tile and two of B's BK × 64 (pieces `t` and `t + THREADS` of each, row by row).
///
/// Sizes and places are `u32` (the launch passes `u32` sizes; a block's rows and columns are
/// below them): per stage a piece costs 32-bit arithmetic and one 64-bit multiply-add for its
/// element index (`row·cols + col` can pass 2³²), as in the CUDA C twin, rather than 64-bit
/// values kept live through the k-step.
#[derive(Clone, Copy)]
struct Staging<'a, T> {
    a: &'a [T],
    b: &'a [T],
    /// m, n, k.
    sizes: (u32, u32, u32),
    /// The block's first row and column of C.
    corner: (u32, u32),
    t: u32,
    /// Whether all of A's and B's pieces are 16-byte aligned in global memory (rows a multiple
    /// of the piece long, both matrices aligned): then every piece is one `cp.async`, else the
    /// stage is written element by element. Block-uniform, chosen once per stage so that the
    /// aligned path holds no trace of the other.
    whole: bool,
}

impl<'a, T: TileInput> Staging<'a, T> {
    #[inline(always)]
    fn new((a, b): (&'a [T], &'a [T]), sizes: (u32, u32, u32), corner: (u32, u32), t: u32) -> Self {
        // Each thread stages two pieces of A and two of B per stage.
        const {
            assert!(BM * T::BK == 2 * THREADS * T::PER_COPY);
            assert!(T::BK * BN == 2 * THREADS * T::PER_COPY);
            assert!(T::BK.is_multiple_of(T::K));
        }
        let (_, n, k) = sizes;
        let per = T::PER_COPY as u32;
        Staging {
            a,
            b,
            sizes,
            corner,
            t,
            whole: k.is_multiple_of(per) && n.is_multiple_of(per) && aligned(a) && aligned(b),
        }
    }

    /// Stages K's elements `k0..k0 + BK` (`k0 <= k`) into `buffer` (0 or 1) of the tiles: the
    /// two pieces of each matrix, written out (a loop stayed rolled).
    #[inline(always)]
    fn stage(&self, (a_tiles, b_tiles): (Shared<T>, Shared<T>), buffer: u32, k0: u32) {
        if self.whole {
            let (t, u) = (self.t, self.t + THREADS as u32);
            copy_piece(&a_tiles, self.a, self.a_piece(buffer, k0, t));
            copy_piece(&b_tiles, self.b, self.b_piece(buffer, k0, t));
            copy_piece(&a_tiles, self.a, self.a_piece(buffer, k0, u));
            copy_piece(&b_tiles, self.b, self.b_piece(buffer, k0, u));
        } else {
            stage_elements(self, (&a_tiles, &b_tiles), buffer, k0);
        }
    }

    /// Piece `piece` of A's tile (64 × BK) of the stage at `k0`, for `buffer`.
    #[inline(always)]
    fn a_piece(&self, buffer: u32, k0: u32, piece: u32) -> Piece {
        let (m, _, k) = self.sizes;
        let (r, c) = piece_place::<T>(piece, T::BK);
        Piece {
            at: buffer * T::A_STAGE as u32 + r * T::A_STRIDE as u32 + c,
            // `k0 <= k`: `c < k - k0` says `k0 + c < k` without overflowing.
            inside: self.corner.0.wrapping_add(r) < m && c < k - k0,
            row: self.corner.0.wrapping_add(r),
            col: k0.wrapping_add(c),
            cols: k,
        }
    }

    /// Piece `piece` of B's tile (BK × 64) of the stage at `k0`, for `buffer`.
    #[inline(always)]
    fn b_piece(&self, buffer: u32, k0: u32, piece: u32) -> Piece {
        let (_, n, k) = self.sizes;
        let (r, c) = piece_place::<T>(piece, BN);
        Piece {
            at: buffer * T::B_STAGE as u32 + r * T::B_STRIDE as u32 + c,
            inside: r < k - k0 && self.corner.1.wrapping_add(c) < n,
            row: k0.wrapping_add(r),
            col: self.corner.1.wrapping_add(c),
            cols: n,
        }
    }
}

/// One [`TileInput::PER_COPY`]-element piece of a stage: its place in the shared array (`at`)
/// and in the row-major matrix (`row`, `col`, rows `cols` long), and whether it starts inside
/// the matrix (else it is zeros; `row` and `col` are then meaningless).
#[derive(Clone, Copy)]
struct Piece {
    at: u32,
    inside: bool,
    row: u32,
    col: u32,
    cols: u32,
}

impl Piece {
    /// The matrix index of the piece's element `e` (a 64-bit multiply-add: it can pass 2³²).
    #[inline(always)]
    fn index(&self, e: u32) -> usize {
        self.row as usize * self.cols as usize + self.col as usize + e as usize
    }
}

/// Row and column of piece `piece` (pieces numbered row by row) in a tile `width` elements wide.
#[inline(always)]
fn piece_place<T: TileInput>(piece: u32, width: usize) -> (u32, u32) {
    let per_row = (width / T::PER_COPY) as u32;
    (piece / per_row, T::PER_COPY as u32 * (piece % per_row))
}

/// `piece` of `src` into `dst` by one `cp.async` (of the piece, or of nothing outside the
/// matrix: src-size 0, zeros), for a stage whose pieces are all 16-byte aligned: a piece is
/// all or nothing, so `copy_async_or_zeros` (a predicate, no length to compute) fits. Past the
/// end of a `src` shorter than `rows × cols` it would read nothing too: `check_lengths` stops
/// that first.
#[inline(always)]
fn copy_piece<T: TileInput>(dst: &Shared<T>, src: &[T], piece: Piece) {
    // The rows of an aligned stage are a multiple of the piece long, so the mask changes
    // nothing; it tells the compiler (with `col`, a multiple by construction) that the index
    // is a multiple of the piece, which folds `copy_async`'s alignment check into the one on
    // `src`'s start that `Staging::whole` made.
    let index = Piece {
        cols: piece.cols & !(T::PER_COPY as u32 - 1),
        ..piece
    }
    .index(0);
    copy_async_or_zeros::<T, COPY_BYTES>(dst, piece.at as usize, src, index, piece.inside);
}

/// [`Staging::stage`] element by element, zeros outside the matrices: rows not 16-byte aligned
/// (a ragged `k` or `n`, or an unaligned matrix). Not inlined on the GPU: the path is
/// block-uniform and rare, and inlined, its address arithmetic was hoisted into every k-step of
/// the aligned path too.
#[cfg_attr(target_arch = "nvptx64", inline(never))]
#[cfg_attr(not(target_arch = "nvptx64"), inline(always))]
fn stage_elements<T: TileInput>(
    staging: &Staging<T>,
    (a_tiles, b_tiles): (&Shared<T>, &Shared<T>),
    buffer: u32,
    k0: u32,
) {
    for piece in [staging.t, staging.t + THREADS as u32] {
        piece_elements(a_tiles, staging.a, staging.a_piece(buffer, k0, piece));
        piece_elements(b_tiles, staging.b, staging.b_piece(buffer, k0, piece));
    }
}

/// `piece` of `src` into `dst` element by element, zeros outside the matrix.
#[inline(always)]
fn piece_elements<T: TileInput>(dst: &Shared<T>, src: &[T], piece: Piece) {
    for e in 0..T::PER_COPY as u32 {
        // `inside`: `col < cols`, so `cols - col` does not overflow. Past the end of `src`
        // (shorter than `rows × cols`: `check_lengths` stops that first) would read as zero, as
        // `copy_async` reads it: no bounds-check branch here.
        let value = if piece.inside && e < piece.cols - piece.col {
            src.get(piece.index(e)).copied()
        } else {
            None
        };
        dst.set((piece.at + e) as usize, value.unwrap_or_else(T::zeroed));
    }
}
