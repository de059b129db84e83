//! `cuGetProcAddress_v2`, as NVIDIA's cuda-bindings loads the driver: each base name at a CUDA
//! version gives the library's export of the variant that version knows, the very address the
//! dynamic linker gives for that symbol; a variant the emulator lacks, or an unknown name, is
//! `CUDA_ERROR_NOT_FOUND` with a null pointer.

use cudarc::driver::sys::{self, CUdriverProcAddressQueryResult as Status, CUresult};
use std::ffi::{c_void, CString};

mod support;

/// What `cuGetProcAddress_v2` answers for `name` at `version`.
fn proc_address(name: &str, version: i32, flags: u64) -> (CUresult, *mut c_void, Status) {
    support::load_emulator(|| {});
    let name = CString::new(name).unwrap();
    // Not null, so that the call is seen to write it.
    let mut pfn = std::ptr::dangling_mut::<c_void>();
    let mut status = Status::CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
    // SAFETY: a NUL-terminated name and two locals valid for one write each.
    let result =
        unsafe { sys::cuGetProcAddress_v2(name.as_ptr(), &mut pfn, version, flags, &mut status) };
    (result, pfn, status)
}

/// The address the dynamic linker gives for the emulator's export `symbol`.
fn export(symbol: &str) -> *mut c_void {
    let exe = std::env::current_exe().unwrap();
    // SAFETY: the library is already loaded (load_emulator); this takes another reference.
    let library =
        unsafe { libloading::Library::new(exe.with_file_name("libferrocuda_emu_cuda.so")) }
            .unwrap();
    // SAFETY: only the symbol's address is read, never called through this type.
    let address = unsafe { library.get::<*mut c_void>(symbol.as_bytes()) }.unwrap();
    let address = *address;
    std::mem::forget(library);
    address
}

#[test]
fn each_version_gets_the_variant_it_knows_and_the_linker_agrees() {
    for (name, version, symbol) in [
        ("cuMemAlloc", 12000, "cuMemAlloc_v2"),
        ("cuModuleGetGlobal", 3020, "cuModuleGetGlobal_v2"),
        ("cuCtxCreate", 11000, "cuCtxCreate_v2"),
        ("cuCtxCreate", 12080, "cuCtxCreate_v4"),
        ("cuLaunchKernel", 12000, "cuLaunchKernel"),
        ("cuMemcpyHtoD", 12000, "cuMemcpyHtoD_v2"),
    ] {
        let (result, pfn, status) = proc_address(name, version, 0);
        assert_eq!(result, CUresult::CUDA_SUCCESS, "{name} at {version}");
        assert_eq!(status, Status::CU_GET_PROC_ADDRESS_SUCCESS, "{name}");
        assert_eq!(pfn, export(symbol), "{name} at {version} is {symbol}");
    }
}

#[test]
fn the_per_thread_default_stream_flag_gets_the_per_thread_variants() {
    for (name, symbol) in [
        ("cuLaunchKernel", "cuLaunchKernel_ptsz"),
        ("cuMemcpyHtoD", "cuMemcpyHtoD_v2_ptds"),
        // No per-thread variant: the plain function.
        ("cuMemAlloc", "cuMemAlloc_v2"),
    ] {
        let (result, pfn, _) = proc_address(name, 12000, 2);
        assert_eq!(result, CUresult::CUDA_SUCCESS, "{name}");
        assert_eq!(pfn, export(symbol), "{name} per thread is {symbol}");
    }
}

#[test]
fn a_variant_the_emulator_lacks_or_an_unknown_name_is_not_found() {
    // cuStreamGetCtx at CUDA 12.8 is cuStreamGetCtx_v2, which the emulator does not export.
    for (name, version) in [("cuStreamGetCtx", 12080), ("cuNoSuchFunction", 12000)] {
        let (result, pfn, status) = proc_address(name, version, 0);
        assert_eq!(result, CUresult::CUDA_ERROR_NOT_FOUND, "{name}");
        assert!(pfn.is_null(), "{name}");
        assert_eq!(
            status,
            Status::CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND,
            "{name}"
        );
    }
}

/// NVRTC asks a `libcuda.so.1` it finds for CUDA's private export tables: the emulator has none,
/// and says so without crashing (it was a missing symbol, fatal to the process).
#[test]
fn an_export_table_is_refused_with_a_null_table() {
    support::load_emulator(|| {});
    let mut table = std::ptr::dangling::<c_void>();
    let id = sys::CUuuid { bytes: [7; 16] };
    // SAFETY: a local valid for one write and a UUID that lives across the call.
    let result = unsafe { sys::cuGetExportTable(&mut table, &id) };
    assert_eq!(result, CUresult::CUDA_ERROR_INVALID_VALUE);
    assert!(table.is_null());
}
