//! Element access of global memory (an [`Out`](crate::Out)'s) on the host: each element access
//! is made of relaxed atomic accesses as wide as `T`'s alignment allows (one `mov` for
//! `f32`/`f64`/`u32` on x86-64), so that several executor threads touching one element is a race
//! with some winner, as on the GPU, never undefined behaviour. The same names as
//! `nvptx/global.rs`; `backend.rs` exports this target's.

use core::mem::{align_of, size_of};
use core::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, AtomicU8, Ordering::Relaxed};

macro_rules! by_width {
    ($p:ident, $T:ty, |$atomic:ident, $word:ident, $n:ident| $body:expr) => {{
        // Largest unit that divides size and alignment; `align_of` always divides `size_of`.
        let unit = if align_of::<$T>() >= 8 {
            8
        } else {
            align_of::<$T>()
        };
        let $n = size_of::<$T>() / unit;
        match unit {
            8 => {
                type $word = u64;
                type $atomic = AtomicU64;
                $body
            }
            4 => {
                type $word = u32;
                type $atomic = AtomicU32;
                $body
            }
            2 => {
                type $word = u16;
                type $atomic = AtomicU16;
                $body
            }
            _ => {
                type $word = u8;
                type $atomic = AtomicU8;
                $body
            }
        }
    }};
}

#[inline(always)]
pub(crate) unsafe fn store<T: bytemuck::Pod>(p: *mut T, v: T) {
    by_width!(p, T, |A, W, n| {
        let words = p as *mut W;
        for k in 0..n {
            // SAFETY: `p` is valid and aligned for `T` (caller), hence for `n` words of `W`,
            // whose alignment divides `T`'s; the value is read from `v`'s own bytes.
            unsafe {
                let w = (&v as *const T as *const W).add(k).read_unaligned();
                A::from_ptr(words.add(k)).store(w, Relaxed);
            }
        }
    })
}

#[inline(always)]
pub(crate) unsafe fn load<T: bytemuck::Pod>(p: *const T) -> T {
    let mut v = T::zeroed();
    by_width!(p, T, |A, W, n| {
        let words = p as *mut W;
        for k in 0..n {
            // SAFETY: as in `store`; `v` is a local `T` with room for `n` words.
            unsafe {
                let w = A::from_ptr(words.add(k)).load(Relaxed);
                (&mut v as *mut T as *mut W).add(k).write_unaligned(w);
            }
        }
    });
    v
}

/// Starts bringing `p`'s cache line in (x86 `prefetcht0`; nothing on other hosts); reads and
/// writes nothing.
#[inline(always)]
pub(crate) fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `prefetcht0` reads and writes nothing and never faults, at any address.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p.cast())
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
