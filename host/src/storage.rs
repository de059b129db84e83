//! [`Storage`]: the memory under a [`DeviceBuffer`](crate::DeviceBuffer), on either backend
//! (host memory for the CPU executor, GPU memory for the CUDA backend), and its copies and
//! kernel arguments. Below `buffer.rs`, beside [`Backend`]: the buffer types above it do not
//! match on the backend.

use crate::args::Arg;
use crate::backend::Backend;
use crate::cuda::GpuBytes;
use crate::error::Result;
use aligned_vec::AVec;
use bytemuck::Pod;
use std::mem::size_of;
use std::ops::Range;

pub(crate) enum Storage<T> {
    /// A CPU device's memory: aligned to a cache line (64 bytes), as a GPU's allocations are (to
    /// 256), so that a kernel's vector loads never straddle two lines because of where `malloc`
    /// put the buffer (it returns 16-byte aligned memory; a plain loop of 32-byte loads over
    /// 16M floats measured 11.5 ms aligned and 12.5 to 12.9 ms 16 bytes off).
    Host(AVec<T>),
    /// A GPU's memory, `len` elements.
    Gpu { bytes: GpuBytes, len: usize },
}

/// The backend of GPU memory, which always has a GPU device.
const GPU_MEMORY_ON_CPU: &str = "GPU memory always has a GPU device";

impl<T: Pod> Storage<T> {
    /// Number of elements.
    pub(crate) fn len(&self) -> usize {
        match self {
            Storage::Host(data) => data.len(),
            Storage::Gpu { len, .. } => *len,
        }
    }

    /// A GPU buffer's bytes.
    pub(crate) fn gpu_bytes(&self) -> Option<&GpuBytes> {
        match self {
            Storage::Gpu { bytes, .. } => Some(bytes),
            Storage::Host(_) => None,
        }
    }

    /// A GPU buffer's bytes, to write.
    pub(crate) fn gpu_bytes_mut(&mut self) -> Option<&mut GpuBytes> {
        match self {
            Storage::Gpu { bytes, .. } => Some(bytes),
            Storage::Host(_) => None,
        }
    }

    /// Elements `range` into `dst` (as long), waiting for queued work that writes them.
    pub(crate) fn read(&self, backend: &Backend, range: Range<usize>, dst: &mut [T]) -> Result<()> {
        match (self, backend) {
            (Storage::Host(data), _) => dst.copy_from_slice(&data[range]),
            (Storage::Gpu { bytes, .. }, Backend::Gpu(gpu)) => gpu.download(
                bytes,
                range.start * size_of::<T>(),
                bytemuck::cast_slice_mut(dst),
            )?,
            (Storage::Gpu { .. }, Backend::Cpu) => unreachable!("{GPU_MEMORY_ON_CPU}"),
        }
        Ok(())
    }

    /// Overwrites elements `range` with `src` (as long).
    pub(crate) fn write(
        &mut self,
        backend: &Backend,
        range: Range<usize>,
        src: &[T],
    ) -> Result<()> {
        match (self, backend) {
            (Storage::Host(data), _) => data[range].copy_from_slice(src),
            (Storage::Gpu { bytes, .. }, Backend::Gpu(gpu)) => gpu.overwrite(
                bytes,
                range.start * size_of::<T>(),
                bytemuck::cast_slice(src),
            )?,
            (Storage::Gpu { .. }, Backend::Cpu) => unreachable!("{GPU_MEMORY_ON_CPU}"),
        }
        Ok(())
    }

    /// Overwrites elements `range` with elements `from` of `src` (as many), on the device;
    /// `None` if `src` is memory of the other backend.
    pub(crate) fn copy_within(
        &mut self,
        backend: &Backend,
        range: Range<usize>,
        src: &Storage<T>,
        from: Range<usize>,
    ) -> Option<Result<()>> {
        let size = size_of::<T>();
        match (self, src, backend) {
            (Storage::Host(to), Storage::Host(data), _) => {
                to[range].copy_from_slice(&data[from]);
                Some(Ok(()))
            }
            (
                Storage::Gpu { bytes: to, .. },
                Storage::Gpu { bytes: data, .. },
                Backend::Gpu(gpu),
            ) => Some(gpu.copy_within(
                (data, from.start * size),
                (to, range.start * size),
                range.len() * size,
            )),
            _ => None,
        }
    }

    /// Elements `range` as a kernel's input.
    pub(crate) fn arg(&self, range: Range<usize>) -> Arg<'_> {
        match self {
            Storage::Host(data) => Arg::HostSlice {
                bytes: bytemuck::cast_slice(&data[range.clone()]),
                len: range.len(),
            },
            Storage::Gpu { bytes, .. } => Arg::GpuSlice {
                buffer: bytes,
                offset: range.start * size_of::<T>(),
                len: range.len(),
            },
        }
    }

    /// Elements `range` as a kernel's output.
    pub(crate) fn arg_mut(&mut self, range: Range<usize>) -> Arg<'_> {
        match self {
            Storage::Host(data) => Arg::HostOutput {
                bytes: bytemuck::cast_slice_mut(&mut data[range.clone()]),
                len: range.len(),
            },
            Storage::Gpu { bytes, .. } => Arg::GpuOutput {
                buffer: bytes,
                offset: range.start * size_of::<T>(),
                len: range.len(),
            },
        }
    }
}
