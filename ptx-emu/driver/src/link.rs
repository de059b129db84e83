//! The JIT linker: `cuLinkCreate`, `cuLinkAddData`, `cuLinkAddFile`, `cuLinkComplete` and
//! `cuLinkDestroy`, as Numba calls them for every kernel. Inputs are PTX (the emulator runs no
//! machine code); `cuLinkComplete` merges them into one PTX module ([`crate::ptx_link`]) and hands
//! out that text, NUL-terminated, as the "image" `cuModuleLoadData` then loads. A cubin, fatbin,
//! object or library input is refused with `CUDA_ERROR_NOT_SUPPORTED` and a line in the error log,
//! but for CUDA's device runtime, `libcudadevrt.a` (Numba links it for grid groups): its machine
//! code cannot run here, so the emulator's own PTX of the entry points Numba calls,
//! `cudadevrt.rs` (a grid barrier), is linked in its place.

use crate::ffi::{guard, handle, id_of, put, Outcome};
use crate::module::{jit_logs, JitLogs};
use crate::state::DRIVER;
use cudarc::driver::sys::{CUjit_option as J, CUlinkState, CUresult};
use std::collections::HashMap;
use std::ffi::{c_char, c_uint, c_void, CStr, CString};
use std::sync::{Mutex, MutexGuard};

/// One link in progress.
struct Link {
    /// (name, PTX text) of each input, in order.
    inputs: Vec<(String, String)>,
    /// Where the caller wants the logs (the options of `cuLinkCreate`, which must stay valid for
    /// the link's life).
    logs: JitLogs,
    /// The image `cuLinkComplete` handed out: owned by the link until `cuLinkDestroy`.
    image: Option<CString>,
}

// SAFETY: the raw pointers in `logs` are the caller's buffers, only written during calls on this
// link, which the registry's mutex serialises; the driver API lets any thread use a link state.
unsafe impl Send for Link {}

/// The links alive, by handle id: a handle that was never made or was destroyed is
/// `CUDA_ERROR_INVALID_HANDLE`, never a dereference.
static LINKS: Mutex<(usize, Option<HashMap<usize, Link>>)> = Mutex::new((0, None));

fn links() -> MutexGuard<'static, (usize, Option<HashMap<usize, Link>>)> {
    LINKS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Runs `f` on the link `state` names.
fn with_link<R>(
    state: CUlinkState,
    f: impl FnOnce(&mut Link) -> Result<R, CUresult>,
) -> Result<R, CUresult> {
    let mut links = links();
    let link = links
        .1
        .get_or_insert_with(HashMap::new)
        .get_mut(&id_of(state))
        .ok_or(CUresult::CUDA_ERROR_INVALID_HANDLE)?;
    f(link)
}

#[no_mangle]
pub unsafe extern "C" fn cuLinkCreate_v2(
    numOptions: c_uint,
    options: *mut J,
    optionValues: *mut *mut c_void,
    stateOut: *mut CUlinkState,
) -> CUresult {
    guard("cuLinkCreate", || {
        DRIVER.state()?.current_usable()?;
        // SAFETY: both arrays hold numOptions entries (the caller's contract).
        let logs = unsafe { jit_logs(numOptions, options, optionValues) }?;
        let mut links = links();
        links.0 += 1;
        let id = links.0;
        links.1.get_or_insert_with(HashMap::new).insert(
            id,
            Link {
                inputs: Vec::new(),
                logs,
                image: None,
            },
        );
        // SAFETY: the caller's out-pointer (driver API contract).
        unsafe { put(stateOut, handle(id)) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuLinkCreate(
    numOptions: c_uint,
    options: *mut J,
    optionValues: *mut *mut c_void,
    stateOut: *mut CUlinkState,
) -> CUresult {
    // SAFETY: forwarded.
    unsafe { cuLinkCreate_v2(numOptions, options, optionValues, stateOut) }
}

/// `CUjitInputType` values.
const INPUT_PTX: u32 = 1;
const INPUT_NAMES: [&str; 6] = [
    "a cubin",
    "PTX",
    "a fatbin",
    "an object",
    "a library",
    "NVVM IR",
];

const INPUT_LIBRARY: u32 = 4;

/// Whether the library input `name` (a path, for `cuLinkAddFile`) is CUDA's device runtime.
fn is_cudadevrt(name: &str) -> bool {
    std::path::Path::new(name)
        .file_name()
        .is_some_and(|f| f == "libcudadevrt.a" || f == "cudadevrt.lib")
}

/// Adds input `name` of kind `kind` (`CUjitInputType`, raw) with `bytes` to `state`.
fn add(state: CUlinkState, kind: u32, bytes: &[u8], name: String) -> Outcome {
    with_link(state, |link| {
        let refuse = |link: &mut Link, code, why: String| {
            link.logs.error(&format!("error   : {name}: {why}"));
            Err(code)
        };
        if kind == INPUT_LIBRARY && is_cudadevrt(&name) {
            link.inputs.push((name, crate::cudadevrt::PTX.to_string()));
            return Ok(());
        }
        if kind != INPUT_PTX {
            let what = INPUT_NAMES.get(kind as usize).copied();
            let Some(what) = what else {
                return refuse(
                    link,
                    CUresult::CUDA_ERROR_INVALID_VALUE,
                    format!("unknown input type {kind}"),
                );
            };
            return refuse(
                link,
                CUresult::CUDA_ERROR_NOT_SUPPORTED,
                format!(
                    "the ferrocuda PTX emulator links PTX only, and this is {what} (machine code \
                     it cannot run)"
                ),
            );
        }
        // PTX may arrive with its terminating NUL counted.
        let bytes = bytes.strip_suffix(&[0]).unwrap_or(bytes);
        let Ok(text) = std::str::from_utf8(bytes) else {
            return refuse(
                link,
                CUresult::CUDA_ERROR_INVALID_IMAGE,
                "the PTX is not UTF-8 text".into(),
            );
        };
        link.inputs.push((name, text.to_string()));
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuLinkAddData_v2(
    state: CUlinkState,
    kind: c_uint,
    data: *mut c_void,
    size: usize,
    name: *const c_char,
    _numOptions: c_uint,
    _options: *mut J,
    _optionValues: *mut *mut c_void,
) -> CUresult {
    guard("cuLinkAddData", || {
        if data.is_null() || size == 0 {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        // SAFETY: `data` holds `size` bytes (the caller's contract).
        let bytes = unsafe { std::slice::from_raw_parts(data.cast::<u8>(), size) };
        let name = match name.is_null() {
            true => "<unnamed>".to_string(),
            // SAFETY: a NUL-terminated name (the caller's contract).
            false => unsafe { CStr::from_ptr(name) }
                .to_string_lossy()
                .into_owned(),
        };
        add(state, kind, bytes, name)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuLinkAddData(
    state: CUlinkState,
    kind: c_uint,
    data: *mut c_void,
    size: usize,
    name: *const c_char,
    numOptions: c_uint,
    options: *mut J,
    optionValues: *mut *mut c_void,
) -> CUresult {
    // SAFETY: forwarded.
    unsafe {
        cuLinkAddData_v2(
            state,
            kind,
            data,
            size,
            name,
            numOptions,
            options,
            optionValues,
        )
    }
}

#[no_mangle]
pub unsafe extern "C" fn cuLinkAddFile_v2(
    state: CUlinkState,
    kind: c_uint,
    path: *const c_char,
    _numOptions: c_uint,
    _options: *mut J,
    _optionValues: *mut *mut c_void,
) -> CUresult {
    guard("cuLinkAddFile", || {
        if path.is_null() {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        // SAFETY: a NUL-terminated path (the caller's contract).
        let path = unsafe { CStr::from_ptr(path) }
            .to_string_lossy()
            .into_owned();
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) => {
                with_link(state, |link| {
                    link.logs.error(&format!("error   : {path}: {e}"));
                    Ok(())
                })?;
                return Err(CUresult::CUDA_ERROR_FILE_NOT_FOUND);
            }
        };
        add(state, kind, &bytes, path)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuLinkAddFile(
    state: CUlinkState,
    kind: c_uint,
    path: *const c_char,
    numOptions: c_uint,
    options: *mut J,
    optionValues: *mut *mut c_void,
) -> CUresult {
    // SAFETY: forwarded.
    unsafe { cuLinkAddFile_v2(state, kind, path, numOptions, options, optionValues) }
}

#[no_mangle]
pub unsafe extern "C" fn cuLinkComplete(
    state: CUlinkState,
    cubinOut: *mut *mut c_void,
    sizeOut: *mut usize,
) -> CUresult {
    guard("cuLinkComplete", || {
        if cubinOut.is_null() || sizeOut.is_null() {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        let (pointer, size) = with_link(state, |link| {
            let linked = match crate::ptx_link::link(&link.inputs) {
                Ok(linked) => match link.logs.max_registers {
                    Some(max) => crate::ptx_link::cap_registers(&linked, max),
                    None => linked,
                },
                Err(why) => {
                    link.logs
                        .error(&format!("{why}\nptxas fatal   : linking failed"));
                    return Err(CUresult::CUDA_ERROR_INVALID_PTX);
                }
            };
            link.logs.info(&format!(
                "info    : ferrocuda PTX emulator: linked {} PTX input(s) into one module",
                link.inputs.len()
            ));
            let image = CString::new(linked).map_err(|_| CUresult::CUDA_ERROR_INVALID_PTX)?;
            let size = image.as_bytes_with_nul().len();
            let image = link.image.insert(image);
            Ok((image.as_ptr().cast_mut().cast::<c_void>(), size))
        })?;
        // SAFETY: the caller's out-pointers (checked non-null above). The image lives until
        // cuLinkDestroy, as the driver API promises.
        unsafe {
            put(cubinOut, pointer)?;
            put(sizeOut, size)
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuLinkDestroy(state: CUlinkState) -> CUresult {
    guard("cuLinkDestroy", || {
        let mut links = links();
        match links
            .1
            .get_or_insert_with(HashMap::new)
            .remove(&id_of(state))
        {
            Some(_) => Ok(()),
            None => Err(CUresult::CUDA_ERROR_INVALID_HANDLE),
        }
    })
}
