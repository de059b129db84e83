//! Builds the `gpu-kernels` crate to PTX with rustc's nvptx64 target (through `gpu-builder`) and
//! tells `src/lib.rs` where the PTX and ptxas's per-kernel report are, to embed them.

fn main() {
    let built = match gpu_builder::PtxBuilder::new("gpu-kernels").build() {
        Ok(built) => built,
        Err(error) => {
            eprintln!("error: building the GPU kernels (gpu-kernels) to PTX failed\n\n{error}");
            std::process::exit(1);
        }
    };
    built.emit_rerun_if_changed();
    println!(
        "cargo:rustc-env=OXICUDA_KERNELS_PTX={}",
        built.ptx_path.display()
    );
    println!(
        "cargo:rustc-env=OXICUDA_KERNELS_PTXAS_REPORT={}",
        built.report_path.display()
    );
    println!(
        "cargo:rustc-env=OXICUDA_KERNEL_TOOLCHAIN={} ({})",
        built.toolchain.version,
        built.toolchain.rustc.display()
    );
}
