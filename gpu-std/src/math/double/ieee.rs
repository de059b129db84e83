//! The f64 functions that are one instruction (`fma`, `sqrt`: PTX `fma.rn.f64`, `sqrt.rn.f64` on
//! the GPU) or the `libm` crate's (`sin`, `cos`, `sin_cos`, `erfc`): the layer the written
//! functions of [`double`](super) build on.

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
