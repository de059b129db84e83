//! The f64 standard normal CDF, Φ(x) = erfc(-x/√2)/2, with -x/√2 carried to 106 bits.
//!
//! erfc magnifies the relative error of its argument by about 2z² (z = -x/√2): rounding -x/√2 to
//! f64 alone would cost Φ(-38) over a thousand ULPs. So the argument is z + dz exactly
//! (dz the rounding error of x·(1/√2)), and erfc(z + dz) = erfc(z) - dz·(2/√π)·e^(-z²), to
//! first order (the next term is dz² times smaller).

use super::exp::exp;
use super::ieee::{erfc, fma};

/// 1/√2 in two parts (the second is 1/√2 minus the first).
const FRAC_1_SQRT_2: f64 = core::f64::consts::FRAC_1_SQRT_2;
const FRAC_1_SQRT_2_TAIL: f64 = -4.833_646_656_726_457e-17;
const FRAC_2_SQRT_PI: f64 = core::f64::consts::FRAC_2_SQRT_PI;

/// Φ(x), within 5 ULP for every input (CUDA's `normcdf()`: 5; measured on the reference set: see
/// the table in [`math`](crate::math)). 0 below -38.4674, 1 above 8.3; `normal_cdf(-inf) = 0`,
/// `normal_cdf(inf) = 1`, NaN gives NaN.
#[inline(always)]
pub(crate) fn normal_cdf(x: f64) -> f64 {
    let p = x * FRAC_1_SQRT_2;
    // x/√2 - p, exact to 2^-106 relative; 0 for ±inf (where fma(inf, h, -inf) would be NaN).
    let p_error = if x.is_finite() {
        fma(x, FRAC_1_SQRT_2, -p) + x * FRAC_1_SQRT_2_TAIL
    } else {
        0.0
    };
    let z = -p;
    let slope = FRAC_2_SQRT_PI * exp(-(z * z)); // -d erfc/dz at z
    0.5 * fma(p_error, slope, erfc(z))
}
