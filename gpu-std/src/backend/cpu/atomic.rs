//! The CPU executor's [`Atomic`] element types: a real atomic on the element for an `Out` (blocks
//! run on different cores), a plain or relaxed read-modify-write for block scope (a block's
//! threads are coroutines on one OS thread). The per-type half of the atomics backend: the
//! [`Backend`](crate::backend::Backend) trait lists the fences; [`Atomic`] lists these.

use crate::atomic::{element, Space};
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
            let old = super::global::load(p);
            super::global::store(p, f(old));
            old
        }
    }
}

/// `$block` (an `|old| new`) through [`in_block`] for block scope, `$device` for device scope.
macro_rules! by_scope {
    ($p:expr, $scope:expr, $block:expr, $device:expr) => {
        if $scope != Space::Device {
            // SAFETY: the caller guarantees what `in_block` asks (the trait's contract).
            unsafe { in_block($p, $scope, $block) }
        } else {
            $device
        }
    };
}

/// The element at `$p` as its `$atomic` (for a float, the atomic of its bits).
macro_rules! cell {
    ($atomic:ty, $p:expr) => {
        // SAFETY: the caller guarantees `$p` is valid and aligned for its element type, which
        // has the size and alignment of `$atomic` on the platforms the executor runs on; all
        // concurrent accesses to executor memory are atomic.
        unsafe { <$atomic>::from_ptr($p.cast()) }
    };
}

/// Integers: block scope through [`in_block`], device scope Rust's own atomic of the type.
macro_rules! integer {
    ($t:ty, $atomic:ty) => {
        element!($t, bits: |x| x as u64, |p, v, current, new, scope| {
            add: by_scope!(p, scope, |old: $t| old.wrapping_add(v),
                cell!($atomic, p).fetch_add(v, Relaxed)),
            sub: by_scope!(p, scope, |old: $t| old.wrapping_sub(v),
                cell!($atomic, p).fetch_sub(v, Relaxed)),
            min: by_scope!(p, scope, |old: $t| old.min(v), cell!($atomic, p).fetch_min(v, Relaxed)),
            max: by_scope!(p, scope, |old: $t| old.max(v), cell!($atomic, p).fetch_max(v, Relaxed)),
            exchange: by_scope!(p, scope, |_: $t| v, cell!($atomic, p).swap(v, Relaxed)),
            compare_exchange: by_scope!(p, scope, |old: $t| if old == current { new } else { old },
                match cell!($atomic, p).compare_exchange(current, new, Relaxed, Relaxed) {
                    Ok(old) | Err(old) => old,
                }),
        });
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
        let f = $f;
        match cell!($atomic, $p).fetch_update(Relaxed, Relaxed, |bits| {
            Some(f(<$t>::from_bits(bits)).to_bits())
        }) {
            Ok(bits) | Err(bits) => <$t>::from_bits(bits),
        }
    }};
}

/// Floats: block scope as for integers; device scope a compare-and-swap loop on the bits
/// (Rust has no float atomics), a swap or compare-and-swap of the bits.
macro_rules! float {
    ($t:ty, $atomic:ty) => {
        element!($t, bits: |x| x.to_bits() as u64, |p, v, current, new, scope| {
            add: by_scope!(p, scope, |old: $t| old + v, update!($t, $atomic, p, |old: $t| old + v)),
            sub: by_scope!(p, scope, |old: $t| old - v, update!($t, $atomic, p, |old: $t| old - v)),
            min: by_scope!(p, scope, |old: $t| old.min(v),
                update!($t, $atomic, p, |old: $t| old.min(v))),
            max: by_scope!(p, scope, |old: $t| old.max(v),
                update!($t, $atomic, p, |old: $t| old.max(v))),
            exchange: by_scope!(p, scope, |_: $t| v,
                <$t>::from_bits(cell!($atomic, p).swap(v.to_bits(), Relaxed))),
            compare_exchange: by_scope!(p, scope,
                |old: $t| if old.to_bits() == current.to_bits() { new } else { old },
                match cell!($atomic, p).compare_exchange(
                    current.to_bits(), new.to_bits(), Relaxed, Relaxed)
                {
                    Ok(old) | Err(old) => <$t>::from_bits(old),
                }),
        });
    };
}
float!(f32, AtomicU32);
float!(f64, AtomicU64);
