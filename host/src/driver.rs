//! [`DriverInfo`]: the NVIDIA driver as this process sees it.

use crate::cuda::{driver_candidates, driver_cuda_version, driver_library_path};
use crate::error::Result;
use std::path::PathBuf;

/// The NVIDIA driver (`libcuda`): where it was loaded from and the CUDA version it supports.
///
/// ```
/// use ferrocuda_host::{DriverInfo, Error};
/// match DriverInfo::query() {
///     Ok(driver) => println!("CUDA {}.{}", driver.cuda_version.0, driver.cuda_version.1),
///     Err(Error::NoDriver { detail }) => println!("no driver: {detail}"),
///     Err(other) => println!("{other}"),
/// }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DriverInfo {
    /// The file `libcuda` was loaded from (read from `/proc/self/maps`); `None` where the
    /// system does not tell.
    pub library: Option<PathBuf>,
    /// The newest CUDA version the driver supports (`cuDriverGetVersion`), e.g. `(13, 0)`: it
    /// JIT-compiles PTX up to that version's ISA.
    pub cuda_version: (u32, u32),
}

impl DriverInfo {
    /// Loads the driver, if it is not loaded yet, and asks for its version.
    ///
    /// # Errors
    /// [`crate::Error::NoDriver`], naming the library files tried, when `libcuda` cannot be
    /// loaded.
    pub fn query() -> Result<DriverInfo> {
        let cuda_version = driver_cuda_version()?;
        Ok(DriverInfo {
            library: driver_library_path(),
            cuda_version,
        })
    }

    /// The library names tried, in order, when loading the driver (the system's loader searches
    /// its usual paths and `LD_LIBRARY_PATH` for each).
    pub fn library_candidates() -> Vec<String> {
        driver_candidates()
    }
}
