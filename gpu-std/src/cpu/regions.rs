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

use super::bug::{raise, KernelBug};
use super::fallback::{self, End, Fallback};
use super::interrupt::{self, Interruption};
use super::{
    block, linear_to_dim, set_thread, shared, stack_guard, BlockContext, Geometry, BLOCK, THREAD,
};
use super::{ThreadPos, DEFAULT_STACK_BYTES};
use crate::thread::Dim3;
use core::cell::Cell;
use core::panic::Location;
use std::format;
use std::vec::Vec;

std::thread_local! {
    /// Whether a split block runs on this OS thread (a barrier reached then is a hidden one).
    static SPLIT: Cell<bool> = const { Cell::new(false) };
    /// The per-thread stores' allocations, kept between the blocks this OS thread runs.
    static KEPT: core::cell::RefCell<Pool> = const { core::cell::RefCell::new(Pool(Vec::new())) };
}

/// The allocation of an emptied per-thread store, for the next region or block to reuse.
struct Kept {
    ptr: *mut u8,
    capacity: usize,
    /// Size and alignment of the store's elements: what the allocation's layout is made of.
    size: usize,
    align: usize,
}

/// Emptied stores' allocations (at most [`Pool::MAX`]), freed when dropped.
struct Pool(Vec<Kept>);

impl Pool {
    const MAX: usize = 32;
}

impl Drop for Pool {
    fn drop(&mut self) {
        for kept in self.0.drain(..) {
            // SAFETY: `kept` came from a `Vec` of `capacity` elements of this size and
            // alignment (`Regions::recycle`), so this is the layout it was allocated with.
            unsafe {
                std::alloc::dealloc(
                    kept.ptr,
                    std::alloc::Layout::from_size_align_unchecked(
                        kept.size * kept.capacity,
                        kept.align,
                    ),
                )
            }
        }
    }
}

/// Whether this OS thread runs a split block: [`super::block::wait`] hands a barrier reached
/// then to the fallback ([`fallback::hidden_sync`]).
#[inline(always)]
pub(crate) fn in_split_block() -> bool {
    SPLIT.with(Cell::get)
}

/// A per-thread store: slot `linear` holds thread `linear`'s carried values (`None`: the thread
/// returned). Cells, so that coroutine threads of a region that fell back can fill theirs in any
/// order while the region's loop holds the store.
pub type Store<T> = Vec<Cell<Option<T>>>;

/// The state of one split block, lent to the generated region loops.
pub struct Regions {
    block: BlockContext,
    /// Allocations of emptied stores (taken from this OS thread's, and given back after).
    pool: Pool,
    threads: usize,
    /// The size of the stacks of a region's coroutines, if it falls back to them.
    stack_bytes: usize,
    /// Threads that returned (they skip every later region).
    returned: Cell<usize>,
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

    /// An empty per-thread allocation with room for every thread, reusing the allocation of an
    /// emptied one of the same layout if there is one: a fresh allocation per region and block
    /// costs page faults.
    #[inline(always)]
    fn allocation<T>(&mut self) -> Vec<T> {
        let (size, align) = (core::mem::size_of::<T>(), core::mem::align_of::<T>());
        let fits = |k: &Kept| k.size == size && k.align == align && k.capacity >= self.threads;
        if size != 0 {
            if let Some(at) = self.pool.0.iter().position(fits) {
                let kept = self.pool.0.swap_remove(at);
                // SAFETY: `kept` is the allocation of an emptied `Vec` of `capacity` elements
                // of `T`'s size and alignment (`recycle`), which is `T`'s array layout.
                return unsafe { Vec::from_raw_parts(kept.ptr as *mut T, 0, kept.capacity) };
            }
        }
        Vec::with_capacity(self.threads)
    }

    /// The store a region fills for the next: a slot per thread, every one empty.
    #[inline(always)]
    pub fn store<T>(&mut self) -> Store<T> {
        let mut store = self.allocation();
        store.resize_with(self.threads, || Cell::new(None));
        store
    }

    /// Empties `store` and keeps its allocation for [`Regions::store`].
    #[inline(always)]
    pub fn recycle<T>(&mut self, mut store: Vec<T>) {
        store.clear();
        let size = core::mem::size_of::<T>();
        if size == 0 || store.capacity() == 0 {
            return;
        }
        let mut store = core::mem::ManuallyDrop::new(store);
        self.pool.0.push(Kept {
            ptr: store.as_mut_ptr() as *mut u8,
            capacity: store.capacity(),
            size,
            align: core::mem::align_of::<T>(),
        });
        if self.pool.0.len() > Pool::MAX {
            // Dropped (freed) at once.
            drop(Pool(std::vec![self.pool.0.swap_remove(0)]));
        }
    }

    /// The store before the first region: every thread live, nothing carried.
    #[inline(always)]
    pub fn first_store(&mut self) -> Store<()> {
        let mut store = self.allocation();
        store.resize_with(self.threads, || Cell::new(Some(())));
        store
    }

    /// Runs one region: `body(linear, carried)` for every thread, x fastest, with the thread's
    /// slot of `input`, into its slot of `output` (`None` in, or a `return`: `None` out).
    /// `barrier_after`: the site of the `sync_threads()` that ends the region, if one does.
    ///
    /// If a thread reaches a barrier or warp operation inside `body` (in a function the macro
    /// could not see into), the rest of the region runs on coroutines (the executor's fallback);
    /// the loop then stops, every thread having run the region.
    #[inline(always)]
    pub fn run_region<I, O>(
        &self,
        input: &[Cell<Option<I>>],
        output: &[Cell<Option<O>>],
        barrier_after: Option<&'static Location<'static>>,
        body: impl Fn(usize, Option<I>) -> Option<O>,
    ) {
        let n = self.threads;
        let (input, output) = (&input[..n], &output[..n]);
        let thread = || {
            let linear = super::current_linear();
            output[linear].set(body(linear, input[linear].take()));
        };
        let ran = |linear: usize| {
            let slot = output[linear].take();
            let ran = slot.is_some();
            output[linear].set(slot);
            ran
        };
        let fallback = Fallback {
            thread: &thread,
            ran: &ran,
            end: barrier_after.map_or(End::Region, End::Barrier),
            can_switch: Cell::new(true),
            stack_bytes: self.stack_bytes,
        };
        let _lent = fallback::lend(&fallback);
        for linear in 0..n {
            output[linear].set(body(linear, input[linear].take()));
            if block::is_active() {
                block::finish_block();
                break;
            }
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

    /// Makes thread `linear` (x fastest) of the block the running one; a deadline check point
    /// every 16th thread.
    #[inline(always)]
    pub fn enter(&self, linear: usize) -> Dim3 {
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
            set_thread(tid);
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

    /// The running thread returned.
    #[inline(always)]
    pub fn returned(&self) {
        self.returned.set(self.returned.get() + 1);
    }

    /// A barrier, `sync_threads()` at `site`, after a region: `true` if the block goes on;
    /// `false` if every thread has returned. Some returned and some not is barrier divergence.
    #[inline]
    pub fn barrier(&self, site: &'static Location<'static>) -> bool {
        interrupt::poll_deadline();
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
    /// loop with a barrier in it must be block-uniform); else barrier divergence.
    #[inline]
    pub fn decide(
        &self,
        loop_site: &'static Location<'static>,
        barrier_site: &'static Location<'static>,
    ) -> bool {
        let (voted, yes) = (self.voted.replace(0), self.yes.replace(0));
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

/// Runs a block of a kernel that `#[kernel]` split at its barriers: `regions` is the generated
/// sequence of region loops, on a guarded stack of the block's stack size.
///
/// # Safety
/// As [`super::run_block`]: no other block may be running on this OS thread, and if this
/// unwinds, the caller must call [`super::take_current`] before it runs another block.
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
        let mut state = Regions {
            block: first,
            pool: KEPT.with(|k| Pool(core::mem::take(&mut k.borrow_mut().0))),
            threads: first.block_dim.count() as usize,
            stack_bytes,
            returned: Cell::new(0),
            voted: Cell::new(0),
            yes: Cell::new(0),
            yes_thread: Cell::new(0),
            no_thread: Cell::new(0),
        };
        for block in super::each_block(&first) {
            BLOCK.with(|b| {
                b.set(Geometry {
                    block_idx: block.block_idx,
                    block_dim: block.block_dim,
                    grid_dim: block.grid_dim,
                })
            });
            shared::begin_block(&block);
            state.block = block;
            state.returned.set(0);
            regions(&mut state);
        }
        KEPT.with(|k| core::mem::swap(&mut k.borrow_mut().0, &mut state.pool.0));
    });
    SPLIT.with(|s| s.set(false));
    if ended == stack_guard::Ended::Overflowed {
        interrupt::raise(
            super::current_thread(),
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
