//! Shared memory's element accesses on the host: plain loads and stores. Unlike an output's
//! (relaxed atomics, `global.rs`), a block's shared memory is only ever touched by the one OS
//! thread that runs the block: its simulated threads run one after another there (coroutines
//! included, which switch only at barriers and warp operations), and a `Shared` is neither
//! `Send` nor `Sync`, so no other OS thread can reach it. Plain accesses let LLVM use one
//! 16-byte load for a `F32x4` and vectorise around them, where atomics were one word at a time.
//!
//! The same names as `nvptx/shared.rs`, so `shared.rs` makes one call on either machine.

/// The GPU's shared-window address of an array; the host has no shared window (shared memory
/// is the block's own ordinary memory), so nothing: a `Shared` stays its pointer and length.
#[derive(Clone, Copy)]
pub(crate) struct Window;

impl Window {
    /// No window for `base`: accesses go through the pointer.
    #[inline(always)]
    pub(crate) fn of<T>(_base: *mut T) -> Self {
        Window
    }
}

/// Element `index` as this machine's shared-memory operations take it (the atomics of
/// `Space::Block`, the asynchronous copies): on the host, its address.
///
/// # Safety
/// `base` holds at least `index + 1` elements.
#[inline(always)]
pub(crate) unsafe fn element_address<T>(base: *mut T, _window: Window, index: usize) -> *mut T {
    // SAFETY: the caller's contract.
    unsafe { base.add(index) }
}

/// # Safety
/// `base` is valid for reads of element `index` (alignment not needed), and no other OS thread
/// writes it.
#[inline(always)]
pub(crate) unsafe fn load<T: bytemuck::Pod>(base: *mut T, _window: Window, index: usize) -> T {
    // SAFETY: the caller's contract; `T: Pod` makes any bytes a valid `T`.
    unsafe { base.add(index).read_unaligned() }
}

/// # Safety
/// `base` is valid for writes of element `index` (alignment not needed), and no other OS thread
/// accesses it.
#[inline(always)]
pub(crate) unsafe fn store<T: bytemuck::Pod>(
    base: *mut T,
    _window: Window,
    index: usize,
    value: T,
) {
    // SAFETY: the caller's contract.
    unsafe { base.add(index).write_unaligned(value) }
}
