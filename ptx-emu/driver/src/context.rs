//! Contexts: the device's primary context (retained and released by count, reset on demand)
//! and created ones, each thread's current-context stack, and what a context holds (limits,
//! flags, its sticky fault).

use crate::device::check_device;
use crate::ffi::{guard, handle, id_of, put};
use crate::state::{self, DRIVER};
use cudarc::driver::sys::{
    CUcontext, CUctxCreateParams, CUdevice, CUexecAffinityParam, CUresult, CUstream,
};
use cudarc::driver::sys::{CUfunc_cache_enum as Cache, CUlimit_enum as Limit};
use ferrocuda_ptx_emu::Memory;
use std::ffi::{c_int, c_uint};
use std::sync::Arc;

#[no_mangle]
pub unsafe extern "C" fn cuDevicePrimaryCtxRetain(pctx: *mut CUcontext, dev: CUdevice) -> CUresult {
    guard("cuDevicePrimaryCtxRetain", || {
        let mut state = DRIVER.state()?;
        let device = check_device(dev)?;
        let id = match state.primary.get(&device).copied() {
            Some((id, count)) => {
                state.primary.insert(device, (id, count + 1));
                id
            }
            None => {
                let flags = state.primary_flags.get(&device).copied().unwrap_or(0);
                let id = state.new_context(device, flags);
                state.primary.insert(device, (id, 1));
                id
            }
        };
        // SAFETY: the caller's pointer is valid for one write (driver API contract).
        unsafe { put(pctx, handle(id)) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuDevicePrimaryCtxRelease_v2(dev: CUdevice) -> CUresult {
    guard("cuDevicePrimaryCtxRelease_v2", || {
        // Work still queued (deferred mode) runs first, as CUDA waits for it.
        let _ = crate::deferred_run::finish(None);
        let mut state = DRIVER.state()?;
        let device = check_device(dev)?;
        match state.primary.get(&device).copied() {
            Some((id, 1)) => state.destroy_context(id, &DRIVER.memories),
            Some((id, count)) => {
                state.primary.insert(device, (id, count - 1));
                Ok(())
            }
            None => Err(CUresult::CUDA_ERROR_INVALID_CONTEXT),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuDevicePrimaryCtxReset_v2(dev: CUdevice) -> CUresult {
    guard("cuDevicePrimaryCtxReset_v2", || {
        // Work still queued (deferred mode) runs first, as CUDA waits for it.
        let _ = crate::deferred_run::finish(None);
        let mut state = DRIVER.state()?;
        let device = check_device(dev)?;
        // As the driver documents it: everything in the primary context is destroyed (memory,
        // modules, streams, events, a sticky fault), but resetting does not release it. Those
        // who retained it keep their count and the same handle, which works again as a fresh
        // context (the driver re-initialises the primary context on its next use).
        match state.primary.get(&device).copied() {
            Some((id, count)) => {
                let flags = state.primary_flags.get(&device).copied().unwrap_or(0);
                state.destroy_context(id, &DRIVER.memories)?;
                state.recreate_context(id, device, flags);
                state.primary.insert(device, (id, count));
                Ok(())
            }
            None => Ok(()),
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuDevicePrimaryCtxGetState(
    dev: CUdevice,
    flags: *mut c_uint,
    active: *mut c_int,
) -> CUresult {
    guard("cuDevicePrimaryCtxGetState", || {
        let state = DRIVER.state()?;
        let device = check_device(dev)?;
        let set = state.primary_flags.get(&device).copied().unwrap_or(0);
        // SAFETY: the caller's pointers are valid for one write each (driver API contract).
        unsafe {
            put(flags, set)?;
            put(active, c_int::from(state.primary.contains_key(&device)))
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuDevicePrimaryCtxSetFlags_v2(dev: CUdevice, flags: c_uint) -> CUresult {
    guard("cuDevicePrimaryCtxSetFlags_v2", || {
        let mut state = DRIVER.state()?;
        let device = check_device(dev)?;
        state.primary_flags.insert(device, flags);
        Ok(())
    })
}

/// A new context on `dev`, pushed onto the calling thread's stack.
///
/// # Safety
/// `pctx` is null or valid for one write.
unsafe fn create(pctx: *mut CUcontext, flags: c_uint, dev: CUdevice) -> Result<(), CUresult> {
    let mut state = DRIVER.state()?;
    let device = check_device(dev)?;
    if pctx.is_null() {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    let id = state.new_context(device, flags);
    state::push_current(id);
    // SAFETY: not null and valid for one write (the caller's contract).
    unsafe { put(pctx, handle(id)) }
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxCreate_v2(
    pctx: *mut CUcontext,
    flags: c_uint,
    dev: CUdevice,
) -> CUresult {
    // SAFETY: the caller's pointer is valid for one write (driver API contract).
    guard("cuCtxCreate_v2", || unsafe { create(pctx, flags, dev) })
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxCreate_v3(
    pctx: *mut CUcontext,
    paramsArray: *mut CUexecAffinityParam,
    numParams: c_int,
    flags: c_uint,
    dev: CUdevice,
) -> CUresult {
    guard("cuCtxCreate_v3", || {
        if !paramsArray.is_null() && numParams > 0 {
            // Execution affinity (SM partitions) is not modelled.
            return Err(CUresult::CUDA_ERROR_NOT_SUPPORTED);
        }
        // SAFETY: the caller's pointer is valid for one write (driver API contract).
        unsafe { create(pctx, flags, dev) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxCreate_v4(
    pctx: *mut CUcontext,
    ctxCreateParams: *mut CUctxCreateParams,
    flags: c_uint,
    dev: CUdevice,
) -> CUresult {
    guard("cuCtxCreate_v4", || {
        if !ctxCreateParams.is_null() {
            // SAFETY: not null, so it points to a CUctxCreateParams (driver API contract).
            let params = unsafe { ctxCreateParams.read() };
            if !params.execAffinityParams.is_null() || !params.cigParams.is_null() {
                // Execution affinity and CUDA-in-graphics contexts are not modelled.
                return Err(CUresult::CUDA_ERROR_NOT_SUPPORTED);
            }
        }
        // SAFETY: the caller's pointer is valid for one write (driver API contract).
        unsafe { create(pctx, flags, dev) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxDestroy_v2(ctx: CUcontext) -> CUresult {
    guard("cuCtxDestroy_v2", || {
        // Work still queued (deferred mode) runs first, as CUDA waits for it.
        let _ = crate::deferred_run::finish(None);
        let mut state = DRIVER.state()?;
        let id = id_of(ctx);
        if state.primary.values().any(|&(primary, _)| primary == id) {
            // The primary context is released, not destroyed.
            return Err(CUresult::CUDA_ERROR_INVALID_CONTEXT);
        }
        state.destroy_context(id, &DRIVER.memories)?;
        if state::current() == Some(id) {
            state::pop_current();
        }
        Ok(())
    })
}

/// Checks that `ctx` is a live context (any, faulted ones included).
fn live(ctx: CUcontext) -> Result<usize, CUresult> {
    let state = DRIVER.state()?;
    let id = id_of(ctx);
    if state.contexts.contains_key(&id) {
        Ok(id)
    } else {
        Err(CUresult::CUDA_ERROR_INVALID_CONTEXT)
    }
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxSetCurrent(ctx: CUcontext) -> CUresult {
    guard("cuCtxSetCurrent", || {
        if ctx.is_null() {
            DRIVER.initialized()?;
            state::set_current(None);
        } else {
            state::set_current(Some(live(ctx)?));
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxGetCurrent(pctx: *mut CUcontext) -> CUresult {
    guard("cuCtxGetCurrent", || {
        DRIVER.initialized()?;
        let current = state::current().map_or(std::ptr::null_mut(), handle);
        // SAFETY: the caller's pointer is valid for one write (driver API contract).
        unsafe { put(pctx, current) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxPushCurrent_v2(ctx: CUcontext) -> CUresult {
    guard("cuCtxPushCurrent_v2", || {
        state::push_current(live(ctx)?);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxPopCurrent_v2(pctx: *mut CUcontext) -> CUresult {
    guard("cuCtxPopCurrent_v2", || {
        DRIVER.initialized()?;
        let popped = state::pop_current().ok_or(CUresult::CUDA_ERROR_INVALID_CONTEXT)?;
        if !pctx.is_null() {
            // SAFETY: not null, so valid for one write (driver API contract).
            unsafe { put(pctx, handle(popped)) }?;
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxSynchronize() -> CUresult {
    // Work finished when it was queued (deferred mode: runs now); a sticky fault is left.
    guard("cuCtxSynchronize", || {
        let (context, _) = DRIVER.state()?.current_usable()?;
        let ran = crate::deferred_run::finish(Some(context));
        DRIVER.state()?.current_usable()?;
        ran
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxGetDevice(device: *mut CUdevice) -> CUresult {
    guard("cuCtxGetDevice", || {
        let mut state = DRIVER.state()?;
        let ordinal = state.current_usable()?.1.device;
        // SAFETY: the caller's pointer is valid for one write (driver API contract).
        unsafe { put(device, ordinal as CUdevice) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxGetFlags(flags: *mut c_uint) -> CUresult {
    guard("cuCtxGetFlags", || {
        let mut state = DRIVER.state()?;
        let (_, context) = state.current_usable()?;
        // SAFETY: the caller's pointer is valid for one write (driver API contract).
        unsafe { put(flags, context.flags) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxSetFlags(flags: c_uint) -> CUresult {
    guard("cuCtxSetFlags", || {
        let mut state = DRIVER.state()?;
        state.current_usable()?.1.flags = flags;
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxGetApiVersion(ctx: CUcontext, version: *mut c_uint) -> CUresult {
    guard("cuCtxGetApiVersion", || {
        if !ctx.is_null() {
            live(ctx)?;
        }
        // SAFETY: the caller's pointer is valid for one write (driver API contract).
        unsafe { put(version, 3020) }
    })
}

/// The limits a context reports (cuCtxGetLimit), at the driver's defaults.
fn default_limit(limit: u32) -> Option<usize> {
    [
        (Limit::CU_LIMIT_STACK_SIZE, 1024),
        (Limit::CU_LIMIT_PRINTF_FIFO_SIZE, 1 << 20),
        (Limit::CU_LIMIT_MALLOC_HEAP_SIZE, 8 << 20),
    ]
    .iter()
    .find(|(l, _)| *l as u32 == limit)
    .map(|&(_, v)| v)
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxGetLimit(pvalue: *mut usize, limit: u32) -> CUresult {
    guard("cuCtxGetLimit", || {
        let mut state = DRIVER.state()?;
        let (_, context) = state.current_usable()?;
        let value = match context.limits.get(&limit) {
            Some(&set) => set,
            None => default_limit(limit).ok_or(CUresult::CUDA_ERROR_NOT_SUPPORTED)?,
        };
        // SAFETY: the caller's pointer is valid for one write (driver API contract).
        unsafe { put(pvalue, value) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxSetLimit(limit: u32, value: usize) -> CUresult {
    guard("cuCtxSetLimit", || {
        let mut state = DRIVER.state()?;
        let (_, context) = state.current_usable()?;
        // Kept and reported back; the interpreter's own stack and heap do not depend on them.
        default_limit(limit).ok_or(CUresult::CUDA_ERROR_NOT_SUPPORTED)?;
        context.limits.insert(limit, value);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxGetStreamPriorityRange(
    least: *mut c_int,
    greatest: *mut c_int,
) -> CUresult {
    guard("cuCtxGetStreamPriorityRange", || {
        DRIVER.state()?.current_usable()?;
        // One priority only (stream priorities are not supported); null pointers are allowed.
        for out in [least, greatest] {
            if !out.is_null() {
                // SAFETY: not null, so valid for one write (driver API contract).
                unsafe { put(out, 0) }?;
            }
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxGetCacheConfig(pconfig: *mut Cache) -> CUresult {
    guard("cuCtxGetCacheConfig", || {
        DRIVER.state()?.current_usable()?;
        // SAFETY: the caller's pointer is valid for one write (driver API contract).
        unsafe { put(pconfig, Cache::CU_FUNC_CACHE_PREFER_NONE) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxSetCacheConfig(_config: u32) -> CUresult {
    // A preference the driver may ignore; the emulator has no L1 to split.
    guard("cuCtxSetCacheConfig", || {
        DRIVER.state()?.current_usable().map(|_| ())
    })
}

/// Checks that the work may run: the current context (`stream` 0 and `None`: the calling
/// thread's) or the stream's, usable: its id, and the memory of its device, the only one its
/// work reaches.
pub(crate) fn check_context(stream: Option<CUstream>) -> Result<(usize, Arc<Memory>), CUresult> {
    let mut state = DRIVER.state()?;
    let id = match stream {
        None => state.current_usable()?.0,
        Some(stream) => state.stream_context(id_of(stream))?,
    };
    Ok((id, DRIVER.memory_of(&state, id).clone()))
}
