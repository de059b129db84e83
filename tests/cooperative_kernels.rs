//! The block-cooperative kernels of ferrocuda-kernels on the CPU executor (checked mode, the default in
//! tests) against f64 or exact references, on fresh random inputs of awkward sizes.

mod support;

use ferrocuda::kernels::histogram::{bin_of, histogram};
use ferrocuda::kernels::matmul::{matmul_naive, matmul_tiled, TILE};
use ferrocuda::kernels::reduce::{dot_partial, sum_partial};
use ferrocuda::kernels::transpose::{
    transpose_naive, transpose_tiled, TRANSPOSE_ROWS, TRANSPOSE_TILE,
};
use ferrocuda::{launch, Device, LaunchConfig, Module};
use rand::Rng;

const LENGTHS: [usize; 5] = [1, 31, 33, 1000, 4099];

fn cpu_kernels() -> Module {
    let device = Device::cpu();
    assert!(device.checks_enabled(), "these tests run in checked mode");
    device.load(&ferrocuda::KERNELS).unwrap()
}

/// `Σ a·b` in two launches: partial sums per block, then one block sums the partials.
fn dot(kernels: &Module, a: &[f32], b: &[f32], blocks: u32, threads: u32) -> f32 {
    let mut partial = vec![f32::NAN; blocks as usize];
    launch!(kernels, dot_partial[blocks, threads](a, b, &mut partial)).unwrap();
    let mut total = [f32::NAN];
    launch!(kernels, sum_partial[1, threads](&partial, &mut total)).unwrap();
    total[0]
}

#[test]
fn dot_product_of_any_length_with_any_grid_matches_f64() {
    let kernels = cpu_kernels();
    let (mut rng, seed) = support::rng();
    for n in LENGTHS.into_iter().chain([1 << 20]) {
        let a = support::random_f32(&mut rng, n);
        let b = support::random_f32(&mut rng, n);
        let exact: f64 = a.iter().zip(&b).map(|(&x, &y)| x as f64 * y as f64).sum();
        let magnitude: f64 = a
            .iter()
            .zip(&b)
            .map(|(&x, &y)| (x as f64 * y as f64).abs())
            .sum();
        for (blocks, threads) in [(1, 1), (1, 32), (3, 33), (7, 256), (64, 1024)] {
            let got = dot(&kernels, &a, &b, blocks, threads) as f64;
            // f32 sums of at most n terms: error below n·ε·Σ|aᵢbᵢ|, far below in practice.
            let bound = 4.0 * f32::EPSILON as f64 * magnitude * (n as f64).log2().max(1.0);
            assert!(
                (got - exact).abs() <= bound,
                "n={n} grid={blocks}x{threads}: {got} vs {exact} (bound {bound}) seed={seed}"
            );
        }
    }
}

#[test]
fn sum_of_one_block_is_the_sum() {
    let kernels = cpu_kernels();
    let x: Vec<f32> = (1..=4099).map(|i| i as f32).collect();
    let mut total = [0.0f32];
    launch!(kernels, sum_partial[1, 96](&x, &mut total)).unwrap();
    assert_eq!(total[0], (4099 * 4100 / 2) as f32);
}

#[test]
fn histogram_counts_exactly_like_a_sequential_loop() {
    let kernels = cpu_kernels();
    let (mut rng, seed) = support::rng();
    for n in LENGTHS.into_iter().chain([200_000]) {
        // Values a little beyond the range on both sides, and some NaN: not counted.
        let mut values: Vec<f32> = (0..n).map(|_| rng.random_range(-12.0f32..12.0)).collect();
        if n > 10 {
            values[3] = f32::NAN;
        }
        for bins in [1usize, 7, 256, 12_288] {
            let (lo, hi) = (-10.0f32, 10.0f32);
            let mut want = vec![0u32; bins];
            for &v in &values {
                if let Some(bin) = bin_of(v, lo, hi, bins) {
                    want[bin] += 1;
                }
            }
            let in_range = values.iter().filter(|v| (lo..hi).contains(*v)).count();
            assert_eq!(want.iter().map(|&c| c as usize).sum::<usize>(), in_range);
            for (blocks, threads) in [(1u32, 32u32), (5, 256)] {
                // Counts accumulate: start from 1 to check the kernel adds, not overwrites.
                let mut counts = vec![1u32; bins];
                let config =
                    LaunchConfig::new(blocks, threads).with_shared_mem_bytes(4 * bins as u32);
                kernels
                    .launch(&histogram, config, (&values, &mut counts, lo, hi))
                    .unwrap();
                let expected: Vec<u32> = want.iter().map(|c| c + 1).collect();
                assert_eq!(
                    counts, expected,
                    "n={n} bins={bins} grid={blocks}x{threads} seed={seed}"
                );
            }
        }
    }
}

#[test]
fn histogram_without_its_shared_memory_fails_clearly() {
    let kernels = cpu_kernels();
    let values = vec![0.5f32; 100];
    let mut counts = vec![0u32; 16];
    let error = launch!(kernels, histogram[1, 32](&values, &mut counts, 0.0f32, 1.0f32))
        .unwrap_err()
        .to_string();
    // The kernel checks its shared memory once, before counting, and says what it needs.
    assert!(
        error.contains("histogram needs shared_mem_bytes = 4 × counts.len()"),
        "{error}"
    );
}

fn matmul_reference(a: &[f32], b: &[f32], m: usize, n: usize, k: usize) -> (Vec<f64>, Vec<f64>) {
    let mut c = vec![0.0f64; m * n];
    let mut magnitude = vec![0.0f64; m * n];
    for i in 0..m {
        for j in 0..n {
            for p in 0..k {
                let term = a[i * k + p] as f64 * b[p * n + j] as f64;
                c[i * n + j] += term;
                magnitude[i * n + j] += term.abs();
            }
        }
    }
    (c, magnitude)
}

const SHAPES: [(usize, usize, usize); 7] = [
    (1, 1, 1),
    (1, 33, 31),
    (31, 1, 33),
    (33, 31, 1),
    (16, 16, 16),
    (47, 70, 35),
    (100, 33, 129),
];

#[test]
fn tiled_and_naive_matrix_products_match_f64_for_any_shape() {
    let kernels = cpu_kernels();
    let (mut rng, seed) = support::rng();
    for (m, n, k) in SHAPES {
        let a = support::random_f32(&mut rng, m * k);
        let b = support::random_f32(&mut rng, k * n);
        let (want, magnitude) = matmul_reference(&a, &b, m, n, k);
        let grid = ((n.div_ceil(TILE)) as u32, (m.div_ceil(TILE)) as u32);
        let (mu, nu, ku) = (m as u32, n as u32, k as u32);
        let mut tiled = vec![f32::NAN; m * n];
        launch!(kernels, matmul_tiled[grid, (TILE as u32, TILE as u32)](&a, &b, &mut tiled, mu, nu, ku))
            .unwrap();
        let mut naive = vec![f32::NAN; m * n];
        launch!(kernels, matmul_naive[grid, (TILE as u32, TILE as u32)](&a, &b, &mut naive, mu, nu, ku))
            .unwrap();
        for i in 0..m * n {
            let bound =
                2.0 * k as f64 * f32::EPSILON as f64 * magnitude[i] + f32::MIN_POSITIVE as f64;
            for (name, got) in [("tiled", tiled[i]), ("naive", naive[i])] {
                assert!(
                    (got as f64 - want[i]).abs() <= bound,
                    "{name} {m}x{n}x{k} element {i}: {got} vs {} seed={seed}",
                    want[i]
                );
            }
        }
    }
}

#[test]
fn the_tiled_product_refuses_the_wrong_block_shape() {
    let kernels = cpu_kernels();
    let (a, b) = (vec![1.0f32; 4], vec![1.0f32; 4]);
    let mut c = vec![0.0f32; 4];
    let error = launch!(kernels, matmul_tiled[1, (8, 8)](&a, &b, &mut c, 2u32, 2u32, 2u32))
        .unwrap_err()
        .to_string();
    assert_eq!(
        error,
        "kernel `matmul_tiled` runs in blocks of (16, 16, 1) threads, but the launch has blocks \
         of (8, 8, 1)"
    );
}

#[test]
fn tiled_and_naive_transposes_are_exact_for_any_shape() {
    let kernels = cpu_kernels();
    let (mut rng, seed) = support::rng();
    for (rows, cols) in [
        (1, 1),
        (1, 33),
        (31, 1),
        (33, 31),
        (32, 32),
        (100, 47),
        (4099, 3),
    ] {
        let input = support::random_f32(&mut rng, rows * cols);
        let (r, c) = (rows as u32, cols as u32);
        let tiles = (
            c.div_ceil(TRANSPOSE_TILE as u32),
            r.div_ceil(TRANSPOSE_TILE as u32),
        );
        let block = (TRANSPOSE_TILE as u32, TRANSPOSE_ROWS as u32);
        let mut tiled = vec![f32::NAN; rows * cols];
        launch!(kernels, transpose_tiled[tiles, block](&input, &mut tiled, r, c)).unwrap();
        let mut naive = vec![f32::NAN; rows * cols];
        launch!(kernels, transpose_naive[(c.div_ceil(16), r.div_ceil(16)), (16, 16)](&input, &mut naive, r, c))
            .unwrap();
        for y in 0..rows {
            for x in 0..cols {
                let want = input[y * cols + x];
                assert_eq!(
                    tiled[x * rows + y],
                    want,
                    "tiled {rows}x{cols} ({y},{x}) seed={seed}"
                );
                assert_eq!(
                    naive[x * rows + y],
                    want,
                    "naive {rows}x{cols} ({y},{x}) seed={seed}"
                );
            }
        }
    }
}
