//! Kernels of the shapes `#[kernel]`'s CPU expansion splits at their barriers (and some it must
//! not), for `tests/cpu_regions.rs` and `benches/cpu_executor.rs`.

use ferrocuda_std::{dynamic_shared, kernel, shared, thread, warp, Out, Shared};

/// Most threads per block of [`block_scan`].
pub const SCAN_BLOCK: usize = 1024;

/// `out[i]` = how many barriers thread `i` passed: `rounds` of them in a block-uniform loop, the
/// bench of a barrier's cost per thread. Each thread counts from its own index, so that the count
/// is per-thread state the split path carries from region to region (counted from 0, it would be
/// block-uniform: one variable of the block, and no per-thread work between the barriers).
#[kernel]
pub fn barrier_rounds(out: Out<u32>, rounds: u32) {
    let t = thread::thread_idx().x;
    let mut passed = t;
    let mut round = 0;
    while round < rounds {
        thread::sync_threads();
        passed += 1;
        round += 1;
    }
    let i = thread::index_1d();
    if i < out.len() {
        out.set(i, passed - t);
    }
}

/// Planted divergence: odd threads take one more trip through a loop with a barrier in it.
#[kernel]
pub fn divergent_rounds(out: Out<u32>, rounds: u32) {
    let t = thread::thread_idx().x;
    let mut round = 0;
    while round < rounds + t % 2 {
        thread::sync_threads();
        round += 1;
    }
    let i = thread::index_1d();
    if i < out.len() {
        out.set(i, round);
    }
}

/// The textbook one-element-per-thread inclusive scan (Hillis–Steele) of each block's part of
/// `x`, in shared memory: `log2(block)` rounds of two barriers. Wrapping sums, so that any input
/// has one exact answer.
#[kernel(same_len(x, out))]
pub fn block_scan(x: &[u32], out: Out<u32>) {
    let partial = shared!([u32; SCAN_BLOCK]);
    let t = thread::thread_idx().x as usize;
    let n = thread::block_dim().x as usize;
    let i = thread::index_1d();
    let mut value = if i < x.len() { x[i] } else { 0 };
    partial.set(t, value);
    thread::sync_threads();
    let mut offset = 1;
    while offset < n {
        let earlier = if t >= offset {
            partial.get(t - offset)
        } else {
            0
        };
        thread::sync_threads();
        value = value.wrapping_add(earlier);
        partial.set(t, value);
        thread::sync_threads();
        offset *= 2;
    }
    if i < out.len() {
        out.set(i, value);
    }
}

/// Each round, every thread takes its right neighbour's value (wrapping round the block) plus
/// the round's number: a split `for` over a block-uniform range, whose trips the split path
/// decides once per block.
#[kernel]
pub fn rotate_rounds(x: &[u32], out: Out<u32>, rounds: u32) {
    let tile = shared!([u32; SCAN_BLOCK]);
    let t = thread::thread_idx().x as usize;
    let n = thread::block_dim().x as usize;
    let i = thread::index_1d();
    let mut value = if i < x.len() { x[i] } else { 0 };
    for round in 0..rounds {
        tile.set(t, value);
        thread::sync_threads();
        value = tile.get((t + 1) % n).wrapping_add(round);
        thread::sync_threads();
    }
    if i < out.len() {
        out.set(i, value);
    }
}

/// Planted race, on the split path: the scan without its middle barrier, so that a thread
/// overwrites an element its right neighbour still has to read.
#[kernel(same_len(x, out))]
pub fn block_scan_racy(x: &[u32], out: Out<u32>) {
    let partial = shared!([u32; SCAN_BLOCK]);
    let t = thread::thread_idx().x as usize;
    let n = thread::block_dim().x as usize;
    let i = thread::index_1d();
    let mut value = if i < x.len() { x[i] } else { 0 };
    partial.set(t, value);
    thread::sync_threads();
    let mut offset = 1;
    while offset < n {
        let earlier = if t >= offset {
            partial.get(t - offset)
        } else {
            0
        };
        value = value.wrapping_add(earlier);
        partial.set(t, value);
        thread::sync_threads();
        offset *= 2;
    }
    if i < out.len() {
        out.set(i, value);
    }
}

/// The tree reduction of the CUDA samples: `out[block]` = the sum of the block's part of `x`,
/// halving the active threads each round (`if tid < stride` inside a block-uniform loop).
#[kernel]
pub fn tree_sum(x: &[u32], out: Out<u32>) {
    let sums = shared!([u32; SCAN_BLOCK]);
    let t = thread::thread_idx().x as usize;
    let i = thread::index_1d();
    sums.set(t, if i < x.len() { x[i] } else { 0 });
    thread::sync_threads();
    let mut stride = thread::block_dim().x as usize / 2;
    while stride > 0 {
        if t < stride {
            sums.set(t, sums.get(t).wrapping_add(sums.get(t + stride)));
        }
        thread::sync_threads();
        stride /= 2;
    }
    if t == 0 {
        out.set(thread::block_idx().x as usize, sums.get(0));
    }
}

/// A block past `limit` returns before the barrier (all its threads: block-uniform); the others
/// reverse their block's part of `x`. With `partial_return`, only the block's odd threads
/// return: planted barrier divergence.
#[kernel(same_len(x, out))]
pub fn reverse_unless_past(x: &[u32], out: Out<u32>, limit: u32, partial_return: u32) {
    let tile = shared!([u32; SCAN_BLOCK]);
    let t = thread::thread_idx().x as usize;
    let n = thread::block_dim().x as usize;
    let i = thread::index_1d();
    if thread::block_idx().x >= limit {
        return;
    }
    if partial_return != 0 && t % 2 == 1 {
        return;
    }
    tile.set(t, if i < x.len() { x[i] } else { 0 });
    thread::sync_threads();
    if i < out.len() {
        out.set(i, tile.get(n - 1 - t));
    }
}

/// A barrier the macro cannot see (inside a helper function) in a kernel whose own body has one
/// too: the split path runs the helper's region on coroutines and the rest split. `out[i]` =
/// `x` of the thread two places to the right in the block (wrapping).
#[kernel(same_len(x, out))]
pub fn hidden_barrier(x: &[u32], out: Out<u32>) {
    let tile = shared!([u32; SCAN_BLOCK]);
    let t = thread::thread_idx().x as usize;
    let n = thread::block_dim().x as usize;
    let i = thread::index_1d();
    tile.set(t, if i < x.len() { x[i] } else { 0 });
    thread::sync_threads();
    let right = tile.get((t + 1) % n);
    wait_for_block();
    tile.set(t, right);
    thread::sync_threads();
    if i < out.len() {
        out.set(i, tile.get((t + 1) % n));
    }
}

/// A barrier out of the kernel body's sight.
#[inline(never)]
fn wait_for_block() {
    thread::sync_threads();
}

/// Waits at a barrier inside a method, where `#[kernel]` cannot see it.
struct Waiter;

impl Waiter {
    #[inline(never)]
    fn wait(&self) {
        thread::sync_threads();
    }
}

/// A barrier in a method of the crate's own type: the macro sees no barrier, so it takes the
/// kernel for elementwise; the block's first thread reaches it and the block runs on coroutines.
/// `out[i]` = `x` of the next thread of the block.
#[kernel(same_len(x, out))]
pub fn barrier_in_a_method(x: &[u32], out: Out<u32>) {
    let tile = shared!([u32; SCAN_BLOCK]);
    let t = thread::thread_idx().x as usize;
    let n = thread::block_dim().x as usize;
    let i = thread::index_1d();
    tile.set(t, if i < x.len() { x[i] } else { 0 });
    Waiter.wait();
    if i < out.len() {
        out.set(i, tile.get((t + 1) % n));
    }
}

/// The sum of `value` over the block, for every thread: a warp reduction (shuffles), a barrier,
/// then every thread adds the warps' sums; `block_reduce_add`'s shape, out of the macro's sight.
#[inline(never)]
fn block_sum(value: u32, scratch: Shared<u32>) -> u32 {
    let warp_sum = warp::reduce_add(value);
    if warp::lane_id() == 0 {
        scratch.set(warp::warp_id() as usize, warp_sum);
    }
    thread::sync_threads();
    let warps = thread::block_dim().x.div_ceil(warp::WARP_SIZE) as usize;
    (0..warps).fold(0u32, |sum, w| sum.wrapping_add(scratch.get(w)))
}

/// A helper with a barrier and warp operations, then a barrier of the body and a value carried
/// across it: `out[i]` = the sum of the block's part of `x` minus `x` of the thread after `i`
/// in the block (wrapping).
#[kernel(same_len(x, out))]
pub fn sum_through_a_helper(x: &[u32], out: Out<u32>) {
    let scratch = shared!([u32; SCAN_BLOCK / 32]);
    let tile = shared!([u32; SCAN_BLOCK]);
    let t = thread::thread_idx().x as usize;
    let n = thread::block_dim().x as usize;
    let i = thread::index_1d();
    let value = if i < x.len() { x[i] } else { 0 };
    let total = block_sum(value, scratch);
    tile.set(t, value);
    thread::sync_threads();
    if i < out.len() {
        out.set(i, total.wrapping_sub(tile.get((t + 1) % n)));
    }
}

/// Planted divergence, out of the macro's sight: only threads `from..to` of each block wait at
/// the helper's barrier; then every thread waits at the body's. `out[i]` = `i`'s thread index.
#[kernel]
pub fn helper_barrier_for(out: Out<u32>, from: u32, to: u32) {
    let t = thread::thread_idx().x;
    if t >= from && t < to {
        wait_for_block();
    }
    thread::sync_threads();
    let i = thread::index_1d();
    if i < out.len() {
        out.set(i, t);
    }
}

/// Planted race in a split kernel with a helper: after the helper's barrier each thread reads
/// its right neighbour's element and writes its own, with no barrier between.
#[kernel(same_len(x, out))]
pub fn race_after_a_helper(x: &[u32], out: Out<u32>) {
    let tile = shared!([u32; SCAN_BLOCK]);
    let t = thread::thread_idx().x as usize;
    let n = thread::block_dim().x as usize;
    let i = thread::index_1d();
    tile.set(t, if i < x.len() { x[i] } else { 0 });
    wait_for_block();
    let right = tile.get((t + 1) % n);
    // Missing: thread::sync_threads();
    tile.set(t, right);
    thread::sync_threads();
    if i < out.len() {
        out.set(i, tile.get(t));
    }
}

/// An elementwise kernel with a shared array of 40 KiB, under the 48 KiB limit only if the
/// elementwise loop's two copies of the body (the first thread's and the others') share it.
/// `out[i]` = 3 × `i`'s thread index, through the thread's own element.
#[kernel]
pub fn elementwise_big_tile(out: Out<u32>) {
    let tile = shared!([u32; 10240]);
    let t = thread::thread_idx().x as usize;
    let i = thread::index_1d();
    tile.set(t, t as u32 * 3);
    if i < out.len() {
        out.set(i, tile.get(t));
    }
}

/// `race_missing_barrier` over dynamic shared memory (`shared_mem_bytes` ≥ 4 · block size): the
/// split path's copies take checked mode's constant for `dynamic_shared()` handles as for
/// `shared!` ones, and checked launches must still see the race. The racy read is in a closure
/// that a function of its own calls, as group-by's row loop calls its update: there the handle
/// is the closure's capture, whose checked-mode flag LLVM cannot see, and `#[kernel]` gives the
/// access the copy's constant.
#[kernel(same_len(x, out))]
pub fn race_missing_barrier_dynamic(x: &[f32], out: Out<f32>) {
    let tile = dynamic_shared::<f32>();
    let t = thread::thread_idx().x as usize;
    let n = thread::block_dim().x as usize;
    let i = thread::index_1d();
    tile.set(t, 0.0);
    thread::sync_threads();
    tile.set(t, if i < x.len() { x[i] } else { 0.0 });
    // Missing: thread::sync_threads();
    let right = call_apart(move || tile.get((t + 1) % n));
    if i < out.len() {
        out.set(i, right);
    }
}

/// `f()`, not inlined on the CPU.
#[cfg_attr(not(target_arch = "nvptx64"), inline(never))]
fn call_apart<T>(f: impl FnOnce() -> T) -> T {
    f()
}

// Issue 29, R1–R3: what the split path's analysis got wrong by going by names' spellings and by
// hoisting past a guard. Each has a known answer, and the same on every path.

/// R1: `out[t] = 2n + 1`, through a local that shadows the parameter `n`, read after a barrier
/// (the split path read the parameter: n + 1).
#[kernel]
pub fn shadowed_parameter(n: u32, out: Out<u32>) {
    let t = thread::thread_idx().x as usize;
    let n = n * 2;
    thread::sync_threads();
    let m = n + 1;
    if t < out.len() {
        out.set(t, m);
    }
}

/// R1 in loops: `out[t]` counts the trips of a `for` and a `while` bounded by a local `n / 2`
/// that shadows the parameter `n`, each trip with a barrier (so `n` trips in all, for even `n`).
#[kernel]
pub fn shadowed_parameter_loops(n: u32, out: Out<u32>) {
    let t = thread::thread_idx().x as usize;
    let n = n / 2;
    let mut trips = 0u32;
    for _k in 0..n {
        trips += 1;
        thread::sync_threads();
    }
    let mut k = 0u32;
    while k < n {
        trips += 1;
        k += 1;
        thread::sync_threads();
    }
    if t < out.len() {
        out.set(t, trips);
    }
}

/// R2: a value that overflows for an empty `x`, computed after the `return` that guards it, then
/// a barrier (the split path computed it first: "attempt to subtract with overflow"). Also a
/// `let mut` and a loop bound of the same kind. `out[t] = x[last] + trips` for a non-empty `x`.
#[kernel]
pub fn guarded_by_return(x: &[u32], out: Out<u32>) {
    let t = thread::thread_idx().x as usize;
    if x.is_empty() {
        return;
    }
    let last = x.len() - 1;
    let mut left = x.len() - 1;
    thread::sync_threads();
    let mut trips = 0u32;
    for _k in 0..x.len() - 1 {
        trips += 1;
        left -= 1;
        thread::sync_threads();
    }
    if t < out.len() {
        out.set(t, x[last] + x[left] + trips);
    }
}

/// R3: a SCREAMING_CASE local is a variable, not a constant: `v` keeps `t + 5` although `K`
/// becomes 1000 before the barrier (the split path recomputed `v` with 1000). `out[t] = t + 1005`.
#[kernel]
#[allow(non_snake_case)]
pub fn screaming_case_local(out: Out<u32>) {
    let t = thread::thread_idx().x;
    let mut K = 5u32;
    let v = t + K;
    K = 1000;
    thread::sync_threads();
    if (t as usize) < out.len() {
        out.set(t as usize, v + K);
    }
}
