//! The f64 default tier: the functions behind [`math::exp`](crate::math::exp) and the others for
//! `f64` (reached through [`DeviceMath`](crate::math::DeviceMath)).
//!
//! The GPU has no special function unit for f64 (CUDA's double-precision functions are
//! polynomials too), so every function here is plain IEEE arithmetic: **the same bits on the GPU
//! as on the CPU executor**, within CUDA's double-precision bounds. `exp`, `exp2`,
//! `ln`, `log2` (one double-double logarithm, no division), `normal_cdf` and `pow` (that
//! logarithm into `exp`) are written here; `sin`, `cos` and `erfc` are the `libm` crate's (musl's FreeBSD-derived algorithms, in Rust,
//! `no_std`, which build for nvptx64 as they are); `sqrt` and `fma` are single PTX instructions.

mod exp;
mod log;
mod normal;
mod pow;

pub(crate) use exp::{exp, exp2};
pub(crate) use log::{ln, log2};
pub(crate) use normal::normal_cdf;
pub(crate) use pow::pow;

/// `a·b + c` with one rounding: PTX `fma.rn.f64` on the GPU, `f64::mul_add` on the host.
#[inline(always)]
pub(crate) fn fma(a: f64, b: f64, c: f64) -> f64 {
    #[cfg(target_arch = "nvptx64")]
    {
        core::intrinsics::fmaf64(a, b, c)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        a.mul_add(b, c)
    }
}

/// √x, correctly rounded: PTX `sqrt.rn.f64` on the GPU, IEEE `sqrtsd` on the host.
#[inline(always)]
pub(crate) fn sqrt(x: f64) -> f64 {
    #[cfg(target_arch = "nvptx64")]
    {
        core::intrinsics::sqrtf64(x)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        x.sqrt()
    }
}

/// sin x (musl's `sin`, Payne-Hanek reduction for large |x|: below 1 ULP).
#[inline(always)]
pub(crate) fn sin(x: f64) -> f64 {
    libm::sin(x)
}

/// cos x (musl's `cos`).
#[inline(always)]
pub(crate) fn cos(x: f64) -> f64 {
    libm::cos(x)
}

/// `(sin x, cos x)` from one reduction (musl's `sincos`).
#[inline(always)]
pub(crate) fn sin_cos(x: f64) -> (f64, f64) {
    libm::sincos(x)
}

/// erfc x (musl's `erfc`, rational approximations on five intervals).
#[inline(always)]
pub(crate) fn erfc(x: f64) -> f64 {
    libm::erfc(x)
}
