//! Group-by aggregation: rows `(key, value)` with `key` in `0..K` → per key the row count, the
//! sum, min and max of the values.
//!
//! Two kernels with one output layout: [`group_by_shared`] privatises the `K` keys' state in the
//! block's shared memory (fast block-scope atomics, then one device-wide atomic per key and
//! block), for small `K`; [`group_by_global`] updates the global state directly, for `K` too
//! large for shared memory. [`group_by_finish`] turns the min/max state into f32. For the CPU
//! executor, where a device-scope atomic is a locked instruction, [`group_by_owned`] splits the
//! keys between the blocks instead (block-scope atomics, the state interleaved per key), and
//! [`group_by_owned_finish`] lays its state out as the others'.
//!
//! # State
//! `count[k]` (u32) and `sum[k]` (f32) start at zero and take atomic adds: the order of the float
//! additions depends on scheduling, so sums may differ in the last bits from run to run.
//! Min and max are kept as [`order_key`]s, which compare as unsigned integers in the order of
//! the floats, so that one native integer `atom.max` (no compare-and-swap loop, which contends
//! badly in shared memory) updates them: `highest[k]` is the largest `order_key(v)`, `lowest[k]`
//! the largest `!order_key(v)`. Every non-NaN value's key is nonzero either way, so the zero
//! start means "no value yet" and [`group_by_finish`] turns it into `+∞` (min) or `−∞` (max).
//!
//! # NaN values, keys out of range
//! A NaN value is counted and makes its key's sum NaN; min and max ignore it (as [`f32::min`]).
//! A row whose key is `≥ K` changes no key's state: it adds 1 to `rejected[0]` and raises
//! `rejected[1]` to its key, so the caller can report how many rows were out of range and the
//! largest key seen.

use ferrocuda_std::{dynamic_shared, kernel, thread, Out};

/// Bytes of shared memory [`group_by_shared`] needs per key: count, sum, lowest, highest.
pub const SHARED_BYTES_PER_KEY: usize = 16;

/// A u32 that orders like `x` among non-NaN floats: flip every bit of a negative float, only the
/// sign bit of a positive one (`−0.0` comes just before `+0.0`). `−∞` maps to `0x007F_FFFF` and
/// `+∞` to `0xFF80_0000`, so no non-NaN value maps to 0, nor does its complement.
#[inline(always)]
pub fn order_key(x: f32) -> u32 {
    let bits = x.to_bits();
    if bits & 0x8000_0000 != 0 {
        !bits
    } else {
        bits | 0x8000_0000
    }
}

/// The float whose [`order_key`] is `key`.
#[inline(always)]
pub fn from_order_key(key: u32) -> f32 {
    f32::from_bits(if key & 0x8000_0000 != 0 {
        key & 0x7FFF_FFFF
    } else {
        !key
    })
}

/// What a row's `value` raises the `lowest` and `highest` states of its key to (module doc):
/// `!order_key(value)` and `order_key(value)`, or `None` for NaN, which min and max skip.
#[inline(always)]
fn bounds(value: f32) -> Option<(u32, u32)> {
    if value.is_nan() {
        None
    } else {
        let order = order_key(value);
        Some((!order, order))
    }
}

/// Counts a row whose `key` is out of range in `rejected` (`[rows, largest key]`).
#[inline(always)]
fn reject(rejected: &Out<u64>, key: u32) {
    rejected.atomic_add(0, 1);
    rejected.atomic_max(1, key as u64);
}

/// This thread's share of the rows ([`thread::grid_stride`]): `update(key, value, low, high)`
/// for each row whose key is below `k`, with `high` the value's [`order_key`] and `low` its
/// complement, the values the `highest` and `lowest` states take the maximum with: both 0 for
/// NaN, which min and max skip (a maximum with 0 changes no state). Rows with keys `≥ k` go to
/// [`reject`]. Both aggregation kernels share it, so they treat every row alike.
///
/// On the GPU 0 rather than `None` for NaN: no branch, which LLVM duplicated the shared kernel's
/// count and sum atomics into (the sum's a compare-and-swap loop). On the CPU a branch instead
/// (see the body).
///
/// On the CPU a function of its own (on the GPU inlined, as everything): the split path inlines
/// every region of a kernel into one thread loop, and there this row loop shared registers with
/// the rest (its state spilled, `update`'s captures reloaded around each shared-memory access).
/// Callers pass `update` as an `#[inline(always)]` closure (LLVM had left `group_by_shared`'s as
/// a call per row) that captures by value (`move`), so that its handles are loaded once.
///
/// The rows go through `for_each` ([`rows`]), not a `for` loop: on the CPU its chunked fold
/// runs each chunk's rows in a function with no call inside (a `for` loop's `next` calls the
/// chunk's deadline check, which kept the loop's values on the stack); on the GPU it is the same
/// loop as `for`. Its closure captures by value too: through references LLVM reloaded `limit`
/// and `update`'s captures after every shared-memory store.
#[cfg_attr(target_arch = "nvptx64", inline(always))]
#[cfg_attr(not(target_arch = "nvptx64"), inline(never))]
fn for_each_row(
    keys: &[u32],
    values: &[f32],
    k: usize,
    rejected: &Out<u64>,
    mut update: impl FnMut(usize, f32, u32, u32),
) {
    // Checked once here rather than at each rejected row (the row loop then has no check).
    assert!(
        rejected.len() >= 2,
        "group_by: rejected needs 2 elements (rows, largest key)"
    );
    // `key < k` in 32 bits (a 64-bit compare is two instructions and two more registers):
    // every u32 key is below a `k` past `u32::MAX`.
    let (limit, every_key) = (k.min(u32::MAX as usize) as u32, k > u32::MAX as usize);
    rows(
        keys,
        values,
        #[inline(always)]
        move |key, value| {
            if key < limit || every_key {
                let key = key as usize;
                // On the GPU a select (a branch there had LLVM duplicate the shared kernel's
                // count and sum atomics into it). On the CPU a branch, never taken but for NaN,
                // with a copy of `update` on each side: the selects were two more `cmov`s on
                // each maximum's chain through memory (load, compare, select, store), and the
                // row loop took about half again as long as with the branch.
                #[cfg(target_arch = "nvptx64")]
                {
                    let (low, high) = bounds(value).unwrap_or((0, 0));
                    update(key, value, low, high);
                }
                #[cfg(not(target_arch = "nvptx64"))]
                match bounds(value) {
                    Some((low, high)) => update(key, value, low, high),
                    None => update(key, value, 0, 0),
                }
            } else {
                reject(rejected, key);
            }
        },
    );
}

/// `row(key, value)` for this thread's rows ([`thread::grid_stride`]) of `keys` and `values`
/// (one length: `same_len` in both kernels that call [`for_each_row`]).
///
/// On the CPU through [`thread::grid_stride_zip`], whose chunk loop reads both slices without a
/// bounds check (its indices are below both lengths). With `keys[i]` and its check, the row loop
/// of the main job's 16-key row took 1.22× the plain loop's CPU time (perf samples, two runs),
/// without 0.82×. On the GPU through the indices, as before: `grid_stride_zip`'s 32-bit chunked
/// index gave `group_by_shared` 26 registers instead of 24 (sm_90).
#[inline(always)]
fn rows(keys: &[u32], values: &[f32], mut row: impl FnMut(u32, f32)) {
    #[cfg(target_arch = "nvptx64")]
    thread::grid_stride(keys.len()).for_each(move |i| {
        // `values[..keys.len()]`: `keys[i]`'s bounds check covers both.
        row(keys[i], values[..keys.len()][i])
    });
    #[cfg(not(target_arch = "nvptx64"))]
    thread::grid_stride_zip(keys, values).for_each(move |(&key, &value)| row(key, value));
}

/// Aggregates the rows this grid's threads visit (grid-stride) into the state of the module doc,
/// `K = count.len()` keys, through a private copy of the state per block in dynamic shared
/// memory; rows with keys `≥ K` go to `rejected` (`[rows, largest key]`, 2 elements).
///
/// Launch with `shared_mem_bytes = SHARED_BYTES_PER_KEY · K` (48 KiB, the limit without opting
/// in, holds 3072 keys); the kernel asserts it has that much. Each block adds its non-empty keys
/// to the global state once, so fewer, larger blocks (one or two per multiprocessor) merge less.
#[kernel(same_len(keys, values), same_len(count, sum, lowest, highest))]
pub fn group_by_shared(
    keys: &[u32],
    values: &[f32],
    count: Out<u32>,
    sum: Out<f32>,
    lowest: Out<u32>,
    highest: Out<u32>,
    rejected: Out<u64>,
) {
    let k = count.len();
    // One allocation seen as u32 and as f32: key `g`'s count, sum, lowest and highest are its
    // values `4·g .. 4·g + 4`, so that a row touches 16 bytes (on the CPU, whose row loop then
    // needs one base address and a shift per row rather than four offsets, one cache line).
    let local = dynamic_shared::<u32>();
    let local_sum = dynamic_shared::<f32>();
    // Written as a division (no overflow), it also lets the compiler prove the four state
    // indices `4·g + slot` (g < k) in bounds, and drop their checks from the row loop. Both views
    // have the same length (one allocation, 4-byte elements; on the GPU the second test folds),
    // but the CPU's row loop, a function of its own, sees two lengths: it needs both.
    assert!(
        k <= local.len() / 4 && k <= local_sum.len() / 4,
        "group_by_shared needs shared_mem_bytes = SHARED_BYTES_PER_KEY × count.len()"
    );
    // The state of key `g` is at `4·g + slot` (slot < 4), in 32 bits: `k ≤ local.len() / 4`, and
    // shared memory's size is a u32 of bytes, so `4·k < 2^30`.
    let k32 = k as u32;
    // `move` (copies of two handles): the CPU executor's split path carries the closure across
    // the barriers below, so it cannot borrow locals of the region that made it.
    let state = move |slot: u32, g: u32| {
        let at = (4 * g + slot) as usize;
        // SAFETY: callers pass `slot < 4` and `g < k`, so `at < 4·k ≤ local.len()` (asserted
        // above), with no overflow (`4·k < 2^30`). Telling the compiler drops the bounds
        // checks of the 32-bit index, which it cannot see through the multiply.
        unsafe { core::hint::assert_unchecked(g < k32 && at < local.len()) };
        at
    };
    let t = thread::thread_idx().x;
    let threads = thread::block_dim().x;
    let mut j = t;
    while j < k32 {
        local.set(state(0, j), 0);
        local_sum.set(state(1, j), 0.0);
        local.set(state(2, j), 0);
        local.set(state(3, j), 0);
        // No overflow: `j < k < 2^28` and at most 1024 threads.
        j += threads;
    }
    thread::sync_threads();
    for_each_row(
        keys,
        values,
        k,
        &rejected,
        #[inline(always)]
        move |g, value, low, high| {
            // SAFETY: `for_each_row` passes keys below `k`, and `k ≤ local.len() / 4` and
            // `k ≤ local_sum.len() / 4` (asserted above), so each state index `4·g + slot`
            // (slot < 4) is below `4·k`, within both, with no overflow. Telling the compiler
            // lets it drop the four bounds checks per row.
            unsafe {
                core::hint::assert_unchecked(
                    g < k && 4 * g + 3 < local.len() && 4 * g + 1 < local_sum.len(),
                )
            };
            local.atomic_add(4 * g, 1);
            local_sum.atomic_add(4 * g + 1, value);
            local.atomic_max(4 * g + 2, low);
            local.atomic_max(4 * g + 3, high);
        },
    );
    thread::sync_threads();
    // One state value per thread and trip, value `j` (slot `j % 4` of key `j / 4`), added to the
    // global state unless it is 0, which would change nothing there: a count or maximum of 0 is
    // no row or no non-NaN value, and a sum whose bits are 0 is +0.0 (the sum of a key with no
    // rows; adding it changes no sum, since the global sums start at +0.0 and no block's is
    // −0.0, which a sum starting at +0.0 never becomes). With a thread per key reading all
    // four values, ptxas merged the four loads into one 128-bit load and the kernel took 26
    // registers instead of 24 (sm_90). No overflow: `4·k < 2^30` and at most 1024 threads.
    let mut j = t;
    while j < 4 * k32 {
        let (key, slot) = ((j / 4) as usize, j % 4);
        let v = local.get(state(slot, j / 4));
        if v != 0 {
            match slot {
                0 => {
                    count.atomic_add(key, v);
                }
                1 => {
                    sum.atomic_add(key, f32::from_bits(v));
                }
                2 => {
                    lowest.atomic_max(key, v);
                }
                _ => {
                    highest.atomic_max(key, v);
                }
            }
        }
        j += threads;
    }
}

/// [`group_by_shared`] without shared memory: each row updates the global state of its key
/// directly (device-wide atomics), for any `K`. With many keys the rows spread over many
/// addresses, so the atomics rarely collide.
#[kernel(same_len(keys, values), same_len(count, sum, lowest, highest))]
pub fn group_by_global(
    keys: &[u32],
    values: &[f32],
    count: Out<u32>,
    sum: Out<f32>,
    lowest: Out<u32>,
    highest: Out<u32>,
    rejected: Out<u64>,
) {
    let k = count.len();
    for_each_row(
        keys,
        values,
        k,
        &rejected,
        #[inline(always)]
        |g, value, low, high| {
            count.atomic_add(g, 1);
            sum.atomic_add(g, value);
            // Device-wide atomics: none for NaN (0), which would change nothing.
            if high != 0 {
                lowest.atomic_max(g, low);
                highest.atomic_max(g, high);
            }
        },
    );
}

/// Values of the `state` of [`group_by_owned`] per key: count, sum's bits, lowest, highest.
pub const OWNED_STATE_PER_KEY: usize = 4;

/// How many rows ahead [`group_by_owned`] prefetches the state its thread will update.
const PREFETCH_ROWS: usize = 32;

/// [`group_by_global`] with the keys split between the blocks, for the CPU executor: block `b`
/// of `B` owns the keys `b·L/B .. (b+1)·L/B`, with `L = min(K, 2^32)` (every u32 key is below
/// `L` when `K ≥ 2^32`); its threads go through every row ([`thread::block_stride`]) and update
/// the state of the rows whose key it owns with block-scope atomics (`Out::atomic_*_block`,
/// CUDA's `atomicAdd_block`: no other block touches those keys). Block 0 also counts the rows
/// whose key is out of range in `rejected` (device-scope atomics). Same results as
/// [`group_by_global`], for any launch shape along x; blocks or threads along y or z would
/// see the same rows twice, so the kernel asserts a 1D launch.
///
/// The state of key `g` is `state[4g..4g + 4]` (`K = state.len() / 4`): the count, the sum's
/// f32 bits, lowest and highest as in the module doc, all zero at the start, so that one row
/// touches one cache line; [`group_by_owned_finish`] lays it out as [`group_by_finish`] does.
///
/// Every block reads every row. On the CPU executor, one block per worker thread, that is a
/// sequential read of the rows per core, which costs far less than what device-scope atomics
/// cost there: each is a locked instruction, a full fence, so the cache misses of one row's
/// updates and the next row's could not overlap. On a GPU, hundreds of blocks would read the
/// rows hundreds of times, so `ops::group_by` launches [`group_by_global`] there.
#[kernel]
pub fn group_by_owned(keys: &[u32], values: &[f32], state: Out<u32>, rejected: Out<u64>) {
    let (grid, block) = (thread::grid_dim(), thread::block_dim());
    assert!(
        grid.y == 1 && grid.z == 1 && block.y == 1 && block.z == 1,
        "group_by_owned needs a 1D launch (grid and block with y = z = 1)"
    );
    assert!(
        keys.len() == values.len() && state.len() % OWNED_STATE_PER_KEY == 0,
        "group_by_owned needs one value per key and 4 state values per key"
    );
    assert!(
        rejected.len() >= 2,
        "group_by: rejected needs 2 elements (rows, largest key)"
    );
    // Keys are u32: those from `limit` on are out of range.
    let limit = (state.len() / OWNED_STATE_PER_KEY).min(1 << 32) as u64;
    let (b, blocks) = (thread::block_idx().x as u64, grid.x as u64);
    // No overflow: `b < 2^31` and `limit ≤ 2^32`. The ranges of blocks 0..B tile `0..limit`.
    let first = b * limit / blocks;
    let owned = (b + 1) * limit / blocks - first;
    let rejects = b == 0;
    let rows = keys.len();
    for i in thread::block_stride(rows) {
        // On the CPU executor a thread's rows are consecutive: ask for the state of the row
        // `PREFETCH_ROWS` ahead now, so that several rows' cache misses are under way at once
        // (the updates' loads, behind a compare-and-swap loop, keep the core from running far
        // enough ahead itself). Only of keys this block owns (else that of `first`, in cache):
        // another block's lines would only move between the cores. On the GPU, where thread
        // `t` takes every `B`-th row, the row ahead is another thread's and the prefetch does
        // little.
        let ahead = keys[(i + PREFETCH_ROWS).min(rows - 1)] as u64;
        let ahead = if ahead.wrapping_sub(first) < owned {
            ahead
        } else {
            first
        };
        state.prefetch(OWNED_STATE_PER_KEY * ahead as usize);
        let (key, value) = (keys[i], values[i]);
        // One compare: a key below `first` wraps around to a large offset.
        if (key as u64).wrapping_sub(first) < owned {
            // No overflow: `key < limit = state.len() / 4`.
            let at = OWNED_STATE_PER_KEY * key as usize;
            state.atomic_add_block(at, 1);
            add_f32_block(&state, at + 1, value);
            // None for NaN, whose maximum with the state would change nothing.
            if let Some((low, high)) = bounds(value) {
                state.atomic_max_block(at + 2, low);
                state.atomic_max_block(at + 3, high);
            }
        } else if rejects && key as u64 >= limit {
            reject(&rejected, key);
        }
    }
}

/// Adds `value` to the f32 whose bits are `state[at]`, atomically among the block's threads: a
/// compare-and-swap loop (on the CPU executor a few plain loads and stores of one cache line).
#[inline(always)]
fn add_f32_block(state: &Out<u32>, at: usize, value: f32) {
    // A read that stores nothing new (the maximum with 0), atomic as the updates are.
    let mut old = state.atomic_max_block(at, 0);
    loop {
        let new = (f32::from_bits(old) + value).to_bits();
        match state.atomic_compare_exchange_block(at, old, new) {
            Ok(_) => return,
            Err(seen) => old = seen,
        }
    }
}

/// The smallest value from the `lowest` state: `+∞` if no non-NaN value was seen.
#[inline(always)]
fn min_of(low: u32) -> f32 {
    if low == 0 {
        f32::INFINITY
    } else {
        from_order_key(!low)
    }
}

/// The largest value from the `highest` state: `−∞` if no non-NaN value was seen.
#[inline(always)]
fn max_of(high: u32) -> f32 {
    if high == 0 {
        f32::NEG_INFINITY
    } else {
        from_order_key(high)
    }
}

/// `count`, `sum`, `min`, `max` per key from the `state` of [`group_by_owned`] (4 values per
/// key): what [`group_by_global`] and [`group_by_finish`] give. Grid-stride.
#[kernel(same_len(count, sum, min, max))]
pub fn group_by_owned_finish(
    state: &[u32],
    count: Out<u32>,
    sum: Out<f32>,
    min: Out<f32>,
    max: Out<f32>,
) {
    assert!(
        state.len() == OWNED_STATE_PER_KEY * count.len(),
        "group_by_owned_finish needs 4 state values per key"
    );
    for i in thread::grid_stride(count.len()) {
        let at = OWNED_STATE_PER_KEY * i;
        count.set(i, state[at]);
        sum.set(i, f32::from_bits(state[at + 1]));
        min.set(i, min_of(state[at + 2]));
        max.set(i, max_of(state[at + 3]));
    }
}

/// `min[k]`, `max[k]` from the `lowest`/`highest` state of [`group_by_shared`] or
/// [`group_by_global`]: `+∞` and `−∞` where no non-NaN value was seen. Grid-stride.
#[kernel(same_len(lowest, highest, min, max))]
pub fn group_by_finish(lowest: &[u32], highest: &[u32], min: Out<f32>, max: Out<f32>) {
    for i in thread::grid_stride(min.len()) {
        min.set(i, min_of(lowest[i]));
        max.set(i, max_of(highest[i]));
    }
}
