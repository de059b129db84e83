//! The out-of-bounds report that every checked index shares (`Out`, `Shared`, the arrays, async
//! copies, `mma` tiles). An `Out`'s element accesses are the machine's:
//! `backend/{nvptx,cpu}/global.rs`.

/// Stops the thread for an index past the end of `what` (e.g. "an output"). On the GPU it traps;
/// on the CPU it panics with the index and length, and says when the index is a negative number
/// that wrapped around (`i - 1` at `i == 0`).
#[cold]
#[inline(never)]
#[track_caller]
pub(crate) fn out_of_bounds(what: &str, index: usize, len: usize) -> ! {
    // The GPU has no panic message to give (a language difference, not a primitive): it traps.
    #[cfg(target_arch = "nvptx64")]
    {
        let _ = (what, index, len);
        // SAFETY: `trap` aborts the kernel; it has no preconditions.
        unsafe { core::arch::nvptx::trap() }
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        if (index as isize) < 0 {
            panic!(
                "index {index} out of bounds for {what} of length {len}: a negative index ({}) \
                 that wrapped around",
                index as isize
            )
        }
        panic!("index {index} out of bounds for {what} of length {len}")
    }
}
