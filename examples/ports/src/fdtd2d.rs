//! PolyBench/GPU fdtd-2d (`CUDA/stencils/fdtd-2d/fdtd2d.cu`): a 2D finite-difference time-domain
//! simulation, three kernels per time step; `hz` is the result.

use crate::{compare_floats, Comparison, Port};
use ferrocuda_host::{launch, Module, Result};
use ports_kernels::fdtd2d::{
    fdtd_step1_kernel, fdtd_step2_kernel, fdtd_step3_kernel, DIM_THREAD_BLOCK_X, DIM_THREAD_BLOCK_Y,
};

pub struct Input {
    pub tmax: usize,
    pub nx: usize,
    pub ny: usize,
    pub fict: Vec<f32>,
    pub ex: Vec<f32>,
    pub ey: Vec<f32>,
    pub hz: Vec<f32>,
}

pub struct Fdtd2d;

impl Port for Fdtd2d {
    const NAME: &'static str = "PolyBench/GPU fdtd-2d";
    type Input = Input;
    type Output = Vec<f32>;
    type Reference = Vec<f64>;

    fn describe(input: &Input) -> String {
        format!(
            "{}×{} fields, {} time steps",
            input.nx, input.ny, input.tmax
        )
    }

    /// `init_arrays` (deterministic: PolyBench's inputs are formulas; the seed is not used).
    fn input(_seed: u64, scale: usize) -> Input {
        let (tmax, nx, ny) = (20, 64 * scale, 96 * scale);
        let field = |f: &dyn Fn(f32, f32) -> f32| {
            (0..nx * ny)
                .map(|k| f((k / ny) as f32, (k % ny) as f32) / nx as f32)
                .collect::<Vec<_>>()
        };
        Input {
            tmax,
            nx,
            ny,
            fict: (0..tmax).map(|t| t as f32).collect(),
            ex: field(&|i, j| i * (j + 1.0) + 1.0),
            ey: field(&|i, j| (i - 1.0) * (j + 2.0) + 2.0),
            hz: field(&|i, j| (i - 9.0) * (j + 4.0) + 3.0),
        }
    }

    fn run(module: &Module, input: &Input) -> Result<Vec<f32>> {
        let device = module.device();
        let fict = device.upload(&input.fict)?;
        let mut ex = device.upload(&input.ex)?;
        let mut ey = device.upload(&input.ey)?;
        let mut hz = device.upload(&input.hz)?;
        let block = (DIM_THREAD_BLOCK_X, DIM_THREAD_BLOCK_Y);
        let grid = (
            (input.ny as u32).div_ceil(block.0),
            (input.nx as u32).div_ceil(block.1),
        );
        let (nx, ny) = (input.nx as i32, input.ny as i32);
        for t in 0..input.tmax as i32 {
            launch!(module, fdtd_step1_kernel[grid, block](nx, ny, &fict, &ex, &mut ey, &hz, t))?;
            launch!(module, fdtd_step2_kernel[grid, block](nx, ny, &mut ex, &ey, &hz, t))?;
            launch!(module, fdtd_step3_kernel[grid, block](nx, ny, &ex, &ey, &mut hz, t))?;
        }
        hz.to_vec()
    }

    /// `runFdtd`, in f64.
    fn reference(input: &Input) -> Vec<f64> {
        let (nx, ny) = (input.nx, input.ny);
        let f64s = |v: &[f32]| v.iter().map(|&x| x as f64).collect::<Vec<f64>>();
        let (mut ex, mut ey, mut hz) = (f64s(&input.ex), f64s(&input.ey), f64s(&input.hz));
        for t in 0..input.tmax {
            ey[..ny].fill(input.fict[t] as f64);
            for i in 1..nx {
                for j in 0..ny {
                    ey[i * ny + j] -= 0.5 * (hz[i * ny + j] - hz[(i - 1) * ny + j]);
                }
            }
            for i in 0..nx {
                for j in 1..ny {
                    ex[i * ny + j] -= 0.5 * (hz[i * ny + j] - hz[i * ny + j - 1]);
                }
            }
            for i in 0..nx - 1 {
                for j in 0..ny - 1 {
                    hz[i * ny + j] -= 0.7
                        * (ex[i * ny + j + 1] - ex[i * ny + j] + ey[(i + 1) * ny + j]
                            - ey[i * ny + j]);
                }
            }
        }
        hz
    }

    fn compare(got: &Vec<f32>, want: &Vec<f64>) -> Comparison {
        // Values up to about 100 after a few thousand f32 operations each: 1e-4 absolute plus
        // 1e-5 relative.
        compare_floats("hz", got, want, 1e-4, 1e-5)
    }
}
