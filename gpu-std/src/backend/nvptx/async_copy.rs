//! Asynchronous copies from global to shared memory: PTX `cp.async` (sm_80 and newer) and its
//! group marks. The same names as `cpu/async_copy.rs`, so `async_copy.rs` makes one call on
//! either machine.

use super::shared::{element, Window};

use core::arch::asm;

/// `cp.async` reads its source from global memory, which must be `BYTES`-aligned.
pub(crate) const SOURCE_ALIGNED: bool = true;

/// Starts the copy of `BYTES` to element `dst_index` of the shared array at `base`, `window`,
/// from `src`: the `available` elements from `src_index` (0 reads nothing), zeros for the rest.
///
/// # Safety
/// As `copy_async` checks: `BYTES` at element `dst_index` in bounds and aligned; `available` elements of `src`
/// from `src_index`, `src`'s start `BYTES`-aligned.
#[inline(always)]
pub(crate) unsafe fn start<T, const BYTES: usize>(
    _base: *mut T,
    window: Window,
    dst_index: usize,
    src: &[T],
    src_index: usize,
    available: usize,
) {
    // An empty source reads nothing: any address does (the slice's start). Otherwise the
    // `available` elements from `src_index` are in `src`: an offset chosen by a select, not a
    // slice taken in a branch (no bounds-check branch).
    let offset = if available == 0 { 0 } else { src_index };
    let from = src.as_ptr().wrapping_add(offset);
    let bytes = (available * core::mem::size_of::<T>()) as u32;
    let to = element::<T>(window, dst_index);
    // SAFETY: the caller's contract.
    unsafe { copy::<BYTES>(to, from as u64, bytes) }
}

/// `cp.async` of `BYTES` to shared-window address `to` from generic address `from`, reading
/// `bytes` of them.
///
/// # Safety
/// As [`start`]: `to` in bounds and aligned, `from` readable for `bytes`, aligned.
#[inline(always)]
unsafe fn copy<const BYTES: usize>(to: u32, from: u64, bytes: u32) {
    // SAFETY: the caller's contract. `.cg` (L2 only) for whole 16-byte copies, as CUTLASS.
    unsafe {
        match BYTES {
            16 => asm!(
                "{{ .reg .u64 %oxg; cvta.to.global.u64 %oxg, {1}; cp.async.cg.shared.global [{0}], [%oxg], 16, {2}; }}",
                in(reg32) to, in(reg64) from, in(reg32) bytes, options(nostack)
            ),
            8 => asm!(
                "{{ .reg .u64 %oxg; cvta.to.global.u64 %oxg, {1}; cp.async.ca.shared.global [{0}], [%oxg], 8, {2}; }}",
                in(reg32) to, in(reg64) from, in(reg32) bytes, options(nostack)
            ),
            _ => asm!(
                "{{ .reg .u64 %oxg; cvta.to.global.u64 %oxg, {1}; cp.async.ca.shared.global [{0}], [%oxg], 4, {2}; }}",
                in(reg32) to, in(reg64) from, in(reg32) bytes, options(nostack)
            ),
        }
    }
}

/// Closes this thread's current group of copies (`cp.async.commit_group`).
#[inline(always)]
pub(crate) fn commit() {
    // SAFETY: marks a group boundary; no operands.
    unsafe { asm!("cp.async.commit_group;", options(nostack)) }
}

/// Waits until at most `PENDING` committed groups are in flight (`cp.async.wait_group`).
#[inline(always)]
pub(crate) fn wait<const PENDING: u32>() {
    // SAFETY: waits; the memory clobber orders the shared-memory reads after it.
    unsafe { asm!("cp.async.wait_group {n};", n = const PENDING, options(nostack)) }
}

/// Waits for all of this thread's copies (`cp.async.wait_all`).
#[inline(always)]
pub(crate) fn wait_all() {
    // SAFETY: as in `wait`.
    unsafe { asm!("cp.async.wait_all;", options(nostack)) }
}
