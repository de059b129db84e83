//! Rodinia lud (`cuda/lud/cuda/lud.cu`, `lud_cuda` of `lud_kernel.cu`): the LU decomposition of
//! a square matrix in place, without pivoting, in 16×16 tiles: per tile step `lud_diagonal`,
//! `lud_perimeter` and `lud_internal`, then `lud_diagonal` for the last tile.

use crate::{compare_floats, Comparison, Port};
use ferrocuda_host::{launch, Module, Result};
use ports_kernels::lud::{lud_diagonal, lud_internal, lud_perimeter, BLOCK_SIZE};

pub struct Input {
    /// `matrix_dim`: a multiple of `BLOCK_SIZE`, as the original requires.
    pub matrix_dim: usize,
    /// The matrix, row-major.
    pub m: Vec<f32>,
}

pub struct Lud;

impl Port for Lud {
    const NAME: &'static str = "Rodinia lud";
    type Input = Input;
    type Output = Vec<f32>;
    type Reference = Vec<f64>;

    fn describe(input: &Input) -> String {
        format!(
            "LU of a {0}×{0} matrix in {1}×{1} tiles",
            input.matrix_dim, BLOCK_SIZE
        )
    }

    /// The matrix `create_matrix` (`cuda/lud/common/common.c`) makes for `-s N`:
    /// `m[i][j] = 10·e^(-0.001·|i - j|)`, symmetric positive definite, so that LU without
    /// pivoting is stable. It has no randomness: `seed` does not change it.
    fn input(_seed: u64, scale: usize) -> Input {
        let matrix_dim = 5 * BLOCK_SIZE * scale;
        let m = (0..matrix_dim * matrix_dim)
            .map(|k| {
                let (i, j) = (k / matrix_dim, k % matrix_dim);
                (10.0 * (-0.001 * i.abs_diff(j) as f64).exp()) as f32
            })
            .collect();
        Input { matrix_dim, m }
    }

    fn run(module: &Module, input: &Input) -> Result<Vec<f32>> {
        let device = module.device();
        let (dim, b) = (input.matrix_dim as i32, BLOCK_SIZE as i32);
        let mut m = device.upload(&input.m)?;
        let mut i = 0;
        while i < dim - b {
            launch!(module, lud_diagonal[1, BLOCK_SIZE](&mut m, dim, i))?;
            let tiles = ((dim - i) / b - 1) as u32;
            launch!(module, lud_perimeter[tiles, 2 * BLOCK_SIZE](&mut m, dim, i))?;
            launch!(
                module,
                lud_internal[(tiles, tiles), (BLOCK_SIZE, BLOCK_SIZE)](&mut m, dim, i)
            )?;
            i += b;
        }
        launch!(module, lud_diagonal[1, BLOCK_SIZE](&mut m, dim, i))?;
        m.to_vec()
    }

    /// Doolittle's LU in f64, row by row (`U`'s row `i`, then `L`'s column `i`), in place as
    /// the kernels leave it: `L` below the diagonal (its unit diagonal not stored), `U` on and
    /// above it.
    fn reference(input: &Input) -> Vec<f64> {
        let n = input.matrix_dim;
        let mut a: Vec<f64> = input.m.iter().map(|&x| x as f64).collect();
        for i in 0..n {
            for j in i..n {
                let sum: f64 = (0..i).map(|k| a[i * n + k] * a[k * n + j]).sum();
                a[i * n + j] -= sum;
            }
            for j in i + 1..n {
                let sum: f64 = (0..i).map(|k| a[j * n + k] * a[k * n + i]).sum();
                a[j * n + i] = (a[j * n + i] - sum) / a[i * n + i];
            }
        }
        a
    }

    /// The factors' entries are from about 0.02 (`U`'s diagonal past the first row: the
    /// matrix is nearly singular, e^(-0.001) from 1) to 10; each is a sum of up to `n` products
    /// rounded in f32, cancelling down from 10 to 0.02 on `U`'s diagonal, so the bound is
    /// absolute, a few hundred f32 roundings of the matrix's largest entry.
    fn compare(got: &Vec<f32>, want: &Vec<f64>) -> Comparison {
        compare_floats("LU factors", got, want, 2e-3, 1e-4)
    }
}
