//! [`DeviceProperties`] and [`DeviceKind`]: what a device is and the limits a launch is checked
//! against. Plain data at the bottom of the crate, so that both backends (`cuda`, the CPU
//! executor) and the public [`Device`](crate::Device) can name it without importing each other.

use ferrocuda_std::Dim3;

/// Which kind of device a [`Device`](crate::Device) is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeviceKind {
    /// The CPU executor.
    Cpu,
    /// A CUDA GPU, by driver ordinal.
    Cuda {
        /// The driver's device number.
        ordinal: usize,
    },
}

/// What a device is and the limits every launch on it is checked against.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceProperties {
    /// E.g. "NVIDIA H200" or "CPU executor (16 threads)".
    pub name: String,
    /// GPU or CPU.
    pub kind: DeviceKind,
    /// `(major, minor)` for a GPU, e.g. `(9, 0)`.
    pub compute_capability: Option<(u32, u32)>,
    /// Streaming multiprocessors (GPU) or worker threads (CPU).
    pub multiprocessors: u32,
    /// Most threads in one block.
    pub max_threads_per_block: u32,
    /// Most threads along each block dimension.
    pub max_block_dim: Dim3,
    /// Most blocks along each grid dimension.
    pub max_grid_dim: Dim3,
    /// Most dynamic shared memory per block, in bytes.
    pub max_shared_memory_per_block: u32,
    /// Threads per warp.
    pub warp_size: u32,
}

impl DeviceProperties {
    /// How the PTX emulator's driver (`ptx-emu/driver`, loaded through `FERROCUDA_LIBCUDA`)
    /// names its virtual GPU.
    pub const EMULATOR_NAME: &'static str = "ferrocuda PTX emulator";

    /// Whether this is the PTX emulator's virtual GPU, not hardware: it runs the compiled PTX
    /// through the driver API to check it, and its timings say nothing about a GPU's speed.
    pub fn is_emulator(&self) -> bool {
        matches!(self.kind, DeviceKind::Cuda { .. }) && self.name.starts_with(Self::EMULATOR_NAME)
    }

    /// The CPU executor takes the limits of a CUDA device, so that a launch that passes on the CPU
    /// is also valid on a GPU.
    pub(crate) fn cpu() -> Self {
        let threads = rayon::current_num_threads() as u32;
        DeviceProperties {
            name: format!("CPU executor ({threads} threads)"),
            kind: DeviceKind::Cpu,
            compute_capability: None,
            multiprocessors: threads,
            max_threads_per_block: ferrocuda_std::cpu::MAX_BLOCK_THREADS,
            max_block_dim: Dim3::new(1024, 1024, 64),
            max_grid_dim: Dim3::new(i32::MAX as u32, 65535, 65535),
            max_shared_memory_per_block: 48 * 1024,
            warp_size: 32,
        }
    }
}
