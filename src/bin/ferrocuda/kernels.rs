//! `ferrocuda kernels`: what each kernel of the library costs on the GPU, from ptxas: registers,
//! shared memory, stack, spills and barriers per kernel; with `--sass`, its machine code.
//!
//! Without `--arch`, the report ptxas made for sm_70 when `build.rs` built the PTX (embedded in
//! the binary). With `--arch sm_80` (or any other), ptxas assembles the embedded PTX for that GPU
//! now, so the numbers are those of the machine code that GPU would run. `--sass` also
//! disassembles that machine code (sm_90 unless `--arch` says otherwise) with `cuobjdump` or
//! `nvdisasm`: instruction counts, loads by kind, FFMA share and bounds-check branches.

use ferrocuda_builder::sass;
use std::path::Path;
use std::process::ExitCode;

/// What `ferrocuda kernels` was asked for.
pub struct Options<'a> {
    /// Architectures to assemble for now (empty: the build's sm_70 report, or sm_90 for SASS).
    pub archs: &'a [String],
    /// Disassemble and report the SASS.
    pub sass: bool,
    /// Report on this PTX file instead of the embedded library.
    pub ptx: Option<&'a Path>,
}

/// Prints the report; fails only if a tool was asked for and cannot run.
pub fn main(options: Options<'_>) -> ExitCode {
    if options.archs.is_empty() && !options.sass && options.ptx.is_none() {
        println!("{}", ferrocuda::KERNELS_PTXAS_REPORT.trim_end());
        println!("\n(from the build; `ferrocuda kernels --arch sm_90` assembles for another GPU, `--sass` shows the machine code)");
        print_cpu_paths();
        return ExitCode::SUCCESS;
    }
    let disassembler = if options.sass {
        match sass::find_disassembler() {
            Ok(tool) => Some(tool),
            Err(tried) => {
                eprintln!(
                    "error: `--sass` needs NVIDIA's cuobjdump or nvdisasm, and none was found:\n  {}\n{}",
                    tried.join("\n  "),
                    sass::INSTALL_HINT
                );
                return ExitCode::FAILURE;
            }
        }
    } else {
        None
    };
    let default_arch = [String::from(if options.sass { "sm_90" } else { "sm_70" })];
    let archs = if options.archs.is_empty() {
        &default_arch[..]
    } else {
        options.archs
    };
    let dir = std::env::temp_dir().join(format!("ferrocuda-kernels-{}", std::process::id()));
    let status = report(&dir, archs, disassembler.as_ref(), options.ptx);
    let _ = std::fs::remove_dir_all(&dir);
    status
}

/// Assembles the PTX for each of `archs` in `dir` and prints ptxas's report, or the SASS table.
fn report(
    dir: &Path,
    archs: &[String],
    disassembler: Option<&sass::Disassembler>,
    ptx: Option<&Path>,
) -> ExitCode {
    let path = match ptx {
        Some(path) => path.to_path_buf(),
        None => {
            let path = dir.join("ferrocuda-kernels.ptx");
            if let Err(error) = std::fs::create_dir_all(dir)
                .and_then(|()| std::fs::write(&path, ferrocuda::KERNELS.source()))
            {
                eprintln!("error: cannot write the PTX to {}: {error}", path.display());
                return ExitCode::FAILURE;
            }
            path
        }
    };
    let _ = std::fs::create_dir_all(dir);
    let mut status = ExitCode::SUCCESS;
    for arch in archs {
        let Some(ptxas) = ferrocuda_builder::find_ptxas(arch) else {
            eprintln!(
                "error: no ptxas that can assemble for {arch} was found: run `make setup` (it installs ptxas from \
                 PyPI's nvidia-cuda-nvcc-cu12) or set FERROCUDA_PTXAS"
            );
            status = ExitCode::FAILURE;
            continue;
        };
        let cubin = dir.join(format!("kernels.{arch}.cubin"));
        let assembled = ferrocuda_builder::assemble_to(&ptxas, &path, arch, &cubin);
        let printed = assembled.and_then(|resources| match disassembler {
            None => Ok(format!("{resources}")),
            Some(tool) => sass::disassemble(tool, &cubin)
                .map(|code| format!("{}", sass::SassReport::new(&resources, &code))),
        });
        match printed {
            Ok(text) => println!("{text}"),
            Err(error) => {
                eprintln!("error: {arch}: {error}");
                status = ExitCode::FAILURE;
            }
        }
    }
    status
}

/// How the CPU executor runs each kernel of the library (`KernelInfo::cpu_path`, decided by
/// `#[kernel]` from the kernel's body; docs/cpu-executor.md).
fn print_cpu_paths() {
    use ferrocuda::kernels::*;
    let infos = [
        *vector_add.info(),
        *saxpy.info(),
        *matrix_add.info(),
        *reduce::dot_partial::<f32>().info(),
        *reduce::sum_partial::<f32>().info(),
        *matmul::matmul_naive::<f32>().info(),
        *matmul::matmul_tiled::<f32>().info(),
        *matmul::matmul_blocked.info(),
        *convolution::convolve_2d.info(),
        *transpose::transpose_naive::<f32>().info(),
        *transpose::transpose_tiled::<f32>().info(),
        *transpose_2d::transpose_2d_naive.info(),
        *transpose_2d::transpose_2d_tiled.info(),
        *finance::black_scholes.info(),
        *monte_carlo::monte_carlo_pi.info(),
        *monte_carlo::monte_carlo_option.info(),
        *statistics::statistics_partial::<f32>().info(),
        *statistics::statistics_merge::<f32>().info(),
        *histogram::histogram.info(),
        *group_by::group_by_shared.info(),
        *group_by::group_by_global.info(),
        *group_by::group_by_owned.info(),
        *group_by::group_by_owned_finish.info(),
        *group_by::group_by_finish.info(),
    ];
    println!("\nCPU executor path of each kernel:");
    for info in infos {
        match info.cpu_path {
            ferrocuda::CpuPath::Coroutines(why) => {
                println!("  {:<22} {:<12} ({why})", info.name, info.cpu_path.name())
            }
            path => println!("  {:<22} {}", info.name, path.name()),
        }
    }
}
