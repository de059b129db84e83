//! Contexts: a fault leaves its context sticky, a reset primary context works again, and the
//! objects of a destroyed context are destroyed once.

use cudarc::driver::sys::{self, CUresult};
use cudarc::driver::{result, CudaContext, DriverError};

use crate::common::{address_of, store_seven_at, STORE_PTX};
use crate::support::own_context;

#[test]
fn a_faulting_kernel_leaves_its_context_sticky_and_a_new_context_works() {
    let ctx = own_context();
    let stream = ctx.default_stream();
    let out = stream.alloc_zeros::<u32>(4).unwrap();
    let ptr = address_of(&out, &ctx);
    store_seven_at(&ctx, ptr).unwrap();
    assert_eq!(stream.clone_dtoh(&out).unwrap(), [7, 0, 0, 0]);

    // One past the end of the allocation: hardware's illegal address. As on hardware the launch
    // is queued fine and the fault shows at the next call.
    store_seven_at(&ctx, ptr + 16).unwrap();
    let error = DriverError(CUresult::CUDA_ERROR_ILLEGAL_ADDRESS);
    // (cudarc also keeps the error it saw unloading the helper's module, and returns it.)
    assert_eq!(ctx.synchronize().unwrap_err(), error);
    // Sticky: every later call in the context (still current on this thread) says so.
    assert_eq!(result::ctx::synchronize().unwrap_err(), error);
    assert_eq!(result::ctx::synchronize().unwrap_err(), error);
    // SAFETY: allocates 4 bytes (it does not: the context is faulted).
    assert_eq!(unsafe { result::malloc_sync(4) }.unwrap_err(), error);
    let mut host = [0u32; 4];
    // SAFETY: `host` has the 16 bytes copied into it.
    let code = unsafe { sys::cuMemcpyDtoH_v2(host.as_mut_ptr().cast(), ptr, 16) };
    assert_eq!(code, error.0);
    let mut stream_handle = std::ptr::null_mut();
    // SAFETY: writes one stream handle.
    let code = unsafe { sys::cuStreamCreate(&mut stream_handle, 0) };
    assert_eq!(code, error.0);

    // A new context works, and loads and runs the same kernel.
    let fresh = own_context();
    let out = fresh.default_stream().alloc_zeros::<u32>(1).unwrap();
    store_seven_at(&fresh, address_of(&out, &fresh)).unwrap();
    assert_eq!(fresh.default_stream().clone_dtoh(&out).unwrap(), [7]);
}

#[test]
fn a_reset_primary_context_keeps_its_handle_and_retain_count_and_works_again() {
    // The only test of this binary that uses the primary context.
    crate::support::load_emulator(|| {});
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let lost = stream.alloc_zeros::<u32>(4).unwrap();
    store_seven_at(&ctx, address_of(&lost, &ctx) + 16).unwrap();
    assert_eq!(
        result::ctx::synchronize().unwrap_err(),
        DriverError(CUresult::CUDA_ERROR_ILLEGAL_ADDRESS)
    );
    let mut again = std::ptr::null_mut();
    // SAFETY: writes one context handle.
    unsafe { sys::cuDevicePrimaryCtxRetain(&mut again, 0) }
        .result()
        .unwrap();
    assert_eq!(again, ctx.cu_ctx(), "one primary context per device");

    // SAFETY: nothing else in this process uses device 0's primary context now.
    unsafe { sys::cuDevicePrimaryCtxReset_v2(0) }
        .result()
        .unwrap();
    // Its memory went with it (the handle is forgotten: freeing it would be an error).
    let mut host = [0u32; 4];
    let lost_ptr = address_of(&lost, &ctx);
    std::mem::forget(lost);
    // SAFETY: `host` has the 16 bytes copied into it.
    let code = unsafe { sys::cuMemcpyDtoH_v2(host.as_mut_ptr().cast(), lost_ptr, 16) };
    assert_eq!(code, CUresult::CUDA_ERROR_INVALID_VALUE);
    // The same handle works again: the fault is gone.
    let _ = ctx.check_err();
    result::ctx::synchronize().unwrap();
    let out = stream.alloc_zeros::<u32>(1).unwrap();
    store_seven_at(&ctx, address_of(&out, &ctx)).unwrap();
    assert_eq!(stream.clone_dtoh(&out).unwrap(), [7]);
    // Resetting did not release: the second retain is still there to release.
    // SAFETY: releases the retain above.
    unsafe { sys::cuDevicePrimaryCtxRelease_v2(0) }
        .result()
        .unwrap();
    result::ctx::synchronize().unwrap();
}

/// A module, stream or event that went with its destroyed context: unloading or destroying it
/// succeeds once (Numba's deallocation queue does it after cuDevicePrimaryCtxReset), then it is
/// an invalid handle.
#[test]
fn objects_of_a_destroyed_context_are_destroyed_once_without_error() {
    crate::support::load_emulator(|| {});
    let mut ctx: sys::CUcontext = std::ptr::null_mut();
    let mut stream: sys::CUstream = std::ptr::null_mut();
    let mut event: sys::CUevent = std::ptr::null_mut();
    let mut module: sys::CUmodule = std::ptr::null_mut();
    let ptx = std::ffi::CString::new(STORE_PTX).unwrap();
    // SAFETY: each call writes one handle to its out-pointer; the PTX is NUL-terminated.
    unsafe {
        sys::cuCtxCreate_v2(&mut ctx, 0, 0).result().unwrap();
        sys::cuStreamCreate(&mut stream, 0).result().unwrap();
        sys::cuEventCreate(&mut event, 0).result().unwrap();
        sys::cuModuleLoadData(&mut module, ptx.as_ptr().cast())
            .result()
            .unwrap();
        sys::cuCtxDestroy_v2(ctx).result().unwrap();
    }
    // SAFETY: the handles are stale; the driver recognises them and touches nothing.
    unsafe {
        assert_eq!(sys::cuStreamDestroy_v2(stream), CUresult::CUDA_SUCCESS);
        assert_eq!(sys::cuEventDestroy_v2(event), CUresult::CUDA_SUCCESS);
        assert_eq!(sys::cuModuleUnload(module), CUresult::CUDA_SUCCESS);
        assert_eq!(
            sys::cuStreamDestroy_v2(stream),
            CUresult::CUDA_ERROR_INVALID_HANDLE
        );
        assert_eq!(
            sys::cuEventDestroy_v2(event),
            CUresult::CUDA_ERROR_INVALID_HANDLE
        );
        assert_eq!(
            sys::cuModuleUnload(module),
            CUresult::CUDA_ERROR_INVALID_HANDLE
        );
    }
}
