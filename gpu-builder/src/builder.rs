//! The kernel build itself: a nested `cargo rustc` for `nvptx64-nvidia-cuda`, locating its PTX,
//! and checking the result.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::ptxas::{assemble, parse_arch, search_ptxas, Ptxas, PtxasReport};
use crate::toolchain::{find_kernel_toolchain, KernelToolchain};
use crate::{display_command, BuildError, ENV_VARS_READ};

/// rustc's target for NVIDIA GPUs: its assembly output is PTX.
pub const NVPTX_TARGET: &str = "nvptx64-nvidia-cuda";

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
}

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
    /// What the nested cargo printed to stderr: rustc's warnings about kernel code are here.
    pub cargo_log: String,
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
        }
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

    /// Builds the kernel crate to PTX, copies it to `<target_dir>/<crate_name>.ptx`, and checks
    /// it with ptxas according to the [`PtxasMode`].
    pub fn build(self) -> Result<BuiltPtx, BuildError> {
        let arch = self.arch;
        if parse_arch(&arch).is_none() {
            return Err(BuildError::InvalidArch { arch });
        }
        let dir = crate_dir(&self.kernel_crate_dir)?;
        let manifest = dir.join("Cargo.toml");
        let toolchain = find_kernel_toolchain()?;
        let target_dir = match self.target_dir {
            Some(t) => absolute(&t)?,
            None => match std::env::var_os("OUT_DIR").filter(|d| !d.is_empty()) {
                Some(out) => absolute(Path::new(&out))?.join("kernel-target"),
                None => dir.join("target").join("ferrocuda-ptx"),
            },
        };
        std::fs::create_dir_all(&target_dir).map_err(|e| BuildError::io(&target_dir, e))?;

        let cargo = std::env::var_os("CARGO")
            .filter(|c| !c.is_empty())
            .unwrap_or_else(|| "cargo".into());
        let mut cmd = cargo_command(
            &cargo,
            &manifest,
            &target_dir,
            &arch,
            &toolchain.rustc,
            std::env::vars_os(),
        );
        let out = cmd.output().map_err(|source| BuildError::Spawn {
            program: cargo.to_string_lossy().into_owned(),
            source,
        })?;
        let cargo_log = String::from_utf8_lossy(&out.stderr).into_owned();
        if !out.status.success() {
            return Err(BuildError::CargoFailed {
                command: format!(
                    "RUSTC={} RUSTC_BOOTSTRAP=1 {} (in {})",
                    toolchain.rustc.display(),
                    display_command(&cmd),
                    dir.display()
                ),
                stderr: cargo_log,
            });
        }

        let staticlib = find_artifact(&String::from_utf8_lossy(&out.stdout), &manifest)?;
        let crate_name = staticlib
            .file_stem()
            .and_then(OsStr::to_str)
            .map(|s| s.strip_prefix("lib").unwrap_or(s).to_string())
            .ok_or_else(|| BuildError::PtxNotFound {
                reason: format!("unexpected artifact name {}", staticlib.display()),
            })?;
        let asm = find_asm(&staticlib, &crate_name, &arch)?;
        let ptx = std::fs::read_to_string(&asm).map_err(|e| BuildError::io(&asm, e))?;
        check_ptx(&ptx, &arch).map_err(|reason| BuildError::InvalidPtx {
            path: asm.clone(),
            reason,
        })?;
        let ptx_path = target_dir.join(format!("{crate_name}.ptx"));
        write_if_changed(&ptx_path, &ptx)?;

        let dep_info = staticlib.with_extension("d");
        let dep_text =
            std::fs::read_to_string(&dep_info).map_err(|e| BuildError::io(&dep_info, e))?;
        let rustlib = toolchain.sysroot.join("lib").join("rustlib");
        let sources = parse_dep_info(&dep_text)
            .into_iter()
            .map(|p| if p.is_relative() { dir.join(p) } else { p })
            .filter(|p| !p.starts_with(&rustlib))
            .collect();

        let report_path = target_dir.join(format!("{crate_name}.ptxas.txt"));
        let (ptxas, report, report_text) = match self.ptxas {
            PtxasMode::Skip => (
                None,
                None,
                "ptxas was not run (PtxasMode::Skip).\n".to_string(),
            ),
            PtxasMode::Auto | PtxasMode::Require => {
                let search = search_ptxas(&arch);
                match search.found {
                    Some(p) => {
                        let report = match assemble(&p, &ptx_path, &arch) {
                            Ok(report) => report,
                            Err(e) => {
                                // Leave no stale report behind a failed check.
                                write_if_changed(&report_path, &format!("{e}\n"))?;
                                return Err(e);
                            }
                        };
                        let text = format!("{report}\nchecked by {p}\n");
                        (Some(p), Some(report), text)
                    }
                    None if self.ptxas == PtxasMode::Require => {
                        return Err(BuildError::PtxasNotFound {
                            arch,
                            tried: search.tried,
                        })
                    }
                    None => {
                        let text = format!(
                            "ptxas was not run: none that supports {arch} was found.\ntried:\n{}\n",
                            search
                                .tried
                                .iter()
                                .map(|t| format!("  - {t}"))
                                .collect::<Vec<_>>()
                                .join("\n")
                        );
                        (None, None, text)
                    }
                }
            }
        };
        write_if_changed(&report_path, &report_text)?;

        Ok(BuiltPtx {
            ptx_path,
            ptx,
            arch,
            toolchain,
            ptxas,
            report,
            report_path,
            sources,
            crate_name,
            kernel_crate_dir: dir,
            cargo_log,
        })
    }
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
    /// files), the `Cargo.toml` of each crate a source belongs to, and every environment variable
    /// the builder reads.
    pub fn rerun_if_changed_lines(&self) -> Vec<String> {
        let dir = &self.kernel_crate_dir;
        let mut paths: Vec<PathBuf> = vec![dir.join("Cargo.toml")];
        for extra in [dir.join("Cargo.lock"), dir.join("src")] {
            if extra.exists() {
                paths.push(extra);
            }
        }
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
        entry_names(&self.ptx)
    }
}

/// Variables cargo sets for a build script (or a user sets for the outer build) that must not
/// reach the nested cargo: they describe the host build (flags, target, wrappers, jobserver) and
/// would break or silently change the NVPTX build.
///
/// `RUSTUP_TOOLCHAIN` is kept: the nested cargo is the real cargo binary (`CARGO`), the kernel
/// rustc is an absolute path, so it only matters if a rustup proxy is run, and then the nested
/// build should resolve the same toolchain the search did.
pub const SCRUBBED_ENV: &[&str] = &[
    "CARGO_ENCODED_RUSTFLAGS",
    "RUSTFLAGS",
    "CARGO_BUILD_RUSTFLAGS",
    "CARGO_BUILD_TARGET",
    "CARGO_TARGET_DIR",
    "CARGO_BUILD_TARGET_DIR",
    "CARGO_BUILD_RUSTC",
    "RUSTC_WRAPPER",
    "RUSTC_WORKSPACE_WRAPPER",
    "CARGO_BUILD_RUSTC_WRAPPER",
    "CARGO_BUILD_RUSTC_WORKSPACE_WRAPPER",
    "RUSTC_LINKER",
    "CARGO_MAKEFLAGS",
    "CARGO_PRIMARY_PACKAGE",
    "TARGET",
    "HOST",
    "OUT_DIR",
    "PROFILE",
    "OPT_LEVEL",
    "DEBUG",
    "NUM_JOBS",
];

/// Prefixes of further variables scrubbed the same way (target cfgs and features of the host
/// build would leak into nested build scripts such as `compiler_builtins`').
pub const SCRUBBED_ENV_PREFIXES: &[&str] = &["CARGO_CFG_", "CARGO_FEATURE_"];

/// Which of `vars` (the current environment, in practice) the nested cargo must not see.
pub(crate) fn env_to_remove(vars: impl IntoIterator<Item = (OsString, OsString)>) -> Vec<OsString> {
    let mut remove: Vec<OsString> = SCRUBBED_ENV.iter().map(OsString::from).collect();
    for (key, _) in vars {
        let prefixed = key
            .to_str()
            .is_some_and(|k| SCRUBBED_ENV_PREFIXES.iter().any(|p| k.starts_with(p)));
        if prefixed && !remove.contains(&key) {
            remove.push(key);
        }
    }
    remove
}

/// The nested build: `cargo rustc` of the kernel crate as an LTO'd staticlib, emitting assembly
/// (PTX). A staticlib with fat LTO needs no linker (a cdylib would ask for llvm-bitcode-linker),
/// and `--emit=asm` of the LTO'd module is the whole program as one PTX file. The profile is
/// forced with `--config` so the kernel crate's workspace profile cannot turn LTO off.
pub(crate) fn cargo_command(
    cargo: &OsStr,
    manifest: &Path,
    target_dir: &Path,
    arch: &str,
    rustc: &Path,
    env: impl IntoIterator<Item = (OsString, OsString)>,
) -> Command {
    let mut cmd = Command::new(cargo);
    // Cargo reads `.cargo/config.toml` from the working directory upwards: run in the kernel
    // crate so its config (e.g. `[target.nvptx64-nvidia-cuda] rustflags`) applies.
    if let Some(dir) = manifest.parent() {
        cmd.current_dir(dir);
    }
    cmd.arg("rustc")
        .arg("--manifest-path")
        .arg(manifest)
        .args(["--release", "--target", NVPTX_TARGET, "-Zbuild-std=core"])
        .args(["--crate-type", "staticlib"])
        .arg("--target-dir")
        .arg(target_dir)
        // JSON on stdout names the artifact; diagnostics stay human-readable on stderr.
        .arg("--message-format=json-render-diagnostics");
    for config in [
        "profile.release.lto=true",
        "profile.release.panic=\"abort\"",
        "profile.release.codegen-units=1",
        "profile.release.opt-level=3",
        "profile.release.debug=false",
        "profile.release.overflow-checks=false",
        "profile.release.debug-assertions=false",
    ] {
        cmd.arg("--config").arg(config);
    }
    cmd.args(["--", "--emit=asm", "-C"])
        .arg(format!("target-cpu={arch}"));
    for key in env_to_remove(env) {
        cmd.env_remove(key);
    }
    cmd.env("RUSTC", rustc).env("RUSTC_BOOTSTRAP", "1");
    cmd
}

/// The staticlib cargo reports for the kernel crate (`compiler-artifact` message), e.g.
/// `<target_dir>/nvptx64-nvidia-cuda/release/libtiny_kernels.a`.
fn find_artifact(json_lines: &str, manifest: &Path) -> Result<PathBuf, BuildError> {
    let manifest = manifest.to_string_lossy();
    let mut last = None;
    for line in json_lines.lines() {
        if !line.contains("\"reason\":\"compiler-artifact\"") {
            continue;
        }
        let Some(file) = json_string_field(line, "filenames") else {
            continue;
        };
        let ours = json_string_field(line, "manifest_path").is_some_and(|m| m == manifest);
        if ours {
            return Ok(file.into());
        }
        last = Some(file);
    }
    // The root unit is built last, so its message is the last one.
    last.map(PathBuf::from)
        .ok_or_else(|| BuildError::PtxNotFound {
            reason: "cargo reported no compiler-artifact for the kernel crate".into(),
        })
}

/// The `deps/<crate>-<hash>.s` that belongs to the uplifted `staticlib`.
///
/// Several hashes can coexist (one per arch, rustc, dependency set), and a fresh build does not
/// rewrite its file, so "the newest `.s`" can be the wrong one. Cargo uplifts the current unit's
/// `deps/lib<crate>-<hash>.a` to `lib<crate>.a` by hard link (or copy), so the matching archive
/// gives the hash.
fn find_asm(staticlib: &Path, crate_name: &str, arch: &str) -> Result<PathBuf, BuildError> {
    let deps = staticlib.with_file_name("deps");
    let entries: Vec<PathBuf> = std::fs::read_dir(&deps)
        .map_err(|e| BuildError::io(&deps, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    let lib_prefix = format!("lib{crate_name}-");
    for archive in &entries {
        let Some(hash) = archive
            .file_name()
            .and_then(OsStr::to_str)
            .and_then(|n| n.strip_prefix(&lib_prefix))
            .and_then(|n| n.strip_suffix(".a"))
        else {
            continue;
        };
        let asm = deps.join(format!("{crate_name}-{hash}.s"));
        if asm.is_file() && same_file(archive, staticlib) {
            return Ok(asm);
        }
    }
    // Fallback: the newest `.s` of this crate that targets `arch`.
    let asm_prefix = format!("{crate_name}-");
    entries
        .iter()
        .filter(|p| {
            p.extension() == Some(OsStr::new("s"))
                && p.file_name()
                    .and_then(OsStr::to_str)
                    .is_some_and(|n| n.starts_with(&asm_prefix))
                && std::fs::read_to_string(p).is_ok_and(|t| ptx_target(&t) == Some(arch))
        })
        .max_by_key(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok())
        .cloned()
        .ok_or_else(|| BuildError::PtxNotFound {
            reason: format!(
                "no {asm_prefix}<hash>.s for {arch} in {} (was `--emit=asm` passed to rustc?)",
                deps.display()
            ),
        })
}

/// Whether two paths are the same file: the same inode on Unix, else the same bytes.
fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(x), Ok(y)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            if x.dev() == y.dev() && x.ino() == y.ino() {
                return true;
            }
        }
    }
    match (std::fs::read(a), std::fs::read(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// The first architecture of the `.target` directive (`.target sm_70, debug` -> `sm_70`).
fn ptx_target(ptx: &str) -> Option<&str> {
    ptx.lines()
        .map(str::trim_start)
        .find_map(|l| l.strip_prefix(".target"))
        .and_then(|rest| rest.split(',').next())
        .map(str::trim)
}

/// The kernel names of `.entry` directives, in file order.
pub(crate) fn entry_names(ptx: &str) -> Vec<&str> {
    ptx.lines()
        .filter_map(|l| {
            let rest = &l[l.find(".entry")? + ".entry".len()..];
            if !rest.starts_with(char::is_whitespace) {
                return None;
            }
            let rest = rest.trim_start();
            let end = rest
                .find(|c: char| c == '(' || c.is_whitespace())
                .unwrap_or(rest.len());
            (end > 0).then(|| &rest[..end])
        })
        .collect()
}

/// Checks that the PTX is for `arch` and has at least one kernel.
pub(crate) fn check_ptx(ptx: &str, arch: &str) -> Result<(), String> {
    match ptx_target(ptx) {
        None => return Err("it has no `.target` directive".into()),
        Some(t) if t != arch => {
            return Err(format!(
                "it targets {t}, not {arch} (`-C target-cpu={arch}` did not take effect)"
            ))
        }
        Some(_) => {}
    }
    if entry_names(ptx).is_empty() {
        return Err("it has no kernels (`.entry`). A kernel is a \
             `#[unsafe(no_mangle)] pub unsafe extern \"ptx-kernel\" fn` in the kernel crate; with \
             LTO anything not exported that way is removed."
            .into());
    }
    Ok(())
}

/// The prerequisites of the first rule of a Makefile-style dep-info file, as cargo writes it
/// (`target: dep dep ...`, spaces in paths escaped as `\ `, long lines continued with `\`).
pub(crate) fn parse_dep_info(text: &str) -> Vec<PathBuf> {
    let joined = text.replace("\\\r\n", " ").replace("\\\n", " ");
    let Some(rule) = joined
        .lines()
        .find(|l| l.contains(": ") || l.trim_end().ends_with(':'))
    else {
        return Vec::new();
    };
    // `: ` (not `:`) so that Windows drive letters (`C:\`) do not split the target.
    let deps = match rule.find(": ") {
        Some(i) => &rule[i + 2..],
        None => "",
    };
    let mut paths = Vec::new();
    let mut current = String::new();
    let mut chars = deps.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&' ') => {
                current.push(' ');
                chars.next();
            }
            c if c.is_whitespace() => {
                if !current.is_empty() {
                    paths.push(PathBuf::from(std::mem::take(&mut current)));
                }
            }
            c => current.push(c),
        }
    }
    if !current.is_empty() {
        paths.push(PathBuf::from(current));
    }
    paths
}

/// The first string of `"key":"..."` or `"key":["...", ...]` in one line of cargo's JSON output.
fn json_string_field(line: &str, key: &str) -> Option<String> {
    let pattern = format!("\"{key}\":");
    let rest = line[line.find(&pattern)? + pattern.len()..].trim_start();
    let rest = rest.strip_prefix('[').map_or(rest, str::trim_start);
    parse_json_string(rest)
}

/// Decodes the JSON string literal at the start of `s`.
fn parse_json_string(s: &str) -> Option<String> {
    let mut chars = s.strip_prefix('"')?.chars();
    let mut out = String::new();
    let hex4 = |chars: &mut std::str::Chars<'_>| -> Option<u32> {
        let h: String = chars.by_ref().take(4).collect();
        u32::from_str_radix(&h, 16).ok()
    };
    loop {
        match chars.next()? {
            '"' => return Some(out),
            '\\' => out.push(match chars.next()? {
                'n' => '\n',
                't' => '\t',
                'r' => '\r',
                'b' => '\u{8}',
                'f' => '\u{c}',
                'u' => {
                    let hi = hex4(&mut chars)?;
                    let code = if (0xD800..0xDC00).contains(&hi) {
                        let rest = chars.as_str();
                        chars = rest.strip_prefix("\\u")?.chars();
                        let lo = hex4(&mut chars)?;
                        0x10000 + ((hi - 0xD800) << 10) + (lo.checked_sub(0xDC00)?)
                    } else {
                        hi
                    };
                    char::from_u32(code)?
                }
                other => other,
            }),
            c => out.push(c),
        }
    }
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

/// Writes `contents` unless the file already holds exactly that, so an unchanged PTX keeps its
/// mtime and does not make cargo rebuild whatever `include_str!`s it.
fn write_if_changed(path: &Path, contents: &str) -> Result<(), BuildError> {
    if std::fs::read(path).is_ok_and(|old| old == contents.as_bytes()) {
        return Ok(());
    }
    std::fs::write(path, contents).map_err(|e| BuildError::io(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs.iter().map(|(k, v)| (k.into(), v.into())).collect()
    }

    #[test]
    fn scrubs_host_build_env_and_keeps_the_rest() {
        let env = os(&[
            ("CARGO_CFG_TARGET_FEATURE", "fxsr,sse,sse2"),
            ("CARGO_CFG_TARGET_ARCH", "x86_64"),
            ("CARGO_FEATURE_STD", "1"),
            ("CARGO_ENCODED_RUSTFLAGS", "-Ctarget-cpu=native"),
            ("CARGO_MAKEFLAGS", "-j --jobserver-fds=8,9"),
            ("PATH", "/usr/bin"),
            ("HOME", "/root"),
            ("CARGO_HOME", "/root/.cargo"),
            ("RUSTUP_TOOLCHAIN", "stable"),
            (
                "CARGO_TARGET_NVPTX64_NVIDIA_CUDA_RUSTFLAGS",
                "-Cdebuginfo=0",
            ),
        ]);
        let removed = env_to_remove(env.clone());
        for k in [
            "CARGO_CFG_TARGET_FEATURE",
            "CARGO_CFG_TARGET_ARCH",
            "CARGO_FEATURE_STD",
            "CARGO_ENCODED_RUSTFLAGS",
            "RUSTFLAGS",
            "CARGO_MAKEFLAGS",
            "CARGO_TARGET_DIR",
            "RUSTC_WRAPPER",
            "RUSTC_WORKSPACE_WRAPPER",
            "TARGET",
            "HOST",
            "OUT_DIR",
            "PROFILE",
            "OPT_LEVEL",
            "DEBUG",
            "NUM_JOBS",
            "CARGO_PRIMARY_PACKAGE",
        ] {
            assert!(removed.iter().any(|r| r == k), "{k} not scrubbed");
        }
        for k in [
            "PATH",
            "HOME",
            "CARGO_HOME",
            "RUSTUP_TOOLCHAIN",
            "CARGO_TARGET_NVPTX64_NVIDIA_CUDA_RUSTFLAGS",
        ] {
            assert!(!removed.iter().any(|r| r == k), "{k} scrubbed");
        }

        let cmd = cargo_command(
            OsStr::new("cargo"),
            Path::new("/k/Cargo.toml"),
            Path::new("/t"),
            "sm_80",
            Path::new("/usr/bin/rustc"),
            env,
        );
        let envs: Vec<(&OsStr, Option<&OsStr>)> = cmd.get_envs().collect();
        let get = |k: &str| envs.iter().find(|(key, _)| *key == k).map(|(_, v)| *v);
        assert_eq!(get("RUSTC"), Some(Some(OsStr::new("/usr/bin/rustc"))));
        assert_eq!(get("RUSTC_BOOTSTRAP"), Some(Some(OsStr::new("1"))));
        assert_eq!(get("CARGO_CFG_TARGET_ARCH"), Some(None));
        assert_eq!(get("CARGO_ENCODED_RUSTFLAGS"), Some(None));
        assert_eq!(get("PATH"), None);
        assert_eq!(cmd.get_current_dir(), Some(Path::new("/k")));

        let args: Vec<String> = cmd
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let line = args.join(" ");
        assert!(line.starts_with("rustc --manifest-path /k/Cargo.toml --release --target nvptx64-nvidia-cuda -Zbuild-std=core --crate-type staticlib --target-dir /t"), "{line}");
        assert!(line.contains("--config profile.release.lto=true"), "{line}");
        assert!(
            line.contains("--config profile.release.panic=\"abort\""),
            "{line}"
        );
        assert!(
            line.ends_with("-- --emit=asm -C target-cpu=sm_80"),
            "{line}"
        );
    }

    #[test]
    fn checks_target_and_entries() {
        let ptx = ".version 6.0\n.target sm_70\n.address_size 64\n\n\t// .globl\tadd_one\n\n\
                   .visible .entry add_one(\n\t.param .u64 p\n)\n{\n\tret;\n}\n\
                   .entry second (\n)\n{\n\tret;\n}\n.func notakernel()\n{\n\tret;\n}\n";
        assert_eq!(entry_names(ptx), vec!["add_one", "second"]);
        assert_eq!(check_ptx(ptx, "sm_70"), Ok(()));
        assert!(check_ptx(ptx, "sm_90")
            .unwrap_err()
            .contains("targets sm_70, not sm_90"));
        assert!(check_ptx(".version 6.0\n.target sm_70\n", "sm_70")
            .unwrap_err()
            .contains("no kernels"));
        assert!(check_ptx(".version 6.0\n", "sm_70")
            .unwrap_err()
            .contains(".target"));
        assert_eq!(
            ptx_target(".version 7.8\n.target sm_90a, debug\n"),
            Some("sm_90a")
        );
    }

    #[test]
    fn parses_cargo_dep_info() {
        let text = "/t/nvptx64-nvidia-cuda/release/libk.a: /k/src/lib.rs /k/src/my\\ dir/a.rs \\\n  /usr/lib/rustlib/src/rust/library/core/src/lib.rs\n\n/k/src/lib.rs:\n";
        assert_eq!(
            parse_dep_info(text),
            vec![
                PathBuf::from("/k/src/lib.rs"),
                PathBuf::from("/k/src/my dir/a.rs"),
                PathBuf::from("/usr/lib/rustlib/src/rust/library/core/src/lib.rs"),
            ]
        );
        assert_eq!(
            parse_dep_info("C:\\t\\libk.a: C:\\k\\src\\lib.rs\n"),
            vec![PathBuf::from("C:\\k\\src\\lib.rs")]
        );
        assert!(parse_dep_info("/t/libk.a:\n").is_empty());
        assert!(parse_dep_info("").is_empty());
    }

    #[test]
    fn reads_cargo_artifact_messages() {
        let stdout = concat!(
            r#"{"reason":"compiler-artifact","package_id":"path+file:///usr/lib/rustlib/src/rust/library/core#0.0.0","manifest_path":"/usr/lib/rustlib/src/rust/library/core/Cargo.toml","filenames":["/t/nvptx64-nvidia-cuda/release/deps/libcore-1.rlib","/t/x.rmeta"],"fresh":true}"#,
            "\n",
            r#"{"reason":"compiler-artifact","package_id":"path+file:///k#tiny-kernels@0.1.0","manifest_path":"/k/Cargo.toml","target":{"kind":["staticlib"],"name":"tiny_kernels"},"filenames":["/t/nvptx64-nvidia-cuda/release/libtiny_kernels.a"],"executable":null,"fresh":false}"#,
            "\n",
            r#"{"reason":"build-finished","success":true}"#,
            "\n"
        );
        assert_eq!(
            find_artifact(stdout, Path::new("/k/Cargo.toml")).unwrap(),
            PathBuf::from("/t/nvptx64-nvidia-cuda/release/libtiny_kernels.a")
        );
        // A manifest path spelled differently (symlink, `..`) falls back to the last artifact.
        assert_eq!(
            find_artifact(stdout, Path::new("/elsewhere/Cargo.toml")).unwrap(),
            PathBuf::from("/t/nvptx64-nvidia-cuda/release/libtiny_kernels.a")
        );
        assert!(find_artifact("", Path::new("/k/Cargo.toml")).is_err());
        assert_eq!(
            parse_json_string(r#""C:\\a \"b\" \u00e9\ud83d\ude00/""#).as_deref(),
            Some("C:\\a \"b\" \u{e9}\u{1F600}/")
        );
    }

    #[test]
    fn finds_the_asm_of_the_uplifted_archive_not_the_newest() {
        let root =
            std::env::temp_dir().join(format!("gpu-builder-find-asm-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let deps = root.join("deps");
        std::fs::create_dir_all(&deps).unwrap();
        std::fs::write(deps.join("libk-aaaa.a"), "archive for sm_70").unwrap();
        std::fs::write(deps.join("k-aaaa.s"), ".target sm_70\n").unwrap();
        std::fs::write(deps.join("libk-bbbb.a"), "archive for sm_90").unwrap();
        std::fs::write(deps.join("k-bbbb.s"), ".target sm_90\n").unwrap();
        // Cargo uplifted the sm_70 unit (a fresh build, so older than the sm_90 files).
        let uplifted = root.join("libk.a");
        std::fs::copy(deps.join("libk-aaaa.a"), &uplifted).unwrap();
        assert_eq!(
            find_asm(&uplifted, "k", "sm_70").unwrap(),
            deps.join("k-aaaa.s")
        );

        // No archive matches: the newest .s for the arch.
        std::fs::write(&uplifted, "something else").unwrap();
        assert_eq!(
            find_asm(&uplifted, "k", "sm_90").unwrap(),
            deps.join("k-bbbb.s")
        );
        assert!(find_asm(&uplifted, "k", "sm_80").is_err());
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn rerun_lines_cover_sources_manifests_and_env() {
        let built = BuiltPtx {
            ptx_path: "/t/k.ptx".into(),
            ptx: String::new(),
            arch: "sm_70".into(),
            toolchain: KernelToolchain {
                rustc: "/usr/bin/rustc".into(),
                version: "rustc 1.96.0".into(),
                sysroot: "/usr".into(),
                source: crate::ToolchainSource::DebianRustcWeb,
            },
            ptxas: None,
            report: None,
            report_path: "/t/k.ptxas.txt".into(),
            sources: vec![
                concat!(env!("CARGO_MANIFEST_DIR"), "/src/lib.rs").into(),
                concat!(env!("CARGO_MANIFEST_DIR"), "/src/builder.rs").into(),
            ],
            crate_name: "k".into(),
            kernel_crate_dir: env!("CARGO_MANIFEST_DIR").into(),
            cargo_log: String::new(),
        };
        let lines = built.rerun_if_changed_lines();
        let dir = env!("CARGO_MANIFEST_DIR");
        let manifest = format!("cargo:rerun-if-changed={dir}/Cargo.toml");
        assert_eq!(lines[0], manifest);
        assert_eq!(lines.iter().filter(|l| **l == manifest).count(), 1);
        assert!(lines.contains(&format!("cargo:rerun-if-changed={dir}/src")));
        assert!(lines.contains(&format!("cargo:rerun-if-changed={dir}/src/builder.rs")));
        for v in ["FERROCUDA_KERNEL_RUSTC", "FERROCUDA_PTXAS", "RUSTC", "PATH"] {
            assert!(
                lines.contains(&format!("cargo:rerun-if-env-changed={v}")),
                "{v}"
            );
        }
    }
}
