//! Kernels that leave loops with barriers in them (`break`, `continue`, `return`, labelled or
//! not, from an `if`, a `match` or a nested loop) and that declare variables with `let` and no
//! value, assigned later: shapes the CPU executor's split path runs without coroutines (issue
//! 30), for `tests/cpu_regions_leaving.rs` and `benches/cpu_executor.rs`. Blocks of at most
//! [`LEAVE_BLOCK`] threads, 1D; each thread starts from `x[i % x.len()]`.
//!
//! They are written the way users write kernels, not the way clippy would like: `t - t` is a
//! zero the macro cannot prove block-uniform, and the late `let`s and nested `if`s are the shapes
//! under test.
#![allow(
    clippy::eq_op,
    clippy::collapsible_if,
    clippy::needless_late_init,
    clippy::manual_is_multiple_of
)]

use ferrocuda_std::{kernel, shared, thread, Out};

/// Most threads per block of these kernels.
pub const LEAVE_BLOCK: usize = 256;

/// `rounds` times: every thread adds its right neighbour's value (wrapping in the block), with
/// a barrier before and after the reads; the trip `stop` ends the loop between its two
/// barriers, block-uniformly (Rodinia hotspot's pyramid loop skips its last copy so).
#[kernel]
pub fn break_between_barriers(x: &[u32], out: Out<u32>, rounds: u32, stop: u32) {
    let tile = shared!([u32; LEAVE_BLOCK]);
    let t = thread::thread_idx().x as usize;
    let n = thread::block_dim().x as usize;
    let i = thread::index_1d();
    let mut acc = x[i % x.len()];
    for r in 0..rounds {
        tile.set(t, acc);
        thread::sync_threads();
        if r == stop {
            break;
        }
        acc = acc.wrapping_add(tile.get((t + 1) % n));
        thread::sync_threads();
    }
    out.set(i, acc);
}

/// [`break_between_barriers`] written without the `break`: the host passes the number of trips,
/// `trips = min(rounds, stop + 1)`, and the last trip's reads are skipped by an `if`. The same
/// results, and the bench's baseline (a block-uniform `for`, decided by the block with no vote).
#[kernel]
pub fn stop_by_bound(x: &[u32], out: Out<u32>, trips: u32, stop: u32) {
    let tile = shared!([u32; LEAVE_BLOCK]);
    let t = thread::thread_idx().x as usize;
    let n = thread::block_dim().x as usize;
    let i = thread::index_1d();
    let mut acc = x[i % x.len()];
    for r in 0..trips {
        tile.set(t, acc);
        thread::sync_threads();
        if r != stop {
            acc = acc.wrapping_add(tile.get((t + 1) % n));
        }
        thread::sync_threads();
    }
    out.set(i, acc);
}

/// Odd trips of a block-uniform `for` skip their second half with `continue`: the even ones
/// add the value `shift` places to the right.
#[kernel]
pub fn continue_odd_trips(x: &[u32], out: Out<u32>, rounds: u32, shift: u32) {
    let tile = shared!([u32; LEAVE_BLOCK]);
    let t = thread::thread_idx().x as usize;
    let n = thread::block_dim().x as usize;
    let i = thread::index_1d();
    let mut acc = x[i % x.len()];
    for r in 0..rounds {
        tile.set(t, acc);
        thread::sync_threads();
        if r % 2 == 1 {
            continue;
        }
        acc = acc.wrapping_add(tile.get((t + shift as usize) % n)) ^ r;
        thread::sync_threads();
    }
    out.set(i, acc);
}

/// A `while` whose condition is a per-thread variable (each trip decided by every thread's
/// vote), left by a `break` inside a `match` inside an `if` at the trip `stop`, and by a
/// `continue` on trips that are multiples of 3.
#[kernel]
pub fn while_with_break_and_continue(x: &[u32], out: Out<u32>, limit: u32, stop: u32) {
    let tile = shared!([u32; LEAVE_BLOCK]);
    let t = thread::thread_idx().x as usize;
    let n = thread::block_dim().x as usize;
    let i = thread::index_1d();
    let mut acc = x[i % x.len()];
    // Per thread (of t), though every thread holds the same.
    let mut j = t as u32 - t as u32;
    while j < limit {
        j += 1;
        tile.set(t, acc);
        thread::sync_threads();
        if acc != u32::MAX || j > 0 {
            match j {
                k if k == stop => break,
                k if k % 3 == 0 => continue,
                _ => {}
            }
        }
        acc = acc.wrapping_mul(3).wrapping_add(tile.get((t + 3) % n));
        thread::sync_threads();
    }
    out.set(i, acc.wrapping_add(j));
}

/// Nested split loops: a labelled `break 'outer` from the inner loop at its `stop`-th trip in
/// all, and a `continue 'outer` on the inner trip 2 of odd outer trips (before its reads).
#[kernel]
pub fn labelled_break_out_of_nested_loops(
    x: &[u32],
    out: Out<u32>,
    outer: u32,
    inner: u32,
    stop: u32,
) {
    let tile = shared!([u32; LEAVE_BLOCK]);
    let t = thread::thread_idx().x as usize;
    let n = thread::block_dim().x as usize;
    let i = thread::index_1d();
    let mut acc = x[i % x.len()];
    'outer: for a in 0..outer {
        for b in 0..inner {
            tile.set(t, acc);
            thread::sync_threads();
            // In an `if` every thread takes: each thread leaves on its own (`Regions::leave`);
            // the `break 'outer` below is the block's (a region's last statement).
            if t < LEAVE_BLOCK || acc == 7 {
                if a % 2 == 1 && b == 2 {
                    continue 'outer;
                }
            }
            acc = acc.wrapping_add(tile.get((t + 1 + b as usize) % n));
            if a * inner + b == stop {
                break 'outer;
            }
            thread::sync_threads();
        }
        acc ^= a.wrapping_mul(0x9E37_79B9);
    }
    out.set(i, acc);
}

/// Every thread returns (writing first) at the trip `stop` of a loop with barriers: the block is
/// done, as after an early return at the top.
#[kernel]
pub fn return_out_of_a_loop(x: &[u32], out: Out<u32>, rounds: u32, stop: u32) {
    let tile = shared!([u32; LEAVE_BLOCK]);
    let t = thread::thread_idx().x as usize;
    let n = thread::block_dim().x as usize;
    let i = thread::index_1d();
    let mut acc = x[i % x.len()];
    for r in 0..rounds {
        tile.set(t, acc);
        thread::sync_threads();
        acc = acc.wrapping_add(tile.get((t + 2) % n));
        if r == stop {
            out.set(i, acc ^ 0xdead);
            return;
        }
        thread::sync_threads();
    }
    out.set(i, acc);
}

/// A tree reduction whose threads past the stride `continue` (the GPU idiom `if (t < s)`, turned
/// around): non-uniform, but with no barrier after it in the trip, so every thread meets at the
/// next trip's decision. `out[block]` = the block's sum.
#[kernel]
pub fn tree_sum_with_continue(x: &[u32], out: Out<u32>) {
    let sums = shared!([u32; LEAVE_BLOCK]);
    let t = thread::thread_idx().x as usize;
    let i = thread::index_1d();
    sums.set(t, if i < x.len() { x[i] } else { 0 });
    let mut stride = thread::block_dim().x as usize;
    while stride > 1 {
        stride /= 2;
        thread::sync_threads();
        if t >= stride {
            continue;
        }
        sums.set(t, sums.get(t).wrapping_add(sums.get(t + stride)));
    }
    thread::sync_threads();
    if t == 0 {
        out.set(thread::block_idx().x as usize, sums.get(0));
    }
}

/// Thread `who` alone leaves the loop by `break` on the last trip, the others by its condition
/// (the same trip): no barrier between, no divergence.
#[kernel]
pub fn one_thread_breaks_on_the_last_trip(x: &[u32], out: Out<u32>, rounds: u32, who: u32) {
    let tile = shared!([u32; LEAVE_BLOCK]);
    let t = thread::thread_idx().x as usize;
    let n = thread::block_dim().x as usize;
    let i = thread::index_1d();
    let mut acc = x[i % x.len()];
    let mut r = t as u32 - t as u32;
    while r < rounds {
        tile.set(t, acc);
        thread::sync_threads();
        acc = acc.wrapping_add(tile.get((t + 5) % n));
        thread::sync_threads();
        r += 1;
        if r == rounds && t as u32 == who {
            acc ^= 1;
            break;
        }
    }
    out.set(i, acc);
}

/// Planted divergence: threads below `who` leave the loop (`break` when `leave` is 1,
/// `continue` when 2, `return` when 3) between its barriers, the others go on to the second.
#[kernel]
pub fn some_threads_leave_between_barriers(out: Out<u32>, rounds: u32, who: u32, leave: u32) {
    let t = thread::thread_idx().x;
    let i = thread::index_1d();
    let mut count = t;
    for _ in 0..rounds {
        thread::sync_threads();
        count += 1;
        if t < who {
            match leave {
                1 => break,
                2 => continue,
                _ => return,
            }
        }
        thread::sync_threads();
    }
    out.set(i, count - t);
}

/// `let` without a value (Rodinia srad's `float n, s, w, e;`): declared before two barriers,
/// assigned by an `if`/`else` chain after them, read after a third. `out[i]` = the four
/// neighbours' differences from the thread's value, combined.
#[kernel]
pub fn declared_before_assigned_after(x: &[u32], out: Out<u32>) {
    let tile = shared!([u32; LEAVE_BLOCK]);
    let t = thread::thread_idx().x as usize;
    let n = thread::block_dim().x as usize;
    let i = thread::index_1d();
    let (north, south, west, east): (u32, u32, u32, u32);
    let mut acc = x[i % x.len()];
    tile.set(t, acc);
    thread::sync_threads();
    acc = acc.wrapping_mul(7);
    thread::sync_threads();
    let c = tile.get(t);
    if t == 0 {
        north = tile.get(n - 1).wrapping_sub(c);
        south = tile.get(1 % n).wrapping_sub(c);
        (west, east) = (0, 1);
    } else if t == n - 1 {
        north = tile.get(t - 1).wrapping_sub(c);
        south = tile.get(0).wrapping_sub(c);
        (west, east) = (2, 3);
    } else {
        north = tile.get(t - 1).wrapping_sub(c);
        south = tile.get(t + 1).wrapping_sub(c);
        west = c >> 3;
        east = c << 3;
    }
    thread::sync_threads();
    tile.set(t, acc);
    out.set(
        i,
        north ^ south.rotate_left(7) ^ west.wrapping_add(east) ^ acc,
    );
}

/// [`declared_before_assigned_after`] written with values (the same results): the bench's
/// baseline.
#[kernel]
pub fn declared_with_values(x: &[u32], out: Out<u32>) {
    let tile = shared!([u32; LEAVE_BLOCK]);
    let t = thread::thread_idx().x as usize;
    let n = thread::block_dim().x as usize;
    let i = thread::index_1d();
    let mut acc = x[i % x.len()];
    tile.set(t, acc);
    thread::sync_threads();
    acc = acc.wrapping_mul(7);
    thread::sync_threads();
    let c = tile.get(t);
    let (north, south, west, east) = if t == 0 {
        (
            tile.get(n - 1).wrapping_sub(c),
            tile.get(1 % n).wrapping_sub(c),
            0,
            1,
        )
    } else if t == n - 1 {
        (
            tile.get(t - 1).wrapping_sub(c),
            tile.get(0).wrapping_sub(c),
            2,
            3,
        )
    } else {
        (
            tile.get(t - 1).wrapping_sub(c),
            tile.get(t + 1).wrapping_sub(c),
            c >> 3,
            c << 3,
        )
    };
    thread::sync_threads();
    tile.set(t, acc);
    out.set(
        i,
        north ^ south.rotate_left(7) ^ west.wrapping_add(east) ^ acc,
    );
}

/// `let` without a value assigned before a barrier and read after it (carried), and one declared
/// before a split loop and assigned in every trip before its barrier (each trip's own).
#[kernel]
pub fn assigned_in_each_trip(x: &[u32], out: Out<u32>, rounds: u32) {
    let tile = shared!([u32; LEAVE_BLOCK]);
    let t = thread::thread_idx().x as usize;
    let n = thread::block_dim().x as usize;
    let i = thread::index_1d();
    let start;
    if t % 2 == 0 {
        start = x[i % x.len()];
    } else {
        start = x[(i + 1) % x.len()] ^ 0xff;
    }
    let mut acc = start;
    let mut right: u32;
    for r in 0..rounds {
        tile.set(t, acc);
        thread::sync_threads();
        right = tile.get((t + 1) % n);
        thread::sync_threads();
        acc = acc.wrapping_add(right).wrapping_add(r);
    }
    out.set(i, acc ^ start);
}

/// A `let` without a value assigned on some paths only before a barrier and again after it:
/// where `#[kernel]` cannot follow it, so the kernel stays on coroutines (with the reason).
#[kernel]
#[allow(unused_assignments)]
pub fn assigned_where_the_split_cannot_follow(x: &[u32], out: Out<u32>) {
    let i = thread::index_1d();
    let mut w: u32;
    if i % 2 == 0 {
        w = 1;
    }
    thread::sync_threads();
    w = x[i % x.len()];
    out.set(i, w);
}
