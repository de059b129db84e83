//! The split path's step for [`crate::mma::mma`]: `#[kernel]` ends the region at a statement
//! `let d = mma(..);` (or `d = mma(..);`) as at a block collective, each thread hands its
//! operands here ([`MmaCollective::put`]), one step per block ([`MmaCollective::fold`]) does
//! every warp's `mma` at once, and the region after binds each thread's part of D. No thread
//! suspends: on the coroutine path (and in a function the macro cannot see into) each `mma` is
//! a warp rendezvous, a switch per thread; here it is a store per thread and one multiply per
//! warp, with the same lane layout and the same order of the k-sum (`mma::host::multiply`), so
//! the same bits.
//!
//! A warp whose lanes all returned before the call does no `mma` (as on the GPU); one with some
//! lanes there and others returned is warp divergence, reported as the coroutine path does.

use super::bug::{raise, KernelBug};
use super::regions::Regions;
use super::WARP;
use crate::mma::host::{multiply, Operands, Tiles};
use crate::mma::{FragC, MmaInput};
use crate::thread::Dim3;
use core::cell::{Ref, RefCell};
use core::marker::PhantomData;
use core::panic::Location;
use std::format;
use std::thread_local;
use std::vec::Vec;

/// One thread's operands of an `mma` on the split path (what `mma::__split_mma` returns).
#[doc(hidden)]
pub struct MmaParts<T> {
    pub(crate) operands: Operands,
    pub(crate) _t: PhantomData<T>,
}

/// The operands of one `mma` call site of one block, as the threads reach it. The buffers are
/// kept from step to step (and block to block): a step allocates nothing.
#[doc(hidden)]
pub struct MmaCollective<T: MmaInput> {
    /// Thread `linear`'s operands, and whether it has reached the call.
    lanes: RefCell<Lanes>,
    /// What each thread got at the last step.
    results: RefCell<MmaResults<T::Acc>>,
    _t: PhantomData<T>,
}

thread_local! {
    /// Each warp's recent tiles (by warp of the block): shared by every call site, since
    /// consecutive sites (the accumulators of a tile of C) multiply the same fragments.
    static TILES: RefCell<Vec<Tiles>> = const { RefCell::new(Vec::new()) };
}

/// The threads' operands at one call site.
#[derive(Default)]
struct Lanes {
    operands: Vec<Operands>,
    arrived: Vec<bool>,
    /// How many have arrived since the last step.
    count: usize,
}

/// What each thread of the block gets from an `mma` step.
#[doc(hidden)]
pub struct MmaResults<A> {
    values: Vec<FragC<A>>,
    block_dim: Dim3,
}

impl<A: Copy> MmaResults<A> {
    /// Thread `tid`'s part of D.
    #[inline(always)]
    pub fn get(&self, tid: Dim3) -> FragC<A> {
        self.values[linear(tid, self.block_dim)]
    }
}

/// Thread `tid`'s place in a block of `d`'s threads, x fastest.
#[inline(always)]
fn linear(tid: Dim3, d: Dim3) -> usize {
    (tid.z as usize * d.y as usize + tid.y as usize) * d.x as usize + tid.x as usize
}

impl<T: MmaInput> Default for MmaCollective<T> {
    fn default() -> Self {
        MmaCollective {
            lanes: RefCell::new(Lanes::default()),
            results: RefCell::new(MmaResults {
                values: Vec::new(),
                block_dim: Dim3::new(0, 0, 0),
            }),
            _t: PhantomData,
        }
    }
}

impl<T: MmaInput> MmaCollective<T> {
    /// A call no thread has reached.
    #[inline(always)]
    pub fn new() -> Self {
        Self::default()
    }

    /// Thread `tid` of `regions`' block reaches the call with `parts`.
    #[inline(always)]
    pub fn put(&self, regions: &Regions, tid: Dim3, parts: MmaParts<T>) {
        let linear = linear(tid, regions.block_dim());
        let mut lanes = self.lanes.borrow_mut();
        if lanes.operands.len() != regions.threads() {
            lanes.resize(regions.threads());
        }
        lanes.operands[linear] = parts.operands;
        lanes.count += usize::from(!lanes.arrived[linear]);
        lanes.arrived[linear] = true;
    }

    /// Every warp's `mma` at the call's `site`, once every thread ran the region before it:
    /// what each thread gets, or `None` if every thread returned before the call (the block is
    /// done).
    pub fn fold(
        &self,
        regions: &Regions,
        site: &'static Location<'static>,
    ) -> Option<Ref<'_, MmaResults<T::Acc>>> {
        let threads = regions.threads();
        let block_dim = regions.block_dim();
        let arrived = self.lanes.borrow().count;
        if arrived == 0 {
            return None;
        }
        if arrived < threads {
            self.diverged(regions, site);
        }
        let mut lanes = self.lanes.borrow_mut();
        if !threads.is_multiple_of(WARP) && lanes.arrived[threads - 1] {
            // As the coroutine path's mask check (`check_warp_mask`).
            let (warp, these) = (threads / WARP, threads % WARP);
            let detail = format!(
                "mask 0xffffffff of mma::mma names lanes past lane {} but warp {warp} of this \
                 block has only {these} lanes (use warp::warp_mask())",
                these - 1,
            );
            let tid = super::linear_to_dim(warp * WARP, block_dim);
            drop(lanes);
            raise(tid, KernelBug::WarpMask { detail });
        }
        let mut results = self.results.borrow_mut();
        results.block_dim = block_dim;
        results.values.resize(threads, FragC::zero());
        TILES.with_borrow_mut(|tiles| {
            let warps = threads / WARP;
            if tiles.len() < warps {
                tiles.resize_with(warps, Tiles::default);
            }
            for ((these, out), tiles) in lanes
                .operands
                .chunks_exact(WARP)
                .zip(results.values.chunks_exact_mut(WARP))
                .zip(tiles.iter_mut())
            {
                let these: &[Operands; WARP] = these.try_into().expect("chunks of a warp");
                for (out, bits) in out.iter_mut().zip(multiply(T::KIND, these, Some(tiles))) {
                    out.values = bits.map(bytemuck::cast);
                }
            }
        });
        lanes.arrived.fill(false);
        lanes.count = 0;
        drop(results);
        Some(self.results.borrow())
    }

    /// Some threads reached the call and others returned before it: a warp with both is warp
    /// divergence (as the coroutine path reports it); a warp whose lanes all returned does no
    /// `mma` (as on the GPU), and gets zeros.
    #[cold]
    fn diverged(&self, regions: &Regions, site: &'static Location<'static>) {
        let mut lanes = self.lanes.borrow_mut();
        let block_dim = regions.block_dim();
        let arrived = lanes.arrived.clone();
        for (warp, these) in arrived.chunks(WARP).enumerate() {
            let here = these.iter().filter(|&&a| a).count();
            if here == 0 {
                let zero = Operands::default();
                lanes.operands[warp * WARP..][..these.len()].fill(zero);
                continue;
            }
            if here < these.len() {
                let first = these.iter().position(|&a| a).unwrap_or(0);
                let missing = these.iter().position(|&a| !a).unwrap_or(0);
                let detail = format!(
                    "lane {first} of warp {warp} waits in mma::mma(mask 0xffffffff) at {site}, \
                     but lane {missing} returned without reaching it"
                );
                let tid = super::linear_to_dim(warp * WARP + first, block_dim);
                drop(lanes);
                raise(tid, KernelBug::WarpDivergence { detail });
            }
        }
        // Every warp is whole or wholly returned: the zero operands of the returned ones give
        // zeros, which no thread reads (a partial warp's lanes are checked by `fold`).
        lanes.count = regions.threads();
    }
}

impl Lanes {
    /// Room for a block of `threads` threads, none arrived.
    #[cold]
    fn resize(&mut self, threads: usize) {
        self.operands.resize(threads, Operands::default());
        self.arrived.clear();
        self.arrived.resize(threads, false);
        self.count = 0;
    }
}
