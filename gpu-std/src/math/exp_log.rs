//! The default tier's exponentials and logarithms: CUDA's methods and accuracy (see the table in
//! [`math`](super)).
//!
//! `exp` and `exp2` are built on `ex2.approx` (one special-function-unit instruction) after an
//! exact or nearly exact range reduction, as CUDA's `expf`/`exp2f` are; `ln` and `log2` are
//! polynomials with a compensated last sum, as CUDA's `logf` is (no `lg2.approx`: its 2^-22
//! absolute error near 1 is millions of ULPs there).

use super::approx::{ex2, ex2_ftz, fma_sat};
use super::primitives::{fma_f32 as fma, poly};

const LOG2_E: f32 = core::f32::consts::LOG2_E;
/// log2(e) - `LOG2_E`: the two are log2(e) to 48 bits.
const LOG2_E_LO: f32 = 1.925_963e-8;
/// ln 2 rounded to f32 (its error, 2^-28.6 relative, costs at most 0.04 ULP in k·ln2).
const LN2_F: f32 = core::f32::consts::LN_2;
/// 1.5·2^23 + 127: the sum `SHIFT_BIASED + j` for an integer j has `j + 127` in its low bits,
/// which shifted left by 23 are the bits of 2^j.
const SHIFT_BIASED: f32 = 12_583_039.0;
/// `x · EXP_T_SCALE + EXP_T_BIAS` maps x·log2(e) = -126 and 127 to 0 and 1.
const EXP_T_SCALE: f32 = LOG2_E / 253.0;
const EXP_T_BIAS: f32 = 126.0 / 253.0;

// From `scripts/fast_math_coefficients.py` (the method of scripts/math_coefficients.py).
/// ln(1+f) = f + f²·P(f) for 1+f in [√½, √2]: fit error 0.0705 × 2^-24 relative to ln(1+f).
const LN_P: [f32; 9] = [
    -4.9999988e-1,
    3.3333325e-1,
    -2.50016e-1,
    2.0002e-1,
    -1.660876e-1,
    1.4181215e-1,
    -1.3244735e-1,
    1.2908578e-1,
    -7.6228134e-2,
];
/// log2(1+f) = f·`LOG2_E` + f·Q(f) for 1+f in [t, 2t), t = `LOG2_LOW` (Q(0) is about
/// log2(e)'s low part): fit error 0.0691 × 2^-24 relative to log2(1+f).
const LOG2_Q: [f32; 10] = [
    2.496_513_8e-8,
    -7.213_475e-1,
    4.808_959e-1,
    -3.606_752e-1,
    2.887_133_4e-1,
    -2.404_464_2e-1,
    2.017_856_4e-1,
    -1.787_898e-1,
    2.027_587e-1,
    -1.718_928_4e-1,
];
/// The bits of t = 0.67328674 = (1 + ½·ln 2)/2 rounded down: f·log2(e) stays in [-0.4714,
/// 0.5), so that k + f·log2(e) rounds to a float whose difference from k is exact (Sterbenz
/// for |k| ≥ 2; for k = ±1 the sum is at least ½ in magnitude; for k = 0 trivially).
const LOG2_LOW: u32 = 0x3f2c_5c85;

/// `(2^j as f32, j as f32)` with j = round(x·log2(e)) clamped to [-126, 127], in three
/// instructions (CUDA's: a saturating fma does the clamping). Outside the clamp the reduced
/// argument x·log2(e) - j grows, and `ex2.approx` of it carries the overflow or underflow.
/// j may be off by one where x·log2(e) is within 2^-16 of a half-integer, which only moves the
/// reduced argument a little past ½. NaN gives j = -126.
#[inline(always)]
pub(super) fn exp_exponent(x: f32) -> (f32, f32) {
    let t = fma_sat(x, EXP_T_SCALE, EXP_T_BIAS);
    let s = fma(t, 253.0, SHIFT_BIASED - 126.0);
    (f32::from_bits(s.to_bits() << 23), s - SHIFT_BIASED)
}

/// e^x: 2^(x·log2 e - j) on `ex2.approx.ftz`, times 2^j (CUDA's `expf`, 8 instructions).
///
/// Error (stated for the GPU, from the PTX ISA's bound for `ex2.approx`: 2 ULP from its
/// correctly rounded result, plus up to 0.5 ULP from the rounding of the reduced argument):
/// within 3 ULP of e^x for every input; CUDA states 2 ULP for `expf`, measured on its hardware,
/// with the same method. On the CPU, where the `ex2` step is correctly rounded, within 1 ULP
/// (gpu-std/tests/math.rs). Subnormal results are kept (one rounding: the product by 2^j), inf
/// from x = 88.72284, 0 below -103.97208; `exp(-inf) = 0`, `exp(inf) = inf`, NaN gives NaN.
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    let (scale, j) = exp_exponent(x);
    ex2_ftz(fma(x, LOG2_E_LO, fma(x, LOG2_E, -j))) * scale
}

/// 2^x: PTX `ex2.approx.f32` (CUDA's `exp2f`): within 2 ULP of the correctly rounded result for
/// every input, subnormal results included (PTX ISA); correctly rounded on the CPU.
/// `exp2(-inf) = 0`, `exp2(inf) = inf`, inf from 128, 0 below -150.
#[inline(always)]
pub fn exp2(x: f32) -> f32 {
    ex2(x)
}

/// x = 2^k·(1 + f) with 1 + f in [√½, √2): `(f, k as f32)`, exact, subnormal x included (scaled
/// by 2^23 first). Garbage for x ≤ 0, inf and NaN, which [`log_special`] replaces.
#[inline(always)]
pub(super) fn log_reduce(x: f32) -> (f32, f32) {
    log_reduce_from::<0x3f35_04f3>(x) // √½'s bits
}

/// [`log_reduce`] with 1 + f in [t, 2t) for t = `f32::from_bits(LOW_BITS)`.
#[inline(always)]
fn log_reduce_from<const LOW_BITS: u32>(x: f32) -> (f32, f32) {
    let tiny = x < f32::MIN_POSITIVE;
    // x·2^23 for a subnormal x (exact), as an fma that stays one instruction.
    let scaled = fma(x, if tiny { 8_388_607.0 } else { 0.0 }, x);
    let exponent = scaled.to_bits().wrapping_sub(LOW_BITS) & 0xff80_0000;
    let m = f32::from_bits(scaled.to_bits().wrapping_sub(exponent));
    let k = fma(
        exponent as i32 as f32,
        1.0 / 8_388_608.0,
        if tiny { -23.0 } else { 0.0 },
    );
    (m - 1.0, k)
}

/// `r` for positive finite x, else the logarithm's special values (two selects, as CUDA's):
/// x·inf + inf is inf at inf and NaN for x < 0 (the sign bit makes the bits ≥ inf's) and NaN;
/// ±0 gives -inf.
#[inline(always)]
fn log_special(x: f32, r: f32) -> f32 {
    let r = if x.to_bits() >= 0x7f80_0000 {
        fma(x, f32::INFINITY, f32::INFINITY)
    } else {
        r
    };
    if x == 0.0 {
        f32::NEG_INFINITY
    } else {
        r
    }
}

/// The natural logarithm, within 1 ULP for every input (measured over every positive float:
/// 0.919; CUDA's `logf`: 1 ULP), the same code and bits on the GPU and the CPU (no approximate
/// instruction).
///
/// ln(x) = k·ln2 + (f + f²·P(f)), as CUDA's `logf`: two roundings, the last one and the
/// polynomial part's. `ln(±0) = -inf`, `ln(x < 0) = NaN`, `ln(inf) = inf`; subnormal inputs
/// are exact.
#[inline(always)]
pub fn ln(x: f32) -> f32 {
    let (f, k) = log_reduce(x);
    let r = fma(f * f, poly(&LN_P, f), f);
    log_special(x, fma(k, LN2_F, r))
}

/// log2(x), within 1 ULP for every input (measured over every positive float: 0.96; CUDA's
/// `log2f`: 1 ULP), the same bits on the GPU and the CPU; exact for powers of two.
///
/// log2(x) = k + f·log2(e) + f·Q(f): hi = k + f·`LOG2_E` rounded once, its rounding error kept
/// (k - hi is exact, see `LOG2_LOW`) and added to f·Q(f) by one fma before the last rounding.
/// Without that error the result reaches 1.17 ULP near √2 (k + t rounds twice).
#[inline(always)]
pub fn log2(x: f32) -> f32 {
    let (f, k) = log_reduce_from::<LOG2_LOW>(x);
    let hi = fma(f, LOG2_E, k);
    let lo = fma(f, poly(&LOG2_Q, f), fma(f, LOG2_E, k - hi));
    log_special(x, hi + lo)
}
