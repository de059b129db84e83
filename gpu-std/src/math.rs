//! f32 math for kernels: the same Rust code on the GPU and on the CPU executor.
//!
//! `core` has no `exp` or `ln` for `nvptx64` (and LLVM cannot select its `llvm.exp`/`llvm.log`
//! there), so these are written here in plain f32 arithmetic: additions, multiplications, fused
//! multiply-adds, correctly rounded division and square root, and bit operations on the exponent.
//! Each of those is correctly rounded by IEEE 754 on both targets (PTX `add.rn`, `mul.rn`,
//! `fma.rn`, `div.rn`, `sqrt.rn`; the host's SSE/`fmaf`), so **the accurate functions return the
//! same bits on the GPU as on the CPU**, and subnormal inputs and results are kept, not flushed.
//!
//! The accurate functions and their error bound in ULPs (units in the last place of the f32
//! result, the subnormal one for results below 2^-126), asserted by `gpu-std/tests/math.rs`
//! against f64 references over about 5 million inputs each (4 million spread evenly over the bit
//! patterns of the domain, a million random, and the thresholds with their neighbours), and the
//! largest error those runs measured:
//!
//! | function | bound | measured | special values |
//! | --- | --- | --- | --- |
//! | [`exp`] | 0.65 ULP | 0.618 | `exp(±0) = 1`, `exp(-inf) = 0`, `exp(inf) = inf`; inf above 88.72284, subnormal below -87.33655, 0 below -103.97208 |
//! | [`exp2`] | 0.65 ULP | 0.621 | as `exp`: inf from 128, subnormal below -126, 0 below -150 |
//! | [`ln`] | 0.65 ULP | 0.598 | `ln(±0) = -inf`, `ln(x < 0) = NaN`, `ln(inf) = inf`; subnormal inputs exact |
//! | [`sqrt`] | 0.5 ULP | 0.5 | correctly rounded; `sqrt(-0) = -0`, `sqrt(x < 0) = NaN` |
//! | [`sincospi`], [`sinpi`], [`cospi`] | 0.6 ULP | 0.560 | any finite x (exact reduction); `sinpi(±n) = ±0`, `cospi(n + ½) = +0`, NaN for ±inf |
//! | [`erfc`] | 0.75 ULP | 0.720 | `erfc(-inf) = 2`, `erfc(inf) = 0`; subnormal above 9.194, 0 above 10.0542 |
//! | [`normal_cdf`] | 0.75 ULP | 0.703 | `Φ(-inf) = 0`, `Φ(inf) = 1`; subnormal below -13.0, 0 below -14.1702 |
//!
//! Under 1 ULP means the result is always one of the two floats around the exact value
//! (faithful rounding), mostly the nearest. The polynomial coefficients come from
//! `scripts/math_coefficients.py`; the techniques are the textbook ones (Cody-Waite reduction,
//! Fast2Sum/TwoSum and fma-exact products to carry the big terms unrounded, one final rounding,
//! also for subnormal results), described at each function.
//!
//! The fast functions use the GPU's special function unit (PTX `ex2.approx.ftz.f32`,
//! `lg2.approx.ftz.f32`, a few cycles each) at the accuracy the PTX ISA documents for them; on
//! the CPU they are computed from the accurate functions, which stays within the same bounds.
//! Both targets flush subnormal inputs and results to zero in them, as `.ftz` does.
//!
//! NaN inputs give NaN everywhere.
//!
//! [`Float`] makes them `f32` methods (`x.exp()`, `x.sqrt()`), on the GPU as on the host.

pub use crate::float::Float;

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

/// π as the nearest f32, and the rest.
const PI_HI: f32 = core::f32::consts::PI;
const PI_LO: f32 = -8.742_278e-8;

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
/// sin(πr) = π·r + r·u·S(u), u = r², |r| ≤ 1/4: fit error 0.0015 × 2^-24.
const SINPI_S: [f32; 4] = [-5.1677127, 2.5501547, -5.989811e-1, 7.915505e-2];
/// cos(πr) = 1 + u·C(u), u = r², |r| ≤ 1/4: fit error 0.0073 × 2^-24.
const COSPI_C: [f32; 4] = [-4.934802, 4.0586967, -1.3347558, 2.2893989e-1];
/// erf(a) = a·P(a²) for |a| ≤ `ERFC_HALF`: fit error 0.0493 × 2^-24 relative to erfc(a).
const ERF_SMALL: [f32; 6] = [
    core::f32::consts::FRAC_2_SQRT_PI,
    -3.7613103e-1,
    1.1294466e-1,
    -2.7887926e-2,
    9.547739e-3,
    -7.527067e-3,
];
/// Φ(x) - ½ = x·P(x²) for |x| ≤ `PHI_QUARTER`: fit error 0.0271 × 2^-24 relative to Φ(x).
const PHI_SMALL: [f32; 6] = [
    3.989423e-1,
    -6.649083e-2,
    9.978723e-3,
    -1.2120373e-3,
    1.6762753e-4,
    -4.9482747e-5,
];
/// (1 + 2a)·exp(a²)·erfc(a), in [1.13, 1.29], as a polynomial in q = (a - K)/(a + K) with
/// K = `ERFC_K_LO` for a in [`ERFC_HALF`, 2]: fit error 0.0175 × 2^-24.
const ERFC_TAIL_LO: [f32; 9] = [
    1.2853192,
    4.8296176e-2,
    -2.6622275e-1,
    4.2394833e-3,
    5.1481094e-2,
    1.8440302e-2,
    -4.266827e-3,
    -7.485602e-3,
    -2.9083106e-3,
];
/// The same with K = `ERFC_K_HI` for a in [2, `ERFC_ZERO`]: fit error 0.0323 × 2^-24.
const ERFC_TAIL_HI: [f32; 9] = [
    1.2354978,
    -1.4005886e-1,
    9.011034e-3,
    7.593128e-2,
    -1.05523154e-1,
    9.32228e-2,
    -6.264919e-2,
    3.2823246e-2,
    -1.0847798e-2,
];
/// (1 + a)·exp(a²/2)·Φ(-a), in [0.40, 0.53], as a polynomial in q = (a - K)/(a + K) with
/// K = `PHI_K_LO` for a in [`PHI_QUARTER`, 2√2]: fit error 0.0425 × 2^-24.
const PHI_TAIL_LO: [f32; 9] = [
    5.150711e-1,
    -5.799123e-2,
    -8.117907e-2,
    2.8906665e-3,
    1.74738e-2,
    7.0623835e-3,
    -9.6974004e-4,
    -2.5988957e-3,
    -8.6242624e-4,
];
/// The same with K = `PHI_K_HI` for a in [2√2, `PHI_ZERO`]: fit error 0.0380 × 2^-24.
const PHI_TAIL_HI: [f32; 9] = [
    4.5660633e-1,
    -8.7823935e-2,
    3.6842674e-2,
    1.107926e-3,
    -2.058623e-2,
    2.4098542e-2,
    -1.8698104e-2,
    1.1043769e-2,
    -4.101389e-3,
];
/// erfc(0.476936) = ½: below it erfc is computed as 1 - erf.
const ERFC_HALF: f32 = 0.476_936_28;
/// erfc(a) < 2^-150 (rounds to 0) above this.
const ERFC_ZERO: f32 = 10.054_195;
const ERFC_K_LO: f32 = 279.0 / 256.0;
const ERFC_K_HI: f32 = 247.0 / 64.0;
/// Φ(-0.67449) = ¼: within it Φ is computed as ½ + x·P(x²).
const PHI_QUARTER: f32 = 0.674_489_75;
/// Φ(-a) < 2^-150 (rounds to 0) above this.
const PHI_ZERO: f32 = 14.170_185;
/// Where the two pieces of Φ's tail meet (2√2, rounded).
const PHI_SPLIT: f32 = 2.828_427;
const PHI_K_LO: f32 = 47.0 / 32.0;
const PHI_K_HI: f32 = 357.0 / 64.0;

/// `a·b + c` with one rounding (IEEE fused multiply-add): PTX `fma.rn.f32` on the GPU, the
/// C library's `fmaf` (an FMA instruction where the CPU has one) on the host.
#[inline(always)]
pub fn fma(a: f32, b: f32, c: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    {
        core::intrinsics::fmaf32(a, b, c)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        a.mul_add(b, c)
    }
}

/// √x, correctly rounded (0.5 ULP): PTX `sqrt.rn.f32` on the GPU, IEEE `sqrtss` on the host.
/// `sqrt(-0) = -0`, `sqrt(x < 0) = NaN`, `sqrt(inf) = inf`.
#[inline(always)]
pub fn sqrt(x: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    {
        core::intrinsics::sqrtf32(x)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        x.sqrt()
    }
}

/// Horner's rule with fused multiply-adds: `c[0] + x·(c[1] + x·(…))`.
#[inline(always)]
fn poly<const N: usize>(c: &[f32; N], x: f32) -> f32 {
    let mut p = c[N - 1];
    let mut i = N - 1;
    while i > 0 {
        i -= 1;
        p = fma(p, x, c[i]);
    }
    p
}

/// 2^k for `-126 <= k <= 127`.
#[inline(always)]
fn pow2(k: i32) -> f32 {
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
fn round_subnormal(y: f32, z: f32) -> f32 {
    let c = f32::from_bits(0x2080_0000 | (y.to_bits() & 0x8000_0000)); // ±2^-62
    let t = c + y;
    let t_lo = (c - t) + y; // exact (Fast2Sum: |c| > |y|)
    let sum = t + (t_lo + z);
    (sum - c) * pow2(-64)
}

/// `(hi + lo) · 2^k` with a single rounding, for hi in [0.04, 2), |lo| ≤ 2^-20·hi and `k` in
/// [-190, 150], subnormal results included (see [`round_subnormal`]).
#[inline(always)]
fn scale_sum(hi: f32, lo: f32, k: i32) -> f32 {
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
fn exp_parts(x: f32, x_lo: f32) -> (f32, f32, i32) {
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

/// `(s, e)` with s + e = a + b exactly (Knuth's TwoSum).
#[inline(always)]
fn two_sum(a: f32, b: f32) -> (f32, f32) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

/// exp(-a²/div)·h(a)/(1 + 2a/div) (div = 1 or 2) for the tails of erfc and Φ, where h is
/// `lo` (for a < `split`) or `hi` in q = (a - K)/(a + K) with the piece's K.
///
/// h is nearly flat, so its polynomial sums without cancellation and the rounding of q barely
/// matters. Everything else is carried as unrounded pairs (hi + lo) up to the one final
/// rounding: the square a² = s + t (t, the rounding error of s, is up to 2^-17 at a = 14 and
/// counts fully in exp), exp's result, h's last Horner step, the product, and the quotient by
/// 1 + 2a/div (its residual is exact with an fma).
#[inline(always)]
fn gaussian_tail(
    a: f32,
    split: f32,
    lo: (&[f32; 9], f32),
    hi: (&[f32; 9], f32),
    half: bool,
) -> f32 {
    // The piece's coefficients, chosen one by one (selects, not a branch or a memory load).
    let low = a < split;
    let k = if low { lo.1 } else { hi.1 };
    let coeffs: [f32; 9] = core::array::from_fn(|i| if low { lo.0[i] } else { hi.0[i] });
    let q = (a - k) / (a + k);
    // h = c0 + q·r as hh + hl.
    let mut r = coeffs[8];
    let mut i = 8;
    while i > 1 {
        i -= 1;
        r = fma(r, q, coeffs[i]);
    }
    let qr = q * r;
    let hh = coeffs[0] + qr;
    let hl = (coeffs[0] - hh) + qr + fma(q, r, -qr); // Fast2Sum: |c0| > |q·r|
                                                     // exp(-(s + t)) = (eh + el)·2^e.
    let mut s = a * a;
    let mut t = fma(a, a, -s);
    if half {
        s *= 0.5;
        t *= 0.5;
    }
    let (eh, el, e) = exp_parts(-s, -t);
    // n = (eh + el)·(hh + hl).
    let nh = eh * hh;
    let nl = fma(eh, hh, -nh) + fma(eh, hl, el * hh);
    // d = 1 + a·(2 or 1), exactly as dh + dl.
    let (dh, dl) = two_sum(1.0, if half { a } else { 2.0 * a });
    // n / d = vh + vl.
    let recip = 1.0 / dh;
    let vh = nh * recip;
    let vl = (fma(-vh, dh, nh) + fma(-vh, dl, nl)) * recip;
    scale_sum(vh, vl, e)
}

/// `base - x·P(x²)` for |x·c0| ≤ base, with `P` = `c`: the big part base - x·c0 is summed
/// exactly (the product split by an fma, then Fast2Sum), so only the small part x³·P1(x²) (at
/// most 8% of the result) carries its evaluation's roundings, and the last addition rounds.
#[inline(always)]
fn one_minus_odd_poly(base: f32, x: f32, c: &[f32; 6]) -> f32 {
    let u = x * x;
    let p1 = poly(&[c[1], c[2], c[3], c[4], c[5]], u);
    let xc0 = x * c[0];
    let xc0_lo = fma(x, c[0], -xc0);
    let hi = base - xc0;
    let lo = ((base - hi) - xc0) - fma(x * u, p1, xc0_lo);
    hi + lo
}

/// The complementary error function erfc(x) = 1 - erf(x) = (2/√π)·∫ₓ^∞ e^(-t²) dt.
///
/// Within 0.75 ULP (measured: 0.720) for every input, in both tails: for |x| < 0.4769 (where
/// erfc ≥ ½) it is 1 - x·P(x²); beyond, e^(-x²)·h(x)/(1 + 2x) with h a nearly flat polynomial
/// in (x - K)/(x + K) (two pieces, split at 2) and the square x² kept exact, down to subnormal
/// results (0 above 10.0542), never 1 - erf(x) where that would cancel; erfc(x < 0) =
/// 2 - erfc(-x).
#[inline]
pub fn erfc(x: f32) -> f32 {
    let a = x.abs();
    if a < ERFC_HALF {
        // 1 - erf(x) ≥ ½ here, with erf(x) = x·c0 + x³·P1(x²).
        return one_minus_odd_poly(1.0, x, &ERF_SMALL);
    }
    let tail = if a < ERFC_ZERO {
        gaussian_tail(
            a,
            2.0,
            (&ERFC_TAIL_LO, ERFC_K_LO),
            (&ERFC_TAIL_HI, ERFC_K_HI),
            false,
        )
    } else if x.is_nan() {
        return x + x;
    } else {
        0.0
    };
    if x < 0.0 {
        2.0 - tail
    } else {
        tail
    }
}

/// The standard normal cumulative distribution function Φ(x) = P(Z ≤ x) for Z ~ N(0, 1).
///
/// Within 0.75 ULP (measured: 0.703) for every input, in both tails: for |x| < 0.6745 (where
/// Φ is in [¼, ¾]) it is ½ + x·P(x²); for x < -0.6745, e^(-x²/2)·H(-x)/(1 - x) as in [`erfc`]
/// (split at -2√2) with x² kept exact, down to subnormal results (0 below -14.1702); for
/// x > 0.6745, 1 - Φ(-x). Not ½·erfc(-x/√2): the rounding of x/√2 would cost up to 100 ULP in
/// the lower tail (at x = -14).
#[inline]
pub fn normal_cdf(x: f32) -> f32 {
    let a = x.abs();
    if a < PHI_QUARTER {
        // ½ + x·P(x²), in [¼, ¾].
        return one_minus_odd_poly(0.5, -x, &PHI_SMALL);
    }
    let tail = if a < PHI_ZERO {
        gaussian_tail(
            a,
            PHI_SPLIT,
            (&PHI_TAIL_LO, PHI_K_LO),
            (&PHI_TAIL_HI, PHI_K_HI),
            true,
        )
    } else if x.is_nan() {
        return x + x;
    } else {
        0.0
    };
    if x > 0.0 {
        1.0 - tail
    } else {
        tail
    }
}

/// Flushes subnormal results to zero (keeping the sign), as the GPU's `.ftz` instructions do.
#[cfg(not(target_arch = "nvptx64"))]
#[inline(always)]
fn flush_subnormal(x: f32) -> f32 {
    if x.abs() < f32::MIN_POSITIVE {
        f32::from_bits(x.to_bits() & 0x8000_0000)
    } else {
        x
    }
}

/// Fast 2^x: PTX `ex2.approx.ftz.f32` on the GPU, at most 2 ULP from the correctly rounded
/// result over the whole range (PTX ISA). Subnormal results flush to +0 (below 2^-126, i.e.
/// x < -126), subnormal inputs count as 0. On the CPU: [`exp2`] with the same flushing
/// (measured: 0.62 ULP).
#[inline(always)]
pub fn fast_exp2(x: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let y: f32;
        // SAFETY: a pure arithmetic instruction on registers.
        unsafe {
            core::arch::asm!("ex2.approx.ftz.f32 {0}, {1};", out(reg32) y, in(reg32) x,
                options(pure, nomem, nostack));
        }
        y
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        flush_subnormal(exp2(x))
    }
}

/// Fast log2(x): PTX `lg2.approx.ftz.f32` on the GPU, with absolute error at most 2^-22 for x
/// in (0.5, 2) and relative error at most 2^-22 elsewhere (PTX ISA). Subnormal inputs count as
/// ±0 and give -inf. On the CPU: `ln(x) · log2(e)` with the same flushing (measured: absolute
/// error up to 2^-23.4 in (0.5, 2), relative error up to 2^-23 elsewhere).
#[inline(always)]
pub fn fast_log2(x: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let y: f32;
        // SAFETY: a pure arithmetic instruction on registers.
        unsafe {
            core::arch::asm!("lg2.approx.ftz.f32 {0}, {1};", out(reg32) y, in(reg32) x,
                options(pure, nomem, nostack));
        }
        y
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        ln(flush_subnormal(x)) * LOG2_E
    }
}

/// Fast e^x = [`fast_exp2`]`(x · log2(e))`: relative error at most 2^-21.5 + |x|·2^-23.5 (the
/// 2 ULP of `ex2.approx` plus the rounding of x·log2(e), which grows with |x| as in CUDA's
/// `__expf`). Results below 2^-126 (x < -87.34) flush to +0; x·log2(e) rounds to 128, and the
/// result to inf, from x = 88.72283. On the CPU (measured): at most 0.8 of that bound.
#[inline(always)]
pub fn fast_exp(x: f32) -> f32 {
    fast_exp2(x * LOG2_E)
}

/// Fast ln(x) = [`fast_log2`]`(x) · ln 2`: absolute error at most 2^-22 for x in (0.5, 2),
/// relative error at most 2^-21.5 elsewhere. Subnormal inputs give -inf. On the CPU
/// (measured): absolute error up to 2^-24.3, relative error up to 2^-22.9.
#[inline(always)]
pub fn fast_ln(x: f32) -> f32 {
    fast_log2(x) * LN2_F
}
