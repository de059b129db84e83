//! Checked mode's race check on outputs (`Out<T>`, and `Out2`/`Out3`, which write through one):
//! two threads writing one element in a launch, or one reading what another writes, with nothing
//! ordering them, is a race. Threads of different blocks are never ordered; threads of one block
//! are ordered by a barrier between the accesses. Atomics are exempt.
//!
//! Each tracked output has a shadow word per element, the last plain write to it: the block (its
//! position in the grid), the thread (in the block) and the block's barrier count then. Reads are
//! checked against it but not recorded, so a write after another thread's read goes unseen.

use super::bug::{raise, KernelBug};
use super::{current_block, current_linear, linear_to_dim};
use core::cell::Cell;
use core::panic::Location;
use core::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::vec::Vec;

/// The shadow of one output of a launch.
pub struct OutputShadow {
    name: &'static str,
    base: usize,
    len: usize,
    /// `len` zeroed words (calloc'd: untouched pages cost nothing).
    words: *mut u64,
}

impl Drop for OutputShadow {
    fn drop(&mut self) {
        // SAFETY: `words` was allocated in `OutputShadows::track` with this layout.
        unsafe {
            dealloc(
                self.words.cast(),
                Layout::array::<u64>(self.len).expect("allocated"),
            )
        }
    }
}

/// The shadows of a launch's outputs, made by the executor in checked mode.
#[derive(Default)]
pub struct OutputShadows {
    outputs: Vec<OutputShadow>,
}

// SAFETY: the shadow words are only accessed as atomics; the rest is immutable after `track`.
unsafe impl Sync for OutputShadows {}
// SAFETY: as for `Sync`; the words are owned.
unsafe impl Send for OutputShadows {}

impl OutputShadows {
    /// No outputs tracked.
    pub fn new() -> Self {
        Self::default()
    }

    /// Tracks output `name`, `len` elements at `base`. An output whose shadow cannot be allocated
    /// (larger than the host's memory) goes unchecked.
    pub fn track(&mut self, name: &'static str, base: *const u8, len: usize) {
        let Ok(layout) = Layout::array::<u64>(len) else {
            return;
        };
        if len == 0 {
            return;
        }
        // SAFETY: `layout` has a non-zero size.
        let words = unsafe { alloc_zeroed(layout) }.cast::<u64>();
        if !words.is_null() {
            self.outputs.push(OutputShadow {
                name,
                base: base as usize,
                len,
                words,
            });
        }
    }
}

std::thread_local! {
    static CURRENT: Cell<*const OutputShadows> = const { Cell::new(core::ptr::null()) };
}

/// Runs `f` (a block's CPU entry) with `shadows` as the launch's output shadows on this OS
/// thread. An executor internal.
pub fn with_output_checks<R>(shadows: &OutputShadows, f: impl FnOnce() -> R) -> R {
    super::with_current(&CURRENT, shadows, f)
}

/// The shadow of the output at `base` in the running launch, or null (unchecked).
pub(crate) fn output_shadow(base: *const u8) -> *const OutputShadow {
    let current = CURRENT.with(Cell::get);
    // SAFETY: a non-null pointer was set by `with_output_checks` from a reference that outlives
    // its `f`, during which the kernel's outputs (which borrow the block) are made.
    let Some(shadows) = (unsafe { current.as_ref() }) else {
        return core::ptr::null();
    };
    shadows
        .outputs
        .iter()
        .find(|o| o.base == base as usize)
        .map_or(core::ptr::null(), |o| o as *const OutputShadow)
}

/// The record of the current thread's access: block (grid position + 1, 32 bits), thread (+ 1,
/// 11 bits), barrier count (20 bits), write (1 bit).
fn record(write: bool) -> u64 {
    let block = current_block();
    let b = block.block_idx;
    let g = block.grid_dim;
    let linear = (b.z as u64 * g.y as u64 + b.y as u64) * g.x as u64 + b.x as u64;
    let block_field = (linear % u32::MAX as u64) + 1;
    let thread = current_linear() as u64 + 1;
    let epoch = super::shared::current_epoch() as u64 & 0xf_ffff;
    (block_field << 32) | (thread << 21) | (epoch << 1) | write as u64
}

/// Checks the current thread's plain access to element `index` of the output `shadow` tracks
/// (and records it if it is a write).
///
/// # Safety
/// `shadow` is non-null, from [`output_shadow`] in this launch, and `index` is below its length.
pub(crate) unsafe fn check_output(
    shadow: *const OutputShadow,
    index: usize,
    write: bool,
    at: &'static Location<'static>,
) {
    // SAFETY: the caller's contract; the shadow lives for the launch.
    let shadow = unsafe { &*shadow };
    // SAFETY: `index < len` (caller): inside the zeroed allocation of `len` words, aligned.
    let word = unsafe { AtomicU64::from_ptr(shadow.words.add(index)) };
    let me = record(write);
    let earlier = if write {
        word.swap(me, Relaxed)
    } else {
        word.load(Relaxed)
    };
    let block = |r: u64| r >> 32;
    let thread = |r: u64| (r >> 21) & 0x7ff;
    let epoch = |r: u64| (r >> 1) & 0xf_ffff;
    let earlier_wrote = earlier & 1 == 1;
    let other_block = block(earlier) != block(me);
    let same_interval = thread(earlier) != thread(me) && epoch(earlier) == epoch(me);
    if earlier_wrote && (other_block || same_interval) {
        let geometry = current_block();
        let earlier_block = block(earlier) - 1;
        let g = geometry.grid_dim;
        let earlier_block = crate::thread::Dim3::new(
            (earlier_block % g.x as u64) as u32,
            (earlier_block / g.x as u64 % g.y as u64) as u32,
            (earlier_block / (g.x as u64 * g.y as u64)) as u32,
        );
        let earlier_thread = linear_to_dim(thread(earlier) as usize - 1, geometry.block_dim);
        raise(
            super::current_thread(),
            KernelBug::OutputRace {
                output: shadow.name.into(),
                index,
                earlier_block,
                earlier_thread,
                write,
                at,
            },
        );
    }
}
