//! Rodinia nw (`cuda/nw/needle.cu`): Needleman-Wunsch global alignment scores of two random
//! sequences under BLOSUM62 with a gap penalty; a launch per tile diagonal, `needle_cuda_shared_1`
//! growing the wavefront of 16×16 tiles, then `needle_cuda_shared_2` shrinking it.

use crate::{compare_exact, rng, Comparison, Port};
use ferrocuda_host::{launch, Module, Result};
use ports_kernels::nw::{maximum, needle_cuda_shared_1, needle_cuda_shared_2, BLOCK_SIZE};
use rand::Rng;

/// `blosum62[24][24]` of needle.cu (the BLOSUM62 substitution matrix).
#[rustfmt::skip]
pub const BLOSUM62: [[i32; 24]; 24] = [
    [ 4, -1, -2, -2,  0, -1, -1,  0, -2, -1, -1, -1, -1, -2, -1,  1,  0, -3, -2,  0, -2, -1,  0, -4],
    [-1,  5,  0, -2, -3,  1,  0, -2,  0, -3, -2,  2, -1, -3, -2, -1, -1, -3, -2, -3, -1,  0, -1, -4],
    [-2,  0,  6,  1, -3,  0,  0,  0,  1, -3, -3,  0, -2, -3, -2,  1,  0, -4, -2, -3,  3,  0, -1, -4],
    [-2, -2,  1,  6, -3,  0,  2, -1, -1, -3, -4, -1, -3, -3, -1,  0, -1, -4, -3, -3,  4,  1, -1, -4],
    [ 0, -3, -3, -3,  9, -3, -4, -3, -3, -1, -1, -3, -1, -2, -3, -1, -1, -2, -2, -1, -3, -3, -2, -4],
    [-1,  1,  0,  0, -3,  5,  2, -2,  0, -3, -2,  1,  0, -3, -1,  0, -1, -2, -1, -2,  0,  3, -1, -4],
    [-1,  0,  0,  2, -4,  2,  5, -2,  0, -3, -3,  1, -2, -3, -1,  0, -1, -3, -2, -2,  1,  4, -1, -4],
    [ 0, -2,  0, -1, -3, -2, -2,  6, -2, -4, -4, -2, -3, -3, -2,  0, -2, -2, -3, -3, -1, -2, -1, -4],
    [-2,  0,  1, -1, -3,  0,  0, -2,  8, -3, -3, -1, -2, -1, -2, -1, -2, -2,  2, -3,  0,  0, -1, -4],
    [-1, -3, -3, -3, -1, -3, -3, -4, -3,  4,  2, -3,  1,  0, -3, -2, -1, -3, -1,  3, -3, -3, -1, -4],
    [-1, -2, -3, -4, -1, -2, -3, -4, -3,  2,  4, -2,  2,  0, -3, -2, -1, -2, -1,  1, -4, -3, -1, -4],
    [-1,  2,  0, -1, -3,  1,  1, -2, -1, -3, -2,  5, -1, -3, -1,  0, -1, -3, -2, -2,  0,  1, -1, -4],
    [-1, -1, -2, -3, -1,  0, -2, -3, -2,  1,  2, -1,  5,  0, -2, -1, -1, -1, -1,  1, -3, -1, -1, -4],
    [-2, -3, -3, -3, -2, -3, -3, -3, -1,  0,  0, -3,  0,  6, -4, -2, -2,  1,  3, -1, -3, -3, -1, -4],
    [-1, -2, -2, -1, -3, -1, -1, -2, -2, -3, -3, -1, -2, -4,  7, -1, -1, -4, -3, -2, -2, -1, -2, -4],
    [ 1, -1,  1,  0, -1,  0,  0,  0, -1, -2, -2,  0, -1, -2, -1,  4,  1, -3, -2, -2,  0,  0,  0, -4],
    [ 0, -1,  0, -1, -1, -1, -1, -2, -2, -1, -1, -1, -1, -2, -1,  1,  5, -2, -2,  0, -1, -1,  0, -4],
    [-3, -3, -4, -4, -2, -2, -3, -2, -2, -3, -2, -3, -1,  1, -4, -3, -2, 11,  2, -3, -4, -3, -2, -4],
    [-2, -2, -2, -3, -2, -1, -2, -3,  2, -1, -1, -2, -1,  3, -3, -2, -2,  2,  7, -1, -3, -2, -1, -4],
    [ 0, -3, -3, -3, -1, -2, -2, -3, -3,  3,  1, -2,  1, -1, -2, -2,  0, -3, -1,  4, -3, -2, -1, -4],
    [-2, -1,  3,  4, -3,  0,  1, -1,  0, -3, -4,  0, -3, -3, -2,  0, -1, -4, -3, -3,  4,  1, -1, -4],
    [-1,  0,  0,  1, -3,  3,  4, -2,  0, -3, -3,  1, -1, -3, -1,  0, -1, -3, -2, -2,  1,  4, -1, -4],
    [ 0, -1, -1, -1, -2, -1, -1, -1, -1, -1, -1, -1, -1, -1, -2,  0,  0, -2, -1, -1, -1, -1, -1, -4],
    [-4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4,  1]
];

pub struct Input {
    /// `max_rows = max_cols`: the sequences' length plus one.
    pub max_cols: usize,
    pub penalty: i32,
    /// `referrence`: the substitution score of each pair of residues.
    pub referrence: Vec<i32>,
    /// `input_itemsets`: zero but the first row and column, `-i · penalty`.
    pub itemsets: Vec<i32>,
}

pub struct Nw;

impl Port for Nw {
    const NAME: &'static str = "Rodinia nw";
    type Input = Input;
    type Output = Vec<i32>;
    type Reference = Vec<i32>;

    fn describe(input: &Input) -> String {
        format!(
            "{0}×{0} score matrix, penalty {1}",
            input.max_cols, input.penalty
        )
    }

    fn input(seed: u64, scale: usize) -> Input {
        let mut rng = rng(seed);
        let max_cols = 128 * scale + 1; // the dimension must be a multiple of 16, plus one
        let penalty = 10;
        // The two sequences (residue numbers 1..=10, as the original's rand() % 10 + 1).
        let a: Vec<usize> = (0..max_cols).map(|_| rng.random_range(1..=10)).collect();
        let b: Vec<usize> = (0..max_cols).map(|_| rng.random_range(1..=10)).collect();
        let mut referrence = vec![0; max_cols * max_cols];
        for i in 1..max_cols {
            for j in 1..max_cols {
                referrence[i * max_cols + j] = BLOSUM62[a[i]][b[j]];
            }
        }
        let mut itemsets = vec![0; max_cols * max_cols];
        for i in 1..max_cols {
            itemsets[i * max_cols] = -(i as i32) * penalty;
            itemsets[i] = -(i as i32) * penalty;
        }
        Input {
            max_cols,
            penalty,
            referrence,
            itemsets,
        }
    }

    fn run(module: &Module, input: &Input) -> Result<Vec<i32>> {
        let device = module.device();
        let cols = input.max_cols as i32;
        let referrence = device.upload(&input.referrence)?;
        let mut matrix = device.upload(&input.itemsets)?;
        let block_width = (cols - 1) / BLOCK_SIZE as i32;
        // process top-left matrix
        for i in 1..=block_width {
            launch!(
                module,
                needle_cuda_shared_1[i as u32, BLOCK_SIZE](&referrence, &mut matrix, cols, input.penalty, i, block_width)
            )?;
        }
        // process bottom-right matrix
        for i in (1..block_width).rev() {
            launch!(
                module,
                needle_cuda_shared_2[i as u32, BLOCK_SIZE](&referrence, &mut matrix, cols, input.penalty, i, block_width)
            )?;
        }
        matrix.to_vec()
    }

    /// The recurrence row by row.
    fn reference(input: &Input) -> Vec<i32> {
        let (n, p) = (input.max_cols, input.penalty);
        let mut m = input.itemsets.clone();
        for i in 1..n {
            for j in 1..n {
                let diagonal = m[(i - 1) * n + j - 1] + input.referrence[i * n + j];
                m[i * n + j] = maximum(diagonal, m[i * n + j - 1] - p, m[(i - 1) * n + j] - p);
            }
        }
        m
    }

    fn compare(got: &Vec<i32>, want: &Vec<i32>) -> Comparison {
        compare_exact("score", got, want)
    }
}
