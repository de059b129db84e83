//! The library's tensor-core matrix product (`ops::matmul_tensor`, f16 inputs, f32 accumulation:
//! `gpu-kernels-tc`'s `matmul_tc`) on the CPU executor, beside the f32 `ops::matmul`
//! (`matmul_blocked`) at the same sizes, in one run: issue 32 asks that the tensor-core kernel
//! be not slower on the CPU than `matmul_blocked`. Unchecked mode, as the main job runs them.
//! `matmul_tc` takes the split path there (each stage's `mma_tiles` one block-level step that
//! multiplies every warp's tiles straight from shared memory); the same kernel forced onto
//! coroutines (a warp rendezvous per `mma_tiles`, a switch per thread) is measured at 256³ for
//! comparison.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use ferrocuda::ops::{self, Matmul, MatmulShape};
use ferrocuda::{f16, CpuOptions, Device, KERNELS, TENSOR_KERNELS};

fn bench(c: &mut Criterion) {
    let device = Device::cpu_checked(false);
    let kernels = device.load(&KERNELS).unwrap();
    let tensor = device.load(&TENSOR_KERNELS).unwrap();
    let on_coroutines = Device::cpu_with(CpuOptions {
        checked: false,
        force_coroutines: true,
        ..CpuOptions::default()
    })
    .unwrap()
    .load(&TENSOR_KERNELS)
    .unwrap();
    let mut group = c.benchmark_group("matmul_tensor_cpu");
    group.sample_size(10);
    for n in [256usize, 1024] {
        // Small integers and halves: exact in f16, so both products are the same matrix.
        let a: Vec<f32> = (0..n * n).map(|i| (i % 17) as f32 * 0.25).collect();
        let b: Vec<f32> = (0..n * n).map(|i| (i % 13) as f32 * 0.5).collect();
        let a16: Vec<f16> = a.iter().map(|&x| f16::from_f32(x)).collect();
        let b16: Vec<f16> = b.iter().map(|&x| f16::from_f32(x)).collect();
        let mut out = vec![0.0f32; n * n];
        let shape = MatmulShape::new(n, n, n);
        group.throughput(Throughput::Elements((2 * n * n * n) as u64)); // flops
        group.bench_function(BenchmarkId::new("matmul_blocked f32", n), |bench| {
            bench.iter(|| {
                ops::matmul(&kernels, &a, &b, &mut out, shape, Matmul::RegisterBlocked).unwrap()
            })
        });
        group.bench_function(BenchmarkId::new("matmul_tc f16", n), |bench| {
            bench.iter(|| ops::matmul_tensor(&tensor, &a16, &b16, &mut out, shape).unwrap())
        });
        if n == 256 {
            group.bench_function(BenchmarkId::new("matmul_tc f16 coroutines", n), |bench| {
                bench.iter(|| {
                    ops::matmul_tensor(&on_coroutines, &a16, &b16, &mut out, shape).unwrap()
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
