//! Reductions: dot product and sum.

use super::{check_len, check_not_empty, grid_stride_blocks, reduce_threads, THREADS_1D};
use crate::kernels::reduce::{dot_partial, sum_partial};
use crate::{launch, DeviceBuffer, InputData, Module, Result};

/// Most blocks of the first pass: the second pass sums the partials with one block, which has at
/// most this many threads.
const MAX_PARTIALS: u32 = 1024;

/// `Σ a[i]·b[i]`, in two passes: [`dot_partial`] writes one partial sum per block (grid-stride),
/// [`sum_partial`] sums those with one block. Each thread accumulates in f32.
///
/// # Errors
/// [`crate::Error::InvalidInput`] if `a` and `b` differ in length or are empty; launch errors.
pub fn dot(
    kernels: &Module,
    a: &(impl InputData<f32> + ?Sized),
    b: &(impl InputData<f32> + ?Sized),
) -> Result<f32> {
    const OP: &str = "dot";
    check_not_empty(OP, "a", a.len())?;
    check_len(OP, "b", b.len(), a.len(), "the length of a")?;
    let blocks = grid_stride_blocks(kernels, a.len(), THREADS_1D).min(MAX_PARTIALS);
    let device = kernels.device();
    let mut partial = device.alloc_zeroed::<f32>(blocks as usize)?;
    launch!(kernels, dot_partial[blocks, THREADS_1D](a, b, &mut partial))?;
    sum_of_partials(kernels, &partial)
}

/// `Σ x[i]` in f32, in two passes of [`sum_partial`] (one partial sum per block, then one block
/// sums those): the fast sum; [`crate::ops::statistics`] gives it in f64 with the other moments.
///
/// # Errors
/// [`crate::Error::InvalidInput`] if `x` is empty; launch errors.
pub fn sum(kernels: &Module, x: &(impl InputData<f32> + ?Sized)) -> Result<f32> {
    const OP: &str = "sum";
    check_not_empty(OP, "x", x.len())?;
    let blocks = grid_stride_blocks(kernels, x.len(), THREADS_1D).min(MAX_PARTIALS);
    let device = kernels.device();
    let mut partial = device.alloc_zeroed::<f32>(blocks as usize)?;
    launch!(kernels, sum_partial[blocks, THREADS_1D](x, &mut partial))?;
    sum_of_partials(kernels, &partial)
}

/// The second pass of [`dot`] and [`sum`]: one block of [`sum_partial`] over the first pass's
/// per-block sums, read back.
fn sum_of_partials(kernels: &Module, partial: &DeviceBuffer<f32>) -> Result<f32> {
    let mut total = kernels.device().alloc_zeroed::<f32>(1)?;
    let threads = reduce_threads(partial.len() as u32);
    launch!(kernels, sum_partial[1, threads](partial, &mut total))?;
    Ok(total.to_vec()?[0])
}
