//! The CPU executor's [`Atomic`] element types: a real atomic on the element for an `Out` (blocks
//! run on different cores), a plain or relaxed read-modify-write for block scope (a block's
//! threads are coroutines on one OS thread). The per-type half of the atomics backend: the
//! [`Backend`](crate::backend::Backend) trait lists the fences; [`Atomic`] lists these.

use crate::atomic::{sealed::Sealed, Atomic, Space};
use core::sync::atomic::Ordering::Relaxed;
use core::sync::atomic::{AtomicI16, AtomicI32, AtomicI64, AtomicI8};
use core::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, AtomicU8};

/// An atomic of block scope (`Space::Block` or `Space::BlockGlobal`) on the executor: a
/// block's threads are coroutines on the one OS thread running the block, which switch only
/// at barriers and warp operations, so a read-modify-write without a locked instruction or a
/// compare-and-swap loop is atomic towards the block's other threads. `Space::Block` is the
/// block's shared memory, which no other OS thread touches: plain accesses. `BlockGlobal` is
/// an `Out`'s element, which other blocks, on other OS threads, may touch at the same time:
/// a relaxed atomic load and a relaxed atomic store (each one `mov` on x86-64), so that such
/// a race (which the GPU's block-scope atomics do not order either) loses an update but is
/// never undefined behaviour.
///
/// # Safety
/// `p` is valid and aligned; with `Space::Block`, no other OS thread accesses it meanwhile;
/// with `Space::BlockGlobal`, every access to it from another OS thread is atomic.
#[inline(always)]
unsafe fn in_block<T: bytemuck::Pod>(p: *mut T, scope: Space, f: impl FnOnce(T) -> T) -> T {
    // SAFETY: the caller's guarantees.
    unsafe {
        if scope == Space::Block {
            let old = p.read();
            p.write(f(old));
            old
        } else {
            let old = crate::mem::load(p);
            crate::mem::store(p, f(old));
            old
        }
    }
}

macro_rules! integer {
    ($t:ty, $atomic:ty) => {
        impl Sealed for $t {}
        // SAFETY (every method): the caller guarantees `p` is valid and aligned for `$t`,
        // which has the size and alignment of `$atomic` on the platforms the executor runs on;
        // all concurrent accesses to executor memory are atomic.
        impl Atomic for $t {
            #[inline(always)]
            fn bits(self) -> u64 {
                self as u64
            }
            #[inline(always)]
            unsafe fn atomic_add(p: *mut $t, v: $t, scope: Space) -> $t {
                if scope != Space::Device {
                    return unsafe { in_block(p, scope, |old: $t| old.wrapping_add(v)) };
                }
                unsafe { <$atomic>::from_ptr(p).fetch_add(v, Relaxed) }
            }
            #[inline(always)]
            unsafe fn atomic_sub(p: *mut $t, v: $t, scope: Space) -> $t {
                if scope != Space::Device {
                    return unsafe { in_block(p, scope, |old: $t| old.wrapping_sub(v)) };
                }
                unsafe { <$atomic>::from_ptr(p).fetch_sub(v, Relaxed) }
            }
            #[inline(always)]
            unsafe fn atomic_min(p: *mut $t, v: $t, scope: Space) -> $t {
                if scope != Space::Device {
                    return unsafe { in_block(p, scope, |old: $t| old.min(v)) };
                }
                unsafe { <$atomic>::from_ptr(p).fetch_min(v, Relaxed) }
            }
            #[inline(always)]
            unsafe fn atomic_max(p: *mut $t, v: $t, scope: Space) -> $t {
                if scope != Space::Device {
                    return unsafe { in_block(p, scope, |old: $t| old.max(v)) };
                }
                unsafe { <$atomic>::from_ptr(p).fetch_max(v, Relaxed) }
            }
            #[inline(always)]
            unsafe fn atomic_exchange(p: *mut $t, v: $t, scope: Space) -> $t {
                if scope != Space::Device {
                    return unsafe { in_block(p, scope, |_: $t| v) };
                }
                unsafe { <$atomic>::from_ptr(p).swap(v, Relaxed) }
            }
            #[inline(always)]
            unsafe fn atomic_compare_exchange(
                p: *mut $t,
                current: $t,
                new: $t,
                scope: Space,
            ) -> $t {
                if scope != Space::Device {
                    return unsafe {
                        in_block(p, scope, |old: $t| if old == current { new } else { old })
                    };
                }
                match unsafe { <$atomic>::from_ptr(p) }
                    .compare_exchange(current, new, Relaxed, Relaxed)
                {
                    Ok(old) | Err(old) => old,
                }
            }
        }
    };
}
integer!(u32, AtomicU32);
integer!(i32, AtomicI32);
integer!(u64, AtomicU64);
integer!(i64, AtomicI64);
// Rust's own 8- and 16-bit atomics: a host buffer's last element may end inside a 32-bit
// word whose other bytes are not the buffer's, so the word is never touched here.
integer!(u8, AtomicU8);
integer!(i8, AtomicI8);
integer!(u16, AtomicU16);
integer!(i16, AtomicI16);

/// A compare-and-swap loop storing `$f(old)`; evaluates to the old value.
macro_rules! update {
    ($t:ty, $atomic:ty, $p:expr, $f:expr) => {{
        // SAFETY: the caller guarantees `$p` is valid and aligned for `$t`, which has the
        // size and alignment of its bits' atomic type.
        let cell = unsafe { <$atomic>::from_ptr($p.cast()) };
        let f = $f;
        match cell.fetch_update(Relaxed, Relaxed, |bits| {
            Some(f(<$t>::from_bits(bits)).to_bits())
        }) {
            Ok(bits) | Err(bits) => <$t>::from_bits(bits),
        }
    }};
}

macro_rules! float {
    ($t:ty, $atomic:ty) => {
        impl Sealed for $t {}
        // SAFETY (every method): the caller guarantees `p` is valid and aligned for `$t`,
        // which has the size and alignment of its bits' atomic type.
        impl Atomic for $t {
            #[inline(always)]
            fn bits(self) -> u64 {
                self.to_bits() as u64
            }
            #[inline(always)]
            unsafe fn atomic_add(p: *mut $t, v: $t, scope: Space) -> $t {
                if scope != Space::Device {
                    return unsafe { in_block(p, scope, |old: $t| old + v) };
                }
                update!($t, $atomic, p, |old: $t| old + v)
            }
            #[inline(always)]
            unsafe fn atomic_sub(p: *mut $t, v: $t, scope: Space) -> $t {
                if scope != Space::Device {
                    return unsafe { in_block(p, scope, |old: $t| old - v) };
                }
                update!($t, $atomic, p, |old: $t| old - v)
            }
            #[inline(always)]
            unsafe fn atomic_min(p: *mut $t, v: $t, scope: Space) -> $t {
                if scope != Space::Device {
                    return unsafe { in_block(p, scope, |old: $t| old.min(v)) };
                }
                update!($t, $atomic, p, |old: $t| old.min(v))
            }
            #[inline(always)]
            unsafe fn atomic_max(p: *mut $t, v: $t, scope: Space) -> $t {
                if scope != Space::Device {
                    return unsafe { in_block(p, scope, |old: $t| old.max(v)) };
                }
                update!($t, $atomic, p, |old: $t| old.max(v))
            }
            #[inline(always)]
            unsafe fn atomic_exchange(p: *mut $t, v: $t, scope: Space) -> $t {
                if scope != Space::Device {
                    return unsafe { in_block(p, scope, |_: $t| v) };
                }
                let cell = unsafe { <$atomic>::from_ptr(p.cast()) };
                <$t>::from_bits(cell.swap(v.to_bits(), Relaxed))
            }
            #[inline(always)]
            unsafe fn atomic_compare_exchange(
                p: *mut $t,
                current: $t,
                new: $t,
                scope: Space,
            ) -> $t {
                if scope != Space::Device {
                    let same = |old: $t| old.to_bits() == current.to_bits();
                    return unsafe {
                        in_block(p, scope, |old: $t| if same(old) { new } else { old })
                    };
                }
                let cell = unsafe { <$atomic>::from_ptr(p.cast()) };
                match cell.compare_exchange(current.to_bits(), new.to_bits(), Relaxed, Relaxed) {
                    Ok(old) | Err(old) => <$t>::from_bits(old),
                }
            }
        }
    };
}
float!(f32, AtomicU32);
float!(f64, AtomicU64);
