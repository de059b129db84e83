//! [`DeviceCall`]: what `#[kernel]` wraps the receiver of `x.exp()` (and std's other float math
//! method names) in, so that a kernel runs ferrocuda-std's math on the host as on the GPU (see
//! [`DeviceMath`]). Not a public API.

use super::DeviceMath;
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
/// float `$t`.
macro_rules! routed_methods {
    ($t:ty, $receiver:ty, |$r:ident| $value:expr) => {
        impl DeviceCall<$receiver> {
            #[inline(always)]
            pub fn exp(self) -> $t {
                let $r = self.0;
                DeviceMath::exp($value)
            }
            #[inline(always)]
            pub fn exp2(self) -> $t {
                let $r = self.0;
                DeviceMath::exp2($value)
            }
            #[inline(always)]
            pub fn ln(self) -> $t {
                let $r = self.0;
                DeviceMath::ln($value)
            }
            #[inline(always)]
            pub fn log2(self) -> $t {
                let $r = self.0;
                DeviceMath::log2($value)
            }
            #[inline(always)]
            pub fn sqrt(self) -> $t {
                let $r = self.0;
                DeviceMath::sqrt($value)
            }
            #[inline(always)]
            pub fn mul_add(self, a: $t, b: $t) -> $t {
                let $r = self.0;
                DeviceMath::mul_add($value, a, b)
            }
            #[inline(always)]
            pub fn sin(self) -> $t {
                let $r = self.0;
                DeviceMath::sin($value)
            }
            #[inline(always)]
            pub fn cos(self) -> $t {
                let $r = self.0;
                DeviceMath::cos($value)
            }
            #[inline(always)]
            pub fn sin_cos(self) -> ($t, $t) {
                let $r = self.0;
                DeviceMath::sin_cos($value)
            }
            #[inline(always)]
            pub fn powf(self, y: $t) -> $t {
                let $r = self.0;
                DeviceMath::powf($value, y)
            }
        }
    };
}

routed_methods!(f32, f32, |x| x);
routed_methods!(f32, &f32, |x| *x);
routed_methods!(f32, &mut f32, |x| *x);
routed_methods!(f64, f64, |x| x);
routed_methods!(f64, &f64, |x| *x);
routed_methods!(f64, &mut f64, |x| *x);
