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

use crate::backend::{Backend, Machine};
pub use crate::machine::Scope;

/// Orders this thread's memory accesses before the fence before those after it, as seen by the
/// threads of `scope` (CUDA `__threadfence_block`, `__threadfence`, `__threadfence_system`).
///
/// A fence does not wait for other threads; pair it with a flag (an atomic) that others read.
#[inline(always)]
pub fn fence(scope: Scope) {
    Machine::fence(scope)
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

/// Only the backends implement [`Atomic`] (`backend/*/atomic.rs`).
pub(crate) mod sealed {
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

/// Implements [`Atomic`] for one element type from one expression per operation, so each
/// backend's per-type file says only what the operations do and the trait's signatures stand
/// once. The names after `|` are the methods' parameters, which the expressions use.
macro_rules! element {
    (
        $t:ty,
        bits: |$x:ident| $bits:expr,
        |$p:ident, $v:ident, $current:ident, $new:ident, $scope:ident| {
            add: $add:expr,
            sub: $sub:expr,
            min: $min:expr,
            max: $max:expr,
            exchange: $exchange:expr,
            compare_exchange: $cas:expr $(,)?
        }
    ) => {
        impl $crate::atomic::sealed::Sealed for $t {}
        impl $crate::atomic::Atomic for $t {
            #[inline(always)]
            fn bits(self) -> u64 {
                let $x = self;
                $bits
            }
            #[inline(always)]
            unsafe fn atomic_add($p: *mut $t, $v: $t, $scope: $crate::atomic::Space) -> $t {
                $add
            }
            #[inline(always)]
            unsafe fn atomic_sub($p: *mut $t, $v: $t, $scope: $crate::atomic::Space) -> $t {
                $sub
            }
            #[inline(always)]
            unsafe fn atomic_min($p: *mut $t, $v: $t, $scope: $crate::atomic::Space) -> $t {
                $min
            }
            #[inline(always)]
            unsafe fn atomic_max($p: *mut $t, $v: $t, $scope: $crate::atomic::Space) -> $t {
                $max
            }
            #[inline(always)]
            unsafe fn atomic_exchange($p: *mut $t, $v: $t, $scope: $crate::atomic::Space) -> $t {
                $exchange
            }
            #[inline(always)]
            unsafe fn atomic_compare_exchange(
                $p: *mut $t,
                $current: $t,
                $new: $t,
                $scope: $crate::atomic::Space,
            ) -> $t {
                $cas
            }
        }
    };
}
pub(crate) use element;
