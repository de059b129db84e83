//! Running one block: every thread runs on its own until it exits or reaches a collective
//! (independent thread scheduling, as on Volta and later); then the collectives whose
//! participants have all arrived complete together: warp-level ones (`shfl.sync`, `vote.sync`,
//! `match.sync`, `bar.warp.sync`) when every lane of their mask waits at one, barriers when every
//! non-exited thread of the block does; `activemask` when no lane of its warp can run further.
//! A mask naming a lane that exited or does not exist, and a state
//! where nothing can proceed (a barrier not all threads reach), are faults, never a hang.

use crate::block::{Block, Grid, Status, Trouble};
use crate::ir::*;
use crate::profile::{commit_collective, InstrClass};
use crate::thread;

mod tensor;
use crate::FaultKind;

/// Runs the whole block; on a fault, which thread and the trouble.
pub(crate) fn run_block(grid: &Grid, block: &mut Block) -> Result<(), (usize, Trouble)> {
    let n = block.threads.len();
    // A loop through barriers or warp collectives returns to this loop each time round.
    let mut next_check = crate::deadline::DEADLINE_CHECK_EVERY;
    loop {
        if block.instructions >= next_check {
            next_check = block.instructions + crate::deadline::DEADLINE_CHECK_EVERY;
            if let Err(trouble) = crate::deadline::check_deadline(grid) {
                let t = block
                    .threads
                    .iter()
                    .position(|t| t.status != Status::Exited);
                return Err((t.unwrap_or(0), trouble));
            }
        }
        if block.profile.is_some() {
            crate::lockstep::run_warps(grid, block)?;
        } else {
            for t in 0..n {
                if block.threads[t].status == Status::Ready {
                    thread::run::<false>(grid, block, t).map_err(|e| (t, e))?;
                }
            }
        }
        if block.threads.iter().all(|t| t.status == Status::Exited) {
            return Ok(());
        }
        if release_warp_collectives(grid, block)? {
            continue;
        }
        if release_barrier(grid, block) || crate::rare::release(grid, block)? {
            continue;
        }
        return Err(deadlock(grid, block));
    }
}

fn op_at<'a>(grid: &'a Grid, block: &Block, t: usize) -> &'a Op {
    &grid.program.code[block.threads[t].pc as usize].op
}

fn reg(grid: &Grid, block: &Block, t: usize, s: Src) -> u64 {
    match s {
        Src::Reg(r) => block.registers[t * grid.program.registers as usize + r as usize],
        Src::Imm(v) => v,
    }
}

fn set(grid: &Grid, block: &mut Block, t: usize, d: Reg, v: u64) {
    block.registers[t * grid.program.registers as usize + d as usize] = v;
}

fn warp_mask(op: &Op) -> Option<Src> {
    match op {
        Op::Shfl { mask, .. }
        | Op::Vote { mask, .. }
        | Op::Match { mask, .. }
        | Op::BarWarpSync { mask } => Some(*mask),
        // `.sync.aligned`: every lane of the warp executes the same instruction.
        Op::Mma { .. } | Op::Ldmatrix { .. } => Some(Src::Imm(u32::MAX as u64)),
        _ => None,
    }
}

/// How a fault names a warp collective's participants.
fn mask_name(op: &Op, mask: u32) -> String {
    match op {
        Op::Mma { .. } => "mma.sync.aligned (a collective of all 32 lanes of the warp)".into(),
        Op::Ldmatrix { .. } => {
            "ldmatrix.sync.aligned (a collective of all 32 lanes of the warp)".into()
        }
        _ => format!("warp-level mask {mask:#010x}"),
    }
}

/// Whether two lanes' warp collectives meet: the same operation with the same qualifiers. They
/// may be different instructions (PTX ISA, sm_70+: the lanes of the mask may execute different
/// `shfl.sync`s); LLVM duplicates one into both arms of a branch.
fn same_kind(a: &Op, b: &Op) -> bool {
    match (a, b) {
        (Op::Shfl { mode: x, .. }, Op::Shfl { mode: y, .. }) => x == y,
        (Op::Vote { mode: x, .. }, Op::Vote { mode: y, .. }) => x == y,
        (
            Op::Match {
                mode: x, wide: w, ..
            },
            Op::Match {
                mode: y, wide: v, ..
            },
        ) => x == y && w == v,
        (Op::Mma { kind: x, .. }, Op::Mma { kind: y, .. }) => x == y,
        (
            Op::Ldmatrix {
                count: x,
                trans: tx,
                ..
            },
            Op::Ldmatrix {
                count: y,
                trans: ty,
                ..
            },
        ) => (x, tx) == (y, ty),
        _ => std::mem::discriminant(a) == std::mem::discriminant(b),
    }
}

/// Completes every warp collective whose mask's lanes have all arrived; whether any did.
fn release_warp_collectives(grid: &Grid, block: &mut Block) -> Result<bool, (usize, Trouble)> {
    let n = block.threads.len();
    let mut progress = false;
    for t in 0..n {
        if block.threads[t].status != Status::Waiting {
            continue;
        }
        let op = op_at(grid, block, t);
        if let Op::ActiveMask { .. } = op {
            progress |= release_active_mask(grid, block, t);
            continue;
        }
        let Some(mask_src) = warp_mask(op) else {
            continue;
        };
        let mask = reg(grid, block, t, mask_src) as u32;
        let (warp, lane) = (t / 32, t % 32);
        let divergence = |what: String| (t, Trouble::new(FaultKind::Divergence, what));
        let name = mask_name(op, mask);
        if mask & (1 << lane) == 0 {
            return Err(divergence(format!(
                "{name} does not name the executing lane {lane}"
            )));
        }
        // `match.sync` waits for the non-exited lanes of its mask (PTX ISA) and its result names
        // them; so does `bar.warp.sync` with `Checks::Gpu` (a GPU lets `__syncwarp()` name
        // lanes that returned: Numba's reductions do). Otherwise a collective faults on a lane
        // that exited or does not exist.
        let lenient = matches!(op, Op::BarWarpSync { .. }) && !grid.strict;
        let participants = if matches!(op, Op::Match { .. }) || lenient {
            let gone = |l: usize| {
                warp * 32 + l >= n || block.threads[warp * 32 + l].status == Status::Exited
            };
            mask & !(0..32).filter(|&l| gone(l)).fold(0u32, |m, l| m | 1 << l)
        } else {
            mask
        };
        let mut complete = true;
        for l in (0..32).filter(|l| participants & (1 << l) != 0) {
            let other = warp * 32 + l;
            if other >= n {
                return Err(divergence(format!(
                    "{name} names lane {l}, which does not exist (the block has {n} threads)"
                )));
            }
            match block.threads[other].status {
                Status::Exited => {
                    return Err(divergence(format!(
                        "{name} names lane {l}, which has exited"
                    )))
                }
                Status::Waiting => {
                    let theirs = op_at(grid, block, other);
                    let their_mask = warp_mask(theirs).map(|m| reg(grid, block, other, m) as u32);
                    complete &= same_kind(op, theirs) && their_mask == Some(mask);
                }
                Status::Ready => complete = false,
            }
        }
        if complete {
            let lanes: Vec<usize> = (0..32)
                .filter(|l| participants & (1 << l) != 0)
                .map(|l| warp * 32 + l)
                .collect();
            execute_warp(grid, block, &lanes, participants)?;
            block.shared.warp_syncs[warp] += 1;
            progress = true;
        }
    }
    Ok(progress)
}

/// Answers the `activemask` thread `t` waits at, once no lane of its warp can run further: the
/// lanes waiting at that same instruction are the active ones (the most a GPU's reconvergence
/// could give; PTX leaves which lanes execute together to the hardware). It synchronises
/// nothing. Whether it did.
fn release_active_mask(grid: &Grid, block: &mut Block, t: usize) -> bool {
    let warp = t / 32 * 32..(t / 32 * 32 + 32).min(block.threads.len());
    if warp
        .clone()
        .any(|l| block.threads[l].status == Status::Ready)
    {
        return false;
    }
    let pc = block.threads[t].pc;
    let lanes: Vec<usize> = warp
        .filter(|&l| block.threads[l].status == Status::Waiting && block.threads[l].pc == pc)
        .collect();
    let mask = lanes.iter().fold(0u32, |m, &l| m | 1 << (l % 32));
    for l in lanes {
        if let Op::ActiveMask { d } = *op_at(grid, block, l) {
            set(grid, block, l, d, mask as u64);
        }
        block.threads[l].pc += 1;
        block.threads[l].status = Status::Ready;
    }
    true
}

/// `match.sync`'s result for one lane: the lanes of `mask` whose value equals `lane`'s (`.any`),
/// or `mask` if all of them do and 0 otherwise, with the predicate (`.all`).
fn match_lanes(mode: MatchMode, values: &[u64; 32], mask: u32, lane: usize) -> (u32, bool) {
    let same = (0..32)
        .filter(|&l| mask & (1 << l) != 0 && values[l] == values[lane])
        .fold(0u32, |m, l| m | 1 << l);
    match mode {
        MatchMode::Any => (same, true),
        MatchMode::All if same == mask => (mask, true),
        MatchMode::All => (0, false),
    }
}

fn execute_warp(
    grid: &Grid,
    block: &mut Block,
    lanes: &[usize],
    mask: u32,
) -> Result<(), (usize, Trouble)> {
    // Each lane reads and writes the registers of its own instruction (lanes may meet at
    // different ones: `same_kind`).
    let op = op_at(grid, block, lanes[0]).clone();
    match op {
        Op::Shfl { mode, .. } => {
            let operands: Vec<_> = lanes
                .iter()
                .map(|&t| match *op_at(grid, block, t) {
                    Op::Shfl { d, p, a, b, c, .. } => (d, p, a, b, c),
                    _ => unreachable!("the lanes met at a shfl (same_kind)"),
                })
                .collect();
            let mut values = [0u64; 32];
            for (&t, &(_, _, a, _, _)) in lanes.iter().zip(&operands) {
                values[t % 32] = reg(grid, block, t, a);
            }
            for (&t, &(d, p, _, b, c)) in lanes.iter().zip(&operands) {
                let lane = (t % 32) as i64;
                let (bval, cval) = (
                    reg(grid, block, t, b) as u32 as i64,
                    reg(grid, block, t, c) as u32 as i64,
                );
                let segmask = (cval >> 8) & 0x1f;
                let clamp = cval & 0x1f;
                let max_lane = (lane & segmask) | (clamp & !segmask);
                let min_lane = lane & segmask;
                let (j, ok) = match mode {
                    ShflMode::Up => (lane - bval, lane - bval >= max_lane),
                    ShflMode::Down => (lane + bval, lane + bval <= max_lane),
                    ShflMode::Bfly => (lane ^ bval, (lane ^ bval) <= max_lane),
                    ShflMode::Idx => {
                        let j = min_lane | (bval & 0x1f & !segmask);
                        (j, j <= max_lane)
                    }
                };
                // A source lane outside the mask gives an undefined value (PTX ISA); code such
                // as a partial warp's reduction reads it and discards it. The emulator gives the
                // lane's own value, as the CPU executor does, with the predicate false.
                let (j, ok) = if ok && mask & (1 << j) != 0 {
                    (j, true)
                } else {
                    (lane, false)
                };
                set(grid, block, t, d, values[j as usize]);
                if let Some(p) = p {
                    set(grid, block, t, p, ok as u64);
                }
            }
        }
        Op::Vote { mode, .. } => {
            let operands: Vec<_> = lanes
                .iter()
                .map(|&t| match *op_at(grid, block, t) {
                    Op::Vote { d, p, negate, .. } => (d, p, negate),
                    _ => unreachable!("the lanes met at a vote (same_kind)"),
                })
                .collect();
            let mut ballot = 0u32;
            for (&t, &(_, p, negate)) in lanes.iter().zip(&operands) {
                if (reg(grid, block, t, p) & 1 == 1) != negate {
                    ballot |= 1 << (t % 32);
                }
            }
            let result = match mode {
                VoteMode::All => (ballot == mask) as u64,
                VoteMode::Any => (ballot != 0) as u64,
                VoteMode::Uni => (ballot == 0 || ballot == mask) as u64,
                VoteMode::Ballot => ballot as u64,
            };
            for (&t, &(d, _, _)) in lanes.iter().zip(&operands) {
                set(grid, block, t, d, result);
            }
        }
        Op::Match { mode, wide, .. } => {
            let operands: Vec<_> = lanes
                .iter()
                .map(|&t| match *op_at(grid, block, t) {
                    Op::Match { d, p, a, .. } => (d, p, a),
                    _ => unreachable!("the lanes met at a match (same_kind)"),
                })
                .collect();
            let width = if wide { u64::MAX } else { u32::MAX as u64 };
            let mut values = [0u64; 32];
            for (&t, &(_, _, a)) in lanes.iter().zip(&operands) {
                values[t % 32] = reg(grid, block, t, a) & width;
            }
            for (&t, &(d, p, _)) in lanes.iter().zip(&operands) {
                let (result, all) = match_lanes(mode, &values, mask, t % 32);
                set(grid, block, t, d, result as u64);
                if let Some(p) = p {
                    set(grid, block, t, p, all as u64);
                }
            }
        }
        Op::Mma { kind, .. } => tensor::mma(grid, block, lanes, kind),
        Op::Ldmatrix { count, trans, .. } => tensor::ldmatrix(grid, block, lanes, count, trans)?,
        _ => {}
    }
    for &t in lanes {
        block.threads[t].pc += 1;
        block.threads[t].status = Status::Ready;
    }
    if let Some(profile) = block.profile.as_deref_mut() {
        let class = match op {
            Op::Mma { .. } => InstrClass::Tensor,
            Op::Ldmatrix { .. } => InstrClass::LoadShared,
            _ => InstrClass::WarpCollective,
        };
        commit_collective(profile, class, lanes.len() as u32);
    }
    Ok(())
}

/// Completes the block barrier if every non-exited thread waits at one (with the same id).
fn release_barrier(grid: &Grid, block: &mut Block) -> bool {
    let n = block.threads.len();
    let mut id = None;
    let mut count = 0u64;
    let (mut all, mut any) = (true, false);
    for t in 0..n {
        match block.threads[t].status {
            Status::Exited => continue,
            Status::Ready => return false,
            Status::Waiting => {}
        }
        let (this_id, pred) = match *op_at(grid, block, t) {
            Op::BarSync { id } => (reg(grid, block, t, id), None),
            Op::BarRed { id, p, negate, .. } => (
                reg(grid, block, t, id),
                Some((reg(grid, block, t, p) & 1 == 1) != negate),
            ),
            _ => return false,
        };
        if *id.get_or_insert(this_id) != this_id {
            return false;
        }
        if let Some(v) = pred {
            count += v as u64;
            all &= v;
            any |= v;
        }
    }
    if let Some(profile) = block.profile.as_deref_mut() {
        // One barrier warp instruction per warp with a lane waiting at it.
        for warp in block.threads.chunks(32) {
            let waiting = warp.iter().filter(|t| t.status == Status::Waiting).count();
            if waiting > 0 {
                commit_collective(profile, InstrClass::Barrier, waiting as u32);
            }
        }
    }
    for t in 0..n {
        if block.threads[t].status != Status::Waiting {
            continue;
        }
        if let Op::BarRed { op, d, .. } = *op_at(grid, block, t) {
            let v = match op {
                None => count,
                Some(BoolOp::And) => all as u64,
                Some(_) => any as u64,
            };
            set(grid, block, t, d, v);
        }
        block.threads[t].pc += 1;
        block.threads[t].status = Status::Ready;
    }
    block.shared.epoch += 1;
    true
}

/// Nothing can proceed: which threads wait where.
fn deadlock(grid: &Grid, block: &Block) -> (usize, Trouble) {
    let mut waits: Vec<(u32, usize, usize)> = Vec::new(); // (line, threads, first thread)
    let mut exited = 0;
    for (t, thread) in block.threads.iter().enumerate() {
        if thread.status == Status::Exited {
            exited += 1;
            continue;
        }
        let line = grid.program.code[thread.pc as usize].line;
        match waits.iter_mut().find(|w| w.0 == line) {
            Some(w) => w.1 += 1,
            None => waits.push((line, 1, t)),
        }
    }
    let source = &grid.program.source;
    let places: Vec<String> = waits
        .iter()
        .map(|&(line, count, first)| {
            let text = source.get(line as usize - 1).map_or("", |s| s.trim());
            format!("{count} thread(s) (first {first}) at line {line} `{text}`")
        })
        .collect();
    let first = waits.first().map_or(0, |w| w.2);
    let what = format!(
        "deadlock: a barrier or warp-level collective that not every thread it waits for reaches: {}; {exited} thread(s) exited",
        places.join(", ")
    );
    (first, Trouble::new(FaultKind::Divergence, what))
}
