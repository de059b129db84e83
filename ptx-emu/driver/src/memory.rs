//! Device memory: allocation in the current context, copies and memset. Asynchronous forms run
//! at once on the calling thread (in order with everything else, which is all a stream promises).
//!
//! Deferred mode (`deferred.rs`): an asynchronous copy or memset is checked now and queued on its
//! stream, except where CUDA makes it synchronous with the host: a copy from pageable host memory
//! reads the host now (staged) and queues the device write; a copy to pageable host memory runs
//! its stream's work and then itself before returning. Only page-locked host memory
//! (`cuMemHostAlloc`) is read or written when the queued copy runs. Synchronous copies and
//! memsets first run the legacy default stream's work and every blocking stream's, then
//! themselves (CUDA lets the device-side ones return earlier; the emulator does not).
//!
//! Unified addressing: a copy's device addresses may be another device's than its context's
//! (CUDA finds each pointer's device); such a copy, as `cuMemcpyPeer*`, runs at once, after all
//! queued work (of every context: the devices' work before it is done).
//! A memset reaches only its context's device.

use crate::context::check_context;
use crate::deferred::{self, Work, DEFER};
use crate::deferred_run;
use crate::errors::code;
use crate::ffi::{guard, id_of, put, Outcome};
use crate::host_memory::is_pinned;
use crate::state::{current, DRIVER};
use cudarc::driver::sys::CUcontext;
use cudarc::driver::sys::{CUdeviceptr, CUresult, CUstream};
use ferrocuda_ptx_emu::Memory;
use std::ffi::{c_uchar, c_uint, c_ushort, c_void};
use std::sync::Arc;

/// Deferred mode: queues `work` on `stream` of `context` if it is asynchronous (`Some`), or
/// runs what a synchronous call waits for (`None`) and gives `work` back to be done now.
fn defer_or_wait(
    context: usize,
    stream: Option<CUstream>,
    work: Work,
) -> Result<Option<Work>, CUresult> {
    if !*DEFER {
        return Ok(Some(work));
    }
    match stream {
        Some(stream) => {
            DRIVER.state()?.defer(context, id_of(stream), work);
            Ok(None)
        }
        None => {
            deferred_run::finish_legacy(context)?;
            DRIVER.state()?.usable(context)?;
            Ok(Some(work))
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn cuMemAlloc_v2(dptr: *mut CUdeviceptr, bytesize: usize) -> CUresult {
    guard("cuMemAlloc_v2", || {
        let mut state = DRIVER.state()?;
        let (_, context) = state.current_usable()?;
        if dptr.is_null() || bytesize == 0 {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        let memory = &DRIVER.memories[context.device];
        let addr = memory.alloc(bytesize as u64).map_err(code)?;
        context.allocations.insert(addr);
        // SAFETY: not null and valid for one write (driver API contract).
        unsafe { put(dptr, addr) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemFree_v2(dptr: CUdeviceptr) -> CUresult {
    guard("cuMemFree_v2", || {
        // As CUDA's: after the work that may still use it (deferred mode).
        deferred_run::finish(None)?;
        let mut state = DRIVER.state()?;
        // Unified addressing: the context is found from the pointer, so any live context's
        // allocation may be freed from any context, or with none current (as CUDA does).
        let Some(owner) = state
            .contexts
            .values_mut()
            .find(|c| c.allocations.contains(&dptr))
        else {
            return Err(match current() {
                None => CUresult::CUDA_ERROR_INVALID_CONTEXT,
                Some(_) => CUresult::CUDA_ERROR_INVALID_VALUE,
            });
        };
        // In a faulted context this returns the sticky error; the memory goes with the context.
        if let Some(fault) = owner.fault {
            return Err(fault);
        }
        owner.allocations.remove(&dptr);
        DRIVER.memories[owner.device].free(dptr).map_err(code)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemGetInfo_v2(free: *mut usize, total: *mut usize) -> CUresult {
    guard("cuMemGetInfo_v2", || {
        let device = DRIVER.state()?.current_usable()?.1.device;
        let (free_bytes, total_bytes) = DRIVER.memories[device].info();
        // SAFETY: the caller's pointers are valid for one write each (driver API contract).
        unsafe { put(free, free_bytes as usize).and_then(|()| put(total, total_bytes as usize)) }
    })
}

/// Host to device.
///
/// # Safety
/// `src` is valid for reads of `bytes` bytes.
unsafe fn htod(
    dst: CUdeviceptr,
    src: *const c_void,
    bytes: usize,
    stream: Option<CUstream>,
) -> Outcome {
    let Some((context, memory, own)) = copy_start(dst, src.is_null(), bytes, stream)? else {
        return Ok(());
    };
    if own && *DEFER && stream.is_some() {
        let work = if is_pinned(src.addr(), bytes) {
            Work::HtoD {
                dst,
                src: src.addr(),
                bytes,
            }
        } else {
            // SAFETY: not null and valid for `bytes` bytes of reads (the caller's contract).
            let data = unsafe { std::slice::from_raw_parts(src.cast::<u8>(), bytes) };
            Work::Write {
                dst,
                data: data.to_vec(),
            }
        };
        defer_or_wait(context, stream, work)?;
        return Ok(());
    } else if own {
        defer_or_wait(context, None, Work::Wait(Vec::new()))?;
    }
    // SAFETY: not null and valid for `bytes` bytes of reads (the caller's contract).
    let data = unsafe { std::slice::from_raw_parts(src.cast::<u8>(), bytes) };
    memory.write(dst, data).map_err(code)
}

/// Device to host.
///
/// # Safety
/// `dst` is valid for writes of `bytes` bytes.
unsafe fn dtoh(
    dst: *mut c_void,
    src: CUdeviceptr,
    bytes: usize,
    stream: Option<CUstream>,
) -> Outcome {
    let Some((context, memory, own)) = copy_start(src, dst.is_null(), bytes, stream)? else {
        return Ok(());
    };
    if let Some(s) = stream.filter(|_| own && *DEFER) {
        if is_pinned(dst.addr(), bytes) {
            let work = Work::DtoH {
                dst: dst.addr(),
                src,
                bytes,
            };
            defer_or_wait(context, stream, work)?;
            return Ok(());
        }
        // To pageable memory: CUDA returns once the copy is done, after its stream's work.
        let key = deferred::key(context, id_of(s));
        let targets = DRIVER.state()?.deferred.stream(key);
        deferred_run::run_until(targets)?;
        DRIVER.state()?.usable(context)?;
    } else if own {
        defer_or_wait(context, None, Work::Wait(Vec::new()))?;
    }
    // SAFETY: not null and valid for `bytes` bytes of writes (the caller's contract); the host
    // does not touch it during the call.
    let out = unsafe { std::slice::from_raw_parts_mut(dst.cast::<u8>(), bytes) };
    memory.read(src, out).map_err(code)
}

/// What [`htod`] and [`dtoh`] both do first: the stream's context and the memory (of any
/// device, [`holder`]) that holds `[addr, addr + bytes)`, with whether it is the context's own;
/// `None` when there is nothing to copy, an error for a null host pointer. A copy from or to
/// another device's memory (unified addressing) runs at once, after all queued work (whose
/// errors are their own calls'; a fault is sticky on its context): that work is finished here.
fn copy_start(
    addr: CUdeviceptr,
    host_is_null: bool,
    bytes: usize,
    stream: Option<CUstream>,
) -> Result<Option<(usize, Arc<Memory>, bool)>, CUresult> {
    let (context, own) = check_context(stream)?;
    if bytes == 0 {
        return Ok(None);
    }
    if host_is_null {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    let memory = holder(&own, addr, bytes as u64)?;
    let is_own = Arc::ptr_eq(&memory, &own);
    if !is_own {
        let _ = deferred_run::finish(None);
    }
    Ok(Some((context, memory, is_own)))
}

/// The device memory (of any device) that holds all of `[addr, addr + len)`, or the error of
/// `own`, the context's device memory, which was looked at first. Unified addressing: CUDA's
/// copies find each pointer's device, so a copy in one device's context may read or write
/// another's memory (no peer access is needed for copies).
fn holder(own: &Arc<Memory>, addr: u64, len: u64) -> Result<Arc<Memory>, CUresult> {
    let Err(error) = own.check(addr, len) else {
        return Ok(own.clone());
    };
    DRIVER
        .memories
        .iter()
        .find(|memory| memory.check(addr, len).is_ok())
        .cloned()
        .ok_or(code(error))
}

/// Device to device. Unified addressing: either address may be another device's ([`holder`]);
/// such a copy runs at once, as `cuMemcpyPeer`'s do.
fn dtod(dst: CUdeviceptr, src: CUdeviceptr, bytes: usize, stream: Option<CUstream>) -> Outcome {
    let (context, memory) = check_context(stream)?;
    if bytes == 0 {
        return Ok(());
    }
    let (to, from) = (
        holder(&memory, dst, bytes as u64)?,
        holder(&memory, src, bytes as u64)?,
    );
    if !Arc::ptr_eq(&to, &memory) || !Arc::ptr_eq(&from, &memory) {
        // After all queued work (deferred mode), that of the other device's contexts too.
        let _ = deferred_run::finish(None);
        return crate::peer::copy_between(&to, dst, &from, src, bytes);
    }
    if *DEFER {
        memory.check(src, bytes as u64).map_err(code)?;
        memory.check(dst, bytes as u64).map_err(code)?;
    }
    let bytes = bytes as u64;
    match defer_or_wait(context, stream, Work::DtoD { dst, src, bytes })? {
        Some(_) => memory.copy(dst, src, bytes).map_err(code),
        None => Ok(()),
    }
}

fn memset(dst: CUdeviceptr, pattern: &[u8], count: usize, stream: Option<CUstream>) -> Outcome {
    let (context, memory) = check_context(stream)?;
    if count == 0 {
        return Ok(());
    }
    if !dst.is_multiple_of(pattern.len() as u64) {
        // cuMemsetD16/D32 need an address aligned to their element.
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    let count = count as u64;
    if *DEFER {
        let bytes = count
            .checked_mul(pattern.len() as u64)
            .ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
        memory.check(dst, bytes).map_err(code)?;
    }
    let work = Work::Memset {
        dst,
        pattern: pattern.to_vec(),
        count,
    };
    match defer_or_wait(context, stream, work)? {
        Some(_) => memory.fill(dst, pattern, count).map_err(code),
        None => Ok(()),
    }
}

#[no_mangle]
pub unsafe extern "C" fn cuMemcpyHtoD_v2(
    dstDevice: CUdeviceptr,
    srcHost: *const c_void,
    ByteCount: usize,
) -> CUresult {
    // SAFETY: the caller's host pointer is valid for ByteCount bytes (driver API contract).
    guard("cuMemcpyHtoD_v2", || unsafe {
        htod(dstDevice, srcHost, ByteCount, None)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemcpyHtoDAsync_v2(
    dstDevice: CUdeviceptr,
    srcHost: *const c_void,
    ByteCount: usize,
    hStream: CUstream,
) -> CUresult {
    // SAFETY: the caller's host pointer is valid for ByteCount bytes (driver API contract); the
    // copy is done before this returns.
    guard("cuMemcpyHtoDAsync_v2", || unsafe {
        htod(dstDevice, srcHost, ByteCount, Some(hStream))
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemcpyDtoH_v2(
    dstHost: *mut c_void,
    srcDevice: CUdeviceptr,
    ByteCount: usize,
) -> CUresult {
    // SAFETY: the caller's host pointer is valid for ByteCount bytes (driver API contract).
    guard("cuMemcpyDtoH_v2", || unsafe {
        dtoh(dstHost, srcDevice, ByteCount, None)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemcpyDtoHAsync_v2(
    dstHost: *mut c_void,
    srcDevice: CUdeviceptr,
    ByteCount: usize,
    hStream: CUstream,
) -> CUresult {
    // SAFETY: the caller's host pointer is valid for ByteCount bytes (driver API contract); the
    // copy is done before this returns.
    guard("cuMemcpyDtoHAsync_v2", || unsafe {
        dtoh(dstHost, srcDevice, ByteCount, Some(hStream))
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemcpyDtoD_v2(
    dstDevice: CUdeviceptr,
    srcDevice: CUdeviceptr,
    ByteCount: usize,
) -> CUresult {
    guard("cuMemcpyDtoD_v2", || {
        dtod(dstDevice, srcDevice, ByteCount, None)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemcpyDtoDAsync_v2(
    dstDevice: CUdeviceptr,
    srcDevice: CUdeviceptr,
    ByteCount: usize,
    hStream: CUstream,
) -> CUresult {
    guard("cuMemcpyDtoDAsync_v2", || {
        dtod(dstDevice, srcDevice, ByteCount, Some(hStream))
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemsetD8_v2(dstDevice: CUdeviceptr, uc: c_uchar, N: usize) -> CUresult {
    guard("cuMemsetD8_v2", || memset(dstDevice, &[uc], N, None))
}

#[no_mangle]
pub unsafe extern "C" fn cuMemsetD16_v2(
    dstDevice: CUdeviceptr,
    us: c_ushort,
    N: usize,
) -> CUresult {
    guard("cuMemsetD16_v2", || {
        memset(dstDevice, &us.to_le_bytes(), N, None)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemsetD32_v2(dstDevice: CUdeviceptr, ui: c_uint, N: usize) -> CUresult {
    guard("cuMemsetD32_v2", || {
        memset(dstDevice, &ui.to_le_bytes(), N, None)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemsetD8Async(
    dstDevice: CUdeviceptr,
    uc: c_uchar,
    N: usize,
    hStream: CUstream,
) -> CUresult {
    guard("cuMemsetD8Async", || {
        memset(dstDevice, &[uc], N, Some(hStream))
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemsetD16Async(
    dstDevice: CUdeviceptr,
    us: c_ushort,
    N: usize,
    hStream: CUstream,
) -> CUresult {
    guard("cuMemsetD16Async", || {
        memset(dstDevice, &us.to_le_bytes(), N, Some(hStream))
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemsetD32Async(
    dstDevice: CUdeviceptr,
    ui: c_uint,
    N: usize,
    hStream: CUstream,
) -> CUresult {
    guard("cuMemsetD32Async", || {
        memset(dstDevice, &ui.to_le_bytes(), N, Some(hStream))
    })
}

/// The allocation `dptr` lies in, on any device: its owning context's id, its device, base and
/// length. A pointer inside an allocation counts (Numba asks about views' pointers); so does
/// page-locked host memory (mapped at its own address) of the current context's device.
fn allocation_of(dptr: CUdeviceptr) -> Result<(usize, usize, u64, u64), CUresult> {
    let state = DRIVER.state()?;
    for (device, memory) in DRIVER.memories.iter().enumerate() {
        if let Some((base, len)) = memory.range(dptr) {
            // Page-locked host memory belongs to no context: the current one answers for it.
            let page_locked = || {
                current().filter(|id| {
                    memory.host_range(dptr).is_some()
                        && state.contexts.get(id).is_some_and(|c| c.device == device)
                })
            };
            let context = state
                .contexts
                .iter()
                .find(|(_, c)| c.device == device && c.allocations.contains(&base))
                .map(|(&id, _)| id)
                .or_else(page_locked)
                .ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
            return Ok((context, device, base, len));
        }
    }
    Err(CUresult::CUDA_ERROR_INVALID_VALUE)
}

#[no_mangle]
pub unsafe extern "C" fn cuMemGetAddressRange_v2(
    pbase: *mut CUdeviceptr,
    psize: *mut usize,
    dptr: CUdeviceptr,
) -> CUresult {
    guard("cuMemGetAddressRange_v2", || {
        let (_, _, base, len) = allocation_of(dptr)?;
        // SAFETY: each pointer is null (not wanted) or valid for one write (driver API contract).
        unsafe {
            if !pbase.is_null() {
                put(pbase, base)?;
            }
            if !psize.is_null() {
                put(psize, len as usize)?;
            }
        }
        Ok(())
    })
}

/// Device, managed and page-locked host allocations (`allocation_of`): the context, memory type
/// (host for page-locked memory, else device), device pointer (the pointer itself), whether it
/// is managed, the device ordinal, the allocation's start and size, whether it is mapped
/// (always). Other attributes are CUDA_ERROR_NOT_SUPPORTED; a pointer in no allocation is
/// CUDA_ERROR_INVALID_VALUE.
/// Host memory mapped at its own address (`cuMemHostAlloc`, `cuMemHostRegister`,
/// `cuMemAllocManaged`), and whether it is managed (a context owns it).
fn host_backed(device: usize, base: u64) -> Result<(bool, bool), CUresult> {
    let host = DRIVER.memories[device].host_range(base).is_some();
    let owned = DRIVER
        .state()?
        .contexts
        .values()
        .any(|c| c.device == device && c.allocations.contains(&base));
    Ok((host, host && owned))
}

#[no_mangle]
pub unsafe extern "C" fn cuPointerGetAttribute(
    data: *mut c_void,
    attribute: c_uint,
    ptr: CUdeviceptr,
) -> CUresult {
    guard("cuPointerGetAttribute", || {
        if data.is_null() {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        let (context, device, base, len) = allocation_of(ptr)?;
        let (host, managed) = host_backed(device, base)?;
        // SAFETY: `data` points to the attribute's type (driver API contract), one write.
        unsafe {
            match attribute {
                1 => put(data.cast::<CUcontext>(), crate::ffi::handle(context)),
                // CU_MEMORYTYPE_HOST for page-locked memory, else CU_MEMORYTYPE_DEVICE.
                2 => put(data.cast::<c_uint>(), if host && !managed { 1 } else { 2 }),
                3 => put(data.cast::<CUdeviceptr>(), ptr),
                8 => put(data.cast::<c_uint>(), managed as c_uint),
                9 => put(data.cast::<i32>(), device as i32),
                11 => put(data.cast::<CUdeviceptr>(), base),
                12 => put(data.cast::<usize>(), len as usize),
                13 => put(data.cast::<c_uint>(), 1),
                _ => Err(CUresult::CUDA_ERROR_NOT_SUPPORTED),
            }
        }
    })
}
