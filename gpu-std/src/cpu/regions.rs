//! The split path of the CPU executor: a kernel that `#[kernel]` split at its barriers runs each
//! region (the code between two barriers) as a loop over the block's threads, with no coroutine
//! and no switch per thread. The generated loops call [`Regions`] for what the GPU's hardware
//! does: set the running thread, count the threads that returned, check that a loop with a
//! barrier in it takes the same trips in every thread (block-uniform), and start a barrier epoch
//! for checked mode's race checks.
//!
//! Splitting is optimistic: the macro cannot see into the functions a kernel calls, and treats
//! them as barrier-free. When the first thread of a region reaches a barrier or warp operation
//! the macro did not see, the rest of that region runs on the coroutine scheduler (the driver is
//! that thread, on this stack; every later thread starts the region as a coroutine, with its
//! carried values), and the block goes on split after it. A thread that reaches such a barrier
//! after others ran past it to the region's end is barrier divergence, reported with both places.
//!
//! Here: the block's state ([`Regions`]), the region loops and running a split block
//! ([`run_regions`]). In [`control`]: what the block does between regions (threads that return
//! or leave a loop's trip, a loop's vote, barriers and their divergence checks).

mod control;

use super::context::{linear_to_dim, BlockContext, Geometry, ThreadPos, BLOCK, THREAD};
use super::fallback::{self, End, Fallback};
use super::interrupt::{self, Interruption};
use super::slots::{Arena, Slots};
use super::stack_guard::DEFAULT_STACK_BYTES;
use super::{block, shared, stack_guard};
use crate::machine::Dim3;
use core::cell::{Cell, RefCell};
use core::panic::Location;
use std::vec::Vec;

/// Threads of a row between two deadline check points in a region's loop after its first
/// thread to finish (elsewhere every 16th thread is one). Longer than 16 on purpose: each run is
/// a loop with its own set-up (the check point, the run-time overlap checks of the thread-local
/// position against the region's stores, a tail), which runs of 16 threads paid every 16.
const RUN: u32 = 64;

std::thread_local! {
    /// Whether a split block runs on this OS thread (a barrier reached then is a hidden one).
    static SPLIT: Cell<bool> = const { Cell::new(false) };
    /// The carried variables' memory, kept between the blocks (and launches) this OS thread runs.
    static KEPT: Cell<Arena> = const { Cell::new(Arena::EMPTY) };
}

/// Whether this OS thread runs a split block: [`super::block::wait`] hands a barrier reached
/// then to the fallback ([`fallback::hidden_sync`]).
#[inline(always)]
pub(crate) fn in_split_block() -> bool {
    SPLIT.with(Cell::get)
}

/// The state of one split block, lent to the generated region loops.
pub struct Regions {
    block: BlockContext,
    /// The memory of the carried variables' slots (taken from this OS thread's, given back after).
    arena: RefCell<Arena>,
    threads: usize,
    /// Per thread: whether it is still running (not returned).
    alive: Vec<Cell<bool>>,
    /// The size of the stacks of a region's coroutines, if it falls back to them.
    stack_bytes: usize,
    /// Threads that returned (they skip every later region).
    returned: Cell<usize>,
    /// Per thread: 0, or 1 + the code of the `break`/`continue` by which it left the rest of
    /// a split loop's trip ([`Regions::leave`]); such a thread is also not alive until the block
    /// gets where it went.
    park: Vec<Cell<u8>>,
    /// Threads that left by `break`/`continue` and wait where they went (see `park`).
    parked: Cell<usize>,
    /// How many of `parked` by each code (`2 · depth + is_break`).
    park_counts: [Cell<u32>; 2 * MAX_LEAVE_DEPTH],
    /// The first thread to leave since none waited, with the site of its `break`/`continue`.
    first_park: Cell<(usize, Option<&'static Location<'static>>)>,
    /// The loop-trip votes of the current decision: how many voted, how many for another trip,
    /// and a thread of each side.
    voted: Cell<usize>,
    yes: Cell<usize>,
    yes_thread: Cell<usize>,
    no_thread: Cell<usize>,
}

impl Regions {
    /// The number of threads in the block.
    #[inline(always)]
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The slots of one carried variable for this block (every one empty), out of the worker's
    /// arena: no allocation once the worker's first block has run.
    #[inline(always)]
    pub fn slots<T>(&self) -> Slots<'_, T> {
        Slots::new(&self.arena, self.threads)
    }

    /// Runs one region: `body(linear, thread_idx)` for every thread that has not returned, x
    /// fastest (`linear` counts the threads in that order); `body` returns whether the thread
    /// ran the region to its end (`false`: it returned). `barrier_after`: the site of the
    /// `sync_threads()` that ends the region, if one does. `warp_operations`: whether the
    /// region's own code calls one (the macro sees it).
    ///
    /// If a thread reaches a barrier or warp operation inside `body` (in a function the macro
    /// could not see into) before any thread ran the region to its end, the rest of the region
    /// runs on coroutines (the executor's fallback). A thread that reaches one after that is
    /// divergence (an earlier one ran past that point), which the fallback reports, so the loop
    /// over the threads after the first to finish asks nothing after each: it is a plain loop
    /// over the row in runs of `RUN` (64) threads with a
    /// deadline check point before each run, which LLVM can keep in registers and vectorise. Only a region with a
    /// warp operation of its own checks after every thread, since the lanes before a warp
    /// operation's first participant need not take part.
    ///
    /// `body` is `Copy` (the generated closures capture copies: slots, parameters, hoisted
    /// `let`s) so that the fallback gets a copy of its own: the loop's copy then never has its
    /// address taken, and LLVM keeps what it captured in registers instead of reloading it
    /// after every store the region makes. The loops step x as the inner loop of a nest (no
    /// division per thread) and store only `index_1d` per thread (y and z once per row).
    #[inline(always)]
    pub fn run_region(
        &self,
        barrier_after: Option<&'static Location<'static>>,
        warp_operations: bool,
        body: impl Fn(usize, Dim3) -> bool + Copy,
    ) {
        let alive = &self.alive[..self.threads];
        let for_fallback = body;
        let thread = || {
            let linear = super::context::current_linear();
            if alive[linear].get() && !for_fallback(linear, super::context::current_thread()) {
                alive[linear].set(false);
            }
        };
        // Asked only about threads before the running one, which have run the region.
        let ran = |linear: usize| alive[linear].get();
        let fallback = Fallback {
            thread: &thread,
            ran: &ran,
            end: barrier_after.map_or(End::Region, End::Barrier),
            can_switch: Cell::new(true),
            stack_bytes: self.stack_bytes,
        };
        let _lent = fallback::lend(&fallback);
        // While no thread has returned or left the loop's trip, every flag is set: the loops run
        // each thread without reading its flag, and clear the flag of one that returns (or
        // leaves) in this region.
        let all_alive = self.returned.get() == 0 && self.parked.get() == 0;
        // Checked after each thread until one runs the region to its end: a barrier reached
        // before then switches the block to coroutines; one reached after is divergence.
        let mut rest = self.threads;
        for linear in (0..self.threads).filter(|&t| all_alive || alive[t].get()) {
            let ran = body(linear, self.enter(linear));
            if !ran {
                alive[linear].set(false);
            }
            if block::is_active() {
                block::finish_block();
                return;
            }
            if ran {
                rest = linear + 1;
                break;
            }
        }
        fallback.can_switch.set(warp_operations);
        if all_alive {
            self.run_rest::<true>(rest, warp_operations, body);
        } else {
            self.run_rest::<false>(rest, warp_operations, body);
        }
    }

    /// The threads of a region from `from` (linear) on, after its first running thread: see
    /// [`Regions::run_region`]. `ALL_ALIVE`: no thread has returned before this region.
    #[inline(always)]
    fn run_rest<const ALL_ALIVE: bool>(
        &self,
        from: usize,
        warp_operations: bool,
        body: impl Fn(usize, Dim3) -> bool + Copy,
    ) {
        let alive = &self.alive[..self.threads];
        let (d, base_1d) = (self.block.block_dim, self.base_1d());
        // SAFETY: `run_regions` makes a `Regions` only for a block of at most
        // `MAX_BLOCK_THREADS` threads (it asserts so), and `run_region` calls this only after
        // running one of the block's threads: the block has one, so no dimension is 0, and
        // `d.x` is at most the number of threads.
        unsafe { core::hint::assert_unchecked(d.x <= MAX_BLOCK_THREADS) };
        let (dx, dy) = (d.x as usize, d.y as usize);
        let mut row = from / dx;
        let mut x_from = (from % dx) as u32;
        while row * dx < self.threads {
            let (y, z) = ((row % dy) as u32, (row / dy) as u32);
            let first = row * dx;
            self.enter_row(base_1d, y, z);
            while x_from < d.x {
                interrupt::poll_deadline();
                // Runs end at multiples of `RUN` (aligned vectors where `base_1d` is).
                let x_to = (x_from / RUN + 1).saturating_mul(RUN).min(d.x);
                for x in x_from..x_to {
                    let linear = first + x as usize;
                    if ALL_ALIVE || alive[linear].get() {
                        super::elementwise::step_x(base_1d, x);
                        if !body(linear, Dim3::new(x, y, z)) {
                            alive[linear].set(false);
                        }
                        if warp_operations && block::is_active() {
                            block::finish_block();
                            return;
                        }
                    }
                }
                x_from = x_to;
            }
            row += 1;
            x_from = 0;
        }
    }

    /// Runs an elementwise block: `thread` for the block's first thread, then `rest` (the loop
    /// over the others). If the first thread reaches a barrier or warp operation (in a function
    /// the macro could not see into), the others run `thread` as coroutines instead, and `rest`
    /// never runs; one the first thread does not reach is reported when a later one reaches it.
    #[inline(always)]
    pub fn elementwise(&self, thread: &dyn Fn(), rest: impl FnOnce()) {
        let fallback = Fallback {
            thread,
            ran: &|_| true,
            end: End::Kernel,
            can_switch: Cell::new(true),
            stack_bytes: self.stack_bytes,
        };
        let _lent = fallback::lend(&fallback);
        let base_1d = self.base_1d();
        self.enter_row(base_1d, 0, 0);
        self.enter_x(base_1d, 0);
        thread();
        if block::is_active() {
            block::finish_block();
            return;
        }
        fallback.can_switch.set(false);
        rest();
    }

    /// The block's size.
    #[inline(always)]
    pub fn block_dim(&self) -> Dim3 {
        self.block.block_dim
    }

    /// The block's position in the grid.
    #[inline(always)]
    pub fn block_idx(&self) -> Dim3 {
        self.block.block_idx
    }

    /// The grid's size.
    #[inline(always)]
    pub fn grid_dim(&self) -> Dim3 {
        self.block.grid_dim
    }

    /// Makes thread `linear` (x fastest) of the block the running one, for a block-level step
    /// that acts as each thread in turn (a collective's fold); a deadline check point every
    /// 16th thread.
    #[inline(always)]
    pub(crate) fn enter(&self, linear: usize) -> Dim3 {
        let d = self.block.block_dim;
        let tid = if d.y == 1 && d.z == 1 {
            let index_1d = self.block.block_idx.x as usize * d.x as usize + linear;
            THREAD.with(|t| {
                t.set(ThreadPos {
                    index_1d,
                    y: 0,
                    z: 0,
                })
            });
            Dim3::new(linear as u32, 0, 0)
        } else {
            let tid = linear_to_dim(linear, d);
            super::context::set_thread(tid);
            tid
        };
        if linear.is_multiple_of(interrupt::THREADS_PER_POLL as usize) {
            interrupt::poll_deadline();
        }
        tid
    }

    /// Starts row `(y, z)` of the block, for the nested loops of an elementwise region.
    #[inline(always)]
    pub fn enter_row(&self, base_1d: usize, y: u32, z: u32) {
        THREAD.with(|t| {
            t.set(ThreadPos {
                index_1d: base_1d,
                y,
                z,
            })
        });
    }

    /// Makes thread `x` of the row [`Regions::enter_row`] started the running one: one store
    /// (only x changes along a row), and a deadline check point every
    /// 16th thread.
    #[inline(always)]
    pub fn enter_x(&self, base_1d: usize, x: u32) {
        THREAD.with(|t| {
            // SAFETY: a plain write to a field of this thread's own `Cell`; no reference to the
            // cell's contents exists (`Cell` never hands one out).
            unsafe { (*t.as_ptr()).index_1d = base_1d + x as usize }
        });
        if x.is_multiple_of(interrupt::THREADS_PER_POLL) {
            interrupt::poll_deadline();
        }
    }

    /// `blockIdx.x · blockDim.x`: `index_1d()` of the block's first thread of each row.
    #[inline(always)]
    pub fn base_1d(&self) -> usize {
        self.block.block_idx.x as usize * self.block.block_dim.x as usize
    }
}

/// The most threads a block may have: CUDA's limit, and the CPU device's (its
/// `max_threads_per_block`, which every launch is checked against).
pub const MAX_BLOCK_THREADS: u32 = 1024;

/// How deep split loops a `break`/`continue` leaves may nest (`#[kernel]` keeps deeper ones on
/// coroutines).
pub const MAX_LEAVE_DEPTH: usize = 8;

/// Runs a block of a kernel that `#[kernel]` split at its barriers: `regions` is the generated
/// sequence of region loops, on a guarded stack of the block's stack size.
///
/// # Safety
/// As [`super::run::run_block`]: no other block may be running on this OS thread, and if this
/// unwinds, the caller must call [`super::run::take_current`] before it runs another block.
#[doc(hidden)]
#[inline(always)]
pub unsafe fn run_regions(block: &BlockContext, regions: impl Fn(&mut Regions)) {
    interrupt::begin_block(block.deadline);
    let stack_bytes = match block.stack_bytes {
        0 => DEFAULT_STACK_BYTES,
        bytes => bytes,
    };
    SPLIT.with(|s| s.set(true));
    let first = *block;
    let ended = stack_guard::on_guarded_stack(stack_bytes, &move || {
        let threads = first.block_dim.count();
        // What `run_rest` tells LLVM (CUDA's limit, which the host checks every launch
        // against): a thread's `x` below 1024 proves an index like `t - offset` into a
        // 1024-element shared array in bounds, so the region's loop has no exit and vectorises.
        assert!(
            threads <= u64::from(MAX_BLOCK_THREADS),
            "a block of {threads} threads (the most is {MAX_BLOCK_THREADS})"
        );
        let threads = threads as usize;
        let mut state = Regions {
            block: first,
            arena: RefCell::new(KEPT.with(|k| k.replace(Arena::EMPTY))),
            threads,
            alive: (0..threads).map(|_| Cell::new(true)).collect(),
            stack_bytes,
            returned: Cell::new(0),
            park: (0..threads).map(|_| Cell::new(0)).collect(),
            parked: Cell::new(0),
            park_counts: Default::default(),
            first_park: Cell::new((0, None)),
            voted: Cell::new(0),
            yes: Cell::new(0),
            yes_thread: Cell::new(0),
            no_thread: Cell::new(0),
        };
        // The blocks along x, stepped in place (a `BlockContext` rebuilt per block cost the
        // vector add more than its threads' work between the blocks' stores and loads).
        state.block.blocks = 1;
        for k in 0..first.blocks.max(1) {
            // Built from `first` (not read back from `state`, just written: a partial store
            // then a wider load stalls the store-to-load forwarding).
            let block_idx = Dim3::new(first.block_idx.x + k, first.block_idx.y, first.block_idx.z);
            state.block.block_idx = block_idx;
            BLOCK.with(|b| {
                b.set(Geometry {
                    block_idx,
                    block_dim: first.block_dim,
                    grid_dim: first.grid_dim,
                })
            });
            shared::begin_block(&first);
            // A thread marked not alive has returned (`returned` counted it) or left a loop's
            // trip (`parked`, none once a block is done): the flags need setting again only then.
            if state.returned.replace(0) != 0 || state.parked.replace(0) != 0 {
                state.alive.iter().for_each(|alive| alive.set(true));
                state.park.iter().for_each(|park| park.set(0));
                state.park_counts.iter().for_each(|count| count.set(0));
            }
            regions(&mut state);
            // The block's slots died with the call (they borrow `state`).
            state.arena.get_mut().reset();
        }
        KEPT.with(|k| k.set(state.arena.into_inner()));
    });
    SPLIT.with(|s| s.set(false));
    if ended == stack_guard::Ended::Overflowed {
        interrupt::raise(
            super::context::current_thread(),
            Interruption::StackOverflow { stack_bytes },
        );
    }
    BLOCK.with(|b| b.set(Geometry::NONE));
    THREAD.with(|t| t.set(ThreadPos::NONE));
}

/// Clears the split flag after a split block unwound (`take_current` calls it).
pub(crate) fn abandon() {
    SPLIT.with(|s| s.set(false));
    fallback::abandon();
}
