//! Shared-memory accesses as `ld.shared`/`st.shared`. A `Shared` holds a generic address (from
//! `cvta.shared`), and ptxas does not trace generic addresses back to shared memory: plain Rust
//! reads through it become generic `ld`, which costs more than `ld.shared`. Element sizes of 4, 8
//! and 16 bytes, naturally aligned, take the shared path; others stay generic.
//!
//! The same names as `cpu/shared.rs`, so `shared.rs` makes one call on either machine.

use core::arch::asm;
use core::mem::{align_of, size_of, transmute_copy};

/// A shared array's start as a 32-bit shared-window address (shared memory is far smaller than
/// 4 GiB; 32-bit addresses save registers): what `ld.shared`, `st.shared`, `atom.shared`,
/// `ldmatrix` and `cp.async` take. A `Shared` computes it once where it is made, so accesses in
/// branches need no conversion of their own (LLVM cannot hoist an `asm!` out of a branch).
#[derive(Clone, Copy)]
pub(crate) struct Window(u32);

impl Window {
    /// The shared-window address of the generic shared-memory address `base`.
    #[inline(always)]
    pub(crate) fn of<T>(base: *mut T) -> Self {
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
        Window(window)
    }

    /// A shared-window address given as it is (a `.shared` symbol's own, `mov.u32 w, SYMBOL`).
    #[inline(always)]
    pub(crate) fn from_address(window: u32) -> Self {
        Window(window)
    }
}

/// Element `index` of the array at `window`, as a shared-window address.
#[inline(always)]
pub(crate) fn element<T>(window: Window, index: usize) -> u32 {
    window.0.wrapping_add((index * size_of::<T>()) as u32)
}

/// Element `index` as this machine's shared-memory instructions take it: its shared-window
/// address carried in the pointer (what `atom.shared` takes, see `nvptx/atomic.rs`; and
/// `cp.async`).
///
/// # Safety
/// None on the GPU (it computes an address); the host's needs `index` inside the array.
#[inline(always)]
pub(crate) unsafe fn element_address<T>(_base: *mut T, window: Window, index: usize) -> *mut T {
    element::<T>(window, index) as usize as *mut T
}

/// The launch's dynamic shared memory: its generic address and its size in bytes.
#[inline(always)]
pub(crate) fn dynamic_memory() -> (*mut u8, u32) {
    let (address, bytes): (u64, u32);
    // SAFETY: both read the address of the module's dynamic shared declaration and the
    // launch's dynamic shared size; no memory is touched.
    unsafe {
        asm!(
            "cvta.shared.u64 {0}, __ferrocuda_dynamic_shared;",
            out(reg64) address,
            options(pure, nomem, nostack)
        );
        asm!(
            "mov.u32 {0}, %dynamic_smem_size;",
            out(reg32) bytes,
            options(pure, nomem, nostack)
        );
    }
    (address as *mut u8, bytes)
}

// The one declaration of the dynamic shared memory; its size is the launch's `shared_mem_bytes`.
core::arch::global_asm!(".extern .shared .align 16 .b8 __ferrocuda_dynamic_shared[];");

/// # Safety
/// `base` is a generic address of shared memory holding element `index`, `window` its
/// shared-window address.
#[inline(always)]
pub(crate) unsafe fn load<T: Copy>(base: *mut T, window: Window, index: usize) -> T {
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
pub(crate) unsafe fn store<T: Copy>(base: *mut T, window: Window, index: usize, value: T) {
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
