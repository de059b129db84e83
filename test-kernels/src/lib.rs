//! Kernels for ferrocuda's own tests: some fail on purpose (planted bugs), so that tests can check
//! how failures are reported; others exercise one feature of ferrocuda-std each.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]

use ferrocuda_std::{kernel, math, math::reproducible, shared, thread, warp, Out};

pub mod lang;
#[cfg(feature = "sm80")]
pub mod mma_tiles;
pub mod profiling;
#[cfg(feature = "sm80")]
pub mod tensor_cores;

/// Copies `x` to `out` but asserts every element is non-negative: a negative input panics
/// (on the GPU: traps) in the thread that reads it.
#[kernel(same_len(x, out))]
pub fn assert_non_negative(x: &[f32], out: Out<f32>) {
    let i = thread::index_1d();
    if i < x.len() {
        assert!(x[i] >= 0.0, "negative input");
        out.set(i, x[i]);
    }
}

/// Writes `out[i]` for `i = index + offset`: an `offset` that takes the index past the end is
/// a planted out-of-bounds write.
#[kernel]
pub fn write_shifted(out: Out<u32>, offset: u32) {
    let i = thread::index_1d() + offset as usize;
    out.set(i, i as u32);
}

/// Copies `x` to `out` after a block barrier: needs the threads of a block to cooperate.
#[kernel(same_len(x, out))]
pub fn with_barrier(x: &[f32], out: Out<f32>) {
    let i = thread::index_1d();
    thread::sync_threads();
    if i < x.len() {
        out.set(i, x[i]);
    }
}

/// Planted race: every thread stores into the shared tile and reads its neighbour's element
/// with no barrier between the store and the read (the first barrier only orders the zeroing).
#[kernel(same_len(x, out))]
pub fn race_missing_barrier(x: &[f32], out: Out<f32>) {
    let tile = shared!([f32; 256]);
    let t = thread::thread_idx().x as usize;
    let n = thread::block_dim().x as usize;
    let i = thread::index_1d();
    tile.set(t, 0.0);
    thread::sync_threads();
    tile.set(t, if i < x.len() { x[i] } else { 0.0 });
    // Missing: thread::sync_threads();
    let right = tile.get((t + 1) % n);
    if i < out.len() {
        out.set(i, right);
    }
}

/// The correct version of `race_missing_barrier`: `out[i]` is the input of the next thread of
/// the block (wrapping within the block).
#[kernel(same_len(x, out))]
pub fn rotate_in_block(x: &[f32], out: Out<f32>) {
    let tile = shared!([f32; 256]);
    let t = thread::thread_idx().x as usize;
    let n = thread::block_dim().x as usize;
    let i = thread::index_1d();
    tile.set(t, if i < x.len() { x[i] } else { 0.0 });
    thread::sync_threads();
    let right = tile.get((t + 1) % n);
    if i < out.len() {
        out.set(i, right);
    }
}

/// Planted uninitialized read: thread 0 reads a shared element no thread writes.
#[kernel]
pub fn uninitialized_shared(out: Out<f32>) {
    let tile = shared!([f32; 64]);
    let t = thread::thread_idx().x as usize;
    tile.set(t, 1.0);
    thread::sync_threads();
    out.set(thread::index_1d(), tile.get(t + 32));
}

/// Planted negative index: `out[i] = x[i - 1]`, computed in signed arithmetic as a C programmer
/// would, so thread 0 reads index -1.
#[kernel(same_len(x, out))]
pub fn negative_index(x: &[f32], out: Out<f32>) {
    let i = thread::index_1d();
    if i < out.len() {
        out.set(i, x[(i as isize - 1) as usize]);
    }
}

/// Planted past-the-end index on a shared array: thread `t` writes `tile[t + 1]`, so the last
/// thread of a 32-thread block writes element 32 of 32.
#[kernel]
pub fn shared_past_end(out: Out<f32>) {
    let tile = shared!([f32; 32]);
    let t = thread::thread_idx().x as usize;
    tile.set(t + 1, 1.0);
    out.set(thread::index_1d(), 0.0);
}

/// Planted divergent barrier: only the first 16 threads of each block reach `sync_threads()`.
#[kernel]
pub fn divergent_barrier(out: Out<u32>) {
    let t = thread::thread_idx().x;
    if t < 16 {
        thread::sync_threads();
    }
    out.set(thread::index_1d(), t);
}

/// Planted divergence between two barriers: even threads wait at one, odd threads at another.
#[kernel]
pub fn two_barriers(out: Out<u32>) {
    let t = thread::thread_idx().x;
    #[allow(clippy::if_same_then_else)] // the point: the same call at two sites
    if t.is_multiple_of(2) {
        thread::sync_threads();
    } else {
        thread::sync_threads();
    }
    out.set(thread::index_1d(), t);
}

/// Planted warp divergence: only lanes 0..16 reach a shuffle whose mask names all 32.
#[kernel]
pub fn warp_divergence(out: Out<u32>) {
    let lane = warp::lane_id();
    let mut v = lane;
    if lane < 16 {
        v = warp::shfl_sync(warp::FULL_MASK, v, 0);
    }
    out.set(thread::index_1d(), v);
}

/// Number of results `warp_ops` writes per thread.
pub const WARP_OPS_RESULTS: usize = 9;

/// Every warp operation, by the lanes of `mask` only, with value `10 * lane + 1`; thread `i`
/// writes its results to `out[9 i ..]`: shfl from lane `src`, shfl up 1, shfl down 2, shfl xor 1,
/// all(value is odd), any(lane == 5), ballot(lane % 3 == 0), the low and high halves of a 64-bit
/// xor-4 shuffle of `value * 2^32 + lane`.
#[kernel]
pub fn warp_ops(out: Out<u32>, mask: u32, src: u32) {
    let lane = warp::lane_id();
    if mask & (1 << lane) == 0 {
        return;
    }
    let v = 10 * lane + 1;
    let base = thread::index_1d() * WARP_OPS_RESULTS;
    out.set(base, warp::shfl_sync(mask, v, src));
    out.set(base + 1, warp::shfl_up_sync(mask, v, 1));
    out.set(base + 2, warp::shfl_down_sync(mask, v, 2));
    out.set(base + 3, warp::shfl_xor_sync(mask, v, 1));
    out.set(base + 4, warp::all_sync(mask, v % 2 == 1) as u32);
    out.set(base + 5, warp::any_sync(mask, lane == 5) as u32);
    out.set(base + 6, warp::ballot_sync(mask, lane.is_multiple_of(3)));
    let wide = warp::shfl_xor_sync(mask, ((v as u64) << 32) | lane as u64, 4);
    warp::sync_warp(mask);
    out.set(base + 7, wide as u32);
    out.set(base + 8, (wide >> 32) as u32);
}

/// Warp reductions of `x` (one value per thread): each thread writes its warp's sum, min and
/// max to `out[3 i ..]`. Any block size: the last warp may be partial.
#[kernel]
pub fn warp_reductions(x: &[f32], out: Out<f32>) {
    let i = thread::index_1d();
    let v = if i < x.len() { x[i] } else { 0.0 };
    let (sum, min, max) = (
        warp::reduce_add(v),
        warp::reduce_min(v),
        warp::reduce_max(v),
    );
    if 3 * i + 2 < out.len() {
        out.set(3 * i, sum);
        out.set(3 * i + 1, min);
        out.set(3 * i + 2, max);
    }
}

/// Every atomic operation on every element type. With `g` the global thread index, each output
/// holds, at 0..6: the count of threads (add 1), minus the count (sub 1), the min of `g` and its
/// start, the max of `g` and its start, some thread's `g` (exchange), the count again (a
/// compare-and-swap increment loop).
#[kernel]
pub fn atomics_every_type(
    u: Out<u32>,
    i: Out<i32>,
    ul: Out<u64>,
    il: Out<i64>,
    f: Out<f32>,
    d: Out<f64>,
) {
    let g = thread::index_1d();
    macro_rules! exercise {
        ($out:ident, $t:ty, $one:expr) => {{
            $out.atomic_add(0, $one);
            $out.atomic_sub(1, $one);
            $out.atomic_min(2, g as $t);
            $out.atomic_max(3, g as $t);
            $out.atomic_exchange(4, g as $t);
            let mut seen = $out.get(5);
            while let Err(now) = $out.atomic_compare_exchange(5, seen, seen + $one) {
                seen = now;
            }
        }};
    }
    exercise!(u, u32, 1);
    exercise!(i, i32, 1);
    exercise!(ul, u64, 1);
    exercise!(il, i64, 1);
    exercise!(f, f32, 1.0);
    exercise!(d, f64, 1.0);
}

/// Shared-memory atomics: each block counts its threads into a shared counter and records the
/// largest thread index; thread 0 writes `out[2 b] = count`, `out[2 b + 1] = max`.
#[kernel]
pub fn shared_atomics(out: Out<u32>) {
    let counters = shared!([u32; 2]);
    let t = thread::thread_idx().x;
    if t == 0 {
        counters.set(0, 0);
        counters.set(1, 0);
    }
    thread::sync_threads();
    counters.atomic_add(0, 1);
    counters.atomic_max(1, t);
    thread::sync_threads();
    if t == 0 {
        let b = thread::block_idx().x as usize;
        out.set(2 * b, counters.get(0));
        out.set(2 * b + 1, counters.get(1));
    }
}

/// Like `assert_non_negative`, but after a barrier, so that the panicking thread is a suspended
/// and resumed one on the CPU executor.
#[kernel(same_len(x, out))]
pub fn assert_non_negative_after_barrier(x: &[f32], out: Out<f32>) {
    let i = thread::index_1d();
    thread::sync_threads();
    if i < x.len() {
        assert!(x[i] >= 0.0, "negative input");
        out.set(i, x[i]);
    }
}

/// The README's example of block cooperation, kept compiling and tested: adds the sum of each
/// block's elements of `x` to `sums[0]`.
#[kernel]
pub fn block_sums(x: &[f32], sums: Out<f32>) {
    let per_warp = shared!([f32; 32]);
    let i = thread::index_1d();
    let v = warp::reduce_add(if i < x.len() { x[i] } else { 0.0 });
    if warp::lane_id() == 0 {
        per_warp.set(warp::warp_id() as usize, v);
    }
    thread::sync_threads();
    if thread::thread_idx().x == 0 {
        let warps = thread::block_dim().x.div_ceil(32) as usize;
        let total = (0..warps).map(|w| per_warp.get(w)).sum::<f32>();
        sums.atomic_add(0, total);
    }
}

/// Lanes hand values to their neighbour through shared memory, ordered by `sync_warp` (the
/// warp-synchronous style); with `synced == 0` the `sync_warp` is left out: a planted race.
/// `out[i]` is the input of thread `i ^ 1`.
#[kernel(same_len(x, out))]
pub fn warp_exchange(x: &[f32], out: Out<f32>, synced: u32) {
    let tile = shared!([f32; 1024]);
    let t = thread::thread_idx().x as usize;
    let i = thread::index_1d();
    tile.set(t, 0.0);
    thread::sync_threads();
    tile.set(t, x[i]);
    if synced != 0 {
        warp::sync_warp(warp::FULL_MASK);
    }
    out.set(i, tile.get(t ^ 1));
}

/// Barriers that vote: with `p = x[i] > 0` (false past the end of `x`), thread `i` writes its
/// block's `sync_threads_count(p)`, `sync_threads_and(p)` and `sync_threads_or(p)` to
/// `out[3 i ..]`.
#[kernel]
pub fn barrier_votes(x: &[f32], out: Out<u32>) {
    let i = thread::index_1d();
    let p = i < x.len() && x[i] > 0.0;
    let count = thread::sync_threads_count(p);
    let all = thread::sync_threads_and(p);
    let any = thread::sync_threads_or(p);
    if 3 * i + 2 < out.len() {
        out.set(3 * i, count);
        out.set(3 * i + 1, all as u32);
        out.set(3 * i + 2, any as u32);
    }
}

/// Results per input of `math_functions`.
pub const MATH_OUTPUTS: usize = 13;

/// `math::reproducible`'s exp, exp2, ln, sqrt, sinpi, cospi, erfc, normal_cdf (the same bits on
/// GPU and CPU), then fast_exp, fast_exp2, fast_ln, fast_log2 and fma(x, x, x) on `x[i]`, in
/// `out[MATH_OUTPUTS * i ..]`.
#[kernel]
pub fn math_functions(x: &[f32], out: Out<f32>) {
    let i = thread::index_1d();
    if i < x.len() && MATH_OUTPUTS * (i + 1) <= out.len() {
        let v = x[i];
        let (sin, cos) = reproducible::sincospi(v);
        let results = [
            reproducible::exp(v),
            reproducible::exp2(v),
            reproducible::ln(v),
            reproducible::sqrt(v),
            sin,
            cos,
            reproducible::erfc(v),
            reproducible::normal_cdf(v),
            math::fast_exp(v),
            math::fast_exp2(v),
            math::fast_ln(v),
            math::fast_log2(v),
            math::fma(v, v, v),
        ];
        let mut j = 0;
        while j < MATH_OUTPUTS {
            out.set(MATH_OUTPUTS * i + j, results[j]);
            j += 1;
        }
    }
}

/// Results per input of `default_math_functions`.
pub const DEFAULT_MATH_OUTPUTS: usize = 10;

/// What `default_math_functions` computes for one input, callable on the host too (the tests'
/// CPU side): `math::exp`, `exp2`, `ln`, `log2`, `sqrt`, `erfc`, `normal_cdf`, `sin`, `cos` of
/// `v` and `pow(v, 0.75)`.
#[inline(always)]
pub fn default_math_results(v: f32) -> [f32; DEFAULT_MATH_OUTPUTS] {
    [
        math::exp(v),
        math::exp2(v),
        math::ln(v),
        math::log2(v),
        math::sqrt(v),
        math::erfc(v),
        math::normal_cdf(v),
        math::sin(v),
        math::cos(v),
        math::pow(v, 0.75),
    ]
}

/// The default math tier on `x[i]`, in `out[DEFAULT_MATH_OUTPUTS * i ..]`: `math::exp`, `exp2`,
/// `ln`, `log2`, `sqrt`, `erfc`, `normal_cdf`, `sin`, `cos`, `pow(_, 0.75)` (CUDA's accuracy; on
/// the GPU through the special function unit, so not always the CPU's bits).
#[kernel]
pub fn default_math_functions(x: &[f32], out: Out<f32>) {
    let i = thread::index_1d();
    if i < x.len() && DEFAULT_MATH_OUTPUTS * (i + 1) <= out.len() {
        let results = default_math_results(x[i]);
        let mut j = 0;
        while j < DEFAULT_MATH_OUTPUTS {
            out.set(DEFAULT_MATH_OUTPUTS * i + j, results[j]);
            j += 1;
        }
    }
}

pub mod generic;
pub mod limits;

// Added after the kernels above, whose line numbers tests/checked_mode.rs names.
pub mod arrays;
pub mod collectives;
pub mod constant;
pub mod grid;
pub mod grid_stride_elements;
pub mod half;
pub mod leaving;
pub mod math_f64;
pub mod math_methods;
pub mod print;
pub mod regions;

/// `out[i] = x[i] + x[i + 1]`, on the CPU executor's plain-store loop without checked mode: an
/// `x` no longer than `out` reads past its end in `out`'s last thread.
#[kernel]
pub fn add_next(x: &[f32], out: Out<f32>) {
    let i = thread::index_1d();
    if i < out.len() {
        out.set(i, x[i] + x[i + 1]);
    }
}

// After `add_next`, whose line tests/checked_mode.rs names.
pub mod many_params;
pub mod porting;
pub mod small_atomics;
