//! The kernel library, ready to call: one function per workload that checks its inputs, picks a
//! launch shape for the device and launches the kernels of [`crate::kernels`] on it.
//!
//! Every function takes the [`Module`](crate::Module) of [`crate::KERNELS`] loaded on a device (GPU or CPU
//! executor) (the tensor-core ops [`matmul_tensor`] and [`matmul_tf32`]: of
//! [`crate::TENSOR_KERNELS`], built for sm_80), inputs as [`InputData`](crate::InputData) (host slices, copied to a GPU for the
//! call, or [`DeviceBuffer`](crate::DeviceBuffer)s, used in place) and outputs as
//! [`OutputData`](crate::OutputData), or returns its results (values, or device buffers as
//! [`group_by`] does). Inputs that do not fit together are an [`Error::InvalidInput`](crate::Error::InvalidInput) before
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

mod checks;
mod convolution;
mod element;
mod finance;
mod group_by;
mod launch;
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
