//! `ops::group_by` (and both aggregation kernels directly) on the CPU executor in checked mode,
//! against a `HashMap` group-by in f64; on a GPU when there is one.

mod support;

use ferrocuda::kernels::group_by::{
    group_by_finish, group_by_global, group_by_owned, group_by_owned_finish, group_by_shared,
    OWNED_STATE_PER_KEY, SHARED_BYTES_PER_KEY,
};
use ferrocuda::ops::{self, GroupStats};
use ferrocuda::{launch, Device, Error, LaunchConfig, Module};
use rand::rngs::StdRng;
use rand::Rng;
use std::collections::HashMap;

fn cpu_kernels() -> Module {
    let device = Device::cpu();
    assert!(device.checks_enabled(), "these tests run in checked mode");
    device.load(&ferrocuda::KERNELS).unwrap()
}

/// Per-key aggregates in f64 (sum and Σ|v|), min and max as folds of `f32::min`/`f32::max` from
/// `+∞`/`−∞` (so NaN is ignored and a key without values keeps the infinities).
struct Reference {
    count: Vec<u32>,
    sum: Vec<f64>,
    sum_abs: Vec<f64>,
    min: Vec<f32>,
    max: Vec<f32>,
}

/// A `DataFrame.groupby()` done the plain way: a `HashMap` from each key that occurs to its
/// aggregates, then laid out per key `0..num_keys` (a key that never occurs: count 0, sum 0,
/// min `+∞`, max `−∞`).
fn reference(keys: &[u32], values: &[f32], num_keys: usize) -> Reference {
    let mut groups: HashMap<u32, (u32, f64, f64, f32, f32)> = HashMap::new();
    for (&k, &v) in keys.iter().zip(values) {
        let g = groups
            .entry(k)
            .or_insert((0, 0.0, 0.0, f32::INFINITY, f32::NEG_INFINITY));
        g.0 += 1;
        g.1 += v as f64;
        g.2 += (v as f64).abs();
        g.3 = g.3.min(v);
        g.4 = g.4.max(v);
    }
    let mut r = Reference {
        count: vec![0; num_keys],
        sum: vec![0.0; num_keys],
        sum_abs: vec![0.0; num_keys],
        min: vec![f32::INFINITY; num_keys],
        max: vec![f32::NEG_INFINITY; num_keys],
    };
    for (k, (count, sum, sum_abs, min, max)) in groups {
        let k = k as usize;
        (r.count[k], r.sum[k], r.sum_abs[k], r.min[k], r.max[k]) = (count, sum, sum_abs, min, max);
    }
    r
}

/// `rows` random rows with keys below `num_keys`, except that keys ≡ 4 (mod 5) never appear
/// (for `num_keys ≥ 5`): keys without rows must come out empty.
fn random_rows(rng: &mut StdRng, rows: usize, num_keys: usize) -> (Vec<u32>, Vec<f32>) {
    let keys = (0..rows)
        .map(|_| {
            let k = rng.random_range(0..num_keys as u32);
            if k % 5 == 4 {
                k - 1
            } else {
                k
            }
        })
        .collect();
    (keys, support::random_f32(rng, rows))
}

/// Counts, min and max exact; sums within `8·ε·√n·Σ|v|` per key: the f32 atomic additions run in
/// an order that depends on scheduling, so the sum is not bit-reproducible, and the rounding
/// errors of n additions grow like √n (a dropped or doubled row shows in the count). Keys
/// without rows: count 0, sum 0, min `+∞`, max `−∞`, mean NaN; a key with a NaN value: sum and
/// mean NaN. Returns how many keys had rows.
fn assert_matches(got: &GroupStats, keys: &[u32], values: &[f32], what: &str) -> usize {
    let num_keys = got.num_keys();
    let want = reference(keys, values, num_keys);
    let count = got.count.to_vec().unwrap();
    let sum = got.sum.to_vec().unwrap();
    let min = got.min.to_vec().unwrap();
    let max = got.max.to_vec().unwrap();
    let mean = got.mean().unwrap();
    assert_eq!(count, want.count, "{what}: counts");
    assert_eq!(min, want.min, "{what}: min");
    assert_eq!(max, want.max, "{what}: max");
    for k in 0..num_keys {
        if want.sum[k].is_nan() {
            // A NaN value makes its key's sum and mean NaN.
            assert!(
                sum[k].is_nan() && mean[k].is_nan(),
                "{what}: key {k}: NaN sum"
            );
            continue;
        }
        let n = want.count[k] as f64;
        let bound = 8.0 * f32::EPSILON as f64 * n.sqrt() * want.sum_abs[k];
        assert!(
            (sum[k] as f64 - want.sum[k]).abs() <= bound,
            "{what}: key {k}: sum {} vs {} (bound {bound})",
            sum[k],
            want.sum[k]
        );
        if want.count[k] == 0 {
            assert!(sum[k] == 0.0 && mean[k].is_nan(), "{what}: empty key {k}");
        } else {
            assert_eq!(mean[k], sum[k] / count[k] as f32, "{what}: key {k}: mean");
        }
    }
    want.count.iter().filter(|&&n| n > 0).count()
}

#[test]
fn group_by_matches_a_per_key_reference_on_both_sides_of_the_shared_memory_limit() {
    let kernels = cpu_kernels();
    let limit = ops::group_by_shared_max_keys(&kernels);
    assert_eq!(
        limit,
        48 * 1024 / 16,
        "48 KiB of shared memory, 16 bytes per key"
    );
    let (mut rng, seed) = support::rng();
    for num_keys in [1, 16, 1000, limit, limit + 1, 4096, 1 << 20] {
        for rows in [1, 33, 4099, 100_003] {
            let (keys, values) = random_rows(&mut rng, rows, num_keys);
            let got = ops::group_by(&kernels, &keys, &values, num_keys).unwrap();
            let what = format!("K={num_keys} rows={rows} seed={seed}");
            let present = assert_matches(&got, &keys, &values, &what);
            if num_keys >= 5 && rows == 100_003 {
                assert!(present < num_keys, "{what}: some keys have no rows");
            }
        }
    }
}

#[test]
fn both_kernels_aggregate_alike_at_any_launch_shape() {
    // The ops function picks one kernel by K; here each runs at the same K, with partial warps
    // and blocks, so both are tested whatever the threshold.
    let kernels = cpu_kernels();
    let device = kernels.device();
    let (mut rng, seed) = support::rng();
    for num_keys in [1usize, 7, 300] {
        let (keys, values) = random_rows(&mut rng, 5000, num_keys);
        for (blocks, threads) in [(1u32, 1u32), (1, 33), (5, 96), (3, 1024)] {
            for shared in [true, false] {
                let mut count = vec![0u32; num_keys];
                let mut sum = vec![0.0f32; num_keys];
                let mut lowest = vec![0u32; num_keys];
                let mut highest = vec![0u32; num_keys];
                let mut rejected = [0u64; 2];
                let args = (
                    &keys,
                    &values,
                    &mut count,
                    &mut sum,
                    &mut lowest,
                    &mut highest,
                    &mut rejected,
                );
                let config = LaunchConfig::new(blocks, threads);
                if shared {
                    let bytes = (SHARED_BYTES_PER_KEY * num_keys) as u32;
                    let config = config.with_shared_mem_bytes(bytes);
                    kernels.launch(&group_by_shared, config, args).unwrap();
                } else {
                    kernels.launch(&group_by_global, config, args).unwrap();
                }
                assert_eq!(rejected, [0, 0]);
                let mut min = vec![0.0f32; num_keys];
                let mut max = vec![0.0f32; num_keys];
                launch!(kernels, group_by_finish[2, 64](&lowest, &highest, &mut min, &mut max))
                    .unwrap();
                let got = GroupStats {
                    count: device.upload(&count).unwrap(),
                    sum: device.upload(&sum).unwrap(),
                    min: device.upload(&min).unwrap(),
                    max: device.upload(&max).unwrap(),
                };
                let what = format!("K={num_keys} grid={blocks}x{threads} shared={shared}");
                assert_matches(&got, &keys, &values, &format!("{what} seed={seed}"));
            }
        }
    }
}

/// `group_by_owned` then `group_by_owned_finish` on `kernels` at each launch shape, for rows
/// with keys below `num_keys` plus NaN values and rows whose key is out of range: the rejected
/// rows counted (with the largest key), the others aggregated as the reference says.
fn check_owned_kernel(kernels: &Module, rows: usize, num_keys: usize, what: &str) {
    let device = kernels.device();
    let (mut rng, seed) = support::rng();
    let (mut keys, mut values) = random_rows(&mut rng, rows, num_keys);
    for i in (0..rows).step_by(7) {
        values[i] = f32::NAN;
    }
    let mut bad = 0;
    for i in (3..rows).step_by(11) {
        keys[i] = num_keys as u32 + (i % 3) as u32;
        bad += 1;
    }
    let largest = if bad > 0 {
        keys.iter().copied().max().unwrap() as u64
    } else {
        0
    };
    let good: (Vec<u32>, Vec<f32>) = keys
        .iter()
        .zip(&values)
        .filter(|(&k, _)| (k as usize) < num_keys)
        .unzip();
    for (blocks, threads) in [(1u32, 1u32), (1, 33), (2, 256), (5, 96), (3, 1024), (9, 32)] {
        let what = format!("{what} K={num_keys} rows={rows} grid={blocks}x{threads} seed={seed}");
        let mut state = device
            .alloc_zeroed::<u32>(OWNED_STATE_PER_KEY * num_keys)
            .unwrap();
        let mut rejected = device.alloc_zeroed::<u64>(2).unwrap();
        launch!(kernels, group_by_owned[blocks, threads](&keys, &values, &mut state, &mut rejected))
            .unwrap();
        assert_eq!(
            rejected.to_vec().unwrap(),
            [bad, largest],
            "{what}: rejected"
        );
        let mut count = device.alloc_zeroed::<u32>(num_keys).unwrap();
        let mut sum = device.alloc_zeroed::<f32>(num_keys).unwrap();
        let mut min = device.alloc_zeroed::<f32>(num_keys).unwrap();
        let mut max = device.alloc_zeroed::<f32>(num_keys).unwrap();
        launch!(
            kernels,
            group_by_owned_finish[3, 64](&state, &mut count, &mut sum, &mut min, &mut max)
        )
        .unwrap();
        let got = GroupStats {
            count,
            sum,
            min,
            max,
        };
        assert_matches(&got, &good.0, &good.1, &what);
    }
}

#[test]
fn the_owned_keys_kernel_matches_the_reference_at_any_launch_shape() {
    // `ops::group_by` launches it on the CPU for more keys than shared memory holds; here at
    // any K, with blocks that own no key (more blocks than keys), NaN values and keys out of
    // range, and no rows at all.
    let kernels = cpu_kernels();
    for (rows, num_keys) in [
        (0, 5),
        (1, 1),
        (3000, 1),
        (3000, 7),
        (5000, 300),
        (20_000, 5000),
    ] {
        check_owned_kernel(&kernels, rows, num_keys, "CPU");
    }
}

#[test]
fn the_owned_keys_kernel_refuses_a_2d_launch() {
    let kernels = cpu_kernels();
    let device = kernels.device();
    let (keys, values) = (vec![0u32; 10], vec![1.0f32; 10]);
    let mut state = device.alloc_zeroed::<u32>(4 * 3).unwrap();
    let mut rejected = device.alloc_zeroed::<u64>(2).unwrap();
    let config = LaunchConfig::new(2, (32, 2, 1));
    let error = kernels
        .launch(
            &group_by_owned,
            config,
            (&keys, &values, &mut state, &mut rejected),
        )
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("group_by_owned needs a 1D launch (grid and block with y = z = 1)"),
        "{error}"
    );
}

#[test]
fn the_shared_kernel_refuses_too_little_shared_memory() {
    let kernels = cpu_kernels();
    let (keys, values) = (vec![0u32; 10], vec![1.0f32; 10]);
    let (mut count, mut sum) = (vec![0u32; 100], vec![0.0f32; 100]);
    let (mut lowest, mut highest, mut rejected) = (vec![0u32; 100], vec![0u32; 100], [0u64; 2]);
    let config = LaunchConfig::new(1, 32).with_shared_mem_bytes(16 * 99);
    let args = (
        &keys,
        &values,
        &mut count,
        &mut sum,
        &mut lowest,
        &mut highest,
        &mut rejected,
    );
    let error = kernels.launch(&group_by_shared, config, args).unwrap_err();
    assert!(
        error.to_string().contains(
            "group_by_shared needs shared_mem_bytes = SHARED_BYTES_PER_KEY × count.len()"
        ),
        "{error}"
    );
}

#[test]
fn nan_values_are_counted_and_poison_the_sum_but_not_min_and_max() {
    let kernels = cpu_kernels();
    for num_keys in [8, 5000] {
        // Key 1: values and a NaN. Key 2: only NaN. Key 3: no rows.
        let keys = [1u32, 1, 1, 2, 2, 0, 1];
        let values = [3.0f32, f32::NAN, -2.0, f32::NAN, f32::NAN, 7.0, 5.0];
        let got = ops::group_by(&kernels, &keys, &values, num_keys).unwrap();
        let what = format!("K={num_keys}");
        let count = got.count.to_vec().unwrap();
        let sum = got.sum.to_vec().unwrap();
        let (min, max) = (got.min.to_vec().unwrap(), got.max.to_vec().unwrap());
        assert_eq!(count[..4], [1, 4, 2, 0], "{what}");
        assert_eq!((sum[0], sum[3]), (7.0, 0.0), "{what}");
        assert!(sum[1].is_nan() && sum[2].is_nan(), "{what}: {sum:?}");
        assert_eq!(
            min[..4],
            [7.0, -2.0, f32::INFINITY, f32::INFINITY],
            "{what}"
        );
        assert_eq!(
            max[..4],
            [7.0, 5.0, f32::NEG_INFINITY, f32::NEG_INFINITY],
            "{what}"
        );
    }
}

#[test]
fn min_and_max_order_every_kind_of_float() {
    // Negative and positive values, zeros, subnormals and infinities in one key: the order keys
    // must sort them as floats.
    let kernels = cpu_kernels();
    let values = [
        -0.0f32,
        1e-40,
        -1e-40,
        f32::MAX,
        -f32::MAX,
        f32::INFINITY,
        f32::NEG_INFINITY,
        0.5,
        -0.5,
    ];
    for (lo, hi) in [(0, 9), (0, 3), (1, 3), (7, 9), (3, 5)] {
        let part = &values[lo..hi];
        let keys = vec![0u32; part.len()];
        let got = ops::group_by(&kernels, &keys, part, 1).unwrap();
        let want = reference(&keys, part, 1);
        assert_eq!(got.min.to_vec().unwrap(), want.min, "{part:?}");
        assert_eq!(got.max.to_vec().unwrap(), want.max, "{part:?}");
    }
}

#[test]
fn group_by_reads_device_buffers() {
    let kernels = cpu_kernels();
    let device = kernels.device();
    let (mut rng, seed) = support::rng();
    for num_keys in [16, 4096] {
        let (keys, values) = random_rows(&mut rng, 10_000, num_keys);
        let (k, v) = (
            device.upload(&keys).unwrap(),
            device.upload(&values).unwrap(),
        );
        let got = ops::group_by(&kernels, &k, &v, num_keys).unwrap();
        assert_matches(&got, &keys, &values, &format!("K={num_keys} seed={seed}"));
    }
}

#[test]
fn no_rows_give_every_key_empty() {
    let kernels = cpu_kernels();
    for num_keys in [1, 16, 4096] {
        let got = ops::group_by(&kernels, &[0u32; 0], &[0.0f32; 0], num_keys).unwrap();
        assert_matches(&got, &[], &[], &format!("K={num_keys}"));
        assert_eq!(got.num_keys(), num_keys);
    }
}

#[test]
fn keys_out_of_range_are_an_error_that_counts_them() {
    let kernels = cpu_kernels();
    let (mut rng, seed) = support::rng();
    for num_keys in [16usize, 5000] {
        let (mut keys, values) = random_rows(&mut rng, 1000, num_keys);
        keys[0] = num_keys as u32;
        keys[500] = u32::MAX;
        keys[999] = num_keys as u32 + 7;
        let error = ops::group_by(&kernels, &keys, &values, num_keys).unwrap_err();
        let want = format!(
            "3 of 1000 rows have a key ≥ num_keys = {num_keys} (the largest is {}); no result \
             is returned",
            u32::MAX
        );
        assert!(
            matches!(&error, Error::InvalidInput { op: "group_by", detail } if *detail == want),
            "{error} seed={seed}"
        );
    }
}

#[test]
fn mismatched_lengths_and_zero_keys_are_invalid_input() {
    let kernels = cpu_kernels();
    let error = ops::group_by(&kernels, &[0u32; 5], &[0.0f32; 4], 3).unwrap_err();
    assert!(
        matches!(&error, Error::InvalidInput { op: "group_by", detail }
            if detail == "values has 4 elements but one value per key in keys needs 5"),
        "{error}"
    );
    let error = ops::group_by(&kernels, &[0u32; 5], &[0.0f32; 5], 0).unwrap_err();
    assert!(
        matches!(&error, Error::InvalidInput { op: "group_by", detail }
            if detail == "num_keys is 0: no key would be in range"),
        "{error}"
    );
}

#[test]
fn gpu_group_by_matches_the_reference() {
    let Some(gpu) = support::gpu_or_skip("gpu_group_by_matches_the_reference") else {
        return;
    };
    let kernels = gpu.load(&ferrocuda::KERNELS).unwrap();
    let limit = ops::group_by_shared_max_keys(&kernels);
    let (mut rng, seed) = support::rng();
    let most_rows = support::size_for(&gpu, 3_000_017, 200_003);
    for num_keys in [1, 16, 1000, limit, limit + 1, 1 << 20] {
        for rows in [1, 4099, most_rows] {
            let (keys, values) = random_rows(&mut rng, rows, num_keys);
            let what = format!("GPU K={num_keys} rows={rows} seed={seed}");
            let got = ops::group_by(&kernels, &keys, &values, num_keys).unwrap();
            assert_matches(&got, &keys, &values, &what);
            let (k, v) = (gpu.upload(&keys).unwrap(), gpu.upload(&values).unwrap());
            let on_gpu = ops::group_by(&kernels, &k, &v, num_keys).unwrap();
            assert_matches(&on_gpu, &keys, &values, &format!("{what} buffers"));
        }
    }
    // The CPU executor's kernel for many keys, on the GPU: the same results.
    for (rows, num_keys) in [(0, 5), (1, 1), (3000, 1), (5000, 300), (20_000, 5000)] {
        check_owned_kernel(&kernels, rows, num_keys, "GPU");
    }
    let (mut keys, values) = random_rows(&mut rng, 100_000, 64);
    keys[54_321] = 64;
    let error = ops::group_by(&kernels, &keys, &values, 64).unwrap_err();
    assert!(error.to_string().contains("1 of 100000 rows"), "{error}");
}
