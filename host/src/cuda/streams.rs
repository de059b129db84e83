//! The asynchronous half of the CUDA backend: page-locked host memory (`cuMemHostAlloc`),
//! copies queued on a stream between it and device memory, and events.
//!
//! What keeps it sound is in the types above it (`crate::pending`: queued work owns the host
//! memory it uses) and here: a device buffer remembers every stream that used it, and its
//! memory is freed only after the work queued there so far (see `GpuBytes`'s `Drop`).

use super::gpu::{GpuContext, GpuDevice};
use super::memory::GpuBytes;
use crate::error::{Error, Result};
use crate::kernel_trail::Trail;
use crate::lock::lock;
use crate::stream::Stream;
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{result, CudaContext, CudaEvent, CudaStream, DevicePtr, DevicePtrMut};
use std::ptr::NonNull;
use std::sync::Arc;

/// `len` bytes of page-locked host memory, zeroed, in the context that allocated it (kept alive
/// until they are freed).
pub(crate) struct PinnedBytes {
    ptr: NonNull<u8>,
    ctx: Arc<CudaContext>,
}

// SAFETY: the bytes are owned by this value alone (like a `Box<[u8]>`); the context handle is
// itself Send and Sync.
unsafe impl Send for PinnedBytes {}
// SAFETY: as above; shared access only reads through `as_ptr`'s callers, which uphold aliasing.
unsafe impl Sync for PinnedBytes {}

impl PinnedBytes {
    /// The first byte, page-aligned.
    pub(crate) fn as_ptr(&self) -> NonNull<u8> {
        self.ptr
    }
}

impl Drop for PinnedBytes {
    fn drop(&mut self) {
        self.ctx.record_err(self.ctx.bind_to_thread());
        // SAFETY: `ptr` came from `malloc_host` in `ctx` and nothing uses it any more: queued
        // work that used it owned the buffer until it finished (crate::pending).
        self.ctx
            .record_err(unsafe { result::free_host(self.ptr.as_ptr().cast()) });
    }
}

/// A CUDA event with timing, of one context.
pub(crate) struct GpuEvent {
    event: CudaEvent,
    context: u64,
}

impl GpuDevice {
    /// A new stream in the current context.
    pub(crate) fn new_stream(self: &Arc<Self>) -> Result<Stream> {
        let g = self.context();
        let stream = g
            .ctx
            .new_stream()
            .map_err(self.driver_error(&g, "cuStreamCreate"))?;
        Ok(Stream::gpu(self.clone(), stream, g.id))
    }

    /// A ferrocuda stream on the program's `stream` of this device's context.
    pub(crate) fn adopt_stream(self: &Arc<Self>, stream: Arc<CudaStream>) -> Result<Stream> {
        let g = self.context();
        self.check_cudarc(&g, "a cudarc stream", stream.context())?;
        Ok(Stream::gpu(self.clone(), stream, g.id))
    }

    /// Refuses a stream of another GPU, or of another context on this one (`from_cudarc`).
    pub(crate) fn check_stream_device(&self, stream: &Stream) -> Result<()> {
        match stream.gpu_device() {
            Some(gpu) if std::ptr::eq(&**gpu, self) => Ok(()),
            other => Err(Error::WrongDevice {
                what: "a stream",
                owner: match other {
                    Some(gpu) if gpu.ordinal == self.ordinal => {
                        format!("CUDA device {} in another CUDA context", gpu.ordinal)
                    }
                    Some(gpu) => gpu.label.clone(),
                    None => "the CPU executor".into(),
                },
                device: self.label.clone(),
            }),
        }
    }

    /// `len` (> 0) zeroed bytes of page-locked host memory.
    pub(crate) fn alloc_pinned(&self, len: usize) -> Result<PinnedBytes> {
        let g = self.context();
        g.ctx
            .bind_to_thread()
            .map_err(self.driver_error(&g, "cuCtxSetCurrent"))?;
        // SAFETY: the context is current; the call returns `len` bytes or an error.
        let raw = unsafe { result::malloc_host(len, sys_flags::PORTABLE) }.map_err(|source| {
            if source.0 == cudarc::driver::sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY {
                Error::OutOfMemory {
                    device: format!("the host (page-locked memory for {})", self.label),
                    requested: len,
                    free: 0,
                    total: 0,
                    limit: None,
                }
            } else {
                self.driver_error(&g, "cuMemHostAlloc")(source)
            }
        })?;
        let ptr = NonNull::new(raw.cast::<u8>()).ok_or_else(|| Error::Driver {
            call: "cuMemHostAlloc",
            device: self.label.clone(),
            source: cudarc::driver::DriverError(
                cudarc::driver::sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY,
            ),
        })?;
        // SAFETY: `ptr` is valid for `len` bytes just allocated and not yet shared; zeroing them
        // makes every byte initialised before any slice of them is made.
        unsafe { ptr.as_ptr().write_bytes(0, len) };
        Ok(PinnedBytes {
            ptr,
            ctx: g.ctx.clone(),
        })
    }

    /// The CUDA stream of `stream`, checked to belong to the current context, with its trail.
    fn live_stream<'s>(
        &self,
        g: &GpuContext,
        stream: &'s Stream,
    ) -> Result<(&'s Arc<CudaStream>, &'s Trail)> {
        self.check_stream_device(stream)?;
        match stream.cuda() {
            Some((_, context, _)) if context != g.id => Err(self.stream_lost()),
            Some((cuda, _, trail)) => Ok((cuda, trail)),
            None => unreachable!("a GPU's stream is a CUDA stream"),
        }
    }

    /// Queues a copy of `src` into `dst` from `offset` on (the caller checked the range) on
    /// `stream`; the caller keeps `src` alive and unwritten until the stream passes it.
    pub(crate) fn copy_htod_async(
        &self,
        stream: &Stream,
        src: &[u8],
        (dst, offset): (&mut GpuBytes, usize),
    ) -> Result<()> {
        let g = self.context();
        self.check_live(&g, dst)?;
        let (cuda, trail) = self.live_stream(&g, stream)?;
        dst.used_on(cuda);
        if let (Some(slice), false) = (&mut dst.slice, src.is_empty()) {
            let fault = self.stream_error(&g, Some(trail), None, "cuMemcpyHtoDAsync");
            let (ptr, _record) = slice.device_ptr_mut(cuda);
            // SAFETY: `ptr + offset` is in a live allocation of this context with `src.len()`
            // bytes from there (the caller checked the range); the caller keeps `src` alive and
            // unwritten until the copy is done (it is owned by the pending work); `_record`
            // orders later users of `dst` after the copy.
            unsafe { result::memcpy_htod_async(ptr + offset as u64, src, cuda.cu_stream()) }
                .map_err(fault)?;
        }
        Ok(())
    }

    /// Queues a copy of `dst.len()` bytes of `src` from `offset` on (the caller checked the
    /// range) into `dst` on `stream`; the caller keeps `dst` alive and untouched until the
    /// stream passes it.
    pub(crate) fn copy_dtoh_async(
        &self,
        stream: &Stream,
        (src, offset): (&GpuBytes, usize),
        dst: &mut [u8],
    ) -> Result<()> {
        let g = self.context();
        self.check_live(&g, src)?;
        let (cuda, trail) = self.live_stream(&g, stream)?;
        src.used_on(cuda);
        if let (Some(slice), false) = (&src.slice, dst.is_empty()) {
            let fault = self.stream_error(&g, Some(trail), None, "cuMemcpyDtoHAsync");
            let (ptr, _record) = slice.device_ptr(cuda);
            // SAFETY: `ptr + offset` is in a live allocation of this context with `dst.len()`
            // bytes from there (the caller checked the range); the caller keeps `dst` alive and
            // untouched until the copy is done (it is owned by the pending work).
            unsafe { result::memcpy_dtoh_async(dst, ptr + offset as u64, cuda.cu_stream()) }
                .map_err(fault)?;
        }
        Ok(())
    }

    /// A new event (with timing) in the current context.
    pub(crate) fn new_event(&self) -> Result<GpuEvent> {
        let g = self.context();
        let event = g
            .ctx
            .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(self.driver_error(&g, "cuEventCreate"))?;
        Ok(GpuEvent {
            event,
            context: g.id,
        })
    }

    fn check_event(&self, g: &GpuContext, event: &GpuEvent) -> Result<()> {
        if event.context == g.id {
            Ok(())
        } else {
            Err(Error::ContextLost {
                what: "an event",
                device: self.label.clone(),
                fix: "`device.new_event()`",
            })
        }
    }

    /// Records `event` on `stream`: it completes when the work queued there so far has. Returns
    /// the launch mark its completion vouches for.
    pub(crate) fn record_event(&self, event: &GpuEvent, stream: &Stream) -> Result<u64> {
        let g = self.context();
        self.check_event(&g, event)?;
        let (cuda, trail) = self.live_stream(&g, stream)?;
        let mark = g.launches.mark();
        event.event.record(cuda).map_err(self.stream_error(
            &g,
            Some(trail),
            None,
            "cuEventRecord",
        ))?;
        Ok(mark)
    }

    /// Makes `stream` wait (on the device) for `event`.
    pub(crate) fn wait_event(&self, stream: &Stream, event: &GpuEvent) -> Result<()> {
        let g = self.context();
        self.check_event(&g, event)?;
        let (cuda, trail) = self.live_stream(&g, stream)?;
        cuda.wait(&event.event).map_err(self.stream_error(
            &g,
            Some(trail),
            None,
            "cuStreamWaitEvent",
        ))
    }

    /// Waits for `event`; a fault names the kernel of `trail` (the stream it was recorded on),
    /// whose kernels up to `mark` are then known to have finished.
    pub(crate) fn synchronize_event(
        &self,
        event: &GpuEvent,
        recorded: Option<(&Trail, u64)>,
    ) -> Result<()> {
        let g = self.context();
        self.check_event(&g, event)?;
        let trail = recorded.map(|(trail, _)| trail);
        event.event.synchronize().map_err(self.stream_error(
            &g,
            trail,
            None,
            "cuEventSynchronize",
        ))?;
        if let Some((trail, mark)) = recorded {
            trail.finished_upto(mark);
        }
        Ok(())
    }

    /// Whether the work `event` waits for is done, without waiting.
    pub(crate) fn query_event(&self, event: &GpuEvent, trail: Option<&Trail>) -> Result<bool> {
        let g = self.context();
        self.check_event(&g, event)?;
        event
            .event
            .try_is_complete()
            .map_err(self.stream_error(&g, trail, None, "cuEventQuery"))
    }

    /// Milliseconds from `start` to `end` (both recorded and done).
    pub(crate) fn event_elapsed_ms(&self, start: &GpuEvent, end: &GpuEvent) -> Result<f32> {
        let g = self.context();
        self.check_event(&g, start)?;
        self.check_event(&g, end)?;
        start
            .event
            .elapsed_ms(&end.event)
            .map_err(self.driver_error(&g, "cuEventElapsedTime"))
    }
}

impl GpuBytes {
    /// Remembers that work on `stream` uses these bytes, so that freeing them waits for it.
    pub(crate) fn used_on(&self, stream: &Arc<CudaStream>) {
        let mut streams = lock(&self.used_on);
        if !streams.iter().any(|s| Arc::ptr_eq(s, stream)) {
            streams.push(stream.clone());
        }
    }
}

impl Drop for GpuBytes {
    /// Before the memory goes (stream-ordered, on the stream it was allocated on, by cudarc),
    /// that stream waits for the work queued so far on every other stream that used it: cudarc
    /// itself only waits for the last reader.
    fn drop(&mut self) {
        let Some(slice) = &self.slice else { return };
        let owner = slice.stream();
        for stream in lock(&self.used_on).drain(..) {
            let ctx = stream.context();
            match stream.record_event(None) {
                Ok(event) => ctx.record_err(owner.wait(&event)),
                // The event could not be recorded (a faulted context): wait for the stream.
                Err(_) => ctx.record_err(stream.synchronize()),
            }
        }
    }
}

/// `cuMemHostAlloc` flags.
mod sys_flags {
    /// `CU_MEMHOSTALLOC_PORTABLE`: pinned for every context, so a buffer outlives the context
    /// a kernel fault replaces.
    pub const PORTABLE: std::ffi::c_uint = 0x01;
}
