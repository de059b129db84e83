//! The text of each error: the numbers involved and the fix appear in it.

use crate::error::Error;
use cudarc::driver::sys::CUresult;
use cudarc::driver::DriverError;
use ferrocuda_std::Dim3;

/// Asserts that every one of `parts` is in `error`'s message.
fn assert_says(error: &Error, parts: &[&str]) {
    let message = error.to_string();
    for part in parts {
        assert!(message.contains(part), "{part:?} is not in: {message}");
    }
}

const H200: &str = "CUDA device 0: NVIDIA H200 (sm_90, 132 SMs)";

#[test]
fn out_of_memory_gives_asked_free_and_total_bytes_and_the_chunked_path() {
    let error = Error::OutOfMemory {
        device: H200.into(),
        requested: 200_000_000_000,
        free: 149_000_000_000,
        total: 150_754_820_096,
        limit: None,
    };
    assert_says(
        &error,
        &[
            "asked for 200000000000 bytes",
            "149000000000 bytes free of 150754820096",
            "in chunks",
            "ferrocuda::ops::Pipeline",
            H200,
        ],
    );
    assert!(!error.to_string().contains("limit"), "{error}");
}

#[test]
fn out_of_memory_under_a_limit_names_the_limit_and_what_is_in_use() {
    let error = Error::OutOfMemory {
        device: H200.into(),
        requested: 1 << 30,
        free: 10 << 20,
        total: 64 << 20,
        limit: Some(64 << 20),
    };
    assert_says(
        &error,
        &[
            "asked for 1073741824 bytes",
            "device memory limit of 67108864 bytes",
            "with 56623104 bytes in use",
            "FERROCUDA_DEVICE_MEMORY_LIMIT",
            "ferrocuda::ops::Pipeline",
        ],
    );
}

#[test]
fn a_rejected_ptx_gives_the_jit_log_and_both_versions() {
    let error = Error::PtxRejected {
        module: "ferrocuda-kernels",
        driver_cuda: Some((12, 4)),
        jit_log: "ptxas application ptx input, line 1; fatal : Unsupported .version 8.5".into(),
        ptx_version: "8.5".into(),
        target: "sm_90".into(),
        device: H200.into(),
        source: DriverError(CUresult::CUDA_ERROR_UNSUPPORTED_PTX_VERSION),
    };
    assert_says(
        &error,
        &[
            "driver (CUDA 12.4)",
            "PTX ISA 8.5",
            "needs a driver for CUDA 12.5 or newer",
            "sm_90",
            "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
            "JIT log: ptxas application ptx input, line 1; fatal : Unsupported .version 8.5",
            "update the driver",
            "PtxBuilder::arch",
        ],
    );
    let unknown = Error::PtxRejected {
        module: "m",
        driver_cuda: None,
        jit_log: "(the driver wrote no JIT error log)".into(),
        ptx_version: "99.9".into(),
        target: "sm_70".into(),
        device: H200.into(),
        source: DriverError(CUresult::CUDA_ERROR_INVALID_PTX),
    };
    assert_says(&unknown, &["driver (CUDA ?)", "for CUDA ? or newer"]);
}

#[test]
fn a_gpu_too_old_names_the_target_and_its_compute_capability() {
    let error = Error::GpuTooOld {
        module: "ferrocuda-kernels",
        target: "sm_90".into(),
        device: "CUDA device 0: Tesla V100 (sm_70, 80 SMs)".into(),
        major: 7,
        minor: 0,
    };
    assert_says(&error, &["targets sm_90", "is sm_70", "for sm_70 or lower"]);
}

#[test]
fn a_kernel_fault_names_the_kernel_and_says_the_context_was_recreated() {
    let error = Error::KernelFailed {
        recovery: "ferrocuda made a new one".into(),
        kernel: "assert_non_negative",
        device: H200.into(),
        detected: "cuStreamSynchronize",
        source: DriverError(CUresult::CUDA_ERROR_LAUNCH_FAILED),
    };
    assert_says(
        &error,
        &[
            "kernel `assert_non_negative` failed",
            "seen at cuStreamSynchronize): CUDA_ERROR_LAUNCH_FAILED",
            "CUDA context",
            "had to be recreated: ferrocuda made a new one",
        ],
    );
    let lost = Error::ContextLost {
        what: "a buffer",
        device: H200.into(),
        fix: "`device.upload(&data)`",
    };
    assert_says(
        &lost,
        &[
            "a buffer was made on",
            "kernel fault destroyed its CUDA context",
            "`device.upload(&data)`",
        ],
    );
}

#[test]
fn launches_beyond_the_device_name_the_limit() {
    let block = Error::BlockTooLarge {
        kernel: "k",
        block: Dim3::new(2048, 1, 1),
        threads: 2048,
        device: H200.into(),
        max_threads: 1024,
        max_dims: Dim3::new(1024, 1024, 64),
    };
    assert_says(&block, &["2048 threads", "at most 1024 threads per block"]);
    let shared = Error::SharedMemoryTooLarge {
        kernel: "k",
        requested: 65536,
        device: H200.into(),
        limit: 49152,
    };
    assert_says(&shared, &["65536 bytes", "at most 49152"]);
}

#[test]
fn driver_errors_read_without_a_driver() {
    // cudarc's own Display asks the driver for the text and panics without one.
    let error = Error::Driver {
        call: "cuMemcpyDtoH",
        device: H200.into(),
        source: DriverError(CUresult::CUDA_ERROR_ILLEGAL_ADDRESS),
    };
    assert_says(
        &error,
        &["cuMemcpyDtoH failed", "CUDA_ERROR_ILLEGAL_ADDRESS"],
    );
}

#[test]
fn no_driver_names_the_libraries_tried_and_the_fix() {
    let error = crate::cuda::no_driver();
    assert_says(
        &error,
        &[
            "no NVIDIA driver",
            "libcuda.so.1",
            "Install the NVIDIA driver",
            "FERROCUDA_DEVICE=cpu",
        ],
    );
    let unavailable = Error::MemoryInfoUnavailable {
        device: "CPU executor (2 threads)".into(),
        detail: "/proc/meminfo cannot be read".into(),
    };
    assert_says(&unavailable, &["CPU executor (2 threads)", "/proc/meminfo"]);
}
