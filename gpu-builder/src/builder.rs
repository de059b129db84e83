//! The kernel build: what to build ([`PtxBuilder`]) and the steps of [`PtxBuilder::build`]. What
//! it produced ([`BuiltPtx`]) is in `built`, the nested cargo itself in `nested`, the sorting of
//! its errors in `diagnostics`.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::built::BuiltPtx;
use crate::diagnostics::{gpu_only, parse_messages, render_with_hint, Diagnostic};
use crate::error::{BuildError, CargoFailure};
use crate::names::BUILD_VERBOSE_ENV;
use crate::nested::{self, KernelPackage, Nested};
use crate::process::{display_command, write_if_changed};
use crate::ptx_text;
use crate::ptxas::{assemble, parse_arch, Ptxas, PtxasReport};
use crate::ptxas_search::search_ptxas;
use crate::toolchain::{find_kernel_toolchain, KernelToolchain};
use crate::tried::ToolchainSource;

/// Whether to check the PTX with `ptxas` (it needs no GPU, only the assembler).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum PtxasMode {
    /// Assemble when a suitable ptxas is found; build without the check otherwise.
    #[default]
    Auto,
    /// Fail the build when no suitable ptxas is found (CI, where it is installed).
    Require,
    /// Never run ptxas.
    Skip,
}

/// Builds one kernel crate to PTX. Configure with the builder methods, then call
/// [`build`](PtxBuilder::build).
#[derive(Debug, Clone)]
pub struct PtxBuilder {
    kernel_crate_dir: PathBuf,
    arch: String,
    target_dir: Option<PathBuf>,
    ptxas: PtxasMode,
    patches: Vec<(String, PathBuf)>,
    warn_without_fma: bool,
    pub(crate) warn_cpu_fallbacks: bool,
    selection: nested::Selection,
}

impl PtxBuilder {
    /// Starts a build of the kernel crate whose `Cargo.toml` is in `kernel_crate_dir` (a relative
    /// path is relative to the current directory, which for a build script is its package).
    pub fn new(kernel_crate_dir: impl Into<PathBuf>) -> Self {
        PtxBuilder {
            kernel_crate_dir: kernel_crate_dir.into(),
            arch: "sm_70".to_string(),
            target_dir: None,
            ptxas: PtxasMode::Auto,
            patches: Vec::new(),
            warn_without_fma: true,
            warn_cpu_fallbacks: true,
            selection: nested::Selection::default(),
        }
    }

    /// Whether [`build_for_env`](PtxBuilder::build_for_env) prints a `cargo:warning` for each
    /// kernel the CPU executor runs on coroutines (with where and why). Default `true`; the
    /// environment variable `FERROCUDA_CPU_PATH_WARNINGS=0` turns them off as well.
    pub fn warn_cpu_fallbacks(mut self, warn: bool) -> Self {
        self.warn_cpu_fallbacks = warn;
        self
    }

    /// Turns on cargo features of the kernel crate for the PTX build (`--features`), as a
    /// dependency entry's `features = [...]` does for its host build: pass the same ones.
    ///
    /// ```no_run
    /// # use ferrocuda_builder::PtxBuilder;
    /// let built = PtxBuilder::new("../my-kernels").features(["f64-kernels"]).build();
    /// ```
    pub fn features<S: Into<String>>(mut self, features: impl IntoIterator<Item = S>) -> Self {
        self.selection
            .features
            .extend(features.into_iter().map(Into::into));
        self
    }

    /// Builds the kernel crate without its default features (`--no-default-features`).
    pub fn no_default_features(mut self) -> Self {
        self.selection.no_default_features = true;
        self
    }

    /// Sets a cfg for the kernel crate's PTX build: `cfg("fast_math")` is `--cfg fast_math`,
    /// `cfg("tile = \"64\"")` is `--cfg tile="64"`, each declared to rustc's unexpected-cfg
    /// lint too. Only the kernel crate gets it, not its dependencies.
    pub fn cfg(mut self, cfg: &str) -> Self {
        let cfg = match cfg.split_once('=') {
            Some((name, value)) => format!("{}={}", name.trim(), value.trim()),
            None => cfg.trim().to_string(),
        };
        self.selection.cfgs.push(cfg);
        self
    }

    /// The GPU architecture (`-C target-cpu`). Default `sm_70`, the lowest our kernels need:
    /// the driver JIT-compiles PTX for any newer GPU, never for an older one.
    pub fn arch(mut self, arch: &str) -> Self {
        self.arch = arch.to_string();
        self
    }

    /// Where the nested cargo builds. Default `$OUT_DIR/kernel-target` in a build script, else
    /// `<kernel_crate_dir>/target/ferrocuda-ptx`. It must differ from the outer build's target
    /// directory, or the nested cargo would wait forever on the outer one's lock.
    pub fn target_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.target_dir = Some(dir.into());
        self
    }

    /// Whether to check the PTX with ptxas; default [`PtxasMode::Auto`].
    pub fn ptxas(mut self, mode: PtxasMode) -> Self {
        self.ptxas = mode;
        self
    }

    /// Resolves the crates.io dependency `name` of the kernel crate (or of its dependencies) from
    /// the package in `dir` (a `[patch.crates-io]` entry of the nested build).
    ///
    /// The nested cargo resolves dependencies on its own and cannot see sources the outer build
    /// has but crates.io has not: `cargo package`'s temporary registry, the outer workspace's
    /// `[patch]`. A build script learns where the outer build's copy is from a `links` crate's
    /// `DEP_<LINKS>_ROOT` variable (ferrocuda's crates print it) and passes it here.
    pub fn patch_crates_io(mut self, name: &str, dir: impl Into<PathBuf>) -> Self {
        self.patches.push((name.to_string(), dir.into()));
        self
    }

    /// Whether to warn (one `cargo:warning`) when the host build is for x86-64 without FMA on a
    /// CPU that has it: the CPU executor's math then runs several times slower. Default `true`;
    /// the environment variable `FERROCUDA_NO_FMA_WARNING=1` turns it off as well.
    pub fn warn_without_fma(mut self, warn: bool) -> Self {
        self.warn_without_fma = warn;
        self
    }

    /// Builds the kernel crate to PTX, copies it to `<target_dir>/<crate_name>.ptx`, and checks
    /// it with ptxas according to the [`PtxasMode`].
    ///
    /// With `DOCS_RS` set (docs.rs builds) nothing is compiled: the PTX is a placeholder (see
    /// [`BuiltPtx::placeholder`]), so crates that embed it still document.
    pub fn build(self) -> Result<BuiltPtx, BuildError> {
        if parse_arch(&self.arch).is_none() {
            return Err(BuildError::InvalidArch { arch: self.arch });
        }
        if self.warn_without_fma {
            crate::fma::warn_if_needed();
        }
        let dir = crate_dir(&self.kernel_crate_dir)?;
        let target_dir = match &self.target_dir {
            Some(t) => absolute(t)?,
            None => match std::env::var_os("OUT_DIR").filter(|d| !d.is_empty()) {
                Some(out) => absolute(Path::new(&out))?.join("kernel-target"),
                None => dir.join("target").join("ferrocuda-ptx"),
            },
        };
        std::fs::create_dir_all(&target_dir).map_err(|e| BuildError::io(&target_dir, e))?;
        if std::env::var_os("DOCS_RS").is_some() {
            return self.placeholder(dir, &target_dir);
        }

        let toolchain = find_kernel_toolchain()?;
        let nested = Nested {
            cargo: std::env::var_os("CARGO")
                .filter(|c| !c.is_empty())
                .unwrap_or_else(|| "cargo".into()),
            rustc: toolchain.rustc.clone(),
            kernel_dir: dir.clone(),
            target_dir: target_dir.clone(),
            env_remove: nested::env_to_remove(std::env::vars_os()),
            selection: self.selection.clone(),
        };
        let package = KernelPackage::read(&dir.join("Cargo.toml"))?;
        let var = |v: &str| std::env::var_os(v).map(PathBuf::from);
        let starts: Vec<PathBuf> = [var("OUT_DIR"), Some(dir.clone()), var("CARGO_MANIFEST_DIR")]
            .into_iter()
            .flatten()
            .collect();
        let lockfile = nested::find_lockfile(&starts, &package.name);
        let wrapper = nested::write_wrapper(
            &target_dir,
            &dir,
            &package,
            &self.patches,
            lockfile.as_deref(),
            &self.selection,
        )?;

        let mut cmd = nested.ptx_command(&wrapper, &package, &self.arch);
        let out = output(&mut cmd, &nested.cargo)?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let messages = parse_messages(&stdout);
        let cargo_log = log_text(&messages, &stderr);
        if !out.status.success() {
            return Err(cargo_failed(
                &nested, &wrapper, &package, &cmd, &messages, cargo_log,
            ));
        }

        let staticlib = nested::find_artifact(&stdout)?;
        let crate_name = staticlib
            .file_stem()
            .and_then(OsStr::to_str)
            .map(|s| s.strip_prefix("lib").unwrap_or(s).to_string())
            .ok_or_else(|| BuildError::PtxNotFound {
                reason: format!("unexpected artifact name {}", staticlib.display()),
            })?;
        let asm = nested::find_asm(&staticlib, &crate_name, &self.arch)?;
        let ptx = std::fs::read_to_string(&asm).map_err(|e| BuildError::io(&asm, e))?;
        ptx_text::check(&ptx, &self.arch).map_err(|reason| BuildError::InvalidPtx {
            path: asm.clone(),
            reason,
        })?;
        let ptx_path = target_dir.join(format!("{crate_name}.ptx"));
        write_if_changed(&ptx_path, &ptx)?;

        let dep_info = staticlib.with_extension("d");
        let dep_text =
            std::fs::read_to_string(&dep_info).map_err(|e| BuildError::io(&dep_info, e))?;
        let rustlib = toolchain.sysroot.join("lib").join("rustlib");
        let sources = nested::parse_dep_info(&dep_text)
            .into_iter()
            .map(|p| if p.is_relative() { dir.join(p) } else { p })
            .filter(|p| !p.starts_with(&rustlib))
            .collect();

        let report_path = target_dir.join(format!("{crate_name}.ptxas.txt"));
        let (ptxas, report) = self.check_with_ptxas(&ptx_path, &report_path)?;
        Ok(BuiltPtx {
            ptx_path,
            ptx,
            arch: self.arch,
            toolchain,
            ptxas,
            report,
            report_path,
            sources,
            crate_name,
            kernel_crate_dir: dir,
            lockfile,
            cargo_log,
            placeholder: false,
        })
    }

    /// Runs ptxas on the PTX as the [`PtxasMode`] says and writes the report (or why there is
    /// none) to `report_path`.
    fn check_with_ptxas(
        &self,
        ptx_path: &Path,
        report_path: &Path,
    ) -> Result<(Option<Ptxas>, Option<PtxasReport>), BuildError> {
        let arch = &self.arch;
        let (ptxas, report, text) = match self.ptxas {
            PtxasMode::Skip => (None, None, "ptxas was not run (PtxasMode::Skip).\n".into()),
            PtxasMode::Auto | PtxasMode::Require => {
                let search = search_ptxas(arch);
                match search.found {
                    Some(p) => {
                        let report = match assemble(&p, ptx_path, arch) {
                            Ok(report) => report,
                            Err(e) => {
                                // Leave no stale report behind a failed check.
                                write_if_changed(report_path, &format!("{e}\n"))?;
                                return Err(e);
                            }
                        };
                        let text = format!("{report}\nchecked by {p}\n");
                        (Some(p), Some(report), text)
                    }
                    None if self.ptxas == PtxasMode::Require => {
                        return Err(BuildError::PtxasNotFound {
                            arch: arch.clone(),
                            tried: search.tried,
                        })
                    }
                    None => {
                        let tried: Vec<String> =
                            search.tried.iter().map(|t| format!("  - {t}")).collect();
                        let text = format!(
                            "ptxas was not run: none that supports {arch} was found.\ntried:\n{}\n",
                            tried.join("\n")
                        );
                        (None, None, text)
                    }
                }
            }
        };
        write_if_changed(report_path, &text)?;
        Ok((ptxas, report))
    }

    /// The docs.rs build: a placeholder PTX and report, and no toolchain or nested cargo at all.
    fn placeholder(self, dir: PathBuf, target_dir: &Path) -> Result<BuiltPtx, BuildError> {
        let crate_name = KernelPackage::read(&dir.join("Cargo.toml"))?
            .name
            .replace('-', "_");
        let ptx = ptx_text::placeholder(&crate_name);
        let ptx_path = target_dir.join(format!("{crate_name}.ptx"));
        write_if_changed(&ptx_path, &ptx)?;
        let report_path = target_dir.join(format!("{crate_name}.ptxas.txt"));
        write_if_changed(
            &report_path,
            "ptxas was not run: DOCS_RS is set, the kernels were not built.\n",
        )?;
        Ok(BuiltPtx {
            ptx_path,
            ptx,
            arch: self.arch,
            toolchain: KernelToolchain {
                rustc: PathBuf::new(),
                version: "none (DOCS_RS is set: the kernels were not built)".into(),
                sysroot: PathBuf::new(),
                source: ToolchainSource::NotBuilt,
            },
            ptxas: None,
            report: None,
            report_path,
            sources: Vec::new(),
            crate_name,
            kernel_crate_dir: dir,
            lockfile: None,
            cargo_log: String::new(),
            placeholder: true,
        })
    }
}

/// Runs a nested cargo command to completion.
fn output(cmd: &mut Command, cargo: &OsStr) -> Result<std::process::Output, BuildError> {
    cmd.output().map_err(|source| BuildError::Spawn {
        program: cargo.to_string_lossy().into_owned(),
        source,
    })
}

/// Every diagnostic as rustc rendered it, then cargo's stderr: the nested build's whole log.
fn log_text(messages: &[Diagnostic], stderr: &str) -> String {
    let mut log: String = messages.iter().map(|d| d.rendered.as_str()).collect();
    log.push_str(stderr);
    log
}

/// The error for a failed PTX build: the errors only the PTX build reports (found by a host
/// `cargo check` of the kernel crate), how many the host reports too, and the full log in a file.
fn cargo_failed(
    nested: &Nested,
    wrapper: &Path,
    package: &KernelPackage,
    cmd: &Command,
    messages: &[Diagnostic],
    cargo_log: String,
) -> BuildError {
    let command = format!(
        "RUSTC={} RUSTC_BOOTSTRAP=1 {} (in {})",
        nested.rustc.display(),
        display_command(cmd),
        nested.kernel_dir.display()
    );
    let host = if messages.iter().any(Diagnostic::is_error) {
        let mut check = nested.host_check_command(wrapper, package);
        check
            .output()
            .map(|o| parse_messages(&String::from_utf8_lossy(&o.stdout)))
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    let (only, also_on_host) = gpu_only(messages, &host);
    let log_path = nested
        .target_dir
        .join(format!("{}.build-log.txt", package.name.replace('-', "_")));
    // The log is a convenience: failing to write it must not hide the build's errors.
    let _ = std::fs::write(&log_path, format!("command: {command}\n\n{cargo_log}"));
    let verbose = std::env::var(BUILD_VERBOSE_ENV).is_ok_and(|v| !v.is_empty() && v != "0");
    BuildError::CargoFailed(Box::new(CargoFailure {
        package: package.name.clone(),
        gpu_only_errors: only
            .into_iter()
            .map(|d| render_with_hint(d, &nested.kernel_dir))
            .collect(),
        also_on_host,
        other_output: if messages.iter().any(Diagnostic::is_error) {
            String::new()
        } else {
            without_progress(&cargo_log)
        },
        log_path,
        command,
        stderr: cargo_log,
        verbose,
    }))
}

/// Cargo's output without its progress lines (`Compiling x`, `Locking 1 package`), which say
/// nothing about why the build failed.
fn without_progress(stderr: &str) -> String {
    const PROGRESS: &[&str] = &[
        "Compiling ",
        "Checking ",
        "Locking ",
        "Adding ",
        "Updating ",
        "Downloading ",
        "Downloaded ",
        "Blocking ",
        "Fresh ",
        "Finished ",
        "Removing ",
    ];
    stderr
        .lines()
        .filter(|l| !PROGRESS.iter().any(|p| l.trim_start().starts_with(p)))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `std::path::absolute`, with the path in the error.
fn absolute(path: &Path) -> Result<PathBuf, BuildError> {
    std::path::absolute(path).map_err(|e| BuildError::io(path, e))
}

/// The kernel crate's directory without `..` or symlinks, so the paths cargo reports (and those
/// printed for `rerun-if-changed`) are spelled the same way as ours. Windows keeps the plain
/// absolute path: canonical paths there are `\\?\` verbatim paths.
fn crate_dir(path: &Path) -> Result<PathBuf, BuildError> {
    let manifest = absolute(path)?.join("Cargo.toml");
    if !manifest.is_file() {
        return Err(BuildError::ManifestNotFound { path: manifest });
    }
    if cfg!(windows) {
        return absolute(path);
    }
    path.canonicalize().map_err(|e| BuildError::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_lines_are_dropped_from_cargo_errors() {
        let stderr = "    Locking 1 package\n   Compiling core v0.0.0\nerror: failed to select a version for `x`\n  required by y\n";
        assert_eq!(
            without_progress(stderr),
            "error: failed to select a version for `x`\n  required by y"
        );
    }
}
