//! Recursive calls: a function that may be active more than once at a time (it calls itself,
//! directly or through others) gets what PTX's ABI gives each activation, its own registers,
//! `.param` space and `.local` stack frame.
//!
//! The decoder lays every function out once, in the kernel's one register file and
//! call-parameter space, so a non-recursive call costs nothing more than a jump and the argument
//! copies. A call to a recursive function (a [`Frame`]) first saves the activation it is about to
//! overwrite (the callee's registers and parameter bytes, belonging to an activation further up
//! the thread's stack, or stale) on the thread's save stack, and gives the new activation a
//! stack frame for its `.local` variables: their registers are set to addresses in the thread's
//! local memory past its static variables, where frames are pushed and popped. The return copies
//! the return values out, restores the saved activation, then hands the values to the caller.
//! Each activation's local variables thus have their own addresses, so a pointer into a caller's
//! frame (Numba passes one for every return value) stays valid in its callees.
//!
//! Limits, as a GPU's stack has them (docs/emulator.md, "Recursion"): at most [`MAX_DEPTH`]
//! calls deep, and [`STACK_BYTES`] of stack frames per thread; past either the thread faults
//! with [`FaultKind::IllegalAddress`] (a GPU's stack overflow is an illegal address or a launch
//! failure), never a host stack overflow: the save stack is a heap vector.

use crate::block::{Block, Grid, Trouble};
use crate::ir::{CallSite, Frame, Program};
use crate::FaultKind;

/// Calls one thread may have in flight (all functions, recursive or not).
pub(crate) const MAX_DEPTH: usize = 1024;

/// Most bytes of recursive activations' `.local` frames one thread's stack holds (the
/// reservation is smaller when [`MAX_DEPTH`] of the largest frame take less): the thread's local
/// memory has this much past its static variables, zeroed with them for every block.
pub(crate) const STACK_BYTES: u32 = 16 * 1024;

/// Sets `program.stack_base` past the static `.local` variables and reserves the stack of
/// recursive frames after them (none when no recursive function has `.local` variables).
pub(crate) fn reserve_stack(program: &mut Program) {
    program.stack_base = program.local_bytes;
    let largest = program
        .frames
        .iter()
        .map(|f| f.local_bytes.next_multiple_of(f.local_align.max(1)))
        .max()
        .unwrap_or(0);
    if largest > 0 {
        let stack = (largest as u64 * MAX_DEPTH as u64).min(STACK_BYTES.max(largest) as u64);
        program.local_bytes = program.stack_base + stack as u32;
    }
}

/// Before `call` jumps to recursive `frame`: saves the callee's current registers and parameter
/// bytes, and gives the new activation its stack frame. Comes before the arguments are copied
/// (they may come from the same function's bytes, in a direct recursion: saved, not cleared).
#[inline(never)]
pub(crate) fn enter(
    grid: &Grid,
    block: &mut Block,
    t: usize,
    frame: &Frame,
) -> Result<(), Trouble> {
    let program = grid.program;
    let n = program.registers as usize;
    let size = program.frame_param_bytes as usize;
    let saved = &mut block.threads[t].saved;
    let base = (program.stack_base + saved.used).next_multiple_of(frame.local_align.max(1));
    let end = base as u64 + frame.local_bytes as u64;
    if end > program.local_bytes as u64 {
        return Err(Trouble::new(
            FaultKind::IllegalAddress,
            format!(
                "stack overflow: this call's {} bytes of .local do not fit in the thread's \
                 {} bytes of stack for recursive calls ({} in use)",
                frame.local_bytes,
                program.local_bytes - program.stack_base,
                saved.used
            ),
        ));
    }
    let registers = &mut block.registers[t * n..(t + 1) * n];
    let (first, last) = frame.registers;
    saved
        .registers
        .extend_from_slice(&registers[first as usize..last as usize]);
    saved.registers.push(saved.used as u64);
    let params = &block.frame[t * size..(t + 1) * size];
    for &(start, end) in &frame.params {
        saved
            .params
            .extend_from_slice(&params[start as usize..end as usize]);
    }
    saved.used = end as u32 - program.stack_base;
    for &(r, offset) in &frame.locals {
        registers[r as usize] = (base + offset) as u64;
    }
    Ok(())
}

/// The return of `call` from recursive `frame`: its return values to the caller's slots, with
/// the activation the call interrupted restored between.
#[inline(never)]
pub(crate) fn leave(grid: &Grid, block: &mut Block, t: usize, call: &CallSite, frame: &Frame) {
    let program = grid.program;
    let n = program.registers as usize;
    let size = program.frame_param_bytes as usize;
    let saved = &mut block.threads[t].saved;
    let params = &mut block.frame[t * size..(t + 1) * size];
    saved.returning.clear();
    for &(_, callee, len) in &call.returns {
        saved
            .returning
            .extend_from_slice(&params[callee as usize..(callee + len) as usize]);
    }
    for &(start, end) in frame.params.iter().rev() {
        let from = saved.params.len() - (end - start) as usize;
        params[start as usize..end as usize].copy_from_slice(&saved.params[from..]);
        saved.params.truncate(from);
    }
    saved.used = saved.registers.pop().unwrap_or(0) as u32;
    let (first, last) = frame.registers;
    let from = saved.registers.len() - (last - first) as usize;
    block.registers[t * n + first as usize..t * n + last as usize]
        .copy_from_slice(&saved.registers[from..]);
    saved.registers.truncate(from);
    let mut at = 0;
    for &(caller, _, len) in &call.returns {
        let len = len as usize;
        params[caller as usize..caller as usize + len]
            .copy_from_slice(&saved.returning[at..at + len]);
        at += len;
    }
}
