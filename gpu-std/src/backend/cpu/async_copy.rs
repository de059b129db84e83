//! Asynchronous copies from global to shared memory on the host: the CPU executor lands each
//! copy at once, so committing and waiting do nothing. The same names as
//! `nvptx/async_copy.rs`, so `async_copy.rs` makes one call on either machine.

use super::shared::Window;

/// The host reads any alignment.
pub(crate) const SOURCE_ALIGNED: bool = false;

/// Copies `BYTES` to element `dst_index` of the shared array at `base` from `src`: the
/// `available` elements from `src_index` (0 reads nothing), zeros for the rest. One copy and
/// one fill, not element by element through `Shared::set` (a third of the library's
/// `matmul_tc` on the CPU executor, callgrind).
///
/// # Safety
/// `BYTES / size_of::<T>()` elements from element `dst_index` at `base` are shared memory of this block (which only this
/// OS thread touches), `available` of them at most; `available` elements of `src` from
/// `src_index` lie in `src`.
#[inline(always)]
pub(crate) unsafe fn start<T: bytemuck::Pod, const BYTES: usize>(
    base: *mut T,
    _window: Window,
    dst_index: usize,
    src: &[T],
    src_index: usize,
    available: usize,
) {
    let n = BYTES / core::mem::size_of::<T>();
    // `available` elements from `src_index` lie in `src`; with none, `src_index` may be
    // anywhere (a piece outside the matrix).
    let from = &src[src_index.min(src.len())..][..available];
    // SAFETY: the caller's contract puts the copy's `n` elements at `to` (`available <= n`);
    // `from` is a slice of `available` elements of global memory, which is not shared memory,
    // so the two do not overlap; shared memory is written by plain stores on the host (one OS
    // thread runs the block).
    unsafe {
        let to = base.add(dst_index);
        core::ptr::copy_nonoverlapping(from.as_ptr(), to, available);
        core::ptr::write_bytes(to.add(available), 0, n - available);
    }
}

/// Nothing to close: every copy has landed.
#[inline(always)]
pub(crate) fn commit() {}

/// Nothing to wait for: every copy has landed.
#[inline(always)]
pub(crate) fn wait<const PENDING: u32>() {}

/// Nothing to wait for: every copy has landed.
#[inline(always)]
pub(crate) fn wait_all() {}
