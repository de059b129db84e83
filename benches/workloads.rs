//! Every workload of the main job, side by side in one run: the plain single-threaded loop, the
//! hand-written rayon version, the kernels on the CPU executor, and on the GPU when there is one.
//! Throughput is in bytes that must cross memory (inputs read once, outputs written once), so a
//! memory-bound row reads directly as bandwidth.
//!
//! `cargo bench --bench workloads` uses the seed's sizes; `-- --quick` a sixteenth of the work
//! (and criterion's quick mode); under `cargo test` every routine runs once at test sizes.
//! The matrix product also runs the `matrixmultiply` crate (a well-kept CPU SGEMM) and, on a GPU,
//! cuBLAS SGEMM as the ceiling (see `benches/matmul_gpu.rs` for 4096²).

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};
use ferrocuda::workloads::{self, Scale, Workload};
use ferrocuda::{Device, Module};
use std::time::Duration;

/// The sizes the command line asks for.
fn scale() -> Scale {
    let args: Vec<String> = std::env::args().collect();
    if !args.iter().any(|a| a == "--bench") {
        Scale::Tiny // `cargo test`: run each routine once, quickly
    } else if args.iter().any(|a| a == "--quick") {
        Scale::Quick
    } else {
        Scale::Full
    }
}

fn bench_on_device(
    group: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    (workload_name, workload): (&str, &dyn Workload),
    kernels: &Module,
) {
    let device = kernels.device().clone();
    let mut on_device = workload.on_device(kernels).unwrap();
    on_device.run().unwrap();
    if let Err(wrong) = on_device.check().unwrap() {
        panic!("{workload_name} on {device}: wrong result: {wrong}");
    }
    group.bench_function(name, |bench| {
        bench.iter_custom(|iterations| {
            let ((), elapsed) = device
                .time(|| {
                    for _ in 0..iterations {
                        on_device.run()?;
                    }
                    Ok(())
                })
                .unwrap();
            elapsed
        })
    });
}

fn bench(c: &mut Criterion) {
    let scale = scale();
    let cpu = Device::cpu().load(&ferrocuda::KERNELS).unwrap();
    let gpu = match Device::cuda(0) {
        // An interpreter's speed says nothing about a GPU's (docs/emulator.md).
        Ok(gpu) if gpu.properties().is_emulator() => {
            eprintln!("workloads/gpu: skipped: {gpu} is the PTX emulator, no GPU to time");
            None
        }
        Ok(gpu) => Some(gpu.load(&ferrocuda::KERNELS).unwrap()),
        Err(error) => {
            eprintln!("workloads/gpu: skipped: {error}");
            None
        }
    };
    for recipe in workloads::all(scale) {
        let mut workload = recipe.build();
        let mut group = c.benchmark_group(format!("{} {}", recipe.name(), workload.size()));
        group.throughput(Throughput::Bytes(workload.work().bytes));
        if scale == Scale::Full {
            group
                .sample_size(10)
                .measurement_time(Duration::from_secs(5));
        }
        workload.run_loop();
        workload.check_loop().unwrap();
        group.bench_function("plain loop (1 thread)", |bench| {
            bench.iter(|| workload.run_loop())
        });
        workload.run_rayon();
        workload.check_loop().unwrap();
        group.bench_function("rayon (all cores)", |bench| {
            bench.iter(|| workload.run_rayon())
        });
        let named = (recipe.name(), workload.as_ref());
        bench_on_device(&mut group, "executor (all cores)", named, &cpu);
        if let Some(gpu) = &gpu {
            bench_on_device(&mut group, "gpu", named, gpu);
        }
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
