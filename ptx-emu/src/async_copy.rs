//! `cp.async` (global → shared, sm_80+) with its groups. A copy's addresses are checked when it
//! is issued (so a bad one faults at its own line), but the bytes move only when a
//! `cp.async.wait_group`/`wait_all` of the same thread completes its group: the latest moment
//! the PTX ISA allows. A kernel that reads the destination before waiting therefore reads what
//! was there before, every time (hardware may or may not have landed the bytes yet), and the
//! shared-memory race check sees the write at the wait, by the thread that issued the copy.
//! Copies still pending when their thread exits complete then.

use crate::async_copies::PendingCopy;
use crate::block::{resolve, Block, Grid, Place, Trouble};
use crate::ir::Space;
use crate::FaultKind;

/// `cp.async` of `bytes` from global `src` to shared `dst` by thread `t`, reading only
/// `src_bytes` (zero-filling the rest).
pub(crate) fn issue(
    grid: &Grid,
    block: &mut Block,
    t: usize,
    bytes: u8,
    (dst, src): (u64, u64),
    src_bytes: u64,
) -> Result<(), Trouble> {
    if src_bytes > bytes as u64 {
        return Err(Trouble::new(
            FaultKind::IllegalAddress,
            format!("cp.async's src-size {src_bytes} is larger than its copy size {bytes}"),
        ));
    }
    let size = bytes as u64;
    let Place::Shared(shared) = resolve(grid, block, t, Space::Shared, dst, size, size)? else {
        unreachable!("a shared-space access resolves to shared memory")
    };
    let global = if src_bytes == 0 {
        None
    } else {
        match resolve(grid, block, t, Space::Global, src, src_bytes, size)? {
            Place::Global(i, offset) => Some((i, offset)),
            _ => unreachable!("a global-space access resolves to global memory"),
        }
    };
    block.threads[t].async_copies.pending.push(PendingCopy {
        group: None,
        shared,
        global,
        bytes,
        src_bytes: src_bytes as u8,
    });
    Ok(())
}

/// Completes thread `t`'s copies: with `Some(n)`, those of every committed group but the `n`
/// most recent (`cp.async.wait_group n`); with `None`, all of them (`wait_all`, and exit).
pub(crate) fn complete(
    grid: &Grid,
    block: &mut Block,
    t: usize,
    keep: Option<u32>,
) -> Result<(), Trouble> {
    let copies = &mut block.threads[t].async_copies;
    if copies.pending.is_empty() {
        return Ok(());
    }
    let done = |c: &PendingCopy| match (keep, c.group) {
        (None, _) => true,
        (Some(n), Some(g)) => (g as u64) + (n as u64) < copies.committed as u64,
        (Some(_), None) => false,
    };
    let (now, later): (Vec<PendingCopy>, Vec<PendingCopy>) =
        copies.pending.drain(..).partition(done);
    copies.pending = later;
    for copy in now {
        let mut data = [0u8; 16];
        if let Some((i, offset)) = copy.global {
            for (k, byte) in data[..copy.src_bytes as usize].iter_mut().enumerate() {
                *byte = grid.globals[i].load(offset + k as u64, 1) as u8;
            }
        }
        let len = copy.bytes as usize;
        block
            .shared
            .write(t as u32, copy.shared, len)
            .map_err(|c| crate::block::conflict_trouble(c, t, true))?;
        block.shared.bytes[copy.shared..copy.shared + len].copy_from_slice(&data[..len]);
    }
    Ok(())
}
