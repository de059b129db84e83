//! f64 ln and log2 from one double-double logarithm (also `pow`'s): x = 2^k·m with m in
//! [√½, √2), ln m = 2·atanh(s) with s = (m - 1)/(m + 1) to 106 bits, the quotient by a
//! reciprocal from Newton's iteration (no division, no table, no approximate instruction: the
//! same bits on the GPU and the CPU). The double-double rounded once: within 0.5 ULP plus about
//! 2^-40 ULP, so nearly always correctly rounded.

use super::exp::{two_sum, LN2_HI, LN2_LO};
use super::ieee::fma;

/// log2(e) in two parts.
const LOG2_E: f64 = core::f64::consts::LOG2_E;
const LOG2_E_TAIL: f64 = 2.035_527_374_093_103_3e-17;
/// The linear minimax start for 1/d on [1 + √½, 1 + √2]: within 1.5% (6 bits).
const RECIPROCAL_A: f64 = 0.985_061_500_048_344_7;
const RECIPROCAL_B: f64 = 0.239_015_999_226_484_12;

/// 1/d for d in [1 + √½, 1 + √2], within an ULP or two: the linear start and four Newton steps
/// (6, 12, 24, 48, then 53 bits), eight fused multiply-adds.
#[inline(always)]
fn reciprocal_near_two(d: f64) -> f64 {
    let mut q = fma(-RECIPROCAL_B, d, RECIPROCAL_A);
    let mut i = 0;
    while i < 4 {
        q = fma(q, fma(-d, q, 1.0), q);
        i += 1;
    }
    q
}

/// The bits of √½: `bits(x) - bits(√½)` has k in its exponent field for x in 2^k·[√½, √2).
const SQRT_HALF_BITS: u64 = 0x3fe6_a09e_667f_3bcd;
const TWO_THIRDS: f64 = 0.666_666_666_666_666_6;
const TWO_THIRDS_TAIL: f64 = 3.700_743_415_417_188e-17;
/// 2/(2j + 5) for j = 0..=9: ln(1+f) = 2s + (2/3)s³ + s⁵·Σ (2/(2j+5))·s^(2j), s = f/(2+f),
/// |s| ≤ 0.1716; the first term left out is below 2^-65 of the sum.
const ATANH_TAIL: [f64; 10] = [
    2.0 / 5.0,
    2.0 / 7.0,
    2.0 / 9.0,
    2.0 / 11.0,
    2.0 / 13.0,
    2.0 / 15.0,
    2.0 / 17.0,
    2.0 / 19.0,
    2.0 / 21.0,
    2.0 / 23.0,
];

/// `a·b` as a double-double, exactly.
#[inline(always)]
pub(super) fn two_product(a: f64, b: f64) -> (f64, f64) {
    let p = a * b;
    (p, fma(a, b, -p))
}

/// ln x for finite x > 0 as `(hi, lo)`, hi + lo within about 2^-100 of ln x relative.
#[inline(always)]
pub(super) fn ln_double_double(x: f64) -> (f64, f64) {
    let tiny = x < f64::MIN_POSITIVE;
    let x = if tiny {
        x * 18_014_398_509_481_984.0
    } else {
        x
    }; // 2^54
    let shifted = x.to_bits().wrapping_sub(SQRT_HALF_BITS);
    let k = ((shifted as i64) >> 52) as f64 - if tiny { 54.0 } else { 0.0 };
    let m = f64::from_bits((shifted & 0x000f_ffff_ffff_ffff) + SQRT_HALF_BITS);
    let f = m - 1.0; // exact
                     // s = f / (2 + f) to 106 bits: the quotient, then the remainder's share.
    let (d, d_error) = (2.0 + f, (2.0 - (2.0 + f)) + f);
    let q = reciprocal_near_two(d);
    let s = f * q;
    let s_tail = (fma(-s, d, f) - s * d_error) * q;
    // (2/3)·s³ to 106 bits.
    let (z, z_error) = two_product(s, s);
    let z_tail = z_error + 2.0 * s * s_tail;
    let (c, c_error) = two_product(z, s);
    let c_tail = c_error + (z_tail * s + z * s_tail);
    let (t, t_error) = two_product(TWO_THIRDS, c);
    let t_tail = t_error + (TWO_THIRDS * c_tail + TWO_THIRDS_TAIL * c);
    // The rest of the series, in plain f64 (below 2^-12 of the sum).
    let mut q = ATANH_TAIL[ATANH_TAIL.len() - 1];
    let mut i = ATANH_TAIL.len() - 1;
    while i > 0 {
        i -= 1;
        q = fma(q, z, ATANH_TAIL[i]);
    }
    let rest = c * z * q;
    // k·ln 2 + 2s + t + the small parts, the big ones summed exactly.
    let (a, a_error) = two_sum(k * LN2_HI, 2.0 * s);
    let (b, b_error) = two_sum(a, t);
    let small = a_error + b_error + k * LN2_LO + 2.0 * s_tail + t_tail + rest;
    let hi = b + small;
    (hi, (b - hi) + small)
}

/// `r` for finite x > 0, else the logarithm's special values: -inf at ±0, NaN below 0 and for
/// NaN, inf at inf.
#[inline(always)]
fn log_special(x: f64, r: f64) -> f64 {
    if x > 0.0 && x < f64::INFINITY {
        r
    } else if x == 0.0 {
        f64::NEG_INFINITY
    } else {
        x * f64::INFINITY + f64::INFINITY // inf at inf, NaN for x < 0 and NaN
    }
}

/// The natural logarithm, within 1 ULP (measured: about 0.5; CUDA's `log()`: 1).
/// `ln(±0) = -inf`, `ln(x < 0) = NaN`, `ln(inf) = inf`, `ln(1) = 0`.
#[inline(always)]
pub(crate) fn ln(x: f64) -> f64 {
    let positive = if x > 0.0 && x < f64::INFINITY { x } else { 1.0 };
    log_special(x, ln_double_double(positive).0)
}

/// log2 x, within 1 ULP (measured: about 0.5; CUDA's `log2()`: 1), exact for powers of two:
/// the double-double ln x times log2(e) to 106 bits, rounded once.
#[inline(always)]
pub(crate) fn log2(x: f64) -> f64 {
    let positive = if x > 0.0 && x < f64::INFINITY { x } else { 1.0 };
    let (hi, lo) = ln_double_double(positive);
    let (p, p_error) = two_product(hi, LOG2_E);
    log_special(x, p + (p_error + (lo * LOG2_E + hi * LOG2_E_TAIL)))
}
