//! Philox4x32-10 against Random123's published known-answer vectors, the exactness of the
//! uniform conversions, and the moments of a million uniform and normal samples.

use ferrocuda_std::math;
use ferrocuda_std::random::{normal_pair, uniform_closed_open, uniform_open_closed, Philox4x32};
use std::io::Write;

fn say(text: &str) {
    let _ = writeln!(std::io::stderr(), "{text}");
}

#[test]
fn philox4x32_10_matches_the_random123_known_answers() {
    // Random123 tests/kat_vectors, the "philox4x32 10" lines: counter (4 words), key (2 words),
    // expected output (4 words).
    let vectors: [([u32; 4], [u32; 2], [u32; 4]); 3] = [
        (
            [0, 0, 0, 0],
            [0, 0],
            [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8],
        ),
        (
            [0xffff_ffff; 4],
            [0xffff_ffff; 2],
            [0x408f_276d, 0x41c8_3b0e, 0xa20b_c7c6, 0x6d54_51fd],
        ),
        (
            // The digits of π.
            [0x243f_6a88, 0x85a3_08d3, 0x1319_8a2e, 0x0370_7344],
            [0xa409_3822, 0x299f_31d0],
            [0xd16c_fe09, 0x94fd_cceb, 0x5001_e420, 0x2412_6ea1],
        ),
    ];
    for (counter, key, want) in vectors {
        let got = Philox4x32::new(key).block(counter);
        assert_eq!(got, want, "philox4x32_10({counter:08x?}, {key:08x?})");
    }
    // from_seed and block_at lay the words out as documented.
    let rng = Philox4x32::from_seed(0x299f_31d0_a409_3822);
    assert_eq!(rng.key(), [0xa409_3822, 0x299f_31d0]);
    assert_eq!(
        rng.block_at(0x85a3_08d3_243f_6a88, 0x0370_7344_1319_8a2e),
        [0xd16c_fe09, 0x94fd_cceb, 0x5001_e420, 0x2412_6ea1]
    );
}

#[test]
fn uniform_conversions_are_exact_and_keep_their_open_ends() {
    assert_eq!(uniform_open_closed(0), 2f32.powi(-24));
    assert_eq!(uniform_open_closed(u32::MAX), 1.0);
    assert_eq!(
        uniform_open_closed(0xff),
        2f32.powi(-24),
        "low 8 bits unused"
    );
    assert_eq!(uniform_open_closed(0x8000_0000), 0.5 + 2f32.powi(-24));
    assert_eq!(uniform_closed_open(0), 0.0);
    assert_eq!(uniform_closed_open(u32::MAX), 1.0 - 2f32.powi(-24));
    assert_eq!(uniform_closed_open(0x8000_0000), 0.5);
    // Every value is k·2^-24 exactly, and consecutive top-24-bit values give consecutive k.
    for k in [1u32, 2, 3, 1 << 20, (1 << 24) - 1] {
        assert_eq!(uniform_closed_open(k << 8), k as f32 * 2f32.powi(-24));
        assert_eq!(uniform_open_closed(k << 8), (k + 1) as f32 * 2f32.powi(-24));
    }
    // Box-Muller's extremes are finite: the smallest radius word gives the largest |z|.
    let (z0, z1) = normal_pair(0, 0);
    assert!(z0.is_finite() && z1 == 0.0, "({z0}, {z1})");
    assert!((z0 - (2.0 * 33.0 * std::f64::consts::LN_2).sqrt() as f32).abs() < 1e-5);
    assert_eq!(normal_pair(u32::MAX, 0), (0.0, 0.0));
}

/// Mean and variance of `values` in f64.
fn moments(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var)
}

/// Asserts `got` is within 5 standard errors of `want`.
#[track_caller]
fn within_5_se(what: &str, got: f64, want: f64, se: f64) {
    say(&format!(
        "random: {what} = {got:.6} (expected {want:.6}, {:.2} standard errors off)",
        (got - want) / se
    ));
    assert!(
        (got - want).abs() <= 5.0 * se,
        "{what} = {got}, expected {want} ± 5 × {se}"
    );
}

#[test]
fn a_million_uniform_and_normal_samples_have_the_right_moments() {
    // Fixed seed: a statistical test with a random seed would fail now and then by design.
    let rng = Philox4x32::from_seed(0x5eed_0f0f_f1ce);
    let n = 1 << 20;
    let mut uniform = Vec::with_capacity(4 * n);
    let mut normal = Vec::with_capacity(4 * n);
    let mut products = Vec::with_capacity(2 * n);
    for j in 0..n as u64 {
        let [a, b, c, d] = rng.block_at(j, 0);
        uniform.extend([a, b, c, d].map(|w| uniform_open_closed(w) as f64));
        let (z0, z1) = normal_pair(a, b);
        let (z2, z3) = normal_pair(c, d);
        normal.extend([z0, z1, z2, z3].map(f64::from));
        products.extend([z0 as f64 * z1 as f64, z2 as f64 * z3 as f64]);
    }
    let m = uniform.len() as f64;
    // Uniform on (0, 1]: mean ½, variance 1/12 (the 2^-24 grid shifts these by < 2^-24).
    let (mean, var) = moments(&uniform);
    within_5_se("uniform mean", mean, 0.5, (1.0 / 12.0 / m).sqrt());
    // The variance's standard error: √((μ4 - σ⁴)/n), μ4 = 1/80 for the uniform.
    within_5_se(
        "uniform variance",
        var,
        1.0 / 12.0,
        ((1.0 / 80.0 - 1.0 / 144.0) / m).sqrt(),
    );
    // Normal: mean 0, variance 1 (μ4 = 3), P(|z| > 2) = 0.0455003, the pair uncorrelated, and
    // Φ(z) uniform again (mean ½, variance 1/12).
    let (mean, var) = moments(&normal);
    within_5_se("normal mean", mean, 0.0, (1.0 / m).sqrt());
    within_5_se("normal variance", var, 1.0, (2.0 / m).sqrt());
    let tail = normal.iter().filter(|z| z.abs() > 2.0).count() as f64 / m;
    let p = 0.045_500_263_896_358_41;
    within_5_se("P(|z| > 2)", tail, p, (p * (1.0 - p) / m).sqrt());
    let (correlation, _) = moments(&products);
    within_5_se(
        "E[z0·z1]",
        correlation,
        0.0,
        (1.0 / products.len() as f64).sqrt(),
    );
    let phi: Vec<f64> = normal
        .iter()
        .map(|&z| math::normal_cdf(z as f32) as f64)
        .collect();
    let (mean, var) = moments(&phi);
    within_5_se("mean of Φ(z)", mean, 0.5, (1.0 / 12.0 / m).sqrt());
    within_5_se(
        "variance of Φ(z)",
        var,
        1.0 / 12.0,
        ((1.0 / 80.0 - 1.0 / 144.0) / m).sqrt(),
    );
}
