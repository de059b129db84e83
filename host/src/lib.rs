//! Host side of ferrocuda: pick a device, move data, launch kernels.
//!
//! A [`Device`] is a CUDA GPU (through `cudarc`, with the driver loaded at run time) or the CPU
//! executor, which runs every (block, thread) of a launch with the kernel's own Rust source. The
//! same program runs on both:
//!
//! ```ignore
//! use ferrocuda::{launch, Device};
//!
//! let device = Device::best().device;                 // a GPU if there is one, else the CPU
//! let kernels = device.load(&ferrocuda::KERNELS)?;      // the PTX that build.rs embedded
//! let (a, b) = (vec![1.0f32; 1000], vec![2.0f32; 1000]);
//! let mut out = vec![0.0f32; 1000];
//! launch!(kernels, vector_add[4, 256](&a, &b, &mut out))?;  // copies in, runs, copies back
//! ```
//!
//! Every launch is checked before it runs: the kernel is in the PTX, each argument fits its
//! parameter (kind, element size, byte length, alignment), the host's packed arguments
//! match the PTX entry's parameters, lengths declared equal are equal, and the grid, block and
//! shared memory fit the device. Failures are [`Error`]s whose messages say what to do.

#![warn(missing_docs)]

mod args;
mod array;
mod backend;
mod buffer;
mod buffer_slice;
mod constant;
mod cooperative;
mod cpu;
pub mod cpu_options;
mod cuda;
mod device;
mod device_properties;
mod driver;
mod error;
#[cfg(test)]
mod error_tests;
mod event;
mod interop;
mod kernel_handle;
mod kernel_trail;
mod launch;
mod launch_config;
mod loaded;
mod lock;
mod memory_limit;
pub mod memory_meter;
mod module;
#[cfg(feature = "ndarray")]
mod ndarray_args;
pub mod nvrtc;
mod pending;
mod pinned;
pub mod ptx;
mod storage;
mod stream;

pub use args::{InputArg, InputData, KernelArg, KernelArgs, OutputArg, OutputData};
pub use array::{Array2, Array3, ArrayArg, Out2, Out3, OutArrayArg};
pub use buffer::DeviceBuffer;
pub use buffer_slice::{BufferSlice, BufferSliceMut};
pub use cpu_options::{CpuOptions, PrintCapture, CHECKED_ENV};
pub use cuda::LIBCUDA_ENV;
/// The cudarc ferrocuda drives CUDA through, so that a program naming its types
/// (`Device::from_cudarc`, `DeviceBuffer::from_cudarc`, `Stream::from_cudarc`) uses the same
/// version: `ferrocuda_host::cudarc::driver::CudaContext`.
pub use cudarc;
pub use device::{Device, DeviceChoice, DEVICE_ENV};
pub use device_properties::{DeviceKind, DeviceProperties};
pub use driver::DriverInfo;
pub use error::{Error, Result};
pub use event::Event;
pub use ferrocuda_std::abi::{CpuPath, Kernel, KernelInfo};
pub use ferrocuda_std::constant::{ConstElement, ConstTable};
pub use ferrocuda_std::cpu::KernelBug;
pub use ferrocuda_std::Dim3;
pub use ferrocuda_std::{bf16, f16};
pub use kernel_handle::KernelHandle;
pub use launch_config::{DimComponent, LaunchConfig, LaunchDims};
pub use memory_limit::DEVICE_MEMORY_LIMIT_ENV;
pub use module::{Module, PtxCheck};
/// The ndarray whose views convert to kernel arguments (the `ndarray` feature:
/// `Array2::try_from(view)`, `Out2::try_from(view_mut)`), so that a program names one version.
#[cfg(feature = "ndarray")]
pub use ndarray;
pub use pending::Pending;
pub use pinned::PinnedBuffer;
pub use ptx::Ptx;
pub use stream::Stream;
