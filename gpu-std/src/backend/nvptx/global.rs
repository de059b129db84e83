//! Element access of global memory (an [`Out`](crate::Out)'s) on the GPU: plain loads and
//! stores. The same names as `cpu/global.rs`, which `crate::mem` re-exports.

/// # Safety
/// `p` is valid for writes of a `T` and aligned.
#[inline(always)]
pub(crate) unsafe fn store<T>(p: *mut T, v: T) {
    // SAFETY: the caller guarantees `p` is valid and aligned.
    unsafe { p.write(v) }
}

/// # Safety
/// `p` is valid for reads of a `T` and aligned.
#[inline(always)]
pub(crate) unsafe fn load<T>(p: *const T) -> T {
    // SAFETY: the caller guarantees `p` is valid and aligned.
    unsafe { p.read() }
}
