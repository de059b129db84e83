//! Checked mode's race check on outputs (`Out<T>`, and `Out2`/`Out3`, which write through one):
//! two threads writing different values to one element in a launch, or one reading what another
//! writes, with nothing ordering them, is a race. Threads of different blocks are never ordered;
//! threads of one block are ordered by a barrier between the accesses. Atomics are exempt.
//!
//! Several threads storing the same value to one element (BFS's `*found = true` from every
//! thread that finds work) is not reported: whichever store lands last, the element holds that
//! value, on the GPU as on the CPU. Each element's last written value is kept beside its record
//! (the bits of values of up to 8 bytes, a 64-bit hash of larger ones), and a write that finds an
//! unordered earlier write compares the two.
//!
//! Threads of different blocks are ordered by a grid sync (`Grid::sync()` of a cooperative
//! launch) between the accesses.
//!
//! Each tracked output has a shadow word per element, the last plain write to it: the block (its
//! position in the grid), the thread (in the block), the block's barrier count and the launch's
//! grid syncs then. Reads are checked against it but not recorded, so a write after another
//! thread's read goes unseen. The counts are kept modulo their fields' widths (2^16 barriers,
//! 2^12 grid syncs), so two accesses exactly a multiple of that apart look unordered.

use super::bug::{raise, KernelBug};
use super::context::{current_block, current_linear, linear_to_dim};
use core::cell::Cell;
use core::panic::Location;
use core::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::sync::Mutex;
use std::vec::Vec;

/// Stripes of the locks that make a write's record and value one step.
const LOCKS: usize = 64;

/// The shadow of one output of a launch.
pub struct OutputShadow {
    name: &'static str,
    base: usize,
    len: usize,
    /// `len` zeroed words (calloc'd: untouched pages cost nothing): each element's last write.
    words: *mut u64,
    /// `len` zeroed words: the bits of each element's last written value.
    values: *mut u64,
    /// Element `i`'s write takes lock `i % LOCKS` (reads take none: they only load the record).
    locks: [Mutex<()>; LOCKS],
}

impl Drop for OutputShadow {
    fn drop(&mut self) {
        let layout = Layout::array::<u64>(self.len).expect("allocated");
        // SAFETY: `words` and `values` were allocated in `OutputShadows::track` with this layout.
        unsafe {
            dealloc(self.words.cast(), layout);
            dealloc(self.values.cast(), layout);
        }
    }
}

/// The bits a write of `value` is compared by: its bytes for values of up to 8 bytes, a 64-bit
/// FNV-1a hash of them for larger ones (two different values hashing alike is a 2^-64 chance).
#[inline]
pub(crate) fn value_bits<T: bytemuck::Pod>(value: &T) -> u64 {
    let bytes = bytemuck::bytes_of(value);
    if bytes.len() <= 8 {
        let mut bits = [0u8; 8];
        bits[..bytes.len()].copy_from_slice(bytes);
        return u64::from_le_bytes(bits);
    }
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ b as u64).wrapping_mul(0x100_0000_01b3)
    })
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
        // SAFETY: as above.
        let values = unsafe { alloc_zeroed(layout) }.cast::<u64>();
        match (words.is_null(), values.is_null()) {
            (false, false) => self.outputs.push(OutputShadow {
                name,
                base: base as usize,
                len,
                words,
                values,
                locks: core::array::from_fn(|_| Mutex::new(())),
            }),
            // SAFETY: each non-null one was allocated just above with `layout`.
            (words_null, values_null) => unsafe {
                if !words_null {
                    dealloc(words.cast(), layout);
                }
                if !values_null {
                    dealloc(values.cast(), layout);
                }
            },
        }
    }
}

std::thread_local! {
    static CURRENT: Cell<*const OutputShadows> = const { Cell::new(core::ptr::null()) };
}

/// Runs `f` (a block's CPU entry) with `shadows` as the launch's output shadows on this OS
/// thread. An executor internal.
pub fn with_output_checks<R>(shadows: &OutputShadows, f: impl FnOnce() -> R) -> R {
    super::context::with_current(&CURRENT, shadows, f)
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

/// The record of the current thread's access: grid syncs (12 bits), block (grid position + 1,
/// 24 bits), thread (+ 1, 11 bits), barrier count (16 bits), write (1 bit).
fn record(write: bool) -> u64 {
    let block = current_block();
    let b = block.block_idx;
    let g = block.grid_dim;
    let linear = (b.z as u64 * g.y as u64 + b.y as u64) * g.x as u64 + b.x as u64;
    let block_field = (linear % 0xff_ffff) + 1;
    let thread = current_linear() as u64 + 1;
    let epoch = super::shared::current_epoch() as u64 & 0xffff;
    let grid_epoch = super::grid::current_grid_epoch() & 0xfff;
    (grid_epoch << 52) | (block_field << 28) | (thread << 17) | (epoch << 1) | write as u64
}

/// Checks the current thread's plain access to element `index` of the output `shadow` tracks:
/// a read (`written: None`), or a write of a value with [`value_bits`] `written`, which it
/// records.
///
/// # Safety
/// `shadow` is non-null, from [`output_shadow`] in this launch, and `index` is below its length.
pub(crate) unsafe fn check_output(
    shadow: *const OutputShadow,
    index: usize,
    written: Option<u64>,
    at: &'static Location<'static>,
) {
    // SAFETY: the caller's contract; the shadow lives for the launch.
    let shadow = unsafe { &*shadow };
    // SAFETY: `index < len` (caller): inside the zeroed allocations of `len` words, aligned.
    let (word, value) = unsafe {
        (
            AtomicU64::from_ptr(shadow.words.add(index)),
            AtomicU64::from_ptr(shadow.values.add(index)),
        )
    };
    let write = written.is_some();
    let me = record(write);
    let (earlier, same_value) = match written {
        Some(bits) => {
            // The record and the value change together, so the value compared is the one the
            // earlier write recorded.
            let _together = shadow.locks[index % LOCKS]
                .lock()
                .unwrap_or_else(|p| p.into_inner());
            let earlier = word.swap(me, Relaxed);
            (earlier, value.swap(bits, Relaxed) == bits)
        }
        None => (word.load(Relaxed), false),
    };
    let grid_epoch = |r: u64| r >> 52;
    let block = |r: u64| (r >> 28) & 0xff_ffff;
    let thread = |r: u64| (r >> 17) & 0x7ff;
    let epoch = |r: u64| (r >> 1) & 0xffff;
    let earlier_wrote = earlier & 1 == 1;
    let other_block = block(earlier) != block(me);
    let same_interval = thread(earlier) != thread(me) && epoch(earlier) == epoch(me);
    let unordered = grid_epoch(earlier) == grid_epoch(me) && (other_block || same_interval);
    if earlier_wrote && unordered && !same_value {
        let geometry = current_block();
        let earlier_block = block(earlier) - 1;
        let g = geometry.grid_dim;
        let earlier_block = crate::machine::Dim3::new(
            (earlier_block % g.x as u64) as u32,
            (earlier_block / g.x as u64 % g.y as u64) as u32,
            (earlier_block / (g.x as u64 * g.y as u64)) as u32,
        );
        let earlier_thread = linear_to_dim(thread(earlier) as usize - 1, geometry.block_dim);
        raise(
            super::context::current_thread(),
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
