//! ferrocuda-std's reproducible math tier (and the single fast instructions) against f64 references: the error in ULPs of the f32 result over a dense
//! sweep of each function's domain (an evenly strided walk over the f32 bit patterns of the
//! domain, about 4 million inputs, plus a million random ones), the thresholds where results
//! overflow, underflow or turn subnormal, and the special values. Each test prints what it
//! measured and asserts it stays within the bound the function's documentation states.
//!
//! The sweep is what dominates this file's run time; `[profile.dev.package.ferrocuda-std]` in the
//! workspace's Cargo.toml builds ferrocuda-std (this test included) optimised so it takes seconds.

mod sweep;

use ferrocuda_std::math::{self, reproducible};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use sweep::*;

#[test]
fn exp_is_within_0_65_ulp_everywhere() {
    check_ulp(
        "reproducible::exp",
        reproducible::exp,
        f64::exp,
        &[(0.0, 89.0), (-0.0, -105.0)],
        &EXP_EXTRA,
        0.65,
    );
    exp_specials(reproducible::exp);
    same(reproducible::exp(89.0), f32::INFINITY, "exp(89)");
    same(reproducible::exp(-104.0), 0.0, "exp(-104)");
}

#[test]
fn exp2_is_within_0_65_ulp_everywhere() {
    let extra = [
        127.999_99, 128.0, -126.0, -149.0, -149.5, -150.0, 0.5, -0.5, MIN_SUB, -MIN_SUB, TINY,
    ];
    check_ulp(
        "reproducible::exp2",
        reproducible::exp2,
        f64::exp2,
        &[(0.0, 129.0), (-0.0, -151.0)],
        &extra,
        0.65,
    );
    same(reproducible::exp2(0.0), 1.0, "exp2(0)");
    same(reproducible::exp2(-0.0), 1.0, "exp2(-0)");
    same(reproducible::exp2(10.0), 1024.0, "exp2(10)");
    same(reproducible::exp2(-149.0), MIN_SUB, "exp2(-149)");
    same(reproducible::exp2(-126.0), TINY, "exp2(-126)");
    same(reproducible::exp2(128.0), f32::INFINITY, "exp2(128)");
    same(reproducible::exp2(-151.0), 0.0, "exp2(-151)");
    same(
        reproducible::exp2(f32::INFINITY),
        f32::INFINITY,
        "exp2(inf)",
    );
    same(reproducible::exp2(f32::NEG_INFINITY), 0.0, "exp2(-inf)");
    same(reproducible::exp2(f32::NAN), f32::NAN, "exp2(NaN)");
}

#[test]
fn ln_is_within_0_65_ulp_on_every_positive_float() {
    let extra = [
        1.0,
        2.0,
        0.5,
        std::f32::consts::FRAC_1_SQRT_2,
        std::f32::consts::SQRT_2,
        std::f32::consts::E,
        MIN_SUB,
        MAX_SUB,
        TINY,
        f32::MAX,
    ];
    check_ulp(
        "reproducible::ln",
        reproducible::ln,
        f64::ln,
        &[(MIN_SUB, 0.5), (0.5, 2.0), (2.0, f32::MAX)],
        &extra,
        0.65,
    );
    same(reproducible::ln(1.0), 0.0, "ln(1)");
    same(reproducible::ln(0.0), f32::NEG_INFINITY, "ln(0)");
    same(reproducible::ln(-0.0), f32::NEG_INFINITY, "ln(-0)");
    same(reproducible::ln(-1.0), f32::NAN, "ln(-1)");
    same(reproducible::ln(-MIN_SUB), f32::NAN, "ln(-subnormal)");
    same(reproducible::ln(f32::NEG_INFINITY), f32::NAN, "ln(-inf)");
    same(reproducible::ln(f32::INFINITY), f32::INFINITY, "ln(inf)");
    same(reproducible::ln(f32::NAN), f32::NAN, "ln(NaN)");
    same(
        reproducible::ln(MIN_SUB),
        (-149.0 * std::f64::consts::LN_2) as f32,
        "ln(2^-149)",
    );
}

#[test]
fn sqrt_is_correctly_rounded() {
    check_ulp(
        "reproducible::sqrt",
        reproducible::sqrt,
        f64::sqrt,
        &[(MIN_SUB, 1.0), (1.0, f32::MAX)],
        &[MIN_SUB, MAX_SUB, TINY, f32::MAX, 2.0],
        0.5,
    );
    same(reproducible::sqrt(-0.0), -0.0, "sqrt(-0)");
    same(reproducible::sqrt(0.0), 0.0, "sqrt(0)");
    same(reproducible::sqrt(-1.0), f32::NAN, "sqrt(-1)");
    same(
        reproducible::sqrt(f32::INFINITY),
        f32::INFINITY,
        "sqrt(inf)",
    );
    same(reproducible::sqrt(4.0), 2.0, "sqrt(4)");
}

/// sin(πx) and cos(πx) in f64 after an exact reduction of x to |r| ≤ ¼ (x - j/2 is exact in
/// f64 for any f32 x), so the reference is accurate for huge x too.
fn sincospi_f64(x: f64) -> (f64, f64) {
    let j = (2.0 * x).round();
    let r = x - j / 2.0;
    let (s, c) = (std::f64::consts::PI * r).sin_cos();
    match (j.rem_euclid(4.0)) as i32 {
        0 => (s, c),
        1 => (c, -s),
        2 => (-s, -c),
        _ => (-c, s),
    }
}

#[test]
fn sincospi_is_within_0_6_ulp_for_every_finite_input() {
    let ranges = [(0.0, 0.25), (0.25, 1.0e4), (1.0e4, 1.0e9), (-0.0, -3.0)];
    let extra = [
        0.25,
        0.5,
        0.75,
        1.0,
        1.5,
        2.0,
        0.125,
        f32::from_bits(0x4a00_0001), // 2^21 + ¼
        4194303.5,
        4194304.0,
        8388609.0,
        MIN_SUB,
        MAX_SUB,
        TINY,
    ];
    check_ulp(
        "reproducible::sinpi",
        reproducible::sinpi,
        |x| sincospi_f64(x).0,
        &ranges,
        &extra,
        0.6,
    );
    check_ulp(
        "reproducible::cospi",
        reproducible::cospi,
        |x| sincospi_f64(x).1,
        &ranges,
        &extra,
        0.6,
    );
    // Exact values and signed zeros.
    for (x, s, c) in [
        (0.0f32, 0.0f32, 1.0f32),
        (-0.0, -0.0, 1.0),
        (0.5, 1.0, 0.0),
        (-0.5, -1.0, 0.0),
        (1.0, 0.0, -1.0),
        (-1.0, -0.0, -1.0),
        (1.5, -1.0, 0.0),
        (2.0, 0.0, 1.0),
        (-2.0, -0.0, 1.0),
        (4194305.0, 0.0, -1.0),
        (4194304.5, 1.0, 0.0),
        (1.0e30, 0.0, 1.0),
        (-1.0e30, -0.0, 1.0),
        (
            0.25,
            std::f32::consts::FRAC_1_SQRT_2,
            std::f32::consts::FRAC_1_SQRT_2,
        ),
    ] {
        let (gs, gc) = reproducible::sincospi(x);
        same(gs, s, &format!("sinpi({x})"));
        same(gc, c, &format!("cospi({x})"));
    }
    for x in [f32::INFINITY, f32::NEG_INFINITY, f32::NAN] {
        let (s, c) = reproducible::sincospi(x);
        assert!(s.is_nan() && c.is_nan(), "sincospi({x}) = ({s}, {c})");
    }
}

#[test]
fn erfc_is_within_0_75_ulp_in_both_tails() {
    // erfc(0.476936) = ½ (where the method changes), the tail's pieces meet at 2 (and are
    // centred at 279/256, 247/64), erfc turns subnormal near 9.194 and rounds to 0 above 10.0542.
    let extra = [
        0.476_936_28,
        -0.476_936_28,
        279.0 / 256.0,
        2.0,
        247.0 / 64.0,
        9.194,
        10.054_195,
        10.054_194,
        MIN_SUB,
        -MIN_SUB,
        TINY,
    ];
    check_ulp(
        "reproducible::erfc",
        reproducible::erfc,
        libm::erfc,
        &[(0.0, 0.5), (0.5, 10.1), (-0.0, -4.0)],
        &extra,
        0.75,
    );
    same(reproducible::erfc(0.0), 1.0, "erfc(0)");
    same(reproducible::erfc(-0.0), 1.0, "erfc(-0)");
    same(reproducible::erfc(f32::INFINITY), 0.0, "erfc(inf)");
    same(reproducible::erfc(f32::NEG_INFINITY), 2.0, "erfc(-inf)");
    same(reproducible::erfc(f32::NAN), f32::NAN, "erfc(NaN)");
    same(reproducible::erfc(11.0), 0.0, "erfc(11)");
    same(reproducible::erfc(-11.0), 2.0, "erfc(-11)");
    assert!(
        reproducible::erfc(10.0) > 0.0 && reproducible::erfc(10.0) < TINY,
        "subnormal result"
    );
}

#[test]
fn normal_cdf_is_within_0_75_ulp_in_both_tails() {
    // Φ = ¼ and ¾ at ∓0.674490 (where the method changes), the tail's pieces meet at -2√2
    // (and are centred at -47/32, -357/64), Φ turns subnormal near -13.0 and rounds to 0 below
    // -14.1702; above 5.42, 1 - Φ is below half an ULP of 1.
    let extra = [
        0.674_489_75,
        -0.674_489_75,
        -47.0 / 32.0,
        -2.828_427,
        -357.0 / 64.0,
        -13.0,
        -14.170_185,
        -14.170_184,
        5.42,
        MIN_SUB,
        -MIN_SUB,
    ];
    check_ulp(
        "reproducible::normal_cdf",
        reproducible::normal_cdf,
        normal_cdf_f64,
        &[(-0.0, -0.7), (-0.7, -14.2), (0.0, 0.7), (0.7, 6.0)],
        &extra,
        0.75,
    );
    same(reproducible::normal_cdf(0.0), 0.5, "Φ(0)");
    same(reproducible::normal_cdf(-0.0), 0.5, "Φ(-0)");
    same(reproducible::normal_cdf(f32::INFINITY), 1.0, "Φ(inf)");
    same(reproducible::normal_cdf(f32::NEG_INFINITY), 0.0, "Φ(-inf)");
    same(reproducible::normal_cdf(f32::NAN), f32::NAN, "Φ(NaN)");
    same(reproducible::normal_cdf(-15.0), 0.0, "Φ(-15)");
    same(reproducible::normal_cdf(6.0), 1.0, "Φ(6)");
    assert!(reproducible::normal_cdf(-13.5) > 0.0 && reproducible::normal_cdf(-13.5) < TINY);
    // Symmetry, to the rounding of 1 - Φ(-x).
    for x in [0.1f32, 0.7, 1.0, 2.5, 4.0] {
        let (lo, hi) = (
            reproducible::normal_cdf(-x) as f64,
            reproducible::normal_cdf(x) as f64,
        );
        assert!(
            (lo + hi - 1.0).abs() <= 2.0 * f32::EPSILON as f64,
            "Φ({x}) + Φ(-{x})"
        );
    }
}

#[test]
fn fast_exp_and_exp2_stay_within_the_ptx_bounds_on_the_cpu() {
    let seed: u64 = rand::rng().random();
    let mut rng = StdRng::seed_from_u64(seed);
    // fast_exp2: 2 ULP from the correctly rounded result (ex2.approx.f32, PTX ISA), i.e. 2.5 ULP
    // from the exact value, for results of 2^-126 and more.
    let xs = inputs(
        &[(0.0, 128.0), (-0.0, -126.0)],
        &[127.999_99, -125.999],
        &mut rng,
    );
    let worst = worst_of(xs, |x| {
        let (got, want) = (math::fast_exp2(x), (x as f64).exp2());
        (got, want, ulp_error(got, want))
    });
    say(&format!(
        "math::fast_exp2 (CPU fallback): max error {:.3} ULP (bound 2.5) at x = {:e}",
        worst.error, worst.input
    ));
    assert!(worst.error <= 2.5, "{worst:?} seed {seed}");
    // fast_exp: relative error ≤ 2^-21.5 + |x|·2^-23.5 for results of 2^-126 and more.
    // (Up to 88.7: x·log2(e) rounds to 128, and so to inf, from 88.72283.)
    let xs = inputs(&[(0.0, 88.7), (-0.0, -87.33)], &[88.7, -87.33], &mut rng);
    let worst = worst_of(xs, |x| {
        let (got, want) = (math::fast_exp(x), (x as f64).exp());
        let bound = 2f64.powf(-21.5) + (x as f64).abs() * 2f64.powf(-23.5);
        (got, want, relative(got, want) / bound)
    });
    say(&format!(
        "math::fast_exp (CPU fallback): max error {:.3} of its bound 2^-21.5 + |x|·2^-23.5 at x = {:e}",
        worst.error, worst.input
    ));
    assert!(worst.error <= 1.0, "{worst:?} seed {seed}");
    // Flushing, as .ftz on the GPU.
    same(math::fast_exp2(-127.0), 0.0, "fast_exp2(-127) flushes");
    same(math::fast_exp(-88.0), 0.0, "fast_exp(-88) flushes");
    same(math::fast_exp2(MIN_SUB), 1.0, "fast_exp2(subnormal)");
    same(math::fast_exp2(0.0), 1.0, "fast_exp2(0)");
    same(math::fast_exp2(f32::NEG_INFINITY), 0.0, "fast_exp2(-inf)");
    same(
        math::fast_exp2(f32::INFINITY),
        f32::INFINITY,
        "fast_exp2(inf)",
    );
    same(math::fast_exp2(128.0), f32::INFINITY, "fast_exp2(128)");
    same(math::fast_exp(f32::NAN), f32::NAN, "fast_exp(NaN)");
}

#[test]
fn fast_ln_and_log2_stay_within_the_ptx_bounds_on_the_cpu() {
    let seed: u64 = rand::rng().random();
    let mut rng = StdRng::seed_from_u64(seed);
    // lg2.approx.f32 (PTX ISA): absolute error ≤ 2^-22 in (0.5, 2), relative ≤ 2^-22 elsewhere.
    // fast_ln adds the rounding of the product with ln 2: relative ≤ 2^-21.5 outside (0.5, 2).
    let inside = inputs(&[(0.5, 2.0)], &[0.5, 2.0], &mut rng);
    let outside = inputs(&[(TINY, 0.5), (2.0, f32::MAX)], &[0.5, 2.0], &mut rng);
    for (name, f, reference, bound_outside) in [
        (
            "fast_log2",
            math::fast_log2 as fn(f32) -> f32,
            f64::log2 as fn(f64) -> f64,
            -22.0,
        ),
        ("fast_ln", math::fast_ln, f64::ln, -21.5),
    ] {
        let absolute = worst_of(inside.clone(), |x| {
            let (got, want) = (f(x), reference(x as f64));
            let error = if x > 0.5 && x < 2.0 {
                (got as f64 - want).abs()
            } else {
                0.0
            };
            (got, want, error)
        });
        let relative = worst_of(outside.clone(), |x| {
            let (got, want) = (f(x), reference(x as f64));
            let error = if x > 0.5 && x < 2.0 {
                0.0
            } else {
                relative(got, want)
            };
            (got, want, error)
        });
        say(&format!(
            "math::{name} (CPU fallback): max absolute error 2^{:.2} in (0.5, 2) (bound 2^-22), max relative error 2^{:.2} elsewhere (bound 2^{bound_outside})",
            absolute.error.log2(),
            relative.error.log2()
        ));
        assert!(
            absolute.error <= 2f64.powi(-22),
            "{name}: {absolute:?} seed {seed}"
        );
        assert!(
            relative.error <= 2f64.powf(bound_outside),
            "{name}: {relative:?} seed {seed}"
        );
    }
    same(math::fast_ln(1.0), 0.0, "fast_ln(1)");
    same(math::fast_log2(8.0), 3.0, "fast_log2(8)");
    same(math::fast_ln(0.0), f32::NEG_INFINITY, "fast_ln(0)");
    same(
        math::fast_ln(MIN_SUB),
        f32::NEG_INFINITY,
        "fast_ln(subnormal) flushes",
    );
    same(math::fast_ln(-1.0), f32::NAN, "fast_ln(-1)");
    same(math::fast_ln(f32::INFINITY), f32::INFINITY, "fast_ln(inf)");
}

#[test]
fn fma_is_fused() {
    // (1 + 2^-12)² = 1 + 2^-11 + 2^-24: the last term survives only without an intermediate
    // rounding.
    let a = 1.0 + 2f32.powi(-12);
    same(
        math::fma(a, a, -(1.0 + 2f32.powi(-11))),
        2f32.powi(-24),
        "fma",
    );
}
