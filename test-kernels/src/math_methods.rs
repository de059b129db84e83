//! Method syntax for ferrocuda-std's math in a kernel, both widths: `#[kernel]` routes
//! `x.exp()` and std's other float math method names to `math::DeviceMath`, so the CPU executor
//! runs ferrocuda-std's functions (not std's inherent methods) as the GPU does. For
//! `tests/math_methods.rs`.

use ferrocuda_std::prelude::*;

/// Results per input of [`routed_math_methods`], per width.
pub const ROUTED_OUTPUTS: usize = 11;

/// The free functions that [`routed_math_methods`]'s method calls must equal, for one input (the
/// tests' host side): `exp`, `exp2`, `ln`, `log2`, `sqrt`, `fma(v, v, v)`, `sin`, `cos`,
/// `pow(v, 0.75)`, `sin_cos(v).0`, and `exp` again (called on a `&f32`/`&f64` receiver).
#[inline(always)]
pub fn routed_reference<T: DeviceMath>(v: T, three_quarters: T) -> [T; ROUTED_OUTPUTS] {
    [
        math::exp(v),
        math::exp2(v),
        math::ln(v),
        math::log2(v),
        math::sqrt(v),
        math::fma(v, v, v),
        math::sin(v),
        math::cos(v),
        math::pow(v, three_quarters),
        math::sin_cos(v).0,
        math::exp(v),
    ]
}

/// `out32[11 i ..]` and `out64[11 i ..]`: the method-syntax twins of [`routed_reference`] on
/// `x32[i]` and `x64[i]`, written as a user would, on concrete `f32` and `f64` values.
#[kernel(same_len(x32, x64))]
pub fn routed_math_methods(x32: &[f32], x64: &[f64], out32: Out<f32>, out64: Out<f64>) {
    let i = thread::index_1d();
    if i < x32.len()
        && ROUTED_OUTPUTS * (i + 1) <= out32.len()
        && ROUTED_OUTPUTS * (i + 1) <= out64.len()
    {
        let v = x32[i];
        let r32 = [
            v.exp(),
            v.exp2(),
            v.ln(),
            v.log2(),
            v.sqrt(),
            v.mul_add(v, v),
            v.sin(),
            v.cos(),
            v.powf(0.75),
            v.sin_cos().0,
            x32[i..].first().map_or(0.0, |r| r.exp()),
        ];
        let w = x64[i];
        let r64 = [
            w.exp(),
            w.exp2(),
            w.ln(),
            w.log2(),
            w.sqrt(),
            w.mul_add(w, w),
            w.sin(),
            w.cos(),
            w.powf(0.75),
            w.sin_cos().0,
            x64[i..].first().map_or(0.0, |r| r.exp()),
        ];
        let mut j = 0;
        while j < ROUTED_OUTPUTS {
            out32.set(ROUTED_OUTPUTS * i + j, r32[j]);
            out64.set(ROUTED_OUTPUTS * i + j, r64[j]);
            j += 1;
        }
    }
}
