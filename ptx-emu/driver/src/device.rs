//! Initialisation, the driver's version and the virtual devices (`FERROCUDA_EMU_DEVICES`, default
//! 1): their name, identity and attributes (an sm_90 part with an H100/H200's limits, so launch
//! checks behave as there).

use crate::ffi::{guard, put};
use crate::state::{DEVICE_MEMORY_BYTES, DRIVER};
use cudarc::driver::sys::{CUdevice, CUdevice_attribute as A, CUresult, CUuuid};
use std::ffi::{c_char, c_int, c_uint};

/// What `cuDeviceGetName` says: never mistaken for hardware (ferrocuda-host's
/// `DeviceProperties::is_emulator` looks for it; its `Display` adds "(sm_90, 132 SMs)").
pub(crate) const DEVICE_NAME: &str = "ferrocuda PTX emulator";

/// The CUDA version whose driver API this implements (`cuDriverGetVersion`): 12.9, whose JIT
/// knows PTX ISA up to 8.8 (NVRTC 12.9's PTX, the main job's CUDA C, loads).
pub(crate) const DRIVER_VERSION: c_int = 12090;

/// The compute capability each device reports, as the `.target` number: 90 (sm_90), or what
/// `FERROCUDA_EMU_SM` says (70, 75, 80, 86, 89 or 90), so that tests can see how the host treats
/// PTX built for a newer GPU (`Error::GpuTooOld` for sm_80 tensor-core kernels on an sm_70).
/// One value for every virtual GPU, or a comma-separated list with one per virtual GPU
/// (`FERROCUDA_EMU_DEVICES` of them, in their order: `90,80`), so that a process sees GPUs of
/// different compute capabilities (Numba's caching test compiles for two).
pub(crate) const SM_ENV: &str = "FERROCUDA_EMU_SM";

/// The compute capabilities a GPU may have.
const SMS: [u32; 6] = [70, 75, 80, 86, 89, 90];

/// The compute capability of each of `gpus` virtual GPUs that `FERROCUDA_EMU_SM=text` gives
/// (`None`: unset, 90 for all), or why the text is not one.
fn parse_sms(text: Option<&str>, gpus: usize) -> Result<Vec<u32>, String> {
    let Some(text) = text else {
        return Ok(vec![90; gpus]);
    };
    let sms = text
        .split(',')
        .map(|entry| match entry.trim().parse::<u32>() {
            Ok(sm) if SMS.contains(&sm) => Ok(sm),
            _ => Err(format!("{entry:?} is not one of 70, 75, 80, 86, 89, 90")),
        })
        .collect::<Result<Vec<_>, _>>()?;
    match sms.len() {
        1 => Ok(vec![sms[0]; gpus]),
        n if n == gpus => Ok(sms),
        n => Err(format!(
            "{n} compute capabilities for {gpus} GPUs (FERROCUDA_EMU_DEVICES): give one for \
             all or one per GPU"
        )),
    }
}

/// The compute capability of device `ordinal` (a checked one), as [`SM_ENV`] says for the
/// virtual GPU behind it (`CUDA_VISIBLE_DEVICES` may reorder them); read once. A malformed
/// value is reported and every GPU is an sm_90.
pub(crate) fn device_sm(ordinal: usize) -> u32 {
    static SM: std::sync::OnceLock<Vec<u32>> = std::sync::OnceLock::new();
    let sms = SM.get_or_init(|| {
        let text = std::env::var(SM_ENV).ok();
        let gpus = DRIVER.gpus as usize;
        parse_sms(text.as_deref(), gpus).unwrap_or_else(|why| {
            eprintln!("ferrocuda PTX emulator: {SM_ENV}={text:?}: {why}; using 90");
            vec![90; gpus]
        })
    });
    sms[DRIVER.physical[ordinal] as usize]
}

pub(crate) const SM_COUNT: i32 = 132;
pub(crate) const MAX_THREADS_PER_BLOCK: i32 = 1024;
pub(crate) const MAX_THREADS_PER_SM: i32 = 2048;
pub(crate) const MAX_BLOCKS_PER_SM: i32 = 32;
pub(crate) const REGISTERS_PER_SM: i32 = 65536;
/// Shared memory a block gets without opting in, and with (cuFuncSetAttribute).
pub(crate) const SHARED_PER_BLOCK: i32 = 48 * 1024;
pub(crate) const SHARED_PER_BLOCK_OPTIN: i32 = 227 * 1024;
pub(crate) const SHARED_PER_SM: i32 = 228 * 1024;

/// The value of `attribute` for device `ordinal`, or `None` for one the emulator does not model.
fn attribute(attribute: u32, ordinal: usize) -> Option<c_int> {
    let sm = device_sm(ordinal) as c_int;
    let table: &[(A, c_int)] = &[
        (
            A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
            MAX_THREADS_PER_BLOCK,
        ),
        (A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, 1024),
        (A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, 1024),
        (A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, 64),
        (A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, i32::MAX),
        (A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, 65535),
        (A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, 65535),
        (
            A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
            SHARED_PER_BLOCK,
        ),
        (
            A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
            SHARED_PER_BLOCK_OPTIN,
        ),
        (
            A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
            SHARED_PER_SM,
        ),
        (
            A::CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK,
            1024,
        ),
        (A::CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY, 65536),
        (A::CU_DEVICE_ATTRIBUTE_WARP_SIZE, 32),
        (A::CU_DEVICE_ATTRIBUTE_MAX_PITCH, i32::MAX),
        (
            A::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK,
            REGISTERS_PER_SM,
        ),
        (
            A::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR,
            REGISTERS_PER_SM,
        ),
        (A::CU_DEVICE_ATTRIBUTE_CLOCK_RATE, 1_980_000),
        (A::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, 2_619_000),
        (A::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, 5120),
        (A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, 50 << 20),
        (A::CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT, 512),
        (A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, SM_COUNT),
        (
            A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
            MAX_THREADS_PER_SM,
        ),
        (
            A::CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR,
            MAX_BLOCKS_PER_SM,
        ),
        (A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, sm / 10),
        (A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, sm % 10),
        (A::CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT, 0),
        (A::CU_DEVICE_ATTRIBUTE_INTEGRATED, 0),
        (A::CU_DEVICE_ATTRIBUTE_TCC_DRIVER, 0),
        (A::CU_DEVICE_ATTRIBUTE_ECC_ENABLED, 0),
        (A::CU_DEVICE_ATTRIBUTE_COMPUTE_MODE, 0),
        (A::CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS, 1),
        (A::CU_DEVICE_ATTRIBUTE_GPU_OVERLAP, 1),
        (A::CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT, 2),
        (A::CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING, 1),
        (A::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, 0),
        (A::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, 0),
        (A::CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, 0),
        (A::CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD, 0),
        (A::CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED, 1),
        (A::CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED, 1),
        (A::CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED, 0),
        (A::CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED, 1),
        (A::CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, 1),
        (
            A::CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO,
            2,
        ),
        // Host-mapped and managed memory are the same bytes for host and kernels
        // (host_memory.rs), but the host may not touch managed memory while a kernel runs.
        (A::CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY, 1),
        (A::CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, 1),
        (A::CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS, 0),
        (A::CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS, 0),
        // What the emulator does not have: pooled memory, clusters.
        (A::CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, 0),
        (
            A::CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
            0,
        ),
        (A::CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH, 0),
    ];
    table
        .iter()
        .find(|(a, _)| *a as u32 == attribute)
        .map(|&(_, value)| value)
}

/// The device's ordinal, refusing any past the count (`FERROCUDA_EMU_DEVICES`, default 1).
/// A device handle is its ordinal.
pub(crate) fn check_device(dev: CUdevice) -> Result<usize, CUresult> {
    match usize::try_from(dev) {
        Ok(ordinal) if ordinal < DRIVER.device_count() => Ok(ordinal),
        _ => Err(CUresult::CUDA_ERROR_INVALID_DEVICE),
    }
}

#[no_mangle]
pub unsafe extern "C" fn cuInit(Flags: c_uint) -> CUresult {
    guard("cuInit", || {
        if Flags != 0 {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        DRIVER.init()
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuDriverGetVersion(driverVersion: *mut c_int) -> CUresult {
    // SAFETY: the caller's pointer is valid for one write (driver API contract).
    guard("cuDriverGetVersion", || unsafe {
        put(driverVersion, DRIVER_VERSION)
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetCount(count: *mut c_int) -> CUresult {
    guard("cuDeviceGetCount", || {
        DRIVER.initialized()?;
        // SAFETY: the caller's pointer is valid for one write (driver API contract).
        unsafe { put(count, DRIVER.device_count() as c_int) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceGet(device: *mut CUdevice, ordinal: c_int) -> CUresult {
    guard("cuDeviceGet", || {
        DRIVER.initialized()?;
        check_device(ordinal)?;
        // SAFETY: the caller's pointer is valid for one write (driver API contract).
        unsafe { put(device, ordinal) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetName(name: *mut c_char, len: c_int, dev: CUdevice) -> CUresult {
    guard("cuDeviceGetName", || {
        DRIVER.initialized()?;
        check_device(dev)?;
        if name.is_null() || len <= 0 {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        // As the driver does: as much of the name as fits, always NUL-terminated.
        let bytes = DEVICE_NAME.as_bytes();
        let n = bytes.len().min(len as usize - 1);
        // SAFETY: `name` is valid for `len` bytes (caller's contract) and n + 1 <= len.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr().cast(), name, n);
            name.add(n).write(0);
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetAttribute(
    pi: *mut c_int,
    attrib: u32,
    dev: CUdevice,
) -> CUresult {
    guard("cuDeviceGetAttribute", || {
        DRIVER.initialized()?;
        let ordinal = check_device(dev)?;
        let value = attribute(attrib, ordinal).ok_or(CUresult::CUDA_ERROR_NOT_SUPPORTED)?;
        // SAFETY: the caller's pointer is valid for one write (driver API contract).
        unsafe { put(pi, value) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceComputeCapability(
    major: *mut c_int,
    minor: *mut c_int,
    dev: CUdevice,
) -> CUresult {
    guard("cuDeviceComputeCapability", || {
        DRIVER.initialized()?;
        let sm = device_sm(check_device(dev)?) as c_int;
        // SAFETY: the caller's pointers are valid for one write each (driver API contract).
        unsafe { put(major, sm / 10).and_then(|()| put(minor, sm % 10)) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceTotalMem_v2(bytes: *mut usize, dev: CUdevice) -> CUresult {
    guard("cuDeviceTotalMem_v2", || {
        DRIVER.initialized()?;
        check_device(dev)?;
        // SAFETY: the caller's pointer is valid for one write (driver API contract).
        unsafe { put(bytes, DEVICE_MEMORY_BYTES as usize) }
    })
}

/// A fixed UUID per virtual GPU, "ferrocuda-ptxemu" in ASCII with the GPU's index added to the
/// last byte: the same GPU in every process, whatever ordinal `CUDA_VISIBLE_DEVICES` gives it
/// (GPU 0's is the one a single device always had).
fn uuid(ordinal: usize) -> CUuuid {
    let mut bytes = b"ferrocuda-ptxemu".map(|b| b as c_char);
    bytes[15] += DRIVER.physical[ordinal] as c_char;
    CUuuid { bytes }
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetUuid(out: *mut CUuuid, dev: CUdevice) -> CUresult {
    guard("cuDeviceGetUuid", || {
        DRIVER.initialized()?;
        let ordinal = check_device(dev)?;
        // SAFETY: the caller's pointer is valid for one write (driver API contract).
        unsafe { put(out, uuid(ordinal)) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetUuid_v2(out: *mut CUuuid, dev: CUdevice) -> CUresult {
    // SAFETY: the same contract as cuDeviceGetUuid.
    unsafe { cuDeviceGetUuid(out, dev) }
}

#[cfg(test)]
mod tests {
    use super::parse_sms;

    #[test]
    fn the_compute_capabilities_are_one_for_all_or_one_per_gpu() {
        assert_eq!(parse_sms(None, 2), Ok(vec![90, 90]));
        assert_eq!(parse_sms(Some("80"), 3), Ok(vec![80, 80, 80]));
        assert_eq!(parse_sms(Some(" 90 , 80"), 2), Ok(vec![90, 80]));
        assert_eq!(parse_sms(Some("70,75,86"), 3), Ok(vec![70, 75, 86]));
        let wrong_length = parse_sms(Some("90,80"), 3).unwrap_err();
        assert!(
            wrong_length.contains("2 compute capabilities for 3 GPUs"),
            "{wrong_length}"
        );
        assert!(parse_sms(Some("90,81"), 2).unwrap_err().contains("\"81\""));
        assert!(parse_sms(Some("90,"), 2).is_err());
        assert!(parse_sms(Some(""), 1).is_err());
    }
}
