//! The tensor cores' element kinds ([`Kind`]) and the fragment layout of `mma.sync` (which lane
//! holds which element of the A, B and C tiles), as the PTX ISA defines them.
//!
//! A lowest layer beside [`crate::machine`]: the nvptx product (`mma/ptx.rs`), the CPU runtime's
//! product (`cpu/mma.rs`) and the language's fragments (`mma/fragment.rs`) all read it, and it
//! imports nothing from the crate.

#[doc(hidden)]
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    F16,
    Bf16,
    Tf32,
    S8,
    U8,
}

impl Kind {
    /// Bits per element in a register.
    pub(crate) const fn bits(self) -> usize {
        match self {
            Kind::F16 | Kind::Bf16 => 16,
            Kind::Tf32 => 32,
            Kind::S8 | Kind::U8 => 8,
        }
    }
}

#[inline(always)]
pub(crate) fn a_position(kind: Kind, lane: usize, i: usize) -> (usize, usize) {
    let (g, t) = (lane / 4, lane % 4);
    match kind {
        Kind::F16 | Kind::Bf16 => (g + 8 * (i / 2 % 2), 2 * t + i % 2 + 8 * (i / 4)),
        Kind::Tf32 => (g + 8 * (i % 2), t + 4 * (i / 2)),
        Kind::S8 | Kind::U8 => (g + 8 * (i / 4 % 2), 4 * t + i % 4 + 16 * (i / 8)),
    }
}

#[inline(always)]
pub(crate) fn b_position(kind: Kind, lane: usize, i: usize) -> (usize, usize) {
    let (g, t) = (lane / 4, lane % 4);
    match kind {
        Kind::F16 | Kind::Bf16 => (2 * t + i % 2 + 8 * (i / 2), g),
        Kind::Tf32 => (t + 4 * i, g),
        Kind::S8 | Kind::U8 => (4 * t + i % 4 + 16 * (i / 4), g),
    }
}

#[inline(always)]
pub(crate) fn c_position(lane: usize, i: usize) -> (usize, usize) {
    (lane / 4 + 8 * (i / 2), 2 * (lane % 4) + i % 2)
}
