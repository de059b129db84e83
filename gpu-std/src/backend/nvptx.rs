//! The GPU's [`Backend`]: PTX special registers, `core::arch::nvptx` intrinsics and inline PTX.

use super::Backend;
use crate::machine::Dim3;
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
}
