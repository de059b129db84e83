//! Monte Carlo estimates: π from random points of the unit square.

use super::launch::{grid_stride_blocks, THREADS_1D};
use crate::kernels::monte_carlo::monte_carlo_pi as pi_kernel;
use crate::{launch, Error, Module, Result};

/// A Monte Carlo estimate: the sample mean and its standard error (the sample standard
/// deviation over √samples). With many samples the exact value lies within 2 standard errors of
/// `value` about 95% of the time, within 4 virtually always.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    /// The estimate.
    pub value: f64,
    /// Its standard error.
    pub std_error: f64,
}

/// Blocks for a grid-stride kernel over `units` units of work (`u64`, more than `usize` may hold
/// on a 32-bit host).
pub(super) fn blocks_for(kernels: &Module, units: u64) -> u32 {
    grid_stride_blocks(
        kernels,
        usize::try_from(units).unwrap_or(usize::MAX),
        THREADS_1D,
    )
}

/// [`Error::InvalidInput`] unless `samples > 0`.
pub(super) fn check_samples(op: &'static str, samples: u64) -> Result<()> {
    if samples == 0 {
        return Err(Error::InvalidInput {
            op,
            detail: "samples is 0; at least 1 is needed".to_string(),
        });
    }
    Ok(())
}

/// π estimated from `samples` random points of the unit square: 4 × the fraction that falls in
/// the quarter disk x² + y² ≤ 1, with its standard error 4·√(p(1 - p)/samples) (p the fraction).
///
/// The points come from Philox4x32-10 keyed by `seed` ([`ferrocuda_std::random`]), point `j` from
/// counter `j`: the same `seed` gives the same estimate on any device and launch shape, bit for
/// bit. Each point is the centre of one of 2^24 × 2^24 cells and is tested exactly in integers
/// ([`in_quarter_disk`](crate::kernels::monte_carlo::in_quarter_disk)), so the estimate's bias
/// is far below its standard error for any feasible number of samples. One launch of
/// [`monte_carlo_pi`](crate::kernels::monte_carlo::monte_carlo_pi) (grid-stride, one atomic add
/// per block).
///
/// ```
/// use ferrocuda::{ops, Device};
/// let kernels = Device::cpu().load(&ferrocuda::KERNELS)?;
/// let pi = ops::monte_carlo_pi(&kernels, 100_000, 7)?;
/// assert!((pi.value - std::f64::consts::PI).abs() < 5.0 * pi.std_error);
/// # Ok::<(), ferrocuda::Error>(())
/// ```
///
/// # Errors
/// [`Error::InvalidInput`] if `samples` is 0; launch errors.
pub fn monte_carlo_pi(kernels: &Module, samples: u64, seed: u64) -> Result<Estimate> {
    const OP: &str = "monte_carlo_pi";
    check_samples(OP, samples)?;
    let blocks = blocks_for(kernels, samples.div_ceil(2));
    let mut hits = kernels.device().alloc_zeroed::<u64>(1)?;
    launch!(kernels, pi_kernel[blocks, THREADS_1D](samples, seed, &mut hits))?;
    let hits = hits.to_vec()?[0];
    let n = samples as f64;
    let p = hits as f64 / n;
    Ok(Estimate {
        value: 4.0 * p,
        std_error: 4.0 * (p * (1.0 - p) / n).sqrt(),
    })
}
