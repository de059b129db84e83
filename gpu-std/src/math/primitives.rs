//! The f32 building blocks every function of the default and reproducible tiers is written with:
//! one-instruction `fma`, `sqrt` and `trunc` (PTX on the GPU, IEEE on the host) and Horner's rule.
//! The lowest layer of [`math`](super): it imports nothing else of the crate.

/// `a·b + c` with one rounding (IEEE fused multiply-add): PTX `fma.rn.f32` on the GPU, the
/// C library's `fmaf` (an FMA instruction where the CPU has one) on the host.
#[inline(always)]
pub(crate) fn fma_f32(a: f32, b: f32, c: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    {
        core::intrinsics::fmaf32(a, b, c)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        a.mul_add(b, c)
    }
}

/// √x, correctly rounded (0.5 ULP): PTX `sqrt.rn.f32` on the GPU, IEEE `sqrtss` on the host.
/// `sqrt(-0) = -0`, `sqrt(x < 0) = NaN`, `sqrt(inf) = inf`.
#[inline(always)]
pub(crate) fn sqrt_f32(x: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    {
        core::intrinsics::sqrtf32(x)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        x.sqrt()
    }
}

/// x rounded towards zero to an integer: PTX `cvt.rzi.f32.f32` on the GPU, IEEE on the host.
#[inline(always)]
pub(crate) fn trunc_f32(x: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    {
        core::intrinsics::truncf32(x)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        x.trunc()
    }
}

/// Horner's rule with fused multiply-adds: `c[0] + x·(c[1] + x·(…))`.
#[inline(always)]
pub(crate) fn poly<const N: usize>(c: &[f32; N], x: f32) -> f32 {
    let mut p = c[N - 1];
    let mut i = N - 1;
    while i > 0 {
        i -= 1;
        p = fma_f32(p, x, c[i]);
    }
    p
}
