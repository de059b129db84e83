//! Published per-GPU figures, and theoretical occupancy from them as the CUDA occupancy
//! calculator computes it.
//!
//! Per-SM limits are the CUDA C++ Programming Guide's "Technical Specifications per Compute
//! Capability" (7.0, 7.5, 8.0, 9.0) and the occupancy calculator's allocation units; SM counts,
//! clocks, DRAM bandwidth and FP32/FP64 throughput (non-tensor, at the boost clock) are
//! NVIDIA's product specifications of the named board (SXM where there are several).

/// One GPU's figures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Gpu {
    /// The name `--gpu` takes, e.g. `h200`.
    pub name: &'static str,
    /// The board, e.g. "NVIDIA H200 SXM (141 GB HBM3e)".
    pub board: &'static str,
    /// Compute capability, e.g. (9, 0).
    pub compute_capability: (u32, u32),
    /// Streaming multiprocessors.
    pub sms: u32,
    /// Threads one SM holds at once.
    pub max_threads_per_sm: u32,
    /// Blocks one SM holds at once.
    pub max_blocks_per_sm: u32,
    /// 32-bit registers per SM.
    pub registers_per_sm: u32,
    /// Registers are allocated per warp in units of this many.
    pub register_unit: u32,
    /// Shared memory per SM usable by blocks, bytes.
    pub shared_per_sm: u32,
    /// Shared memory the driver reserves per block (1 KiB from sm_80 on), bytes.
    pub reserved_shared_per_block: u32,
    /// Shared memory is allocated per block in units of this many bytes.
    pub shared_unit: u32,
    /// DRAM bandwidth, bytes per second.
    pub dram_bytes_per_second: f64,
    /// Boost clock, Hz.
    pub clock_hz: f64,
    /// FP32 and FP64 operations per second (a fused multiply-add counts two), without tensor
    /// cores.
    pub fp32_flops: f64,
    /// FP64 operations per second.
    pub fp64_flops: f64,
    /// Dense FP16 tensor-core operations per second with FP32 accumulation (without sparsity),
    /// as published for the board; per SM and clock it is `tensor_flops / (sms × clock_hz)`.
    pub tensor_flops: f64,
}

impl Gpu {
    /// Warps one SM holds at once.
    pub fn max_warps_per_sm(&self) -> u32 {
        self.max_threads_per_sm / 32
    }
}

const fn sm(
    name: &'static str,
    board: &'static str,
    compute_capability: (u32, u32),
    sms: u32,
    shared_kib: u32,
    figures: [f64; 5],
) -> Gpu {
    let turing = compute_capability.0 == 7 && compute_capability.1 == 5;
    Gpu {
        name,
        board,
        compute_capability,
        sms,
        max_threads_per_sm: if turing { 1024 } else { 2048 },
        max_blocks_per_sm: if turing { 16 } else { 32 },
        registers_per_sm: 65536,
        register_unit: 256,
        shared_per_sm: shared_kib * 1024,
        reserved_shared_per_block: if compute_capability.0 >= 8 { 1024 } else { 0 },
        shared_unit: if compute_capability.0 >= 8 { 128 } else { 256 },
        dram_bytes_per_second: figures[0] * 1e9,
        clock_hz: figures[1] * 1e9,
        fp32_flops: figures[2] * 1e12,
        fp64_flops: figures[3] * 1e12,
        tensor_flops: figures[4] * 1e12,
    }
}

/// The GPUs `--gpu` knows: `[DRAM GB/s, boost GHz, FP32 TFLOPS, FP64 TFLOPS, FP16 tensor
/// TFLOPS]` each. The tensor figure is the dense FP16 rate with FP32 accumulation: the H100 and
/// H200 product briefs' 1,979 TFLOPS "with sparsity" halved (4,096 per SM per clock at
/// 1.83 GHz give it), the A100 datasheet's 312, the V100 datasheet's 125 ("tensor
/// performance", mixed precision), and for the RTX 2070 the Turing architecture whitepaper's
/// reference-board "FP16 Tensor TFLOPS with FP32 Accumulate" (29.9: GeForce boards run FP32
/// accumulation at half the FP16-accumulate rate).
pub const GPUS: [Gpu; 5] = [
    sm(
        "h200",
        "NVIDIA H200 SXM (141 GB HBM3e)",
        (9, 0),
        132,
        228,
        [4800.0, 1.98, 67.0, 34.0, 989.5],
    ),
    sm(
        "h100",
        "NVIDIA H100 SXM5 (80 GB HBM3)",
        (9, 0),
        132,
        228,
        [3350.0, 1.98, 67.0, 34.0, 989.5],
    ),
    sm(
        "a100",
        "NVIDIA A100 SXM4 (80 GB HBM2e)",
        (8, 0),
        108,
        164,
        [2039.0, 1.41, 19.5, 9.7, 312.0],
    ),
    sm(
        "v100",
        "NVIDIA V100 SXM2 (32 GB HBM2)",
        (7, 0),
        80,
        96,
        [900.0, 1.53, 15.7, 7.8, 125.0],
    ),
    sm(
        "rtx2070",
        "NVIDIA GeForce RTX 2070 (8 GB GDDR6)",
        (7, 5),
        36,
        64,
        [448.0, 1.62, 7.46, 0.233, 29.9],
    ),
];

/// The GPU called `name` (any case), or an error listing the known ones.
pub fn gpu(name: &str) -> Result<&'static Gpu, String> {
    GPUS.iter()
        .find(|g| g.name.eq_ignore_ascii_case(name))
        .ok_or_else(|| {
            let known: Vec<&str> = GPUS.iter().map(|g| g.name).collect();
            format!("unknown GPU {name:?}: known are {}", known.join(", "))
        })
}

/// What bounds the blocks an SM holds at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limiter {
    /// Threads (warps) per SM: the block size.
    Warps,
    /// The most blocks an SM holds.
    Blocks,
    /// Registers per SM.
    Registers,
    /// Shared memory per SM.
    SharedMemory,
}

impl Limiter {
    /// The name in tables and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Limiter::Warps => "warps",
            Limiter::Blocks => "blocks",
            Limiter::Registers => "registers",
            Limiter::SharedMemory => "shared memory",
        }
    }
}

/// Theoretical occupancy: resident warps per SM over the most it can hold.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Occupancy {
    /// Blocks one SM holds at once.
    pub blocks_per_sm: u32,
    /// Their warps.
    pub warps_per_sm: u32,
    /// `warps_per_sm / max warps per SM`.
    pub fraction: f64,
    /// What bounds `blocks_per_sm`.
    pub limiter: Limiter,
}

/// Theoretical occupancy of blocks of `threads` threads, with `registers` per thread and
/// `shared_bytes` of shared memory (static and dynamic) per block, on `gpu`, as the CUDA
/// occupancy calculator computes it. `None` if no block fits (too many registers or too much
/// shared memory, or a block larger than an SM holds).
pub fn occupancy(gpu: &Gpu, threads: u32, registers: u32, shared_bytes: u32) -> Option<Occupancy> {
    let warps = threads.div_ceil(32).max(1);
    let by_warps = gpu.max_warps_per_sm() / warps;
    let per_warp = (registers.max(1) * 32).next_multiple_of(gpu.register_unit);
    let by_registers = (gpu.registers_per_sm / per_warp) / warps;
    let shared = (shared_bytes + gpu.reserved_shared_per_block).next_multiple_of(gpu.shared_unit);
    let by_shared = gpu.shared_per_sm / shared.max(1);
    let limits = [
        (by_warps, Limiter::Warps),
        (gpu.max_blocks_per_sm, Limiter::Blocks),
        (by_registers, Limiter::Registers),
        (by_shared, Limiter::SharedMemory),
    ];
    // The first of the smallest, so that a tie names the block size first.
    let (blocks, limiter) = limits
        .into_iter()
        .fold(limits[0], |best, l| if l.0 < best.0 { l } else { best });
    (blocks > 0).then(|| Occupancy {
        blocks_per_sm: blocks,
        warps_per_sm: blocks * warps,
        fraction: (blocks * warps) as f64 / gpu.max_warps_per_sm() as f64,
        limiter,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn occupancy_as_the_calculator_gives_it() {
        let h200 = gpu("H200").unwrap();
        // 256 threads, 32 registers, no shared memory: 8 blocks of 8 warps fill 64 warps.
        let full = occupancy(h200, 256, 32, 0).unwrap();
        assert_eq!((full.blocks_per_sm, full.fraction), (8, 1.0));
        // 64 registers: 64 × 32 = 2048 per warp, 32 warps' worth: 4 blocks, half the SM.
        let regs = occupancy(h200, 256, 64, 0).unwrap();
        assert_eq!((regs.blocks_per_sm, regs.limiter), (4, Limiter::Registers));
        assert_eq!(regs.fraction, 0.5);
        // 48 KiB + 1 KiB reserved per block: 228 / 49 = 4 blocks of 4 warps.
        let shared = occupancy(h200, 128, 32, 48 * 1024).unwrap();
        assert_eq!(
            (shared.blocks_per_sm, shared.limiter),
            (4, Limiter::SharedMemory)
        );
        assert_eq!(shared.fraction, 16.0 / 64.0);
        // Blocks of 32 threads: at most 32 blocks, 32 warps of 64.
        let small = occupancy(h200, 32, 16, 0).unwrap();
        assert_eq!((small.fraction, small.limiter), (0.5, Limiter::Blocks));
        // Turing holds 1024 threads: a 768-thread block leaves 256 unused.
        let turing = occupancy(gpu("rtx2070").unwrap(), 768, 16, 0).unwrap();
        assert_eq!((turing.blocks_per_sm, turing.limiter), (1, Limiter::Warps));
        assert_eq!(turing.fraction, 0.75);
        assert!(occupancy(h200, 1024, 255, 0).is_none());
        assert!(gpu("gtx480").unwrap_err().contains("h200"));
    }
}
