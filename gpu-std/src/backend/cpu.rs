//! The CPU executor's [`Backend`]: each primitive calls down into the executor's runtime
//! (`crate::cpu`), which keeps the simulated thread's context and runs a block's threads
//! cooperatively.

pub(crate) mod async_copy;
mod atomic;
pub(crate) mod constant;
pub(crate) mod global;
pub(crate) mod shared;

use super::Backend;
use crate::cpu::{self, Wait, WarpOp as Op};
use crate::machine::{Dim3, Scope};
use crate::print::format::{CFormat, PrintArgs};
use crate::warp_value::{Shuffle, WarpValue};
use core::panic::Location;

/// The CPU executor (every target but `nvptx64`).
pub(crate) struct Cpu;

impl Backend for Cpu {
    #[inline(always)]
    fn thread_idx() -> Dim3 {
        cpu::current_thread()
    }
    #[inline(always)]
    fn block_idx() -> Dim3 {
        cpu::current_block().block_idx
    }
    #[inline(always)]
    fn block_dim() -> Dim3 {
        cpu::current_block().block_dim
    }
    #[inline(always)]
    fn grid_dim() -> Dim3 {
        cpu::current_block().grid_dim
    }
    #[inline(always)]
    fn index_1d() -> usize {
        cpu::current_index_1d()
    }

    #[inline(always)]
    #[track_caller]
    fn sync_threads() {
        cpu::sync_threads()
    }
    #[inline(always)]
    #[track_caller]
    fn sync_threads_count(predicate: bool) -> u32 {
        cpu::sync_threads_count(predicate)
    }

    // --- Warp exchange ---

    #[track_caller]
    fn shfl<T: WarpValue>(op: Shuffle, mask: u32, value: T, arg: u32) -> T {
        let op = match op {
            Shuffle::Idx => Op::ShflIdx,
            Shuffle::Up => Op::ShflUp,
            Shuffle::Down => Op::ShflDown,
            Shuffle::Xor => Op::ShflXor,
        };
        T::from_bits64(join(op, mask, value.to_bits64(), arg))
    }
    #[track_caller]
    fn vote_all(mask: u32, predicate: bool) -> bool {
        join(Op::All, mask, predicate as u64, 0) != 0
    }
    #[track_caller]
    fn vote_any(mask: u32, predicate: bool) -> bool {
        join(Op::Any, mask, predicate as u64, 0) != 0
    }
    #[track_caller]
    fn ballot(mask: u32, predicate: bool) -> u32 {
        join(Op::Ballot, mask, predicate as u64, 0) as u32
    }
    #[track_caller]
    fn sync_warp(mask: u32) {
        join(Op::Sync, mask, 0, 0);
    }

    // --- Grid sync ---

    #[inline(always)]
    #[track_caller]
    unsafe fn grid_sync(_barrier: *mut u32) {
        // Every block of a cooperative launch runs on an OS thread of its own; the executor's
        // barrier is in its launch state, not in device memory.
        cpu::grid_sync()
    }

    // --- Printing ---

    #[inline(always)]
    fn print<A: PrintArgs>(format: &'static CFormat, args: A) {
        cpu::print_line(format.as_bytes(), &args.values());
    }

    // --- Fences ---

    #[inline(always)]
    fn fence(scope: Scope) {
        // A sequentially consistent fence orders at every scope: the host has no narrower one.
        let _ = scope;
        core::sync::atomic::fence(core::sync::atomic::Ordering::SeqCst);
    }
}

impl Cpu {
    /// Every lane's `value`, in lane order (the lanes outside `mask` hold 0), in warp `warp` (the
    /// caller's). Not a [`Backend`] primitive: the CPU executor's `warp::reduce` gathers once where
    /// the GPU's shuffles five times.
    #[track_caller]
    pub(crate) fn warp_gather(mask: u32, value: u64, warp: usize) -> [u64; cpu::WARP] {
        join(Op::Gather, mask, value, 0);
        cpu::gathered(warp)
    }
}

/// One warp operation: checks `mask`, then waits for the lanes of `mask` and exchanges `value`.
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
