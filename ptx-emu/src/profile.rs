//! A launch's hardware-style counters ([`Profile`]), as Nsight Compute defines them, counted per
//! *warp instruction*: the lanes of a warp that execute one instruction together.
//!
//! With counters on ([`crate::LaunchOptions::profile`]) each warp runs in lockstep
//! (`lockstep.rs`): at each step the lanes at the earliest position in the code (the lowest pc,
//! deeper call frames first) execute one instruction together, which reconverges a warp where
//! structured code joins, as a GPU's SIMT stack does. [`commit`] then classifies that warp
//! instruction and counts its memory traffic from every lane's address. Without counters the
//! emulator runs as before (each thread on its own), with no per-instruction cost.

use crate::ir::{FloatUnOp, Kind, Op, Space};

/// Warp-instruction classes, as [`Profile::by_class`] indexes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InstrClass {
    Fp32,
    Fp64,
    /// Half-precision arithmetic (the emulator runs none; `cvt` to and from `.f16` is
    /// [`InstrClass::Conversion`]).
    Fp16,
    Integer,
    /// `cvt`.
    Conversion,
    /// Transcendental and approximate functions (the SFU's `MUFU`): `sqrt.approx`, `rsqrt`,
    /// `rcp.approx`, `ex2`, `lg2`, `sin`, `cos`, `tanh`.
    Special,
    /// Moves, special registers, predicate logic, `selp`, `cvta`, packing.
    Move,
    LoadGlobal,
    StoreGlobal,
    LoadShared,
    StoreShared,
    LoadLocal,
    StoreLocal,
    /// Kernel and call parameters (`ld.param`/`st.param`: constant-bank reads and call frames).
    Param,
    AtomicGlobal,
    AtomicShared,
    /// Branches, calls, returns, `exit`, `trap`.
    Control,
    /// `bar.sync`, `bar.red`.
    Barrier,
    /// `shfl.sync`, `vote.sync`, `match.sync`, `activemask`, `bar.warp.sync`.
    WarpCollective,
    /// `mma.sync` (the tensor cores' `HMMA`/`IMMA`).
    Tensor,
}

impl InstrClass {
    /// Every class, in [`Profile::by_class`]'s order.
    pub const ALL: [InstrClass; 20] = [
        InstrClass::Fp32,
        InstrClass::Fp64,
        InstrClass::Fp16,
        InstrClass::Integer,
        InstrClass::Conversion,
        InstrClass::Special,
        InstrClass::Move,
        InstrClass::LoadGlobal,
        InstrClass::StoreGlobal,
        InstrClass::LoadShared,
        InstrClass::StoreShared,
        InstrClass::LoadLocal,
        InstrClass::StoreLocal,
        InstrClass::Param,
        InstrClass::AtomicGlobal,
        InstrClass::AtomicShared,
        InstrClass::Control,
        InstrClass::Barrier,
        InstrClass::WarpCollective,
        InstrClass::Tensor,
    ];

    /// A short name (the JSON key and table column).
    pub fn name(self) -> &'static str {
        match self {
            InstrClass::Fp32 => "fp32",
            InstrClass::Fp64 => "fp64",
            InstrClass::Fp16 => "fp16",
            InstrClass::Integer => "integer",
            InstrClass::Conversion => "conversion",
            InstrClass::Special => "special",
            InstrClass::Move => "move",
            InstrClass::LoadGlobal => "load_global",
            InstrClass::StoreGlobal => "store_global",
            InstrClass::LoadShared => "load_shared",
            InstrClass::StoreShared => "store_shared",
            InstrClass::LoadLocal => "load_local",
            InstrClass::StoreLocal => "store_local",
            InstrClass::Param => "param",
            InstrClass::AtomicGlobal => "atomic_global",
            InstrClass::AtomicShared => "atomic_shared",
            InstrClass::Control => "control",
            InstrClass::Barrier => "barrier",
            InstrClass::WarpCollective => "warp_collective",
            InstrClass::Tensor => "tensor",
        }
    }
}

/// Global memory traffic of one direction (loads or stores), in Nsight Compute's units.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GlobalTraffic {
    /// Warp instructions that accessed global memory with at least one lane
    /// (`l1tex__t_requests_pipe_lsu_mem_global_op_ld`/`_st`).
    pub requests: u64,
    /// Distinct 32-byte sectors those requests touched, summed over requests
    /// (`l1tex__t_sectors_pipe_lsu_mem_global_op_ld`/`_st`): the bytes the memory system moves
    /// are 32 times this.
    pub sectors: u64,
    /// Bytes the lanes asked for (each lane's access size, summed).
    pub bytes_requested: u64,
}

/// Shared memory traffic of one direction: requests and the wavefronts (passes through the 32
/// banks of 4 bytes) they took.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SharedTraffic {
    /// Warp instructions that accessed shared memory (`l1tex__data_pipe_lsu_wavefronts_mem_shared`'s
    /// requests).
    pub requests: u64,
    /// Wavefronts: per request, the most distinct 4-byte words any one bank holds among the
    /// words the lanes touch (lanes reading the same word share it: a broadcast).
    pub wavefronts: u64,
    /// Wavefronts a request needs at least (its distinct words / 32, at least 1), summed:
    /// `wavefronts - ideal_wavefronts` is Nsight's `l1tex__data_bank_conflicts_pipe_lsu_mem_shared`.
    pub ideal_wavefronts: u64,
}

/// The counters of one launch (or several, added with [`Profile::add`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Profile {
    /// Warp instructions executed (`smsp__inst_executed`): PTX instructions, not SASS.
    pub warp_instructions: u64,
    /// Per [`InstrClass::ALL`] class.
    pub by_class: [u64; InstrClass::ALL.len()],
    /// Lanes active at each warp instruction, summed (`smsp__thread_inst_executed`).
    pub thread_instructions: u64,
    /// Lanes active and not predicated off (`smsp__thread_inst_executed_pred_on`).
    pub thread_instructions_pred_on: u64,
    /// Branch warp instructions (`bra`, `brx.idx`) executed.
    pub branches: u64,
    /// Those whose active lanes did not all go the same way.
    pub divergent_branches: u64,
    pub global_loads: GlobalTraffic,
    pub global_stores: GlobalTraffic,
    pub shared_loads: SharedTraffic,
    pub shared_stores: SharedTraffic,
    /// Atomic warp instructions (global and shared).
    pub atomic_requests: u64,
    /// Lanes executing them.
    pub atomic_lanes: u64,
    /// Lanes whose atomic hit an address an earlier lane of the same warp instruction also hit
    /// (lanes minus distinct addresses): the updates hardware serialises.
    pub atomic_same_address: u64,
    /// `bar.sync`/`bar.red` warp instructions.
    pub barrier_instructions: u64,
    /// Blocks run.
    pub blocks: u64,
}

impl Profile {
    /// Adds `other`'s counts to these.
    pub fn add(&mut self, other: &Profile) {
        self.warp_instructions += other.warp_instructions;
        for (a, b) in self.by_class.iter_mut().zip(&other.by_class) {
            *a += b;
        }
        self.thread_instructions += other.thread_instructions;
        self.thread_instructions_pred_on += other.thread_instructions_pred_on;
        self.branches += other.branches;
        self.divergent_branches += other.divergent_branches;
        for (a, b) in [
            (&mut self.global_loads, &other.global_loads),
            (&mut self.global_stores, &other.global_stores),
        ] {
            a.requests += b.requests;
            a.sectors += b.sectors;
            a.bytes_requested += b.bytes_requested;
        }
        for (a, b) in [
            (&mut self.shared_loads, &other.shared_loads),
            (&mut self.shared_stores, &other.shared_stores),
        ] {
            a.requests += b.requests;
            a.wavefronts += b.wavefronts;
            a.ideal_wavefronts += b.ideal_wavefronts;
        }
        self.atomic_requests += other.atomic_requests;
        self.atomic_lanes += other.atomic_lanes;
        self.atomic_same_address += other.atomic_same_address;
        self.barrier_instructions += other.barrier_instructions;
        self.blocks += other.blocks;
    }

    /// Warp instructions of `class`.
    pub fn class(&self, class: InstrClass) -> u64 {
        self.by_class[class as usize]
    }

    /// Average active lanes per warp instruction over 32 (Nsight's "warp execution efficiency",
    /// `smsp__thread_inst_executed_per_inst_executed` / 32); `None` without instructions.
    pub fn simt_efficiency(&self) -> Option<f64> {
        ratio(self.thread_instructions, self.warp_instructions * 32)
    }

    /// Branches whose active lanes all went the same way, over all branches (Nsight's "branch
    /// efficiency"); `None` without branches.
    pub fn branch_efficiency(&self) -> Option<f64> {
        ratio(self.branches - self.divergent_branches, self.branches)
    }
}

/// `a / b`, `None` when `b` is 0.
pub fn ratio(a: u64, b: u64) -> Option<f64> {
    (b > 0).then(|| a as f64 / b as f64)
}

/// Where one lane's memory access of the current warp instruction landed.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct LaneAccess {
    /// The instruction's pc.
    pub pc: u32,
    /// The space it resolved to (a generic address's real one).
    pub space: Landed,
    /// The address: a device address for global, the offset in the block's shared memory.
    pub address: u64,
    pub bytes: u32,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Landed {
    #[default]
    Global,
    Shared,
    Local,
    Param,
}

/// Whether `op` ends a run of a profiled lane: control flow (after it lanes may be at
/// different places) or a collective (the block's scheduler completes it).
#[inline]
pub(crate) fn ends_run(op: &Op) -> bool {
    matches!(
        op,
        Op::Bra { .. }
            | Op::BrxIdx { .. }
            | Op::Call { .. }
            | Op::Ret
            | Op::Exit
            | Op::Trap
            | Op::BarSync { .. }
            | Op::BarRed { .. }
            | Op::BarWarpSync { .. }
            | Op::Shfl { .. }
            | Op::Vote { .. }
    )
}

/// Counts one warp instruction executed by the lanes of `active`; `accesses` are the
/// accesses of its lanes that were not predicated off, for a memory instruction.
pub(crate) fn commit(p: &mut Profile, op: &Op, active: u32, accesses: &[LaneAccess]) {
    p.warp_instructions += 1;
    p.thread_instructions += active.count_ones() as u64;
    let landed = accesses.first().map(|a| a.space);
    p.by_class[classify(op, landed) as usize] += 1;
    if accesses.is_empty() {
        return;
    }
    match op {
        Op::Ld { .. } | Op::St { .. } => {
            let store = matches!(op, Op::St { .. });
            match (landed, store) {
                (Some(Landed::Global), false) => global(&mut p.global_loads, accesses),
                (Some(Landed::Global), true) => global(&mut p.global_stores, accesses),
                (Some(Landed::Shared), false) => shared(&mut p.shared_loads, accesses),
                (Some(Landed::Shared), true) => shared(&mut p.shared_stores, accesses),
                _ => {}
            }
        }
        Op::CpAsync { .. } => cp_async(p, accesses),
        Op::Atom { .. } => {
            p.atomic_requests += 1;
            p.atomic_lanes += accesses.len() as u64;
            let mut addresses = [0u64; 32];
            let n = gather(&mut addresses, accesses, |a| a.address);
            p.atomic_same_address += (n - distinct(&mut addresses[..n])) as u64;
        }
        _ => {}
    }
}

/// Counts a branch warp instruction whose active lanes went on to `targets`.
pub(crate) fn commit_branch(p: &mut Profile, targets: &[u32]) {
    p.branches += 1;
    if targets.iter().any(|&t| t != targets[0]) {
        p.divergent_branches += 1;
    }
}

/// Counts a warp collective or barrier the block's scheduler completed for `active` lanes.
pub(crate) fn commit_collective(p: &mut Profile, class: InstrClass, active: u32) {
    p.warp_instructions += 1;
    p.thread_instructions += active as u64;
    p.thread_instructions_pred_on += active as u64;
    p.by_class[class as usize] += 1;
    if class == InstrClass::Barrier {
        p.barrier_instructions += 1;
    }
}

/// `f` of each access, into `out`; how many.
fn gather(out: &mut [u64; 32], accesses: &[LaneAccess], f: impl Fn(&LaneAccess) -> u64) -> usize {
    for (o, a) in out.iter_mut().zip(accesses) {
        *o = f(a);
    }
    accesses.len().min(32)
}

/// Distinct values of `values` (sorted in place). Lanes usually access memory in lane order, so
/// the values are often sorted already.
fn distinct(values: &mut [u64]) -> usize {
    if !values.is_sorted() {
        values.sort_unstable();
    }
    values.windows(2).filter(|w| w[0] != w[1]).count() + usize::from(!values.is_empty())
}

/// Global accesses are aligned to their size (up to 32 bytes, `ld.v4.f64`; a misaligned one
/// faults), so each lane's falls in one 32-byte sector.
fn global(traffic: &mut GlobalTraffic, accesses: &[LaneAccess]) {
    let mut sectors = [0u64; 32];
    let n = gather(&mut sectors, accesses, |a| a.address >> 5);
    traffic.requests += 1;
    traffic.sectors += distinct(&mut sectors[..n]) as u64;
    traffic.bytes_requested += accesses.iter().map(|a| a.bytes as u64).sum::<u64>();
}

/// Bank conflicts as CUDA counts them for 32 banks of 4 bytes: a request takes as many
/// wavefronts as the most distinct words one bank must deliver; lanes reading the same word
/// share it (broadcast). A 64- or 128-bit access covers 2 or 4 words.
// Forced inline, as when `commit` was its only caller: called out of line from three places,
// the profiled interpreter executed 2-3% more host instructions (callgrind, speed example).
#[inline(always)]
fn shared(traffic: &mut SharedTraffic, accesses: &[LaneAccess]) {
    let mut words = [0u64; 128];
    let mut n = 0;
    for a in accesses.iter().take(32) {
        let first = a.address >> 2;
        let last = (a.address + a.bytes.max(1) as u64 - 1) >> 2;
        for w in first..=last.min(first + 3) {
            words[n] = w;
            n += 1;
        }
    }
    let words = &mut words[..n];
    let unique = distinct(words);
    let mut per_bank = [0u32; 32];
    let mut last = None;
    for &w in words.iter() {
        if last != Some(w) {
            per_bank[(w % 32) as usize] += 1;
            last = Some(w);
        }
    }
    traffic.requests += 1;
    traffic.wavefronts += per_bank.iter().copied().max().unwrap_or(0).max(1) as u64;
    traffic.ideal_wavefronts += unique.div_ceil(32).max(1) as u64;
}

/// `cp.async` (`LDGSTS`): each lane's copy is a global load (the bytes it reads: none with a
/// src-size of 0) and a shared store of its whole size, counted as one request of each.
fn cp_async(p: &mut Profile, accesses: &[LaneAccess]) {
    let (mut global_part, mut shared_part) =
        ([LaneAccess::default(); 32], [LaneAccess::default(); 32]);
    let (mut g, mut s) = (0, 0);
    for a in accesses {
        if a.space == Landed::Shared && s < 32 {
            shared_part[s] = *a;
            s += 1;
        } else if a.space == Landed::Global && g < 32 {
            global_part[g] = *a;
            g += 1;
        }
    }
    if g > 0 {
        global(&mut p.global_loads, &global_part[..g]);
    }
    if s > 0 {
        shared(&mut p.shared_stores, &shared_part[..s]);
    }
}

/// Counts the shared-memory traffic of an `ldmatrix` whose matrices' rows (16 bytes each, 8 per
/// matrix, lanes 8j..8j+8 giving matrix j's) start at the shared offsets `rows`: one request,
/// and per matrix one pass of its 8 rows through the banks, as the hardware serves an
/// `ldmatrix` a matrix (128 bytes, one wavefront without conflicts) at a time.
pub(crate) fn commit_ldmatrix(p: &mut Profile, rows: &[u64]) {
    // Each matrix's pass counted as a request of its own, then the passes summed as one.
    let mut passes = SharedTraffic::default();
    for matrix in rows.chunks(8) {
        let mut accesses = [LaneAccess::default(); 8];
        for (a, &address) in accesses.iter_mut().zip(matrix) {
            *a = LaneAccess {
                pc: 0,
                space: Landed::Shared,
                address,
                bytes: 16,
            };
        }
        shared(&mut passes, &accesses[..matrix.len()]);
    }
    p.shared_loads.requests += 1;
    p.shared_loads.wavefronts += passes.wavefronts;
    p.shared_loads.ideal_wavefronts += passes.ideal_wavefronts;
}

/// The class of a warp instruction; `landed` is where its first pred-on lane's access went.
fn classify(op: &Op, landed: Option<Landed>) -> InstrClass {
    let float = |f64: bool| {
        if f64 {
            InstrClass::Fp64
        } else {
            InstrClass::Fp32
        }
    };
    let memory = |space: Space, load: bool| {
        let landed = landed.unwrap_or(match space {
            Space::Shared => Landed::Shared,
            Space::Local => Landed::Local,
            Space::KernelParam | Space::FrameParam => Landed::Param,
            Space::Generic | Space::Global => Landed::Global,
        });
        match (landed, load) {
            (Landed::Global, true) => InstrClass::LoadGlobal,
            (Landed::Global, false) => InstrClass::StoreGlobal,
            (Landed::Shared, true) => InstrClass::LoadShared,
            (Landed::Shared, false) => InstrClass::StoreShared,
            (Landed::Local, true) => InstrClass::LoadLocal,
            (Landed::Local, false) => InstrClass::StoreLocal,
            (Landed::Param, _) => InstrClass::Param,
        }
    };
    match op {
        Op::Mov { .. }
        | Op::Special { .. }
        | Op::Unpack { .. }
        | Op::Pack { .. }
        | Op::Selp { .. }
        | Op::PredLogic { .. }
        | Op::Cvta { .. }
        | Op::Nop => InstrClass::Move,
        Op::Int { .. }
        | Op::MulWide { .. }
        | Op::Mad { .. }
        | Op::IntUn { .. }
        | Op::Bfe { .. }
        | Op::Bfi { .. }
        | Op::Shf { .. }
        | Op::Prmt { .. }
        | Op::Bfind { .. }
        | Op::Mul24 { .. }
        | Op::IsSpace { .. }
        | Op::Sad { .. } => InstrClass::Integer,
        Op::Float { f64, .. } | Op::Fma { f64, .. } | Op::Testp { f64, .. } => float(*f64),
        Op::FloatUn { op, f64, .. } => match op {
            FloatUnOp::Neg | FloatUnOp::Abs | FloatUnOp::Sqrt | FloatUnOp::Rcp => float(*f64),
            _ => InstrClass::Special,
        },
        Op::Setp { ty, .. } | Op::Set { ty, .. } => match (ty.kind, ty.bytes) {
            (Kind::Float, 8) => InstrClass::Fp64,
            (Kind::Float, 2) | (Kind::BFloat, _) => InstrClass::Fp16,
            (Kind::Float, _) => InstrClass::Fp32,
            _ => InstrClass::Integer,
        },
        Op::Half { .. } | Op::SetpX2 { .. } => InstrClass::Fp16,
        Op::Cvt { .. } => InstrClass::Conversion,
        Op::Ld { addr, .. } => memory(addr.space, true),
        Op::St { addr, .. } => memory(addr.space, false),
        // An mbarrier's arrivals and tests are atomics on its shared-memory word.
        Op::Mbarrier { .. } => InstrClass::AtomicShared,
        Op::Atom { .. } => match landed {
            Some(Landed::Shared) => InstrClass::AtomicShared,
            _ => InstrClass::AtomicGlobal,
        },
        Op::Bra { .. }
        | Op::BrxIdx { .. }
        | Op::Call { .. }
        | Op::Vprintf { .. }
        | Op::Ret
        | Op::Exit
        | Op::Trap
        | Op::Unsupported(_) => InstrClass::Control,
        Op::BarSync { .. } | Op::BarRed { .. } => InstrClass::Barrier,
        Op::BarWarpSync { .. }
        | Op::Shfl { .. }
        | Op::Vote { .. }
        | Op::Match { .. }
        | Op::ActiveMask { .. } => InstrClass::WarpCollective,
        Op::Mma { .. } => InstrClass::Tensor,
        // `ldmatrix` reads shared memory for the warp; `cp.async` is a global load whose bytes
        // land in shared memory (`LDGSTS`); its commit and wait are bookkeeping.
        Op::Ldmatrix { .. } => InstrClass::LoadShared,
        Op::CpAsync { .. } => InstrClass::LoadGlobal,
        Op::CpAsyncCommit | Op::CpAsyncWait { .. } => InstrClass::Control,
    }
}
