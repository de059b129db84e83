//! Matrix transpose, of f32 or f64 ([`Element`]).

use super::checks::{check_len, checked_product, to_u32};
use super::element::Element;
use super::launch::grid_2d;
#[cfg(doc)]
use crate::kernels::transpose::{
    transpose_naive, transpose_naive_wide, transpose_tiled, transpose_tiled_wide,
};
use crate::kernels::transpose::{TRANSPOSE_ROWS, TRANSPOSE_TILE};
use crate::{launch, Error, InputData, Module, OutputData, Result};

/// The blocks of [`Transpose::Naive`] on a GPU, `(x, y)`: 16 × 16, as CUDA's samples.
const NAIVE_BLOCK_GPU: (usize, usize) = (16, 16);

/// The blocks of [`Transpose::Naive`] on the CPU executor, which runs a block's threads x
/// fastest, one after another: 8 columns by 128 rows, so that each thread column writes 128
/// consecutive elements of the output (8 cache lines) and the 128 input rows' lines a block
/// reads stay in cache for the next block along x. Side by side on the 2-core Xeon, 4096²
/// f32 on both cores: 16 × 16 blocks 65 to 67 ms, 8 × 128 blocks 21 to 25 ms (the cache-blocked plain loop
/// on one core: 47 to 50 ms).
const NAIVE_BLOCK_CPU: (usize, usize) = (8, 128);

/// Which kernel [`transpose`] runs. Both move every element exactly; they differ in speed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Transpose {
    /// [`transpose_naive`]: one thread per element, reads coalesced but writes strided by
    /// `rows`, which wastes most of each memory transaction. For comparison.
    Naive,
    /// [`transpose_tiled`]: through a padded `32 × 33` shared-memory tile, so that reads and
    /// writes are both coalesced. The default.
    #[default]
    Coalesced,
}

/// `output = inputᵀ`: `input` is a row-major `rows × cols` matrix of f32 or f64 ([`Element`]),
/// `output` the row-major `cols × rows` one, with `output[x·rows + y] = input[y·cols + x]`, bit
/// for bit.
///
/// ```
/// use ferrocuda::ops::{self, Transpose};
/// let kernels = ferrocuda::Device::cpu().load(&ferrocuda::KERNELS)?;
/// let input = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]; // 2 × 3
/// let mut output = [0.0f32; 6];
/// ops::transpose(&kernels, &input, &mut output, 2, 3, Transpose::default())?;
/// assert_eq!(output, [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]); // 3 × 2
/// # Ok::<(), ferrocuda::Error>(())
/// ```
///
/// Matrices of at most `u32::MAX` elements run the kernels that index in 32 bits; larger ones
/// their 64-bit twins ([`transpose_naive_wide`], [`transpose_tiled_wide`]), which move the same
/// bits.
///
/// # Errors
/// [`Error::InvalidInput`] before anything runs if `rows` or `cols` is zero or above `u32::MAX`,
/// if `input` or `output` is not `rows·cols` long, or if the matrix needs more blocks than the
/// device's grid allows (65,535 in y on CUDA GPUs: more than 2,097,120 rows for [`Transpose::Coalesced`]); launch errors.
pub fn transpose<T: Element>(
    kernels: &Module,
    input: &(impl InputData<T> + ?Sized),
    output: &mut (impl OutputData<T> + ?Sized),
    rows: usize,
    cols: usize,
    kernel: Transpose,
) -> Result<()> {
    const OP: &str = "transpose";
    if rows == 0 || cols == 0 {
        return Err(Error::InvalidInput {
            op: OP,
            detail: format!("rows and cols must be at least 1, got {rows} × {cols}"),
        });
    }
    let (r, c) = (to_u32(OP, "rows", rows)?, to_u32(OP, "cols", cols)?);
    let len = checked_product(OP, "rows·cols", rows, cols)?;
    let wide = needs_wide_indices(len);
    let why = format!("rows × cols = {rows} × {cols}");
    check_len(OP, "input", input.len(), len, &why)?;
    check_len(OP, "output", output.len(), len, &why)?;
    match kernel {
        Transpose::Naive => {
            let tile = if kernels.device().is_gpu() {
                NAIVE_BLOCK_GPU
            } else {
                NAIVE_BLOCK_CPU
            };
            let grid = grid_2d(OP, kernels, (cols, "columns"), (rows, "rows"), tile)?;
            let block = (tile.0 as u32, tile.1 as u32);
            match wide {
                false => launch!(kernels, T::transpose_naive[grid, block](input, output, r, c)),
                true => launch!(kernels, T::transpose_naive_wide[grid, block](input, output, r, c)),
            }
        }
        Transpose::Coalesced => {
            let tile = (TRANSPOSE_TILE, TRANSPOSE_TILE);
            let grid = grid_2d(OP, kernels, (cols, "columns"), (rows, "rows"), tile)?;
            let block = (TRANSPOSE_TILE as u32, TRANSPOSE_ROWS as u32);
            match wide {
                false => launch!(kernels, T::transpose_tiled[grid, block](input, output, r, c)),
                true => launch!(kernels, T::transpose_tiled_wide[grid, block](input, output, r, c)),
            }
        }
    }
}

/// Whether a matrix of `len` elements needs the 64-bit kernels: the 32-bit ones take at most
/// `u32::MAX` (`len(input = rows * cols)`).
fn needs_wide_indices(len: usize) -> bool {
    len > u32::MAX as usize
}

#[cfg(test)]
mod tests {
    use super::needs_wide_indices;

    #[test]
    fn matrices_past_u32_max_elements_take_the_64_bit_kernels() {
        assert!(!needs_wide_indices(1));
        assert!(!needs_wide_indices(u32::MAX as usize));
        assert!(needs_wide_indices(u32::MAX as usize + 1));
        assert!(needs_wide_indices(65_536 * 65_536));
    }
}
