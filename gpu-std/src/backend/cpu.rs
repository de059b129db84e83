//! The CPU executor's [`Backend`]: each primitive calls down into the executor's runtime
//! (`crate::cpu`), which keeps the simulated thread's context and runs a block's threads
//! cooperatively.

use super::Backend;
use crate::cpu;
use crate::machine::Dim3;

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
}
