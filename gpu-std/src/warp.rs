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
    let d = crate::thread::block_dim();
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
    let (t, d) = (crate::thread::thread_idx(), crate::thread::block_dim());
    (t.z as usize * d.y as usize + t.y as usize) * d.x as usize + t.x as usize
}

mod sealed {
    pub trait Sealed {}
}

/// Values a warp can shuffle: 32-bit ones in one `shfl`, 64-bit ones in two.
pub trait WarpValue: Copy + sealed::Sealed {
    #[doc(hidden)]
    fn to_bits64(self) -> u64;
    #[doc(hidden)]
    fn from_bits64(bits: u64) -> Self;
    #[doc(hidden)]
    const WIDE: bool;
}

macro_rules! warp_value {
    ($($t:ty => $wide:literal, |$v:ident| $to:expr, |$b:ident| $from:expr;)*) => {$(
        impl sealed::Sealed for $t {}
        impl WarpValue for $t {
            #[inline(always)]
            fn to_bits64(self) -> u64 {
                let $v = self;
                $to
            }
            #[inline(always)]
            fn from_bits64($b: u64) -> Self {
                $from
            }
            const WIDE: bool = $wide;
        }
    )*};
}
warp_value! {
    u32 => false, |v| v as u64, |b| b as u32;
    i32 => false, |v| v as u32 as u64, |b| b as u32 as i32;
    f32 => false, |v| v.to_bits() as u64, |b| f32::from_bits(b as u32);
    u64 => true, |v| v, |b| b;
    i64 => true, |v| v as u64, |b| b as i64;
    f64 => true, |v| v.to_bits(), |b| f64::from_bits(b);
}

#[cfg(target_arch = "nvptx64")]
mod imp {
    use super::Shuffle;
    use super::WarpValue;
    use core::arch::asm;

    #[inline(always)]
    fn shfl32(op: Shuffle, mask: u32, value: u32, arg: u32) -> u32 {
        let out: u32;
        // SAFETY: `shfl.sync` reads registers of the lanes in `mask`; the caller is in `mask`
        // (the documented contract of every warp function).
        unsafe {
            match op {
                Shuffle::Idx => asm!("shfl.sync.idx.b32 {0}, {1}, {2}, 0x1f, {3};",
                    out(reg32) out, in(reg32) value, in(reg32) arg, in(reg32) mask, options(nostack)),
                Shuffle::Up => asm!("shfl.sync.up.b32 {0}, {1}, {2}, 0x0, {3};",
                    out(reg32) out, in(reg32) value, in(reg32) arg, in(reg32) mask, options(nostack)),
                Shuffle::Down => asm!("shfl.sync.down.b32 {0}, {1}, {2}, 0x1f, {3};",
                    out(reg32) out, in(reg32) value, in(reg32) arg, in(reg32) mask, options(nostack)),
                Shuffle::Xor => asm!("shfl.sync.bfly.b32 {0}, {1}, {2}, 0x1f, {3};",
                    out(reg32) out, in(reg32) value, in(reg32) arg, in(reg32) mask, options(nostack)),
            }
        }
        out
    }

    #[inline(always)]
    pub fn shfl<T: WarpValue>(op: Shuffle, mask: u32, value: T, arg: u32) -> T {
        let bits = value.to_bits64();
        let low = shfl32(op, mask, bits as u32, arg) as u64;
        let high = if T::WIDE {
            (shfl32(op, mask, (bits >> 32) as u32, arg) as u64) << 32
        } else {
            0
        };
        T::from_bits64(high | low)
    }

    #[inline(always)]
    pub fn all(mask: u32, predicate: bool) -> bool {
        let out: u32;
        // SAFETY: a vote reads a predicate of each lane in `mask`.
        unsafe {
            asm!(
                "{{ .reg .pred %oxp_in, %oxp_out;",
                "setp.ne.u32 %oxp_in, {1}, 0;",
                "vote.sync.all.pred %oxp_out, %oxp_in, {2};",
                "selp.u32 {0}, 1, 0, %oxp_out; }}",
                out(reg32) out, in(reg32) predicate as u32, in(reg32) mask, options(nostack)
            );
        }
        out != 0
    }

    #[inline(always)]
    pub fn any(mask: u32, predicate: bool) -> bool {
        let out: u32;
        // SAFETY: as in `all`.
        unsafe {
            asm!(
                "{{ .reg .pred %oxp_in, %oxp_out;",
                "setp.ne.u32 %oxp_in, {1}, 0;",
                "vote.sync.any.pred %oxp_out, %oxp_in, {2};",
                "selp.u32 {0}, 1, 0, %oxp_out; }}",
                out(reg32) out, in(reg32) predicate as u32, in(reg32) mask, options(nostack)
            );
        }
        out != 0
    }

    #[inline(always)]
    pub fn ballot(mask: u32, predicate: bool) -> u32 {
        let out: u32;
        // SAFETY: as in `all`.
        unsafe {
            asm!(
                "{{ .reg .pred %oxp_in;",
                "setp.ne.u32 %oxp_in, {1}, 0;",
                "vote.sync.ballot.b32 {0}, %oxp_in, {2}; }}",
                out(reg32) out, in(reg32) predicate as u32, in(reg32) mask, options(nostack)
            );
        }
        out
    }

    #[inline(always)]
    pub fn sync(mask: u32) {
        // SAFETY: waits for the lanes in `mask`, which the caller names correctly.
        unsafe { asm!("bar.warp.sync {0};", in(reg32) mask, options(nostack)) }
    }
}

#[cfg(not(target_arch = "nvptx64"))]
mod imp {
    use super::Shuffle;
    use super::WarpValue;
    use crate::cpu::{self, Wait, WarpOp as Op};
    use core::panic::Location;

    #[track_caller]
    fn join(op: Op, mask: u32, value: u64, arg: u32) -> u64 {
        cpu::check_warp_mask(op, mask);
        cpu::wait(Wait::Warp {
            op,
            mask,
            value,
            arg,
            site: Location::caller(),
        })
    }

    #[track_caller]
    pub fn shfl<T: WarpValue>(op: Shuffle, mask: u32, value: T, arg: u32) -> T {
        let op = match op {
            Shuffle::Idx => Op::ShflIdx,
            Shuffle::Up => Op::ShflUp,
            Shuffle::Down => Op::ShflDown,
            Shuffle::Xor => Op::ShflXor,
        };
        T::from_bits64(join(op, mask, value.to_bits64(), arg))
    }
    #[track_caller]
    pub fn all(mask: u32, predicate: bool) -> bool {
        join(Op::All, mask, predicate as u64, 0) != 0
    }
    #[track_caller]
    pub fn any(mask: u32, predicate: bool) -> bool {
        join(Op::Any, mask, predicate as u64, 0) != 0
    }
    #[track_caller]
    pub fn ballot(mask: u32, predicate: bool) -> u32 {
        join(Op::Ballot, mask, predicate as u64, 0) as u32
    }
    #[track_caller]
    pub fn sync(mask: u32) {
        join(Op::Sync, mask, 0, 0);
    }
    /// Every lane's `value`, in lane order: the lanes outside `mask` hold 0.
    #[track_caller]
    pub fn gather(mask: u32, value: u64) -> [u64; cpu::WARP] {
        join(Op::Gather, mask, value, 0);
        cpu::gathered(super::warp_id() as usize)
    }
}

/// Which lane a shuffle reads from.
#[derive(Clone, Copy)]
enum Shuffle {
    Idx,
    Up,
    Down,
    Xor,
}

/// The value `value` of lane `src_lane` (CUDA `__shfl_sync`). Reading from a lane outside `mask`
/// is undefined on the GPU; the CPU executor gives the caller's own value.
#[inline(always)]
#[track_caller]
pub fn shfl_sync<T: WarpValue>(mask: u32, value: T, src_lane: u32) -> T {
    imp::shfl(Shuffle::Idx, mask, value, src_lane)
}

/// The value of lane `lane_id() - delta`; lanes below `delta` keep their own (CUDA
/// `__shfl_up_sync`).
#[inline(always)]
#[track_caller]
pub fn shfl_up_sync<T: WarpValue>(mask: u32, value: T, delta: u32) -> T {
    imp::shfl(Shuffle::Up, mask, value, delta)
}

/// The value of lane `lane_id() + delta`; lanes whose source is past lane 31 keep their own (CUDA
/// `__shfl_down_sync`).
#[inline(always)]
#[track_caller]
pub fn shfl_down_sync<T: WarpValue>(mask: u32, value: T, delta: u32) -> T {
    imp::shfl(Shuffle::Down, mask, value, delta)
}

/// The value of lane `lane_id() ^ lane_mask` (CUDA `__shfl_xor_sync`): the butterfly exchange of
/// tree reductions.
#[inline(always)]
#[track_caller]
pub fn shfl_xor_sync<T: WarpValue>(mask: u32, value: T, lane_mask: u32) -> T {
    imp::shfl(Shuffle::Xor, mask, value, lane_mask)
}

/// Whether `predicate` holds in every lane of `mask` (CUDA `__all_sync`).
#[inline(always)]
#[track_caller]
pub fn all_sync(mask: u32, predicate: bool) -> bool {
    imp::all(mask, predicate)
}

/// Whether `predicate` holds in some lane of `mask` (CUDA `__any_sync`).
#[inline(always)]
#[track_caller]
pub fn any_sync(mask: u32, predicate: bool) -> bool {
    imp::any(mask, predicate)
}

/// The lanes of `mask` where `predicate` holds, as bits (CUDA `__ballot_sync`).
#[inline(always)]
#[track_caller]
pub fn ballot_sync(mask: u32, predicate: bool) -> u32 {
    imp::ballot(mask, predicate)
}

/// Waits until every lane of `mask` is here (CUDA `__syncwarp`), and orders their shared-memory
/// accesses before it before their accesses after it: the CPU executor's race checker knows this.
#[inline(always)]
#[track_caller]
pub fn sync_warp(mask: u32) {
    imp::sync(mask)
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
        let mut acc = imp::gather(mask, value.to_bits64()).map(T::from_bits64);
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
