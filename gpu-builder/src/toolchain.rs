//! Choosing the rustc that compiles kernels.
//!
//! The kernel build compiles `core` for `nvptx64-nvidia-cuda` from source (`-Zbuild-std=core`),
//! so it needs a rustc whose sysroot holds the standard library's source. Not every rustc has it
//! (rustup installs `rust-src` only on request; the host toolchain may not have it), so the
//! builder looks at a few candidates and explains what to install when none qualifies.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use crate::error::BuildError;
use crate::process::{find_in_path, run_capture};
use crate::tried::{ToolchainSource, TriedRustc};

/// Debian/Ubuntu's `rustc-web` rustc: with `rust-web-src` it has the library source.
const DEBIAN_RUSTC: &str = "/usr/bin/rustc";

/// The rustc chosen to compile kernels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelToolchain {
    /// The rustc binary handed to the nested cargo as `RUSTC`.
    pub rustc: PathBuf,
    /// Its `rustc -V` line, e.g. `rustc 1.96.0 (ac68faa20 2026-05-25)`.
    pub version: String,
    /// Its `rustc --print sysroot`.
    pub sysroot: PathBuf,
    /// Where the builder found it.
    pub source: ToolchainSource,
}

impl KernelToolchain {
    /// `<sysroot>/lib/rustlib/src/rust/library`: the source `-Zbuild-std` compiles.
    pub fn library_source(&self) -> PathBuf {
        library_source(&self.sysroot)
    }
}

/// `<sysroot>/lib/rustlib/src/rust/library`.
fn library_source(sysroot: &Path) -> PathBuf {
    sysroot.join("lib/rustlib/src/rust/library")
}

/// Finds a rustc able to build kernels: `FERROCUDA_KERNEL_RUSTC` if set (and then only it), else the
/// active toolchain (`RUSTC`, or `rustc` on `PATH`), else Debian's `/usr/bin/rustc`.
pub fn find_kernel_toolchain() -> Result<KernelToolchain, BuildError> {
    let mut candidates = Vec::new();
    if let Some(path) = std::env::var_os("FERROCUDA_KERNEL_RUSTC").filter(|p| !p.is_empty()) {
        candidates.push((PathBuf::from(path), ToolchainSource::EnvOverride));
    }
    let active = std::env::var_os("RUSTC")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| find_in_path("rustc"))
        .unwrap_or_else(|| PathBuf::from("rustc"));
    candidates.push((active, ToolchainSource::ActiveToolchain));
    candidates.push((PathBuf::from(DEBIAN_RUSTC), ToolchainSource::DebianRustcWeb));
    find_kernel_toolchain_in(&candidates)
}

/// The same search over explicit candidates, in order (tests use fake rustc scripts).
///
/// The first candidate whose sysroot has the library source wins. A failing
/// [`ToolchainSource::EnvOverride`] candidate ends the search with an error: the user asked for
/// that rustc, so falling back to another would hide their mistake.
pub fn find_kernel_toolchain_in(
    candidates: &[(PathBuf, ToolchainSource)],
) -> Result<KernelToolchain, BuildError> {
    let mut tried: Vec<TriedRustc> = Vec::new();
    for (rustc, source) in candidates {
        if tried.iter().any(|t| &t.rustc == rustc) {
            continue;
        }
        match probe(rustc, *source) {
            Ok(toolchain) => return Ok(toolchain),
            Err(t) => {
                tried.push(t);
                if *source == ToolchainSource::EnvOverride {
                    break;
                }
            }
        }
    }
    Err(BuildError::NoKernelToolchain { tried })
}

/// Asks one rustc for its version and sysroot and checks the sysroot for the library source.
fn probe(rustc: &Path, source: ToolchainSource) -> Result<KernelToolchain, TriedRustc> {
    let fail = |version: Option<String>, sysroot: Option<PathBuf>, problem: String| TriedRustc {
        rustc: rustc.to_path_buf(),
        source,
        version,
        sysroot,
        problem,
    };
    let version = run_line(rustc, &[OsStr::new("-V")]).map_err(|e| fail(None, None, e))?;
    let sysroot = run_line(rustc, &[OsStr::new("--print"), OsStr::new("sysroot")])
        .map_err(|e| fail(Some(version.clone()), None, e))?;
    let sysroot = PathBuf::from(sysroot);
    let marker = library_source(&sysroot).join("core/Cargo.toml");
    if !marker.is_file() {
        return Err(fail(
            Some(version),
            Some(sysroot),
            format!(
                "no standard library source: {} is missing",
                marker.display()
            ),
        ));
    }
    // A rustup proxy (~/.cargo/bin/rustc) picks its toolchain from the working directory and
    // RUSTUP_TOOLCHAIN; the nested build runs elsewhere, so pin the binary of the sysroot found.
    // An explicit FERROCUDA_KERNEL_RUSTC is used as given (it may be a deliberate wrapper).
    let pinned = sysroot
        .join("bin")
        .join(format!("rustc{}", std::env::consts::EXE_SUFFIX));
    let rustc = if source != ToolchainSource::EnvOverride && pinned.is_file() {
        pinned
    } else {
        rustc.to_path_buf()
    };
    Ok(KernelToolchain {
        rustc,
        version,
        sysroot,
        source,
    })
}

/// Runs `program args` and returns the first line of stdout, or a one-line reason.
fn run_line(program: &Path, args: &[&OsStr]) -> Result<String, String> {
    let out = run_capture(program, args).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => "not found".to_string(),
        _ => format!("could not run it: {e}"),
    })?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().next().unwrap_or("").trim().to_string();
    if !out.status.success() || line.is_empty() {
        let args: Vec<_> = args.iter().map(|a| a.to_string_lossy()).collect();
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(format!(
            "`{} {}` failed ({}): {}",
            program.display(),
            args.join(" "),
            out.status,
            stderr.trim()
        ));
    }
    Ok(line)
}

// The fake rustc scripts are shell scripts.
#[cfg(unix)]
#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A fresh temp directory holding a fake `rustc` script and a fake sysroot.
    struct FakeRustc {
        dir: PathBuf,
        rustc: PathBuf,
        sysroot: PathBuf,
    }

    impl FakeRustc {
        fn new(with_library_source: bool) -> Self {
            static N: AtomicUsize = AtomicUsize::new(0);
            let dir = std::env::temp_dir().join(format!(
                "gpu-builder-fake-rustc-{}-{}",
                std::process::id(),
                N.fetch_add(1, Ordering::Relaxed)
            ));
            let _ = std::fs::remove_dir_all(&dir);
            let sysroot = dir.join("sysroot");
            std::fs::create_dir_all(sysroot.join("lib/rustlib")).unwrap();
            if with_library_source {
                let core = library_source(&sysroot).join("core");
                std::fs::create_dir_all(&core).unwrap();
                std::fs::write(core.join("Cargo.toml"), "[package]\nname = \"core\"\n").unwrap();
            }
            let rustc = dir.join("rustc");
            std::fs::write(
                &rustc,
                format!(
                    "#!/bin/sh\ncase \"$1\" in\n  -V) echo 'rustc 9.9.9-fake (test 2026-01-01)';;\n  \
                     --print) echo '{}';;\n  *) exit 1;;\nesac\n",
                    sysroot.display()
                ),
            )
            .unwrap();
            std::fs::set_permissions(&rustc, std::fs::Permissions::from_mode(0o755)).unwrap();
            FakeRustc {
                dir,
                rustc,
                sysroot,
            }
        }
    }

    impl Drop for FakeRustc {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }

    #[test]
    fn rustc_without_library_source_is_explained() {
        let fake = FakeRustc::new(false);
        let err =
            find_kernel_toolchain_in(&[(fake.rustc.clone(), ToolchainSource::ActiveToolchain)])
                .unwrap_err();
        let msg = err.to_string();
        for needle in [
            "rust-src",
            "rust-web-src",
            "rustc-web",
            "FERROCUDA_KERNEL_RUSTC",
            "rustc 9.9.9-fake",
            "no standard library source",
        ] {
            assert!(msg.contains(needle), "{needle:?} missing from:\n{msg}");
        }
        assert!(msg.contains(&fake.rustc.display().to_string()), "{msg}");
    }

    #[test]
    fn rustc_with_library_source_qualifies() {
        let fake = FakeRustc::new(true);
        let tc =
            find_kernel_toolchain_in(&[(fake.rustc.clone(), ToolchainSource::ActiveToolchain)])
                .unwrap();
        // The fake sysroot has no bin/rustc, so the script itself is kept.
        assert_eq!(tc.rustc, fake.rustc);
        assert_eq!(tc.sysroot, fake.sysroot);
        assert_eq!(tc.version, "rustc 9.9.9-fake (test 2026-01-01)");
        assert_eq!(tc.source, ToolchainSource::ActiveToolchain);
        assert!(tc.library_source().join("core/Cargo.toml").is_file());
    }

    #[test]
    fn search_falls_through_to_a_later_candidate_and_lists_all_tries() {
        let bad = FakeRustc::new(false);
        let good = FakeRustc::new(true);
        let missing = bad.dir.join("no-such-rustc");
        let tc = find_kernel_toolchain_in(&[
            (missing.clone(), ToolchainSource::ActiveToolchain),
            (bad.rustc.clone(), ToolchainSource::ActiveToolchain),
            (good.rustc.clone(), ToolchainSource::DebianRustcWeb),
        ])
        .unwrap();
        assert_eq!(tc.rustc, good.rustc);
        assert_eq!(tc.source, ToolchainSource::DebianRustcWeb);

        let err = find_kernel_toolchain_in(&[
            (missing.clone(), ToolchainSource::ActiveToolchain),
            (bad.rustc.clone(), ToolchainSource::DebianRustcWeb),
        ])
        .unwrap_err();
        let BuildError::NoKernelToolchain { tried } = &err else {
            panic!("unexpected error {err:?}")
        };
        assert_eq!(tried.len(), 2);
        assert_eq!(tried[0].problem, "not found");
        assert_eq!(tried[0].version, None);
        assert!(err.to_string().contains(&missing.display().to_string()));
    }

    #[test]
    fn unusable_override_is_an_error_not_a_fallback() {
        let bad = FakeRustc::new(false);
        let good = FakeRustc::new(true);
        let err = find_kernel_toolchain_in(&[
            (bad.rustc.clone(), ToolchainSource::EnvOverride),
            (good.rustc.clone(), ToolchainSource::ActiveToolchain),
        ])
        .unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("FERROCUDA_KERNEL_RUSTC is set"), "{msg}");
        assert!(msg.contains(&bad.rustc.display().to_string()), "{msg}");
        assert!(!msg.contains(&good.rustc.display().to_string()), "{msg}");
    }
}
