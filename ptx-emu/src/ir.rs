//! The decoded form a kernel runs as: one flat instruction list per kernel (its own code and the
//! functions it calls), registers as indices into the thread's register file, symbols resolved
//! to addresses, labels to instruction indices. Every register holds its value in the low bits
//! of a `u64`, zero-extended; predicates are 0 or 1.

mod parts;

pub(crate) use parts::*;

/// A call: the callee's first instruction, and the bytes to copy between the caller's call
/// parameters and the callee's (arguments in, return values out), as frame-parameter offsets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CallSite {
    pub target: u32,
    pub args: Vec<(u32, u32, u32)>,
    pub returns: Vec<(u32, u32, u32)>,
    /// The callee's [`Frame`] (an index into [`Program::frames`]) when it is recursive: the call
    /// then begins a new activation (`recursion.rs`). `None` for every other call, which runs
    /// in the callee's one fixed set of registers and bytes, as before.
    pub frame: Option<u32>,
}

/// What each activation of a recursive function (one that may be active more than once at a
/// time: it calls itself, directly or through others) owns, as PTX's ABI gives every call its
/// own: registers, `.param` space, and a stack frame for its `.local` variables. The decoder
/// lays the function out once, like any other; a call to it saves the activation it interrupts
/// and a return restores it (`recursion.rs`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Frame {
    /// Its registers, `start..end` (a function's registers are numbered together).
    pub registers: (u32, u32),
    /// Its call-parameter bytes, `start..end`: its parameters and return values, then the
    /// `.param`s its body declares (for the calls it makes).
    pub params: [(u32, u32); 2],
    /// Bytes of `.local` one activation takes on the thread's stack, and their alignment.
    pub local_bytes: u32,
    pub local_align: u32,
    /// Each `.local` variable's register, which holds its address in the activation's stack
    /// frame (written at the call), and its offset in the frame.
    pub locals: Vec<(Reg, u32)>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Op {
    Mov {
        d: Reg,
        a: Src,
    },
    Special {
        d: Reg,
        which: Special,
    },
    /// `mov.b64 {lo, hi}, %rd` (and `.b32` into two halves, `{a,b,c,d}` into bytes... ): split
    /// `a` into `n` pieces of `bits` each, low first.
    Unpack {
        d: [Reg; 4],
        n: u8,
        bits: u8,
        a: Src,
    },
    /// `mov.b64 %rd, {lo, hi}`: the inverse.
    Pack {
        d: Reg,
        s: [Src; 4],
        n: u8,
        bits: u8,
    },
    Int {
        op: IntOp,
        ty: Ty,
        d: Reg,
        a: Src,
        b: Src,
    },
    /// `mul.wide`: `ty` is the sources' type; the result is twice as wide.
    MulWide {
        ty: Ty,
        d: Reg,
        a: Src,
        b: Src,
    },
    /// `mad.lo`, `mad.hi` (`wide` false) and `mad.wide`.
    Mad {
        hi: bool,
        wide: bool,
        ty: Ty,
        d: Reg,
        a: Src,
        b: Src,
        c: Src,
    },
    /// `sad`: `c + |a - b|`.
    Sad {
        ty: Ty,
        d: Reg,
        a: Src,
        b: Src,
        c: Src,
    },
    IntUn {
        op: UnOp,
        ty: Ty,
        d: Reg,
        a: Src,
    },
    Float {
        op: FloatOp,
        f64: bool,
        round: Round,
        ftz: bool,
        /// `.sat`: the result clamped to [0, 1], NaN to 0.
        sat: bool,
        d: Reg,
        a: Src,
        b: Src,
    },
    Fma {
        f64: bool,
        round: Round,
        ftz: bool,
        /// `.sat`: the result clamped to [0, 1], NaN to 0.
        sat: bool,
        d: Reg,
        a: Src,
        b: Src,
        c: Src,
    },
    FloatUn {
        op: FloatUnOp,
        f64: bool,
        ftz: bool,
        d: Reg,
        a: Src,
    },
    Cvt {
        cvt: Conversion,
        d: Reg,
        a: Src,
    },
    Setp {
        cmp: Cmp,
        ty: Ty,
        d: Reg,
        not_d: Option<Reg>,
        a: Src,
        b: Src,
        combine: Option<(BoolOp, Src, bool)>,
    },
    Selp {
        d: Reg,
        a: Src,
        b: Src,
        p: Src,
    },
    /// Predicate logic (`and.pred`, `not.pred`...): on 0/1 values.
    PredLogic {
        op: BoolOp,
        d: Reg,
        a: Src,
        b: Src,
    },
    Bfe {
        ty: Ty,
        d: Reg,
        a: Src,
        pos: Src,
        len: Src,
    },
    Bfi {
        ty: Ty,
        d: Reg,
        a: Src,
        b: Src,
        pos: Src,
        len: Src,
    },
    /// Funnel shift of `{b:a}` by `c` (`shf.l`/`shf.r`, `.wrap` or `.clamp`).
    Shf {
        left: bool,
        wrap: bool,
        d: Reg,
        a: Src,
        b: Src,
        c: Src,
    },
    /// `prmt.b32` (the default mode): bytes of `{b, a}` picked by the selectors in `c`.
    Prmt {
        d: Reg,
        a: Src,
        b: Src,
        c: Src,
    },
    /// The most significant non-sign bit's position (`0xffffffff` if none); `.shiftamt`: 31 - it.
    Bfind {
        ty: Ty,
        shift_amount: bool,
        d: Reg,
        a: Src,
    },
    Testp {
        test: FloatTest,
        f64: bool,
        d: Reg,
        a: Src,
    },
    /// `mul24`/`mad24`: 24-bit operands, the low (or `.hi`: bits 16..47) of the product, plus c.
    Mul24 {
        hi: bool,
        ty: Ty,
        d: Reg,
        a: Src,
        b: Src,
        c: Src,
    },
    Ld {
        access: Access,
        d: [Reg; 4],
        addr: Addr,
    },
    St {
        access: Access,
        s: [Src; 4],
        addr: Addr,
    },
    Atom {
        op: AtomOp,
        ty: Ty,
        d: Option<Reg>,
        addr: Addr,
        b: Src,
        c: Src,
    },
    /// `cvta.space` (to generic) or `cvta.to.space` (`to`).
    Cvta {
        to: bool,
        space: Space,
        d: Reg,
        a: Src,
    },
    Bra {
        target: u32,
    },
    BrxIdx {
        index: Src,
        table: u32,
    },
    Call {
        site: u32,
    },
    /// `call vprintf, (format, args)`: CUDA's printf, built in (see `printf.rs`); the
    /// frame-parameter offsets of its two pointer arguments and of its `int` result.
    Vprintf {
        format: u32,
        args: u32,
        ret: Option<u32>,
    },
    Ret,
    Exit,
    Trap,
    BarSync {
        id: Src,
    },
    /// `bar.red.popc.u32` (`popc`) or `bar.red.and/or.pred`.
    BarRed {
        op: Option<BoolOp>,
        d: Reg,
        id: Src,
        p: Src,
        negate: bool,
    },
    BarWarpSync {
        mask: Src,
    },
    Shfl {
        mode: ShflMode,
        d: Reg,
        p: Option<Reg>,
        a: Src,
        b: Src,
        c: Src,
        mask: Src,
    },
    Vote {
        mode: VoteMode,
        d: Reg,
        p: Src,
        negate: bool,
        mask: Src,
    },
    /// `match.any.sync` / `match.all.sync` on a `.b32` (`wide` false) or `.b64` value.
    Match {
        mode: MatchMode,
        wide: bool,
        d: Reg,
        p: Option<Reg>,
        a: Src,
        mask: Src,
    },
    /// `activemask.b32`: the lanes of the warp that execute this instruction together. The
    /// scheduler answers it once no lane of the warp can run further (docs/emulator.md).
    ActiveMask {
        d: Reg,
    },
    /// `mma.sync.aligned`: a collective of the whole warp (`mma.rs`); `a`, `b`, `c` are the
    /// fragments' 32-bit registers (only the first 2 of `b` are used).
    Mma {
        kind: MmaKind,
        d: [Reg; 4],
        a: [Src; 4],
        b: [Src; 2],
        c: [Src; 4],
    },
    /// `ldmatrix.sync.aligned.m8n8.x{count}{.trans}.b16`: a collective of the whole warp.
    Ldmatrix {
        count: u8,
        trans: bool,
        d: [Reg; 4],
        addr: Addr,
    },
    /// `cp.async.{ca,cg}.shared.global [dst], [src], bytes{, src_size}`: queued on the thread
    /// until a `cp.async.wait_group`/`wait_all` completes its group (`async_copy.rs`).
    CpAsync {
        bytes: u8,
        dst: Addr,
        src: Addr,
        src_size: Option<Src>,
    },
    /// `cp.async.commit_group`.
    CpAsyncCommit,
    /// `cp.async.wait_group pending` (`Some`), or `cp.async.wait_all` (`None`: every copy,
    /// committed or not).
    CpAsyncWait {
        pending: Option<u32>,
    },
    /// `membar`, `fence`: a block runs on one host thread and global memory is sequentially
    /// consistent enough (atomic words), so ordering needs no work.
    Nop,
    /// An instruction the emulator does not implement: faults when run, so a module with one
    /// still loads and its other kernels run.
    Unsupported(Box<str>),
    // Added last: the variants before keep their discriminants (the interpreter's loop ran
    // a little fewer host instructions so than with these two among the others).
    /// `.f16`/`.bf16` arithmetic (`bfloat`), on one value or with `packed` on both halves of
    /// a 32-bit register (`.f16x2`, `.bf16x2`); `b` and `c` unused by the unary operations.
    Half {
        op: HalfOp,
        bfloat: bool,
        packed: bool,
        round: Round,
        ftz: bool,
        clamp: Clamp,
        d: Reg,
        a: Src,
        b: Src,
        c: Src,
    },
    /// `set.cmp.dtype.stype`: `one` (all ones for an integer `dtype`, 1.0 for a float one)
    /// when the comparison holds, else 0.
    Set {
        cmp: Cmp,
        ty: Ty,
        one: u64,
        d: Reg,
        a: Src,
        b: Src,
    },
    /// `isspacep.space p, a`: whether generic address `a` is in `space`'s window (`Shared`,
    /// `Local`, or `Global` for every address outside both).
    IsSpace {
        space: Space,
        d: Reg,
        a: Src,
    },
    /// `setp` on packed `.f16x2`/`.bf16x2` pairs: `d` from the low halves, `q` from the high
    /// ones, each combined with `combine`'s predicate (PTX ISA: `p|q` are not complements here).
    SetpX2 {
        cmp: Cmp,
        bfloat: bool,
        ftz: bool,
        d: Reg,
        q: Reg,
        a: Src,
        b: Src,
        combine: Option<(BoolOp, Src, bool)>,
    },
    /// An `mbarrier` operation on the 64-bit barrier object at `addr` in shared memory
    /// (`mbarrier.rs`): `b` is `init`'s count, `arrive`'s count, or a wait's state or parity.
    Mbarrier {
        op: MbarrierOp,
        d: Option<Reg>,
        addr: Addr,
        b: Src,
    },
}

/// One instruction: its guard (`@%p` / `@!%p`), operation and source line.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Instr {
    pub guard: Option<(Reg, bool)>,
    pub op: Op,
    pub line: u32,
}

/// A kernel ready to run.
#[derive(Debug, Clone)]
pub(crate) struct Program {
    pub name: String,
    pub code: Vec<Instr>,
    pub calls: Vec<CallSite>,
    /// Each `brx.idx` table's targets.
    pub tables: Vec<Vec<u32>>,
    pub registers: u32,
    /// Bytes of per-thread call-parameter space.
    pub frame_param_bytes: u32,
    /// Each kernel parameter's offset in the packed parameter buffer, with its size.
    pub params: Vec<(u32, u32)>,
    pub param_bytes: u32,
    pub static_shared_bytes: u32,
    /// Where dynamic shared memory starts (after the static variables, 16-byte aligned).
    pub dynamic_shared_offset: u32,
    /// Per-thread local memory: the `.local` variables of the kernel and of its functions that
    /// are not recursive, then (from `stack_base`) the stack of recursive activations' frames.
    pub local_bytes: u32,
    pub stack_base: u32,
    /// The recursive functions' activations (`CallSite::frame`); empty in most kernels.
    pub frames: Vec<Frame>,
    /// The PTX source line text of each line number (for faults).
    pub source: std::sync::Arc<Vec<String>>,
}
