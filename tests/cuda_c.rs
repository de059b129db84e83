//! The project's CUDA C versions of the seed workloads (`src/workloads/cuda_c/*.cu`) compile
//! with NVRTC, for the oldest and the newest architecture we build for, and each kernel has the
//! name and the parameter sizes of the Rust kernel it stands for (which is what lets the main job
//! launch it through the same checked launch). NVRTC needs no GPU: the test uses the system's, or
//! pip's `nvidia-cuda-nvrtc-cu12` where it finds it (FERROCUDA_NVRTC, CUDA_TOOLS_DIR,
//! ~/.cache/sass-tools, Python's site-packages), and skips saying why when there is none.

use ferrocuda::nvrtc::{self, NVRTC_ENV};
use ferrocuda::workloads::{self, cuda_c, Scale};
use std::path::PathBuf;

/// Where pip puts NVRTC under a site-packages (or `pip install --target`) folder.
const PIP_LIB: &str = "nvidia/cuda_nvrtc/lib/libnvrtc.so.12";

/// A pip-installed NVRTC, when the system's is not found by name.
fn pip_nvrtc() -> Option<PathBuf> {
    let mut roots: Vec<PathBuf> = Vec::new();
    if let Ok(dir) = std::env::var("CUDA_TOOLS_DIR") {
        roots.push(dir.into());
    }
    if let Ok(home) = std::env::var("HOME") {
        roots.push(PathBuf::from(home).join(".cache/sass-tools"));
    }
    let python = std::process::Command::new("python3")
        .args([
            "-c",
            "import site; print('\\n'.join(site.getsitepackages() + [site.getusersitepackages()]))",
        ])
        .output();
    if let Ok(output) = python {
        roots.extend(
            String::from_utf8_lossy(&output.stdout)
                .lines()
                .map(PathBuf::from),
        );
    }
    roots
        .into_iter()
        .map(|r| r.join(PIP_LIB))
        .find(|p| p.is_file())
}

#[test]
fn the_cuda_c_sources_compile_with_nvrtc_and_match_the_rust_kernels_parameters() {
    if std::env::var_os(NVRTC_ENV).is_none() {
        if let Some(path) = pip_nvrtc() {
            // Before any NVRTC call; this binary's only test.
            std::env::set_var(NVRTC_ENV, &path);
        }
    }
    if let Err(why) = nvrtc::nvrtc_available() {
        eprintln!("the_cuda_c_sources_compile_with_nvrtc_and_match_the_rust_kernels_parameters: skipped: {why}");
        return;
    }
    let ours = ferrocuda::KERNELS.info();
    // Every kernel a workload with a CUDA C version launches.
    let mut kernels: Vec<&str> = workloads::all(Scale::Tiny)
        .iter()
        .flat_map(|w| w.kernels().iter().copied())
        .collect();
    kernels.sort();
    kernels.dedup();
    assert!(kernels.contains(&"black_scholes") && kernels.contains(&"vector_add"));
    for compute in [(7, 0), (9, 0)] {
        let ptx = nvrtc::compile_cuda_c("ferrocuda CUDA C", &cuda_c::source(), compute)
            .unwrap_or_else(|e| panic!("compute_{}{}: {e}", compute.0, compute.1));
        let info = ptx.info();
        for name in &kernels {
            let theirs = info
                .entry(name)
                .unwrap_or_else(|| panic!("no {name} in the CUDA C module"));
            let rust = ours.entry(name).unwrap();
            assert_eq!(theirs.param_sizes, rust.param_sizes, "{name}'s parameters");
        }
    }
    // A source error comes back as NVRTC's log, not a crash.
    let error = nvrtc::compile_cuda_c(
        "broken.cu",
        "extern \"C\" __global__ void k() { nope; }",
        (9, 0),
    )
    .unwrap_err()
    .to_string();
    assert!(
        error.contains("broken.cu") && error.contains("nope"),
        "{error}"
    );
}
