//! Finding and loading the driver library (`libcuda`, or the one `FERROCUDA_LIBCUDA` names), and
//! the questions asked of it before any device is opened.

use crate::error::{Error, Result};
use cudarc::driver::{sys, CudaContext, DriverError};
use std::path::PathBuf;

/// The variable naming a driver library to use instead of the system's `libcuda`, e.g. the PTX
/// emulator's `target/debug/libferrocuda_emu_cuda.so` (docs/emulator.md).
pub const LIBCUDA_ENV: &str = "FERROCUDA_LIBCUDA";

/// The library [`LIBCUDA_ENV`] names, opened once and kept for the process: `None` when the
/// variable is unset, else the path or why it could not be opened. Its soname is `libcuda.so`,
/// so the system's loader answers cudarc's `dlopen("libcuda.so")` with it.
fn chosen_driver() -> Option<&'static Result<PathBuf, String>> {
    static CHOSEN: std::sync::OnceLock<Option<Result<PathBuf, String>>> =
        std::sync::OnceLock::new();
    CHOSEN
        .get_or_init(|| {
            let path = PathBuf::from(std::env::var_os(LIBCUDA_ENV)?);
            // SAFETY: loading runs the library's initialisers; the variable names a CUDA driver
            // library (the emulator's or NVIDIA's), whose initialisers are sound to run.
            Some(match unsafe { libloading::Library::new(&path) } {
                Ok(library) => {
                    // Kept loaded for the process: cudarc's handle to it lives as long.
                    std::mem::forget(library);
                    Ok(path)
                }
                Err(e) => Err(format!(
                    "{LIBCUDA_ENV}={} could not be loaded: {e}",
                    path.display()
                )),
            })
        })
        .as_ref()
}

/// Whether `libcuda` can be loaded. cudarc panics on the first driver call without it, so every
/// entry into the driver is guarded by this.
pub(crate) fn driver_present() -> bool {
    if chosen_driver().is_some_and(|chosen| chosen.is_err()) {
        return false;
    }
    // SAFETY: only tries to `dlopen` the driver library.
    unsafe { sys::is_culib_present() }
}

/// A driver error as text, e.g. `CUDA_ERROR_LAUNCH_FAILED (unspecified launch failure)`. The
/// driver describes it only when it can be loaded: cudarc's `Display` asks it unconditionally,
/// and so would panic without it.
pub(crate) fn describe(error: &DriverError) -> String {
    let description = driver_present()
        .then(|| error.error_string().ok())
        .flatten()
        .map(|text| text.to_string_lossy().into_owned());
    match description {
        Some(text) => format!("{:?} ({text})", error.0),
        None => format!("{:?}", error.0),
    }
}

/// The library names cudarc tries for the driver, in order, as this platform's loader uses them.
pub(crate) fn driver_candidates() -> Vec<String> {
    let mut names = cudarc::get_lib_name_candidates("cuda");
    let mut seen = std::collections::HashSet::new();
    // cudarc also lists Windows-style names; show the ones this platform's loader would use.
    names.retain(|name| {
        (cfg!(windows) || name.starts_with("libcuda.so")) && seen.insert(name.clone())
    });
    if let Some(chosen) = chosen_driver() {
        let path = match chosen {
            Ok(path) => path.display().to_string(),
            Err(why) => why.clone(),
        };
        names.insert(0, path);
    }
    names
}

/// [`Error::NoDriver`], naming the libraries tried.
pub(crate) fn no_driver() -> Error {
    Error::NoDriver {
        detail: format!(
            "libcuda could not be loaded (tried {})",
            driver_candidates().join(", ")
        ),
    }
}

/// The newest CUDA version the driver supports (`cuDriverGetVersion`), e.g. `(13, 0)`.
pub(crate) fn driver_cuda_version() -> Result<(u32, u32)> {
    if !driver_present() {
        return Err(no_driver());
    }
    let mut version: std::ffi::c_int = 0;
    // SAFETY: the driver is present (checked above); the call writes one int.
    unsafe { sys::cuDriverGetVersion(&mut version) }
        .result()
        .map_err(|source| Error::Driver {
            call: "cuDriverGetVersion",
            device: "the driver".into(),
            source,
        })?;
    let version = version.max(0) as u32;
    Ok((version / 1000, version % 1000 / 10))
}

/// The file the driver library was loaded from, read from the process's memory map (Linux);
/// `None` elsewhere or before the driver was loaded.
pub(crate) fn driver_library_path() -> Option<PathBuf> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines()
        .filter_map(|line| line.split_whitespace().nth(5))
        .find(|path| {
            let name = std::path::Path::new(path).file_name();
            let chosen = chosen_driver().and_then(|c| c.as_ref().ok());
            name.and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("libcuda.so"))
                || chosen.is_some_and(|c| c.file_name() == name)
        })
        .map(PathBuf::from)
}

/// How many CUDA devices the driver reports.
pub(crate) fn gpu_count() -> Result<usize> {
    if !driver_present() {
        return Err(no_driver());
    }
    let driver = |call, source| Error::Driver {
        call,
        device: "the driver".into(),
        source,
    };
    cudarc::driver::result::init().map_err(|e| driver("cuInit", e))?;
    let count = CudaContext::device_count().map_err(|e| driver("cuDeviceGetCount", e))?;
    Ok(count.max(0) as usize)
}
