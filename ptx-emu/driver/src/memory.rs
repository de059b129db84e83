//! Device memory: allocation in the current context, copies and memset. Asynchronous forms run
//! at once on the calling thread (in order with everything else, which is all a stream promises).

use crate::ffi::{guard, id_of, put, Outcome};
use crate::state::DRIVER;
use cudarc::driver::sys::CUcontext;
use cudarc::driver::sys::{CUdeviceptr, CUresult, CUstream};
use ferrocuda_ptx_emu::{MemError, Memory};
use std::ffi::{c_uchar, c_uint, c_ushort, c_void};
use std::sync::Arc;

/// The code the driver gives for a failed memory operation.
pub(crate) fn code(error: MemError) -> CUresult {
    match error {
        MemError::OutOfMemory { .. } => CUresult::CUDA_ERROR_OUT_OF_MEMORY,
        MemError::OutOfBounds { .. } | MemError::NotAllocated { .. } => {
            CUresult::CUDA_ERROR_INVALID_VALUE
        }
    }
}

/// Checks that the work may run: the current context (`stream` 0 and `None`: the calling
/// thread's) or the stream's, usable. Returns the memory of its device, the only one its work
/// reaches.
fn check_context(stream: Option<CUstream>) -> Result<Arc<Memory>, CUresult> {
    let mut state = DRIVER.state()?;
    let id = match stream {
        None => state.current_usable()?.0,
        Some(stream) => state.stream_context(id_of(stream))?,
    };
    Ok(DRIVER.memory_of(&state, id).clone())
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
        let mut state = DRIVER.state()?;
        // In a faulted context this returns the sticky error; the memory goes with the context.
        state.current_usable()?;
        // Unified addressing: any live context's allocation may be freed from any context.
        let owner = state
            .contexts
            .values_mut()
            .find(|c| c.allocations.contains(&dptr))
            .ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
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
    let memory = check_context(stream)?;
    if bytes == 0 {
        return Ok(());
    }
    if src.is_null() {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
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
    let memory = check_context(stream)?;
    if bytes == 0 {
        return Ok(());
    }
    if dst.is_null() {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    // SAFETY: not null and valid for `bytes` bytes of writes (the caller's contract); the host
    // does not touch it during the call.
    let out = unsafe { std::slice::from_raw_parts_mut(dst.cast::<u8>(), bytes) };
    memory.read(src, out).map_err(code)
}

fn dtod(dst: CUdeviceptr, src: CUdeviceptr, bytes: usize, stream: Option<CUstream>) -> Outcome {
    let memory = check_context(stream)?;
    if bytes == 0 {
        return Ok(());
    }
    memory.copy(dst, src, bytes as u64).map_err(code)
}

fn memset(dst: CUdeviceptr, pattern: &[u8], count: usize, stream: Option<CUstream>) -> Outcome {
    let memory = check_context(stream)?;
    if count == 0 {
        return Ok(());
    }
    if !dst.is_multiple_of(pattern.len() as u64) {
        // cuMemsetD16/D32 need an address aligned to their element.
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    memory.fill(dst, pattern, count as u64).map_err(code)
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

/// Device to device across devices (or contexts): `bytes` bytes from `src` in `src_ctx`'s device
/// memory to `dst` in `dst_ctx`'s, on `stream` (of any context; `None`: the calling thread's).
/// Runs at once, as every copy here.
fn peer(
    dst: CUdeviceptr,
    dst_ctx: CUcontext,
    src: CUdeviceptr,
    src_ctx: CUcontext,
    bytes: usize,
    stream: Option<CUstream>,
) -> Outcome {
    check_context(stream)?;
    let (to, from) = {
        let mut state = DRIVER.state()?;
        for ctx in [dst_ctx, src_ctx] {
            state.usable(id_of(ctx))?;
        }
        (
            DRIVER.memory_of(&state, id_of(dst_ctx)).clone(),
            DRIVER.memory_of(&state, id_of(src_ctx)).clone(),
        )
    };
    if bytes == 0 {
        return Ok(());
    }
    if Arc::ptr_eq(&to, &from) {
        return to.copy(dst, src, bytes as u64).map_err(code);
    }
    // In pieces, so that a large copy does not hold a second copy of itself on the host.
    const PIECE: usize = 1 << 20;
    let mut buffer = vec![0u8; PIECE.min(bytes)];
    let mut done = 0;
    while done < bytes {
        let n = PIECE.min(bytes - done);
        from.read(src + done as u64, &mut buffer[..n])
            .map_err(code)?;
        to.write(dst + done as u64, &buffer[..n]).map_err(code)?;
        done += n;
    }
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn cuMemcpyPeer(
    dstDevice: CUdeviceptr,
    dstContext: CUcontext,
    srcDevice: CUdeviceptr,
    srcContext: CUcontext,
    ByteCount: usize,
) -> CUresult {
    guard("cuMemcpyPeer", || {
        peer(
            dstDevice, dstContext, srcDevice, srcContext, ByteCount, None,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemcpyPeerAsync(
    dstDevice: CUdeviceptr,
    dstContext: CUcontext,
    srcDevice: CUdeviceptr,
    srcContext: CUcontext,
    ByteCount: usize,
    hStream: CUstream,
) -> CUresult {
    guard("cuMemcpyPeerAsync", || {
        peer(
            dstDevice,
            dstContext,
            srcDevice,
            srcContext,
            ByteCount,
            Some(hStream),
        )
    })
}
