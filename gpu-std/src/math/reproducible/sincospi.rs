//! sin(πx) and cos(πx) of the reproducible tier.

use super::exp_ln::{pow2, round_subnormal};
use crate::math::primitives::{fma_f32 as fma, poly};

/// π as the nearest f32, and the rest.
const PI_HI: f32 = core::f32::consts::PI;
const PI_LO: f32 = -8.742_278e-8;

/// sin(πr) = π·r + r·u·S(u), u = r², |r| ≤ 1/4: fit error 0.0015 × 2^-24.
const SINPI_S: [f32; 4] = [-5.1677127, 2.5501547, -5.989811e-1, 7.915505e-2];
/// cos(πr) = 1 + u·C(u), u = r², |r| ≤ 1/4: fit error 0.0073 × 2^-24.
const COSPI_C: [f32; 4] = [-4.934802, 4.0586967, -1.3347558, 2.2893989e-1];

/// `(sin(πx), cos(πx))`, each within 0.6 ULP (measured: 0.560) for every finite x: x = j/2 + r
/// with |r| ≤ ¼ is exact, so huge x lose nothing. `sinpi(±n)` is ±0 for integers n (with n's
/// sign), `cospi(n + ½)` is +0; ±inf and NaN give NaN.
///
/// Box-Muller's angle 2πu is `sincospi(2.0 * u)`, exact for any u.
#[inline]
pub fn sincospi(x: f32) -> (f32, f32) {
    let ax = x.abs();
    if !x.is_finite() {
        return (f32::NAN, f32::NAN);
    }
    if ax >= 4_194_304.0 {
        // |x| ≥ 2^22: a multiple of ½.
        // A multiple of ½ below 2^24 has its quarter turn in the low bits of 2x; from 2^24 on
        // it is an even integer.
        let quadrant = if ax < 16_777_216.0 {
            (2.0 * x) as i32 & 3
        } else {
            0
        };
        let zero = f32::from_bits(x.to_bits() & 0x8000_0000);
        return match quadrant {
            0 => (zero, 1.0),
            1 => (1.0, 0.0),
            2 => (zero, -1.0),
            _ => (-1.0, 0.0),
        };
    }
    if ax < 8.673_617e-19 {
        // |x| < 2^-60: sin(πx) = πx to far below an ULP, computed 2^64 times larger so that
        // x·PI_LO does not underflow, and rounded once.
        if ax == 0.0 {
            return (x, 1.0);
        }
        let big = x * pow2(64);
        let y = big * PI_HI;
        let z = fma(big, PI_HI, -y) + big * PI_LO;
        let sin = if y.abs() < pow2(-62) {
            round_subnormal(y, z)
        } else {
            (y + z) * pow2(-64)
        };
        return (sin, 1.0);
    }
    // x = j/2 + r with |r| ≤ ¼, exactly: j = round(2x), where |2x| < 2^23 rounds to an integer
    // when 2^23 (with its sign) is added.
    let shift = f32::from_bits(0x4b00_0000 | (x.to_bits() & 0x8000_0000));
    let j = (2.0 * x + shift) - shift;
    let r = fma(j, -0.5, x);
    // u = r² exactly as u + u_lo. Both results are a big exact term (π·r, 1) plus a smaller
    // one (up to 0.08 and 0.3), summed by Fast2Sum so that only the last addition rounds; the
    // smaller term's own roundings count in proportion to its size.
    let u = r * r;
    let u_lo = fma(r, r, -u);
    // sin(πr) = r·π + r³·S(u), r·π = PI_HI·r + PI_LO·r.
    let sv = poly(&SINPI_S, u);
    let r3 = r * u;
    let r3_lo = fma(r, u, -r3) + r * u_lo;
    let b = r3 * sv;
    let b_lo = fma(r3, sv, -b) + r3_lo * sv;
    let a = r * PI_HI;
    let a_lo = fma(r, PI_HI, -a) + r * PI_LO;
    let s_hi = a + b;
    let s = s_hi + (((a - s_hi) + b) + (a_lo + b_lo));
    // cos(πr) = 1 + u·C(u), C(u) = c0 + u·C1(u).
    let c1 = poly(&[COSPI_C[1], COSPI_C[2], COSPI_C[3]], u);
    let w = u * COSPI_C[0];
    let w_lo = fma(u, COSPI_C[0], -w) + fma(u_lo, COSPI_C[0], u * (u * c1));
    let c_hi = 1.0 + w;
    let c = c_hi + (((1.0 - c_hi) + w) + w_lo);
    let (sin, cos) = match j as i32 & 3 {
        0 => (s, c),
        1 => (c, -s),
        2 => (-s, -c),
        _ => (-c, s),
    };
    // Exact zeros: sinpi(±n) = ±0, cospi(n + ½) = +0.
    let sin = if sin == 0.0 {
        f32::from_bits(x.to_bits() & 0x8000_0000)
    } else {
        sin
    };
    (sin, cos + 0.0)
}

/// sin(πx); see [`sincospi`] (0.6 ULP).
#[inline]
pub fn sinpi(x: f32) -> f32 {
    sincospi(x).0
}

/// cos(πx); see [`sincospi`] (0.6 ULP).
#[inline]
pub fn cospi(x: f32) -> f32 {
    sincospi(x).1
}
