//! The default tier as free functions generic over the float width: `math::exp(x)` for an `f32`
//! or an `f64` x, each one call of [`DeviceMath`]'s method for that width. Their bounds per
//! width are the tables in [`math`](super).

use super::device_math::DeviceMath;
use crate::Number;

/// e^x. f32: within 3 ULP on the GPU (`ex2.approx` after CUDA's reduction; CUDA's `expf`: 2),
/// 1 on the CPU. f64: within 1 ULP (CUDA's `exp`: 1), the same bits on the GPU and the CPU.
/// `exp(-inf) = 0`, `exp(inf) = inf`, NaN gives NaN.
#[inline(always)]
pub fn exp<T: DeviceMath>(x: T) -> T {
    x.exp()
}

/// 2^x. f32: PTX `ex2.approx` on the GPU (2 ULP), correctly rounded on the CPU. f64: within
/// 1 ULP, exact at integers, the same bits on both.
#[inline(always)]
pub fn exp2<T: DeviceMath>(x: T) -> T {
    x.exp2()
}

/// The natural logarithm, within 1 ULP for both widths (CUDA's `logf`/`log`: 1; f64 measured
/// 0.5: a double-double logarithm rounded once), the same bits on the GPU and the CPU.
/// `ln(±0) = -inf`, `ln(x < 0) = NaN`, `ln(inf) = inf`.
#[inline(always)]
pub fn ln<T: DeviceMath>(x: T) -> T {
    x.ln()
}

/// log2 x, within 1 ULP for both widths (CUDA: 1), the same bits on the GPU and the CPU; exact
/// for powers of two.
#[inline(always)]
pub fn log2<T: DeviceMath>(x: T) -> T {
    x.log2()
}

/// √x, correctly rounded: PTX `sqrt.rn.f32`/`sqrt.rn.f64` on the GPU, IEEE on the host.
/// `sqrt(-0) = -0`, `sqrt(x < 0) = NaN`, `sqrt(inf) = inf`.
#[inline(always)]
pub fn sqrt<T: DeviceMath>(x: T) -> T {
    x.sqrt()
}

/// `a·b + c` with one rounding (IEEE fused multiply-add): PTX `fma.rn` on the GPU, the C
/// library's `fma` (an FMA instruction where the CPU has one) on the host.
#[inline(always)]
pub fn fma<T: DeviceMath>(a: T, b: T, c: T) -> T {
    Number::mul_add(a, b, c)
}

/// sin x. f32: within 2 ULP (measured 1.49; CUDA's `sinf`: 2). f64: musl's `sin` (Payne-Hanek
/// reduction for large |x|), within 1 ULP (CUDA's `sin`: 2). The same bits on the GPU and the
/// CPU for both.
#[inline(always)]
pub fn sin<T: DeviceMath>(x: T) -> T {
    x.sin()
}

/// cos x, as [`sin`].
#[inline(always)]
pub fn cos<T: DeviceMath>(x: T) -> T {
    x.cos()
}

/// `(sin x, cos x)` from one argument reduction, each as [`sin`] and [`cos`].
#[inline(always)]
pub fn sin_cos<T: DeviceMath>(x: T) -> (T, T) {
    x.sin_cos()
}

/// x^y with C99's special cases (`pow(x, ±0) = 1`, `pow(1, y) = 1`, negative x with integer y,
/// …). f32: within 4 ULP on the GPU (CUDA's `powf`: 4), 1 on the CPU. f64: e^(y·ln x) with ln x
/// in double-double, within 2 ULP (CUDA's `pow`: 2), the same bits on both.
#[inline(always)]
pub fn pow<T: DeviceMath>(x: T, y: T) -> T {
    x.powf(y)
}

/// The complementary error function erfc x = 1 - erf x, without the cancellation for large x.
/// f32: within 4 ULP (CUDA's `erfcf`: 4). f64: musl's `erfc`, within 4 ULP (CUDA's `erfc`: 4),
/// the same bits on the GPU and the CPU. `erfc(-inf) = 2`, `erfc(inf) = 0`.
#[inline(always)]
pub fn erfc<T: DeviceMath>(x: T) -> T {
    x.erfc_of()
}

/// The standard normal CDF Φ(x) = erfc(-x/√2)/2. f32: within 5 ULP (CUDA's `normcdff`: 5). f64:
/// with -x/√2 carried to 106 bits into a first-order correction of erfc, within 5 ULP (CUDA's
/// `normcdf`: 5), the same bits on both. `normal_cdf(-inf) = 0`, `normal_cdf(inf) = 1`.
#[inline(always)]
pub fn normal_cdf<T: DeviceMath>(x: T) -> T {
    x.normal_cdf()
}
