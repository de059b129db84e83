//! ferrocuda's kernels. Each is a plain Rust function marked `#[kernel]`; `build.rs` of the
//! `ferrocuda` crate compiles this crate to PTX, and the host crate links it for the CPU executor.
//!
//! The kernels follow one rule so that they run on any launch shape: a thread whose index falls
//! past the data does nothing (or, in grid-stride kernels, loops over its share of the indices:
//! `for i in thread::grid_stride(n)`).
#![no_std]
#![warn(missing_docs)]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(abi_ptx, asm_experimental_arch, core_float_math)
)]

#[cfg(not(target_arch = "nvptx64"))]
extern crate std;

/// `unrolled!(i in [0, 1, 2] { body })`: `body` once per listed constant, with `i` bound to it;
/// a loop that is certainly unrolled, for code whose arrays must stay in registers (an array
/// indexed by a loop counter LLVM did not unroll lives in local memory).
macro_rules! unrolled {
    ($i:ident in [$($n:literal),* $(,)?] $body:block) => {
        $({
            let $i: usize = $n;
            $body
        })*
    };
}

pub mod convolution;
pub mod finance;
pub mod group_by;
pub mod histogram;
pub mod matmul;
pub mod monte_carlo;
pub mod reduce;
pub mod statistics;
pub mod transpose;
pub mod transpose_2d;

use ferrocuda_std::{kernel, thread, Out};

/// `a·b + c` rounded once (fused multiply-add). On the GPU it is one `fma.rn.f32`, as fast as a
/// multiply, where Rust's `a * b + c` is a multiply and an add (Rust never fuses them itself); on
/// the host it is the same correctly rounded operation (`f32::mul_add`), so the CPU executor
/// computes bit for bit what the GPU computes.
#[inline(always)]
pub(crate) fn fma(a: f32, b: f32, c: f32) -> f32 {
    #[cfg(target_arch = "nvptx64")]
    {
        core::f32::math::mul_add(a, b, c)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        a.mul_add(b, c)
    }
}

/// `out[i] = a[i] + b[i]`: the seed's first example, one thread per element.
#[kernel(same_len(a, b, out))]
pub fn vector_add(a: &[f32], b: &[f32], out: Out<f32>) {
    let i = thread::index_1d();
    if i < out.len() {
        out.set(i, a[i] + b[i]);
    }
}

/// `y[i] = alpha * x[i] + y[i]` (BLAS saxpy), grid-stride: any grid covers any length. One
/// fused multiply-add per element, rounded once (as cuBLAS and nvcc's default contraction).
#[kernel(same_len(x, y))]
pub fn saxpy(alpha: f32, x: &[f32], y: Out<f32>) {
    for i in thread::grid_stride(y.len()) {
        y.set(i, fma(alpha, x[i], y.get(i)));
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
