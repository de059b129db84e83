//! The reproducible tier's exponential and logarithm ([`exp`], [`exp2`], [`ln`]) and the
//! reduction and scaling helpers [`gaussian`](super::gaussian) and
//! [`sincospi`](super::sincospi) build on; plain IEEE f32 arithmetic throughout.

use crate::math::primitives::{fma_f32 as fma, poly};

/// 1.5 · 2^23: adding it to a float of magnitude below 2^22 rounds that float to an integer.
const ROUND_SHIFT: f32 = 12_582_912.0;

/// The integer k of `ROUND_SHIFT + k` (|k| < 2^22), read from its bits.
#[inline(always)]
fn shift_to_int(shifted: f32) -> i32 {
    shifted.to_bits() as i32 - ROUND_SHIFT.to_bits() as i32
}

/// log2(e) rounded to f32.
const LOG2_E: f32 = core::f32::consts::LOG2_E;

/// ln 2 in two parts: `LN2_HI` has its 9 lowest bits zero, so `k · LN2_HI` is exact for any
/// integer `|k| < 512`; `LN2_HI + LN2_LO` is ln 2 to 48 bits.
const LN2_HI: f32 = f32::from_bits(0x3f31_7200); // 0.693145751953125
const LN2_LO: f32 = f32::from_bits(0x35bf_be8e); // 1.42860677e-6

/// ln 2 as the nearest f32, and the rest.
const LN2_F: f32 = core::f32::consts::LN_2;
const LN2_F_LO: f32 = -1.904_654_3e-9;

// The polynomial coefficients, from `scripts/math_coefficients.py` (weighted minimax fits in f64
// whose coefficients are rounded to f32 one at a time, refitting the others after each). The
// fit error is the approximation's own, before the f32 evaluation adds its roundings.

/// exp(r) = 1 + r + r²·Q(r) for |r| ≤ ln2/2: fit error 0.0524 × 2^-24.
const EXP_Q: [f32; 5] = [
    4.9999994e-1,
    1.6666521e-1,
    4.1668262e-2,
    8.36867e-3,
    1.3821039e-3,
];
/// ln(1+f) = f - f²/2 + f³·R(f) for 1+f in [√½, √2]: fit error 0.0129 × 2^-24.
const LN_R: [f32; 9] = [
    3.3333313e-1,
    -2.500001e-1,
    2.0002073e-1,
    -1.6667996e-1,
    1.4220327e-1,
    -1.2406032e-1,
    1.1883568e-1,
    -1.1671449e-1,
    6.750956e-2,
];

/// 2^k for `-126 <= k <= 127`.
#[inline(always)]
pub(super) fn pow2(k: i32) -> f32 {
    f32::from_bits(((k + 127) as u32) << 23)
}

/// `v · 2^k` with a single rounding, for `v` in [2^-10, 2) and `k` in [-190, 150]: overflow
/// gives inf and results below 2^-126 are rounded once to a subnormal (or 0).
#[inline(always)]
fn scale(v: f32, k: i32) -> f32 {
    if k < -126 {
        // The first product is exact (a normal number), the second rounds once.
        (v * pow2(k + 64)) * pow2(-64)
    } else if k > 127 {
        (v * pow2(127)) * pow2(k - 127)
    } else {
        v * pow2(k)
    }
}

/// `(y + z) · 2^-64` rounded once, where y and z are exact, |y + z| < 2^-62 and |z| is far
/// below |y|: a result below 2^-126 (subnormal or 0) rounded at its own last place, rather than
/// first to 24 bits and then again.
///
/// Adding C = ±2^-62 (2^-126 scaled by 2^64, with y's sign) puts the sum in [C, 2C), whose last
/// place is that of the subnormals (2^-149, scaled), so the second addition rounds where the
/// result does; subtracting C and scaling back are exact.
#[inline(always)]
pub(super) fn round_subnormal(y: f32, z: f32) -> f32 {
    let c = f32::from_bits(0x2080_0000 | (y.to_bits() & 0x8000_0000)); // ±2^-62
    let t = c + y;
    let t_lo = (c - t) + y; // exact (Fast2Sum: |c| > |y|)
    let sum = t + (t_lo + z);
    (sum - c) * pow2(-64)
}

/// `(hi + lo) · 2^k` with a single rounding, for hi in [0.04, 2), |lo| ≤ 2^-20·hi and `k` in
/// [-190, 150], subnormal results included (see [`round_subnormal`]).
#[inline(always)]
pub(super) fn scale_sum(hi: f32, lo: f32, k: i32) -> f32 {
    // hi = 2^hi_exp · (1.…): the result is below 2^-126 when k + hi_exp is.
    let hi_exp = ((hi.to_bits() >> 23) & 0xff) as i32 - 127;
    if k + hi_exp < -126 {
        let s = pow2(k + 64);
        round_subnormal(hi * s, lo * s)
    } else {
        scale(hi + lo, k)
    }
}

/// exp(rh + rl) for |rh| ≤ ln2/2 and |rl| ≤ 2^-10, as an unrounded sum `hi + lo` (hi the
/// rounded sum, lo below half its last place), accurate to about 2^-29 relative: the caller
/// rounds once.
#[inline(always)]
fn exp_reduced(rh: f32, rl: f32) -> (f32, f32) {
    // exp(rh) = 1 + rh + rh²·Q(rh), and exp(rh + rl) = exp(rh)·(1 + rl) ≈ that + rl + rl·rh.
    let w = fma(rh * rh, poly(&EXP_Q, rh), fma(rl, rh, rl));
    let hi = 1.0 + rh;
    // The rounding error of 1 + rh, exactly (Fast2Sum: |rh| < 1), plus w; then renormalised so
    // that lo is below half an ULP of hi.
    let lo = ((1.0 - hi) + rh) + w;
    let sum = hi + lo;
    (sum, (hi - sum) + lo)
}

/// `(hi, lo, k)` with exp(x + x_lo) = (hi + lo) · 2^k (hi + lo in [0.7, 1.42]) for |x| ≤ 110
/// and |x_lo| ≤ 2^-12.
#[inline(always)]
pub(super) fn exp_parts(x: f32, x_lo: f32) -> (f32, f32, i32) {
    // k = round(x / ln2): the fma rounds the exact product once, at the integer; the sum's
    // bits hold k as an integer too.
    let shifted = fma(x, LOG2_E, ROUND_SHIFT);
    let k = shifted - ROUND_SHIFT;
    // x - k·ln2 (Cody-Waite): the first part is exact (k·LN2_HI is exact and the difference
    // is representable), the small rest is added with its rounding error kept (Fast2Sum).
    let r0 = fma(-k, LN2_HI, x);
    let rest = fma(-k, LN2_LO, x_lo);
    let rh = r0 + rest;
    let rl = (r0 - rh) + rest;
    let (hi, lo) = exp_reduced(rh, rl);
    (hi, lo, shift_to_int(shifted))
}

/// e^x, within 0.65 ULP (measured: 0.618) for every input, subnormal results included: inf for
/// x > 88.72284, 0 for x < -103.97208.
///
/// x = k·ln2 + r with |r| ≤ ln2/2 (Cody-Waite, r kept as r + r_lo), e^r = 1 + r + r²·Q(r) with
/// the 1 + r summed exactly, and (e^r)·2^k rounded once.
#[inline]
pub fn exp(x: f32) -> f32 {
    // NaN, ±inf, or a result that overflows or underflows for sure.
    if x.is_nan() {
        return x + x;
    } else if x > 104.0 {
        return f32::INFINITY;
    } else if x < -104.0 {
        return 0.0;
    }
    let (hi, lo, k) = exp_parts(x, 0.0);
    scale_sum(hi, lo, k)
}

/// 2^x, within 0.65 ULP (measured: 0.621) for every input: inf from x = 128, 0 below -150.
/// As [`exp`], with x = k + t exactly and t·ln2 as a sum of two floats.
#[inline]
pub fn exp2(x: f32) -> f32 {
    if x.is_nan() {
        return x + x;
    } else if x > 152.0 {
        return f32::INFINITY;
    } else if x < -152.0 {
        return 0.0;
    }
    let shifted = x + ROUND_SHIFT;
    let k = shifted - ROUND_SHIFT;
    // x = k + t exactly, |t| ≤ ½; t·ln2 as rh + rl, to about 48 bits.
    let t = x - k;
    let rh = t * LN2_F;
    let rl = fma(t, LN2_F, -rh) + t * LN2_F_LO;
    let (hi, lo) = exp_reduced(rh, rl);
    scale_sum(hi, lo, shift_to_int(shifted))
}

/// The natural logarithm, within 0.65 ULP (measured: 0.598) for every input: `ln(±0) = -inf`,
/// `ln(x < 0) = NaN`, `ln(inf) = inf`; subnormal inputs are scaled by 2^23 first, exactly.
///
/// x = 2^k·(1 + f) with 1 + f in [√½, √2), ln(1 + f) = f - f²/2 + f³·R(f), plus k·ln2.
#[inline]
pub fn ln(x: f32) -> f32 {
    let mut bits = x.to_bits();
    let mut k = 0i32;
    if bits < 0x0080_0000 {
        // +0 or a positive subnormal.
        if bits == 0 {
            return f32::NEG_INFINITY;
        }
        bits = (x * 8_388_608.0).to_bits();
        k = -23;
    } else if bits >= 0x7f80_0000 {
        // +inf, NaN, or negative (sign bit set).
        return if x == f32::INFINITY || x.is_nan() {
            x + x
        } else if x == 0.0 {
            f32::NEG_INFINITY
        } else {
            f32::NAN
        };
    }
    // x = 2^k · m with m in [√½, √2): shift the bits so the exponent boundary falls at √½.
    const SQRT_HALF_BITS: u32 = 0x3f35_04f3;
    let shifted = bits.wrapping_sub(SQRT_HALF_BITS);
    k += (shifted as i32) >> 23;
    let m = f32::from_bits((shifted & 0x007f_ffff) + SQRT_HALF_BITS);
    let f = m - 1.0; // exact
                     // ln(1+f) = f - f²/2 + f³·R(f), plus k·ln2 with ln2 in two parts. The big terms are summed
                     // with their rounding errors kept, so only the last addition rounds: f² = f2 + f2_lo
                     // exactly, f - f2/2 and then k·LN2_HI (exact) + that by Fast2Sum (|f| > f2/2, and
                     // |k·LN2_HI| > |f - f2/2| for k ≠ 0).
    let f2 = f * f;
    let f2_lo = fma(f, f, -f2);
    let small = fma(f2, f * poly(&LN_R, f), -0.5 * f2_lo);
    let kf = k as f32;
    let half_f2 = -0.5 * f2;
    let s1 = f + half_f2;
    let e1 = (f - s1) + half_f2;
    let big = kf * LN2_HI;
    let s2 = big + s1;
    let e2 = (big - s2) + s1;
    s2 + (e2 + (e1 + fma(kf, LN2_LO, small)))
}
