//! `mbarrier`: the split arrive/wait barrier objects of shared memory (PTX ISA, "Parallel
//! Synchronization and Communication Instructions: mbarrier"), as libcu++'s `cuda::barrier`
//! uses them.
//!
//! The object is 64 bits of shared memory, opaque to the program; here it holds the pending
//! arrivals of the current phase (bits 0..32), the expected arrivals of each phase (bits
//! 32..63) and the current phase's parity (bit 63). An arrival that brings the pending count to
//! zero completes the phase: the parity flips and the pending count starts again at the
//! expected one. `arrive` returns the state "arrived in the phase of this parity" (the parity
//! in bit 63), which a wait compares with the object's current parity.
//!
//! A wait whose phase has not completed leaves its thread waiting at the instruction (as at a
//! `bar.sync`) so that the block's other threads run; the scheduler runs it again until the
//! phase completes (`rare.rs`). When nothing else can run, a `test_wait` (which never blocks on a GPU)
//! completes with false; a `try_wait` that no arrival can complete is a deadlock fault, where a
//! GPU would hang. For the race check of `Checks::Strict`, the completion of a phase orders
//! shared memory as a `bar.sync` does (it may then miss a race between threads that did not
//! wait on that phase, and never reports one that the barrier orders).
//!
//! Clusters are blocks of one here, so `.shared::cluster` is the block's own shared memory.

use crate::block::{read_le, resolve, write_le, Block, Grid, Place, Status, Trouble};
use crate::ir::{Addr, MbarrierOp, Op, Reg, Src};
use crate::FaultKind;

const PARITY: u64 = 1 << 63;
const COUNT: u64 = 0xffff_ffff;
/// The largest count `mbarrier.init` takes (PTX ISA: 2^20 - 1).
const MAX_COUNT: u64 = (1 << 20) - 1;

fn value(grid: &Grid, block: &Block, t: usize, s: Src) -> u64 {
    match s {
        Src::Reg(r) => block.registers[t * grid.program.registers as usize + r as usize],
        Src::Imm(v) => v,
    }
}

/// The object's offset in shared memory.
fn object(grid: &Grid, block: &mut Block, t: usize, addr: Addr) -> Result<usize, Trouble> {
    let base = addr.base.map_or(0, |r| value(grid, block, t, Src::Reg(r)));
    let address = base.wrapping_add(addr.offset as u64);
    match resolve(grid, block, t, addr.space, address, 8, 8)? {
        Place::Shared(o) => Ok(o),
        _ => Err(Trouble::new(
            FaultKind::IllegalAddress,
            format!("mbarrier object at {address:#x} is not in shared memory"),
        )),
    }
}

/// Runs `op` for thread `t`: `Ok(false)` for a wait whose phase has not completed (the thread
/// waits at it; nothing was written).
#[inline(never)]
pub(crate) fn execute(
    grid: &Grid,
    block: &mut Block,
    t: usize,
    op: MbarrierOp,
    d: Option<Reg>,
    addr: Addr,
    b: Src,
) -> Result<bool, Trouble> {
    let o = object(grid, block, t, addr)?;
    let b = value(grid, block, t, b);
    if grid.strict {
        // `init` stores the object; the other operations are atomics on it (neither a race
        // nor a record, but an object never initialised is one never stored to).
        let checked = match op {
            MbarrierOp::Init => block.shared.write(t as u32, o, 8),
            _ => block.shared.atomic(o, 8),
        };
        checked.map_err(|c| crate::block::conflict_trouble(c, t, true))?;
    }
    let word = read_le(&block.shared.bytes, o, 8);
    let (pending, expected) = (word & COUNT, (word >> 32) & (COUNT >> 1));
    let result = match op {
        MbarrierOp::Init => {
            if !(1..=MAX_COUNT).contains(&b) {
                return Err(Trouble::new(
                    FaultKind::IllegalAddress,
                    format!("mbarrier.init with count {b} (PTX takes 1 to 2^20 - 1)"),
                ));
            }
            write_le(&mut block.shared.bytes, o, 8, b << 32 | b);
            None
        }
        MbarrierOp::Arrive { drop } => {
            if b == 0 || b > pending || (drop && b > expected) {
                return Err(Trouble::new(
                    FaultKind::IllegalAddress,
                    format!(
                        "mbarrier arrive of {b} on a barrier with {pending} arrival(s) pending \
                         of {expected} (uninitialised, or more arrivals than it expects)"
                    ),
                ));
            }
            let expected = if drop { expected - b } else { expected };
            let next = if pending == b {
                // The phase completes: shared memory is ordered as at a bar.sync.
                block.shared.epoch += 1;
                ((word & PARITY) ^ PARITY) | expected << 32 | expected
            } else {
                (word & PARITY) | expected << 32 | (pending - b)
            };
            write_le(&mut block.shared.bytes, o, 8, next);
            Some(word & PARITY)
        }
        MbarrierOp::Wait { parity, .. } => {
            let waited = if parity { b & 1 } else { b >> 63 };
            if word >> 63 == waited {
                return Ok(false);
            }
            Some(1)
        }
    };
    if let (Some(d), Some(v)) = (d, result) {
        block.registers[t * grid.program.registers as usize + d as usize] = v;
    }
    Ok(true)
}

/// When nothing else can run: each thread waiting at a `test_wait` (which a GPU never blocks)
/// goes on with false. Whether any did.
pub(crate) fn release_tests(grid: &Grid, block: &mut Block) -> bool {
    let n = grid.program.registers as usize;
    let mut released = false;
    for t in 0..block.threads.len() {
        if block.threads[t].status != Status::Waiting {
            continue;
        }
        let pc = block.threads[t].pc as usize;
        if let Op::Mbarrier {
            op: MbarrierOp::Wait {
                blocking: false, ..
            },
            d,
            ..
        } = grid.program.code[pc].op
        {
            if let Some(d) = d {
                block.registers[t * n + d as usize] = 0;
            }
            block.threads[t].pc += 1;
            block.threads[t].status = Status::Ready;
            released = true;
        }
    }
    released
}
