//! A grid launch: checks the launch as the driver would, packs the parameters, and runs the
//! blocks in parallel on the host's cores (rayon), or, for a cooperative launch, all at once
//! (`cooperative.rs`), stopping at the first fault.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use rayon::prelude::*;

use crate::block::{Block, Grid};
use crate::cooperative;
use crate::deadline::check_deadline;
use crate::ir::Program;
use crate::memory::Allocation;
use crate::profile::Profile;
use crate::{Fault, FaultKind, KernelInfo, LaunchDims, LaunchOptions, LaunchStats, Memory};

/// Most shared memory one block may have (sm_90's opt-in limit).
pub(crate) const MAX_SHARED_BYTES: u32 = 227 * 1024;

fn invalid(kernel: &str, what: String) -> Fault {
    Fault {
        kind: FaultKind::InvalidLaunch,
        message: format!("{kernel}: {what}"),
    }
}

/// Runs the launch; what its `vprintf` calls printed goes to `printed`, also when it faults.
pub(crate) fn run(
    (program, info): &(Program, KernelInfo),
    module_globals: &[Arc<Allocation>],
    dims: LaunchDims,
    params: &[&[u8]],
    memory: &Memory,
    printed: &mut Vec<u8>,
    options: &LaunchOptions,
) -> Result<LaunchStats, Fault> {
    let start = Instant::now();
    let cooperative = options.kind == crate::LaunchKind::Cooperative;
    let name = &program.name;
    let max_threads = info.max_threads_per_block;
    let [bx, by, bz] = dims.block;
    let [gx, gy, gz] = dims.grid;
    let threads = bx as u64 * by as u64 * bz as u64;
    if threads == 0 || threads > max_threads as u64 || bx > 1024 || by > 1024 || bz > 64 {
        return Err(invalid(
            name,
            format!(
                "block {:?} ({threads} threads; at most {max_threads}, and 1024 x 1024 x 64)",
                dims.block
            ),
        ));
    }
    if gx == 0 || gy == 0 || gz == 0 || gx > i32::MAX as u32 || gy > 65535 || gz > 65535 {
        return Err(invalid(
            name,
            format!(
                "grid {:?} (each at least 1; at most 2^31-1 x 65535 x 65535)",
                dims.grid
            ),
        ));
    }
    let shared = program.dynamic_shared_offset as u64 + dims.dynamic_shared_bytes as u64;
    if shared > MAX_SHARED_BYTES as u64 {
        return Err(invalid(
            name,
            format!("{shared} bytes of shared memory per block (at most {MAX_SHARED_BYTES})"),
        ));
    }
    if params.len() != program.params.len() {
        return Err(invalid(
            name,
            format!(
                "{} parameters given, the kernel takes {}",
                params.len(),
                program.params.len()
            ),
        ));
    }
    let mut packed = vec![0u8; program.param_bytes as usize];
    for (i, (bytes, &(offset, size))) in params.iter().zip(&program.params).enumerate() {
        if bytes.len() != size as usize {
            return Err(invalid(
                name,
                format!(
                    "parameter {i} is {} bytes, the kernel's is {size}",
                    bytes.len()
                ),
            ));
        }
        packed[offset as usize..(offset + size) as usize].copy_from_slice(bytes);
    }
    let mut globals = memory.snapshot();
    globals.extend(module_globals.iter().cloned());
    globals.sort_by_key(|a| a.base);
    // A driver may have mapped the module's variables into the memory too.
    globals.dedup_by_key(|a| a.base);
    let grid = Grid {
        program,
        params: packed,
        globals,
        grid: dims.grid,
        block: dims.block,
        dynamic_shared_bytes: dims.dynamic_shared_bytes,
        printed: Mutex::new(Vec::new()),
        printf_dropped: AtomicU64::new(0),
        cooperative,
        stop: AtomicBool::new(false),
        ended_blocks: AtomicU64::new(0),
        deadline: options
            .deadline
            .and_then(|given| Some((start.checked_add(given)?, given))),
        profile: options.profile,
        joins: if options.profile {
            crate::lockstep::joins(program)
        } else {
            Vec::new()
        },
        strict: memory.checks() == crate::Checks::Strict,
    };
    let blocks = gx as u64 * gy as u64 * gz as u64;
    let instructions = AtomicU64::new(0);
    let profile = Mutex::new(Profile::default());
    let fault: Mutex<Option<(u64, Fault)>> = Mutex::new(None);
    let run_one = |block: &mut Block, index: u64| {
        if grid.stop.load(Ordering::Relaxed) {
            return;
        }
        let ctaid = [
            (index % gx as u64) as u32,
            ((index / gx as u64) % gy as u64) as u32,
            (index / (gx as u64 * gy as u64)) as u32,
        ];
        block.reset(&grid, ctaid);
        block.instructions = 0;
        if grid.profile && block.profile.is_none() {
            block.profile = Some(Box::default());
        }
        let result = match check_deadline(&grid) {
            Ok(()) => crate::schedule::run_block(&grid, block),
            Err(trouble) => Err((0, trouble)),
        };
        instructions.fetch_add(block.instructions, Ordering::Relaxed);
        if let Some(counted) = block.profile.as_deref_mut() {
            counted.blocks = 1;
            profile
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .add(counted);
            *counted = Profile::default();
        }
        if let Err((t, trouble)) = result {
            // The first fault stops the others; a block stopped for it is not the fault.
            if grid.stop.swap(true, Ordering::Relaxed) && trouble.what == cooperative::STOPPED {
                return;
            }
            let message = describe(&grid, block, t, &trouble.what);
            let mut first = fault.lock().unwrap_or_else(|p| p.into_inner());
            if first.as_ref().is_none_or(|(i, _)| index < *i) {
                *first = Some((
                    index,
                    Fault {
                        kind: trouble.kind,
                        message,
                    },
                ));
            }
        }
    };
    if cooperative {
        if let Err(message) = cooperative::run_blocks_at_once(&grid, blocks, run_one) {
            return Err(Fault {
                kind: FaultKind::OutOfResources,
                message: format!("{name}: {message}"),
            });
        }
    } else {
        (0..blocks)
            .into_par_iter()
            .for_each_init(Block::new, |block, index| run_one(block, index));
    }
    printed.append(&mut grid.printed.lock().unwrap_or_else(|p| p.into_inner()));
    let dropped = grid.printf_dropped.into_inner();
    if dropped > 0 {
        eprintln!(
            "ferrocuda PTX emulator: {name}: {dropped} printf call(s) dropped: their output did \
             not fit in the launch's {} KiB printf buffer",
            crate::printf::BUFFER / 1024
        );
    }
    match fault.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some((_, fault)) => Err(fault),
        None => Ok(LaunchStats {
            instructions: instructions.into_inner(),
            profile: grid
                .profile
                .then(|| profile.into_inner().unwrap_or_else(|p| p.into_inner())),
        }),
    }
}

/// "kernel: block (x, y, z), thread (x, y, z): line N `text`: what".
fn describe(grid: &Grid, block: &Block, t: usize, what: &str) -> String {
    let b = grid.block;
    let tid = [
        t as u32 % b[0],
        (t as u32 / b[0]) % b[1],
        t as u32 / (b[0] * b[1]),
    ];
    let pc = block.threads[t].pc as usize;
    let (line, text) = match grid.program.code.get(pc) {
        Some(instr) => {
            let text = grid
                .program
                .source
                .get(instr.line as usize - 1)
                .map_or("", |s| s.trim());
            (instr.line, text)
        }
        None => (0, ""),
    };
    let [x, y, z] = block.ctaid;
    format!(
        "{}: block ({x}, {y}, {z}), thread ({}, {}, {}): line {line} `{text}`: {what}",
        grid.program.name, tid[0], tid[1], tid[2]
    )
}
