//! The scheduler of a profiled launch: each warp's lanes run in lockstep, one warp instruction
//! at a time, so the counters of `profile.rs` see which lanes execute each instruction together.
//!
//! At each step the lanes at the earliest position (the lowest pc; in a call, the position of
//! its call site first, then deeper frames before the caller's code after it) execute one
//! instruction. That is the "minimum pc" reconvergence rule: with code laid out as LLVM lays it
//! out (a branch's arms before their join, a loop's body before its exit), the lanes that went
//! one way run until they reach the join, where those that went the other way wait, and the
//! warp goes on whole: what a GPU's SIMT stack does for structured control flow. Lanes at a
//! collective (barrier, shuffle, vote) wait for the block's scheduler as without counters.
//!
//! Limit: a lane spinning on a value another lane of its own warp has yet to write (a
//! warp-internal lock) may spin for ever here, as it does on pre-Volta GPUs; the launch's
//! deadline ends it.

use crate::block::{Block, Grid, Status, ThreadState, Trouble};
use crate::profile::{commit, WarpStep};
use crate::thread;

/// A frame's position for ordering: a lane inside a call is "just before" the instruction after
/// its call site (odd), a lane in the frame itself at its pc (even).
fn position(thread: &ThreadState, frame: usize) -> u64 {
    match thread.calls.get(frame) {
        Some(&(_, back)) => 2 * back as u64 - 1,
        None => 2 * thread.pc as u64,
    }
}

/// Whether `a` is earlier in the code than `b` (see the module's documentation).
fn earlier(a: &ThreadState, b: &ThreadState) -> bool {
    if a.calls.is_empty() && b.calls.is_empty() {
        return a.pc < b.pc;
    }
    for frame in 0..=a.calls.len().min(b.calls.len()) {
        let (x, y) = (position(a, frame), position(b, frame));
        if x != y {
            return x < y;
        }
    }
    false
}

/// Runs every warp of the block until each of its lanes has exited or waits at a collective,
/// counting each warp instruction into `block.profile`.
pub(crate) fn run_warps(grid: &Grid, block: &mut Block) -> Result<(), (usize, Trouble)> {
    let n = block.threads.len();
    let mut next_check = block.instructions + crate::launch::DEADLINE_CHECK_EVERY;
    let mut next_yield = block.instructions + crate::cooperative::YIELD_EVERY;
    let mut next_pc = [0u32; 32];
    for first in (0..n).step_by(32) {
        let lanes = first..(first + 32).min(n);
        loop {
            let mut lead: Option<usize> = None;
            for t in lanes.clone() {
                let thread = &block.threads[t];
                if thread.status == Status::Ready
                    && lead.is_none_or(|l| earlier(thread, &block.threads[l]))
                {
                    lead = Some(t);
                }
            }
            let Some(lead) = lead else {
                break;
            };
            if block.instructions >= next_check {
                next_check = block.instructions + crate::launch::DEADLINE_CHECK_EVERY;
                crate::launch::check_deadline(grid).map_err(|e| (lead, e))?;
            }
            if grid.cooperative && block.instructions >= next_yield {
                next_yield = block.instructions + crate::cooperative::YIELD_EVERY;
                crate::cooperative::yield_now(grid, block).map_err(|e| (lead, e))?;
            }
            let pc = block.threads[lead].pc;
            let calls = block.threads[lead].calls.clone();
            let (mut active, mut pred_on) = (0u32, 0u32);
            for t in lanes.clone() {
                let thread = &block.threads[t];
                if thread.status != Status::Ready || thread.pc != pc || thread.calls != calls {
                    continue;
                }
                let before = block.instructions;
                thread::run::<true>(grid, block, t).map_err(|e| (t, e))?;
                let thread = &block.threads[t];
                if thread.status == Status::Waiting {
                    // At a collective: counted when the block's scheduler completes it.
                    continue;
                }
                let bit = 1 << (t - first);
                active |= bit;
                if block.instructions > before {
                    pred_on |= bit;
                }
                next_pc[t - first] = thread.pc;
            }
            if active != 0 {
                let Block {
                    profile,
                    lane_access,
                    ..
                } = &mut *block;
                if let Some(profile) = profile.as_deref_mut() {
                    let step = WarpStep {
                        op: &grid.program.code[pc as usize].op,
                        active,
                        pred_on,
                        next_pc: &next_pc,
                        accesses: lane_access,
                    };
                    commit(profile, &step);
                }
            }
        }
    }
    Ok(())
}
