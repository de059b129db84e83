//! The pieces [`Op`](super::Op)'s variants are built from: registers and operands, scalar
//! types, state spaces, addresses and access shapes, and the small enums that select an
//! operation within a family (integer, float, 16-bit, comparison, atomic, warp, `mma`,
//! `mbarrier`). Kept apart from the instruction set itself (`ir.rs`), which is long on its own.

/// A register's index in the thread's register file.
pub(crate) type Reg = u32;

/// A source operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Src {
    Reg(Reg),
    Imm(u64),
}

/// A scalar type: its kind and width in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ty {
    pub kind: Kind,
    pub bytes: u8,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `.b` and `.u`.
    Unsigned,
    Signed,
    Float,
    /// `.bf16`: bfloat16 (8 exponent bits, 7 fraction bits).
    BFloat,
    Pred,
}

/// The state space an address is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Space {
    Generic,
    Global,
    Shared,
    Local,
    /// The kernel's parameters (read-only, shared by all threads).
    KernelParam,
    /// Call parameters and return values (`.param` in a function or call sequence): per thread.
    FrameParam,
}

/// Float rounding (`.rn .rz .rm .rp`); for float→integer `cvt`, `.rni .rzi .rmi .rpi` map here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Round {
    Nearest,
    Zero,
    Down,
    Up,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IntOp {
    Add,
    Sub,
    MulLo,
    MulHi,
    Min,
    Max,
    Div,
    Rem,
    And,
    Or,
    Xor,
    Shl,
    Shr,
    /// `add.sat.s32`, `sub.sat.s32`: clamped to the s32 range.
    AddSat,
    SubSat,
    /// `|a - b|`, compared at the type's signedness (the inner part of `sad`).
    AbsDiff,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UnOp {
    Not,
    Neg,
    Abs,
    Popc,
    Clz,
    Brev,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FloatOp {
    Add,
    Sub,
    Mul,
    Div,
    Min,
    Max,
    Copysign,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FloatUnOp {
    Neg,
    Abs,
    Sqrt,
    SqrtApprox,
    Rcp,
    RcpApprox,
    Rsqrt,
    Ex2,
    Lg2,
    Sin,
    Cos,
    Tanh,
}

/// Arithmetic on `.f16`/`.bf16` and their packed `x2` forms ([`Op::Half`](super::Op::Half)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HalfOp {
    Add,
    Sub,
    Mul,
    Fma,
    /// `min`/`max`: a NaN operand gives the other one.
    Min,
    Max,
    /// `min.NaN`/`max.NaN`: a NaN operand gives the canonical NaN.
    MinNaN,
    MaxNaN,
    /// `min.xorsign.abs`/`max.xorsign.abs` (with `.NaN`: `nan`): the smaller or larger
    /// magnitude, with the XOR of the operands' signs; a NaN result is the canonical one.
    MinXorsign {
        nan: bool,
    },
    MaxXorsign {
        nan: bool,
    },
    Neg,
    Abs,
    /// `ex2.approx`, `tanh.approx`.
    Ex2,
    Tanh,
}

/// What a 16-bit float result is clamped to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Clamp {
    None,
    /// `.sat`: [0, 1], NaN to 0.
    Sat,
    /// `.relu`: negative to 0, NaN kept (canonical).
    Relu,
    /// `fma.oob` (`relu`: `fma.oob.relu`): +0 when an operand is the OOB-NaN that a tensor
    /// copy fills out-of-bounds elements with (`float16::OOB_NAN`), else as without it.
    Oob {
        relu: bool,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FloatTest {
    Finite,
    Infinite,
    Number,
    NotANumber,
    Normal,
    Subnormal,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// The unordered forms (`equ`, `ltu`, ...): true also when either is NaN.
    Equ,
    Neu,
    Ltu,
    Leu,
    Gtu,
    Geu,
    Num,
    Nan,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BoolOp {
    And,
    Or,
    Xor,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AtomOp {
    Add,
    Min,
    Max,
    Exch,
    Cas,
    And,
    Or,
    Xor,
    Inc,
    Dec,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ShflMode {
    Up,
    Down,
    Bfly,
    Idx,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum VoteMode {
    All,
    Any,
    Uni,
    Ballot,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MatchMode {
    Any,
    All,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Special {
    Tid(u8),
    Ntid(u8),
    Ctaid(u8),
    Nctaid(u8),
    LaneId,
    WarpId,
    NWarpId,
    DynamicSmem,
    TotalSmem,
    LaneMaskEq,
    LaneMaskLt,
    LaneMaskLe,
    LaneMaskGt,
    LaneMaskGe,
    Clock,
    Clock64,
    GlobalTimer,
    SmId,
    Zero,
}

/// The element types of an `mma.sync.aligned` (`mma.rs`): each fixes the shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MmaKind {
    /// `m16n8k16.row.col.f32.f16.f16.f32`.
    F16,
    /// `m16n8k16.row.col.f32.bf16.bf16.f32`.
    Bf16,
    /// `m16n8k8.row.col.f32.tf32.tf32.f32`.
    Tf32,
    /// `m16n8k32.row.col{.satfinite}.s32.{s8,u8}.{s8,u8}.s32`.
    I8 {
        a_signed: bool,
        b_signed: bool,
        saturate: bool,
    },
}

/// `base + offset` in `space`; `base` is a register or, when `None`, the offset is absolute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Addr {
    pub space: Space,
    pub base: Option<Reg>,
    pub offset: i64,
}

/// A `cvt`'s types and modifiers: all [`Op::Cvt`](super::Op::Cvt) needs but its operands, in one
/// value (eight bytes) that the interpreter hands to `arith::convert` and, for the 16-bit
/// floats, on to `float16::convert`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Conversion {
    pub to: Ty,
    pub from: Ty,
    /// The rounding modifier if any (`.rn .rz .rm .rp`, or `.rni .rzi .rmi .rpi`).
    pub round: Option<Round>,
    /// `.rni .rzi .rmi .rpi`: a float rounded to an integral value.
    pub int_round: bool,
    /// `.sat`: clamped to [0, 1] (a float) or to the destination's range (an integer).
    pub sat: bool,
    /// `.ftz`: f32 subnormals in and out flushed to zero.
    pub flush: bool,
}

/// A memory access's shape: `n` elements (1, 2 or 4: `.v2`, `.v4`) of `bytes` each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Access {
    pub bytes: u8,
    pub n: u8,
    /// Loads of `.s8`/`.s16`/`.s32` into a wider register sign-extend.
    pub signed: bool,
}

/// What an [`Op::Mbarrier`](super::Op::Mbarrier) does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MbarrierOp {
    Init,
    /// `arrive` (`drop`: `arrive_drop`, which also lowers the expected count for later phases).
    Arrive {
        drop: bool,
    },
    /// `test_wait` (not `blocking`) or `try_wait`, on a state from `arrive` or (`parity`) a
    /// phase's parity.
    Wait {
        parity: bool,
        blocking: bool,
    },
}
