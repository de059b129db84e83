//! Host memory mapped into a device's memory at its own address (`Memory::alloc_host`,
//! `Memory::register_host`): the driver's page-locked, mapped, registered and managed memory.

use super::{overlap, Allocation, Checks, MemError, Memory, ALIGN, PAGE};
use crate::words::Words;
use std::sync::Arc;

impl Memory {
    /// A new zeroed, page-aligned allocation of `bytes` bytes of host memory whose device
    /// address is its host address (as mapped and managed memory have under unified
    /// addressing): the host reads and writes it through that pointer, kernels and copies
    /// through this memory, and both see the same bytes. It does not count against the
    /// capacity. Freed by [`Memory::free`]; unlike device addresses, the host's allocator may
    /// hand the address out again.
    pub fn alloc_host(&self, bytes: u64) -> Result<u64, MemError> {
        let len = bytes.max(1);
        let out_of_memory = MemError::OutOfMemory {
            requested: bytes,
            free: 0,
        };
        let words = usize::try_from(len.next_multiple_of(ALIGN) / 8)
            .ok()
            .and_then(|n| Words::zeroed(n, PAGE))
            .ok_or(out_of_memory)?;
        let base = words.address();
        let allocation = Allocation::with_words(base, len, self.checks, words, true);
        self.insert_host(allocation)
    }

    /// Maps the host program's `bytes` bytes at `ptr` into this memory at the same address
    /// (`cuMemHostRegister`): kernels and copies reach them there. They must be whole 8-byte
    /// words at an 8-byte aligned address (the emulator's memory is 64-bit atomic words), and
    /// a kernel reaches exactly them, whatever [`Checks`] says. Undone by [`Memory::free`].
    ///
    /// # Safety
    /// The bytes stay valid, and are not accessed while a kernel runs except through this
    /// memory, until they are freed here and every launch that saw them has ended.
    pub unsafe fn register_host(&self, ptr: *mut u8, bytes: u64) -> Result<u64, MemError> {
        let addr = ptr.addr() as u64;
        let not_words = MemError::NotWords { addr, len: bytes };
        let Some(start) = std::ptr::NonNull::new(ptr) else {
            return Err(not_words);
        };
        if bytes == 0 || !addr.is_multiple_of(8) || !bytes.is_multiple_of(8) {
            return Err(not_words);
        }
        let count = usize::try_from(bytes / 8).map_err(|_| not_words)?;
        // SAFETY: aligned and whole words (checked); valid as long as the caller promises.
        let words = unsafe { Words::borrowed(start, count) };
        let mut allocation = Allocation::with_words(addr, bytes, Checks::Strict, words, true);
        allocation.reach = bytes;
        self.insert_host(allocation)
    }

    fn insert_host(&self, allocation: Allocation) -> Result<u64, MemError> {
        let (base, len) = (allocation.base, allocation.reach);
        // Not where generic addresses mean a block's shared or a thread's local memory.
        use crate::block::{LOCAL_WINDOW, SHARED_WINDOW, WINDOW_BYTES};
        let end = base.saturating_add(len);
        let in_window = |start: u64| base < start + WINDOW_BYTES && start < end;
        let mut table = self.write_table();
        if in_window(SHARED_WINDOW)
            || in_window(LOCAL_WINDOW)
            || overlap(&table, base, len).is_some()
        {
            return Err(MemError::Overlaps { addr: base, len });
        }
        table.live.insert(base, Arc::new(allocation));
        Ok(base)
    }

    /// The host-backed allocation ([`Memory::alloc_host`], [`Memory::register_host`]) `addr`
    /// lies in: its base and length.
    pub fn host_range(&self, addr: u64) -> Option<(u64, u64)> {
        let table = self.table.read().unwrap_or_else(|e| e.into_inner());
        let (_, allocation) = table.live.range(..=addr).next_back()?;
        (allocation.host && addr - allocation.base < allocation.len)
            .then_some((allocation.base, allocation.len))
    }
}
