//! The whole job of a typical `build.rs` in one call: build, tell cargo when to rerun, hand the
//! PTX's path to the crate, and fail the build with the builder's message.

use crate::builder::PtxBuilder;
use crate::built::BuiltPtx;

impl PtxBuilder {
    /// Builds the kernel crate from a build script and sets the compile-time environment variable
    /// `env_var` of the crate being built to the PTX file's path, for
    /// `include_str!(env!("MY_KERNELS_PTX"))`. Also prints the `rerun-if-changed` lines
    /// ([`BuiltPtx::emit_rerun_if_changed`]).
    ///
    /// On failure it prints the error and exits the build script with status 1: a build script's
    /// only way to report, and cargo shows the text once, under the crate's name. Use
    /// [`build`](PtxBuilder::build) to handle the error yourself.
    ///
    /// ```no_run
    /// // build.rs
    /// fn main() {
    ///     ferrocuda_builder::PtxBuilder::new("../my-kernels").build_for_env("MY_KERNELS_PTX");
    /// }
    /// ```
    pub fn build_for_env(self, env_var: &str) -> BuiltPtx {
        let warn = self.warn_cpu_fallbacks
            && std::env::var(crate::built::CPU_PATH_WARNING_ENV).map_or(true, |v| v.trim() != "0");
        let built = match self.build() {
            Ok(built) => built,
            Err(error) => {
                eprintln!("{error}");
                std::process::exit(1);
            }
        };
        built.emit_rerun_if_changed();
        println!(
            "cargo:rerun-if-env-changed={}",
            crate::built::CPU_PATH_WARNING_ENV
        );
        if warn {
            for warning in built.cpu_fallback_warnings() {
                println!("cargo:warning={warning}");
            }
        }
        println!("cargo:rustc-env={env_var}={}", built.ptx_path.display());
        built
    }
}
