//! Shared-memory accesses as `ld.shared`/`st.shared`. A `Shared` holds a generic address (from
//! `cvta.shared`), and ptxas does not trace generic addresses back to shared memory: plain Rust
//! reads through it become generic `ld`, which costs more than `ld.shared`. Element sizes of 4, 8
//! and 16 bytes, naturally aligned, take the shared path; others stay generic.

use core::arch::asm;
use core::mem::{align_of, size_of, transmute_copy};

/// The generic address `base` of shared memory as a 32-bit shared-window address (shared
/// memory is far smaller than 4 GiB; 32-bit addresses save registers).
#[inline(always)]
pub(crate) fn window_of<T>(base: *mut T) -> u32 {
    let window: u32;
    // SAFETY: converts an address; touches no memory.
    unsafe {
        asm!(
            "{{ .reg .u64 %oxs; cvta.to.shared.u64 %oxs, {1}; cvt.u32.u64 {0}, %oxs; }}",
            out(reg32) window,
            in(reg64) base as u64,
            options(pure, nomem, nostack, preserves_flags)
        )
    };
    window
}

/// Element `index` of the array at shared-window address `window`.
#[inline(always)]
pub(crate) fn element<T>(window: u32, index: usize) -> u32 {
    window.wrapping_add((index * size_of::<T>()) as u32)
}

/// # Safety
/// `base` is a generic address of shared memory holding element `index`, `window` its
/// shared-window address.
#[inline(always)]
pub(crate) unsafe fn load<T: Copy>(base: *mut T, window: u32, index: usize) -> T {
    let at = element::<T>(window, index);
    // SAFETY (each arm): `at` addresses element `index` in shared memory, aligned to the
    // access size (checked by the arm's condition); the asm only reads it.
    unsafe {
        match (size_of::<T>(), align_of::<T>() >= size_of::<T>()) {
            (2, true) => {
                let v: u16;
                asm!("ld.shared.b16 {0}, [{1}];", out(reg16) v, in(reg32) at,
                     options(pure, readonly, nostack, preserves_flags));
                transmute_copy(&v)
            }
            (4, true) => {
                let v: u32;
                asm!("ld.shared.b32 {0}, [{1}];", out(reg32) v, in(reg32) at,
                     options(pure, readonly, nostack, preserves_flags));
                transmute_copy(&v)
            }
            (8, true) => {
                let v: u64;
                asm!("ld.shared.b64 {0}, [{1}];", out(reg64) v, in(reg32) at,
                     options(pure, readonly, nostack, preserves_flags));
                transmute_copy(&v)
            }
            (16, true) => {
                let v: [u32; 4];
                let (a, b, c, d): (u32, u32, u32, u32);
                asm!("ld.shared.v4.b32 {{{0}, {1}, {2}, {3}}}, [{4}];",
                     out(reg32) a, out(reg32) b, out(reg32) c, out(reg32) d, in(reg32) at,
                     options(pure, readonly, nostack, preserves_flags));
                v = [a, b, c, d];
                transmute_copy(&v)
            }
            _ => base.add(index).read(),
        }
    }
}

/// # Safety
/// As [`load`].
#[inline(always)]
pub(crate) unsafe fn store<T: Copy>(base: *mut T, window: u32, index: usize, value: T) {
    let at = element::<T>(window, index);
    // SAFETY (each arm): as in `load`; the asm only writes element `index`.
    unsafe {
        match (size_of::<T>(), align_of::<T>() >= size_of::<T>()) {
            (2, true) => {
                let v: u16 = transmute_copy(&value);
                asm!("st.shared.b16 [{0}], {1};", in(reg32) at, in(reg16) v,
                     options(nostack, preserves_flags));
            }
            (4, true) => {
                let v: u32 = transmute_copy(&value);
                asm!("st.shared.b32 [{0}], {1};", in(reg32) at, in(reg32) v,
                     options(nostack, preserves_flags));
            }
            (8, true) => {
                let v: u64 = transmute_copy(&value);
                asm!("st.shared.b64 [{0}], {1};", in(reg32) at, in(reg64) v,
                     options(nostack, preserves_flags));
            }
            (16, true) => {
                let [a, b, c, d]: [u32; 4] = transmute_copy(&value);
                asm!("st.shared.v4.b32 [{0}], {{{1}, {2}, {3}, {4}}};", in(reg32) at,
                     in(reg32) a, in(reg32) b, in(reg32) c, in(reg32) d,
                     options(nostack, preserves_flags));
            }
            _ => base.add(index).write(value),
        }
    }
}
