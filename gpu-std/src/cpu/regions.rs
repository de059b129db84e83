//! The split path of the CPU executor: a kernel that `#[kernel]` split at its barriers runs each
//! region (the code between two barriers) as a loop over the block's threads, with no coroutine
//! and no switch per thread. The generated loops call [`Regions`] for what the GPU's hardware
//! does: set the running thread, count the threads that returned, check that a loop with a
//! barrier in it takes the same trips in every thread (block-uniform), and start a barrier epoch
//! for checked mode's race checks.
//!
//! What the macro cannot see, a barrier in a function the kernel calls, is caught here: while a
//! split block runs, reaching `sync_threads()` or a warp operation is a [`KernelBug`], never a
//! wrong answer (the macro only splits bodies whose calls it knows, so this is a last guard).

use super::bug::{raise, KernelBug};
use super::interrupt::{self, Interruption};
use super::{
    linear_to_dim, set_thread, shared, stack_guard, BlockContext, Geometry, BLOCK, THREAD,
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

/// Whether this OS thread runs a split block: [`super::block::wait`] reports a barrier then.
#[inline(always)]
pub(crate) fn in_split_block() -> bool {
    SPLIT.with(Cell::get)
}

/// A barrier or warp operation reached inside a region of a split kernel: reported, since the
/// threads before this one have already run past it.
#[cold]
#[inline(never)]
pub(crate) fn hidden_barrier(what: &str, site: &'static Location<'static>) -> ! {
    let detail = format!(
        "{what} at {site} was reached inside a region of a kernel that #[kernel] split at its \
         barriers (a barrier in a function it calls, which the macro cannot see); mark the \
         kernel #[kernel(coroutines)] or set FERROCUDA_CPU_PATH=coroutine"
    );
    raise(
        super::current_thread(),
        KernelBug::BarrierDivergence { detail },
    )
}

/// The state of one split block, lent to the generated region loops.
pub struct Regions {
    block: BlockContext,
    /// Allocations of emptied stores (taken from this OS thread's, and given back after).
    pool: Pool,
    threads: usize,
    /// Threads that returned (they skip every later region).
    returned: usize,
    /// The loop-trip votes of the current decision: how many voted, how many for another trip,
    /// and a thread of each side.
    voted: usize,
    yes: usize,
    yes_thread: usize,
    no_thread: usize,
}

impl Regions {
    /// The number of threads in the block.
    #[inline(always)]
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// An empty per-thread store with room for every thread (what a region leaves for the
    /// next), reusing the allocation of an emptied one of the same layout if there is one: a
    /// fresh allocation per region and block costs page faults.
    #[inline(always)]
    pub fn store<T>(&mut self) -> Vec<T> {
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
    pub fn first_store(&mut self) -> Vec<Option<()>> {
        let mut store = self.store();
        store.resize(self.threads, Some(()));
        store
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
    pub fn returned(&mut self) {
        self.returned += 1;
    }

    /// A barrier, `sync_threads()` at `site`, after a region: `true` if the block goes on;
    /// `false` if every thread has returned. Some returned and some not is barrier divergence.
    #[inline]
    pub fn barrier(&mut self, site: &'static Location<'static>) -> bool {
        interrupt::poll_deadline();
        match self.returned {
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
    pub fn vote(&mut self, linear: usize, another_trip: bool) {
        if another_trip && self.yes == 0 {
            self.yes_thread = linear;
        }
        if !another_trip && self.yes == self.voted {
            self.no_thread = linear;
        }
        self.voted += 1;
        self.yes += usize::from(another_trip);
    }

    /// The block's decision from the votes: every thread that has not returned must agree (a
    /// loop with a barrier in it must be block-uniform); else barrier divergence.
    #[inline]
    pub fn decide(
        &mut self,
        loop_site: &'static Location<'static>,
        barrier_site: &'static Location<'static>,
    ) -> bool {
        let (voted, yes) = (self.voted, self.yes);
        self.voted = 0;
        self.yes = 0;
        if yes == voted {
            return voted > 0;
        }
        if yes == 0 {
            return false;
        }
        let d = self.block.block_dim;
        let (stay, leave) = (
            linear_to_dim(self.yes_thread, d),
            linear_to_dim(self.no_thread, d),
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
            returned: 0,
            voted: 0,
            yes: 0,
            yes_thread: 0,
            no_thread: 0,
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
            state.returned = 0;
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
}
