//! What the CPU executor's checks find in kernel code, and how they report it.
//!
//! A check that fails stops the block with a [`BugReport`] unwind (`resume_unwind`, so no panic
//! message is printed); `ferrocuda-host` catches it and returns an error that names the kernel, the
//! block and the thread.

use crate::machine::Dim3;
use core::fmt;
use core::panic::Location;
use std::boxed::Box;
use std::string::String;

/// One thread's access to a shared-memory element, as a race report names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SharedAccess {
    /// The thread, by its position in the block.
    pub thread: Dim3,
    /// A write (`set`) rather than a read (`get`).
    pub write: bool,
    /// The source line of the access (`None` only for accesses the checker did not see made).
    pub at: Option<&'static Location<'static>>,
}

impl fmt::Display for SharedAccess {
    /// `thread (0, 0, 0) read it at src/lib.rs:47:17`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verb = if self.write { "wrote" } else { "read" };
        write!(f, "thread {} {verb} it", self.thread)?;
        match self.at {
            Some(at) => write!(f, " at {at}"),
            None => Ok(()),
        }
    }
}

/// A bug in kernel code found by the CPU executor: each would give a wrong answer, a hang or
/// undefined behaviour on a GPU, usually without any error there.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum KernelBug {
    /// Two threads of a block touched one shared-memory element between two barriers and at
    /// least one of them wrote it (checked mode).
    SharedRace {
        /// The array: its name and where `shared!` declared it.
        array: String,
        /// The element.
        index: usize,
        /// The earlier access.
        earlier: SharedAccess,
        /// The later, conflicting access (by the reported thread).
        later: SharedAccess,
    },
    /// A thread read a shared-memory element that no thread of its block had written: on a GPU
    /// it holds whatever the previous block left there (checked mode).
    UninitializedShared {
        /// The array: its name and where `shared!` declared it.
        array: String,
        /// The element.
        index: usize,
        /// The source line of the read.
        at: &'static Location<'static>,
    },
    /// Some threads of a block wait at a barrier that others never reach.
    BarrierDivergence {
        /// Which threads are where.
        detail: String,
    },
    /// Some blocks of a cooperative launch wait at a `grid.sync()` that another block ended
    /// without reaching.
    GridSyncDivergence {
        /// Which blocks are where.
        detail: String,
    },
    /// A warp operation that the lanes in its mask cannot all join.
    WarpDivergence {
        /// Which lanes are where.
        detail: String,
    },
    /// A warp operation with a mask it cannot have.
    WarpMask {
        /// What is wrong with the mask.
        detail: String,
    },
    /// The block's shared memory (static arrays plus the launch's dynamic bytes) exceeds the
    /// device's limit; a GPU would refuse the launch.
    SharedMemoryTooLarge {
        /// Bytes the block asked for, in total.
        asked: usize,
        /// The limit.
        limit: usize,
        /// The array whose allocation went over.
        array: String,
    },
    /// A thread wrote (or read) an element of an output that another thread wrote in the same
    /// launch, with no barrier of their block between them (or from another block, where
    /// nothing orders them): on a GPU the result depends on timing (checked mode).
    OutputRace {
        /// The output parameter.
        output: String,
        /// The element (of a 2D or 3D output: its offset in the memory).
        index: usize,
        /// The block of the earlier write.
        earlier_block: Dim3,
        /// The thread (in its block) of the earlier write.
        earlier_thread: Dim3,
        /// Whether the later access (by the reported thread) is a write.
        write: bool,
        /// The source line of the later access.
        at: &'static Location<'static>,
    },
}

impl fmt::Display for KernelBug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KernelBug::SharedRace {
                array,
                index,
                earlier,
                later,
            } => write!(
                f,
                "data race on shared array {array}, element {index}: {earlier}, then {later}, \
                 with no sync_threads() between. Put a barrier between the two accesses, or make \
                 them atomic"
            ),
            KernelBug::UninitializedShared { array, index, at } => write!(
                f,
                "read of shared array {array}, element {index}, at {at}, which no thread of this \
                 block has written: on a GPU it holds whatever the last block left there. Write \
                 it (and sync_threads()) before reading it"
            ),
            KernelBug::BarrierDivergence { detail } => write!(
                f,
                "barrier divergence: {detail}. Every thread of a block must reach the same \
                 sync_threads(); on a GPU this hangs or corrupts the block"
            ),
            KernelBug::GridSyncDivergence { detail } => write!(
                f,
                "grid sync divergence: {detail}. Every block of a cooperative launch must reach \
                 the same grid.sync(); on a GPU the grid hangs"
            ),
            KernelBug::WarpDivergence { detail } => write!(
                f,
                "warp divergence: {detail}. Every lane named in a warp operation's mask must \
                 reach the same operation with the same mask"
            ),
            KernelBug::WarpMask { detail } => write!(f, "bad warp mask: {detail}"),
            KernelBug::OutputRace {
                output,
                index,
                earlier_block,
                earlier_thread,
                write,
                at,
            } => write!(
                f,
                "data race on output `{output}`, element {index}: thread {earlier_thread} of \
                 block {earlier_block} wrote it, then this thread {} it at {at}, with nothing \
                 ordering the two. Give each element one writer, put a barrier between threads \
                 of one block, or use an atomic",
                if *write {
                    "wrote a different value to"
                } else {
                    "read"
                }
            ),
            KernelBug::SharedMemoryTooLarge {
                asked,
                limit,
                array,
            } => write!(
                f,
                "the block needs {asked} bytes of shared memory with {array}, more than the \
                 device's {limit} bytes per block: use smaller tiles or less dynamic shared \
                 memory"
            ),
        }
    }
}

/// The panic payload of a failed check: the bug and the simulated thread it is reported for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BugReport {
    /// The thread, by its position in the block.
    pub thread: Dim3,
    /// What is wrong.
    pub bug: KernelBug,
}

/// Stops the block with `bug`, reported for `thread`.
#[cold]
#[inline(never)]
pub(crate) fn raise(thread: Dim3, bug: KernelBug) -> ! {
    std::panic::resume_unwind(Box::new(BugReport { thread, bug }))
}
