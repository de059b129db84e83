//! A warp's `mma` operands as the lanes hold them: one lane's registers ([`Operands`]) and the
//! gathers that read the A, B and C tiles out of the 32 lanes' registers by the fragment layouts
//! (`tensor_core`'s positions), as f32 values ([`element`]).

use crate::cpu::waits::WARP;
use crate::tensor_core::{a_position, b_position, Kind};

/// One lane's operands of an `mma`, as registers.
#[derive(Clone, Copy, Default)]
pub(crate) struct Operands {
    pub(crate) a: [u32; 4],
    pub(crate) b: [u32; 2],
    pub(crate) c: [u32; 4],
}

/// An A or B element's value (exact in f32; integers as integers).
pub(crate) fn element(kind: Kind, bits: u32) -> f32 {
    match kind {
        Kind::F16 => half::f16::from_bits(bits as u16).to_f32(),
        Kind::Bf16 => half::bf16::from_bits(bits as u16).to_f32(),
        Kind::Tf32 => f32::from_bits(bits & !0x1fff),
        Kind::S8 => bits as u8 as i8 as f32,
        Kind::U8 => bits as u8 as f32,
    }
}

/// C as a 16×8 tile of bits: lane (g, t) = (lane / 4, lane % 4) holds (g, 2t), (g, 2t + 1),
/// (g + 8, 2t), (g + 8, 2t + 1) (`c_position`).
#[inline(always)]
pub(super) fn gather_c(lanes: &[Operands; WARP]) -> [[u32; 8]; 16] {
    let mut c = [[0u32; 8]; 16];
    for (lane, theirs) in lanes.iter().enumerate() {
        let (g, t) = (lane / 4, lane % 4);
        c[g][2 * t] = theirs.c[0];
        c[g][2 * t + 1] = theirs.c[1];
        c[g + 8][2 * t] = theirs.c[2];
        c[g + 8][2 * t + 1] = theirs.c[3];
    }
    c
}

/// A (16×16, row-major) of an f16 or bf16 `mma` as f32, `convert` turning raw halves into
/// values: lane (g, t)'s register j holds row g + 8·(j % 2), columns 2t + 8·(j / 2) and the
/// next, low half first (`a_position`). Each register is one store of two raw halves, and the
/// tile is converted at once (F16C's eight at a time for f16) rather than element by element.
#[inline(always)]
pub(super) fn gather_a_halves(
    lanes: &[Operands; WARP],
    convert: impl Fn(&[u16], &mut [f32]),
) -> [[f32; 16]; 16] {
    let mut bits = [[0u16; 16]; 16];
    for (lane, theirs) in lanes.iter().enumerate() {
        let (g, t) = (lane / 4, lane % 4);
        for (j, &word) in theirs.a.iter().enumerate() {
            let (row, col) = (g + 8 * (j % 2), 2 * t + 8 * (j / 2));
            bits[row][col] = word as u16;
            bits[row][col + 1] = (word >> 16) as u16;
        }
    }
    let mut a = [[0f32; 16]; 16];
    convert(bits.as_flattened(), a.as_flattened_mut());
    a
}

/// B (16×8, row-major) of an f16 or bf16 `mma` as f32, as [`gather_a_halves`]: lane (g, t)'s
/// register j holds column g, k = 2t + 8j and the next (`b_position`).
#[inline(always)]
pub(super) fn gather_b_halves(
    lanes: &[Operands; WARP],
    convert: impl Fn(&[u16], &mut [f32]),
) -> [[f32; 8]; 16] {
    let mut bits = [[0u16; 8]; 16];
    for (lane, theirs) in lanes.iter().enumerate() {
        let (g, t) = (lane / 4, lane % 4);
        for (j, &word) in theirs.b.iter().enumerate() {
            let k = 2 * t + 8 * j;
            bits[k][g] = word as u16;
            bits[k + 1][g] = (word >> 16) as u16;
        }
    }
    let mut b = [[0f32; 8]; 16];
    convert(bits.as_flattened(), b.as_flattened_mut());
    b
}

/// A (16×K) and B (K×8) of a tf32 or integer `mma` as f32 (exact), by each element's position.
#[inline(always)]
pub(super) fn gather<const K: usize>(
    kind: Kind,
    lanes: &[Operands; WARP],
) -> ([[f32; K]; 16], [[f32; 8]; K]) {
    let bits = kind.bits();
    let per = 32 / bits;
    let field = |regs: &[u32], i: usize| {
        let word = regs[i / per];
        if bits == 32 {
            word
        } else {
            (word >> (bits * (i % per))) & ((1 << bits) - 1)
        }
    };
    let mut a = [[0f32; K]; 16];
    let mut b = [[0f32; 8]; K];
    for (lane, theirs) in lanes.iter().enumerate() {
        for i in 0..16 * K / 32 {
            let (r, col) = a_position(kind, lane, i);
            a[r][col] = element(kind, field(&theirs.a, i));
        }
        for i in 0..K * 8 / 32 {
            let (r, col) = b_position(kind, lane, i);
            b[r][col] = element(kind, field(&theirs.b, i));
        }
    }
    (a, b)
}
