//! Rare instructions (`isspacep`, `setp` on packed 16-bit pairs, `mbarrier`), run by the
//! block's scheduler rather than in the interpreter's loop: a thread stops at one as at a
//! collective, and once every thread has stopped, `release` runs each and lets it go on.
//!
//! Why: each arm of `thread::run`'s `match` costs every other instruction a little (register
//! pressure, code layout); callgrind on `speed --small` counted the loop 1 to 5% dearer with
//! these three inline, even out of line behind one call. Here they cost the loop nothing, and a
//! kernel that uses them pays a scheduler round per use (the block's threads are scanned once
//! per round, for all of them).

use crate::block::{Block, Grid, Status, Trouble};
use crate::ir::{Op, Src};

fn get(regs: &[u64], s: Src) -> u64 {
    match s {
        Src::Reg(r) => regs[r as usize],
        Src::Imm(v) => v,
    }
}

/// Runs rare `op` for thread `t`: `Ok(false)` when it must wait at it (an `mbarrier` wait on a
/// phase not yet complete); `None` for an instruction that is not rare.
fn execute(grid: &Grid, block: &mut Block, t: usize, op: &Op) -> Option<Result<bool, Trouble>> {
    let n = grid.program.registers as usize;
    let regs = &mut block.registers[t * n..(t + 1) * n];
    match *op {
        Op::IsSpace { space, d, a } => {
            regs[d as usize] = crate::block::in_window(space, get(regs, a)) as u64
        }
        Op::SetpX2 { .. } => crate::arith::setp_pair(regs, op),
        Op::Mbarrier { op, d, addr, b } => {
            return Some(crate::mbarrier::execute(grid, block, t, op, d, addr, b))
        }
        _ => return None,
    }
    Some(Ok(true))
}

/// Runs every thread waiting at a rare instruction; those that need not wait go on. When none
/// can, `test_wait`s answer false (`mbarrier::release_tests`). Whether any thread can run again;
/// a fault with its thread.
pub(crate) fn release(grid: &Grid, block: &mut Block) -> Result<bool, (usize, Trouble)> {
    let mut progress = false;
    for t in 0..block.threads.len() {
        if block.threads[t].status != Status::Waiting {
            continue;
        }
        let op = &grid.program.code[block.threads[t].pc as usize].op;
        match execute(grid, block, t, op) {
            Some(Ok(true)) => {
                block.threads[t].pc += 1;
                block.threads[t].status = Status::Ready;
                block.instructions += 1;
                progress = true;
            }
            Some(Ok(false)) | None => {}
            Some(Err(trouble)) => return Err((t, trouble)),
        }
    }
    Ok(progress || crate::mbarrier::release_tests(grid, block))
}
