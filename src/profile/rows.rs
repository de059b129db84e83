//! One row per kernel: a launch file's records summed by kernel, with registers from ptxas's
//! report, theoretical occupancy and the roofline estimate on a GPU.

use super::estimate::{estimate, Estimate};
use super::gpus::{occupancy, Gpu, Occupancy};
use super::records::{Counters, LaunchRecord};

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
    use crate::profile::estimate::estimate;
    use crate::profile::gpus::gpu;
    use crate::profile::records::Counters;

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
