//! The nested cargo: the wrapper workspace it builds in, its three command lines (metadata, the
//! PTX build, the host check that runs only when the PTX build failed), the environment it must
//! not inherit, and reading what it reports.
//!
//! Why a wrapper workspace: the kernel crate may sit in a directory that is not ours to write
//! (cargo's registry cache, a `cargo package` directory). A `cargo rustc --manifest-path` on it
//! would write a `Cargo.lock` there whenever it is not part of a workspace. The wrapper, in the
//! nested target directory, depends on the kernel crate by path and is its own workspace, so its
//! lockfile and everything else cargo writes stays in the target directory. `cargo rustc -p
//! <kernel crate>` then compiles the kernel crate itself as the staticlib.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::error::BuildError;
use crate::names::NVPTX_TARGET;
use crate::process::write_if_changed;

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
/// build would leak into nested build scripts such as `compiler_builtins`'; `DEP_` metadata of
/// the outer build's `links` crates would be seen by the nested build scripts).
pub const SCRUBBED_ENV_PREFIXES: &[&str] = &["CARGO_CFG_", "CARGO_FEATURE_", "DEP_"];

/// The `[profile.release]` the PTX build needs, forced with `--config` so that no workspace
/// profile can turn LTO off: fat LTO merges the whole program into one module, `panic = abort`
/// because a kernel cannot unwind.
const PTX_PROFILE: &[&str] = &[
    "profile.release.lto=true",
    "profile.release.panic=\"abort\"",
    "profile.release.codegen-units=1",
    "profile.release.opt-level=3",
    "profile.release.debug=false",
    "profile.release.overflow-checks=false",
    "profile.release.debug-assertions=false",
];

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

/// The kernel crate's package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KernelPackage {
    /// The package name (`my-kernels`), from its manifest. `-p` selects it in the wrapper.
    pub name: String,
}

impl KernelPackage {
    /// Reads the package name from the kernel crate's manifest. Not with `cargo metadata`: on a
    /// crate unpacked below some workspace (a `cargo package` directory) that refuses to run.
    pub fn read(manifest: &Path) -> Result<Self, BuildError> {
        let text = std::fs::read_to_string(manifest).map_err(|e| BuildError::io(manifest, e))?;
        let name = package_name(&text).ok_or_else(|| BuildError::NoPackageName {
            manifest: manifest.to_path_buf(),
        })?;
        Ok(KernelPackage { name })
    }
}

/// The `name` of the `[package]` table of a Cargo.toml's text, read without a TOML parser
/// (package names are plain strings and cannot be inherited from a workspace).
pub(crate) fn package_name(manifest: &str) -> Option<String> {
    let mut in_package = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_package = line.split('#').next().map(str::trim) == Some("[package]");
            continue;
        }
        let key_value = if in_package {
            line.strip_prefix("name")
        } else {
            line.strip_prefix("package.name")
        };
        let Some(value) = key_value.and_then(|r| r.trim_start().strip_prefix('=')) else {
            continue;
        };
        let value = value.trim_start();
        let quote = value.chars().next().filter(|q| *q == '"' || *q == '\'')?;
        let rest = &value[1..];
        return rest.find(quote).map(|end| rest[..end].to_string());
    }
    None
}

/// How every nested cargo runs: which cargo and rustc, in which directory, into which target
/// directory, with which environment removed.
#[derive(Debug, Clone)]
pub(crate) struct Nested {
    pub cargo: OsString,
    pub rustc: PathBuf,
    /// The kernel crate's directory: the working directory, so that cargo reads the kernel
    /// crate's `.cargo/config.toml` (e.g. `[target.nvptx64-nvidia-cuda] rustflags`).
    pub kernel_dir: PathBuf,
    pub target_dir: PathBuf,
    pub env_remove: Vec<OsString>,
    /// What the kernel crate is built with: its features and extra cfgs.
    pub selection: Selection,
}

/// The kernel crate's cargo features and rustc cfgs for the PTX build ([`crate::PtxBuilder`]'s
/// `features`, `no_default_features` and `cfg`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Selection {
    pub features: Vec<String>,
    pub no_default_features: bool,
    /// `name` or `name="value"`, as rustc's `--cfg` takes them.
    pub cfgs: Vec<String>,
}

impl Selection {
    /// The wrapper's dependency on the kernel crate (`package`, in `dir`), with the features: a
    /// package outside the workspace takes no `--features`, a dependency entry does.
    fn dependency(&self, package: &str, dir: String) -> toml::Table {
        let mut entry = toml::Table::new();
        entry.insert("package".into(), package.into());
        entry.insert("path".into(), dir.into());
        if !self.features.is_empty() {
            let features = self.features.iter().cloned().map(toml::Value::from);
            entry.insert("features".into(), features.collect::<Vec<_>>().into());
        }
        if self.no_default_features {
            entry.insert("default-features".into(), false.into());
        }
        entry
    }

    /// rustc's arguments for the cfgs: each `--cfg` with its `--check-cfg`, so that rustc's
    /// unexpected-cfg lint knows it.
    fn rustc_args(&self) -> Vec<String> {
        let mut args = Vec::new();
        for cfg in &self.cfgs {
            let check = match cfg.split_once('=') {
                Some((name, value)) => format!("cfg({name}, values({value}))"),
                None => format!("cfg({cfg})"),
            };
            args.extend([
                "--cfg".to_string(),
                cfg.clone(),
                "--check-cfg".to_string(),
                check,
            ]);
        }
        args
    }
}

impl Nested {
    /// `cargo <subcommand>` with the working directory, the environment and the kernel rustc.
    /// `RUSTC_BOOTSTRAP=1` allows `-Zbuild-std` and the kernels' nightly features on a stable
    /// toolchain.
    fn command(&self, subcommand: &str) -> Command {
        let mut cmd = Command::new(&self.cargo);
        cmd.current_dir(&self.kernel_dir).arg(subcommand);
        for key in &self.env_remove {
            cmd.env_remove(key);
        }
        cmd.env("RUSTC", &self.rustc).env("RUSTC_BOOTSTRAP", "1");
        cmd
    }

    /// The PTX build: `cargo rustc -p <kernel crate>` in the wrapper workspace as an LTO'd
    /// staticlib, emitting assembly (PTX). A staticlib with fat LTO needs no linker (a cdylib
    /// would ask for llvm-bitcode-linker), and `--emit=asm` of the LTO'd module is the whole
    /// program as one PTX file. Diagnostics come as JSON on stdout, to be sorted (see
    /// `diagnostics`), not printed twice.
    pub fn ptx_command(&self, wrapper: &Path, package: &KernelPackage, arch: &str) -> Command {
        let mut cmd = self.command("rustc");
        cmd.arg("--manifest-path")
            .arg(wrapper)
            .args(["-p", &package.name])
            .args(["--release", "--target", NVPTX_TARGET, "-Zbuild-std=core"])
            .args(["--crate-type", "staticlib"])
            .arg("--target-dir")
            .arg(&self.target_dir)
            .arg("--message-format=json");
        for config in PTX_PROFILE {
            cmd.arg("--config").arg(config);
        }
        cmd.args(["--", "--emit=asm", "-C"])
            .arg(format!("target-cpu={arch}"))
            .args(self.selection.rustc_args());
        cmd
    }

    /// `cargo check` of the kernel crate for the host (with the PTX build's features, not its
    /// cfgs), in the same wrapper and target directory: the errors it reports are the ones
    /// cargo's host build of the kernel crate prints anyway.
    pub fn host_check_command(&self, wrapper: &Path, package: &KernelPackage) -> Command {
        let mut cmd = self.command("check");
        cmd.arg("--manifest-path")
            .arg(wrapper)
            .args(["-p", &package.name])
            .arg("--target-dir")
            .arg(&self.target_dir)
            .arg("--message-format=json");
        cmd
    }
}

/// Writes the wrapper workspace for `package` (in `kernel_dir`) under `<target_dir>/wrappers/`
/// and returns its manifest. `lockfile` (the outer build's) is copied in so the nested build starts
/// from the same dependency versions, and the `[patch]` tables of the workspace manifest beside it
/// are carried over (a workspace that patches `ferrocuda-std` to a local copy must get that copy
/// in the PTX build too); `patches` are further `[patch.crates-io]` entries, which win.
pub(crate) fn write_wrapper(
    target_dir: &Path,
    kernel_dir: &Path,
    package: &KernelPackage,
    patches: &[(String, PathBuf)],
    lockfile: Option<&Path>,
    selection: &Selection,
) -> Result<PathBuf, BuildError> {
    let dir = target_dir.join("wrappers").join(&package.name);
    std::fs::create_dir_all(&dir).map_err(|e| BuildError::io(&dir, e))?;
    let mut patch = match lockfile {
        Some(lock) => outer_patches(&lock.with_file_name("Cargo.toml"))?,
        None => toml::Table::new(),
    };
    if !patches.is_empty() {
        let crates_io = patch
            .entry("crates-io")
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        if let toml::Value::Table(crates_io) = crates_io {
            for (name, path) in patches {
                let mut entry = toml::Table::new();
                entry.insert("path".into(), toml_path(path)?.into());
                crates_io.insert(name.clone(), entry.into());
            }
        }
    }
    let manifest = dir.join("Cargo.toml");
    let manifest_text = wrapper_manifest(kernel_dir, package, patch, selection)?;
    write_if_changed(&manifest, &manifest_text)?;
    write_if_changed(&dir.join("lib.rs"), "#![no_std]\n")?;
    if let Some(lock) = lockfile {
        let text = std::fs::read_to_string(lock).map_err(|e| BuildError::io(lock, e))?;
        write_if_changed(&dir.join("Cargo.lock"), &text)?;
    }
    Ok(manifest)
}

/// The `[patch]` tables of the workspace manifest `manifest`, with every relative `path` made
/// absolute (relative paths in a manifest are relative to its directory, not the wrapper's). No
/// manifest there, or none with `[patch]`, gives an empty table.
pub(crate) fn outer_patches(manifest: &Path) -> Result<toml::Table, BuildError> {
    let Ok(text) = std::fs::read_to_string(manifest) else {
        return Ok(toml::Table::new());
    };
    let parsed: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        BuildError::io(
            manifest,
            std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()),
        )
    })?;
    let Some(toml::Value::Table(mut patch)) = parsed.get("patch").cloned() else {
        return Ok(toml::Table::new());
    };
    let base = manifest.parent().unwrap_or(Path::new("."));
    for (_, source) in patch.iter_mut() {
        let toml::Value::Table(entries) = source else {
            continue;
        };
        for (_, entry) in entries.iter_mut() {
            let toml::Value::Table(entry) = entry else {
                continue;
            };
            if let Some(toml::Value::String(path)) = entry.get("path") {
                let absolute = base.join(path);
                entry.insert("path".into(), toml_path(&absolute)?.into());
            }
        }
    }
    Ok(patch)
}

/// The text of the wrapper's Cargo.toml.
fn wrapper_manifest(
    kernel_dir: &Path,
    package: &KernelPackage,
    patch: toml::Table,
    selection: &Selection,
) -> Result<String, BuildError> {
    let dependency = selection.dependency(&package.name, toml_path(kernel_dir)?);
    let mut text = format!(
        "# Written by ferrocuda-builder: a workspace of its own around the kernel crate, so that the\n\
         # nested cargo writes its lockfile here and never into the kernel crate's directory.\n\
         [package]\nname = \"ferrocuda-ptx-wrapper\"\nversion = \"0.0.0\"\nedition = \"2021\"\n\
         publish = false\n\n[lib]\npath = \"lib.rs\"\n\n[dependencies]\n\
         kernels = {}\n\n[workspace]\n",
        toml::Value::Table(dependency)
    );
    if !patch.is_empty() {
        let mut root = toml::Table::new();
        root.insert("patch".into(), patch.into());
        text.push('\n');
        text.push_str(&root.to_string());
    }
    Ok(text)
}

/// A TOML basic string.
fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A path as UTF-8 text for a manifest; cargo manifests cannot spell paths that are not UTF-8.
fn toml_path(path: &Path) -> Result<String, BuildError> {
    path.to_str().map(str::to_owned).ok_or_else(|| {
        BuildError::io(
            path,
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "the path is not UTF-8, which a Cargo.toml cannot name",
            ),
        )
    })
}

/// The outer build's `Cargo.lock`, to start the nested resolution from: the first lockfile that
/// lists `package` in the directories above each of `starts`, in order. The builder passes the
/// build script's `OUT_DIR` first (it lies in the outer target directory, usually in the outer
/// workspace), then the kernel crate's directory (a path dependency's workspace), then
/// `CARGO_MANIFEST_DIR`: a crate unpacked from a registry carries its own packaged lockfile,
/// which is only the last resort. A lockfile that does not list the kernel crate belongs to
/// some other build.
pub(crate) fn find_lockfile(starts: &[PathBuf], package: &str) -> Option<PathBuf> {
    let entry = format!("name = {}", toml_string(package));
    starts
        .iter()
        .flat_map(|start| start.ancestors())
        .map(|dir| dir.join("Cargo.lock"))
        .find(|lock| {
            std::fs::read_to_string(lock).is_ok_and(|text| text.lines().any(|l| l == entry))
        })
}

/// The staticlib cargo reports (`compiler-artifact` message), e.g.
/// `<target_dir>/nvptx64-nvidia-cuda/release/libtiny_kernels.a`: the kernel crate's, the only
/// unit built as a staticlib (its dependencies are rlibs).
pub(crate) fn find_artifact(json_lines: &str) -> Result<PathBuf, BuildError> {
    json_lines
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact")
        .filter_map(|m| {
            let files = m["filenames"].as_array()?;
            let file = files
                .iter()
                .filter_map(|f| f.as_str())
                .find(|f| f.ends_with(".a") || f.ends_with(".lib"))?;
            Some(PathBuf::from(file))
        })
        .next_back()
        .ok_or_else(|| BuildError::PtxNotFound {
            reason: "cargo reported no staticlib for the kernel crate".into(),
        })
}

/// The `deps/<crate>-<hash>.s` that belongs to the uplifted `staticlib`.
///
/// Several hashes can coexist (one per arch, rustc, dependency set), and a fresh build does not
/// rewrite its file, so "the newest `.s`" can be the wrong one. Cargo uplifts the current unit's
/// `deps/lib<crate>-<hash>.a` to `lib<crate>.a` by hard link (or copy), so the matching archive
/// gives the hash.
pub(crate) fn find_asm(
    staticlib: &Path,
    crate_name: &str,
    arch: &str,
) -> Result<PathBuf, BuildError> {
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
                && std::fs::read_to_string(p)
                    .is_ok_and(|t| crate::ptx_text::target(&t) == Some(arch))
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

#[cfg(test)]
#[path = "nested_tests.rs"]
mod tests;
