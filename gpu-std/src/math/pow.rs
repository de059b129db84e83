//! The default tier's x^y: 2^(y·log2 x) with log2 x in double-float (about 2^-36 relative), so
//! that y·log2 x keeps its fraction's bits up to the result's overflow, then `ex2.approx`, as
//! CUDA's `powf`; C99 Annex F's special cases around it.

use super::approx::{ex2, rcp_ftz};
use super::exp_log::log_reduce;
use super::{fma, poly};

/// 2/ln 2 in two parts: their sum is 2/ln 2 to 2^-48.
const C_HI: f32 = 2.885_39;
const C_LO: f32 = 3.851_926e-8;
/// log2(m) = C·u + C·u³·(1/3 + u²·Q(u²)) for u = (m-1)/(m+1), |u| ≤ 0.1716 (the atanh
/// series; the first term left out is below 2^-39). C/3 in two parts (to 2^-48), as the
/// C·u³/3 term is up to 0.0047: its rounding would be 2^-32, which y up to 2^8 magnifies.
const C_THIRD_HI: f32 = 0.961_796_7;
const C_THIRD_LO: f32 = -7.028_462e-9;
/// C/5, C/7, C/9, C/11, C/13.
const TAIL_Q: [f32; 5] = [
    0.577_078_04,
    0.412_198_57,
    0.320_598_9,
    0.262_308_18,
    0.221_953_08,
];
/// 2^23: floats at or above it are all integers.
const INTEGERS_FROM: f32 = 8_388_608.0;

/// log2(x) for positive finite x as `hi + lo`, |lo| ≤ ulp(hi)/2, within about 2^-36 of
/// log2(x) relative (x = 2^k·m, m in [√½, √2), and log2 m through u = (m-1)/(m+1) with u's
/// rounding error kept).
#[inline(always)]
fn log2_extended(x: f32) -> (f32, f32) {
    let (a, k) = log_reduce(x); // a = m - 1, exact
    let b = 2.0 + a; // m + 1 ...
    let b_lo = a - (b - 2.0); // ... exactly b + b_lo
                              // 1/b to 1 ULP is enough: u_lo takes up u's error, whatever it is, from the exact residual.
    let inv = rcp_ftz(b);
    let u = a * inv;
    let u_lo = fma(-u, b_lo, fma(-u, b, a)) * inv; // (a - u·(b + b_lo)) / b
    let s = u * u;
    let t = C_HI * u;
    let t_lo = fma(C_HI, u, -t) + fma(C_LO, u, C_HI * u_lo);
    // u³ = v + v_lo, then C/3·u³ = h + h_lo.
    let v = u * s;
    let v_lo = fma(u, s, -v) + u * fma(u, u, -s);
    let h = v * C_THIRD_HI;
    let h_lo = fma(v, C_THIRD_HI, -h) + fma(v, C_THIRD_LO, v_lo * C_THIRD_HI);
    // The rest of the series, plus the u³ term's derivative's share of u_lo (C·u²·u_lo).
    let rest = fma(v * s, poly(&TAIL_Q, s), C_HI * s * u_lo);
    // k + t + h with both sums' errors kept: |k| ≥ 1 > |t| or k = 0, and |k + t| ≥ |h|.
    let hi0 = k + t;
    let hi = hi0 + h;
    let lo = (((k - hi0) + t) + (h - (hi - hi0))) + ((t_lo + h_lo) + rest);
    let sum = hi + lo;
    (sum, lo - (sum - hi))
}

/// 2^(hi + lo) for |lo| ≤ ulp(hi): 2^j·ex2((hi - j) + lo) with j = round(hi) clamped to
/// [-126, 127], so that 2^j is a normal float and ex2 carries overflow, underflow and
/// subnormal results (one more rounding there).
#[inline(always)]
fn exp2_extended(hi: f32, lo: f32) -> f32 {
    let clamped = hi.clamp(-300.0, 300.0);
    let lo = if clamped == hi { lo } else { 0.0 };
    let j = ((clamped + 12_582_912.0) - 12_582_912.0).clamp(-126.0, 127.0);
    let scale = f32::from_bits(((j as i32 + 127) as u32) << 23);
    ex2((clamped - j) + lo) * scale
}

/// `(y is an integer, y is an odd integer)`; infinities count as even integers, NaN as
/// neither.
#[inline(always)]
fn integer_parity(y: f32) -> (bool, bool) {
    let ay = y.abs();
    // Every float from 2^23 on is an integer (and from 2^24 on even); below, round to one.
    let rounded = if ay >= INTEGERS_FROM {
        ay
    } else {
        (ay + INTEGERS_FROM) - INTEGERS_FROM
    };
    let integer = rounded == ay;
    (
        integer,
        integer && ay < 2.0 * INTEGERS_FROM && (ay as u32) & 1 == 1,
    )
}

/// x^y, within 4 ULP of the correctly rounded result on the GPU (CUDA's `powf`: 4 ULP), from
/// `ex2.approx`'s 2 ULP: the unit tests' model, with `ex2.approx` and `rcp.approx` at their
/// bounds, measures 3; on the CPU, within 0.9 ULP of x^y (gpu-std/tests/math_default.rs). The
/// CPU's bits may differ from the GPU's in the last places.
///
/// The special cases are C99's (Annex F.9.4.4): `pow(x, ±0) = 1` and `pow(1, y) = 1` even
/// for NaN; otherwise NaN in gives NaN; `pow(±0, y)` is ±inf (y < 0) or ±0 (y > 0), the sign
/// kept only for odd integers y; `pow(-1, ±inf) = 1`; `pow(x, ±inf)` is +0 or +inf by
/// whether |x| < 1 and the sign of y; `pow(±inf, y)` as `pow(±0, -y)`; a negative finite x
/// with a finite non-integer y gives NaN, with an integer y ±|x|^y by its parity.
#[inline(always)]
pub fn pow(x: f32, y: f32) -> f32 {
    let (ax, ay) = (x.abs(), y.abs());
    let (y_integer, y_odd) = integer_parity(y);
    let negative = x.is_sign_negative() && y_odd;
    let (hi, lo) = log2_extended(ax);
    let z = hi * y;
    let z_lo = fma(hi, y, -z) + lo * y;
    let magnitude = if ax == 0.0 || ax == f32::INFINITY {
        if (ax == 0.0) == (y < 0.0) {
            f32::INFINITY
        } else {
            0.0
        }
    } else if ay == f32::INFINITY {
        if ax == 1.0 {
            1.0
        } else if (ax < 1.0) == (y < 0.0) {
            f32::INFINITY
        } else {
            0.0
        }
    } else {
        exp2_extended(z, z_lo)
    };
    if y == 0.0 || x == 1.0 {
        1.0
    } else if x.is_nan() || y.is_nan() || (x < 0.0 && x.is_finite() && !y_integer) {
        f32::NAN
    } else if negative {
        -magnitude
    } else {
        magnitude
    }
}
