//! Rodinia srad v2 (`cuda/srad/srad_v2/srad.cu`): speckle-reducing anisotropic diffusion of a
//! random image, `niter` iterations of: the statistics of a region of interest on the host, then
//! `srad_cuda_1` and `srad_cuda_2`. The original copies the whole image to the device and back
//! each iteration; here it stays on the device and only the region's rows come back
//! (`DeviceBuffer::slice`), which is all the host reads.

use crate::{compare_floats, rng, Comparison, Port};
use ferrocuda_host::{launch, Module, Result};
use ports_kernels::srad::{srad_cuda_1, srad_cuda_2, BLOCK_SIZE};
use rand::Rng;

pub struct Input {
    pub rows: usize,
    pub cols: usize,
    /// The region of interest: rows `r1..=r2`, columns `c1..=c2`.
    pub r1: usize,
    pub r2: usize,
    pub c1: usize,
    pub c2: usize,
    pub lambda: f32,
    pub niter: usize,
    /// `J = exp(I)`, `I` uniform in [0, 1).
    pub j: Vec<f32>,
}

/// `q0sqr` from the region's values: (variance / mean²), as the original's host loop.
fn q0sqr<T: Copy + Into<f64>>(input: &Input, j: impl Fn(usize, usize) -> T) -> f64 {
    let (mut sum, mut sum2) = (0.0f64, 0.0f64);
    for r in input.r1..=input.r2 {
        for c in input.c1..=input.c2 {
            let v: f64 = j(r, c).into();
            sum += v;
            sum2 += v * v;
        }
    }
    let size_r = ((input.r2 - input.r1 + 1) * (input.c2 - input.c1 + 1)) as f64;
    let mean = sum / size_r;
    let var = sum2 / size_r - mean * mean;
    var / (mean * mean)
}

pub struct SradV2;

impl Port for SradV2 {
    const NAME: &'static str = "Rodinia srad v2";
    type Input = Input;
    type Output = Vec<f32>;
    type Reference = Vec<f64>;

    fn describe(input: &Input) -> String {
        format!(
            "{}×{} image, region rows {}..={} columns {}..={}, lambda {}, {} iterations",
            input.rows,
            input.cols,
            input.r1,
            input.r2,
            input.c1,
            input.c2,
            input.lambda,
            input.niter
        )
    }

    fn input(seed: u64, scale: usize) -> Input {
        let mut rng = rng(seed);
        let (rows, cols) = (64 * scale, 64 * scale);
        let j = (0..rows * cols)
            .map(|_| rng.random_range(0.0f32..1.0).exp())
            .collect();
        Input {
            rows,
            cols,
            r1: 0,
            r2: 31,
            c1: 0,
            c2: 31,
            lambda: 0.5,
            niter: 3,
            j,
        }
    }

    fn run(module: &Module, input: &Input) -> Result<Vec<f32>> {
        let device = module.device();
        let (rows, cols) = (input.rows, input.cols);
        let size_i = rows * cols;
        let mut j_cuda = device.upload(&input.j)?;
        let mut c_cuda = device.alloc_zeroed::<f32>(size_i)?;
        let mut e_c = device.alloc_zeroed::<f32>(size_i)?;
        let mut w_c = device.alloc_zeroed::<f32>(size_i)?;
        let mut s_c = device.alloc_zeroed::<f32>(size_i)?;
        let mut n_c = device.alloc_zeroed::<f32>(size_i)?;
        // Currently the input size must be divided by 16 - the block size
        let block = (BLOCK_SIZE, BLOCK_SIZE);
        let grid = (cols / BLOCK_SIZE, rows / BLOCK_SIZE);
        for _ in 0..input.niter {
            // The region's rows, the only part of J the host reads.
            let region = j_cuda
                .slice(input.r1 * cols..(input.r2 + 1) * cols)?
                .to_vec()?;
            let q0sqr = q0sqr(input, |r, c| region[(r - input.r1) * cols + c]) as f32;
            let (c, r) = (cols as i32, rows as i32);
            launch!(
                module,
                srad_cuda_1[grid, block](&mut e_c, &mut w_c, &mut n_c, &mut s_c, &j_cuda, &mut c_cuda, c, r, q0sqr)
            )?;
            launch!(
                module,
                srad_cuda_2[grid, block](&e_c, &w_c, &n_c, &s_c, &mut j_cuda, &c_cuda, c, r, input.lambda, q0sqr)
            )?;
        }
        j_cuda.to_vec()
    }

    /// The original's CPU version (its `#ifdef CPU` branch), in f64.
    fn reference(input: &Input) -> Vec<f64> {
        let (rows, cols) = (input.rows, input.cols);
        let mut j: Vec<f64> = input.j.iter().map(|&v| v as f64).collect();
        let (mut dn, mut ds, mut dw, mut de, mut c) = (
            vec![0.0; j.len()],
            vec![0.0; j.len()],
            vec![0.0; j.len()],
            vec![0.0; j.len()],
            vec![0.0; j.len()],
        );
        let lambda = input.lambda as f64;
        for _ in 0..input.niter {
            let q0sqr = q0sqr(input, |r, cc| j[r * cols + cc]);
            for r in 0..rows {
                for cc in 0..cols {
                    let k = r * cols + cc;
                    let jc = j[k];
                    dn[k] = j[r.saturating_sub(1) * cols + cc] - jc;
                    ds[k] = j[(r + 1).min(rows - 1) * cols + cc] - jc;
                    dw[k] = j[r * cols + cc.saturating_sub(1)] - jc;
                    de[k] = j[r * cols + (cc + 1).min(cols - 1)] - jc;
                    let g2 =
                        (dn[k] * dn[k] + ds[k] * ds[k] + dw[k] * dw[k] + de[k] * de[k]) / (jc * jc);
                    let l = (dn[k] + ds[k] + dw[k] + de[k]) / jc;
                    let num = 0.5 * g2 - (1.0 / 16.0) * (l * l);
                    let den = 1.0 + 0.25 * l;
                    let qsqr = num / (den * den);
                    let den = (qsqr - q0sqr) / (q0sqr * (1.0 + q0sqr));
                    c[k] = (1.0 / (1.0 + den)).clamp(0.0, 1.0);
                }
            }
            for r in 0..rows {
                for cc in 0..cols {
                    let k = r * cols + cc;
                    let (cn, cw) = (c[k], c[k]);
                    let cs = c[(r + 1).min(rows - 1) * cols + cc];
                    let ce = c[r * cols + (cc + 1).min(cols - 1)];
                    let d = cn * dn[k] + cs * ds[k] + cw * dw[k] + ce * de[k];
                    j[k] += 0.25 * lambda * d;
                }
            }
        }
        j
    }

    fn compare(got: &Vec<f32>, want: &Vec<f64>) -> Comparison {
        // Values 1 to e; f32 carries 1e-7 relative per operation, the diffusion coefficient's
        // quotients amplify it: 1e-4 relative.
        compare_floats("image", got, want, 0.0, 1e-4)
    }
}
