//! cuBLAS, NVIDIA's matrix product, as the ceiling the main job's matrix rows are measured
//! against (and the criterion benches `matmul` and `matmul_tensor`).
//!
//! One call does both rows' products: `cublasGemmEx` with f32 accumulation and an f32 C, fed
//! f32 inputs (what `cublasSgemm` does) for "matrix product", and f16 inputs for "matrix
//! product, f16 tensor cores" (the operation [`crate::ops::matmul_tensor`] does;
//! `cublasHgemm` would write f16). cuBLAS is loaded at run time through cudarc, like the
//! driver, so nothing needs it to build; it runs in the device's own context, on its default
//! stream, where [`Device::time`] records its events, so it is timed exactly as our kernels
//! are.
//!
//! ```no_run
//! use ferrocuda::workloads::cublas::Cublas;
//! use ferrocuda::{ops::MatmulShape, Device};
//!
//! let device = Device::cuda(0)?;
//! let cublas = Cublas::new(&device).map_err(|why| format!("no cuBLAS column: {why}"))?;
//! let (a, b) = (vec![1.0f32; 64 * 32], vec![2.0f32; 32 * 16]);
//! let mut product = cublas.product(&a, &b, MatmulShape::new(64, 16, 32))?;
//! product.run()?;
//! assert!(product.result()?.iter().all(|&c| c == 64.0));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use super::inputs::Verdict;
use crate::ops::MatmulShape;
use crate::{bf16, f16, Device};
use cudarc::cublas::result::gemm_ex;
use cudarc::cublas::sys::{cublasComputeType_t, cublasGemmAlgo_t, cublasOperation_t, cudaDataType};
use cudarc::cublas::CudaBlas;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut};
use std::sync::Arc;
use std::time::Duration;

/// A workload that is a matrix product, as cuBLAS computes it: its inputs and its check.
pub trait Gemm {
    /// Its inputs uploaded for `cublas`.
    ///
    /// # Errors
    /// As [`Cublas::product`].
    fn product<'a>(&self, cublas: &'a Cublas) -> Result<CublasProduct<'a>, String>;
    /// Checks a C against the workload's reference.
    fn check(&self, c: &[f32]) -> Verdict;
}

/// A cuBLAS handle on a GPU device's context and default stream.
pub struct Cublas {
    device: Device,
    stream: Arc<CudaStream>,
    blas: CudaBlas,
}

impl Cublas {
    /// cuBLAS on `device`, or why there is none: the CPU executor; the PTX emulator (cuBLAS's
    /// kernels are machine code for real GPUs, and it loads the system's `libcuda.so.1`, not
    /// the emulator); no `libcublas` on the library path; or cuBLAS's own error.
    pub fn new(device: &Device) -> Result<Cublas, String> {
        let Some(context) = device.cudarc_context() else {
            return Err("the CPU executor has no cuBLAS".into());
        };
        if device.properties().is_emulator() {
            return Err("the PTX emulator has no cuBLAS (its kernels are machine code)".into());
        }
        // SAFETY: this only tries to open the library by its names (`dlopen`) and reports
        // whether it could; cudarc would panic at the first call instead.
        if !unsafe { cudarc::cublas::sys::is_culib_present() } {
            return Err("libcublas was not found on the library path".into());
        }
        let stream = context.default_stream();
        let blas = CudaBlas::new(stream.clone()).map_err(|e| format!("cublasCreate: {e}"))?;
        Ok(Cublas {
            device: device.clone(),
            stream,
            blas,
        })
    }

    /// The device cuBLAS runs on: time its products with [`Device::time`].
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// `a` (`m × k`) and `b` (`k × n`), row-major, uploaded for repeated products `C = A·B`
    /// into an f32 `m × n` C.
    ///
    /// # Errors
    /// Lengths that do not match `shape`, dimensions past `i32`, or the upload's error.
    pub fn product<T: GemmInput>(
        &self,
        a: &[T],
        b: &[T],
        shape: MatmulShape,
    ) -> Result<CublasProduct<'_>, String> {
        let MatmulShape { m, n, k } = shape;
        if a.len() != m * k || b.len() != k * n {
            return Err(format!(
                "A has {} elements and B {}, but {m}×{k} times {k}×{n} needs {} and {}",
                a.len(),
                b.len(),
                m * k,
                k * n
            ));
        }
        let dims = [m, n, k].map(i32::try_from);
        let [Ok(m32), Ok(n32), Ok(k32)] = dims else {
            return Err(format!("{m}×{n}×{k} has a dimension past cuBLAS's i32"));
        };
        let upload = |x: &[T]| {
            self.stream
                .clone_htod(bytemuck::cast_slice::<T, u8>(x))
                .map_err(|e| format!("cuMemcpyHtoD: {e}"))
        };
        Ok(CublasProduct {
            cublas: self,
            a: upload(a)?,
            b: upload(b)?,
            c: self
                .stream
                .alloc_zeros::<f32>(m * n)
                .map_err(|e| format!("cuMemAlloc: {e}"))?,
            dims: (m32, n32, k32),
            data_type: T::DATA_TYPE,
        })
    }
}

/// An input element type of [`Cublas::product`]: its cuBLAS data type.
pub trait GemmInput: bytemuck::Pod {
    /// cuBLAS's name for it.
    const DATA_TYPE: cudaDataType;
}

impl GemmInput for f32 {
    const DATA_TYPE: cudaDataType = cudaDataType::CUDA_R_32F;
}

impl GemmInput for f16 {
    const DATA_TYPE: cudaDataType = cudaDataType::CUDA_R_16F;
}

impl GemmInput for bf16 {
    const DATA_TYPE: cudaDataType = cudaDataType::CUDA_R_16BF;
}

/// A and B on the device, and C: [`CublasProduct::run`] computes `C = A·B`.
pub struct CublasProduct<'a> {
    cublas: &'a Cublas,
    a: CudaSlice<u8>,
    b: CudaSlice<u8>,
    c: CudaSlice<f32>,
    dims: (i32, i32, i32),
    data_type: cudaDataType,
}

impl CublasProduct<'_> {
    /// Queues `C = A·B` on the device's default stream.
    pub fn run(&mut self) -> Result<(), String> {
        let Cublas { stream, blas, .. } = self.cublas;
        let (m, n, k) = self.dims;
        let (alpha, beta) = (1.0f32, 0.0f32);
        let (a, _a_done) = self.a.device_ptr(stream);
        let (b, _b_done) = self.b.device_ptr(stream);
        let (c, _c_done) = self.c.device_ptr_mut(stream);
        // cuBLAS is column-major: row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ, so B goes first,
        // and each matrix's leading dimension is its row length.
        // SAFETY: A holds m·k and B k·n elements of `data_type` (checked by `product`), C m·n
        // f32, all on this handle's stream's context; alpha and beta are f32, as
        // CUBLAS_COMPUTE_32F reads them; the guards keep the buffers' events right.
        unsafe {
            gemm_ex(
                *blas.handle(),
                cublasOperation_t::CUBLAS_OP_N,
                cublasOperation_t::CUBLAS_OP_N,
                n,
                m,
                k,
                (&alpha as *const f32).cast(),
                b as *const _,
                self.data_type,
                n,
                a as *const _,
                self.data_type,
                k,
                (&beta as *const f32).cast(),
                c as *mut _,
                cudaDataType::CUDA_R_32F,
                n,
                cublasComputeType_t::CUBLAS_COMPUTE_32F,
                cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
            )
        }
        .map_err(|e| format!("cublasGemmEx: {e}"))
    }

    /// Runs [`CublasProduct::run`] between events on the device's default stream and returns
    /// the time between them, as [`Device::time`] does for our kernels.
    pub fn time(&mut self) -> Result<Duration, String> {
        let device = self.cublas.device.clone();
        let (ran, elapsed) = device.time(|| Ok(self.run())).map_err(|e| e.to_string())?;
        ran.map(|()| elapsed)
    }

    /// C, copied back (after the products queued so far).
    pub fn result(&self) -> Result<Vec<f32>, String> {
        self.cublas
            .stream
            .clone_dtoh(&self.c)
            .map_err(|e| format!("cuMemcpyDtoH: {e}"))
    }
}
