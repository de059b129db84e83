//! Warp operations: the 32 threads of a warp exchanging registers without shared memory.
//!
//! A warp is 32 consecutive threads of a block in x-fastest order (thread `t` is lane `t % 32` of
//! warp `t / 32`). Every operation takes a member mask, as CUDA's `*_sync` functions: the lanes
//! that take part, each of which must call the same operation with the same mask, the caller
//! included. On the GPU these are PTX `shfl.sync`, `vote.sync` and `bar.warp.sync`; on the CPU
//! executor the lanes of the mask wait for each other and exchange values the same way, and a
//! lane that never arrives is reported as warp divergence.
//!
//! ```ignore
//! // Sum of a warp's values, in every lane:
//! let total = warp::reduce_add(x[i]);
//! ```

use crate::backend::{Backend, Machine};
use crate::warp_value::Shuffle;
pub use crate::warp_value::WarpValue;
use core::ops::Add;

pub use crate::machine::WARP_SIZE;

pub use crate::machine::FULL_MASK;

/// This thread's lane in its warp, `0..32`.
#[inline(always)]
pub fn lane_id() -> u32 {
    (linear_thread() % WARP_SIZE as usize) as u32
}

/// This thread's warp in its block.
#[inline(always)]
pub fn warp_id() -> u32 {
    (linear_thread() / WARP_SIZE as usize) as u32
}

/// The mask of the lanes this thread's warp has: all 32, except in the last warp of a block
/// whose size is not a multiple of 32.
#[inline(always)]
pub fn warp_mask() -> u32 {
    let d = Machine::block_dim();
    let threads = d.x as usize * d.y as usize * d.z as usize;
    let lanes = (threads - warp_id() as usize * WARP_SIZE as usize).min(WARP_SIZE as usize);
    if lanes == WARP_SIZE as usize {
        FULL_MASK
    } else {
        (1u32 << lanes) - 1
    }
}

#[inline(always)]
fn linear_thread() -> usize {
    let (t, d) = (Machine::thread_idx(), Machine::block_dim());
    (t.z as usize * d.y as usize + t.y as usize) * d.x as usize + t.x as usize
}

/// The value `value` of lane `src_lane` (CUDA `__shfl_sync`). Reading from a lane outside `mask`
/// is undefined on the GPU; the CPU executor gives the caller's own value.
#[inline(always)]
#[track_caller]
pub fn shfl_sync<T: WarpValue>(mask: u32, value: T, src_lane: u32) -> T {
    Machine::shfl(Shuffle::Idx, mask, value, src_lane)
}

/// The value of lane `lane_id() - delta`; lanes below `delta` keep their own (CUDA
/// `__shfl_up_sync`).
#[inline(always)]
#[track_caller]
pub fn shfl_up_sync<T: WarpValue>(mask: u32, value: T, delta: u32) -> T {
    Machine::shfl(Shuffle::Up, mask, value, delta)
}

/// The value of lane `lane_id() + delta`; lanes whose source is past lane 31 keep their own (CUDA
/// `__shfl_down_sync`).
#[inline(always)]
#[track_caller]
pub fn shfl_down_sync<T: WarpValue>(mask: u32, value: T, delta: u32) -> T {
    Machine::shfl(Shuffle::Down, mask, value, delta)
}

/// The value of lane `lane_id() ^ lane_mask` (CUDA `__shfl_xor_sync`): the butterfly exchange of
/// tree reductions.
#[inline(always)]
#[track_caller]
pub fn shfl_xor_sync<T: WarpValue>(mask: u32, value: T, lane_mask: u32) -> T {
    Machine::shfl(Shuffle::Xor, mask, value, lane_mask)
}

/// Whether `predicate` holds in every lane of `mask` (CUDA `__all_sync`).
#[inline(always)]
#[track_caller]
pub fn all_sync(mask: u32, predicate: bool) -> bool {
    Machine::vote_all(mask, predicate)
}

/// Whether `predicate` holds in some lane of `mask` (CUDA `__any_sync`).
#[inline(always)]
#[track_caller]
pub fn any_sync(mask: u32, predicate: bool) -> bool {
    Machine::vote_any(mask, predicate)
}

/// The lanes of `mask` where `predicate` holds, as bits (CUDA `__ballot_sync`).
#[inline(always)]
#[track_caller]
pub fn ballot_sync(mask: u32, predicate: bool) -> u32 {
    Machine::ballot(mask, predicate)
}

/// Waits until every lane of `mask` is here (CUDA `__syncwarp`), and orders their shared-memory
/// accesses before it before their accesses after it: the CPU executor's race checker knows this.
#[inline(always)]
#[track_caller]
pub fn sync_warp(mask: u32) {
    Machine::sync_warp(mask)
}

/// Reduces `value` over the lanes of this warp with `op`, in a tree of `shfl_down_sync`, and
/// gives the result to every lane. Every lane of the warp ([`warp_mask`]) must call it.
#[inline(always)]
#[track_caller]
pub fn reduce<T: WarpValue>(value: T, op: impl Fn(T, T) -> T) -> T {
    let mask = warp_mask();
    let lanes = mask.count_ones();
    #[cfg(target_arch = "nvptx64")]
    {
        let lane = lane_id();
        let mut acc = value;
        let mut offset = WARP_SIZE / 2;
        while offset > 0 {
            let other = shfl_down_sync(mask, acc, offset);
            if lane + offset < lanes {
                acc = op(acc, other);
            }
            offset /= 2;
        }
        shfl_sync(mask, acc, 0)
    }
    // The executor gathers every lane's value in one step and each lane folds them in the GPU's
    // order (lane l takes lane l + offset, for offsets 16, 8, 4, 2, 1), so the result is the
    // same, bit for bit, with one suspension instead of six.
    #[cfg(not(target_arch = "nvptx64"))]
    {
        let lanes = lanes as usize;
        let mut acc =
            Machine::warp_gather(mask, value.to_bits64(), warp_id() as usize).map(T::from_bits64);
        let mut offset = WARP_SIZE as usize / 2;
        while offset > 0 {
            for lane in 0..lanes.saturating_sub(offset) {
                acc[lane] = op(acc[lane], acc[lane + offset]);
            }
            offset /= 2;
        }
        acc[0]
    }
}

/// The sum of `value` over this warp's lanes, in every lane (CUDA `__reduce_add_sync` over the
/// whole warp). Every lane of the warp must call it.
#[inline(always)]
#[track_caller]
pub fn reduce_add<T: WarpValue + Add<Output = T>>(value: T) -> T {
    reduce(value, |a, b| a + b)
}

/// The smallest `value` of this warp's lanes, in every lane. Every lane of the warp must call it.
#[inline(always)]
#[track_caller]
pub fn reduce_min<T: WarpValue + PartialOrd>(value: T) -> T {
    reduce(value, |a, b| if b < a { b } else { a })
}

/// The largest `value` of this warp's lanes, in every lane. Every lane of the warp must call it.
#[inline(always)]
#[track_caller]
pub fn reduce_max<T: WarpValue + PartialOrd>(value: T) -> T {
    reduce(value, |a, b| if b > a { b } else { a })
}
