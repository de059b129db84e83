//! Vector add of 1,000,000 f32, side by side: a plain loop, a hand-written rayon version, the
//! `vector_add` kernel on the CPU executor, and on the GPU when there is one. Throughput is in
//! elements per second; bytes moved are 12 per element (two reads, one write).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use oxicuda::{kernels::vector_add, launch, Device, Module};
use rayon::prelude::*;
use std::hint::black_box;

const N: usize = 1_000_000;
const THREADS: u32 = 256;

fn inputs() -> (Vec<f32>, Vec<f32>) {
    ((0..N).map(|i| i as f32).collect(), vec![1.0; N])
}

fn launch_on(c: &mut Criterion, name: &str, kernels: &Module) {
    let device = kernels.device().clone();
    let (a, b) = inputs();
    let (a, b) = (device.upload(&a).unwrap(), device.upload(&b).unwrap());
    let mut out = device.alloc_zeroed::<f32>(N).unwrap();
    let blocks = (N as u32).div_ceil(THREADS);
    let mut group = c.benchmark_group("vector_add_1M");
    group.throughput(Throughput::Elements(N as u64));
    group.bench_function(BenchmarkId::new(name, "device buffers"), |bench| {
        bench.iter(|| {
            launch!(kernels, vector_add[blocks, THREADS](&a, &b, &mut out)).unwrap();
            device.synchronize().unwrap();
        })
    });
    group.finish();
}

fn bench(c: &mut Criterion) {
    let (a, b) = inputs();
    let mut out = vec![0.0f32; N];
    let mut group = c.benchmark_group("vector_add_1M");
    group.throughput(Throughput::Elements(N as u64));
    group.bench_function("plain loop (1 thread)", |bench| {
        bench.iter(|| {
            for ((o, x), y) in out.iter_mut().zip(black_box(&a)).zip(black_box(&b)) {
                *o = x + y;
            }
        })
    });
    group.bench_function("rayon (all cores)", |bench| {
        bench.iter(|| {
            out.par_iter_mut()
                .zip(black_box(&a).par_iter())
                .zip(black_box(&b).par_iter())
                .for_each(|((o, x), y)| *o = x + y)
        })
    });
    group.bench_function("executor, host slices", |bench| {
        let kernels = Device::cpu().load(&oxicuda::KERNELS).unwrap();
        let blocks = (N as u32).div_ceil(THREADS);
        bench.iter(|| launch!(kernels, vector_add[blocks, THREADS](&a, &b, &mut out)).unwrap())
    });
    group.finish();

    launch_on(
        c,
        "executor",
        &Device::cpu().load(&oxicuda::KERNELS).unwrap(),
    );
    match Device::cuda(0) {
        Ok(gpu) => launch_on(c, "gpu", &gpu.load(&oxicuda::KERNELS).unwrap()),
        Err(error) => eprintln!("vector_add_1M/gpu: skipped: {error}"),
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
