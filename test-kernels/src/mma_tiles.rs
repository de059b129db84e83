//! `mma_tiles` kernels for `tests/mma_tiles.rs`: one warp multiplies a (16·MT)×depth window of A
//! by a depth×(8·NT) window of B, staged in shared memory, into its accumulators, with the
//! `mma_tiles` a statement of the body (the split path's block step on the CPU). Every kernel
//! takes `skew`: lane `l`'s windows start `skew · (l % 2)` elements further (0: every lane the
//! same windows, the usual case; else each lane's fragments come from its own windows, which
//! the GPU allows); and `depths`: lane `l`'s depth is `depths[l % 2]` (equal: a valid call;
//! different: the lanes would do different numbers of `mma`s, a bug).

use ferrocuda_std::half::{bf16, f16};
use ferrocuda_std::mma::{mma_tiles, AccTile, FragC, MmaInput, SharedTile};
use ferrocuda_std::thread::sync_threads;
use ferrocuda_std::{kernel, shared, warp, Out, Shared};

/// Elements between rows of A in shared memory and in `a` (the deepest window, 64, plus
/// padding).
pub const A_STRIDE: usize = 72;
/// Elements between rows of B in shared memory and in `b` (up to 32 columns, plus padding).
pub const B_STRIDE: usize = 40;
/// Room for the widest skew past the windows.
pub const SKEW_ROOM: usize = 8;
/// Rows of B in shared memory (the deepest window).
pub const B_ROWS: usize = 64;

/// Copies `a` and `b` (as laid out in shared memory, rows [`A_STRIDE`] and [`B_STRIDE`] apart,
/// at least as long as the arrays) into the whole shared arrays by the warp's lanes, element by
/// element: every element a window may reach is written.
#[inline(always)]
fn stage<T: MmaInput>((ta, tb): (Shared<T>, Shared<T>), (a, b): (&[T], &[T])) {
    let lane = warp::lane_id() as usize;
    for i in (lane..ta.len()).step_by(32) {
        ta.set(i, a[i]);
    }
    for i in (lane..tb.len()).step_by(32) {
        tb.set(i, b[i]);
    }
}

/// This lane's windows: `depths[lane % 2]` deep, `skew · (lane % 2)` elements in.
#[inline(always)]
fn windows<'b, T: MmaInput, const MT: usize, const NT: usize>(
    (ta, tb): (Shared<'b, T>, Shared<'b, T>),
    depths: [u32; 2],
    skew: u32,
) -> (SharedTile<'b, T>, SharedTile<'b, T>) {
    let odd = warp::lane_id() as usize % 2;
    let (depth, shift) = (depths[odd] as usize, skew as usize * odd);
    (
        SharedTile::new(ta, shift, (16 * MT, depth), A_STRIDE),
        SharedTile::new(tb, shift, (depth, 8 * NT), B_STRIDE),
    )
}

/// C (16·MT × 8·NT, row-major) as this lane's accumulators.
#[inline(always)]
fn accumulators<T: MmaInput, const MT: usize, const NT: usize>(
    c: &[T::Acc],
) -> AccTile<T::Acc, MT, NT> {
    let mut acc = AccTile::zero();
    for (i, band) in acc.frags.iter_mut().enumerate() {
        for (j, frag) in band.iter_mut().enumerate() {
            *frag = FragC::from_fn(|r, col| c[(16 * i + r) * 8 * NT + 8 * j + col]);
        }
    }
    acc
}

macro_rules! tiles_kernel {
    ($(#[$doc:meta])* $name:ident, $t:ty, $acc:ty, $mt:literal, $nt:literal) => {
        $(#[$doc])*
        #[kernel]
        pub fn $name(a: &[$t], b: &[$t], c: &[$acc], d: Out<$acc>, depths: &[u32], skew: u32) {
            let ta = shared!([$t; 16 * $mt * A_STRIDE + SKEW_ROOM]);
            let tb = shared!([$t; B_ROWS * B_STRIDE + SKEW_ROOM]);
            stage((ta, tb), (a, b));
            sync_threads();
            let (a_tile, b_tile) = windows::<$t, $mt, $nt>((ta, tb), [depths[0], depths[1]], skew);
            let acc = accumulators::<$t, $mt, $nt>(c);
            let acc = mma_tiles(&a_tile, &b_tile, &acc);
            acc.for_each(|r, col, v| d.set(r * 8 * $nt + col, v));
        }
    };
}

tiles_kernel!(
    /// f16, 2 × 3 accumulators (32 × 24 of C).
    mma_tiles_f16, f16, f32, 2, 3
);
tiles_kernel!(
    /// bf16, 1 × 4 accumulators (16 × 32 of C).
    mma_tiles_bf16, bf16, f32, 1, 4
);
tiles_kernel!(
    /// tf32 (f32 inputs), 2 × 2 accumulators (32 × 16 of C).
    mma_tiles_tf32, f32, f32, 2, 2
);
tiles_kernel!(
    /// i8 (i32 accumulators), 1 × 1 (16 × 8 of C).
    mma_tiles_i8, i8, i32, 1, 1
);

/// A planted bug: [`mma_tiles_f16`] without the barrier between the staging and the product,
/// in a block of two warps, each multiplying what both staged.
#[kernel]
pub fn mma_tiles_unsynced(a: &[f16], b: &[f16], c: &[f32], d: Out<f32>) {
    let ta = shared!([f16; 32 * A_STRIDE + SKEW_ROOM]);
    let tb = shared!([f16; B_ROWS * B_STRIDE + SKEW_ROOM]);
    let warp = ferrocuda_std::thread::thread_idx().x as usize / 32;
    // Each warp stages half of the rows of A.
    let lane = warp::lane_id() as usize;
    for i in (lane..16 * 16).step_by(32) {
        let row = 16 * warp + i / 16;
        ta.set(row * A_STRIDE + i % 16, a[row * 16 + i % 16]);
    }
    // Warp 0 stages B: warp 1 reads it only in `mma_tiles`, where checked mode must see it.
    if warp == 0 {
        for i in (lane..16 * 24).step_by(32) {
            tb.set(i / 24 * B_STRIDE + i % 24, b[i]);
        }
    }
    let (a_tile, b_tile) = windows::<f16, 2, 3>((ta, tb), [16, 16], 0);
    let acc = accumulators::<f16, 2, 3>(c);
    let acc = mma_tiles(&a_tile, &b_tile, &acc);
    if warp == 0 {
        acc.for_each(|r, col, v| d.set(r * 24 + col, v));
    }
}
