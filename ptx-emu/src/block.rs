//! One block's state and its memory accesses: registers of every thread, shared memory with its
//! race check, each thread's local and call-parameter bytes, and the address windows that make
//! generic addressing fault where hardware would.

use std::sync::Arc;

use crate::ir::{Program, Space};
use crate::memory::Allocation;
use crate::profile::{LaneAccess, Profile};
use crate::shared::{Conflict, SharedMemory};
use crate::FaultKind;

/// Generic addresses of the block's shared window: `cvta.shared` adds this. Its low 32 bits are
/// not zero, so a generic address truncated to 32 bits without `cvta.to.shared` (a bug some
/// hardware forgives by chance) lands far outside any block's shared memory and faults.
pub(crate) const SHARED_WINDOW: u64 = 0x5000_1000_0000;
/// Generic addresses of each thread's local window: `cvta.local` adds this.
pub(crate) const LOCAL_WINDOW: u64 = 0x6000_1000_0000;
/// How far each window reaches (past any block's shared or thread's local memory). Generic
/// addresses outside them are global: host memory mapped at its own address (a heap address
/// such as 0x55..., `Memory::alloc_host`) is reached there, so the windows stay narrow.
pub(crate) const WINDOW_BYTES: u64 = 1 << 40;

/// Whether generic address `a` is in `space`'s window (`isspacep`): `Shared`, `Local`, or
/// `Global` for every address outside both windows.
pub(crate) fn in_window(space: Space, a: u64) -> bool {
    let shared = (SHARED_WINDOW..SHARED_WINDOW + WINDOW_BYTES).contains(&a);
    let local = (LOCAL_WINDOW..LOCAL_WINDOW + WINDOW_BYTES).contains(&a);
    match space {
        Space::Shared => shared,
        Space::Local => local,
        _ => !shared && !local,
    }
}

/// What stopped a thread, before the block adds where.
#[derive(Debug)]
pub(crate) struct Trouble {
    pub kind: FaultKind,
    pub what: String,
}

impl Trouble {
    pub fn new(kind: FaultKind, what: impl Into<String>) -> Self {
        Trouble {
            kind,
            what: what.into(),
        }
    }
}

/// What the whole grid shares: the program, parameter bytes, global memory's allocations.
pub(crate) struct Grid<'a> {
    pub program: &'a Program,
    pub params: Vec<u8>,
    /// Every live allocation and module variable, sorted by base address.
    pub globals: Vec<Arc<Allocation>>,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_shared_bytes: u32,
    /// What the launch's `vprintf` calls printed, each call's text whole.
    pub printed: std::sync::Mutex<Vec<u8>>,
    /// `vprintf` calls dropped because their text did not fit in the printf buffer.
    pub printf_dropped: std::sync::atomic::AtomicU64,
    /// A cooperative launch: every block runs at once, and yields now and then (`cooperative.rs`).
    pub cooperative: bool,
    /// A block faulted: the others stop (at their next yield, in a cooperative launch).
    pub stop: std::sync::atomic::AtomicBool,
    /// Blocks of a cooperative launch that have ended.
    pub ended_blocks: std::sync::atomic::AtomicU64,
    /// When the launch must have ended, and the time it was given (`launch::check_deadline`).
    pub deadline: Option<(std::time::Instant, std::time::Duration)>,
    /// Counters on: blocks run warp by warp in lockstep (`lockstep.rs`).
    pub profile: bool,
    /// With counters on, the pcs where lanes may join (branch and call targets): a profiled
    /// lane's run stops before one (`lockstep.rs`). Empty without counters.
    pub joins: Vec<bool>,
    /// [`crate::Checks::Strict`]: shared memory is checked for races and reads of bytes never
    /// stored to, and a `bar.warp.sync` mask naming an exited lane faults.
    pub strict: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    Ready,
    /// At a collective instruction (barrier, shuffle, vote), not yet executed.
    Waiting,
    Exited,
}

pub(crate) struct ThreadState {
    pub pc: u32,
    pub status: Status,
    /// Call sites to return through, with the pc to return to.
    pub calls: Vec<(u32, u32)>,
    /// The activations of recursive functions its calls interrupted (`recursion.rs`).
    pub saved: crate::call_stack::Saved,
    /// The allocation the last global access hit (an index into `Grid::globals`).
    pub last_global: usize,
    /// Its `cp.async` copies in flight.
    pub async_copies: crate::async_copies::AsyncCopies,
}

/// A block in flight; reused from block to block on one host thread.
pub(crate) struct Block {
    pub ctaid: [u32; 3],
    pub threads: Vec<ThreadState>,
    pub registers: Vec<u64>,
    pub shared: SharedMemory,
    pub shared_len: usize,
    pub local: Vec<u8>,
    pub frame: Vec<u8>,
    pub instructions: u64,
    /// Yields of a cooperative block since every other block ended (`cooperative.rs`).
    pub yields_alone: u32,
    /// A profiled launch's counters for this block (`lockstep.rs`); `None` without counters.
    pub profile: Option<Box<Profile>>,
    /// Profiled launches: each lane's memory accesses in its current run (`lockstep.rs`), and
    /// the pc of the last instruction the run stepped through.
    pub lane_trace: Vec<Vec<LaneAccess>>,
    pub lane_last: [u32; 32],
}

impl Block {
    pub fn new() -> Self {
        Block {
            ctaid: [0; 3],
            threads: Vec::new(),
            registers: Vec::new(),
            shared: SharedMemory::new(),
            shared_len: 0,
            local: Vec::new(),
            frame: Vec::new(),
            instructions: 0,
            yields_alone: 0,
            profile: None,
            lane_trace: vec![Vec::new(); 32],
            lane_last: [0; 32],
        }
    }

    /// Sets up block `ctaid` of `grid`: zeroed registers, shared, local and parameter bytes.
    pub fn reset(&mut self, grid: &Grid, ctaid: [u32; 3]) {
        let p = grid.program;
        let n = (grid.block[0] * grid.block[1] * grid.block[2]) as usize;
        self.ctaid = ctaid;
        self.yields_alone = 0;
        self.threads.clear();
        self.threads.extend((0..n).map(|_| ThreadState {
            pc: 0,
            status: Status::Ready,
            calls: Vec::new(),
            saved: Default::default(),
            last_global: 0,
            async_copies: Default::default(),
        }));
        self.registers.clear();
        self.registers.resize(n * p.registers as usize, 0);
        self.shared_len = p.dynamic_shared_offset as usize + grid.dynamic_shared_bytes as usize;
        if grid.dynamic_shared_bytes == 0 {
            self.shared_len = p.static_shared_bytes as usize;
        }
        // Whole 4-byte words, as the hardware allocates shared memory in far larger units: an
        // 8- or 16-bit atomic on the last element is a compare-and-swap of its word.
        self.shared_len = self.shared_len.next_multiple_of(4);
        self.shared.reset(self.shared_len, n.div_ceil(32));
        self.local.clear();
        self.local.resize(n * p.local_bytes as usize, 0);
        self.frame.clear();
        self.frame.resize(n * p.frame_param_bytes as usize, 0);
    }
}

/// Where an access lands once its space and address are resolved.
pub(crate) enum Place {
    Global(usize, u64),
    Shared(usize),
    Local(usize),
    KernelParam(usize),
    Frame(usize),
}

pub(crate) fn space_name(space: Space) -> &'static str {
    match space {
        Space::Generic => "generic",
        Space::Global => "global",
        Space::Shared => "shared",
        Space::Local => "local",
        Space::KernelParam => "kernel parameter",
        Space::FrameParam => "call parameter",
    }
}

/// Resolves an access of `len` bytes at `address` in `space` by thread `t`, faulting where
/// hardware would: outside every allocation / window, or misaligned to `align`.
#[inline]
pub(crate) fn resolve(
    grid: &Grid,
    block: &mut Block,
    t: usize,
    space: Space,
    address: u64,
    len: u64,
    align: u64,
) -> Result<Place, Trouble> {
    if !address.is_multiple_of(align) {
        return Err(Trouble::new(
            FaultKind::MisalignedAddress,
            format!("misaligned {} access of {len} bytes at {address:#x} (needs {align}-byte alignment)", space_name(space)),
        ));
    }
    let outside = |what: &str| {
        Trouble::new(
            FaultKind::IllegalAddress,
            format!(
                "{} access of {len} bytes at {address:#x} is {what}",
                space_name(space)
            ),
        )
    };
    let within = |start: u64, size: usize| {
        address
            .checked_sub(start)
            .filter(|o| o.checked_add(len).is_some_and(|e| e <= size as u64))
    };
    match space {
        Space::Generic => {
            if (SHARED_WINDOW..SHARED_WINDOW + WINDOW_BYTES).contains(&address) {
                return within(SHARED_WINDOW, block.shared_len)
                    .map(|o| Place::Shared(o as usize))
                    .ok_or_else(|| {
                        outside(&format!(
                            "past the block's {} bytes of shared memory",
                            block.shared_len
                        ))
                    });
            }
            let local = grid.program.local_bytes as usize;
            if (LOCAL_WINDOW..LOCAL_WINDOW + WINDOW_BYTES).contains(&address) {
                return within(LOCAL_WINDOW, local)
                    .map(|o| Place::Local(t * local + o as usize))
                    .ok_or_else(|| {
                        outside(&format!("past the thread's {local} bytes of local memory"))
                    });
            }
            global(grid, block, t, address, len)
                .ok_or_else(|| outside("not inside any live allocation"))
        }
        Space::Global => global(grid, block, t, address, len)
            .ok_or_else(|| outside("not inside any live allocation")),
        Space::Shared => within(0, block.shared_len)
            .map(|o| Place::Shared(o as usize))
            .ok_or_else(|| {
                outside(&format!(
                    "outside the block's {} bytes of shared memory",
                    block.shared_len
                ))
            }),
        Space::Local => {
            let local = grid.program.local_bytes as usize;
            within(0, local)
                .map(|o| Place::Local(t * local + o as usize))
                .ok_or_else(|| {
                    outside(&format!(
                        "outside the thread's {local} bytes of local memory"
                    ))
                })
        }
        Space::KernelParam => within(0, grid.params.len())
            .map(|o| Place::KernelParam(o as usize))
            .ok_or_else(|| outside("outside the kernel's parameters")),
        Space::FrameParam => {
            let size = grid.program.frame_param_bytes as usize;
            within(0, size)
                .map(|o| Place::Frame(t * size + o as usize))
                .ok_or_else(|| outside("outside the call parameters"))
        }
    }
}

#[inline]
fn global(grid: &Grid, block: &mut Block, t: usize, address: u64, len: u64) -> Option<Place> {
    let hint = block.threads[t].last_global;
    if let Some(a) = grid.globals.get(hint) {
        if a.contains(address, len) {
            return Some(Place::Global(hint, address - a.base));
        }
    }
    let i = grid
        .globals
        .partition_point(|a| a.base <= address)
        .checked_sub(1)?;
    let a = &grid.globals[i];
    if !a.contains(address, len) {
        return None;
    }
    block.threads[t].last_global = i;
    Some(Place::Global(i, address - a.base))
}

/// Reads `bytes` (1, 2, 4, 8) little-endian from `buffer` at `offset` (in bounds).
#[inline]
pub(crate) fn read_le(buffer: &[u8], offset: usize, bytes: usize) -> u64 {
    let mut word = [0u8; 8];
    word[..bytes].copy_from_slice(&buffer[offset..offset + bytes]);
    u64::from_le_bytes(word)
}

#[inline]
pub(crate) fn write_le(buffer: &mut [u8], offset: usize, bytes: usize, value: u64) {
    buffer[offset..offset + bytes].copy_from_slice(&value.to_le_bytes()[..bytes]);
}

pub(crate) fn conflict_trouble(
    (offset, conflict): (usize, Conflict),
    t: usize,
    writing: bool,
) -> Trouble {
    let (other, other_wrote) = match conflict {
        Conflict::Uninitialized => {
            let what = format!(
                "reads shared byte {offset:#x}, which no thread of the block has stored to \
                 (uninitialized shared memory: hardware leaves whatever was there)"
            );
            return Trouble::new(FaultKind::IllegalAddress, what);
        }
        Conflict::Race { other, other_wrote } => (other, other_wrote),
    };
    let other = if other == u32::MAX {
        "other threads".to_string()
    } else {
        format!("thread {other}")
    };
    let (mine, theirs) = (
        if writing { "write" } else { "read" },
        if other_wrote { "wrote" } else { "read" },
    );
    Trouble::new(
        FaultKind::Divergence,
        format!(
            "shared-memory race: thread {t} {mine}s shared byte {offset:#x}, which {other} {theirs} since the last barrier, \
             with no bar.sync (or warp synchronisation) between (a missing barrier?)"
        ),
    )
}
