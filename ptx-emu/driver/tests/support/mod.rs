//! What the driver's test binaries share: opening the emulator's library by its path first. Its
//! soname is `libcuda.so`, so cudarc's `dlopen("libcuda.so")` then finds it, never a real driver.
#![allow(dead_code)]

use cudarc::driver::sys::{self, CUjit_option, CUresult};
use cudarc::driver::CudaContext;
use std::ffi::c_void;
use std::sync::{Arc, Once};

/// Loads the emulator once per process: the one cargo built for this test, next to it in
/// target/<profile>/deps. `before` runs first, once (to set the environment it reads).
pub fn load_emulator(before: impl FnOnce()) {
    static LOADED: Once = Once::new();
    LOADED.call_once(|| {
        before();
        let exe = std::env::current_exe().expect("the test binary's path");
        let path = exe.with_file_name("libferrocuda_emu_cuda.so");
        // SAFETY: the emulator's initialisers are Rust statics' and sound to run.
        let library = unsafe { libloading::Library::new(&path) }.unwrap_or_else(|e| {
            panic!(
                "{}: {e} (cargo build -p ferrocuda-ptx-emu-driver)",
                path.display()
            )
        });
        std::mem::forget(library);
        // SAFETY: only dlopens; the emulator is loaded under the soname cudarc asks for.
        assert!(unsafe { sys::is_culib_present() });
    });
}

/// A context of its own (not the primary one), so a test's fault never reaches another test.
pub fn own_context() -> Arc<CudaContext> {
    load_emulator(|| {});
    CudaContext::new_non_primary(0, 0).expect("a new context")
}

/// Loads `ptx` with cuModuleLoadDataEx and an error log: the code and the log.
pub fn load_with_log(ctx: &CudaContext, ptx: &str) -> (CUresult, String) {
    ctx.bind_to_thread().unwrap();
    let image = std::ffi::CString::new(ptx).unwrap();
    let mut log = vec![0u8; 4096];
    let mut options = [
        CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
        CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
    ];
    let mut values: [*mut c_void; 2] = [
        log.as_mut_ptr().cast(),
        std::ptr::without_provenance_mut(log.len()),
    ];
    let mut module = std::ptr::null_mut();
    // SAFETY: two options with their values; the log buffer is as long as its size says.
    let code = unsafe {
        sys::cuModuleLoadDataEx(
            &mut module,
            image.as_ptr().cast(),
            2,
            options.as_mut_ptr(),
            values.as_mut_ptr(),
        )
    };
    let used = values[1].addr().min(log.len());
    let text = String::from_utf8_lossy(&log[..used])
        .trim_end_matches('\0')
        .to_string();
    (code, text)
}
