//! One thread's instruction loop: runs it until it exits, faults, or reaches a collective
//! instruction (barrier, shuffle, vote, match, activemask) that the block's scheduler completes
//! for all its participants together.

use crate::arith::{self, mask};
use crate::block::{
    conflict_trouble, read_le, resolve, write_le, Block, Grid, Place, Status, Trouble,
    LOCAL_WINDOW, SHARED_WINDOW,
};
use crate::float16;
use crate::ir::*;
use crate::profile::ends_run;
use crate::FaultKind;

mod access;

use access::{atomic_update, load, record, record_cp_async, store};

#[inline]
fn get(regs: &[u64], s: Src) -> u64 {
    match s {
        Src::Reg(r) => regs[r as usize],
        Src::Imm(v) => v,
    }
}

// Inlined into both instances of `run` (with and without counters), as it was into the one
// `run` had before: out of line, the interpreter without counters is measurably slower.
#[inline(always)]
fn special(grid: &Grid, block: &Block, t: usize, which: Special) -> u64 {
    let b = grid.block;
    let tid = [
        t as u32 % b[0],
        (t as u32 / b[0]) % b[1],
        t as u32 / (b[0] * b[1]),
    ];
    let lane = t as u32 % 32;
    (match which {
        Special::Tid(a) => tid[a as usize],
        Special::Ntid(a) => b[a as usize],
        Special::Ctaid(a) => block.ctaid[a as usize],
        Special::Nctaid(a) => grid.grid[a as usize],
        Special::LaneId => lane,
        Special::WarpId => t as u32 / 32,
        Special::NWarpId => (b[0] * b[1] * b[2]).div_ceil(32),
        Special::DynamicSmem => grid.dynamic_shared_bytes,
        Special::TotalSmem => block.shared_len as u32,
        Special::LaneMaskEq => 1 << lane,
        Special::LaneMaskLt => (1u32 << lane) - 1,
        Special::LaneMaskLe => ((1u64 << (lane + 1)) - 1) as u32,
        Special::LaneMaskGt => !(((1u64 << (lane + 1)) - 1) as u32),
        Special::LaneMaskGe => !((1u32 << lane) - 1),
        // Clocks count this thread's instructions: monotonic, as the program may assume.
        Special::Clock | Special::Clock64 | Special::GlobalTimer => return block.instructions,
        Special::SmId | Special::Zero => 0,
    }) as u64
}

/// Runs thread `t` of `block` from its pc until it stops. `Ok(())` when it exited or waits at a
/// collective (its status says which).
///
/// `PROFILE` (the lockstep scheduler of `lockstep.rs`): stops after control flow or at a
/// collective (a straight run of code), notes where each memory access landed in
/// `block.lane_trace` and the last pc in `block.lane_last`; without it, none of that is
/// compiled in.
pub(crate) fn run<const PROFILE: bool>(
    grid: &Grid,
    block: &mut Block,
    t: usize,
) -> Result<(), Trouble> {
    let program = grid.program;
    let code = &program.code[..];
    let n = program.registers as usize;
    let mut pc = block.threads[t].pc as usize;
    let mut executed = 0u64;
    // A thread that never leaves this loop (an endless loop) goes through a backward branch.
    let mut next_check = crate::deadline::DEADLINE_CHECK_EVERY;
    let mut last = pc;
    let result = loop {
        let Some(instr) = code.get(pc) else {
            break Err(Trouble::new(
                FaultKind::IllegalAddress,
                "ran past the end of the kernel's code",
            ));
        };
        if grid.cooperative && (executed + 1).is_multiple_of(crate::cooperative::YIELD_EVERY) {
            if let Err(trouble) = crate::cooperative::yield_now(grid, block) {
                // Stopped before `instr`: the fault's pc (one back, below) is its.
                pc += 1;
                break Err(trouble);
            }
        }
        if PROFILE {
            if pc != last && grid.joins[pc] {
                // Where lanes may join: the lockstep scheduler brings them together.
                break Ok(());
            }
            last = pc;
        }
        let regs = &mut block.registers[t * n..(t + 1) * n];
        if let Some((p, negated)) = instr.guard {
            if (regs[p as usize] & 1 == 1) == negated {
                pc += 1;
                if PROFILE && ends_run(&instr.op) {
                    break Ok(());
                }
                continue;
            }
        }
        executed += 1;
        pc += 1;
        match instr.op {
            Op::Mov { d, a } => regs[d as usize] = get(regs, a),
            Op::Special { d, which } => {
                let value = special(grid, block, t, which);
                block.registers[t * n + d as usize] = value;
            }
            Op::Unpack { d, n, bits, a } => {
                let v = get(regs, a);
                for (k, &dk) in d.iter().enumerate().take(n as usize) {
                    regs[dk as usize] = (v >> (k * bits as usize)) & mask(bits / 8);
                }
            }
            Op::Pack { d, s, n, bits } => {
                let mut v = 0;
                for (k, &sk) in s.iter().enumerate().take(n as usize) {
                    v |= (get(regs, sk) & mask(bits / 8)) << (k * bits as usize);
                }
                regs[d as usize] = v;
            }
            Op::Int { op, ty, d, a, b } => {
                regs[d as usize] = arith::int(op, ty, get(regs, a), get(regs, b))
            }
            Op::MulWide { ty, d, a, b } => {
                regs[d as usize] = arith::mul_wide(ty, get(regs, a), get(regs, b))
            }
            Op::Mad {
                hi,
                wide,
                ty,
                d,
                a,
                b,
                c,
            } => {
                let (x, y, z) = (get(regs, a), get(regs, b), get(regs, c));
                regs[d as usize] = if wide {
                    arith::mul_wide(ty, x, y).wrapping_add(z) & mask(ty.bytes * 2)
                } else {
                    let op = if hi { IntOp::MulHi } else { IntOp::MulLo };
                    arith::int(IntOp::Add, ty, arith::int(op, ty, x, y), z)
                };
            }
            Op::Sad { ty, d, a, b, c } => {
                let diff = arith::int(IntOp::AbsDiff, ty, get(regs, a), get(regs, b));
                regs[d as usize] = arith::int(IntOp::Add, ty, diff, get(regs, c));
            }
            Op::IntUn { op, ty, d, a } => regs[d as usize] = arith::int_unary(op, ty, get(regs, a)),
            Op::Float {
                op,
                f64,
                round,
                ftz,
                sat,
                d,
                a,
                b,
            } => {
                let r = arith::float(op, f64, round, ftz, get(regs, a), get(regs, b));
                regs[d as usize] = arith::saturate_if(sat, f64, r);
            }
            Op::Fma {
                f64,
                round,
                ftz,
                sat,
                d,
                a,
                b,
                c,
            } => {
                let r = arith::fma(f64, round, ftz, get(regs, a), get(regs, b), get(regs, c));
                regs[d as usize] = arith::saturate_if(sat, f64, r);
            }
            Op::Half {
                op,
                bfloat,
                packed,
                round,
                ftz,
                clamp,
                d,
                a,
                b,
                c,
            } => {
                let (a, b, c) = (get(regs, a), get(regs, b), get(regs, c));
                regs[d as usize] =
                    float16::arithmetic(op, bfloat, packed, round, ftz, clamp, a, b, c);
            }
            Op::FloatUn { op, f64, ftz, d, a } => {
                regs[d as usize] = arith::float_unary(op, f64, ftz, get(regs, a))
            }
            Op::Cvt { cvt, d, a } => match arith::convert(cvt, get(regs, a)) {
                Some(v) => regs[d as usize] = v,
                None => {
                    break Err(Trouble::new(
                        FaultKind::Unsupported,
                        "cvt between these types is not supported",
                    ))
                }
            },
            Op::Setp {
                cmp,
                ty,
                d,
                not_d,
                a,
                b,
                combine,
            } => {
                let mut v = arith::compare(cmp, ty, get(regs, a), get(regs, b));
                let mut w = !v;
                if let Some((op, c, negate)) = combine {
                    let c = (get(regs, c) & 1 == 1) != negate;
                    let f = |x: bool| match op {
                        BoolOp::And => x && c,
                        BoolOp::Or => x || c,
                        BoolOp::Xor => x != c,
                    };
                    (v, w) = (f(v), f(w));
                }
                regs[d as usize] = v as u64;
                if let Some(q) = not_d {
                    regs[q as usize] = w as u64;
                }
            }
            Op::Set {
                cmp,
                ty,
                one,
                d,
                a,
                b,
            } => {
                let holds = arith::compare(cmp, ty, get(regs, a), get(regs, b));
                regs[d as usize] = if holds { one } else { 0 };
            }
            Op::Selp { d, a, b, p } => {
                regs[d as usize] = if get(regs, p) & 1 == 1 {
                    get(regs, a)
                } else {
                    get(regs, b)
                };
            }
            Op::PredLogic { op, d, a, b } => {
                let (x, y) = (get(regs, a) & 1, get(regs, b) & 1);
                regs[d as usize] = match op {
                    BoolOp::And => x & y,
                    BoolOp::Or => x | y,
                    BoolOp::Xor => x ^ y,
                };
            }
            Op::Bfe { ty, d, a, pos, len } => {
                regs[d as usize] = arith::bfe(ty, get(regs, a), get(regs, pos), get(regs, len))
            }
            Op::Bfi {
                ty,
                d,
                a,
                b,
                pos,
                len,
            } => {
                regs[d as usize] = arith::bfi(
                    ty,
                    get(regs, a),
                    get(regs, b),
                    get(regs, pos),
                    get(regs, len),
                );
            }
            Op::Shf {
                left,
                wrap,
                d,
                a,
                b,
                c,
            } => {
                regs[d as usize] =
                    arith::funnel_shift(left, wrap, get(regs, a), get(regs, b), get(regs, c));
            }
            Op::Prmt { d, a, b, c } => {
                regs[d as usize] = arith::permute(get(regs, a), get(regs, b), get(regs, c))
            }
            Op::Bfind {
                ty,
                shift_amount,
                d,
                a,
            } => regs[d as usize] = arith::bfind(ty, shift_amount, get(regs, a)),
            Op::Testp { test, f64, d, a } => {
                regs[d as usize] = arith::float_test(test, f64, get(regs, a)) as u64
            }
            Op::Mul24 { hi, ty, d, a, b, c } => {
                regs[d as usize] = arith::mul24(hi, ty, get(regs, a), get(regs, b), get(regs, c));
            }
            Op::Ld { access, d, addr } => {
                let address = addr
                    .base
                    .map_or(0, |r| regs[r as usize])
                    .wrapping_add(addr.offset as u64);
                let size = access.bytes as u64;
                let len = size * access.n as u64;
                let place = match resolve(grid, block, t, addr.space, address, len, len) {
                    Ok(p) => p,
                    Err(e) => break Err(e),
                };
                if PROFILE {
                    record(grid, block, t, pc - 1, &place, len);
                }
                if let Err(e) = load(grid, block, t, place, access, &d) {
                    break Err(e);
                }
            }
            Op::St { access, s, addr } => {
                let address = addr
                    .base
                    .map_or(0, |r| regs[r as usize])
                    .wrapping_add(addr.offset as u64);
                let len = access.bytes as u64 * access.n as u64;
                let values = [
                    get(regs, s[0]),
                    get(regs, s[1]),
                    get(regs, s[2]),
                    get(regs, s[3]),
                ];
                let place = match resolve(grid, block, t, addr.space, address, len, len) {
                    Ok(p) => p,
                    Err(e) => break Err(e),
                };
                if PROFILE {
                    record(grid, block, t, pc - 1, &place, len);
                }
                if let Err(e) = store(grid, block, t, place, access, &values) {
                    break Err(e);
                }
            }
            Op::Atom {
                op,
                ty,
                d,
                addr,
                b,
                c,
            } => {
                let address = addr
                    .base
                    .map_or(0, |r| regs[r as usize])
                    .wrapping_add(addr.offset as u64);
                let (b, c) = (get(regs, b), get(regs, c));
                let size = ty.bytes as u64;
                let place = match resolve(grid, block, t, addr.space, address, size, size) {
                    Ok(p) => p,
                    Err(e) => break Err(e),
                };
                if PROFILE {
                    record(grid, block, t, pc - 1, &place, size);
                }
                let update = |old: u64| atomic_update(op, ty, old, b, c);
                let old = match place {
                    Place::Global(i, offset) => {
                        grid.globals[i].atomic(offset, ty.bytes as u32, update)
                    }
                    Place::Shared(o) => {
                        if grid.strict {
                            if let Err(conflict) = block.shared.atomic(o, size as usize) {
                                break Err(conflict_trouble(conflict, t, false));
                            }
                        }
                        let old = read_le(&block.shared.bytes, o, size as usize);
                        write_le(&mut block.shared.bytes, o, size as usize, update(old));
                        old
                    }
                    _ => {
                        break Err(Trouble::new(
                            FaultKind::IllegalAddress,
                            "atomic outside global and shared memory",
                        ))
                    }
                };
                if let Some(d) = d {
                    block.registers[t * n + d as usize] = old;
                }
            }
            Op::Cvta { to, space, d, a } => {
                let v = get(regs, a);
                let window = match space {
                    Space::Shared => SHARED_WINDOW,
                    Space::Local => LOCAL_WINDOW,
                    _ => 0,
                };
                regs[d as usize] = if to {
                    v.wrapping_sub(window)
                } else {
                    v.wrapping_add(window)
                };
            }
            Op::Bra { target } => {
                if (target as usize) < pc && executed >= next_check {
                    next_check = executed + crate::deadline::DEADLINE_CHECK_EVERY;
                    if let Err(trouble) = crate::deadline::check_deadline(grid) {
                        break Err(trouble);
                    }
                }
                pc = target as usize;
            }
            Op::BrxIdx { index, table } => {
                let targets = &program.tables[table as usize];
                let i = get(regs, index) as u32 as usize;
                match targets.get(i) {
                    Some(&target) => {
                        if (target as usize) < pc && executed >= next_check {
                            next_check = executed + crate::deadline::DEADLINE_CHECK_EVERY;
                            if let Err(trouble) = crate::deadline::check_deadline(grid) {
                                break Err(trouble);
                            }
                        }
                        pc = target as usize;
                    }
                    None => {
                        break Err(Trouble::new(
                            FaultKind::IllegalAddress,
                            format!("brx.idx index {i} is past its {} targets", targets.len()),
                        ))
                    }
                }
            }
            Op::Call { site } => {
                let call = &program.calls[site as usize];
                if let Some(f) = call.frame {
                    let frame = &program.frames[f as usize];
                    if let Err(e) = crate::recursion::enter(grid, block, t, frame) {
                        break Err(e);
                    }
                }
                let size = program.frame_param_bytes as usize;
                let frame = &mut block.frame[t * size..(t + 1) * size];
                for &(from, to, len) in &call.args {
                    frame.copy_within(from as usize..(from + len) as usize, to as usize);
                }
                block.threads[t].calls.push((site, pc as u32));
                pc = call.target as usize;
                if block.threads[t].calls.len() > crate::recursion::MAX_DEPTH {
                    break Err(Trouble::new(
                        FaultKind::IllegalAddress,
                        format!(
                            "stack overflow: more than {} calls deep",
                            crate::recursion::MAX_DEPTH
                        ),
                    ));
                }
            }
            Op::Vprintf { format, args, ret } => {
                let size = program.frame_param_bytes as usize;
                let frame = t * size;
                let pointer = |o: u32| crate::block::read_le(&block.frame, frame + o as usize, 8);
                let (format, args) = (pointer(format), pointer(args));
                let printed = match crate::printf::vprintf(grid, block, t, format, args) {
                    Ok(printed) => printed,
                    Err(trouble) => break Err(trouble),
                };
                if let Some(o) = ret {
                    // 0, or -1 for a call dropped (its text did not fit in the printf buffer).
                    let code = if printed { 0 } else { u32::MAX as u64 };
                    crate::block::write_le(&mut block.frame, frame + o as usize, 4, code);
                }
            }
            Op::Ret => match block.threads[t].calls.pop() {
                Some((site, back)) => {
                    let call = &program.calls[site as usize];
                    if let Some(f) = call.frame {
                        let frame = &program.frames[f as usize];
                        crate::recursion::leave(grid, block, t, call, frame);
                    } else {
                        let size = program.frame_param_bytes as usize;
                        let frame = &mut block.frame[t * size..(t + 1) * size];
                        for &(caller, callee, len) in &call.returns {
                            frame.copy_within(
                                callee as usize..(callee + len) as usize,
                                caller as usize,
                            );
                        }
                    }
                    pc = back as usize;
                }
                None => {
                    if let Err(e) = crate::async_copy::complete(grid, block, t, None) {
                        break Err(e);
                    }
                    block.threads[t].status = Status::Exited;
                    break Ok(());
                }
            },
            Op::Exit => {
                if let Err(e) = crate::async_copy::complete(grid, block, t, None) {
                    break Err(e);
                }
                block.threads[t].status = Status::Exited;
                break Ok(());
            }
            Op::CpAsync {
                bytes,
                dst,
                src,
                src_size,
            } => {
                let at = |a: Addr| {
                    a.base
                        .map_or(0, |r| regs[r as usize])
                        .wrapping_add(a.offset as u64)
                };
                let addresses = (at(dst), at(src));
                let src_bytes = src_size.map_or(bytes as u64, |s| get(regs, s) as u32 as u64);
                if let Err(e) =
                    crate::async_copy::issue(grid, block, t, bytes, addresses, src_bytes)
                {
                    break Err(e);
                }
                if PROFILE {
                    record_cp_async(grid, block, t, pc - 1);
                }
            }
            Op::CpAsyncCommit => block.threads[t].async_copies.commit(),
            Op::CpAsyncWait { pending } => {
                if pending.is_none() {
                    block.threads[t].async_copies.commit();
                }
                if let Err(e) = crate::async_copy::complete(grid, block, t, pending) {
                    break Err(e);
                }
            }
            Op::Trap => {
                break Err(Trouble::new(
                    FaultKind::Trap,
                    "trap (a kernel panic or failed bounds check)",
                ))
            }
            Op::BarSync { .. }
            | Op::BarRed { .. }
            | Op::BarWarpSync { .. }
            | Op::Shfl { .. }
            | Op::Vote { .. }
            | Op::Match { .. }
            | Op::ActiveMask { .. }
            | Op::Mma { .. }
            | Op::Ldmatrix { .. }
            // Rare instructions, run by the block's scheduler (`rare.rs`): in this loop, each
            // made every other instruction dearer (callgrind on `speed --small`).
            | Op::IsSpace { .. }
            | Op::SetpX2 { .. }
            | Op::Mbarrier { .. } => {
                pc -= 1;
                executed -= 1;
                block.threads[t].status = Status::Waiting;
                break Ok(());
            }
            Op::Nop => {}
            Op::Unsupported(ref what) => {
                break Err(Trouble::new(FaultKind::Unsupported, what.to_string()))
            }
        }
        if PROFILE && ends_run(&instr.op) {
            break Ok(());
        }
    };
    if PROFILE {
        block.lane_last[t % 32] = last as u32;
    }
    if result.is_err() {
        pc -= 1;
    }
    block.threads[t].pc = pc as u32;
    block.instructions += executed;
    result
}
