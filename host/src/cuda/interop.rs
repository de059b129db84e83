//! The CUDA half of cudarc interop (`crate::interop` has the public API): devices on the
//! program's own `CudaContext`, buffers from and into `CudaSlice`s, streams from `CudaStream`s,
//! borrowed `CudaSlice` launch arguments, and copies between GPUs (`cuMemcpyPeerAsync`).
//!
//! What keeps it sound: a `CudaSlice` keeps its own read/write events, and every use of its
//! memory here goes through cudarc's `device_ptr(stream)` guards (launches) or re-records them
//! (`retype`), so cudarc's ordering of the slice across streams and before its free holds on
//! both sides of the boundary; memory handed back to cudarc first makes its stream wait for every
//! ferrocuda stream that used it, as a `GpuBytes`'s drop would.

use super::gpu::{GpuContext, GpuDevice, GPUS};
use super::memory::GpuBytes;
use crate::error::{Error, Result};
use crate::lock::lock;
use cudarc::driver::{
    result, CudaContext, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, SyncOnDrop,
};
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Device memory of cudarc's lent to a launch (`&CudaSlice<T>`, `&mut CudaSlice<T>`): what the
/// launch needs of it, with cudarc's event tracking.
pub trait CudarcMemory: Send + Sync {
    /// The context it was allocated in.
    fn cudarc_context(&self) -> &Arc<CudaContext>;
    /// Its size in bytes.
    fn byte_len(&self) -> usize;
    /// Its address for work on `stream`, which is made to wait for its last writer; the guard
    /// records the read on `stream` when dropped.
    fn read_on<'s>(&'s self, stream: &'s CudaStream) -> (u64, SyncOnDrop<'s>);
    /// Its address for work on `stream` that writes it, which is made to wait for its last
    /// reader and writer; the guard records the write on `stream` when dropped.
    fn write_on<'s>(&'s mut self, stream: &'s CudaStream) -> (u64, SyncOnDrop<'s>);
}

impl<T> CudarcMemory for CudaSlice<T> {
    fn cudarc_context(&self) -> &Arc<CudaContext> {
        self.context()
    }
    fn byte_len(&self) -> usize {
        self.num_bytes()
    }
    fn read_on<'s>(&'s self, stream: &'s CudaStream) -> (u64, SyncOnDrop<'s>) {
        self.device_ptr(stream)
    }
    fn write_on<'s>(&'s mut self, stream: &'s CudaStream) -> (u64, SyncOnDrop<'s>) {
        self.device_ptr_mut(stream)
    }
}

/// The same memory as a slice of `len` `U`s (its byte size), without a copy: the slice's stream
/// first waits for its last reader and writer (cudarc's `leak`), and the new slice's events are
/// recorded there at once, so later users on any stream wait for everything the old events
/// stood for.
///
/// # Safety
/// `len × size_of::<U>()` is at most the slice's byte size, and every bit pattern of those
/// bytes is a valid `U` (callers pass `Pod` types, or `u8`).
unsafe fn retype<T, U>(slice: CudaSlice<T>, len: usize) -> CudaSlice<U> {
    let stream = slice.stream().clone();
    let ptr = slice.leak();
    // SAFETY: `ptr` is the live allocation `leak` just gave up, of at least `len × size_of::<U>()`
    // bytes (the caller's contract), allocated on `stream`, which frees it again when the new
    // slice drops; no other owner of it remains.
    let mut new = unsafe { stream.upgrade_device_ptr::<U>(ptr, len) };
    // The fresh events mark the point `stream` has reached, which is after the old ones.
    drop(new.device_ptr_mut(&stream));
    drop(new.device_ptr(&stream));
    new
}

impl GpuDevice {
    /// The device of the program's context `ctx`: the one ferrocuda already has on it if any
    /// (a `Device::cuda` whose context it is, or an earlier `from_cudarc`), else a new one that
    /// never replaces the context.
    pub(crate) fn wrap(ctx: Arc<CudaContext>) -> Result<Arc<GpuDevice>> {
        let mut gpus = lock(&GPUS);
        gpus.retain(|(_, gpu)| gpu.strong_count() > 0);
        let same = |gpu: &Arc<GpuDevice>| lock(&gpu.current).ctx.cu_ctx() == ctx.cu_ctx();
        if let Some(gpu) = gpus.iter().filter_map(|(_, gpu)| gpu.upgrade()).find(same) {
            if ctx.is_primary() {
                gpu.primary_shared.store(true, Ordering::Relaxed);
            }
            return Ok(gpu);
        }
        let gpu = Arc::new(GpuDevice::in_context(ctx, true)?);
        gpus.push((gpu.ordinal, Arc::downgrade(&gpu)));
        Ok(gpu)
    }

    /// The CUDA context work runs in now.
    pub(crate) fn cudarc_context(&self) -> Arc<CudaContext> {
        self.context().ctx.clone()
    }

    /// The CUDA context `g`'s, or [`Error::WrongDevice`] for memory or a stream of another.
    pub(super) fn check_cudarc(
        &self,
        g: &GpuContext,
        what: &'static str,
        ctx: &CudaContext,
    ) -> Result<()> {
        if ctx.cu_ctx() == g.ctx.cu_ctx() {
            return Ok(());
        }
        let owner = match ctx.ordinal() == self.ordinal {
            true => format!("CUDA device {} in another CUDA context", ctx.ordinal()),
            false => format!("CUDA device {}", ctx.ordinal()),
        };
        Err(Error::WrongDevice {
            what,
            owner,
            device: self.label.clone(),
        })
    }

    /// A `CudaSlice` of this device's context as a buffer's bytes, without a copy.
    pub(crate) fn adopt<T>(&self, slice: CudaSlice<T>) -> Result<GpuBytes> {
        let g = self.context();
        self.check_cudarc(&g, "a cudarc slice", slice.context())?;
        let bytes = slice.num_bytes();
        // SAFETY: the same bytes, as bytes: every pattern is a valid `u8`.
        let slice = unsafe { retype::<T, u8>(slice, bytes) };
        Ok(self.bytes_in(&g, Some(slice)))
    }

    /// Copies `bytes` bytes from `src` at `src_offset` on `from` (another GPU, or another context)
    /// into `dst` at `dst_offset` on this device (`cuMemcpyPeerAsync`, queued on this device's
    /// default stream). The copy waits for the work queued so far on `src` and `dst`, and
    /// `src`'s later users and its free wait for the copy. The caller checked both ranges.
    pub(crate) fn copy_from_peer(
        &self,
        from: &GpuDevice,
        (src, src_offset): (&GpuBytes, usize),
        (dst, dst_offset): (&mut GpuBytes, usize),
        bytes: usize,
    ) -> Result<()> {
        let g = self.context();
        let h = from.context();
        self.check_live(&g, dst)?;
        from.check_live(&h, src)?;
        let (Some(from_slice), Some(to_slice), true) = (&src.slice, &mut dst.slice, bytes > 0)
        else {
            return Ok(());
        };
        let on_src = |call| from.driver_error(&h, call);
        let on_dst = |call| self.driver_error(&g, call);
        // The copy waits for the work queued on `src` so far: on its allocation's stream
        // (ferrocuda's default stream, or the cudarc stream it came from) and every stream
        // that used it.
        let mut src_streams = vec![from_slice.stream().clone(), h.stream.clone()];
        src_streams.extend(lock(&src.used_on).iter().cloned());
        for stream in &src_streams {
            let event = stream.record_event(None).map_err(on_src("cuEventRecord"))?;
            g.stream.wait(&event).map_err(on_dst("cuStreamWaitEvent"))?;
        }
        {
            // `dst` is this context's: cudarc's guard orders the copy after its last users and
            // records the write on the default stream.
            let (dst_ptr, _record) = to_slice.device_ptr_mut(&g.stream);
            // `src` is read without a guard now (its events are of the other context and cannot
            // be recorded on this stream); its read is recorded below, after its stream waits
            // for the copy.
            let (src_ptr, read) = from_slice.device_ptr(from_slice.stream());
            std::mem::forget(read);
            // SAFETY: both ranges are inside live allocations of their contexts (checked by the
            // caller and `check_live`); the stream is this context's; the copy is ordered after
            // the work queued on both buffers (above) and before `src`'s later work and free
            // (below), and `dst` is borrowed mutably for the call.
            unsafe {
                result::memcpy_peer_async(
                    g.ctx.cu_ctx(),
                    dst_ptr + dst_offset as u64,
                    h.ctx.cu_ctx(),
                    src_ptr + src_offset as u64,
                    bytes,
                    g.stream.cu_stream(),
                )
            }
            .map_err(on_dst("cuMemcpyPeerAsync"))?;
        }
        // `src`'s own stream (so its free, and the next work ferrocuda queues there) waits for
        // the copy, and its read event is recorded after that wait: a later writer of `src` on
        // any stream waits for the copy (cudarc's tracking).
        let done = g
            .stream
            .record_event(None)
            .map_err(on_dst("cuEventRecord"))?;
        for stream in [from_slice.stream(), &h.stream] {
            stream.wait(&done).map_err(on_src("cuStreamWaitEvent"))?;
        }
        drop(from_slice.device_ptr(from_slice.stream()));
        Ok(())
    }
}

impl GpuBytes {
    /// The memory as a `CudaSlice` of `len` `T`s, handed to the program: its stream first waits
    /// for the work queued so far on every ferrocuda stream that used it (cudarc itself knows
    /// only the last reader and writer). An empty buffer becomes an empty slice of its own.
    ///
    /// # Safety
    /// `len × size_of::<T>()` is at most its byte size and every bit pattern is a valid `T`.
    pub(crate) unsafe fn into_cudarc<T>(
        mut self,
        gpu: &GpuDevice,
        len: usize,
    ) -> Result<CudaSlice<T>> {
        let slice = match self.slice.take() {
            Some(slice) => slice,
            None => {
                // cudarc has no empty slice without an allocation: one byte, of length 0.
                let g = gpu.context();
                // SAFETY: one byte of `u8`, which any bits are; it is never read as such.
                unsafe { g.stream.alloc::<u8>(1) }.map_err(gpu.driver_error(&g, "cuMemAlloc"))?
            }
        };
        let owner = slice.stream().clone();
        for stream in lock(&self.used_on).drain(..) {
            let ctx = stream.context();
            match stream.record_event(None) {
                Ok(event) => ctx.record_err(owner.wait(&event)),
                // The event could not be recorded (a faulted context): wait for the stream.
                Err(_) => ctx.record_err(stream.synchronize()),
            }
        }
        // SAFETY: the caller's contract (an empty buffer's slice has 0 elements).
        Ok(unsafe { retype::<u8, T>(slice, len) })
    }
}
