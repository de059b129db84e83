//! [`Pending`]: work queued on a stream that owns the host memory it uses, and the asynchronous
//! copies that make it ([`Stream::upload_async`], [`Stream::download_async`]).
//!
//! Why ownership and not a borrow: a borrow would end when a guard is dropped, and a guard can
//! be leaked (`mem::forget`) without running its drop, leaving a copy queued on memory the
//! program may then free or write. Owned memory cannot be reached while the work is queued: it
//! comes back from [`Pending::wait`], is freed only after the work (a drop waits for it), and a
//! leaked `Pending` leaks it, which is safe.

use crate::args::{Arg, InputData};
use crate::buffer_slice::{BufferSlice, BufferSliceMut};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::event::Event;
use crate::pinned::PinnedBuffer;
use crate::stream::Stream;
use bytemuck::Pod;

/// Work queued on a stream, holding what it uses (`T`, e.g. the [`PinnedBuffer`] a copy reads
/// or writes) until it is done. [`Pending::wait`] hands it back; dropping a `Pending` waits for
/// the work first; leaking one leaks `T`.
///
/// ```
/// use ferrocuda_host::Device;
/// let device = Device::cpu();
/// let stream = device.new_stream().unwrap();
/// let mut on_device = device.alloc_zeroed::<f32>(3).unwrap();
/// let pending = stream.upload_async(device.pin(&[1.0f32, 2.0, 3.0]).unwrap(), &mut on_device).unwrap();
/// // The pinned buffer is the pending copy's until it is done: no way to touch it meanwhile.
/// let host = pending.wait().unwrap();
/// let back = stream.download_async(&on_device, host).unwrap().wait().unwrap();
/// assert_eq!(&back[..], &[1.0, 2.0, 3.0]);
/// ```
#[must_use = "dropping a Pending waits for its work; call .wait() to get the buffer back"]
pub struct Pending<T> {
    /// `None` only once handed back.
    value: Option<T>,
    /// Recorded on the stream after the work.
    done: Event,
}

impl<T> Pending<T> {
    /// `value`, held until the work queued on `stream` so far is done. If that point cannot be
    /// marked, `value` is dropped only if the error says the work can no longer run.
    pub(crate) fn after(stream: &Stream, value: T) -> Result<Pending<T>> {
        let marked =
            Event::for_stream(stream).and_then(|mut done| stream.record(&mut done).map(|()| done));
        match marked {
            Ok(done) => Ok(Pending {
                value: Some(value),
                done,
            }),
            Err(error) => {
                release_after(&error, value);
                Err(error)
            }
        }
    }

    /// Whether the work is done (then [`Pending::wait`] returns at once).
    ///
    /// # Errors
    /// [`Error::KernelFailed`] if a kernel queued before it on the stream faulted.
    pub fn is_done(&self) -> Result<bool> {
        self.done.query()
    }

    /// The event that completes with the work: another stream can [`Stream::wait`] for it, and
    /// [`Event::elapsed`] times up to it. It is lent by shared reference, so it cannot be
    /// recorded again ([`Stream::record`] takes `&mut Event`): [`Pending::wait`] waits on it,
    /// and it must mark the end of this work until then.
    pub fn event(&self) -> &Event {
        &self.done
    }

    /// Waits until the work is done and hands back what it held.
    ///
    /// # Errors
    /// [`Error::KernelFailed`] if a kernel queued before it on the stream faulted: the CUDA
    /// context is lost, and with it what the work did; the held value is dropped.
    pub fn wait(mut self) -> Result<T> {
        let value = self
            .value
            .take()
            .expect("a Pending holds its value until waited for");
        match self.done.synchronize() {
            Ok(()) => Ok(value),
            Err(error) => {
                release_after(&error, value);
                Err(error)
            }
        }
    }
}

impl<T> Drop for Pending<T> {
    /// Waits for the work before what it held is dropped.
    fn drop(&mut self) {
        if let Some(value) = self.value.take() {
            if let Err(error) = self.done.synchronize() {
                release_after(&error, value);
            }
        }
    }
}

/// Drops `value` after a wait for the work using it failed with `error` if that error means the
/// work can no longer run (a kernel fault destroyed its CUDA context, or it was destroyed
/// before); leaks it otherwise, since the work might still use it. Dropping matters: what it
/// holds (page-locked memory) keeps the faulted context alive, which must go for the GPU to
/// recover fully.
fn release_after<T>(error: &Error, value: T) {
    match error {
        Error::KernelFailed { .. } | Error::ContextLost { .. } => drop(value),
        _ => std::mem::forget(value),
    }
}

impl<T> std::fmt::Debug for Pending<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Pending({:?})", self.done)
    }
}

impl Stream {
    /// Queues a copy of `src` into `dst` (of the same length: a whole
    /// [`DeviceBuffer`](crate::DeviceBuffer) as `&mut buffer`, or a part of one,
    /// [`DeviceBuffer::slice_mut`](crate::DeviceBuffer::slice_mut)) on this stream and returns
    /// at once; `src` belongs to the returned [`Pending`] until the copy is done. From
    /// page-locked memory on a GPU the copy runs while the host and other streams work.
    ///
    /// # Errors
    /// [`Error::CopyLength`] for different lengths, [`Error::WrongDevice`] if `dst` lives on
    /// another device than the stream; driver errors.
    pub fn upload_async<'d, T: Pod>(
        &self,
        src: PinnedBuffer<T>,
        dst: impl Into<BufferSliceMut<'d, T>>,
    ) -> Result<Pending<PinnedBuffer<T>>> {
        let mut dst = dst.into();
        check_copy(
            self,
            "Stream::upload_async",
            dst.device(),
            dst.len(),
            src.len(),
        )?;
        match (dst.as_arg_mut(), self.gpu_device()) {
            (Arg::HostOutput { bytes, .. }, None) => {
                bytes.copy_from_slice(bytemuck::cast_slice(&src))
            }
            (Arg::GpuOutput { buffer, offset, .. }, Some(gpu)) => {
                gpu.copy_htod_async(self, bytemuck::cast_slice(&src), (buffer, offset))?
            }
            _ => unreachable!("check_copy matched the buffer's device with the stream's"),
        }
        Pending::after(self, src)
    }

    /// Queues a copy of `src` (a whole [`DeviceBuffer`](crate::DeviceBuffer) as `&buffer`, or
    /// a part of one, [`DeviceBuffer::slice`](crate::DeviceBuffer::slice)) into `dst` (of the
    /// same length) on this stream and returns at once; `dst` belongs to the returned
    /// [`Pending`] until the copy is done, and [`Pending::wait`] gives it back filled. The
    /// buffer may be dropped meanwhile: its memory is freed after the copy.
    ///
    /// # Errors
    /// As [`Stream::upload_async`].
    pub fn download_async<'d, T: Pod>(
        &self,
        src: impl Into<BufferSlice<'d, T>>,
        mut dst: PinnedBuffer<T>,
    ) -> Result<Pending<PinnedBuffer<T>>> {
        let src = src.into();
        check_copy(
            self,
            "Stream::download_async",
            src.device(),
            src.len(),
            dst.len(),
        )?;
        match (src.input_arg().arg, self.gpu_device()) {
            (Arg::HostSlice { bytes, .. }, None) => {
                bytemuck::cast_slice_mut(&mut dst).copy_from_slice(bytes)
            }
            (Arg::GpuSlice { buffer, offset, .. }, Some(gpu)) => {
                gpu.copy_dtoh_async(self, (buffer, offset), bytemuck::cast_slice_mut(&mut dst))?
            }
            _ => unreachable!("check_copy matched the buffer's device with the stream's"),
        }
        Pending::after(self, dst)
    }
}

/// Checks that a copy between `len` elements on `device` and `host_len` elements can be queued
/// on `stream`.
fn check_copy(
    stream: &Stream,
    what: &'static str,
    device: &Device,
    len: usize,
    host_len: usize,
) -> Result<()> {
    device.check_stream(stream)?;
    if len != host_len {
        return Err(Error::CopyLength {
            what,
            expected: len,
            actual: host_len,
        });
    }
    Ok(())
}
