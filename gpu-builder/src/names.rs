//! The names the other layers share: rustc's GPU target and the environment variables the builder
//! reads. They sit at the bottom so the error messages (`error`) can name them without importing
//! the build itself (`builder`).

/// rustc's target for NVIDIA GPUs: its assembly output is PTX.
pub const NVPTX_TARGET: &str = "nvptx64-nvidia-cuda";

/// Set (to anything but empty or `0`) to put the nested cargo's command line and whole output
/// into a failed build's message; by default they are only written to the build log
/// ([`BuildError::CargoFailed`](crate::BuildError::CargoFailed)'s `log_path`).
pub const BUILD_VERBOSE_ENV: &str = "FERROCUDA_BUILD_VERBOSE";

/// Every environment variable the builder reads, so a build script can ask cargo to rerun when
/// one of them changes.
pub const ENV_VARS_READ: &[&str] = &[
    "FERROCUDA_KERNEL_RUSTC",
    "RUSTC",
    "CARGO",
    "OUT_DIR",
    "PATH",
    "FERROCUDA_PTXAS",
    "CUDA_HOME",
    "CUDA_PATH",
    "DOCS_RS",
    "FERROCUDA_BUILD_VERBOSE",
    "FERROCUDA_NO_FMA_WARNING",
];
