//! The warp-level matrix instructions' arithmetic: `mma.sync.aligned` (the whole warp's
//! fragments gathered into matrices, multiplied, the result handed back in the fragment
//! layout) and `ldmatrix`'s distribution of 8×8 matrices over the lanes.
//!
//! # Fragment layouts (PTX ISA, "Matrix fragments for mma.m16n8k*")
//! With `g = lane / 4` (the ISA's groupID) and `t = lane % 4` (threadID_in_group), element `i`
//! of a lane's fragment is, in its registers, element `i % per_reg` of register `i / per_reg`,
//! lowest bits first (`per_reg` = 2 for f16/bf16, 1 for tf32, 4 for 8-bit integers):
//!
//! | shape, type | A (row-major M×K) element `i` at | B (K×N) element `i` at | C/D element `i` at |
//! |---|---|---|---|
//! | m16n8k16 f16/bf16 | (g + 8·(i/2 % 2), 2t + i%2 + 8·(i/4)) | (2t + i%2 + 8·(i/2), g) | (g + 8·(i/2), 2t + i%2) |
//! | m16n8k8 tf32 | (g + 8·(i%2), t + 4·(i/2)) | (t + 4·i, g) | same |
//! | m16n8k32 s8/u8 | (g + 8·(i/4 % 2), 4t + i%4 + 16·(i/8)) | (4t + i%4 + 16·(i/4), g) | same |
//!
//! # Arithmetic (the ISA leaves the order and intermediate rounding of the k-sum open)
//! Floating point: each `d[m][n]` starts from `c[m][n]` and adds `a[m][k]·b[k][n]` for
//! `k = 0, 1, …, K-1` in that order, each step one fused multiply-add in f32 (the product
//! exact, the sum rounded to nearest even). Inputs are exact in f32 (f16 and bf16 convert
//! exactly; tf32 registers are f32 bit patterns whose low 13 bits the emulator ignores, as the
//! format has 10 fraction bits), so the result differs from the exact `c + Σ a·b` by at most
//! `K · 2^-24 · (|c| + Σ|a·b|)` (to first order; the bound tests use). Hardware sums in another
//! order with its own internal precision: results agree within that bound, not bit for bit.
//! Subnormal inputs and results are kept (no flush to zero). Integers: the exact sum, wrapped
//! to 32 bits, or with `.satfinite` clamped to the s32 range.

use crate::ir::MmaKind;

/// Rows, columns and depth of `kind`'s shape.
pub(crate) fn shape(kind: MmaKind) -> (usize, usize, usize) {
    match kind {
        MmaKind::F16 | MmaKind::Bf16 => (16, 8, 16),
        MmaKind::Tf32 => (16, 8, 8),
        MmaKind::I8 { .. } => (16, 8, 32),
    }
}

/// Where element `i` of lane `lane`'s A, B and C fragments sit in their matrices (table above).
pub(crate) fn a_position(kind: MmaKind, lane: usize, i: usize) -> (usize, usize) {
    let (g, t) = (lane / 4, lane % 4);
    match kind {
        MmaKind::F16 | MmaKind::Bf16 => (g + 8 * (i / 2 % 2), 2 * t + i % 2 + 8 * (i / 4)),
        MmaKind::Tf32 => (g + 8 * (i % 2), t + 4 * (i / 2)),
        MmaKind::I8 { .. } => (g + 8 * (i / 4 % 2), 4 * t + i % 4 + 16 * (i / 8)),
    }
}

pub(crate) fn b_position(kind: MmaKind, lane: usize, i: usize) -> (usize, usize) {
    let (g, t) = (lane / 4, lane % 4);
    match kind {
        MmaKind::F16 | MmaKind::Bf16 => (2 * t + i % 2 + 8 * (i / 2), g),
        MmaKind::Tf32 => (t + 4 * i, g),
        MmaKind::I8 { .. } => (4 * t + i % 4 + 16 * (i / 4), g),
    }
}

pub(crate) fn c_position(lane: usize, i: usize) -> (usize, usize) {
    (lane / 4 + 8 * (i / 2), 2 * (lane % 4) + i % 2)
}

/// Bits per element of A and B.
fn element_bits(kind: MmaKind) -> usize {
    match kind {
        MmaKind::F16 | MmaKind::Bf16 => 16,
        MmaKind::Tf32 => 32,
        MmaKind::I8 { .. } => 8,
    }
}

/// An A or B element's value (exact in f64; integers as integers).
fn element(kind: MmaKind, bits: u32, signed: bool) -> f64 {
    match kind {
        MmaKind::F16 => half::f16::from_bits(bits as u16).to_f64(),
        MmaKind::Bf16 => half::bf16::from_bits(bits as u16).to_f64(),
        MmaKind::Tf32 => f32::from_bits(bits & !0x1fff) as f64,
        MmaKind::I8 { .. } if signed => bits as u8 as i8 as f64,
        MmaKind::I8 { .. } => bits as u8 as f64,
    }
}

/// One `mma` of the whole warp: each lane's A, B and C registers in, its D registers out.
pub(crate) fn mma(
    kind: MmaKind,
    a: &[[u32; 4]; 32],
    b: &[[u32; 2]; 32],
    c: &[[u32; 4]; 32],
) -> [[u32; 4]; 32] {
    let (m, n, k) = shape(kind);
    let bits = element_bits(kind);
    let per_reg = 32 / bits;
    let (a_signed, b_signed) = match kind {
        MmaKind::I8 {
            a_signed, b_signed, ..
        } => (a_signed, b_signed),
        _ => (false, false),
    };
    let field = |regs: &[u32], i: usize| -> u32 {
        let word = regs[i / per_reg];
        if bits == 32 {
            word
        } else {
            (word >> (bits * (i % per_reg))) & ((1 << bits) - 1)
        }
    };
    let mut am = vec![0f64; m * k];
    let mut bm = vec![0f64; k * n];
    for lane in 0..32 {
        for i in 0..m * k / 32 {
            let (r, col) = a_position(kind, lane, i);
            am[r * k + col] = element(kind, field(&a[lane], i), a_signed);
        }
        for i in 0..k * n / 32 {
            let (row, col) = b_position(kind, lane, i);
            bm[row * n + col] = element(kind, field(&b[lane], i), b_signed);
        }
    }
    let mut d = [[0u32; 4]; 32];
    for lane in 0..32 {
        for i in 0..4 {
            let (r, col) = c_position(lane, i);
            let products = (0..k).map(|kk| (am[r * k + kk], bm[kk * n + col]));
            d[lane][i] = match kind {
                MmaKind::I8 { saturate, .. } => {
                    let sum = products.fold(c[lane][i] as i32 as i64, |s, (x, y)| {
                        s + x as i64 * y as i64
                    });
                    if saturate {
                        sum.clamp(i32::MIN as i64, i32::MAX as i64) as i32 as u32
                    } else {
                        sum as i32 as u32
                    }
                }
                _ => products
                    .fold(f32::from_bits(c[lane][i]), |s, (x, y)| {
                        (x as f32).mul_add(y as f32, s)
                    })
                    .to_bits(),
            };
        }
    }
    d
}

/// `ldmatrix.m8n8.b16`: matrix `j`'s 8 rows (8 16-bit elements each, as loaded from the
/// addresses lanes `8j..8j+8` gave) to each lane's register `j`: without `.trans`, lane `l`
/// gets row `l/4`, columns `2(l%4)` and `2(l%4)+1` (low half first); with `.trans`, column
/// `l/4`, rows `2(l%4)` and `2(l%4)+1`.
pub(crate) fn ldmatrix(rows: &[[u16; 8]], trans: bool, lane: usize, j: usize) -> u32 {
    let (r, c) = (lane / 4, 2 * (lane % 4));
    let rows = &rows[8 * j..8 * j + 8];
    let (x, y) = if trans {
        (rows[c][r], rows[c + 1][r])
    } else {
        (rows[r][c], rows[r][c + 1])
    };
    x as u32 | (y as u32) << 16
}
