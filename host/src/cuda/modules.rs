//! PTX modules on a GPU: loading (with the JIT's logs when the driver refuses), reloading after
//! a context is replaced, functions and their limits.

use super::driver_library::driver_cuda_version;
use super::gpu::{is_kernel_fault, GpuContext, GpuDevice};
use crate::error::{Error, Result};
use crate::launch_config::LaunchConfig;
use crate::lock::lock;
use crate::ptx::{Ptx, PtxInfo};
use cudarc::driver::sys::{
    self, CUdevice_attribute as Attr, CUfunction_attribute as FuncAttr, CUjit_option, CUresult,
};
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, DriverError};
use std::collections::HashMap;
use std::ffi::{c_void, CString};
use std::sync::{Arc, Mutex};

mod constants;

/// A PTX module loaded on a GPU: loaded again, lazily, when the context is replaced.
pub(crate) struct LoadedModule {
    ptx: &'static Ptx,
    info: PtxInfo,
    current: Mutex<Arc<ModuleInContext>>,
    /// The constant tables set so far, written again when the module is loaded in a new context.
    constants: Mutex<ferrocuda_std::cpu::ConstantTables>,
    /// The module's table lock, with the stream-ordered uses of the tables.
    carried: Mutex<constants::CarriedTables>,
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

impl GpuDevice {
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
            carried: Mutex::default(),
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

    pub(super) fn function(
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

    /// The blocks of `name` (of `block_threads` threads, with `shared_bytes` of dynamic shared
    /// memory) one multiprocessor holds at once; `None` if the device has no cooperative launch.
    pub(crate) fn co_resident_blocks_per_sm(
        &self,
        module: &LoadedModule,
        name: &'static str,
        block_threads: u32,
        shared_bytes: u32,
    ) -> Result<Option<u32>> {
        let g = self.context();
        let supported = g
            .ctx
            .attribute(Attr::CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH)
            .map_err(self.driver_error(&g, "cuDeviceGetAttribute"))?;
        if supported == 0 {
            return Ok(None);
        }
        let (f, _) = self.function(&g, module, name)?;
        f.occupancy_max_active_blocks_per_multiprocessor(block_threads, shared_bytes as usize, None)
            .map(Some)
            .map_err(self.driver_error(&g, "cuOccupancyMaxActiveBlocksPerMultiprocessor"))
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
