//! Build a Rust kernel crate to PTX from a build script, and check it with NVIDIA's `ptxas`.
//!
//! This is ferrocuda's equivalent of Rust-CUDA's `cuda_builder`, for rustc's stock
//! `nvptx64-nvidia-cuda` target. [`PtxBuilder::build`] runs a nested
//! `cargo rustc --target nvptx64-nvidia-cuda -Zbuild-std=core` of the kernel crate (a `no_std`
//! crate of `extern "ptx-kernel" fn`s), copies the LTO-merged module to a stable
//! `<target_dir>/<crate_name>.ptx`, and, when `ptxas` is available, assembles it to report each
//! kernel's registers, shared memory, stack and spills.
//!
//! Why the pieces are there:
//! - `core` must be compiled from source for the NVPTX target, so the kernel build needs a rustc
//!   whose sysroot holds the standard library's source. [`find_kernel_toolchain`] finds one
//!   (`FERROCUDA_KERNEL_RUSTC`, the active toolchain, or Debian's `/usr/bin/rustc` from
//!   `rustc-web` + `rust-web-src`) and says exactly what to install when there is none.
//! - The nested cargo runs in a small wrapper workspace in the target directory that depends on
//!   the kernel crate by path, so nothing is written into the kernel crate's directory (it may be
//!   cargo's registry cache), and it starts from the outer build's `Cargo.lock` (the first one
//!   above the kernel crate, `OUT_DIR` or `CARGO_MANIFEST_DIR` that lists the kernel crate), so
//!   both builds use the same dependency versions. Its working directory is the kernel crate's,
//!   so the kernel crate's `.cargo/config.toml` applies. [`PtxBuilder::patch_crates_io`] points
//!   it at sources the outer build has and crates.io has not.
//! - A failed build shows each compiler error once: the host build of the kernel crate (which
//!   cargo prints anyway) is checked, and only the errors the GPU build alone reports are shown
//!   in full, with advice where rustc's does not apply to GPU code ([`CargoFailure`]).
//! - PTX that LLVM emits can still be rejected by the driver's JIT; [`assemble`] runs `ptxas` ahead
//!   of time so such errors fail the build, not the first launch.
//! - On docs.rs (`DOCS_RS` set) nothing can be compiled for the GPU and nothing needs to be:
//!   the build returns placeholder PTX ([`BuiltPtx::placeholder`]).
//! - In a build script for x86-64 without FMA on a CPU that has it, one `cargo:warning` says how
//!   to turn it on ([`PtxBuilder::warn_without_fma`], [`should_warn_without_fma`]).
//!
//! # Example `build.rs`
//!
//! ```no_run
//! fn main() {
//!     // Paths are relative to the build script's package (cargo runs build scripts there).
//!     let built = ferrocuda_builder::PtxBuilder::new("../ferrocuda-kernels")
//!         .arch("sm_70")
//!         .build()
//!         .unwrap_or_else(|e| panic!("{e}"));
//!     built.emit_rerun_if_changed();
//!     if let Some(report) = &built.report {
//!         for k in report.kernels.iter().filter(|k| k.spill_store_bytes > 0) {
//!             println!("cargo:warning=kernel {} spills {} bytes", k.name, k.spill_store_bytes);
//!         }
//!     }
//!     // The host crate embeds it with `include_str!(env!("KERNELS_PTX"))`.
//!     println!("cargo:rustc-env=KERNELS_PTX={}", built.ptx_path.display());
//! }
//! ```
//!
//! Environment variables read (all are re-announced by [`BuiltPtx::emit_rerun_if_changed`]):
//! `FERROCUDA_KERNEL_RUSTC`, `RUSTC`, `CARGO`, `OUT_DIR`, `PATH`, `FERROCUDA_PTXAS`, `CUDA_HOME`,
//! `CUDA_PATH`, `DOCS_RS` (docs.rs: build a placeholder, see [`BuiltPtx::placeholder`]),
//! `FERROCUDA_BUILD_VERBOSE` (a failed build's message includes the nested command and log),
//! `FERROCUDA_NO_FMA_WARNING` (no warning about a host build without FMA, see
//! [`PtxBuilder::warn_without_fma`]).

// The crate-level example is a whole build script, so its `fn main` is the point.
#![allow(clippy::needless_doctest_main)]
#![warn(missing_docs)]

// Layers, bottom to top: the shared names, what the toolchain search tried, the error type, the
// system helpers; then the pieces of the build (toolchain search, ptxas and its search, the nested
// cargo, its diagnostics); then what a build produced (`built`) and the build itself (`builder`).
mod build_script;
mod builder;
mod built;
mod diagnostics;
mod error;
mod fma;
mod names;
mod nested;
mod process;
mod ptx_text;
mod ptxas;
mod ptxas_search;
pub mod sass;
mod text_table;
mod toolchain;
mod tried;

pub use builder::{PtxBuilder, PtxasMode};
pub use built::{BuiltPtx, CPU_PATH_WARNING_ENV};
pub use error::{BuildError, CargoFailure};
pub use fma::{should_warn_without_fma, NO_FMA_WARNING_ENV};
pub use names::{BUILD_VERBOSE_ENV, ENV_VARS_READ, NVPTX_TARGET};
pub use nested::{SCRUBBED_ENV, SCRUBBED_ENV_PREFIXES};
pub use ptx_text::cpu_paths;
pub use ptxas::{assemble, assemble_to, parse_ptxas_verbose, KernelResources, Ptxas, PtxasReport};
pub use ptxas_search::find_ptxas;
pub use toolchain::{find_kernel_toolchain, find_kernel_toolchain_in, KernelToolchain};
pub use tried::{ToolchainSource, TriedRustc};
