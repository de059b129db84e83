//! The GPU side of [`super::mma`]: PTX `mma.sync.aligned` and `ldmatrix` in inline assembly.

use crate::tensor_core::Kind;
use core::arch::asm;

macro_rules! mma_asm {
    ($shape:literal, $a:ident, $b:ident, $c:ident) => {{
        let d: [u32; 4];
        let (d0, d1, d2, d3): (u32, u32, u32, u32);
        // SAFETY: `mma.sync.aligned` reads this lane's registers and those of the warp's other
        // lanes, which the caller's contract (every lane calls `mma`) makes arrive; it touches
        // no memory.
        unsafe {
            asm!(
                concat!("mma.sync.aligned.", $shape,
                    " {{{0},{1},{2},{3}}}, {{{4},{5},{6},{7}}}, {{{8},{9}}}, {{{10},{11},{12},{13}}};"),
                out(reg32) d0, out(reg32) d1, out(reg32) d2, out(reg32) d3,
                in(reg32) $a[0], in(reg32) $a[1], in(reg32) $a[2], in(reg32) $a[3],
                in(reg32) $b[0], in(reg32) $b[1],
                in(reg32) $c[0], in(reg32) $c[1], in(reg32) $c[2], in(reg32) $c[3],
                options(nomem, nostack)
            );
        }
        d = [d0, d1, d2, d3];
        d
    }};
}

/// One `mma.sync.aligned` of `kind`'s shape (the `match` folds away: `kind` is a constant).
#[inline(always)]
pub(super) fn mma(kind: Kind, a: [u32; 4], b: [u32; 2], c: [u32; 4]) -> [u32; 4] {
    match kind {
        Kind::F16 => mma_asm!("m16n8k16.row.col.f32.f16.f16.f32", a, b, c),
        Kind::Bf16 => mma_asm!("m16n8k16.row.col.f32.bf16.bf16.f32", a, b, c),
        Kind::Tf32 => mma_asm!("m16n8k8.row.col.f32.tf32.tf32.f32", a, b, c),
        Kind::S8 => mma_asm!("m16n8k32.row.col.s32.s8.s8.s32", a, b, c),
        Kind::U8 => mma_asm!("m16n8k32.row.col.s32.u8.u8.s32", a, b, c),
    }
}

/// `ldmatrix.x4`: this lane gives the shared-window address of one 16-byte row.
#[inline(always)]
pub(super) fn ldmatrix_x4(row: u32) -> [u32; 4] {
    let (r0, r1, r2, r3): (u32, u32, u32, u32);
    // SAFETY: the caller checked that every row the warp's lanes give lies in the shared array
    // and is 16-byte aligned; the asm only reads them.
    unsafe {
        asm!(
            "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{{0},{1},{2},{3}}}, [{4}];",
            out(reg32) r0, out(reg32) r1, out(reg32) r2, out(reg32) r3, in(reg32) row,
            options(readonly, nostack)
        );
    }
    [r0, r1, r2, r3]
}

/// `ldmatrix.x2.trans`: as [`ldmatrix_x4`], two matrices, transposed.
#[inline(always)]
pub(super) fn ldmatrix_x2_trans(row: u32) -> [u32; 2] {
    let (r0, r1): (u32, u32);
    // SAFETY: as in `ldmatrix_x4`.
    unsafe {
        asm!(
            "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {{{0},{1}}}, [{2}];",
            out(reg32) r0, out(reg32) r1, in(reg32) row,
            options(readonly, nostack)
        );
    }
    [r0, r1]
}

/// `ld.shared.b32` at shared-window address `at` (one 32-bit fragment register, tf32).
#[inline(always)]
pub(super) fn ld_shared_b32(at: u32) -> u32 {
    let value: u32;
    // SAFETY: the caller checked that the 4 bytes at `at` lie in a shared array, 4-byte aligned;
    // the asm only reads them.
    unsafe {
        asm!(
            "ld.shared.b32 {0}, [{1}];",
            out(reg32) value, in(reg32) at,
            options(readonly, nostack, preserves_flags)
        );
    }
    value
}

/// `x`, through a `mov` whose result the compiler knows nothing about (no known bits, no
/// value): sums with it stay `add`s of a base and a constant, which ptxas folds into each
/// load's immediate offset, where an `or` it would not ([`SharedTile`](super::SharedTile)'s
/// tf32 fragment loads). `pure`: equal inputs still share one result.
#[inline(always)]
pub(super) fn opaque(x: u32) -> u32 {
    let y: u32;
    // SAFETY: a register move; it touches no memory.
    unsafe {
        asm!(
            "mov.b32 {0}, {1};",
            out(reg32) y, in(reg32) x,
            options(pure, nomem, nostack, preserves_flags)
        );
    }
    y
}
