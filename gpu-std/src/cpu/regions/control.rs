//! What a split block does between its regions, as the GPU's hardware would: counts the threads
//! that return, parks those that leave a split loop's trip by `break`/`continue` until the block
//! gets where they went, takes the block's vote on a loop with a barrier in it, and reports
//! barrier divergence (threads that would wait at different barriers, or at none).

use super::{Regions, MAX_LEAVE_DEPTH};
use crate::cpu::bug::{raise, KernelBug};
use crate::cpu::context::linear_to_dim;
use crate::cpu::{interrupt, shared};
use crate::machine::Dim3;
use core::panic::Location;
use std::format;
use std::string::String;

impl Regions {
    /// Whether some thread of the block has not returned: the block-level steps of the split
    /// path (a block-uniform assignment, a block-uniform loop's next trip) run only then.
    #[inline(always)]
    pub fn running(&self) -> bool {
        self.returned.get() < self.threads
    }

    /// The running thread returned.
    #[inline(always)]
    pub fn returned(&self) {
        self.returned.set(self.returned.get() + 1);
    }

    /// A barrier, `sync_threads()` at `site`, after a region: `true` if the block goes on;
    /// `false` if every thread has returned. Some returned and some not is barrier divergence,
    /// and so is a thread that left the loop's trip by `break`/`continue` (it never gets here).
    #[inline]
    pub fn barrier(&self, site: &'static Location<'static>) -> bool {
        interrupt::poll_deadline();
        if self.parked.get() != 0 {
            let waiting = self.threads - self.returned.get() - self.parked.get();
            self.parked_divergence(&format!(
                "{waiting} threads waiting at sync_threads() at {site}"
            ));
        }
        match self.returned.get() {
            0 => {
                shared::next_epoch();
                true
            }
            r if r == self.threads => false,
            r => {
                let waiting = self.threads - r;
                let detail = format!(
                    "{waiting} threads waiting at sync_threads() at {site}, but {r} threads \
                     returned without reaching it"
                );
                raise(Dim3::new(0, 0, 0), KernelBug::BarrierDivergence { detail })
            }
        }
    }

    /// Thread `linear` leaves the rest of a split loop's trip: `code` is `2 · depth + 1` for a
    /// `break` out of the split loop at `depth` (0: the outermost), `2 · depth` for a
    /// `continue` of it, at `site`. It runs no region until the block gets there: after that
    /// loop, or at its next trip (see [`Regions::left`]); a barrier it would skip reached by
    /// others is barrier divergence.
    #[inline]
    pub fn leave(&self, linear: usize, code: u32, site: &'static Location<'static>) {
        let depth = (code / 2) as usize;
        assert!(
            depth < MAX_LEAVE_DEPTH,
            "a `break`/`continue` out of split loops nested deeper than {MAX_LEAVE_DEPTH}"
        );
        self.alive[linear].set(false);
        self.park[linear].set(code as u8 + 1);
        if self.parked.get() == 0 {
            self.first_park.set((linear, Some(site)));
        }
        self.parked.set(self.parked.get() + 1);
        let count = &self.park_counts[code as usize];
        count.set(count.get() + 1);
    }

    /// Every thread of the block that has not returned leaves the rest of the trip by `code`
    /// (as [`Regions::leave`], at `site`): a block-uniform `if cond { break; }` that `#[kernel]`
    /// lifted out of the regions. Returns the block's jump, as [`Regions::left`]: `1 + code` if
    /// no thread waits elsewhere (then none is parked: the jump makes them all arrive).
    #[inline]
    pub fn leave_block(&self, code: u32, site: &'static Location<'static>) -> u32 {
        if self.parked.get() == 0 {
            return code + 1;
        }
        for linear in 0..self.threads {
            if self.alive[linear].get() {
                self.leave(linear, code, site);
            }
        }
        self.left()
    }

    /// After a region in a split loop that threads may leave: 0 while some thread that has not
    /// returned still runs the trip (or none left); else (every such thread left) 1 + the code
    /// of the jump the block makes: `2 · depth + 1` for a `break` out of the split loop at
    /// `depth`, `2 · depth` for its next trip, where `depth` is the innermost loop some thread
    /// went to (the others went further out, and wait), and the next trip if any went there.
    #[inline(always)]
    pub fn left(&self) -> u32 {
        let parked = self.parked.get();
        if parked == 0 || parked + self.returned.get() < self.threads {
            return 0;
        }
        self.innermost_leave()
    }

    #[cold]
    fn innermost_leave(&self) -> u32 {
        let counts = &self.park_counts;
        let depth = (0..MAX_LEAVE_DEPTH)
            .rev()
            .find(|&d| counts[2 * d].get() + counts[2 * d + 1].get() != 0)
            .expect("a thread left");
        let code = if counts[2 * depth].get() != 0 {
            2 * depth
        } else {
            2 * depth + 1
        };
        code as u32 + 1
    }

    /// The start of a trip of the split loop at `depth`: the threads that left its last trip by
    /// `continue` run again.
    #[inline(always)]
    pub fn next_trip(&self, depth: u32) {
        if self.parked.get() != 0 {
            self.unpark(2 * depth);
        }
    }

    /// After the split loop at `depth`: the threads that left it by `break` run again.
    #[inline(always)]
    pub fn after_loop(&self, depth: u32) {
        if self.parked.get() != 0 {
            self.unpark(2 * depth + 1);
            self.unpark(2 * depth);
        }
    }

    /// Every thread that left by `code` runs again.
    #[cold]
    fn unpark(&self, code: u32) {
        let count = &self.park_counts[code as usize];
        if count.get() == 0 {
            return;
        }
        let mark = code as u8 + 1;
        for (park, alive) in self.park.iter().zip(&self.alive) {
            if park.get() == mark {
                park.set(0);
                alive.set(true);
            }
        }
        self.parked.set(self.parked.get() - count.get() as usize);
        count.set(0);
        if self.parked.get() != 0 {
            let first = self.park.iter().position(|p| p.get() != 0).unwrap_or(0);
            self.first_park.set((first, None));
        }
    }

    /// A block-uniform split loop at `depth` (at `loop_site`) goes round again: a thread that
    /// left it by `break` is divergence (it waits after the loop, the others go on to its
    /// barriers).
    #[inline(always)]
    pub fn another_trip(&self, depth: u32, loop_site: &'static Location<'static>) {
        if self.parked.get() != 0 && self.park_counts[2 * depth as usize + 1].get() != 0 {
            self.parked_divergence(&format!(
                "the block goes round the loop at {loop_site} again"
            ));
        }
    }

    /// Barrier divergence between `others` (what the running threads do) and the threads that
    /// left a loop's trip.
    #[cold]
    fn parked_divergence(&self, others: &str) -> ! {
        let d = self.block.block_dim;
        let (first, site) = self.first_park.get();
        let code = self.park[first].get().wrapping_sub(1);
        let how = if code % 2 == 1 { "break" } else { "continue" };
        let site = match site {
            Some(site) => format!(" at {site}"),
            None => String::new(),
        };
        let detail = format!(
            "{others}, but {} threads left the loop by `{how}`{site} (first: thread {}) and \
             never reach it",
            self.parked.get(),
            linear_to_dim(first, d)
        );
        raise(
            linear_to_dim(first, d),
            KernelBug::BarrierDivergence { detail },
        )
    }

    /// Records the running thread `linear`'s decision of a loop with a barrier in it: another
    /// trip (`true`) or not.
    #[inline(always)]
    pub fn vote(&self, linear: usize, another_trip: bool) {
        let (voted, yes) = (self.voted.get(), self.yes.get());
        if another_trip && yes == 0 {
            self.yes_thread.set(linear);
        }
        if !another_trip && yes == voted {
            self.no_thread.set(linear);
        }
        self.voted.set(voted + 1);
        self.yes.set(yes + usize::from(another_trip));
    }

    /// The block's decision from the votes: every thread that has not returned must agree (a
    /// loop with a barrier in it must be block-uniform); else barrier divergence. `depth`: the
    /// loop's among the split loops around it (0: the outermost); a thread that left it by
    /// `break` votes no.
    #[inline]
    pub fn decide(
        &self,
        depth: u32,
        loop_site: &'static Location<'static>,
        barrier_site: &'static Location<'static>,
    ) -> bool {
        let (voted, yes) = (self.voted.replace(0), self.yes.replace(0));
        if yes > 0 {
            self.another_trip(depth, loop_site);
        }
        if yes == voted {
            return voted > 0;
        }
        if yes == 0 {
            return false;
        }
        let d = self.block.block_dim;
        let (stay, leave) = (
            linear_to_dim(self.yes_thread.get(), d),
            linear_to_dim(self.no_thread.get(), d),
        );
        let detail = format!(
            "{yes} threads go round the loop at {loop_site} again, to wait at sync_threads() at \
             {barrier_site} (first: thread {stay}), but {} threads leave it (first: thread \
             {leave}) and never reach that barrier",
            voted - yes
        );
        raise(stay, KernelBug::BarrierDivergence { detail })
    }
}
