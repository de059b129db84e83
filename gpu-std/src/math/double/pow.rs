//! f64 x^y = e^(y·ln x), with ln x as a double-double (about 2^-100 relative) so that y·ln x is
//! exact to 2^-64 relative even where it is near ±745 and x near 1 (musl's `pow`, which the
//! `libm` crate has, is 442 ULP off at x = 0.99999988911506, y = 5.98e9). Finite positive x,
//! negative x with an integer y and finite y take this path; C99's special cases (zeros,
//! infinities, NaN, x = 1, negative x with a non-integer y) are a few selects after it.

use super::exp::{exp_of_sum, two_sum, LN2_HI, LN2_LO};
use super::fma;

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
fn two_product(a: f64, b: f64) -> (f64, f64) {
    let p = a * b;
    (p, fma(a, b, -p))
}

/// ln x for finite x > 0 as `(hi, lo)`, hi + lo within about 2^-100 of ln x relative.
#[inline(always)]
fn ln_double_double(x: f64) -> (f64, f64) {
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
    let s = f / d;
    let s_tail = (fma(-s, d, f) - s * d_error) / d;
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

/// Whether `y` is an integer, and an odd one.
#[inline(always)]
fn integer_parity(y: f64) -> (bool, bool) {
    if y.abs() >= 9_007_199_254_740_992.0 {
        return (true, false); // 2^53 and above: even integers
    }
    let i = y as i64;
    (i as f64 == y, i & 1 == 1)
}

/// C99's (F.10.4.4) special cases, and negative x with a non-integer y (NaN).
#[inline(always)]
fn pow_special(x: f64, y: f64, odd: bool) -> f64 {
    if y == 0.0 || x == 1.0 {
        1.0 // even for a NaN x or y
    } else if x.is_nan() || y.is_nan() {
        x + y
    } else if y.is_infinite() {
        match (x.abs() == 1.0, x.abs() < 1.0, y > 0.0) {
            (true, _, _) => 1.0,
            (false, true, true) | (false, false, false) => 0.0,
            _ => f64::INFINITY,
        }
    } else if x == 0.0 || x.is_infinite() {
        // x^y for y > 0 is x's size (0 or inf), for y < 0 its reciprocal's; the sign is x's for
        // an odd integer y.
        let big = (x == 0.0) != (y > 0.0);
        let magnitude = if big { f64::INFINITY } else { 0.0 };
        if odd && x.is_sign_negative() {
            -magnitude
        } else {
            magnitude
        }
    } else {
        f64::NAN // x < 0, y not an integer
    }
}

/// x^y with C99's special cases; within 2 ULP (CUDA's `pow()`: 2; measured in the table of
/// [`math`](crate::math)).
#[inline(always)]
pub(crate) fn pow(x: f64, y: f64) -> f64 {
    let (integer, odd) = integer_parity(y);
    let ordinary = x.is_finite() && x != 0.0 && x != 1.0 && y.is_finite() && (x > 0.0 || integer);
    if !ordinary {
        return pow_special(x, y, odd);
    }
    let (l, l_tail) = ln_double_double(x.abs());
    let (p, p_error) = two_product(y, l);
    let magnitude = exp_of_sum(p, p_error + y * l_tail);
    if x < 0.0 && odd {
        -magnitude
    } else {
        magnitude
    }
}
