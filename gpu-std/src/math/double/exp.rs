//! f64 e^x and 2^x: a Cody-Waite reduction to |r| ≤ ½·ln 2 kept to 106 bits, a degree-13 Taylor
//! polynomial, and the scaling by 2^k in two exact steps (so subnormal results round once).
//! Plain IEEE arithmetic with explicit fused multiply-adds and no division or table: the same
//! bits on the GPU and the CPU, about CUDA's `exp()`'s instructions.

use super::ieee::fma;

const LOG2_E: f64 = core::f64::consts::LOG2_E;
/// ln 2 in two parts; `LN2_HI` has 21 trailing zero bits, so k·LN2_HI is exact for |k| < 2^21.
pub(super) const LN2_HI: f64 = 6.931_471_803_691_238e-1;
pub(super) const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;
/// ln 2 rounded to f64, and ln 2 - `LN2`.
const LN2: f64 = core::f64::consts::LN_2;
const LN2_TAIL: f64 = 2.319_046_813_846_299_6e-17;
/// 1.5·2^52: adding it rounds a float below 2^51 to an integer, which lands in the low bits.
const SHIFTER: f64 = 6_755_399_441_055_744.0;

/// 1/n! for n = 2..=13: e^r = 1 + r + r²·(Σ r^(n-2)/n!). The first term left out, r^14/14!, is
/// below 2^-57 of e^r for |r| ≤ ½·ln 2, a twentieth of an ULP.
const INV_FACTORIALS: [f64; 12] = [
    1.0 / 2.0,
    1.0 / 6.0,
    1.0 / 24.0,
    1.0 / 120.0,
    1.0 / 720.0,
    1.0 / 5040.0,
    1.0 / 40_320.0,
    1.0 / 362_880.0,
    1.0 / 3_628_800.0,
    1.0 / 39_916_800.0,
    1.0 / 479_001_600.0,
    1.0 / 6_227_020_800.0,
];

/// e^(r + tail) for |r| ≤ 0.35 and |tail| ≤ 2^-50·|r|: 1 + r summed exactly (Fast2Sum), so the
/// only rounding of a magnitude near the result's is the last one (measured: 0.51 ULP).
#[inline(always)]
fn exp_reduced(r: f64, tail: f64) -> f64 {
    let mut p = INV_FACTORIALS[INV_FACTORIALS.len() - 1];
    let mut i = INV_FACTORIALS.len() - 1;
    while i > 0 {
        i -= 1;
        p = fma(p, r, INV_FACTORIALS[i]);
    }
    let one_plus_r = 1.0 + r;
    let one_plus_r_error = (1.0 - one_plus_r) + r;
    one_plus_r + (one_plus_r_error + fma(r * r, p, tail))
}

/// `y · 2^k` for k in [-2100, 2100], as two exact power-of-two factors: the first product stays
/// normal, the second rounds once (into the subnormals, or to inf).
#[inline(always)]
fn scale(y: f64, k: i64) -> f64 {
    let half = k >> 1;
    let first = f64::from_bits(((half + 1023) as u64) << 52);
    let second = f64::from_bits(((k - half + 1023) as u64) << 52);
    y * first * second
}

/// `(a + b, its rounding error)`, exactly, for any order of magnitude (Knuth's TwoSum).
#[inline(always)]
pub(super) fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let sum = a + b;
    let b_part = sum - a;
    (sum, (a - (sum - b_part)) + (b - b_part))
}

/// The integer nearest `t` (|t| < 2^51) as f64 and i64, by the 1.5·2^52 shift.
#[inline(always)]
fn round_to_integer(shifted: f64) -> (f64, i64) {
    let k = shifted - SHIFTER;
    (k, k as i64)
}

/// x (clamped to where e^x is neither inf nor 0 short of rounding) = k·ln 2 + r + tail, with
/// k = round(x·log2 e) and r + tail = x - k·ln 2 to 106 bits: `(r, tail, k)`.
#[inline(always)]
fn reduce(x: f64) -> (f64, f64, i64) {
    let x = x.clamp(-746.0, 710.0);
    let (k, ki) = round_to_integer(fma(x, LOG2_E, SHIFTER));
    let r_hi = fma(-k, LN2_HI, x); // exact
    let r = fma(-k, LN2_LO, r_hi);
    let tail = fma(-k, LN2_LO, r_hi - r); // r_hi - k·LN2_LO - r, exactly rounded
    (r, tail, ki)
}

/// e^x within 1 ULP for every input (measured: 0.54; CUDA's `exp()`: 1). x = k·ln 2 + r with
/// k = round(x·log2 e), r = x - k·ln 2 to 106 bits; e^x = 2^k·e^r. inf from x = 709.7827129,
/// subnormal results below -708.3964, 0 below -745.1332; `exp(-inf) = 0`, NaN gives NaN.
#[inline(always)]
pub(crate) fn exp(x: f64) -> f64 {
    let (r, tail, k) = reduce(x);
    scale(exp_reduced(r, tail), k)
}

/// e^(x + x_tail) for |x_tail| ≤ 2^-52·|x| (a double-double exponent, as `pow` has): the tail
/// joins the reduced argument, so it counts in full wherever e^x is finite and non-zero.
#[inline(always)]
pub(crate) fn exp_of_sum(x: f64, x_tail: f64) -> f64 {
    let x_tail = if x.abs() < 746.0 { x_tail } else { 0.0 };
    let (r, tail, k) = reduce(x);
    let (r_sum, r_sum_error) = two_sum(r, x_tail);
    scale(exp_reduced(r_sum, tail + r_sum_error), k)
}

/// 2^x within 1 ULP for every input (measured: 0.51; CUDA's `exp2()`: 1), exact for integers
/// x ≥ -1074. x = k + r with k = round(x), r exact; 2^r = e^(r·ln 2) with r·ln 2 to 106 bits.
/// inf from 1024, 0 below -1075; `exp2(-inf) = 0`, NaN gives NaN.
#[inline(always)]
pub(crate) fn exp2(x: f64) -> f64 {
    let x = x.clamp(-1076.0, 1025.0);
    let (k, ki) = round_to_integer(x + SHIFTER);
    let r = x - k; // exact
    let u = r * LN2;
    let tail = fma(r, LN2, -u) + r * LN2_TAIL;
    scale(exp_reduced(u, tail), ki)
}
