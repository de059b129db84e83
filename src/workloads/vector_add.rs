//! `out = a + b`: the seed's first example, purely memory-bound.

use super::inputs::{check_close, inputs_rng, uniform, Verdict};
use super::workload::{DeviceRun, Scale, Work, Workload};
use crate::kernels::vector_add;
use crate::{DeviceBuffer, Module, Result};
use rayon::prelude::*;

pub(super) struct VectorAdd {
    a: Vec<f32>,
    b: Vec<f32>,
    out: Vec<f32>,
}

impl VectorAdd {
    pub(super) fn new(scale: Scale) -> Self {
        let n = scale.pick(1 << 24, 1 << 20, 4099);
        let mut rng = inputs_rng("vector add");
        VectorAdd {
            a: uniform(&mut rng, n, -1.0..1.0),
            b: uniform(&mut rng, n, -1.0..1.0),
            out: vec![0.0; n],
        }
    }

    fn check(&self, out: &[f32]) -> Verdict {
        // One rounding of an exact sum: the f32 sum is exact to half an ulp.
        check_close(
            out,
            self.a.len(),
            |i| self.a[i] as f64 + self.b[i] as f64,
            |i| (self.a[i] as f64 + self.b[i] as f64).abs() * f32::EPSILON as f64 / 2.0,
        )
    }
}

impl Workload for VectorAdd {
    fn size(&self) -> String {
        format!("{} f32", self.a.len())
    }
    fn work(&self) -> Work {
        let n = self.a.len() as u64;
        Work {
            bytes: 12 * n,
            flops: n,
        }
    }
    fn run_loop(&mut self) {
        for ((o, x), y) in self.out.iter_mut().zip(&self.a).zip(&self.b) {
            *o = x + y;
        }
    }
    fn run_rayon(&mut self) {
        self.out
            .par_iter_mut()
            .zip(self.a.par_iter())
            .zip(self.b.par_iter())
            .for_each(|((o, x), y)| *o = x + y);
    }
    fn check_loop(&self) -> Verdict {
        self.check(&self.out)
    }
    fn kernels(&self) -> &'static [&'static str] {
        &["vector_add"]
    }

    fn on_device<'a>(&'a self, kernels: &'a Module) -> Result<Box<dyn DeviceRun + 'a>> {
        let device = kernels.device();
        Ok(Box::new(OnDevice {
            workload: self,
            kernels,
            a: device.upload(&self.a)?,
            b: device.upload(&self.b)?,
            out: device.alloc_zeroed(self.a.len())?,
        }))
    }
}

struct OnDevice<'a> {
    workload: &'a VectorAdd,
    kernels: &'a Module,
    a: DeviceBuffer<f32>,
    b: DeviceBuffer<f32>,
    out: DeviceBuffer<f32>,
}

impl DeviceRun for OnDevice<'_> {
    fn run(&mut self) -> Result<()> {
        let config = self.kernels.config_for(&vector_add, self.a.len())?;
        self.kernels
            .launch(&vector_add, config, (&self.a, &self.b, &mut self.out))
    }
    fn check(&mut self) -> Result<Verdict> {
        Ok(self.workload.check(&self.out.to_vec()?))
    }
}
