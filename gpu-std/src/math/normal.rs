//! The default tier's erfc and normal CDF: one branch-free formula for every input, CUDA's
//! accuracy (`erfcf` 4 ULP, `normcdff` 5 ULP) in fewer instructions.
//!
//! Both tails are e^(-a²)·h(q)/(1 + 2a) (erfc) or e^(-a²/2)·h(q)/(1 + a) (Φ(-a)) for a = |x|,
//! with h a nearly flat function (h in [1, 1.29] and [0.40, 0.53]) of q = (a - K)/(a + K), fitted
//! by one polynomial from a = 0 to where the result underflows; the other side is 2 - erfc(a) or
//! 1 - Φ(-a). Since h is flat, `rcp.approx`'s error in q barely moves it; the square a² is kept
//! exact (as s + t) into the exponential, a polynomial in plain IEEE arithmetic (not
//! `ex2.approx`: its 2 ULP, relative 2^-22 at worst, would be up to 4 ULP of the product, all of
//! CUDA's bound); the quotient by 1 + 2a is one `rcp.approx` with the exact residual's
//! correction, which leaves it within half an ULP whatever `rcp.approx`'s own error.

use super::approx::rcp_ftz;
use super::primitives::{fma_f32 as fma, poly};

const LOG2_E: f32 = core::f32::consts::LOG2_E;
/// log2(e)'s low part (log2(e) - `LOG2_E` = 1.925963e-8) over `LOG2_E`.
const LOG2_E_LO_RATIO: f32 = 1.334_975_8e-8;
/// 1.5·2^23 + 127 + 64: `SHIFT_BIASED_64 + j` for an integer j in [-190, 63] has j + 64 + 127
/// in its low bits, which shifted left by 23 are the bits of 2^(j + 64).
const SHIFT_BIASED_64: f32 = 12_583_103.0;
/// 2^64 and 2^65: the quotient's divisor is scaled by 2^64, which takes up the second factor of
/// 2^j = 2^(j + 64)·2^-64.
const TWO_TO_64: f32 = 18_446_744_073_709_551_616.0;
const TWO_TO_65: f32 = 36_893_488_147_419_103_232.0;

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
/// erfc(a) rounds to 0 above 10.0542: from the fit's end on, the result is 0 (NaN stays NaN).
const ERFC_ZERO_FROM: f32 = 11.0;
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
/// Φ(-a) rounds to 0 above 14.1702: from the fit's end on, the result is 0.
const PHI_ZERO_FROM: f32 = 15.0;

/// G's coefficients for the variable q/2 = v - ½, times 2 (all exact): (q + 1)·G(q) is then
/// v·Σ c_i·2^(i+1)·(v - ½)^i for v = (q + 1)/2 = a/(a + k).
const fn in_half_q<const N: usize>(c: [f32; N]) -> [f32; N] {
    let mut out = c;
    let mut i = 0;
    let mut scale = 2.0;
    while i < N {
        out[i] = scale * c[i];
        scale *= 2.0;
        i += 1;
    }
    out
}

/// e^(-a²/w)·h(q)/(1 + 2a/w) for a in [0, zero_from], w = 1 (`halved` false) or 2, with
/// h = h(-1) + (q + 1)·G(q) in q = (a - k)/(a + k), `coeffs` G's for q/2 ([`in_half_q`]);
/// subnormal results rounded once. Garbage above the fit's end, which the callers replace.
/// Two roundings matter (h's and the product n = e·h's, besides the last one): the measured
/// 2.6 ULP; CUDA's `erfcf` has its `ex2.approx` besides.
///
/// Near a = 0, q is close to -1, where f32 resolves it only to 2^-24 (a to about 2^-24·k): so
/// h's exact value there, h(-1) = w, is added to (q + 1)·G(q), with (q + 1)/2 = a/(a + k)
/// computed from a itself, to full relative precision. The exponential's argument is exact
/// (a² as s + t); the quotient by d = 1 + 2a/w is y + y_lo from d's exact residual (d's own
/// rounding included).
#[inline(always)]
fn gaussian_tail<const N: usize>(a: f32, halved: bool, k: f32, coeffs: &[f32; N]) -> f32 {
    let w = if halved { 0.5 } else { 1.0 };
    let v = a * rcp_ftz(a + k); // (q + 1)/2
    let h = fma(v, poly(coeffs, v - 0.5), w);
    // a²/w = s + t exactly, e^-(s + t) = e·2^j.
    let b = w * a;
    let s = b * a;
    let t = fma(b, a, -s);
    // j = round(-(s + t)·log2 e) in [-175, 0], f the rest, |f| ≤ ½.
    let shifted = fma(-s, LOG2_E, SHIFT_BIASED_64);
    let j = shifted - SHIFT_BIASED_64;
    // f = -(s + t)·log2(e) - j with log2(e) to 48 bits: -s·log2(e) - j rounded once, plus
    // (t + s·κ)·log2(e) for κ = LOG2_E_LO/LOG2_E, rounded into f.
    let f = fma(-fma(s, LOG2_E_LO_RATIO, t), LOG2_E, fma(-s, LOG2_E, -j));
    // n = e·h with e = 1 + f·G(f), rounded once.
    let n = fma(f * poly(&EXP2_G, f), h, h);
    // n/d·2^-64 as y + y_lo: d = 2^64·(1 + 2b), d_lo its rounding error (2^64 - d is exact:
    // d ≥ 2^64), and 2^j = 2^(j + 64)·2^-64 with 2^-64 in the quotient, so that the last
    // product is the one rounding into subnormal results.
    let d = fma(TWO_TO_65, b, TWO_TO_64);
    let d_lo = fma(TWO_TO_65, b, TWO_TO_64 - d);
    let over_d = rcp_ftz(d);
    let y = n * over_d;
    let y_lo_over = fma(-y, d_lo, fma(-y, d, n)); // (y_lo·d)
    fma(y_lo_over, over_d, y) * f32::from_bits(shifted.to_bits() << 23)
}

/// The complementary error function erfc(x) = 1 - erf(x) = (2/√π)·∫ₓ^∞ e^(-t²) dt, branch-free.
///
/// Error: within 4 ULP of the correctly rounded erfc(x), CUDA's `erfcf` bound, on the GPU and
/// the CPU (measured: 3, with `rcp.approx`'s error modelled at the PTX ISA's bound, and 2.6 ULP
/// from the exact value on the CPU); no `ex2.approx`, so the GPU's worst case is the CPU's.
/// 47 SASS instructions for sm_90, as CUDA's `erfcf`. Subnormal results are kept (0 above
/// 10.0542); `erfc(-inf) = 2`, `erfc(inf) = 0`, NaN gives NaN.
#[inline(always)]
pub fn erfc(x: f32) -> f32 {
    let a = x.abs();
    let tail = gaussian_tail(a, false, ERFC_K, &in_half_q(ERFC_G));
    let tail = if a > ERFC_ZERO_FROM { 0.0 } else { tail };
    if x < 0.0 {
        2.0 - tail
    } else {
        tail
    }
}

/// The standard normal CDF Φ(x) = P(Z ≤ x) for Z ~ N(0, 1), branch-free, accurate in both
/// tails: Φ(x) = Φ(-|x|) for x ≤ 0 and 1 - Φ(-|x|) above.
///
/// Error: within 5 ULP of the correctly rounded Φ(x), CUDA's `normcdff` bound, on the GPU and
/// the CPU (measured as for [`erfc`]: 3, and 2.5 ULP from the exact value on the CPU). 47 SASS
/// instructions for sm_90 (CUDA's `normcdff`: 64). Subnormal results are kept (0 below
/// -14.1702); `Φ(-inf) = 0`, `Φ(inf) = 1`, NaN gives NaN.
#[inline(always)]
pub fn normal_cdf(x: f32) -> f32 {
    let a = x.abs();
    let tail = gaussian_tail(a, true, PHI_K, &in_half_q(PHI_G));
    let tail = if a > PHI_ZERO_FROM { 0.0 } else { tail };
    if x > 0.0 {
        1.0 - tail
    } else {
        tail
    }
}
