//! The seed's workloads as benchmarks, shared by the main job (`ferrocuda run`) and the criterion
//! benches: for each, fixed inputs, the plain single-threaded loop a Rust programmer would write,
//! a hand-written rayon version, the kernels through [`crate::ops`] on any device, and a check of
//! every result against an independent reference before any time is reported.
//!
//! ```
//! use ferrocuda::workloads::{self, Scale};
//! use ferrocuda::Device;
//!
//! let kernels = Device::cpu().load(&ferrocuda::KERNELS)?;
//! // The list costs nothing: only the workload built draws its inputs.
//! let recipes = workloads::all(Scale::Tiny);
//! let mut dot = recipes.iter().find(|r| r.name() == "dot product").unwrap().build();
//! dot.run_loop();
//! dot.check_loop().unwrap();
//! let mut on_cpu = dot.on_device(&kernels)?;
//! on_cpu.run()?;
//! on_cpu.check()?.unwrap();
//! # Ok::<(), ferrocuda::Error>(())
//! ```

mod convolution;
pub mod cublas;
pub mod cuda_c;
mod dot;
mod finance;
mod group_by;
mod inputs;
mod matmul;
mod matmul_tensor;
mod recipe;
mod statistics;
mod streamed;
mod transpose;
mod vector_add;
mod workload;

pub use inputs::Verdict;
pub use recipe::{all, matmul_variants, Recipe};
pub use streamed::{
    run_streamed, run_streamed_devices, streamed_size, SpreadRun, Streamed, StreamedDevices,
    StreamedRun,
};
pub use workload::{DeviceRun, Scale, Work, Workload};
