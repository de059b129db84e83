//! PTX spellings to the IR's values: an opcode split at its dots ([`Opcode`], with its
//! modifiers and rounding mode), type names, state spaces, comparisons, atomic operations and
//! special registers. Pure lookups with no decoder state, kept apart from the instruction
//! decoders (`mod.rs` and its per-family files) that call them, so that those read as semantics.

use crate::ir::*;
use crate::parse::{Instruction, Operand};

/// `.u32` (and `.b32`, which the emulator treats alike): the type of bit positions, lane masks,
/// indices and other 32-bit operands.
pub(super) const U32: Ty = Ty {
    kind: Kind::Unsigned,
    bytes: 4,
};

pub(super) fn ty(name: &str) -> Option<Ty> {
    if name == "bf16" {
        return Some(Ty {
            kind: Kind::BFloat,
            bytes: 2,
        });
    }
    let (kind, bits) = match name.as_bytes().first()? {
        b'b' | b'u' => (Kind::Unsigned, &name[1..]),
        b's' => (Kind::Signed, &name[1..]),
        b'f' => (Kind::Float, &name[1..]),
        b'p' if name == "pred" => {
            return Some(Ty {
                kind: Kind::Pred,
                bytes: 1,
            })
        }
        _ => return None,
    };
    let bytes = match bits {
        "8" => 1,
        "16" => 2,
        "32" => 4,
        "64" => 8,
        _ => return None,
    };
    Some(Ty { kind, bytes })
}

pub(super) fn mask(bytes: u8) -> u64 {
    if bytes >= 8 {
        u64::MAX
    } else {
        (1u64 << (bytes * 8)) - 1
    }
}

/// An instruction's opcode split at its dots, with its operands.
pub(super) struct Opcode<'a> {
    pub(super) parts: Vec<&'a str>,
    pub(super) operands: &'a [Operand],
    pub(super) instruction: &'a Instruction,
}

impl Opcode<'_> {
    pub(super) fn has(&self, modifier: &str) -> bool {
        self.parts[1..].contains(&modifier)
    }
    /// The type the opcode ends with.
    pub(super) fn last_ty(&self) -> Option<Ty> {
        self.parts.last().and_then(|p| ty(p))
    }
    pub(super) fn need(&self, n: usize) -> Result<(), String> {
        if self.operands.len() < n {
            Err(format!(
                "{} needs {n} operands",
                self.instruction.opcode.join(".")
            ))
        } else {
            Ok(())
        }
    }
    pub(super) fn round(&self) -> Round {
        if self.has("rz") || self.has("rzi") {
            Round::Zero
        } else if self.has("rm") || self.has("rmi") {
            Round::Down
        } else if self.has("rp") || self.has("rpi") {
            Round::Up
        } else {
            Round::Nearest
        }
    }
    /// The error that makes the instruction an [`Op::Unsupported`] (a fault when it runs).
    pub(super) fn unsupported(&self) -> String {
        format!(
            "unsupported instruction {}",
            self.instruction.opcode.join(".")
        )
    }
}

/// A `mov` between a `t` register and `count` pieces: how many and their bits.
pub(super) fn pieces(t: Ty, count: usize) -> Result<(u8, u8), String> {
    let bits = t.bytes as usize * 8 / count.max(1);
    if !(count == 2 || count == 4) || bits < 8 {
        return Err(format!("mov of {count} pieces into {} bits", t.bytes * 8));
    }
    Ok((count as u8, bits as u8))
}

pub(super) fn space_of(parts: &[&str]) -> Option<Space> {
    parts[1..].iter().find_map(|p| match *p {
        "global" => Some(Space::Global),
        "shared" => Some(Space::Shared),
        "local" => Some(Space::Local),
        "param" => Some(Space::KernelParam),
        "const" => Some(Space::Global),
        _ => None,
    })
}

pub(super) fn compare(name: &str) -> Option<Cmp> {
    Some(match name {
        "eq" => Cmp::Eq,
        "ne" => Cmp::Ne,
        "lt" | "lo" => Cmp::Lt,
        "le" | "ls" => Cmp::Le,
        "gt" | "hi" => Cmp::Gt,
        "ge" | "hs" => Cmp::Ge,
        "equ" => Cmp::Equ,
        "neu" => Cmp::Neu,
        "ltu" => Cmp::Ltu,
        "leu" => Cmp::Leu,
        "gtu" => Cmp::Gtu,
        "geu" => Cmp::Geu,
        "num" => Cmp::Num,
        "nan" => Cmp::Nan,
        _ => return None,
    })
}

pub(super) fn bool_op(name: &str) -> Option<BoolOp> {
    Some(match name {
        "and" => BoolOp::And,
        "or" => BoolOp::Or,
        "xor" => BoolOp::Xor,
        _ => return None,
    })
}

pub(super) fn atom_op(name: &str) -> Option<AtomOp> {
    Some(match name {
        "add" => AtomOp::Add,
        "min" => AtomOp::Min,
        "max" => AtomOp::Max,
        "exch" => AtomOp::Exch,
        "cas" => AtomOp::Cas,
        "and" => AtomOp::And,
        "or" => AtomOp::Or,
        "xor" => AtomOp::Xor,
        "inc" => AtomOp::Inc,
        "dec" => AtomOp::Dec,
        _ => return None,
    })
}

pub(super) fn special(name: &str) -> Option<Special> {
    let axis = |s: &str| match s {
        "x" => Some(0),
        "y" => Some(1),
        "z" => Some(2),
        _ => None,
    };
    let (base, field) = name
        .split_once('.')
        .map_or((name, None), |(b, f)| (b, Some(f)));
    Some(match (base, field) {
        ("%tid", Some(f)) => Special::Tid(axis(f)?),
        ("%ntid", Some(f)) => Special::Ntid(axis(f)?),
        ("%ctaid", Some(f)) => Special::Ctaid(axis(f)?),
        ("%nctaid", Some(f)) => Special::Nctaid(axis(f)?),
        ("%laneid", None) => Special::LaneId,
        ("%warpid", None) => Special::WarpId,
        ("%nwarpid", None) => Special::NWarpId,
        ("%dynamic_smem_size", None) => Special::DynamicSmem,
        ("%total_smem_size", None) => Special::TotalSmem,
        ("%lanemask_eq", None) => Special::LaneMaskEq,
        ("%lanemask_lt", None) => Special::LaneMaskLt,
        ("%lanemask_le", None) => Special::LaneMaskLe,
        ("%lanemask_gt", None) => Special::LaneMaskGt,
        ("%lanemask_ge", None) => Special::LaneMaskGe,
        ("%clock", None) => Special::Clock,
        ("%clock64", None) => Special::Clock64,
        ("%globaltimer", None) => Special::GlobalTimer,
        ("%smid", None) => Special::SmId,
        ("%gridid" | "%nsmid", None) => Special::Zero,
        _ => return None,
    })
}
