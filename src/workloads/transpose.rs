//! Transposing a 4096×4096 matrix, naively and through shared memory: the seed's 3.1
//! comparison of uncoalesced and coalesced memory access.

use super::inputs::{inputs_rng, uniform, Verdict};
use super::workload::{DeviceRun, Scale, Work, Workload};
use crate::ops::{self, Transpose};
use crate::{DeviceBuffer, Module, Result};
use rayon::prelude::*;

/// Rows (and columns) per tile of the loops: a cache-friendly blocked transpose.
const BLOCK: usize = 32;

pub(super) struct TransposeWorkload {
    kernel: Transpose,
    rows: usize,
    cols: usize,
    input: Vec<f32>,
    output: Vec<f32>,
}

impl TransposeWorkload {
    pub(super) fn new(scale: Scale, kernel: Transpose) -> Self {
        let (rows, cols) = scale.pick((4096, 4096), (1024, 1024), (67, 131));
        TransposeWorkload {
            kernel,
            rows,
            cols,
            input: uniform(&mut inputs_rng("transpose"), rows * cols, -1.0..1.0),
            output: vec![0.0; rows * cols],
        }
    }

    /// Exact: every element moved bit for bit.
    fn check(&self, output: &[f32]) -> Verdict {
        let (rows, cols) = (self.rows, self.cols);
        if output.len() != rows * cols {
            return Err(format!(
                "{} elements, expected {}",
                output.len(),
                rows * cols
            ));
        }
        for y in 0..rows {
            for x in 0..cols {
                let (got, want) = (output[x * rows + y], self.input[y * cols + x]);
                if got.to_bits() != want.to_bits() {
                    return Err(format!(
                        "output[{x}][{y}] is {got}, expected input[{y}][{x}] = {want}"
                    ));
                }
            }
        }
        Ok(())
    }
}

/// Output rows `first..first + out.len() / rows` (input columns), in `BLOCK`-square tiles.
fn transpose_rows(input: &[f32], out: &mut [f32], first: usize, rows: usize, cols: usize) {
    let out_rows = out.len() / rows;
    for y0 in (0..rows).step_by(BLOCK) {
        for x in first..first + out_rows {
            for y in y0..(y0 + BLOCK).min(rows) {
                out[(x - first) * rows + y] = input[y * cols + x];
            }
        }
    }
}

impl Workload for TransposeWorkload {
    fn size(&self) -> String {
        format!("{}×{}", self.rows, self.cols)
    }
    fn work(&self) -> Work {
        Work {
            bytes: 8 * (self.rows * self.cols) as u64,
            flops: 0,
        }
    }
    fn run_loop(&mut self) {
        for x0 in (0..self.cols).step_by(BLOCK) {
            let x1 = (x0 + BLOCK).min(self.cols);
            let out = &mut self.output[x0 * self.rows..x1 * self.rows];
            transpose_rows(&self.input, out, x0, self.rows, self.cols);
        }
    }
    fn run_rayon(&mut self) {
        let (rows, cols, input) = (self.rows, self.cols, &self.input);
        self.output
            .par_chunks_mut(BLOCK * rows)
            .enumerate()
            .for_each(|(i, out)| transpose_rows(input, out, i * BLOCK, rows, cols));
    }
    fn check_loop(&self) -> Verdict {
        self.check(&self.output)
    }
    fn kernels(&self) -> &'static [&'static str] {
        match self.kernel {
            Transpose::Naive => &["transpose_naive"],
            Transpose::Coalesced => &["transpose_tiled"],
        }
    }
    fn on_device<'a>(&'a self, kernels: &'a Module) -> Result<Box<dyn DeviceRun + 'a>> {
        let device = kernels.device();
        Ok(Box::new(OnDevice {
            workload: self,
            kernels,
            input: device.upload(&self.input)?,
            output: device.alloc_zeroed(self.input.len())?,
        }))
    }
}

struct OnDevice<'a> {
    workload: &'a TransposeWorkload,
    kernels: &'a Module,
    input: DeviceBuffer<f32>,
    output: DeviceBuffer<f32>,
}

impl DeviceRun for OnDevice<'_> {
    fn run(&mut self) -> Result<()> {
        let w = self.workload;
        ops::transpose(
            self.kernels,
            &self.input,
            &mut self.output,
            w.rows,
            w.cols,
            w.kernel,
        )
    }
    fn check(&mut self) -> Result<Verdict> {
        Ok(self.workload.check(&self.output.to_vec()?))
    }
}
