//! The CPU executor's side of [`super::mma`]: a warp rendezvous. Each lane waits with a pointer
//! to its fragments (on its own stack, which lives while it waits); when all 32 have arrived,
//! the scheduler calls [`release`], which gathers the matrices, multiplies them in the
//! documented order and writes each lane's result back, before any lane runs on.

use super::{a_position, b_position, c_position, Kind};
use crate::cpu::{self, Wait, WarpOp, WARP};
use core::panic::Location;

/// One lane's operands of an `mma`, as registers.
#[derive(Clone, Copy, Default)]
pub(crate) struct Operands {
    pub(crate) a: [u32; 4],
    pub(crate) b: [u32; 2],
    pub(crate) c: [u32; 4],
}

/// One lane's operands and, after the release, its result.
struct Lane {
    operands: Operands,
    d: [u32; 4],
}

#[track_caller]
pub(super) fn mma(kind: Kind, a: [u32; 4], b: [u32; 2], c: [u32; 4]) -> [u32; 4] {
    let op = WarpOp::Mma(kind);
    cpu::check_warp_mask(op, crate::warp::FULL_MASK);
    let mut lane = Lane {
        operands: Operands { a, b, c },
        d: [0; 4],
    };
    cpu::wait(Wait::Warp {
        op,
        mask: crate::warp::FULL_MASK,
        value: core::ptr::from_mut(&mut lane) as u64,
        arg: 0,
        site: Location::caller(),
    });
    lane.d
}

/// An A or B element's value (exact in f32; integers as integers).
fn element(kind: Kind, bits: u32) -> f32 {
    match kind {
        Kind::F16 => half::f16::from_bits(bits as u16).to_f32(),
        Kind::Bf16 => half::bf16::from_bits(bits as u16).to_f32(),
        Kind::Tf32 => f32::from_bits(bits & !0x1fff),
        Kind::S8 => bits as u8 as i8 as f32,
        Kind::U8 => bits as u8 as f32,
    }
}

/// Completes the warp's `mma`: `lanes[l]` is lane `l`'s [`Lane`] pointer.
///
/// # Safety
/// Every pointer is a live `Lane` of a lane waiting in [`mma`], not otherwise accessed until it
/// is released (the scheduler calls this before it readies any of them).
pub(crate) unsafe fn release(kind: Kind, lanes: &[u64; WARP]) {
    // SAFETY: the caller's contract: live `Lane`s, read only here.
    let operands = lanes.map(|pointer| unsafe { (*(pointer as *const Lane)).operands });
    let d = multiply(kind, &operands);
    for (&pointer, d) in lanes.iter().zip(d) {
        // SAFETY: as above; this is the only reference to it now.
        unsafe { (*(pointer as *mut Lane)).d = d };
    }
}

/// The warp's `mma`: each lane's part of D from every lane's operands.
pub(crate) fn multiply(kind: Kind, lanes: &[Operands; WARP]) -> [[u32; 4]; WARP] {
    #[cfg(all(
        target_arch = "x86_64",
        not(all(target_feature = "avx2", target_feature = "fma"))
    ))]
    if crate::cpu::has_avx2_and_fma() {
        // SAFETY: the CPU has AVX2 and FMA, all `multiply_wide` enables.
        return unsafe { multiply_wide(kind, lanes) };
    }
    multiply_in_order(kind, lanes)
}

/// [`multiply_in_order`] compiled for AVX2 and FMA: each step of the k-sum is then one vector
/// FMA over a row of D instead of eight calls of libm's `fmaf` (for crates built without
/// ferrocuda's `x86-64-v3`).
///
/// # Safety
/// The CPU has AVX2 and FMA.
#[cfg(all(
    target_arch = "x86_64",
    not(all(target_feature = "avx2", target_feature = "fma"))
))]
#[target_feature(enable = "avx2,fma")]
unsafe fn multiply_wide(kind: Kind, lanes: &[Operands; WARP]) -> [[u32; 4]; WARP] {
    multiply_in_order(kind, lanes)
}

/// Gathers the warp's A, B and C from the lanes' fragments and computes D as a whole 16×8
/// tile, k outermost: element (r, c) starts at C's and adds `a[r][k]·b[k][c]` for k = 0, 1, …
/// in order, one f32 FMA each. That is the documented order element by element (the bits of a
/// dot product per element), while each step is a row of eight independent FMAs (one vector
/// instruction) instead of one long chain of dependent ones.
#[inline(always)]
fn multiply_in_order(kind: Kind, lanes: &[Operands; WARP]) -> [[u32; 4]; WARP] {
    let k = match kind {
        Kind::F16 | Kind::Bf16 => 16,
        Kind::Tf32 => 8,
        Kind::S8 | Kind::U8 => 32,
    };
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
    // A row-major 16×k and B row-major k×8 (at most k = 32); C/D 16×8.
    let mut a = [[0f32; 32]; 16];
    let mut b = [[0f32; 8]; 32];
    let mut c = [[0u32; 8]; 16];
    for (lane, theirs) in lanes.iter().enumerate() {
        for i in 0..16 * k / 32 {
            let (r, col) = a_position(kind, lane, i);
            a[r][col] = element(kind, field(&theirs.a, i));
        }
        for i in 0..k * 8 / 32 {
            let (r, col) = b_position(kind, lane, i);
            b[r][col] = element(kind, field(&theirs.b, i));
        }
        for (i, &value) in theirs.c.iter().enumerate() {
            let (r, col) = c_position(lane, i);
            c[r][col] = value;
        }
    }
    let d = if matches!(kind, Kind::S8 | Kind::U8) {
        // Integer products are exact in f32 (|a·b| <= 2^14); the sum in i64, wrapped.
        let mut sum = c.map(|row| row.map(|v| i64::from(v as i32)));
        for (depth, b_row) in b[..k].iter().enumerate() {
            for (s, a_row) in sum.iter_mut().zip(&a) {
                let x = a_row[depth];
                for (s, &y) in s.iter_mut().zip(b_row) {
                    *s += (x * y) as i64;
                }
            }
        }
        sum.map(|row| row.map(|v| v as i32 as u32))
    } else {
        let mut sum = c.map(|row| row.map(f32::from_bits));
        for (depth, b_row) in b[..k].iter().enumerate() {
            for (s, a_row) in sum.iter_mut().zip(&a) {
                let x = a_row[depth];
                for (s, &y) in s.iter_mut().zip(b_row) {
                    *s = x.mul_add(y, *s);
                }
            }
        }
        sum.map(|row| row.map(f32::to_bits))
    };
    core::array::from_fn(|lane| {
        core::array::from_fn(|i| {
            let (r, col) = c_position(lane, i);
            d[r][col]
        })
    })
}
