//! [`Stream`]: an ordered queue of launches and copies on one device.

use crate::device::Device;
use crate::error::{Error, Result};
use crate::DeviceKind;
use cudarc::driver::CudaStream;
use std::sync::Arc;

/// A queue of work on a device: work on one stream runs in order; work on different streams of a
/// GPU may overlap. Make one with [`Device::new_stream`]; pass it in a launch's third slot.
#[derive(Clone)]
pub struct Stream {
    inner: Inner,
}

#[derive(Clone)]
enum Inner {
    Cpu,
    Gpu {
        stream: Arc<CudaStream>,
        ordinal: usize,
        /// The CUDA context it was made in.
        context: u64,
    },
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

    pub(crate) fn gpu(stream: Arc<CudaStream>, ordinal: usize, context: u64) -> Self {
        Stream {
            inner: Inner::Gpu {
                stream,
                ordinal,
                context,
            },
        }
    }

    /// The kind of device the stream belongs to.
    pub fn device_kind(&self) -> DeviceKind {
        match &self.inner {
            Inner::Cpu => DeviceKind::Cpu,
            Inner::Gpu { ordinal, .. } => DeviceKind::Cuda { ordinal: *ordinal },
        }
    }

    /// Waits until everything queued on this stream has finished.
    pub fn synchronize(&self) -> Result<()> {
        match &self.inner {
            Inner::Cpu => Ok(()),
            Inner::Gpu {
                stream, ordinal, ..
            } => stream.synchronize().map_err(|source| Error::Driver {
                call: "cuStreamSynchronize",
                device: format!("CUDA device {ordinal}"),
                source,
            }),
        }
    }

    /// The CUDA stream and the id of the context it was made in.
    pub(crate) fn cuda(&self) -> Option<(&Arc<CudaStream>, u64)> {
        match &self.inner {
            Inner::Cpu => None,
            Inner::Gpu {
                stream, context, ..
            } => Some((stream, *context)),
        }
    }

    pub(crate) fn check_device(&self, device: &Device) -> Result<()> {
        if self.device_kind() == device.kind() {
            Ok(())
        } else {
            Err(Error::WrongDevice {
                what: "a stream",
                owner: format!("{:?}", self.device_kind()),
                device: device.to_string(),
            })
        }
    }
}
