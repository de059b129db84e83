//! The CPU executor's grid barrier: `Grid::sync()` of a cooperative launch, whose blocks all run
//! at once, one OS thread each.
//!
//! A grid sync is a block barrier, then thread 0 of the block waits on the launch's
//! [`GridBarrier`] (its other threads are suspended at the next block barrier), then a block
//! barrier again: the shape of CUDA's cooperative groups. A block that ends while others wait
//! at a grid sync is reported as [`KernelBug::GridSyncDivergence`], never a hang.

use super::bug::{raise, KernelBug};
use super::context::{current_block, current_linear, current_thread};
use super::interrupt;
use super::run::sync_threads_at;
use crate::machine::Dim3;
use core::cell::Cell;
use core::panic::Location;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Duration;

/// How often a waiting block looks at the deadline.
const POLL: Duration = Duration::from_millis(20);

/// The barrier of one cooperative launch: every block's thread 0 waits here at each grid sync.
#[derive(Debug)]
pub struct GridBarrier {
    blocks: u64,
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Debug, Default)]
struct State {
    /// Blocks waiting at the current sync.
    arrived: u64,
    /// Syncs completed.
    generation: u64,
    /// A block that ended (first one), and where the first waiter waits.
    ended: Option<Dim3>,
    waiting_at: Option<&'static Location<'static>>,
    /// A block stopped with an error: the others stop too.
    failed: bool,
}

/// The unwinding payload of a block stopped because another block of its cooperative launch
/// failed first: the executor reports that block's error, not this.
#[derive(Debug)]
pub struct GridAbandoned;

impl GridBarrier {
    /// The barrier of a launch of `blocks` blocks.
    pub fn new(blocks: u64) -> Self {
        GridBarrier {
            blocks,
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Tells the blocks waiting (or to wait) that `block` has ended, `failed` or not: a waiting
    /// block can then never be released.
    pub fn block_ended(&self, block: Dim3, failed: bool) {
        let mut state = self.lock();
        if failed {
            state.failed = true;
        } else {
            state.ended.get_or_insert(block);
        }
        self.changed.notify_all();
    }

    /// Thread 0 of a block at a grid sync: returns, with the syncs completed, when every block
    /// has arrived.
    fn wait(&self, site: &'static Location<'static>) -> u64 {
        let mut state = self.lock();
        let generation = state.generation;
        state.arrived += 1;
        if state.arrived == self.blocks {
            state.arrived = 0;
            state.generation += 1;
            state.waiting_at = None;
            self.changed.notify_all();
            return state.generation;
        }
        state.waiting_at.get_or_insert(site);
        loop {
            if state.generation != generation {
                return state.generation;
            }
            if state.failed {
                drop(state);
                std::panic::resume_unwind(std::boxed::Box::new(GridAbandoned));
            }
            if let Some(ended) = state.ended {
                let waiting = state.arrived;
                drop(state);
                let here = current_block().block_idx;
                let detail = std::format!(
                    "block {here} and {} other(s) wait at grid.sync() at {site}, but block \
                     {ended} ended without reaching it",
                    waiting - 1
                );
                raise(current_thread(), KernelBug::GridSyncDivergence { detail });
            }
            state = self
                .changed
                .wait_timeout(state, POLL)
                .unwrap_or_else(|p| p.into_inner())
                .0;
            // Not while holding the lock: a passed deadline unwinds from here.
            drop(state);
            interrupt::check_deadline();
            state = self.lock();
        }
    }
}

std::thread_local! {
    static GRID: Cell<Option<*const GridBarrier>> = const { Cell::new(None) };
    /// Grid syncs the block on this OS thread has passed (one block per OS thread in a
    /// cooperative launch; 0 in any other launch).
    static GRID_EPOCH: Cell<u64> = const { Cell::new(0) };
}

/// Grid syncs the running block has passed: what orders output accesses of different blocks
/// (checked mode's race check on outputs).
pub(crate) fn current_grid_epoch() -> u64 {
    GRID_EPOCH.get()
}

/// Runs `f` (one block of a cooperative launch) with `barrier` as this OS thread's grid
/// barrier; the previous one is restored after, also when `f` unwinds. An executor internal.
#[doc(hidden)]
pub fn with_grid_barrier<R>(barrier: &GridBarrier, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<*const GridBarrier>, u64);
    impl Drop for Restore {
        fn drop(&mut self) {
            GRID.set(self.0);
            GRID_EPOCH.set(self.1);
        }
    }
    let _restore = Restore(GRID.replace(Some(barrier)), GRID_EPOCH.replace(0));
    f()
}

/// `Grid::sync()` on the CPU executor.
#[track_caller]
pub(crate) fn grid_sync() {
    let site = Location::caller();
    sync_threads_at(site);
    if current_linear() == 0 {
        let Some(barrier) = GRID.get() else {
            panic!(
                "grid.sync() outside a cooperative launch: launch the kernel with \
                 `launch_cooperative!` or `Module::launch_cooperative`"
            );
        };
        // SAFETY: `with_grid_barrier` set the pointer from a reference that outlives its `f`,
        // which is running this block, and clears it when `f` ends.
        let passed = unsafe { &*barrier }.wait(site);
        // The block's other threads wait at the barrier below: none accesses an output until
        // they all see the new epoch.
        GRID_EPOCH.set(passed);
    }
    sync_threads_at(site);
}
