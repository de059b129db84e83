//! The CPU executor's side of [`super::mma`]: a warp rendezvous. Each lane waits with a pointer
//! to its fragments (on its own stack, which lives while it waits); when all 32 have arrived,
//! the scheduler calls [`release`], which gathers the matrices, multiplies them in the
//! documented order and writes each lane's result back, before any lane runs on.

use super::{a_position, b_position, c_position, Kind};
use crate::cpu::{self, Wait, WarpOp, WARP};
use core::panic::Location;

/// One lane's operands and, after the release, its result.
#[repr(C)]
pub(crate) struct Lane {
    a: [u32; 4],
    b: [u32; 2],
    c: [u32; 4],
    d: [u32; 4],
}

#[track_caller]
pub(super) fn mma(kind: Kind, a: [u32; 4], b: [u32; 2], c: [u32; 4]) -> [u32; 4] {
    let op = WarpOp::Mma(kind);
    cpu::check_warp_mask(op, crate::warp::FULL_MASK);
    let mut lane = Lane { a, b, c, d: [0; 4] };
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
    // A row-major 16×k, B column-major (column n's k values together), at most k = 32.
    let mut a = [0f32; 16 * 32];
    let mut b = [0f32; 8 * 32];
    for (lane, &pointer) in lanes.iter().enumerate() {
        // SAFETY: the caller's contract: a live `Lane`, read only here.
        let theirs = unsafe { &*(pointer as *const Lane) };
        for i in 0..16 * k / 32 {
            let (r, c) = a_position(kind, lane, i);
            a[r * k + c] = element(kind, field(&theirs.a, i));
        }
        for i in 0..k * 8 / 32 {
            let (r, c) = b_position(kind, lane, i);
            b[c * k + r] = element(kind, field(&theirs.b, i));
        }
    }
    for (lane, &pointer) in lanes.iter().enumerate() {
        // SAFETY: as above; this is the only reference to it now.
        let theirs = unsafe { &mut *(pointer as *mut Lane) };
        for i in 0..4 {
            let (r, c) = c_position(lane, i);
            let (row, column) = (&a[r * k..r * k + k], &b[c * k..c * k + k]);
            theirs.d[i] = if matches!(kind, Kind::S8 | Kind::U8) {
                // Integer products are exact in f32 (|a·b| <= 2^14); the sum in i64, wrapped.
                let sum = row
                    .iter()
                    .zip(column)
                    .fold(theirs.c[i] as i32 as i64, |s, (&x, &y)| s + (x * y) as i64);
                sum as i32 as u32
            } else {
                row.iter()
                    .zip(column)
                    .fold(f32::from_bits(theirs.c[i]), |s, (&x, &y)| x.mul_add(y, s))
                    .to_bits()
            };
        }
    }
}
