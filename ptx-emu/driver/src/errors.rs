//! `cuGetErrorName` and `cuGetErrorString`: the names and the driver's own descriptions of every
//! code the emulator returns.

use crate::ffi::{guard, put};
use cudarc::driver::sys::CUresult;
use ferrocuda_ptx_emu::MemError;
use std::ffi::{c_char, CString};
use std::sync::LazyLock;

/// Each code with the description NVIDIA's driver gives it.
const DESCRIPTIONS: &[(CUresult, &str)] = &[
    (CUresult::CUDA_SUCCESS, "no error"),
    (CUresult::CUDA_ERROR_INVALID_VALUE, "invalid argument"),
    (CUresult::CUDA_ERROR_OUT_OF_MEMORY, "out of memory"),
    (CUresult::CUDA_ERROR_NOT_INITIALIZED, "initialization error"),
    (CUresult::CUDA_ERROR_DEINITIALIZED, "driver shutting down"),
    (
        CUresult::CUDA_ERROR_NO_DEVICE,
        "no CUDA-capable device is detected",
    ),
    (
        CUresult::CUDA_ERROR_INVALID_DEVICE,
        "invalid device ordinal",
    ),
    (
        CUresult::CUDA_ERROR_INVALID_IMAGE,
        "device kernel image is invalid",
    ),
    (
        CUresult::CUDA_ERROR_INVALID_CONTEXT,
        "invalid device context",
    ),
    (
        CUresult::CUDA_ERROR_NO_BINARY_FOR_GPU,
        "no kernel image is available for execution on the device",
    ),
    (
        CUresult::CUDA_ERROR_INVALID_PTX,
        "a PTX JIT compilation failed",
    ),
    (
        CUresult::CUDA_ERROR_UNSUPPORTED_PTX_VERSION,
        "the provided PTX was compiled with an unsupported toolchain.",
    ),
    (
        CUresult::CUDA_ERROR_INVALID_HANDLE,
        "invalid resource handle",
    ),
    (CUresult::CUDA_ERROR_NOT_FOUND, "named symbol not found"),
    (CUresult::CUDA_ERROR_NOT_READY, "device not ready"),
    (
        CUresult::CUDA_ERROR_ILLEGAL_ADDRESS,
        "an illegal memory access was encountered",
    ),
    (
        CUresult::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
        "too many resources requested for launch",
    ),
    (
        CUresult::CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE,
        "primary context active",
    ),
    (
        CUresult::CUDA_ERROR_CONTEXT_IS_DESTROYED,
        "context is destroyed",
    ),
    (CUresult::CUDA_ERROR_ASSERT, "device-side assert triggered"),
    (
        CUresult::CUDA_ERROR_ILLEGAL_INSTRUCTION,
        "an illegal instruction was encountered",
    ),
    (
        CUresult::CUDA_ERROR_MISALIGNED_ADDRESS,
        "misaligned address",
    ),
    (
        CUresult::CUDA_ERROR_LAUNCH_FAILED,
        "unspecified launch failure",
    ),
    (
        CUresult::CUDA_ERROR_LAUNCH_TIMEOUT,
        "the launch timed out and was terminated",
    ),
    (
        CUresult::CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,
        "too many blocks in cooperative launch",
    ),
    (
        CUresult::CUDA_ERROR_NOT_SUPPORTED,
        "operation not supported (by the ferrocuda PTX emulator)",
    ),
    (CUresult::CUDA_ERROR_UNKNOWN, "unknown error"),
];

/// (code, name, description) as C strings that live as long as the library.
static TABLE: LazyLock<Vec<(u32, CString, CString)>> = LazyLock::new(|| {
    DESCRIPTIONS
        .iter()
        .map(|&(code, text)| {
            let name = CString::new(format!("{code:?}")).expect("no NUL in a name");
            let text = CString::new(text).expect("no NUL in a description");
            (code as u32, name, text)
        })
        .collect()
});

/// Looks `error` up; `which` picks the name or the description.
///
/// # Safety
/// `out` is null or valid for writing one pointer.
unsafe fn lookup(
    call: &str,
    error: u32,
    out: *mut *const c_char,
    which: fn(&(u32, CString, CString)) -> &CString,
) -> CUresult {
    guard(call, || {
        let found = TABLE.iter().find(|entry| entry.0 == error);
        // SAFETY: the caller's `out` is null (refused) or valid for one write.
        unsafe { put(out, found.map_or(std::ptr::null(), |e| which(e).as_ptr())) }?;
        found.map(|_| ()).ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuGetErrorName(error: u32, pStr: *mut *const c_char) -> CUresult {
    // SAFETY: the caller passes a pointer valid for one write (driver API contract).
    unsafe { lookup("cuGetErrorName", error, pStr, |e| &e.1) }
}

#[no_mangle]
pub unsafe extern "C" fn cuGetErrorString(error: u32, pStr: *mut *const c_char) -> CUresult {
    // SAFETY: the caller passes a pointer valid for one write (driver API contract).
    unsafe { lookup("cuGetErrorString", error, pStr, |e| &e.2) }
}

/// The code the driver gives for a failed memory operation.
pub(crate) fn code(error: MemError) -> CUresult {
    match error {
        MemError::OutOfMemory { .. } => CUresult::CUDA_ERROR_OUT_OF_MEMORY,
        MemError::OutOfBounds { .. }
        | MemError::NotAllocated { .. }
        | MemError::Overlaps { .. }
        | MemError::NotWords { .. } => CUresult::CUDA_ERROR_INVALID_VALUE,
    }
}
