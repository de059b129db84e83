//! CUDA C compiled at run time by NVRTC, loaded like the driver (only when present): what the
//! main job's "CUDA C" column runs beside ferrocuda's kernels.
//!
//! NVRTC needs no GPU. cudarc opens `libnvrtc.so` (or `.so.12`, ...) through the dynamic
//! linker's search path; [`NVRTC_ENV`] names a library file to use instead (e.g. pip's
//! `nvidia-cuda-nvrtc-cu12`), which is opened first, so that the dynamic linker hands that one
//! out under its soname.

use crate::ptx::Ptx;
use cudarc::nvrtc::{compile_ptx_with_opts, CompileError, CompileOptions};
use std::sync::OnceLock;

/// The environment variable naming a `libnvrtc.so` file to use.
pub const NVRTC_ENV: &str = "FERROCUDA_NVRTC";

/// Why CUDA C could not be compiled.
#[derive(Debug, Clone, thiserror::Error)]
pub enum NvrtcError {
    /// No NVRTC library could be opened.
    #[error("NVRTC not found: {0}")]
    Missing(String),
    /// NVRTC rejected the source.
    #[error("NVRTC could not compile {name}: {log}")]
    Compile {
        /// The program's name.
        name: String,
        /// NVRTC's log (or error).
        log: String,
    },
}

/// Whether NVRTC can be loaded, and if not why; checked once per process.
pub fn nvrtc_available() -> Result<(), NvrtcError> {
    static STATUS: OnceLock<Result<(), NvrtcError>> = OnceLock::new();
    STATUS
        .get_or_init(|| {
            if let Ok(path) = std::env::var(NVRTC_ENV) {
                // SAFETY: opening a shared library runs its initialisers; NVRTC's have no
                // preconditions. The handle is leaked on purpose: it must stay loaded for as
                // long as cudarc (which opens it again by soname) may call into it.
                match unsafe { libloading::Library::new(&path) } {
                    Ok(library) => std::mem::forget(library),
                    Err(error) => {
                        return Err(NvrtcError::Missing(format!("{NVRTC_ENV}={path}: {error}")))
                    }
                }
            }
            // SAFETY: tries to open the library by its usual names, nothing else; cudarc's
            // lazy loader would panic instead of returning an error.
            if unsafe { cudarc::nvrtc::sys::is_culib_present() } {
                Ok(())
            } else {
                Err(NvrtcError::Missing(format!(
                    "libnvrtc.so (install the CUDA toolkit's NVRTC or pip's nvidia-cuda-nvrtc-cu12, or set {NVRTC_ENV} to the library)"
                )))
            }
        })
        .clone()
}

/// Compiles the CUDA C `source` (called `name` in messages) to PTX for `compute_XY` (e.g.
/// `(9, 0)`), with NVRTC's default optimisation and no fast math; the result stays alive for
/// the whole process (a module is loaded from a `&'static Ptx`).
///
/// # Errors
/// [`NvrtcError::Missing`] without NVRTC, [`NvrtcError::Compile`] with its log.
pub fn compile_cuda_c(
    name: &'static str,
    source: &str,
    compute: (u32, u32),
) -> Result<&'static Ptx, NvrtcError> {
    nvrtc_available()?;
    let options = CompileOptions {
        arch: Some(Box::leak(
            format!("compute_{}{}", compute.0, compute.1).into_boxed_str(),
        )),
        name: Some(name.to_string()),
        ..Default::default()
    };
    let ptx = compile_ptx_with_opts(source, options).map_err(|error| NvrtcError::Compile {
        name: name.to_string(),
        log: match error {
            CompileError::CompileError { log, .. } => log.to_string_lossy().into_owned(),
            other => format!("{other:?}"),
        },
    })?;
    let text: &'static str = Box::leak(ptx.to_src().into_boxed_str());
    Ok(Box::leak(Box::new(Ptx::new(name, text))))
}
