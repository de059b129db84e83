//! [`DeviceCall`]: what `#[kernel]` wraps the receiver of `x.exp()` (and std's other float math
//! method names) in, so that a kernel runs ferrocuda-std's math on the host as on the GPU (see
//! [`DeviceMath`]). Not a public API.

use super::device_math::DeviceMath;
use core::ops::{Deref, DerefMut};

/// A method call's receiver, as `#[kernel]` passes it on. For `f32` and `f64` (and references
/// to them) its inherent methods, which Rust tries before any other, are [`DeviceMath`]'s. For
/// any other type it has none of them and derefs to the receiver, whose own methods (or a
/// generic `T: DeviceMath`'s trait methods) are then found as without the wrapper.
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct DeviceCall<T>(pub T);

impl<T> Deref for DeviceCall<T> {
    type Target = T;
    #[inline(always)]
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> DerefMut for DeviceCall<T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

/// The routed methods on `DeviceCall<$receiver>`, for a receiver that `$value` turns into the
/// float `$t`: each `name(args) -> result` calls `DeviceMath::name`.
macro_rules! routed_methods {
    ($t:ty, $receiver:ty, |$r:ident| $value:expr) => {
        routed_methods!(@impl $t, $receiver, |$r| $value,
            exp() -> $t, exp2() -> $t, ln() -> $t, log2() -> $t, sqrt() -> $t,
            sin() -> $t, cos() -> $t, sin_cos() -> ($t, $t), powf(y) -> $t);
    };
    (@impl $t:ty, $receiver:ty, |$r:ident| $value:expr,
        $($method:ident($($arg:ident),*) -> $ret:ty),*) => {
        impl DeviceCall<$receiver> {
            $(
                #[inline(always)]
                pub fn $method(self $(, $arg: $t)*) -> $ret {
                    let $r = self.0;
                    DeviceMath::$method($value $(, $arg)*)
                }
            )*
        }
    };
}

routed_methods!(f32, f32, |x| x);
routed_methods!(f32, &f32, |x| *x);
routed_methods!(f32, &mut f32, |x| *x);
routed_methods!(f64, f64, |x| x);
routed_methods!(f64, &f64, |x| *x);
routed_methods!(f64, &mut f64, |x| *x);
