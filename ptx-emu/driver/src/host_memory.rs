//! Page-locked, mapped and managed host memory (`cuMemHostAlloc`, `cuMemAllocHost`,
//! `cuMemFreeHost`, `cuMemHostRegister`, `cuMemHostUnregister`, `cuMemHostGetDevicePointer`,
//! `cuMemAllocManaged`). The emulator's device memory is host memory, so each of these is an
//! allocation of the current context's device memory whose device address is its host address
//! (`Memory::alloc_host`, `Memory::register_host`), as under CUDA's unified addressing: the
//! host reads and writes it through the pointer, kernels and copies through the device memory,
//! and both see the same bytes. Each page-locked range is remembered, so a free of anything
//! else is `CUDA_ERROR_INVALID_VALUE`, never a free of foreign memory.

use crate::errors::code;
use crate::ffi::{guard, put};
use crate::state::DRIVER;
use cudarc::driver::sys::{CUdeviceptr, CUresult};
use ferrocuda_ptx_emu::MemError;
use std::collections::BTreeMap;
use std::ffi::{c_uint, c_void};
use std::sync::{LazyLock, Mutex};

/// A page-locked range: its length, its device and whether the host program's own memory was
/// registered (`cuMemHostRegister`) rather than allocated here.
#[derive(Clone, Copy)]
struct Pinned {
    len: usize,
    device: usize,
    registered: bool,
}

/// Live page-locked ranges: host address → range.
static PINNED: LazyLock<Mutex<BTreeMap<usize, Pinned>>> = LazyLock::new(Mutex::default);

fn pinned() -> std::sync::MutexGuard<'static, BTreeMap<usize, Pinned>> {
    PINNED.lock().unwrap_or_else(|e| e.into_inner())
}

/// The page-locked range holding `address`, if any: its start and what it is.
fn pinned_at(address: usize) -> Option<(usize, Pinned)> {
    let table = pinned();
    let (&start, &range) = table.range(..=address).next_back()?;
    (address - start < range.len).then_some((start, range))
}

/// Whether `bytes` bytes at `address` lie in one page-locked range (deferred mode queues
/// copies from and to those only).
pub(crate) fn is_pinned(address: usize, bytes: usize) -> bool {
    pinned_at(address).is_some_and(|(start, range)| {
        address
            .checked_add(bytes)
            .is_some_and(|end| end <= start + range.len)
    })
}

/// `bytes` (> 0) zeroed, page-aligned bytes of the current context's device's memory mapped at
/// their host address: that address, and the device.
fn alloc_mapped(bytes: usize) -> Result<(u64, usize), CUresult> {
    let device = DRIVER.state()?.current_usable()?.1.device;
    if bytes == 0 {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    let addr = DRIVER.memories[device]
        .alloc_host(bytes as u64)
        .map_err(code)?;
    Ok((addr, device))
}

/// Page-locked memory, written to `out`.
///
/// # Safety
/// `out` is null or valid for one pointer write.
unsafe fn alloc_host(out: *mut *mut c_void, bytes: usize) -> Result<(), CUresult> {
    if out.is_null() {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    let (addr, device) = alloc_mapped(bytes)?;
    let range = Pinned {
        len: bytes,
        device,
        registered: false,
    };
    pinned().insert(addr as usize, range);
    // The device memory exposed the address's provenance (Memory::alloc_host).
    let ptr = std::ptr::with_exposed_provenance_mut(addr as usize);
    // SAFETY: not null and valid for one write (the caller's contract).
    unsafe { put(out, ptr) }
}

#[no_mangle]
pub unsafe extern "C" fn cuMemHostAlloc(
    pp: *mut *mut c_void,
    bytesize: usize,
    Flags: c_uint,
) -> CUresult {
    guard("cuMemHostAlloc", || {
        // PORTABLE, DEVICEMAP and WRITECOMBINED: all one kind of memory here, always mapped
        // (as under unified addressing).
        if Flags & !0x07 != 0 {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        // SAFETY: the caller's out-pointer contract.
        unsafe { alloc_host(pp, bytesize) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemAllocHost_v2(pp: *mut *mut c_void, bytesize: usize) -> CUresult {
    // SAFETY: the caller's out-pointer contract.
    guard("cuMemAllocHost_v2", || unsafe { alloc_host(pp, bytesize) })
}

/// Frees (or unregisters) the page-locked range starting at `p` if it is `registered` as
/// asked; else `wrong`.
fn release(p: *mut c_void, registered: bool, wrong: CUresult) -> Result<(), CUresult> {
    DRIVER.initialized()?;
    // Queued copies may use it (deferred mode): they run first, as CUDA's free waits.
    crate::deferred_run::finish(None)?;
    let mut table = pinned();
    let range = *table
        .get(&p.addr())
        .filter(|r| r.registered == registered)
        .ok_or(wrong)?;
    table.remove(&p.addr());
    DRIVER.memories[range.device]
        .free(p.addr() as u64)
        .map_err(code)
}

#[no_mangle]
pub unsafe extern "C" fn cuMemFreeHost(p: *mut c_void) -> CUresult {
    guard("cuMemFreeHost", || {
        release(p, false, CUresult::CUDA_ERROR_INVALID_VALUE)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemHostRegister_v2(
    p: *mut c_void,
    bytesize: usize,
    Flags: c_uint,
) -> CUresult {
    guard("cuMemHostRegister_v2", || {
        let device = DRIVER.state()?.current_usable()?.1.device;
        // PORTABLE, DEVICEMAP and READ_ONLY are one kind of memory here; IOMEMORY (device
        // registers behind the range) has no meaning without a PCIe bus.
        if p.is_null() || bytesize == 0 || Flags & !0x0f != 0 {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        if Flags & 0x04 != 0 {
            return Err(CUresult::CUDA_ERROR_NOT_SUPPORTED);
        }
        let mut table = pinned();
        let end = p.addr().checked_add(bytesize);
        let end = end.ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
        if table
            .range(..end)
            .next_back()
            .is_some_and(|(&start, range)| start + range.len > p.addr())
        {
            return Err(CUresult::CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
        }
        // SAFETY: the caller keeps the range valid until cuMemHostUnregister, and does not
        // touch it while a kernel runs except through the device (cuMemHostRegister's
        // contract); `release` frees it after the work that may use it.
        let registered =
            unsafe { DRIVER.memories[device].register_host(p.cast(), bytesize as u64) };
        registered.map_err(|e| match e {
            MemError::Overlaps { .. } => CUresult::CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
            // The device memory is 64-bit words: a range of part-words cannot be the host's
            // own bytes (docs/emulator.md).
            MemError::NotWords { .. } => CUresult::CUDA_ERROR_NOT_SUPPORTED,
            other => code(other),
        })?;
        let range = Pinned {
            len: bytesize,
            device,
            registered: true,
        };
        table.insert(p.addr(), range);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemHostUnregister(p: *mut c_void) -> CUresult {
    guard("cuMemHostUnregister", || {
        release(p, true, CUresult::CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED)
    })
}

/// The device pointer of page-locked host memory: the host pointer itself (unified
/// addressing), for any address inside a range of the current context's device.
#[no_mangle]
pub unsafe extern "C" fn cuMemHostGetDevicePointer_v2(
    pdptr: *mut CUdeviceptr,
    p: *mut c_void,
    Flags: c_uint,
) -> CUresult {
    guard("cuMemHostGetDevicePointer_v2", || {
        let device = DRIVER.state()?.current_usable()?.1.device;
        let (_, range) = pinned_at(p.addr()).ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
        if Flags != 0 || range.device != device {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        // SAFETY: not null (checked by `put`) and valid for one write (driver API contract).
        unsafe { put(pdptr, p.addr() as CUdeviceptr) }
    })
}

/// Managed memory: host memory mapped at its own address, owned by the current context (freed
/// with `cuMemFree`, or with the context). `CU_MEM_ATTACH_GLOBAL` and `CU_MEM_ATTACH_HOST`
/// are one kind here.
#[no_mangle]
pub unsafe extern "C" fn cuMemAllocManaged(
    dptr: *mut CUdeviceptr,
    bytesize: usize,
    flags: c_uint,
) -> CUresult {
    guard("cuMemAllocManaged", || {
        if dptr.is_null() || !matches!(flags, 1 | 2) {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        let (addr, _) = alloc_mapped(bytesize)?;
        DRIVER.state()?.current_usable()?.1.allocations.insert(addr);
        // SAFETY: not null and valid for one write (driver API contract).
        unsafe { put(dptr, addr) }
    })
}
