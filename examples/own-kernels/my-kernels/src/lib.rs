//! A user's kernel crate: `no_std`, one feature line for the nvptx build, `#[kernel]` functions.
#![no_std]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]

use gpu_std::{kernel, thread, Out};

/// `out[i] = scale * x[i]²`, in f64.
#[kernel(same_len(x, out))]
pub fn scaled_square(x: &[f64], out: Out<f64>, scale: f64) {
    let i = thread::index_1d();
    if i < x.len() {
        out.set(i, scale * x[i] * x[i]);
    }
}
