//! The pieces of the elementwise loop that plain-store outputs (`OwnedOut`) need apart: the
//! thread step without a check point, and the check point itself, so that `#[kernel]` can run
//! a row in runs of `THREADS_PER_POLL` (16) threads whose inner loop LLVM can vectorise.

use super::interrupt::{self, THREADS_PER_POLL};
use super::THREAD;

/// Threads of a row between two deadline check points.
pub const RUN: u32 = THREADS_PER_POLL;

/// Makes thread `x` of the row `Regions::enter_row` started the running one: one store (only
/// x changes along a row), for `thread::index_1d()` in code the macro does not rewrite and for
/// the thread a panic names.
#[inline(always)]
pub fn step_x(base_1d: usize, x: u32) {
    THREAD.with(|t| {
        // SAFETY: a plain write to a field of this thread's own `Cell`; no reference to the
        // cell's contents exists (`Cell` never hands one out).
        unsafe { (*t.as_ptr()).index_1d = base_1d + x as usize }
    });
}

/// A deadline check point, at the start of each run of [`RUN`] threads.
#[inline(always)]
pub fn check_point() {
    interrupt::poll_deadline();
}
