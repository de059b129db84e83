//! [`Number`]: what a generic kernel computes with, for each type a warp can shuffle.

use crate::warp::WarpValue;
use bytemuck::Pod;
use core::fmt::Debug;
use core::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Rem, Sub, SubAssign};

mod sealed {
    /// Keeps [`super::Number`] to the primitive types it is implemented for, so that methods can
    /// be added to it.
    pub trait Sealed {}
}

/// The element type of a generic kernel (`#[kernel(instances(f32, f64))] fn k<T: Number>`):
/// `f32`, `f64`, `i32`, `u32`, `i64` and `u64`, the types a warp shuffles ([`WarpValue`]),
/// with their arithmetic, `zero`/`one`, a fused [`mul_add`](Number::mul_add) and `as`
/// conversions. The math functions of the floats are [`Float`](crate::math::Float)'s.
///
/// ```
/// use ferrocuda_std::Number;
/// fn dot<T: Number>(a: &[T], b: &[T]) -> T {
///     a.iter().zip(b).fold(T::ZERO, |acc, (&x, &y)| x.mul_add(y, acc))
/// }
/// assert_eq!(dot(&[1.0f64, 2.0], &[3.0, 4.0]), 11.0);
/// assert_eq!(dot(&[1u32, 2], &[3, 4]), 11);
/// assert_eq!(f32::from_f64(0.1), 0.1f32);
/// assert_eq!(i32::from_usize(7).to_f64(), 7.0);
/// ```
pub trait Number:
    WarpValue
    + Pod
    + Default
    + Debug
    + PartialEq
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Rem<Output = Self>
    + AddAssign
    + SubAssign
    + MulAssign
    + DivAssign
    + Send
    + Sync
    + 'static
    + sealed::Sealed
{
    /// 0.
    const ZERO: Self;
    /// 1.
    const ONE: Self;
    /// The greatest value: `+∞` for floats, `MAX` for integers (the identity of a minimum).
    const GREATEST: Self;
    /// The least value: `−∞` for floats, `MIN` for integers (the identity of a maximum).
    const LEAST: Self;

    /// 0, as a function.
    #[inline(always)]
    fn zero() -> Self {
        Self::ZERO
    }

    /// 1, as a function.
    #[inline(always)]
    fn one() -> Self {
        Self::ONE
    }

    /// `self · a + b`. For floats rounded once (a fused multiply-add: one `fma.rn` on the GPU,
    /// the same correctly rounded result on the host, so the CPU executor gives the GPU's bits);
    /// for integers `self * a + b`.
    fn mul_add(self, a: Self, b: Self) -> Self;

    /// `value as Self`.
    fn from_f64(value: f64) -> Self;
    /// `value as Self`.
    fn from_f32(value: f32) -> Self;
    /// `value as Self`.
    fn from_usize(value: usize) -> Self;
    /// `self as f64`.
    fn to_f64(self) -> f64;
    /// `self as f32`.
    fn to_f32(self) -> f32;
}

/// `Number` for the primitive types, with `mul_add`'s body per type.
macro_rules! number {
    ($($t:ty: $zero:literal, $one:literal, $greatest:expr, $least:expr, |$x:ident, $a:ident, $b:ident| $mul_add:expr;)*) => {$(
        impl sealed::Sealed for $t {}
        impl Number for $t {
            const ZERO: $t = $zero;
            const ONE: $t = $one;
            const GREATEST: $t = $greatest;
            const LEAST: $t = $least;
            #[inline(always)]
            fn mul_add(self, $a: $t, $b: $t) -> $t {
                let $x = self;
                $mul_add
            }
            #[inline(always)]
            fn from_f64(value: f64) -> $t {
                value as $t
            }
            #[inline(always)]
            fn from_f32(value: f32) -> $t {
                value as $t
            }
            #[inline(always)]
            fn from_usize(value: usize) -> $t {
                value as $t
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn to_f32(self) -> f32 {
                self as f32
            }
        }
    )*};
}

number! {
    f32: 0.0, 1.0, f32::INFINITY, f32::NEG_INFINITY, |x, a, b| crate::math::primitives::fma_f32(x, a, b);
    f64: 0.0, 1.0, f64::INFINITY, f64::NEG_INFINITY, |x, a, b| fma_f64(x, a, b);
    i32: 0, 1, i32::MAX, i32::MIN, |x, a, b| x * a + b;
    u32: 0, 1, u32::MAX, u32::MIN, |x, a, b| x * a + b;
    i64: 0, 1, i64::MAX, i64::MIN, |x, a, b| x * a + b;
    u64: 0, 1, u64::MAX, u64::MIN, |x, a, b| x * a + b;
}

/// `a·b + c` with one rounding: PTX `fma.rn.f64` on the GPU, std's (correctly rounded)
/// `f64::mul_add` on the host.
#[inline(always)]
fn fma_f64(a: f64, b: f64, c: f64) -> f64 {
    #[cfg(target_arch = "nvptx64")]
    {
        core::intrinsics::fmaf64(a, b, c)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        f64::mul_add(a, b, c)
    }
}

#[cfg(test)]
mod tests {
    use super::Number;

    #[test]
    fn float_mul_add_rounds_once() {
        // (1 + 2⁻²⁷)² = 1 + 2⁻²⁶ + 2⁻⁵⁴: the last term is lost to a multiply then an add, kept
        // by one rounding of the whole.
        let (a, b) = (1.0f64 + 2f64.powi(-27), -(1.0f64 + 2f64.powi(-26)));
        assert_eq!(a.mul_add(a, b), 2f64.powi(-54));
        assert_eq!(Number::mul_add(a, a, b), 2f64.powi(-54));
        assert_eq!(a * a + b, 0.0);
        let (a32, b32) = (1.0f32 + 2f32.powi(-12), -(1.0f32 + 2f32.powi(-11)));
        assert_eq!(Number::mul_add(a32, a32, b32), 2f32.powi(-24));
    }

    #[test]
    fn identities_and_conversions() {
        fn check<T: Number>() {
            assert_eq!(T::ZERO + T::ONE, T::one());
            assert_eq!(T::zero() * T::ONE, T::ZERO);
            assert!(T::LEAST <= T::ZERO);
            assert!(T::GREATEST > T::ONE);
            assert_eq!(T::from_usize(3).to_f64(), 3.0);
            assert_eq!(T::from_f64(2.0).to_f32(), 2.0);
            assert_eq!(T::from_f32(5.0).mul_add(T::ONE, T::ONE), T::from_usize(6));
        }
        check::<f32>();
        check::<f64>();
        check::<i32>();
        check::<u32>();
        check::<i64>();
        check::<u64>();
        assert_eq!(f32::GREATEST, f32::INFINITY);
        assert_eq!(i64::LEAST, i64::MIN);
        assert_eq!(u32::from_f64(-1.0), 0, "`as` saturates");
    }
}
