//! The CUDA backend's core: one [`GpuDevice`] per GPU and process, its current context and the
//! handling of kernel faults that every other `cuda/` file goes through.
//!
//! One [`GpuDevice`] per GPU and process, shared by every [`crate::Device`] of that ordinal. It
//! runs work in a *current* CUDA context. A kernel fault (an illegal address, a trap) destroys a
//! context for good ("sticky" errors): the device then makes a new context and carries on, so the
//! program can keep using the GPU. Buffers and streams remember the context they were made in;
//! using one from a destroyed context is an [`Error::ContextLost`], and modules reload lazily in
//! the new context. The old context stays alive (faulted, but with valid handles) until its last
//! buffer, stream and module is dropped, so no handle of it can ever alias one of the new
//! context; a faulted primary context is then reset (`cuDevicePrimaryCtxReset`), so that other
//! users of it in the process (cuBLAS) recover too. A fault names the kernel to blame: the
//! unfinished one of the stream where the fault showed (see `kernel_trail.rs`).
//!
//! It imports nothing of the crate above the error type, the plain data types and the kernel
//! trail, so that every other CUDA file, and the public types, can build on it.

use super::driver_library::{describe, driver_cuda_version, driver_present, no_driver};
use crate::device_properties::{DeviceKind, DeviceProperties};
use crate::error::{Error, Result};
use crate::kernel_trail::{Launches, Trail};
use crate::lock::lock;
use cudarc::driver::sys::{CUdevice_attribute as Attr, CUevent_flags, CUresult};
use cudarc::driver::{sys, CudaContext, CudaStream, DriverError};
use ferrocuda_std::Dim3;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

/// Driver errors that mean a kernel faulted while running. They are sticky: the context can run
/// no more work and must be replaced.
pub(super) fn is_kernel_fault(error: &DriverError) -> bool {
    matches!(
        error.0,
        CUresult::CUDA_ERROR_ILLEGAL_ADDRESS
            | CUresult::CUDA_ERROR_LAUNCH_FAILED
            | CUresult::CUDA_ERROR_ASSERT
            | CUresult::CUDA_ERROR_ILLEGAL_INSTRUCTION
            | CUresult::CUDA_ERROR_MISALIGNED_ADDRESS
            | CUresult::CUDA_ERROR_INVALID_ADDRESS_SPACE
            | CUresult::CUDA_ERROR_INVALID_PC
            | CUresult::CUDA_ERROR_HARDWARE_STACK_ERROR
            | CUresult::CUDA_ERROR_LAUNCH_TIMEOUT
    )
}

/// Ids of contexts, unique in the process: what buffers, streams and modules remember.
static NEXT_CONTEXT_ID: AtomicU64 = AtomicU64::new(1);

/// One CUDA context of a GPU, with its default stream.
pub(super) struct GpuContext {
    pub(super) id: u64,
    pub(super) ctx: Arc<CudaContext>,
    pub(super) stream: Arc<CudaStream>,
    /// The kernels launched: kernels run asynchronously, so a fault may only show at a later
    /// copy or synchronization, which then names the kernel to blame.
    pub(super) launches: Launches,
    /// The default stream's last unfinished kernel.
    pub(super) default_trail: Arc<Trail>,
}

impl GpuContext {
    pub(super) fn new(ctx: Arc<CudaContext>) -> GpuContext {
        GpuContext {
            id: NEXT_CONTEXT_ID.fetch_add(1, Ordering::Relaxed),
            stream: ctx.default_stream(),
            ctx,
            launches: Launches::default(),
            default_trail: Arc::default(),
        }
    }

    /// A new context of its own (not the primary one, which the fault left broken and which old
    /// buffers still hold): `cuCtxCreate_v4` where the driver has it (CUDA 12.5+), else `_v2`.
    fn fresh(ordinal: usize) -> Result<GpuContext, DriverError> {
        let v4 = driver_cuda_version().is_ok_and(|v| v >= (12, 5));
        let ctx = if v4 {
            CudaContext::new_non_primary(ordinal, 0)?
        } else {
            let device = cudarc::driver::result::device::get(ordinal as i32)?;
            let mut raw: sys::CUcontext = std::ptr::null_mut();
            // SAFETY: `device` is a valid device handle; the call writes one context handle.
            unsafe { sys::cuCtxCreate_v2(&mut raw, 0, device) }.result()?;
            // SAFETY: `raw` was just created for `device` and is handed over, not kept.
            unsafe { CudaContext::from_raw_context(ordinal, device, raw)? }
        };
        Ok(GpuContext::new(ctx))
    }
}

/// Ids of [`GpuDevice`]s, unique in the process: what buffers remember besides their context.
static NEXT_GPU_ID: AtomicU64 = AtomicU64::new(1);

/// One GPU, shared by all [`crate::Device`]s of its ordinal in the process; or one context of
/// the program's own (`Device::from_cudarc`), shared by every `Device` made from it.
pub(crate) struct GpuDevice {
    pub(super) id: u64,
    pub(super) ordinal: usize,
    /// The context is the program's (`Device::from_cudarc`): ferrocuda never replaces it.
    pub(super) borrowed: bool,
    /// The program holds the primary context too (`Device::from_cudarc` of it returned this
    /// device): after a fault it is never reset, since the program's own `CudaSlice`s in it
    /// would then free addresses the reset context may hand out again.
    pub(super) primary_shared: std::sync::atomic::AtomicBool,
    pub(super) label: String,
    pub(super) properties: DeviceProperties,
    pub(super) current: Mutex<Arc<GpuContext>>,
    /// The primary context after a kernel fault destroyed it, until the last of this crate's
    /// objects made in it (buffers, streams, modules) is gone: then it is reset, so that other
    /// users of the primary context in the process (cuBLAS) can work again.
    pub(super) faulted_primary: Mutex<Option<Arc<CudaContext>>>,
}

/// The GPUs open in this process: one [`GpuDevice`] per ordinal, while any `Device` uses it.
pub(super) static GPUS: Mutex<Vec<(usize, Weak<GpuDevice>)>> = Mutex::new(Vec::new());

impl GpuDevice {
    /// GPU `ordinal`, shared with every other `Device` of it in the process.
    pub(crate) fn shared(ordinal: usize) -> Result<Arc<GpuDevice>> {
        let mut gpus = lock(&GPUS);
        gpus.retain(|(_, gpu)| gpu.strong_count() > 0);
        if let Some(gpu) = gpus
            .iter()
            .filter(|(o, _)| *o == ordinal)
            .filter_map(|(_, gpu)| gpu.upgrade())
            .find(|gpu| !gpu.borrowed)
        {
            return Ok(gpu);
        }
        let gpu = Arc::new(GpuDevice::open(ordinal)?);
        gpus.push((ordinal, Arc::downgrade(&gpu)));
        Ok(gpu)
    }

    fn open(ordinal: usize) -> Result<GpuDevice> {
        if !driver_present() {
            return Err(no_driver());
        }
        let no_device = |detail: String| Error::NoDevice { ordinal, detail };
        cudarc::driver::result::init().map_err(|e| no_device(format!("cuInit failed: {e}")))?;
        let count = CudaContext::device_count()
            .map_err(|e| no_device(format!("cuDeviceGetCount failed: {e}")))?;
        if ordinal >= count.max(0) as usize {
            return Err(no_device(format!(
                "the driver reports {count} CUDA device(s)"
            )));
        }
        let ctx =
            CudaContext::new(ordinal).map_err(|e| no_device(format!("cuCtxCreate failed: {e}")))?;
        GpuDevice::in_context(ctx, false)
    }

    /// A device that runs its work in `ctx`; `borrowed`: the program's context, never replaced.
    pub(super) fn in_context(ctx: Arc<CudaContext>, borrowed: bool) -> Result<GpuDevice> {
        let ordinal = ctx.ordinal();
        let query = |attr: Attr| -> Result<u32> {
            ctx.attribute(attr)
                .map(|v| v.max(0) as u32)
                .map_err(|source| Error::Driver {
                    call: "cuDeviceGetAttribute",
                    device: format!("CUDA device {ordinal}"),
                    source,
                })
        };
        let name = ctx.name().unwrap_or_else(|_| "unknown GPU".into());
        let (major, minor) = ctx.compute_capability().map_err(|source| Error::Driver {
            call: "cuDeviceGetAttribute",
            device: format!("CUDA device {ordinal}"),
            source,
        })?;
        let properties = DeviceProperties {
            name,
            kind: DeviceKind::Cuda { ordinal },
            compute_capability: Some((major as u32, minor as u32)),
            multiprocessors: query(Attr::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
            max_threads_per_block: query(Attr::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
            max_block_dim: Dim3::new(
                query(Attr::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)?,
                query(Attr::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y)?,
                query(Attr::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)?,
            ),
            max_grid_dim: Dim3::new(
                query(Attr::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)?,
                query(Attr::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)?,
                query(Attr::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)?,
            ),
            // Without opting a function in (cuFuncSetAttribute), this is the dynamic limit.
            max_shared_memory_per_block: query(
                Attr::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
            )?,
            warp_size: query(Attr::CU_DEVICE_ATTRIBUTE_WARP_SIZE)?,
        };
        let label = format!(
            "CUDA device {ordinal}: {} (sm_{major}{minor}, {} SMs)",
            properties.name, properties.multiprocessors
        );
        Ok(GpuDevice {
            id: NEXT_GPU_ID.fetch_add(1, Ordering::Relaxed),
            ordinal,
            borrowed,
            primary_shared: std::sync::atomic::AtomicBool::new(false),
            label,
            properties,
            current: Mutex::new(Arc::new(GpuContext::new(ctx))),
            faulted_primary: Mutex::new(None),
        })
    }

    pub(crate) fn properties(&self) -> &DeviceProperties {
        &self.properties
    }

    /// The context work runs in now.
    pub(super) fn context(&self) -> Arc<GpuContext> {
        self.release_faulted_primary();
        lock(&self.current).clone()
    }

    /// Resets the faulted primary context once nothing of this crate holds it any more.
    ///
    /// `cuDevicePrimaryCtxReset` destroys every allocation, module and stream of the primary
    /// context; doing it only when the last of ours was dropped means none of our handles can
    /// later free or use something of the reset context (which may reuse their values).
    fn release_faulted_primary(&self) {
        let mut faulted = lock(&self.faulted_primary);
        let Some(ctx) = faulted.as_ref() else {
            return;
        };
        if Arc::strong_count(ctx) > 1 || self.primary_shared.load(Ordering::Relaxed) {
            return;
        }
        let device = ctx.cu_device();
        // Our last retain of it goes (cuDevicePrimaryCtxRelease).
        *faulted = None;
        // cudarc panics if the driver lacks the entry point (an emulator may): then the primary
        // context stays as it is, as before this existed. A failed reset leaves only the other
        // users of the faulted context as they were; ferrocuda itself already runs in a new one.
        let _ = std::panic::catch_unwind(|| {
            // SAFETY: `device` is a valid device handle; nothing of this crate refers to the
            // primary context any more (checked above), and it is faulted for every other user
            // anyway.
            unsafe { sys::cuDevicePrimaryCtxReset_v2(device) }
        });
    }

    /// Replaces `failed`, a context a kernel fault destroyed, with a new one (unless another
    /// thread already did). Says what happened, for [`Error::KernelFailed`].
    fn recover(&self, failed: &GpuContext) -> String {
        if self.borrowed {
            return "the context is your program's (`Device::from_cudarc`), so ferrocuda cannot \
                    replace it: it stays faulted, every later call in it (ferrocuda's launches and \
                    your cudarc objects alike) fails with this error, as CUDA defines; make a new \
                    `CudaContext` and `Device::from_cudarc` of it, and upload the data again"
                .into();
        }
        let mut current = lock(&self.current);
        if current.id != failed.id {
            return "ferrocuda already made a new one after an earlier error; buffers and streams \
                    made before the fault are lost (using them is an error)"
                .into();
        }
        match GpuContext::fresh(self.ordinal) {
            Ok(fresh) => {
                if failed.ctx.is_primary() {
                    *lock(&self.faulted_primary) = Some(failed.ctx.clone());
                }
                *current = Arc::new(fresh);
                "ferrocuda made a new one, so later launches on this device work; device buffers \
                 and streams made before the fault are lost (using them is an error): upload the \
                 data again"
                    .into()
            }
            Err(e) => format!(
                "making a new context failed too ({}); restart the program, or run on the CPU \
                 executor (FERROCUDA_DEVICE=cpu)",
                describe(&e)
            ),
        }
    }

    /// Maps a driver error of a context-wide `call` in context `g`. A kernel fault names the
    /// last unfinished kernel launched there, and replaces the context.
    pub(super) fn driver_error<'a>(
        &'a self,
        g: &'a GpuContext,
        call: &'static str,
    ) -> impl FnOnce(DriverError) -> Error + 'a {
        self.stream_error(g, None, None, call)
    }

    /// Maps a driver error of `call` on the stream of `trail` (`None`: context-wide), while
    /// launching `launching` if it is a launch. A kernel fault names the kernel to blame (see
    /// [`Launches::blame`]), and replaces the context.
    pub(super) fn stream_error<'a>(
        &'a self,
        g: &'a GpuContext,
        trail: Option<&'a Trail>,
        launching: Option<&'static str>,
        call: &'static str,
    ) -> impl FnOnce(DriverError) -> Error + 'a {
        move |source| {
            if is_kernel_fault(&source) {
                let kernel = g
                    .launches
                    .blame(trail, launching)
                    .unwrap_or("(none launched by ferrocuda)");
                Error::KernelFailed {
                    recovery: self.recover(g),
                    kernel,
                    device: self.label.clone(),
                    detected: call,
                    source,
                }
            } else {
                Error::Driver {
                    call,
                    device: self.label.clone(),
                    source,
                }
            }
        }
    }

    pub(crate) fn ordinal(&self) -> usize {
        self.ordinal
    }

    pub(crate) fn synchronize(&self) -> Result<()> {
        let g = self.context();
        let mark = g.launches.mark();
        g.ctx
            .synchronize()
            .map_err(self.driver_error(&g, "cuCtxSynchronize"))?;
        g.launches.finished_upto(mark);
        Ok(())
    }

    /// Waits for `stream` (made in context `context`, with `trail`) through the same fault
    /// handling as every other call: a fault names the stream's kernel and replaces the context.
    pub(crate) fn synchronize_stream(
        &self,
        stream: &CudaStream,
        context: u64,
        trail: &Trail,
    ) -> Result<()> {
        let g = self.context();
        if context != g.id {
            return Err(self.stream_lost());
        }
        let mark = g.launches.mark();
        stream.synchronize().map_err(self.stream_error(
            &g,
            Some(trail),
            None,
            "cuStreamSynchronize",
        ))?;
        trail.finished_upto(mark);
        Ok(())
    }

    pub(super) fn stream_lost(&self) -> Error {
        Error::ContextLost {
            what: "a stream",
            device: self.label.clone(),
            fix: "`device.new_stream()`",
        }
    }

    pub(crate) fn time<R>(&self, work: impl FnOnce() -> Result<R>) -> Result<(R, Duration)> {
        let g = self.context();
        let event = || {
            g.ctx
                .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(self.driver_error(&g, "cuEventCreate"))
        };
        let (start, end) = (event()?, event()?);
        start
            .record(&g.stream)
            .map_err(self.driver_error(&g, "cuEventRecord"))?;
        let value = work()?;
        end.record(&g.stream)
            .map_err(self.driver_error(&g, "cuEventRecord"))?;
        end.synchronize()
            .map_err(self.driver_error(&g, "cuEventSynchronize"))?;
        let ms = start
            .elapsed_ms(&end)
            .map_err(self.driver_error(&g, "cuEventElapsedTime"))?;
        Ok((value, Duration::from_secs_f64(f64::from(ms) / 1e3)))
    }
}
