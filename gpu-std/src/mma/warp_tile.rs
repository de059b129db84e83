//! A warp's product of two shared tiles: [`mma_tiles`] multiplies a (16·MT)×K' window of A by a
//! K'×(8·NT) window of B into an [`AccTile`] of MT × NT accumulators, every `mma` of a tiled
//! matrix product's k-step in one call. On the GPU it is those fragment loads (`ldmatrix`) and
//! `mma.sync`s, unrolled; on the CPU executor's split path it is one block step that reads the
//! windows straight from shared memory, where the fragment-by-fragment form costs a gather per
//! lane and per `mma`.

use super::acc_tile::AccTile;
use super::fragment::MmaInput;
use super::tile::SharedTile;

/// `a·b + c` for the warp: `a` a (16·MT)×K' window, `b` a K'×(8·NT) window (K' a multiple of
/// the shape's K), `c` and the result (16·MT)×(8·NT). Every lane of the warp calls it with the
/// same windows (a warp collective, as [`mma`](super::mma)).
///
/// On the GPU it is [`mma`](super::mma) over the tile, k-step by k-step, each step loading the
/// MT A fragments ([`SharedTile::frag_a`]) and the NT B fragments ([`SharedTile::frag_b`]) and
/// doing the MT × NT `mma`s (i outer): the instructions of those calls written out. The CPU
/// executor does the warp's whole product at once, with the same bits (each element adds its
/// products for k = 0, 1, … in order, one f32 FMA each). The lanes must give the same windows:
/// `ldmatrix` hands a lane rows that other lanes address, so with windows of their own the
/// lanes' fragments would mix them (the CPU executor reports it, as warp divergence).
///
/// ```ignore
/// // This warp's 32 × 32 of C, a stage 32 deep: 2 × 2 × 4 mma.sync per call.
/// let a_tile = SharedTile::new(a_tiles, a_stage, (32, 32), A_STRIDE);
/// let b_tile = SharedTile::new(b_tiles, b_stage, (32, 32), B_STRIDE);
/// acc = mma_tiles(&a_tile, &b_tile, &acc); // acc: AccTile<f32, 2, 4>
/// ```
///
/// On the CPU executor, `#[kernel]`'s split path makes `acc = mma_tiles(..);` (or `let d =
/// mma_tiles(..);`) at statement level one block step, which reads the windows from shared
/// memory when every thread has reached it (checked mode records each lane's reads where the
/// lane calls it); elsewhere it is one warp rendezvous.
///
/// # Panics
/// If `a` is not 16·MT rows or `b` not 8·NT columns, if their depths differ or are not a
/// multiple of K (on the GPU: traps). In CPU checked mode, as the fragment loads do.
#[inline(always)]
#[track_caller]
pub fn mma_tiles<T: MmaInput, const MT: usize, const NT: usize>(
    a: &SharedTile<'_, T>,
    b: &SharedTile<'_, T>,
    c: &AccTile<T::Acc, MT, NT>,
) -> AccTile<T::Acc, MT, NT> {
    #[cfg(target_arch = "nvptx64")]
    {
        fragment_by_fragment(a, b, c)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        super::tile_product::rendezvous(__split_mma_tiles(a, b, c))
    }
}

/// [`mma_tiles`] on the GPU: per k-step, the MT A and NT B fragments, then the MT × NT `mma`s.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
#[track_caller]
fn fragment_by_fragment<T: MmaInput, const MT: usize, const NT: usize>(
    a: &SharedTile<'_, T>,
    b: &SharedTile<'_, T>,
    c: &AccTile<T::Acc, MT, NT>,
) -> AccTile<T::Acc, MT, NT> {
    use super::{mma, FragA, FragB};
    let steps = check_shapes::<T, MT, NT>(a, b);
    let mut d = *c;
    for step in 0..steps {
        let k = step * T::K;
        let fa: [FragA<T>; MT] = core::array::from_fn(|i| a.frag_a(16 * i, k));
        let fb: [FragB<T>; NT] = core::array::from_fn(|j| b.frag_b(k, 8 * j));
        for i in 0..MT {
            for j in 0..NT {
                d.frags[i][j] = mma(&fa[i], &fb[j], &d.frags[i][j]);
            }
        }
    }
    d
}

/// The k-steps of `a·b` (depth / K), after checking the windows' shapes against the tile's.
#[inline(always)]
#[track_caller]
pub(crate) fn check_shapes<T: MmaInput, const MT: usize, const NT: usize>(
    a: &SharedTile<'_, T>,
    b: &SharedTile<'_, T>,
) -> usize {
    let ((a_rows, depth), (b_rows, b_cols)) = (a.shape(), b.shape());
    if a_rows != 16 * MT || b_cols != 8 * NT || b_rows != depth || !depth.is_multiple_of(T::K) {
        shape_mismatch((a_rows, depth), (b_rows, b_cols), (16 * MT, 8 * NT, T::K));
    }
    depth / T::K
}

#[cold]
#[track_caller]
fn shape_mismatch(
    a: (usize, usize),
    b: (usize, usize),
    (rows, cols, k): (usize, usize, usize),
) -> ! {
    #[cfg(target_arch = "nvptx64")]
    {
        let _ = (a, b, rows, cols, k);
        // SAFETY: `trap` aborts the kernel; it has no preconditions.
        unsafe { core::arch::nvptx::trap() }
    }
    #[cfg(not(target_arch = "nvptx64"))]
    panic!(
        "mma_tiles: windows of {}×{} and {}×{} for an accumulator tile of {rows}×{cols}: A must be \
         {rows} rows, B {cols} columns, and both as deep, a multiple of {k}",
        a.0, a.1, b.0, b.1
    )
}

/// What `#[kernel]`'s split path calls instead of [`mma_tiles`] in `acc = mma_tiles(..);` (or
/// `let d = mma_tiles(..);`): this thread's windows and accumulators, which the block's step
/// multiplies with its warp's (`split_steps::collective::MmaTilesCollective`). In checked mode, the
/// lane's fragment loads are made here (recorded as this thread's reads, at this place); their
/// values are read again in the step, unchanged, as no thread runs in between.
#[doc(hidden)]
#[cfg(not(target_arch = "nvptx64"))]
#[inline(always)]
#[track_caller]
pub fn __split_mma_tiles<T: MmaInput, const MT: usize, const NT: usize>(
    a: &SharedTile<'_, T>,
    b: &SharedTile<'_, T>,
    c: &AccTile<T::Acc, MT, NT>,
) -> super::tile_product::MmaTilesParts<T, MT, NT> {
    let steps = check_shapes::<T, MT, NT>(a, b);
    if a.checks_accesses() || b.checks_accesses() {
        for step in 0..steps {
            for i in 0..MT {
                a.frag_a(16 * i, step * T::K);
            }
            for j in 0..NT {
                b.frag_b(step * T::K, 8 * j);
            }
        }
    }
    super::tile_product::MmaTilesParts::new(a.window(), b.window(), *c)
}
