//! The one list of what differs between the machines a kernel runs on.
//!
//! The kernel language (`thread`, `warp`, `grid`, ...) is written once; the few primitives whose
//! implementation depends on the machine go through the [`Backend`] trait, implemented by
//! `nvptx::Nvptx` (PTX special registers, `asm!`, `core::arch::nvptx`) for the GPU build and by
//! `cpu::Cpu` (calls down into the CPU executor's runtime, `crate::cpu`) for every other target.
//! [`Machine`] names the one the current target uses, so a language module calls
//! `Machine::thread_idx()` with no `cfg(target_arch)` of its own.
//!
//! Why a trait rather than two modules of free functions with the same names: the trait is the
//! list, in one place, of what a new machine must provide, and each target's build checks its
//! implementation against it (a function missing or with another signature on one machine is a
//! compile error there, not a surprise on the other). It costs nothing at run time: every call
//! is static (`Machine::f()`, no `dyn`) and every implementation is `#[inline(always)]`, so the
//! GPU's PTX is what the language modules' own `cfg` pairs produced before.
//!
//! The memory spaces (shared, global, constant memory, asynchronous copies) are per-machine
//! modules beside the trait, `backend/{nvptx,cpu}/{shared,global,constant,async_copy}.rs`, with the
//! same names and functions on both machines, re-exported here: `shared.rs` calls
//! `backend::shared::load(ptr, window, index)` on either machine. They are not trait functions
//! because each has a representation of its own per machine (a `Window` that is the GPU's 32-bit
//! shared-window address and nothing on the host; a constant table's `.const` address or the
//! launch's copy of it). Unlike the trait's, their agreement is checked by their callers: a
//! function one machine lacks fails that target's build (the PTX build, or the host's).
//!
//! Where the language itself differs between machines (the CPU executor's checked mode, the
//! grid-stride loop's chunking on the CPU, a trap on the GPU where the host panics with a
//! message), the language module keeps a `cfg`: those are not primitives of the machine but
//! different language features, and they say why where they are.

use crate::machine::{Dim3, Scope};
use crate::print::format::{CFormat, PrintArgs};
use crate::warp_value::{Shuffle, WarpValue};

#[cfg(not(target_arch = "nvptx64"))]
mod cpu;
#[cfg(target_arch = "nvptx64")]
mod nvptx;

// The machine's memory spaces, as per-machine modules with the same names and functions on both
// machines (`backend/{nvptx,cpu}/*.rs`), so each language module makes one call: not [`Backend`]
// functions, because each has a representation of its own on each machine (the GPU's
// shared-window address, a constant table's `.const` address or the host's copy of it).

/// Asynchronous copies to shared memory: `cp.async` and its groups, or a copy that lands at once.
#[cfg(not(target_arch = "nvptx64"))]
pub(crate) use cpu::async_copy;
/// Constant memory: a table's elements (its `.const` address, or the launch's copy) and reads
/// (`ld.const`, or a plain copy).
#[cfg(not(target_arch = "nvptx64"))]
pub(crate) use cpu::constant;
/// Global memory's element access (an `Out`'s): plain loads and stores, or relaxed atomics.
#[cfg(not(target_arch = "nvptx64"))]
pub(crate) use cpu::global;
/// Shared memory's element access: a `Window` (the GPU's 32-bit shared-window address, nothing
/// on the host), `load`/`store` (`ld.shared`/`st.shared`, or plain accesses), the address the
/// atomics and copies take, and the launch's dynamic shared memory (GPU).
#[cfg(not(target_arch = "nvptx64"))]
pub(crate) use cpu::shared;
#[cfg(target_arch = "nvptx64")]
pub(crate) use nvptx::async_copy;
#[cfg(target_arch = "nvptx64")]
pub(crate) use nvptx::constant;
#[cfg(target_arch = "nvptx64")]
pub(crate) use nvptx::global;
#[cfg(target_arch = "nvptx64")]
pub(crate) use nvptx::shared;

/// The machine this build runs kernels on: the GPU's for `nvptx64`, the CPU executor's otherwise.
#[cfg(not(target_arch = "nvptx64"))]
pub(crate) type Machine = cpu::Cpu;
/// The machine this build runs kernels on: the GPU's for `nvptx64`, the CPU executor's otherwise.
#[cfg(target_arch = "nvptx64")]
pub(crate) type Machine = nvptx::Nvptx;

/// Every primitive of the kernel language whose implementation depends on the machine. The
/// language modules document each one for users; here each says only what it must do.
pub(crate) trait Backend {
    // --- Thread position (CUDA's `threadIdx`, `blockIdx`, `blockDim`, `gridDim`) ---

    /// This thread's position in its block.
    fn thread_idx() -> Dim3;
    /// This block's position in the grid.
    fn block_idx() -> Dim3;
    /// The number of threads in each block.
    fn block_dim() -> Dim3;
    /// The number of blocks in the grid.
    fn grid_dim() -> Dim3;

    /// This thread's global x index, `blockIdx.x * blockDim.x + threadIdx.x` (on the CPU executor,
    /// the index it keeps for the current thread: one read instead of three).
    fn index_1d() -> usize;

    // --- Block barriers (CUDA's `__syncthreads` family) ---

    /// Waits until every thread of the block has reached this barrier.
    fn sync_threads();
    /// [`Backend::sync_threads`] that also returns how many threads passed a true `predicate`.
    fn sync_threads_count(predicate: bool) -> u32;

    // --- Warp exchange (CUDA's `__shfl*_sync`, `__all_sync`, `__any_sync`, `__ballot_sync`,
    // `__syncwarp`); every lane of `mask` must make the same call ---

    /// The `value` of the lane that `op` and `arg` name, among the lanes of `mask`.
    fn shfl<T: WarpValue>(op: Shuffle, mask: u32, value: T, arg: u32) -> T;
    /// Whether `predicate` holds in every lane of `mask`.
    fn vote_all(mask: u32, predicate: bool) -> bool;
    /// Whether `predicate` holds in some lane of `mask`.
    fn vote_any(mask: u32, predicate: bool) -> bool;
    /// The lanes of `mask` whose `predicate` holds, one bit each.
    fn ballot(mask: u32, predicate: bool) -> u32;
    /// Waits until every lane of `mask` has reached this call.
    fn sync_warp(mask: u32);

    // --- Grid sync (cooperative launches) ---

    /// Waits until every thread of every block of the launch has reached this call; memory
    /// written before it by any thread is visible to every thread after it.
    ///
    /// # Safety
    /// `barrier` is the launch's own barrier word in device memory (zeroed at launch), and every
    /// block of the launch is resident at once.
    unsafe fn grid_sync(barrier: *mut u32);

    // --- Printing (CUDA's `printf`) ---

    /// Prints `args` with the C format string `format` (one conversion per argument, in order).
    fn print<A: PrintArgs>(format: &'static CFormat, args: A);

    // --- Fences (CUDA's `__threadfence*`); the atomics themselves are the per-type [`Atomic`]
    // impls in `nvptx/atomic.rs` and `cpu/atomic.rs` ---
    //
    // [`Atomic`]: crate::atomic::Atomic

    /// Orders this thread's memory accesses before the fence before those after it, as seen by
    /// the threads of `scope`.
    fn fence(scope: Scope);
}
