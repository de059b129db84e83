//! The f16 tensor-core matrix product (`ops::matmul_tensor`, the main job's row "matrix product,
//! f16 tensor cores") against its ceiling, cuBLAS through cudarc (loaded at run time, like the
//! driver): `cublasGemmEx` with f16 A and B, f32 C and f32 compute, the same operation as ours
//! (cublasHgemm would write f16). At 4096² it prints our time, cuBLAS's and our share of cuBLAS's
//! rate; the goal on an H200 is ≥ 70 %. Both results are checked against each other first.
//!
//! `cargo bench --bench matmul_tensor` (the device bundle runs it); with no GPU, or on the PTX
//! emulator, it says so and skips. Under `cargo test` (no `--bench`) it runs at 256².

use cudarc::cublas::sys::{cublasComputeType_t, cublasGemmAlgo_t, cublasOperation_t, cudaDataType};
use cudarc::cublas::{result::gemm_ex, CudaBlas};
use cudarc::driver::{CudaContext, CudaSlice, DevicePtr, DevicePtrMut};
use ferrocuda::ops::{self, MatmulShape};
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

    // cuBLAS is column-major: row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ, so pass B first.
    // f16 travels as its bits (u16): the same bytes.
    let context = CudaContext::new(0).unwrap();
    let stream = context.default_stream();
    let blas = CudaBlas::new(stream.clone()).unwrap();
    let bits = |m: &[f16]| m.iter().map(|x| x.to_bits()).collect::<Vec<u16>>();
    let (a_blas, b_blas) = (
        stream.clone_htod(&bits(&a)).unwrap(),
        stream.clone_htod(&bits(&b)).unwrap(),
    );
    let mut c_blas = stream.alloc_zeros::<f32>(n * n).unwrap();
    let size = n as i32;
    let (alpha, beta) = (1.0f32, 0.0f32);
    let gemm = |c_blas: &mut CudaSlice<f32>| {
        let (a_ptr, _a_sync) = a_blas.device_ptr(&stream);
        let (b_ptr, _b_sync) = b_blas.device_ptr(&stream);
        let (c_ptr, _c_sync) = c_blas.device_ptr_mut(&stream);
        // SAFETY: A and B hold n·n f16 and C n·n f32 on this stream's device, as the types and
        // leading dimensions say; alpha and beta are f32, as CUBLAS_COMPUTE_32F reads them.
        unsafe {
            gemm_ex(
                *blas.handle(),
                cublasOperation_t::CUBLAS_OP_N,
                cublasOperation_t::CUBLAS_OP_N,
                size,
                size,
                size,
                (&alpha as *const f32).cast(),
                b_ptr as *const _,
                cudaDataType::CUDA_R_16F,
                size,
                a_ptr as *const _,
                cudaDataType::CUDA_R_16F,
                size,
                (&beta as *const f32).cast(),
                c_ptr as *mut _,
                cudaDataType::CUDA_R_32F,
                size,
                cublasComputeType_t::CUBLAS_COMPUTE_32F,
                cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
            )
        }
        .unwrap();
    };
    gemm(&mut c_blas);
    let reference = stream.clone_dtoh(&c_blas).unwrap();
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
    let blas_seconds = median_seconds(|| {
        stream.synchronize().unwrap();
        let start = Instant::now();
        gemm(&mut c_blas);
        stream.synchronize().unwrap();
        start.elapsed()
    });
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
