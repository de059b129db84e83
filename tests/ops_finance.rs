//! `ops::black_scholes`, `ops::monte_carlo_pi` and `ops::european_option_monte_carlo` on the CPU
//! executor (checked mode) against f64 references, their input checks, the launch-shape
//! independence of the Monte Carlo kernels, and the same on a GPU when there is one.

mod support;

use ferrocuda::kernels::monte_carlo::{
    in_quarter_disk, monte_carlo_option, monte_carlo_pi, OPTION_STREAM, PI_STREAM,
};
use ferrocuda::ops::{self, OptionParams};
use ferrocuda::{launch, Device, Error, Module};
use ferrocuda_std::random::{normal_pair, Philox4x32};
use rand::rngs::StdRng;
use rand::Rng;
use std::f64::consts::{PI, SQRT_2};

fn cpu_kernels() -> Module {
    let device = Device::cpu();
    assert!(device.checks_enabled(), "these tests run in checked mode");
    device.load(&ferrocuda::KERNELS).unwrap()
}

/// Φ in f64.
fn normal_cdf(x: f64) -> f64 {
    0.5 * libm::erfc(-x / SQRT_2)
}

/// Black-Scholes-Merton in f64 from the f32 inputs, with what the f32 result's error depends
/// on (see [`tolerance`]).
struct Reference {
    call: f64,
    put: f64,
    /// S·Φ(d1) + K·e^(-rT)·Φ(d2) and K·e^(-rT)·Φ(-d2) + S·Φ(-d1): the size of the terms each
    /// price is the difference of.
    call_terms: f64,
    put_terms: f64,
    /// S·φ(d1)·(|d1| + σ√T + 1): the effect of a relative rounding of d1 and d2 on the prices.
    d_sensitivity: f64,
    /// (S + K)·2^-147: where Φ is subnormal its absolute error is 2^-149 and more.
    floor: f64,
}

fn black_scholes_f64(s: f32, k: f32, t: f32, r: f32, v: f32) -> Reference {
    let (s, k, t, r, v) = (s as f64, k as f64, t as f64, r as f64, v as f64);
    let discounted = k * (-r * t).exp();
    if t == 0.0 {
        return Reference {
            call: (s - k).max(0.0),
            put: (k - s).max(0.0),
            call_terms: s + k,
            put_terms: s + k,
            d_sensitivity: 0.0,
            floor: 0.0,
        };
    }
    let vst = v * t.sqrt();
    let d1 = ((s / k).ln() + (r + 0.5 * v * v) * t) / vst;
    let d2 = d1 - vst;
    let density = (-0.5 * d1 * d1).exp() / (2.0 * PI).sqrt();
    Reference {
        call: s * normal_cdf(d1) - discounted * normal_cdf(d2),
        put: discounted * normal_cdf(-d2) - s * normal_cdf(-d1),
        call_terms: s * normal_cdf(d1) + discounted * normal_cdf(d2),
        put_terms: discounted * normal_cdf(-d2) + s * normal_cdf(-d1),
        d_sensitivity: s * density * (d1.abs() + vst + 1.0),
        floor: (s + k) * 2f64.powi(-147),
    }
}

/// The f32 price's tolerance against the f64 reference: a difference of two terms of total size
/// `terms`, each from a few roundings of under an ULP (exp, Φ, the products; 16 ε in all), plus
/// the rounding of d2 = d1 - σ√T, which does not cancel between the terms (4 ε·d_sensitivity),
/// and the floor of f32's subnormals. Relative to the price itself this is tight where the
/// terms are small (deep out of the money) and loose only as far as the difference cancels.
fn tolerance(terms: f64, reference: &Reference) -> f64 {
    let eps = f32::EPSILON as f64;
    16.0 * eps * terms + 4.0 * eps * reference.d_sensitivity + reference.floor
}

/// Random options: spot in [1, 1000], strike from 1/5 to 5 times the spot (deep in and out of
/// the money), years from 10^-6 (a few seconds) to 30, with 0 now and then.
fn random_options(rng: &mut StdRng, n: usize) -> (Vec<f32>, Vec<f32>, Vec<f32>) {
    let mut spot = Vec::with_capacity(n);
    let mut strike = Vec::with_capacity(n);
    let mut years = Vec::with_capacity(n);
    for i in 0..n {
        let s = 10f32.powf(rng.random_range(0.0..3.0));
        spot.push(s);
        strike.push(s * 5f32.powf(rng.random_range(-1.0..1.0)));
        years.push(if i % 97 == 5 {
            0.0
        } else {
            10f32.powf(rng.random_range(-6.0..1.5))
        });
    }
    (spot, strike, years)
}

#[test]
fn black_scholes_matches_f64_on_random_options_of_awkward_counts() {
    let kernels = cpu_kernels();
    let (mut rng, seed) = support::rng();
    let mut worst: f64 = 0.0;
    for n in [1usize, 31, 257, 4099, 100_003] {
        for (rate, volatility) in [(0.05f32, 0.2f32), (-0.01, 0.05), (0.12, 1.5)] {
            let (spot, strike, years) = random_options(&mut rng, n);
            let (mut call, mut put) = (vec![f32::NAN; n], vec![f32::NAN; n]);
            ops::black_scholes(
                &kernels, &spot, &strike, &years, rate, volatility, &mut call, &mut put,
            )
            .unwrap();
            for i in 0..n {
                let reference = black_scholes_f64(spot[i], strike[i], years[i], rate, volatility);
                let what = format!(
                    "S={} K={} T={} r={rate} σ={volatility} (n={n}, seed={seed})",
                    spot[i], strike[i], years[i]
                );
                for (name, got, want, terms) in [
                    ("call", call[i], reference.call, reference.call_terms),
                    ("put", put[i], reference.put, reference.put_terms),
                ] {
                    let tol = tolerance(terms, &reference);
                    let error = (got as f64 - want).abs();
                    worst = worst.max(error / tol);
                    assert!(
                        error <= tol,
                        "{name} {got} vs {want} (error {error:e} > {tol:e}): {what}"
                    );
                }
            }
        }
    }
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr(),
        "black_scholes: largest error {worst:.3} of the tolerance (seed {seed})"
    );
}

#[test]
fn black_scholes_keeps_relative_accuracy_deep_out_of_the_money() {
    // Tiny prices must come out to a few ULPs, not as 0 or as the noise of 1 - Φ: a call struck
    // at 3× the spot and a put at 0.3×, each half a year out, and a put at 0.5× five weeks out.
    let kernels = cpu_kernels();
    let spot = [100.0f32, 100.0, 100.0];
    let strike = [300.0f32, 30.0, 50.0];
    let years = [0.5f32, 0.5, 0.1];
    let (rate, volatility) = (0.03, 0.25);
    let (mut call, mut put) = ([0.0f32; 3], [0.0f32; 3]);
    ops::black_scholes(
        &kernels, &spot, &strike, &years, rate, volatility, &mut call, &mut put,
    )
    .unwrap();
    let tiny = [call[0], put[1], put[2]];
    let want = [0, 1, 2].map(|i| black_scholes_f64(spot[i], strike[i], years[i], rate, volatility));
    let exact = [want[0].call, want[1].put, want[2].put];
    for i in 0..3 {
        assert!(
            exact[i] < 1e-5 && exact[i] > 1e-30,
            "option {i} is not deep out of the money: {}",
            exact[i]
        );
        let relative = (tiny[i] as f64 - exact[i]).abs() / exact[i];
        // The terms S·Φ(d1) and K·e^(-rT)·Φ(d2) are about |d1|/(σ√T) times the price.
        let cancellation = want[i].call_terms.max(want[i].put_terms).min(if i == 0 {
            want[i].call_terms
        } else {
            want[i].put_terms
        }) / exact[i];
        assert!(
            relative <= 32.0 * f32::EPSILON as f64 * cancellation,
            "option {i}: {:e} vs {:e} (relative error {relative:e}, cancellation {cancellation:.1})",
            tiny[i],
            exact[i]
        );
    }
}

#[test]
fn black_scholes_satisfies_put_call_parity() {
    // C - P = S - K·e^(-rT) for every option, to the rounding of the prices.
    let kernels = cpu_kernels();
    let (mut rng, seed) = support::rng();
    let n = 10_000;
    let (spot, strike, years) = random_options(&mut rng, n);
    let (rate, volatility) = (0.04f32, 0.35f32);
    let (mut call, mut put) = (vec![0.0f32; n], vec![0.0f32; n]);
    ops::black_scholes(
        &kernels, &spot, &strike, &years, rate, volatility, &mut call, &mut put,
    )
    .unwrap();
    for i in 0..n {
        let forward = spot[i] as f64 - strike[i] as f64 * (-(rate as f64) * years[i] as f64).exp();
        let scale = spot[i] as f64 + strike[i] as f64;
        let gap = (call[i] as f64 - put[i] as f64 - forward).abs();
        assert!(
            gap <= 16.0 * f32::EPSILON as f64 * scale,
            "C - P = {} but S - K e^(-rT) = {forward} (S={} K={} T={}, seed={seed})",
            call[i] - put[i],
            spot[i],
            strike[i],
            years[i]
        );
    }
}

#[test]
fn black_scholes_intrinsic_values_at_expiry_and_nan_outside_the_model() {
    let kernels = cpu_kernels();
    let spot = [120.0f32, 80.0, 100.0, -1.0, 100.0, 100.0, f32::NAN];
    let strike = [100.0f32, 100.0, 100.0, 100.0, 0.0, 100.0, 100.0];
    let years = [0.0f32, 0.0, 0.0, 1.0, 1.0, -0.5, 1.0];
    let (mut call, mut put) = ([0.0f32; 7], [0.0f32; 7]);
    ops::black_scholes(
        &kernels, &spot, &strike, &years, 0.05, 0.2, &mut call, &mut put,
    )
    .unwrap();
    assert_eq!((call[0], put[0]), (20.0, 0.0));
    assert_eq!((call[1], put[1]), (0.0, 20.0));
    assert_eq!((call[2], put[2]), (0.0, 0.0));
    for i in 3..7 {
        assert!(
            call[i].is_nan() && put[i].is_nan(),
            "option {i}: {} {}",
            call[i],
            put[i]
        );
    }
}

#[test]
fn black_scholes_reads_and_writes_device_buffers() {
    let kernels = cpu_kernels();
    let device = kernels.device();
    let spot = device.upload(&[100.0f32, 50.0]).unwrap();
    let strike = device.upload(&[100.0f32, 60.0]).unwrap();
    let years = device.upload(&[1.0f32, 0.25]).unwrap();
    let mut call = device.alloc_zeroed::<f32>(2).unwrap();
    let mut put = device.alloc_zeroed::<f32>(2).unwrap();
    ops::black_scholes(
        &kernels, &spot, &strike, &years, 0.05, 0.2, &mut call, &mut put,
    )
    .unwrap();
    let (call, put) = (call.to_vec().unwrap(), put.to_vec().unwrap());
    for i in 0..2 {
        let s = [100.0f32, 50.0][i];
        let k = [100.0f32, 60.0][i];
        let t = [1.0f32, 0.25][i];
        let want = black_scholes_f64(s, k, t, 0.05, 0.2);
        let tol = tolerance(want.call_terms.max(want.put_terms), &want);
        assert!((call[i] as f64 - want.call).abs() <= tol);
        assert!((put[i] as f64 - want.put).abs() <= tol);
    }
}

#[test]
fn black_scholes_rejects_mismatched_lengths_and_bad_parameters() {
    let kernels = cpu_kernels();
    let (three, two) = (vec![1.0f32; 3], vec![1.0f32; 2]);
    let (mut out3, mut out3b, mut out2) = (vec![0.0f32; 3], vec![0.0f32; 3], vec![0.0f32; 2]);
    let message = |result: ferrocuda::Result<()>| match result {
        Err(Error::InvalidInput { op, detail }) => format!("{op}: {detail}"),
        other => panic!("expected InvalidInput, got {other:?}"),
    };
    assert_eq!(
        message(ops::black_scholes(
            &kernels, &three, &two, &three, 0.05, 0.2, &mut out3, &mut out3b
        )),
        "black_scholes: strike has 2 elements but the length of spot needs 3"
    );
    assert_eq!(
        message(ops::black_scholes(
            &kernels, &three, &three, &two, 0.05, 0.2, &mut out3, &mut out3b
        )),
        "black_scholes: years has 2 elements but the length of spot needs 3"
    );
    assert_eq!(
        message(ops::black_scholes(
            &kernels, &three, &three, &three, 0.05, 0.2, &mut out2, &mut out3b
        )),
        "black_scholes: call has 2 elements but the length of spot needs 3"
    );
    assert_eq!(
        message(ops::black_scholes(
            &kernels, &three, &three, &three, 0.05, 0.2, &mut out3, &mut out2
        )),
        "black_scholes: put has 2 elements but the length of spot needs 3"
    );
    assert_eq!(
        message(ops::black_scholes(
            &kernels, &three, &three, &three, 0.05, 0.0, &mut out3, &mut out3b
        )),
        "black_scholes: volatility is 0; it must be finite and above 0"
    );
    assert_eq!(
        message(ops::black_scholes(
            &kernels,
            &three,
            &three,
            &three,
            f32::INFINITY,
            0.2,
            &mut out3,
            &mut out3b
        )),
        "black_scholes: rate is inf; it must be finite"
    );
    // Nothing was written on an error, and no options is no work.
    assert_eq!(out3, [0.0; 3]);
    ops::black_scholes(&kernels, &[], &[], &[], 0.05, 0.2, &mut [], &mut []).unwrap();
}

#[test]
fn philox_matches_the_random123_known_answers() {
    // Random123 tests/kat_vectors, philox4x32 10: all zeros, all ones, and the digits of π.
    for (counter, key, want) in [
        (
            [0u32; 4],
            [0u32; 2],
            [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8],
        ),
        (
            [u32::MAX; 4],
            [u32::MAX; 2],
            [0x408f_276d, 0x41c8_3b0e, 0xa20b_c7c6, 0x6d54_51fd],
        ),
        (
            [0x243f_6a88, 0x85a3_08d3, 0x1319_8a2e, 0x0370_7344],
            [0xa409_3822, 0x299f_31d0],
            [0xd16c_fe09, 0x94fd_cceb, 0x5001_e420, 0x2412_6ea1],
        ),
    ] {
        assert_eq!(Philox4x32::new(key).block(counter), want);
    }
}

/// The hit count of `samples` points for `seed`, counted on the host one sample at a time.
fn hits_on_the_host(samples: u64, seed: u64) -> u64 {
    let rng = Philox4x32::from_seed(seed);
    (0..samples)
        .filter(|&j| {
            let words = rng.block_at(j / 2, PI_STREAM);
            let k = 2 * (j % 2) as usize;
            in_quarter_disk(words[k], words[k + 1])
        })
        .count() as u64
}

fn pi_hits(kernels: &Module, samples: u64, seed: u64, blocks: u32, threads: u32) -> u64 {
    let mut hits = [0u64];
    launch!(kernels, monte_carlo_pi[blocks, threads](samples, seed, &mut hits)).unwrap();
    hits[0]
}

#[test]
fn monte_carlo_pi_counts_exactly_the_hosts_samples_whatever_the_launch_shape() {
    let kernels = cpu_kernels();
    let seed: u64 = rand::random();
    for samples in [1u64, 2, 3, 1001, 65_537] {
        let want = hits_on_the_host(samples, seed);
        for (blocks, threads) in [(1, 1), (1, 32), (3, 33), (7, 256), (40, 1024)] {
            assert_eq!(
                pi_hits(&kernels, samples, seed, blocks, threads),
                want,
                "samples={samples} grid={blocks}x{threads} seed={seed}"
            );
        }
    }
}

#[test]
fn monte_carlo_pi_is_within_4_standard_errors() {
    let kernels = cpu_kernels();
    let seed: u64 = rand::random();
    for samples in [1_000u64, 1_000_003] {
        let pi = ops::monte_carlo_pi(&kernels, samples, seed).unwrap();
        let expected_se = 4.0 * (PI / 4.0 * (1.0 - PI / 4.0) / samples as f64).sqrt();
        assert!(
            (pi.value - PI).abs() <= 4.0 * pi.std_error,
            "π ≈ {} ± {} from {samples} samples (seed {seed})",
            pi.value,
            pi.std_error
        );
        assert!(
            (pi.std_error / expected_se - 1.0).abs() < 0.1,
            "standard error {} vs {expected_se}",
            pi.std_error
        );
        // The same seed gives the same estimate.
        assert_eq!(ops::monte_carlo_pi(&kernels, samples, seed).unwrap(), pi);
    }
    let error = ops::monte_carlo_pi(&kernels, 0, 1).unwrap_err();
    assert_eq!(
        error.to_string(),
        "monte_carlo_pi: samples is 0; at least 1 is needed"
    );
}

/// The payoff sums (call, call², put, put²) of `samples` samples, on the host in f64 from the
/// same random numbers.
fn option_sums_on_the_host(samples: u64, seed: u64, p: &OptionParams) -> [f64; 4] {
    let rng = Philox4x32::from_seed(seed);
    let (r, v, t) = (p.rate as f64, p.volatility as f64, p.years as f64);
    let drift = ((r - 0.5 * v * v) * t) as f32 as f64;
    let vol_sqrt_t = (v * t.sqrt()) as f32 as f64;
    let mut sums = [0.0f64; 4];
    for j in 0..samples {
        let [a, b, c, d] = rng.block_at(j / 4, OPTION_STREAM);
        let (z0, z1) = normal_pair(a, b);
        let (z2, z3) = normal_pair(c, d);
        let z = [z0, z1, z2, z3][(j % 4) as usize] as f64;
        let price = p.spot as f64 * (drift + vol_sqrt_t * z).exp();
        let call = (price - p.strike as f64).max(0.0);
        let put = (p.strike as f64 - price).max(0.0);
        sums[0] += call;
        sums[1] += call * call;
        sums[2] += put;
        sums[3] += put * put;
    }
    sums
}

const AT_THE_MONEY: OptionParams = OptionParams {
    spot: 100.0,
    strike: 100.0,
    years: 1.0,
    rate: 0.05,
    volatility: 0.2,
};

#[test]
fn monte_carlo_option_sums_the_hosts_samples_whatever_the_launch_shape() {
    let kernels = cpu_kernels();
    let seed: u64 = rand::random();
    let p = OptionParams {
        spot: 90.0,
        strike: 100.0,
        years: 0.5,
        rate: 0.03,
        volatility: 0.4,
    };
    let (r, v, t) = (p.rate as f64, p.volatility as f64, p.years as f64);
    let drift = ((r - 0.5 * v * v) * t) as f32;
    let vol_sqrt_t = (v * t.sqrt()) as f32;
    for samples in [1u64, 5, 4099] {
        let want = option_sums_on_the_host(samples, seed, &p);
        for (blocks, threads) in [(1u32, 1u32), (1, 32), (3, 33), (7, 256)] {
            let mut partial = vec![f64::NAN; 4 * blocks as usize];
            launch!(
                kernels,
                monte_carlo_option[blocks, threads](
                    samples, seed, p.spot, p.strike, drift, vol_sqrt_t, &mut partial
                )
            )
            .unwrap();
            for (q, &want) in want.iter().enumerate() {
                let got: f64 = partial.iter().skip(q).step_by(4).sum();
                // f32 payoffs (exp within 0.65 ULP) against f64 ones: a few ε relative.
                assert!(
                    (got - want).abs() <= 1e-5 * want.abs().max(1.0),
                    "sum {q}: {got} vs {want} (samples={samples} grid={blocks}x{threads} seed={seed})"
                );
            }
        }
    }
}

#[test]
fn european_option_prices_are_within_4_standard_errors_of_black_scholes() {
    let kernels = cpu_kernels();
    let seed: u64 = rand::random();
    for p in [
        AT_THE_MONEY,
        OptionParams {
            spot: 120.0,
            strike: 100.0,
            years: 2.0,
            rate: 0.01,
            volatility: 0.3,
        },
        OptionParams {
            spot: 50.0,
            strike: 70.0,
            years: 0.25,
            rate: 0.08,
            volatility: 0.5,
        },
    ] {
        let samples = 400_003;
        let prices = ops::european_option_monte_carlo(&kernels, &p, samples, seed).unwrap();
        let exact = black_scholes_f64(p.spot, p.strike, p.years, p.rate, p.volatility);
        for (name, estimate, exact) in [
            ("call", prices.call, exact.call),
            ("put", prices.put, exact.put),
        ] {
            assert!(
                (estimate.value - exact).abs() <= 4.0 * estimate.std_error,
                "{name} {} ± {} vs Black-Scholes {exact} for {p:?} (seed {seed})",
                estimate.value,
                estimate.std_error
            );
        }
        // Four times the samples, half the standard error.
        let more = ops::european_option_monte_carlo(&kernels, &p, 4 * samples, seed ^ 1).unwrap();
        let ratio = prices.call.std_error / more.call.std_error;
        assert!(
            (ratio - 2.0).abs() < 0.1,
            "standard error ratio {ratio} for {p:?}"
        );
    }
}

#[test]
fn european_option_monte_carlo_at_expiry_one_sample_and_bad_parameters() {
    let kernels = cpu_kernels();
    // At expiry the price is the intrinsic value with no error.
    let expired = OptionParams {
        years: 0.0,
        spot: 110.0,
        ..AT_THE_MONEY
    };
    let prices = ops::european_option_monte_carlo(&kernels, &expired, 1000, 3).unwrap();
    assert_eq!((prices.call.value, prices.put.value), (10.0, 0.0));
    assert_eq!((prices.call.std_error, prices.put.std_error), (0.0, 0.0));
    // One sample: no spread to measure.
    let one = ops::european_option_monte_carlo(&kernels, &AT_THE_MONEY, 1, 3).unwrap();
    assert!(one.call.value.is_finite() && one.call.std_error == f64::INFINITY);
    let message = |p: OptionParams, samples: u64| {
        ops::european_option_monte_carlo(&kernels, &p, samples, 1)
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        message(AT_THE_MONEY, 0),
        "european_option_monte_carlo: samples is 0; at least 1 is needed"
    );
    assert_eq!(
        message(
            OptionParams {
                volatility: 0.0,
                ..AT_THE_MONEY
            },
            10
        ),
        "european_option_monte_carlo: volatility is 0; it must be finite and above 0"
    );
    assert_eq!(
        message(
            OptionParams {
                years: -1.0,
                ..AT_THE_MONEY
            },
            10
        ),
        "european_option_monte_carlo: years is -1; it must be 0 or more"
    );
    assert_eq!(
        message(
            OptionParams {
                spot: -5.0,
                ..AT_THE_MONEY
            },
            10
        ),
        "european_option_monte_carlo: spot is -5; it must be finite and above 0"
    );
    assert_eq!(
        message(
            OptionParams {
                strike: f32::NAN,
                ..AT_THE_MONEY
            },
            10
        ),
        "european_option_monte_carlo: strike is NaN; it must be finite and above 0"
    );
    assert_eq!(
        message(
            OptionParams {
                rate: f32::NEG_INFINITY,
                ..AT_THE_MONEY
            },
            10
        ),
        "european_option_monte_carlo: rate is -inf; it must be finite"
    );
}

#[test]
fn black_scholes_on_the_gpu_matches_f64() {
    let Some(gpu) = support::gpu_or_skip("black_scholes_on_the_gpu_matches_f64") else {
        return;
    };
    let kernels = gpu.load(&ferrocuda::KERNELS).unwrap();
    let cpu = cpu_kernels();
    let (mut rng, seed) = support::rng();
    let n = 1 << 20;
    let (spot, strike, years) = random_options(&mut rng, n);
    let (mut call, mut put) = (vec![0.0f32; n], vec![0.0f32; n]);
    ops::black_scholes(
        &kernels, &spot, &strike, &years, 0.05, 0.3, &mut call, &mut put,
    )
    .unwrap();
    for i in 0..n {
        let want = black_scholes_f64(spot[i], strike[i], years[i], 0.05, 0.3);
        let call_ok = (call[i] as f64 - want.call).abs() <= tolerance(want.call_terms, &want);
        let put_ok = (put[i] as f64 - want.put).abs() <= tolerance(want.put_terms, &want);
        assert!(
            call_ok && put_ok,
            "option {i}: GPU ({}, {}) vs ({}, {}) (seed {seed})",
            call[i],
            put[i],
            want.call,
            want.put
        );
    }
    // The default math tier may differ in the last bits between the GPU (ex2.approx) and the
    // CPU: the prices agree within the two tolerances.
    let m = 4099;
    let (mut cpu_call, mut cpu_put) = (vec![0.0f32; m], vec![0.0f32; m]);
    ops::black_scholes(
        &cpu,
        &spot[..m],
        &strike[..m],
        &years[..m],
        0.05,
        0.3,
        &mut cpu_call,
        &mut cpu_put,
    )
    .unwrap();
    for i in 0..m {
        let want = black_scholes_f64(spot[i], strike[i], years[i], 0.05, 0.3);
        let close = |g: f32, c: f32, terms: f64| {
            (g as f64 - c as f64).abs() <= 2.0 * tolerance(terms, &want)
        };
        assert!(
            close(call[i], cpu_call[i], want.call_terms)
                && close(put[i], cpu_put[i], want.put_terms),
            "option {i}: GPU ({}, {}), CPU ({}, {}) (seed {seed})",
            call[i],
            put[i],
            cpu_call[i],
            cpu_put[i]
        );
    }
}

#[test]
fn monte_carlo_on_the_gpu_draws_the_cpus_samples() {
    let Some(gpu) = support::gpu_or_skip("monte_carlo_on_the_gpu_draws_the_cpus_samples") else {
        return;
    };
    let kernels = gpu.load(&ferrocuda::KERNELS).unwrap();
    let seed: u64 = rand::random();
    // The hit count is the host's, bit for bit, for any launch shape.
    let samples = 1_000_003;
    let want = hits_on_the_host(samples, seed);
    for (blocks, threads) in [(1, 32), (7, 256), (264, 256), (1000, 1024)] {
        assert_eq!(
            pi_hits(&kernels, samples, seed, blocks, threads),
            want,
            "seed {seed}"
        );
    }
    let many = support::size_for(&gpu, 100_000_000, 1 << 20);
    let pi = ops::monte_carlo_pi(&kernels, many, seed).unwrap();
    assert!(
        (pi.value - PI).abs() <= 4.0 * pi.std_error,
        "{pi:?} seed {seed}"
    );
    // Option prices: the GPU's sums are the CPU's up to the order of additions.
    let samples = 1_000_000;
    let on_gpu = ops::european_option_monte_carlo(&kernels, &AT_THE_MONEY, samples, seed).unwrap();
    let on_cpu =
        ops::european_option_monte_carlo(&cpu_kernels(), &AT_THE_MONEY, samples, seed).unwrap();
    for (g, c) in [(on_gpu.call, on_cpu.call), (on_gpu.put, on_cpu.put)] {
        assert!(
            (g.value - c.value).abs() <= 1e-5 * c.value,
            "{g:?} vs {c:?} seed {seed}"
        );
    }
    let big = ops::european_option_monte_carlo(&kernels, &AT_THE_MONEY, many, seed).unwrap();
    let exact = black_scholes_f64(100.0, 100.0, 1.0, 0.05, 0.2);
    assert!(
        (big.call.value - exact.call).abs() <= 4.0 * big.call.std_error,
        "{big:?} seed {seed}"
    );
    assert!(
        (big.put.value - exact.put).abs() <= 4.0 * big.put.std_error,
        "{big:?} seed {seed}"
    );
}
