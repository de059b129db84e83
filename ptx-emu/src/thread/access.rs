//! What the interpreter loop (`thread::run`) does to memory for one lane: loads, stores and
//! atomics on a resolved place, and, when profiling, the note of where each access went.
//! Apart from the loop so that it reads as the dispatch it is; `load` and `store` stay
//! `#[inline(always)]` into both of its instances.

use crate::arith::{self, mask, sext};
use crate::block::{conflict_trouble, read_le, write_le, Block, Grid, Place, Trouble};
use crate::ir::*;
use crate::profile::{Landed, LaneAccess};
use crate::FaultKind;

/// Notes where lane `t`'s access went, for the profile's warp instruction.
#[inline]
pub(super) fn record(
    grid: &Grid,
    block: &mut Block,
    t: usize,
    pc: usize,
    place: &Place,
    bytes: u64,
) {
    let (space, address) = match *place {
        Place::Global(i, offset) => (Landed::Global, grid.globals[i].base + offset),
        Place::Shared(o) => (Landed::Shared, o as u64),
        Place::Local(o) => (Landed::Local, o as u64),
        Place::KernelParam(o) | Place::Frame(o) => (Landed::Param, o as u64),
    };
    block.lane_trace[t % 32].push(LaneAccess {
        pc: pc as u32,
        space,
        address,
        bytes: bytes as u32,
    });
}

/// Notes lane `t`'s `cp.async` just issued: the global bytes it reads (none with a src-size of
/// 0) and the shared bytes it writes.
pub(super) fn record_cp_async(grid: &Grid, block: &mut Block, t: usize, pc: usize) {
    let Some(copy) = block.threads[t].async_copies.last().cloned() else {
        return;
    };
    if let Some((i, offset)) = copy.global {
        let place = Place::Global(i, offset);
        record(grid, block, t, pc, &place, copy.src_bytes as u64);
    }
    record(
        grid,
        block,
        t,
        pc,
        &Place::Shared(copy.shared),
        copy.bytes as u64,
    );
}

// Inlined into both instances of `run` (with and without counters), as it was into the one
// `run` had before: out of line, the interpreter without counters is measurably slower.
#[inline(always)]
pub(super) fn load(
    grid: &Grid,
    block: &mut Block,
    t: usize,
    place: Place,
    access: Access,
    d: &[Reg; 4],
) -> Result<(), Trouble> {
    let n = grid.program.registers as usize;
    let size = access.bytes as usize;
    let mut values = [0u64; 4];
    for (k, v) in values.iter_mut().enumerate().take(access.n as usize) {
        let at = k * size;
        *v = match place {
            Place::Global(i, offset) => grid.globals[i].load(offset + at as u64, size as u32),
            Place::Shared(o) => read_le(&block.shared.bytes, o + at, size),
            Place::Local(o) => read_le(&block.local, o + at, size),
            Place::KernelParam(o) => read_le(&grid.params, o + at, size),
            Place::Frame(o) => read_le(&block.frame, o + at, size),
        };
        if access.signed {
            *v = sext(*v, access.bytes) as u64;
        }
    }
    if let (&Place::Shared(o), true) = (&place, grid.strict) {
        block
            .shared
            .read(t as u32, o, size * access.n as usize)
            .map_err(|c| conflict_trouble(c, t, false))?;
    }
    for k in 0..access.n as usize {
        block.registers[t * n + d[k] as usize] = values[k];
    }
    Ok(())
}

// Inlined into both instances of `run` (with and without counters), as it was into the one
// `run` had before: out of line, the interpreter without counters is measurably slower.
#[inline(always)]
pub(super) fn store(
    grid: &Grid,
    block: &mut Block,
    t: usize,
    place: Place,
    access: Access,
    values: &[u64; 4],
) -> Result<(), Trouble> {
    let size = access.bytes as usize;
    if let (&Place::Shared(o), true) = (&place, grid.strict) {
        block
            .shared
            .write(t as u32, o, size * access.n as usize)
            .map_err(|c| conflict_trouble(c, t, true))?;
    }
    for (k, &v) in values.iter().enumerate().take(access.n as usize) {
        let at = k * size;
        match place {
            Place::Global(i, offset) => grid.globals[i].store(offset + at as u64, size as u32, v),
            Place::Shared(o) => write_le(&mut block.shared.bytes, o + at, size, v),
            Place::Local(o) => write_le(&mut block.local, o + at, size, v),
            Place::Frame(o) => write_le(&mut block.frame, o + at, size, v),
            Place::KernelParam(_) => {
                return Err(Trouble::new(
                    FaultKind::IllegalAddress,
                    "store to the kernel's (read-only) parameters",
                ))
            }
        }
    }
    Ok(())
}

pub(super) fn atomic_update(op: AtomOp, ty: Ty, old: u64, b: u64, c: u64) -> u64 {
    let m = mask(ty.bytes);
    let float = ty.kind == Kind::Float;
    match op {
        AtomOp::Add if float && ty.bytes == 4 => {
            arith::bits32(arith::f32_of(old) + arith::f32_of(b))
        }
        AtomOp::Add if float => (f64::from_bits(old) + f64::from_bits(b)).to_bits(),
        AtomOp::Add => old.wrapping_add(b) & m,
        AtomOp::Min | AtomOp::Max if float => {
            let op = if op == AtomOp::Min {
                FloatOp::Min
            } else {
                FloatOp::Max
            };
            arith::float(op, ty.bytes == 8, Round::Nearest, false, old, b)
        }
        AtomOp::Min => arith::int(IntOp::Min, ty, old, b),
        AtomOp::Max => arith::int(IntOp::Max, ty, old, b),
        AtomOp::Exch => b & m,
        AtomOp::Cas => {
            if old & m == b & m {
                c & m
            } else {
                old
            }
        }
        AtomOp::And => old & b & m,
        AtomOp::Or => (old | b) & m,
        AtomOp::Xor => (old ^ b) & m,
        // inc/dec wrap at b, as PTX defines them (u32 only).
        AtomOp::Inc => {
            if old & m >= b & m {
                0
            } else {
                (old + 1) & m
            }
        }
        AtomOp::Dec => {
            if old & m == 0 || old & m > b & m {
                b & m
            } else {
                (old - 1) & m
            }
        }
    }
}
