//! Shared memory's element accesses on the host: plain loads and stores. Unlike an output's
//! (relaxed atomics, [`crate::mem`]), a block's shared memory is only ever touched by the one OS
//! thread that runs the block: its simulated threads run one after another there (coroutines
//! included, which switch only at barriers and warp operations), and a `Shared` is neither
//! `Send` nor `Sync`, so no other OS thread can reach it. Plain accesses let LLVM use one
//! 16-byte load for a `F32x4` and vectorise around them, where atomics were one word at a time.

/// # Safety
/// `p` is valid for reads of a `T` (alignment not needed), and no other OS thread writes it.
#[inline(always)]
pub(crate) unsafe fn load<T: bytemuck::Pod>(p: *const T) -> T {
    // SAFETY: the caller's contract; `T: Pod` makes any bytes a valid `T`.
    unsafe { p.read_unaligned() }
}

/// # Safety
/// `p` is valid for writes of a `T` (alignment not needed), and no other OS thread accesses it.
#[inline(always)]
pub(crate) unsafe fn store<T: bytemuck::Pod>(p: *mut T, value: T) {
    // SAFETY: the caller's contract.
    unsafe { p.write_unaligned(value) }
}
