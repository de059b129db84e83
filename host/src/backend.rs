//! The backend seam: what runs a [`Device`](crate::Device)'s work, the CUDA backend (`cuda/`,
//! the thin layer over cudarc) or the CPU backend (`cpu/`, kernels' CPU builds on rayon).
//!
//! The upper types (`Device`, `Event`, `Module`, `PinnedBuffer`, ...) ask the [`Backend`] for
//! what they need and do not match on it themselves: the choice of backend is made here, once
//! per operation, with a plain `match` (no `dyn`: every method is a direct call on each side).
//! A loaded module and a buffer's memory have a seam of their own beside this one, built on it:
//! `loaded.rs` (loading PTX, launching, constant tables) and `storage.rs` (reading, writing,
//! copying). Where a GPU has something the CPU executor does not (a driver to check PTX with,
//! device allocations, pinned memory, driver events, cudarc interop), the type asks for it with
//! [`Backend::gpu`], which is `None` on the CPU.

use crate::cuda::GpuDevice;
use crate::error::Result;
use crate::stream::Stream;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What runs a device's work.
#[derive(Clone)]
pub(crate) enum Backend {
    /// The CPU executor.
    Cpu,
    /// A CUDA GPU (or the PTX emulator behind the driver API).
    Gpu(Arc<GpuDevice>),
}

impl Backend {
    /// The GPU, for the operations only a GPU has (its loaded modules, cudarc interop); `None`
    /// on the CPU.
    pub(crate) fn gpu(&self) -> Option<&Arc<GpuDevice>> {
        match self {
            Backend::Cpu => None,
            Backend::Gpu(gpu) => Some(gpu),
        }
    }

    /// Whether this is a CUDA GPU.
    pub(crate) fn is_gpu(&self) -> bool {
        matches!(self, Backend::Gpu(_))
    }

    /// A new stream: a CUDA stream, or the CPU's (which runs each launch to completion).
    pub(crate) fn new_stream(&self) -> Result<Stream> {
        match self {
            Backend::Cpu => Ok(Stream::cpu()),
            Backend::Gpu(gpu) => gpu.new_stream(),
        }
    }

    /// Waits for all queued work (nothing is ever queued on the CPU).
    pub(crate) fn synchronize(&self) -> Result<()> {
        match self {
            Backend::Cpu => Ok(()),
            Backend::Gpu(gpu) => gpu.synchronize(),
        }
    }

    /// Runs `work` and measures the device's time on it: CUDA events on the default stream
    /// (GPU), the wall clock (CPU).
    pub(crate) fn time<R>(&self, work: impl FnOnce() -> Result<R>) -> Result<(R, Duration)> {
        match self {
            Backend::Cpu => {
                let start = Instant::now();
                let value = work()?;
                Ok((value, start.elapsed()))
            }
            Backend::Gpu(gpu) => gpu.time(work),
        }
    }

    /// The GPU's free and total memory; `None` on the CPU, whose memory is the host's.
    pub(crate) fn gpu_memory_info(&self) -> Option<Result<(usize, usize)>> {
        self.gpu().map(|gpu| gpu.memory_info())
    }
}
