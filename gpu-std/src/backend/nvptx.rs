//! The GPU's [`Backend`]: PTX special registers, `core::arch::nvptx` intrinsics and inline PTX.

pub(crate) mod async_copy;
mod atomic;
pub(crate) mod constant;
pub(crate) mod global;
pub(crate) mod shared;

use super::Backend;
use crate::machine::{Dim3, Scope};
use crate::print::format::{CFormat, PrintArgs};
use crate::warp_value::{Shuffle, WarpValue};
use core::arch::asm;
use core::arch::nvptx as ptx;

/// The GPU (the `nvptx64-nvidia-cuda` target).
pub(crate) struct Nvptx;

impl Backend for Nvptx {
    // SAFETY (all four): reading a PTX special register has no preconditions inside a kernel.
    #[inline(always)]
    fn thread_idx() -> Dim3 {
        unsafe {
            Dim3::new(
                ptx::_thread_idx_x(),
                ptx::_thread_idx_y(),
                ptx::_thread_idx_z(),
            )
        }
    }
    #[inline(always)]
    fn block_idx() -> Dim3 {
        unsafe {
            Dim3::new(
                ptx::_block_idx_x(),
                ptx::_block_idx_y(),
                ptx::_block_idx_z(),
            )
        }
    }
    #[inline(always)]
    fn block_dim() -> Dim3 {
        unsafe {
            Dim3::new(
                ptx::_block_dim_x(),
                ptx::_block_dim_y(),
                ptx::_block_dim_z(),
            )
        }
    }
    #[inline(always)]
    fn grid_dim() -> Dim3 {
        unsafe { Dim3::new(ptx::_grid_dim_x(), ptx::_grid_dim_y(), ptx::_grid_dim_z()) }
    }
    #[inline(always)]
    fn index_1d() -> usize {
        let (t, b, d) = (Self::thread_idx(), Self::block_idx(), Self::block_dim());
        b.x as usize * d.x as usize + t.x as usize
    }

    #[inline(always)]
    fn sync_threads() {
        // SAFETY: `bar.sync 0` is the block-wide barrier (`__syncthreads`); every thread of the
        // block must reach it, which is the caller's contract documented on `sync_threads`.
        unsafe { core::arch::asm!("bar.sync 0;", options(nostack)) }
    }
    #[inline(always)]
    fn sync_threads_count(predicate: bool) -> u32 {
        let count: u32;
        // SAFETY: `bar.red.popc` is `bar.sync 0` that also counts true predicates; same contract.
        unsafe {
            core::arch::asm!(
                "{{ .reg .pred %oxp_in;",
                "setp.ne.u32 %oxp_in, {1}, 0;",
                "bar.red.popc.u32 {0}, 0, %oxp_in; }}",
                out(reg32) count,
                in(reg32) predicate as u32,
                options(nostack)
            );
        }
        count
    }

    // --- Warp exchange ---

    #[inline(always)]
    fn shfl<T: WarpValue>(op: Shuffle, mask: u32, value: T, arg: u32) -> T {
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
    fn vote_all(mask: u32, predicate: bool) -> bool {
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
    fn vote_any(mask: u32, predicate: bool) -> bool {
        let out: u32;
        // SAFETY: as in `vote_all`.
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
    fn ballot(mask: u32, predicate: bool) -> u32 {
        let out: u32;
        // SAFETY: as in `vote_all`.
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
    fn sync_warp(mask: u32) {
        // SAFETY: waits for the lanes in `mask`, which the caller names correctly.
        unsafe { asm!("bar.warp.sync {0};", in(reg32) mask, options(nostack)) }
    }

    // --- Grid sync ---

    /// What CUDA's cooperative groups do: a block barrier, then thread 0 of each block adds to
    /// the launch's barrier word with a device-scope fence and waits until the word's top bit
    /// flips (the last block to arrive flips it), then a block barrier again.
    #[inline(always)]
    unsafe fn grid_sync(barrier: *mut u32) {
        Self::sync_threads();
        let t = Self::thread_idx();
        if t.x == 0 && t.y == 0 && t.z == 0 {
            let b = Self::block_idx();
            let grid = Self::grid_dim();
            let blocks = grid.x.wrapping_mul(grid.y).wrapping_mul(grid.z);
            let first = b.x == 0 && b.y == 0 && b.z == 0;
            let add = if first {
                FLIP.wrapping_sub(blocks.wrapping_sub(1))
            } else {
                1
            };
            let old: u32;
            // SAFETY: the caller's contract; the fence makes this block's writes visible at
            // device scope before its arrival is (release).
            unsafe {
                asm!(
                    "{{ .reg .u64 %gb; cvta.to.global.u64 %gb, {p};",
                    "fence.acq_rel.gpu;",
                    "atom.relaxed.gpu.global.add.u32 {old}, [%gb], {add}; }}",
                    p = in(reg64) barrier,
                    add = in(reg32) add,
                    old = out(reg32) old,
                    options(nostack)
                );
            }
            loop {
                let now: u32;
                // SAFETY: as above; a relaxed load of the word the other blocks add to.
                unsafe {
                    asm!(
                        "{{ .reg .u64 %gb; cvta.to.global.u64 %gb, {p};",
                        "ld.relaxed.gpu.global.u32 {now}, [%gb]; }}",
                        p = in(reg64) barrier,
                        now = out(reg32) now,
                        options(nostack, readonly)
                    );
                }
                // (No `nanosleep` between polls: it needs PTX ISA 6.2, and we emit 6.0.)
                if (old ^ now) & FLIP != 0 {
                    break;
                }
            }
            // SAFETY: a fence; the acquire half of the arrival above, for every block's writes.
            unsafe { asm!("fence.acq_rel.gpu;", options(nostack)) };
        }
        Self::sync_threads();
    }

    // --- Printing ---

    #[inline(always)]
    fn print<A: PrintArgs>(format: &'static CFormat, args: A) {
        let packed = args.pack();
        // SAFETY: `format` is NUL-terminated (`compile` keeps its last byte zero) and has one
        // conversion per argument, in order, of the argument's kind; `packed` lays the
        // arguments out as CUDA C does, each of the width its conversion reads; every `%s`
        // argument is the address of a NUL-terminated static string (`LiteralStr::new` checks
        // its NUL, `CStr` has one). `vprintf` only reads both during the call.
        unsafe {
            ptx::vprintf(format.as_ptr(), (&raw const packed).cast());
        }
    }

    // --- Fences ---

    #[inline(always)]
    fn fence(scope: Scope) {
        // SAFETY: a fence only orders this thread's memory accesses.
        unsafe {
            match scope {
                Scope::Block => asm!("fence.acq_rel.cta;", options(nostack)),
                Scope::Device => asm!("fence.acq_rel.gpu;", options(nostack)),
                Scope::System => asm!("fence.acq_rel.sys;", options(nostack)),
            }
        }
    }
}

/// The top bit of the barrier word flips once per sync: every block but block 0 adds 1,
/// block 0 adds `2^31 - (blocks - 1)`, so each sync adds exactly `2^31` whatever the order.
const FLIP: u32 = 0x8000_0000;

/// One 32-bit `shfl.sync` of the kind `op`.
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
