//! The one error type of the crate: every message says what failed and what to do about it,
//! because a build script's user only sees the text.

use std::fmt;
use std::io;
use std::path::PathBuf;

use crate::names::{BUILD_VERBOSE_ENV, NVPTX_TARGET};
use crate::tried::{no_toolchain_message, TriedRustc};

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

    /// The kernel crate's manifest has no `[package]` name (a virtual workspace manifest?).
    #[error("{manifest} has no `[package]` with a `name`: point ferrocuda-builder at the kernel crate's own directory")]
    NoPackageName {
        /// The kernel crate's Cargo.toml.
        manifest: PathBuf,
    },

    /// The nested cargo build of the kernel crate failed; see [`CargoFailure`] for what the
    /// message shows.
    #[error("{0}")]
    CargoFailed(Box<CargoFailure>),

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

    /// nvdisasm or cuobjdump could not disassemble a cubin.
    #[error("disassembling the machine code failed.\ncommand: {command}\n\n{stderr}")]
    DisassemblerFailed {
        /// The command line that was run.
        command: String,
        /// Everything it printed on stderr.
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

/// A failed PTX build of the kernel crate ([`BuildError::CargoFailed`]).
///
/// Its message shows each error once: errors the host build of the kernel crate reports too
/// (cargo prints those itself) are counted, not repeated; the errors only the PTX build reports
/// are shown in full. The command and whole output are in `log_path`, and in the message too
/// with `FERROCUDA_BUILD_VERBOSE=1`.
#[derive(Debug, Clone)]
pub struct CargoFailure {
    /// The kernel crate's package name.
    pub package: String,
    /// The errors only the PTX build reports, as rustc renders them (with a note where
    /// rustc's own suggestion does not apply to GPU code).
    pub gpu_only_errors: Vec<String>,
    /// How many of the PTX build's errors the host build reports as well.
    pub also_on_host: usize,
    /// Cargo's output when it failed without a rustc error (a dependency that cannot be
    /// resolved, an LLVM crash), progress lines removed; empty otherwise.
    pub other_output: String,
    /// The file holding `command` and `stderr`.
    pub log_path: PathBuf,
    /// The command line that was run (environment: `RUSTC=<kernel rustc> RUSTC_BOOTSTRAP=1`).
    pub command: String,
    /// The nested build's whole log: rustc's rendered diagnostics, then cargo's stderr.
    pub stderr: String,
    /// Whether the message includes `command` and `stderr` (`FERROCUDA_BUILD_VERBOSE`).
    pub verbose: bool,
}

impl fmt::Display for CargoFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let CargoFailure {
            package,
            gpu_only_errors,
            also_on_host,
            other_output,
            log_path,
            command,
            stderr,
            verbose,
        } = self;
        let host = format!(
        "cargo's host build of `{package}` reports them too (`cargo check -p {package}` shows them)"
    );
        let mut text =
            format!("building the kernel crate `{package}` to PTX ({NVPTX_TARGET}) failed");
        if !gpu_only_errors.is_empty() {
            text.push_str(&format!(
                ".\n\nonly the GPU build ({NVPTX_TARGET}) reports these errors:\n\n{}",
                gpu_only_errors.join("\n")
            ));
            if *also_on_host > 0 {
                text.push_str(&format!(
                    "\n{also_on_host} more error(s) not repeated here: {host}.\n"
                ));
            }
        } else if *also_on_host > 0 {
            text.push_str(&format!(
                ": it has {also_on_host} error(s), not repeated here: {host}.\n"
            ));
        } else {
            text.push_str(&format!(".\n\n{}\n", other_output.trim_end()));
        }
        if *verbose {
            text.push_str(&format!("\ncommand: {command}\n\n{stderr}"));
        } else {
            text.push_str(&format!(
            "(the nested cargo's command and whole output: {}; {BUILD_VERBOSE_ENV}=1 prints them here)",
            log_path.display()
        ));
        }
        f.write_str(&text)
    }
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
