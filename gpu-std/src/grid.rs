//! Grid-wide synchronisation: [`Grid::sync()`], Numba's `cg.this_grid().sync()`.
//!
//! A kernel that takes a `grid: Grid` parameter (its last) is cooperative: it can only be
//! launched with `launch_cooperative!` (CUDA's `cuLaunchCooperativeKernel`), which refuses a grid
//! larger than what can be resident on the device at once, and gives the launch its own barrier
//! in device memory; the host passes the parameter, not the caller. A plain launch of it is an
//! error, never a hang.
//!
//! ```ignore
//! #[kernel]
//! pub fn two_phases(x: &[f32], partial: Out<f32>, grid: Grid) {
//!     // phase 1: every block writes its partial result
//!     grid.sync(); // every block's writes are visible to every block from here
//!     // phase 2: read the other blocks' partials
//! }
//! ```
//!
//! On the GPU, `sync()` is what CUDA's cooperative groups do: a block barrier, then thread 0 of
//! each block adds to the launch's barrier word with a device-scope fence and waits until the
//! word's top bit flips (the last block to arrive flips it), then a block barrier again. On the CPU
//! executor every block of a cooperative launch runs at once, one OS thread each, and a block that
//! ends while others wait at a `sync()` is a [`KernelBug::GridSyncDivergence`] error.
//!
//! [`KernelBug::GridSyncDivergence`]: crate::cpu::KernelBug::GridSyncDivergence

use crate::backend::{Backend, Machine};
use crate::shared::BlockScope;
use core::marker::PhantomData;

/// The grid of a cooperative launch: a kernel's `grid: Grid` parameter. It borrows the launch's
/// block scope, so it cannot outlive the kernel.
#[derive(Clone, Copy, Debug)]
pub struct Grid<'a> {
    /// The launch's barrier word in device memory (unused on the CPU executor).
    barrier: *mut u32,
    _scope: PhantomData<&'a BlockScope>,
}

impl<'a> Grid<'a> {
    /// Used by `#[kernel]`.
    ///
    /// # Safety
    /// `barrier` must be this launch's own zeroed barrier word in device memory (on the GPU),
    /// given to every block of a launch whose blocks are all resident at once.
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn from_raw(_scope: &'a BlockScope, barrier: *mut u32) -> Self {
        Grid {
            barrier,
            _scope: PhantomData,
        }
    }

    /// Waits until every thread of every block of the launch has reached this `sync()`; memory
    /// written before it by any thread is visible to every thread after it.
    ///
    /// Every thread of every block must call it the same number of times (as `sync_threads()`
    /// within a block): on the CPU executor a block that does not is an error naming the
    /// blocks; on a GPU the grid hangs.
    #[inline(always)]
    #[track_caller]
    pub fn sync(&self) {
        // SAFETY: `from_raw`'s contract: the barrier word is this launch's, and every block is
        // resident, so the wait ends once all have arrived.
        unsafe { Machine::grid_sync(self.barrier) };
    }
}
