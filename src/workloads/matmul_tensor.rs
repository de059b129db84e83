//! `C = A·B` of f16 matrices into f32 on tensor cores ([`ops::matmul_tensor`]): the main job's
//! row "matrix product, f16 tensor cores", 4096 × 4096 × 4096 at full scale.
//!
//! The CPU columns compute the same product: the single-threaded loop and the rayon version
//! multiply the f16 inputs widened to f32 (exactly) with the f32 matrix product's i-k-j loop;
//! the CPU executor runs the tensor-core kernel itself. Every result is checked against f64 dot
//! products of the f16 inputs.

use super::cublas::{Cublas, CublasProduct, Gemm};
use super::inputs::{inputs_rng, uniform, Verdict};
use super::matmul::{check_sampled, product};
use super::workload::{DeviceRun, Scale, Work, Workload};
use crate::ops::{self, MatmulShape};
use crate::{f16, DeviceBuffer, Module, Result};

pub(super) struct MatmulTensor {
    m: usize,
    n: usize,
    k: usize,
    /// The inputs, f16, as the kernel reads them.
    a: Vec<f16>,
    b: Vec<f16>,
    /// The same values in f32 (exact), for the CPU loops and the check.
    a32: Vec<f32>,
    b32: Vec<f32>,
    c: Vec<f32>,
}

impl MatmulTensor {
    pub(super) fn new(scale: Scale) -> Self {
        let (m, n, k) = scale.pick((4096, 4096, 4096), (1024, 1024, 1024), (67, 131, 29));
        let mut rng = inputs_rng("matrix product, f16 tensor cores");
        let a: Vec<f16> = uniform(&mut rng, m * k, -1.0..1.0)
            .into_iter()
            .map(f16::from_f32)
            .collect();
        let b: Vec<f16> = uniform(&mut rng, k * n, -1.0..1.0)
            .into_iter()
            .map(f16::from_f32)
            .collect();
        MatmulTensor {
            m,
            n,
            k,
            a32: a.iter().map(|x| x.to_f32()).collect(),
            b32: b.iter().map(|x| x.to_f32()).collect(),
            a,
            b,
            c: vec![0.0; m * n],
        }
    }

    fn check(&self, c: &[f32]) -> Verdict {
        let (a, b) = (&self.a32, &self.b32);
        check_sampled(
            c,
            (self.m, self.n, self.k),
            |i| a[i] as f64,
            |i| b[i] as f64,
        )
    }
}

impl Workload for MatmulTensor {
    fn size(&self) -> String {
        format!("{}×{}×{}", self.m, self.n, self.k)
    }
    fn work(&self) -> Work {
        let (m, n, k) = (self.m as u64, self.n as u64, self.k as u64);
        Work {
            bytes: 2 * (m * k + k * n) + 4 * m * n,
            flops: 2 * m * n * k,
        }
    }
    fn run_loop(&mut self) {
        product(&self.a32, &self.b32, &mut self.c, (self.n, self.k), false);
    }
    fn run_rayon(&mut self) {
        product(&self.a32, &self.b32, &mut self.c, (self.n, self.k), true);
    }
    fn check_loop(&self) -> Verdict {
        self.check(&self.c)
    }
    /// The CUDA C twin (`cuda_c/tensor_cores.cu`, sm_80 and newer).
    fn kernels(&self) -> &'static [&'static str] {
        &["matmul_tc_f16"]
    }
    /// Runs `kernels` if it has the kernel (the CUDA C module); else loads
    /// [`crate::TENSOR_KERNELS`] on its device now, only for this row: on a GPU older than
    /// sm_80 that is [`crate::Error::GpuTooOld`], this row's failure alone.
    fn on_device<'a>(&'a self, kernels: &'a Module) -> Result<Box<dyn DeviceRun + 'a>> {
        let device = kernels.device();
        let tensor_kernels = if kernels.info().entry(self.kernels()[0]).is_some() {
            TensorKernels::Given(kernels)
        } else {
            TensorKernels::Loaded(Box::new(device.load(&crate::TENSOR_KERNELS)?))
        };
        Ok(Box::new(OnDevice {
            workload: self,
            tensor_kernels,
            a: device.upload(&self.a)?,
            b: device.upload(&self.b)?,
            c: device.alloc_zeroed(self.m * self.n)?,
        }))
    }
    fn gemm(&self) -> Option<&dyn Gemm> {
        Some(self)
    }
}

/// cuBLAS's GemmEx of the same f16 inputs, accumulating and writing f32 (HGEMM's inputs,
/// our output).
impl Gemm for MatmulTensor {
    fn product<'a>(&self, cublas: &'a Cublas) -> std::result::Result<CublasProduct<'a>, String> {
        cublas.product(&self.a, &self.b, MatmulShape::new(self.m, self.n, self.k))
    }
    fn check(&self, c: &[f32]) -> Verdict {
        MatmulTensor::check(self, c)
    }
}

/// The module the row runs: the one it was given, or the library's tensor-core module.
enum TensorKernels<'a> {
    Given(&'a Module),
    Loaded(Box<Module>),
}

impl TensorKernels<'_> {
    fn module(&self) -> &Module {
        match self {
            TensorKernels::Given(module) => module,
            TensorKernels::Loaded(module) => module,
        }
    }
}

struct OnDevice<'a> {
    workload: &'a MatmulTensor,
    tensor_kernels: TensorKernels<'a>,
    a: DeviceBuffer<f16>,
    b: DeviceBuffer<f16>,
    c: DeviceBuffer<f32>,
}

impl DeviceRun for OnDevice<'_> {
    fn run(&mut self) -> Result<()> {
        let w = self.workload;
        let shape = MatmulShape::new(w.m, w.n, w.k);
        ops::matmul_tensor(
            self.tensor_kernels.module(),
            &self.a,
            &self.b,
            &mut self.c,
            shape,
        )
    }
    fn check(&mut self) -> Result<Verdict> {
        Ok(self.workload.check(&self.c.to_vec()?))
    }
}
