//! The streamed row on one GPU and spread over two (`ops::Pipeline::across`,
//! `ferrocuda::workloads::run_streamed_devices`): the chunks and copies each GPU got, and on real
//! GPUs the times side by side. On the PTX emulator (`FERROCUDA_EMU_DEVICES=2`) only the counts
//! mean something: its times are an interpreter's.

use super::mib;
use crate::run::show_time;
use ferrocuda::ops::Timeline;
use ferrocuda::workloads::{run_streamed_devices, Scale, SpreadRun};
use ferrocuda::{Device, Module, KERNELS};
use serde::Serialize;

/// The comparison as the JSON has it.
#[derive(Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Spread {
    /// It ran on one GPU and on two, and the prices were right.
    Measured {
        /// Whether the GPUs are the emulator's (then `seconds` is absent).
        emulated: bool,
        /// On one GPU, then on two.
        runs: Vec<SpreadRow>,
    },
    /// It failed, or the prices were wrong: the streamed row fails.
    Failed(String),
    /// Why it did not run (no GPU, one GPU).
    Absent(String),
}

/// One pipelined run.
#[derive(Serialize)]
pub struct SpreadRow {
    devices: usize,
    /// Host-to-host seconds, on real GPUs.
    seconds: Option<f64>,
    chunks: usize,
    chunk_len: usize,
    streams: usize,
    per_device: Vec<DeviceRow>,
}

/// What one GPU did in a run.
#[derive(Serialize)]
pub struct DeviceRow {
    device: String,
    chunks: usize,
    elements: usize,
    uploads: usize,
    downloads: usize,
    bytes: usize,
}

/// Runs the comparison on the first two GPUs, where `gpu` (the GPU the table ran on, if any)
/// has a second one beside it.
pub fn measure(gpu: Option<&Module>, scale: Scale) -> Spread {
    let Some(gpu) = gpu else {
        return Spread::Absent("no GPU".into());
    };
    let emulated = gpu.device().properties().is_emulator();
    let all = match Device::all() {
        Ok(all) => all,
        Err(error) => return Spread::Failed(error.to_string()),
    };
    if all.len() < 2 {
        let hint = match emulated {
            true => " (FERROCUDA_EMU_DEVICES=2 gives the emulator two)",
            false => "",
        };
        return Spread::Absent(format!("{} GPU, two needed{hint}", all.len()));
    }
    let loaded = all[..2]
        .iter()
        .map(|d| d.load(&KERNELS))
        .collect::<Result<Vec<_>, _>>();
    let spread = loaded.and_then(|gpus| run_streamed_devices(&gpus, scale));
    match spread {
        Ok(spread) => match spread.verdict {
            Ok(()) => Spread::Measured {
                emulated,
                runs: spread.runs.iter().map(|r| row(r, emulated)).collect(),
            },
            Err(wrong) => Spread::Failed(format!("wrong result: {wrong}")),
        },
        Err(error) => Spread::Failed(error.to_string()),
    }
}

fn row(run: &SpreadRun, emulated: bool) -> SpreadRow {
    let Timeline {
        chunks,
        chunk_len,
        streams,
        per_device,
        ..
    } = &run.timeline;
    SpreadRow {
        devices: run.devices,
        seconds: (!emulated).then_some(run.seconds),
        chunks: *chunks,
        chunk_len: *chunk_len,
        streams: *streams,
        per_device: per_device
            .iter()
            .map(|w| DeviceRow {
                device: w.device.clone(),
                chunks: w.chunks,
                elements: w.elements,
                uploads: w.uploads,
                downloads: w.downloads,
                bytes: w.bytes,
            })
            .collect(),
    }
}

impl Spread {
    /// Whether it did not fail (absent is not a failure).
    pub fn is_right(&self) -> bool {
        !matches!(self, Spread::Failed(_))
    }

    /// Its lines under the streamed row's.
    pub fn print(&self) {
        let (emulated, runs) = match self {
            Spread::Measured { emulated, runs } => (*emulated, runs),
            Spread::Failed(why) => return println!("  on 1 and 2 GPUs: FAILED: {why}"),
            Spread::Absent(why) => return println!("  on 1 and 2 GPUs: not run, {why}"),
        };
        println!(
            "  on 1 and 2 GPUs (ops::Pipeline::across, the same limit on each{}):",
            match emulated {
                true => "; PTX emulator: chunks and copies counted, times are an interpreter's",
                false => "",
            }
        );
        for run in runs {
            let time = run
                .seconds
                .map_or_else(String::new, |s| format!(" in {}", show_time(s)));
            let plural = if run.devices == 1 { "" } else { "s" };
            println!(
                "    {} GPU{plural}: {} chunks of {} on {} streams each{time}",
                run.devices, run.chunks, run.chunk_len, run.streams
            );
            for work in &run.per_device {
                println!(
                    "      {}: {} chunks, {} options, {} copies in and {} out, {}",
                    work.device,
                    work.chunks,
                    work.elements,
                    work.uploads,
                    work.downloads,
                    mib(work.bytes)
                );
            }
        }
        if let [Some(one), Some(two)] = [runs[0].seconds, runs[1].seconds] {
            println!("    one GPU's time ÷ two GPUs': {:.2}", one / two);
        }
    }
}
