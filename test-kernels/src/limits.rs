//! Kernels that run into the CPU executor's limits: a launch deadline (each spins in one kind
//! of check point, `rounds` times: `u32::MAX` is hours) and the simulated threads' stacks.

use ferrocuda_std::{kernel, thread, warp, Out};

/// Meets the block at a barrier `rounds` times, then writes how many rounds it counted.
#[kernel]
pub fn spin_at_barriers(rounds: u32, out: Out<u32>) {
    let mut counted = 0u32;
    for round in 0..rounds {
        counted = counted.wrapping_add(thread::sync_threads_count(round % 2 == 0));
    }
    let i = thread::index_1d();
    if i < out.len() {
        out.set(i, counted);
    }
}

/// Shuffles with its warp `rounds` times (blocks of whole warps), then writes the result.
#[kernel]
pub fn spin_in_warp(rounds: u32, out: Out<u32>) {
    let mut value = warp::lane_id();
    for round in 0..rounds {
        value = warp::shfl_xor_sync(warp::FULL_MASK, value ^ round, 1);
    }
    let i = thread::index_1d();
    if i < out.len() {
        out.set(i, value);
    }
}

/// A grid-stride loop over `rounds` indices per thread of the grid, then writes a hash of them.
#[kernel]
pub fn spin_grid_stride(rounds: u32, out: Out<u32>) {
    let threads = thread::grid_dim().x as usize * thread::block_dim().x as usize;
    let mut hash = 0u32;
    for index in thread::grid_stride(rounds as usize * threads) {
        hash = hash.rotate_left(5) ^ index as u32;
    }
    let i = thread::index_1d();
    if i < out.len() {
        out.set(i, hash);
    }
}

/// `rounds` steps of a random-number generator per thread, with no check point inside: only the
/// starts of threads are.
#[kernel]
pub fn busy_threads(rounds: u32, out: Out<u32>) {
    let i = thread::index_1d();
    let mut state = i as u32;
    for _ in 0..rounds {
        state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
    }
    if i < out.len() {
        out.set(i, state);
    }
}

/// Recurses `depth` calls deep in thread `deep_thread` (each call keeps 1 KiB on the stack),
/// one call deep in the others, after a barrier if `after_barrier` is nonzero; writes the sum of
/// the frames' bytes at each thread's index.
#[kernel]
pub fn recurse(depth: u32, deep_thread: u32, after_barrier: u32, out: Out<u32>) {
    if after_barrier != 0 {
        thread::sync_threads();
    }
    let i = thread::index_1d();
    let calls = if i == deep_thread as usize { depth } else { 1 };
    let total = deep(calls, i as u8);
    if i < out.len() {
        out.set(i, total);
    }
}

/// One 1 KiB frame per call, `calls` deep; returns the sum of every frame's first and last bytes.
#[inline(never)]
fn deep(calls: u32, seed: u8) -> u32 {
    let mut frame = [seed; 1024];
    // The whole frame goes to a function that is never inlined, so that it is really on the
    // stack: of a local array used only through volatile accesses to two bytes, an optimised
    // build kept those two, and 4000 calls fit any stack.
    set_first(&mut frame, seed.wrapping_add(calls as u8));
    let inner = if calls > 1 { deep(calls - 1, seed) } else { 0 };
    inner.wrapping_add(frame[0] as u32 + frame[1023] as u32)
}

#[inline(never)]
fn set_first(frame: &mut [u8; 1024], value: u8) {
    frame[0] = value;
}
