//! The kernel library, ready to call: one function per workload that checks its inputs, picks a
//! launch shape for the device and launches the kernels of [`crate::kernels`] on it.
//!
//! Every function takes the [`Module`] of [`crate::KERNELS`] loaded on a device (GPU or CPU
//! executor), inputs as [`InputData`](crate::InputData) (host slices, copied to a GPU for the call, or
//! [`DeviceBuffer`](crate::DeviceBuffer)s, used in place) and outputs as [`OutputData`](crate::OutputData). Inputs
//! that do not fit together are an [`Error::InvalidInput`] before anything runs.
//!
//! ```
//! use oxicuda::{ops, Device};
//! let kernels = Device::cpu().load(&oxicuda::KERNELS)?;
//! let a = vec![1.0f32, 2.0, 3.0];
//! let b = vec![4.0f32, 5.0, 6.0];
//! assert_eq!(ops::dot(&kernels, &a, &b)?, 32.0);
//! # Ok::<(), oxicuda::Error>(())
//! ```

mod finance;
mod monte_carlo;
mod reduce;

pub use finance::{black_scholes, european_option_monte_carlo, OptionEstimates, OptionParams};
pub use monte_carlo::{monte_carlo_pi, Estimate};
pub use reduce::dot;

use crate::{Error, Module, Result};

/// Threads per block of the 1D launches here: a multiple of the warp size that fills an SM well.
const THREADS_1D: u32 = 256;

/// Blocks for a grid-stride kernel over `n` elements: enough to fill the device (a few blocks per
/// SM or worker thread), never more than the elements need.
fn grid_stride_blocks(kernels: &Module, n: usize, threads: u32) -> u32 {
    let fill = kernels.device().properties().multiprocessors.max(1) * 8;
    let needed = n.div_ceil(threads as usize).max(1);
    fill.min(u32::try_from(needed).unwrap_or(u32::MAX))
}

/// `Ok` if `len == expected`, else [`Error::InvalidInput`] naming `what`.
fn check_len(op: &'static str, what: &str, len: usize, expected: usize, why: &str) -> Result<()> {
    if len == expected {
        Ok(())
    } else {
        Err(Error::InvalidInput {
            op,
            detail: format!("{what} has {len} elements but {why} needs {expected}"),
        })
    }
}

/// [`Error::InvalidInput`] unless `n > 0`.
fn check_not_empty(op: &'static str, what: &str, n: usize) -> Result<()> {
    if n == 0 {
        return Err(Error::InvalidInput {
            op,
            detail: format!("{what} is empty"),
        });
    }
    Ok(())
}
