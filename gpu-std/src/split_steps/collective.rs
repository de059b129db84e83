//! The split path's block-level step for [`crate::block::reduce`]: `#[kernel]` ends the region
//! at the call, each thread hands its value here ([`Collective::put`]), and one step per block
//! ([`Collective::fold`]) does what the GPU's warps do: each warp's values folded in the tree of
//! `shfl_down` (lane `l` takes lane `l + offset`, offsets 16 to 1), lane 0's result stored in
//! `scratch` as that lane, the barrier's epoch, warp 0's lanes loading the stored values and
//! folding them again. So the result is the GPU's bit for bit, each thread gets what the GPU
//! gives it, and checked mode sees the same shared-memory accesses in the same epochs.

use crate::block::{BlockScratch, BlockValue};
use crate::cpu::bug::{raise, KernelBug};
use crate::cpu::regions::Regions;
use crate::machine::Dim3;
use crate::machine::WARP_SIZE;
use core::cell::RefCell;
use core::panic::Location;
use std::format;
use std::vec::Vec;

pub use super::mma_collective::{MmaCollective, MmaTilesCollective, WarpResults};
pub use crate::mma::product::MmaParts;
pub use crate::mma::tile_product::MmaTilesParts;

pub use crate::block::Parts;

/// The values of one block collective of one block, as the threads reach it.
#[doc(hidden)]
pub struct Collective<V, S, F> {
    /// Thread `linear`'s value (`None`: it has not reached the call).
    values: RefCell<Vec<Option<V>>>,
    /// The block's identity, scratch and combine (the first thread's).
    rest: RefCell<Option<(V, S, F)>>,
}

impl<V, S, F> Default for Collective<V, S, F> {
    fn default() -> Self {
        Collective {
            values: RefCell::new(Vec::new()),
            rest: RefCell::new(None),
        }
    }
}

/// What each thread of the block gets from a collective.
#[doc(hidden)]
pub struct Folded<V> {
    values: Vec<V>,
    block_dim: Dim3,
}

impl<V: Copy> Folded<V> {
    /// Thread `tid`'s result.
    #[inline(always)]
    pub fn get(&self, tid: Dim3) -> V {
        let d = self.block_dim;
        self.values
            [(tid.z as usize * d.y as usize + tid.y as usize) * d.x as usize + tid.x as usize]
    }
}

/// Folds `acc` (one warp's lanes, in lane order) in place as a tree of `shfl_down` does: for
/// offsets 16, 8, 4, 2, 1, lane `l` takes lane `l + offset`'s value of the step before, where that
/// lane exists. Lane 0 ends with the warp's result.
fn shuffle_tree<V: Copy>(acc: &mut [V], combine: &impl Fn(V, V) -> V) {
    let lanes = acc.len();
    let mut offset = WARP_SIZE as usize / 2;
    while offset > 0 {
        // Ascending, so lane + offset still holds the step before's value.
        for lane in 0..lanes.saturating_sub(offset) {
            acc[lane] = combine(acc[lane], acc[lane + offset]);
        }
        offset /= 2;
    }
}

impl<V: BlockValue, S: BlockScratch<V>, F: Fn(V, V) -> V> Collective<V, S, F> {
    /// A collective no thread has reached.
    #[inline(always)]
    pub fn new() -> Self {
        Self::default()
    }

    /// Thread `tid` of `regions`' block reaches the call with `parts`.
    #[inline(always)]
    pub fn put(&self, regions: &Regions, tid: Dim3, parts: Parts<V, S, F>) {
        let d = regions.block_dim();
        let linear =
            (tid.z as usize * d.y as usize + tid.y as usize) * d.x as usize + tid.x as usize;
        let mut values = self.values.borrow_mut();
        if values.is_empty() {
            values.resize_with(regions.threads(), || None);
        }
        values[linear] = Some(parts.value);
        drop(values);
        let mut rest = self.rest.borrow_mut();
        if rest.is_none() {
            *rest = Some((parts.identity, parts.scratch, parts.combine));
        }
    }

    /// The block-level step at the call's `site`, once every thread ran the region before it:
    /// what each thread gets, or `None` if every thread returned before the call (the block is
    /// done). Some threads returned and others not is barrier divergence.
    pub fn fold(&self, regions: &Regions, site: &'static Location<'static>) -> Option<Folded<V>> {
        let threads = regions.threads();
        let values = core::mem::take(&mut *self.values.borrow_mut());
        let arrived = values.iter().filter(|v| v.is_some()).count();
        if arrived < threads {
            if arrived == 0 {
                return None;
            }
            let first = values.iter().position(Option::is_some).unwrap_or(0);
            let detail = format!(
                "{arrived} threads waiting at a block collective (its sync_threads()) at {site}, \
                 but {} threads returned without reaching it",
                threads - arrived
            );
            let tid = crate::cpu::context::linear_to_dim(first, regions.block_dim());
            raise(tid, KernelBug::BarrierDivergence { detail })
        }
        let (identity, scratch, combine) = self
            .rest
            .borrow_mut()
            .take()
            .expect("a thread reached the collective");
        let mut values: Vec<V> = values.into_iter().flatten().collect();
        let warp_size = WARP_SIZE as usize;
        let warps = threads.div_ceil(warp_size);
        for (warp, lanes) in values.chunks_mut(warp_size).enumerate() {
            shuffle_tree(lanes, &combine);
            regions.enter(warp * warp_size);
            scratch.store(warp, lanes[0]);
        }
        // The collective's sync_threads(): every thread is here (none returned).
        let live = regions.barrier(site);
        debug_assert!(live, "every thread reached the collective");
        let lanes = threads.min(warp_size);
        let mut partial: Vec<V> = (0..lanes)
            .map(|lane| {
                if lane < warps {
                    regions.enter(lane);
                    scratch.load(lane)
                } else {
                    identity
                }
            })
            .collect();
        shuffle_tree(&mut partial, &combine);
        values.fill(identity);
        values[..lanes].copy_from_slice(&partial);
        Some(Folded {
            values,
            block_dim: regions.block_dim(),
        })
    }
}
