//! The default tier's x^y: 2^(y·log2 x) with log2 x in double-float (about 2^-35 relative) and
//! the product y·log2 x kept to twice f32's precision, then `ex2.approx` (CUDA's `powf` is the
//! same method with a polynomial for 2^f). The ordinary case (x positive and finite, y·log2 x
//! finite and non-zero) is one straight path; every special case of C99's Annex F is behind one
//! branch, in [`pow_special`]: 93 SASS instructions in all for sm_90, CUDA's `powf` 96.

use super::approx::{ex2_ftz, rcp_ftz};
use super::exp_log::log_reduce;
use super::primitives::{fma_f32 as fma, poly, trunc_f32};

const LOG2_E: f32 = core::f32::consts::LOG2_E;
/// log2(e) - `LOG2_E`: the two are log2(e) to 48 bits.
const LOG2_E_LO: f32 = 1.925_963e-8;
/// log2(m) = log2(e)·u + u³·P(u²) for u = 2(m-1)/(m+1), s = u², m in [√½, √2] (|u| ≤ 0.3432;
/// the atanh series): fit error 2^-36 relative to log2(m) (`scripts/fast_math_coefficients.py`).
const LOG2_ATANH_P: [f32; 4] = [1.202_245_9e-1, 1.803_371_3e-2, 3.218_181_7e-3, 6.572_09e-4];
/// 1.5·2^23 + 127: `SHIFT_BIASED + j` for an integer j in [-126, 127] has j + 127 in its low
/// bits, which shifted left by 23 are the bits of 2^j.
const SHIFT_BIASED: f32 = 12_583_039.0;

/// log2(x) for positive finite x as `hi + lo` (not renormalised: |lo| < 2^-12·|hi|; hi = 0 only
/// for x = 1), within about 2^-35 of log2(x) relative: x = 2^k·m, m in [√½, √2),
/// u = 2(m-1)/(m+1) from one `rcp.approx` with its error taken up from the exact residual, so
/// that `rcp.approx`'s 1 ULP costs nothing. What is left are roundings of the series' part
/// beyond c0·u³, under 10^-4 of log2 x. Without the double-float u³ term (CUDA's way, one
/// rounding of the whole u³ part, up to 1% of log2 x) the CPU's error reaches 1.5 ULP and the
/// model's 4, at x near √2 with y·log2 x near ±128.
#[inline(always)]
fn log2_extended(x: f32) -> (f32, f32) {
    let (a, k) = log_reduce(x); // a = m - 1, exact
    let inv = rcp_ftz(a + 2.0);
    let u = (a + a) * inv;
    // 2a - u·(m + 1) = 2(a - u) - a·u with a - u exact (Sterbenz): u's error, to 2^-48.
    let u_lo = fma(-a, u, 2.0 * (a - u)) * inv;
    // u³ = v + v_lo to about 2^-48 (the exact square's and product's errors), and
    // P = c0 + u²·Q(u²).
    let s = u * u;
    let v = u * s;
    let v_lo = fma(u, fma(u, u, -s), fma(u, s, -v));
    let [c0, q @ ..] = LOG2_ATANH_P;
    // hi = k + log2(e)·u + c0·v in two roundings, each one's error kept (k - hi0 and hi0 - hi
    // are exact: Sterbenz, c0·v being at most 1% of hi0 and of its sign); lo gathers them,
    // u_lo's share (log2(e) + 3·c0·u²)·u_lo, log2(e)'s low part, v_lo's share and the small
    // rest of the series, so that only roundings of 2^-24 of that rest are left.
    let hi0 = fma(u, LOG2_E, k);
    let hi = fma(v, c0, hi0);
    let lo = fma(u, LOG2_E, k - hi0);
    let lo = fma(v, c0, hi0 - hi) + lo;
    let lo = fma(u_lo, fma(s, 3.0 * c0, LOG2_E), lo);
    let lo = fma(u, LOG2_E_LO, lo);
    let lo = fma(v_lo, c0, lo);
    let lo = fma(v * s, poly(&q, s), lo);
    (hi, lo)
}

/// 2^(z + z_lo) for finite z, |z_lo| ≤ 2^-11·|z|: 2^j·`ex2.approx`((z - j) + z_lo) with
/// j = round(z) clamped to [-126, 127], so that 2^j is a normal float; beyond the clamp the
/// reduced argument grows (exactly: z - j has no rounding there) and `ex2.approx` carries the
/// overflow, underflow and subnormal results (one rounding, by the product with 2^j).
#[inline(always)]
fn exp2_extended(z: f32, z_lo: f32) -> f32 {
    let shifted = z.clamp(-126.0, 127.0) + SHIFT_BIASED;
    let j = shifted - SHIFT_BIASED;
    ex2_ftz((z - j) + z_lo) * f32::from_bits(shifted.to_bits() << 23)
}

/// x^y, within 4 ULP of the correctly rounded result on the GPU (CUDA's `powf`: 4 ULP), from
/// `ex2.approx`'s 2 ULP: the unit tests' model, with `ex2.approx` and `rcp.approx` at their
/// bounds, measures 3; on the CPU, within 1 ULP of x^y (measured 0.86,
/// gpu-std/tests/math_default.rs). The CPU's bits may differ from the GPU's in the last places.
///
/// The special cases are C99's (Annex F.9.4.4): `pow(x, ±0) = 1` and `pow(1, y) = 1` even
/// for NaN; otherwise NaN in gives NaN; `pow(±0, y)` is ±inf (y < 0) or ±0 (y > 0), the sign
/// kept only for odd integers y; `pow(-1, ±inf) = 1`; `pow(x, ±inf)` is +0 or +inf by
/// whether |x| < 1 and the sign of y; `pow(±inf, y)` as `pow(±0, -y)`; a negative finite x
/// with a finite non-integer y gives NaN, with an integer y ±|x|^y by its parity.
#[inline(always)]
pub fn pow(x: f32, y: f32) -> f32 {
    let (hi, lo) = log2_extended(x.abs());
    let z = hi * y;
    let z_lo = fma(hi, y, -z) + lo * y;
    let magnitude = exp2_extended(z, z_lo);
    // The ordinary case, one compare: the bits of x and of |z| both from 1 to f32::MAX's, that is
    // x positive and finite, z finite and non-zero (y finite, x ≠ 1, y ≠ 0, no overflow of
    // y·log2 x). Everything else takes the one branch.
    let x_from_one = x.to_bits().wrapping_sub(1);
    let z_from_one = z.abs().to_bits().wrapping_sub(1);
    if x_from_one.max(z_from_one) < f32::MAX.to_bits() {
        magnitude
    } else {
        pow_special(x, y, hi, magnitude)
    }
}

/// [`pow`] where x is negative, ±0, ±inf or NaN, or y·log2|x| is 0, infinite or NaN. `hi` is
/// the ordinary path's log2|x| (0 exactly for |x| = 1), `magnitude` its 2^(y·log2|x|), right
/// where that product is finite and non-zero.
#[inline(always)]
fn pow_special(x: f32, y: f32, hi: f32, magnitude: f32) -> f32 {
    let ax = x.abs();
    // With log2(0) = -inf and log2(inf) = inf, z = y·log2|x| is +inf exactly where |x|^y is
    // +inf (also on overflow), -inf where it is 0, and 0 or NaN (|x| = 1, y = ±inf) where it
    // is 1 (y·log2|x| below 2^-149 included).
    let log2_ax = if ax == 0.0 {
        f32::NEG_INFINITY
    } else if ax == f32::INFINITY {
        f32::INFINITY
    } else {
        hi
    };
    let z = log2_ax * y;
    let limit = if z > 0.0 { f32::INFINITY } else { 0.0 };
    let magnitude = if z.abs() == f32::INFINITY {
        limit
    } else {
        magnitude
    };
    let magnitude = if z.is_nan() || z == 0.0 {
        1.0
    } else {
        magnitude
    };
    // y - 2·trunc(y/2) is exact, in (-2, 2): ±1 for odd y (none from 2^24 on, nor infinities).
    let half = trunc_f32(y * 0.5);
    let y_odd = (y - (half + half)).abs() == 1.0;
    // Infinities count as integers; x's bits from -MIN_SUB's to -f32::MAX's.
    let y_integer = trunc_f32(y) == y;
    let negative_finite = x.to_bits().wrapping_sub(0x8000_0001) < f32::MAX.to_bits();
    // The rules from the weakest to the strongest, as selects: no branch in here.
    let r = if x.is_sign_negative() && y_odd {
        -magnitude
    } else {
        magnitude
    };
    let r = if negative_finite && !y_integer {
        f32::NAN
    } else {
        r
    };
    let r = if x.is_nan() || y.is_nan() { x + y } else { r };
    if y == 0.0 || x == 1.0 {
        1.0
    } else {
        r
    }
}
