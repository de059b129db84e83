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
use crate::ir::Op;
use crate::profile::{commit, commit_branch, LaneAccess};
use crate::thread;

/// The pcs where lanes that went different ways may meet again: every branch's and call's
/// target. A profiled lane's run stops before one, so that the lanes arriving there from
/// elsewhere join it.
pub(crate) fn joins(program: &crate::ir::Program) -> Vec<bool> {
    let mut joins = vec![false; program.code.len() + 1];
    let mut mark = |pc: u32| {
        if let Some(j) = joins.get_mut(pc as usize) {
            *j = true;
        }
    };
    for instr in &program.code {
        match instr.op {
            Op::Bra { target } => mark(target),
            Op::BrxIdx { table, .. } => {
                program.tables[table as usize].iter().for_each(|&t| mark(t))
            }
            _ => {}
        }
    }
    for call in &program.calls {
        mark(call.target);
    }
    joins
}

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
///
/// The unit of lockstep is a straight run of code: the lanes at the earliest position each run
/// up to and including the next control-flow instruction (or up to a collective), which they
/// all reach at the same pc, since the code between has no branches. Each instruction of the
/// run is one warp instruction of those lanes; a memory instruction's lanes are matched by pc
/// in their traces (a lane predicated off has no access there).
// Out of line, as it was before the printf split moved the crate's code units about: inlined into
// `schedule::run_block` it costs the unprofiled launches 1% there (callgrind, `speed --small`).
#[inline(never)]
pub(crate) fn run_warps(grid: &Grid, block: &mut Block) -> Result<(), (usize, Trouble)> {
    let n = block.threads.len();
    let code = &grid.program.code;
    let mut next_check = block.instructions + crate::deadline::DEADLINE_CHECK_EVERY;
    let mut next_yield = block.instructions + crate::cooperative::YIELD_EVERY;
    let mut targets = [0u32; 32];
    let mut accesses: Vec<LaneAccess> = Vec::with_capacity(32);
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
                next_check = block.instructions + crate::deadline::DEADLINE_CHECK_EVERY;
                crate::deadline::check_deadline(grid).map_err(|e| (lead, e))?;
            }
            if grid.cooperative && block.instructions >= next_yield {
                next_yield = block.instructions + crate::cooperative::YIELD_EVERY;
                crate::cooperative::yield_now(grid, block).map_err(|e| (lead, e))?;
            }
            let start = block.threads[lead].pc;
            let calls = block.threads[lead].calls.clone();
            let before = block.instructions;
            // Lanes that ran, those that stepped through the run's last instruction, and it.
            let (mut group, mut stepped, mut end, mut branched) = (0u32, 0u32, start, 0);
            for t in lanes.clone() {
                let thread = &block.threads[t];
                if thread.status != Status::Ready || thread.pc != start || thread.calls != calls {
                    continue;
                }
                let lane = t - first;
                block.lane_trace[lane].clear();
                thread::run::<true>(grid, block, t).map_err(|e| (t, e))?;
                group |= 1 << lane;
                let thread = &block.threads[t];
                if thread.status == Status::Waiting {
                    // At a collective: counted when the block's scheduler completes it.
                    end = thread.pc;
                    continue;
                }
                stepped |= 1 << lane;
                end = block.lane_last[lane];
                targets[branched] = thread.pc;
                branched += 1;
            }
            let Block {
                profile,
                lane_trace,
                instructions,
                ..
            } = &mut *block;
            let Some(profile) = profile.as_deref_mut() else {
                continue;
            };
            profile.thread_instructions_pred_on += *instructions - before;
            let mut cursor = [0usize; 32];
            for pc in start..=end {
                let active = if pc == end { stepped } else { group };
                if active == 0 {
                    continue;
                }
                let op = &code[pc as usize].op;
                accesses.clear();
                if matches!(
                    op,
                    Op::Ld { .. } | Op::St { .. } | Op::Atom { .. } | Op::CpAsync { .. }
                ) {
                    // One access per lane, two for `cp.async` (its global read and shared write).
                    for lane in (0..32).filter(|l| active & (1 << l) != 0) {
                        let trace = &lane_trace[lane];
                        while let Some(a) = trace.get(cursor[lane]).filter(|a| a.pc == pc) {
                            accesses.push(*a);
                            cursor[lane] += 1;
                        }
                    }
                }
                commit(profile, op, active, &accesses);
                if pc == end && matches!(op, Op::Bra { .. } | Op::BrxIdx { .. }) {
                    commit_branch(profile, &targets[..branched]);
                }
            }
        }
    }
    Ok(())
}
