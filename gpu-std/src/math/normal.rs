//! The default tier's erfc and normal CDF: one branch-free formula for every input, CUDA's
//! accuracy (`erfcf` 4 ULP, `normcdff` 5 ULP) in fewer instructions.
//!
//! Both tails are e^(-a²)·h(q)/(1 + 2a) (erfc) or e^(-a²/2)·h(q)/(1 + a) (Φ(-a)) for a = |x|,
//! with h a nearly flat function (h in [1.13, 1.29] and [0.40, 0.53]) of q = (a - K)/(a + K),
//! fitted by one polynomial from a = 0 to where the result underflows; the other side is
//! 2 - erfc(a) or 1 - Φ(-a). Since h is flat, the reciprocals' small errors barely move it; the
//! square a² is kept exact (as s + t) into the exponential, a polynomial in plain IEEE arithmetic
//! (not `ex2.approx`: its 2 ULP would take CUDA's whole bound); reciprocals are `rcp.approx`
//! with one Newton step, which leaves them within about half an ULP whatever `rcp.approx`'s
//! own error.

use super::approx::rcp_ftz;
use super::exp_log::reduced;
use super::{fma, poly};

const LOG2_E: f32 = core::f32::consts::LOG2_E;
/// 1.5 · 2^23: adding it to a float of magnitude below 2^22 rounds that float to an integer.
const ROUND_SHIFT: f32 = 12_582_912.0;

// From `scripts/fast_math_coefficients.py` (fits as scripts/math_coefficients.py's).
/// h(q) = 1 + (q + 1)·G(q) for h = (1 + 2a)·exp(a²)·erfc(a) in q = (a - 2)/(a + 2), a in
/// [0, 11]: fit error 0.1067 × 2^-24 relative to h.
const ERFC_G: [f32; 11] = [
    2.7697837e-1,
    -3.6974218e-1,
    2.0371233e-1,
    -3.9661378e-2,
    -1.4564512e-2,
    6.5322695e-3,
    2.2120061e-3,
    -9.4586133e-4,
    -5.3922384e-4,
    1.0305766e-4,
    1.0839014e-4,
];
const ERFC_K: f32 = 2.0;
/// erfc(a) rounds to 0 above 10.0542: larger a are clamped here (the result stays 0).
const ERFC_CLAMP: f32 = 11.0;
/// h(q) = ½ + (q + 1)·G(q) for h = (1 + a)·exp(a²/2)·Φ(-a) in q = (a - 2.5)/(a + 2.5), a in
/// [0, 15]: fit error 0.0754 × 2^-24 relative to h.
const PHI_G: [f32; 10] = [
    -5.340339e-3,
    -8.624714e-2,
    4.8530485e-2,
    -2.4676658e-3,
    -6.2322007e-3,
    1.8517065e-4,
    1.0991028e-3,
    1.6335312e-4,
    -1.6353987e-4,
    -6.2243154e-5,
];
const PHI_K: f32 = 2.5;
/// 2^f = 1 + f·G(f) for |f| ≤ ½: fit error 0.0502 × 2^-24 relative.
const EXP2_G: [f32; 6] = [
    6.931472e-1,
    2.4022648e-1,
    5.5503596e-2,
    9.6185e-3,
    1.3390976e-3,
    1.5328944e-4,
];
/// Φ(-a) rounds to 0 above 14.1702.
const PHI_CLAMP: f32 = 15.0;

/// 1/d to about half an ULP: `rcp.approx` and one Newton step.
#[inline(always)]
fn reciprocal(d: f32) -> f32 {
    let r = rcp_ftz(d);
    fma(r, fma(-d, r, 1.0), r)
}

/// e^(-a²/w)·h(q)/(1 + 2a/w) for a in [0, clamp], w = 1 (`halved` false) or 2, with
/// h = h(-1) + (q + 1)·G(q), G given by `coeffs`, in q = (a - k)/(a + k); subnormal results
/// rounded once (by the product with 2^j).
///
/// Near a = 0, q is close to -1, where f32 resolves it only to 2^-24 (a to about 2^-24·k): so
/// h's exact value there, h(-1), is added to (q + 1)·G(q), with q + 1 = 2a/(a + k) computed
/// from a itself, to full relative precision. h, the product with the exponential and the
/// quotient by 1 + 2a/w (itself rounded once) are carried as unrounded pairs (hi + lo) to the
/// one final rounding, so that the exponential's `ex2.approx` is the main error.
#[inline(always)]
fn gaussian_tail<const N: usize>(a: f32, halved: bool, k: f32, coeffs: &[f32; N]) -> f32 {
    let r = reciprocal(a + k);
    let q = fma(-2.0 * k, r, 1.0);
    let w = if halved { 0.5 } else { 1.0 };
    // h(-1), at a = 0: erfc(0) = 1, (1 + 0)·Φ(0) = ½; both are w. h - w is exact (Sterbenz).
    let v = (a + a) * r;
    let g = poly(coeffs, q);
    let h = fma(v, g, w);
    let h_lo = fma(v, g, w - h);
    // a²/w = s + t exactly, e^-(s + t) = e·2^j.
    let b = w * a;
    let s = b * a;
    let t = fma(b, a, -s);
    // e^-(s + t) = 2^f·2^j, j = round(-(s + t)·log2 e) in [-163, 0], |f| ≤ ½: a polynomial,
    // not `ex2.approx`, whose 2 ULP would be most of CUDA's bound on its own.
    let shifted = fma(-s, LOG2_E, ROUND_SHIFT);
    let j = shifted - ROUND_SHIFT;
    let f = reduced(-s, j, -t * LOG2_E);
    let e = fma(f, poly(&EXP2_G, f), 1.0);
    // n = e·(h + h_lo) as n + n_lo.
    let n = e * h;
    let n_lo = fma(e, h_lo, fma(e, h, -n));
    // n/d as y + y_lo for d = 1 + 2a/w (rounded): the residual n - y·d is exact with an fma.
    let d = fma(2.0, b, 1.0);
    let over_d = reciprocal(d);
    let y = n * over_d;
    let y_lo = (fma(-y, d, n) + n_lo) * over_d;
    // 2^j in two normal factors: the first product is exact, the second rounds once (also to a
    // subnormal result).
    let j = shifted.to_bits() as i32 - ROUND_SHIFT.to_bits() as i32;
    let half = j >> 1;
    let pow2 = |k: i32| f32::from_bits(((k + 127) as u32) << 23);
    ((y + y_lo) * pow2(half)) * pow2(j - half)
}

/// The complementary error function erfc(x) = 1 - erf(x) = (2/√π)·∫ₓ^∞ e^(-t²) dt, branch-free.
///
/// Error: within 4 ULP of the correctly rounded erfc(x), CUDA's `erfcf` bound, on the GPU and
/// the CPU (measured: 3, with `rcp.approx`'s error modelled at the PTX ISA's bound, and 3.2 ULP
/// from the exact value on the CPU); no `ex2.approx`, so the GPU's worst case is the CPU's. Subnormal results are kept (0 above 10.0542); `erfc(-inf) = 2`,
/// `erfc(inf) = 0`, NaN gives NaN.
#[inline(always)]
pub fn erfc(x: f32) -> f32 {
    let tail = gaussian_tail(x.abs().min(ERFC_CLAMP), false, ERFC_K, &ERFC_G);
    let r = if x < 0.0 { 2.0 - tail } else { tail };
    if x.is_nan() {
        x
    } else {
        r
    }
}

/// The standard normal CDF Φ(x) = P(Z ≤ x) for Z ~ N(0, 1), branch-free, accurate in both
/// tails: Φ(x) = Φ(-|x|) for x ≤ 0 and 1 - Φ(-|x|) above.
///
/// Error: within 5 ULP of the correctly rounded Φ(x), CUDA's `normcdff` bound, on the GPU and
/// the CPU (measured as for [`erfc`]: 3, and 2.6 ULP from the exact value on the CPU). Subnormal results are kept (0 below -14.1702); `Φ(-inf) = 0`,
/// `Φ(inf) = 1`, NaN gives NaN.
#[inline(always)]
pub fn normal_cdf(x: f32) -> f32 {
    let tail = gaussian_tail(x.abs().min(PHI_CLAMP), true, PHI_K, &PHI_G);
    let r = if x > 0.0 { 1.0 - tail } else { tail };
    if x.is_nan() {
        x
    } else {
        r
    }
}
