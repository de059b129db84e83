//! The kernel library, ready to call: one function per workload that checks its inputs, picks a
//! launch shape for the device and launches the kernels of [`crate::kernels`] on it.
//!
//! Every function takes the [`Module`] of [`crate::KERNELS`] loaded on a device (GPU or CPU
//! executor) (the tensor-core ops [`matmul_tensor`] and [`matmul_tf32`]: of
//! [`crate::TENSOR_KERNELS`], built for sm_80), inputs as [`InputData`](crate::InputData) (host slices, copied to a GPU for the
//! call, or [`DeviceBuffer`](crate::DeviceBuffer)s, used in place) and outputs as
//! [`OutputData`](crate::OutputData), or returns its results (values, or device buffers as
//! [`group_by`] does). Inputs that do not fit together are an [`Error::InvalidInput`] before
//! anything runs.
//!
//! ```
//! use ferrocuda::{ops, Device};
//! let kernels = Device::cpu().load(&ferrocuda::KERNELS)?;
//! let a = vec![1.0f32, 2.0, 3.0];
//! let b = vec![4.0f32, 5.0, 6.0];
//! assert_eq!(ops::dot(&kernels, &a, &b)?, 32.0);
//! # Ok::<(), ferrocuda::Error>(())
//! ```

mod convolution;
mod element;
mod finance;
mod group_by;
mod matmul;
mod matmul_tensor;
mod monte_carlo;
mod pipeline;
mod reduce;
mod statistics;
mod transpose;

pub use convolution::{convolve_2d, Filter, MAX_FILTER_RADIUS};
pub use element::Element;
pub use finance::{black_scholes, european_option_monte_carlo, OptionEstimates, OptionParams};
pub use group_by::{group_by, group_by_shared_max_keys, GroupStats};
pub use matmul::{matmul, Matmul, MatmulShape};
pub use matmul_tensor::{matmul_tensor, matmul_tf32, TensorInput};
pub use monte_carlo::{monte_carlo_pi, Estimate};
pub use pipeline::{
    Chunk, DeviceWork, Pipeline, Span, SpanKind, Timeline, DEFAULT_STREAMS, MAX_STREAMS,
};
pub use reduce::{dot, sum};
pub use statistics::{statistics, Statistics};
pub use transpose::{transpose, Transpose};

use crate::{Error, Module, Result};

/// Threads per block of the 1D launches here: a multiple of the warp size that fills an SM well.
const THREADS_1D: u32 = 256;

/// Threads for one block that reduces `values` partial results: a whole number of warps, at most
/// a full block, so that a second pass over a few partials does not wake a thousand threads.
fn reduce_threads(values: u32) -> u32 {
    values.next_multiple_of(32).clamp(32, 1024)
}

/// Blocks for a grid-stride kernel over `n` elements: enough to fill the device, never more than
/// the elements need. A GPU gets 8 blocks per SM, to hide memory latency; the CPU executor 2 per
/// worker thread, since every block of a cooperative kernel costs it a coroutine per thread.
fn grid_stride_blocks(kernels: &Module, n: usize, threads: u32) -> u32 {
    let device = kernels.device();
    let per_unit = if device.is_gpu() { 8 } else { 2 };
    let fill = device.properties().multiprocessors.max(1) * per_unit;
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

/// `a · b`, or [`Error::InvalidInput`] naming `what` if it overflows `usize`.
fn checked_product(op: &'static str, what: &str, a: usize, b: usize) -> Result<usize> {
    a.checked_mul(b).ok_or_else(|| Error::InvalidInput {
        op,
        detail: format!("{what} = {a} × {b} overflows usize"),
    })
}

/// `value` as the `u32` a kernel takes, or [`Error::InvalidInput`] naming `what`.
fn to_u32(op: &'static str, what: &str, value: usize) -> Result<u32> {
    u32::try_from(value).map_err(|_| Error::InvalidInput {
        op,
        detail: format!(
            "{what} = {value} is more than the kernels' limit of {}",
            u32::MAX
        ),
    })
}

/// The grid of a 2D launch whose blocks each cover `tile.0` columns (x) and `tile.1` rows (y)
/// of a `cols × rows` domain, `(⌈cols/tile.0⌉, ⌈rows/tile.1⌉)`, or [`Error::InvalidInput`] if
/// that is more blocks than the device's grid allows (65,535 in y on CUDA GPUs). `cols` and
/// `rows` come with their names for the message, e.g. `(n, "columns")`.
fn grid_2d(
    op: &'static str,
    kernels: &Module,
    cols: (usize, &str),
    rows: (usize, &str),
    tile: (usize, usize),
) -> Result<(u32, u32)> {
    let max = kernels.device().properties().max_grid_dim;
    let x = cols.0.div_ceil(tile.0);
    let y = rows.0.div_ceil(tile.1);
    for ((count, what), side, blocks, limit, axis) in
        [(cols, tile.0, x, max.x, "x"), (rows, tile.1, y, max.y, "y")]
    {
        if blocks > limit as usize {
            return Err(Error::InvalidInput {
                op,
                detail: format!(
                    "{count} {what} need {blocks} blocks of {side} in {axis}, more than the \
                     device's limit of {limit}"
                ),
            });
        }
    }
    Ok((x as u32, y as u32))
}
