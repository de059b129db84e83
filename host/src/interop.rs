//! Interop with cudarc, the crate ferrocuda drives CUDA through (re-exported as
//! [`crate::cudarc`], so a program names one version): a [`Device`] on the program's own
//! `CudaContext`, [`DeviceBuffer`]s from and into `CudaSlice`s without a copy, a [`Stream`] on
//! the program's `CudaStream`, `&CudaSlice<T>` / `&mut CudaSlice<T>` as launch arguments; and
//! several GPUs: [`Device::all`], [`DeviceBuffer::copy_from_peer`]. See docs/interop.md.

use crate::backend::Backend;
use crate::buffer::DeviceBuffer;
use crate::cuda::GpuDevice;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::stream::Stream;
use crate::{InputArg, InputData, OutputArg, OutputData};
use bytemuck::Pod;
use cudarc::driver::{CudaContext, CudaSlice, CudaStream};
use std::sync::Arc;

impl Device {
    /// A device that runs ferrocuda's work in the program's own CUDA context `ctx` (cudarc's, or
    /// candle's and burn's, which sit on cudarc): no second context on the GPU, and buffers and
    /// streams pass between the two without copies.
    ///
    /// Every `Device` of one context shares its state: a context ferrocuda already works in
    /// (an earlier `from_cudarc` of it, or `Device::cuda`'s, which is the GPU's primary
    /// context, the one `CudaContext::new` gives) gives that same device back.
    ///
    /// **After a kernel fault** the context is sticky-faulted, as CUDA defines. ferrocuda does
    /// not own it, so, unlike on its own devices, it does not replace it: the launch (or the next
    /// call that sees the fault) is [`Error::KernelFailed`] saying so, every later call in the
    /// context fails with the fault's error, and so do the program's own cudarc objects. Make a
    /// new `CudaContext` and a device of it to carry on.
    ///
    /// ```
    /// # fn main() -> ferrocuda_host::Result<()> {
    /// use ferrocuda_host::{cudarc::driver::CudaContext, Device};
    /// # if Device::gpu_count().unwrap_or(0) == 0 { return Ok(()); }
    /// let ctx = CudaContext::new(0).expect("a CUDA context"); // the program's
    /// let device = Device::from_cudarc(ctx.clone())?;
    /// assert!(device.is_gpu());
    /// assert_eq!(device.cudarc_context().unwrap().cu_ctx(), ctx.cu_ctx());
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`Error::NoDriver`], [`Error::Driver`] if the device's properties cannot be read.
    pub fn from_cudarc(ctx: Arc<CudaContext>) -> Result<Device> {
        let gpu = GpuDevice::wrap(ctx)?;
        Ok(Device::from_parts(
            gpu.properties().clone(),
            Backend::Gpu(gpu),
        ))
    }

    /// The CUDA context a GPU device runs its work in now (`None` on the CPU executor), to hand
    /// to cudarc: `CudaContext::default_stream`, `new_stream`, `alloc_zeros` and the like then
    /// work on the same GPU memory as ferrocuda. After a kernel fault on a device of ferrocuda's
    /// own, the device moves to a new context; this returns the new one.
    pub fn cudarc_context(&self) -> Option<Arc<CudaContext>> {
        self.backend().gpu().map(|gpu| gpu.cudarc_context())
    }

    /// Every CUDA GPU, in the driver's order (`Device::cuda(0)`, `Device::cuda(1)`, ...); empty
    /// when the driver reports none. The PTX emulator has as many as
    /// `FERROCUDA_EMU_DEVICES` asks (default 1), each with its own memory.
    ///
    /// # Errors
    /// As [`Device::gpu_count`] and [`Device::cuda`].
    pub fn all() -> Result<Vec<Device>> {
        (0..Device::gpu_count()?).map(Device::cuda).collect()
    }
}

impl<T: Pod> DeviceBuffer<T> {
    /// The program's `slice` as a buffer, without a copy, on the device of its context (made as
    /// [`Device::from_cudarc`] does, or the one ferrocuda already has there). cudarc's tracking
    /// of the slice's readers and writers carries over: ferrocuda's work on the buffer waits for
    /// the work queued on the slice so far, on any stream.
    ///
    /// Its bytes count towards the device's [`memory_in_use`](Device::memory_in_use), but are
    /// never refused by a memory limit (they are allocated already).
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use ferrocuda_host::{cudarc::driver::CudaContext, Device, DeviceBuffer};
    /// # if Device::gpu_count().unwrap_or(0) == 0 { return Ok(()); }
    /// let ctx = CudaContext::new(0)?;
    /// let stream = ctx.default_stream();
    /// let slice = stream.clone_htod(&[1u32, 2, 3])?; // cudarc's
    /// let mut buffer = DeviceBuffer::from_cudarc(slice)?; // ferrocuda's, the same memory
    /// buffer.copy_from(&[4, 5, 6])?;
    /// let slice = buffer.into_cudarc()?; // cudarc's again
    /// assert_eq!(stream.clone_dtoh(&slice)?, [4, 5, 6]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`Error::Driver`] if the device's properties cannot be read.
    pub fn from_cudarc(slice: CudaSlice<T>) -> Result<Self> {
        let device = Device::from_cudarc(slice.context().clone())?;
        DeviceBuffer::from_cudarc_on(&device, slice)
    }

    /// As [`DeviceBuffer::from_cudarc`], on `device`, which must run in the slice's context.
    ///
    /// # Errors
    /// [`Error::WrongDevice`] for a slice of another GPU, of another context on the same GPU,
    /// or for the CPU executor (the slice is then freed, as when it is dropped).
    pub fn from_cudarc_on(device: &Device, slice: CudaSlice<T>) -> Result<Self> {
        let Some(gpu) = device.backend().gpu() else {
            return Err(Error::WrongDevice {
                what: "a cudarc slice",
                owner: format!("CUDA device {}", slice.ordinal()),
                device: device.to_string(),
            });
        };
        let len = slice.len();
        let bytes = gpu.adopt(slice)?;
        Ok(DeviceBuffer::from_gpu_bytes(device, bytes, len))
    }

    /// The buffer's memory as a cudarc `CudaSlice`, without a copy: the slice's stream (the one
    /// it will be freed on) first waits for the work queued so far on every ferrocuda stream that
    /// used the buffer, and its events mark that point, so cudarc's own ordering of the slice is
    /// right from the first use. An empty buffer gives an empty slice.
    ///
    /// ```
    /// # fn main() -> ferrocuda_host::Result<()> {
    /// use ferrocuda_host::Device;
    /// # if Device::gpu_count().unwrap_or(0) == 0 { return Ok(()); }
    /// let device = Device::cuda(0)?;
    /// let buffer = device.upload(&[1.0f32, 2.0, 3.0])?;
    /// let slice = buffer.into_cudarc()?; // a cudarc::driver::CudaSlice<f32>
    /// let stream = device.cudarc_context().unwrap().default_stream();
    /// assert_eq!(stream.clone_dtoh(&slice).unwrap(), [1.0, 2.0, 3.0]);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    /// [`Error::WrongDevice`] for a buffer of the CPU executor (it is dropped).
    pub fn into_cudarc(self) -> Result<CudaSlice<T>> {
        match self.into_gpu_bytes() {
            Ok((device, bytes, len)) => {
                let Some(gpu) = device.backend().gpu() else {
                    unreachable!("GPU memory always has a GPU device")
                };
                // SAFETY: the bytes hold `len` `T`s (the buffer's), and `T: Pod`.
                unsafe { bytes.into_cudarc(gpu, len) }
            }
            Err(buffer) => Err(Error::WrongDevice {
                what: "a buffer",
                owner: buffer.device().to_string(),
                device: "cudarc (a CUDA device)".into(),
            }),
        }
    }

    /// Overwrites the elements with those of `src`, a buffer of the same length on another GPU
    /// (or another context), without a trip through the host: `cuMemcpyPeerAsync`, queued on
    /// this buffer's device's default stream after the work queued on both buffers so far; later
    /// work on `src` (and its free) waits for the copy. On the same device it is
    /// [`DeviceBuffer::copy_from_buffer`].
    ///
    /// # Errors
    /// [`Error::CopyLength`] for different lengths, [`Error::WrongDevice`] if either is on the
    /// CPU executor and the other is not, [`Error::ContextLost`] for a buffer of a context a
    /// fault destroyed.
    pub fn copy_from_peer(&mut self, src: &DeviceBuffer<T>) -> Result<()> {
        if self.len() != src.len() {
            return Err(Error::CopyLength {
                what: "DeviceBuffer::copy_from_peer",
                expected: self.len(),
                actual: src.len(),
            });
        }
        let (Some(to), Some(from)) = (
            self.device().backend().gpu().cloned(),
            src.device().backend().gpu(),
        ) else {
            return self.copy_from_buffer(src);
        };
        if Arc::ptr_eq(&to, from) {
            return self.copy_from_buffer(src);
        }
        let bytes = self.len() * std::mem::size_of::<T>();
        let (Some(src_bytes), Some(dst_bytes)) = (src.gpu_bytes(), self.gpu_bytes_mut()) else {
            unreachable!("GPU devices hold GPU memory")
        };
        to.copy_from_peer(from, (src_bytes, 0), (dst_bytes, 0), bytes)
    }
}

impl Stream {
    /// A ferrocuda stream on the program's cudarc `stream`: launches and copies queued on it run
    /// in order with the program's own work on that stream, and cudarc's events for the
    /// `CudaSlice`s either side uses are recorded on it. Its device is the stream's context's
    /// ([`Device::from_cudarc`]); pass the stream in a launch's third slot on that device.
    ///
    /// As for a stream of ferrocuda's own, the last ferrocuda handle of it waits for the work
    /// queued on it when dropped; the `CudaStream` itself stays the program's.
    ///
    /// # Errors
    /// [`Error::Driver`] if the device's properties cannot be read; [`Error::WrongDevice`] if
    /// ferrocuda's device of that GPU has moved to a new context after a fault.
    pub fn from_cudarc(stream: Arc<CudaStream>) -> Result<Stream> {
        let gpu = GpuDevice::wrap(stream.context().clone())?;
        gpu.adopt_stream(stream)
    }

    /// The CUDA stream behind a GPU stream (`None` on the CPU executor), for cudarc work ordered
    /// with ferrocuda's on it.
    pub fn cudarc(&self) -> Option<Arc<CudaStream>> {
        self.cuda().map(|(stream, _, _)| stream.clone())
    }
}

/// `&slice` is a launch argument for a kernel's `&[T]` parameter: the launch checks that the
/// slice is of the launch's device and context, waits (on the device) for its last writer, and
/// records its read on the launch's stream, through cudarc's own tracking.
impl<T: Pod> InputData<T> for CudaSlice<T> {
    fn len(&self) -> usize {
        CudaSlice::len(self)
    }
    fn input_arg(&self) -> InputArg<'_, T> {
        InputArg::new(crate::args::Arg::CudarcSlice {
            slice: self,
            len: CudaSlice::len(self),
        })
    }
}

/// `&mut slice` is a launch argument for a kernel's `Out<T>` parameter, as for [`InputData`],
/// waiting for its last reader and writer and recording the write.
impl<T: Pod> OutputData<T> for CudaSlice<T> {
    fn len(&self) -> usize {
        CudaSlice::len(self)
    }
    fn output_arg(&mut self) -> OutputArg<'_, T> {
        let len = CudaSlice::len(self);
        OutputArg::new(crate::args::Arg::CudarcOutput { slice: self, len })
    }
}
