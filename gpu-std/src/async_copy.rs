//! Asynchronous copies from global to shared memory (PTX `cp.async`, sm_80 and newer), so a
//! kernel can load its next tile while it computes on the current one (double buffering).
//!
//! ```ignore
//! copy_async::<f16, 16>(&tile, t * 8, a, row * k + col);  // 8 f16 from `a` to `tile`
//! commit_async_copies();                                  // closes a group
//! // ... compute on the other buffer ...
//! wait_async_copies::<0>();                               // this thread's groups have landed
//! sync_threads();                                         // and everyone else's
//! ```
//!
//! Each thread waits only for its own copies: a `sync_threads()` after the wait makes the tile
//! whole for the block. On the GPU a copy may land any time before its wait; the PTX emulator
//! lands it at the wait (so a missing wait shows there, as a read of unwritten shared memory or
//! a race); the CPU executor lands it at once (checked mode records the writes as this
//! thread's).
//!
//! PTX with these needs sm_80 (`ferrocuda_builder::PtxBuilder::arch("sm_80")`).

use crate::backend::async_copy as machine;
use crate::shared::Shared;

/// Starts copying `BYTES` (4, 8 or 16) bytes, `BYTES / size_of::<T>()` elements, from
/// `src[src_index..]` to `dst` at `dst_index`. Elements past the end of `src` are not read: the
/// copy fills them with zeros (a ragged edge tile needs no branch).
///
/// # Panics
/// If the destination elements reach past `dst`, or `dst_index` or `src_index` is not a
/// multiple of the copy's elements (both ends must be `BYTES`-aligned; on the GPU: traps).
#[inline(always)]
#[track_caller]
pub fn copy_async<T: bytemuck::Pod, const BYTES: usize>(
    dst: &Shared<T>,
    dst_index: usize,
    src: &[T],
    src_index: usize,
) {
    let n = check_copy::<T, BYTES>(dst, dst_index, src_index);
    start::<T, BYTES>(
        dst,
        dst_index,
        src,
        src_index,
        src.len().saturating_sub(src_index).min(n),
    );
}

/// Starts copying the whole piece `src[src_index..src_index + BYTES / size_of::<T>()]` to `dst`
/// at `dst_index` when `read` is true and the piece lies in `src`; else the copy reads nothing
/// and writes zeros (PTX `cp.async` with a src-size of `BYTES` or 0, as a ragged edge tile
/// wants: one copy, no branch, a predicate). Cheaper than [`copy_async`] where a piece is all
/// or nothing: no partial length to compute.
///
/// # Panics
/// As [`copy_async`]: if the destination elements reach past `dst`, or `dst_index`,
/// `src_index` or (on the GPU) `src`'s start is not aligned to the copy, whether or not it reads.
#[inline(always)]
#[track_caller]
pub fn copy_async_or_zeros<T: bytemuck::Pod, const BYTES: usize>(
    dst: &Shared<T>,
    dst_index: usize,
    src: &[T],
    src_index: usize,
    read: bool,
) {
    let n = check_copy::<T, BYTES>(dst, dst_index, src_index);
    // `src_index + n <= len` without overflow: the limit is loop-invariant where `src` is.
    let read = read && src_index < src.len().saturating_sub(n - 1);
    start::<T, BYTES>(dst, dst_index, src, src_index, if read { n } else { 0 });
}

/// Issues the checked copy ([`check_copy`]) of `available` elements of `src` from `src_index`
/// (all in `src`; 0 reads nothing), zeros for the rest of the copy's.
#[inline(always)]
fn start<T: bytemuck::Pod, const BYTES: usize>(
    dst: &Shared<T>,
    dst_index: usize,
    src: &[T],
    src_index: usize,
    available: usize,
) {
    // CPU checked mode (a feature of the language on the host, not a machine primitive):
    // element by element through `Shared::set`, which records each write as this thread's.
    #[cfg(not(target_arch = "nvptx64"))]
    if dst.checks_accesses() {
        for k in 0..BYTES / core::mem::size_of::<T>() {
            let value = if k < available {
                src[src_index + k]
            } else {
                T::zeroed()
            };
            dst.set(dst_index + k, value);
        }
        return;
    }
    // `src_index` is a multiple of the copy's elements (`check_copy`), so the source is
    // `BYTES`-aligned iff the slice's start is: checked on the start, loop-invariant, which the
    // compiler hoists or folds where the caller already tested it.
    if machine::SOURCE_ALIGNED && !(src.as_ptr() as usize).is_multiple_of(BYTES) {
        misaligned(BYTES);
    }
    // `check_copy` put the copy's elements from `dst_index` inside `dst` and aligned them; `available` elements of `src` from `src_index` lie in `src` (the callers'), and its
    // start is aligned where the machine needs it (just above).
    let (base, window) = dst.machine_parts();
    // SAFETY: as above.
    unsafe { machine::start::<T, BYTES>(base, window, dst_index, src, src_index, available) }
}

/// The checks both copies make: `BYTES` a `cp.async` size of whole `T`s, the destination
/// inside `dst`, both indices multiples of the copy's elements. Returns those elements.
#[inline(always)]
#[track_caller]
fn check_copy<T: bytemuck::Pod, const BYTES: usize>(
    dst: &Shared<T>,
    dst_index: usize,
    src_index: usize,
) -> usize {
    const {
        assert!(
            BYTES == 4 || BYTES == 8 || BYTES == 16,
            "cp.async copies 4, 8 or 16 bytes"
        );
        assert!(
            BYTES.is_multiple_of(core::mem::size_of::<T>()),
            "the copy must hold whole elements"
        );
    }
    let n = BYTES / core::mem::size_of::<T>();
    // `dst_index + n <= len`, without overflowing for a huge `dst_index`.
    if n > dst.len() || dst_index > dst.len() - n {
        let last = dst_index.saturating_add(n - 1);
        crate::mem::out_of_bounds("a shared array", last, dst.len());
    }
    if !dst_index.is_multiple_of(n) || !src_index.is_multiple_of(n) {
        misaligned(BYTES);
    }
    n
}

#[cold]
#[inline(never)]
#[track_caller]
fn misaligned(bytes: usize) -> ! {
    // The GPU has no panic message to give: it traps, as `mem::out_of_bounds`.
    #[cfg(target_arch = "nvptx64")]
    {
        let _ = bytes;
        // SAFETY: `trap` aborts the kernel; it has no preconditions.
        unsafe { core::arch::nvptx::trap() }
    }
    #[cfg(not(target_arch = "nvptx64"))]
    panic!("copy_async of {bytes} bytes needs both ends {bytes}-byte aligned")
}

/// Closes this thread's current group of [`copy_async`]s (PTX `cp.async.commit_group`).
#[inline(always)]
pub fn commit_async_copies() {
    machine::commit()
}

/// Waits until at most `PENDING` of this thread's most recent committed groups are still in
/// flight (PTX `cp.async.wait_group`): `0` waits for every committed group.
#[inline(always)]
pub fn wait_async_copies<const PENDING: u32>() {
    machine::wait::<PENDING>()
}

/// Waits for all of this thread's copies, committed or not (PTX `cp.async.wait_all`).
#[inline(always)]
pub fn wait_all_async_copies() {
    machine::wait_all()
}
