//! [`Float`]: the `f32`-only functions of [`math`](crate::math) as methods (`x.sinpi()`,
//! `x.fast_exp()`); the ones for both widths (`x.exp()`, `x.sqrt()`) are
//! [`DeviceMath`](crate::math::DeviceMath)'s, its supertrait.

use crate::math::approx;
use crate::math::device_math::DeviceMath;
use crate::math::reproducible::sincospi;

/// The `f32`-only functions of [`math`](crate::math) as methods: `sinpi`, `cospi`, `sincospi`
/// (the reproducible tier's) and the `fast_` family. Its supertrait
/// [`DeviceMath`](crate::math::DeviceMath) has `exp`, `sqrt`, `powf`, … for `f32` and `f64` (and
/// its supertrait [`Number`](crate::Number) `mul_add`); bring them in with
/// `use ferrocuda_std::prelude::*;`.
///
/// `core` has no `exp` or `ln` for the GPU: without these traits in scope, `x.exp()` compiles on
/// the host (where std's inherent methods are visible, even from a `no_std` crate) and fails
/// only in the PTX build. These methods have no std namesake, so they are this trait's on both
/// targets (for the ones with a namesake, see [`DeviceMath`](crate::math::DeviceMath)).
///
/// ```
/// use ferrocuda_std::math::{self, DeviceMath, Float};
/// let x = 0.5f32;
/// assert_eq!(x.sqrt(), math::sqrt(x)); // correctly rounded on both
/// assert_eq!(x.sinpi(), 1.0); // no std namesake: this trait's, the same bits on the GPU
/// assert!((x.exp() - math::exp(x)).abs() <= f32::EPSILON * 2.0); // std's on the host
/// ```
pub trait Float: DeviceMath {
    /// `(sin(πx), cos(πx))`: [`math::sincospi`](crate::math::sincospi).
    fn sincospi(self) -> (Self, Self);
    /// sin(πx): [`math::sinpi`](crate::math::sinpi).
    fn sinpi(self) -> Self;
    /// cos(πx): [`math::cospi`](crate::math::cospi).
    fn cospi(self) -> Self;
    /// Fast e^x on the special function unit: [`math::fast_exp`](crate::math::fast_exp).
    fn fast_exp(self) -> Self;
    /// Fast 2^x: [`math::fast_exp2`](crate::math::fast_exp2).
    fn fast_exp2(self) -> Self;
    /// Fast ln x: [`math::fast_ln`](crate::math::fast_ln).
    fn fast_ln(self) -> Self;
    /// Fast log2 x: [`math::fast_log2`](crate::math::fast_log2).
    fn fast_log2(self) -> Self;
}

impl Float for f32 {
    #[inline]
    fn sincospi(self) -> (f32, f32) {
        sincospi::sincospi(self)
    }
    #[inline]
    fn sinpi(self) -> f32 {
        sincospi::sinpi(self)
    }
    #[inline]
    fn cospi(self) -> f32 {
        sincospi::cospi(self)
    }
    #[inline]
    fn fast_exp(self) -> f32 {
        approx::fast_exp(self)
    }
    #[inline]
    fn fast_exp2(self) -> f32 {
        approx::fast_exp2(self)
    }
    #[inline]
    fn fast_ln(self) -> f32 {
        approx::fast_ln(self)
    }
    #[inline]
    fn fast_log2(self) -> f32 {
        approx::fast_log2(self)
    }
}
