//! The seed's minimal Numba example, step for step, in Rust.
//!
//! Numba:
//! ```python
//! @cuda.jit
//! def gpu_add(a, b, result):
//!     idx = cuda.grid(1)
//!     if idx < a.shape[0]:
//!         result[idx] = a[idx] + b[idx]
//!
//! n = 1_000_000
//! a = np.arange(n).astype(np.float32)
//! b = np.ones(n, dtype=np.float32)
//! result = np.empty_like(a)
//! threads_per_block = 256
//! blocks_per_grid = (n + threads_per_block - 1) // threads_per_block
//! gpu_add[blocks_per_grid, threads_per_block](a, b, result)
//! ```
//!
//! The kernel is `gpu-kernels/src/lib.rs`'s `vector_add`:
//! ```ignore
//! #[kernel(same_len(a, b, out))]
//! pub fn vector_add(a: &[f32], b: &[f32], out: Out<f32>) {
//!     let i = thread::index_1d();          // cuda.grid(1)
//!     if i < out.len() {                   // if idx < a.shape[0]
//!         out.set(i, a[i] + b[i]);         // result[idx] = a[idx] + b[idx]
//!     }
//! }
//! ```
//!
//! Run with `cargo run --release --example vector_add`.

use ferrocuda::{kernels::vector_add, launch, Device};

fn main() -> ferrocuda::Result<()> {
    let device = Device::best().device;
    let kernels = device.load(&ferrocuda::KERNELS)?;

    let n = 1_000_000;
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect(); // np.arange(n)
    let b = vec![1.0f32; n]; //                             np.ones(n)
    let mut result = vec![0.0f32; n]; //                    np.empty_like(a)

    let threads_per_block = 256;
    let blocks_per_grid = (n as u32).div_ceil(threads_per_block);
    // gpu_add[blocks_per_grid, threads_per_block](a, b, result): copies a and b in, result back.
    launch!(kernels, vector_add[blocks_per_grid, threads_per_block](&a, &b, &mut result))?;

    println!(
        "on {device}: result[:3] = {:?}, result[-1] = {}",
        &result[..3],
        result[n - 1]
    );
    assert!(result.iter().enumerate().all(|(i, &r)| r == i as f32 + 1.0));
    Ok(())
}
