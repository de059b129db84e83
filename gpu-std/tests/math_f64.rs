//! ferrocuda-std's f64 math (the default tier for `f64`: `math::exp(x)` with an f64 x, or
//! `x.exp()` through `DeviceMath`) on the CPU, where its bits are the GPU's (plain IEEE
//! arithmetic; `tests/math_f64_kernel.rs` checks that on the PTX emulator):
//! - against mpmath at 300 bits (`tests/data/f64_reference.txt`), each function within CUDA's
//!   published double-precision bound, with the measured maximum printed;
//! - against std's f64 functions (glibc's, themselves within about 0.52 ULP) on a million random
//!   inputs per function, at the bound plus 1 ULP, for the ranges the reference set samples
//!   thinly;
//! - the special values (infinities, NaN, zeros, overflow and underflow edges).

mod f64_reference;

use f64_reference::{describe, worst};
use ferrocuda_std::math::{self, DeviceMath};
use rand::{Rng, SeedableRng};

/// Checks `f` against the reference points of `name`: at most `bound` ULP.
fn within(name: &str, bound: f64, f: impl Fn(f64, f64) -> f64) {
    let w = worst(name, |p| f(p.x, p.y));
    let text = describe(&format!("math::{name}::<f64>"), w);
    eprintln!("{text} (bound {bound})");
    assert!(w.0 <= bound, "{text}: over the bound {bound}");
}

#[test]
fn exp_is_within_1_ulp() {
    within("exp", 1.0, |x, _| math::exp(x));
}

#[test]
fn exp2_is_within_1_ulp() {
    within("exp2", 1.0, |x, _| math::exp2(x));
}

#[test]
fn ln_is_within_1_ulp() {
    within("ln", 1.0, |x, _| math::ln(x));
}

#[test]
fn log2_is_within_1_ulp() {
    within("log2", 1.0, |x, _| math::log2(x));
}

#[test]
fn sin_and_cos_are_within_2_ulp() {
    within("sin", 2.0, |x, _| math::sin(x));
    within("cos", 2.0, |x, _| math::cos(x));
    within("sin", 2.0, |x, _| math::sin_cos(x).0);
    within("cos", 2.0, |x, _| math::sin_cos(x).1);
}

#[test]
fn pow_is_within_2_ulp() {
    within("pow", 2.0, math::pow);
}

#[test]
fn erfc_is_within_4_ulp() {
    within("erfc", 4.0, |x, _| math::erfc(x));
}

#[test]
fn normal_cdf_is_within_5_ulp() {
    within("normal_cdf", 5.0, |x, _| math::normal_cdf(x));
}

/// Error in ULPs of `got` against std's `want` (glibc, within about 0.52 ULP of exact).
fn std_error(got: f64, want: f64) -> f64 {
    if got == want || (got.is_nan() && want.is_nan()) {
        return 0.0;
    }
    if !got.is_finite() || !want.is_finite() {
        return f64::INFINITY;
    }
    (got - want).abs() / f64_reference::ulp(want)
}

/// A million random inputs from `range`: the worst error against std within `bound + 1`.
fn sweep_against_std(
    name: &str,
    range: (f64, f64),
    bound: f64,
    ours: fn(f64) -> f64,
    std: fn(f64) -> f64,
) {
    let seed: u64 = rand::random();
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut worst = (0.0, 0.0);
    for _ in 0..1_000_000 {
        let x = rng.random_range(range.0..range.1);
        let error = std_error(ours(x), std(x));
        if error > worst.0 {
            worst = (error, x);
        }
    }
    eprintln!(
        "math::{name}::<f64> against std on {range:?}: max {:.3} ULP at {:e}",
        worst.0, worst.1
    );
    assert!(
        worst.0 <= bound + 1.0,
        "{name}({:e}): {} ULP from std (seed {seed})",
        worst.1,
        worst.0
    );
}

#[test]
fn sweeps_against_std_stay_within_the_bounds_plus_std_s_own_error() {
    sweep_against_std("exp", (-745.0, 709.7), 1.0, math::exp, f64::exp);
    sweep_against_std("exp", (-1.0, 1.0), 1.0, math::exp, f64::exp);
    sweep_against_std("exp2", (-1074.0, 1023.9), 1.0, math::exp2, f64::exp2);
    sweep_against_std("ln", (0.5, 2.0), 1.0, math::ln, f64::ln);
    sweep_against_std("ln", (1e-300, 1e300), 1.0, math::ln, f64::ln);
    sweep_against_std("log2", (0.5, 2.0), 1.0, math::log2, f64::log2);
    sweep_against_std("sin", (-100.0, 100.0), 2.0, math::sin, f64::sin);
    sweep_against_std("cos", (-100.0, 100.0), 2.0, math::cos, f64::cos);
    sweep_against_std("sin", (1e5, 1e300), 2.0, math::sin, f64::sin);
    sweep_against_std("sqrt", (0.0, 1e300), 0.0, math::sqrt, f64::sqrt);
    sweep_against_std(
        "pow(_, 0.75)",
        (0.0, 1e300),
        2.0,
        |x| math::pow(x, 0.75),
        |x| x.powf(0.75),
    );
    sweep_against_std(
        "pow(_, -13.5)",
        (0.001, 1e20),
        2.0,
        |x| math::pow(x, -13.5),
        |x| x.powf(-13.5),
    );
}

/// The same value or both NaN.
fn same(got: f64, want: f64, what: &str) {
    assert!(
        got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
        "{what}: {got:e}, want {want:e}"
    );
}

#[test]
fn special_values() {
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    for (what, got, want) in [
        ("exp(0)", math::exp(0.0), 1.0),
        ("exp(-0)", math::exp(-0.0), 1.0),
        ("exp(inf)", math::exp(inf), inf),
        ("exp(-inf)", math::exp(-inf), 0.0),
        ("exp(NaN)", math::exp(nan), nan),
        ("exp(709.79)", math::exp(709.79), inf),
        ("exp(-745.14)", math::exp(-745.14), 0.0),
        ("exp(-745.13)", math::exp(-745.13), 5e-324),
        ("exp2(-1074)", math::exp2(-1074.0), 5e-324),
        ("exp2(1023)", math::exp2(1023.0), 2f64.powi(1023)),
        ("exp2(1024)", math::exp2(1024.0), inf),
        ("exp2(-1076)", math::exp2(-1076.0), 0.0),
        ("exp2(-inf)", math::exp2(-inf), 0.0),
        ("exp2(NaN)", math::exp2(nan), nan),
        ("ln(1)", math::ln(1.0), 0.0),
        ("ln(0)", math::ln(0.0), -inf),
        ("ln(-1)", math::ln(-1.0), nan),
        ("ln(inf)", math::ln(inf), inf),
        ("log2(2^-1074)", math::log2(5e-324), -1074.0),
        ("log2(8)", math::log2(8.0), 3.0),
        ("sqrt(-0)", math::sqrt(-0.0), -0.0),
        ("sqrt(-1)", math::sqrt(-1.0), nan),
        ("sqrt(inf)", math::sqrt(inf), inf),
        ("sin(-0)", math::sin(-0.0), -0.0),
        ("sin(inf)", math::sin(inf), nan),
        ("cos(0)", math::cos(0.0), 1.0),
        ("pow(2, 10)", math::pow(2.0, 10.0), 1024.0),
        ("pow(-2, 3)", math::pow(-2.0, 3.0), -8.0),
        ("pow(-2, 0.5)", math::pow(-2.0, 0.5), nan),
        ("pow(0, -1)", math::pow(0.0, -1.0), inf),
        ("pow(NaN, 0)", math::pow(nan, 0.0), 1.0),
        ("erfc(-inf)", math::erfc(-inf), 2.0),
        ("erfc(inf)", math::erfc(inf), 0.0),
        ("normal_cdf(-inf)", math::normal_cdf(-inf), 0.0),
        ("normal_cdf(inf)", math::normal_cdf(inf), 1.0),
        ("normal_cdf(NaN)", math::normal_cdf(nan), nan),
        ("normal_cdf(0)", math::normal_cdf(0.0), 0.5),
        ("normal_cdf(-39)", math::normal_cdf(-39.0), 0.0),
    ] {
        same(got, want, what);
    }
    // Subnormal results of exp round once: e^x at x = ln(2^-1074 · 3) is 3 subnormal units.
    same(
        math::exp(3f64.ln() - 1074.0 * 2f64.ln()),
        3.0 * 5e-324,
        "exp into the subnormals",
    );
}

#[test]
fn methods_and_functions_agree() {
    let x = 0.7f64;
    same(DeviceMath::exp(x), math::exp(x), "exp");
    same(DeviceMath::powf(x, 3.3), math::pow(x, 3.3), "powf");
    same(
        ferrocuda_std::Number::mul_add(x, 2.0, 1.0),
        math::fma(x, 2.0, 1.0),
        "mul_add",
    );
    same(x.normal_cdf(), math::normal_cdf(x), "normal_cdf");
    // The f32 functions are still the f32 tier: exp(1) rounds to e's f32 neighbour.
    assert_eq!(math::exp(1.0f32), core::f32::consts::E);
}

#[test]
fn pow_has_c99_s_special_cases() {
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    let values = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -0.5,
        2.0,
        -2.0,
        3.0,
        -3.0,
        inf,
        -inf,
        nan,
        1e300,
        -1e300,
        9007199254740993.0,
        -9007199254740993.0,
        5e-324,
    ];
    for x in values {
        for y in values {
            let (got, want) = (math::pow(x, y), x.powf(y));
            let close = got == want
                || (got.is_nan() && want.is_nan())
                || (got.is_finite() && (got - want).abs() <= f64_reference::ulp(want));
            assert!(
                close && (want.is_nan() || got.is_sign_negative() == want.is_sign_negative()),
                "pow({x:e}, {y:e}) = {got:e}, C99 (glibc) {want:e}"
            );
        }
    }
}
