//! Device (global) memory: live allocations with bounds, stored as atomic 64-bit words so that
//! blocks running on several host threads may load, store and do atomics on the same bytes
//! without a data race on the host (a racy kernel gets some interleaving, never UB here).

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, RwLock};

use crate::words::Words;

mod host;

/// Where the first allocation starts: far from 0 (a null or small-integer pointer never hits an
/// allocation) and below 2^47 like a real device pointer.
pub(crate) const GLOBAL_BASE: u64 = 0x7f00_0000_0000;
/// Allocations are 256-byte aligned (as `cuMemAlloc` promises) and separated by at least one
/// unmapped 256-byte gap, so that one past the end of one allocation is never inside the next.
const ALIGN: u64 = 256;
/// Host memory the emulator hands out is page-aligned, as the driver's page-locked memory is.
const PAGE: usize = 4096;

/// Device memory of a fixed capacity: a set of live allocations, each with its own bounds. Shared
/// between the driver (allocation, copies, memset) and running kernels (loads, stores, atomics);
/// every method is safe to call from several threads at once. Freed addresses are never reused,
/// so a stale pointer faults instead of reaching a newer allocation.
pub struct Memory {
    capacity: u64,
    checks: Checks,
    /// Where its first allocation starts; lower addresses are modules' variables.
    first_base: u64,
    table: RwLock<Table>,
}

struct Table {
    live: BTreeMap<u64, Arc<Allocation>>,
    used: u64,
    next_base: u64,
}

/// How strictly a device checks its kernels. A GPU faults only on an address nothing is mapped
/// at (or a misaligned one); the emulator by default also faults on what would pass unnoticed on
/// a GPU, as CUDA's compute-sanitizer does, so that a kernel's bug shows on the emulator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Checks {
    /// The default: an access one past an allocation's last byte faults, and so do a read of
    /// shared memory no thread of the block has stored to and a shared-memory race.
    #[default]
    Strict,
    /// What a GPU checks, for code written against GPUs that relies on what they let pass
    /// (Numba's test suites do): a kernel may access up to the end of its allocation's 256-byte
    /// granule (a GPU's allocations are that aligned, so nothing else lies there); shared memory
    /// reads what is there (zeros until stored to) and races are not checked; `bar.warp.sync`
    /// waits only for the lanes of its mask that have not exited.
    Gpu,
}

/// Why a [`Memory`] operation failed; the driver maps each to a `CUresult`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MemError {
    /// `requested` bytes were asked for and only `free` are left.
    #[error("out of memory: {requested} bytes requested, {free} free")]
    OutOfMemory { requested: u64, free: u64 },
    /// `[addr, addr + len)` is not inside one live allocation.
    #[error("{len} bytes at {addr:#x} are not inside one live allocation")]
    OutOfBounds { addr: u64, len: u64 },
    /// `addr` is not the start of a live allocation (free).
    #[error("{addr:#x} is not the start of a live allocation")]
    NotAllocated { addr: u64 },
    /// Host memory to map at `[addr, addr + len)` overlaps a live allocation.
    #[error("{len} bytes at {addr:#x} overlap a live allocation")]
    Overlaps { addr: u64, len: u64 },
    /// Host memory to map is not whole 8-byte words at an 8-byte aligned address.
    #[error("{len} bytes at {addr:#x} are not whole 8-byte aligned words")]
    NotWords { addr: u64, len: u64 },
}

impl Memory {
    /// Device memory of `capacity` bytes in all.
    pub fn new(capacity: u64) -> Arc<Self> {
        Memory::of_device(capacity, 0)
    }

    /// Device memory of `capacity` bytes of the `device`th GPU of a process (below
    /// [`Memory::MAX_DEVICES`]): its allocations start 16 TiB after the previous device's, so
    /// that addresses are unique across devices (unified addressing) and an address of one
    /// device is never inside an allocation of another.
    pub fn of_device(capacity: u64, device: u32) -> Arc<Self> {
        Memory::of_device_checked(capacity, device, Checks::Strict)
    }

    /// [`Memory::of_device`] whose kernels are checked as `checks` says.
    pub fn of_device_checked(capacity: u64, device: u32, checks: Checks) -> Arc<Self> {
        assert!(
            device < Self::MAX_DEVICES,
            "at most {} devices",
            Self::MAX_DEVICES
        );
        let first_base = GLOBAL_BASE + u64::from(device) * (1 << 44);
        Arc::new(Memory {
            capacity,
            checks,
            first_base,
            table: RwLock::new(Table {
                live: BTreeMap::new(),
                used: 0,
                next_base: first_base,
            }),
        })
    }

    /// How this device checks its kernels.
    pub fn checks(&self) -> Checks {
        self.checks
    }

    /// The most devices [`Memory::of_device`] separates.
    pub const MAX_DEVICES: u32 = 8;

    /// A new zeroed allocation of `bytes` bytes, 256-byte aligned; its device address. Zero bytes
    /// get a one-byte allocation (a unique address), as `malloc(0)` may; `cuMemAlloc`'s
    /// `CUDA_ERROR_INVALID_VALUE` for 0 is the driver layer's to give. Capacity is counted in
    /// 256-byte units, as a real allocator rounds.
    pub fn alloc(&self, bytes: u64) -> Result<u64, MemError> {
        let len = bytes.max(1);
        let mut table = self.write_table();
        let free = self.capacity - table.used;
        let rounded = len.checked_next_multiple_of(ALIGN).filter(|&r| r <= free);
        let Some(rounded) = rounded else {
            return Err(MemError::OutOfMemory {
                requested: bytes,
                free,
            });
        };
        // Host memory mapped at its own address may lie in the device's range: step past it.
        let mut base = table.next_base;
        while let Some(end) = overlap(&table, base, rounded + ALIGN) {
            base = end.next_multiple_of(ALIGN) + ALIGN;
        }
        table.next_base = base + rounded + ALIGN;
        table.used += rounded;
        table
            .live
            .insert(base, Arc::new(Allocation::zeroed(base, len, self.checks)));
        Ok(base)
    }

    /// Frees the allocation that starts at `addr`. A kernel still running keeps its bytes alive
    /// until it ends; the address is never handed out again.
    pub fn free(&self, addr: u64) -> Result<(), MemError> {
        let mut table = self.write_table();
        // A module's variable (below every allocation) is the module's, not freed by address;
        // host memory mapped at its own address may lie anywhere.
        let host = table.live.get(&addr).is_some_and(|a| a.host);
        if addr < self.first_base && !host {
            return Err(MemError::NotAllocated { addr });
        }
        let allocation = table
            .live
            .remove(&addr)
            .ok_or(MemError::NotAllocated { addr })?;
        if !allocation.host {
            table.used -= allocation.len.next_multiple_of(ALIGN);
        }
        Ok(())
    }

    /// The live allocation `addr` lies in (anywhere from its first byte to its last): its base
    /// and length in bytes, as cuMemGetAddressRange and cuPointerGetAttribute report them.
    pub fn range(&self, addr: u64) -> Option<(u64, u64)> {
        let table = self.table.read().unwrap_or_else(|e| e.into_inner());
        let (_, allocation) = table.live.range(..=addr).next_back()?;
        (addr - allocation.base < allocation.len).then_some((allocation.base, allocation.len))
    }

    /// Puts `allocations` (a module's variables) in this memory's table; [`Memory::map_module`]
    /// (`lib.rs`, where [`crate::Module`] lives) is the public face.
    pub(crate) fn map_allocations(&self, allocations: &[Arc<Allocation>]) {
        let mut table = self.write_table();
        for allocation in allocations {
            table.live.insert(allocation.base, allocation.clone());
        }
    }

    /// Takes `allocations` out of this memory's table again.
    pub(crate) fn unmap_allocations(&self, allocations: &[Arc<Allocation>]) {
        let mut table = self.write_table();
        for allocation in allocations {
            table.live.remove(&allocation.base);
        }
    }

    /// Whether `len` bytes at `addr` lie in one live allocation (what a copy there needs).
    pub fn check(&self, addr: u64, len: u64) -> Result<(), MemError> {
        self.find(addr, len).map(|_| ())
    }

    /// Host to device: copies `data` to `addr`.
    pub fn write(&self, addr: u64, data: &[u8]) -> Result<(), MemError> {
        let (allocation, offset) = self.find(addr, data.len() as u64)?;
        allocation.write_bytes(offset, data);
        Ok(())
    }

    /// Device to host: fills `out` from `addr`.
    pub fn read(&self, addr: u64, out: &mut [u8]) -> Result<(), MemError> {
        let (allocation, offset) = self.find(addr, out.len() as u64)?;
        allocation.read_bytes(offset, out);
        Ok(())
    }

    /// Device to device: copies `len` bytes from `src` to `dst` (the ranges may overlap).
    pub fn copy(&self, dst: u64, src: u64, len: u64) -> Result<(), MemError> {
        let (from, from_offset) = self.find(src, len)?;
        let (to, to_offset) = self.find(dst, len)?;
        // In chunks, front to back or back to front so overlapping ranges copy as memmove does.
        const CHUNK: u64 = 1 << 16;
        let mut buffer = vec![0u8; CHUNK.min(len) as usize];
        let chunks = len.div_ceil(CHUNK);
        for i in 0..chunks {
            let i = if dst > src { chunks - 1 - i } else { i };
            let start = i * CHUNK;
            let n = CHUNK.min(len - start) as usize;
            from.read_bytes(from_offset + start, &mut buffer[..n]);
            to.write_bytes(to_offset + start, &buffer[..n]);
        }
        Ok(())
    }

    /// memset: `count` elements of `pattern` (1, 2 or 4 bytes: cuMemsetD8/D16/D32) from `addr`.
    pub fn fill(&self, addr: u64, pattern: &[u8], count: u64) -> Result<(), MemError> {
        let len = (pattern.len() as u64).checked_mul(count);
        let len = len.ok_or(MemError::OutOfBounds {
            addr,
            len: u64::MAX,
        })?;
        let (allocation, offset) = self.find(addr, len)?;
        if pattern.is_empty() {
            return Ok(());
        }
        let per_chunk = (1 << 16) / pattern.len() as u64;
        let chunk: Vec<u8> = pattern.repeat(per_chunk.min(count) as usize);
        let mut done = 0;
        while done < len {
            let n = (chunk.len() as u64).min(len - done) as usize;
            allocation.write_bytes(offset + done, &chunk[..n]);
            done += n as u64;
        }
        Ok(())
    }

    /// (free, total) bytes, as `cuMemGetInfo`.
    pub fn info(&self) -> (u64, u64) {
        let table = self
            .table
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        (self.capacity - table.used, self.capacity)
    }

    /// The live allocations, sorted by address: what a launch sees for its whole run.
    pub(crate) fn snapshot(&self) -> Vec<Arc<Allocation>> {
        let table = self
            .table
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        table.live.values().cloned().collect()
    }

    /// The allocation holding all of `[addr, addr + len)`, and `addr`'s offset in it.
    fn find(&self, addr: u64, len: u64) -> Result<(Arc<Allocation>, u64), MemError> {
        let table = self
            .table
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let out_of_bounds = MemError::OutOfBounds { addr, len };
        let (_, allocation) = table
            .live
            .range(..=addr)
            .next_back()
            .ok_or(out_of_bounds.clone())?;
        let offset = addr - allocation.base;
        match offset.checked_add(len) {
            Some(end) if end <= allocation.len => Ok((allocation.clone(), offset)),
            _ => Err(out_of_bounds),
        }
    }

    fn write_table(&self) -> std::sync::RwLockWriteGuard<'_, Table> {
        // No method panics while holding the lock, so poisoning only follows a panic elsewhere
        // in the same thread; the table itself is always consistent.
        self.table
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The end of the first live allocation (by its kernels' reach) that `[base, base + len)`
/// overlaps, if any.
fn overlap(table: &Table, base: u64, len: u64) -> Option<u64> {
    let end = base.saturating_add(len);
    let before = table.live.range(..=base).next_back();
    let after = table.live.range(base..end).next();
    [before, after]
        .into_iter()
        .flatten()
        .map(|(_, a)| (a.base, a.base + a.reach.max(a.len)))
        .find(|&(start, stop)| start < end && base < stop)
        .map(|(_, stop)| stop)
}

/// One allocation's bytes, little-endian in 64-bit atomic words.
pub(crate) struct Allocation {
    pub(crate) base: u64,
    pub(crate) len: u64,
    /// What a kernel may access: `len` rounded up to a 4-byte word. An 8- or 16-bit atomic is a
    /// compare-and-swap of the aligned 32-bit word around the element (PTX has no 8-bit
    /// atomics; CUDA libraries do this), which for the last element may reach up to 3 bytes past
    /// `len`; a GPU's allocations are padded to 256 bytes, so that is never a fault there.
    /// Copies from the host still stop at `len`. With [`Checks::Gpu`], the 256-byte granule.
    reach: u64,
    words: Words,
    /// Host memory mapped at its own address ([`Memory::alloc_host`], [`Memory::register_host`]).
    pub(crate) host: bool,
}

impl Allocation {
    pub(crate) fn zeroed(base: u64, len: u64, checks: Checks) -> Self {
        let words = usize::try_from(len.next_multiple_of(ALIGN) / 8)
            .ok()
            .and_then(|n| Words::zeroed(n, 8))
            .unwrap_or_else(|| panic!("no host memory for a {len}-byte allocation"));
        Allocation::with_words(base, len, checks, words, false)
    }

    /// `len` bytes at `base` in `words` (which hold at least `len` rounded up to 256 bytes).
    fn with_words(base: u64, len: u64, checks: Checks, words: Words, host: bool) -> Self {
        let reach = match checks {
            Checks::Strict => len.next_multiple_of(4),
            Checks::Gpu => len.next_multiple_of(ALIGN),
        };
        Allocation {
            base,
            len,
            reach,
            words,
            host,
        }
    }

    /// Whether `[addr, addr + size)` lies inside this allocation.
    #[inline]
    pub(crate) fn contains(&self, addr: u64, size: u64) -> bool {
        // Not `offset <= reach - size` saturating: that let an 8-byte access into an allocation
        // of under 8 bytes through.
        addr >= self.base
            && (addr - self.base)
                .checked_add(size)
                .is_some_and(|end| end <= self.reach)
    }

    /// Loads `size` (1, 2, 4 or 8) bytes at `offset`, which is `size`-aligned and in bounds.
    #[inline]
    pub(crate) fn load(&self, offset: u64, size: u32) -> u64 {
        let word = self
            .words
            .get((offset / 8) as usize)
            .load(Ordering::Relaxed);
        extract(word, offset, size)
    }

    /// Stores the low `size` (1, 2, 4 or 8) bytes of `value` at `offset` (aligned, in bounds).
    #[inline]
    pub(crate) fn store(&self, offset: u64, size: u32, value: u64) {
        let word = self.words.get((offset / 8) as usize);
        if size == 8 {
            word.store(value, Ordering::Relaxed);
        } else {
            let (shift, mask) = lane(offset, size);
            let _ = word.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |old| {
                Some((old & !mask) | ((value << shift) & mask))
            });
        }
    }

    /// Atomically replaces the `size` bytes at `offset` (aligned, in bounds) with `update(old)`;
    /// returns the old value. Sound and linearisable across host threads (a CAS loop on the word).
    #[inline]
    pub(crate) fn atomic(&self, offset: u64, size: u32, update: impl Fn(u64) -> u64) -> u64 {
        let word = self.words.get((offset / 8) as usize);
        let (shift, mask) = lane(offset, size);
        let previous = word.fetch_update(Ordering::AcqRel, Ordering::Acquire, |old| {
            let new = update((old & mask) >> shift);
            Some((old & !mask) | ((new << shift) & mask))
        });
        // fetch_update's closure always returns Some, so the result is always Ok.
        let old = previous.unwrap_or_else(|old| old);
        (old & mask) >> shift
    }

    /// Host copy in: any offset and length inside the allocation.
    pub(crate) fn write_bytes(&self, offset: u64, data: &[u8]) {
        let mut at = offset;
        for piece in pieces(offset, data.len()) {
            let bytes = &data[(at - offset) as usize..][..piece];
            if piece == 8 {
                self.store(
                    at,
                    8,
                    u64::from_le_bytes(bytes.try_into().unwrap_or_default()),
                );
            } else {
                for (i, &b) in bytes.iter().enumerate() {
                    self.store(at + i as u64, 1, b as u64);
                }
            }
            at += piece as u64;
        }
    }

    /// Host copy out: any offset and length inside the allocation.
    pub(crate) fn read_bytes(&self, offset: u64, out: &mut [u8]) {
        let mut at = offset;
        for piece in pieces(offset, out.len()) {
            let word = self
                .words
                .get((at / 8) as usize)
                .load(Ordering::Relaxed)
                .to_le_bytes();
            let start = (at % 8) as usize;
            out[(at - offset) as usize..][..piece].copy_from_slice(&word[start..start + piece]);
            at += piece as u64;
        }
    }
}

/// The lengths of the word-bounded pieces of `[offset, offset + len)`: a whole word is 8.
fn pieces(offset: u64, len: usize) -> impl Iterator<Item = usize> {
    let mut at = offset;
    let end = offset + len as u64;
    std::iter::from_fn(move || {
        (at < end).then(|| {
            let piece = (8 - at % 8).min(end - at);
            at += piece;
            piece as usize
        })
    })
}

#[inline]
fn lane(offset: u64, size: u32) -> (u32, u64) {
    let shift = (offset % 8) as u32 * 8;
    let mask = if size == 8 {
        u64::MAX
    } else {
        ((1u64 << (size * 8)) - 1) << shift
    };
    (shift, mask)
}

#[inline]
fn extract(word: u64, offset: u64, size: u32) -> u64 {
    let (shift, mask) = lane(offset, size);
    (word & mask) >> shift
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kernel may reach the 32-bit word around its last byte (an 8-bit atomic is a
    /// compare-and-swap of that word), no further; the host's copies stop at the length.
    #[test]
    fn kernels_reach_the_word_around_the_last_byte() {
        let one = Allocation::zeroed(1 << 20, 1, Checks::Strict);
        assert!(one.contains(1 << 20, 4));
        assert!(!one.contains((1 << 20) + 4, 1));
        assert!(!one.contains(1 << 20, 8));
        let memory = Memory::new(4096);
        let a = memory.alloc(5).unwrap();
        assert!(memory.read(a, &mut [0; 6]).is_err());
    }

    #[test]
    fn allocations_are_zeroed_aligned_bounded_and_counted() {
        let memory = Memory::new(4096);
        let a = memory.alloc(10).unwrap();
        let b = memory.alloc(300).unwrap();
        assert_eq!(a % 256, 0);
        assert_eq!(b % 256, 0);
        assert!(b >= a + 512, "a guard gap separates allocations");
        assert_eq!(memory.info(), (4096 - 256 - 512, 4096));
        let mut out = [1u8; 10];
        memory.read(a, &mut out).unwrap();
        assert_eq!(out, [0; 10]);
        assert_eq!(
            memory.write(a + 5, &[0; 6]),
            Err(MemError::OutOfBounds {
                addr: a + 5,
                len: 6
            })
        );
        assert!(
            memory.read(a + 256, &mut [0]).is_err(),
            "the gap is not memory"
        );
        assert_eq!(
            memory.alloc(4096),
            Err(MemError::OutOfMemory {
                requested: 4096,
                free: 3328
            })
        );
        assert!(memory.alloc(u64::MAX).is_err());
        memory.free(a).unwrap();
        assert_eq!(memory.free(a), Err(MemError::NotAllocated { addr: a }));
        assert!(memory.read(a, &mut out).is_err(), "freed memory faults");
        assert_eq!(memory.info().0, 4096 - 512);
    }

    #[test]
    fn unaligned_host_copies_round_trip() {
        let memory = Memory::new(1 << 20);
        let a = memory.alloc(1000).unwrap();
        let data: Vec<u8> = (0..997).map(|i| (i * 7 + 3) as u8).collect();
        memory.write(a + 3, &data).unwrap();
        let mut out = vec![0; 997];
        memory.read(a + 3, &mut out).unwrap();
        assert_eq!(out, data);
        let mut edge = [9u8; 3];
        memory.read(a, &mut edge).unwrap();
        assert_eq!(edge, [0; 3], "bytes before the write are untouched");
    }

    #[test]
    fn overlapping_device_copies_behave_as_memmove() {
        let memory = Memory::new(1 << 24);
        let len = 200_000u64;
        let a = memory.alloc(len + 100).unwrap();
        let data: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
        for shift in [37i64, -37] {
            memory.write(a + 50, &data).unwrap();
            let (dst, src) = (a + (50 + shift) as u64, a + 50);
            memory.copy(dst, src, len).unwrap();
            let mut out = vec![0; len as usize];
            memory.read(dst, &mut out).unwrap();
            assert_eq!(out, data, "shift {shift}");
        }
    }

    #[test]
    fn fill_repeats_the_pattern_within_bounds() {
        let memory = Memory::new(1 << 20);
        let a = memory.alloc(70_001).unwrap();
        memory.fill(a + 1, &[0xab, 0xcd], 35_000).unwrap();
        let mut out = vec![0; 70_001];
        memory.read(a, &mut out).unwrap();
        assert_eq!(out[0], 0);
        assert!(out[1..].chunks(2).all(|c| c == [0xab, 0xcd]));
        assert!(memory.fill(a, &[1, 2, 3, 4], 17_501).is_err());
        assert!(memory.fill(a, &[1, 2], u64::MAX).is_err());
    }

    #[test]
    fn atomics_from_many_threads_lose_no_update() {
        let memory = Memory::new(1 << 20);
        let a = memory.alloc(16).unwrap();
        let allocation = memory.snapshot().pop().unwrap();
        std::thread::scope(|scope| {
            for _ in 0..4 {
                scope.spawn(|| {
                    for _ in 0..10_000 {
                        allocation.atomic(4, 4, |old| old + 1);
                        allocation.atomic(0, 2, |old| old + 3);
                        allocation.atomic(8, 8, |old| old + 5);
                    }
                });
            }
        });
        let mut out = [0u8; 16];
        memory.read(a, &mut out).unwrap();
        assert_eq!(u32::from_le_bytes(out[4..8].try_into().unwrap()), 40_000);
        assert_eq!(
            u16::from_le_bytes(out[0..2].try_into().unwrap()),
            (120_000 % 65_536) as u16
        );
        assert_eq!(u64::from_le_bytes(out[8..16].try_into().unwrap()), 200_000);
    }
}
