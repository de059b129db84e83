//! The CPU's 2^x for the models of `ex2.approx` (host only): the f32 result of 2^x evaluated in
//! f64 by a polynomial, with no libm call and no table, so that a loop of kernel code calling it
//! vectorises (libm's `exp2`, which it replaces, is a call per element; a table lookup is a
//! gather, which LLVM's cost model refused to vectorise Black-Scholes' loop with).
//!
//! x = k + r with |r| ≤ ½ (k rounded to nearest by the 1.5·2^52 shift, which also leaves k in
//! the low bits), 2^x = 2^k · 2^r, with 2^r the degree-13 Taylor polynomial of e^(r ln 2)
//! (truncation below 2^-57). The f64 result is within about 2^-51 of 2^x, so its rounding to f32
//! is the correctly
//! rounded result but where 2^x lies that close to the midpoint between two floats: the tests
//! below compare it with libm's `exp2` rounded to f32 (itself within 2^-53) over sampled inputs,
//! and `every_f32_input_agrees_with_libm` (ignored: 4 billion inputs, about a minute in a
//! release build) over all of them.

/// (ln 2)^n / n!, n = 1..13 (from 60-digit decimal values).
const TAYLOR: [f64; 13] = [
    core::f64::consts::LN_2,
    0.24022650695910072,
    0.05550410866482158,
    0.009618129107628477,
    0.0013333558146428443,
    0.0001540353039338161,
    1.5252733804059841e-05,
    1.321548679014431e-06,
    1.01780860092397e-07,
    7.054911620801123e-09,
    4.4455382718708116e-10,
    2.5678435993488206e-11,
    1.3691488853904128e-12,
];

/// Rounds to nearest (ties to even) and keeps the integer in the low mantissa bits.
const SHIFT: f64 = 6_755_399_441_055_744.0; // 1.5·2^52

/// 2^x rounded to f32 (see the module's documentation); NaN for NaN, +∞ from 128 on, +0 below
/// -150, subnormal results rounded as an f64 → f32 conversion rounds them.
#[inline(always)]
pub(crate) fn exp2_rounded(x: f32) -> f32 {
    // Past the ends the f32 result is +inf or +0 whatever the exact value; NaN passes through
    // `clamp` (and every step after it).
    let t = f64::from(x).clamp(-160.0, 130.0);
    let shifted = t + SHIFT;
    let k = shifted - SHIFT;
    // Exact: t has 24 significant bits and k is within ½ of it.
    let r = t - k;
    // k itself: `shifted` = 1.5·2^52 + k has SHIFT's exponent (|k| ≤ 160), so their bits
    // differ by k.
    let k_int = shifted.to_bits() as i64 - SHIFT.to_bits() as i64;
    // 2^r - 1 by Horner's rule, plain products and sums (`mul_add` is a libm call in a build
    // without FMA).
    let p = r * TAYLOR.iter().rev().fold(0.0, |acc, &c| c + r * acc);
    let scale = f64::from_bits(((k_int + 1023) as u64) << 52); // 2^k, a normal f64
    ((1.0 + p) * scale) as f32
}

#[cfg(test)]
mod tests {
    use super::exp2_rounded;

    /// libm's 2^x rounded to f32: what the CPU models of `ex2.approx` computed before.
    fn libm(x: f32) -> f32 {
        (x as f64).exp2() as f32
    }

    fn same(a: f32, b: f32) -> bool {
        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
    }

    #[test]
    fn special_values_and_ends() {
        for (x, want) in [
            (0.0f32, 1.0f32),
            (-0.0, 1.0),
            (1.0, 2.0),
            (-1.0, 0.5),
            (127.0, 2f32.powi(127)),
            (128.0, f32::INFINITY),
            (f32::INFINITY, f32::INFINITY),
            (f32::NEG_INFINITY, 0.0),
            (-149.0, f32::from_bits(1)),
            (-151.0, 0.0),
            (-126.0, f32::MIN_POSITIVE),
        ] {
            assert!(same(exp2_rounded(x), want), "2^{x}: {}", exp2_rounded(x));
        }
        assert!(exp2_rounded(f32::NAN).is_nan());
    }

    #[test]
    fn sampled_inputs_agree_with_libm() {
        // Every 1021st bit pattern: about 4 million inputs of both signs and all exponents.
        let mut differ = 0;
        for bits in (0..=u32::MAX).step_by(1021) {
            let x = f32::from_bits(bits);
            if !same(exp2_rounded(x), libm(x)) {
                differ += 1;
                assert!(
                    (exp2_rounded(x).to_bits() as i64 - libm(x).to_bits() as i64).abs() <= 1,
                    "2^{x:e}: {} against libm's {}",
                    exp2_rounded(x),
                    libm(x)
                );
            }
        }
        assert_eq!(
            differ, 0,
            "inputs where the model and libm round differently"
        );
    }

    #[test]
    #[ignore = "4 billion inputs: run in a release build"]
    fn every_f32_input_agrees_with_libm() {
        let differ: std::vec::Vec<u32> = (0..=u32::MAX)
            .filter(|&bits| {
                let x = f32::from_bits(bits);
                !same(exp2_rounded(x), libm(x))
            })
            .collect();
        assert!(
            differ.is_empty(),
            "{} inputs differ: {:x?}",
            differ.len(),
            &differ[..differ.len().min(40)]
        );
    }
}
