//! Benchmark your own kernel with criterion, the way docs/benchmarking.md describes: here
//! `saxpy` (`y = a·x + y`) stands for your kernel; with your own kernels crate, load its PTX
//! instead of `ferrocuda::KERNELS` (docs/kernels.md, "Kernel crates and the apps that launch them").
//!
//! 1. The result is checked against a reference on every device before anything is timed.
//! 2. The CPU executor is timed by criterion's wall clock (its launches run on this thread).
//! 3. On a GPU, the kernel is timed by CUDA events on the launch stream (`bench::GpuTime`).
//! 4. On the PTX emulator (no GPU), nothing is timed: the emulator's counters and the *estimated*
//!    time on an H200 are printed instead.
//!
//! `cargo run --release --features criterion --example bench_own_kernel -- --bench` measures
//! (criterion's other arguments work too); without `--bench`, or with `--test`, criterion runs
//! each benchmark once, and the example at a tiny size, as `make test` does.

use criterion::Criterion;
use ferrocuda::bench::{self, EmulatorProfile, GpuTime};
use ferrocuda::kernels::saxpy;
use ferrocuda::{launch, Device, Module};
use std::hint::black_box;

/// Your reference: `a·x + y` rounded once, as the kernel's fused multiply-add.
fn reference(a: f32, x: &[f32], y: &[f32]) -> Vec<f32> {
    x.iter().zip(y).map(|(&x, &y)| a.mul_add(x, y)).collect()
}

/// One launch of `saxpy` on `device` into a fresh copy of `y`, read back: what is checked.
fn run_once(kernels: &Module, a: f32, x: &[f32], y: &[f32]) -> ferrocuda::Result<Vec<f32>> {
    let mut out = y.to_vec();
    let blocks = (x.len() as u32).div_ceil(256);
    launch!(kernels, saxpy[blocks, 256](a, x, &mut out))?;
    Ok(out)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // First, before any launch: on the emulator, count each launch.
    let mut emulator = EmulatorProfile::start()?;
    // Criterion measures with `--bench` (as `cargo bench` passes it); otherwise, or with
    // `--test`, it runs each benchmark once: then a tiny size will do.
    let flag = |f: &str| std::env::args().any(|a| a == f);
    let n: usize = if flag("--bench") && !flag("--test") {
        1 << 22
    } else {
        4096
    };
    let a = 2.5f32;
    let x: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.001).collect();
    let y: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let want = reference(a, &x, &y);
    // Per element: x and y read, y written (4 bytes each); one fused multiply-add (2 flops).
    let throughput = bench::throughput(12 * n as u64, 2 * n as u64);
    let blocks = (n as u32).div_ceil(256);

    // The CPU executor, timed by criterion's wall clock.
    let cpu = Device::cpu();
    let cpu_kernels = cpu.load(&ferrocuda::KERNELS)?;
    bench::check(
        "saxpy on the CPU executor",
        &run_once(&cpu_kernels, a, &x, &y)?,
        &want,
        0.0,
    )?;
    let mut criterion = Criterion::default().configure_from_args();
    let mut group = criterion.benchmark_group(format!("saxpy/{n}"));
    group.throughput(throughput.clone());
    let (cx, mut cy) = (cpu.upload(&x)?, cpu.upload(&y)?);
    group.bench_function("cpu executor", |b| {
        b.iter(|| launch!(cpu_kernels, saxpy[blocks, 256](black_box(a), &cx, &mut cy)).unwrap())
    });
    group.finish();

    let gpu = Device::best().device;
    if !gpu.is_gpu() {
        println!(
            "no GPU and no emulator: only the CPU executor was benchmarked (build the emulator, \
             `cargo build -p ferrocuda-ptx-emu-driver`, and set FERROCUDA_LIBCUDA to see its \
             profile and estimate)"
        );
        return Ok(());
    }
    let kernels = gpu.load(&ferrocuda::KERNELS)?;
    let what = format!("saxpy on {gpu}");
    bench::check(&what, &run_once(&kernels, a, &x, &y)?, &want, 0.0)?;
    if gpu.properties().is_emulator() {
        // The check's launch was counted: its profile, and an estimate, not a time.
        println!("{gpu} is the PTX emulator: not timed; its counters and an *estimate* instead");
        print!(
            "{}",
            emulator.report("saxpy", "h200", ferrocuda::KERNELS_PTXAS_REPORT)?
        );
        return Ok(());
    }
    // A GPU: CUDA events on the stream the launches go to.
    let timer = GpuTime::new(&gpu)?;
    let (gx, mut gy) = (gpu.upload(&x)?, gpu.upload(&y)?);
    let stream = timer.stream().clone();
    let mut criterion = Criterion::default()
        .with_measurement(timer)
        .configure_from_args();
    let mut group = criterion.benchmark_group(format!("saxpy/{n}"));
    group.throughput(throughput);
    group.bench_function("gpu (CUDA events)", |b| {
        b.iter(|| launch!(kernels, saxpy[blocks, 256, stream](black_box(a), &gx, &mut gy)).unwrap())
    });
    group.finish();
    Ok(())
}
