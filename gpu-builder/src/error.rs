//! The one error type of the crate: every message says what failed and what to do about it,
//! because a build script's user only sees the text.

use std::io;
use std::path::PathBuf;

use crate::toolchain::{no_toolchain_message, TriedRustc};

/// Why building or checking the kernel PTX failed.
#[derive(thiserror::Error, Debug)]
pub enum BuildError {
    /// No rustc with the standard library's source was found, or `FERROCUDA_KERNEL_RUSTC` names an
    /// unusable one. The message lists every rustc tried and the commands that fix it.
    #[error("{}", no_toolchain_message(.tried))]
    NoKernelToolchain {
        /// Each rustc tried, in order, with why it did not qualify.
        tried: Vec<TriedRustc>,
    },

    /// The requested architecture is not of the form `sm_XY` (optionally `sm_XYa`/`sm_XYf`).
    #[error("invalid GPU architecture {arch:?}: expected `sm_` and a number, e.g. sm_70, sm_80, sm_90 or sm_90a")]
    InvalidArch {
        /// What was asked for.
        arch: String,
    },

    /// The kernel crate directory has no `Cargo.toml`.
    #[error("kernel crate not found: {path} does not exist")]
    ManifestNotFound {
        /// The missing manifest.
        path: PathBuf,
    },

    /// A program (cargo, ptxas) could not be started at all.
    #[error("could not run `{program}`: {source}")]
    Spawn {
        /// The program that did not start.
        program: String,
        /// The operating system's reason.
        source: io::Error,
    },

    /// The nested cargo build of the kernel crate failed; `stderr` holds rustc's diagnostics.
    #[error("building the kernel crate to PTX failed.\ncommand: {command}\n\n{stderr}")]
    CargoFailed {
        /// The command line that was run (environment: `RUSTC=<kernel rustc> RUSTC_BOOTSTRAP=1`).
        command: String,
        /// Everything cargo and rustc wrote to stderr.
        stderr: String,
    },

    /// Cargo reported success but the expected PTX file could not be located.
    #[error("the kernel build finished but its PTX was not found: {reason}")]
    PtxNotFound {
        /// What was looked for, and where.
        reason: String,
    },

    /// The PTX exists but is not what was asked for (wrong `.target`, no kernels).
    #[error("the PTX in {path} is not usable: {reason}")]
    InvalidPtx {
        /// The PTX file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },

    /// [`PtxasMode::Require`](crate::PtxasMode::Require) was given but no ptxas supporting the
    /// architecture was found.
    #[error(
        "ptxas is required but no ptxas that supports {arch} was found.\ntried:\n{}\n\
         Install one: `pip install nvidia-cuda-nvcc-cu12` (CUDA 12.x, sm_70 and newer) or \
         `pip install nvidia-cuda-nvcc` (CUDA 13, sm_75 and newer), or a CUDA toolkit; \
         or set FERROCUDA_PTXAS=/path/to/ptxas.",
        .tried.iter().map(|t| format!("  - {t}")).collect::<Vec<_>>().join("\n")
    )]
    PtxasNotFound {
        /// The architecture that needed a ptxas.
        arch: String,
        /// Each ptxas looked at, with why it was not used.
        tried: Vec<String>,
    },

    /// ptxas rejected the PTX: the driver's JIT would reject it too.
    #[error("ptxas rejected the PTX for {arch}.\ncommand: {command}\n\n{stderr}")]
    PtxasFailed {
        /// The architecture assembled for.
        arch: String,
        /// The command line that was run.
        command: String,
        /// Everything ptxas printed.
        stderr: String,
    },

    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The operating system's reason.
        source: io::Error,
    },
}

impl BuildError {
    /// Wraps an I/O error with the path it concerns.
    pub(crate) fn io(path: impl Into<PathBuf>, source: io::Error) -> Self {
        BuildError::Io {
            path: path.into(),
            source,
        }
    }
}
