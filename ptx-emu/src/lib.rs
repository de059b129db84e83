//! A PTX interpreter: parses the PTX ferrocuda's builder emits and runs its kernels on the CPU,
//! faulting where hardware would (out-of-bounds addresses in every state space, barriers not
//! every thread reaches, shuffles whose mask names a lane that does not arrive, `trap`).
//!
//! It is what the driver emulator (`ptx-emu/driver`, a `libcuda.so`) runs behind the CUDA driver
//! API, so that the host's GPU path and the kernels' compiled PTX are exercised without a GPU. It
//! is not a performance model and no proof that hardware agrees.
//!
//! The API, in the order the driver uses it: [`Memory`] (device memory: allocations with bounds),
//! [`Module::parse`] (PTX text to a module of kernels), [`Module::kernel`] (a kernel's parameters
//! and resources), [`launch`] (one grid, to completion or to the first [`Fault`]).
//! [`LaunchOptions::profile`] counts what a launch executes, warp instruction by warp
//! instruction, with Nsight Compute's definitions ([`Profile`]: `profile.rs`, `lockstep.rs`).
//!
//! # How it runs a kernel
//! [`Module::parse`] decodes each kernel once, with the functions it calls, into a flat list of
//! compact instructions (registers as indices into a per-thread `u64` file, labels and symbols
//! resolved). [`launch`] runs the blocks in parallel on the host's cores (rayon); within a block,
//! every thread runs on its own until it exits or reaches a collective (independent thread
//! scheduling, as on Volta and later), and a collective completes when all its participants
//! wait at one: `shfl.sync`/`vote.sync`/`bar.warp.sync` when every lane of the mask does,
//! `mma.sync`/`ldmatrix` when all 32 lanes of the warp do, `bar.sync`/`bar.red` when every
//! thread of the block that has not exited does (tensor cores: docs/emulator.md). Measured with
//! `examples/speed.rs` (release, this project's 2-core machine, shared): 50 to 70 million PTX
//! instructions per second per host thread on vector_add, matmul, transpose and dot_partial.
//!
//! # What faults (a [`Fault`] with kernel, block, thread, PTX line and address)
//! - An address outside every live allocation (global, or generic outside the shared and local
//!   windows), `ld/st.shared` past the block's static + dynamic shared bytes, `.local` past the
//!   thread's frame, parameter accesses outside the parameters: [`FaultKind::IllegalAddress`].
//!   Allocations are separated by unmapped gaps, so one past the end always faults. The shared
//!   window's generic base has non-zero low 32 bits, so a generic address used as a shared one
//!   (a missing `cvta.to.shared`, even truncated to 32 bits) faults too.
//! - An access not aligned to its size: [`FaultKind::MisalignedAddress`].
//! - `trap` (Rust's panics and bounds checks): [`FaultKind::Trap`].
//! - [`FaultKind::Divergence`]: a warp-level mask naming a lane that exited or does not exist,
//!   or not naming the executing lane; a state where no thread can proceed (a barrier some
//!   threads never reach while others wait elsewhere: a deadlock is reported, never a hang); and
//!   a shared-memory race: two threads touching the same byte between barriers, one writing,
//!   with no `bar.sync` (or, within a warp, a warp-level synchronisation) between. That is what a
//!   removed `bar.sync` leaves; atomics do not race.
//! - A load or atomic of shared bytes no thread of the block has stored to (hardware does not
//!   zero shared memory; the emulator does, and faults instead of letting a kernel rely on it):
//!   [`FaultKind::IllegalAddress`].
//!
//! The one-past-the-end, uninitialized-shared and race checks go beyond a GPU's (as
//! compute-sanitizer's do); a [`Memory`] made with [`Checks::Gpu`] checks only what a GPU does,
//! for code written against GPUs that relies on the rest passing.
//!
//! Choices where PTX leaves the result undefined, and why: a `shfl.sync` whose source lane is
//! outside the mask gives the executing lane's own value (a partial warp's reduction reads it
//! and discards it; the CPU executor does the same); `activemask` names the lanes of the warp
//! waiting at the same instruction once none of the warp can run further; threads that have exited count as arrived
//! at a barrier (as on sm_70+ hardware), so `if (i >= n) return;` before a barrier runs;
//! `.approx` functions are computed in f64 and rounded once (within the ISA's stated error);
//! integer division by zero gives all ones. Not modelled: memory ordering weaker than sequential
//! consistency, textures, `bar.sync` with a thread count, recursion (refused at launch),
//! and a watchdog by default (a kernel that loops forever runs forever, as on a GPU without
//! one; [`LaunchOptions::deadline`] gives a launch one, which the driver always does).
//!
//! # The parser: why our own
//! Evaluated on our PTX (the library's kernels and test-kernels, rustc 1.95 nvptx64): `ptx-syntax`
//! 0.5.0 parses all of it, but it is 122,000 lines of generated code (a distinct type per
//! instruction form, 170 files), needs a large stack (`stacker`) to parse, and pulls `clap`,
//! `serde_json` and `logos` into a library (the evaluation, both parsers, built in about 4 minutes
//! in release here, where CI has 2 cores), and every instruction would still need mapping to our
//! form. `singe-ptx` 0.1.0-alpha.7 stops at the first `.entry` (`TrailingInput`). LLVM's PTX is regular: our parser
//! (`parse/`, about 700 lines) reads it, inline-assembly scopes included, and says on which
//! line it stopped.

mod arith;
mod async_copies;
mod async_copy;
mod block;
mod call_stack;
mod cooperative;
mod deadline;
mod decode;
mod float16;
mod ir;
mod launch;
mod lockstep;
mod mbarrier;
mod memory;
mod mma;
mod module;
mod parse;
mod printf;
mod profile;
mod rare;
mod recursion;
mod schedule;
mod shared;
mod thread;
mod words;

pub use memory::{Checks, MemError, Memory};
pub use profile::{ratio, GlobalTraffic, InstrClass, Profile, SharedTraffic};

/// A parsed PTX module: its kernels (`.entry`), functions (`.func`) and module-scope variables.
pub struct Module {
    kernels: Vec<(ir::Program, KernelInfo)>,
    /// The module's `.global`/`.const` variables, each its own allocation.
    globals: Vec<std::sync::Arc<memory::Allocation>>,
    /// Their names and declared sizes in bytes, in the order of `globals`.
    global_names: Vec<(String, u64)>,
}

/// PTX the emulator cannot parse or does not support, with the line it stopped at; the driver
/// returns `CUDA_ERROR_INVALID_PTX` and puts `message` in the JIT error log.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct ParseError {
    pub line: usize,
    pub message: String,
}

/// A kernel's interface and resources, as `cuFuncGetAttribute` reports them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelInfo {
    pub name: String,
    /// Each `.param`'s size and alignment in bytes, in order.
    pub params: Vec<ParamInfo>,
    /// Bytes of `.shared` the kernel declares statically.
    pub static_shared_bytes: u32,
    /// Bytes of `.local` per thread.
    pub local_bytes: u32,
    /// Registers per thread (an estimate from the declared registers, at most `.maxnreg`, as
    /// ptxas spills to fit it; for occupancy only).
    pub registers: u32,
    /// Bytes of `.const` variables in the module (ptxas counts those the kernel uses; the
    /// emulator all of the module's).
    pub const_bytes: u32,
    /// Most threads per block (`.maxntid` if given, else 1024).
    pub max_threads_per_block: u32,
}

/// One kernel parameter's layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamInfo {
    pub size: u32,
    pub align: u32,
}

impl Module {
    /// Parses PTX text (as `cuModuleLoadData` receives it, without the trailing NUL).
    pub fn parse(ptx: &str) -> Result<Module, ParseError> {
        module::load(ptx)
    }
    /// The kernel (`.entry`) named `name`.
    pub fn kernel(&self, name: &str) -> Option<KernelInfo> {
        self.kernels
            .iter()
            .find(|(p, _)| p.name == name)
            .map(|(_, info)| info.clone())
    }
    /// Every kernel's name, in the order the PTX declares them.
    /// The device address and declared size in bytes of the module variable (`.global` or
    /// `.const`) `name`, what `cuModuleGetGlobal` returns. A driver that lets the host copy to
    /// it puts the module's variables in its memory with [`Memory::map_module`].
    pub fn global(&self, name: &str) -> Option<(u64, u64)> {
        let k = self.global_names.iter().position(|(n, _)| n == name)?;
        Some((self.globals[k].base, self.global_names[k].1))
    }

    pub fn kernel_names(&self) -> Vec<String> {
        self.kernels.iter().map(|(p, _)| p.name.clone()).collect()
    }
    /// The instructions the emulator does not implement, as `kernel: line N: what`: they
    /// parse, and fault ([`FaultKind::Unsupported`]) only when a thread runs one. Empty for all
    /// of ferrocuda's kernels (a test checks); the driver may put these in the JIT info log.
    pub fn unsupported(&self) -> Vec<String> {
        let mut found = Vec::new();
        for (program, _) in &self.kernels {
            for instr in &program.code {
                if let ir::Op::Unsupported(what) = &instr.op {
                    found.push(format!("{}: line {}: {what}", program.name, instr.line));
                }
            }
        }
        found
    }
}

// Here rather than in `memory.rs`, so that memory, below the module, need not name it.
impl Memory {
    /// Makes `module`'s variables (`.global`, `.const`) part of this memory, as a GPU's are of its
    /// device memory: copies to and from their addresses work from then on, and kernels see what
    /// was copied. They do not count against the capacity (a GPU loads them with the module).
    pub fn map_module(&self, module: &Module) {
        self.map_allocations(&module.globals);
    }

    /// Takes `module`'s variables out of this memory again (the module is unloaded).
    pub fn unmap_module(&self, module: &Module) {
        self.unmap_allocations(&module.globals);
    }
}

/// A launch's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchDims {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_shared_bytes: u32,
}

/// What one launch executed (for the emulator's own speed measurements, and its counters).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LaunchStats {
    /// PTX instructions executed, summed over all threads.
    pub instructions: u64,
    /// The launch's counters, when [`LaunchOptions::profile`] asked for them.
    pub profile: Option<Profile>,
}

/// What kind of fault a launch ended with; the driver maps each to the `CUresult` hardware gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// An address outside every live allocation / the block's shared window / the thread's local
    /// memory / the parameter space: `CUDA_ERROR_ILLEGAL_ADDRESS`.
    IllegalAddress,
    /// A misaligned access: `CUDA_ERROR_MISALIGNED_ADDRESS`.
    MisalignedAddress,
    /// `trap` (Rust's panics and bounds checks): `CUDA_ERROR_LAUNCH_FAILED`... as hardware reports
    /// it (`CUDA_ERROR_ILLEGAL_INSTRUCTION` on recent drivers; the driver layer decides).
    Trap,
    /// A barrier not every non-exited thread of the block reaches, or a `shfl.sync`/`vote.sync`/
    /// `bar.warp.sync` whose mask names a lane that does not arrive: `CUDA_ERROR_LAUNCH_FAILED`.
    Divergence,
    /// A launch the kernel cannot take (too many threads, too much shared memory, wrong parameter
    /// sizes): `CUDA_ERROR_INVALID_VALUE`; nothing ran.
    InvalidLaunch,
    /// An instruction the emulator does not implement: `CUDA_ERROR_NOT_SUPPORTED`.
    Unsupported,
    /// Still running at the launch's deadline ([`LaunchOptions::deadline`]): a loop that never
    /// ends, most likely. `CUDA_ERROR_LAUNCH_TIMEOUT`, as a GPU's watchdog gives it.
    Timeout,
    /// The host could not give the launch what it needs (a cooperative launch's host thread
    /// per block); nothing ran: `CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES`.
    OutOfResources,
}

/// How a launch failed, with a readable reason (kernel, block, thread, instruction, address).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Fault {
    pub kind: FaultKind,
    pub message: String,
}

/// Runs `kernel` of `module` over the grid to completion, or to the first fault. `params` holds
/// one byte slice per kernel parameter (what `cuLaunchKernel`'s `kernelParams` point to), each of
/// the parameter's size. Blocks may run in parallel on the host's cores. What the kernel prints
/// (`vprintf`) is written to stdout when the launch ends, as the driver prints its printf buffer
/// at the next synchronisation; [`launch_printing`] keeps it instead.
pub fn launch(
    module: &Module,
    kernel: &str,
    dims: LaunchDims,
    params: &[&[u8]],
    memory: &Memory,
) -> Result<LaunchStats, Fault> {
    let mut printed = Vec::new();
    let outcome = launch_printing(
        module,
        kernel,
        dims,
        params,
        memory,
        LaunchKind::Plain,
        &mut printed,
    );
    write_printed(&printed);
    outcome
}

/// Writes what a launch printed to stdout, in one write (a closed stdout loses it, as a full
/// printf buffer does on a GPU).
pub fn write_printed(printed: &[u8]) {
    if !printed.is_empty() {
        use std::io::Write;
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(printed).and_then(|()| stdout.flush());
    }
}

/// How the blocks of a launch run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LaunchKind {
    /// `cuLaunchKernel`: in parallel on the host's cores, each block to its end.
    Plain,
    /// `cuLaunchCooperativeKernel`: every block at once, on a host thread of its own, each
    /// yielding to the others every few thousand instructions, so that a block spinning on a
    /// grid barrier in global memory lets the others reach it. The caller (the driver) checks
    /// that the grid is one the device could hold at once. A fault in one block stops the
    /// others; a block still running long after every other block ended (waiting at a grid
    /// barrier they never reached) is a [`FaultKind::Divergence`], not a hang.
    Cooperative,
}

/// How a launch runs: [`launch_with`]'s options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchOptions {
    pub kind: LaunchKind,
    /// How long the launch may run: past it, every thread stops at its next backward branch
    /// (and every block before it starts) and the launch is a [`FaultKind::Timeout`]. The clock
    /// is looked at every 65,536 instructions of a thread. `None`: no deadline (a kernel that
    /// loops for ever runs for ever, as on a GPU without a watchdog).
    pub deadline: Option<std::time::Duration>,
    /// Count what the launch executes, warp instruction by warp instruction, as Nsight Compute
    /// would ([`Profile`], in [`LaunchStats::profile`]). Each warp then runs in lockstep (the
    /// lanes at the lowest pc together), which is slower; without it nothing is counted and
    /// nothing costs.
    pub profile: bool,
}

/// [`launch`] as `kind` says, with what the kernel prints appended to `printed` (each `vprintf`
/// call's text whole, each thread's in its order), also when it faults.
pub fn launch_printing(
    module: &Module,
    kernel: &str,
    dims: LaunchDims,
    params: &[&[u8]],
    memory: &Memory,
    kind: LaunchKind,
    printed: &mut Vec<u8>,
) -> Result<LaunchStats, Fault> {
    let options = LaunchOptions {
        kind,
        deadline: None,
        profile: false,
    };
    launch_with(module, kernel, dims, params, memory, &options, printed)
}

/// [`launch_printing`] with a deadline and the rest of [`LaunchOptions`].
pub fn launch_with(
    module: &Module,
    kernel: &str,
    dims: LaunchDims,
    params: &[&[u8]],
    memory: &Memory,
    options: &LaunchOptions,
    printed: &mut Vec<u8>,
) -> Result<LaunchStats, Fault> {
    launch_with_peers(module, kernel, dims, params, memory, &[], options, printed)
}

/// [`launch_with`] on `memory`'s device whose kernel also reaches the allocations of `peers`,
/// other devices' memories (CUDA's peer access, `cuCtxEnablePeerAccess`): it loads, stores and
/// does atomics there as in its own device's memory. The peers' allocations are those live when
/// the launch starts, as for `memory`; addresses are unique across devices
/// ([`Memory::of_device`]), so one address means one allocation.
#[allow(clippy::too_many_arguments)]
pub fn launch_with_peers(
    module: &Module,
    kernel: &str,
    dims: LaunchDims,
    params: &[&[u8]],
    memory: &Memory,
    peers: &[&Memory],
    options: &LaunchOptions,
    printed: &mut Vec<u8>,
) -> Result<LaunchStats, Fault> {
    let Some(found) = module.kernels.iter().find(|(p, _)| p.name == kernel) else {
        let message = format!("{kernel}: no such kernel in the module");
        return Err(Fault {
            kind: FaultKind::InvalidLaunch,
            message,
        });
    };
    // The launch sees its own memory's allocations and these (the module's variables, and
    // what the peers hold) as one sorted set.
    let mut reached = module.globals.clone();
    for peer in peers {
        reached.extend(peer.snapshot());
    }
    launch::run(found, &reached, dims, params, memory, printed, options)
}
