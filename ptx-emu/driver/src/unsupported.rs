//! Driver functions cudarc can reach that the emulator does not implement: each returns
//! `CUDA_ERROR_NOT_SUPPORTED` (never a silent success), so a program that needs one learns it.
//! Enum and struct arguments are declared as same-sized integers: they are never read.

use cudarc::driver::sys::{
    CUdevice, CUdeviceptr, CUgraph, CUgraphExec, CUmemoryPool, CUresult, CUstream,
};
use std::ffi::{c_int, c_uint, c_ulonglong, c_void};

macro_rules! not_supported {
    ($($name:ident($($arg:ty),*);)*) => {$(
        #[no_mangle]
        pub unsafe extern "C" fn $name($(_: $arg),*) -> CUresult {
            CUresult::CUDA_ERROR_NOT_SUPPORTED
        }
    )*};
}

not_supported! {
    // Stream-ordered and pooled allocation (CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED is 0).
    cuMemAllocAsync(*mut CUdeviceptr, usize, CUstream);
    cuMemFreeAsync(CUdeviceptr, CUstream);
    cuMemAllocFromPoolAsync(*mut CUdeviceptr, usize, CUmemoryPool, CUstream);
    cuDeviceGetMemPool(*mut CUmemoryPool, CUdevice);
    cuDeviceGetDefaultMemPool(*mut CUmemoryPool, CUdevice);
    cuDeviceSetMemPool(CUdevice, CUmemoryPool);
    cuMemPoolCreate(*mut CUmemoryPool, *const c_void);
    // Managed memory's hints and stream attachment (host and managed memory: host_memory.rs;
    // copies between devices: memory.rs).
    cuStreamAttachMemAsync(CUstream, CUdeviceptr, usize, c_uint);
    cuMemPrefetchAsync_v2(CUdeviceptr, usize, u64, c_uint, CUstream);
    cuMemAdvise_v2(CUdeviceptr, usize, c_uint, u64);
    cuMemcpy(CUdeviceptr, CUdeviceptr, usize);
    cuMemcpyAsync(CUdeviceptr, CUdeviceptr, usize, CUstream);
    // Graphs and stream capture.
    cuStreamBeginCapture_v2(CUstream, c_uint);
    cuStreamEndCapture(CUstream, *mut CUgraph);
    cuGraphInstantiateWithFlags(*mut CUgraphExec, CUgraph, c_ulonglong);
    cuGraphLaunch(CUgraphExec, CUstream);
    cuGraphUpload(CUgraphExec, CUstream);
    cuGraphDestroy(CUgraph);
    cuGraphExecDestroy(CUgraphExec);
    // Clusters, external memory.
    cuOccupancyAvailableDynamicSMemPerBlock(*mut usize, *mut c_void, c_int, c_int);
    cuOccupancyMaxActiveClusters(*mut c_int, *mut c_void, *const c_void);
    cuOccupancyMaxPotentialClusterSize(*mut c_int, *mut c_void, *const c_void);
    cuImportExternalMemory(*mut *mut c_void, *const c_void);
}

/// The profiler's start: a success that does nothing, as CUDA's is without a profiler attached.
#[no_mangle]
pub extern "C" fn cuProfilerStart() -> CUresult {
    CUresult::CUDA_SUCCESS
}

/// The profiler's stop: a success that does nothing (see [`cuProfilerStart`]).
#[no_mangle]
pub extern "C" fn cuProfilerStop() -> CUresult {
    CUresult::CUDA_SUCCESS
}
