//! Kernel launches: the configuration is checked as the driver checks it, the parameters are
//! read at the sizes the PTX declares, and the grid runs in the emulator before the call
//! returns. A fault makes the function's context sticky-faulted with the code hardware gives,
//! and, as kernels are asynchronous on hardware, shows at the next call, not at the launch.

use crate::deferred::{Launch, Work, DEFER};
use crate::device::SM_COUNT;
use crate::ffi::{guard, id_of, Outcome};
use crate::module::registers;
use crate::occupancy::{blocks_per_sm, Resources};
use crate::state::DRIVER;
use cudarc::driver::sys::{CUfunction, CUresult, CUstream};
use ferrocuda_ptx_emu::{
    launch_with_peers, FaultKind, LaunchDims, LaunchKind, LaunchOptions, Memory,
};
use std::ffi::{c_uint, c_void};
use std::sync::LazyLock;
use std::time::{Duration, Instant};

/// The environment variable that sets how long one launch may run on the emulator, in
/// milliseconds (`0`: no deadline); [`DEFAULT_DEADLINE`] without it.
pub(crate) const DEADLINE_ENV: &str = "FERROCUDA_EMU_DEADLINE_MS";

/// A launch still running after 10 minutes fails with `CUDA_ERROR_LAUNCH_TIMEOUT`: far longer
/// than any launch of the tests or the main job takes on the emulator, far shorter than CI's
/// 90 minutes.
pub(crate) const DEFAULT_DEADLINE: Duration = Duration::from_secs(600);

/// [`DEADLINE_ENV`] read once per process (a value that is not a whole number of milliseconds
/// is said on stderr and the default kept).
static DEADLINE: LazyLock<Option<Duration>> = LazyLock::new(|| {
    let Some(value) = std::env::var_os(DEADLINE_ENV) else {
        return Some(DEFAULT_DEADLINE);
    };
    match value.to_str().and_then(|v| v.trim().parse::<u64>().ok()) {
        Some(0) => None,
        Some(ms) => Some(Duration::from_millis(ms)),
        None => {
            eprintln!(
                "ferrocuda PTX emulator: {DEADLINE_ENV}={value:?} is not a whole number of \
                 milliseconds; the deadline stays {} s",
                DEFAULT_DEADLINE.as_secs()
            );
            Some(DEFAULT_DEADLINE)
        }
    }
});

/// The code the driver returns for a fault, and whether it is sticky (the context is lost).
pub(crate) fn fault_code(kind: FaultKind) -> (CUresult, bool) {
    match kind {
        FaultKind::IllegalAddress => (CUresult::CUDA_ERROR_ILLEGAL_ADDRESS, true),
        FaultKind::MisalignedAddress => (CUresult::CUDA_ERROR_MISALIGNED_ADDRESS, true),
        // `trap` (Rust's panics and bounds checks) is an "unspecified launch failure".
        FaultKind::Trap => (CUresult::CUDA_ERROR_LAUNCH_FAILED, true),
        FaultKind::Divergence => (CUresult::CUDA_ERROR_LAUNCH_FAILED, true),
        FaultKind::InvalidLaunch => (CUresult::CUDA_ERROR_INVALID_VALUE, false),
        FaultKind::Unsupported => (CUresult::CUDA_ERROR_NOT_SUPPORTED, false),
        // A GPU's watchdog ends such a kernel with this, and the context is lost.
        FaultKind::Timeout => (CUresult::CUDA_ERROR_LAUNCH_TIMEOUT, true),
        // Nothing ran: the launch itself fails, as one the GPU cannot hold does.
        FaultKind::OutOfResources => (CUresult::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, false),
    }
}

/// Whether `FERROCUDA_EMU_STATS` asks for one line per launch with its instruction rate.
fn stats_wanted() -> bool {
    std::env::var_os("FERROCUDA_EMU_STATS").is_some_and(|v| !v.is_empty() && v != "0")
}

/// The launch's checks and run, for cuLaunchKernel and cuLaunchCooperativeKernel.
///
/// # Safety
/// `params` holds one pointer per kernel parameter, each to the parameter's bytes.
unsafe fn launch(
    f: CUfunction,
    grid: [c_uint; 3],
    block: [c_uint; 3],
    shared: c_uint,
    stream: CUstream,
    params: *mut *mut c_void,
    cooperative: bool,
) -> Outcome {
    let (module, info, context) = {
        let mut state = DRIVER.state()?;
        let function = state
            .functions
            .get(&id_of(f))
            .ok_or(CUresult::CUDA_ERROR_INVALID_HANDLE)?;
        let (context, info, module) = (function.context, function.info.clone(), function.module);
        let max_dynamic = function.max_dynamic_shared;
        let resources = Resources {
            registers: registers(function),
            static_shared: info.static_shared_bytes,
            max_threads: info.max_threads_per_block.min(1024),
        };
        if state.stream_context(id_of(stream))? != context {
            return Err(CUresult::CUDA_ERROR_INVALID_CONTEXT);
        }
        state.usable(context)?;
        let threads = block.iter().map(|&d| u64::from(d)).product::<u64>();
        let fits = grid.iter().all(|&d| d > 0)
            && block.iter().all(|&d| d > 0)
            && grid[1] <= 65535
            && grid[2] <= 65535
            && grid[0] <= i32::MAX as u32
            && block[0] <= 1024
            && block[1] <= 1024
            && block[2] <= 64
            && threads <= u64::from(resources.max_threads);
        if !fits || shared > max_dynamic {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        if cooperative {
            let resident =
                u64::from(blocks_per_sm(resources, threads as u32, shared)) * SM_COUNT as u64;
            if grid.iter().map(|&d| u64::from(d)).product::<u64>() > resident {
                return Err(CUresult::CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE);
            }
        }
        let module = state
            .modules
            .get(&module)
            .ok_or(CUresult::CUDA_ERROR_INVALID_HANDLE)?;
        (module.module.clone(), info, context)
    };
    if params.is_null() && !info.params.is_empty() {
        return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
    }
    let mut args: Vec<&[u8]> = Vec::with_capacity(info.params.len());
    for (i, param) in info.params.iter().enumerate() {
        // SAFETY: `params` holds one pointer per parameter of the kernel (the caller's
        // contract), each to the parameter's bytes, at the size the PTX declares.
        let arg = unsafe { params.add(i).read() };
        if arg.is_null() {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        // SAFETY: as above: `arg` points to `param.size` readable bytes for the call.
        args.push(unsafe { std::slice::from_raw_parts(arg.cast::<u8>(), param.size as usize) });
    }
    let dims = LaunchDims {
        grid,
        block,
        dynamic_shared_bytes: shared,
    };
    let launch = Launch {
        context,
        module,
        kernel: info.name,
        dims,
        params: args.iter().map(|a| a.to_vec()).collect(),
        cooperative,
    };
    if *DEFER {
        let work = Work::Launch(Box::new(launch));
        DRIVER.state()?.defer(context, id_of(stream), work);
        return Ok(());
    }
    run(&launch)
}

/// Runs a launch the checks passed: to its end, or to a fault, which is sticky on the launch's
/// context (`Ok`) or the launch's error.
pub(crate) fn run(launch: &Launch) -> Outcome {
    let Launch {
        context,
        ref module,
        ref kernel,
        dims,
        ref params,
        cooperative,
    } = *launch;
    let (grid, block) = (dims.grid, dims.block);
    let args: Vec<&[u8]> = params.iter().map(Vec::as_slice).collect();
    let start = Instant::now();
    let mut printed = Vec::new();
    let kind = match cooperative {
        true => LaunchKind::Cooperative,
        false => LaunchKind::Plain,
    };
    let options = LaunchOptions {
        kind,
        deadline: *DEADLINE,
        profile: crate::profile::wanted(),
    };
    // The memory of the function's device, and of the devices its context enabled peer access
    // to: an address of any other device's is not in them.
    let (memory, peers) = {
        let state = DRIVER.state()?;
        let memory = DRIVER.memory_of(&state, context).clone();
        (memory, DRIVER.peer_memories(&state, context))
    };
    let peers: Vec<&Memory> = peers.iter().map(|p| &**p).collect();
    let outcome = launch_with_peers(
        module,
        kernel,
        dims,
        &args,
        &memory,
        &peers,
        &options,
        &mut printed,
    );
    // The kernel's printf buffer: a GPU's driver prints it at the next synchronisation; this
    // launch is over, so that is now.
    ferrocuda_ptx_emu::write_printed(&printed);
    match outcome {
        Ok(stats) => {
            if let (Some(counters), Some(info)) = (&stats.profile, module.kernel(kernel)) {
                let registers = info.registers.min(255);
                crate::profile::append(&crate::profile::record(&info, registers, dims, counters));
            }
            if stats_wanted() {
                let seconds = start.elapsed().as_secs_f64();
                eprintln!(
                    "ferrocuda PTX emulator: {} {grid:?}x{block:?}: {} instructions in {:.1} ms ({:.1} M/s)",
                    kernel,
                    stats.instructions,
                    seconds * 1e3,
                    stats.instructions as f64 / seconds.max(1e-9) / 1e6
                );
            }
            Ok(())
        }
        Err(fault) => {
            let (code, sticky) = fault_code(fault.kind);
            let after = if sticky {
                "; the context is unusable until it is destroyed"
            } else {
                ""
            };
            let hint = if fault.kind == FaultKind::Timeout {
                format!(" ({DEADLINE_ENV} sets the deadline in milliseconds, 0 for none)")
            } else {
                String::new()
            };
            eprintln!(
                "ferrocuda PTX emulator: kernel {kernel} failed with {code:?}{after}: {}{hint}",
                fault.message
            );
            if !sticky {
                return Err(code);
            }
            // As on hardware, where kernels run asynchronously: the launch itself succeeded, and
            // the fault shows at the next call in the context (a copy, a synchronisation).
            if let Some(c) = DRIVER.state()?.contexts.get_mut(&context) {
                c.fault.get_or_insert(code);
            }
            Ok(())
        }
    }
}

#[no_mangle]
pub unsafe extern "C" fn cuLaunchKernel(
    f: CUfunction,
    gridDimX: c_uint,
    gridDimY: c_uint,
    gridDimZ: c_uint,
    blockDimX: c_uint,
    blockDimY: c_uint,
    blockDimZ: c_uint,
    sharedMemBytes: c_uint,
    hStream: CUstream,
    kernelParams: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> CUresult {
    guard("cuLaunchKernel", || {
        if !extra.is_null() {
            // Parameters packed into one buffer (CU_LAUNCH_PARAM_BUFFER_POINTER) are not supported.
            return Err(CUresult::CUDA_ERROR_NOT_SUPPORTED);
        }
        let (grid, block) = (
            [gridDimX, gridDimY, gridDimZ],
            [blockDimX, blockDimY, blockDimZ],
        );
        // SAFETY: kernelParams holds one pointer per parameter (driver API contract).
        unsafe { launch(f, grid, block, sharedMemBytes, hStream, kernelParams, false) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuLaunchCooperativeKernel(
    f: CUfunction,
    gridDimX: c_uint,
    gridDimY: c_uint,
    gridDimZ: c_uint,
    blockDimX: c_uint,
    blockDimY: c_uint,
    blockDimZ: c_uint,
    sharedMemBytes: c_uint,
    hStream: CUstream,
    kernelParams: *mut *mut c_void,
) -> CUresult {
    guard("cuLaunchCooperativeKernel", || {
        let (grid, block) = (
            [gridDimX, gridDimY, gridDimZ],
            [blockDimX, blockDimY, blockDimZ],
        );
        // SAFETY: kernelParams holds one pointer per parameter (driver API contract).
        unsafe { launch(f, grid, block, sharedMemBytes, hStream, kernelParams, true) }
    })
}
