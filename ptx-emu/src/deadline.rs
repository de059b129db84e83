//! The launch's deadline: how often threads and schedulers look at the clock, and the
//! [`FaultKind::Timeout`] once it has passed.

use crate::block::{Grid, Trouble};
use crate::FaultKind;
use std::time::Instant;

/// Instructions a thread runs between two looks at the clock (at a backward branch), and a
/// block between two rounds of its scheduler that look: the deadline costs one comparison per
/// backward branch.
pub(crate) const DEADLINE_CHECK_EVERY: u64 = 1 << 16;

/// A [`FaultKind::Timeout`] once the launch's deadline has passed.
#[cold]
pub(crate) fn check_deadline(grid: &Grid) -> Result<(), Trouble> {
    match grid.deadline {
        Some((at, given)) if Instant::now() >= at => Err(Trouble::new(
            FaultKind::Timeout,
            format!(
                "still running after the launch's deadline of {:.3} s: a loop that never ends?",
                given.as_secs_f64()
            ),
        )),
        _ => Ok(()),
    }
}
