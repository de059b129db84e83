//! A user's kernel crate: `no_std`, one feature line for the nvptx build, `#[kernel]` functions.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]

use ferrocuda_std::{kernel, shared, thread, Out};

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

/// `maxes[b]` = the largest element of block `b`'s slice of `x` (`-inf` past its end): a tree
/// reduction through shared memory. Launch with blocks of `BLOCK` threads.
#[kernel]
pub fn block_max(x: &[f64], maxes: Out<f64>) {
    let tile = shared!([f64; BLOCK]);
    let t = thread::thread_idx().x as usize;
    let i = thread::index_1d();
    tile.set(t, if i < x.len() { x[i] } else { f64::NEG_INFINITY });
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
    if t == 0 {
        maxes.set(thread::block_idx().x as usize, tile.get(0));
    }
}
