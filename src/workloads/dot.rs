//! `Σ a[i]·b[i]` over a million elements: the seed's dot product.

use super::inputs::{check_scalar, inputs_rng, uniform, Verdict};
use super::workload::{DeviceRun, Scale, Work, Workload};
use crate::{ops, DeviceBuffer, Module, Result};
use rayon::prelude::*;

pub(super) struct Dot {
    a: Vec<f32>,
    b: Vec<f32>,
    /// Σ a·b in f64, and Σ |a·b|: the reference and the scale of rounding errors.
    exact: f64,
    magnitude: f64,
    result: f32,
}

impl Dot {
    pub(super) fn new(scale: Scale) -> Self {
        let n = scale.pick(1 << 20, 1 << 20, 4099);
        let mut rng = inputs_rng("dot product");
        let a = uniform(&mut rng, n, -1.0..1.0);
        let b = uniform(&mut rng, n, -1.0..1.0);
        let products = a.iter().zip(&b).map(|(&x, &y)| x as f64 * y as f64);
        let exact = products.clone().sum();
        let magnitude = products.map(f64::abs).sum();
        Dot {
            a,
            b,
            exact,
            magnitude,
            result: f32::NAN,
        }
    }

    fn check(&self, got: f32) -> Verdict {
        // f32 sums of n terms: error ≤ n·ε·Σ|terms| in the worst case, far less in practice;
        // 1e-4 of the magnitude catches a lost or doubled block of terms.
        check_scalar(
            "the dot product",
            got as f64,
            self.exact,
            1e-4 * self.magnitude,
        )
    }
}

impl Workload for Dot {
    fn size(&self) -> String {
        format!("{} f32", self.a.len())
    }
    fn work(&self) -> Work {
        let n = self.a.len() as u64;
        Work {
            bytes: 8 * n,
            flops: 2 * n,
        }
    }
    fn run_loop(&mut self) {
        self.result = self.a.iter().zip(&self.b).map(|(x, y)| x * y).sum();
    }
    fn run_rayon(&mut self) {
        self.result = self
            .a
            .par_iter()
            .zip(self.b.par_iter())
            .map(|(x, y)| x * y)
            .sum();
    }
    fn check_loop(&self) -> Verdict {
        self.check(self.result)
    }
    fn kernels(&self) -> &'static [&'static str] {
        &["dot_partial", "sum_partial"]
    }

    fn on_device<'a>(&'a self, kernels: &'a Module) -> Result<Box<dyn DeviceRun + 'a>> {
        let device = kernels.device();
        Ok(Box::new(OnDevice {
            workload: self,
            kernels,
            a: device.upload(&self.a)?,
            b: device.upload(&self.b)?,
            result: f32::NAN,
        }))
    }
}

struct OnDevice<'a> {
    workload: &'a Dot,
    kernels: &'a Module,
    a: DeviceBuffer<f32>,
    b: DeviceBuffer<f32>,
    result: f32,
}

impl DeviceRun for OnDevice<'_> {
    fn run(&mut self) -> Result<()> {
        self.result = ops::dot(self.kernels, &self.a, &self.b)?;
        Ok(())
    }
    fn check(&mut self) -> Result<Verdict> {
        Ok(self.workload.check(self.result))
    }
}
