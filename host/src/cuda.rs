//! The CUDA backend: a thin layer over `cudarc`'s driver API (loaded at run time).

use crate::device::{DeviceKind, DeviceProperties};
use crate::error::{Error, Result};
use crate::launch::{Arg, LaunchConfig, ParamSlot};
use crate::module::Ptx;
use crate::ptx::PtxInfo;
use crate::stream::Stream;
use cudarc::driver::sys::{CUdevice_attribute as Attr, CUevent_flags, CUresult};
use cudarc::driver::{
    sys, CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, DevicePtrMut,
    DeviceRepr, DriverError, PushKernelArg,
};
use gpu_std::Dim3;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

// SAFETY: a `ParamSlot` is plain bytes; `cuLaunchKernel` reads the parameter's declared size
// from the slot's start, and `check_abi` made sure the slot holds that many bytes.
unsafe impl DeviceRepr for ParamSlot {}

/// Whether `libcuda` can be loaded. cudarc panics on the first driver call without it, so every
/// entry into the driver is guarded by this.
pub(crate) fn driver_present() -> bool {
    // SAFETY: only tries to `dlopen` the driver library.
    unsafe { sys::is_culib_present() }
}

/// The library names cudarc tries for the driver, for error messages.
pub(crate) fn driver_candidates() -> String {
    let mut names = cudarc::get_lib_name_candidates("cuda");
    let mut seen = std::collections::HashSet::new();
    // cudarc also lists Windows-style names; show the ones this platform's loader would use.
    names.retain(|name| {
        (cfg!(windows) || name.starts_with("libcuda.so")) && seen.insert(name.clone())
    });
    names.join(", ")
}

/// One GPU: its primary context and default stream.
pub(crate) struct GpuDevice {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    ordinal: usize,
    label: String,
    /// The kernel launched last: kernels run asynchronously, so a fault may only show at a later
    /// copy or synchronization, which then names it.
    last_kernel: Mutex<Option<&'static str>>,
}

/// Driver errors that mean a kernel faulted while running (they stick to the context).
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

/// Device memory of a [`crate::DeviceBuffer`]: bytes, `None` when empty (CUDA cannot allocate 0).
pub struct GpuBytes {
    slice: Option<CudaSlice<u8>>,
    ordinal: usize,
}

impl GpuBytes {
    pub(crate) fn ordinal(&self) -> usize {
        self.ordinal
    }
}

/// A PTX module loaded into a GPU context, with its functions looked up once.
pub(crate) struct LoadedModule {
    module: Arc<CudaModule>,
    functions: Mutex<HashMap<&'static str, CudaFunction>>,
}

impl GpuDevice {
    pub(crate) fn open(ordinal: usize) -> Result<(GpuDevice, DeviceProperties)> {
        if !driver_present() {
            return Err(Error::NoDriver {
                detail: format!(
                    "libcuda could not be loaded (tried {})",
                    driver_candidates()
                ),
            });
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
        let stream = ctx.default_stream();
        Ok((
            GpuDevice {
                ctx,
                stream,
                ordinal,
                label,
                last_kernel: Mutex::new(None),
            },
            properties,
        ))
    }

    /// Maps a driver error of `call`; a kernel fault that shows here names the last kernel.
    fn driver_error(&self, call: &'static str) -> impl FnOnce(DriverError) -> Error + '_ {
        move |source| {
            let last = *self.last_kernel.lock().unwrap_or_else(|e| e.into_inner());
            match last {
                Some(kernel) if is_kernel_fault(&source) => Error::KernelFailed {
                    kernel,
                    device: self.label.clone(),
                    detected: call,
                    source,
                },
                _ => Error::Driver {
                    call,
                    device: self.label.clone(),
                    source,
                },
            }
        }
    }

    /// Turns an allocation failure into [`Error::OutOfMemory`] with the free and total bytes.
    fn alloc_error(&self, requested: usize, source: DriverError) -> Error {
        if source.0 == CUresult::CUDA_ERROR_OUT_OF_MEMORY {
            let (free, total) = self.ctx.mem_get_info().unwrap_or((0, 0));
            Error::OutOfMemory {
                device: self.label.clone(),
                requested,
                free,
                total,
            }
        } else {
            Error::Driver {
                call: "cuMemAlloc",
                device: self.label.clone(),
                source,
            }
        }
    }

    pub(crate) fn new_stream(&self) -> Result<Stream> {
        let stream = self
            .ctx
            .new_stream()
            .map_err(self.driver_error("cuStreamCreate"))?;
        Ok(Stream::gpu(stream, self.ordinal))
    }

    pub(crate) fn synchronize(&self) -> Result<()> {
        self.ctx
            .synchronize()
            .map_err(self.driver_error("cuCtxSynchronize"))
    }

    pub(crate) fn time<R>(&self, work: impl FnOnce() -> Result<R>) -> Result<(R, Duration)> {
        let event = || {
            self.ctx
                .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(self.driver_error("cuEventCreate"))
        };
        let (start, end) = (event()?, event()?);
        start
            .record(&self.stream)
            .map_err(self.driver_error("cuEventRecord"))?;
        let value = work()?;
        end.record(&self.stream)
            .map_err(self.driver_error("cuEventRecord"))?;
        end.synchronize()
            .map_err(self.driver_error("cuEventSynchronize"))?;
        let ms = start
            .elapsed_ms(&end)
            .map_err(self.driver_error("cuEventElapsedTime"))?;
        Ok((value, Duration::from_secs_f64(f64::from(ms) / 1e3)))
    }

    pub(crate) fn upload(&self, bytes: &[u8]) -> Result<GpuBytes> {
        self.upload_on(&self.stream, bytes)
    }

    fn upload_on(&self, stream: &Arc<CudaStream>, bytes: &[u8]) -> Result<GpuBytes> {
        let slice = if bytes.is_empty() {
            None
        } else {
            Some(
                stream
                    .clone_htod(bytes)
                    .map_err(|e| self.alloc_error(bytes.len(), e))?,
            )
        };
        Ok(GpuBytes {
            slice,
            ordinal: self.ordinal,
        })
    }

    pub(crate) fn alloc_zeroed(&self, len_bytes: usize) -> Result<GpuBytes> {
        let slice = if len_bytes == 0 {
            None
        } else {
            Some(
                self.stream
                    .alloc_zeros::<u8>(len_bytes)
                    .map_err(|e| self.alloc_error(len_bytes, e))?,
            )
        };
        Ok(GpuBytes {
            slice,
            ordinal: self.ordinal,
        })
    }

    /// Copies device bytes to the host and waits for the copy.
    pub(crate) fn download(&self, src: &GpuBytes, dst: &mut [u8]) -> Result<()> {
        if let Some(slice) = &src.slice {
            self.stream
                .memcpy_dtoh(slice, dst)
                .map_err(self.driver_error("cuMemcpyDtoH"))?;
            self.stream
                .synchronize()
                .map_err(self.driver_error("cuStreamSynchronize"))?;
        }
        Ok(())
    }

    /// Copies host bytes into existing device bytes of the same length.
    pub(crate) fn overwrite(&self, dst: &mut GpuBytes, src: &[u8]) -> Result<()> {
        if let Some(slice) = &mut dst.slice {
            self.stream
                .memcpy_htod(src, slice)
                .map_err(self.driver_error("cuMemcpyHtoD"))?;
        }
        Ok(())
    }

    pub(crate) fn load(&self, ptx: &Ptx, info: &PtxInfo) -> Result<LoadedModule> {
        let (major, minor) = self
            .ctx
            .compute_capability()
            .map_err(self.driver_error("cuDeviceGetAttribute"))?;
        if let Some(target) = info.target_compute_capability() {
            if target > (major as u32, minor as u32) {
                return Err(Error::GpuTooOld {
                    module: ptx.name(),
                    target: info.target.clone().unwrap_or_default(),
                    device: self.label.clone(),
                    major: major as u32,
                    minor: minor as u32,
                });
            }
        }
        let module = self
            .ctx
            .load_module(cudarc::nvrtc::Ptx::from_src(ptx.source()))
            .map_err(|source| Error::PtxRejected {
                module: ptx.name(),
                ptx_version: info.version_string(),
                target: info.target.clone().unwrap_or_else(|| "no .target".into()),
                device: self.label.clone(),
                source,
            })?;
        Ok(LoadedModule {
            module,
            functions: Mutex::new(HashMap::new()),
        })
    }

    pub(crate) fn function(
        &self,
        module: &LoadedModule,
        name: &'static str,
    ) -> Result<CudaFunction> {
        let mut functions = module.functions.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(f) = functions.get(name) {
            return Ok(f.clone());
        }
        let f = module
            .module
            .load_function(name)
            .map_err(self.driver_error("cuModuleGetFunction"))?;
        functions.insert(name, f.clone());
        Ok(f)
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
        let f = self.function(module, name)?;
        let (_min_grid, block) = f
            .occupancy_max_potential_block_size(no_dynamic_shared_memory, 0, 0, None)
            .map_err(self.driver_error("cuOccupancyMaxPotentialBlockSize"))?;
        Ok(block.max(1))
    }

    fn check_owner(&self, bytes: &GpuBytes) -> Result<()> {
        if bytes.ordinal == self.ordinal {
            Ok(())
        } else {
            Err(Error::WrongDevice {
                what: "a buffer",
                owner: format!("CUDA device {}", bytes.ordinal),
                device: self.label.clone(),
            })
        }
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
        let stream = config
            .stream
            .as_ref()
            .and_then(Stream::cuda)
            .unwrap_or(&self.stream);
        let function = self.function(module, kernel)?;
        let expected = crate::launch::expected_packing(&args);

        // Host data goes to the device first; outputs too, so elements the kernel does not
        // write keep their values, as on the CPU.
        let mut staged: Vec<Option<GpuBytes>> = Vec::with_capacity(args.len());
        for arg in &args {
            staged.push(match arg {
                Arg::HostSlice { bytes, .. } => Some(self.upload_on(stream, bytes)?),
                Arg::HostOutput { bytes, .. } => Some(self.upload_on(stream, bytes)?),
                Arg::GpuSlice { buffer, .. } => {
                    self.check_owner(buffer)?;
                    None
                }
                Arg::GpuOutput { buffer, .. } => {
                    self.check_owner(buffer)?;
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
            // sizes; every pointer is a live device allocation of this context holding `len`
            // elements (host data was staged above), and the guards keep cudarc's stream
            // ordering for buffers in use until the launch is queued.
            unsafe { builder.launch(cu_config) }.map_err(self.driver_error("cuLaunchKernel"))?;
            *self.last_kernel.lock().unwrap_or_else(|e| e.into_inner()) = Some(kernel);
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
                    .map_err(self.driver_error("cuMemcpyDtoHAsync"))?;
                wait = true;
            }
        }
        if wait {
            stream
                .synchronize()
                .map_err(self.driver_error("cuStreamSynchronize"))?;
        }
        Ok(())
    }
}
