//! ferrocuda's own CUDA C versions of the seed workloads (`cuda_c/*.cu`: the same algorithms and
//! launch shapes as the Rust kernels, CUDA's accurate math, no fast math), compiled at run time
//! by NVRTC for the GPU in use: the main job's "CUDA C" column.
//!
//! Each CUDA C kernel has the name and the parameters (a slice as pointer and 64-bit length) of
//! the Rust kernel it stands for, so a workload runs it through its usual [`crate::ops`] call
//! on the CUDA C [`Module`]: the same launch checks, buffers and grid, only the machine code
//! differs. Results are checked against the same references as ours. What a Rust kernel asserts
//! (block shape, lengths), its CUDA C checks as well (`REQUIRE` in `common.cu`: a trap), so a
//! launch the host lets through cannot touch memory out of range in either.

use crate::{nvrtc, Device, Module, Ptx};

/// The CUDA C sources, by file name; `common.cu` (preconditions, warp and block sums) first.
pub const SOURCES: [(&str, &str); 11] = [
    ("common.cu", include_str!("cuda_c/common.cu")),
    ("elementwise.cu", include_str!("cuda_c/elementwise.cu")),
    ("reduce.cu", include_str!("cuda_c/reduce.cu")),
    ("matmul.cu", include_str!("cuda_c/matmul.cu")),
    ("convolution.cu", include_str!("cuda_c/convolution.cu")),
    ("transpose.cu", include_str!("cuda_c/transpose.cu")),
    ("finance.cu", include_str!("cuda_c/finance.cu")),
    ("monte_carlo.cu", include_str!("cuda_c/monte_carlo.cu")),
    ("statistics.cu", include_str!("cuda_c/statistics.cu")),
    ("group_by.cu", include_str!("cuda_c/group_by.cu")),
    // sm_80 and newer only: absent from an older target's PTX.
    ("tensor_cores.cu", include_str!("cuda_c/tensor_cores.cu")),
];

/// Every source as one NVRTC program (one module).
pub fn source() -> String {
    SOURCES.map(|(_, text)| text).join("\n")
}

/// The CUDA C kernels compiled for `device`'s GPU and loaded there; or why there are none, in
/// a few words for the table ("no GPU", "NVRTC not found: libnvrtc.so (...)").
pub fn load(device: &Device) -> Result<Module, String> {
    let ptx = compile(device)?;
    device.load(ptx).map_err(|error| error.to_string())
}

/// The CUDA C kernels compiled by NVRTC for `device`'s GPU (`compute_XY` PTX), not loaded: what
/// [`load`] loads, for a caller that also wants the text (`ferrocuda profile` has ptxas count
/// its registers). Errors as [`load`]'s.
pub fn compile(device: &Device) -> Result<&'static Ptx, String> {
    if !device.is_gpu() {
        return Err("no GPU".into());
    }
    let compute = device
        .properties()
        .compute_capability
        .ok_or("the GPU's compute capability is unknown")?;
    nvrtc::compile_cuda_c("ferrocuda CUDA C", &source(), compute).map_err(|error| error.to_string())
}

/// Whether `module` has every kernel `workload` launches: then it can run the workload.
pub fn runs(module: &Module, kernels: &[&str]) -> bool {
    !kernels.is_empty() && kernels.iter().all(|k| module.info().entry(k).is_some())
}
