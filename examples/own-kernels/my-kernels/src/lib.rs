//! A user's kernel crate: `no_std`, one feature line for the nvptx build, `#[kernel]` functions.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]

use ferrocuda_std::{kernel, shared, thread, Grid, Number, Out, Shared};

/// `out[i] = scale * x[i]²`, in f64.
#[kernel(same_len(x, out))]
pub fn scaled_square(x: &[f64], out: Out<f64>, scale: f64) {
    let i = thread::index_1d();
    if i < x.len() {
        out.set(i, scale * x[i] * x[i]);
    }
}

/// Threads per block of `block_max`.
pub const BLOCK: usize = 128;

/// The largest of `value` over the block (of `BLOCK` threads), in every thread: a tree
/// reduction through `tile`.
fn block_max_of<T: Number>(value: T, tile: Shared<T>) -> T {
    let t = thread::thread_idx().x as usize;
    tile.set(t, value);
    thread::sync_threads();
    let mut half = BLOCK / 2;
    while half > 0 {
        if t < half {
            let (a, b) = (tile.get(t), tile.get(t + half));
            tile.set(t, if b > a { b } else { a });
        }
        thread::sync_threads();
        half /= 2;
    }
    let max = tile.get(0);
    thread::sync_threads();
    max
}

/// `maxes[b]` = the largest element of block `b`'s slice of `x` (the type's least value past its
/// end): a tree reduction through shared memory, generic over the element. One source, three PTX
/// entries (`block_max_f32`, `block_max_f64`, `block_max_i32`); the launch's argument types pick
/// one. Launch with blocks of `BLOCK` threads.
#[kernel(instances(f32, f64, i32))]
pub fn block_max<T: Number>(x: &[T], maxes: Out<T>) {
    let tile = shared!([T; BLOCK]);
    let i = thread::index_1d();
    let max = block_max_of(if i < x.len() { x[i] } else { T::LEAST }, tile);
    if thread::thread_idx().x == 0 {
        maxes.set(thread::block_idx().x as usize, max);
    }
}

/// `max[0]` = the largest element of `x`, in one launch: each block's largest into
/// `maxes[block]`, a grid-wide barrier, then block 0 takes the largest of those. A cooperative
/// kernel (its last parameter is the `Grid`): launch it with `launch_cooperative!`, blocks of
/// `BLOCK` threads, at most `BLOCK` blocks.
#[kernel]
pub fn grid_max(x: &[f64], maxes: Out<f64>, max: Out<f64>, grid: Grid) {
    let tile = shared!([f64; BLOCK]);
    let mut mine = f64::NEG_INFINITY;
    for i in thread::grid_stride(x.len()) {
        if x[i] > mine {
            mine = x[i];
        }
    }
    let block_largest = block_max_of(mine, tile);
    let (block, t) = (
        thread::block_idx().x as usize,
        thread::thread_idx().x as usize,
    );
    if t == 0 {
        maxes.set(block, block_largest);
    }
    grid.sync();
    if block == 0 {
        let blocks = thread::grid_dim().x as usize;
        let candidate = if t < blocks {
            maxes.get(t)
        } else {
            f64::NEG_INFINITY
        };
        let largest = block_max_of(candidate, tile);
        if t == 0 {
            max.set(0, largest);
        }
    }
}
