//! 8- and 16-bit atomics on outputs and shared memory (issue 30, point 3): on the GPU a
//! compare-and-swap loop on the 32-bit word holding the element, on the CPU Rust's own.

use ferrocuda_std::prelude::*;

/// Counts each byte value of `x` into `counts` (wrapping at 2^16) with `u16` atomics, through
/// a block-local `u16` histogram in shared memory, and sets `seen[v] = 1` with a `u8` exchange
/// for each value present; `low[0]` and `high[0]` get the smallest and largest of `x` as `i8`.
#[kernel]
pub fn byte_histogram(x: &[u8], counts: Out<u16>, seen: Out<u8>, low: Out<i8>, high: Out<i8>) {
    let local = shared!([u16; 256]);
    let t = thread::thread_idx().x as usize;
    let threads = thread::block_dim().x as usize;
    let mut k = t;
    while k < 256 {
        local.set(k, 0);
        k += threads;
    }
    thread::sync_threads();
    let i = thread::index_1d();
    if i < x.len() {
        let v = x[i];
        local.atomic_add(v as usize, 1);
        seen.atomic_exchange(v as usize, 1);
        low.atomic_min(0, v as i8);
        high.atomic_max(0, v as i8);
    }
    thread::sync_threads();
    let mut k = t;
    while k < 256 {
        let c = local.get(k);
        if c != 0 {
            counts.atomic_add(k, c);
        }
        k += threads;
    }
}

/// `flags[i % flags.len()]` gets its bit `i % 8` set by a compare-and-swap loop on `u8`, and
/// `shorts[i % shorts.len()]` is decremented with `atomic_sub` on `i16`.
#[kernel]
pub fn byte_flags(flags: Out<u8>, shorts: Out<i16>, n: u32) {
    let i = thread::index_1d();
    if i < n as usize {
        let at = i % flags.len();
        let bit = 1u8 << (i % 8);
        let mut old = flags.get(at);
        loop {
            match flags.atomic_compare_exchange(at, old, old | bit) {
                Ok(_) => break,
                Err(seen) => old = seen,
            }
        }
        shorts.atomic_sub(i % shorts.len(), 1);
    }
}

/// BFS's "more work" flag: every thread whose element exceeds `threshold` stores 1 into
/// `found[0]` (the same value: not a race), and `first[0]` gets its own index (different values
/// from several threads: a race, which checked mode reports).
#[kernel]
pub fn flag_if_any(x: &[f32], threshold: f32, found: Out<u8>, first: Out<u32>, racy: u32) {
    let i = thread::index_1d();
    if i < x.len() && x[i] > threshold {
        found.set(0, 1);
        if racy != 0 {
            first.set(0, i as u32);
        }
    }
}
