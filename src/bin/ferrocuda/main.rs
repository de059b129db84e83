//! The `ferrocuda` command: `ferrocuda run` (the default) is the main job, `ferrocuda doctor` tells where
//! this machine stands: driver, GPUs, the embedded PTX, the kernel toolchain, and where kernels
//! will run.

mod chart;
mod doctor;
mod kernels;
mod profile;
mod run;
mod streamed;
mod timeline;

use clap::{Parser, Subcommand};
use ferrocuda::workloads::Scale;
use std::process::ExitCode;

/// GPU kernels written in Rust, on a CUDA GPU or the CPU.
#[derive(Parser)]
#[command(name = "ferrocuda", version, args_conflicts_with_subcommands = true)]
struct Cli {
    /// What to do; without one, `run`.
    #[command(subcommand)]
    command: Option<Command>,
    /// `run`'s options, for `ferrocuda --quick` without the word `run`.
    #[command(flatten)]
    run: RunArgs,
}

#[derive(Subcommand)]
enum Command {
    /// The seed's table, measured here (the default): each workload as a plain loop on one CPU
    /// thread, on the CPU executor (all cores) and on the GPU, each result checked first; writes
    /// a chart of the speedups and the results as JSON.
    Run(RunArgs),
    /// What each kernel costs on the GPU, from ptxas: registers, shared memory, stack, spills
    /// and barriers (the build's sm_70 report, or ptxas run now for each `--arch`); with
    /// `--sass`, its machine code: instructions, loads by kind, FFMA share, bounds checks.
    Kernels {
        /// Assemble for these GPU architectures now, e.g. `--arch sm_80 --arch sm_90`.
        #[arg(long)]
        arch: Vec<String>,
        /// Disassemble the machine code (sm_90 unless `--arch` is given; needs NVIDIA's
        /// cuobjdump or nvdisasm: `make setup-sass`) and count, per kernel, instructions,
        /// registers, spills, loads by kind (LDG, LDG.CONSTANT, generic LD, LDS, ATOMS, ATOM,
        /// RED), FFMA share and branches to traps.
        #[arg(long)]
        sass: bool,
        /// Report on this PTX file (e.g. your kernel crate's) instead of the built-in kernels.
        #[arg(long, value_name = "FILE")]
        ptx: Option<std::path::PathBuf>,
    },
    /// How each workload's kernels would run on a GPU, without one: runs them once on the PTX
    /// emulator with its counters on (warp instructions, SIMT and branch efficiency, global
    /// sectors per request, shared-memory bank conflicts) and estimates, for `--gpu`,
    /// theoretical occupancy and time (an estimate: docs/profile.md). Needs
    /// FERROCUDA_LIBCUDA=.../libferrocuda_emu_cuda.so.
    Profile {
        /// The GPU to estimate for: h200, h100, a100, v100 or rtx2070.
        #[arg(long, default_value = "h200")]
        gpu: String,
        /// Only the workloads (or, with `--from`, kernels) whose name contains this text.
        #[arg(long)]
        only: Option<String>,
        /// Print JSON instead of the table.
        #[arg(long)]
        json: bool,
        /// The launches your own program recorded (run it with FERROCUDA_EMU_PROFILE=FILE on
        /// the emulator) instead of the workloads.
        #[arg(long, value_name = "FILE")]
        from: Option<std::path::PathBuf>,
    },
    /// Check the NVIDIA driver, the GPUs, the embedded PTX and the kernel toolchain; say where
    /// kernels will run, and how to fix what does not work. Exits 1 only if the device kernels
    /// would run on cannot load them.
    Doctor {
        /// Print the report as JSON, for scripts.
        #[arg(long)]
        json: bool,
    },
}

/// Options of `ferrocuda run`.
#[derive(clap::Args)]
struct RunArgs {
    /// Smaller inputs (about a sixteenth of the work), for CI-sized machines.
    #[arg(long)]
    quick: bool,
    /// Test sizes (seconds even in a debug build), for ferrocuda's own tests.
    #[arg(long, hide = true, conflicts_with = "quick")]
    tiny: bool,
    /// Print the results as JSON instead of the table.
    #[arg(long)]
    json: bool,
    /// Only the workloads whose name contains this text (e.g. `--only group-by`).
    #[arg(long)]
    only: Option<String>,
    /// Where to write results.json and speedups.svg.
    #[arg(long, default_value = "ferrocuda-results")]
    out: std::path::PathBuf,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let command = cli.command.unwrap_or(Command::Run(cli.run));
    match command {
        Command::Run(args) => run::main_job(run::Options {
            scale: match (args.quick, args.tiny) {
                (_, true) => Scale::Tiny,
                (true, _) => Scale::Quick,
                _ => Scale::Full,
            },
            json: args.json,
            only: args.only,
            out_dir: args.out,
        }),
        Command::Doctor { json } => doctor::main(json),
        Command::Profile {
            gpu,
            only,
            json,
            from,
        } => profile::main(profile::Options {
            gpu,
            only,
            json,
            from,
        }),
        Command::Kernels { arch, sass, ptx } => kernels::main(kernels::Options {
            archs: &arch,
            sass,
            ptx: ptx.as_deref(),
        }),
    }
}
