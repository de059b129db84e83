//! Descriptive statistics: count, sum, mean, variance, min and max in one read of the data.

use super::checks::check_not_empty;
use super::element::Element;
use super::launch::{grid_stride_blocks, THREADS_1D};
use crate::kernels::statistics::STATE_LEN;
#[cfg(doc)]
use crate::kernels::statistics::{statistics_merge, statistics_partial};
use crate::{launch, InputData, Module, Result};

/// Most blocks of the first pass: the second pass merges their states with one block of this
/// many threads.
const MAX_PARTIALS: u32 = 1024;

/// Count, sum, mean, variance, min and max of a set of `T` values (f32 or f64), from
/// [`statistics`].
///
/// The moments are computed in f64, per thread as sums of differences from one of its values and
/// across threads with Chan et al.'s merge, so the variance is accurate even for data far from
/// zero (see [`crate::kernels::statistics`]).
///
/// NaN values make `sum`, `mean` and the variances NaN; `min` and `max` ignore NaN (as
/// [`f32::min`]) and are NaN only if every value is NaN. Infinite values make `sum` and `mean`
/// infinite (NaN if both `∞` and `−∞` occur, as [`crate::ops::sum`] gives) and the variances NaN,
/// what the two-pass f64 formulas give (`∞ − ∞` in `Σ(x − mean)²`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Statistics<T = f32> {
    /// Number of values (NaN included).
    pub count: usize,
    /// Their sum (`mean · count`).
    pub sum: f64,
    /// Their mean.
    pub mean: f64,
    /// Population variance `Σ(x − mean)² / count`.
    pub variance: f64,
    /// The smallest value.
    pub min: T,
    /// The largest value.
    pub max: T,
}

impl<T> Statistics<T> {
    /// Sample (Bessel-corrected) variance `Σ(x − mean)² / (count − 1)`: the unbiased estimate of
    /// the variance of the distribution the values were drawn from. NaN for one value.
    pub fn sample_variance(&self) -> f64 {
        if self.count < 2 {
            return f64::NAN;
        }
        self.variance * (self.count as f64 / (self.count - 1) as f64)
    }

    /// Population standard deviation, `√variance`.
    pub fn std_dev(&self) -> f64 {
        self.variance.sqrt()
    }

    /// Sample standard deviation, `√sample_variance`. NaN for one value.
    pub fn sample_std_dev(&self) -> f64 {
        self.sample_variance().sqrt()
    }
}

/// The [`Statistics`] of `x` in two launches: [`statistics_partial`] reads `x` once (grid-stride)
/// and writes one state (count, mean, `M2`) per block, [`statistics_merge`] merges those with one block. The
/// result does not depend on the order the blocks run in.
///
/// ```
/// use ferrocuda::{ops, Device};
/// let kernels = Device::cpu().load(&ferrocuda::KERNELS)?;
/// let stats = ops::statistics(&kernels, &[2.0f32, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0])?;
/// assert_eq!((stats.count, stats.min, stats.max), (8, 2.0, 9.0));
/// assert!((stats.mean - 5.0).abs() < 1e-12 && (stats.variance - 4.0).abs() < 1e-12);
/// assert!((stats.sample_variance() - 32.0 / 7.0).abs() < 1e-12);
/// // f64 data: min and max are f64 values (this one is not an f32).
/// let stats = ops::statistics(&kernels, &[0.1f64, 0.2, 0.3])?;
/// assert_eq!((stats.min, stats.max), (0.1, 0.3));
/// # Ok::<(), ferrocuda::Error>(())
/// ```
///
/// # Errors
/// [`crate::Error::InvalidInput`] if `x` is empty (no mean, variance, min or max); launch errors.
pub fn statistics<T: Element>(
    kernels: &Module,
    x: &(impl InputData<T> + ?Sized),
) -> Result<Statistics<T>> {
    const OP: &str = "statistics";
    check_not_empty(OP, "x", x.len())?;
    let blocks = grid_stride_blocks(kernels, x.len(), THREADS_1D).min(MAX_PARTIALS);
    let device = kernels.device();
    let mut partial = device.alloc_zeroed::<f64>(blocks as usize * STATE_LEN)?;
    launch!(kernels, T::statistics_partial[blocks, THREADS_1D](x, &mut partial))?;
    let mut total = device.alloc_zeroed::<f64>(STATE_LEN)?;
    launch!(kernels, T::statistics_merge[1, MAX_PARTIALS](&partial, &mut total))?;
    let [count, mean, m2, min, max]: [f64; STATE_LEN] = total
        .to_vec()?
        .try_into()
        .expect("statistics_merge writes STATE_LEN values");
    let count = count as usize;
    // Min and max start at +∞ and −∞ and only non-NaN values replace them; min > max is left
    // only when every value was NaN.
    let (min, max) = if min > max {
        (T::from_f64(f64::NAN), T::from_f64(f64::NAN))
    } else {
        (T::from_f64(min), T::from_f64(max))
    };
    Ok(Statistics {
        count,
        sum: mean * count as f64,
        mean,
        variance: m2 / count as f64,
        min,
        max,
    })
}
