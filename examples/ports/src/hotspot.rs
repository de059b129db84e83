//! Rodinia hotspot (`cuda/hotspot/hotspot.cu`): the transient temperature of a chip from its
//! power map, `total_iterations` time steps, `pyramid_height` of them per launch of
//! `calculate_temp`, between two temperature buffers in turn (`compute_tran_temp`).

use crate::{compare_floats, rng, Comparison, Port};
use ferrocuda_host::{launch, Module, Result};
use ports_kernels::hotspot::{calculate_temp, BLOCK_SIZE};
use rand::Rng;

// The chip's parameters, as hotspot.cu's globals and #defines.
const MAX_PD: f64 = 3.0e6;
const PRECISION: f64 = 0.001;
const SPEC_HEAT_SI: f64 = 1.75e6;
const K_SI: f64 = 100.0;
const FACTOR_CHIP: f64 = 0.5;
const T_CHIP: f64 = 0.0005;
const CHIP_HEIGHT: f64 = 0.016;
const CHIP_WIDTH: f64 = 0.016;
const AMB_TEMP: f64 = 80.0;

pub struct Input {
    pub rows: usize,
    pub cols: usize,
    pub pyramid_height: usize,
    pub total_iterations: usize,
    pub temp: Vec<f32>,
    pub power: Vec<f32>,
}

/// `Cap, Rx, Ry, Rz, step` of `compute_tran_temp` (the original computes them in double and
/// passes them as float).
fn parameters(rows: usize, cols: usize) -> [f64; 5] {
    let grid_height = CHIP_HEIGHT / rows as f64;
    let grid_width = CHIP_WIDTH / cols as f64;
    let cap = FACTOR_CHIP * SPEC_HEAT_SI * T_CHIP * grid_width * grid_height;
    let rx = grid_width / (2.0 * K_SI * T_CHIP * grid_height);
    let ry = grid_height / (2.0 * K_SI * T_CHIP * grid_width);
    let rz = T_CHIP / (K_SI * grid_height * grid_width);
    let max_slope = MAX_PD / (FACTOR_CHIP * T_CHIP * SPEC_HEAT_SI);
    let step = PRECISION / max_slope;
    [cap, rx, ry, rz, step]
}

pub struct Hotspot;

impl Port for Hotspot {
    const NAME: &'static str = "Rodinia hotspot";
    type Input = Input;
    type Output = Vec<f32>;
    type Reference = Vec<f64>;

    fn describe(input: &Input) -> String {
        format!(
            "{}×{} grid, {} time steps, pyramid height {}",
            input.rows, input.cols, input.total_iterations, input.pyramid_height
        )
    }

    fn input(seed: u64, scale: usize) -> Input {
        let mut rng = rng(seed);
        let (rows, cols) = (64 * scale, 64 * scale);
        // Rodinia's data files: temperatures around 320-345 K, small powers per cell.
        let temp = (0..rows * cols)
            .map(|_| rng.random_range(320.0f32..345.0))
            .collect();
        let power = (0..rows * cols)
            .map(|_| rng.random_range(0.0f32..0.005))
            .collect();
        Input {
            rows,
            cols,
            pyramid_height: 2,
            total_iterations: 9,
            temp,
            power,
        }
    }

    fn run(module: &Module, input: &Input) -> Result<Vec<f32>> {
        let device = module.device();
        let (rows, cols, pyramid) = (
            input.rows as i32,
            input.cols as i32,
            input.pyramid_height as i32,
        );
        // pyramid parameters, as run()
        let border_cols = pyramid; // pyramid_height * EXPAND_RATE / 2
        let border_rows = pyramid;
        let small_block_col = BLOCK_SIZE as i32 - pyramid * 2;
        let small_block_row = BLOCK_SIZE as i32 - pyramid * 2;
        let block_cols = (cols as u32).div_ceil(small_block_col as u32);
        let block_rows = (rows as u32).div_ceil(small_block_row as u32);

        let [cap, rx, ry, rz, step] = parameters(input.rows, input.cols).map(|p| p as f32);
        let power = device.upload(&input.power)?;
        let mut matrix_temp = [
            device.upload(&input.temp)?,
            device.alloc_zeroed(input.temp.len())?,
        ];
        let (mut src, mut dst) = (1, 0);
        let total = input.total_iterations as i32;
        let mut t = 0;
        while t < total {
            (src, dst) = (dst, src);
            let [a, b] = &mut matrix_temp;
            let (from, to) = if src == 0 { (&*a, b) } else { (&*b, a) };
            launch!(
                module,
                calculate_temp[(block_cols, block_rows), (BLOCK_SIZE, BLOCK_SIZE)](
                    pyramid.min(total - t),
                    &power,
                    from,
                    to,
                    cols,
                    rows,
                    border_cols,
                    border_rows,
                    cap,
                    rx,
                    ry,
                    rz,
                    step,
                    0.001f32
                )
            )?;
            t += pyramid;
        }
        matrix_temp[dst].to_vec()
    }

    /// `total_iterations` explicit steps of the same stencil over the whole grid, neighbours
    /// clamped at the edges, in f64.
    fn reference(input: &Input) -> Vec<f64> {
        let (rows, cols) = (input.rows, input.cols);
        let [cap, rx, ry, rz, step] = parameters(rows, cols);
        let mut temp: Vec<f64> = input.temp.iter().map(|&t| t as f64).collect();
        let mut next = temp.clone();
        for _ in 0..input.total_iterations {
            for r in 0..rows {
                for c in 0..cols {
                    let at = |r: usize, c: usize| temp[r * cols + c];
                    let t = at(r, c);
                    let (n, s) = (at(r.saturating_sub(1), c), at((r + 1).min(rows - 1), c));
                    let (w, e) = (at(r, c.saturating_sub(1)), at(r, (c + 1).min(cols - 1)));
                    next[r * cols + c] = t + step / cap
                        * (input.power[r * cols + c] as f64
                            + (s + n - 2.0 * t) / ry
                            + (e + w - 2.0 * t) / rx
                            + (AMB_TEMP - t) / rz);
                }
            }
            std::mem::swap(&mut temp, &mut next);
        }
        temp
    }

    fn compare(got: &Vec<f32>, want: &Vec<f64>) -> Comparison {
        // f32 temperatures around 330 K carry about 3e-5 K each: 1e-3 K is ample for 9 steps.
        compare_floats("temperature (K)", got, want, 1e-3, 0.0)
    }
}
