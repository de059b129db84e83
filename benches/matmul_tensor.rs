//! The f16 tensor-core matrix product (`ops::matmul_tensor`, the main job's row "matrix product,
//! f16 tensor cores") against its ceiling, cuBLAS (`workloads::cublas`, loaded at run time, like the
//! driver): `cublasGemmEx` with f16 A and B, f32 C and f32 compute, the same operation as ours
//! (cublasHgemm would write f16). At 4096² it prints our time, cuBLAS's and our share of cuBLAS's
//! rate; the goal on an H200 is ≥ 70 %. Both results are checked against each other first.
//!
//! `cargo bench --bench matmul_tensor` (the device bundle runs it); with no GPU, or on the PTX
//! emulator, it says so and skips. Under `cargo test` (no `--bench`) it runs at 256².

use ferrocuda::ops::{self, MatmulShape};
use ferrocuda::workloads::cublas::Cublas;
use ferrocuda::{f16, Device, Module};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::time::{Duration, Instant};

/// Median seconds of `run` over repeats filling about a second (at least 5).
fn median_seconds(mut run: impl FnMut() -> Duration) -> f64 {
    let mut times = Vec::new();
    let start = Instant::now();
    while times.len() < 5 || (start.elapsed() < Duration::from_secs(1) && times.len() < 200) {
        times.push(run().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn compare(tensor_kernels: &Module, n: usize) {
    let device = tensor_kernels.device();
    let mut rng = StdRng::seed_from_u64(n as u64);
    let mut matrix = || -> Vec<f16> {
        (0..n * n)
            .map(|_| f16::from_f32(rng.random_range(-1.0f32..1.0)))
            .collect()
    };
    let (a, b) = (matrix(), matrix());
    let shape = MatmulShape::new(n, n, n);
    let (a_dev, b_dev) = (device.upload(&a).unwrap(), device.upload(&b).unwrap());
    let mut c_dev = device.alloc_zeroed::<f32>(n * n).unwrap();
    ops::matmul_tensor(tensor_kernels, &a_dev, &b_dev, &mut c_dev, shape).unwrap();
    let ours = c_dev.to_vec().unwrap();
    let ours_seconds = median_seconds(|| {
        device
            .time(|| ops::matmul_tensor(tensor_kernels, &a_dev, &b_dev, &mut c_dev, shape))
            .unwrap()
            .1
    });

    let cublas = match Cublas::new(device) {
        Ok(cublas) => cublas,
        Err(why) => return eprintln!("matmul_tensor: no cuBLAS: {why}"),
    };
    let mut gemm = cublas.product(&a, &b, shape).unwrap();
    gemm.run().unwrap();
    let reference = gemm.result().unwrap();
    // Both sum the same exact products in f32, in different orders: each within k·2⁻²⁴·Σ|ab|
    // (≤ k·2⁻²⁴·k for inputs in [-1, 1)) of the exact sum, so within twice that of each other.
    let bound = 2.0 * (n * n) as f32 * 2f32.powi(-24);
    let worst = ours
        .iter()
        .zip(&reference)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0f32, f32::max);
    assert!(
        worst <= bound,
        "ours and cuBLAS differ by {worst} > {bound}"
    );
    let blas_seconds = median_seconds(|| gemm.time().unwrap());
    let tflops = |s: f64| 2.0 * (n as f64).powi(3) / s / 1e12;
    println!(
        "matmul_tensor {n}²: ours {:.3} ms ({:.1} TFLOP/s), cuBLAS GemmEx f16→f32 {:.3} ms \
         ({:.1} TFLOP/s): ours/cuBLAS = {:.0} % (goal ≥ 70 %)",
        ours_seconds * 1e3,
        tflops(ours_seconds),
        blas_seconds * 1e3,
        tflops(blas_seconds),
        100.0 * blas_seconds / ours_seconds
    );
}

fn main() {
    let real = std::env::args().any(|a| a == "--bench");
    match Device::cuda(0) {
        Ok(device) if device.properties().is_emulator() => {
            eprintln!("matmul_tensor: skipped: {device} is the PTX emulator, no GPU to time")
        }
        Ok(device) => match device.load(&ferrocuda::TENSOR_KERNELS) {
            Ok(tensor_kernels) => {
                let sizes: &[usize] = if real { &[1024, 4096] } else { &[256] };
                for &n in sizes {
                    compare(&tensor_kernels, n);
                }
            }
            Err(error) => eprintln!("matmul_tensor: skipped: {error}"),
        },
        Err(error) => eprintln!("matmul_tensor: skipped: {error}"),
    }
}
