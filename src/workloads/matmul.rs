//! `C = A·B` of f32 matrices: the seed's 1024×1024 matrix product.

use super::cublas::{Cublas, CublasProduct, Gemm};
use super::inputs::{inputs_rng, uniform, Verdict};
use super::workload::{DeviceRun, Scale, Work, Workload};
use crate::ops::{self, Matmul as Kernel, MatmulShape};
use crate::{DeviceBuffer, Module, Result};
use rayon::prelude::*;

/// Entries of C checked against an f64 dot product: all of them for small matrices, an evenly
/// spread sample of large ones (each is an independent dot product, so a sample catches wrong
/// tiles, rows or columns without an O(n³) f64 reference).
const CHECKED_ENTRIES: usize = 4096;

pub(super) struct Matmul {
    kernel: Kernel,
    m: usize,
    n: usize,
    k: usize,
    a: Vec<f32>,
    b: Vec<f32>,
    c: Vec<f32>,
}

impl Matmul {
    pub(super) fn new(scale: Scale, kernel: Kernel) -> Self {
        let (m, n, k) = scale.pick((1024, 1024, 1024), (512, 512, 512), (67, 131, 29));
        let mut rng = inputs_rng("matrix product");
        Matmul {
            kernel,
            m,
            n,
            k,
            a: uniform(&mut rng, m * k, -1.0..1.0),
            b: uniform(&mut rng, k * n, -1.0..1.0),
            c: vec![0.0; m * n],
        }
    }

    fn check(&self, c: &[f32]) -> Verdict {
        let (a, b) = (&self.a, &self.b);
        check_sampled(
            c,
            (self.m, self.n, self.k),
            |i| a[i] as f64,
            |i| b[i] as f64,
        )
    }
}

/// Checks `c` (`m × n`) against f64 dot products of A's and B's elements (`a(i)`, `b(i)`, row-major
/// `m × k` and `k × n`): all of its entries for small matrices, [`CHECKED_ENTRIES`] evenly spread
/// ones of large matrices. A `k`-term f32 sum (in any order, fused or not) is within
/// `k·ε·Σ|terms|` of the exact one, which is the tolerance.
pub(super) fn check_sampled(
    c: &[f32],
    (m, n, k): (usize, usize, usize),
    a: impl Fn(usize) -> f64,
    b: impl Fn(usize) -> f64,
) -> Verdict {
    if c.len() != m * n {
        return Err(format!("{} elements, expected {}", c.len(), m * n));
    }
    let entries = m * n;
    let step = (entries / CHECKED_ENTRIES).max(1);
    for index in (0..entries).step_by(step) {
        let (row, col) = (index / n, index % n);
        let (mut exact, mut magnitude) = (0.0f64, 0.0f64);
        for p in 0..k {
            let term = a(row * k + p) * b(p * n + col);
            exact += term;
            magnitude += term.abs();
        }
        let tolerance = k as f64 * f32::EPSILON as f64 * magnitude;
        let got = c[index] as f64;
        if !super::inputs::within(got, exact, tolerance) {
            return Err(format!(
                "C[{row}][{col}] is {got}, expected {exact} (± {tolerance:.3e})"
            ));
        }
    }
    Ok(())
}

/// `c = a·b` (`c` `m × n`, `a` `m × k`, row-major), row by row, the rows on all cores (rayon)
/// with `parallel`, else one after another.
pub(super) fn product(a: &[f32], b: &[f32], c: &mut [f32], (n, k): (usize, usize), parallel: bool) {
    if parallel {
        c.par_chunks_mut(n)
            .enumerate()
            .for_each(|(row, c_row)| product_row(a, b, c_row, row, n, k));
    } else {
        for (row, c_row) in c.chunks_mut(n).enumerate() {
            product_row(a, b, c_row, row, n, k);
        }
    }
}

/// Row `row` of C, in the i-k-j order that reads B row by row (what vectorises).
fn product_row(a: &[f32], b: &[f32], c_row: &mut [f32], row: usize, n: usize, k: usize) {
    c_row.fill(0.0);
    for p in 0..k {
        let a_value = a[row * k + p];
        for (c, &b_value) in c_row.iter_mut().zip(&b[p * n..(p + 1) * n]) {
            *c += a_value * b_value;
        }
    }
}

impl Workload for Matmul {
    fn size(&self) -> String {
        format!("{}×{}×{}", self.m, self.n, self.k)
    }
    fn work(&self) -> Work {
        let (m, n, k) = (self.m as u64, self.n as u64, self.k as u64);
        Work {
            bytes: 4 * (m * k + k * n + m * n),
            flops: 2 * m * n * k,
        }
    }
    fn run_loop(&mut self) {
        product(&self.a, &self.b, &mut self.c, (self.n, self.k), false);
    }
    fn run_rayon(&mut self) {
        product(&self.a, &self.b, &mut self.c, (self.n, self.k), true);
    }
    fn check_loop(&self) -> Verdict {
        self.check(&self.c)
    }
    fn kernels(&self) -> &'static [&'static str] {
        match self.kernel {
            Kernel::Naive => &["matmul_naive"],
            Kernel::Tiled => &["matmul_tiled"],
            Kernel::RegisterBlocked => &["matmul_blocked"],
        }
    }
    fn on_device<'a>(&'a self, kernels: &'a Module) -> Result<Box<dyn DeviceRun + 'a>> {
        let device = kernels.device();
        Ok(Box::new(OnDevice {
            workload: self,
            kernels,
            a: device.upload(&self.a)?,
            b: device.upload(&self.b)?,
            c: device.alloc_zeroed(self.m * self.n)?,
        }))
    }
    fn gemm(&self) -> Option<&dyn Gemm> {
        Some(self)
    }
}

/// cuBLAS's SGEMM (GemmEx on f32) of the same inputs.
impl Gemm for Matmul {
    fn product<'a>(&self, cublas: &'a Cublas) -> std::result::Result<CublasProduct<'a>, String> {
        cublas.product(&self.a, &self.b, MatmulShape::new(self.m, self.n, self.k))
    }
    fn check(&self, c: &[f32]) -> Verdict {
        Matmul::check(self, c)
    }
}

struct OnDevice<'a> {
    workload: &'a Matmul,
    kernels: &'a Module,
    a: DeviceBuffer<f32>,
    b: DeviceBuffer<f32>,
    c: DeviceBuffer<f32>,
}

impl DeviceRun for OnDevice<'_> {
    fn run(&mut self) -> Result<()> {
        let w = self.workload;
        let shape = MatmulShape::new(w.m, w.n, w.k);
        ops::matmul(self.kernels, &self.a, &self.b, &mut self.c, shape, w.kernel)
    }
    fn check(&mut self) -> Result<Verdict> {
        Ok(self.workload.check(&self.c.to_vec()?))
    }
}
