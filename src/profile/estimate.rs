//! The time estimate: a roofline over one launch's counters. An estimate, never a measurement;
//! docs/profile.md states the model and what it leaves out.

use super::gpus::Gpu;
use super::records::Counters;

/// Warp instructions one SM issues per clock (four schedulers, one each: sm_70 to sm_90).
const ISSUE_PER_SM_PER_CLOCK: f64 = 4.0;
/// Special-function (MUFU) lane operations per SM per clock (16 per SM: 4 per scheduler).
const SFU_PER_SM_PER_CLOCK: f64 = 16.0;
/// Shared-memory wavefronts per SM per clock: one pass through the 32 banks (128 bytes).
const WAVEFRONTS_PER_SM_PER_CLOCK: f64 = 1.0;
/// Operations of one tensor-core warp instruction, counted as an `mma.m16n8k16` in FP16
/// (2 × 16 × 8 × 16). The emulator's other shapes take the same time at the published rates:
/// `m16n8k8` TF32 is half the operations at half the FP16 rate, `m16n8k32` INT8 twice the
/// operations at twice the rate (A100, H100).
const OPS_PER_MMA: f64 = 4096.0;

/// One launch's estimated time on a GPU, with its terms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// The larger of the terms.
    pub seconds: f64,
    /// Global memory sectors × 32 bytes over DRAM bandwidth.
    pub memory_seconds: f64,
    /// The slowest of: warp instructions over the SMs' issue rate, FP32, FP64 and special
    /// function lanes over their throughputs, tensor-core instructions over the dense FP16
    /// tensor rate, and shared-memory wavefronts (bank conflicts included) at one per SM per
    /// clock, on the SMs the grid occupies.
    pub compute_seconds: f64,
}

impl Estimate {
    /// "memory" or "compute": the term that sets the estimate.
    pub fn bound(&self) -> &'static str {
        if self.memory_seconds >= self.compute_seconds {
            "memory"
        } else {
            "compute"
        }
    }
}

/// The estimate for a launch of `blocks` blocks that counted `c`, on `gpu`.
pub fn estimate(gpu: &Gpu, c: &Counters, blocks: u64) -> Estimate {
    let bytes = (c.global_loads.sectors + c.global_stores.sectors) as f64 * 32.0;
    let memory_seconds = bytes / gpu.dram_bytes_per_second;
    // A grid of fewer blocks than SMs leaves SMs idle.
    let share = (blocks as f64 / gpu.sms as f64).min(1.0);
    let class = |name: &str| c.by_class.get(name).copied().unwrap_or(0) as f64;
    let clock = gpu.clock_hz * share;
    let issue = c.warp_instructions as f64 / (gpu.sms as f64 * ISSUE_PER_SM_PER_CLOCK * clock);
    // One lane's FMA is two flops: lanes over (flops / 2).
    let fp32 = class("fp32") * 32.0 / (gpu.fp32_flops / 2.0 * share);
    let fp64 = class("fp64") * 32.0 / (gpu.fp64_flops / 2.0 * share);
    let sfu = class("special") * 32.0 / (gpu.sms as f64 * SFU_PER_SM_PER_CLOCK * clock);
    let wavefronts = c.shared_loads.wavefronts + c.shared_stores.wavefronts;
    let shared = wavefronts as f64 / (gpu.sms as f64 * WAVEFRONTS_PER_SM_PER_CLOCK * clock);
    let tensor = class("tensor") * OPS_PER_MMA / (gpu.tensor_flops * share);
    let compute_seconds = issue.max(fp32).max(fp64).max(sfu).max(tensor).max(shared);
    Estimate {
        seconds: memory_seconds.max(compute_seconds),
        memory_seconds,
        compute_seconds,
    }
}
