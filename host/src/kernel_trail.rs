//! Which kernel a GPU fault is blamed on. Kernels run asynchronously, so a fault shows at a later
//! driver call, maybe on another stream; and it is sticky, so every later call of the context
//! reports it. Each stream keeps its last kernel not yet seen to finish ([`Trail`]), and each
//! context its last kernel on any stream and how far a context-wide synchronization has seen
//! every launch finish ([`Launches`]).

use crate::lock::lock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// A kernel launch: its number in the context (from 1) and the kernel.
type Launch = Option<(u64, &'static str)>;

/// The last kernel launched on one stream that it has not been seen to finish.
#[derive(Default)]
pub(crate) struct Trail(Mutex<Launch>);

impl Trail {
    /// The stream finished everything queued before launch number `upto` was given out (a
    /// synchronization that succeeded): its kernel up to there did not fault.
    pub(crate) fn finished_upto(&self, upto: u64) {
        let mut last = lock(&self.0);
        if last.is_some_and(|(number, _)| number <= upto) {
            *last = None;
        }
    }
}

/// The launches of one context.
#[derive(Default)]
pub(crate) struct Launches {
    /// Launches numbered so far.
    numbered: AtomicU64,
    /// Every launch up to this number finished without a fault.
    finished: AtomicU64,
    /// The last launch on any stream.
    last: Mutex<Launch>,
}

impl Launches {
    /// Records that `kernel` was launched on the stream of `trail`.
    pub(crate) fn record(&self, trail: &Trail, kernel: &'static str) {
        let number = self.numbered.fetch_add(1, Ordering::Relaxed) + 1;
        *lock(&trail.0) = Some((number, kernel));
        *lock(&self.last) = Some((number, kernel));
    }

    /// The number of the last launch so far: take it before a synchronization, and pass it to
    /// [`Trail::finished_upto`] or [`Launches::finished_upto`] once the synchronization succeeded.
    pub(crate) fn mark(&self) -> u64 {
        self.numbered.load(Ordering::Relaxed)
    }

    /// Every launch up to `upto` finished (a context-wide synchronization succeeded).
    pub(crate) fn finished_upto(&self, upto: u64) {
        self.finished.fetch_max(upto, Ordering::Relaxed);
    }

    /// The kernel to blame for a fault seen at a call on the stream of `trail` (`None`: a
    /// context-wide call), while launching `launching` if it is a launch: the stream's unfinished
    /// kernel, else the context's last unfinished one, else the one being launched (a driver that
    /// reports a kernel's own fault at its launch).
    pub(crate) fn blame(
        &self,
        trail: Option<&Trail>,
        launching: Option<&'static str>,
    ) -> Option<&'static str> {
        let finished = self.finished.load(Ordering::Relaxed);
        let unfinished = |launch: Launch| {
            launch
                .filter(|&(number, _)| number > finished)
                .map(|(_, kernel)| kernel)
        };
        trail
            .and_then(|trail| unfinished(*lock(&trail.0)))
            .or_else(|| unfinished(*lock(&self.last)))
            .or(launching)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fault_is_blamed_on_the_stream_s_own_unfinished_kernel() {
        let launches = Launches::default();
        let (first, second) = (Trail::default(), Trail::default());
        assert_eq!(launches.blame(Some(&first), None), None);
        launches.record(&first, "faulty");
        launches.record(&second, "innocent");
        // Seen on the first stream: its own kernel, though another was launched since.
        assert_eq!(launches.blame(Some(&first), None), Some("faulty"));
        // Seen at a context-wide call: the last launch.
        assert_eq!(launches.blame(None, None), Some("innocent"));
        // The second stream synchronized; the first's kernel is still the one to blame there.
        let mark = launches.mark();
        second.finished_upto(mark);
        assert_eq!(launches.blame(Some(&first), None), Some("faulty"));
        // A context-wide synchronization clears every launch so far.
        launches.finished_upto(launches.mark());
        assert_eq!(launches.blame(Some(&first), None), None);
        // Then a fault at a launch is the launched kernel's own.
        assert_eq!(launches.blame(Some(&first), Some("new")), Some("new"));
        // A kernel recorded after a mark is not cleared by it.
        let mark = launches.mark();
        launches.record(&first, "later");
        first.finished_upto(mark);
        assert_eq!(launches.blame(Some(&first), None), Some("later"));
    }
}
