//! `ops::statistics` (and its kernels at odd launch shapes) on the CPU executor in checked mode,
//! against an f64 two-pass reference; on a GPU when there is one.

mod support;

use ferrocuda::kernels::statistics::{statistics_merge, statistics_partial, STATE_LEN};
use ferrocuda::ops::{self, Statistics};
use ferrocuda::{launch, Device, Error, Module};
use rand::rngs::StdRng;
use rand::Rng;

const LENGTHS: [usize; 7] = [1, 2, 31, 33, 1000, 4099, 1 << 20];

fn cpu_kernels() -> Module {
    let device = Device::cpu();
    assert!(device.checks_enabled(), "these tests run in checked mode");
    device.load(&ferrocuda::KERNELS).unwrap()
}

/// The textbook two-pass statistics in f64: the mean first, then `Σ(x − mean)²`. Min and max
/// ignore NaN unless every value is NaN (`reduce(f32::min)`).
struct Reference {
    sum: f64,
    sum_abs: f64,
    mean: f64,
    variance: f64,
    min: f32,
    max: f32,
}

fn reference(x: &[f32]) -> Reference {
    let n = x.len() as f64;
    let sum: f64 = x.iter().map(|&v| v as f64).sum();
    let mean = sum / n;
    let variance = x.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / n;
    Reference {
        sum,
        sum_abs: x.iter().map(|&v| (v as f64).abs()).sum(),
        mean,
        variance,
        min: x.iter().copied().reduce(f32::min).unwrap(),
        max: x.iter().copied().reduce(f32::max).unwrap(),
    }
}

/// Values around `offset`: `offset + U(−1, 1)`.
fn around(rng: &mut StdRng, n: usize, offset: f32) -> Vec<f32> {
    (0..n)
        .map(|_| offset + rng.random_range(-1.0f32..1.0))
        .collect()
}

/// `got` against the f64 reference of `x`. The f64 accumulators leave errors near f64's
/// rounding: 1e-12 of the magnitude for the mean and sum, 1e-9 relative for the variance.
fn assert_matches(got: &Statistics, x: &[f32], what: &str) {
    let want = reference(x);
    let n = x.len();
    assert_eq!(got.count, n, "{what}: count");
    assert_eq!((got.min, got.max), (want.min, want.max), "{what}: min, max");
    let scale = want.sum_abs / n as f64;
    assert!(
        (got.mean - want.mean).abs() <= 1e-12 * scale,
        "{what}: mean {} vs {}",
        got.mean,
        want.mean
    );
    assert!(
        (got.sum - want.sum).abs() <= 1e-12 * want.sum_abs,
        "{what}: sum {} vs {}",
        got.sum,
        want.sum
    );
    assert!(
        (got.variance - want.variance).abs() <= 1e-9 * want.variance,
        "{what}: variance {} vs {} (relative error {:e})",
        got.variance,
        want.variance,
        (got.variance - want.variance).abs() / want.variance
    );
    if n > 1 {
        let sample = want.variance * n as f64 / (n - 1) as f64;
        assert!(
            (got.sample_variance() - sample).abs() <= 1e-9 * sample,
            "{what}: sample variance {} vs {sample}",
            got.sample_variance()
        );
        assert!((got.std_dev() - want.variance.sqrt()).abs() <= 1e-9 * want.variance.sqrt());
    } else {
        assert!(got.sample_variance().is_nan() && got.sample_std_dev().is_nan());
    }
}

/// The variance as the one-pass textbook formula `Σx²/n − mean²` gives it in f32.
fn naive_f32_variance(x: &[f32]) -> f32 {
    let n = x.len() as f32;
    let (sum, sum_sq) = x
        .iter()
        .fold((0.0f32, 0.0f32), |(s, q), &v| (s + v, q + v * v));
    sum_sq / n - (sum / n) * (sum / n)
}

#[test]
fn statistics_of_any_length_match_a_two_pass_f64_reference() {
    let kernels = cpu_kernels();
    let (mut rng, seed) = support::rng();
    for n in LENGTHS {
        let x = support::random_f32(&mut rng, n);
        let got = ops::statistics(&kernels, &x).unwrap();
        assert_matches(&got, &x, &format!("n={n} in [-100, 100) seed={seed}"));
    }
}

#[test]
fn variance_stays_accurate_far_from_zero() {
    // 1e4 + U(−1, 1): Σx²/n and mean² are both ≈ 1e8 and differ by ≈ 1/3, which the textbook
    // one-pass formula loses to rounding (in f32 entirely); Welford and Chan's merge work with
    // differences from the running mean and keep the variance to ~1e-12 in f64.
    let kernels = cpu_kernels();
    let (mut rng, seed) = support::rng();
    for n in LENGTHS {
        for offset in [1e4f32, -3e5] {
            let x = around(&mut rng, n, offset);
            let got = ops::statistics(&kernels, &x).unwrap();
            assert_matches(&got, &x, &format!("n={n} offset={offset} seed={seed}"));
            if n == 1 << 20 {
                // The data is hard: the naive formula would fail the assertions above.
                let want = reference(&x).variance;
                let naive = naive_f32_variance(&x) as f64;
                assert!(
                    (naive - want).abs() > 0.1 * want,
                    "naive {naive} vs {want}: expected the textbook formula to fail, seed={seed}"
                );
            }
        }
    }
}

/// The population variance of `x` in two passes, with the deviations from `x[0]` (exact by
/// Sterbenz for data this narrow) summed for the mean, so the mean is right to an ulp or so.
fn two_pass_variance(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let mean = x[0] + x.iter().map(|v| v - x[0]).sum::<f64>() / n;
    let variance = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
    (mean, variance)
}

/// `got`'s mean within 1e-15 of `want`'s (both far from zero), its variance within `relative`.
fn assert_close(got: (f64, f64), want: (f64, f64), relative: f64, what: &str) {
    let ((mean, variance), (want_mean, want_variance)) = (got, want);
    assert!(
        (mean - want_mean).abs() <= 1e-15 * want_mean.abs(),
        "{what}: mean {mean} vs {want_mean}"
    );
    assert!(
        (variance - want_variance).abs() <= relative * want_variance,
        "{what}: variance {variance} vs {want_variance}"
    );
}

#[test]
fn a_tiny_spread_far_from_zero_keeps_its_variance_on_every_device() {
    // Each thread sums `x − K` with `K` near its mean (no division per value); these are the
    // inputs where that could lose the variance: f64 data whose variance is 3e-17 of the mean's
    // square, below f64's ε, so that f64's one-pass `Σx²/n − mean²` keeps no digit of it, and
    // f32 data a few ulps wide at 2²⁰ (variance 4e-13 of the mean's square).
    let (mut rng, seed) = support::rng();
    for kernels in support::on_every_device(
        "a_tiny_spread_far_from_zero_keeps_its_variance_on_every_device",
        &ferrocuda::KERNELS,
    ) {
        let device = kernels.device().properties().name.clone();
        for n in [33, 4099, 100_003] {
            let x: Vec<f64> = (0..n).map(|_| 1e8 + rng.random_range(-1.0..1.0)).collect();
            let (mean, variance) = two_pass_variance(&x);
            let (sum, squares) = x.iter().fold((0.0, 0.0), |(s, q), &v| (s + v, q + v * v));
            let one_pass = squares / n as f64 - (sum / n as f64).powi(2);
            assert!(
                (one_pass - variance).abs() > 0.5 * variance,
                "expected f64's one-pass formula ({one_pass}) to miss {variance}"
            );
            let got = ops::statistics(&kernels, &x).unwrap();
            let what = format!("{device}: f64 1e8 ± 1, n={n} seed={seed}");
            // The means are rounded to f64 (an ulp of 1e8 is 1.5e-8) before Chan's merge takes
            // their differences, which bounds the variance's accuracy at about ε·mean/σ ≈ 3e-8.
            assert_close((got.mean, got.variance), (mean, variance), 1e-6, &what);

            let ulp = 0.125f32; // at 2²⁰
            let narrow: Vec<f32> = (0..n)
                .map(|_| (1 << 20) as f32 + ulp * rng.random_range(-8i32..=8) as f32)
                .collect();
            let wide: Vec<f64> = narrow.iter().map(|&v| v as f64).collect();
            let (mean, variance) = two_pass_variance(&wide);
            let got = ops::statistics(&kernels, &narrow).unwrap();
            let what = format!("{device}: f32 2^20 ± 8 ulps, n={n} seed={seed}");
            assert_close((got.mean, got.variance), (mean, variance), 1e-9, &what);
        }
    }
}

#[test]
fn an_outlier_as_a_threads_first_value_keeps_the_variance() {
    // What a fixed shift (each thread's first value) got wrong: with that value far from the
    // rest, `Σ(x − K)²` is up to n times `M2` and the subtraction cancelled that much (4e-8 of
    // the variance here). The shift moves to the running mean as the count doubles. One thread
    // sums everything (one block of one thread), then a block of 64 each starting at an outlier.
    let kernels = cpu_kernels();
    let (mut rng, seed) = support::rng();
    let n = 1 << 16;
    for (threads, outliers) in [(1u32, 1), (64, 64)] {
        let mut x = around(&mut rng, n, 1e4);
        // On the CPU executor thread t of a one-block grid-stride loop starts at t·⌈n / threads⌉.
        let run = n / threads as usize;
        for t in 0..outliers {
            x[t * run] = 1e4 + 1000.0;
        }
        let mut partial = vec![f64::NAN; STATE_LEN];
        launch!(kernels, statistics_partial[1, threads](&x, &mut partial)).unwrap();
        let want = reference(&x);
        let variance = partial[2] / n as f64;
        let what = format!("{threads} thread(s), {outliers} outlier(s), seed={seed}");
        assert_eq!(partial[0], n as f64, "{what}");
        assert!(
            (partial[1] - want.mean).abs() <= 1e-12 * want.mean,
            "{what}"
        );
        assert!(
            (variance - want.variance).abs() <= 1e-9 * want.variance,
            "{what}: variance {variance} vs {} (relative error {:e})",
            want.variance,
            (variance - want.variance).abs() / want.variance
        );
    }
}

#[test]
fn nan_makes_the_moments_nan_but_min_and_max_ignore_it() {
    let kernels = cpu_kernels();
    let (mut rng, seed) = support::rng();
    for n in [2, 33, 4099] {
        for at in [0, n / 2, n - 1] {
            let mut x = support::random_f32(&mut rng, n);
            x[at] = f32::NAN;
            let got = ops::statistics(&kernels, &x).unwrap();
            let what = format!("n={n} NaN at {at} seed={seed}");
            assert_eq!(got.count, n, "{what}");
            assert!(
                got.sum.is_nan() && got.mean.is_nan() && got.variance.is_nan(),
                "{what}: {got:?}"
            );
            let finite: Vec<f32> = x.iter().copied().filter(|v| !v.is_nan()).collect();
            let want = reference(&finite);
            assert_eq!((got.min, got.max), (want.min, want.max), "{what}");
        }
    }
    // Only NaN: no value to be the min or max.
    let got = ops::statistics(&kernels, &[f32::NAN; 40]).unwrap();
    assert_eq!(got.count, 40);
    assert!(
        got.min.is_nan() && got.max.is_nan() && got.mean.is_nan(),
        "{got:?}"
    );
}

#[test]
fn infinities_and_equal_values() {
    let kernels = cpu_kernels();
    let got = ops::statistics(&kernels, &[1.0f32, f32::INFINITY, 3.0]).unwrap();
    assert_eq!(
        (got.min, got.max, got.mean),
        (1.0, f32::INFINITY, f64::INFINITY)
    );
    assert!(got.variance.is_nan(), "{got:?}");
    let got = ops::statistics(&kernels, &[f32::NEG_INFINITY; 3]).unwrap();
    assert_eq!((got.min, got.max), (f32::NEG_INFINITY, f32::NEG_INFINITY));
    // Equal values: the variance is exactly 0, not a rounding residue.
    let got = ops::statistics(&kernels, &vec![1234.5f32; 4099]).unwrap();
    assert_eq!(
        (got.mean, got.variance, got.min, got.max),
        (1234.5, 0.0, 1234.5, 1234.5)
    );
}

/// Whether `got` is `want`, NaN being equal to NaN: with an infinity among the values the
/// reference's mean and variance are exactly ±∞ or NaN, nothing in between.
fn same(got: f64, want: f64) -> bool {
    got == want || (got.is_nan() && want.is_nan())
}

#[test]
fn infinities_give_what_the_f64_reference_gives_on_every_device() {
    // `[inf, 1]` and `[inf, inf]` gave a NaN mean (Welford's `δ/n` with `δ = 1 − ∞` or `∞ − ∞`);
    // the two-pass f64 reference (and `ops::sum`) gives an infinite mean, NaN only with both
    // signs or a NaN, and a NaN variance (`∞ − ∞` in `Σ(x − mean)²`). The specials are planted
    // first, in the middle and last of inputs long enough to be split across lanes, warps,
    // blocks and a thread's grid-stride steps, so that every merge path sees them.
    let (mut rng, seed) = support::rng();
    let inf = f32::INFINITY;
    let specials: [&[f32]; 6] = [
        &[inf, 1.0],
        &[inf, inf],
        &[-inf, inf],
        &[-inf, -inf, 2.0],
        &[inf, f32::NAN],
        &[1.0, inf, 3.0],
    ];
    for kernels in support::on_every_device(
        "infinities_give_what_the_f64_reference_gives_on_every_device",
        &ferrocuda::KERNELS,
    ) {
        let device = kernels.device().properties().name.clone();
        for special in specials {
            for n in [special.len(), 33, 4099] {
                for at in [0, (n / 2).min(n - special.len()), n - special.len()] {
                    let mut x = support::random_f32(&mut rng, n);
                    x[at..at + special.len()].copy_from_slice(special);
                    let got = ops::statistics(&kernels, &x).unwrap();
                    let want = reference(&x);
                    let what = format!("{device}: {special:?} at {at} of {n}, seed={seed}");
                    assert_eq!(got.count, n, "{what}");
                    assert!(
                        same(got.mean, want.mean),
                        "{what}: mean {} vs {}",
                        got.mean,
                        want.mean
                    );
                    assert!(
                        same(got.sum, want.sum),
                        "{what}: sum {} vs {}",
                        got.sum,
                        want.sum
                    );
                    assert!(
                        same(got.variance, want.variance),
                        "{what}: variance {} vs {}",
                        got.variance,
                        want.variance
                    );
                    assert_eq!((got.min, got.max), (want.min, want.max), "{what}");
                    let f32_sum = ops::sum(&kernels, &x).unwrap() as f64;
                    assert!(
                        same(got.sum, f32_sum),
                        "{what}: sum {} vs ops::sum {f32_sum}",
                        got.sum
                    );
                }
            }
        }
    }
}

#[test]
fn statistics_reads_device_buffers_and_subslices() {
    let kernels = cpu_kernels();
    let (mut rng, seed) = support::rng();
    let x = around(&mut rng, 5000, 100.0);
    let buffer = kernels.device().upload(&x).unwrap();
    let from_buffer = ops::statistics(&kernels, &buffer).unwrap();
    assert_matches(&from_buffer, &x, &format!("device buffer seed={seed}"));
    let tail = ops::statistics(&kernels, &x[1..]).unwrap();
    assert_matches(&tail, &x[1..], &format!("x[1..] seed={seed}"));
}

#[test]
fn statistics_of_nothing_is_invalid_input() {
    let kernels = cpu_kernels();
    let empty: Vec<f32> = Vec::new();
    let error = ops::statistics(&kernels, &empty).unwrap_err();
    assert!(
        matches!(&error, Error::InvalidInput { op: "statistics", detail } if detail == "x is empty"),
        "{error}"
    );
}

#[test]
fn the_kernels_merge_correctly_at_any_launch_shape() {
    // Blocks of 1 thread, a partial warp, several partial warps, a full 1024; the second pass
    // with several blocks (one state per block) merged again by one block of 33 threads.
    let kernels = cpu_kernels();
    let (mut rng, seed) = support::rng();
    for n in [1, 31, 1000, 4099] {
        let x = around(&mut rng, n, 1e4);
        for (blocks, threads) in [(1, 1), (1, 33), (3, 96), (7, 1024)] {
            let mut partial = vec![f64::NAN; blocks * STATE_LEN];
            launch!(kernels, statistics_partial[blocks as u32, threads](&x, &mut partial)).unwrap();
            let mut merged = vec![f64::NAN; 2 * STATE_LEN];
            launch!(kernels, statistics_merge::<f32>[2, 5](&partial, &mut merged)).unwrap();
            let mut total = vec![f64::NAN; STATE_LEN];
            launch!(kernels, statistics_merge::<f32>[1, 33](&merged, &mut total)).unwrap();
            let want = reference(&x);
            let what = format!("n={n} grid={blocks}x{threads} seed={seed}");
            assert_eq!(total[0], n as f64, "{what}: count");
            assert!(
                (total[1] - want.mean).abs() <= 1e-12 * want.mean.abs(),
                "{what}"
            );
            let variance = total[2] / n as f64;
            assert!(
                (variance - want.variance).abs() <= 1e-9 * want.variance,
                "{what}: {variance} vs {}",
                want.variance
            );
            assert_eq!(
                (total[3], total[4]),
                (want.min as f64, want.max as f64),
                "{what}"
            );
        }
    }
}

#[test]
fn gpu_statistics_match_the_f64_reference() {
    let Some(gpu) = support::gpu_or_skip("gpu_statistics_match_the_f64_reference") else {
        return;
    };
    let kernels = gpu.load(&ferrocuda::KERNELS).unwrap();
    let (mut rng, seed) = support::rng();
    for n in LENGTHS
        .into_iter()
        .chain([support::size_for(&gpu, 10_000_019, 1_000_003)])
    {
        let x = around(&mut rng, n, 1e4);
        let got = ops::statistics(&kernels, &x).unwrap();
        assert_matches(&got, &x, &format!("GPU n={n} seed={seed}"));
        let on_gpu = ops::statistics(&kernels, &gpu.upload(&x).unwrap()).unwrap();
        assert_matches(&on_gpu, &x, &format!("GPU buffer n={n} seed={seed}"));
        let want = reference(&x);
        let sum = ops::sum(&kernels, &x).unwrap() as f64;
        let bound = 4.0 * f32::EPSILON as f64 * want.sum_abs * (n as f64).log2().max(1.0);
        assert!(
            (sum - want.sum).abs() <= bound,
            "GPU sum n={n}: {sum} vs {} seed={seed}",
            want.sum
        );
    }
    let mut x = support::random_f32(&mut rng, 100_003);
    x[77_777] = f32::NAN;
    let got = ops::statistics(&kernels, &x).unwrap();
    assert!(got.mean.is_nan() && got.variance.is_nan(), "{got:?}");
    x[77_777] = 0.0;
    let want = reference(&x);
    assert_eq!(
        (got.min, got.max),
        (want.min, want.max),
        "GPU NaN seed={seed}"
    );
}

#[test]
fn sum_is_the_f32_sum_within_its_rounding() {
    // ops::sum, the f32 counterpart of Statistics::sum.
    let kernels = cpu_kernels();
    let (mut rng, seed) = support::rng();
    for n in LENGTHS {
        let x = support::random_f32(&mut rng, n);
        let want = reference(&x);
        let got = ops::sum(&kernels, &x).unwrap() as f64;
        // f32 partial sums of n terms: the worst case is n·ε·Σ|x|; with random signs the error
        // stays far below this bound (the dot product's test uses the same).
        let bound = 4.0 * f32::EPSILON as f64 * want.sum_abs * (n as f64).log2().max(1.0);
        assert!(
            (got - want.sum).abs() <= bound,
            "n={n}: {got} vs {} (bound {bound}) seed={seed}",
            want.sum
        );
    }
    let error = ops::sum(&kernels, &[0.0f32; 0]).unwrap_err();
    assert!(
        matches!(&error, Error::InvalidInput { op: "sum", detail } if detail == "x is empty"),
        "{error}"
    );
}
