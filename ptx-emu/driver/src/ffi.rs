//! What every export shares: a panic never crosses the C boundary, out-pointers are checked for
//! null, and handles are opaque ids carried in pointers.

use cudarc::driver::sys::CUresult;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// A driver call's outcome inside the emulator: `Err` carries the code to return.
pub(crate) type Outcome = Result<(), CUresult>;

/// Runs an export's body. A panic (an emulator bug) is reported on stderr and returned as
/// `CUDA_ERROR_UNKNOWN`: unwinding out of an `extern "C"` function would abort the host.
pub(crate) fn guard(call: &str, body: impl FnOnce() -> Outcome) -> CUresult {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => CUresult::CUDA_SUCCESS,
        Ok(Err(code)) => code,
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "(no message)".into());
            eprintln!("ferrocuda PTX emulator: {call} panicked (an emulator bug): {what}");
            CUresult::CUDA_ERROR_UNKNOWN
        }
    }
}

/// Writes `value` through an out-pointer of the caller's.
///
/// # Safety
/// `out` is null or valid for a write of one `T` (the driver API's contract for out-parameters).
pub(crate) unsafe fn put<T>(out: *mut T, value: T) -> Outcome {
    if out.is_null() {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    // SAFETY: not null, and valid for a write of one `T` by the caller's contract.
    unsafe { out.write(value) };
    Ok(())
}

/// The id a handle (`CUcontext`, `CUstream`, ...) carries. Handles are never dereferenced.
pub(crate) fn id_of<T>(handle: *mut T) -> usize {
    handle.addr()
}

/// A handle carrying `id`.
pub(crate) fn handle<T>(id: usize) -> *mut T {
    std::ptr::without_provenance_mut(id)
}
