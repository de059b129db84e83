//! `DataFrame.groupby(key).agg(count, sum, mean, min, max)` over ten million rows.

use super::inputs::{inputs_rng, uniform, within, Verdict};
use super::workload::{DeviceRun, Scale, Work, Workload};
use crate::{ops, DeviceBuffer, Module, Result};
use rand::Rng;
use rayon::prelude::*;

/// Per-key aggregates, as every implementation computes them.
#[derive(Clone, Debug, PartialEq)]
struct Groups {
    count: Vec<u32>,
    sum: Vec<f32>,
    min: Vec<f32>,
    max: Vec<f32>,
}

impl Groups {
    fn empty(keys: usize) -> Self {
        Groups {
            count: vec![0; keys],
            sum: vec![0.0; keys],
            min: vec![f32::INFINITY; keys],
            max: vec![f32::NEG_INFINITY; keys],
        }
    }

    fn add(&mut self, key: usize, value: f32) {
        self.count[key] += 1;
        self.sum[key] += value;
        self.min[key] = self.min[key].min(value);
        self.max[key] = self.max[key].max(value);
    }

    fn merge(mut self, other: Groups) -> Groups {
        for k in 0..self.count.len() {
            self.count[k] += other.count[k];
            self.sum[k] += other.sum[k];
            self.min[k] = self.min[k].min(other.min[k]);
            self.max[k] = self.max[k].max(other.max[k]);
        }
        self
    }
}

pub(super) struct GroupBy {
    keys: Vec<u32>,
    values: Vec<f32>,
    num_keys: usize,
    /// Per key: exact count, f64 sum, Σ|v|, min, max.
    reference: (Groups, Vec<f64>, Vec<f64>),
    result: Groups,
}

impl GroupBy {
    pub(super) fn new(scale: Scale, num_keys: usize) -> Self {
        let rows = scale.pick(10_000_000, 1 << 20, 4099);
        let mut rng = inputs_rng(&format!("group-by {num_keys}"));
        let keys: Vec<u32> = (0..rows)
            .map(|_| rng.random_range(0..num_keys as u32))
            .collect();
        let values = uniform(&mut rng, rows, -100.0..100.0);
        let mut exact = Groups::empty(num_keys);
        let (mut sums, mut magnitudes) = (vec![0.0f64; num_keys], vec![0.0f64; num_keys]);
        for (&k, &v) in keys.iter().zip(&values) {
            exact.add(k as usize, v);
            sums[k as usize] += v as f64;
            magnitudes[k as usize] += v.abs() as f64;
        }
        GroupBy {
            keys,
            values,
            num_keys,
            reference: (exact, sums, magnitudes),
            result: Groups::empty(0),
        }
    }

    fn check(&self, got: &Groups) -> Verdict {
        let (exact, sums, magnitudes) = &self.reference;
        if got.count.len() != self.num_keys {
            return Err(format!(
                "{} keys, expected {}",
                got.count.len(),
                self.num_keys
            ));
        }
        for k in 0..self.num_keys {
            let n = exact.count[k];
            if got.count[k] != n || got.min[k] != exact.min[k] || got.max[k] != exact.max[k] {
                return Err(format!(
                    "key {k}: count {} min {} max {}, expected {n}, {}, {}",
                    got.count[k], got.min[k], got.max[k], exact.min[k], exact.max[k]
                ));
            }
            // f32 sums of n terms in any order: within n·ε·Σ|v|.
            let tolerance = n.max(1) as f64 * f32::EPSILON as f64 * magnitudes[k];
            if !within(got.sum[k] as f64, sums[k], tolerance) {
                return Err(format!(
                    "key {k}: sum {}, expected {} (± {tolerance:.3e})",
                    got.sum[k], sums[k]
                ));
            }
        }
        Ok(())
    }
}

impl Workload for GroupBy {
    fn size(&self) -> String {
        format!("{} rows, {} keys", self.keys.len(), self.num_keys)
    }
    fn work(&self) -> Work {
        Work {
            bytes: 8 * self.keys.len() as u64 + 16 * self.num_keys as u64,
            flops: 0,
        }
    }
    fn run_loop(&mut self) {
        let mut groups = Groups::empty(self.num_keys);
        for (&k, &v) in self.keys.iter().zip(&self.values) {
            groups.add(k as usize, v);
        }
        self.result = groups;
    }
    fn run_rayon(&mut self) {
        let chunk = self
            .keys
            .len()
            .div_ceil(rayon::current_num_threads())
            .max(1);
        let num_keys = self.num_keys;
        self.result = self
            .keys
            .par_chunks(chunk)
            .zip(self.values.par_chunks(chunk))
            .map(|(keys, values)| {
                let mut groups = Groups::empty(num_keys);
                for (&k, &v) in keys.iter().zip(values) {
                    groups.add(k as usize, v);
                }
                groups
            })
            .reduce(|| Groups::empty(num_keys), Groups::merge);
    }
    fn check_loop(&self) -> Verdict {
        self.check(&self.result)
    }
    fn kernels(&self) -> &'static [&'static str] {
        // Shared-memory or global aggregation by the number of keys, then the finish (on a GPU;
        // the CPU executor's kernels for many keys, `group_by_owned` and its finish, have no
        // CUDA C versions: `ops::group_by` launches them on the CPU only).
        &["group_by_shared", "group_by_global", "group_by_finish"]
    }
    fn on_device<'a>(&'a self, kernels: &'a Module) -> Result<Box<dyn DeviceRun + 'a>> {
        let device = kernels.device();
        Ok(Box::new(OnDevice {
            workload: self,
            kernels,
            keys: device.upload(&self.keys)?,
            values: device.upload(&self.values)?,
            result: None,
        }))
    }
}

struct OnDevice<'a> {
    workload: &'a GroupBy,
    kernels: &'a Module,
    keys: DeviceBuffer<u32>,
    values: DeviceBuffer<f32>,
    result: Option<ops::GroupStats>,
}

impl DeviceRun for OnDevice<'_> {
    fn run(&mut self) -> Result<()> {
        let stats = ops::group_by(
            self.kernels,
            &self.keys,
            &self.values,
            self.workload.num_keys,
        )?;
        self.result = Some(stats);
        Ok(())
    }
    fn check(&mut self) -> Result<Verdict> {
        let Some(stats) = &self.result else {
            return Ok(Err("not run".into()));
        };
        let got = Groups {
            count: stats.count.to_vec()?,
            sum: stats.sum.to_vec()?,
            min: stats.min.to_vec()?,
            max: stats.max.to_vec()?,
        };
        Ok(self.workload.check(&got))
    }
}
