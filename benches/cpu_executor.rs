//! What the CPU executor's own machinery costs, each beside what a hand-written Rust loop does:
//! a barrier per thread (a kernel doing `rounds` barriers in a block-uniform loop), the
//! elementwise vector add of 16M floats against a plain `rayon` `par_iter` loop (the stand-in for
//! Numba's parallel CPU loop) and a single-thread loop, and the one-element-per-thread block scan
//! of 10M values against a sequential scan; and (issue 30) kernels that leave a loop with
//! barriers by `break`, or declare a `let` without a value, beside the same kernels written
//! without (`leaving`), on the split path and on coroutines (where they ran before).
//!
//! `cargo bench --bench cpu_executor`; under `cargo test` every routine runs once at test sizes.

#[path = "../tests/support/mod.rs"]
mod support;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ferrocuda::kernels::vector_add;
use ferrocuda::{launch, CpuOptions, Device, LaunchConfig};
use rayon::prelude::*;
use std::hint::black_box;
use test_kernels::leaving::{
    break_between_barriers, declared_before_assigned_after, declared_with_values, stop_by_bound,
};
use test_kernels::regions::{barrier_rounds, block_scan, SCAN_BLOCK};

/// Whether criterion runs for real (`--bench`): else every size is a test size.
fn full() -> bool {
    std::env::args().any(|a| a == "--bench")
}

/// The executor without checked mode, on the split path or forced onto coroutines.
fn executor(coroutines: bool) -> Device {
    let options = CpuOptions {
        checked: false,
        force_coroutines: coroutines,
        ..CpuOptions::default()
    };
    Device::cpu_with(options).unwrap()
}

fn paths() -> [(&'static str, bool); 2] {
    [("split", false), ("coroutines", true)]
}

fn barriers(c: &mut Criterion) {
    let (blocks, threads, rounds) = if full() { (64, 256, 64) } else { (2, 64, 4) };
    let mut group = c.benchmark_group("barrier");
    // One element per thread per barrier: the time per element is the cost per thread per barrier.
    group.throughput(Throughput::Elements((blocks * threads * rounds) as u64));
    group.sample_size(10);
    let mut out = vec![0u32; (blocks * threads) as usize];
    for (path, coroutines) in paths() {
        let module = executor(coroutines).load(support::test_kernels()).unwrap();
        // Checked inside the routine, which criterion skips for a filtered-out benchmark.
        group.bench_function(BenchmarkId::new("executor", path), |bench| {
            launch!(module, barrier_rounds[blocks, threads](&mut out, rounds)).unwrap();
            assert!(out.iter().all(|&n| n == rounds), "{path}");
            bench.iter(|| {
                launch!(module, barrier_rounds[blocks, threads](&mut out, rounds)).unwrap()
            })
        });
    }
    group.finish();
}

fn vector_add_16m(c: &mut Criterion) {
    let n = if full() { 16 << 20 } else { 4096 };
    let a: Vec<f32> = (0..n).map(|i| (i % 1000) as f32).collect();
    let b: Vec<f32> = (0..n).map(|i| (i % 7) as f32 * 0.5).collect();
    let mut out = vec![0.0f32; n];
    let mut group = c.benchmark_group("vector_add");
    group.throughput(Throughput::Bytes(12 * n as u64));
    group.sample_size(10);
    group.bench_function("plain loop (1 thread)", |bench| {
        bench.iter(|| {
            for ((o, x), y) in out.iter_mut().zip(black_box(&a)).zip(&b) {
                *o = x + y;
            }
        })
    });
    group.bench_function("rayon par_iter (all cores)", |bench| {
        bench.iter(|| {
            out.par_iter_mut()
                .zip(black_box(&a).par_iter())
                .zip(&b)
                .for_each(|((o, x), y)| *o = x + y)
        })
    });
    let module = executor(false).load(&ferrocuda::KERNELS).unwrap();
    let config = module.config_for(&vector_add, n).unwrap();
    group.bench_function("executor (all cores)", |bench| {
        out.fill(0.0);
        launch!(module, vector_add[config.grid, config.block](&a, &b, &mut out)).unwrap();
        assert!(out.iter().enumerate().all(|(i, &o)| o == a[i] + b[i]));
        bench.iter(|| {
            launch!(module, vector_add[config.grid, config.block](&a, &b, &mut out)).unwrap()
        })
    });
    group.finish();
}

fn scan_10m(c: &mut Criterion) {
    let n = if full() { 10_000_000 } else { 3000 };
    let x: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(2654435761) >> 20)
        .collect();
    let mut out = vec![0u32; n];
    let mut group = c.benchmark_group("block_scan");
    group.throughput(Throughput::Elements(n as u64));
    group.sample_size(10);
    group.bench_function("sequential scan (1 thread)", |bench| {
        bench.iter(|| {
            let mut sum = 0u32;
            for (o, &v) in out.iter_mut().zip(black_box(&x)) {
                sum = sum.wrapping_add(v);
                *o = sum;
            }
        })
    });
    let config = LaunchConfig::new(n.div_ceil(SCAN_BLOCK) as u32, SCAN_BLOCK as u32);
    for (path, coroutines) in paths() {
        let module = executor(coroutines).load(support::test_kernels()).unwrap();
        group.bench_function(BenchmarkId::new("executor", path), |bench| {
            launch!(module, block_scan[config.grid, config.block](&x, &mut out)).unwrap();
            for (i, &o) in out.iter().enumerate().step_by(997) {
                let start = i - i % SCAN_BLOCK;
                let expected = x[start..=i].iter().fold(0u32, |s, &v| s.wrapping_add(v));
                assert_eq!(o, expected, "{path}: element {i}");
            }
            bench.iter(|| {
                launch!(module, block_scan[config.grid, config.block](&x, &mut out)).unwrap()
            })
        });
    }
    group.finish();
}

/// A loop with two barriers per trip left by a block-uniform `break` between them (hotspot's
/// pyramid loop) against the same loop bounded instead, and srad's `let (n, s, w, e);` assigned
/// after barriers against `let`s with values: each pair side by side, on both paths.
fn leaving(c: &mut Criterion) {
    let (blocks, threads, rounds) = if full() {
        (512u32, 256u32, 16u32)
    } else {
        (2, 64, 4)
    };
    let stop = rounds - 2;
    let n = (blocks * threads) as usize;
    let x: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2654435761)).collect();
    let mut group = c.benchmark_group("leaving");
    group.throughput(Throughput::Elements(n as u64));
    group.sample_size(10);
    for (path, coroutines) in paths() {
        let module = executor(coroutines).load(support::test_kernels()).unwrap();
        let mut want = vec![0u32; n];
        let mut out = vec![0u32; n];
        let trips = rounds.min(stop + 1);
        launch!(module, stop_by_bound[blocks, threads](&x, &mut want, trips, stop)).unwrap();
        for (name, kernel, bound) in [
            ("break", break_between_barriers, rounds),
            ("bound", stop_by_bound, trips),
        ] {
            group.bench_function(BenchmarkId::new(name, path), |bench| {
                launch!(module, kernel[blocks, threads](&x, &mut out, bound, stop)).unwrap();
                assert_eq!(out, want, "{name} {path}");
                bench.iter(|| {
                    launch!(module, kernel[blocks, threads](&x, &mut out, bound, stop)).unwrap()
                })
            });
        }
        launch!(module, declared_with_values[blocks, threads](&x, &mut want)).unwrap();
        for (name, kernel) in [
            ("let without value", declared_before_assigned_after),
            ("let with value", declared_with_values),
        ] {
            group.bench_function(BenchmarkId::new(name, path), |bench| {
                launch!(module, kernel[blocks, threads](&x, &mut out)).unwrap();
                assert_eq!(out, want, "{name} {path}");
                bench.iter(|| launch!(module, kernel[blocks, threads](&x, &mut out)).unwrap())
            });
        }
    }
    group.finish();
}

criterion_group!(benches, barriers, vector_add_16m, scan_10m, leaving);
criterion_main!(benches);
