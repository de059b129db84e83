//! The CPU executor: runs every (block, thread) of a launch with the kernel's own Rust code.
//!
//! Blocks run in parallel on rayon's pool (all cores); the threads of one block run one after
//! another inside the kernel's CPU entry (`gpu_std::cpu::run_block`), in a tight loop. A panic in
//! kernel code is caught per block and returned as an error that names the block and thread.

use crate::error::{Error, Result};
use crate::launch::{self, Arg, LaunchConfig, ParamSlot};
use gpu_std::abi::CpuEntry;
use gpu_std::cpu::{take_current, BarrierUnsupported, BlockContext};
use gpu_std::Dim3;
use rayon::prelude::*;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The packed PTX parameters, shared by the worker threads that run the blocks.
struct Params(Vec<*const u8>);

// SAFETY: the pointers lead to the launch's argument slots and to host buffers that the launch
// borrows (`&[T]` shared, `&mut [T]` exclusively) until every block has finished; kernels only
// read inputs and write outputs through `Out`, whose host accesses are atomic.
unsafe impl Sync for Params {}

pub(crate) fn launch(
    kernel: &'static str,
    entry: CpuEntry,
    config: &LaunchConfig,
    args: Vec<Arg<'_>>,
) -> Result<()> {
    let mut slots: Vec<ParamSlot> = Vec::new();
    for arg in &args {
        match arg {
            Arg::HostSlice { bytes, len } => {
                slots.push(ParamSlot::new(bytes.as_ptr() as u64));
                slots.push(ParamSlot::new(*len as u64));
            }
            Arg::HostOutput { bytes, len } => {
                slots.push(ParamSlot::new(bytes.as_ptr() as u64));
                slots.push(ParamSlot::new(*len as u64));
            }
            Arg::GpuSlice { .. } | Arg::GpuOutput { .. } => {
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
    let params = Params(slots.iter().map(ParamSlot::as_ptr).collect());

    let grid = config.grid;
    let block_dim = config.block;
    (0..grid.count()).into_par_iter().try_for_each(|linear| {
        let block_idx = Dim3::new(
            (linear % grid.x as u64) as u32,
            (linear / grid.x as u64 % grid.y as u64) as u32,
            (linear / (grid.x as u64 * grid.y as u64)) as u32,
        );
        let block = BlockContext {
            block_idx,
            block_dim,
            grid_dim: grid,
        };
        let params = &params;
        // SAFETY: `params` holds this kernel's PTX parameters (checked against the PTX entry by
        // the caller), pointing at host memory valid for the whole launch.
        catch_unwind(AssertUnwindSafe(|| unsafe { entry(&params.0, &block) }))
            .map_err(|payload| panic_error(kernel, block_idx, block_dim, payload))
    })
}

fn panic_error(
    kernel: &'static str,
    block: Dim3,
    block_dim: Dim3,
    payload: Box<dyn std::any::Any + Send>,
) -> Error {
    let thread = take_current().map_or(Dim3::new(0, 0, 0), |ctx| ctx.thread_idx);
    if payload.is::<BarrierUnsupported>() {
        return Error::BarrierOnCpu {
            kernel,
            block,
            thread,
            threads_per_block: block_dim.count(),
        };
    }
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic with a non-text payload".into());
    Error::KernelPanicked {
        kernel,
        block,
        thread,
        message,
    }
}
