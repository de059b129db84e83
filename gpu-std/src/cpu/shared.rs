//! Shared memory on the CPU executor, and the checks that run on it in checked mode.
//!
//! Each worker thread keeps one arena: the `shared!` arrays and the dynamic shared memory of the
//! block it runs. Memory is reused from block to block without clearing, as on a GPU, so a kernel
//! that reads before writing sees stale data (and checked mode says so).
//!
//! In checked mode every element carries a shadow: which block wrote it last, and which threads
//! read and wrote it since the last barrier. Two threads touching an element in one barrier
//! interval, one of them writing, is a race, unless a `sync_warp` that both took part in came
//! between; reading an element no thread of the block wrote is an uninitialized read. Atomics are
//! exempt from the race check.

use super::bug::{raise, KernelBug, SharedAccess};
use super::context::{current_block, current_linear, linear_to_dim, BlockContext};
use super::waits::WARP;
use core::cell::RefCell;
use core::panic::Location;
use std::format;
use std::string::String;
use std::vec;
use std::vec::Vec;

/// Where a `shared!` array is declared. `#[kernel]` makes one per `shared!` of a kernel; not for
/// kernel authors.
#[doc(hidden)]
#[derive(Debug, PartialEq, Eq)]
pub struct SharedSite {
    /// Position among the kernel's `shared!` arrays.
    pub index: usize,
    /// The variable it is bound to, if any.
    pub name: &'static str,
    /// Source file of the declaration.
    pub file: &'static str,
    /// Source line of the declaration.
    pub line: u32,
}

impl SharedSite {
    fn describe(&self) -> String {
        let name = if self.name.is_empty() {
            "(unnamed)"
        } else {
            self.name
        };
        format!("`{name}` ({}:{})", self.file, self.line)
    }
}

/// The id of the dynamic shared memory in a [`Shared`] handle.
pub(crate) const DYNAMIC: u32 = u32::MAX;

/// Access kinds the checker tells apart.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Access {
    Read,
    Write,
    /// Read-modify-write by an atomic: must see initialized memory, never races.
    Atomic,
}

/// Where a recorded access was made (`Shared::get`/`set` are `#[track_caller]`).
type Site = Option<&'static Location<'static>>;

/// Shadow of one granule of shared memory. Threads are stored as linear index + 1 (0 = none).
#[derive(Clone, Copy, Default)]
struct Shadow {
    /// Block serial of the last write; another value means "not written by this block".
    block: u32,
    /// Barrier interval of the accesses below.
    epoch: u32,
    writer: u32,
    reader: u32,
    other_reader: u32,
    /// `Arena::warp_syncs` at the time of each access above, to tell whether a `sync_warp` of
    /// both threads came between it and a later access.
    writer_syncs: u32,
    reader_syncs: u32,
    other_reader_syncs: u32,
    /// The source locations of the accesses above, for race reports.
    writer_at: Site,
    reader_at: Site,
    other_reader_at: Site,
}

struct Allocation {
    /// The declaration, or null for dynamic shared memory.
    site: *const SharedSite,
    /// 16-byte aligned, as the PTX declarations.
    memory: Vec<u128>,
    bytes: usize,
    /// Bytes per shadow entry: the element size for `shared!` arrays (until an access to part
    /// of an element, `Shared::get2` of a row, splits it: see [`Allocation::refine`]), 1 for
    /// dynamic memory, which several typed views may share.
    granule: usize,
    shadow: Vec<Shadow>,
    /// Block serial of the last block that used it, to count its bytes once per block.
    block: u32,
}

impl Allocation {
    fn new(site: *const SharedSite, bytes: usize, granule: usize) -> Self {
        Allocation {
            site,
            memory: vec![0; bytes.div_ceil(16)],
            bytes,
            granule,
            shadow: Vec::new(),
            block: 0,
        }
    }

    /// Makes `size`-byte accesses trackable on their own: where `size` divides the granule
    /// (a column of a `[T; M]` row), each shadow entry becomes `granule / size` entries that
    /// inherit its history, as the row access touched all of its parts.
    fn refine(&mut self, size: usize) {
        if size == 0 || size >= self.granule || !self.granule.is_multiple_of(size) {
            return;
        }
        let parts = self.granule / size;
        self.shadow = self
            .shadow
            .iter()
            .flat_map(|&entry| core::iter::repeat_n(entry, parts))
            .collect();
        self.granule = size;
    }

    fn describe(&self) -> String {
        if self.site.is_null() {
            "dynamic shared memory".into()
        } else {
            // SAFETY: a non-null `site` is a `&'static SharedSite`.
            unsafe { (*self.site).describe() }
        }
    }
}

struct Arena {
    /// Serial of the block being run on this worker (never 0).
    block: u32,
    /// Barriers passed in this block.
    epoch: u32,
    checked: bool,
    used: usize,
    limit: usize,
    dynamic_bytes: usize,
    statics: Vec<Option<Allocation>>,
    dynamic: Option<Allocation>,
    /// `sync_warp` releases in this block so far (checked mode).
    warp_syncs: u32,
    /// For each warp and pair of its lanes, the `warp_syncs` number of the last `sync_warp` both
    /// took part in (32 × 32 per warp); empty until a block uses `sync_warp`.
    pair_syncs: Vec<u32>,
}

std::thread_local! {
    static ARENA: RefCell<Arena> = const {
        RefCell::new(Arena {
            block: 0,
            epoch: 0,
            checked: false,
            used: 0,
            limit: 0,
            dynamic_bytes: 0,
            statics: Vec::new(),
            dynamic: None,
            warp_syncs: 0,
            pair_syncs: Vec::new(),
        })
    };
}

/// Starts a block: a new serial (so every element reads as unwritten), no barrier passed yet.
#[inline]
pub(crate) fn begin_block(block: &BlockContext) {
    ARENA.with_borrow_mut(|a| {
        a.block = a.block.wrapping_add(1).max(1);
        a.epoch = 0;
        a.checked = block.checked;
        a.dynamic_bytes = block.dynamic_shared_bytes as usize;
        a.used = a.dynamic_bytes;
        a.limit = block.shared_limit_bytes as usize;
        a.warp_syncs = 0;
        a.pair_syncs.clear();
    });
}

/// A `sync_warp(mask)` of warp `warp` was released: in checked mode, accesses its lanes made
/// before it no longer race with their accesses after it.
pub(crate) fn warp_synced(warp: usize, mask: u32) {
    ARENA.with_borrow_mut(|a| {
        if !a.checked {
            return;
        }
        a.warp_syncs += 1;
        let base = warp * WARP * WARP;
        if a.pair_syncs.len() < base + WARP * WARP {
            a.pair_syncs.resize(base + WARP * WARP, 0);
        }
        let lanes = (0..WARP).filter(|lane| mask & (1 << lane) != 0);
        for first in lanes.clone() {
            for second in lanes.clone() {
                a.pair_syncs[base + first * WARP + second] = a.warp_syncs;
            }
        }
    });
}

/// Whether the `bytes` bytes at `first` lie inside one of this OS thread's shared arrays (static
/// or dynamic), which live until a later block replaces them: memory that may be read while a
/// block runs here.
pub(crate) fn holds(first: *const u8, bytes: usize) -> bool {
    let (start, end) = (first as usize, (first as usize).checked_add(bytes));
    ARENA.with_borrow(|a| {
        a.statics.iter().flatten().chain(&a.dynamic).any(|m| {
            let base = m.memory.as_ptr() as usize;
            start >= base && end.is_some_and(|end| end <= base + m.bytes)
        })
    })
}

/// Barriers the running block has passed (what orders its threads' accesses to outputs too).
pub(crate) fn current_epoch() -> u32 {
    ARENA.with_borrow(|a| a.epoch)
}

/// A barrier was passed: accesses before it no longer race with accesses after it.
pub(crate) fn next_epoch() {
    ARENA.with_borrow_mut(|a| a.epoch = a.epoch.wrapping_add(1));
}

/// The memory of a `shared!` array (`__private::shared_array`) of `bytes` (`None`: the size overflowed) in elements
/// of `elem_bytes`, and whether checked mode is on.
pub(crate) fn shared_memory(
    site: &'static SharedSite,
    bytes: Option<usize>,
    elem_bytes: usize,
) -> (*mut u8, bool) {
    ARENA.with_borrow_mut(|a| {
        let too_large = |asked: usize| KernelBug::SharedMemoryTooLarge {
            asked,
            limit: a.limit,
            array: site.describe(),
        };
        let Some(bytes) = bytes.filter(|&b| b <= a.limit) else {
            raise(
                super::context::current_thread(),
                too_large(bytes.unwrap_or(usize::MAX)),
            );
        };
        if a.statics.len() <= site.index {
            a.statics.resize_with(site.index + 1, || None);
        }
        let slot = &mut a.statics[site.index];
        // The same declaration: the same site, or its twin in another copy of the kernel's code
        // (the elementwise loop has the first thread's and the others').
        let same_site = |m: &Allocation| {
            // SAFETY: a static array's `site` is the `&'static SharedSite` it was made for.
            core::ptr::eq(m.site, site) || unsafe { *m.site == *site }
        };
        let reusable = matches!(slot, Some(m) if same_site(m) && m.bytes == bytes);
        if !reusable {
            *slot = Some(Allocation::new(site, bytes, elem_bytes));
        }
        let allocation = slot.as_mut().expect("just filled");
        let ptr = allocation.memory.as_mut_ptr().cast::<u8>();
        if allocation.block != a.block {
            allocation.block = a.block;
            a.used = a.used.saturating_add(bytes);
            if a.used > a.limit {
                let bug = KernelBug::SharedMemoryTooLarge {
                    asked: a.used,
                    limit: a.limit,
                    array: site.describe(),
                };
                raise(super::context::current_thread(), bug);
            }
        }
        (ptr, a.checked)
    })
}

/// The block's dynamic shared memory (the launch's `shared_mem_bytes`) viewed as `T`s: its
/// address, its length in elements, its id for the checks and whether checked mode is on, the
/// parts of the `Shared` handle that `shared::dynamic_shared` makes of them.
pub(crate) fn dynamic_memory<T: bytemuck::Pod>() -> (*mut T, usize, u32, bool) {
    let size = core::mem::size_of::<T>().max(1);
    ARENA.with_borrow_mut(|a| {
        let bytes = a.dynamic_bytes;
        if !matches!(&a.dynamic, Some(m) if m.bytes >= bytes) {
            a.dynamic = Some(Allocation::new(core::ptr::null(), bytes, 1));
        }
        let allocation = a.dynamic.as_mut().expect("just filled");
        let ptr = allocation.memory.as_mut_ptr() as *mut T;
        (ptr, bytes / size, DYNAMIC, a.checked)
    })
}

/// Checks one access by the current thread, made at `at`, to element `index` (of `size` bytes)
/// of array `id`, and records it.
pub(crate) fn check_access(
    id: u32,
    index: usize,
    size: usize,
    access: Access,
    at: &'static Location<'static>,
) {
    let thread = current_linear() as u32 + 1;
    let failure = ARENA.with_borrow_mut(|a| {
        let Arena {
            block,
            epoch,
            statics,
            dynamic,
            warp_syncs,
            pair_syncs,
            ..
        } = a;
        let allocation = if id == DYNAMIC {
            dynamic.as_mut()
        } else {
            statics.get_mut(id as usize).and_then(Option::as_mut)
        }
        .expect("a Shared handle refers to an allocation of this block");
        // Whether `other`'s access, made when `syncs` warp syncs had happened, is ordered
        // before this thread's by a later `sync_warp` that both took part in.
        let synced_since = |other: u32, syncs: u32| {
            let (me, other) = (thread as usize - 1, other as usize - 1);
            me / WARP == other / WARP
                && pair_syncs
                    .get(me / WARP * WARP * WARP + (other % WARP) * WARP + me % WARP)
                    .is_some_and(|&last| last > syncs)
        };
        if allocation.shadow.is_empty() {
            let granules = allocation.bytes.div_ceil(allocation.granule);
            allocation.shadow = vec![Shadow::default(); granules];
        }
        allocation.refine(size);
        // A `shared!` array's granule is its element: no division on this path.
        let (first, count) = if size == allocation.granule {
            (index, 1)
        } else {
            (
                index * size / allocation.granule,
                size.div_ceil(allocation.granule).max(1),
            )
        };
        for shadow in &mut allocation.shadow[first..first + count] {
            let now = Now {
                block: *block,
                epoch: *epoch,
                thread,
                syncs: *warp_syncs,
                at,
            };
            if let Some(bug) = check_one(shadow, now, access, &synced_since) {
                return Some((bug, allocation.describe()));
            }
        }
        None
    });
    if let Some((conflict, array)) = failure {
        let block_dim = current_block().block_dim;
        let me = super::context::current_thread();
        let bug = match conflict {
            Conflict::Uninitialized => KernelBug::UninitializedShared { array, index, at },
            Conflict::Race {
                other,
                other_wrote,
                other_at,
            } => KernelBug::SharedRace {
                array,
                index,
                earlier: SharedAccess {
                    thread: linear_to_dim(other as usize - 1, block_dim),
                    write: other_wrote,
                    at: other_at,
                },
                later: SharedAccess {
                    thread: me,
                    write: access == Access::Write,
                    at: Some(at),
                },
            },
        };
        raise(me, bug);
    }
}

enum Conflict {
    Uninitialized,
    Race {
        other: u32,
        other_wrote: bool,
        other_at: Site,
    },
}

/// The access being checked: by whom, and when.
#[derive(Clone, Copy)]
struct Now {
    block: u32,
    epoch: u32,
    thread: u32,
    syncs: u32,
    at: &'static Location<'static>,
}

#[inline(always)]
fn check_one(
    s: &mut Shadow,
    now: Now,
    access: Access,
    synced_since: &impl Fn(u32, u32) -> bool,
) -> Option<Conflict> {
    if access != Access::Write && s.block != now.block {
        return Some(Conflict::Uninitialized);
    }
    if access == Access::Atomic {
        return None;
    }
    if s.block != now.block || s.epoch != now.epoch {
        *s = Shadow {
            block: s.block,
            epoch: now.epoch,
            ..Shadow::default()
        };
    }
    // Another thread's access races with this one unless a `sync_warp` of both came between.
    let races =
        |other: u32, syncs: u32| other != 0 && other != now.thread && !synced_since(other, syncs);
    if races(s.writer, s.writer_syncs) {
        return Some(Conflict::Race {
            other: s.writer,
            other_wrote: true,
            other_at: s.writer_at,
        });
    }
    match access {
        Access::Write => {
            let readers = [
                (s.reader, s.reader_syncs, s.reader_at),
                (s.other_reader, s.other_reader_syncs, s.other_reader_at),
            ];
            let racing = readers.into_iter().find(|&(r, syncs, _)| races(r, syncs));
            if let Some((other, _, other_at)) = racing {
                return Some(Conflict::Race {
                    other,
                    other_wrote: false,
                    other_at,
                });
            }
            s.writer = now.thread;
            s.writer_syncs = now.syncs;
            s.writer_at = Some(now.at);
            s.block = now.block;
        }
        _ => {
            if s.reader == 0 || s.reader == now.thread {
                s.reader = now.thread;
                s.reader_syncs = now.syncs;
                s.reader_at = Some(now.at);
            } else {
                s.other_reader = now.thread;
                s.other_reader_syncs = now.syncs;
                s.other_reader_at = Some(now.at);
            }
        }
    }
    None
}
