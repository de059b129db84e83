//! Cooperative launches: a kernel with a `Grid` parameter calls `grid.sync()`, which needs every
//! block of the launch resident at once. [`launch_cooperative!`](crate::launch_cooperative) and
//! `Module::launch_cooperative` check the grid against what the device can hold at once (the
//! occupancy API's blocks per multiprocessor × multiprocessors, and the device's
//! cooperative-launch attribute), give the launch its own zeroed barrier word (the kernel's last
//! two PTX parameters), launch with `cuLaunchCooperativeKernel` and wait for it. On the CPU
//! executor every block runs at once on an OS thread of its own.

use crate::device::Device;
use crate::error::{Error, Result};
use crate::launch_config::LaunchConfig;
use crate::lock::lock;
use ferrocuda_std::abi::KernelInfo;
use ferrocuda_std::cpu::{with_grid_barrier, GridBarrier};
use ferrocuda_std::Dim3;
use std::sync::Mutex;

/// Threads one CPU "multiprocessor" (a worker thread) holds at once, as a GPU SM does; at most
/// [`CPU_BLOCKS_PER_WORKER`] blocks.
pub(crate) const CPU_THREADS_PER_WORKER: u32 = 2048;
/// Blocks one CPU worker holds at once, as a GPU SM's limit (32 on sm_70 to sm_90).
pub(crate) const CPU_BLOCKS_PER_WORKER: u32 = 32;

/// A plain launch of a cooperative kernel would hang at its first `grid.sync()` once the grid
/// is larger than what is resident: refused, for every grid.
pub(crate) fn refuse_plain_launch(info: &KernelInfo) -> Result<()> {
    if info.cooperative {
        return Err(Error::NeedsCooperativeLaunch { kernel: info.name });
    }
    Ok(())
}

/// The most blocks of `config`'s shape resident at once (`per_sm × multiprocessors`), given
/// `per_sm` (`None`: no cooperative launch on the device).
pub(crate) fn check_co_resident(
    info: &KernelInfo,
    config: &LaunchConfig,
    device: &Device,
    per_sm: Option<u32>,
) -> Result<()> {
    let sms = device.properties().multiprocessors;
    let blocks = config.grid.count();
    let (max_blocks, detail) = match per_sm {
        None => (
            0,
            "the device does not support cooperative launches".to_string(),
        ),
        Some(per_sm) => (
            u64::from(per_sm) * u64::from(sms),
            format!("{per_sm} per multiprocessor x {sms} multiprocessors"),
        ),
    };
    if blocks <= max_blocks {
        return Ok(());
    }
    Err(Error::CooperativeGridTooLarge {
        kernel: info.name,
        blocks,
        max_blocks,
        block_threads: config.block.count(),
        shared_bytes: config.shared_mem_bytes,
        device: device.to_string(),
        detail,
    })
}

/// The CPU executor's blocks per worker for blocks of `block_threads`: a GPU SM's rule, with
/// [`CPU_THREADS_PER_WORKER`] threads and [`CPU_BLOCKS_PER_WORKER`] blocks.
pub(crate) fn cpu_blocks_per_worker(block_threads: u64) -> u32 {
    let by_threads = u64::from(CPU_THREADS_PER_WORKER) / block_threads.max(1);
    by_threads.min(u64::from(CPU_BLOCKS_PER_WORKER)) as u32
}

/// Runs `run_block(linear)` for each of `blocks` blocks of `kernel` at once, each on its own OS
/// thread with the launch's grid barrier. The error of the block that failed first is the
/// launch's: a block that ends (or fails) stops the blocks waiting at a grid sync, which fail
/// after it. A block whose thread cannot be started (the process's thread or address-space
/// limits) fails the launch the same way, so the blocks already started never wait for it.
pub(crate) fn run_blocks_at_once(
    kernel: &'static str,
    blocks: u64,
    block_at: impl Fn(u64) -> Dim3 + Sync,
    run_block: impl Fn(u64) -> Result<()> + Sync,
) -> Result<()> {
    let barrier = GridBarrier::new(blocks);
    let first_error: Mutex<Option<Error>> = Mutex::new(None);
    let fail = |error: Error| {
        let mut first = lock(&first_error);
        first.get_or_insert(error);
    };
    std::thread::scope(|scope| {
        for linear in 0..blocks {
            let (barrier, fail) = (&barrier, &fail);
            let (block_at, run_block) = (&block_at, &run_block);
            let started = std::thread::Builder::new()
                .name(format!("ferrocuda block {linear}"))
                .spawn_scoped(scope, move || {
                    let outcome = with_grid_barrier(barrier, || run_block(linear));
                    let failed = outcome.is_err();
                    if let Err(error) = outcome {
                        fail(error);
                    }
                    barrier.block_ended(block_at(linear), failed);
                });
            if let Err(cause) = started {
                // The error first, then the barrier: a started block released by it reports
                // only that it was abandoned, and this is the launch's error.
                fail(Error::CooperativeBlockNotStarted {
                    kernel,
                    block: block_at(linear),
                    blocks,
                    cause: cause.to_string(),
                });
                barrier.block_ended(block_at(linear), true);
                break;
            }
        }
    });
    match first_error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(error) => Err(error),
        None => Ok(()),
    }
}

/// Launches a kernel that takes a `Grid` (see `ferrocuda_std::grid`): like [`launch!`], with
/// `[grid, block]` or `[grid, block; shared = bytes]`, through `Module::launch_cooperative`.
///
/// ```ignore
/// launch_cooperative!(kernels, grid_sum[blocks, 256](&x, &mut partial, &mut total))?;
/// ```
///
/// [`launch!`]: crate::launch
#[macro_export]
macro_rules! launch_cooperative {
    // One arm, the shared-memory size optional, so that the macro never names itself
    // (`$crate::launch_cooperative!` would make this file import the crate root).
    ($module:expr, $kernel:path [$grid:expr, $block:expr $(; shared = $shared:expr)?] ($($arg:expr),* $(,)?)) => {
        match $crate::LaunchConfig::try_new($grid, $block) {
            ::core::result::Result::Ok(config) => $module.launch_cooperative(
                &$kernel,
                config $(.with_shared_mem_bytes($shared))?,
                ($($arg,)*),
            ),
            ::core::result::Result::Err(error) => ::core::result::Result::Err(error),
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cpu_worker_holds_blocks_as_an_sm_does() {
        assert_eq!(cpu_blocks_per_worker(1024), 2);
        assert_eq!(cpu_blocks_per_worker(256), 8);
        assert_eq!(cpu_blocks_per_worker(32), 32);
        assert_eq!(cpu_blocks_per_worker(1), 32);
    }
}
