//! Element access of global memory (an [`Out`](crate::Out)'s) on the GPU: plain loads and
//! stores. The same names as `cpu/global.rs`; `backend.rs` exports this target's.

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

/// Starts bringing `p`'s cache line into L2 (`prefetch.global.L2`); reads and writes nothing.
#[inline(always)]
pub(crate) fn prefetch<T>(p: *const T) {
    // SAFETY: a prefetch reads and writes nothing; `p` is an element of a buffer in global
    // memory (the caller's, `Out::prefetch`).
    unsafe {
        core::arch::asm!(
            "{{ .reg .u64 %oxg; cvta.to.global.u64 %oxg, {0}; prefetch.global.L2 [%oxg]; }}",
            in(reg64) p,
            options(nostack, readonly, preserves_flags)
        )
    }
}
