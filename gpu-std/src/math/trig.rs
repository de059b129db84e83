//! The default tier's sine and cosine, CUDA's `sinf`/`cosf` method: the argument reduced by π/2
//! (Cody-Waite in three fmas up to |x| = 105615, Payne-Hanek with a table of 2/π's bits above),
//! then one of two minimax polynomials on [-π/4, π/4].
//!
//! No approximate instruction is involved: every step is IEEE arithmetic with explicit fmas
//! (and integer and f64 arithmetic in the slow path), so these functions give the same bits on
//! the GPU and on the CPU.

use super::primitives::{fma_f32 as fma, poly};

/// 2/π rounded to f32.
const TWO_OVER_PI: f32 = core::f32::consts::FRAC_2_PI;
/// 1.5·2^23: `(y + SHIFT) - SHIFT` rounds y to an integer for |y| < 2^22.
const SHIFT: f32 = 12_582_912.0;
/// π/2 in three parts (Cody-Waite; each the f32 nearest to what the previous ones leave, the
/// first with its 3 low bits zero): together π/2 within 2^-71.
const PIO2_HI: f32 = f32::from_bits(0x3fc9_0fd8); // 1.570796012878418
const PIO2_MID: f32 = f32::from_bits(0x34a8_885a); // 3.1391647e-7
const PIO2_LO: f32 = f32::from_bits(0x27c2_34c5); // 5.390303e-15
/// Up to here the three-part reduction is accurate (CUDA's `sinf` fast path has the same).
const FAST_PATH_LIMIT: f32 = 105_615.0;

/// sin(r) = r + r·s·P(s), s = r², for r in [-π/4, π/4] (CUDA's coefficients).
const SIN_P: [f32; 4] = [
    -1.666_666_7e-1,
    8.333_386e-3,
    -1.985_599_2e-4,
    2.865_679_6e-6,
];
/// cos(r) = 1 + s·P(s), s = r², for r in [-π/4, π/4] (CUDA's coefficients).
const COS_P: [f32; 5] = [1.0, -5.0e-1, 4.166_665_7e-2, -1.388_773e-3, 2.446_770_7e-5];

/// 2/π's first 224 bits after the binary point, most significant first, after a zero word that
/// lets the window start before the binary point.
const TWO_OVER_PI_BITS: [u32; 8] = [
    0,
    0xa2f9_836e,
    0x4e44_1529,
    0xfc27_57d1,
    0xf534_ddc0,
    0xdb62_9599,
    0x3c43_9041,
    0xfe51_63ab,
];

/// x = r + q·π/2 with |r| ≤ π/4 (a little more at the fast path's rounding): `(r, q mod 4)`.
/// inf gives NaN, NaN stays NaN.
#[inline(always)]
fn reduce(x: f32) -> (f32, u32) {
    if x.abs() > FAST_PATH_LIMIT {
        return reduce_huge(x);
    }
    let j = fma(x, TWO_OVER_PI, SHIFT) - SHIFT;
    let r = fma(j, -PIO2_HI, x);
    let r = fma(j, -PIO2_MID, r);
    let r = fma(j, -PIO2_LO, r);
    (r, (j as i32) as u32 & 3)
}

/// Payne-Hanek: x·2/π mod 4 from x's 24-bit significand times the 96 bits of 2/π that matter
/// at its exponent (the bits before them only add multiples of 4), exact in integers; the
/// fraction's top 64 bits, times π/2 in f64, give r to 2^-50 relative. For |x| > 2^-7 only
/// (called above `FAST_PATH_LIMIT`).
#[inline(never)]
fn reduce_huge(x: f32) -> (f32, u32) {
    if !x.is_finite() {
        return (f32::NAN, 0);
    }
    let bits = x.to_bits();
    let exponent = ((bits >> 23) & 0xff) as i32 - 127;
    let m = ((bits & 0x007f_ffff) | 0x0080_0000) as u64;
    // x = m·2^(exponent-23); the window is 2/π's bits 2^-(exponent-24) to 2^-(exponent+71),
    // which starts at bit `exponent + 7` of the table (counting its zero word).
    let start = (exponent + 7) as usize;
    let (word, shift) = (start / 32, start % 32);
    let window = |k: usize| -> u64 {
        let pair =
            ((TWO_OVER_PI_BITS[word + k] as u64) << 32) | TWO_OVER_PI_BITS[word + k + 1] as u64;
        (pair << shift >> 32) & 0xffff_ffff
    };
    // m × window mod 2^96, in three 32-bit words; the product is x·2/π mod 4 times 2^94.
    let low = m * window(2);
    let mid = (low >> 32) + m * window(1);
    let high = (mid >> 32) + m * window(0);
    let (low, mid, high) = (low & 0xffff_ffff, mid & 0xffff_ffff, high & 0xffff_ffff);
    let quadrant = (high >> 30) as u32;
    let fraction = (high << 34) | (mid << 2) | (low >> 30);
    // A fraction of ½ or more is the next quadrant minus (1 - fraction): as i64, it is negative.
    let quadrant = quadrant + (fraction >> 63) as u32;
    let r =
        (fraction as i64) as f64 * (core::f64::consts::FRAC_PI_2 / 18_446_744_073_709_551_616.0);
    let (r, quadrant) = (r as f32, quadrant & 3);
    if x < 0.0 {
        (-r, quadrant.wrapping_neg() & 3)
    } else {
        (r, quadrant)
    }
}

/// sin(r); at r = -0 the correction r·s·P(s) is +0 (P(0) < 0), so zeros pass through as
/// they are.
#[inline(always)]
fn sin_poly(r: f32, s: f32) -> f32 {
    let y = fma(poly(&SIN_P, s) * s, r, r);
    if r == 0.0 {
        r
    } else {
        y
    }
}

#[inline(always)]
fn cos_poly(s: f32) -> f32 {
    poly(&COS_P, s)
}

/// sin(x) for quadrant q's polynomial choice and sign.
#[inline(always)]
fn in_quadrant(r: f32, q: u32) -> f32 {
    let s = r * r;
    let y = if q & 1 == 0 {
        sin_poly(r, s)
    } else {
        cos_poly(s)
    };
    if q & 2 == 0 {
        y
    } else {
        -y
    }
}

/// sin(x), within 2 ULP for every input (CUDA's `sinf`: 2 ULP; measured in
/// gpu-std/tests/math_default.rs), the same bits on the GPU and the CPU. `sin(±0) = ±0`,
/// `sin(±inf) = NaN`, NaN gives NaN.
#[inline(always)]
pub fn sin(x: f32) -> f32 {
    let (r, q) = reduce(x);
    in_quadrant(r, q)
}

/// cos(x), within 2 ULP for every input (CUDA's `cosf`: 2 ULP), the same bits on the GPU and
/// the CPU. `cos(±inf) = NaN`, NaN gives NaN.
#[inline(always)]
pub fn cos(x: f32) -> f32 {
    let (r, q) = reduce(x);
    in_quadrant(r, q.wrapping_add(1))
}

/// `(sin(x), cos(x))` with one argument reduction; each as [`sin`] and [`cos`], bit for bit.
#[inline(always)]
pub fn sin_cos(x: f32) -> (f32, f32) {
    let (r, q) = reduce(x);
    (in_quadrant(r, q), in_quadrant(r, q.wrapping_add(1)))
}
