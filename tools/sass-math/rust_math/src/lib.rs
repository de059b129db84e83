//! One gpu_std::math function per kernel, `out[i] = f(x[i])`, to size each function's SASS
//! (subtract `m_identity`, the harness). Pairs with ../math_micro.cu. Built to PTX by
//! ../compare.py through ../../../shared/sass/compare_sass.py (`--project` names the checkout
//! whose device crate it uses; the crate name `gpu_std` is replaced by that crate's).
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch, core_float_math))]

use gpu_std::{kernel, math, thread, Out};

macro_rules! micro {
    ($name:ident, |$v:ident| $e:expr) => {
        micro!($name: f32, |$v| $e);
    };
    ($name:ident: $t:ty, |$v:ident| $e:expr) => {
        #[kernel(same_len(x, out))]
        pub fn $name(x: &[$t], out: Out<$t>) {
            let i = thread::index_1d();
            if i < out.len() {
                let $v = x[i];
                out.set(i, $e);
            }
        }
    };
}

micro!(m_identity, |v| v);
// The default tier (CUDA's accuracy), paired with CUDA's accurate functions.
micro!(m_exp, |v| math::exp(v));
micro!(m_exp2, |v| math::exp2(v));
micro!(m_ln, |v| math::ln(v));
micro!(m_log2, |v| math::log2(v));
micro!(m_sqrt, |v| math::sqrt(v));
micro!(m_div, |v| 1.5 / v);
micro!(m_erfc, |v| math::erfc(v));
micro!(m_normal_cdf, |v| math::normal_cdf(v));
micro!(m_sin, |v| math::sin(v));
micro!(m_cos, |v| math::cos(v));
micro!(m_pow, |v| math::pow(v, v + 0.5));
// The reproducible tier, paired with the same CUDA functions.
micro!(m_exp_reproducible, |v| math::reproducible::exp(v));
micro!(m_ln_reproducible, |v| math::reproducible::ln(v));
micro!(m_erfc_reproducible, |v| math::reproducible::erfc(v));
micro!(m_normal_cdf_reproducible, |v| math::reproducible::normal_cdf(v));
// The f64 default tier, paired with CUDA's double-precision functions (the harness: the same
// instructions as `m_identity`'s, with 64-bit loads and stores).
micro!(m_exp_f64: f64, |v| math::exp(v));
micro!(m_exp2_f64: f64, |v| math::exp2(v));
micro!(m_ln_f64: f64, |v| math::ln(v));
micro!(m_log2_f64: f64, |v| math::log2(v));
micro!(m_sqrt_f64: f64, |v| math::sqrt(v));
micro!(m_sin_f64: f64, |v| math::sin(v));
micro!(m_cos_f64: f64, |v| math::cos(v));
micro!(m_pow_f64: f64, |v| math::pow(v, v + 0.5));
micro!(m_erfc_f64: f64, |v| math::erfc(v));
micro!(m_normal_cdf_f64: f64, |v| math::normal_cdf(v));
