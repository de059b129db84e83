//! The f64 default tier: the functions behind [`math::exp`](crate::math::exp) and the others for
//! `f64` (reached through [`DeviceMath`](crate::math::DeviceMath)).
//!
//! The GPU has no special function unit for f64 (CUDA's double-precision functions are
//! polynomials too), so every function here is plain IEEE arithmetic: **the same bits on the GPU
//! as on the CPU executor**, within CUDA's double-precision bounds. `exp`, `exp2` and
//! `normal_cdf` are written here, and `pow` (y·ln x in double-double into `exp`); `sin` and
//! `cos` are fdlibm's method, with the large-argument reduction (`libm`'s) out of line; `ln`,
//! `log2` and `erfc` are the `libm` crate's
//! (musl's FreeBSD-derived algorithms, in Rust, `no_std`, which build for nvptx64 as they are);
//! `sqrt` and `fma` are single PTX instructions.

mod exp;
mod normal;
mod pow;
mod trig;

pub(crate) use exp::{exp, exp2};
pub(crate) use normal::normal_cdf;
pub(crate) use pow::pow;
pub(crate) use trig::{cos, sin, sin_cos};

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

/// ln x (musl's `log`: below 1 ULP).
#[inline(always)]
pub(crate) fn ln(x: f64) -> f64 {
    libm::log(x)
}

/// log2 x (musl's `log2`: below 1 ULP).
#[inline(always)]
pub(crate) fn log2(x: f64) -> f64 {
    libm::log2(x)
}

/// erfc x (musl's `erfc`, rational approximations on five intervals).
#[inline(always)]
pub(crate) fn erfc(x: f64) -> f64 {
    libm::erfc(x)
}
