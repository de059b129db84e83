//! oxicuda's kernels. Each is a plain Rust function marked `#[kernel]`; `build.rs` of the
//! `oxicuda` crate compiles this crate to PTX, and the host crate links it for the CPU executor.
//!
//! The kernels follow one rule so that they run on any launch shape: a thread whose index falls
//! past the data does nothing (or, in grid-stride kernels, loops over every `grid_size_1d()`-th
//! element).
#![no_std]
#![warn(missing_docs)]
#![cfg_attr(target_arch = "nvptx64", feature(abi_ptx, asm_experimental_arch))]

pub mod finance;
pub mod histogram;
pub mod matmul;
pub mod monte_carlo;
pub mod reduce;
pub mod transpose;

use gpu_std::{kernel, thread, Out};

/// `out[i] = a[i] + b[i]`: the seed's first example, one thread per element.
#[kernel(same_len(a, b, out))]
pub fn vector_add(a: &[f32], b: &[f32], out: Out<f32>) {
    let i = thread::index_1d();
    if i < out.len() {
        out.set(i, a[i] + b[i]);
    }
}

/// `y[i] = alpha * x[i] + y[i]` (BLAS saxpy), grid-stride: any grid covers any length.
#[kernel(same_len(x, y))]
pub fn saxpy(alpha: f32, x: &[f32], y: Out<f32>) {
    let stride = thread::grid_size_1d();
    let mut i = thread::index_1d();
    while i < y.len() {
        y.set(i, alpha * x[i] + y.get(i));
        i += stride;
    }
}

/// `out = a + b` for row-major `rows × cols` matrices, one thread per element of a 2D grid
/// (x along columns, y along rows).
#[kernel(same_len(a, b, out))]
pub fn matrix_add(a: &[f32], b: &[f32], out: Out<f32>, cols: u32) {
    let (col, row) = thread::index_2d();
    let cols = cols as usize;
    if col < cols {
        let i = row * cols + col;
        if i < out.len() {
            out.set(i, a[i] + b[i]);
        }
    }
}
