//! Filtering a 4K image (3840×2160) with a Gaussian blur or a Sobel derivative, borders clamped:
//! the seed's image-processing use.

use super::inputs::{check_close, inputs_rng, uniform, Verdict};
use super::workload::{DeviceRun, Scale, Work, Workload};
use crate::ops::{self, Filter};
use crate::{DeviceBuffer, Module, Result};
use rayon::prelude::*;

pub(super) struct Convolution {
    width: usize,
    height: usize,
    channels: usize,
    filter: Filter,
    image: Vec<f32>,
    output: Vec<f32>,
}

impl Convolution {
    /// `name` seeds the image.
    pub(super) fn new(scale: Scale, name: &'static str, channels: usize, filter: Filter) -> Self {
        let (width, height) = scale.pick((3840, 2160), (960, 540), (67, 29));
        let image = uniform(&mut inputs_rng(name), width * height * channels, 0.0..1.0);
        Convolution {
            width,
            height,
            channels,
            filter,
            output: vec![0.0; image.len()],
            image,
        }
    }

    /// Output row `y` (all its pixels and channels), in f32 with the same clamping.
    fn filter_row(&self, y: usize, row: &mut [f32]) {
        let (w, h, c) = (self.width as isize, self.height as isize, self.channels);
        let r = self.filter.radius() as isize;
        let side = self.filter.side();
        let weights = self.filter.weights();
        for x in 0..w {
            for ch in 0..c {
                let mut acc = 0.0f32;
                for dy in -r..=r {
                    let sy = (y as isize + dy).clamp(0, h - 1) as usize;
                    for dx in -r..=r {
                        let sx = (x + dx).clamp(0, w - 1) as usize;
                        let weight = weights[(dy + r) as usize * side + (dx + r) as usize];
                        acc = weight.mul_add(self.image[(sy * w as usize + sx) * c + ch], acc);
                    }
                }
                row[x as usize * c + ch] = acc;
            }
        }
    }

    /// Every output against the filter in f64; tolerance: side²·ε·Σ|w·x| (f32 accumulation).
    fn check(&self, output: &[f32]) -> Verdict {
        let (w, h, c) = (self.width as isize, self.height as isize, self.channels);
        let r = self.filter.radius() as isize;
        let side = self.filter.side();
        let weights = self.filter.weights();
        let reference = |i: usize| -> (f64, f64) {
            let (pixel, ch) = (i / c, i % c);
            let (y, x) = ((pixel / w as usize) as isize, (pixel % w as usize) as isize);
            let (mut exact, mut magnitude) = (0.0f64, 0.0f64);
            for dy in -r..=r {
                let sy = (y + dy).clamp(0, h - 1) as usize;
                for dx in -r..=r {
                    let sx = (x + dx).clamp(0, w - 1) as usize;
                    let term = weights[(dy + r) as usize * side + (dx + r) as usize] as f64
                        * self.image[(sy * w as usize + sx) * c + ch] as f64;
                    exact += term;
                    magnitude += term.abs();
                }
            }
            (exact, magnitude)
        };
        let taps = (side * side) as f64 * f32::EPSILON as f64;
        check_close(
            output,
            self.image.len(),
            |i| reference(i).0,
            |i| taps * reference(i).1 + f32::MIN_POSITIVE as f64,
        )
    }
}

impl Workload for Convolution {
    fn size(&self) -> String {
        let channels = if self.channels == 1 { "grey" } else { "RGB" };
        format!("{}×{} {channels}", self.width, self.height)
    }
    fn work(&self) -> Work {
        let values = self.image.len() as u64;
        let taps = (self.filter.side() * self.filter.side()) as u64;
        Work {
            bytes: 8 * values,
            flops: 2 * taps * values,
        }
    }
    fn run_loop(&mut self) {
        let mut output = std::mem::take(&mut self.output);
        let row_len = self.width * self.channels;
        for (y, row) in output.chunks_mut(row_len).enumerate() {
            self.filter_row(y, row);
        }
        self.output = output;
    }
    fn run_rayon(&mut self) {
        let mut output = std::mem::take(&mut self.output);
        let row_len = self.width * self.channels;
        let this = &*self;
        output
            .par_chunks_mut(row_len)
            .enumerate()
            .for_each(|(y, row)| this.filter_row(y, row));
        self.output = output;
    }
    fn check_loop(&self) -> Verdict {
        self.check(&self.output)
    }
    fn kernels(&self) -> &'static [&'static str] {
        &["convolve_2d_const"]
    }
    fn on_device<'a>(&'a self, kernels: &'a Module) -> Result<Box<dyn DeviceRun + 'a>> {
        let device = kernels.device();
        Ok(Box::new(OnDevice {
            workload: self,
            kernels,
            image: device.upload(&self.image)?,
            output: device.alloc_zeroed(self.image.len())?,
        }))
    }
}

struct OnDevice<'a> {
    workload: &'a Convolution,
    kernels: &'a Module,
    image: DeviceBuffer<f32>,
    output: DeviceBuffer<f32>,
}

impl DeviceRun for OnDevice<'_> {
    fn run(&mut self) -> Result<()> {
        let w = self.workload;
        ops::convolve_2d(
            self.kernels,
            &self.image,
            &mut self.output,
            w.width,
            w.height,
            w.channels,
            &w.filter,
        )
    }
    fn check(&mut self) -> Result<Verdict> {
        Ok(self.workload.check(&self.output.to_vec()?))
    }
}
