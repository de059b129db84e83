//! The pieces of the elementwise loop that plain-store outputs (`OwnedOut`) need apart: the
//! thread step without a check point, the check point itself, so that `#[kernel]` can run a
//! block row as one loop LLVM can vectorise, and a grid-stride loop's indices as plain ranges
//! ([`GridStrideRun`]) for the same reason.

use super::context::THREAD;
use super::interrupt::{self, GRID_STRIDE_CHUNK};
use core::ops::Range;

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

/// A deadline check point, before each block row of the plain-store loop.
#[inline(always)]
pub fn check_point() {
    interrupt::poll_deadline();
}

/// The indices `0..n` thread `index` of `threads` takes in a grid-stride loop on the CPU: the
/// `index`-th of the contiguous runs of ⌈n / threads⌉ indices (empty past the end). Runs of
/// distinct `index`es never overlap. `thread::grid_stride` and [`GridStrideRun`] both use it,
/// so that the plain-store copy of a loop visits exactly the indices the original does.
#[inline(always)]
pub(crate) fn grid_stride_bounds(index: usize, threads: usize, n: usize) -> (usize, usize) {
    let run = n.div_ceil(threads.max(1));
    let start = index.saturating_mul(run).min(n);
    (start, start.saturating_add(run).min(n))
}

/// One thread's indices of `for i in thread::grid_stride(n)`, as `#[kernel]`'s plain-store copy
/// of the loop runs them: ranges of at most `GRID_STRIDE_CHUNK` (1024) indices with a deadline
/// check point before each, as `GridStride` has, but with an inner loop over a plain range that
/// LLVM can vectorise (`GridStride::next`'s call at each chunk's end keeps it from that).
/// `OwnedOut`'s grid-stride accesses check their index against it.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct GridStrideRun {
    start: usize,
    end: usize,
}

impl GridStrideRun {
    /// The run of thread `index` (blockIdx.x·blockDim.x + threadIdx.x) of a 1D grid of
    /// `threads` threads over `0..n`.
    #[inline(always)]
    pub fn new(n: usize, index: usize, threads: usize) -> Self {
        let (start, end) = grid_stride_bounds(index, threads, n);
        GridStrideRun { start, end }
    }

    /// The run's indices in chunks, each after a deadline check point.
    #[inline(always)]
    pub fn chunks(self) -> impl Iterator<Item = Range<usize>> {
        let end = self.end;
        (self.start..end)
            .step_by(GRID_STRIDE_CHUNK)
            .map(move |first| {
                interrupt::poll_deadline();
                first..end.min(first + GRID_STRIDE_CHUNK)
            })
    }

    /// Whether `index` is one of the run's.
    #[inline(always)]
    pub fn contains(&self, index: usize) -> bool {
        (self.start..self.end).contains(&index)
    }

    /// Whether every index of `chunk` is one of the run's (each of [`GridStrideRun::chunks`]
    /// is; asked where the answer lets LLVM drop the checks of [`GridStrideRun::contains`]).
    #[inline(always)]
    pub fn holds(&self, chunk: &Range<usize>) -> bool {
        self.start <= chunk.start && chunk.end <= self.end
    }
}

#[cfg(test)]
mod tests {
    use super::{grid_stride_bounds, GridStrideRun};
    use std::{vec, vec::Vec};

    #[test]
    fn the_runs_of_a_grid_cover_every_index_once() {
        for (n, threads) in [(0, 4), (1, 4), (10, 4), (1000, 7), (4096, 1024), (5, 1)] {
            let mut seen = vec![0u32; n];
            for t in 0..threads + 2 {
                let run = GridStrideRun::new(n, t, threads);
                for chunk in run.chunks() {
                    for i in chunk {
                        assert!(run.contains(i));
                        seen[i] += 1;
                    }
                }
                let (start, end) = grid_stride_bounds(t, threads, n);
                assert!(!run.contains(end) || start == end);
            }
            assert!(seen.iter().all(|&c| c == 1), "n {n}, {threads} threads");
        }
    }

    #[test]
    fn chunks_are_at_most_a_check_interval_long() {
        let run = GridStrideRun::new(5000, 0, 1);
        let lens: Vec<usize> = run.chunks().map(|c| c.len()).collect();
        assert_eq!(lens, [1024, 1024, 1024, 1024, 904]);
    }
}
