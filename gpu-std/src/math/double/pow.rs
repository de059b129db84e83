//! f64 x^y = e^(y·ln x), with ln x as a double-double (about 2^-100 relative) so that y·ln x is
//! exact to 2^-64 relative even where it is near ±745 and x near 1 (musl's `pow`, which the
//! `libm` crate has, is 442 ULP off at x = 0.99999988911506, y = 5.98e9). Finite positive x,
//! negative x with an integer y and finite y take this path; C99's special cases (zeros,
//! infinities, NaN, x = 1, negative x with a non-integer y) are a few selects after it.

use super::exp::exp_of_sum;
use super::log::{ln_double_double, two_product};

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
