//! Builds the `ferrocuda-kernels` crate to PTX with rustc's nvptx64 target (through `ferrocuda-builder`) and
//! tells `src/lib.rs` where the PTX and ptxas's per-kernel report are, to embed them.

fn main() {
    let built = match ferrocuda_builder::PtxBuilder::new("gpu-kernels").build() {
        Ok(built) => built,
        Err(error) => {
            eprintln!("error: building the GPU kernels (ferrocuda-kernels) to PTX failed\n\n{error}");
            std::process::exit(1);
        }
    };
    built.emit_rerun_if_changed();
    println!(
        "cargo:rustc-env=FERROCUDA_KERNELS_PTX={}",
        built.ptx_path.display()
    );
    println!(
        "cargo:rustc-env=FERROCUDA_KERNELS_PTXAS_REPORT={}",
        built.report_path.display()
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
