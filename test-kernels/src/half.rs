//! Half-precision kernels (`f16`, `bf16` storage, `f32` arithmetic), for
//! tests/half_precision.rs: every conversion, and an axpy that stores in f16.

use ferrocuda_std::half::{bf16_to_f32, f16_to_f32, f32_to_bf16, f32_to_f16};
use ferrocuda_std::{bf16, f16, kernel, thread, Out};

/// `out[i] = x[i]` widened to f32 (`cvt.f32.f16` on the GPU).
#[kernel(same_len(x, out))]
pub fn widen_f16(x: &[f16], out: Out<f32>) {
    for i in thread::grid_stride(x.len()) {
        out.set(i, f16_to_f32(x[i]));
    }
}

/// `out[i] = x[i]` rounded to f16 (`cvt.rn.f16.f32` on the GPU).
#[kernel(same_len(x, out))]
pub fn narrow_f16(x: &[f32], out: Out<f16>) {
    for i in thread::grid_stride(x.len()) {
        out.set(i, f32_to_f16(x[i]));
    }
}

/// `out[i] = x[i]` widened to f32.
#[kernel(same_len(x, out))]
pub fn widen_bf16(x: &[bf16], out: Out<f32>) {
    for i in thread::grid_stride(x.len()) {
        out.set(i, bf16_to_f32(x[i]));
    }
}

/// `out[i] = x[i]` rounded to bf16.
#[kernel(same_len(x, out))]
pub fn narrow_bf16(x: &[f32], out: Out<bf16>) {
    for i in thread::grid_stride(x.len()) {
        out.set(i, f32_to_bf16(x[i]));
    }
}

/// `y[i] = a · x[i] + y[i]` with `x` and `y` stored in f16 and the arithmetic in f32 (a multiply,
/// then an add, each rounded), rounded to f16 once at the end.
#[kernel(same_len(x, y))]
pub fn axpy_f16(a: f32, x: &[f16], y: Out<f16>) {
    let i = thread::index_1d();
    if i < y.len() {
        let sum = a * f16_to_f32(x[i]) + f16_to_f32(y.get(i));
        y.set(i, f32_to_f16(sum));
    }
}
