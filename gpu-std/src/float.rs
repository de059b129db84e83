//! [`Float`]: `x.exp()`, `x.sqrt()` and the rest of [`math`](crate::math) as methods on `f32`.

use crate::math;
use crate::Number;

/// The functions of [`math`](crate::math) as `f32` methods, so that kernels can write
/// `x.exp()`, `x.sqrt()` and `a.mul_add(b, c)` as in ordinary Rust. `mul_add` (one rounding:
/// [`math::fma`]) and the arithmetic come from the supertrait [`Number`], which generic kernels
/// are written against.
///
/// `core` has no `exp` or `ln` for the GPU: without this trait in scope, `x.exp()` compiles on
/// the host (where std's inherent methods are visible, even from a `no_std` crate) and fails
/// only in the PTX build. Bring it in with `use ferrocuda_std::prelude::*;` (or
/// `use ferrocuda_std::math::Float;`).
///
/// **Which code runs.** On the GPU these methods are the only candidates and call the default tier
/// of [`math`](crate::math) (CUDA's accuracy, through the special function unit where CUDA uses
/// it). On the host, std's inherent methods of the same name win over any trait: the CPU executor
/// runs std's `exp`, `exp2`, `ln`, `sin`, `cos`, `sin_cos` and `powf`, which are within the same bounds but
/// not the GPU's bits; `sqrt` and `mul_add` are correctly rounded everywhere, so they agree to the
/// bit. Where the CPU executor must give the GPU's exact bits, call the functions of
/// [`math::reproducible`](crate::math::reproducible): the same code and bits on both. The methods
/// without a std namesake (`sinpi`, `normal_cdf`, the `fast_` ones, …) are this trait's on both
/// targets.
///
/// Because std's methods win on the host, importing only this trait by name and calling only
/// `exp`/`sqrt`/… leaves the import unused there (an `unused_imports` warning on the host build
/// only): import it through the prelude glob, which the kernel's other imports keep used.
///
/// `erfc` is not a method: std has an unstable `f32::erfc`, and a stable trait method of that
/// name warns (`unstable_name_collisions`) on the host. Call [`math::erfc`].
///
/// ```
/// use ferrocuda_std::math::{self, Float};
/// let x = 0.5f32;
/// assert_eq!(x.sqrt(), math::sqrt(x)); // correctly rounded on both
/// assert_eq!(x.sinpi(), 1.0); // no std namesake: this trait's, the same bits on the GPU
/// assert!((x.exp() - math::exp(x)).abs() <= f32::EPSILON * 2.0); // std's on the host
/// ```
pub trait Float: Number {
    /// e^x: [`math::exp`].
    fn exp(self) -> Self;
    /// 2^x: [`math::exp2`].
    fn exp2(self) -> Self;
    /// The natural logarithm: [`math::ln`].
    fn ln(self) -> Self;
    /// √x, correctly rounded: [`math::sqrt`].
    fn sqrt(self) -> Self;
    /// sin x: [`math::sin`].
    fn sin(self) -> Self;
    /// cos x: [`math::cos`].
    fn cos(self) -> Self;
    /// `(sin x, cos x)`: [`math::sin_cos`].
    fn sin_cos(self) -> (Self, Self);
    /// x^y: [`math::pow`] (std's name for it).
    fn powf(self, y: Self) -> Self;
    /// `(sin(πx), cos(πx))`: [`math::sincospi`].
    fn sincospi(self) -> (Self, Self);
    /// sin(πx): [`math::sinpi`].
    fn sinpi(self) -> Self;
    /// cos(πx): [`math::cospi`].
    fn cospi(self) -> Self;
    /// The standard normal CDF Φ(x): [`math::normal_cdf`].
    fn normal_cdf(self) -> Self;
    /// Fast e^x on the special function unit: [`math::fast_exp`].
    fn fast_exp(self) -> Self;
    /// Fast 2^x: [`math::fast_exp2`].
    fn fast_exp2(self) -> Self;
    /// Fast ln x: [`math::fast_ln`].
    fn fast_ln(self) -> Self;
    /// Fast log2 x: [`math::fast_log2`].
    fn fast_log2(self) -> Self;
}

impl Float for f32 {
    #[inline]
    fn exp(self) -> f32 {
        math::exp(self)
    }
    #[inline]
    fn exp2(self) -> f32 {
        math::exp2(self)
    }
    #[inline]
    fn ln(self) -> f32 {
        math::ln(self)
    }
    #[inline(always)]
    fn sqrt(self) -> f32 {
        math::sqrt(self)
    }
    #[inline]
    fn sin(self) -> f32 {
        math::sin(self)
    }
    #[inline]
    fn cos(self) -> f32 {
        math::cos(self)
    }
    #[inline]
    fn sin_cos(self) -> (f32, f32) {
        math::sin_cos(self)
    }
    #[inline]
    fn powf(self, y: f32) -> f32 {
        math::pow(self, y)
    }
    #[inline]
    fn sincospi(self) -> (f32, f32) {
        math::sincospi(self)
    }
    #[inline]
    fn sinpi(self) -> f32 {
        math::sinpi(self)
    }
    #[inline]
    fn cospi(self) -> f32 {
        math::cospi(self)
    }
    #[inline]
    fn normal_cdf(self) -> f32 {
        math::normal_cdf(self)
    }
    #[inline]
    fn fast_exp(self) -> f32 {
        math::fast_exp(self)
    }
    #[inline]
    fn fast_exp2(self) -> f32 {
        math::fast_exp2(self)
    }
    #[inline]
    fn fast_ln(self) -> f32 {
        math::fast_ln(self)
    }
    #[inline]
    fn fast_log2(self) -> f32 {
        math::fast_log2(self)
    }
}
