//! Cooperative execution of one block: what lets `sync_threads()` and warp operations work on
//! the CPU.
//!
//! The threads of a block run one after another on the worker's own stack (the fast path) until
//! one of them reaches a barrier or a warp operation. That thread becomes the *driver*: the
//! threads before it have already returned, and every thread after it gets a stackful coroutine
//! (`corosensei`, one small mmap'd stack each, reused across blocks). The driver, from inside its
//! waiting call, resumes the coroutines one by one until each waits too or returns, then releases
//! whatever can be released: a warp operation once every lane of its mask waits at it, a barrier
//! once every thread of the block waits at it. Threads that can never be released are barrier or
//! warp divergence, reported as a [`KernelBug`], never a hang.
//!
//! Why coroutines: a GPU thread's state at a barrier is its whole call stack, so something has to
//! keep up to 1024 stacks alive at once. OS threads (Numba's simulator) cost a kernel-scheduled
//! context switch per thread per barrier; a coroutine switch is a few dozen instructions on the
//! same OS thread, and blocks still run in parallel on all cores. Kernels that never reach a
//! barrier never create a coroutine.

use super::bug::{raise, KernelBug};
use super::context::set_thread;
use super::interrupt::{self, Interruption};
use super::shared;
use super::stack_guard::{self, Ended, Guarded};
use super::waits::{Release, Wait, WarpOp, WARP};
use crate::machine::Dim3;
use core::cell::{Cell, RefCell};
use core::fmt::Write as _;
use corosensei::stack::{DefaultStack, Stack, StackPointer};
use corosensei::{Coroutine, CoroutineResult, Yielder};
use std::collections::VecDeque;
use std::format;
use std::string::{String, ToString};
use std::vec::Vec;

enum State {
    NotStarted,
    Running,
    /// Released, with the value its waiting call returns.
    Ready(u64),
    Waiting(Wait),
    Done,
}

type Thread = Coroutine<u64, Wait, Ended, ColoredStack>;

/// A coroutine stack whose top sits a few cache lines below the top of its mapping, a different
/// number for each stack. Every mapping starts on a page boundary, so without this the hot top
/// frames of a block's hundreds of threads would all compete for the same cache sets.
struct ColoredStack {
    stack: DefaultStack,
    offset: usize,
}

impl ColoredStack {
    fn new(color: usize, bytes: usize) -> Self {
        ColoredStack {
            stack: stack_guard::new_stack(bytes),
            offset: (color % 64) * 64,
        }
    }
}

// SAFETY: the same memory, guard page and limit as the `DefaultStack` it wraps; the base moves
// down by less than 4 KiB of its (at least 64 KiB, see `CpuOptions::stack_bytes`), stays 64-byte
// aligned, and leaves far more than `MIN_STACK_SIZE` usable.
unsafe impl Stack for ColoredStack {
    fn base(&self) -> StackPointer {
        StackPointer::new(self.stack.base().get() - self.offset).expect("inside the mapping")
    }
    fn limit(&self) -> StackPointer {
        self.stack.limit()
    }
    #[cfg(windows)]
    fn teb_fields(&self) -> corosensei::stack::StackTebFields {
        self.stack.teb_fields()
    }
    #[cfg(windows)]
    fn update_teb_fields(&mut self, stack_limit: usize, guaranteed_stack_bytes: usize) {
        self.stack
            .update_teb_fields(stack_limit, guaranteed_stack_bytes)
    }
}

struct Slot {
    state: State,
    coroutine: Option<Thread>,
    /// The coroutine's guard page and trap handler, for overflows.
    guarded: Option<Guarded>,
    /// The thread's position in the block (kept, to spare divisions on every switch).
    dim: Dim3,
}

struct Scheduler {
    /// The block's thread function, lifetime erased (see `set_body`).
    body: Option<*const (dyn Fn() + 'static)>,
    block_dim: Dim3,
    slots: Vec<Slot>,
    driver: usize,
    done: usize,
    /// Coroutine threads that can run, in order.
    queue: VecDeque<usize>,
    /// Stacks of finished coroutines, for the next ones on this worker.
    stacks: Vec<ColoredStack>,
    /// The size of each of `stacks` (a block with another size drops them).
    stack_bytes: usize,
    /// Stacks mapped so far on this worker, to colour the next one.
    mapped: usize,
    /// Per warp, the lanes' values of its last [`WarpOp::Gather`].
    gathered: Vec<[u64; WARP]>,
}

std::thread_local! {
    static SCHEDULER: RefCell<Scheduler> = const {
        RefCell::new(Scheduler {
            body: None,
            block_dim: Dim3::new(0, 0, 0),
            slots: Vec::new(),
            driver: 0,
            done: 0,
            queue: VecDeque::new(),
            stacks: Vec::new(),
            stack_bytes: 0,
            mapped: 0,
            gathered: Vec::new(),
        })
    };
    /// Whether this block has switched to cooperative execution.
    static ACTIVE: Cell<bool> = const { Cell::new(false) };
    /// The running coroutine's yielder; null on the worker's own stack (the driver).
    static YIELDER: Cell<*const Yielder<u64, Wait>> = const { Cell::new(core::ptr::null()) };
}

/// Prepares cooperative execution for a block whose threads run `body`.
///
/// # Safety
/// `body` must stay valid until [`finish_block`] returns or [`abandon`] has been called.
pub(crate) unsafe fn begin_block(body: &dyn Fn(), block_dim: Dim3, stack_bytes: usize) {
    // Left over only if a caller caught a block's unwind without `take_current`.
    if is_active() || SCHEDULER.with_borrow(|s| !s.slots.is_empty()) {
        abandon();
    }
    // SAFETY: only the lifetime is erased; the caller keeps `body` alive while any coroutine
    // that calls it exists (every coroutine is finished by `finish_block` or dropped by `abandon`).
    let body: *const (dyn Fn() + 'static) = unsafe { core::mem::transmute(body) };
    SCHEDULER.with_borrow_mut(|s| {
        s.body = Some(body);
        s.block_dim = block_dim;
        if s.stack_bytes != stack_bytes {
            s.stacks.clear();
            s.stack_bytes = stack_bytes;
        }
    });
}

/// Whether a thread of the current block has reached a barrier or warp operation, so that the
/// rest of the block runs cooperatively.
#[inline(always)]
pub(crate) fn is_active() -> bool {
    ACTIVE.with(Cell::get)
}

/// Called on the worker's stack when the driver thread has returned: runs every other thread to
/// the end.
pub(crate) fn finish_block() {
    SCHEDULER.with_borrow_mut(|s| {
        let driver = s.driver;
        s.slots[driver].state = State::Done;
        s.done += 1;
    });
    drive(Until::AllDone);
    SCHEDULER.with_borrow_mut(|s| {
        s.slots.clear();
        s.body = None;
    });
    ACTIVE.with(|a| a.set(false));
}

/// Drops every suspended coroutine of the current block (unwinding its stack), e.g. after a
/// thread panicked. Must not be called while the scheduler is borrowed.
pub(crate) fn abandon() {
    let coroutines: Vec<Thread> = SCHEDULER.with_borrow_mut(|s| {
        s.queue.clear();
        s.body = None;
        s.done = 0;
        s.slots
            .drain(..)
            .filter_map(|slot| slot.coroutine)
            .collect()
    });
    ACTIVE.with(|a| a.set(false));
    drop(coroutines);
}

/// Suspends the calling simulated thread at `wait` until the block (barrier) or the warp (warp
/// operation) releases it, and returns the released value. The scheduler's half of
/// [`super::run::wait`], which first hands a split block's hidden barrier to the fallback.
pub(crate) fn suspend(wait: Wait) -> u64 {
    super::interrupt::poll_deadline();
    let yielder = YIELDER.with(Cell::get);
    if !yielder.is_null() {
        // SAFETY: a non-null YIELDER is the yielder of the coroutine running on this OS thread,
        // set by that coroutine and valid while it runs; this code runs inside it.
        let value = unsafe { (*yielder).suspend(wait) };
        YIELDER.with(|y| y.set(yielder));
        return value;
    }
    let me = super::context::current_linear();
    SCHEDULER.with_borrow_mut(|s| {
        if !ACTIVE.with(Cell::get) {
            s.activate(me);
            ACTIVE.with(|a| a.set(true));
        }
        s.slots[me].state = State::Waiting(wait);
    });
    drive(Until::Driver)
}

/// The values the lanes of `warp` passed to their last [`WarpOp::Gather`]: valid for each lane
/// from its release until the warp's next gather, which cannot complete before every lane has
/// read this one.
pub(crate) fn gathered(warp: usize) -> [u64; WARP] {
    SCHEDULER.with_borrow(|s| s.gathered[warp])
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Until {
    Driver,
    AllDone,
}

/// The scheduler loop, on the worker's stack: run coroutines, release what can be released,
/// until the driver is released (or, after it returned, every thread is done).
fn drive(until: Until) -> u64 {
    enum Step {
        Return(u64, Dim3),
        Resume(usize, Thread, u64, Dim3, Guarded),
        Release,
    }
    loop {
        let step = SCHEDULER.with_borrow_mut(|s| {
            let driver = s.driver;
            match until {
                Until::Driver => {
                    if let State::Ready(value) = s.slots[driver].state {
                        s.slots[driver].state = State::Running;
                        return Step::Return(value, s.slots[driver].dim);
                    }
                }
                Until::AllDone if s.done == s.slots.len() => {
                    return Step::Return(0, s.slots[driver].dim)
                }
                Until::AllDone => {}
            }
            match s.next() {
                Some((index, coroutine, input)) => {
                    let slot = &s.slots[index];
                    let guarded = slot.guarded.expect("a started thread has its guard");
                    Step::Resume(index, coroutine, input, slot.dim, guarded)
                }
                None => Step::Release,
            }
        });
        match step {
            Step::Return(value, dim) => {
                set_thread(dim);
                return value;
            }
            Step::Resume(index, coroutine, input, dim, guarded) => {
                resume(index, coroutine, input, dim, guarded)
            }
            Step::Release => {
                if let Err((thread, bug)) = SCHEDULER.with_borrow_mut(Scheduler::release) {
                    abandon();
                    raise(thread, bug);
                }
            }
        }
    }
}

/// Runs coroutine thread `index` (at `dim` in the block) until it waits or returns.
fn resume(index: usize, mut coroutine: Thread, input: u64, dim: Dim3, guarded: Guarded) {
    set_thread(dim);
    let outcome = std::panic::catch_unwind(core::panic::AssertUnwindSafe(|| {
        stack_guard::resuming(guarded, || coroutine.resume(input))
    }));
    YIELDER.with(|y| y.set(core::ptr::null()));
    match outcome {
        Ok(CoroutineResult::Yield(wait)) => SCHEDULER.with_borrow_mut(|s| {
            s.slots[index].state = State::Waiting(wait);
            s.slots[index].coroutine = Some(coroutine);
        }),
        Ok(CoroutineResult::Return(Ended::Returned)) => SCHEDULER.with_borrow_mut(|s| {
            s.slots[index].state = State::Done;
            s.done += 1;
            s.stacks.push(coroutine.into_stack());
        }),
        Ok(CoroutineResult::Return(Ended::Overflowed)) => {
            // The trap reset its stack: it can serve another thread.
            let stack_bytes = SCHEDULER.with_borrow_mut(|s| {
                s.stacks.push(coroutine.into_stack());
                s.stack_bytes
            });
            abandon();
            set_thread(dim);
            interrupt::raise(dim, Interruption::StackOverflow { stack_bytes });
        }
        Err(payload) => {
            // The thread panicked (or a check failed in it): stop the block, and leave this
            // thread's index in place for the executor's report.
            drop(coroutine);
            abandon();
            set_thread(dim);
            std::panic::resume_unwind(payload);
        }
    }
}

impl Scheduler {
    /// Switches the block to cooperative execution with thread `driver` on the worker's stack:
    /// threads before it have returned, threads after it have not started.
    fn activate(&mut self, driver: usize) {
        let n = self.block_dim.count() as usize;
        let d = self.block_dim;
        self.slots.clear();
        for z in 0..d.z {
            for y in 0..d.y {
                for x in 0..d.x {
                    let i = self.slots.len();
                    self.slots.push(Slot {
                        state: match i.cmp(&driver) {
                            core::cmp::Ordering::Less => State::Done,
                            core::cmp::Ordering::Equal => State::Running,
                            core::cmp::Ordering::Greater => State::NotStarted,
                        },
                        coroutine: None,
                        guarded: None,
                        dim: Dim3::new(x, y, z),
                    });
                }
            }
        }
        debug_assert_eq!(self.slots.len(), n);
        self.driver = driver;
        self.done = driver;
        self.queue.clear();
        self.queue.extend(driver + 1..n);
    }

    /// The next coroutine thread to run, taken out of its slot, with the value to resume it with.
    fn next(&mut self) -> Option<(usize, Thread, u64)> {
        let index = self.queue.pop_front()?;
        let slot = &mut self.slots[index];
        let (coroutine, input) = match slot.state {
            State::NotStarted => {
                let body = self
                    .body
                    .expect("a cooperative block has its thread function");
                let stack = self.stacks.pop().unwrap_or_else(|| {
                    self.mapped += 1;
                    ColoredStack::new(self.mapped, self.stack_bytes)
                });
                let stack_limit = stack.limit().get();
                // SAFETY: `body` stays valid until every coroutine is finished or dropped
                // (`begin_block`'s contract); the coroutine only calls it.
                let coroutine = unsafe {
                    Thread::with_stack_unchecked(stack, move |yielder: &Yielder<u64, Wait>, _| {
                        YIELDER.with(|y| y.set(yielder));
                        (*body)();
                        Ended::Returned
                    })
                };
                slot.guarded = Some(Guarded::new(stack_limit, coroutine.trap_handler()));
                (coroutine, 0)
            }
            State::Ready(value) => (
                slot.coroutine
                    .take()
                    .expect("a ready thread has a coroutine"),
                value,
            ),
            _ => unreachable!("only not-started and released threads are queued"),
        };
        slot.state = State::Running;
        Some((index, coroutine, input))
    }

    /// Marks thread `index` released with `value`.
    fn ready(&mut self, index: usize, value: u64) {
        self.slots[index].state = State::Ready(value);
        if index != self.driver {
            self.queue.push_back(index);
        }
    }

    /// With every live thread waiting: releases the warp operations whose lanes have all
    /// arrived, else the barrier if the whole block waits at it, else reports why nothing can
    /// move.
    fn release(&mut self) -> Result<(), (Dim3, KernelBug)> {
        let n = self.slots.len();
        let mut released = false;
        for index in 0..n {
            if let State::Waiting(Wait::Warp { op, mask, .. }) = self.slots[index].state {
                if self.warp_arrived(index, op, mask) {
                    self.release_warp(index, op, mask);
                    released = true;
                }
            }
        }
        if released {
            return Ok(());
        }
        if let State::Waiting(Wait::Barrier { site, .. }) = self.slots[0].state {
            let mut count = 0u64;
            let all_here = self.slots.iter().all(|slot| match slot.state {
                State::Waiting(Wait::Barrier { site: s, predicate }) if s == site => {
                    count += u64::from(predicate);
                    true
                }
                _ => false,
            });
            if all_here {
                shared::next_epoch();
                // Every thread gets the number whose predicate held (`__syncthreads_count`).
                for index in 0..n {
                    self.ready(index, count);
                }
                return Ok(());
            }
        }
        Err(self.stuck())
    }

    fn warp_base(index: usize) -> usize {
        index - index % WARP
    }

    /// Whether every lane in `mask` of `index`'s warp waits at the same operation and mask.
    fn warp_arrived(&self, index: usize, op: WarpOp, mask: u32) -> bool {
        let base = Self::warp_base(index);
        lanes(mask).all(|lane| {
            matches!(
                self.slots.get(base + lane).map(|s| &s.state),
                Some(State::Waiting(Wait::Warp { op: o, mask: m, .. })) if *o == op && *m == mask
            )
        })
    }

    fn release_warp(&mut self, index: usize, op: WarpOp, mask: u32) {
        let base = Self::warp_base(index);
        let mut values = [0u64; WARP];
        let mut args = [0u32; WARP];
        for lane in lanes(mask) {
            if let State::Waiting(Wait::Warp { value, arg, .. }) = self.slots[base + lane].state {
                values[lane] = value;
                args[lane] = arg;
            }
        }
        let in_mask = |lane: usize| lane < WARP && mask & (1 << lane) != 0;
        // A shuffle from a lane outside the mask is undefined on the GPU; here it returns the
        // caller's own value, as CUDA does for a source lane outside the warp.
        let from = |lane: usize, source: Option<usize>| match source {
            Some(source) if in_mask(source) => values[source],
            _ => values[lane],
        };
        let votes = lanes(mask).filter(|&lane| values[lane] != 0);
        let ballot = votes.fold(0u32, |bits, lane| bits | 1 << lane);
        if op == WarpOp::Sync {
            shared::warp_synced(base / WARP, mask);
        }
        if op == WarpOp::Gather {
            let warp = base / WARP;
            if self.gathered.len() <= warp {
                self.gathered.resize(warp + 1, [0; WARP]);
            }
            self.gathered[warp] = values;
        }
        if let WarpOp::Mma(kind) = op {
            // SAFETY: every lane of the warp waits in `cpu::mma::mma` (the same operation, full
            // mask) with a pointer to its live operands as its value, and none runs until it is
            // readied below.
            unsafe { super::mma::release(kind, &values) };
        }
        if let WarpOp::MmaTiles(release) = op {
            // SAFETY: every lane of the warp waits in `mma::tile_product::rendezvous` with the
            // same release function (the op's value, compared when they joined), so with a
            // pointer to a live lane of the type that function expects, none running until it
            // is readied below; `release` is that function's address.
            unsafe {
                let release: Release = core::mem::transmute(release);
                release(&values);
            }
        }
        for lane in lanes(mask) {
            let arg = args[lane] as usize;
            let result = match op {
                WarpOp::ShflIdx => from(lane, Some(arg % WARP)),
                WarpOp::ShflUp => from(lane, lane.checked_sub(arg)),
                WarpOp::ShflDown => from(lane, Some(lane + arg).filter(|&s| s < WARP)),
                WarpOp::ShflXor => from(lane, Some(lane ^ (arg % WARP))),
                WarpOp::All => u64::from(ballot == mask),
                WarpOp::Any => u64::from(ballot != 0),
                WarpOp::Ballot => u64::from(ballot),
                WarpOp::Sync | WarpOp::Gather | WarpOp::Mma(_) | WarpOp::MmaTiles(_) => 0,
            };
            self.ready(base + lane, result);
        }
    }

    /// Why no thread can move: a warp operation some lane of its mask cannot join, or a barrier
    /// not every thread of the block waits at.
    fn stuck(&self) -> (Dim3, KernelBug) {
        let dim = |index: usize| self.slots[index].dim;
        let fmt_dim = |index: usize| dim(index).to_string();
        let waiting_warp = self
            .slots
            .iter()
            .enumerate()
            .find_map(|(i, slot)| match slot.state {
                State::Waiting(Wait::Warp { op, mask, site, .. }) => Some((i, op, mask, site)),
                _ => None,
            });
        if let Some((index, op, mask, site)) = waiting_warp {
            let base = Self::warp_base(index);
            let missing = lanes(mask)
                .find(|&lane| {
                    !matches!(self.slots[base + lane].state,
                        State::Waiting(Wait::Warp { op: o, mask: m, .. }) if o == op && m == mask)
                })
                .expect("a stuck warp operation has a missing lane");
            let whereabouts = match self.whereabouts(base + missing) {
                place if place.starts_with("waiting") => format!("is {place}"),
                place => place,
            };
            let detail = format!(
                "lane {} of warp {} (thread {}) waits in {}(mask {mask:#010x}) at {site}, but lane \
                 {missing} (thread {}) {whereabouts}",
                index - base,
                base / WARP,
                fmt_dim(index),
                op.name(),
                fmt_dim(base + missing),
            );
            return (dim(index), KernelBug::WarpDivergence { detail });
        }
        // Group the threads by where they are, in order of first appearance.
        let mut groups: Vec<(String, usize, usize)> = Vec::new();
        for index in 0..self.slots.len() {
            let place = self.whereabouts(index);
            match groups.iter_mut().find(|(p, _, _)| *p == place) {
                Some((_, count, _)) => *count += 1,
                None => groups.push((place, 1, index)),
            }
        }
        let first_waiting = (0..self.slots.len())
            .find(|&i| matches!(self.slots[i].state, State::Waiting(_)))
            .unwrap_or(0);
        let mut detail = String::new();
        for (k, (place, count, first)) in groups.iter().enumerate() {
            let separator = match k {
                0 => "",
                _ if k + 1 == groups.len() => ", but ",
                _ => ", ",
            };
            let threads = if *count == 1 { "thread" } else { "threads" };
            let _ = write!(
                detail,
                "{separator}{count} {threads} {place} (first: thread {})",
                fmt_dim(*first)
            );
        }
        (dim(first_waiting), KernelBug::BarrierDivergence { detail })
    }

    fn whereabouts(&self, index: usize) -> String {
        match self.slots[index].state {
            State::Done => "returned without reaching it".into(),
            State::Waiting(Wait::Barrier { site, .. }) => {
                format!("waiting at sync_threads() at {site}")
            }
            State::Waiting(Wait::Warp { op, mask, site, .. }) => {
                format!("waiting in {}(mask {mask:#010x}) at {site}", op.name())
            }
            State::NotStarted | State::Running | State::Ready(_) => "running".into(),
        }
    }
}

/// The lanes whose bits are set in `mask`, in order.
fn lanes(mask: u32) -> impl Iterator<Item = usize> {
    (0..WARP).filter(move |&lane| mask & (1 << lane) != 0)
}
