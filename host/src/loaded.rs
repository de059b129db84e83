//! [`Loaded`]: a [`Module`](crate::Module)'s kernels on either backend, and what the two
//! backends do differently for it: load, launch, hold constant tables, size blocks. The module
//! seam, as [`Storage`](crate::storage::Storage) is a buffer's: `module.rs` and `constant.rs`
//! above it check and ask, and do not match on the backend.

use crate::args::Arg;
use crate::cooperative;
use crate::cpu::{self, CpuLaunch};
use crate::cpu_options::CpuOptions;
use crate::cuda::{GpuDevice, LoadedModule};
use crate::device::Device;
use crate::error::Result;
use crate::launch_config::LaunchConfig;
use crate::lock::lock;
use crate::ptx::{Ptx, PtxInfo};
use ferrocuda_std::abi::{CpuEntry, KernelInfo};
use ferrocuda_std::cpu::ConstantTables;
use std::sync::{Arc, Mutex};

/// A module's kernels on the backend it was loaded on.
pub(crate) enum Loaded {
    /// On the CPU executor the kernels are the program's own code: the module holds its
    /// constant tables, and the device's options and shared-memory limit that its launches use.
    Cpu {
        constants: Mutex<ConstantTables>,
        options: CpuOptions,
        shared_limit_bytes: u32,
    },
    /// On a GPU, the driver's module.
    Gpu {
        gpu: Arc<GpuDevice>,
        module: LoadedModule,
    },
}

impl Loaded {
    /// Loads `ptx` on `device`: on a GPU the driver JIT-compiles it.
    pub(crate) fn load(device: &Device, ptx: &'static Ptx, info: &PtxInfo) -> Result<Loaded> {
        Ok(match device.backend().gpu() {
            Some(gpu) => Loaded::Gpu {
                gpu: gpu.clone(),
                module: gpu.load(ptx, info)?,
            },
            None => Loaded::Cpu {
                constants: Mutex::default(),
                options: device.cpu_options().cloned().unwrap_or_default(),
                shared_limit_bytes: device.properties().max_shared_memory_per_block,
            },
        })
    }

    /// The current bytes of constant table `name`; `None` if it was never set.
    pub(crate) fn constant_bytes(&self, name: &str) -> Option<Vec<u8>> {
        match self {
            Loaded::Gpu { gpu, module } => gpu.constant_bytes(module, name),
            Loaded::Cpu { constants, .. } => lock(constants)
                .iter()
                .find(|(table, _)| *table == name)
                .map(|(_, bytes)| bytes.to_vec()),
        }
    }

    /// Sets constant table `name` to `bytes` (already checked against the table's size).
    pub(crate) fn set_constant(&self, name: &'static str, bytes: &[u8]) -> Result<()> {
        match self {
            Loaded::Gpu { gpu, module } => gpu.set_constant(module, name, bytes),
            Loaded::Cpu { constants, .. } => {
                lock(constants).set(name, bytes);
                Ok(())
            }
        }
    }

    /// The block size for a 1D launch of `kernel` over many elements: the occupancy API's
    /// suggestion on a GPU.
    pub(crate) fn block_size_for(&self, kernel: &'static str) -> Result<u32> {
        match self {
            Loaded::Gpu { gpu, module } => gpu.occupancy_block_size(module, kernel),
            // The largest block: on the CPU a block is the unit a worker runs, and its fixed
            // cost (the first thread alone, the block's state) is paid once per 1024 threads
            // instead of per 256 (main-job vector add on 2 cores: 7.25 → 6.45 ms).
            Loaded::Cpu { .. } => Ok(ferrocuda_std::cpu::MAX_BLOCK_THREADS),
        }
    }

    /// How many blocks of `config`'s shape fit on one multiprocessor at once (on the CPU
    /// executor: one worker thread); `None` where the device has no cooperative launches.
    pub(crate) fn co_resident_blocks_per_sm(
        &self,
        kernel: &'static str,
        config: &LaunchConfig,
    ) -> Result<Option<u32>> {
        let block_threads = config.block.count();
        match self {
            Loaded::Gpu { gpu, module } => gpu.co_resident_blocks_per_sm(
                module,
                kernel,
                block_threads as u32,
                config.shared_mem_bytes,
            ),
            Loaded::Cpu { .. } => Ok(Some(cooperative::cpu_blocks_per_worker(block_threads))),
        }
    }

    /// Runs kernel `info` (its CPU build: `entry`) with checked `args`; `cooperative`: every
    /// block at once; `table`: a constant table set for this launch, by name, and its bytes.
    pub(crate) fn launch(
        &self,
        info: &KernelInfo,
        entry: CpuEntry,
        config: &LaunchConfig,
        args: Vec<Arg<'_>>,
        cooperative: bool,
        table: Option<(&'static str, &[u8])>,
    ) -> Result<()> {
        match self {
            Loaded::Gpu { gpu, module } => {
                let launch = || gpu.launch(module, info.name, config, args, cooperative);
                match table {
                    Some((name, bytes)) => {
                        gpu.launch_carrying(module, name, bytes, config.stream, launch)
                    }
                    None => launch(),
                }
            }
            Loaded::Cpu {
                constants,
                options,
                shared_limit_bytes,
            } => {
                // A carried table is set and the launch's copy taken in one step: concurrent
                // launches carrying other bytes each run with their own.
                let constants = {
                    let mut tables = lock(constants);
                    if let Some((name, bytes)) = table {
                        tables.set(name, bytes);
                    }
                    tables.clone()
                };
                let launch = CpuLaunch {
                    info,
                    entry,
                    config,
                    options,
                    shared_limit_bytes: *shared_limit_bytes,
                    constants: &constants,
                    cooperative,
                };
                cpu::launch(launch, args)
            }
        }
    }
}
