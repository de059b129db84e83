//! `cuGetProcAddress`: a driver function's entry point by its base name and the CUDA version the
//! caller was written for, as NVIDIA's cuda-bindings (cuda-python) loads the driver: it opens
//! `libcuda.so.1` and asks for every function this way.
//!
//! A function whose signature changed kept its old symbol and got a suffixed one (`cuMemAlloc`,
//! then `cuMemAlloc_v2` from CUDA 3.2): the caller gets the newest variant its version knows.
//! [`VERSIONED`] lists those variants, with the version each appeared in, as NVIDIA's
//! cuda-bindings 12.9 (`cuda/bindings/_bindings/cydriver.pyx`) asks for them. A variant the
//! emulator does not export is `CUDA_ERROR_NOT_FOUND` (never an older signature in its place).
//! With `CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM` a function that has a per-thread
//! variant (`_ptds`, `_ptsz`: src/ptds.rs) gets it, as on CUDA; the others their plain one.

use crate::ffi::guard;
use cudarc::driver::sys::CUresult;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::LazyLock;

/// `(base name, the CUDA version it appeared in, symbol)` of each suffixed variant, by name and
/// version.
const VERSIONED: &[(&str, c_int, &str)] = &[
    ("cuArray3DCreate", 3020, "cuArray3DCreate_v2"),
    ("cuArray3DGetDescriptor", 3020, "cuArray3DGetDescriptor_v2"),
    ("cuArrayCreate", 3020, "cuArrayCreate_v2"),
    ("cuArrayGetDescriptor", 3020, "cuArrayGetDescriptor_v2"),
    ("cuCtxCreate", 3020, "cuCtxCreate_v2"),
    ("cuCtxCreate", 11040, "cuCtxCreate_v3"),
    ("cuCtxCreate", 12050, "cuCtxCreate_v4"),
    ("cuCtxDestroy", 4000, "cuCtxDestroy_v2"),
    ("cuCtxPopCurrent", 4000, "cuCtxPopCurrent_v2"),
    ("cuCtxPushCurrent", 4000, "cuCtxPushCurrent_v2"),
    ("cuDeviceGetUuid", 11040, "cuDeviceGetUuid_v2"),
    (
        "cuDevicePrimaryCtxRelease",
        11000,
        "cuDevicePrimaryCtxRelease_v2",
    ),
    (
        "cuDevicePrimaryCtxReset",
        11000,
        "cuDevicePrimaryCtxReset_v2",
    ),
    (
        "cuDevicePrimaryCtxSetFlags",
        11000,
        "cuDevicePrimaryCtxSetFlags_v2",
    ),
    ("cuDeviceTotalMem", 3020, "cuDeviceTotalMem_v2"),
    ("cuEventDestroy", 4000, "cuEventDestroy_v2"),
    ("cuEventElapsedTime", 12080, "cuEventElapsedTime_v2"),
    ("cuGLGetDevices", 6050, "cuGLGetDevices_v2"),
    ("cuGetProcAddress", 12000, "cuGetProcAddress_v2"),
    ("cuGraphAddDependencies", 12030, "cuGraphAddDependencies_v2"),
    ("cuGraphAddKernelNode", 12000, "cuGraphAddKernelNode_v2"),
    ("cuGraphAddNode", 12030, "cuGraphAddNode_v2"),
    (
        "cuGraphExecKernelNodeSetParams",
        12000,
        "cuGraphExecKernelNodeSetParams_v2",
    ),
    ("cuGraphExecUpdate", 12000, "cuGraphExecUpdate_v2"),
    ("cuGraphGetEdges", 12030, "cuGraphGetEdges_v2"),
    (
        "cuGraphKernelNodeGetParams",
        12000,
        "cuGraphKernelNodeGetParams_v2",
    ),
    (
        "cuGraphKernelNodeSetParams",
        12000,
        "cuGraphKernelNodeSetParams_v2",
    ),
    (
        "cuGraphNodeGetDependencies",
        12030,
        "cuGraphNodeGetDependencies_v2",
    ),
    (
        "cuGraphNodeGetDependentNodes",
        12030,
        "cuGraphNodeGetDependentNodes_v2",
    ),
    (
        "cuGraphRemoveDependencies",
        12030,
        "cuGraphRemoveDependencies_v2",
    ),
    (
        "cuGraphicsResourceGetMappedPointer",
        3020,
        "cuGraphicsResourceGetMappedPointer_v2",
    ),
    (
        "cuGraphicsResourceSetMapFlags",
        6050,
        "cuGraphicsResourceSetMapFlags_v2",
    ),
    ("cuIpcOpenMemHandle", 11000, "cuIpcOpenMemHandle_v2"),
    ("cuLinkAddData", 6050, "cuLinkAddData_v2"),
    ("cuLinkAddFile", 6050, "cuLinkAddFile_v2"),
    ("cuLinkCreate", 6050, "cuLinkCreate_v2"),
    ("cuMemAdvise", 12020, "cuMemAdvise_v2"),
    ("cuMemAlloc", 3020, "cuMemAlloc_v2"),
    ("cuMemAllocHost", 3020, "cuMemAllocHost_v2"),
    ("cuMemAllocPitch", 3020, "cuMemAllocPitch_v2"),
    ("cuMemFree", 3020, "cuMemFree_v2"),
    ("cuMemGetAddressRange", 3020, "cuMemGetAddressRange_v2"),
    ("cuMemGetInfo", 3020, "cuMemGetInfo_v2"),
    (
        "cuMemHostGetDevicePointer",
        3020,
        "cuMemHostGetDevicePointer_v2",
    ),
    ("cuMemHostRegister", 6050, "cuMemHostRegister_v2"),
    ("cuMemPrefetchAsync", 12020, "cuMemPrefetchAsync_v2"),
    ("cuMemcpy2D", 3020, "cuMemcpy2D_v2"),
    ("cuMemcpy2DAsync", 3020, "cuMemcpy2DAsync_v2"),
    ("cuMemcpy2DUnaligned", 3020, "cuMemcpy2DUnaligned_v2"),
    ("cuMemcpy3D", 3020, "cuMemcpy3D_v2"),
    ("cuMemcpy3DAsync", 3020, "cuMemcpy3DAsync_v2"),
    ("cuMemcpyAtoA", 3020, "cuMemcpyAtoA_v2"),
    ("cuMemcpyAtoD", 3020, "cuMemcpyAtoD_v2"),
    ("cuMemcpyAtoH", 3020, "cuMemcpyAtoH_v2"),
    ("cuMemcpyAtoHAsync", 3020, "cuMemcpyAtoHAsync_v2"),
    ("cuMemcpyDtoA", 3020, "cuMemcpyDtoA_v2"),
    ("cuMemcpyDtoD", 3020, "cuMemcpyDtoD_v2"),
    ("cuMemcpyDtoDAsync", 3020, "cuMemcpyDtoDAsync_v2"),
    ("cuMemcpyDtoH", 3020, "cuMemcpyDtoH_v2"),
    ("cuMemcpyDtoHAsync", 3020, "cuMemcpyDtoHAsync_v2"),
    ("cuMemcpyHtoA", 3020, "cuMemcpyHtoA_v2"),
    ("cuMemcpyHtoAAsync", 3020, "cuMemcpyHtoAAsync_v2"),
    ("cuMemcpyHtoD", 3020, "cuMemcpyHtoD_v2"),
    ("cuMemcpyHtoDAsync", 3020, "cuMemcpyHtoDAsync_v2"),
    ("cuMemsetD16", 3020, "cuMemsetD16_v2"),
    ("cuMemsetD2D16", 3020, "cuMemsetD2D16_v2"),
    ("cuMemsetD2D32", 3020, "cuMemsetD2D32_v2"),
    ("cuMemsetD2D8", 3020, "cuMemsetD2D8_v2"),
    ("cuMemsetD32", 3020, "cuMemsetD32_v2"),
    ("cuMemsetD8", 3020, "cuMemsetD8_v2"),
    ("cuModuleGetGlobal", 3020, "cuModuleGetGlobal_v2"),
    ("cuStreamBatchMemOp", 11070, "cuStreamBatchMemOp_v2"),
    ("cuStreamBeginCapture", 10010, "cuStreamBeginCapture_v2"),
    ("cuStreamDestroy", 4000, "cuStreamDestroy_v2"),
    ("cuStreamGetCaptureInfo", 11030, "cuStreamGetCaptureInfo_v2"),
    ("cuStreamGetCaptureInfo", 12030, "cuStreamGetCaptureInfo_v3"),
    ("cuStreamGetCtx", 12050, "cuStreamGetCtx_v2"),
    (
        "cuStreamUpdateCaptureDependencies",
        12030,
        "cuStreamUpdateCaptureDependencies_v2",
    ),
    ("cuStreamWaitValue32", 11070, "cuStreamWaitValue32_v2"),
    ("cuStreamWaitValue64", 11070, "cuStreamWaitValue64_v2"),
    ("cuStreamWriteValue32", 11070, "cuStreamWriteValue32_v2"),
    ("cuStreamWriteValue64", 11070, "cuStreamWriteValue64_v2"),
    ("cuTexRefGetAddress", 3020, "cuTexRefGetAddress_v2"),
    ("cuTexRefSetAddress", 3020, "cuTexRefSetAddress_v2"),
    ("cuTexRefSetAddress2D", 4010, "cuTexRefSetAddress2D_v3"),
    ("cuVDPAUCtxCreate", 3020, "cuVDPAUCtxCreate_v2"),
];

/// `CUdriverProcAddressQueryResult`.
const SYMBOL_FOUND: c_int = 0;
const SYMBOL_NOT_FOUND: c_int = 1;

/// `CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM`.
const PER_THREAD_DEFAULT_STREAM: u64 = 2;

/// The symbol that `name` at `version` stands for: the newest variant not newer than `version`,
/// or the base name when there is none.
fn symbol(name: &str, version: c_int) -> &str {
    VERSIONED
        .iter()
        .rev()
        .find(|&&(base, since, _)| base == name && since <= version)
        .map_or(name, |&(_, _, symbol)| symbol)
}

/// This library, opened again by its own path (`dladdr` of one of its functions), to look its
/// exports up by name; `None` if the dynamic linker cannot tell.
struct Library(*mut c_void);
// SAFETY: a dlopen handle is a process-wide token; dlsym on it is thread-safe.
unsafe impl Send for Library {}
// SAFETY: as above.
unsafe impl Sync for Library {}

static THIS_LIBRARY: LazyLock<Option<Library>> = LazyLock::new(|| {
    // SAFETY: `info` is a local for dladdr to fill; the address is one of this library's
    // functions. dlopen with RTLD_NOLOAD only returns the already loaded library's handle.
    unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        if libc::dladdr(cuGetProcAddress_v2 as *const c_void, &mut info) == 0
            || info.dli_fname.is_null()
        {
            return None;
        }
        let handle = libc::dlopen(info.dli_fname, libc::RTLD_LAZY | libc::RTLD_NOLOAD);
        (!handle.is_null()).then_some(Library(handle))
    }
});

/// The address of this library's export `symbol`, or null.
fn lookup(symbol: &str) -> *mut c_void {
    let (Some(library), Ok(symbol)) = (THIS_LIBRARY.as_ref(), CString::new(symbol)) else {
        return std::ptr::null_mut();
    };
    // SAFETY: a live handle (never closed) and a NUL-terminated name.
    unsafe { libc::dlsym(library.0, symbol.as_ptr()) }
}

/// The address of `symbol`'s per-thread default stream variant, or null when it has none.
fn per_thread_variant(symbol: &str) -> *mut c_void {
    ["_ptds", "_ptsz"]
        .iter()
        .map(|suffix| lookup(&format!("{symbol}{suffix}")))
        .find(|address| !address.is_null())
        .unwrap_or(std::ptr::null_mut())
}

/// Finds `symbol` at `version` (its per-thread variant first if `flags` asks for the per-thread
/// default stream) and writes its address (null when absent) and status.
///
/// # Safety
/// `symbol` is a NUL-terminated string; `pfn` is valid for a write; `status` is null or valid
/// for a write.
unsafe fn get_proc_address(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    version: c_int,
    flags: u64,
    status: *mut c_int,
) -> CUresult {
    guard("cuGetProcAddress", || {
        if symbol.is_null() || pfn.is_null() {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        // SAFETY: NUL-terminated by the caller's contract.
        let name = unsafe { CStr::from_ptr(symbol) }.to_string_lossy();
        let symbol = self::symbol(&name, version);
        let mut address = std::ptr::null_mut();
        if flags & PER_THREAD_DEFAULT_STREAM != 0 {
            address = per_thread_variant(symbol);
        }
        if address.is_null() {
            address = lookup(symbol);
        }
        let found = !address.is_null();
        // SAFETY: valid for a write (checked not null; the caller's contract).
        unsafe { pfn.write(address) };
        if !status.is_null() {
            // SAFETY: not null, so valid for a write by the caller's contract.
            unsafe {
                status.write(if found {
                    SYMBOL_FOUND
                } else {
                    SYMBOL_NOT_FOUND
                })
            };
        }
        found.then_some(()).ok_or(CUresult::CUDA_ERROR_NOT_FOUND)
    })
}

/// `cuGetProcAddress_v2` (CUDA 12.0): with the symbol's status.
///
/// # Safety
/// See [`get_proc_address`].
#[no_mangle]
pub unsafe extern "C" fn cuGetProcAddress_v2(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    cudaVersion: c_int,
    flags: u64,
    symbolStatus: *mut c_int,
) -> CUresult {
    // SAFETY: the caller's pointers, under the same contract.
    unsafe { get_proc_address(symbol, pfn, cudaVersion, flags, symbolStatus) }
}

/// `cuGetProcAddress` (CUDA 11.3): without it.
///
/// # Safety
/// See [`get_proc_address`].
#[no_mangle]
pub unsafe extern "C" fn cuGetProcAddress(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    cudaVersion: c_int,
    flags: u64,
) -> CUresult {
    // SAFETY: the caller's pointers, under the same contract; no status asked for.
    unsafe { get_proc_address(symbol, pfn, cudaVersion, flags, std::ptr::null_mut()) }
}

/// `cuGetExportTable`: CUDA's private tables of internal entry points, by UUID, for NVIDIA's own
/// libraries. The emulator has none: `CUDA_ERROR_INVALID_VALUE` (what CUDA answers for an unknown
/// UUID) and a null table. NVRTC opens `libcuda.so.1` when it finds one and asks for a table;
/// without this symbol it crashed (test_module_callbacks, with the emulator as libcuda.so.1).
///
/// # Safety
/// `table` is null or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn cuGetExportTable(
    table: *mut *const c_void,
    _id: *const c_void,
) -> CUresult {
    if !table.is_null() {
        // SAFETY: not null, so valid for a write by the caller's contract.
        unsafe { table.write(std::ptr::null()) };
    }
    CUresult::CUDA_ERROR_INVALID_VALUE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_version_gets_the_newest_variant_it_knows() {
        assert_eq!(symbol("cuMemAlloc", 3000), "cuMemAlloc");
        assert_eq!(symbol("cuMemAlloc", 3020), "cuMemAlloc_v2");
        assert_eq!(symbol("cuCtxCreate", 11000), "cuCtxCreate_v2");
        assert_eq!(symbol("cuCtxCreate", 12080), "cuCtxCreate_v4");
        assert_eq!(symbol("cuLaunchKernel", 12080), "cuLaunchKernel");
    }

    #[test]
    fn the_table_is_sorted_by_name_then_version() {
        assert!(VERSIONED
            .windows(2)
            .all(|w| (w[0].0, w[0].1) < (w[1].0, w[1].1)));
    }
}
