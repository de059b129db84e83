//! What the emulator records per launch ([`LaunchRecord`], with its [`Counters`]) and how to read
//! the JSON-lines file it appends them to.

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
