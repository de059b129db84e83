//! The matrix product against the ceilings: on the CPU the `matrixmultiply` crate's SGEMM (one
//! thread) beside our plain loop, and on a GPU cuBLAS SGEMM (`workloads::cublas`) beside each of our
//! three kernels, at 1024² and 4096². The target: the register-blocked kernel at ≥ 50 %
//! of cuBLAS at 4096². Throughput is in floating-point operations (2·m·n·k).
//!
//! `cargo bench --bench matmul` (`-- --quick`: 512² on the CPU, 1024² on the GPU); under
//! `cargo test` every routine runs once at a small size.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ferrocuda::ops::{self, Matmul, MatmulShape};
use ferrocuda::workloads::cublas::Cublas;
use ferrocuda::{Device, Module};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::hint::black_box;
use std::time::Duration;

/// Whether criterion runs for real (`--bench`), and with `--quick`.
fn mode() -> (bool, bool) {
    let args: Vec<String> = std::env::args().collect();
    (
        args.iter().any(|a| a == "--bench"),
        args.iter().any(|a| a == "--quick"),
    )
}

fn random_matrix(rng: &mut StdRng, len: usize) -> Vec<f32> {
    (0..len).map(|_| rng.random_range(-1.0f32..1.0)).collect()
}

/// `C = A·B` (row-major n×n) with `matrixmultiply::sgemm`.
fn sgemm_cpu(a: &[f32], b: &[f32], c: &mut [f32], n: usize) {
    let s = n as isize;
    // SAFETY: a, b and c hold n·n elements each, laid out row-major (row stride n, column 1).
    unsafe {
        matrixmultiply::sgemm(
            n,
            n,
            n,
            1.0,
            a.as_ptr(),
            s,
            1,
            b.as_ptr(),
            s,
            1,
            0.0,
            c.as_mut_ptr(),
            s,
            1,
        )
    }
}

fn cpu(c: &mut Criterion, n: usize) {
    let mut rng = StdRng::seed_from_u64(n as u64);
    let (a, b) = (
        random_matrix(&mut rng, n * n),
        random_matrix(&mut rng, n * n),
    );
    let mut out = vec![0.0f32; n * n];
    let mut group = c.benchmark_group(format!("matmul {n}² CPU"));
    group.throughput(Throughput::Elements(2 * (n * n * n) as u64));
    group.sample_size(10);
    group.bench_function("matrixmultiply sgemm (1 thread)", |bench| {
        bench.iter(|| sgemm_cpu(black_box(&a), black_box(&b), &mut out, n))
    });
    group.finish();
}

/// Our three kernels and cuBLAS on GPU 0, data already on the device.
fn gpu(c: &mut Criterion, kernels: &Module, n: usize) {
    let device = kernels.device();
    let mut rng = StdRng::seed_from_u64(n as u64);
    let (a, b) = (
        random_matrix(&mut rng, n * n),
        random_matrix(&mut rng, n * n),
    );
    let mut group = c.benchmark_group(format!("matmul {n}² GPU"));
    group.throughput(Throughput::Elements(2 * (n * n * n) as u64));
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(3));

    let (a_dev, b_dev) = (device.upload(&a).unwrap(), device.upload(&b).unwrap());
    let mut c_dev = device.alloc_zeroed::<f32>(n * n).unwrap();
    let shape = MatmulShape::new(n, n, n);
    for (name, kernel) in [
        ("ferrocuda register-blocked", Matmul::RegisterBlocked),
        ("ferrocuda tiled", Matmul::Tiled),
        ("ferrocuda naive", Matmul::Naive),
    ] {
        ops::matmul(kernels, &a_dev, &b_dev, &mut c_dev, shape, kernel).unwrap();
        group.bench_function(name, |bench| {
            bench.iter_custom(|iterations| {
                let ((), elapsed) = device
                    .time(|| {
                        for _ in 0..iterations {
                            ops::matmul(kernels, &a_dev, &b_dev, &mut c_dev, shape, kernel)?;
                        }
                        Ok(())
                    })
                    .unwrap();
                elapsed
            })
        });
    }
    let ours = c_dev.to_vec().unwrap();

    let cublas = match Cublas::new(device) {
        Ok(cublas) => cublas,
        Err(why) => {
            eprintln!("matmul/gpu: no cuBLAS: {why}");
            group.finish();
            return;
        }
    };
    let mut sgemm = cublas.product(&a, &b, shape).unwrap();
    sgemm.run().unwrap();
    let reference = sgemm.result().unwrap();
    // Both products of the same data agree to f32 rounding (different summation orders).
    let worst = ours
        .iter()
        .zip(&reference)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0f32, f32::max);
    assert!(
        worst <= 1e-3 * n as f32 / 1024.0 + 1e-4,
        "ours and cuBLAS differ by {worst}"
    );
    group.bench_function("cuBLAS sgemm", |bench| {
        bench.iter_custom(|iterations| (0..iterations).map(|_| sgemm.time().unwrap()).sum())
    });
    group.finish();
}

fn bench(c: &mut Criterion) {
    let (real, quick) = mode();
    cpu(
        c,
        match (real, quick) {
            (false, _) => 64,
            (true, true) => 512,
            (true, false) => 1024,
        },
    );
    match Device::cuda(0) {
        // An interpreter's speed says nothing about a GPU's, and it has no cuBLAS.
        Ok(device) if device.properties().is_emulator() => {
            eprintln!("matmul/gpu: skipped: {device} is the PTX emulator, no GPU to time")
        }
        Ok(device) => {
            let kernels = device.load(&ferrocuda::KERNELS).unwrap();
            let sizes: &[usize] = match (real, quick) {
                (false, _) => &[256],
                (true, true) => &[1024],
                (true, false) => &[1024, 4096],
            };
            for &n in sizes {
                gpu(c, &kernels, n);
            }
        }
        Err(error) => eprintln!("matmul/gpu: skipped: {error}"),
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
