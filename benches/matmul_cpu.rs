//! Matrix product of two 256×256 f32 matrices on the CPU executor: the tiled kernel (shared
//! memory and two barriers per tile step, so every block runs cooperatively) against the naive
//! one (no barrier: the fast path), each with checked mode off and on, beside a plain loop.
//! The GPU columns of these workloads belong to the workload benches; this one measures what
//! block cooperation and the simulator's checks cost. Beside them, matmul_blocked (the library's
//! fast f32 kernel) and test-kernels' `matmul_f16_tc` (tensor cores: f16 inputs, f32
//! accumulators: each `mma` a sync point of the split path, one multiply per warp), and the
//! same kernel forced onto coroutines (each `mma` a warp rendezvous, a switch per thread).

#[path = "../tests/support/mod.rs"]
mod support;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ferrocuda::kernels::matmul::{
    matmul_blocked, matmul_naive, matmul_tiled, BLOCKED_M, BLOCKED_N, BLOCKED_THREADS, TILE,
};
use ferrocuda::{f16, launch, CpuOptions, Device};
use std::hint::black_box;
use test_kernels::tensor_cores::matmul_f16_tc;

const N: usize = 256;

fn bench(c: &mut Criterion) {
    let a: Vec<f32> = (0..N * N).map(|i| (i % 17) as f32 * 0.25).collect();
    let b: Vec<f32> = (0..N * N).map(|i| (i % 13) as f32 * 0.5).collect();
    let mut out = vec![0.0f32; N * N];
    let mut group = c.benchmark_group("matmul_256");
    group.throughput(Throughput::Elements((2 * N * N * N) as u64)); // flops
    group.sample_size(20);
    group.bench_function("plain loop (1 thread)", |bench| {
        bench.iter(|| {
            for i in 0..N {
                for j in 0..N {
                    let mut acc = 0.0f32;
                    for p in 0..N {
                        acc += black_box(&a)[i * N + p] * b[p * N + j];
                    }
                    out[i * N + j] = acc;
                }
            }
        })
    });
    let grid = ((N / TILE) as u32, (N / TILE) as u32);
    let block = (TILE as u32, TILE as u32);
    let n = N as u32;
    let (a16, b16): (Vec<f16>, Vec<f16>) = (
        a.iter().map(|&x| f16::from_f32(x)).collect(),
        b.iter().map(|&x| f16::from_f32(x)).collect(),
    );
    let tc_grid = ((N / 32) as u32, (N / 32) as u32);
    for checked in [false, true] {
        let mode = if checked { "checked" } else { "unchecked" };
        let kernels = Device::cpu_checked(checked)
            .load(&ferrocuda::KERNELS)
            .unwrap();
        group.bench_function(BenchmarkId::new("executor tiled", mode), |bench| {
            bench.iter(|| {
                launch!(kernels, matmul_tiled[grid, block](&a, &b, &mut out, n, n, n)).unwrap()
            })
        });
        group.bench_function(BenchmarkId::new("executor naive", mode), |bench| {
            bench.iter(|| {
                launch!(kernels, matmul_naive[grid, block](&a, &b, &mut out, n, n, n)).unwrap()
            })
        });
        let blocked_grid = ((N / BLOCKED_N) as u32, (N / BLOCKED_M) as u32);
        group.bench_function(BenchmarkId::new("executor blocked", mode), |bench| {
            bench.iter(|| {
                launch!(
                    kernels,
                    matmul_blocked[blocked_grid, BLOCKED_THREADS](&a, &b, &mut out, n, n, n)
                )
                .unwrap()
            })
        });
        let tensor = Device::cpu_checked(checked)
            .load(support::test_kernels_sm80())
            .unwrap();
        group.bench_function(
            BenchmarkId::new("executor tensor cores f16", mode),
            |bench| {
                bench.iter(|| {
                    launch!(
                        tensor,
                        matmul_f16_tc[tc_grid, 128](&a16, &b16, &mut out, n, n, n)
                    )
                    .unwrap()
                })
            },
        );
    }
    // The same tensor-core kernel forced onto coroutines: each `mma` a warp rendezvous (a switch
    // per thread), as every `mma` was before the split path took them (issue 32).
    let on_coroutines = Device::cpu_with(CpuOptions {
        checked: false,
        force_coroutines: true,
        ..CpuOptions::default()
    })
    .unwrap()
    .load(support::test_kernels_sm80())
    .unwrap();
    group.bench_function("executor tensor cores f16 coroutines/unchecked", |bench| {
        bench.iter(|| {
            launch!(
                on_coroutines,
                matmul_f16_tc[tc_grid, 128](&a16, &b16, &mut out, n, n, n)
            )
            .unwrap()
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
