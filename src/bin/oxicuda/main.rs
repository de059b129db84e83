//! The `oxicuda` command: `oxicuda run` (the default) is the main job, `oxicuda doctor` tells where
//! this machine stands: driver, GPUs, the embedded PTX, the kernel toolchain, and where kernels
//! will run.

mod doctor;
mod run;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// GPU kernels written in Rust, on a CUDA GPU or the CPU.
#[derive(Parser)]
#[command(name = "oxicuda", version)]
struct Cli {
    /// What to do; without one, `run`.
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Add two 1,000,000-element vectors on the best device and verify every element (the
    /// default).
    Run,
    /// Check the NVIDIA driver, the GPUs, the embedded PTX and the kernel toolchain; say where
    /// kernels will run, and how to fix what does not work. Exits 1 only if the device kernels
    /// would run on cannot load them.
    Doctor {
        /// Print the report as JSON, for scripts.
        #[arg(long)]
        json: bool,
    },
}

fn main() -> ExitCode {
    match Cli::parse().command.unwrap_or(Command::Run) {
        Command::Run => run::main_job(),
        Command::Doctor { json } => doctor::main(json),
    }
}
