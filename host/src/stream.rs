//! [`Stream`]: an ordered queue of launches and copies on one device.

use crate::cuda::GpuDevice;
use crate::device_properties::DeviceKind;
use crate::error::Result;
use crate::kernel_trail::Trail;
use cudarc::driver::CudaStream;
use std::sync::Arc;

/// A queue of work on a device: work on one stream runs in order; work on different streams of a
/// GPU may overlap. Make one with [`Device::new_stream`]; pass it in a launch's third slot.
///
/// [`Device::new_stream`]: crate::Device::new_stream
#[derive(Clone)]
pub struct Stream {
    inner: Inner,
}

#[derive(Clone)]
enum Inner {
    Cpu,
    Gpu {
        gpu: Arc<GpuDevice>,
        stream: Arc<LastHandleWaits>,
        /// The CUDA context it was made in.
        context: u64,
        /// Its last kernel not yet seen to finish, for a fault's report.
        trail: Arc<Trail>,
    },
}

/// A CUDA stream shared by a [`Stream`] and its clones; the last of them to go waits for the
/// work queued on it. cudarc orders a buffer's uses across streams (and waits for them before
/// freeing it) only while the context has a stream; without this, dropping the last stream with
/// a kernel still running would let the default stream read or free its buffers under it.
struct LastHandleWaits(Arc<CudaStream>);

impl Drop for LastHandleWaits {
    fn drop(&mut self) {
        let stream = &self.0;
        stream.context().record_err(stream.synchronize());
    }
}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Stream({:?})", self.device_kind())
    }
}

impl Stream {
    pub(crate) fn cpu() -> Self {
        Stream { inner: Inner::Cpu }
    }

    pub(crate) fn gpu(gpu: Arc<GpuDevice>, stream: Arc<CudaStream>, context: u64) -> Self {
        Stream {
            inner: Inner::Gpu {
                gpu,
                stream: Arc::new(LastHandleWaits(stream)),
                context,
                trail: Arc::default(),
            },
        }
    }

    /// The kind of device the stream belongs to.
    pub fn device_kind(&self) -> DeviceKind {
        match &self.inner {
            Inner::Cpu => DeviceKind::Cpu,
            Inner::Gpu { gpu, .. } => DeviceKind::Cuda {
                ordinal: gpu.ordinal(),
            },
        }
    }

    /// Waits until everything queued on this stream has finished.
    ///
    /// # Errors
    /// [`Error::KernelFailed`] if a kernel faulted (naming this stream's kernel; the device
    /// makes a new CUDA context, as after any fault), [`Error::ContextLost`] for a stream of a
    /// context an earlier fault destroyed.
    ///
    /// [`Error::KernelFailed`]: crate::Error::KernelFailed
    /// [`Error::ContextLost`]: crate::Error::ContextLost
    pub fn synchronize(&self) -> Result<()> {
        match &self.inner {
            Inner::Cpu => Ok(()),
            Inner::Gpu {
                gpu,
                stream,
                context,
                trail,
            } => gpu.synchronize_stream(&stream.0, *context, trail),
        }
    }

    /// The CUDA stream, the id of the context it was made in and its kernel trail.
    pub(crate) fn cuda(&self) -> Option<(&Arc<CudaStream>, u64, &Trail)> {
        match &self.inner {
            Inner::Cpu => None,
            Inner::Gpu {
                stream,
                context,
                trail,
                ..
            } => Some((&stream.0, *context, trail)),
        }
    }

    /// The GPU of a GPU stream.
    pub(crate) fn gpu_device(&self) -> Option<&Arc<GpuDevice>> {
        match &self.inner {
            Inner::Cpu => None,
            Inner::Gpu { gpu, .. } => Some(gpu),
        }
    }

    /// The kernel trail of a GPU stream, shared with its clones.
    pub(crate) fn trail(&self) -> Option<Arc<Trail>> {
        match &self.inner {
            Inner::Cpu => None,
            Inner::Gpu { trail, .. } => Some(trail.clone()),
        }
    }
}
