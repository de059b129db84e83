//! Tensor-core kernels (`ferrocuda_std::mma`, `copy_async`) for `tests/tensor_cores.rs`: one warp,
//! one 16×8 tile `d = a·b + c` per input type, from global slices and through shared memory
//! (`cp.async`, `ldmatrix`), and a warp whose lanes do not all reach the `mma`. Built to PTX at
//! sm_80 (the crate's `sm80` feature).

use ferrocuda_std::async_copy::{commit_async_copies, copy_async, wait_async_copies};
use ferrocuda_std::half::{bf16, f16};
use ferrocuda_std::mma::{mma, FragA, FragB, FragC, MmaInput};
use ferrocuda_std::thread::sync_threads;
use ferrocuda_std::{kernel, shared, warp, Out};

/// `d = a·b + c` on one 16×8 tile: `a` row-major 16×K, `b` row-major K×8, `c` and `d` 16×8.
#[inline(always)]
fn tile<T: MmaInput>(a: &[T], b: &[T], c: &[T::Acc], d: &Out<T::Acc>) {
    let fa = FragA::<T>::load(a, T::K);
    let fb = FragB::<T>::load(b, 8);
    let fc = FragC::from_fn(|r, col| c[r * 8 + col]);
    mma(&fa, &fb, &fc).for_each(|r, col, v| d.set(r * 8 + col, v));
}

/// One warp: `d = a·b + c`, f16 inputs (16×16 · 16×8), f32 accumulators.
#[kernel]
pub fn mma_f16(a: &[f16], b: &[f16], c: &[f32], d: Out<f32>) {
    tile(a, b, c, &d);
}

/// As [`mma_f16`], bf16 inputs.
#[kernel]
pub fn mma_bf16(a: &[bf16], b: &[bf16], c: &[f32], d: Out<f32>) {
    tile(a, b, c, &d);
}

/// As [`mma_f16`], f32 inputs as tf32 (16×8 · 8×8).
#[kernel]
pub fn mma_tf32(a: &[f32], b: &[f32], c: &[f32], d: Out<f32>) {
    tile(a, b, c, &d);
}

/// As [`mma_f16`], i8 inputs (16×32 · 32×8), i32 accumulators.
#[kernel]
pub fn mma_i8(a: &[i8], b: &[i8], c: &[i32], d: Out<i32>) {
    tile(a, b, c, &d);
}

/// As [`mma_f16`], with `a` and `b` staged in shared memory by `copy_async` (16 bytes a lane)
/// and read back with `FragA::load_shared` / `FragB::load_shared` (`ldmatrix` on the GPU).
#[kernel]
pub fn mma_f16_shared(a: &[f16], b: &[f16], c: &[f32], d: Out<f32>) {
    let ta = shared!([f16; 256]);
    let tb = shared!([f16; 128]);
    let lane = warp::lane_id() as usize;
    copy_async::<f16, 16>(&ta, 8 * lane, a, 8 * lane);
    if lane < 16 {
        copy_async::<f16, 16>(&tb, 8 * lane, b, 8 * lane);
    }
    commit_async_copies();
    wait_async_copies::<0>();
    sync_threads();
    let fa = FragA::load_shared(&ta, 0, 16);
    let fb = FragB::load_shared(&tb, 0, 8);
    let fc = FragC::from_fn(|r, col| c[r * 8 + col]);
    mma(&fa, &fb, &fc).for_each(|r, col, v| d.set(r * 8 + col, v));
}

/// A planted bug: lane 5 returns before the `mma` the rest of its warp waits in.
#[kernel]
pub fn mma_divergent(a: &[f16], b: &[f16], c: &[f32], d: Out<f32>) {
    if warp::lane_id() == 5 {
        return;
    }
    tile(a, b, c, &d);
}
