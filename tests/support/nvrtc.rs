//! Where the tests find NVRTC when the dynamic linker has none: pip's `nvidia-cuda-nvrtc-cu12`
//! (what `make setup` installs), for tests/cuda_c.rs and the main job's CUDA C column.

use std::path::PathBuf;

/// Where pip puts NVRTC under a site-packages (or `pip install --target`) folder.
const PIP_LIB: &str = "nvidia/cuda_nvrtc/lib/libnvrtc.so.12";

/// A pip-installed NVRTC, when the system's is not found by name.
pub fn pip_nvrtc() -> Option<PathBuf> {
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
