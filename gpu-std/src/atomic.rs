//! Atomic read-modify-write on outputs ([`Out`](crate::Out), global memory) and shared arrays
//! ([`Shared`](crate::Shared)), and memory fences.
//!
//! Atomics are how threads that do not synchronise combine results: histograms, counters,
//! group-by sums. On the GPU each is one PTX `atom` instruction (inline PTX rather than rustc's
//! own lowering, which has produced PTX that ptxas rejects), relaxed, with the scope of the memory
//! it works on: the whole device for an `Out`, the block for a `Shared`. On the CPU executor each
//! is a real atomic on the element, so blocks running on different cores combine correctly.
//!
//! Element types: `u32`, `i32`, `u64`, `i64`, `f32`, `f64`. Float `min`/`max` are a
//! compare-and-swap loop (PTX has no float `atom.min` before sm_90) and ignore NaN as
//! [`f32::min`] does; `f64` add needs sm_60 or newer (every target ferrocuda builds for).

/// How far the ordering of a fence (or the effect of an atomic) reaches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scope {
    /// The threads of this block (`.cta`).
    Block,
    /// Every thread of the device (`.gpu`).
    Device,
    /// The device and the host (`.sys`).
    System,
}

/// Orders this thread's memory accesses before the fence before those after it, as seen by the
/// threads of `scope` (CUDA `__threadfence_block`, `__threadfence`, `__threadfence_system`).
///
/// A fence does not wait for other threads; pair it with a flag (an atomic) that others read.
#[inline(always)]
pub fn fence(scope: Scope) {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: a fence only orders this thread's memory accesses.
    unsafe {
        match scope {
            Scope::Block => core::arch::asm!("fence.acq_rel.cta;", options(nostack)),
            Scope::Device => core::arch::asm!("fence.acq_rel.gpu;", options(nostack)),
            Scope::System => core::arch::asm!("fence.acq_rel.sys;", options(nostack)),
        }
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        let _ = scope;
        core::sync::atomic::fence(core::sync::atomic::Ordering::SeqCst);
    }
}

/// Which memory an atomic works on and how far it is atomic: the [`Atomic`] methods' argument
/// (`Out`'s and `Shared`'s `atomic_*` methods pass it).
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Space {
    /// A [`Shared`](crate::Shared) element, atomic among the block's threads (`atom.shared`).
    Block,
    /// An [`Out`](crate::Out) element, atomic among every thread of the launch (`atom.global`
    /// at `.gpu` scope).
    Device,
    /// An [`Out`](crate::Out) element, atomic only among the block's threads (`atom.global` at
    /// `.cta` scope, CUDA's `atomicAdd_block`): see `Out`'s block-scope atomics.
    BlockGlobal,
}

mod sealed {
    pub trait Sealed {}
}

/// Element types with atomic operations: `u32`, `i32`, `u64`, `i64`, `f32`, `f64`, and the 8- and
/// 16-bit integers `u8`, `i8`, `u16`, `i16` (on the GPU a compare-and-swap loop on the aligned
/// 32-bit word that holds the element, as CUDA libraries do it, since PTX has no 8-bit atomics;
/// the word's other bytes are never changed).
///
/// The methods are the implementation of [`Out`](crate::Out)'s and [`Shared`](crate::Shared)'s
/// `atomic_*` methods; call those.
pub trait Atomic: bytemuck::Pod + sealed::Sealed {
    #[doc(hidden)]
    /// The value's bits, for bit-for-bit comparison (a byte-slice comparison would need
    /// `memcmp`, which PTX does not have).
    fn bits(self) -> u64;
    #[doc(hidden)]
    /// # Safety
    /// `p` valid for reads and writes, aligned. With [`Space::Block`], `p` is the block's shared
    /// memory: on the CPU executor only the OS thread running the block touches it; on the GPU
    /// `p` is not a generic address but the element's 32-bit shared-window address
    /// (`window as usize as *mut T`), which `atom.shared` takes. With the other spaces, on the
    /// GPU, `p` is global memory (an [`Out`](crate::Out)'s element), and on the CPU executor
    /// every access to it is atomic (as [`Out`](crate::Out)'s are).
    unsafe fn atomic_add(p: *mut Self, value: Self, scope: Space) -> Self;
    #[doc(hidden)]
    /// # Safety
    /// As `atomic_add`.
    unsafe fn atomic_sub(p: *mut Self, value: Self, scope: Space) -> Self;
    #[doc(hidden)]
    /// # Safety
    /// As `atomic_add`.
    unsafe fn atomic_min(p: *mut Self, value: Self, scope: Space) -> Self;
    #[doc(hidden)]
    /// # Safety
    /// As `atomic_add`.
    unsafe fn atomic_max(p: *mut Self, value: Self, scope: Space) -> Self;
    #[doc(hidden)]
    /// # Safety
    /// As `atomic_add`.
    unsafe fn atomic_exchange(p: *mut Self, value: Self, scope: Space) -> Self;
    #[doc(hidden)]
    /// Returns the old value; stored `new` if the old value had `current`'s bits.
    ///
    /// # Safety
    /// As `atomic_add`.
    unsafe fn atomic_compare_exchange(p: *mut Self, current: Self, new: Self, scope: Space)
        -> Self;
}

/// The `atomic_*` methods of `Out` and `Shared`; `$scope` is the `Space` they use and the impl
/// block defines `atomic_element(index) -> *mut T`, which checks the index.
/// With method names after the literal, the methods take those names (`Out`'s `*_block`).
macro_rules! atomic_methods {
    ($scope:ident, $who:literal) => {
        $crate::atomic::atomic_methods!(
            $scope,
            $who,
            atomic_add,
            atomic_sub,
            atomic_min,
            atomic_max,
            atomic_exchange,
            atomic_compare_exchange
        );
    };
    (
        $scope:ident,
        $who:literal,
        $add:ident,
        $sub:ident,
        $min:ident,
        $max:ident,
        $exchange:ident,
        $cas:ident
    ) => {
        /// Adds `value` to element `index` atomically (visible to
        #[doc = concat!($who, "); returns the old value. Integers wrap.")]
        ///
        /// # Panics
        /// If `index >= self.len()` (on the GPU: traps).
        #[inline(always)]
        #[track_caller]
        pub fn $add(&self, index: usize, value: T) -> T {
            let p = self.atomic_element(index);
            // SAFETY: `p` is an in-bounds element, checked by `atomic_element`.
            unsafe { T::atomic_add(p, value, $crate::atomic::Space::$scope) }
        }

        /// Subtracts `value` from element `index` atomically; returns the old value.
        ///
        /// # Panics
        /// If `index >= self.len()`.
        #[inline(always)]
        #[track_caller]
        pub fn $sub(&self, index: usize, value: T) -> T {
            let p = self.atomic_element(index);
            // SAFETY: as in `atomic_add`.
            unsafe { T::atomic_sub(p, value, $crate::atomic::Space::$scope) }
        }

        /// Stores the smaller of element `index` and `value`; returns the old value.
        ///
        /// # Panics
        /// If `index >= self.len()`.
        #[inline(always)]
        #[track_caller]
        pub fn $min(&self, index: usize, value: T) -> T {
            let p = self.atomic_element(index);
            // SAFETY: as in `atomic_add`.
            unsafe { T::atomic_min(p, value, $crate::atomic::Space::$scope) }
        }

        /// Stores the larger of element `index` and `value`; returns the old value.
        ///
        /// # Panics
        /// If `index >= self.len()`.
        #[inline(always)]
        #[track_caller]
        pub fn $max(&self, index: usize, value: T) -> T {
            let p = self.atomic_element(index);
            // SAFETY: as in `atomic_add`.
            unsafe { T::atomic_max(p, value, $crate::atomic::Space::$scope) }
        }

        /// Stores `value` at element `index`; returns the old value.
        ///
        /// # Panics
        /// If `index >= self.len()`.
        #[inline(always)]
        #[track_caller]
        pub fn $exchange(&self, index: usize, value: T) -> T {
            let p = self.atomic_element(index);
            // SAFETY: as in `atomic_add`.
            unsafe { T::atomic_exchange(p, value, $crate::atomic::Space::$scope) }
        }

        /// Stores `new` at element `index` if it holds `current` (compared bit for bit):
        /// `Ok(old)` if it did, `Err(old)` with the value found if not.
        ///
        /// # Panics
        /// If `index >= self.len()`.
        #[inline(always)]
        #[track_caller]
        pub fn $cas(&self, index: usize, current: T, new: T) -> Result<T, T> {
            let p = self.atomic_element(index);
            // SAFETY: as in `atomic_add`.
            let old = unsafe {
                T::atomic_compare_exchange(p, current, new, $crate::atomic::Space::$scope)
            };
            if old.bits() == current.bits() {
                Ok(old)
            } else {
                Err(old)
            }
        }
    };
}
pub(crate) use atomic_methods;

#[cfg(not(target_arch = "nvptx64"))]
mod imp {
    use super::{sealed::Sealed, Atomic, Space};
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
                    match cell.compare_exchange(current.to_bits(), new.to_bits(), Relaxed, Relaxed)
                    {
                        Ok(old) | Err(old) => <$t>::from_bits(old),
                    }
                }
            }
        };
    }
    float!(f32, AtomicU32);
    float!(f64, AtomicU64);
}

#[cfg(target_arch = "nvptx64")]
mod imp {
    use super::{sealed::Sealed, Atomic, Space};
    use core::arch::asm;

    /// One `atom.relaxed.<scope>.<op>` with the scope chosen at compile time (calls inline).
    /// `Space::Block` is a `Shared` element, whose shared-window address `$p` carries (the
    /// trait's contract), so it is `atom.shared` (SASS `ATOMS`); the other spaces are an `Out`
    /// element, global memory, so `atom.global` (at `.gpu` or `.cta` scope). Through a generic address ptxas emits a generic
    /// `ATOM` plus a test of the address and a shared-memory fallback loop.
    macro_rules! atom {
        ($op:literal, $reg:ident, $p:expr, $v:expr, $scope:expr) => {{
            let old;
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
        ($ty:literal, $reg:ident, $p:expr, $current:expr, $new:expr, $scope:expr) => {{
            let old;
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

    macro_rules! integer {
        ($t:ty, $bits:ty, $reg:ident, $add:literal, $min:literal, $max:literal, $exch:literal, $b:literal) => {
            impl Sealed for $t {}
            impl Atomic for $t {
                #[inline(always)]
                fn bits(self) -> u64 {
                    self as $bits as u64
                }
                #[inline(always)]
                unsafe fn atomic_add(p: *mut $t, v: $t, scope: Space) -> $t {
                    let old: $bits = atom!($add, $reg, p, v as $bits, scope);
                    old as $t
                }
                #[inline(always)]
                unsafe fn atomic_sub(p: *mut $t, v: $t, scope: Space) -> $t {
                    let old: $bits = atom!($add, $reg, p, v.wrapping_neg() as $bits, scope);
                    old as $t
                }
                #[inline(always)]
                unsafe fn atomic_min(p: *mut $t, v: $t, scope: Space) -> $t {
                    let old: $bits = atom!($min, $reg, p, v as $bits, scope);
                    old as $t
                }
                #[inline(always)]
                unsafe fn atomic_max(p: *mut $t, v: $t, scope: Space) -> $t {
                    let old: $bits = atom!($max, $reg, p, v as $bits, scope);
                    old as $t
                }
                #[inline(always)]
                unsafe fn atomic_exchange(p: *mut $t, v: $t, scope: Space) -> $t {
                    let old: $bits = atom!($exch, $reg, p, v as $bits, scope);
                    old as $t
                }
                #[inline(always)]
                unsafe fn atomic_compare_exchange(
                    p: *mut $t,
                    current: $t,
                    new: $t,
                    scope: Space,
                ) -> $t {
                    let old: $bits = cas!($b, $reg, p, current as $bits, new as $bits, scope);
                    old as $t
                }
            }
        };
    }
    integer!(u32, u32, reg32, "add.u32", "min.u32", "max.u32", "exch.b32", "b32");
    integer!(i32, u32, reg32, "add.u32", "min.s32", "max.s32", "exch.b32", "b32");
    integer!(u64, u64, reg64, "add.u64", "min.u64", "max.u64", "exch.b64", "b64");
    integer!(i64, u64, reg64, "add.u64", "min.s64", "max.s64", "exch.b64", "b64");

    macro_rules! float {
        ($t:ty, $bits:ty, $reg:ident, $add:literal, $exch:literal, $b:literal) => {
            impl Sealed for $t {}
            impl Atomic for $t {
                #[inline(always)]
                fn bits(self) -> u64 {
                    self.to_bits() as u64
                }
                #[inline(always)]
                unsafe fn atomic_add(p: *mut $t, v: $t, scope: Space) -> $t {
                    let old: $bits = atom!($add, $reg, p, v.to_bits(), scope);
                    <$t>::from_bits(old)
                }
                #[inline(always)]
                unsafe fn atomic_sub(p: *mut $t, v: $t, scope: Space) -> $t {
                    let old: $bits = atom!($add, $reg, p, (-v).to_bits(), scope);
                    <$t>::from_bits(old)
                }
                #[inline(always)]
                unsafe fn atomic_min(p: *mut $t, v: $t, scope: Space) -> $t {
                    // SAFETY: forwarded from the caller.
                    unsafe { update(p, scope, |old| if v < old || old != old { v } else { old }) }
                }
                #[inline(always)]
                unsafe fn atomic_max(p: *mut $t, v: $t, scope: Space) -> $t {
                    // SAFETY: forwarded from the caller.
                    unsafe { update(p, scope, |old| if v > old || old != old { v } else { old }) }
                }
                #[inline(always)]
                unsafe fn atomic_exchange(p: *mut $t, v: $t, scope: Space) -> $t {
                    let old: $bits = atom!($exch, $reg, p, v.to_bits(), scope);
                    <$t>::from_bits(old)
                }
                #[inline(always)]
                unsafe fn atomic_compare_exchange(
                    p: *mut $t,
                    current: $t,
                    new: $t,
                    scope: Space,
                ) -> $t {
                    let old: $bits = cas!($b, $reg, p, current.to_bits(), new.to_bits(), scope);
                    <$t>::from_bits(old)
                }
            }
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
            impl Sealed for $t {}
            impl Atomic for $t {
                #[inline(always)]
                fn bits(self) -> u64 {
                    self as $bits as u64
                }
                #[inline(always)]
                unsafe fn atomic_add(p: *mut $t, v: $t, scope: Space) -> $t {
                    // SAFETY: forwarded from the caller.
                    unsafe { word_update(p, scope, |old: $t| old.wrapping_add(v)) }
                }
                #[inline(always)]
                unsafe fn atomic_sub(p: *mut $t, v: $t, scope: Space) -> $t {
                    // SAFETY: forwarded from the caller.
                    unsafe { word_update(p, scope, |old: $t| old.wrapping_sub(v)) }
                }
                #[inline(always)]
                unsafe fn atomic_min(p: *mut $t, v: $t, scope: Space) -> $t {
                    // SAFETY: forwarded from the caller.
                    unsafe { word_update(p, scope, |old: $t| old.min(v)) }
                }
                #[inline(always)]
                unsafe fn atomic_max(p: *mut $t, v: $t, scope: Space) -> $t {
                    // SAFETY: forwarded from the caller.
                    unsafe { word_update(p, scope, |old: $t| old.max(v)) }
                }
                #[inline(always)]
                unsafe fn atomic_exchange(p: *mut $t, v: $t, scope: Space) -> $t {
                    // SAFETY: forwarded from the caller.
                    unsafe { word_update(p, scope, |_: $t| v) }
                }
                #[inline(always)]
                unsafe fn atomic_compare_exchange(
                    p: *mut $t,
                    current: $t,
                    new: $t,
                    scope: Space,
                ) -> $t {
                    // SAFETY: forwarded from the caller.
                    unsafe {
                        word_update(p, scope, |old: $t| if old == current { new } else { old })
                    }
                }
            }
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
}
