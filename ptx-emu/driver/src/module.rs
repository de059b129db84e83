//! Modules and functions: PTX text is parsed by the emulator when loaded (the JIT's error log
//! carries the parser's message), kernels are looked up by name, and their attributes come from
//! the parsed PTX.

use crate::device::{SHARED_PER_BLOCK, SHARED_PER_BLOCK_OPTIN};
use crate::ffi::{guard, handle, id_of, put, Outcome};
use crate::ptx_header::{self, HeaderError};
use crate::state::{Function, LoadedModule, DRIVER};
use cudarc::driver::sys::{CUdeviceptr, CUmodule, CUresult};
use cudarc::driver::sys::{CUfunction, CUfunction_attribute as F, CUjit_option as J};
use ferrocuda_ptx_emu::Module;
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
use std::sync::Arc;

/// Where the caller wants the JIT's logs (the log options of `cuModuleLoadDataEx` and
/// `cuLinkCreate`): each log's buffer, its size, and the options' value array, whose size slot
/// gets the bytes written.
pub(crate) struct JitLogs {
    info: Option<(*mut c_char, usize, usize)>,
    error: Option<(*mut c_char, usize, usize)>,
    values: *mut *mut c_void,
    /// `CU_JIT_MAX_REGISTERS`: the most registers per thread the code may use
    /// ([`crate::ptx_link::cap_registers`]).
    pub max_registers: Option<u32>,
}

/// The log options and the register limit among `options`/`optionValues`. Every other option
/// (optimisation level, targets, verbosity) steers machine code generation, which an
/// interpreter has none of.
///
/// # Safety
/// Both arrays hold `count` entries, and the log buffers and option arrays stay valid while the
/// returned logs are written (the driver API's contract).
pub(crate) unsafe fn jit_logs(
    count: c_uint,
    options: *mut J,
    values: *mut *mut c_void,
) -> Result<JitLogs, CUresult> {
    if count > 0 && (options.is_null() || values.is_null()) {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    // SAFETY: both arrays hold `count` entries (the caller's contract); options are read as
    // their raw u32, never as the enum.
    let pairs: Vec<(u32, *mut c_void)> = (0..count as usize)
        .map(|i| unsafe { (options.cast::<u32>().add(i).read(), values.add(i).read()) })
        .collect();
    let find = |option: J| pairs.iter().position(|&(o, _)| o == option as u32);
    // A log wanted: its buffer, its size (integer options travel in the pointer slots) and the
    // slot the size is written back to.
    let log = |buffer: J, size: J| {
        let (b, s) = (find(buffer)?, find(size)?);
        Some((pairs[b].1.cast::<c_char>(), pairs[s].1.addr(), s))
    };
    Ok(JitLogs {
        info: log(
            J::CU_JIT_INFO_LOG_BUFFER,
            J::CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
        ),
        error: log(
            J::CU_JIT_ERROR_LOG_BUFFER,
            J::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
        ),
        values,
        // Integer options travel in the pointer slots.
        max_registers: find(J::CU_JIT_MAX_REGISTERS).map(|i| pairs[i].1.addr() as u32),
    })
}

impl JitLogs {
    /// Writes `text` as the info log, if one was asked for.
    pub(crate) fn info(&self, text: &str) {
        self.write(self.info, text);
    }

    /// Writes `text` as the error log, if one was asked for.
    pub(crate) fn error(&self, text: &str) {
        self.write(self.error, text);
    }

    fn write(&self, target: Option<(*mut c_char, usize, usize)>, text: &str) {
        if let Some((buffer, size, slot)) = target {
            // SAFETY: the caller's buffer holds `size` bytes, as its size option says, `slot`
            // indexes the value array, and both are still valid (`jit_logs`' contract).
            unsafe { write_log(buffer, size, self.values, slot, text) };
        }
    }
}

/// What the JIT says for a module it compiled: the ptxas-style resource lines.
fn info_log(module: &Module) -> String {
    let mut log = String::new();
    for name in module.kernel_names() {
        if let Some(k) = module.kernel(&name) {
            log += &format!(
                "ptxas info    : Compiling entry function '{name}' for 'sm_90' (ferrocuda PTX \
                 emulator: interpreted, no machine code)\nptxas info    : Used {} registers, {} \
                 bytes smem, {} bytes lmem (estimated from the PTX declarations)\n",
                k.registers, k.static_shared_bytes, k.local_bytes
            );
        }
    }
    log
}

/// Copies `text` into a caller's log buffer (NUL-terminated, cut to fit) and writes back how
/// many bytes it used into the option's size slot.
///
/// # Safety
/// `buffer` is valid for `size` bytes and `values.add(slot)` for one pointer write.
unsafe fn write_log(
    buffer: *mut c_char,
    size: usize,
    values: *mut *mut c_void,
    slot: usize,
    text: &str,
) {
    if buffer.is_null() || size == 0 {
        return;
    }
    let n = text.len().min(size - 1);
    // SAFETY: `buffer` holds `size` bytes and n + 1 <= size; `values` has the size option's slot
    // (the caller's contract).
    unsafe {
        std::ptr::copy_nonoverlapping(text.as_ptr().cast(), buffer, n);
        buffer.add(n).write(0);
        values
            .add(slot)
            .write(std::ptr::without_provenance_mut(n + 1));
    }
}

/// Parses `image` (NUL-terminated PTX) into a module of the current context: its handle, or the
/// error code and what the JIT's error log says.
///
/// # Safety
/// `image` is a NUL-terminated string.
unsafe fn load(image: *const c_void) -> Result<(usize, String), (CUresult, String)> {
    let plain = |code| (code, String::new());
    if image.is_null() {
        return Err(plain(CUresult::CUDA_ERROR_INVALID_VALUE));
    }
    // The first four bytes, or fewer when a NUL comes first (the image is then short text):
    // ELF and fatbin magics have no NUL byte, and nothing past a text's NUL is read.
    let mut magic = Vec::with_capacity(4);
    for k in 0..4 {
        // SAFETY: bytes up to and including the first NUL are readable (a NUL-terminated text
        // or a binary image longer than its magic: the caller's contract).
        let byte = unsafe { image.cast::<u8>().add(k).read() };
        if byte == 0 {
            break;
        }
        magic.push(byte);
    }
    if magic == b"\x7fELF"
        || magic == 0xBA55_ED50u32.to_le_bytes()
        || magic == 0x466243B1u32.to_le_bytes()
    {
        let why = "ferrocuda PTX emulator: only PTX text can be loaded, not cubins or fatbins";
        return Err((CUresult::CUDA_ERROR_NOT_SUPPORTED, why.into()));
    }
    // SAFETY: NUL-terminated (the caller's contract).
    let text = unsafe { CStr::from_ptr(image.cast()) };
    let text = text.to_str().map_err(|_| {
        (
            CUresult::CUDA_ERROR_INVALID_IMAGE,
            "the image is not UTF-8 text".into(),
        )
    })?;
    let device = DRIVER
        .state()
        .map_err(plain)?
        .current_usable()
        .map_err(plain)?
        .1
        .device;
    let ptx_version = ptx_header::check(text, device).map_err(|e| match e {
        HeaderError::TooNewVersion(log) => (CUresult::CUDA_ERROR_UNSUPPORTED_PTX_VERSION, log),
        HeaderError::Invalid(log) => (CUresult::CUDA_ERROR_INVALID_PTX, log),
    })?;
    crate::ptx_opcodes::check(text).map_err(|log| (CUresult::CUDA_ERROR_INVALID_PTX, log))?;
    let module = Module::parse(text).map_err(|e| {
        let log = format!(
            "ptxas application ptx input, line {}; error   : {}\nptxas fatal   : Ptx assembly \
             aborted due to errors",
            e.line, e.message
        );
        (CUresult::CUDA_ERROR_INVALID_PTX, log)
    })?;
    let info = info_log(&module);
    let mut state = DRIVER.state().map_err(plain)?;
    let (context, _) = state.current_usable().map_err(plain)?;
    // Its variables in device memory, so that `cuModuleGetGlobal`'s address can be copied to.
    DRIVER.memory_of(&state, context).map_module(&module);
    let id = state.new_id();
    state.modules.insert(
        id,
        LoadedModule {
            context,
            module: Arc::new(module),
            ptx_version,
            functions: HashMap::new(),
        },
    );
    Ok((id, info))
}

#[no_mangle]
pub unsafe extern "C" fn cuModuleLoadData(module: *mut CUmodule, image: *const c_void) -> CUresult {
    guard("cuModuleLoadData", || {
        // SAFETY: the caller's image is NUL-terminated PTX (driver API contract).
        let (id, _) = unsafe { load(image) }.map_err(|(code, _)| code)?;
        // SAFETY: the caller's pointer is valid for one write (driver API contract).
        unsafe { put(module, handle(id)) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuModuleLoadDataEx(
    module: *mut CUmodule,
    image: *const c_void,
    numOptions: c_uint,
    options: *mut J,
    optionValues: *mut *mut c_void,
) -> CUresult {
    guard("cuModuleLoadDataEx", || {
        // SAFETY: both arrays hold numOptions entries, valid for this call (the caller's
        // contract).
        let logs = unsafe { jit_logs(numOptions, options, optionValues) }?;
        // A register limit is the loaded PTX's `.maxnreg` (the image is text: `load` checks it).
        let capped = match (logs.max_registers, image.is_null()) {
            (Some(max), false) => {
                // SAFETY: the caller's image is NUL-terminated (driver API contract).
                let text = unsafe { CStr::from_ptr(image.cast::<c_char>()) }.to_string_lossy();
                CString::new(crate::ptx_link::cap_registers(&text, max)).ok()
            }
            _ => None,
        };
        let image = capped.as_ref().map_or(image, |c| c.as_ptr().cast());
        // SAFETY: the caller's image, or its capped copy, is NUL-terminated PTX.
        let loaded = unsafe { load(image) };
        match &loaded {
            Ok((_, info)) => logs.info(info),
            Err((_, log)) => logs.error(log),
        }
        let (id, _) = loaded.map_err(|(code, _)| code)?;
        // SAFETY: the caller's pointer is valid for one write (driver API contract).
        unsafe { put(module, handle(id)) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuModuleLoad(module: *mut CUmodule, fname: *const c_char) -> CUresult {
    guard("cuModuleLoad", || {
        if fname.is_null() {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        // SAFETY: the caller's file name is NUL-terminated (driver API contract).
        let path = unsafe { CStr::from_ptr(fname) }
            .to_string_lossy()
            .into_owned();
        let mut text = std::fs::read(&path).map_err(|_| CUresult::CUDA_ERROR_FILE_NOT_FOUND)?;
        text.push(0);
        // SAFETY: `text` is NUL-terminated and outlives the call; `module` per the contract.
        unsafe { cuModuleLoadData(module, text.as_ptr().cast()) }.result_code()
    })
}

/// A CUresult as an outcome.
trait ResultCode {
    fn result_code(self) -> Outcome;
}

impl ResultCode for CUresult {
    fn result_code(self) -> Outcome {
        match self {
            CUresult::CUDA_SUCCESS => Ok(()),
            code => Err(code),
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn cuModuleUnload(hmod: CUmodule) -> CUresult {
    guard("cuModuleUnload", || {
        // Work still queued (deferred mode) runs first, as CUDA waits for it.
        let _ = crate::deferred_run::finish(None);
        let mut state = DRIVER.state()?;
        let id = id_of(hmod);
        if state.orphan(id) {
            return Ok(());
        }
        let context = state
            .modules
            .get(&id)
            .ok_or(CUresult::CUDA_ERROR_INVALID_HANDLE)?
            .context;
        state.usable(context)?;
        if let Some(loaded) = state.modules.remove(&id) {
            DRIVER
                .memory_of(&state, context)
                .unmap_module(&loaded.module);
        }
        state.functions.retain(|_, f| f.module != id);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuModuleGetFunction(
    hfunc: *mut CUfunction,
    hmod: CUmodule,
    name: *const c_char,
) -> CUresult {
    guard("cuModuleGetFunction", || {
        if name.is_null() {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        // SAFETY: the caller's name is NUL-terminated (driver API contract).
        let name = unsafe { CStr::from_ptr(name) }
            .to_string_lossy()
            .into_owned();
        let mut state = DRIVER.state()?;
        let module_id = id_of(hmod);
        let loaded = state
            .modules
            .get(&module_id)
            .ok_or(CUresult::CUDA_ERROR_INVALID_HANDLE)?;
        let context = loaded.context;
        let existing = loaded.functions.get(&name).copied();
        let info = loaded.module.kernel(&name);
        state.usable(context)?;
        let id = match existing {
            Some(id) => id,
            None => {
                let info = info.ok_or(CUresult::CUDA_ERROR_NOT_FOUND)?;
                let id = state.new_id();
                let max_dynamic_shared =
                    (SHARED_PER_BLOCK as u32).saturating_sub(info.static_shared_bytes);
                state.functions.insert(
                    id,
                    Function {
                        context,
                        module: module_id,
                        info,
                        max_dynamic_shared,
                    },
                );
                if let Some(loaded) = state.modules.get_mut(&module_id) {
                    loaded.functions.insert(name, id);
                }
                id
            }
        };
        // SAFETY: the caller's pointer is valid for one write (driver API contract).
        unsafe { put(hfunc, handle(id)) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuModuleGetGlobal_v2(
    dptr: *mut CUdeviceptr,
    bytes: *mut usize,
    hmod: CUmodule,
    name: *const c_char,
) -> CUresult {
    guard("cuModuleGetGlobal_v2", || {
        if name.is_null() {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        // SAFETY: a non-null name is a NUL-terminated string (driver API contract).
        let name = unsafe { CStr::from_ptr(name) }
            .to_str()
            .map_err(|_| CUresult::CUDA_ERROR_NOT_FOUND)?;
        let mut state = DRIVER.state()?;
        let loaded = state
            .modules
            .get(&id_of(hmod))
            .ok_or(CUresult::CUDA_ERROR_INVALID_HANDLE)?;
        let (context, module) = (loaded.context, loaded.module.clone());
        state.usable(context)?;
        let (address, size) = module.global(name).ok_or(CUresult::CUDA_ERROR_NOT_FOUND)?;
        // Either output may be null: the caller does not want it.
        if !dptr.is_null() {
            // SAFETY: a non-null pointer is valid for one write (driver API contract).
            unsafe { put(dptr, address) }?;
        }
        if !bytes.is_null() {
            // SAFETY: as above.
            unsafe { put(bytes, size as usize) }?;
        }
        Ok(())
    })
}

/// Registers per thread the function reports: the PTX's estimate, capped where ptxas caps it.
pub(crate) fn registers(function: &Function) -> u32 {
    function.info.registers.min(255)
}

#[no_mangle]
pub unsafe extern "C" fn cuFuncGetAttribute(
    pi: *mut c_int,
    attrib: u32,
    hfunc: CUfunction,
) -> CUresult {
    guard("cuFuncGetAttribute", || {
        let mut state = DRIVER.state()?;
        let function = state
            .functions
            .get(&id_of(hfunc))
            .ok_or(CUresult::CUDA_ERROR_INVALID_HANDLE)?;
        let ptx_version = state
            .modules
            .get(&function.module)
            .map_or(0, |m| m.ptx_version);
        let info = &function.info;
        let table: [(F, u32); 10] = [
            // Not limited by the register estimate: the interpreter's count is not ptxas's
            // allocation (docs/emulator.md).
            (
                F::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                info.max_threads_per_block.min(1024),
            ),
            (
                F::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                info.static_shared_bytes,
            ),
            (F::CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, info.const_bytes),
            (F::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, info.local_bytes),
            (F::CU_FUNC_ATTRIBUTE_NUM_REGS, registers(function)),
            (F::CU_FUNC_ATTRIBUTE_PTX_VERSION, ptx_version as u32),
            (F::CU_FUNC_ATTRIBUTE_BINARY_VERSION, 90),
            (F::CU_FUNC_ATTRIBUTE_CACHE_MODE_CA, 0),
            (
                F::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                function.max_dynamic_shared,
            ),
            (
                F::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
                u32::MAX,
            ),
        ];
        let value = table
            .iter()
            .find(|(a, _)| *a as u32 == attrib)
            .map(|&(_, v)| v as c_int)
            .ok_or(CUresult::CUDA_ERROR_NOT_SUPPORTED)?;
        let context = function.context;
        state.usable(context)?;
        // SAFETY: the caller's pointer is valid for one write (driver API contract).
        unsafe { put(pi, value) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuFuncSetAttribute(
    hfunc: CUfunction,
    attrib: u32,
    value: c_int,
) -> CUresult {
    guard("cuFuncSetAttribute", || {
        let mut state = DRIVER.state()?;
        let function = state
            .functions
            .get(&id_of(hfunc))
            .ok_or(CUresult::CUDA_ERROR_INVALID_HANDLE)?;
        let context = function.context;
        let static_shared = function.info.static_shared_bytes;
        state.usable(context)?;
        let function = state
            .functions
            .get_mut(&id_of(hfunc))
            .ok_or(CUresult::CUDA_ERROR_INVALID_HANDLE)?;
        if attrib == F::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES as u32 {
            let limit = (SHARED_PER_BLOCK_OPTIN as u32).saturating_sub(static_shared);
            match u32::try_from(value) {
                Ok(bytes) if bytes <= limit => function.max_dynamic_shared = bytes,
                _ => return Err(CUresult::CUDA_ERROR_INVALID_VALUE),
            }
            Ok(())
        } else if attrib == F::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT as u32 {
            // A hint about the L1/shared split, which the emulator does not have.
            Ok(())
        } else {
            Err(CUresult::CUDA_ERROR_NOT_SUPPORTED)
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuFuncSetCacheConfig(hfunc: CUfunction, _config: u32) -> CUresult {
    guard("cuFuncSetCacheConfig", || {
        let mut state = DRIVER.state()?;
        let context = state
            .functions
            .get(&id_of(hfunc))
            .ok_or(CUresult::CUDA_ERROR_INVALID_HANDLE)?
            .context;
        // A preference the driver may ignore.
        state.usable(context).map(|_| ())
    })
}
