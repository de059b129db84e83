//! Finding a `ptxas` that can assemble for an architecture: the places looked at, in order, and
//! why each candidate was not used.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use crate::process::{find_in_path, run_capture};
use crate::ptxas::{parse_arch, Ptxas};

/// Finds a ptxas that can assemble for `arch`: `FERROCUDA_PTXAS`, then `ptxas` on `PATH`, then
/// `$CUDA_HOME/bin`, `$CUDA_PATH/bin` and `/usr/local/cuda/bin`, then the pip wheels
/// (`nvidia/cuda_nvcc/bin` of `nvidia-cuda-nvcc-cu12` first, then `nvidia/cu13/bin` of
/// `nvidia-cuda-nvcc`). One that does not support `arch` (CUDA 13 dropped sm_50..sm_72) is skipped.
pub fn find_ptxas(arch: &str) -> Option<Ptxas> {
    search_ptxas(arch).found
}

/// The outcome of [`search_ptxas`]: what was found and what was looked at.
pub(crate) struct PtxasSearch {
    pub found: Option<Ptxas>,
    /// One line per candidate that was not used, for messages.
    pub tried: Vec<String>,
}

/// [`find_ptxas`], also reporting why each candidate was not used.
pub(crate) fn search_ptxas(arch: &str) -> PtxasSearch {
    let mut search = PtxasSearch {
        found: None,
        tried: Vec::new(),
    };
    let mut seen: Vec<PathBuf> = Vec::new();
    let mut consider = |search: &mut PtxasSearch, path: PathBuf| -> bool {
        let key = path.canonicalize().unwrap_or_else(|_| path.clone());
        if seen.contains(&key) {
            return false;
        }
        seen.push(key);
        match check_ptxas(&path, arch) {
            Ok(p) => {
                search.found = Some(p);
                true
            }
            Err(why) => {
                search.tried.push(format!("{}: {why}", path.display()));
                false
            }
        }
    };
    let exe = format!("ptxas{}", std::env::consts::EXE_SUFFIX);

    if let Some(p) = std::env::var_os("FERROCUDA_PTXAS").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        if p.is_file() {
            if consider(&mut search, p) {
                return search;
            }
        } else {
            search
                .tried
                .push(format!("{} (FERROCUDA_PTXAS): not found", p.display()));
        }
    }
    match find_in_path("ptxas") {
        Some(p) => {
            if consider(&mut search, p) {
                return search;
            }
        }
        None => search.tried.push("ptxas on PATH: not found".into()),
    }
    let toolkits = ["CUDA_HOME", "CUDA_PATH"]
        .iter()
        .filter_map(|var| {
            std::env::var_os(var)
                .filter(|p| !p.is_empty())
                .map(PathBuf::from)
        })
        .chain([PathBuf::from("/usr/local/cuda")]);
    for toolkit in toolkits {
        let p = toolkit.join("bin").join(&exe);
        if p.is_file() && consider(&mut search, p) {
            return search;
        }
    }

    // Asking Python for its site-packages costs a process start, so it comes last.
    let sites = python_site_dirs();
    if sites.is_empty() {
        search
            .tried
            .push("pip wheels: no python3/python to ask for site-packages".into());
    }
    let mut any_wheel = false;
    for wheel_dir in ["nvidia/cuda_nvcc/bin", "nvidia/cu13/bin"] {
        for site in &sites {
            let p = site.join(wheel_dir).join(&exe);
            if p.is_file() {
                any_wheel = true;
                if consider(&mut search, p) {
                    return search;
                }
            }
        }
    }
    if !sites.is_empty() && !any_wheel {
        let list: Vec<_> = sites.iter().map(|s| s.display().to_string()).collect();
        search.tried.push(format!(
            "pip wheels nvidia-cuda-nvcc-cu12 / nvidia-cuda-nvcc: not installed in {}",
            list.join(", ")
        ));
    }
    search
}

/// The site-packages directories of `python3` (or `python`): where pip puts NVIDIA's wheels.
pub(crate) fn python_site_dirs() -> Vec<PathBuf> {
    const SCRIPT: &str = "import site, sysconfig\n\
        p = sysconfig.get_paths()\n\
        print(p['purelib']); print(p['platlib'])\n\
        for s in getattr(site, 'getsitepackages', lambda: [])(): print(s)\n\
        print(site.getusersitepackages())";
    for python in ["python3", "python"] {
        let Some(exe) = find_in_path(python) else {
            continue;
        };
        let Ok(out) = run_capture(&exe, &[OsStr::new("-c"), OsStr::new(SCRIPT)]) else {
            continue;
        };
        if !out.status.success() {
            continue;
        }
        let mut dirs: Vec<PathBuf> = Vec::new();
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            let dir = PathBuf::from(line.trim());
            if !line.trim().is_empty() && !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
        return dirs;
    }
    Vec::new()
}

/// Runs `ptxas --version` and `ptxas --help` to learn its release and whether it knows `arch`.
fn check_ptxas(path: &Path, arch: &str) -> Result<Ptxas, String> {
    let out = run_capture(path, &[OsStr::new("--version")])
        .map_err(|e| format!("could not run it: {e}"))?;
    if !out.status.success() {
        return Err(format!("`--version` failed ({})", out.status));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let version = parse_ptxas_version(&text)
        .ok_or_else(|| format!("unrecognised `--version` output: {}", text.trim()))?;
    let supported = match run_capture(path, &[OsStr::new("--help")]) {
        Ok(help) => match allowed_gpu_names(&String::from_utf8_lossy(&help.stdout)) {
            Some(names) => names.iter().any(|n| n == arch),
            None => version_supports(&version, arch),
        },
        Err(_) => version_supports(&version, arch),
    };
    if !supported {
        return Err(format!("CUDA {version} ptxas does not support {arch}"));
    }
    Ok(Ptxas {
        path: path.to_path_buf(),
        version,
    })
}

/// `12.9` from `Cuda compilation tools, release 12.9, V12.9.86`.
pub(crate) fn parse_ptxas_version(text: &str) -> Option<String> {
    let rest = &text[text.find("release ")? + "release ".len()..];
    let end = rest
        .find(|c: char| c != '.' && !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let version = &rest[..end];
    (!version.is_empty()).then(|| version.to_string())
}

/// The values `--help` lists as allowed for `--gpu-name`, if the text has that list.
pub(crate) fn allowed_gpu_names(help: &str) -> Option<Vec<String>> {
    let section = &help[help.find("--gpu-name")?..];
    let section = &section[..section[1..].find("\n--").map_or(section.len(), |i| i + 1)];
    let list = &section[section.find("Allowed values")?..];
    let list = &list[..list.find("Default value").unwrap_or(list.len())];
    let names: Vec<String> = list
        .split('\'')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect();
    (!names.is_empty()).then_some(names)
}

/// Fallback when `--help` has no list: CUDA 13 dropped everything below sm_75.
fn version_supports(version: &str, arch: &str) -> bool {
    let major: u32 = version
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .unwrap_or(0);
    match parse_arch(arch) {
        Some((num, _)) => major < 13 || num >= 75,
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_version_and_allowed_architectures() {
        assert_eq!(
            parse_ptxas_version("ptxas: NVIDIA (R) Ptx optimizing assembler\nCuda compilation tools, release 12.9, V12.9.86\n").as_deref(),
            Some("12.9")
        );
        assert_eq!(parse_ptxas_version("nonsense"), None);

        let cu12 =
            allowed_gpu_names(include_str!("../tests/data/ptxas-help-gpu-name-12.9.txt")).unwrap();
        let cu13 =
            allowed_gpu_names(include_str!("../tests/data/ptxas-help-gpu-name-13.5.txt")).unwrap();
        for arch in ["sm_70", "sm_80", "sm_90", "sm_90a"] {
            assert!(cu12.iter().any(|a| a == arch), "{arch} {cu12:?}");
        }
        assert!(!cu13.iter().any(|a| a == "sm_70" || a == "sm_72"));
        assert!(cu13.iter().any(|a| a == "sm_75") && cu13.iter().any(|a| a == "sm_90"));
        assert!(cu13.iter().any(|a| a == "sm_110"));
        assert_eq!(
            allowed_gpu_names("--gpu-name <gpu name>\n  no list\n--help"),
            None
        );
    }

    #[test]
    fn version_fallback_knows_cuda_13_dropped_volta() {
        assert!(version_supports("12.9", "sm_70"));
        assert!(!version_supports("13.5", "sm_70"));
        assert!(!version_supports("13.0", "sm_72"));
        assert!(version_supports("13.5", "sm_75"));
        assert!(version_supports("13.5", "sm_90a"));
    }
}
