//! A user's kernel crate: `no_std`, one feature line for the nvptx build, `#[kernel]` functions.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]

use ferrocuda_std::{kernel, shared, thread, Number, Out};

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

/// `maxes[b]` = the largest element of block `b`'s slice of `x` (the type's least value past its
/// end): a tree reduction through shared memory, generic over the element. One source, three PTX
/// entries (`block_max_f32`, `block_max_f64`, `block_max_i32`); the launch's argument types pick
/// one. Launch with blocks of `BLOCK` threads.
#[kernel(instances(f32, f64, i32))]
pub fn block_max<T: Number>(x: &[T], maxes: Out<T>) {
    let tile = shared!([T; BLOCK]);
    let t = thread::thread_idx().x as usize;
    let i = thread::index_1d();
    tile.set(t, if i < x.len() { x[i] } else { T::LEAST });
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
