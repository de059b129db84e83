//! [`ElementIndex`]: the integer types kernel memory is indexed with, so that a port of CUDA
//! code that computes indices in `int` or `unsigned` reads `out.set(i, v)`, not
//! `out.set(i as usize, v)`, without giving up the bounds check.

mod sealed {
    pub trait Sealed {}
}

/// An index of [`Out`](crate::Out), [`Shared`](crate::Shared) and, through
/// [`Elements::at`], of a kernel's `&[T]`: `usize`, and the integers CUDA code computes
/// indices with (`u32`, `i32`, `u64`, `i64`, ...).
///
/// A negative signed index is never in bounds: it is checked as the huge `usize` its
/// sign-extension is (one unsigned compare, as for `usize`), so it fails the same bounds check,
/// and the CPU executor's report says it was negative. Sealed.
///
/// ```
/// use ferrocuda_std::{kernel, thread, Out};
/// use ferrocuda_std::index::Elements;
/// /// `out[i] = x[i - 1] + x[i + 1]` inside, computed in `i32` as the CUDA original does.
/// #[kernel]
/// pub fn neighbours(x: &[f32], out: Out<f32>) {
///     let i = thread::index_1d() as i32;
///     if i >= 1 && i + 1 < x.len() as i32 {
///         out.set(i, x.at(i - 1) + x.at(i + 1));
///     }
/// }
/// ```
pub trait ElementIndex: Copy + sealed::Sealed {
    /// The index as a `usize`; a negative one as a value no length reaches.
    fn to_index(self) -> usize;
}

/// `index` as a `usize` if it is below `len`; panics (on the GPU: traps) naming `what` if not.
///
/// The compare is in 64 bits, also for an `i32` or `u32` index: compared in its own width (one
/// 32-bit compare against `len` clamped to the type) it took fewer registers only where LLVM
/// kept many indices live (Rodinia nw before `#[kernel]` refreshed parameters at barriers), and
/// 2 to 4 more in small kernels, whose sign-extended indices LLVM folds into one address
/// computation (docs/ports.md, "Registers").
#[inline(always)]
#[track_caller]
pub(crate) fn checked_index<I: ElementIndex>(index: I, len: usize, what: &str) -> usize {
    let index = index.to_index();
    if index >= len {
        crate::mem::out_of_bounds(what, index, len);
    }
    index
}

macro_rules! unsigned_index {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl ElementIndex for $t {
            #[inline(always)]
            fn to_index(self) -> usize {
                // Lossless where usize is 64-bit (nvptx64 and the hosts the executor runs on);
                // on a narrower host a value past usize is no valid index either.
                usize::try_from(self).unwrap_or(usize::MAX)
            }
        }
    )*};
}

macro_rules! signed_index {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl ElementIndex for $t {
            #[inline(always)]
            fn to_index(self) -> usize {
                // Sign-extends: a negative index becomes at least 2^(bits-1), past any length.
                self as isize as usize
            }
        }
    )*};
}

unsigned_index!(usize, u8, u16, u32, u64);
signed_index!(isize, i8, i16, i32, i64);

/// Reading a kernel's `&[T]` at any [`ElementIndex`]: `x.at(i)` is `x[i]` for an `i32` or `u32`
/// `i`, bounds-checked as `x[i]` is (a negative index is out of bounds).
pub trait Elements<T> {
    /// The element at `index`.
    ///
    /// # Panics
    /// If `index` is negative or `>= self.len()` (on the GPU: traps).
    fn at<I: ElementIndex>(&self, index: I) -> T;
}

impl<T: Copy> Elements<T> for [T] {
    #[inline(always)]
    #[track_caller]
    fn at<I: ElementIndex>(&self, index: I) -> T {
        let index = index.to_index();
        match self.get(index) {
            Some(value) => *value,
            None => crate::mem::out_of_bounds("a slice", index, self.len()),
        }
    }
}

/// `len` and `is_empty` of a handle over `self.len` elements ([`Out`](crate::Out),
/// [`Shared`](crate::Shared), the CPU executor's `OwnedOut`): written once for the three.
macro_rules! len_methods {
    () => {
        /// The number of elements.
        #[inline(always)]
        pub fn len(&self) -> usize {
            self.len
        }

        /// Whether there are no elements.
        #[inline(always)]
        pub fn is_empty(&self) -> bool {
            self.len == 0
        }
    };
}
pub(crate) use len_methods;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_indices_are_past_every_length_and_the_rest_are_themselves() {
        assert_eq!(5u32.to_index(), 5);
        assert_eq!(5i32.to_index(), 5);
        assert_eq!(u64::MAX.to_index(), usize::MAX);
        for negative in [(-1i32).to_index(), i32::MIN.to_index(), (-1i8).to_index()] {
            assert!(negative >= 1 << 63, "{negative}");
        }
        let x = [1.0f32, 2.0, 3.0];
        assert_eq!(x.at(2i32), 3.0);
        assert_eq!(x.at(0u8), 1.0);
        let past = std::panic::catch_unwind(|| x.at(-1i32)).unwrap_err();
        let message = past.downcast_ref::<std::string::String>().unwrap();
        assert!(message.contains("negative index (-1)"), "{message}");
    }
}
