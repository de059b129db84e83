//! `ferrocuda kernels`: what each kernel of the library costs on the GPU, from ptxas: registers,
//! shared memory, stack, spills and barriers per kernel; with `--sass`, its machine code.
//!
//! Without `--arch`, the report ptxas made for sm_70 when `build.rs` built the PTX (embedded in
//! the binary). With `--arch sm_80` (or any other), ptxas assembles the embedded PTX for that GPU
//! now, so the numbers are those of the machine code that GPU would run. `--sass` also
//! disassembles that machine code (sm_90 unless `--arch` says otherwise) with `cuobjdump` or
//! `nvdisasm`: instruction counts, loads by kind, FFMA share and bounds-check branches. The
//! tensor-core kernels (`ferrocuda::TENSOR_KERNELS`) are reported for sm_80 and newer only.

use ferrocuda_builder::sass;
use std::path::{Path, PathBuf};
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
        println!("\nThe tensor-core kernels (ferrocuda::TENSOR_KERNELS, sm_80 and newer):");
        println!("{}", ferrocuda::TENSOR_KERNELS_PTXAS_REPORT.trim_end());
        println!("\n(from the build; `ferrocuda kernels --arch sm_90` assembles for another GPU, `--sass` shows the machine code)");
        print_cpu_paths(ferrocuda::KERNELS.source());
        print_cpu_paths(ferrocuda::TENSOR_KERNELS.source());
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
    let modules: Vec<(PathBuf, u32)> = match ptx {
        Some(path) => {
            match std::fs::read_to_string(path) {
                Ok(text) => print_cpu_paths(&text),
                Err(error) => {
                    eprintln!("error: cannot read {}: {error}", path.display());
                    return ExitCode::FAILURE;
                }
            }
            println!();
            vec![(path.to_path_buf(), 0)]
        }
        // The library's kernels, then its tensor-core kernels, which need sm_80.
        None => {
            let mut modules = Vec::new();
            for (name, ptx, oldest) in [
                ("ferrocuda-kernels", &ferrocuda::KERNELS, 0),
                ("ferrocuda-kernels-tc", &ferrocuda::TENSOR_KERNELS, 80),
            ] {
                let path = dir.join(format!("{name}.ptx"));
                if let Err(error) =
                    std::fs::create_dir_all(dir).and_then(|()| std::fs::write(&path, ptx.source()))
                {
                    eprintln!("error: cannot write the PTX to {}: {error}", path.display());
                    return ExitCode::FAILURE;
                }
                modules.push((path, oldest));
            }
            modules
        }
    };
    let _ = std::fs::create_dir_all(dir);
    let mut status = ExitCode::SUCCESS;
    for (arch, (path, oldest)) in archs
        .iter()
        .flat_map(|arch| modules.iter().map(move |module| (arch, module)))
    {
        if arch_number(arch).is_some_and(|number| number < *oldest) {
            println!(
                "({}: needs sm_{oldest} or newer, not assembled for {arch})\n",
                path.file_stem().unwrap_or_default().to_string_lossy()
            );
            continue;
        }
        let Some(ptxas) = ferrocuda_builder::find_ptxas(arch) else {
            eprintln!(
                "error: no ptxas that can assemble for {arch} was found: run `make setup` (it installs ptxas from \
                 PyPI's nvidia-cuda-nvcc-cu12) or set FERROCUDA_PTXAS"
            );
            status = ExitCode::FAILURE;
            continue;
        };
        let cubin = path.with_extension(format!("{arch}.cubin"));
        let assembled = ferrocuda_builder::assemble_to(&ptxas, path, arch, &cubin);
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

/// `sm_90a` → 90; `None` for a name that is not `sm_` and a number.
fn arch_number(arch: &str) -> Option<u32> {
    let digits = arch.strip_prefix("sm_")?;
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    digits[..end].parse().ok()
}

/// How the CPU executor runs each kernel of `ptx` (`KernelInfo::cpu_path`, decided by
/// `#[kernel]` from the kernel's body and recorded in the PTX; docs/cpu-executor.md).
fn print_cpu_paths(ptx: &str) {
    let paths = ferrocuda_builder::cpu_paths(ptx);
    if paths.is_empty() {
        println!("\n(no CPU paths recorded in this PTX: it was not built from #[kernel] functions by this version)");
        return;
    }
    println!("\nCPU executor path of each kernel:");
    for (kernel, path) in paths {
        match path.split_once(": ") {
            Some((name, why)) => println!("  {kernel:<28} {name:<12} ({why})"),
            None => println!("  {kernel:<28} {path}"),
        }
    }
}
