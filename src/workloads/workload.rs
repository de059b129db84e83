//! What a workload is: the [`Workload`] trait the main job and the benches drive (loop, rayon,
//! device), its [`DeviceRun`] on one device, the [`Scale`] of its inputs and the [`Work`] it does.

use super::cublas;
use super::inputs::Verdict;
use crate::{Module, Result};

/// How large the inputs are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// The seed's sizes (matrix product 1024², 4K image, 10M options, ...).
    Full,
    /// About a sixteenth of the work: for CI-sized machines (`--quick`).
    Quick,
    /// Small enough for tests in debug builds.
    Tiny,
}

impl Scale {
    /// `full` at [`Scale::Full`], `quick` at [`Scale::Quick`], `tiny` at [`Scale::Tiny`].
    pub fn pick<T>(self, full: T, quick: T, tiny: T) -> T {
        match self {
            Scale::Full => full,
            Scale::Quick => quick,
            Scale::Tiny => tiny,
        }
    }
}

/// What one run of a workload's kernels costs at the least: what rates are computed from.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Work {
    /// Bytes that must cross device memory: inputs read once plus outputs written once.
    pub bytes: u64,
    /// Floating-point operations (a fused multiply-add counts two); 0 where not meaningful.
    pub flops: u64,
}

/// One benchmark workload. Every implementation computes the same result; the `check_*`
/// methods compare it with a reference computed independently (in f64 where rounding matters).
pub trait Workload {
    /// Its size, e.g. "1024×1024×1024".
    fn size(&self) -> String;
    /// Bytes and flops of one run.
    fn work(&self) -> Work;
    /// Runs the plain single-threaded loop.
    fn run_loop(&mut self);
    /// Runs the hand-written rayon version (all cores).
    fn run_rayon(&mut self);
    /// Checks the result of the last [`Workload::run_loop`] or [`Workload::run_rayon`].
    fn check_loop(&self) -> Verdict;
    /// Uploads the inputs to `kernels`' device and allocates the outputs there, for timing the
    /// kernels with the data already in place.
    ///
    /// # Errors
    /// Allocation or copy failures (e.g. [`crate::Error::OutOfMemory`]).
    fn on_device<'a>(&'a self, kernels: &'a Module) -> Result<Box<dyn DeviceRun + 'a>>;
    /// The kernels [`Workload::on_device`]'s run launches, for running it on another module
    /// with kernels of the same names (the CUDA C versions, [`cuda_c`](super::cuda_c)); empty if it has none.
    fn kernels(&self) -> &'static [&'static str] {
        &[]
    }
    /// The matrix product the workload is, for [`cublas`] to compute beside our kernels, the
    /// GPU column's ceiling; `None` for the workloads that are not one.
    fn gemm(&self) -> Option<&dyn cublas::Gemm> {
        None
    }
}

/// A workload's data on a device, ready to run its kernels.
pub trait DeviceRun {
    /// Launches the kernels (queued on a GPU: time it with [`crate::Device::time`]).
    ///
    /// # Errors
    /// Launch errors.
    fn run(&mut self) -> Result<()>;
    /// Copies the result back and checks it.
    ///
    /// # Errors
    /// Copy errors; a wrong result is the inner `Err`.
    fn check(&mut self) -> Result<Verdict>;
}
