//! [`DeviceBuffer`]: typed memory on a device.

use crate::cuda::GpuBytes;
use crate::device::{Backend, Device};
use crate::error::{Error, Result};
use crate::launch::Arg;
use bytemuck::Pod;

/// `len` elements of `T` on a device: GPU memory, or host memory for the CPU executor.
///
/// Pass `&buffer` for a kernel's `&[T]` parameter and `&mut buffer` for its `Out<T>`; unlike host
/// slices, buffers stay on the device between launches.
///
/// ```
/// use ferrocuda_host::Device;
/// let device = Device::cpu();
/// let buffer = device.upload(&[1.0f32, 2.0, 3.0]).unwrap();
/// assert_eq!(buffer.len(), 3);
/// assert_eq!(buffer.to_vec().unwrap(), [1.0, 2.0, 3.0]);
/// ```
pub struct DeviceBuffer<T: Pod> {
    device: Device,
    storage: Storage<T>,
}

enum Storage<T> {
    Host(Vec<T>),
    Gpu { bytes: GpuBytes, len: usize },
}

impl Device {
    /// Copies `data` to a new buffer on this device.
    ///
    /// # Errors
    /// [`Error::OutOfMemory`] (with the bytes asked for and free) if it does not fit.
    pub fn upload<T: Pod>(&self, data: &[T]) -> Result<DeviceBuffer<T>> {
        let storage = match self.backend() {
            Backend::Cpu => Storage::Host(data.to_vec()),
            Backend::Gpu(gpu) => Storage::Gpu {
                bytes: gpu.upload(bytemuck::cast_slice(data))?,
                len: data.len(),
            },
        };
        Ok(DeviceBuffer {
            device: self.clone(),
            storage,
        })
    }

    /// A new buffer of `len` zeroed elements on this device.
    ///
    /// # Errors
    /// [`Error::OutOfMemory`] if it does not fit: on the CPU executor, when it needs more than the
    /// host's available memory.
    pub fn alloc_zeroed<T: Pod>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        let storage = match self.backend() {
            Backend::Cpu => Storage::Host(self.host_zeroed(len)?),
            Backend::Gpu(gpu) => Storage::Gpu {
                bytes: gpu.alloc_zeroed(len.saturating_mul(std::mem::size_of::<T>()))?,
                len,
            },
        };
        Ok(DeviceBuffer {
            device: self.clone(),
            storage,
        })
    }
}

impl Device {
    /// `len` zeroed elements in host memory, or [`Error::OutOfMemory`] rather than an abort when
    /// they need more than the host has available.
    fn host_zeroed<T: Pod>(&self, len: usize) -> Result<Vec<T>> {
        let bytes = len.saturating_mul(std::mem::size_of::<T>());
        let memory = crate::device::host_memory();
        let out_of_memory = || {
            let (free, total) = memory.clone().unwrap_or((0, 0));
            Error::OutOfMemory {
                device: self.to_string(),
                requested: bytes,
                free,
                total,
            }
        };
        if memory
            .as_ref()
            .is_ok_and(|&(available, _)| bytes > available)
        {
            return Err(out_of_memory());
        }
        let mut data = Vec::new();
        data.try_reserve_exact(len).map_err(|_| out_of_memory())?;
        data.resize(len, T::zeroed());
        Ok(data)
    }
}

impl<T: Pod> DeviceBuffer<T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        match &self.storage {
            Storage::Host(data) => data.len(),
            Storage::Gpu { len, .. } => *len,
        }
    }

    /// Whether it holds no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The device it lives on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// Copies the elements to a new `Vec` (waiting for queued work that writes them).
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let mut out = vec![T::zeroed(); self.len()];
        self.copy_to(&mut out)?;
        Ok(out)
    }

    /// Copies the elements into `dst`, which must have the same length.
    pub fn copy_to(&self, dst: &mut [T]) -> Result<()> {
        self.check_len("DeviceBuffer::copy_to", dst.len())?;
        match (&self.storage, self.device.backend()) {
            (Storage::Host(data), _) => dst.copy_from_slice(data),
            (Storage::Gpu { bytes, .. }, Backend::Gpu(gpu)) => {
                gpu.download(bytes, bytemuck::cast_slice_mut(dst))?
            }
            (Storage::Gpu { .. }, Backend::Cpu) => {
                unreachable!("GPU memory always has a GPU device")
            }
        }
        Ok(())
    }

    /// Overwrites the elements with `src`, which must have the same length.
    pub fn copy_from(&mut self, src: &[T]) -> Result<()> {
        self.check_len("DeviceBuffer::copy_from", src.len())?;
        match (&mut self.storage, self.device.backend()) {
            (Storage::Host(data), _) => data.copy_from_slice(src),
            (Storage::Gpu { bytes, .. }, Backend::Gpu(gpu)) => {
                gpu.overwrite(bytes, bytemuck::cast_slice(src))?
            }
            (Storage::Gpu { .. }, Backend::Cpu) => {
                unreachable!("GPU memory always has a GPU device")
            }
        }
        Ok(())
    }

    /// Overwrites the elements with those of `src`, another buffer of the same length on the same
    /// device, without a trip through the host. On a GPU the copy is queued on the default stream
    /// (later launches and copies see it); timing it gives the device's copy bandwidth.
    ///
    /// ```
    /// use ferrocuda_host::Device;
    /// let device = Device::cpu();
    /// let src = device.upload(&[1u32, 2, 3]).unwrap();
    /// let mut dst = device.alloc_zeroed::<u32>(3).unwrap();
    /// dst.copy_from_buffer(&src).unwrap();
    /// assert_eq!(dst.to_vec().unwrap(), [1, 2, 3]);
    /// ```
    ///
    /// # Errors
    /// [`Error::CopyLength`] for different lengths, [`Error::WrongDevice`] if `src` lives on
    /// another device.
    pub fn copy_from_buffer(&mut self, src: &DeviceBuffer<T>) -> Result<()> {
        self.check_len("DeviceBuffer::copy_from_buffer", src.len())?;
        let wrong_device = || Error::WrongDevice {
            what: "a buffer",
            owner: src.device.to_string(),
            device: self.device.to_string(),
        };
        match (&mut self.storage, &src.storage, self.device.backend()) {
            (Storage::Host(to), Storage::Host(from), _) => to.copy_from_slice(from),
            (
                Storage::Gpu { bytes: to, .. },
                Storage::Gpu { bytes: from, .. },
                Backend::Gpu(gpu),
            ) => gpu.copy_within(from, to)?,
            _ => return Err(wrong_device()),
        }
        Ok(())
    }

    fn check_len(&self, what: &'static str, actual: usize) -> Result<()> {
        if actual == self.len() {
            Ok(())
        } else {
            Err(Error::CopyLength {
                what,
                expected: self.len(),
                actual,
            })
        }
    }

    pub(crate) fn as_arg(&self) -> Arg<'_> {
        match &self.storage {
            Storage::Host(data) => Arg::HostSlice {
                bytes: bytemuck::cast_slice(data),
                len: data.len(),
            },
            Storage::Gpu { bytes, len } => Arg::GpuSlice {
                buffer: bytes,
                len: *len,
            },
        }
    }

    pub(crate) fn as_arg_mut(&mut self) -> Arg<'_> {
        match &mut self.storage {
            Storage::Host(data) => {
                let len = data.len();
                Arg::HostOutput {
                    bytes: bytemuck::cast_slice_mut(data),
                    len,
                }
            }
            Storage::Gpu { bytes, len } => Arg::GpuOutput {
                buffer: bytes,
                len: *len,
            },
        }
    }
}
