//! f64 sin and cos by fdlibm's method (FreeBSD msun `e_rem_pio2.c`, `k_sin.c`, `k_cos.c`, as the
//! `libm` crate has them in Rust): for |x| < 2^20·π/2, x = n·π/2 + (y0 + y1) by up to three
//! Cody-Waite rounds (π/2 to 151 bits), then both kernel polynomials on [-π/4, π/4] and a select
//! by n mod 4, with no branch on the quadrant. Larger |x| (and inf, NaN) call `libm`'s functions,
//! whose Payne-Hanek reduction stays out of line: rare, and about 1800 instructions that would
//! otherwise be inlined into every kernel that takes a sine.
//!
//! The polynomials and constants are Sun's:
//! Copyright (C) 1993 by Sun Microsystems, Inc. All rights reserved.
//! Developed at SunSoft, a Sun Microsystems, Inc. business.
//! Permission to use, copy, modify, and distribute this software is freely granted, provided
//! that this notice is preserved.

/// 1.5·2^52: adding it rounds to an integer.
const TO_INT: f64 = 6_755_399_441_055_744.0;
const INV_PIO2: f64 = core::f64::consts::FRAC_2_PI;
/// π/2 in three 33-bit parts (`PIO2_n`), each with the rest of π/2 after it (`PIO2_nT`).
const PIO2_1: f64 = 1.570_796_326_734_125_6;
const PIO2_1T: f64 = 6.077_100_506_506_192e-11;
const PIO2_2: f64 = 6.077_100_506_303_966e-11;
const PIO2_2T: f64 = 2.022_266_248_795_950_6e-21;
const PIO2_3: f64 = 2.022_266_248_711_166_5e-21;
const PIO2_3T: f64 = 8.478_427_660_368_9e-32;
/// 2^20·π/2, rounded down to the bound `rem_pio2`'s medium case holds for (high word 0x413921fb).
const MEDIUM_LIMIT: f64 = 1_647_099.0;

const S1: f64 = -1.666_666_666_666_663_2e-1;
const S2: f64 = 8.333_333_333_322_49e-3;
const S3: f64 = -1.984_126_982_985_795e-4;
const S4: f64 = 2.755_731_370_707_006_8e-6;
const S5: f64 = -2.505_076_025_340_686_3e-8;
const S6: f64 = 1.589_690_995_211_55e-10;
const C1: f64 = 4.166_666_666_666_66e-2;
const C2: f64 = -1.388_888_888_887_411e-3;
const C3: f64 = 2.480_158_728_947_673e-5;
const C4: f64 = -2.755_731_435_139_066_3e-7;
const C5: f64 = 2.087_572_321_298_175e-9;
const C6: f64 = -1.135_964_755_778_819_5e-11;

/// The biased exponent of `x`.
#[inline(always)]
fn exponent(x: f64) -> i32 {
    ((x.to_bits() >> 52) & 0x7ff) as i32
}

/// x = n·π/2 + y0 + y1 with |y0 + y1| ≤ π/4 (a little more where n rounds), |y1| ≤ ulp(y0)/2,
/// for |x| < 2^20·π/2 (fdlibm's `rem_pio2` medium case; `n` only mod 4 matters).
#[inline(always)]
fn reduce_medium(x: f64) -> (i32, f64, f64) {
    let n = (x * INV_PIO2 + TO_INT) - TO_INT;
    let mut r = x - n * PIO2_1; // exact: n < 2^20 and PIO2_1 has 33 bits
    let mut w = n * PIO2_1T;
    let mut y0 = r - w; // good to 85 bits
    let ex = exponent(x);
    if ex - exponent(y0) > 16 {
        let t = r;
        w = n * PIO2_2;
        r = t - w;
        w = n * PIO2_2T - ((t - r) - w);
        y0 = r - w; // good to 118 bits
        if ex - exponent(y0) > 49 {
            let t = r;
            w = n * PIO2_3;
            r = t - w;
            w = n * PIO2_3T - ((t - r) - w);
            y0 = r - w; // good to 151 bits: every double below the limit
        }
    }
    (n as i32, y0, (r - y0) - w)
}

/// sin(x + y) for |x + y| ≤ π/4, |y| ≤ ulp(x)/2 (fdlibm's `__kernel_sin`, below 1 ULP).
#[inline(always)]
fn kernel_sin(x: f64, y: f64) -> f64 {
    let z = x * x;
    let w = z * z;
    let r = S2 + z * (S3 + z * S4) + z * w * (S5 + z * S6);
    let v = z * x;
    x - ((z * (0.5 * y - v * r) - y) - v * S1)
}

/// cos(x + y) on the same interval (fdlibm's `__kernel_cos`).
#[inline(always)]
fn kernel_cos(x: f64, y: f64) -> f64 {
    let z = x * x;
    let w = z * z;
    let r = z * (C1 + z * (C2 + z * C3)) + w * w * (C4 + z * (C5 + z * C6));
    let hz = 0.5 * z;
    let w = 1.0 - hz;
    w + (((1.0 - w) - hz) + (z * r - x * y))
}

/// `(sin x, cos x)` for |x| < 2^20·π/2: the kernels of the reduced argument, swapped and
/// negated by the quadrant.
#[inline(always)]
fn sin_cos_medium(x: f64) -> (f64, f64) {
    let (n, y0, y1) = if x.abs() <= core::f64::consts::FRAC_PI_4 {
        (0, x, 0.0)
    } else {
        reduce_medium(x)
    };
    let (s, c) = (kernel_sin(y0, y1), kernel_cos(y0, y1));
    let (s, c) = if n & 1 == 0 { (s, c) } else { (c, -s) };
    if n & 2 == 0 {
        (s, c)
    } else {
        (-s, -c)
    }
}

#[inline(never)]
fn sin_large(x: f64) -> f64 {
    libm::sin(x)
}

#[inline(never)]
fn cos_large(x: f64) -> f64 {
    libm::cos(x)
}

#[inline(never)]
fn sin_cos_large(x: f64) -> (f64, f64) {
    libm::sincos(x)
}

/// sin x (below 1 ULP, as fdlibm's; measured in the table of [`math`](crate::math)).
#[inline(always)]
pub(crate) fn sin(x: f64) -> f64 {
    if x.abs() < MEDIUM_LIMIT {
        sin_cos_medium(x).0
    } else {
        sin_large(x)
    }
}

/// cos x, as [`sin`].
#[inline(always)]
pub(crate) fn cos(x: f64) -> f64 {
    if x.abs() < MEDIUM_LIMIT {
        sin_cos_medium(x).1
    } else {
        cos_large(x)
    }
}

/// `(sin x, cos x)` from one reduction.
#[inline(always)]
pub(crate) fn sin_cos(x: f64) -> (f64, f64) {
    if x.abs() < MEDIUM_LIMIT {
        sin_cos_medium(x)
    } else {
        sin_cos_large(x)
    }
}
