//! The per-thread default stream's entry points (`_ptds`, `_ptsz`), found by name as Numba finds
//! them (`NUMBA_CUDA_PER_THREAD_DEFAULT_STREAM=1`): a copy to the device and back through them,
//! with a memset and a synchronisation of the default stream between, gives the bytes written.

use cudarc::driver::sys::{self, CUdeviceptr, CUresult, CUstream};
use std::ffi::c_void;

mod support;

/// The emulator's export `name`, as a function of type `F`.
fn export<F: Copy>(name: &str) -> F {
    let exe = std::env::current_exe().unwrap();
    // SAFETY: the library is already loaded (load_emulator); this takes another reference.
    let library =
        unsafe { libloading::Library::new(exe.with_file_name("libferrocuda_emu_cuda.so")) }
            .unwrap();
    // SAFETY: each caller names `F` as the driver API declares the function.
    let f = unsafe { *library.get::<F>(name.as_bytes()).unwrap() };
    std::mem::forget(library);
    f
}

#[test]
fn copies_memsets_and_synchronisation_work_through_the_per_thread_names() {
    let context = support::own_context();
    context.bind_to_thread().unwrap();
    type HtoD = unsafe extern "C" fn(CUdeviceptr, *const c_void, usize) -> CUresult;
    type DtoH = unsafe extern "C" fn(*mut c_void, CUdeviceptr, usize) -> CUresult;
    type MemsetAsync = unsafe extern "C" fn(CUdeviceptr, u8, usize, CUstream) -> CUresult;
    type Synchronize = unsafe extern "C" fn(CUstream) -> CUresult;
    let to_device: HtoD = export("cuMemcpyHtoD_v2_ptds");
    let to_host: DtoH = export("cuMemcpyDtoH_v2_ptds");
    let memset: MemsetAsync = export("cuMemsetD8Async_ptsz");
    let synchronize: Synchronize = export("cuStreamSynchronize_ptsz");

    let mut device: CUdeviceptr = 0;
    let data: Vec<u8> = (0..64).collect();
    let mut back = vec![0u8; 64];
    let null = std::ptr::null_mut();
    // SAFETY: a context is current; every pointer is a live local buffer of the stated length,
    // and the default stream (null) is the per-thread one under these names.
    unsafe {
        assert_eq!(sys::cuMemAlloc_v2(&mut device, 64), CUresult::CUDA_SUCCESS);
        assert_eq!(
            to_device(device, data.as_ptr().cast(), 64),
            CUresult::CUDA_SUCCESS
        );
        assert_eq!(memset(device + 8, 0xab, 4, null), CUresult::CUDA_SUCCESS);
        assert_eq!(synchronize(null), CUresult::CUDA_SUCCESS);
        assert_eq!(
            to_host(back.as_mut_ptr().cast(), device, 64),
            CUresult::CUDA_SUCCESS
        );
        assert_eq!(sys::cuMemFree_v2(device), CUresult::CUDA_SUCCESS);
    }
    let mut want = data;
    want[8..12].fill(0xab);
    assert_eq!(back, want);
}
