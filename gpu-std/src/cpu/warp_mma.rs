//! A lane's tensor-core `mma` ([`crate::mma::mma`]) on the CPU executor: a warp rendezvous. Each
//! lane waits with a pointer to its fragments (on its own stack, which lives while it waits);
//! when all 32 have arrived, the scheduler calls [`super::mma::release`], which multiplies. Apart
//! from `mma.rs` (the product, below the scheduler) because it waits (above it).

use super::mma::{Lane, Operands};
use super::run::{check_warp_mask, wait};
use super::waits::{Wait, WarpOp};
use crate::tensor_core::Kind;
use core::panic::Location;

#[track_caller]
pub(crate) fn mma(kind: Kind, a: [u32; 4], b: [u32; 2], c: [u32; 4]) -> [u32; 4] {
    let op = WarpOp::Mma(kind);
    check_warp_mask(op, crate::machine::FULL_MASK);
    let mut lane = Lane {
        operands: Operands { a, b, c },
        d: [0; 4],
    };
    wait(Wait::Warp {
        op,
        mask: crate::machine::FULL_MASK,
        value: core::ptr::from_mut(&mut lane) as u64,
        arg: 0,
        site: Location::caller(),
    });
    lane.d
}
