//! Page-locked host memory (`cuMemHostAlloc`, `cuMemAllocHost`, `cuMemFreeHost`): ordinary host
//! memory here, page-aligned as the driver's is, since the emulator's copies read and write the
//! host directly. Each allocation is remembered with its layout, so a free of anything else is
//! `CUDA_ERROR_INVALID_VALUE`, never a free of foreign memory.

use crate::ffi::{guard, put};
use crate::state::DRIVER;
use cudarc::driver::sys::CUresult;
use std::alloc::Layout;
use std::collections::BTreeMap;
use std::ffi::{c_uint, c_void};
use std::sync::{LazyLock, Mutex};

/// The driver's page size, which its page-locked allocations are aligned to.
const PAGE: usize = 4096;

/// Live allocations: address → layout.
static PINNED: LazyLock<Mutex<BTreeMap<usize, Layout>>> = LazyLock::new(Mutex::default);

fn pinned() -> std::sync::MutexGuard<'static, BTreeMap<usize, Layout>> {
    PINNED.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether `bytes` bytes at `address` lie in one page-locked allocation (deferred mode queues
/// copies from and to those only).
pub(crate) fn is_pinned(address: usize, bytes: usize) -> bool {
    let table = pinned();
    let Some((&start, layout)) = table.range(..=address).next_back() else {
        return false;
    };
    address
        .checked_add(bytes)
        .is_some_and(|end| end <= start + layout.size())
}

/// `bytes` (> 0) page-aligned bytes, written to `out`.
///
/// # Safety
/// `out` is null or valid for one pointer write.
unsafe fn alloc_host(out: *mut *mut c_void, bytes: usize) -> Result<(), CUresult> {
    DRIVER.state()?.current_usable()?;
    if out.is_null() || bytes == 0 {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    let layout =
        Layout::from_size_align(bytes, PAGE).map_err(|_| CUresult::CUDA_ERROR_OUT_OF_MEMORY)?;
    // SAFETY: the layout has a non-zero size.
    let ptr = unsafe { std::alloc::alloc(layout) };
    if ptr.is_null() {
        return Err(CUresult::CUDA_ERROR_OUT_OF_MEMORY);
    }
    pinned().insert(ptr.addr(), layout);
    // SAFETY: not null and valid for one write (the caller's contract).
    unsafe { put(out, ptr.cast()) }
}

#[no_mangle]
pub unsafe extern "C" fn cuMemHostAlloc(
    pp: *mut *mut c_void,
    bytesize: usize,
    Flags: c_uint,
) -> CUresult {
    guard("cuMemHostAlloc", || {
        // PORTABLE, DEVICEMAP and WRITECOMBINED: all one kind of memory here.
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

#[no_mangle]
pub unsafe extern "C" fn cuMemFreeHost(p: *mut c_void) -> CUresult {
    guard("cuMemFreeHost", || {
        DRIVER.initialized()?;
        // Queued copies may use it (deferred mode): they run first, as CUDA's free waits.
        crate::deferred::finish(None)?;
        let layout = pinned()
            .remove(&p.addr())
            .ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
        // SAFETY: `p` was allocated by `alloc_host` with this layout (it was in the table, and
        // is removed from it, so it is freed once).
        unsafe { std::alloc::dealloc(p.cast(), layout) };
        Ok(())
    })
}
