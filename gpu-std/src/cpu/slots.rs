//! Where the split path keeps a block's carried variables between its regions: per variable,
//! one slot per thread ([`Slots`], a structure of arrays), out of an [`Arena`] that each worker
//! keeps from block to block.

use core::cell::RefCell;
use core::marker::PhantomData;
use core::mem::MaybeUninit;
use std::vec::Vec;

/// The memory of a block's [`Slots`]: one allocation, handed out front to back and taken back
/// whole when the block ends, so that the slots of every carried variable of every block this
/// worker runs live in the same few pages (no allocation per block or per region, no page
/// faults after the first block). A block that needs more than it has gets a chunk of its own
/// (never moving the slots already handed out); the next block starts with one allocation of
/// their total size.
pub(crate) struct Arena {
    /// The allocation (null: none yet), of `capacity` bytes aligned to [`Arena::ALIGN`].
    base: *mut u8,
    capacity: usize,
    /// Bytes handed out of `base` in this block.
    used: usize,
    /// Chunks of this block past `base`'s capacity (and their sizes), freed when it ends.
    overflow: Vec<(*mut u8, usize)>,
}

impl Arena {
    pub(crate) const EMPTY: Arena = Arena {
        base: core::ptr::null_mut(),
        capacity: 0,
        used: 0,
        overflow: Vec::new(),
    };
    /// A cache line: no two variables' slots share one at their ends.
    const ALIGN: usize = 64;

    fn layout(bytes: usize) -> std::alloc::Layout {
        std::alloc::Layout::from_size_align(bytes, Self::ALIGN).expect("a block's carried slots")
    }

    /// `bytes` (a multiple of [`Arena::ALIGN`], at least one) of fresh memory.
    fn allocate(bytes: usize) -> *mut u8 {
        let layout = Self::layout(bytes);
        // SAFETY: `layout` has a non-zero size (callers ask for at least `ALIGN` bytes).
        let ptr = unsafe { std::alloc::alloc(layout) };
        if ptr.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        ptr
    }

    /// `bytes` bytes aligned to [`Arena::ALIGN`], valid until [`Arena::reset`].
    #[inline(always)]
    fn take(&mut self, bytes: usize) -> *mut u8 {
        let bytes = bytes.div_ceil(Self::ALIGN).max(1) * Self::ALIGN;
        if self.capacity - self.used >= bytes {
            // SAFETY: `used + bytes <= capacity`, inside `base`'s allocation.
            let ptr = unsafe { self.base.add(self.used) };
            self.used += bytes;
            return ptr;
        }
        let ptr = Self::allocate(bytes);
        self.overflow.push((ptr, bytes));
        ptr
    }

    /// Takes back everything handed out (`&mut self`: no [`Slots`] borrows it any more); the
    /// overflow chunks become part of one allocation.
    pub(crate) fn reset(&mut self) {
        self.used = 0;
        if self.overflow.is_empty() {
            return;
        }
        let extra: usize = self.overflow.iter().map(|&(_, bytes)| bytes).sum();
        let capacity = self.capacity + extra;
        self.free_all();
        self.base = Self::allocate(capacity);
        self.capacity = capacity;
    }

    fn free_all(&mut self) {
        for (ptr, bytes) in self.overflow.drain(..) {
            // SAFETY: allocated by `allocate` with this size.
            unsafe { std::alloc::dealloc(ptr, Self::layout(bytes)) }
        }
        if !self.base.is_null() {
            // SAFETY: allocated by `allocate` with this capacity.
            unsafe { std::alloc::dealloc(self.base, Self::layout(self.capacity)) }
            self.base = core::ptr::null_mut();
            self.capacity = 0;
        }
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        self.free_all();
    }
}

/// Where a carried variable lives between two regions: one slot per thread of the block, in
/// place (a structure of arrays: each variable its own array, indexed by the thread's linear
/// index). A region reads the slots of the variables it uses and writes those it sets; the
/// others stay where they are. Which slots hold a value is the generated code's to know (the
/// region that sets a variable writes every live thread's slot; a thread that returned runs no
/// later region), so reading one is `unsafe`. A value never read again (a thread returned, or
/// the block unwound) is not dropped: what it owned leaks.
pub struct Slots<'r, T> {
    ptr: *mut MaybeUninit<T>,
    /// The block's threads (the number of slots).
    len: usize,
    /// Borrows the arena, which `Arena::reset` needs back (`&mut`) before it reuses the memory.
    _arena: PhantomData<&'r RefCell<Arena>>,
}

// A handle: copies name the same slots (the region closures capture copies).
impl<T> Clone for Slots<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Slots<'_, T> {}

impl<'r, T> Slots<'r, T> {
    /// Empty slots for `threads` threads out of `arena`.
    #[inline(always)]
    pub(crate) fn new(arena: &'r RefCell<Arena>, threads: usize) -> Self {
        let ptr = if core::mem::size_of::<T>() == 0 {
            core::ptr::NonNull::<MaybeUninit<T>>::dangling().as_ptr()
        } else {
            assert!(
                core::mem::align_of::<T>() <= Arena::ALIGN,
                "a carried variable aligned to more than {} bytes",
                Arena::ALIGN
            );
            let bytes = core::mem::size_of::<T>() * threads;
            arena.borrow_mut().take(bytes).cast::<MaybeUninit<T>>()
        };
        Slots {
            ptr,
            len: threads,
            _arena: PhantomData,
        }
    }

    /// Moves thread `linear`'s value out of its slot, which is then empty.
    ///
    /// # Safety
    /// `linear` is below the block's thread count, the slot was filled by [`Slots::put`] and not
    /// emptied since.
    #[inline(always)]
    pub unsafe fn take(&self, linear: usize) -> T {
        debug_assert!(linear < self.len);
        // SAFETY: in bounds and filled (the caller).
        unsafe { self.ptr.add(linear).read().assume_init() }
    }

    /// A copy of thread `linear`'s value, which stays in its slot.
    ///
    /// # Safety
    /// As [`Slots::take`].
    #[inline(always)]
    pub unsafe fn get(&self, linear: usize) -> T
    where
        T: Copy,
    {
        debug_assert!(linear < self.len);
        // SAFETY: in bounds and filled (the caller).
        unsafe { self.ptr.add(linear).read().assume_init() }
    }

    /// Fills thread `linear`'s slot with `value`; a value still there is forgotten, not dropped.
    ///
    /// # Safety
    /// `linear` is below the block's thread count.
    #[inline(always)]
    pub unsafe fn put(&self, linear: usize, value: T) {
        debug_assert!(linear < self.len);
        // SAFETY: in bounds (the caller); writing a `MaybeUninit` needs nothing else.
        unsafe { self.ptr.add(linear).write(MaybeUninit::new(value)) }
    }
}

#[cfg(test)]
mod tests {
    use super::{Arena, Slots};
    use core::cell::RefCell;
    use std::vec::Vec;

    /// Several variables' slots of one block hold their values side by side (none overlaps
    /// another, each aligned); a block needing more than the arena has gets it, and the next
    /// block reuses one allocation of the total. Run under Miri (scripts/miri.sh): an overlap,
    /// a misaligned or out-of-bounds access, or a use after the reset would be its error.
    #[test]
    fn slots_of_a_block_are_disjoint_and_reused_by_the_next() {
        let arena = RefCell::new(Arena::EMPTY);
        let threads = 67;
        for block in 0..3u64 {
            let bytes = Slots::<u8>::new(&arena, threads);
            let words = Slots::<u64>::new(&arena, threads);
            let pairs = Slots::<(u32, [f64; 3])>::new(&arena, threads);
            let nothing = Slots::<()>::new(&arena, threads);
            for t in 0..threads {
                // SAFETY: t < threads.
                unsafe {
                    bytes.put(t, t as u8);
                    words.put(t, block << 32 | t as u64);
                    pairs.put(t, (t as u32, [block as f64; 3]));
                    nothing.put(t, ());
                }
            }
            for t in (0..threads).rev() {
                // SAFETY: t < threads, each slot filled above and emptied at most once.
                let (b, w, p) = unsafe { (bytes.get(t), words.take(t), pairs.take(t)) };
                assert_eq!(
                    (b, w, p),
                    (
                        t as u8,
                        block << 32 | t as u64,
                        (t as u32, [block as f64; 3])
                    )
                );
            }
            let _ = nothing;
            if block == 0 {
                assert!(
                    !arena.borrow().overflow.is_empty(),
                    "the first block allocates"
                );
            }
            arena.borrow_mut().reset();
            assert!(arena.borrow().overflow.is_empty());
        }
        let arena = arena.into_inner();
        let sizes = [1, 8, core::mem::size_of::<(u32, [f64; 3])>()];
        let needed = sizes.map(|size| (size * threads).div_ceil(64) * 64);
        assert_eq!(arena.capacity, needed.iter().sum::<usize>());
    }

    /// A value that owns memory moves in and out whole: nothing drops it in its slot (under
    /// Miri a drop there would be a double free, and a value left behind a leak).
    #[test]
    fn values_that_own_memory_move_in_and_out_whole() {
        let arena = RefCell::new(Arena::EMPTY);
        let slots = Slots::<Vec<u32>>::new(&arena, 2);
        // SAFETY: 0 and 1 are below 2; slot 0 is taken once after being filled.
        let taken = unsafe {
            slots.put(0, std::vec![1, 2, 3]);
            slots.put(1, std::vec![4]);
            slots.take(0)
        };
        assert_eq!(taken, [1, 2, 3]);
        // SAFETY: slot 1 was filled and not emptied.
        drop(unsafe { slots.take(1) });
    }
}
