//! `ferrocuda kernels`: what each kernel of the library costs on the GPU, from ptxas: registers,
//! shared memory, stack, spills and barriers per kernel.
//!
//! Without `--arch`, the report ptxas made for sm_70 when `build.rs` built the PTX (embedded in
//! the binary). With `--arch sm_80` (or any other), ptxas assembles the embedded PTX for that GPU
//! now, so the numbers are those of the machine code that GPU would run.

use std::process::ExitCode;

/// Prints the report; fails only if ptxas was asked for and cannot run.
pub fn main(archs: &[String]) -> ExitCode {
    if archs.is_empty() {
        println!("{}", ferrocuda::KERNELS_PTXAS_REPORT.trim_end());
        println!("\n(from the build; `ferrocuda kernels --arch sm_90` assembles for another GPU)");
        return ExitCode::SUCCESS;
    }
    let dir = std::env::temp_dir().join(format!("ferrocuda-kernels-{}", std::process::id()));
    let path = dir.join("ferrocuda-kernels.ptx");
    if let Err(error) = std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::write(&path, ferrocuda::KERNELS.source()))
    {
        eprintln!("error: cannot write the PTX to {}: {error}", path.display());
        return ExitCode::FAILURE;
    }
    let mut status = ExitCode::SUCCESS;
    for arch in archs {
        match ferrocuda_builder::find_ptxas(arch) {
            None => {
                eprintln!(
                    "error: no ptxas that can assemble for {arch} was found: run `make setup` (it installs ptxas from \
                     PyPI's nvidia-cuda-nvcc-cu12) or set FERROCUDA_PTXAS"
                );
                status = ExitCode::FAILURE;
            }
            Some(ptxas) => match ferrocuda_builder::assemble(&ptxas, &path, arch) {
                Ok(report) => println!("{report}\n"),
                Err(error) => {
                    eprintln!("error: ptxas {} for {arch}: {error}", ptxas.version);
                    status = ExitCode::FAILURE;
                }
            },
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    status
}
