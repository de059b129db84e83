//! Cooperative launches: every block of the grid runs at once, one host thread each, as
//! `cuLaunchCooperativeKernel` guarantees on a GPU, so that a grid barrier in global memory (a
//! block's thread 0 spinning on a word the other blocks add to, as `ferrocuda_std::Grid::sync`
//! and CUDA's cooperative groups do) completes. A spinning thread is an ordinary loop to the
//! emulator, so every thread of a cooperative launch yields its host thread every
//! [`YIELD_EVERY`] instructions; at a yield it also stops if another block faulted, and faults
//! if it has run for [`ALONE_YIELDS`] yields since every other block ended.

use std::sync::atomic::Ordering;

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

/// Runs `run_one(block, index)` for every block of `grid` at once, each on its own host thread.
pub(crate) fn run_blocks_at_once(
    grid: &Grid,
    blocks: u64,
    run_one: impl Fn(&mut Block, u64) + Sync,
) {
    std::thread::scope(|scope| {
        for index in 0..blocks {
            let run_one = &run_one;
            scope.spawn(move || {
                let mut block = Block::new();
                run_one(&mut block, index);
                grid.ended_blocks.fetch_add(1, Ordering::Relaxed);
            });
        }
    });
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
