//! Stopping a block that cannot go on: past its launch's deadline, or out of stack.
//!
//! Both stop the block with an [`Interrupted`] unwind (like a failed check's `BugReport`), which
//! `ferrocuda-host` turns into an error naming the kernel, block and thread.
//!
//! The deadline is read at the executor's check points: before every [`THREADS_PER_POLL`]th
//! thread of a block row starts (the first included; every 64th in a split region's loop after
//! its first thread to finish, and once per row in the plain-store elementwise loop, loops LLVM
//! may vectorise), at every barrier and warp operation, and every [`GRID_STRIDE_CHUNK`] indices of a grid-stride
//! loop. The clock is read at every [`POLL_EVERY`]th check point of an OS thread, so that an
//! elementwise kernel pays one thread-local decrement per check, not a clock read. Code with no
//! check point (a `loop {}` that never reaches a barrier, a long computation inside one index of
//! a grid-stride loop) cannot be stopped: the launch ends only when it does.

use crate::machine::Dim3;
use core::cell::Cell;
use std::boxed::Box;
use std::time::Instant;

/// Check points between two reads of the clock.
const POLL_EVERY: u32 = 64;

/// Threads of a block row between two check points: the start of every 16th thread is one (the
/// check costs elementwise kernels, whose threads do little, more than their work otherwise).
pub(crate) const THREADS_PER_POLL: u32 = 16;

/// Indices of a grid-stride loop between two check points (on the CPU a thread's indices are one
/// contiguous run: the check is at each chunk's start).
pub(crate) const GRID_STRIDE_CHUNK: usize = 1024;

/// Why a block was stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Interruption {
    /// The launch's deadline passed while the thread was still running.
    DeadlinePassed,
    /// The thread's call stack outgrew its `stack_bytes` (see [`super::context::BlockContext`]).
    StackOverflow {
        /// The size of each simulated thread's stack.
        stack_bytes: usize,
    },
}

/// The unwind payload of a stopped block: the simulated thread it was stopped in, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interrupted {
    /// The thread, by its position in the block.
    pub thread: Dim3,
    /// Why.
    pub why: Interruption,
}

std::thread_local! {
    /// The deadline of the launch whose block runs on this OS thread, if it has one.
    static DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
    /// Check points left before the next read of the clock.
    static COUNTDOWN: Cell<u32> = const { Cell::new(0) };
}

/// Sets the deadline for the block about to run on this OS thread (`None`: no deadline).
pub(crate) fn begin_block(deadline: Option<Instant>) {
    DEADLINE.set(deadline);
    // The first check point of the block reads the clock (and, without a deadline, sets the
    // countdown to its maximum).
    COUNTDOWN.set(0);
}

/// A check point: stops the block if its deadline has passed (reading the clock every
/// [`POLL_EVERY`] calls).
#[inline(always)]
pub(crate) fn poll_deadline() {
    let left = COUNTDOWN.get();
    if left == 0 {
        read_clock();
    } else {
        COUNTDOWN.set(left - 1);
    }
}

/// A check point that reads the clock now (for a thread blocked outside its block's scheduler).
pub(crate) fn check_deadline() {
    read_clock();
}

#[cold]
#[inline(never)]
fn read_clock() {
    let Some(deadline) = DEADLINE.get() else {
        COUNTDOWN.set(u32::MAX);
        return;
    };
    COUNTDOWN.set(POLL_EVERY - 1);
    if Instant::now() >= deadline {
        raise(
            super::context::current_thread(),
            Interruption::DeadlinePassed,
        );
    }
}

/// Stops the block, reporting `thread`.
#[cold]
#[inline(never)]
pub(crate) fn raise(thread: Dim3, why: Interruption) -> ! {
    std::panic::resume_unwind(Box::new(Interrupted { thread, why }))
}
