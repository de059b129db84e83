//! Completing the warp's `mma.sync` and `ldmatrix` once all 32 lanes wait at one: gather every
//! lane's registers (each lane reads those of its own instruction), compute (`crate::mma`), hand
//! each lane its result.

use super::{op_at, reg, set};
use crate::block::{read_le, resolve, Block, Grid, Place, Trouble};
use crate::ir::*;
use crate::FaultKind;

pub(super) fn mma(grid: &Grid, block: &mut Block, lanes: &[usize], kind: MmaKind) {
    let (mut a, mut b, mut c) = ([[0u32; 4]; 32], [[0u32; 2]; 32], [[0u32; 4]; 32]);
    let mut d = [[0 as Reg; 4]; 32];
    for &t in lanes {
        let Op::Mma {
            d: dt,
            a: at,
            b: bt,
            c: ct,
            ..
        } = *op_at(grid, block, t)
        else {
            unreachable!("the lanes met at an mma (same_kind)")
        };
        let lane = t % 32;
        a[lane] = at.map(|s| reg(grid, block, t, s) as u32);
        b[lane] = bt.map(|s| reg(grid, block, t, s) as u32);
        c[lane] = ct.map(|s| reg(grid, block, t, s) as u32);
        d[lane] = dt;
    }
    let out = crate::mma::mma(kind, &a, &b, &c);
    for &t in lanes {
        let lane = t % 32;
        for (&r, &v) in d[lane].iter().zip(&out[lane]) {
            set(grid, block, t, r, v as u64);
        }
    }
}

pub(super) fn ldmatrix(
    grid: &Grid,
    block: &mut Block,
    lanes: &[usize],
    count: u8,
    trans: bool,
) -> Result<(), (usize, Trouble)> {
    // Lanes 8j..8j+8 give the addresses of matrix j's rows: 16 bytes each, 16-byte aligned.
    let mut rows = [[0u16; 8]; 32];
    // Each row's shared offset, for a profiled launch's counters.
    let mut offsets = [0u64; 32];
    for &t in &lanes[..8 * count as usize] {
        let Op::Ldmatrix { addr, .. } = *op_at(grid, block, t) else {
            unreachable!("the lanes met at an ldmatrix (same_kind)")
        };
        let address = addr
            .base
            .map_or(0, |r| reg(grid, block, t, Src::Reg(r)))
            .wrapping_add(addr.offset as u64);
        let place = resolve(grid, block, t, addr.space, address, 16, 16).map_err(|e| (t, e))?;
        let Place::Shared(o) = place else {
            let what = format!("ldmatrix row address {address:#x} is not in shared memory");
            return Err((t, Trouble::new(FaultKind::IllegalAddress, what)));
        };
        block
            .shared
            .read(t as u32, o, 16)
            .map_err(|c| (t, crate::block::conflict_trouble(c, t, false)))?;
        offsets[t % 32] = o as u64;
        for (k, element) in rows[t % 32].iter_mut().enumerate() {
            *element = read_le(&block.shared.bytes, o + 2 * k, 2) as u16;
        }
    }
    if let Some(profile) = block.profile.as_deref_mut() {
        crate::profile::commit_ldmatrix(profile, &offsets[..8 * count as usize]);
    }
    for &t in lanes {
        let Op::Ldmatrix { d, .. } = *op_at(grid, block, t) else {
            unreachable!("the lanes met at an ldmatrix (same_kind)")
        };
        for (j, &r) in d.iter().enumerate().take(count as usize) {
            let v = crate::mma::ldmatrix(&rows, trans, t % 32, j);
            set(grid, block, t, r, v as u64);
        }
    }
    Ok(())
}
