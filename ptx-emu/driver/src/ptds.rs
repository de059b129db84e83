//! The per-thread default stream's entry points (`_ptds` for the synchronous calls, `_ptsz` for
//! the ones that take a stream): what a program compiled with `--default-stream per-thread`, or
//! Numba with `NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM=1`, calls in place of the plain names. On
//! CUDA they read the default stream (handle 0) as the calling thread's own stream, not the
//! legacy one that synchronises with every other. The emulator runs every default stream's work
//! in order, the legacy and per-thread ones alike (docs/emulator.md), so each is its plain
//! function under the other name.

use cudarc::driver::sys::{
    CUcontext, CUdeviceptr, CUevent, CUfunction, CUhostFn, CUresult, CUstream,
};
use std::ffi::{c_uchar, c_uint, c_ushort, c_void};

use crate::{launch, memory, peer, stream};

macro_rules! per_thread {
    ($($variant:ident => $module:ident::$base:ident($($arg:ident: $ty:ty),*);)*) => {$(
        #[doc = concat!("`", stringify!($base), "` for the per-thread default stream.")]
        ///
        /// # Safety
        /// The plain function's contract.
        #[no_mangle]
        pub unsafe extern "C" fn $variant($($arg: $ty),*) -> CUresult {
            // SAFETY: the caller's arguments, under the plain function's contract.
            unsafe { $module::$base($($arg),*) }
        }
    )*};
}

per_thread! {
    cuMemcpyHtoD_v2_ptds => memory::cuMemcpyHtoD_v2(dstDevice: CUdeviceptr, srcHost: *const c_void, ByteCount: usize);
    cuMemcpyDtoH_v2_ptds => memory::cuMemcpyDtoH_v2(dstHost: *mut c_void, srcDevice: CUdeviceptr, ByteCount: usize);
    cuMemcpyDtoD_v2_ptds => memory::cuMemcpyDtoD_v2(dstDevice: CUdeviceptr, srcDevice: CUdeviceptr, ByteCount: usize);
    cuMemcpyPeer_ptds => peer::cuMemcpyPeer(dstDevice: CUdeviceptr, dstContext: CUcontext, srcDevice: CUdeviceptr, srcContext: CUcontext, ByteCount: usize);
    cuMemsetD8_v2_ptds => memory::cuMemsetD8_v2(dstDevice: CUdeviceptr, uc: c_uchar, N: usize);
    cuMemsetD16_v2_ptds => memory::cuMemsetD16_v2(dstDevice: CUdeviceptr, us: c_ushort, N: usize);
    cuMemsetD32_v2_ptds => memory::cuMemsetD32_v2(dstDevice: CUdeviceptr, ui: c_uint, N: usize);
    cuMemcpyHtoDAsync_v2_ptsz => memory::cuMemcpyHtoDAsync_v2(dstDevice: CUdeviceptr, srcHost: *const c_void, ByteCount: usize, hStream: CUstream);
    cuMemcpyDtoHAsync_v2_ptsz => memory::cuMemcpyDtoHAsync_v2(dstHost: *mut c_void, srcDevice: CUdeviceptr, ByteCount: usize, hStream: CUstream);
    cuMemcpyDtoDAsync_v2_ptsz => memory::cuMemcpyDtoDAsync_v2(dstDevice: CUdeviceptr, srcDevice: CUdeviceptr, ByteCount: usize, hStream: CUstream);
    cuMemcpyPeerAsync_ptsz => peer::cuMemcpyPeerAsync(dstDevice: CUdeviceptr, dstContext: CUcontext, srcDevice: CUdeviceptr, srcContext: CUcontext, ByteCount: usize, hStream: CUstream);
    cuMemsetD8Async_ptsz => memory::cuMemsetD8Async(dstDevice: CUdeviceptr, uc: c_uchar, N: usize, hStream: CUstream);
    cuMemsetD16Async_ptsz => memory::cuMemsetD16Async(dstDevice: CUdeviceptr, us: c_ushort, N: usize, hStream: CUstream);
    cuMemsetD32Async_ptsz => memory::cuMemsetD32Async(dstDevice: CUdeviceptr, ui: c_uint, N: usize, hStream: CUstream);
    cuStreamWaitEvent_ptsz => stream::cuStreamWaitEvent(hStream: CUstream, hEvent: CUevent, flags: c_uint);
    cuStreamQuery_ptsz => stream::cuStreamQuery(hStream: CUstream);
    cuStreamSynchronize_ptsz => stream::cuStreamSynchronize(hStream: CUstream);
    cuEventRecord_ptsz => stream::cuEventRecord(hEvent: CUevent, hStream: CUstream);
    cuLaunchKernel_ptsz => launch::cuLaunchKernel(f: CUfunction, gridDimX: c_uint, gridDimY: c_uint, gridDimZ: c_uint, blockDimX: c_uint, blockDimY: c_uint, blockDimZ: c_uint, sharedMemBytes: c_uint, hStream: CUstream, kernelParams: *mut *mut c_void, extra: *mut *mut c_void);
    cuLaunchHostFunc_ptsz => stream::cuLaunchHostFunc(hStream: CUstream, fn_: CUhostFn, userData: *mut c_void);
    cuLaunchCooperativeKernel_ptsz => launch::cuLaunchCooperativeKernel(f: CUfunction, gridDimX: c_uint, gridDimY: c_uint, gridDimZ: c_uint, blockDimX: c_uint, blockDimY: c_uint, blockDimZ: c_uint, sharedMemBytes: c_uint, hStream: CUstream, kernelParams: *mut *mut c_void);
}
