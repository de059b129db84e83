//! Builds the `gpu-kernels` crate to PTX with rustc's nvptx64 target (through `gpu-builder`) and
//! leaves it in OUT_DIR for `src/lib.rs` to embed, with ptxas's per-kernel report beside it.

use std::path::PathBuf;

fn main() {
    let root = PathBuf::from(
        std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"),
    );
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let built = match gpu_builder::PtxBuilder::new(root.join("gpu-kernels")).build() {
        Ok(built) => built,
        Err(error) => {
            eprintln!("error: building the GPU kernels (gpu-kernels) to PTX failed\n\n{error}");
            std::process::exit(1);
        }
    };
    built.emit_rerun_if_changed();
    let write = |name: &str, text: &str| {
        std::fs::write(out_dir.join(name), text)
            .unwrap_or_else(|e| panic!("writing {name} to OUT_DIR: {e}"))
    };
    write("gpu-kernels.ptx", &built.ptx);
    let report = match (&built.ptxas, &built.report) {
        (Some(ptxas), Some(report)) => {
            format!("ptxas {} ({}) -arch={}\n{report}", ptxas.version, ptxas.path.display(), built.arch)
        }
        _ => "ptxas was not found when this was built: no per-kernel report (install it with `make setup`)\n"
            .to_string(),
    };
    write("gpu-kernels.ptxas.txt", &report);
    println!(
        "cargo:rustc-env=OXICUDA_KERNEL_TOOLCHAIN={} ({})",
        built.toolchain.version,
        built.toolchain.rustc.display()
    );
}
