//! The split path's steps for the tensor-core warp collectives, [`crate::mma::mma`] and
//! [`crate::mma::mma_tiles`]: `#[kernel]` ends the region at a statement `let d = mma(..);` (or
//! `d = mma(..);`, and the same for `mma_tiles`) as at a block collective, each thread hands
//! its operands to a [`WarpStep`] (`put`), one step per block (`fold`) does every warp's work at
//! once, and the region after binds each thread's part of D. No thread suspends: on the
//! coroutine path (and in a function the macro cannot see into) each `mma` is a warp
//! rendezvous, a switch per thread; here it is a store per thread and one multiply per warp,
//! with the same lane layout and the same order of the k-sum (`cpu::mma`), so the same bits.
//!
//! A warp whose lanes all returned before the call does nothing (as on the GPU); one with some
//! lanes there and others returned is warp divergence, reported as the coroutine path does.

use crate::cpu::bug::{raise, KernelBug};
use crate::cpu::mma::{multiply, Operands, Tiles};
use crate::cpu::regions::Regions;
use crate::cpu::stack_guard::on_step_stack;
use crate::cpu::waits::WARP;
use crate::machine::Dim3;
use crate::mma::product::MmaParts;
use crate::mma::tile_product::{warp_product, MmaTilesParts, Scratch};
use crate::mma::{AccTile, FragC, MmaInput};
use core::cell::{Ref, RefCell};
use core::marker::PhantomData;
use core::panic::Location;
use std::format;
use std::thread_local;
use std::vec::Vec;

/// One warp-collective call site of one block on the split path: what each thread hands over
/// (`P`), whether it has, and what each gets (`R`). The buffers are kept from step to step (and
/// block to block): a step allocates nothing.
pub(super) struct WarpStep<P, R> {
    lanes: RefCell<Lanes<P>>,
    results: RefCell<WarpResults<R>>,
}

/// The threads' parts at one call site.
struct Lanes<P> {
    parts: Vec<P>,
    arrived: Vec<bool>,
    /// How many have arrived since the last step.
    count: usize,
}

/// What each thread of the block gets from a step of a warp collective.
#[doc(hidden)]
pub struct WarpResults<R> {
    values: Vec<R>,
    block_dim: Dim3,
}

impl<R: Copy> WarpResults<R> {
    /// Thread `tid`'s result.
    #[inline(always)]
    pub fn get(&self, tid: Dim3) -> R {
        self.values[linear(tid, self.block_dim)]
    }
}

/// Thread `tid`'s place in a block of `d`'s threads, x fastest.
#[inline(always)]
fn linear(tid: Dim3, d: Dim3) -> usize {
    (tid.z as usize * d.y as usize + tid.y as usize) * d.x as usize + tid.x as usize
}

impl<P, R> Default for WarpStep<P, R> {
    fn default() -> Self {
        WarpStep {
            lanes: RefCell::new(Lanes {
                parts: Vec::new(),
                arrived: Vec::new(),
                count: 0,
            }),
            results: RefCell::new(WarpResults {
                values: Vec::new(),
                block_dim: Dim3::new(0, 0, 0),
            }),
        }
    }
}

impl<P: Copy + Default, R: Copy + Default> WarpStep<P, R> {
    /// Thread `tid` of `regions`' block reaches the call with `part`.
    #[inline(always)]
    pub(super) fn put(&self, regions: &Regions, tid: Dim3, part: P) {
        let linear = linear(tid, regions.block_dim());
        let mut lanes = self.lanes.borrow_mut();
        if lanes.parts.len() != regions.threads() {
            lanes.resize(regions.threads());
        }
        lanes.parts[linear] = part;
        lanes.count += usize::from(!lanes.arrived[linear]);
        lanes.arrived[linear] = true;
    }

    /// Once every thread ran the region before the call `name` at `site`: `warp(w, parts,
    /// results)` for each warp `w` whose lanes reached it, then what each thread gets, or `None`
    /// if every thread returned before the call (the block is done).
    pub(super) fn fold(
        &self,
        regions: &Regions,
        site: &'static Location<'static>,
        name: &str,
        mut warp: impl FnMut(usize, &[P; WARP], &mut [R; WARP]),
    ) -> Option<Ref<'_, WarpResults<R>>> {
        let threads = regions.threads();
        let block_dim = regions.block_dim();
        let mut lanes = self.lanes.borrow_mut();
        if lanes.count == 0 {
            return None;
        }
        if lanes.count < threads {
            lanes.check_whole_warps(block_dim, site, name);
        }
        if !threads.is_multiple_of(WARP) && lanes.arrived[threads - 1] {
            // As the coroutine path's mask check (`check_warp_mask`).
            let (w, these) = (threads / WARP, threads % WARP);
            let detail = format!(
                "mask 0xffffffff of {name} names lanes past lane {} but warp {w} of this block \
                 has only {these} lanes (use warp::warp_mask())",
                these - 1,
            );
            let tid = crate::cpu::context::linear_to_dim(w * WARP, block_dim);
            drop(lanes);
            raise(tid, KernelBug::WarpMask { detail });
        }
        let mut results = self.results.borrow_mut();
        results.block_dim = block_dim;
        results.values.resize(threads, R::default());
        let lanes = &mut *lanes;
        for (w, (these, out)) in lanes
            .parts
            .chunks_exact(WARP)
            .zip(results.values.chunks_exact_mut(WARP))
            .enumerate()
        {
            // A whole warp arrived or none did (`check_whole_warps`); none: nothing to do.
            if lanes.arrived[w * WARP] {
                let these = these.try_into().expect("chunks of a warp");
                warp(w, these, out.try_into().expect("chunks of a warp"));
            }
        }
        lanes.arrived.fill(false);
        lanes.count = 0;
        drop(results);
        Some(self.results.borrow())
    }
}

impl<P: Copy + Default> Lanes<P> {
    /// Room for a block of `threads` threads, none arrived.
    #[cold]
    fn resize(&mut self, threads: usize) {
        self.parts.resize(threads, P::default());
        self.arrived.clear();
        self.arrived.resize(threads, false);
        self.count = 0;
    }

    /// Some threads reached the call `name` and others returned before it: a warp with both is
    /// warp divergence (as the coroutine path reports it); a warp whose lanes all returned does
    /// nothing (as on the GPU).
    #[cold]
    fn check_whole_warps(&self, block_dim: Dim3, site: &'static Location<'static>, name: &str) {
        for (w, these) in self.arrived.chunks(WARP).enumerate() {
            let here = these.iter().filter(|&&a| a).count();
            if here != 0 && here < these.len() {
                let first = these.iter().position(|&a| a).unwrap_or(0);
                let missing = these.iter().position(|&a| !a).unwrap_or(0);
                let detail = format!(
                    "lane {first} of warp {w} waits in {name}(mask 0xffffffff) at {site}, but \
                     lane {missing} returned without reaching it"
                );
                raise(
                    crate::cpu::context::linear_to_dim(w * WARP + first, block_dim),
                    KernelBug::WarpDivergence { detail },
                );
            }
        }
    }
}

/// The operands of one `mma` call site of one block, as the threads reach it.
#[doc(hidden)]
pub struct MmaCollective<T: MmaInput> {
    step: WarpStep<Operands, FragC<T::Acc>>,
    _t: PhantomData<T>,
}

thread_local! {
    /// Each warp's recent tiles (by warp of the block): shared by every call site, since
    /// consecutive sites (the accumulators of a tile of C) multiply the same fragments.
    static TILES: RefCell<Vec<Tiles>> = const { RefCell::new(Vec::new()) };
}

impl<T: MmaInput> Default for MmaCollective<T> {
    fn default() -> Self {
        MmaCollective {
            step: WarpStep::default(),
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
        self.step.put(regions, tid, parts.operands);
    }

    /// Every warp's `mma` at the call's `site`, once every thread ran the region before it:
    /// what each thread gets, or `None` if every thread returned before the call (the block is
    /// done).
    pub fn fold(
        &self,
        regions: &Regions,
        site: &'static Location<'static>,
    ) -> Option<Ref<'_, WarpResults<FragC<T::Acc>>>> {
        // The warp's product is the executor's work: off the simulated thread's stack.
        on_step_stack(|| {
            TILES.with_borrow_mut(|tiles| {
                let warps = regions.threads().div_ceil(WARP);
                if tiles.len() < warps {
                    tiles.resize_with(warps, Tiles::default);
                }
                self.step.fold(regions, site, "mma::mma", |w, these, out| {
                    for (out, bits) in
                        out.iter_mut()
                            .zip(multiply(T::KIND, these, Some(&mut tiles[w])))
                    {
                        out.values = bits.map(bytemuck::cast);
                    }
                })
            })
        })
    }
}

/// The operands of one `mma_tiles` call site of one block, as the threads reach it.
#[doc(hidden)]
pub struct MmaTilesCollective<T: MmaInput, const MT: usize, const NT: usize> {
    step: WarpStep<MmaTilesParts<T, MT, NT>, AccTile<T::Acc, MT, NT>>,
    scratch: RefCell<Scratch>,
}

impl<T: MmaInput, const MT: usize, const NT: usize> Default for MmaTilesCollective<T, MT, NT> {
    fn default() -> Self {
        MmaTilesCollective {
            step: WarpStep::default(),
            scratch: RefCell::default(),
        }
    }
}

impl<T: MmaInput, const MT: usize, const NT: usize> MmaTilesCollective<T, MT, NT> {
    /// A call no thread has reached.
    #[inline(always)]
    pub fn new() -> Self {
        Self::default()
    }

    /// Thread `tid` of `regions`' block reaches the call with `parts`.
    #[inline(always)]
    pub fn put(&self, regions: &Regions, tid: Dim3, parts: MmaTilesParts<T, MT, NT>) {
        self.step.put(regions, tid, parts);
    }

    /// Every warp's `mma_tiles` at the call's `site` (`tile_product::warp_product`), once every
    /// thread ran the region before it: what each thread gets, or `None` if every thread
    /// returned before the call (the block is done).
    pub fn fold(
        &self,
        regions: &Regions,
        site: &'static Location<'static>,
    ) -> Option<Ref<'_, WarpResults<AccTile<T::Acc, MT, NT>>>> {
        // The warp's product is the executor's work: off the simulated thread's stack.
        on_step_stack(|| {
            let mut scratch = self.scratch.borrow_mut();
            self.step
                .fold(regions, site, "mma::mma_tiles", |w, these, out| {
                    let Err(refused) = warp_product(these, out, &mut scratch) else {
                        return;
                    };
                    let (lane, detail) = refused.describe(w, site);
                    let tid =
                        crate::cpu::context::linear_to_dim(w * WARP + lane, regions.block_dim());
                    raise(tid, KernelBug::WarpDivergence { detail });
                })
        })
    }
}
