//! ferrocuda-std's f64 math in kernels: the functions (`math::exp(x)` with an f64 x) and the
//! method syntax (`x.exp()`), for `tests/math_f64_kernel.rs`.

use ferrocuda_std::prelude::*;

/// Results per input of [`f64_math_functions`].
pub const F64_MATH_OUTPUTS: usize = 11;

/// What [`f64_math_functions`] computes for one `(x, y)`, callable on the host too (the tests'
/// CPU side): `exp`, `exp2`, `ln`, `log2`, `sqrt`, `sin`, `cos`, `pow(x, y)`, `erfc`,
/// `normal_cdf` of x, and `sin_cos(x).1`.
#[inline(always)]
pub fn f64_math_results(x: f64, y: f64) -> [f64; F64_MATH_OUTPUTS] {
    let (_, cos) = math::sin_cos(x);
    [
        math::exp(x),
        math::exp2(x),
        math::ln(x),
        math::log2(x),
        math::sqrt(x),
        math::sin(x),
        math::cos(x),
        math::pow(x, y),
        math::erfc(x),
        math::normal_cdf(x),
        cos,
    ]
}

/// `out[11 i ..]` = [`f64_math_results`]`(x[i], y[i])`.
#[kernel(same_len(x, y))]
pub fn f64_math_functions(x: &[f64], y: &[f64], out: Out<f64>) {
    let i = thread::index_1d();
    if i < x.len() && F64_MATH_OUTPUTS * (i + 1) <= out.len() {
        let results = f64_math_results(x[i], y[i]);
        let mut j = 0;
        while j < F64_MATH_OUTPUTS {
            out.set(F64_MATH_OUTPUTS * i + j, results[j]);
            j += 1;
        }
    }
}
