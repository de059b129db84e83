//! The main job's streamed row (`ferrocuda::workloads::run_streamed`): measured on the GPU, or
//! on the CPU executor without one (the PTX emulator's times say nothing, and its pipeline is
//! checked by tests/pipeline.rs), printed under the table, kept in the JSON, and drawn as
//! `timeline.svg` next to `speedups.svg`.

use crate::run::show_time;
use ferrocuda::workloads::{run_streamed, Scale, Streamed};
use ferrocuda::Module;
use serde::Serialize;
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
    #[serde(skip)]
    measured: Option<Streamed>,
}

/// Runs the row on `gpu` if it is a real GPU, else on `cpu`.
pub fn measure(cpu: &Module, gpu: Option<&Module>, scale: Scale) -> StreamedRow {
    let kernels = gpu
        .filter(|k| !k.device().properties().is_emulator())
        .unwrap_or(cpu);
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
        measured,
    }
}

/// Bytes in MiB, or KiB below one MiB.
fn mib(bytes: usize) -> String {
    match bytes {
        0..0x10_0000 => format!("{:.1} KiB", bytes as f64 / 1024.0),
        _ => format!("{:.1} MiB", bytes as f64 / (1 << 20) as f64),
    }
}

impl StreamedRow {
    /// Whether it ran and its prices were right.
    pub fn is_right(&self) -> bool {
        self.failure.is_none()
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
