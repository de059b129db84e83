//! The running thread's and block's context on the CPU executor: which block of which grid this OS
//! thread is running and which of its threads is current, kept in thread-locals that
//! [`crate::thread`]'s functions read. The lowest layer of the CPU runtime: everything else in
//! `cpu/` reads the context from here; [`super::run`] sets it.

use crate::machine::Dim3;
use core::cell::Cell;

/// Runs `f` with `cell` (a thread-local pointer to the running launch's state: its constant
/// tables, its output shadows) set to `value`, and puts the pointer of before back after, also
/// when `f` unwinds.
pub(crate) fn with_current<T: 'static, R>(
    cell: &'static std::thread::LocalKey<Cell<*const T>>,
    value: &T,
    f: impl FnOnce() -> R,
) -> R {
    struct Restore<T: 'static>(&'static std::thread::LocalKey<Cell<*const T>>, *const T);
    impl<T: 'static> Drop for Restore<T> {
        fn drop(&mut self) {
            self.0.with(|c| c.set(self.1));
        }
    }
    let _restore = Restore(cell, cell.with(|c| c.replace(value)));
    f()
}

/// Where a simulated GPU thread is: what `threadIdx`, `blockIdx`, `blockDim` and `gridDim` say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadContext {
    /// Position in the block.
    pub thread_idx: Dim3,
    /// Position of the block in the grid.
    pub block_idx: Dim3,
    /// Threads per block.
    pub block_dim: Dim3,
    /// Blocks in the grid.
    pub grid_dim: Dim3,
}

/// The block a CPU entry is asked to run, and how.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockContext {
    /// Position of the block in the grid.
    pub block_idx: Dim3,
    /// Threads per block.
    pub block_dim: Dim3,
    /// Blocks in the grid.
    pub grid_dim: Dim3,
    /// Bytes of dynamic shared memory the launch asked for.
    pub dynamic_shared_bytes: u32,
    /// The device's shared memory per block: static arrays and dynamic bytes together.
    pub shared_limit_bytes: u32,
    /// Checked mode: find shared-memory races and uninitialized shared reads.
    pub checked: bool,
    /// When the launch must have ended: a thread still running then stops the block with
    /// [`Interrupted`](super::Interrupted) at its next check point (see [`Interruption::DeadlinePassed`](super::Interruption::DeadlinePassed)).
    pub deadline: Option<std::time::Instant>,
    /// The stack of each simulated thread, in bytes (0: [`DEFAULT_STACK_BYTES`](super::DEFAULT_STACK_BYTES)): a thread that
    /// needs more stops the block with [`Interrupted`](super::Interrupted)
    /// ([`Interruption::StackOverflow`](super::Interruption::StackOverflow)).
    pub stack_bytes: usize,
    /// Run the block on the coroutine path even if `#[kernel]` split the kernel at its barriers
    /// (`CpuOptions::force_coroutines`): both paths must give the same results and reports.
    pub coroutines: bool,
    /// How many blocks this call of the CPU entry runs: this one and the next ones along x
    /// (0 counts as 1). The executor's own cost per call (a stack switch, the launch's
    /// thread-local state) is then paid once per run of blocks, not per block.
    pub blocks: u32,
}

/// The blocks a call of the CPU entry runs (see [`BlockContext::blocks`]), one by one. An
/// executor internal: `#[kernel]`'s CPU entries call it.
#[doc(hidden)]
pub fn each_block(block: &BlockContext) -> impl Iterator<Item = BlockContext> + '_ {
    (0..block.blocks.max(1)).map(move |k| BlockContext {
        block_idx: Dim3::new(block.block_idx.x + k, block.block_idx.y, block.block_idx.z),
        blocks: 1,
        ..*block
    })
}

/// The part of a [`BlockContext`] the thread functions read, kept apart from its flags so that
/// reading it on every `thread_idx()` is three plain loads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Geometry {
    pub(crate) block_idx: Dim3,
    pub(crate) block_dim: Dim3,
    pub(crate) grid_dim: Dim3,
}

impl Geometry {
    /// A zero `block_dim` (never valid in a launch) means "no kernel is running on this thread".
    pub(super) const NONE: Geometry = Geometry {
        block_idx: Dim3::new(0, 0, 0),
        block_dim: Dim3::new(0, 0, 0),
        grid_dim: Dim3::new(0, 0, 0),
    };
}

/// The simulated GPU thread running on this OS thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ThreadPos {
    /// `thread::index_1d()`, `block_idx.x * block_dim.x + thread_idx.x`: the x of the position
    /// in the block is kept this way so that stepping to the next thread is one store and an
    /// elementwise kernel reads its index with one load. `usize::MAX` outside a kernel.
    pub(super) index_1d: usize,
    /// y of the position in the block.
    pub(super) y: u32,
    /// z of the position in the block.
    pub(super) z: u32,
}

impl ThreadPos {
    pub(super) const NONE: ThreadPos = ThreadPos {
        index_1d: usize::MAX,
        y: 0,
        z: 0,
    };

    /// The position in `block` (CUDA `threadIdx`).
    #[inline(always)]
    pub(super) fn idx(self, block: &Geometry) -> Dim3 {
        let base = block.block_idx.x as usize * block.block_dim.x as usize;
        Dim3::new(self.index_1d.wrapping_sub(base) as u32, self.y, self.z)
    }
}

// Two cells, so that stepping from one thread to the next writes two words, not the whole context.
std::thread_local! {
    pub(super) static BLOCK: Cell<Geometry> = const { Cell::new(Geometry::NONE) };
    pub(super) static THREAD: Cell<ThreadPos> = const { Cell::new(ThreadPos::NONE) };
}

/// Makes the thread at `idx` of the current block the running one.
#[inline(always)]
pub(crate) fn set_thread(idx: Dim3) {
    let block = BLOCK.with(Cell::get);
    let index_1d = block.block_idx.x as usize * block.block_dim.x as usize + idx.x as usize;
    THREAD.with(|t| {
        t.set(ThreadPos {
            index_1d,
            y: idx.y,
            z: idx.z,
        })
    });
}

impl BlockContext {
    #[cfg(test)]
    pub(super) const NONE: BlockContext = BlockContext {
        block_idx: Dim3::new(0, 0, 0),
        block_dim: Dim3::new(0, 0, 0),
        grid_dim: Dim3::new(0, 0, 0),
        dynamic_shared_bytes: 0,
        shared_limit_bytes: 0,
        checked: false,
        deadline: None,
        stack_bytes: 0,
        coroutines: false,
        blocks: 1,
    };
}

/// Where the block being run on this OS thread is, and its size.
///
/// # Panics
/// Outside a kernel launch: the thread functions have no meaning there.
#[inline(always)]
pub(crate) fn current_block() -> Geometry {
    let block = BLOCK.with(Cell::get);
    if block.block_dim.x == 0 {
        outside_kernel();
    }
    block
}

/// The position in its block of the simulated GPU thread running on this OS thread.
///
/// # Panics
/// Outside a kernel launch.
#[inline(always)]
pub fn current_thread() -> Dim3 {
    THREAD.with(Cell::get).idx(&current_block())
}

/// `thread::index_1d()` of the running thread: one load, for elementwise kernels' inner loop.
///
/// # Panics
/// Outside a kernel launch.
#[inline(always)]
pub fn current_index_1d() -> usize {
    let index = THREAD.with(Cell::get).index_1d;
    if index == usize::MAX {
        outside_kernel();
    }
    index
}

/// The current thread's index in its block, x fastest (its rank in warp order).
pub(crate) fn current_linear() -> usize {
    let d = current_block().block_dim;
    let t = current_thread();
    (t.z as usize * d.y as usize + t.y as usize) * d.x as usize + t.x as usize
}

/// The position of the thread with index `linear` (x fastest) in a block of `block_dim`.
pub(crate) fn linear_to_dim(linear: usize, block_dim: Dim3) -> Dim3 {
    let (dx, dy) = (block_dim.x as usize, block_dim.y as usize);
    Dim3::new(
        (linear % dx) as u32,
        (linear / dx % dy) as u32,
        (linear / (dx * dy)) as u32,
    )
}

/// Whether this OS thread is running a block of a kernel (inside [`run_block`]).
pub(crate) fn in_kernel() -> bool {
    BLOCK.with(Cell::get).block_dim.x != 0
}

#[cold]
#[inline(never)]
fn outside_kernel() -> ! {
    panic!(
        "ferrocuda_std::thread functions were called outside a kernel launch; launch the kernel through \
         ferrocuda (e.g. `launch!`), which sets the thread and block indices"
    )
}
