//! How kernels would run on a GPU, without one: the PTX emulator's counters per launch (Nsight
//! Compute's definitions, counted exactly from every lane's addresses), theoretical occupancy on
//! a named GPU from ptxas's resources and published tables, and an *estimated* time from a
//! roofline model. `ferrocuda profile` prints them for the main job's workloads; docs/profile.md
//! explains every number and the model's assumptions.
//!
//! Your own program: run it on the emulator with [`PROFILE_ENV`] naming a file,
//!
//! ```sh
//! FERROCUDA_LIBCUDA=$PWD/target/debug/libferrocuda_emu_cuda.so \
//! FERROCUDA_EMU_PROFILE=launches.jsonl cargo run --release
//! ferrocuda profile --from launches.jsonl --gpu h100
//! ```
//!
//! and each launch appends one JSON line ([`LaunchRecord`]); [`read`] and [`rows`] give the same
//! table in a program.

mod estimate;
mod gpus;
mod table;

pub use estimate::{estimate, Estimate};
pub use gpus::{gpu, occupancy, Gpu, Limiter, Occupancy, GPUS};
pub use table::table;

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The environment variable the emulator's `libcuda.so` reads (once, at its first launch): the
/// file every launch appends its [`LaunchRecord`] to, with the counters on.
pub const PROFILE_ENV: &str = "FERROCUDA_EMU_PROFILE";

/// Global memory traffic of loads or of stores.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GlobalTraffic {
    /// Warp instructions that accessed global memory.
    pub requests: u64,
    /// Distinct 32-byte sectors per request, summed.
    pub sectors: u64,
    /// Bytes the lanes asked for.
    pub bytes_requested: u64,
}

/// Shared memory traffic of loads or of stores.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SharedTraffic {
    /// Warp instructions that accessed shared memory.
    pub requests: u64,
    /// Passes through the 32 banks they took (bank conflicts make more than one).
    pub wavefronts: u64,
    /// The passes they needed at least: `wavefronts - ideal_wavefronts` are bank conflicts.
    pub ideal_wavefronts: u64,
}

/// One launch's counters, as the emulator writes them (docs/profile.md defines each).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counters {
    /// Warp instructions executed (PTX instructions, not SASS).
    pub warp_instructions: u64,
    /// Warp instructions per class (`fp32`, `integer`, `load_global`, ...).
    pub by_class: BTreeMap<String, u64>,
    /// Active lanes summed over warp instructions.
    pub thread_instructions: u64,
    /// Active lanes not predicated off, summed.
    pub thread_instructions_pred_on: u64,
    /// Branch warp instructions.
    pub branches: u64,
    /// Branches whose active lanes did not all go the same way.
    pub divergent_branches: u64,
    /// Global loads (generic ones that landed in global memory included).
    pub global_loads: GlobalTraffic,
    /// Global stores.
    pub global_stores: GlobalTraffic,
    /// Shared-memory loads.
    pub shared_loads: SharedTraffic,
    /// Shared-memory stores.
    pub shared_stores: SharedTraffic,
    /// Atomic warp instructions, the lanes executing them, and those lanes that hit an address
    /// another lane of the same instruction hit.
    pub atomic_requests: u64,
    /// Lanes executing atomics.
    pub atomic_lanes: u64,
    /// Of those, lanes whose address an earlier lane of the same instruction also had.
    pub atomic_same_address: u64,
    /// `bar.sync`/`bar.red` warp instructions.
    pub barrier_instructions: u64,
    /// Blocks run.
    pub blocks: u64,
}

fn ratio(a: u64, b: u64) -> Option<f64> {
    (b > 0).then(|| a as f64 / b as f64)
}

impl Counters {
    /// Adds `o`'s counts to these.
    pub fn add(&mut self, o: &Counters) {
        self.warp_instructions += o.warp_instructions;
        for (class, n) in &o.by_class {
            *self.by_class.entry(class.clone()).or_default() += n;
        }
        self.thread_instructions += o.thread_instructions;
        self.thread_instructions_pred_on += o.thread_instructions_pred_on;
        self.branches += o.branches;
        self.divergent_branches += o.divergent_branches;
        for (a, b) in [
            (&mut self.global_loads, o.global_loads),
            (&mut self.global_stores, o.global_stores),
        ] {
            a.requests += b.requests;
            a.sectors += b.sectors;
            a.bytes_requested += b.bytes_requested;
        }
        for (a, b) in [
            (&mut self.shared_loads, o.shared_loads),
            (&mut self.shared_stores, o.shared_stores),
        ] {
            a.requests += b.requests;
            a.wavefronts += b.wavefronts;
            a.ideal_wavefronts += b.ideal_wavefronts;
        }
        self.atomic_requests += o.atomic_requests;
        self.atomic_lanes += o.atomic_lanes;
        self.atomic_same_address += o.atomic_same_address;
        self.barrier_instructions += o.barrier_instructions;
        self.blocks += o.blocks;
    }

    /// Average active lanes per warp instruction over 32.
    pub fn simt_efficiency(&self) -> Option<f64> {
        ratio(self.thread_instructions, self.warp_instructions * 32)
    }

    /// Branches whose lanes all went one way, over branches (Nsight's branch efficiency).
    pub fn branch_efficiency(&self) -> Option<f64> {
        ratio(self.branches - self.divergent_branches, self.branches)
    }

    /// 32-byte sectors per global load request (4 for 32 coalesced `f32`s, 32 at worst).
    pub fn load_sectors_per_request(&self) -> Option<f64> {
        ratio(self.global_loads.sectors, self.global_loads.requests)
    }

    /// 32-byte sectors per global store request.
    pub fn store_sectors_per_request(&self) -> Option<f64> {
        ratio(self.global_stores.sectors, self.global_stores.requests)
    }

    /// Shared-memory wavefronts per request, loads and stores together (1: no bank conflicts).
    pub fn shared_wavefronts_per_request(&self) -> Option<f64> {
        let (l, s) = (&self.shared_loads, &self.shared_stores);
        ratio(l.wavefronts + s.wavefronts, l.requests + s.requests)
    }

    /// Bytes the lanes asked of global memory, and the bytes its sectors move.
    pub fn global_bytes(&self) -> (u64, u64) {
        let (l, s) = (&self.global_loads, &self.global_stores);
        (
            l.bytes_requested + s.bytes_requested,
            32 * (l.sectors + s.sectors),
        )
    }
}

/// One launch, as the emulator appends it to [`PROFILE_ENV`]'s file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaunchRecord {
    /// The kernel's PTX entry name.
    pub kernel: String,
    /// Grid and block dimensions.
    pub grid: [u32; 3],
    /// Threads per block in x, y, z.
    pub block: [u32; 3],
    /// Dynamic shared memory per block, bytes.
    pub dynamic_shared_bytes: u32,
    /// Static shared memory per block the PTX declares, bytes.
    pub static_shared_bytes: u32,
    /// Registers from the PTX's declarations (ptxas allocates fewer): used only when ptxas's
    /// report does not have the kernel.
    pub registers_estimate: u32,
    /// What the launch executed.
    pub counters: Counters,
}

impl LaunchRecord {
    /// Threads per block and blocks in the grid.
    pub fn shape(&self) -> (u32, u64) {
        let threads = self.block.iter().product();
        (threads, self.grid.iter().map(|&g| g as u64).product())
    }
}

/// The records in `path` from byte `from` on, and the offset after the last whole line.
///
/// # Errors
/// The file cannot be read, or a line is not a record (its number and why).
pub fn read_from(path: &Path, from: u64) -> Result<(Vec<LaunchRecord>, u64), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let rest = text.get(from as usize..).unwrap_or("");
    let mut records = Vec::new();
    let mut end = from;
    for (i, line) in rest.split_inclusive('\n').enumerate() {
        if !line.ends_with('\n') {
            break;
        }
        end += line.len() as u64;
        if line.trim().is_empty() {
            continue;
        }
        let record = serde_json::from_str(line)
            .map_err(|e| format!("{}: record {}: {e}", path.display(), i + 1))?;
        records.push(record);
    }
    Ok((records, end))
}

/// Every record in `path`.
///
/// # Errors
/// As [`read_from`].
pub fn read(path: &Path) -> Result<Vec<LaunchRecord>, String> {
    read_from(path, 0).map(|(records, _)| records)
}

/// Registers per thread and static shared bytes ptxas gave `kernel` in `report` (the table
/// [`crate::KERNELS_PTXAS_REPORT`] holds).
pub fn ptxas_resources(report: &str, kernel: &str) -> Option<(u32, u32)> {
    report.lines().find_map(|line| {
        let mut words = line.split_whitespace();
        (words.next()? == kernel).then_some(())?;
        let registers = words.next()?.parse().ok()?;
        let shared = words.next()?.parse().ok()?;
        Some((registers, shared))
    })
}

/// One kernel's launches summed, with occupancy and the estimate on a GPU.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelRow {
    /// The kernel's PTX entry name.
    pub kernel: String,
    /// Its launches.
    pub launches: u64,
    /// Their counters, summed.
    pub counters: Counters,
    /// Registers per thread, and where from: ptxas's report or the PTX's declarations.
    pub registers: u32,
    /// Whether `registers` is ptxas's count (else the PTX's declarations).
    pub registers_from_ptxas: bool,
    /// Theoretical occupancy of its (first launch's) block shape; `None` if no block fits.
    pub occupancy: Option<Occupancy>,
    /// The estimate, summed over its launches.
    pub estimate: Estimate,
}

/// `records` grouped by kernel (in the order first launched), on `gpu`; registers and static
/// shared memory from `ptxas_report` (ptxas's table) where it has the kernel.
pub fn rows(records: &[LaunchRecord], gpu: &Gpu, ptxas_report: &str) -> Vec<KernelRow> {
    let mut rows: Vec<KernelRow> = Vec::new();
    for record in records {
        let (threads, blocks) = record.shape();
        let e = estimate(gpu, &record.counters, blocks);
        if let Some(row) = rows.iter_mut().find(|r| r.kernel == record.kernel) {
            row.launches += 1;
            row.counters.add(&record.counters);
            row.estimate.seconds += e.seconds;
            row.estimate.memory_seconds += e.memory_seconds;
            row.estimate.compute_seconds += e.compute_seconds;
            continue;
        }
        let ptxas = ptxas_resources(ptxas_report, &record.kernel);
        let (registers, shared) =
            ptxas.unwrap_or((record.registers_estimate, record.static_shared_bytes));
        let shared = shared + record.dynamic_shared_bytes;
        rows.push(KernelRow {
            kernel: record.kernel.clone(),
            launches: 1,
            counters: record.counters.clone(),
            registers,
            registers_from_ptxas: ptxas.is_some(),
            occupancy: occupancy(gpu, threads, registers, shared),
            estimate: e,
        });
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ptxas_rows_are_found_by_kernel_name() {
        let report = "ptxas resources for sm_70 (2 kernels)\n\
                      kernel  registers  shared B  stack B\n\
                      dot_partial  22  128  0\n\
                      dot_partial_f64  23  256  0\n";
        assert_eq!(ptxas_resources(report, "dot_partial"), Some((22, 128)));
        assert_eq!(ptxas_resources(report, "dot_partial_f64"), Some((23, 256)));
        assert_eq!(ptxas_resources(report, "dot"), None);
    }

    #[test]
    fn a_report_ptxas_made_at_run_time_is_read_as_the_builds_is() {
        // `ferrocuda profile` assembles the CUDA C twins' PTX and passes ptxas's report, as
        // `ferrocuda_builder` prints it, where the library's own report goes.
        let kernel = |name: &str, registers, shared_bytes| ferrocuda_builder::KernelResources {
            name: name.into(),
            registers,
            shared_bytes,
            stack_frame_bytes: 8,
            ..Default::default()
        };
        let report = ferrocuda_builder::PtxasReport {
            arch: "sm_90".into(),
            kernels: vec![
                kernel("matmul_blocked", 96, 8448),
                kernel("vector_add", 16, 0),
            ],
            warnings: vec!["stack size for entry function cannot be statically determined".into()],
        }
        .to_string();
        assert_eq!(ptxas_resources(&report, "matmul_blocked"), Some((96, 8448)));
        assert_eq!(ptxas_resources(&report, "vector_add"), Some((16, 0)));
        assert_eq!(ptxas_resources(&report, "stack"), None);
    }

    #[test]
    fn the_estimate_is_the_larger_of_memory_and_compute() {
        let h200 = gpu("h200").unwrap();
        let mut c = Counters::default();
        // 2^20 sectors (32 MiB) over 4.8 TB/s.
        c.global_loads.sectors = 1 << 20;
        c.warp_instructions = 1000;
        let e = estimate(h200, &c, 10_000);
        assert_eq!(e.memory_seconds, (32u64 << 20) as f64 / 4.8e12);
        assert_eq!(e.seconds, e.memory_seconds);
        assert_eq!(e.bound(), "memory");
        // 132 SMs × 4 warp instructions per clock at 1.98 GHz.
        c.warp_instructions = 132 * 4 * 1_980_000_000;
        let e = estimate(h200, &c, 10_000);
        assert!((e.compute_seconds - 1.0).abs() < 1e-9, "{e:?}");
        assert_eq!(e.bound(), "compute");
        // One block uses one SM of 132.
        let one = estimate(h200, &c, 1);
        assert!((one.compute_seconds - 132.0).abs() < 1e-6, "{one:?}");
    }

    #[test]
    fn tensor_instructions_take_the_tensor_cores_rate() {
        let h200 = gpu("h200").unwrap();
        // A million mma.m16n8k16 (2·16·8·16 = 4096 flops each) at 989.5 dense FP16 TFLOPS:
        // 4.14 µs, over the 0.96 µs their issue takes (132 SMs × 4 per clock at 1.98 GHz).
        let c = Counters {
            warp_instructions: 1_000_000,
            by_class: [("tensor".to_string(), 1_000_000)].into(),
            ..Default::default()
        };
        let e = estimate(h200, &c, 10_000);
        let expected = 1e6 * 4096.0 / 989.5e12;
        assert!((e.compute_seconds / expected - 1.0).abs() < 1e-12, "{e:?}");
        // The A100's 312 TFLOPS: 3.2× the H200's time.
        let a100 = estimate(gpu("a100").unwrap(), &c, 10_000);
        assert!((a100.compute_seconds / (1e6 * 4096.0 / 312e12) - 1.0).abs() < 1e-12);
    }
}
