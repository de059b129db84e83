//! The CUDA backend: a thin layer over `cudarc`'s driver API (loaded at run time), in layers as
//! cudarc's own (sys → result → safe). Each file adds to [`GpuDevice`]:
//!
//! - `cuda/driver_library.rs`: finding and loading the driver library (no device yet);
//! - `cuda/gpu.rs`: the device, its current context and kernel-fault recovery, which every file
//!   below goes through;
//! - `cuda/memory.rs`: device memory and its copies; `cuda/interop.rs`: the program's own
//!   cudarc objects (contexts, `CudaSlice`s);
//! - `cuda/modules.rs`: modules and their functions (and `cuda/modules/constants.rs`);
//! - `cuda/streams.rs`: streams, page-locked memory, asynchronous copies and events;
//! - `cuda/launch.rs`: a launch: staging arguments, packing parameters, `cuLaunchKernel`.

mod driver_library;
mod gpu;
mod interop;
mod launch;
mod memory;
mod modules;
mod streams;

/// What `error_tests.rs` checks the message of.
#[cfg(test)]
pub(crate) use driver_library::no_driver;
pub use driver_library::LIBCUDA_ENV;
pub(crate) use driver_library::{
    describe, driver_candidates, driver_cuda_version, driver_library_path, gpu_count,
};
pub(crate) use gpu::GpuDevice;
pub(crate) use interop::CudarcMemory;
pub(crate) use memory::GpuBytes;
pub(crate) use modules::LoadedModule;
pub(crate) use streams::{GpuEvent, PinnedBytes};
