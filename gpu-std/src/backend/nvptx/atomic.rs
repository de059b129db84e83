//! The GPU's [`Atomic`] element types: one PTX `atom` each (a compare-and-swap loop for float
//! min/max and for 8- and 16-bit elements). The per-type half of the atomics backend: the
//! [`Backend`](crate::backend::Backend) trait lists the fences; [`Atomic`] lists these.

use crate::atomic::{element, Atomic, Space};
use core::arch::asm;

/// One `atom.relaxed.<scope>.<op>` with the scope chosen at compile time (calls inline).
/// `Space::Block` is a `Shared` element, whose shared-window address `$p` carries (the
/// trait's contract), so it is `atom.shared` (SASS `ATOMS`); the other spaces are an `Out`
/// element, global memory, so `atom.global` (at `.gpu` or `.cta` scope). Through a generic address ptxas emits a generic
/// `ATOM` plus a test of the address and a shared-memory fallback loop.
macro_rules! atom {
    ($op:literal, $reg:ident, $bits:ty, $p:expr, $v:expr, $scope:expr) => {{
        let old: $bits;
        // SAFETY: the caller guarantees `$p` is a valid, aligned global address, or for
        // `Space::Block` the shared-window address of a valid, aligned shared element.
        unsafe {
            match $scope {
                Space::Block => asm!(concat!("atom.relaxed.cta.shared.", $op, " {0}, [{1}], {2};"),
                    out($reg) old, in(reg32) $p as usize as u32, in($reg) $v,
                    options(nostack)),
                Space::Device => asm!(concat!("{{ .reg .u64 %oxg; cvta.to.global.u64 %oxg, {1}; atom.relaxed.gpu.global.", $op, " {0}, [%oxg], {2}; }}"),
                    out($reg) old, in(reg64) $p, in($reg) $v, options(nostack)),
                Space::BlockGlobal => asm!(concat!("{{ .reg .u64 %oxg; cvta.to.global.u64 %oxg, {1}; atom.relaxed.cta.global.", $op, " {0}, [%oxg], {2}; }}"),
                    out($reg) old, in(reg64) $p, in($reg) $v, options(nostack)),
            }
        }
        old
    }};
}

macro_rules! cas {
    ($ty:literal, $reg:ident, $bits:ty, $p:expr, $current:expr, $new:expr, $scope:expr) => {{
        let old: $bits;
        // SAFETY: as in `atom!`.
        unsafe {
            match $scope {
                Space::Block => asm!(concat!("atom.relaxed.cta.shared.cas.", $ty, " {0}, [{1}], {2}, {3};"),
                    out($reg) old, in(reg32) $p as usize as u32, in($reg) $current,
                    in($reg) $new, options(nostack)),
                Space::Device => asm!(concat!("{{ .reg .u64 %oxg; cvta.to.global.u64 %oxg, {1}; atom.relaxed.gpu.global.cas.", $ty, " {0}, [%oxg], {2}, {3}; }}"),
                    out($reg) old, in(reg64) $p, in($reg) $current, in($reg) $new, options(nostack)),
                Space::BlockGlobal => asm!(concat!("{{ .reg .u64 %oxg; cvta.to.global.u64 %oxg, {1}; atom.relaxed.cta.global.cas.", $ty, " {0}, [%oxg], {2}, {3}; }}"),
                    out($reg) old, in(reg64) $p, in($reg) $current, in($reg) $new, options(nostack)),
            }
        }
        old
    }};
}

/// 32- and 64-bit integers: one `atom` each (on the bits' unsigned type where PTX has no signed
/// form of the instruction).
macro_rules! integer {
    ($t:ty, $bits:ty, $reg:ident, $add:literal, $min:literal, $max:literal, $exch:literal, $b:literal) => {
        element!($t, bits: |x| x as $bits as u64, |p, v, current, new, scope| {
            add: atom!($add, $reg, $bits, p, v as $bits, scope) as $t,
            sub: atom!($add, $reg, $bits, p, v.wrapping_neg() as $bits, scope) as $t,
            min: atom!($min, $reg, $bits, p, v as $bits, scope) as $t,
            max: atom!($max, $reg, $bits, p, v as $bits, scope) as $t,
            exchange: atom!($exch, $reg, $bits, p, v as $bits, scope) as $t,
            compare_exchange: cas!($b, $reg, $bits, p, current as $bits, new as $bits, scope) as $t,
        });
    };
}
integer!(u32, u32, reg32, "add.u32", "min.u32", "max.u32", "exch.b32", "b32");
integer!(i32, u32, reg32, "add.u32", "min.s32", "max.s32", "exch.b32", "b32");
integer!(u64, u64, reg64, "add.u64", "min.u64", "max.u64", "exch.b64", "b64");
integer!(i64, u64, reg64, "add.u64", "min.s64", "max.s64", "exch.b64", "b64");

/// Floats: one `atom` on the bits each, but `min`/`max`, a compare-and-swap loop ([`update`]).
macro_rules! float {
    ($t:ty, $bits:ty, $reg:ident, $add:literal, $exch:literal, $b:literal) => {
        element!($t, bits: |x| x.to_bits() as u64, |p, v, current, new, scope| {
            add: <$t>::from_bits(atom!($add, $reg, $bits, p, v.to_bits(), scope)),
            sub: <$t>::from_bits(atom!($add, $reg, $bits, p, (-v).to_bits(), scope)),
            // SAFETY (`min` and `max`): forwarded from the caller.
            min: unsafe { update(p, scope, |old| if v < old || old != old { v } else { old }) },
            max: unsafe { update(p, scope, |old| if v > old || old != old { v } else { old }) },
            exchange: <$t>::from_bits(atom!($exch, $reg, $bits, p, v.to_bits(), scope)),
            compare_exchange: <$t>::from_bits(cas!(
                $b, $reg, $bits, p, current.to_bits(), new.to_bits(), scope
            )),
        });
    };
}
float!(f32, u32, reg32, "add.f32", "exch.b32", "b32");
float!(f64, u64, reg64, "add.f64", "exch.b64", "b64");

/// 8- and 16-bit integers: every operation is a compare-and-swap loop on the aligned 32-bit
/// word holding the element ([`word_update`]). GPU allocations are 256-byte aligned and
/// padded, so the word is always inside the element's allocation (an `Out`'s buffer, or the
/// block's shared memory, whose window is 4-byte aligned and padded too).
macro_rules! subword {
    ($t:ty, $bits:ty) => {
        element!($t, bits: |x| x as $bits as u64, |p, v, current, new, scope| {
            // SAFETY (every operation): forwarded from the caller.
            add: unsafe { word_update(p, scope, |old: $t| old.wrapping_add(v)) },
            sub: unsafe { word_update(p, scope, |old: $t| old.wrapping_sub(v)) },
            min: unsafe { word_update(p, scope, |old: $t| old.min(v)) },
            max: unsafe { word_update(p, scope, |old: $t| old.max(v)) },
            exchange: unsafe { word_update(p, scope, |_: $t| v) },
            compare_exchange: unsafe {
                word_update(p, scope, |old: $t| if old == current { new } else { old })
            },
        });
    };
}
subword!(u8, u8);
subword!(i8, u8);
subword!(u16, u16);
subword!(i16, u16);

/// Stores `f(old)` into the 8- or 16-bit element at `p` with a compare-and-swap loop on the
/// aligned 32-bit word holding it, leaving the word's other bytes as other threads leave
/// them; returns the old value.
///
/// # Safety
/// As [`Atomic::atomic_add`], and the aligned 32-bit word around `p` is inside the same
/// allocation (or shared window).
#[inline(always)]
unsafe fn word_update<T: bytemuck::Pod + PartialEq>(
    p: *mut T,
    scope: Space,
    f: impl Fn(T) -> T,
) -> T {
    let size = core::mem::size_of::<T>();
    let shift = (p as usize & 3) * 8;
    let mask = (u32::MAX >> (32 - 8 * size)) << shift;
    let word = (p as usize & !3) as *mut u32;
    let element = |w: u32| {
        let bits = (w & mask) >> shift;
        bytemuck::cast_slice::<u32, T>(core::slice::from_ref(&bits))[0]
    };
    let widen = |v: T| {
        let mut bits = 0u32;
        bytemuck::bytes_of_mut(&mut bits)[..size].copy_from_slice(bytemuck::bytes_of(&v));
        (bits << shift) & mask
    };
    // The first read is a compare-and-swap too (see `update`).
    // SAFETY: `word` is valid and aligned for `scope` (the caller's contract).
    let mut old = unsafe { u32::atomic_compare_exchange(word, 0, 0, scope) };
    loop {
        let new = f(element(old));
        if new == element(old) {
            return new;
        }
        let merged = (old & !mask) | widen(new);
        // SAFETY: as above.
        let seen = unsafe { u32::atomic_compare_exchange(word, old, merged, scope) };
        if seen == old {
            return element(old);
        }
        old = seen;
    }
}

/// Compare-and-swap loop: stores `f(old)` unless it equals `old`; returns the old value.
#[inline(always)]
unsafe fn update<T: Atomic + PartialEq>(p: *mut T, scope: Space, f: impl Fn(T) -> T) -> T {
    // The first read is atomic too (a compare-and-swap that stores what it found): a plain
    // read racing with other threads' atomics would be a data race, and for `Space::Block`
    // `p` is a shared-window address, not one a plain read can use.
    let zero = <T as bytemuck::Zeroable>::zeroed();
    // SAFETY: the caller guarantees `p` is valid for `scope`.
    let mut old = unsafe { T::atomic_compare_exchange(p, zero, zero, scope) };
    loop {
        let new = f(old);
        if new.bits() == old.bits() {
            return old;
        }
        // SAFETY: as above.
        let seen = unsafe { T::atomic_compare_exchange(p, old, new, scope) };
        if seen.bits() == old.bits() {
            return old;
        }
        old = seen;
    }
}
