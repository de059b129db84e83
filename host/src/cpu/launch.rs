//! The CPU executor: runs every (block, thread) of a launch with the kernel's own Rust code.
//!
//! Blocks run in parallel on rayon's pool (all cores), or, for a cooperative launch, all at once
//! on OS threads of their own (`cooperative.rs`); the threads of one block run inside the
//! kernel's CPU entry (`ferrocuda_std::cpu::run_block`): one after another in a tight loop, or, once a
//! thread reaches a barrier or warp operation, cooperatively. A panic in kernel code, a failed
//! check of checked mode and a divergent barrier are caught per block and returned as an error
//! that names the kernel, the block and the thread.

use crate::cpu_options::CpuOptions;
use crate::error::{Error, Result};
use crate::launch::{self, Arg, ParamSlot};
use crate::launch_config::LaunchConfig;
use ferrocuda_std::abi::{CpuEntry, KernelInfo, ParamClass};
use ferrocuda_std::cpu::{
    quiet_kernel_panics, take_current, take_panic_location, with_constants, with_output_checks,
    with_print_capture, BlockContext, BugReport, ConstantTables, Interrupted, Interruption,
    OutputShadows,
};
use ferrocuda_std::Dim3;
use rayon::prelude::*;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The packed PTX parameters, shared by the worker threads that run the blocks.
struct Params(Vec<*const u8>);

// SAFETY: the pointers lead to the launch's argument slots and to host buffers that the launch
// borrows (`&[T]` shared, `&mut [T]` exclusively) until every block has finished; kernels only
// read inputs and write outputs through `Out`, whose host accesses are atomic.
unsafe impl Sync for Params {}

/// One launch on the CPU executor: what it runs, over which grid, and with what. The device's
/// part (its options, its shared-memory limit) comes as plain values: the backend sits below
/// `Device`.
pub(crate) struct CpuLaunch<'a> {
    /// The kernel.
    pub(crate) info: &'a KernelInfo,
    /// Its CPU build.
    pub(crate) entry: CpuEntry,
    /// Its grid, block and dynamic shared memory.
    pub(crate) config: &'a LaunchConfig<'a>,
    /// The device's CPU executor options.
    pub(crate) options: &'a CpuOptions,
    /// The device's shared memory per block, in bytes.
    pub(crate) shared_limit_bytes: u32,
    /// The constant tables the launch reads (its own copy).
    pub(crate) constants: &'a ConstantTables,
    /// Whether every block runs at once (a cooperative launch).
    pub(crate) cooperative: bool,
}

/// Runs `launch`'s kernel over its grid with `args`.
pub(crate) fn launch(launch: CpuLaunch<'_>, mut args: Vec<Arg<'_>>) -> Result<()> {
    let CpuLaunch {
        info,
        entry,
        config,
        options,
        shared_limit_bytes,
        constants,
        cooperative,
    } = launch;
    let kernel = info.name;
    let output_names = info
        .params
        .iter()
        .filter(|p| p.class == ParamClass::Output)
        .map(|p| p.name);
    let mut slots: Vec<ParamSlot> = Vec::new();
    for arg in &mut args {
        match arg {
            Arg::HostSlice { bytes, len } => {
                slots.push(ParamSlot::new(bytes.as_ptr() as u64));
                slots.push(ParamSlot::new(*len as u64));
            }
            Arg::HostOutput { bytes, len } => {
                // `as_mut_ptr`: the kernel writes through this address, so it must come from the
                // `&mut` (an `as_ptr` address may only be read through; Miri caught it).
                slots.push(ParamSlot::new(bytes.as_mut_ptr() as u64));
                slots.push(ParamSlot::new(*len as u64));
            }
            Arg::GpuSlice { .. }
            | Arg::GpuOutput { .. }
            | Arg::CudarcSlice { .. }
            | Arg::CudarcOutput { .. } => {
                return Err(Error::WrongDevice {
                    what: "a buffer",
                    owner: format!("CUDA device {}", arg.gpu_ordinal().unwrap_or_default()),
                    device: "the CPU executor".into(),
                });
            }
            Arg::Scalar(slot) => slots.push(*slot),
        }
    }
    launch::debug_check_packed(launch::expected_packing(&args), &slots);
    // A kernel's panic is returned as an error; the default hook would also print it.
    quiet_kernel_panics();
    let params = Params(slots.iter().map(ParamSlot::as_ptr).collect());

    let grid = config.grid;
    let block_dim = config.block;
    // Checked mode: a shadow per output, for the race check of `Out` writes.
    let mut shadows = OutputShadows::new();
    if options.checked {
        let outputs = args.iter().filter_map(|arg| match arg {
            Arg::HostOutput { bytes, len } => Some((bytes.as_ptr(), *len)),
            _ => None,
        });
        for ((base, len), name) in outputs.zip(output_names) {
            shadows.track(name, base, len);
        }
    }
    // A deadline too far away for the clock to represent can never pass: no deadline.
    let deadline = options
        .deadline
        .and_then(|after| std::time::Instant::now().checked_add(after));
    let block_at = |linear: u64| {
        Dim3::new(
            (linear % grid.x as u64) as u32,
            (linear / grid.x as u64 % grid.y as u64) as u32,
            (linear / (grid.x as u64 * grid.y as u64)) as u32,
        )
    };
    // `blocks` blocks along x from `linear` on, in one call of the entry.
    let run_blocks = |linear: u64, blocks: u32| {
        let block_idx = block_at(linear);
        let block = BlockContext {
            block_idx,
            block_dim,
            grid_dim: grid,
            dynamic_shared_bytes: config.shared_mem_bytes,
            shared_limit_bytes,
            checked: options.checked,
            deadline,
            stack_bytes: options.stack_bytes,
            coroutines: options.force_coroutines,
            blocks,
        };
        let params = &params;
        let run = || {
            with_output_checks(&shadows, || {
                with_constants(constants, || {
                    // SAFETY: `params` holds this kernel's PTX parameters (checked against the PTX
                    // entry by the caller), pointing at host memory valid for the whole launch.
                    unsafe { entry(&params.0, &block) }
                })
            })
        };
        let capture = options.print_capture.as_ref();
        catch_unwind(AssertUnwindSafe(|| with_print_capture(capture, run)))
            .map_err(|payload| panic_error(kernel, block_idx, options, payload))
    };
    if cooperative {
        let run_block = |linear: u64| run_blocks(linear, 1);
        return crate::cooperative::run_blocks_at_once(kernel, grid.count(), block_at, run_block);
    }
    // Runs of up to 64 blocks along a row of the grid per call, fewer where the grid has too few
    // blocks to keep every worker busy (at least 8 calls per worker): the executor's own cost
    // per call (the switch to the block's guarded stack, the launch's thread-local state, the
    // split block's state) was, with runs of 16, a third of the vector add's time.
    let workers = rayon::current_num_threads() as u64;
    let per_run = (grid.count() / (8 * workers)).clamp(1, 64) as u32;
    let runs_per_row = grid.x.div_ceil(per_run) as u64;
    let rows = grid.count() / grid.x as u64;
    (0..rows * runs_per_row)
        .into_par_iter()
        .try_for_each(|run| {
            let (row, k) = (run / runs_per_row, run % runs_per_row);
            let first_x = k * per_run as u64;
            let blocks = (grid.x as u64 - first_x).min(per_run as u64) as u32;
            run_blocks(row * grid.x as u64 + first_x, blocks)
        })
}

fn panic_error(
    kernel: &'static str,
    block: Dim3,
    options: &CpuOptions,
    payload: Box<dyn std::any::Any + Send>,
) -> Error {
    // SAFETY: the block's `run_block` has unwound (this is its `catch_unwind`'s error path, on
    // the worker that ran it), so no block runs on this thread; this clears it before the next.
    let context = unsafe { take_current() };
    let thread = context.map_or(Dim3::new(0, 0, 0), |ctx| ctx.thread_idx);
    // The block that failed, of the run of blocks this call ran.
    let block = context.map_or(block, |ctx| ctx.block_idx);
    let payload = match payload.downcast::<Interrupted>() {
        Ok(stop) => return interrupted_error(kernel, block, options, *stop),
        Err(payload) => payload,
    };
    let payload = match payload.downcast::<BugReport>() {
        Ok(report) => {
            return Error::KernelBug {
                kernel,
                block,
                thread: report.thread,
                bug: Box::new(report.bug),
            }
        }
        Err(payload) => payload,
    };
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic with a non-text payload".into());
    let message = explain_negative_index(message);
    Error::KernelPanicked {
        kernel,
        block,
        thread,
        message: match take_panic_location() {
            Some(location) => format!("{message} (at {location})"),
            None => message,
        },
    }
}

fn interrupted_error(
    kernel: &'static str,
    block: Dim3,
    options: &CpuOptions,
    stop: Interrupted,
) -> Error {
    match stop.why {
        Interruption::StackOverflow { stack_bytes } => Error::StackOverflow {
            kernel,
            block,
            thread: stop.thread,
            stack_bytes,
        },
        // The only other reason today; `Interruption` is non-exhaustive.
        _ => Error::DeadlineExceeded {
            kernel,
            block,
            thread: stop.thread,
            deadline: options.deadline.unwrap_or_default(),
        },
    }
}

/// Rust's own bounds-check message gives a negative index as the huge number it wrapped to; say
/// what it was.
fn explain_negative_index(message: String) -> String {
    let index = message
        .strip_prefix("index out of bounds: the len is ")
        .and_then(|rest| rest.split_once(" but the index is "))
        .and_then(|(_, index)| index.trim().parse::<usize>().ok());
    match index {
        Some(index) if (index as isize) < 0 => format!(
            "{message} (a negative index, {}, that wrapped around)",
            index as isize
        ),
        _ => message,
    }
}

#[cfg(test)]
mod tests {
    use super::explain_negative_index;

    #[test]
    fn a_wrapped_negative_index_is_named_as_such() {
        let wrapped = format!(
            "index out of bounds: the len is 3 but the index is {}",
            usize::MAX - 1
        );
        assert_eq!(
            explain_negative_index(wrapped.clone()),
            format!("{wrapped} (a negative index, -2, that wrapped around)")
        );
        let plain = "index out of bounds: the len is 3 but the index is 3".to_string();
        assert_eq!(explain_negative_index(plain.clone()), plain);
    }
}
