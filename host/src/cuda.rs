//! The CUDA backend: a thin layer over `cudarc`'s driver API (loaded at run time).
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

use crate::device::{DeviceKind, DeviceProperties};
use crate::error::{Error, Result};
use crate::kernel_trail::{Launches, Trail};
use crate::launch::{Arg, LaunchConfig, ParamSlot};
use crate::module::Ptx;
use crate::ptx::PtxInfo;
use crate::stream::Stream;
use cudarc::driver::sys::{
    CUdevice_attribute as Attr, CUevent_flags, CUfunction_attribute as FuncAttr, CUjit_option,
    CUresult,
};
use cudarc::driver::{
    sys, CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, DevicePtrMut,
    DeviceRepr, DriverError, PushKernelArg,
};
use ferrocuda_std::Dim3;
use std::collections::HashMap;
use std::ffi::{c_void, CString};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

// SAFETY: a `ParamSlot` is plain bytes; `cuLaunchKernel` reads the parameter's declared size
// from the slot's start, and `check_abi` made sure the slot holds that many bytes.
unsafe impl DeviceRepr for ParamSlot {}

/// Locks `mutex`, also after a panic elsewhere poisoned it (the data stays consistent: every
/// critical section here only swaps or inserts whole values).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// The variable naming a driver library to use instead of the system's `libcuda`, e.g. the PTX
/// emulator's `target/debug/libferrocuda_emu_cuda.so` (docs/emulator.md).
pub const LIBCUDA_ENV: &str = "FERROCUDA_LIBCUDA";

/// The library [`LIBCUDA_ENV`] names, opened once and kept for the process: `None` when the
/// variable is unset, else the path or why it could not be opened. Its soname is `libcuda.so`,
/// so the system's loader answers cudarc's `dlopen("libcuda.so")` with it.
fn chosen_driver() -> Option<&'static Result<PathBuf, String>> {
    static CHOSEN: std::sync::OnceLock<Option<Result<PathBuf, String>>> =
        std::sync::OnceLock::new();
    CHOSEN
        .get_or_init(|| {
            let path = PathBuf::from(std::env::var_os(LIBCUDA_ENV)?);
            // SAFETY: loading runs the library's initialisers; the variable names a CUDA driver
            // library (the emulator's or NVIDIA's), whose initialisers are sound to run.
            Some(match unsafe { libloading::Library::new(&path) } {
                Ok(library) => {
                    // Kept loaded for the process: cudarc's handle to it lives as long.
                    std::mem::forget(library);
                    Ok(path)
                }
                Err(e) => Err(format!(
                    "{LIBCUDA_ENV}={} could not be loaded: {e}",
                    path.display()
                )),
            })
        })
        .as_ref()
}

/// Whether `libcuda` can be loaded. cudarc panics on the first driver call without it, so every
/// entry into the driver is guarded by this.
pub(crate) fn driver_present() -> bool {
    if chosen_driver().is_some_and(|chosen| chosen.is_err()) {
        return false;
    }
    // SAFETY: only tries to `dlopen` the driver library.
    unsafe { sys::is_culib_present() }
}

/// A driver error as text, e.g. `CUDA_ERROR_LAUNCH_FAILED (unspecified launch failure)`. The
/// driver describes it only when it can be loaded: cudarc's `Display` asks it unconditionally,
/// and so would panic without it.
pub(crate) fn describe(error: &DriverError) -> String {
    let description = driver_present()
        .then(|| error.error_string().ok())
        .flatten()
        .map(|text| text.to_string_lossy().into_owned());
    match description {
        Some(text) => format!("{:?} ({text})", error.0),
        None => format!("{:?}", error.0),
    }
}

/// The library names cudarc tries for the driver, in order, as this platform's loader uses them.
pub(crate) fn driver_candidates() -> Vec<String> {
    let mut names = cudarc::get_lib_name_candidates("cuda");
    let mut seen = std::collections::HashSet::new();
    // cudarc also lists Windows-style names; show the ones this platform's loader would use.
    names.retain(|name| {
        (cfg!(windows) || name.starts_with("libcuda.so")) && seen.insert(name.clone())
    });
    if let Some(chosen) = chosen_driver() {
        let path = match chosen {
            Ok(path) => path.display().to_string(),
            Err(why) => why.clone(),
        };
        names.insert(0, path);
    }
    names
}

/// [`Error::NoDriver`], naming the libraries tried.
pub(crate) fn no_driver() -> Error {
    Error::NoDriver {
        detail: format!(
            "libcuda could not be loaded (tried {})",
            driver_candidates().join(", ")
        ),
    }
}

/// The newest CUDA version the driver supports (`cuDriverGetVersion`), e.g. `(13, 0)`.
pub(crate) fn driver_cuda_version() -> Result<(u32, u32)> {
    if !driver_present() {
        return Err(no_driver());
    }
    let mut version: std::ffi::c_int = 0;
    // SAFETY: the driver is present (checked above); the call writes one int.
    unsafe { sys::cuDriverGetVersion(&mut version) }
        .result()
        .map_err(|source| Error::Driver {
            call: "cuDriverGetVersion",
            device: "the driver".into(),
            source,
        })?;
    let version = version.max(0) as u32;
    Ok((version / 1000, version % 1000 / 10))
}

/// The file the driver library was loaded from, read from the process's memory map (Linux);
/// `None` elsewhere or before the driver was loaded.
pub(crate) fn driver_library_path() -> Option<PathBuf> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines()
        .filter_map(|line| line.split_whitespace().nth(5))
        .find(|path| {
            let name = std::path::Path::new(path).file_name();
            let chosen = chosen_driver().and_then(|c| c.as_ref().ok());
            name.and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("libcuda.so"))
                || chosen.is_some_and(|c| c.file_name() == name)
        })
        .map(PathBuf::from)
}

/// How many CUDA devices the driver reports.
pub(crate) fn gpu_count() -> Result<usize> {
    if !driver_present() {
        return Err(no_driver());
    }
    let driver = |call, source| Error::Driver {
        call,
        device: "the driver".into(),
        source,
    };
    cudarc::driver::result::init().map_err(|e| driver("cuInit", e))?;
    let count = CudaContext::device_count().map_err(|e| driver("cuDeviceGetCount", e))?;
    Ok(count.max(0) as usize)
}

/// Driver errors that mean a kernel faulted while running. They are sticky: the context can run
/// no more work and must be replaced.
fn is_kernel_fault(error: &DriverError) -> bool {
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

mod constants;

/// Ids of contexts, unique in the process: what buffers, streams and modules remember.
static NEXT_CONTEXT_ID: AtomicU64 = AtomicU64::new(1);

/// One CUDA context of a GPU, with its default stream.
struct GpuContext {
    id: u64,
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    /// The kernels launched: kernels run asynchronously, so a fault may only show at a later
    /// copy or synchronization, which then names the kernel to blame.
    launches: Launches,
    /// The default stream's last unfinished kernel.
    default_trail: Arc<Trail>,
}

impl GpuContext {
    fn new(ctx: Arc<CudaContext>) -> GpuContext {
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

/// One GPU, shared by all [`crate::Device`]s of its ordinal in the process.
pub(crate) struct GpuDevice {
    ordinal: usize,
    label: String,
    properties: DeviceProperties,
    current: Mutex<Arc<GpuContext>>,
    /// The primary context after a kernel fault destroyed it, until the last of this crate's
    /// objects made in it (buffers, streams, modules) is gone: then it is reset, so that other
    /// users of the primary context in the process (cuBLAS) can work again.
    faulted_primary: Mutex<Option<Arc<CudaContext>>>,
}

/// Device memory of a [`crate::DeviceBuffer`]: bytes, `None` when empty (CUDA cannot allocate 0).
pub struct GpuBytes {
    slice: Option<CudaSlice<u8>>,
    ordinal: usize,
    /// The context it was allocated in.
    context: u64,
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

/// A PTX module loaded on a GPU: loaded again, lazily, when the context is replaced.
pub(crate) struct LoadedModule {
    ptx: &'static Ptx,
    info: PtxInfo,
    current: Mutex<Arc<ModuleInContext>>,
    /// The constant tables set so far, written again when the module is loaded in a new context.
    constants: Mutex<ferrocuda_std::cpu::ConstantTables>,
}

/// A module in one context, with its functions looked up once.
struct ModuleInContext {
    context: u64,
    module: Arc<CudaModule>,
    functions: Mutex<HashMap<&'static str, (CudaFunction, FunctionLimits)>>,
}

/// What one compiled kernel allows on this GPU (`cuFuncGetAttribute`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FunctionLimits {
    /// Threads per block it can be launched with (its registers may limit it below the device's).
    pub max_threads: u32,
    /// Registers per thread.
    pub registers: u32,
    /// Static shared memory per block, bytes.
    pub static_shared: u32,
    /// Dynamic shared memory per block it may be launched with, bytes.
    pub max_dynamic_shared: u32,
}

/// Checks a launch against the kernel's own limits on the GPU.
pub(crate) fn check_function_limits(
    kernel: &'static str,
    config: &LaunchConfig,
    limits: &FunctionLimits,
    device: &str,
) -> Result<()> {
    let threads = config.block.count();
    if threads > u64::from(limits.max_threads) {
        return Err(Error::KernelBlockTooLarge {
            kernel,
            threads,
            registers: limits.registers,
            device: device.to_string(),
            max_threads: limits.max_threads,
        });
    }
    if config.shared_mem_bytes > limits.max_dynamic_shared {
        return Err(Error::KernelSharedMemoryTooLarge {
            kernel,
            requested: config.shared_mem_bytes,
            static_bytes: limits.static_shared,
            device: device.to_string(),
            limit: limits.max_dynamic_shared,
        });
    }
    Ok(())
}

/// What the driver's JIT compiler said about a PTX module (`cuModuleLoadDataEx` logs).
pub(crate) struct JitOutcome {
    /// The module, or the driver's error.
    pub result: Result<sys::CUmodule, DriverError>,
    /// `CU_JIT_INFO_LOG_BUFFER` (verbose: registers and memory per kernel).
    pub info_log: String,
    /// `CU_JIT_ERROR_LOG_BUFFER`: why it failed.
    pub error_log: String,
}

impl JitOutcome {
    /// The error log, or a note that the driver wrote none.
    fn error_text(&self) -> String {
        if self.error_log.is_empty() {
            "(the driver wrote no JIT error log)".into()
        } else {
            self.error_log.clone()
        }
    }
}

/// Loads `source` into `ctx` with `cuModuleLoadDataEx`, collecting the JIT's logs.
fn jit_load(ctx: &CudaContext, source: &str) -> Result<JitOutcome, DriverError> {
    let Ok(image) = CString::new(source) else {
        return Ok(JitOutcome {
            result: Err(DriverError(CUresult::CUDA_ERROR_INVALID_PTX)),
            info_log: String::new(),
            error_log: "the PTX text contains a NUL byte".into(),
        });
    };
    ctx.bind_to_thread()?;
    const LOG_BYTES: usize = 64 * 1024;
    let mut info = vec![0u8; LOG_BYTES];
    let mut error = vec![0u8; LOG_BYTES];
    let mut options = [
        CUjit_option::CU_JIT_INFO_LOG_BUFFER,
        CUjit_option::CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
        CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
        CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
        CUjit_option::CU_JIT_LOG_VERBOSE,
    ];
    // Integer options travel in the pointer-sized value slots; the driver writes the bytes it
    // logged back into the size slots.
    let mut values: [*mut c_void; 5] = [
        info.as_mut_ptr().cast(),
        std::ptr::without_provenance_mut(LOG_BYTES),
        error.as_mut_ptr().cast(),
        std::ptr::without_provenance_mut(LOG_BYTES),
        std::ptr::without_provenance_mut(1),
    ];
    let mut module: sys::CUmodule = std::ptr::null_mut();
    // SAFETY: `image` is NUL-terminated PTX text; `options` and `values` have the same length
    // and the log buffers are LOG_BYTES long as the size options say; all outlive the call, and
    // the context is bound to this thread.
    let result = unsafe {
        sys::cuModuleLoadDataEx(
            &mut module,
            image.as_ptr().cast(),
            options.len() as u32,
            options.as_mut_ptr(),
            values.as_mut_ptr(),
        )
    }
    .result();
    let text = |buffer: &[u8], used: *mut c_void| {
        let used = &buffer[..used.addr().min(buffer.len())];
        let end = used.iter().position(|&b| b == 0).unwrap_or(used.len());
        String::from_utf8_lossy(&used[..end]).trim().to_string()
    };
    Ok(JitOutcome {
        result: result.map(|()| module),
        info_log: text(&info, values[1]),
        error_log: text(&error, values[3]),
    })
}

/// Unloads a module [`jit_load`] made.
fn unload(ctx: &CudaContext, module: sys::CUmodule) {
    ctx.record_err(ctx.bind_to_thread());
    // SAFETY: `module` was loaded into `ctx` by `jit_load` and is not used afterwards.
    ctx.record_err(unsafe { sys::cuModuleUnload(module) }.result());
}

/// The GPUs open in this process: one [`GpuDevice`] per ordinal, while any `Device` uses it.
static GPUS: Mutex<Vec<(usize, Weak<GpuDevice>)>> = Mutex::new(Vec::new());

impl GpuDevice {
    /// GPU `ordinal`, shared with every other `Device` of it in the process.
    pub(crate) fn shared(ordinal: usize) -> Result<Arc<GpuDevice>> {
        let mut gpus = lock(&GPUS);
        gpus.retain(|(_, gpu)| gpu.strong_count() > 0);
        if let Some(gpu) = gpus
            .iter()
            .filter(|(o, _)| *o == ordinal)
            .find_map(|(_, gpu)| gpu.upgrade())
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
            ordinal,
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
    fn context(&self) -> Arc<GpuContext> {
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
        if Arc::strong_count(ctx) > 1 {
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
    fn driver_error<'a>(
        &'a self,
        g: &'a GpuContext,
        call: &'static str,
    ) -> impl FnOnce(DriverError) -> Error + 'a {
        self.stream_error(g, None, None, call)
    }

    /// Maps a driver error of `call` on the stream of `trail` (`None`: context-wide), while
    /// launching `launching` if it is a launch. A kernel fault names the kernel to blame (see
    /// [`Launches::blame`]), and replaces the context.
    fn stream_error<'a>(
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

    /// Turns an allocation failure into [`Error::OutOfMemory`] with the free and total bytes.
    fn alloc_error(&self, g: &GpuContext, requested: usize, source: DriverError) -> Error {
        if source.0 == CUresult::CUDA_ERROR_OUT_OF_MEMORY {
            let (free, total) = g.ctx.mem_get_info().unwrap_or((0, 0));
            Error::OutOfMemory {
                device: self.label.clone(),
                requested,
                free,
                total,
            }
        } else {
            self.driver_error(g, "cuMemAlloc")(source)
        }
    }

    /// Refuses a buffer of another GPU or of a context a fault destroyed.
    fn check_live(&self, g: &GpuContext, bytes: &GpuBytes) -> Result<()> {
        if bytes.ordinal != self.ordinal {
            return Err(Error::WrongDevice {
                what: "a buffer",
                owner: format!("CUDA device {}", bytes.ordinal),
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

    pub(crate) fn new_stream(self: &Arc<Self>) -> Result<Stream> {
        let g = self.context();
        let stream = g
            .ctx
            .new_stream()
            .map_err(self.driver_error(&g, "cuStreamCreate"))?;
        Ok(Stream::gpu(self.clone(), stream, g.id))
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

    fn stream_lost(&self) -> Error {
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

    pub(crate) fn upload(&self, bytes: &[u8]) -> Result<GpuBytes> {
        let g = self.context();
        self.upload_on(&g, &g.stream, bytes)
    }

    fn upload_on(
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
        Ok(GpuBytes {
            slice,
            ordinal: self.ordinal,
            context: g.id,
        })
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
        Ok(GpuBytes {
            slice,
            ordinal: self.ordinal,
            context: g.id,
        })
    }

    /// Copies device bytes to the host and waits for the copy.
    pub(crate) fn download(&self, src: &GpuBytes, dst: &mut [u8]) -> Result<()> {
        let g = self.context();
        self.check_live(&g, src)?;
        if let Some(slice) = &src.slice {
            let trail = Some(&*g.default_trail);
            let mark = g.launches.mark();
            g.stream.memcpy_dtoh(slice, dst).map_err(self.stream_error(
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

    /// Copies device bytes into other device bytes of the same length, on the default stream
    /// (queued: it does not wait).
    pub(crate) fn copy_within(&self, src: &GpuBytes, dst: &mut GpuBytes) -> Result<()> {
        let g = self.context();
        self.check_live(&g, src)?;
        self.check_live(&g, dst)?;
        if let (Some(from), Some(to)) = (&src.slice, &mut dst.slice) {
            g.stream
                .memcpy_dtod(from, to)
                .map_err(self.driver_error(&g, "cuMemcpyDtoD"))?;
        }
        Ok(())
    }

    /// Copies host bytes into existing device bytes of the same length.
    pub(crate) fn overwrite(&self, dst: &mut GpuBytes, src: &[u8]) -> Result<()> {
        let g = self.context();
        self.check_live(&g, dst)?;
        if let Some(slice) = &mut dst.slice {
            g.stream
                .memcpy_htod(src, slice)
                .map_err(self.driver_error(&g, "cuMemcpyHtoD"))?;
        }
        Ok(())
    }

    /// [`Error::GpuTooOld`] if the PTX targets a newer GPU than this one.
    fn check_target(&self, ptx: &Ptx, info: &PtxInfo) -> Result<()> {
        let (major, minor) = self.properties.compute_capability.unwrap_or((0, 0));
        match info.target_compute_capability() {
            Some(target) if target > (major, minor) => Err(Error::GpuTooOld {
                module: ptx.name(),
                target: info.target.clone().unwrap_or_default(),
                device: self.label.clone(),
                major,
                minor,
            }),
            _ => Ok(()),
        }
    }

    /// [`Error::PtxRejected`] for `source`, the driver's answer to loading `ptx`.
    fn ptx_rejected(
        &self,
        ptx: &Ptx,
        info: &PtxInfo,
        source: DriverError,
        jit_log: String,
    ) -> Error {
        Error::PtxRejected {
            module: ptx.name(),
            driver_cuda: driver_cuda_version().ok(),
            jit_log: jit_log.into(),
            ptx_version: info.version_string(),
            target: info.target.clone().unwrap_or_else(|| "no .target".into()),
            device: self.label.clone(),
            source,
        }
    }

    /// Loads `ptx` into context `g`; if the driver refuses, loads it once more with log buffers
    /// to tell why.
    fn load_in(&self, g: &GpuContext, ptx: &Ptx, info: &PtxInfo) -> Result<Arc<ModuleInContext>> {
        if ptx.source().contains('\0') {
            return Err(self.ptx_rejected(
                ptx,
                info,
                DriverError(CUresult::CUDA_ERROR_INVALID_PTX),
                "the PTX text contains a NUL byte".into(),
            ));
        }
        let module = g
            .ctx
            .load_module(cudarc::nvrtc::Ptx::from_src(ptx.source()))
            .map_err(|source| {
                if is_kernel_fault(&source) {
                    return self.driver_error(g, "cuModuleLoadData")(source);
                }
                let jit_log = match jit_load(&g.ctx, ptx.source()) {
                    Ok(JitOutcome {
                        result: Ok(module), ..
                    }) => {
                        unload(&g.ctx, module);
                        "(none: loading it again with log buffers succeeded)".into()
                    }
                    Ok(outcome) => outcome.error_text(),
                    Err(e) => format!("(could not load it again to read the log: {e})"),
                };
                self.ptx_rejected(ptx, info, source, jit_log)
            })?;
        Ok(Arc::new(ModuleInContext {
            context: g.id,
            module,
            functions: Mutex::new(HashMap::new()),
        }))
    }

    pub(crate) fn load(&self, ptx: &'static Ptx, info: &PtxInfo) -> Result<LoadedModule> {
        self.check_target(ptx, info)?;
        let g = self.context();
        let module = self.load_in(&g, ptx, info)?;
        Ok(LoadedModule {
            ptx,
            info: info.clone(),
            current: Mutex::new(module),
            constants: Mutex::default(),
        })
    }

    /// Loads `ptx` the way [`GpuDevice::load`] does, but through `cuModuleLoadDataEx` with log
    /// buffers, and unloads it again: `Ok` with the JIT's info log, or why the driver refused.
    pub(crate) fn jit_check(&self, ptx: &Ptx, info: &PtxInfo) -> Result<String> {
        let g = self.context();
        let outcome =
            jit_load(&g.ctx, ptx.source()).map_err(self.driver_error(&g, "cuCtxSetCurrent"))?;
        match outcome.result {
            Ok(module) => {
                unload(&g.ctx, module);
                Ok(outcome.info_log)
            }
            Err(source) if is_kernel_fault(&source) => {
                Err(self.driver_error(&g, "cuModuleLoadDataEx")(source))
            }
            Err(source) => {
                let log = outcome.error_text();
                Err(self.ptx_rejected(ptx, info, source, log))
            }
        }
    }

    /// `module` in context `g`: loaded again if the context was replaced since.
    fn module_in(&self, g: &GpuContext, module: &LoadedModule) -> Result<Arc<ModuleInContext>> {
        let mut current = lock(&module.current);
        if current.context != g.id {
            *current = self.load_in(g, module.ptx, &module.info)?;
            self.restore_constants(g, &current, module)?;
        }
        Ok(current.clone())
    }

    fn function(
        &self,
        g: &GpuContext,
        module: &LoadedModule,
        name: &'static str,
    ) -> Result<(CudaFunction, FunctionLimits)> {
        let loaded = self.module_in(g, module)?;
        let mut functions = lock(&loaded.functions);
        if let Some(found) = functions.get(name) {
            return Ok(found.clone());
        }
        let f = loaded
            .module
            .load_function(name)
            .map_err(self.driver_error(g, "cuModuleGetFunction"))?;
        let attribute = |attr: FuncAttr| -> Result<u32> {
            f.get_attribute(attr)
                .map(|v| v.max(0) as u32)
                .map_err(self.driver_error(g, "cuFuncGetAttribute"))
        };
        let limits = FunctionLimits {
            max_threads: attribute(FuncAttr::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
            registers: attribute(FuncAttr::CU_FUNC_ATTRIBUTE_NUM_REGS)?,
            static_shared: attribute(FuncAttr::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?,
            max_dynamic_shared: attribute(
                FuncAttr::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            )?,
        };
        functions.insert(name, (f.clone(), limits));
        Ok((f, limits))
    }

    /// A block size that maximises occupancy for `name` (cuOccupancyMaxPotentialBlockSize).
    pub(crate) fn occupancy_block_size(
        &self,
        module: &LoadedModule,
        name: &'static str,
    ) -> Result<u32> {
        extern "C" fn no_dynamic_shared_memory(_block_size: std::ffi::c_int) -> usize {
            0
        }
        let g = self.context();
        let (f, _) = self.function(&g, module, name)?;
        let (_min_grid, block) = f
            .occupancy_max_potential_block_size(no_dynamic_shared_memory, 0, 0, None)
            .map_err(self.driver_error(&g, "cuOccupancyMaxPotentialBlockSize"))?;
        Ok(block.max(1))
    }

    /// Launches `kernel`: copies host arguments in, packs every PTX parameter, launches, and copies
    /// host outputs back (waiting for the kernel) only if it succeeded.
    pub(crate) fn launch(
        &self,
        module: &LoadedModule,
        kernel: &'static str,
        config: &LaunchConfig,
        mut args: Vec<Arg<'_>>,
    ) -> Result<()> {
        let g = self.context();
        let (stream, trail) = match config.stream.and_then(Stream::cuda) {
            Some((_, context, _)) if context != g.id => return Err(self.stream_lost()),
            Some((stream, _, trail)) => (stream, trail),
            None => (&g.stream, &*g.default_trail),
        };
        // Faults seen while launching are blamed on this stream's unfinished kernel first.
        let fault = |call| self.stream_error(&g, Some(trail), Some(kernel), call);
        let (function, limits) = self.function(&g, module, kernel)?;
        check_function_limits(kernel, config, &limits, &self.label)?;
        let expected = crate::launch::expected_packing(&args);

        // Host data goes to the device first; outputs too, so elements the kernel does not
        // write keep their values, as on the CPU.
        let mut staged: Vec<Option<GpuBytes>> = Vec::with_capacity(args.len());
        for arg in &args {
            staged.push(match arg {
                Arg::HostSlice { bytes, .. } => Some(self.upload_on(&g, stream, bytes)?),
                Arg::HostOutput { bytes, .. } => Some(self.upload_on(&g, stream, bytes)?),
                Arg::GpuSlice { buffer, .. } => {
                    self.check_live(&g, buffer)?;
                    None
                }
                Arg::GpuOutput { buffer, .. } => {
                    self.check_live(&g, buffer)?;
                    None
                }
                Arg::Scalar(_) => None,
            });
        }

        {
            let mut slots: Vec<ParamSlot> = Vec::new();
            let mut guards = Vec::new();
            for (arg, stage) in args.iter_mut().zip(&staged) {
                // The device memory the kernel gets: the buffer it writes, or what was staged.
                let (written, len): (Option<&mut Option<CudaSlice<u8>>>, usize) = match arg {
                    Arg::Scalar(slot) => {
                        slots.push(*slot);
                        continue;
                    }
                    Arg::GpuSlice { buffer, len } => {
                        let ptr = match &buffer.slice {
                            Some(slice) => {
                                let (ptr, guard) = slice.device_ptr(stream);
                                guards.push(guard);
                                ptr
                            }
                            None => 0,
                        };
                        slots.push(ParamSlot::new(ptr));
                        slots.push(ParamSlot::new(*len as u64));
                        continue;
                    }
                    Arg::GpuOutput { buffer, len } => (Some(&mut buffer.slice), *len),
                    Arg::HostSlice { len, .. } | Arg::HostOutput { len, .. } => (None, *len),
                };
                let ptr = match (written, stage) {
                    (Some(Some(slice)), _) => {
                        let (ptr, guard) = slice.device_ptr_mut(stream);
                        guards.push(guard);
                        ptr
                    }
                    (
                        None,
                        Some(GpuBytes {
                            slice: Some(slice), ..
                        }),
                    ) => {
                        let (ptr, guard) = slice.device_ptr(stream);
                        guards.push(guard);
                        ptr
                    }
                    _ => 0, // an empty buffer: the kernel sees length 0 and never dereferences
                };
                slots.push(ParamSlot::new(ptr));
                slots.push(ParamSlot::new(len as u64));
            }
            crate::launch::debug_check_packed(expected, &slots);
            let mut builder = stream.launch_builder(&function);
            for slot in &slots {
                builder.arg(slot);
            }
            let cu_config = cudarc::driver::LaunchConfig {
                grid_dim: (config.grid.x, config.grid.y, config.grid.z),
                block_dim: (config.block.x, config.block.y, config.block.z),
                shared_mem_bytes: config.shared_mem_bytes,
            };
            // SAFETY: `check_abi` matched every packed slot against the PTX entry's parameter
            // sizes; every pointer is a live device allocation of this context (`check_live`)
            // holding `len` elements (host data was staged above), and the guards keep cudarc's
            // stream ordering for buffers in use until the launch is queued.
            unsafe { builder.launch(cu_config) }.map_err(fault("cuLaunchKernel"))?;
            g.launches.record(trail, kernel);
            drop(guards);
        }

        let mut wait = false;
        for (arg, stage) in args.iter_mut().zip(&staged) {
            if let (
                Arg::HostOutput { bytes, .. },
                Some(GpuBytes {
                    slice: Some(slice), ..
                }),
            ) = (arg, stage)
            {
                stream
                    .memcpy_dtoh(slice, &mut **bytes)
                    .map_err(fault("cuMemcpyDtoHAsync"))?;
                wait = true;
            }
        }
        if wait {
            let mark = g.launches.mark();
            stream.synchronize().map_err(fault("cuStreamSynchronize"))?;
            trail.finished_upto(mark);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_limits_name_the_registers_and_the_static_shared_memory() {
        let limits = FunctionLimits {
            max_threads: 640,
            registers: 96,
            static_shared: 16384,
            max_dynamic_shared: 32768,
        };
        let device = "CUDA device 0: NVIDIA H200 (sm_90, 132 SMs)";
        let fits = LaunchConfig::new(8, 640).with_shared_mem_bytes(32768);
        check_function_limits("k", &fits, &limits, device).unwrap();

        let error = check_function_limits("k", &LaunchConfig::new(8, (32, 21)), &limits, device)
            .unwrap_err();
        assert!(
            matches!(
                error,
                Error::KernelBlockTooLarge {
                    threads: 672,
                    max_threads: 640,
                    registers: 96,
                    ..
                }
            ),
            "{error}"
        );
        let message = error.to_string();
        for part in ["672 threads", "96 registers", "at most 640 threads", device] {
            assert!(message.contains(part), "{part:?} not in: {message}");
        }

        let too_much = LaunchConfig::new(8, 128).with_shared_mem_bytes(32769);
        let message = check_function_limits("k", &too_much, &limits, device)
            .unwrap_err()
            .to_string();
        for part in [
            "32769 bytes",
            "16384 bytes of static",
            "at most 32768 bytes",
        ] {
            assert!(message.contains(part), "{part:?} not in: {message}");
        }
    }
}
