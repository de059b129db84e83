//! The generic ops in f64 (`ops::Element`): matmul, dot, sum and statistics on data
//! that f32 cannot hold, on the CPU executor (checked mode) and on a GPU or the PTX emulator,
//! against f64 references with f64 bounds (or exactly) that an f32 computation would miss by
//! orders of magnitude. The f32 instances are tests/ops_*.rs's (and tests/ops_transpose.rs has
//! the f64 transpose).

mod support;

use ferrocuda::ops::{self, Matmul, MatmulShape};
use ferrocuda::Module;
use rand::rngs::StdRng;
use rand::Rng;

fn modules(test: &str) -> Vec<Module> {
    support::on_every_device(test, &ferrocuda::KERNELS)
}

/// `n` values in (−1, 1) with all 53 bits of mantissa in use (none is an f32).
fn random_f64(rng: &mut StdRng, n: usize) -> Vec<f64> {
    (0..n).map(|_| rng.random_range(-1.0..1.0)).collect()
}

#[test]
fn matmul_in_f64_is_within_f64_rounding_for_every_kernel() {
    for kernels in modules("matmul_in_f64_is_within_f64_rounding_for_every_kernel") {
        let (mut rng, seed) = support::rng();
        for (m, n, k) in [(1, 1, 1), (33, 17, 45), (16, 16, 16), (20, 1, 70)] {
            let shape = MatmulShape::new(m, n, k);
            let (a, b) = (random_f64(&mut rng, m * k), random_f64(&mut rng, k * n));
            let (want, magnitude) = support::matmul_reference(&a, &b, shape);
            // RegisterBlocked is f32 only: for f64 it runs the tiled kernel.
            for kernel in [Matmul::Naive, Matmul::Tiled, Matmul::RegisterBlocked] {
                let mut c = vec![f64::NAN; m * n];
                ops::matmul::<f64>(&kernels, &a, &b, &mut c, shape, kernel).unwrap();
                for i in 0..m * n {
                    // Both sums round k times in f64: 4·k·ε·Σ|ab| covers them (f32 would be
                    // off by about 1e-8·Σ|ab|, beyond it for every k here).
                    let bound = 4.0 * k as f64 * f64::EPSILON * magnitude[i] + f64::MIN_POSITIVE;
                    assert!(
                        (c[i] - want[i]).abs() <= bound,
                        "{kernel:?} {m}x{n}x{k} element {i}: {} vs {} seed={seed}",
                        c[i],
                        want[i]
                    );
                }
            }
        }
    }
}

#[test]
fn dot_and_sum_in_f64_keep_what_f32_loses() {
    for kernels in modules("dot_and_sum_in_f64_keep_what_f32_loses") {
        let (mut rng, seed) = support::rng();
        let n = 5000;
        let (a, b) = (random_f64(&mut rng, n), random_f64(&mut rng, n));
        let want: f64 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        let magnitude: f64 = a.iter().zip(&b).map(|(x, y)| (x * y).abs()).sum();
        let got = ops::dot(&kernels, &a, &b).unwrap();
        assert!(
            (got - want).abs() <= 4.0 * n as f64 * f64::EPSILON * magnitude,
            "dot {got} vs {want} seed={seed}"
        );
        // 1 plus 4999 times 2⁻⁴⁰: every partial sum is exact in f64, in any order; in f32 the
        // small terms vanish.
        let mut x = vec![2f64.powi(-40); n];
        x[0] = 1.0;
        let exact = 1.0 + (n - 1) as f64 * 2f64.powi(-40);
        assert_eq!(ops::sum(&kernels, &x).unwrap(), exact);
        let narrow: Vec<f32> = x.iter().map(|&v| v as f32).collect();
        assert_eq!(ops::sum(&kernels, &narrow).unwrap(), 1.0, "f32 loses them");
    }
}

#[test]
fn statistics_of_f64_data_keep_f64_min_and_max() {
    for kernels in modules("statistics_of_f64_data_keep_f64_min_and_max") {
        let (mut rng, seed) = support::rng();
        let n = 3000;
        let x: Vec<f64> = (0..n)
            .map(|_| 1e9 + rng.random_range(-1.0..1.0) / 3.0)
            .collect();
        let stats = ops::statistics(&kernels, &x).unwrap();
        // The reference sums the deviations from 1e9, which are exact (Sterbenz): its mean is
        // accurate to an ulp or so.
        let mean = 1e9 + x.iter().map(|v| v - 1e9).sum::<f64>() / n as f64;
        let variance = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n as f64;
        let min = x.iter().copied().fold(f64::INFINITY, f64::min);
        let max = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        assert_eq!(stats.count, n);
        // Exact: the data's own values, which f32 would round by about 32 at 1e9.
        assert_eq!((stats.min, stats.max), (min, max), "seed={seed}");
        assert!(
            (stats.mean - mean).abs() <= 1e-13 * mean,
            "mean {} vs {mean}",
            stats.mean
        );
        // Welford in f64 on values 1e9 from 0 but 1/3 wide; f32 data could not even hold them.
        assert!(
            (stats.variance - variance).abs() <= 1e-6 * variance,
            "variance {} vs {variance} seed={seed}",
            stats.variance
        );
    }
}
