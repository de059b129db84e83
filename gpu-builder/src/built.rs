//! What a kernel build produced ([`BuiltPtx`]): its files, what cargo must watch, and the
//! warnings about kernels the CPU executor runs on coroutines.

use std::path::{Path, PathBuf};

use crate::names::ENV_VARS_READ;
use crate::ptx_text;
use crate::ptxas::{Ptxas, PtxasReport};
use crate::toolchain::KernelToolchain;

/// The result of a kernel build.
#[derive(Debug, Clone)]
pub struct BuiltPtx {
    /// The PTX file, at the stable name `<target_dir>/<crate_name>.ptx`.
    pub ptx_path: PathBuf,
    /// The PTX text.
    pub ptx: String,
    /// The architecture it targets (`.target`), e.g. `sm_70`.
    pub arch: String,
    /// The rustc that compiled it.
    pub toolchain: KernelToolchain,
    /// The ptxas that checked it; `None` when none was found or the check was skipped.
    pub ptxas: Option<Ptxas>,
    /// Per-kernel resources; `Some` when ptxas ran. Also written to
    /// `<target_dir>/<crate_name>.ptxas.txt`.
    pub report: Option<PtxasReport>,
    /// Where the report is written as text (or why ptxas did not run), for users to read.
    pub report_path: PathBuf,
    /// Every source file the kernel build read (from cargo's dep-info), sysroot files excluded.
    pub sources: Vec<PathBuf>,
    /// The kernel crate's library name (underscores), which names the output files.
    pub crate_name: String,
    /// The kernel crate's directory (absolute).
    pub kernel_crate_dir: PathBuf,
    /// The outer build's `Cargo.lock` the nested build started from, if one was found.
    pub lockfile: Option<PathBuf>,
    /// rustc's messages about the kernel code (warnings, as rustc renders them), then what the
    /// nested cargo printed to stderr.
    pub cargo_log: String,
    /// `true` when the kernels were not compiled because `DOCS_RS` is set: `ptx` is then a
    /// placeholder that the driver rejects at load time.
    pub placeholder: bool,
}

impl BuiltPtx {
    /// Prints the `cargo:rerun-if-changed` / `cargo:rerun-if-env-changed` lines of
    /// [`rerun_if_changed_lines`](BuiltPtx::rerun_if_changed_lines), so cargo reruns the build
    /// script exactly when the kernels could change.
    pub fn emit_rerun_if_changed(&self) {
        for line in self.rerun_if_changed_lines() {
            println!("{line}");
        }
    }

    /// The lines [`emit_rerun_if_changed`](BuiltPtx::emit_rerun_if_changed) prints: every source
    /// file, the kernel crate's `Cargo.toml`, `Cargo.lock` (if any) and `src/` directory (new
    /// files), the outer lockfile the build started from, the `Cargo.toml` of each crate a source
    /// belongs to, and every environment variable the builder reads.
    pub fn rerun_if_changed_lines(&self) -> Vec<String> {
        let dir = &self.kernel_crate_dir;
        let mut paths: Vec<PathBuf> = vec![dir.join("Cargo.toml")];
        for extra in [dir.join("Cargo.lock"), dir.join("src")] {
            if extra.exists() {
                paths.push(extra);
            }
        }
        paths.extend(self.lockfile.clone());
        for source in &self.sources {
            paths.push(source.clone());
            if let Some(manifest) = source
                .ancestors()
                .skip(1)
                .map(|d| d.join("Cargo.toml"))
                .find(|m| m.is_file())
            {
                paths.push(manifest);
            }
        }
        let mut lines: Vec<String> = Vec::new();
        for p in paths {
            let line = format!("cargo:rerun-if-changed={}", p.display());
            if !lines.contains(&line) {
                lines.push(line);
            }
        }
        lines.extend(
            ENV_VARS_READ
                .iter()
                .map(|v| format!("cargo:rerun-if-env-changed={v}")),
        );
        lines
    }

    /// The names of the kernels (`.entry`) in the PTX, in file order.
    pub fn entry_names(&self) -> Vec<&str> {
        ptx_text::entry_names(&self.ptx)
    }

    /// How the CPU executor runs each kernel, as `#[kernel]` decided from its body and recorded
    /// in the PTX: (kernel, `elementwise`, `regions` or `coroutines: <why>`). A kernel on
    /// coroutines runs several times slower there (docs/cpu-executor.md); `build_for_env`
    /// warns about each.
    pub fn cpu_paths(&self) -> Vec<(String, String)> {
        ptx_text::cpu_paths(&self.ptx)
    }

    /// One line per kernel the CPU executor runs on coroutines: its name, where it is defined
    /// (found in the kernel crate's sources) and why, for a build script's `cargo:warning`.
    pub fn cpu_fallback_warnings(&self) -> Vec<String> {
        cpu_fallback_warnings(&self.ptx, &self.kernel_crate_dir)
    }
}

/// [`BuiltPtx::cpu_fallback_warnings`] of `ptx`, built from the kernel crate in `kernel_dir`.
fn cpu_fallback_warnings(ptx: &str, kernel_dir: &Path) -> Vec<String> {
    ptx_text::cpu_paths(ptx)
        .into_iter()
        .filter_map(|(kernel, path)| {
            let why = path.strip_prefix("coroutines: ")?;
            let at = crate::diagnostics::kernel_locations(kernel_dir, &kernel);
            let at = match at.as_slice() {
                [] => String::new(),
                places => format!(" ({})", places.join(", ")),
            };
            Some(format!(
                "kernel `{kernel}`{at} runs on coroutines on the CPU executor, several times \
                 slower than split at its barriers: {why}. See docs/cpu-executor.md; silence \
                 with {CPU_PATH_WARNING_ENV}=0 or PtxBuilder::warn_cpu_fallbacks(false)"
            ))
        })
        .collect()
}

/// Set to `0` to silence the build script's warnings about kernels on coroutines.
pub const CPU_PATH_WARNING_ENV: &str = "FERROCUDA_CPU_PATH_WARNINGS";

#[cfg(test)]
mod tests {
    /// A kernel on coroutines is a warning naming it, where it is and why; the others are not.
    #[test]
    fn kernels_on_coroutines_are_warned_about_with_their_place_and_reason() {
        let dir = std::env::temp_dir().join(format!("ferrocuda-paths-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::write(
            dir.join("src/lib.rs"),
            "use ferrocuda_std::kernel;\n\n#[kernel]\npub fn fast() {}\n\n#[kernel]\npub fn slow() {}\n",
        )
        .unwrap();
        let record = |name: &str, text: &str| {
            let bytes: Vec<String> = text.bytes().map(|b| b.to_string()).collect();
            format!(
                ".visible .global .align 1 .b8 __ferrocuda_cpu_path__{name}[{}] = {{{}}};\n",
                text.len(),
                bytes.join(", ")
            )
        };
        let ptx =
            record("fast", "regions") + &record("slow", "coroutines: a barrier inside a `loop`");
        let warnings = cpu_fallback_warnings(&ptx, &dir);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].starts_with("kernel `slow` (src/lib.rs:7) runs on coroutines")
                && warnings[0].contains("a barrier inside a `loop`")
                && warnings[0].contains(CPU_PATH_WARNING_ENV),
            "{}",
            warnings[0]
        );
    }

    use super::*;
    use crate::toolchain::KernelToolchain;
    use crate::tried::ToolchainSource;

    #[test]
    fn rerun_lines_cover_sources_manifests_lockfile_and_env() {
        let dir = env!("CARGO_MANIFEST_DIR");
        let built = BuiltPtx {
            ptx_path: "/t/k.ptx".into(),
            ptx: String::new(),
            arch: "sm_70".into(),
            toolchain: KernelToolchain {
                rustc: "/usr/bin/rustc".into(),
                version: "rustc 1.96.0".into(),
                sysroot: "/usr".into(),
                source: ToolchainSource::DebianRustcWeb,
            },
            ptxas: None,
            report: None,
            report_path: "/t/k.ptxas.txt".into(),
            sources: vec![
                concat!(env!("CARGO_MANIFEST_DIR"), "/src/lib.rs").into(),
                concat!(env!("CARGO_MANIFEST_DIR"), "/src/builder.rs").into(),
            ],
            crate_name: "k".into(),
            kernel_crate_dir: dir.into(),
            lockfile: Some("/outer/Cargo.lock".into()),
            cargo_log: String::new(),
            placeholder: false,
        };
        let lines = built.rerun_if_changed_lines();
        let manifest = format!("cargo:rerun-if-changed={dir}/Cargo.toml");
        assert_eq!(lines[0], manifest);
        assert_eq!(lines.iter().filter(|l| **l == manifest).count(), 1);
        assert!(lines.contains(&format!("cargo:rerun-if-changed={dir}/src")));
        assert!(lines.contains(&format!("cargo:rerun-if-changed={dir}/src/builder.rs")));
        assert!(lines.contains(&"cargo:rerun-if-changed=/outer/Cargo.lock".to_string()));
        for v in [
            "FERROCUDA_KERNEL_RUSTC",
            "FERROCUDA_PTXAS",
            "RUSTC",
            "PATH",
            "DOCS_RS",
            "FERROCUDA_BUILD_VERBOSE",
            "FERROCUDA_NO_FMA_WARNING",
        ] {
            assert!(
                lines.contains(&format!("cargo:rerun-if-env-changed={v}")),
                "{v}"
            );
        }
    }
}
