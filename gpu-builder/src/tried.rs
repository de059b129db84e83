//! What the toolchain search looked at: where each candidate rustc came from
//! ([`ToolchainSource`]), why one did not qualify ([`TriedRustc`]), and the message that says what
//! to install when none did. It sits below both the search (`toolchain`) and the error type
//! (`error`), which reports it, so neither has to import the other's layer.

use std::fmt;
use std::path::PathBuf;

/// Where a candidate rustc came from; it decides how a failure is reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolchainSource {
    /// `FERROCUDA_KERNEL_RUSTC`: the user's explicit choice, so it is never silently skipped.
    EnvOverride,
    /// The toolchain building the host code: `RUSTC` (set by cargo for build scripts) or `rustc`
    /// on `PATH`.
    ActiveToolchain,
    /// Debian's `/usr/bin/rustc` (`apt-get install rustc-web rust-web-src`).
    DebianRustcWeb,
    /// None: `DOCS_RS` was set, so nothing was compiled (see `BuiltPtx::placeholder`).
    NotBuilt,
}

impl fmt::Display for ToolchainSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ToolchainSource::EnvOverride => "FERROCUDA_KERNEL_RUSTC",
            ToolchainSource::ActiveToolchain => "active toolchain",
            ToolchainSource::DebianRustcWeb => "Debian rustc-web",
            ToolchainSource::NotBuilt => "none (DOCS_RS)",
        })
    }
}

/// One rustc that was looked at and did not qualify, for the error message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TriedRustc {
    /// The rustc path (or bare name) tried.
    pub rustc: PathBuf,
    /// Where it came from.
    pub source: ToolchainSource,
    /// Its `rustc -V` line, if it ran.
    pub version: Option<String>,
    /// Its `rustc --print sysroot`, if it ran that far.
    pub sysroot: Option<PathBuf>,
    /// Why it was not used.
    pub problem: String,
}

impl fmt::Display for TriedRustc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.rustc.display(), self.source)?;
        if let Some(v) = &self.version {
            write!(f, ", {v}")?;
        }
        write!(f, ": {}", self.problem)
    }
}

/// The text of `BuildError::NoKernelToolchain`: what was tried and what to run.
pub(crate) fn no_toolchain_message(tried: &[TriedRustc]) -> String {
    let mut msg = String::from(
        "no rustc can build the GPU kernels: the kernel build compiles `core` for \
         nvptx64-nvidia-cuda from source (-Zbuild-std=core), which needs a rustc whose sysroot \
         holds the standard library's source (<sysroot>/lib/rustlib/src/rust/library).\ntried:\n",
    );
    for t in tried {
        msg.push_str(&format!("  - {t}\n"));
    }
    if tried
        .iter()
        .any(|t| t.source == ToolchainSource::EnvOverride)
    {
        msg.push_str("FERROCUDA_KERNEL_RUSTC is set, so no other rustc was tried.\n");
    }
    msg.push_str("fix, one of:\n");
    // A rustup toolchain's sysroot is ~/.rustup/toolchains/<name>: name it in the command.
    let rustup_toolchain = tried.iter().find_map(|t| {
        let sysroot = t.sysroot.as_deref()?;
        if sysroot.parent()?.file_name()? != "toolchains" {
            return None;
        }
        sysroot.file_name()?.to_str()
    });
    match rustup_toolchain {
        Some(name) => msg.push_str(&format!(
            "  - rustup: `rustup component add rust-src --toolchain {name}` \
             (the workspace's rust-toolchain.toml lists rust-src, so rustup installs it where it can download)\n"
        )),
        None => msg.push_str(
            "  - rustup: `rustup component add rust-src` \
             (the workspace's rust-toolchain.toml lists rust-src, so rustup installs it where it can download)\n",
        ),
    }
    msg.push_str(
        "  - Debian/Ubuntu: `apt-get install rustc-web rust-web-src` \
         (gives /usr/bin/rustc with its library source; it is found automatically)\n\
         \x20 - or set FERROCUDA_KERNEL_RUSTC=/path/to/rustc, a rustc whose sysroot has the library source",
    );
    msg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rustup_toolchain_is_named_in_the_fix() {
        let tried = [TriedRustc {
            rustc: "/home/u/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/bin/rustc".into(),
            source: ToolchainSource::ActiveToolchain,
            version: Some("rustc 1.95.0".into()),
            sysroot: Some("/home/u/.rustup/toolchains/stable-x86_64-unknown-linux-gnu".into()),
            problem: "no standard library source".into(),
        }];
        let msg = no_toolchain_message(&tried);
        assert!(
            msg.contains(
                "rustup component add rust-src --toolchain stable-x86_64-unknown-linux-gnu"
            ),
            "{msg}"
        );
    }
}
