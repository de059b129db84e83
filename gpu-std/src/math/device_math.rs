//! [`DeviceMath`]: the default tier's functions for `f32` and `f64`, as methods (`x.exp()`) and
//! behind the generic functions of [`math`](super) (`math::exp(x)` for either width).

use super::{double, exp_log, normal, pow, primitives, trig};
use crate::Number;

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// The default math tier for both float widths: `x.exp()`, `x.sqrt()`, `x.powf(y)`, … on `f32`
/// and `f64`, and what [`math::exp`](super::exp) and the other generic functions call. Sealed:
/// implemented for `f32` and `f64` only. `mul_add` (one rounding) and the arithmetic come from
/// the supertrait [`Number`], which generic kernels are written against. Its bounds per width are the tables in
/// [`math`](super).
///
/// **Which code runs for method syntax.** A generic `T: DeviceMath` (or a bound that implies it)
/// calls these methods everywhere. On a concrete `f32` or `f64`, Rust prefers an inherent method
/// to a trait's, and std's float methods are inherent and visible on the host even from a
/// `no_std` crate once std is anywhere in the crate graph (checked with rustc: `x.exp()` in a
/// `#![no_std]` crate whose dependency links std runs std's `exp`). So **inside a `#[kernel]`**
/// the macro rewrites `recv.exp()` (and `exp2`, `ln`, `log2`, `sqrt`, `sin`, `cos`, `sin_cos`,
/// `powf`) to call this trait's method whenever the receiver is an
/// `f32` or `f64`, on both targets: a kernel computes the same thing on the CPU executor as on
/// the GPU. Outside a kernel body (a helper `fn` on concrete floats), the host runs std's
/// methods, within the same bounds but not always the GPU's bits: call the functions
/// (`math::exp(x)`) there, or make the helper generic over `T: DeviceMath`.
///
/// `erfc` is not a method (std has an unstable `f32::erfc`, and a stable trait method of that
/// name warns on the host): call [`math::erfc`](super::erfc).
///
/// ```
/// use ferrocuda_std::math::{self, DeviceMath};
/// fn gaussian<T: DeviceMath>(x: T) -> T {
///     (T::ZERO - x * x).exp() // this trait's exp on the host too: T is generic
/// }
/// assert_eq!(gaussian(0.5f64), math::exp(-0.25f64));
/// assert_eq!(gaussian(0.5f32), math::exp(-0.25f32));
/// assert_eq!(DeviceMath::sqrt(2.0f64), core::f64::consts::SQRT_2);
/// ```
pub trait DeviceMath: Number + sealed::Sealed {
    /// e^x: [`math::exp`](super::exp).
    fn exp(self) -> Self;
    /// 2^x: [`math::exp2`](super::exp2).
    fn exp2(self) -> Self;
    /// The natural logarithm: [`math::ln`](super::ln).
    fn ln(self) -> Self;
    /// log2 x: [`math::log2`](super::log2).
    fn log2(self) -> Self;
    /// √x, correctly rounded: [`math::sqrt`](super::sqrt).
    fn sqrt(self) -> Self;
    /// sin x: [`math::sin`](super::sin).
    fn sin(self) -> Self;
    /// cos x: [`math::cos`](super::cos).
    fn cos(self) -> Self;
    /// `(sin x, cos x)`: [`math::sin_cos`](super::sin_cos).
    fn sin_cos(self) -> (Self, Self);
    /// x^y: [`math::pow`](super::pow) (std's name for it).
    fn powf(self, y: Self) -> Self;
    /// The standard normal CDF Φ(x): [`math::normal_cdf`](super::normal_cdf).
    fn normal_cdf(self) -> Self;
    /// erfc x, for [`math::erfc`](super::erfc); not meant as a method (see above).
    #[doc(hidden)]
    fn erfc_of(self) -> Self;
}

/// `impl DeviceMath for $t`, each method one call of `$module::$function`.
macro_rules! device_math {
    ($t:ty, $($method:ident($($arg:ident),*) $(-> $ret:ty)? => $path:path;)*) => {
        impl DeviceMath for $t {
            $(
                #[inline(always)]
                fn $method(self $(, $arg: $t)*) -> device_math!(@ret $t $(, $ret)?) {
                    $path(self $(, $arg)*)
                }
            )*
        }
    };
    (@ret $t:ty) => { $t };
    (@ret $t:ty, $ret:ty) => { $ret };
}

device_math!(f32,
    exp() => exp_log::exp;
    exp2() => exp_log::exp2;
    ln() => exp_log::ln;
    log2() => exp_log::log2;
    sqrt() => primitives::sqrt_f32;
    sin() => trig::sin;
    cos() => trig::cos;
    sin_cos() -> (f32, f32) => trig::sin_cos;
    powf(y) => pow::pow;
    normal_cdf() => normal::normal_cdf;
    erfc_of() => normal::erfc;
);

device_math!(f64,
    exp() => double::exp;
    exp2() => double::exp2;
    ln() => double::ln;
    log2() => double::log2;
    sqrt() => double::sqrt;
    sin() => double::sin;
    cos() => double::cos;
    sin_cos() -> (f64, f64) => double::sin_cos;
    powf(y) => double::pow;
    normal_cdf() => double::normal_cdf;
    erfc_of() => double::erfc;
);
