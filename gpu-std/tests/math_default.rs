//! ferrocuda-std's default math tier (`math::exp`, `ln`, `erfc`, `normal_cdf`, ...) on the CPU
//! against f64 references: ULP sweeps of each function's domain (as math_reproducible.rs), the
//! special values, and the bounds each function states for the CPU. The GPU bounds, which the
//! approximate instructions' worst case sets, are checked by the unit tests of
//! `src/math/model_tests.rs` (that model) and by `tests/math_kernel.rs` on a GPU.

mod sweep;

use ferrocuda_std::math;
use rand::{Rng, SeedableRng};
use sweep::*;

#[test]
fn exp_is_within_1_25_ulp_on_the_cpu() {
    check_ulp(
        "math::exp",
        math::exp,
        f64::exp,
        &[(0.0, 89.0), (-0.0, -105.0)],
        &EXP_EXTRA,
        1.25,
    );
    exp_specials(math::exp);
}

#[test]
fn exp2_is_correctly_rounded_on_the_cpu() {
    check_ulp(
        "math::exp2",
        math::exp2,
        f64::exp2,
        &[(0.0, 129.0), (-0.0, -151.0)],
        &[127.999_99, 128.0, -126.0, -149.0, -149.5, -150.0, MIN_SUB],
        0.5,
    );
    same(math::exp2(-149.0), MIN_SUB, "exp2(-149)");
    same(math::exp2(f32::NEG_INFINITY), 0.0, "exp2(-inf)");
    same(math::exp2(f32::INFINITY), f32::INFINITY, "exp2(inf)");
    same(math::exp2(f32::NAN), f32::NAN, "exp2(NaN)");
}

/// The logarithms' special values, for `ln` and `log2` alike.
fn log_specials(f: fn(f32) -> f32, name: &str) {
    same(f(1.0), 0.0, &format!("{name}(1)"));
    same(f(0.0), f32::NEG_INFINITY, &format!("{name}(0)"));
    same(f(-0.0), f32::NEG_INFINITY, &format!("{name}(-0)"));
    same(f(-1.0), f32::NAN, &format!("{name}(-1)"));
    same(f(-MIN_SUB), f32::NAN, &format!("{name}(-subnormal)"));
    same(f(f32::NEG_INFINITY), f32::NAN, &format!("{name}(-inf)"));
    same(f(f32::INFINITY), f32::INFINITY, &format!("{name}(inf)"));
    same(f(f32::NAN), f32::NAN, &format!("{name}(NaN)"));
}

const LOG_RANGES: [(f32, f32); 3] = [(MIN_SUB, 0.5), (0.5, 2.0), (2.0, f32::MAX)];
const LOG_EXTRA: [f32; 8] = [
    1.0,
    0.5,
    2.0,
    std::f32::consts::FRAC_1_SQRT_2,
    std::f32::consts::SQRT_2,
    MIN_SUB,
    TINY,
    f32::MAX,
];

#[test]
fn ln_is_within_1_ulp_everywhere() {
    check_ulp("math::ln", math::ln, f64::ln, &LOG_RANGES, &LOG_EXTRA, 1.0);
    log_specials(math::ln, "ln");
}

#[test]
fn log2_is_within_1_ulp_everywhere_and_exact_on_powers_of_two() {
    check_ulp(
        "math::log2",
        math::log2,
        f64::log2,
        &LOG_RANGES,
        &LOG_EXTRA,
        1.0,
    );
    log_specials(math::log2, "log2");
    for k in -149..128 {
        let x = 2f64.powi(k) as f32;
        same(math::log2(x), k as f32, &format!("log2(2^{k})"));
    }
}

#[test]
fn erfc_is_within_3_5_ulp_on_the_cpu_in_both_tails() {
    check_ulp(
        "math::erfc",
        math::erfc,
        libm::erfc,
        &[(0.0, 0.5), (0.5, 10.1), (-0.0, -4.0)],
        &[2.0, 9.194, 10.054_195, 10.054_194, MIN_SUB, -MIN_SUB, TINY],
        3.5,
    );
    same(math::erfc(f32::INFINITY), 0.0, "erfc(inf)");
    same(math::erfc(f32::NEG_INFINITY), 2.0, "erfc(-inf)");
    same(math::erfc(f32::NAN), f32::NAN, "erfc(NaN)");
    same(math::erfc(11.0), 0.0, "erfc(11)");
    same(math::erfc(-11.0), 2.0, "erfc(-11)");
    assert!(math::erfc(10.0) > 0.0 && math::erfc(10.0) < TINY);
}

#[test]
fn normal_cdf_is_within_3_ulp_on_the_cpu_in_both_tails() {
    check_ulp(
        "math::normal_cdf",
        math::normal_cdf,
        normal_cdf_f64,
        &[(-0.0, -0.7), (-0.7, -14.2), (0.0, 0.7), (0.7, 6.0)],
        &[2.5, -2.5, -13.0, -14.170_185, -14.170_184, 5.42, MIN_SUB],
        3.0,
    );
    same(math::normal_cdf(f32::INFINITY), 1.0, "Φ(inf)");
    same(math::normal_cdf(f32::NEG_INFINITY), 0.0, "Φ(-inf)");
    same(math::normal_cdf(f32::NAN), f32::NAN, "Φ(NaN)");
    same(math::normal_cdf(-15.0), 0.0, "Φ(-15)");
    same(math::normal_cdf(6.0), 1.0, "Φ(6)");
    assert!(math::normal_cdf(-13.5) > 0.0 && math::normal_cdf(-13.5) < TINY);
}

/// Every positive f32 through `ln` and `log2` (pure IEEE arithmetic: these are the GPU's bits
/// too), about a minute on two cores: run by hand (`cargo test -p ferrocuda-std --test
/// math_default -- --ignored`) after changing either.
#[test]
#[ignore = "exhaustive: 2^31 inputs per function, run by hand"]
fn ln_and_log2_are_within_1_ulp_on_every_positive_float() {
    for (name, f, reference) in [
        (
            "math::ln",
            math::ln as fn(f32) -> f32,
            f64::ln as fn(f64) -> f64,
        ),
        ("math::log2", math::log2, f64::log2),
    ] {
        // In chunks of 2^24 inputs (64 MB), not all at once.
        let worst = (0..0x7f80_0000u32)
            .step_by(1 << 24)
            .map(|start| {
                let chunk = (start.max(1)..(start + (1 << 24)).min(0x7f80_0000))
                    .map(f32::from_bits)
                    .collect();
                worst_of(chunk, |x| {
                    let (got, want) = (f(x), reference(x as f64));
                    (got, want, ulp_error(got, want))
                })
            })
            .fold(Worst::new(), Worst::merge);
        say(&format!(
            "{name}: max error {:.4} ULP over every positive float at x = {:e}",
            worst.error, worst.input
        ));
        assert!(worst.error <= 1.0, "{name}: {worst:?}");
    }
}

/// sin/cos's ranges: the polynomial's own interval, the Cody-Waite fast path, the Payne-Hanek
/// slow path up to the largest float; both signs.
const TRIG_RANGES: [(f32, f32); 6] = [
    (0.0, std::f32::consts::FRAC_PI_4),
    (std::f32::consts::FRAC_PI_4, 105_615.0),
    (105_615.0, f32::MAX),
    (-0.0, -std::f32::consts::FRAC_PI_4),
    (-std::f32::consts::FRAC_PI_4, -105_615.0),
    (-105_615.0, -f32::MAX),
];
/// Near multiples of π/2 (where the result is small and the reduction's error shows), either
/// side of the fast path's limit, tiny inputs and large ones at several exponents.
const TRIG_EXTRA: [f32; 13] = [
    std::f32::consts::FRAC_PI_2,
    std::f32::consts::PI,
    3.0 * std::f32::consts::FRAC_PI_2,
    105_615.0,
    105_616.0,
    102_940.414,
    MIN_SUB,
    TINY,
    f32::MAX,
    1.6367173e16,
    7.724_094e31,
    1.0e30,
    3.0e38,
];

#[test]
fn sin_and_cos_are_within_cudas_2_ulp_everywhere() {
    for (name, f, reference) in [
        (
            "math::sin",
            math::sin as fn(f32) -> f32,
            f64::sin as fn(f64) -> f64,
        ),
        ("math::cos", math::cos, f64::cos),
    ] {
        check_ulp(name, f, reference, &TRIG_RANGES, &TRIG_EXTRA, 2.0);
    }
    for x in [0.0, -0.0, MIN_SUB, -MIN_SUB, TINY] {
        same(math::sin(x), x, &format!("sin({x:e})"));
        same(math::cos(x), 1.0, &format!("cos({x:e})"));
    }
    for x in [f32::INFINITY, f32::NEG_INFINITY, f32::NAN] {
        same(math::sin(x), f32::NAN, &format!("sin({x})"));
        same(math::cos(x), f32::NAN, &format!("cos({x})"));
    }
}

#[test]
fn sin_cos_gives_sin_and_cos_bit_for_bit() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    for x in inputs(&TRIG_RANGES, &TRIG_EXTRA, &mut rng)
        .into_iter()
        .step_by(7)
    {
        let (s, c) = math::sin_cos(x);
        same(s, math::sin(x), &format!("sin_cos({x:e}).0"));
        same(c, math::cos(x), &format!("sin_cos({x:e}).1"));
    }
}

/// C99 Annex F.9.4.4's special cases of pow, one row per rule (and each row's sign variants).
#[test]
fn pow_follows_c99_annex_f_special_cases() {
    let (inf, nan) = (f32::INFINITY, f32::NAN);
    #[rustfmt::skip]
    let table: &[(f32, f32, f32, &str)] = &[
        (0.0, -3.0, inf, "pow(+0, odd y < 0) = +inf"),
        (-0.0, -3.0, -inf, "pow(-0, odd y < 0) = -inf"),
        (0.0, -2.0, inf, "pow(±0, y < 0 not odd) = +inf"),
        (-0.0, -2.0, inf, "pow(±0, y < 0 not odd) = +inf"),
        (-0.0, -0.5, inf, "pow(±0, y < 0 not odd) = +inf"),
        (-0.0, -inf, inf, "pow(±0, -inf) = +inf"),
        (0.0, 3.0, 0.0, "pow(+0, odd y > 0) = +0"),
        (-0.0, 3.0, -0.0, "pow(-0, odd y > 0) = -0"),
        (-0.0, 2.0, 0.0, "pow(±0, y > 0 not odd) = +0"),
        (-0.0, 0.5, 0.0, "pow(±0, y > 0 not odd) = +0"),
        (-0.0, inf, 0.0, "pow(±0, +inf) = +0"),
        (-1.0, inf, 1.0, "pow(-1, ±inf) = 1"),
        (-1.0, -inf, 1.0, "pow(-1, ±inf) = 1"),
        (1.0, 2.5, 1.0, "pow(+1, y) = 1"),
        (1.0, nan, 1.0, "pow(+1, NaN) = 1"),
        (1.0, -inf, 1.0, "pow(+1, -inf) = 1"),
        (nan, 0.0, 1.0, "pow(NaN, +0) = 1"),
        (-inf, -0.0, 1.0, "pow(x, -0) = 1"),
        (-2.0, 0.0, 1.0, "pow(x, +0) = 1"),
        (-2.0, 0.5, nan, "pow(x < 0 finite, y non-integer) = NaN"),
        (-0.5, -1.5, nan, "pow(x < 0 finite, y non-integer) = NaN"),
        (0.5, -inf, inf, "pow(|x| < 1, -inf) = +inf"),
        (-0.5, -inf, inf, "pow(|x| < 1, -inf) = +inf"),
        (2.0, -inf, 0.0, "pow(|x| > 1, -inf) = +0"),
        (-2.0, -inf, 0.0, "pow(|x| > 1, -inf) = +0"),
        (0.5, inf, 0.0, "pow(|x| < 1, +inf) = +0"),
        (-0.5, inf, 0.0, "pow(|x| < 1, +inf) = +0"),
        (2.0, inf, inf, "pow(|x| > 1, +inf) = +inf"),
        (-2.0, inf, inf, "pow(|x| > 1, +inf) = +inf"),
        (-inf, -3.0, -0.0, "pow(-inf, odd y < 0) = -0"),
        (-inf, -2.0, 0.0, "pow(-inf, y < 0 not odd) = +0"),
        (-inf, -0.5, 0.0, "pow(-inf, y < 0 not odd) = +0"),
        (-inf, 3.0, -inf, "pow(-inf, odd y > 0) = -inf"),
        (-inf, 2.0, inf, "pow(-inf, y > 0 not odd) = +inf"),
        (-inf, 0.5, inf, "pow(-inf, y > 0 not odd) = +inf"),
        (inf, -0.5, 0.0, "pow(+inf, y < 0) = +0"),
        (inf, 0.5, inf, "pow(+inf, y > 0) = +inf"),
        (nan, 1.0, nan, "pow(NaN, y != 0) = NaN"),
        (2.0, nan, nan, "pow(x != 1, NaN) = NaN"),
        (-2.0, 3.0, -8.0, "x < 0, odd y: -|x|^y"),
        (-2.0, 2.0, 4.0, "x < 0, even y: |x|^y"),
        (-2.0, 16_777_217.0, inf, "y ≥ 2^24 is even"),
        (-0.5, 16_777_215.0, -0.0, "odd y below 2^24: the sign stays"),
        (-1.0, 16_777_215.0, -1.0, "pow(-1, odd y) = -1"),
        (-1.0, 1.0e30, 1.0, "pow(-1, even y) = 1"),
        (2.0, 128.0, inf, "overflow"),
        (2.0, -149.0, MIN_SUB, "the smallest subnormal"),
        (2.0, -151.0, 0.0, "underflow"),
        (f32::MAX, 1.0, f32::MAX, "pow(x, 1) = x"),
        (MIN_SUB, 1.0, MIN_SUB, "pow(x, 1) = x, subnormal"),
    ];
    for &(x, y, want, rule) in table {
        same(
            math::pow(x, y),
            want,
            &format!("pow({x:e}, {y:e}) [{rule}]"),
        );
    }
    // Every rule at ±0's and ±inf's neighbours in y too: odd, even and non-integer y of both signs.
    for y in [-5.0f32, -4.0, -0.25, 0.25, 4.0, 5.0] {
        let odd = y.abs() == 5.0;
        for x in [0.0f32, -0.0, f32::INFINITY, f32::NEG_INFINITY] {
            let want = (x as f64).powf(y as f64) as f32;
            same(
                math::pow(x, y),
                want,
                &format!("pow({x:e}, {y}) (odd: {odd})"),
            );
        }
    }
}

/// The largest `ulp_error` of `math::pow` over `pairs` against f64's `powf`.
fn pow_worst(pairs: &[(f32, f32)]) -> (f64, f32, f32) {
    let mut worst = (0.0, 0.0, 0.0);
    for &(x, y) in pairs {
        let (got, want) = (math::pow(x, y), (x as f64).powf(y as f64));
        let error = ulp_error(got, want);
        if error > worst.0 || error.is_nan() {
            worst = (error, x, y);
        }
    }
    worst
}

#[test]
fn pow_is_within_1_ulp_on_the_cpu() {
    let seed: u64 = rand::random();
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut pairs = Vec::new();
    for _ in 0..400_000 {
        // Any positive x, y such that y·log2(x) spans the results from underflow to overflow.
        let x = f32::from_bits(rng.random_range(1..0x7f80_0000u32));
        let target: f32 = rng.random_range(-155.0..130.0);
        let log2x = (x as f64).log2() as f32;
        if log2x != 0.0 {
            pairs.push((x, target / log2x));
        }
        // The reduced argument's ends (m near √½ and √2, ×2^-1, 1, 2), where the series' u³ part
        // is the largest share of log2 x and y·log2 x up to ±150 magnifies its rounding most.
        let m = f32::from_bits(if rng.random() {
            rng.random_range(0x3f35_04f3..0x3f40_0000u32)
        } else {
            rng.random_range(0x3fa8_0000..0x3fb5_04f3u32)
        }) * [0.5, 1.0, 2.0][rng.random_range(0..3)];
        let target: f32 = rng.random_range(-155.0..130.0);
        pairs.push((m, target / (m as f64).log2() as f32));
        // x near 1 with large y: log2 x's low bits matter most here.
        let near_one =
            f32::from_bits(0x3f80_0000u32.wrapping_add(rng.random_range(0..4096u32)) - 2048);
        pairs.push((near_one, rng.random_range(-4.0e6..4.0e6)));
        // Negative x with integer y (both parities).
        let base: f32 = -rng.random_range(0.01..100.0f32);
        let exponent = rng.random_range(-40..40) as f32;
        pairs.push((base, exponent));
        // Any bits at all (mostly inf, 0 and NaN).
        pairs.push((f32::from_bits(rng.random()), f32::from_bits(rng.random())));
    }
    let (error, x, y) = pow_worst(&pairs);
    say(&format!(
        "math::pow: max error {error:.3} ULP over {} pairs at pow({x:e}, {y:e}) (seed {seed})",
        pairs.len()
    ));
    assert!(error <= 1.0, "pow({x:e}, {y:e}): {error} ULP (seed {seed})");
}
