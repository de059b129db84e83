//! Count, sum, mean, variance, min and max of ten million values: the statistics use.

use super::inputs::{check_scalar, inputs_rng, uniform, Verdict};
use super::workload::{DeviceRun, Scale, Work, Workload};
use crate::{ops, DeviceBuffer, Module, Result};
use rayon::prelude::*;

/// What every implementation computes.
#[derive(Clone, Copy, Debug, Default)]
struct Moments {
    sum: f64,
    mean: f64,
    variance: f64,
    min: f32,
    max: f32,
}

pub(super) struct Statistics {
    x: Vec<f32>,
    reference: Moments,
    result: Moments,
}

/// The sound textbook way, in two passes over the data with f64 sums: the mean (and min, max),
/// then the mean squared deviation.
fn two_pass(x: &[f32]) -> Moments {
    let (mut sum, mut min, mut max) = (0.0f64, f32::INFINITY, f32::NEG_INFINITY);
    for &v in x {
        sum += v as f64;
        min = min.min(v);
        max = max.max(v);
    }
    let mean = sum / x.len() as f64;
    let squares: f64 = x.iter().map(|&v| (v as f64 - mean).powi(2)).sum();
    Moments {
        sum,
        mean,
        variance: squares / x.len() as f64,
        min,
        max,
    }
}

impl Statistics {
    pub(super) fn new(scale: Scale) -> Self {
        let n = scale.pick(10_000_000, 1 << 20, 4099);
        // Far from zero, where the one-pass Σx² formula loses the variance.
        let x = uniform(&mut inputs_rng("statistics"), n, 999.0..1001.0);
        let reference = two_pass(&x);
        Statistics {
            x,
            reference,
            result: Moments::default(),
        }
    }

    fn check(&self, got: Moments) -> Verdict {
        let want = self.reference;
        // f64 sums of f32 data: relative error ~ n·2⁻⁵³ ≈ 1e-9 at n = 10⁷.
        let relative = 1e-9;
        check_scalar("the sum", got.sum, want.sum, relative * want.sum.abs())?;
        check_scalar("the mean", got.mean, want.mean, relative * want.mean.abs())?;
        check_scalar(
            "the variance",
            got.variance,
            want.variance,
            1e-6 * want.variance,
        )?;
        check_scalar("the min", got.min as f64, want.min as f64, 0.0)?;
        check_scalar("the max", got.max as f64, want.max as f64, 0.0)
    }
}

impl Workload for Statistics {
    fn size(&self) -> String {
        format!("{} f32", self.x.len())
    }
    fn work(&self) -> Work {
        Work {
            bytes: 4 * self.x.len() as u64,
            flops: 0,
        }
    }
    fn run_loop(&mut self) {
        self.result = two_pass(&self.x);
    }
    fn run_rayon(&mut self) {
        let x = &self.x;
        let sum: f64 = x.par_iter().map(|&v| v as f64).sum();
        let min = x.par_iter().copied().reduce(|| f32::INFINITY, f32::min);
        let max = x.par_iter().copied().reduce(|| f32::NEG_INFINITY, f32::max);
        let mean = sum / x.len() as f64;
        let squares: f64 = x.par_iter().map(|&v| (v as f64 - mean).powi(2)).sum();
        self.result = Moments {
            sum,
            mean,
            variance: squares / x.len() as f64,
            min,
            max,
        };
    }
    fn check_loop(&self) -> Verdict {
        self.check(self.result)
    }
    fn kernels(&self) -> &'static [&'static str] {
        &["statistics_partial", "statistics_merge"]
    }
    fn on_device<'a>(&'a self, kernels: &'a Module) -> Result<Box<dyn DeviceRun + 'a>> {
        Ok(Box::new(OnDevice {
            workload: self,
            kernels,
            x: kernels.device().upload(&self.x)?,
            result: Moments::default(),
        }))
    }
}

struct OnDevice<'a> {
    workload: &'a Statistics,
    kernels: &'a Module,
    x: DeviceBuffer<f32>,
    result: Moments,
}

impl DeviceRun for OnDevice<'_> {
    fn run(&mut self) -> Result<()> {
        let s = ops::statistics(self.kernels, &self.x)?;
        self.result = Moments {
            sum: s.sum,
            mean: s.mean,
            variance: s.variance,
            min: s.min,
            max: s.max,
        };
        Ok(())
    }
    fn check(&mut self) -> Result<Verdict> {
        Ok(self.workload.check(self.result))
    }
}
