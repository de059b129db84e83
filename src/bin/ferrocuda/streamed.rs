//! The main job's streamed row (`ferrocuda::workloads::run_streamed`): measured on the GPU, or
//! on the CPU executor without one (the PTX emulator's times say nothing, and its pipeline is
//! checked by tests/pipeline.rs), printed under the table, kept in the JSON, and drawn as
//! `timeline.svg` next to `speedups.svg`. Where there are two GPUs (two emulated ones too), the
//! pipeline again on one and spread over two ([`spread`]).

mod spread;

use crate::run::show_time;
use ferrocuda::workloads::{run_streamed, Scale, Streamed};
use ferrocuda::Module;
use serde::Serialize;
use spread::Spread;
use std::path::{Path, PathBuf};

/// The row's name (`--only` matches it).
pub const NAME: &str = "Black-Scholes, streamed";

/// The row as the JSON has it.
#[derive(Serialize)]
pub struct StreamedRow {
    workload: &'static str,
    device: String,
    options: usize,
    limit_bytes: usize,
    one_shot_under_limit: String,
    one_shot_seconds: f64,
    one_shot_peak_bytes: usize,
    pipelined_seconds: f64,
    pipelined_peak_bytes: usize,
    chunks: usize,
    chunk_len: usize,
    streams: usize,
    overlap: Option<f64>,
    pinned_bandwidth: Option<f64>,
    bandwidth_share: Option<f64>,
    failure: Option<String>,
    /// The same row with the project's CUDA C `black_scholes` in the same pipeline, on the same
    /// GPU.
    cuda_c: CudaCStreamed,
    /// The pipeline on one GPU and spread over two.
    devices: Spread,
    #[serde(skip)]
    measured: Option<Streamed>,
}

/// The CUDA C half of the streamed row.
#[derive(Serialize)]
#[serde(rename_all = "snake_case")]
enum CudaCStreamed {
    /// Host-to-host seconds of each way of running it; its prices were right.
    Measured {
        one_shot_seconds: f64,
        pipelined_seconds: f64,
    },
    /// It failed, or its prices were wrong: the row fails.
    Failed(String),
    /// Why it did not run (no GPU, no NVRTC).
    Absent(String),
}

/// Runs the row on `gpu` if it is a real GPU, else on `cpu`; and with `cuda_c` (the CUDA C
/// module on that GPU, or why there is none) on a real GPU.
pub fn measure(
    cpu: &Module,
    gpu: Option<&Module>,
    cuda_c: Result<&Module, &str>,
    scale: Scale,
) -> StreamedRow {
    let real_gpu = gpu.filter(|k| !k.device().properties().is_emulator());
    let kernels = real_gpu.unwrap_or(cpu);
    let cuda_c = match (real_gpu, cuda_c) {
        (None, _) if gpu.is_some() => {
            CudaCStreamed::Absent("PTX emulator: this row runs on the CPU executor".into())
        }
        (None, _) => CudaCStreamed::Absent("no GPU".into()),
        (Some(_), Err(why)) => CudaCStreamed::Absent(why.into()),
        (Some(_), Ok(module)) => match run_streamed(module, scale) {
            Ok(row) => match row.verdict {
                Ok(()) => CudaCStreamed::Measured {
                    one_shot_seconds: row.one_shot.seconds,
                    pipelined_seconds: row.pipelined.seconds,
                },
                Err(wrong) => CudaCStreamed::Failed(format!("wrong result: {wrong}")),
            },
            Err(error) => CudaCStreamed::Failed(error.to_string()),
        },
    };
    let devices = spread::measure(gpu, scale);
    let device = kernels.device().to_string();
    let measured = run_streamed(kernels, scale);
    let failure = match &measured {
        Ok(row) => row
            .verdict
            .clone()
            .err()
            .map(|w| format!("wrong result: {w}")),
        Err(error) => Some(error.to_string()),
    };
    let measured = measured.ok();
    let row = measured.as_ref();
    let pick = |f: fn(&Streamed) -> f64| row.map_or(0.0, f);
    StreamedRow {
        workload: NAME,
        device,
        options: row.map_or(0, |r| r.options),
        limit_bytes: row.map_or(0, |r| r.limit),
        one_shot_under_limit: row.map_or_else(String::new, |r| r.one_shot_under_limit.clone()),
        one_shot_seconds: pick(|r| r.one_shot.seconds),
        one_shot_peak_bytes: row.map_or(0, |r| r.one_shot.peak_bytes),
        pipelined_seconds: pick(|r| r.pipelined.seconds),
        pipelined_peak_bytes: row.map_or(0, |r| r.pipelined.peak_bytes),
        chunks: row.map_or(0, |r| r.timeline.chunks),
        chunk_len: row.map_or(0, |r| r.timeline.chunk_len),
        streams: row.map_or(0, |r| r.timeline.streams),
        overlap: row.and_then(|r| r.overlap),
        pinned_bandwidth: row.and_then(|r| r.pinned_bandwidth),
        bandwidth_share: row.and_then(|r| r.bandwidth_share),
        failure,
        cuda_c,
        devices,
        measured,
    }
}

/// Bytes in MiB, or KiB below one MiB.
pub(crate) fn mib(bytes: usize) -> String {
    match bytes {
        0..0x10_0000 => format!("{:.1} KiB", bytes as f64 / 1024.0),
        _ => format!("{:.1} MiB", bytes as f64 / (1 << 20) as f64),
    }
}

impl StreamedRow {
    /// Whether it ran and its prices were right (the CUDA C ones too, where they ran).
    pub fn is_right(&self) -> bool {
        self.failure.is_none()
            && !matches!(self.cuda_c, CudaCStreamed::Failed(_))
            && self.devices.is_right()
    }

    /// The lines under the main table.
    pub fn print(&self) {
        println!(
            "\n{NAME}: {} options under a {} device memory limit, on {}",
            self.options,
            mib(self.limit_bytes),
            self.device
        );
        if let Some(failure) = &self.failure {
            println!("  FAILED: {failure}");
            return;
        }
        println!(
            "  one launch, all at once: {} with {} of device memory (without the limit; under \
             it: out of memory)",
            show_time(self.one_shot_seconds),
            mib(self.one_shot_peak_bytes)
        );
        println!(
            "  ops::Pipeline, {} chunks of {} on {} streams: {} with {} of device memory at most",
            self.chunks,
            self.chunk_len,
            self.streams,
            show_time(self.pipelined_seconds),
            mib(self.pipelined_peak_bytes)
        );
        match (self.overlap, self.bandwidth_share, self.pinned_bandwidth) {
            (Some(overlap), Some(share), Some(bandwidth)) => println!(
                "  overlap: pipeline time ÷ (copy + kernel time) = {overlap:.2}; host↔device: \
                 {:.0}% of the {:.1} GB/s a page-locked copy measures",
                100.0 * share,
                bandwidth / 1e9
            ),
            _ => println!(
                "  (no GPU: the executor runs copies and kernels one after another, so there is \
                 no overlap or bus bandwidth to show)"
            ),
        }
        match &self.cuda_c {
            CudaCStreamed::Measured {
                one_shot_seconds,
                pipelined_seconds,
            } => println!(
                "  CUDA C's black_scholes, the same two ways: one launch {}, ops::Pipeline {} \
                 (ours ÷ CUDA C: {:.2})",
                show_time(*one_shot_seconds),
                show_time(*pipelined_seconds),
                self.pipelined_seconds / pipelined_seconds
            ),
            CudaCStreamed::Failed(why) => println!("  CUDA C: FAILED: {why}"),
            CudaCStreamed::Absent(why) => println!("  CUDA C: none, {why}"),
        }
        self.devices.print();
    }

    /// Writes `timeline.svg` into `dir`.
    pub fn write_timeline(&self, dir: &Path) -> Result<PathBuf, String> {
        let Some(measured) = &self.measured else {
            return Err("the streamed row did not run".into());
        };
        let path = dir.join("timeline.svg");
        crate::timeline::write_svg(&path, &measured.timeline, &self.device)?;
        Ok(path)
    }
}

/// Whether `--only` asks for the row.
pub fn wanted(only: Option<&str>) -> bool {
    only.is_none_or(|only| NAME.contains(only))
}
