//! Builds the `ferrocuda-kernels` crate (for sm_70) and the `ferrocuda-kernels-tc` crate (the
//! tensor-core kernels, for sm_80) to PTX with rustc's nvptx64 target (through
//! `ferrocuda-builder`) and tells `src/lib.rs` where each PTX and ptxas's per-kernel report are,
//! to embed them.
//!
//! The kernel crate is found through cargo, not by a path: ferrocuda-kernels, ferrocuda-std and
//! ferrocuda-macros are `links` packages whose build scripts say where their source is
//! (`DEP_FERROCUDA_KERNELS_ROOT`, ...). That is the copy this build compiles for the host,
//! wherever cargo took it from (this workspace, the registry, `cargo package`'s temporary
//! registry), and the nested PTX build is pointed at the same ferrocuda-std and ferrocuda-macros.
//! On docs.rs (`DOCS_RS` set) the builder compiles nothing and embeds placeholder PTX.

use std::path::PathBuf;

/// A `links` metadata variable one of our dependencies' build scripts sets.
fn dep_root(var: &str) -> PathBuf {
    println!("cargo::rerun-if-env-changed={var}");
    match std::env::var_os(var) {
        // A `links` build script's output is cached in the target directory with the path it
        // printed. If that checkout moved or is gone (a target directory shared between
        // checkouts), cargo can still call the output fresh: say so, not "crate not found".
        Some(dir) if !PathBuf::from(&dir).join("Cargo.toml").exists() => {
            eprintln!(
                "error: {var} is {}, which has no Cargo.toml: this target directory's cached \
                 build-script output came from another checkout (a CARGO_TARGET_DIR shared \
                 between checkouts?). Run `cargo clean -p ferrocuda-kernels -p ferrocuda-kernels-tc -p ferrocuda-std \
                 -p ferrocuda-macros` (add `--release` for release builds) and build again.",
                PathBuf::from(&dir).display()
            );
            std::process::exit(1);
        }
        Some(dir) => dir.into(),
        None => {
            eprintln!(
                "error: {var} is not set: ferrocuda's kernel build finds its crates through their \
                 `links` metadata (ferrocuda-kernels, ferrocuda-kernels-tc, ferrocuda-std and ferrocuda-macros print it from \
                 their build scripts). Are they the same version as ferrocuda?"
            );
            std::process::exit(1);
        }
    }
}

/// Builds the kernel crate whose `links` root is in `root_var` to PTX for `arch`, or exits with
/// the builder's error; tells `src/lib.rs` where its PTX and ptxas report are
/// (`<env>_PTX`, `<env>_PTXAS_REPORT`).
fn build_kernels(root_var: &str, arch: &str, env: &str) -> ferrocuda_builder::BuiltPtx {
    let builder = ferrocuda_builder::PtxBuilder::new(dep_root(root_var))
        .arch(arch)
        .patch_crates_io("ferrocuda-std", dep_root("DEP_FERROCUDA_STD_ROOT"))
        .patch_crates_io(
            "ferrocuda-macros",
            dep_root("DEP_FERROCUDA_STD_MACROS_ROOT"),
        );
    let built = match builder.build() {
        Ok(built) => built,
        Err(error) => {
            eprintln!("error: building the GPU kernels ({root_var}) to PTX failed\n\n{error}");
            std::process::exit(1);
        }
    };
    built.emit_rerun_if_changed();
    println!("cargo:rustc-env={env}_PTX={}", built.ptx_path.display());
    println!(
        "cargo:rustc-env={env}_PTXAS_REPORT={}",
        built.report_path.display()
    );
    built
}

fn main() {
    let built = build_kernels("DEP_FERROCUDA_KERNELS_ROOT", "sm_70", "FERROCUDA_KERNELS");
    // The tensor-core kernels need sm_80 (mma.sync, ldmatrix, cp.async): a module of their own,
    // so the rest stays loadable on sm_70. Both builds share the nested target directory, so
    // `core` and ferrocuda-std are compiled once (the target is only the final crate's flag).
    build_kernels(
        "DEP_FERROCUDA_KERNELS_TC_ROOT",
        "sm_80",
        "FERROCUDA_KERNELS_TC",
    );
    // What `ferrocuda doctor` reports about this build (see `ferrocuda::KERNEL_BUILD`).
    let (ptxas_version, ptxas_path) = match &built.ptxas {
        Some(ptxas) => (ptxas.version.clone(), ptxas.path.display().to_string()),
        None => (String::new(), String::new()),
    };
    for (name, value) in [
        ("RUSTC", built.toolchain.rustc.display().to_string()),
        ("RUSTC_VERSION", built.toolchain.version.clone()),
        ("TOOLCHAIN_SOURCE", built.toolchain.source.to_string()),
        ("ARCH", built.arch.clone()),
        ("PTXAS_VERSION", ptxas_version),
        ("PTXAS_PATH", ptxas_path),
    ] {
        println!("cargo:rustc-env=FERROCUDA_KERNEL_{name}={value}");
    }
}
