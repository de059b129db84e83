//! ferrocuda: GPU kernels written in Rust.
//!
//! Write a kernel as a plain Rust function with `#[kernel]` (crate `ferrocuda-std`), build it to PTX
//! ahead of time in `build.rs` (crate `ferrocuda-builder`), and launch it Numba style with `[blocks,
//! threads]` on a CUDA GPU, or on the CPU executor when there is none:
//!
//! ```no_run
//! use ferrocuda::{kernels::vector_add, launch, Device};
//!
//! # fn main() -> ferrocuda::Result<()> {
//! let device = Device::best().device;
//! let kernels = device.load(&ferrocuda::KERNELS)?;
//! let n = 1_000_000;
//! let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
//! let b = vec![1.0f32; n];
//! let mut out = vec![0.0f32; n];
//! let threads = 256;
//! let blocks = n.div_ceil(threads) as u32;
//! launch!(kernels, vector_add[blocks, threads as u32](&a, &b, &mut out))?;
//! assert_eq!(out[10], 11.0);
//! # Ok(())
//! # }
//! ```
//!
//! A launch whose arguments do not match the kernel's parameters does not compile: here `f64`
//! buffers for a kernel of `f32`,
//!
//! ```compile_fail,E0277
//! use ferrocuda::{kernels::vector_add, launch, Device};
//! let kernels = Device::cpu().load(&ferrocuda::KERNELS).unwrap();
//! let (a, b, mut out) = (vec![1.0f64; 4], vec![1.0f64; 4], vec![0.0f64; 4]);
//! launch!(kernels, vector_add[1, 4](&a, &b, &mut out)).unwrap();
//! ```
//!
//! or an input where the kernel has an output:
//!
//! ```compile_fail,E0277
//! use ferrocuda::{kernels::vector_add, launch, Device};
//! let kernels = Device::cpu().load(&ferrocuda::KERNELS).unwrap();
//! let (a, b, out) = (vec![1.0f32; 4], vec![1.0f32; 4], vec![0.0f32; 4]);
//! launch!(kernels, vector_add[1, 4](&a, &b, &out)).unwrap();
//! ```
//!
//! while the matching launch compiles and runs:
//!
//! ```
//! use ferrocuda::{kernels::vector_add, launch, Device};
//! let kernels = Device::cpu().load(&ferrocuda::KERNELS).unwrap();
//! let (a, b, mut out) = (vec![1.0f32; 4], vec![1.0f32; 4], vec![0.0f32; 4]);
//! launch!(kernels, vector_add[1, 4](&a, &b, &mut out)).unwrap();
//! assert_eq!(out, [2.0; 4]);
//! ```
//!
//! This crate re-exports the host API (`ferrocuda-host`), the kernel library (`ferrocuda-kernels`, as
//! [`kernels`]) and its PTX ([`KERNELS`]). [`ops`] calls those kernels with checked inputs and a
//! launch shape chosen for the device (`ops::matmul`, `ops::statistics`, `ops::group_by`, ...);
//! [`workloads`] are the benchmarks of the main job (`ferrocuda run`) and the criterion benches.

#![warn(missing_docs)]

#[cfg(feature = "criterion")]
pub mod bench;
pub mod ops;
pub mod profile;
pub mod workloads;

pub use ferrocuda_host::*;
pub use ferrocuda_kernels as kernels;
pub use ferrocuda_kernels_tc as tensor_kernels;

/// The PTX of [`kernels`], built by `build.rs` for sm_70 (the driver JIT-compiles it for newer
/// GPUs).
pub static KERNELS: Ptx = Ptx::new(
    "ferrocuda-kernels",
    include_str!(env!("FERROCUDA_KERNELS_PTX")),
);

/// The PTX of [`tensor_kernels`] (the tensor-core kernels: `mma.sync`, `ldmatrix`, `cp.async`),
/// built by `build.rs` for sm_80, a module apart from [`KERNELS`] so that those still load on
/// sm_70. The tensor-core ops ([`ops::matmul_tensor`], [`ops::matmul_tf32`]) take it loaded;
/// load it only when you call them: on a GPU older than sm_80 loading it is
/// [`Error::GpuTooOld`], before any launch.
pub static TENSOR_KERNELS: Ptx = Ptx::new(
    "ferrocuda-kernels-tc",
    include_str!(env!("FERROCUDA_KERNELS_TC_PTX")),
);

/// ptxas's report for [`TENSOR_KERNELS`], or why ptxas did not run at build time.
pub const TENSOR_KERNELS_PTXAS_REPORT: &str =
    include_str!(env!("FERROCUDA_KERNELS_TC_PTXAS_REPORT"));

/// ptxas's report for [`KERNELS`] (registers, shared memory, spills per kernel, and which ptxas),
/// or why ptxas did not run at build time.
pub const KERNELS_PTXAS_REPORT: &str = include_str!(env!("FERROCUDA_KERNELS_PTXAS_REPORT"));

/// The rustc that compiled [`KERNELS`]: its version and path.
pub const KERNEL_TOOLCHAIN: &str = concat!(
    env!("FERROCUDA_KERNEL_RUSTC_VERSION"),
    " (",
    env!("FERROCUDA_KERNEL_RUSTC"),
    ")"
);

/// How `build.rs` built [`KERNELS`]: what `ferrocuda doctor` reports.
pub const KERNEL_BUILD: KernelBuild = KernelBuild {
    rustc: env!("FERROCUDA_KERNEL_RUSTC"),
    rustc_version: env!("FERROCUDA_KERNEL_RUSTC_VERSION"),
    toolchain_source: env!("FERROCUDA_KERNEL_TOOLCHAIN_SOURCE"),
    arch: env!("FERROCUDA_KERNEL_ARCH"),
    ptxas: if env!("FERROCUDA_KERNEL_PTXAS_PATH").is_empty() {
        None
    } else {
        Some(PtxasUsed {
            version: env!("FERROCUDA_KERNEL_PTXAS_VERSION"),
            path: env!("FERROCUDA_KERNEL_PTXAS_PATH"),
        })
    },
};

/// The kernel toolchain a build used (see [`KERNEL_BUILD`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelBuild {
    /// The rustc that compiled the kernels.
    pub rustc: &'static str,
    /// Its `rustc -V` line.
    pub rustc_version: &'static str,
    /// How ferrocuda-builder found it: `FERROCUDA_KERNEL_RUSTC`, the active toolchain, or Debian's
    /// rustc-web.
    pub toolchain_source: &'static str,
    /// The GPU architecture the PTX was built for, e.g. `sm_70`.
    pub arch: &'static str,
    /// The ptxas that checked the PTX, or `None` if none was found ([`KERNELS_PTXAS_REPORT`]
    /// says where it looked).
    pub ptxas: Option<PtxasUsed>,
}

/// A ptxas that checked the PTX at build time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PtxasUsed {
    /// Its CUDA release, e.g. `12.9`.
    pub version: &'static str,
    /// Its path.
    pub path: &'static str,
}
