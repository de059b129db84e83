//! Cooperative launches: every block of the grid runs at once, one host thread each, as
//! `cuLaunchCooperativeKernel` guarantees on a GPU, so that a grid barrier in global memory (a
//! block's thread 0 spinning on a word the other blocks add to, as `ferrocuda_std::Grid::sync`
//! and CUDA's cooperative groups do) completes. A spinning thread is an ordinary loop to the
//! emulator, so every thread of a cooperative launch yields its host thread every
//! [`YIELD_EVERY`] instructions; at a yield it also stops if another block faulted, and faults
//! if it has run for [`ALONE_YIELDS`] yields since every other block ended.
//!
//! No block starts before every block's host thread has: a thread that cannot be started (a
//! container's thread limit, an address-space limit) fails the launch before anything ran,
//! instead of leaving the blocks already started waiting for it at a grid barrier for ever.

use std::sync::atomic::Ordering;
use std::sync::{Condvar, Mutex};

use crate::block::{Block, Grid, Trouble};
use crate::FaultKind;

/// Instructions between two yields of a thread of a cooperative launch.
pub(crate) const YIELD_EVERY: u64 = 4096;

/// Yields (of [`YIELD_EVERY`] instructions each) a block may run after every other block of
/// its cooperative launch ended before it is taken to wait at a grid barrier they never
/// reached: about 17 million instructions, far more than the last block of a grid reduction
/// does alone (block 0 summing the partials of a thousand blocks runs about 50,000).
pub(crate) const ALONE_YIELDS: u32 = 1 << 12;

/// The trouble of a block stopped because another one faulted (not reported as the fault).
pub(crate) const STOPPED: &str = "stopped: another block of the cooperative launch faulted";

/// Where the blocks' host threads wait until every one of them has started: `Some(true)` to
/// run, `Some(false)` to end without running (one could not be started).
struct StartingGate {
    open: Mutex<Option<bool>>,
    opened: Condvar,
}

impl StartingGate {
    fn wait(&self) -> bool {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if let Some(run) = *open {
                return run;
            }
            open = self.opened.wait(open).unwrap_or_else(|p| p.into_inner());
        }
    }

    fn open(&self, run: bool) {
        *self.open.lock().unwrap_or_else(|p| p.into_inner()) = Some(run);
        self.opened.notify_all();
    }
}

/// Runs `run_one(block, index)` for every block of `grid` at once, each on its own host thread,
/// once all of those have started; if one cannot be, none runs and the error says why.
pub(crate) fn run_blocks_at_once(
    grid: &Grid,
    blocks: u64,
    run_one: impl Fn(&mut Block, u64) + Sync,
) -> Result<(), String> {
    let gate = StartingGate {
        open: Mutex::new(None),
        opened: Condvar::new(),
    };
    std::thread::scope(|scope| {
        let mut failed = None;
        for index in 0..blocks {
            let (run_one, gate) = (&run_one, &gate);
            let started = std::thread::Builder::new().spawn_scoped(scope, move || {
                if !gate.wait() {
                    return;
                }
                let mut block = Block::new();
                run_one(&mut block, index);
                grid.ended_blocks.fetch_add(1, Ordering::Relaxed);
            });
            if let Err(error) = started {
                failed = Some(format!(
                    "could not start a host thread for block {index} of the cooperative \
                     launch's {blocks} (each block runs on its own, all at once): {error}; \
                     no block ran"
                ));
                break;
            }
        }
        // The threads started so far run, or end at once; the scope joins them either way.
        gate.open(failed.is_none());
        failed.map_or(Ok(()), Err)
    })
}

/// A thread of a cooperative launch lets the other blocks' host threads run.
pub(crate) fn yield_now(grid: &Grid, block: &mut Block) -> Result<(), Trouble> {
    std::thread::yield_now();
    if grid.stop.load(Ordering::Relaxed) {
        return Err(Trouble::new(FaultKind::Divergence, STOPPED));
    }
    let blocks = grid.grid.iter().map(|&d| u64::from(d)).product::<u64>();
    if blocks > 1 && grid.ended_blocks.load(Ordering::Relaxed) == blocks - 1 {
        block.yields_alone += 1;
        if block.yields_alone >= ALONE_YIELDS {
            return Err(Trouble::new(
                FaultKind::Divergence,
                format!(
                    "still running {} million instructions after every other block of the \
                     cooperative launch ended: waiting at a grid barrier (grid.sync()) that not \
                     every block reaches?",
                    (u64::from(ALONE_YIELDS) * YIELD_EVERY).div_ceil(1_000_000)
                ),
            ));
        }
    }
    Ok(())
}
