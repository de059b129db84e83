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
use super::collective::Folded;
use super::regions::Regions;
use super::WARP;
use crate::mma::host::{multiply, Operands};
use crate::mma::{FragC, MmaInput};
use crate::thread::Dim3;
use core::cell::RefCell;
use core::marker::PhantomData;
use core::panic::Location;
use std::format;
use std::vec::Vec;

/// One thread's operands of an `mma` on the split path (what `mma::__split_mma` returns).
#[doc(hidden)]
pub struct MmaParts<T> {
    pub(crate) operands: Operands,
    pub(crate) _t: PhantomData<T>,
}

/// The operands of one `mma` call site of one block, as the threads reach it.
#[doc(hidden)]
pub struct MmaCollective<T> {
    /// Thread `linear`'s operands (`None`: it has not reached the call).
    lanes: RefCell<Vec<Option<Operands>>>,
    _t: PhantomData<T>,
}

impl<T: MmaInput> Default for MmaCollective<T> {
    fn default() -> Self {
        MmaCollective {
            lanes: RefCell::new(Vec::new()),
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
        let d = regions.block_dim();
        let linear =
            (tid.z as usize * d.y as usize + tid.y as usize) * d.x as usize + tid.x as usize;
        let mut lanes = self.lanes.borrow_mut();
        if lanes.is_empty() {
            lanes.resize(regions.threads(), None);
        }
        lanes[linear] = Some(parts.operands);
    }

    /// Every warp's `mma` at the call's `site`, once every thread ran the region before it:
    /// what each thread gets, or `None` if every thread returned before the call (the block is
    /// done).
    pub fn fold(
        &self,
        regions: &Regions,
        site: &'static Location<'static>,
    ) -> Option<Folded<FragC<T::Acc>>> {
        let threads = regions.threads();
        let block_dim = regions.block_dim();
        let mut lanes = self.lanes.borrow_mut();
        if lanes.iter().all(Option::is_none) {
            lanes.clear();
            return None;
        }
        let mut results = Vec::with_capacity(threads);
        for (warp, these) in lanes.chunks(WARP).enumerate() {
            let arrived = these.iter().filter(|l| l.is_some()).count();
            if arrived == 0 {
                // The whole warp returned: it does no `mma`.
                results.extend((0..these.len()).map(|_| FragC::zero()));
                continue;
            }
            if arrived < these.len() {
                let here = these.iter().position(Option::is_some).unwrap_or(0);
                let missing = these.iter().position(Option::is_none).unwrap_or(0);
                let detail = format!(
                    "lane {here} of warp {warp} waits in mma::mma(mask 0xffffffff) at {site}, but \
                     lane {missing} returned without reaching it"
                );
                let tid = super::linear_to_dim(warp * WARP + here, block_dim);
                drop(lanes);
                raise(tid, KernelBug::WarpDivergence { detail });
            }
            if these.len() < WARP {
                // As the coroutine path's mask check (`check_warp_mask`).
                let detail = format!(
                    "mask 0xffffffff of mma::mma names lanes past lane {} but warp {warp} of this \
                     block has only {} lanes (use warp::warp_mask())",
                    these.len() - 1,
                    these.len()
                );
                let tid = super::linear_to_dim(warp * WARP, block_dim);
                drop(lanes);
                raise(tid, KernelBug::WarpMask { detail });
            }
            let operands: [Operands; WARP] = core::array::from_fn(|l| these[l].unwrap_or_default());
            let d = multiply(T::KIND, &operands);
            results.extend(d.iter().map(|bits| FragC {
                values: bits.map(bytemuck::cast),
            }));
        }
        lanes.fill(None);
        Some(Folded::new(results, block_dim))
    }
}
