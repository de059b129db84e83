//! Kernels using ferrocuda-std's block collectives (`block::reduce`, `block::reduce_add`) the way a
//! user would, for `tests/cpu_collectives.rs`: a custom combine, every thread's result, a
//! collective in a split loop, and planted divergence.

use ferrocuda_std::{block, kernel, shared, thread, Out};

/// Most warps of a block (1024 threads).
const WARPS: usize = 32;

/// `out[block]` = the largest of the block's elements of `x` (threads past its end give `−∞`):
/// a collective with a combine of the user's own.
#[kernel]
pub fn block_max(x: &[f32], out: Out<f32>) {
    let scratch = shared!([f32; WARPS]);
    let i = thread::index_1d();
    let value = if i < x.len() { x[i] } else { f32::NEG_INFINITY };
    let largest = block::reduce(
        value,
        f32::NEG_INFINITY,
        scratch,
        |a, b| {
            if b > a {
                b
            } else {
                a
            }
        },
    );
    let t = thread::thread_idx();
    if t.x == 0 && t.y == 0 && t.z == 0 {
        out.set(thread::block_idx().x as usize, largest);
    }
}

/// `out[linear thread of the grid]` = what `block::reduce_add` gives that thread, for blocks of
/// any shape (x fastest): thread 0 the block's sum, the other lanes of warp 0 their partial
/// folds, every other thread 0.
#[kernel]
pub fn every_threads_sum(x: &[f32], out: Out<f32>) {
    let scratch = shared!([f32; WARPS]);
    let (t, d) = (thread::thread_idx(), thread::block_dim());
    let threads = (d.x * d.y * d.z) as usize;
    let linear = ((t.z * d.y + t.y) * d.x + t.x) as usize;
    let at = thread::block_idx().x as usize * threads + linear;
    let value = if at < x.len() { x[at] } else { 0.0 };
    let sum = block::reduce_add(value, scratch);
    if at < out.len() {
        out.set(at, sum);
    }
}

/// `out[block · rounds + r]` = the block's sum of `x` scaled by `r + 1`, for `r` in
/// `0..rounds`: a collective in a block-uniform loop, with the barrier that reusing its scratch
/// needs.
#[kernel]
pub fn sums_in_a_loop(x: &[u32], out: Out<u32>, rounds: u32) {
    let scratch = shared!([u32; WARPS]);
    let i = thread::index_1d();
    let value = if i < x.len() { x[i] } else { 0 };
    let mut round = 0u32;
    while round < rounds {
        let sum = block::reduce_add(value.wrapping_mul(round + 1), scratch);
        if thread::thread_idx().x == 0 {
            out.set((thread::block_idx().x * rounds + round) as usize, sum);
        }
        thread::sync_threads();
        round += 1;
    }
}

/// Planted divergence: threads from 16 on return before the collective the others wait at.
#[kernel]
pub fn collective_after_a_return(x: &[f32], out: Out<f32>) {
    let scratch = shared!([f32; WARPS]);
    if thread::thread_idx().x >= 16 {
        return;
    }
    let i = thread::index_1d();
    let sum = block::reduce_add(x[i], scratch);
    out.set(i, sum);
}

/// Planted divergence: only the first warp calls the collective (a non-uniform branch), which
/// keeps the kernel on the coroutine path.
#[kernel]
pub fn collective_in_a_branch(x: &[f32], out: Out<f32>) {
    let scratch = shared!([f32; WARPS]);
    let i = thread::index_1d();
    if thread::thread_idx().x < 32 {
        let sum = block::reduce_add(x[i], scratch);
        out.set(i, sum);
    }
}

/// `out[w]` = warp `w`'s sum as `block::reduce_add` left it in its scratch, read by thread 0
/// after the call (the collective's barrier orders the warps' stores before it).
#[kernel]
pub fn warp_sums_afterwards(x: &[f32], out: Out<f32>) {
    let scratch = shared!([f32; WARPS]);
    let i = thread::index_1d();
    let value = if i < x.len() { x[i] } else { 0.0 };
    let _sum = block::reduce_add(value, scratch);
    if thread::thread_idx().x == 0 {
        let warps = (thread::block_dim().x as usize).div_ceil(32);
        let mut w = 0;
        while w < warps {
            out.set(w, scratch.get(w));
            w += 1;
        }
    }
}
