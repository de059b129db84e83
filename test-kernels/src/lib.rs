//! Kernels that fail on purpose, so that tests can check how failures are reported.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx))]

use gpu_std::{kernel, thread, Out};

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
