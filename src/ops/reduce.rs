//! Reductions: dot product and sum, of f32 or f64 ([`Element`]).

use super::checks::{check_len, check_not_empty};
use super::element::Element;
use super::launch::{grid_stride_blocks, reduce_threads, THREADS_1D};
#[cfg(doc)]
use crate::kernels::reduce::{dot_partial, sum_partial};
use crate::{launch, DeviceBuffer, InputData, Module, Result};

/// Most blocks of the first pass: the second pass sums the partials with one block, which has at
/// most this many threads.
const MAX_PARTIALS: u32 = 1024;

/// `Σ a[i]·b[i]`, in two passes: [`dot_partial`] writes one partial sum per block (grid-stride),
/// [`sum_partial`] sums those with one block. Each thread accumulates in the element type (one
/// fused multiply-add per element), f32 or f64.
///
/// # Errors
/// [`crate::Error::InvalidInput`] if `a` and `b` differ in length or are empty; launch errors.
pub fn dot<T: Element>(
    kernels: &Module,
    a: &(impl InputData<T> + ?Sized),
    b: &(impl InputData<T> + ?Sized),
) -> Result<T> {
    const OP: &str = "dot";
    check_not_empty(OP, "a", a.len())?;
    check_len(OP, "b", b.len(), a.len(), "the length of a")?;
    let blocks = grid_stride_blocks(kernels, a.len(), THREADS_1D).min(MAX_PARTIALS);
    let device = kernels.device();
    let mut partial = device.alloc_zeroed::<T>(blocks as usize)?;
    launch!(kernels, T::dot_partial[blocks, THREADS_1D](a, b, &mut partial))?;
    sum_of_partials(kernels, &partial)
}

/// `Σ x[i]` in the element type (f32 or f64), in two passes of [`sum_partial`] (one partial sum
/// per block, then one block sums those): the fast sum; [`crate::ops::statistics`] gives it in f64
/// with the other moments.
///
/// ```
/// use ferrocuda::{ops, Device};
/// let kernels = Device::cpu().load(&ferrocuda::KERNELS)?;
/// assert_eq!(ops::sum(&kernels, &[0.5f32, 1.5, 2.0])?, 4.0);
/// // 1 + 2⁻³⁰ is not an f32; in f64 it is.
/// assert_eq!(ops::sum(&kernels, &[1.0f64, 2f64.powi(-30)])?, 1.0 + 2f64.powi(-30));
/// # Ok::<(), ferrocuda::Error>(())
/// ```
///
/// # Errors
/// [`crate::Error::InvalidInput`] if `x` is empty; launch errors.
pub fn sum<T: Element>(kernels: &Module, x: &(impl InputData<T> + ?Sized)) -> Result<T> {
    const OP: &str = "sum";
    check_not_empty(OP, "x", x.len())?;
    let blocks = grid_stride_blocks(kernels, x.len(), THREADS_1D).min(MAX_PARTIALS);
    let device = kernels.device();
    let mut partial = device.alloc_zeroed::<T>(blocks as usize)?;
    launch!(kernels, T::sum_partial[blocks, THREADS_1D](x, &mut partial))?;
    sum_of_partials(kernels, &partial)
}

/// The second pass of [`dot`] and [`sum`]: one block of [`sum_partial`] over the first pass's
/// per-block sums, read back.
fn sum_of_partials<T: Element>(kernels: &Module, partial: &DeviceBuffer<T>) -> Result<T> {
    let mut total = kernels.device().alloc_zeroed::<T>(1)?;
    let threads = reduce_threads(partial.len() as u32);
    launch!(kernels, T::sum_partial[1, threads](partial, &mut total))?;
    Ok(total.to_vec()?[0])
}
