//! Running one block's threads on the CPU executor ([`run_block`]), taking the context a stopped
//! block left ([`take_current`]), and the block-wide waits the language calls (`sync_threads*`,
//! the warp-mask checks, [`wait`], where every barrier and warp operation suspends). Above [`super::context`] (which it sets) and the cooperative scheduler
//! (`block.rs`, which it starts).

use super::block;
use super::bug::{self, KernelBug};
use super::context::{
    current_block, current_linear, current_thread, set_thread, BlockContext, Geometry,
    ThreadContext, ThreadPos, BLOCK, THREAD,
};
use super::interrupt::{self, Interruption};
use super::stack_guard::{self, DEFAULT_STACK_BYTES};
use super::waits::{Wait, WarpOp, WARP};
use super::{fallback, regions, shared};
use crate::machine::Dim3;

/// Suspends the calling simulated thread at `wait` until the block (barrier) or the warp (warp
/// operation) releases it, and returns the released value.
pub(crate) fn wait(wait: Wait) -> u64 {
    if regions::in_split_block() && !block::is_active() {
        // A barrier the macro did not see: the rest of the region runs cooperatively, with
        // this thread as the driver (activated below), or it is reported.
        fallback::hidden_sync(&wait);
    }
    block::suspend(wait)
}

/// Takes (and clears) the context left on this OS thread by a block that stopped with a panic,
/// and drops the block's suspended threads: the executor uses the context to say which thread
/// failed. An executor internal, not for kernel code.
///
/// # Safety
/// No block may be running on this OS thread: call it after [`run_block`] returned or unwound,
/// never from kernel code (it would drop the stacks of the block's suspended threads, the
/// running one's among them).
#[doc(hidden)]
pub unsafe fn take_current() -> Option<ThreadContext> {
    block::abandon();
    regions::abandon();
    let block = BLOCK.with(|b| b.replace(Geometry::NONE));
    let thread = THREAD.with(|t| t.replace(ThreadPos::NONE));
    (block.block_dim.x != 0).then_some(ThreadContext {
        thread_idx: thread.idx(&block),
        block_idx: block.block_idx,
        block_dim: block.block_dim,
        grid_dim: block.grid_dim,
    })
}

/// Runs `thread` for every thread of `block`, x fastest, with the thread context set.
///
/// Threads run one after another on this OS thread until one reaches a barrier or a warp
/// operation; the rest of the block then runs cooperatively, so every thread reaches each
/// `sync_threads()` before any passes it. A block whose threads cannot meet (barrier or warp
/// divergence), a failed check and a panic in kernel code all unwind out of here; the context of
/// the thread concerned is left in place for [`take_current`]. An executor internal: `#[kernel]`'s
/// CPU entries call it.
///
/// # Safety
/// No other block may be running on this OS thread (no call from kernel code), and if this
/// unwinds, the caller must call [`take_current`] on this OS thread before it runs another block
/// or lets the thread go: until then the block's suspended threads keep stacks that a later
/// `sync_threads()` would resume.
#[doc(hidden)]
#[inline(always)]
pub unsafe fn run_block(block: &BlockContext, thread: impl Fn() + Copy) {
    BLOCK.with(|b| {
        b.set(Geometry {
            block_idx: block.block_idx,
            block_dim: block.block_dim,
            grid_dim: block.grid_dim,
        })
    });
    shared::begin_block(block);
    interrupt::begin_block(block.deadline);
    // The scheduler gets its own copy of the closure: the loop below keeps using one whose
    // address never escapes, so the compiler can hold the kernel's arguments in registers.
    let scheduled = thread;
    let stack_bytes = match block.stack_bytes {
        0 => DEFAULT_STACK_BYTES,
        bytes => bytes,
    };
    // SAFETY: `thread` lives until this function returns, and every coroutine that calls it is
    // finished by `finish_block` below, or dropped by `take_current` (via `abandon`) after an
    // unwind, before the executor runs another block on this OS thread.
    unsafe { block::begin_block(&scheduled, block.block_dim, stack_bytes) };
    // Every thread runs on a guarded stack of `stack_bytes`, these ones on the block's runner.
    let block_copy = *block;
    let ended = stack_guard::on_guarded_stack(stack_bytes, &move || {
        // Copies whose addresses never escape (the closure's captures are behind a pointer), so
        // that the compiler can keep the kernel's arguments in registers across its stores.
        let (block, thread) = (block_copy, thread);
        run_threads(&block, thread)
    });
    if ended == stack_guard::Ended::Overflowed {
        // The block's threads after the overflowing one never started; its context stays for
        // `take_current`, like a panic's.
        interrupt::raise(
            current_thread(),
            Interruption::StackOverflow { stack_bytes },
        );
    }
    BLOCK.with(|b| b.set(Geometry::NONE));
    THREAD.with(|t| t.set(ThreadPos::NONE));
}

/// The loop of [`run_block`] over the block's threads, x fastest, until one reaches a barrier
/// or warp operation and the rest of the block runs cooperatively.
#[inline(always)]
fn run_threads(block: &BlockContext, thread: impl Fn() + Copy) {
    let d = block.block_dim;
    'threads: for z in 0..d.z {
        for y in 0..d.y {
            set_thread(Dim3::new(0, y, z));
            let base_1d = block.block_idx.x as usize * d.x as usize;
            for x in 0..d.x {
                // Only x changes along a row: one store.
                THREAD.with(|t| {
                    // SAFETY: a plain write to a field of this thread's own `Cell`; no reference
                    // to the cell's contents exists (`Cell` never hands one out).
                    unsafe { (*t.as_ptr()).index_1d = base_1d + x as usize }
                });
                // Between threads, every `THREADS_PER_POLL`th (a register test, not a TLS access,
                // for the threads in between).
                if x % interrupt::THREADS_PER_POLL == 0 {
                    interrupt::poll_deadline();
                }
                thread();
                if block::is_active() {
                    block::finish_block();
                    break 'threads;
                }
            }
        }
    }
}

/// Stops the block if `mask` cannot be a warp operation's mask for the calling thread: the
/// caller must be in it, and every lane in it must exist (the last warp of a block whose size is
/// not a multiple of 32 has fewer lanes).
pub(crate) fn check_warp_mask(op: WarpOp, mask: u32) {
    let threads = current_block().block_dim.count() as usize;
    let me = current_linear();
    let (warp, lane) = (me / WARP, me % WARP);
    let lanes = (threads - warp * WARP).min(WARP);
    let detail = if mask & (1 << lane) == 0 {
        std::format!(
            "lane {lane} of warp {warp} calls {} with mask {mask:#010x}, which leaves the \
             caller out",
            op.name()
        )
    } else if lanes < WARP && mask >> lanes != 0 {
        std::format!(
            "mask {mask:#010x} of {} names lanes past lane {} but warp {warp} of this block \
             has only {lanes} lanes (use warp::warp_mask())",
            op.name(),
            lanes - 1
        )
    } else {
        return;
    };
    bug::raise(current_thread(), KernelBug::WarpMask { detail });
}

/// Stops the block: the calling thread's warp cannot do the warp operation it is in, as
/// `detail` says (lanes that disagree on what it is).
pub(crate) fn warp_divergence(detail: std::string::String) -> ! {
    bug::raise(current_thread(), KernelBug::WarpDivergence { detail })
}

/// `sync_threads()` on the CPU executor: waits until every thread of the block is here.
#[track_caller]
pub(crate) fn sync_threads() {
    sync_threads_count(false);
}

/// `sync_threads()` reported at `site` (a grid sync's block barriers).
pub(crate) fn sync_threads_at(site: &'static core::panic::Location<'static>) {
    wait(Wait::Barrier {
        site,
        predicate: false,
    });
}

/// A barrier that also counts the threads of the block whose `predicate` holds.
#[track_caller]
pub(crate) fn sync_threads_count(predicate: bool) -> u32 {
    wait(Wait::Barrier {
        site: core::panic::Location::caller(),
        predicate,
    }) as u32
}

#[cfg(test)]
mod tests {
    use super::super::bug::BugReport;
    use super::super::shared::SharedSite;
    use super::*;
    use crate::thread;
    use std::string::{String, ToString};
    use std::vec::Vec;

    /// Runs a block as a kernel's CPU entry does.
    fn run(block: &BlockContext, thread: impl Fn() + Copy) {
        // SAFETY: no block runs on a test's thread, and every test that lets a block unwind
        // calls `take` right after.
        unsafe { run_block(block, thread) }
    }

    /// What the executor does after a block: clears the context.
    fn take() -> Option<ThreadContext> {
        // SAFETY: called after `run` returned or unwound, outside any block.
        unsafe { take_current() }
    }

    #[test]
    fn run_block_visits_every_thread_x_fastest_with_the_indices_set() {
        let block = BlockContext {
            block_idx: Dim3::new(2, 1, 0),
            block_dim: Dim3::new(3, 2, 2),
            grid_dim: Dim3::new(4, 2, 1),
            ..BlockContext::NONE
        };
        let seen = std::cell::RefCell::new(Vec::new());
        run(&block, || {
            assert_eq!(
                (thread::block_idx(), thread::block_dim()),
                (block.block_idx, block.block_dim)
            );
            assert_eq!(thread::grid_dim(), block.grid_dim);
            seen.borrow_mut()
                .push((thread::thread_idx(), thread::index_1d(), thread::index_2d()));
        });
        let seen = seen.into_inner();
        assert_eq!(seen.len(), 12);
        assert_eq!(seen[0], (Dim3::new(0, 0, 0), 6, (6, 2)));
        assert_eq!(seen[4], (Dim3::new(1, 1, 0), 7, (7, 3)));
        assert_eq!(seen[11], (Dim3::new(2, 1, 1), 8, (8, 3)));
        assert_eq!(take(), None, "the context is cleared after the block");
    }

    #[test]
    #[should_panic(expected = "called outside a kernel launch")]
    fn thread_functions_outside_a_launch_panic() {
        thread::index_1d();
    }

    fn block_of(threads: u32) -> BlockContext {
        BlockContext {
            block_idx: Dim3::new(0, 0, 0),
            block_dim: Dim3::new(threads, 1, 1),
            grid_dim: Dim3::new(1, 1, 1),
            ..BlockContext::NONE
        }
    }

    #[test]
    fn every_thread_reaches_a_barrier_before_any_passes_it() {
        use std::cell::RefCell;
        for threads in [1, 2, 33, 1024] {
            let log = RefCell::new(Vec::new());
            run(&block_of(threads), || {
                let t = thread::thread_idx().x;
                log.borrow_mut().push((0, t));
                thread::sync_threads();
                log.borrow_mut().push((1, t));
                thread::sync_threads();
                log.borrow_mut().push((2, t));
            });
            let log = log.into_inner();
            assert_eq!(log.len(), 3 * threads as usize);
            // Phases never interleave: all of phase 0, then all of 1, then all of 2.
            let phases: Vec<u32> = log.iter().map(|&(phase, _)| phase).collect();
            assert!(
                phases.windows(2).all(|w| w[0] <= w[1]),
                "{threads}: {phases:?}"
            );
            for phase in 0..3 {
                let mut seen: Vec<u32> = log.iter().filter(|e| e.0 == phase).map(|e| e.1).collect();
                seen.sort();
                assert_eq!(seen, (0..threads).collect::<Vec<_>>());
            }
            assert_eq!(take(), None, "the context is cleared after the block");
        }
    }

    #[test]
    fn a_split_block_over_1024_threads_is_refused_before_its_regions_run() {
        let ran = std::cell::Cell::new(false);
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            // SAFETY: no block runs on a test's thread; `take` follows the unwind.
            unsafe { regions::run_regions(&block_of(1025), |_| ran.set(true)) }
        }));
        let message = result.expect_err("a block of 1025 threads");
        let message = message
            .downcast_ref::<String>()
            .map(String::as_str)
            .unwrap_or_default();
        assert!(message.contains("1025 threads"), "{message}");
        assert!(!ran.get(), "no region ran");
        take();
    }

    /// A checked block of `threads` threads with room for shared arrays.
    fn checked_block(threads: u32) -> BlockContext {
        BlockContext {
            checked: true,
            shared_limit_bytes: 48 * 1024,
            ..block_of(threads)
        }
    }

    static ROWS: SharedSite = SharedSite {
        index: 0,
        name: "rows",
        file: "test",
        line: 1,
    };

    /// Runs `body` with a `[[u32; 3]; 2]` shared array on a checked block of `threads` threads;
    /// the bug or panic message it stopped with, if any.
    fn with_rows(
        threads: u32,
        body: impl Fn(crate::Shared<'_, [u32; 3]>) + Copy,
    ) -> Option<String> {
        // SAFETY: the scope lives in this frame, around the one block `run` runs.
        let scope = &unsafe { crate::shared::BlockScope::new() };
        let outcome = std::panic::catch_unwind(core::panic::AssertUnwindSafe(|| {
            run(&checked_block(threads), || {
                // SAFETY: inside the block `run` runs, with a scope that ends with this call.
                body(unsafe { crate::__private::shared_array::<[u32; 3]>(scope, &ROWS, 2) })
            })
        }));
        take();
        let payload = outcome.err()?;
        Some(match payload.downcast::<BugReport>() {
            Ok(report) => report.bug.to_string(),
            Err(payload) => payload
                .downcast_ref::<String>()
                .cloned()
                .unwrap_or_default(),
        })
    }

    #[test]
    fn get2_and_set2_reach_single_elements_of_a_2d_shared_array() {
        // Thread t writes column t of row 1, then reads it back after a barrier; threads
        // writing different columns of one row do not race.
        let failure = with_rows(3, |rows| {
            let t = thread::thread_idx().x as usize;
            rows.set2(1, t, 10 + t as u32);
            thread::sync_threads();
            assert_eq!(rows.get2(1, (t + 1) % 3), 10 + ((t + 1) % 3) as u32);
            assert_eq!(rows.get(1), [10, 11, 12]);
        });
        assert_eq!(failure, None);
        // Two threads writing the same column without a barrier do race.
        let race = with_rows(2, |rows| rows.set2(0, 2, 1)).expect("a race");
        assert!(race.contains("data race on shared array `rows`"), "{race}");
        // A column that was never written is an uninitialized read, even if its row's
        // neighbours were written.
        let uninit = with_rows(1, |rows| {
            rows.set2(0, 0, 1);
            rows.get2(0, 1);
        })
        .expect("an uninitialized read");
        assert!(
            uninit.contains("no thread of this block has written"),
            "{uninit}"
        );
        // Both indices are bounds-checked.
        let col = with_rows(1, |rows| rows.set2(0, 3, 1)).expect("a panic");
        assert!(
            col.contains("index 3 out of bounds for a row of a shared array of length 3"),
            "{col}"
        );
        let row = with_rows(1, |rows| {
            rows.get2(2, 0);
        })
        .expect("a panic");
        assert!(
            row.contains("index 2 out of bounds for the rows of a shared array of length 2"),
            "{row}"
        );
    }

    #[test]
    fn a_shared_array_too_large_for_its_size_type_is_an_error_before_any_allocation() {
        static HUGE: SharedSite = SharedSite {
            index: 0,
            name: "huge",
            file: "test",
            line: 2,
        };
        // `len × 8` overflows for the first two (the arena was 8 bytes long in release builds,
        // and a debug build panicked on the multiplication); the last does not, but is far
        // past any block's shared memory and must not be allocated.
        for len in [usize::MAX / 4, usize::MAX / 8 + 1, usize::MAX / 16] {
            // SAFETY: the scope lives in this frame, around the one block `run` runs.
            let scope = &unsafe { crate::shared::BlockScope::new() };
            let outcome = std::panic::catch_unwind(core::panic::AssertUnwindSafe(|| {
                run(&checked_block(1), || {
                    // SAFETY: inside the block `run` runs, with a scope that outlives it.
                    let huge = unsafe { crate::__private::shared_array::<u64>(scope, &HUGE, len) };
                    huge.set(len - 1, 1);
                })
            }));
            take();
            let payload = outcome.expect_err("a block with an impossible shared array runs");
            let report = payload.downcast::<BugReport>().unwrap_or_else(|p| {
                panic!("{len}: not a bug report: {:?}", p.downcast_ref::<String>())
            });
            match report.bug {
                KernelBug::SharedMemoryTooLarge { asked, limit, .. } => {
                    assert_eq!(limit, 48 * 1024);
                    assert!(asked > limit, "{len}: asked {asked}");
                }
                other => panic!("{len}: {other}"),
            }
        }
    }

    #[test]
    fn a_barrier_that_only_some_threads_reach_unwinds_with_a_divergence_report() {
        let payload = std::panic::catch_unwind(|| {
            run(&block_of(4), || {
                if thread::thread_idx().x >= 2 {
                    thread::sync_threads();
                }
            })
        })
        .unwrap_err();
        let report = payload.downcast::<BugReport>().expect("a bug report");
        assert_eq!(report.thread, Dim3::new(2, 0, 0));
        assert!(matches!(report.bug, KernelBug::BarrierDivergence { .. }));
        // The block is abandoned and the worker can run the next one.
        take();
        run(&block_of(3), thread::sync_threads);
    }
}
