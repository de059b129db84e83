//! Device memory: [`GpuBytes`], allocation, and the synchronous copies of `DeviceBuffer`.

use super::gpu::{GpuContext, GpuDevice};
use crate::error::{Error, Result};
use cudarc::driver::sys::CUresult;
use cudarc::driver::{CudaSlice, CudaStream, DriverError};
use std::sync::{Arc, Mutex};

/// Device memory of a [`crate::DeviceBuffer`]: bytes, `None` when empty (CUDA cannot allocate 0).
pub struct GpuBytes {
    pub(super) slice: Option<CudaSlice<u8>>,
    pub(super) ordinal: usize,
    /// The [`GpuDevice`] it belongs to (two may share a GPU: `Device::from_cudarc`).
    pub(super) gpu: u64,
    /// The context it was allocated in.
    pub(super) context: u64,
    /// The streams other than the default one that queued work on it (see `streams.rs`).
    pub(super) used_on: Mutex<Vec<Arc<CudaStream>>>,
}

impl GpuBytes {
    pub(crate) fn ordinal(&self) -> usize {
        self.ordinal
    }

    /// Its size in bytes, which the launch checks each argument's length against.
    pub(crate) fn len_bytes(&self) -> usize {
        self.slice.as_ref().map_or(0, |slice| slice.len())
    }
}

impl GpuDevice {
    /// Turns an allocation failure into [`Error::OutOfMemory`] with the free and total bytes.
    fn alloc_error(&self, g: &GpuContext, requested: usize, source: DriverError) -> Error {
        if source.0 == CUresult::CUDA_ERROR_OUT_OF_MEMORY {
            let (free, total) = g.ctx.mem_get_info().unwrap_or((0, 0));
            Error::OutOfMemory {
                device: self.label.clone(),
                requested,
                free,
                total,
                limit: None,
            }
        } else {
            self.driver_error(g, "cuMemAlloc")(source)
        }
    }

    /// Refuses a buffer of another GPU or of a context a fault destroyed.
    pub(super) fn check_live(&self, g: &GpuContext, bytes: &GpuBytes) -> Result<()> {
        if bytes.ordinal != self.ordinal {
            return Err(Error::WrongDevice {
                what: "a buffer",
                owner: format!("CUDA device {}", bytes.ordinal),
                device: self.label.clone(),
            });
        }
        if bytes.gpu != self.id {
            return Err(Error::WrongDevice {
                what: "a buffer",
                owner: format!("CUDA device {} in another CUDA context", bytes.ordinal),
                device: self.label.clone(),
            });
        }
        if bytes.context != g.id {
            return Err(Error::ContextLost {
                what: "a buffer",
                device: self.label.clone(),
                fix: "`device.upload(&data)` or `device.alloc_zeroed(n)`",
            });
        }
        Ok(())
    }

    /// Free and total bytes of GPU memory (`cuMemGetInfo`).
    pub(crate) fn memory_info(&self) -> Result<(usize, usize)> {
        let g = self.context();
        g.ctx
            .mem_get_info()
            .map_err(self.driver_error(&g, "cuMemGetInfo"))
    }

    /// `slice` (`None`: empty), allocated in context `g` of this GPU, as a buffer's bytes.
    pub(super) fn bytes_in(&self, g: &GpuContext, slice: Option<CudaSlice<u8>>) -> GpuBytes {
        GpuBytes {
            slice,
            ordinal: self.ordinal,
            gpu: self.id,
            context: g.id,
            used_on: Mutex::default(),
        }
    }

    pub(crate) fn upload(&self, bytes: &[u8]) -> Result<GpuBytes> {
        let g = self.context();
        self.upload_on(&g, &g.stream, bytes)
    }

    pub(super) fn upload_on(
        &self,
        g: &GpuContext,
        stream: &Arc<CudaStream>,
        bytes: &[u8],
    ) -> Result<GpuBytes> {
        let slice = if bytes.is_empty() {
            None
        } else {
            Some(
                stream
                    .clone_htod(bytes)
                    .map_err(|e| self.alloc_error(g, bytes.len(), e))?,
            )
        };
        Ok(self.bytes_in(g, slice))
    }

    pub(crate) fn alloc_zeroed(&self, len_bytes: usize) -> Result<GpuBytes> {
        let g = self.context();
        let slice = if len_bytes == 0 {
            None
        } else {
            Some(
                g.stream
                    .alloc_zeros::<u8>(len_bytes)
                    .map_err(|e| self.alloc_error(&g, len_bytes, e))?,
            )
        };
        Ok(self.bytes_in(&g, slice))
    }

    /// Copies `dst.len()` device bytes from `offset` on to the host and waits for the copy.
    pub(crate) fn download(&self, src: &GpuBytes, offset: usize, dst: &mut [u8]) -> Result<()> {
        let g = self.context();
        self.check_live(&g, src)?;
        if let (Some(slice), false) = (&src.slice, dst.is_empty()) {
            let trail = Some(&*g.default_trail);
            let mark = g.launches.mark();
            let view = slice.slice(offset..offset + dst.len());
            g.stream.memcpy_dtoh(&view, dst).map_err(self.stream_error(
                &g,
                trail,
                None,
                "cuMemcpyDtoH",
            ))?;
            g.stream.synchronize().map_err(self.stream_error(
                &g,
                trail,
                None,
                "cuStreamSynchronize",
            ))?;
            g.default_trail.finished_upto(mark);
        }
        Ok(())
    }

    /// Copies `bytes` device bytes from `src` at `src_offset` into `dst` at `dst_offset`, on
    /// the default stream (queued: it does not wait). The caller checked both ranges.
    pub(crate) fn copy_within(
        &self,
        (src, src_offset): (&GpuBytes, usize),
        (dst, dst_offset): (&mut GpuBytes, usize),
        bytes: usize,
    ) -> Result<()> {
        let g = self.context();
        self.check_live(&g, src)?;
        self.check_live(&g, dst)?;
        if let (Some(from), Some(to), true) = (&src.slice, &mut dst.slice, bytes > 0) {
            let from = from.slice(src_offset..src_offset + bytes);
            let mut to = to.slice_mut(dst_offset..dst_offset + bytes);
            g.stream
                .memcpy_dtod(&from, &mut to)
                .map_err(self.driver_error(&g, "cuMemcpyDtoD"))?;
        }
        Ok(())
    }

    /// Copies host bytes into existing device bytes from `offset` on (the caller checked the
    /// range).
    pub(crate) fn overwrite(&self, dst: &mut GpuBytes, offset: usize, src: &[u8]) -> Result<()> {
        let g = self.context();
        self.check_live(&g, dst)?;
        if let (Some(slice), false) = (&mut dst.slice, src.is_empty()) {
            let mut view = slice.slice_mut(offset..offset + src.len());
            g.stream
                .memcpy_htod(src, &mut view)
                .map_err(self.driver_error(&g, "cuMemcpyHtoD"))?;
        }
        Ok(())
    }
}
