//! Sums and dot products: a block reduction ([`block::reduce_add`]: warp shuffles, then one
//! shared value per warp) under grid-stride loops, so any grid covers any length.
//!
//! A full reduction is two launches: `dot_partial` (or `sum_partial`) with `G` blocks writes one
//! partial sum per block, then `sum_partial` with one block sums the `G` partials. Two launches
//! rather than a float atomic keep the result deterministic.
//!
//! Each kernel is generic over f32 and f64: the `f32` instance keeps the kernel's name as its PTX
//! entry (`dot_partial`), the `f64` one is `dot_partial_f64`.

use ferrocuda_std::{block, kernel, shared, thread, Number, Out};

/// Most warps a block can have (1024 threads).
const MAX_WARPS: usize = 32;

/// `partial[block] = Σ a[i]·b[i]` over the elements this block's threads visit (grid-stride),
/// one fused multiply-add per element; `partial` needs one element per block.
#[kernel(same_len(a, b), instances(f32 as dot_partial, f64))]
pub fn dot_partial<T: Number>(a: &[T], b: &[T], partial: Out<T>) {
    let scratch = shared!([T; MAX_WARPS]);
    // A fold rather than a `for_each` into a captured `sum`: on the CPU executor the captured
    // accumulator stayed in memory (a store and reload per element on the FMA chain).
    let sum = thread::grid_stride_zip(a, b).fold(T::ZERO, dot_step);
    let total = block::reduce_add(sum, scratch);
    if thread::thread_idx().x == 0 {
        partial.set(thread::block_idx().x as usize, total);
    }
}

/// One element of a thread's dot product. On the GPU one fused multiply-add, as CUDA C's; on the
/// CPU a multiply and an add: there a thread's elements are one serial chain through `sum`
/// (a GPU hides that latency behind other warps), and an add's latency is shorter than a fused
/// multiply-add's (2 against 4 cycles on Intel's cores since Golden Cove, 3 against 4 on AMD's
/// Zen), so the executor's dot product runs up to twice as fast.
#[inline(always)]
fn dot_step<T: Number>(sum: T, (&x, &y): (&T, &T)) -> T {
    #[cfg(target_arch = "nvptx64")]
    return x.mul_add(y, sum);
    #[cfg(not(target_arch = "nvptx64"))]
    return sum + x * y;
}

/// `partial[block] = Σ x[i]` over the elements this block's threads visit (grid-stride). With
/// one block, `partial[0]` is the sum of `x`: the second pass of a reduction.
#[kernel(instances(f32 as sum_partial, f64))]
pub fn sum_partial<T: Number>(x: &[T], partial: Out<T>) {
    let scratch = shared!([T; MAX_WARPS]);
    let sum = thread::grid_stride_elements(x).fold(T::ZERO, |sum, &v| sum + v);
    let total = block::reduce_add(sum, scratch);
    if thread::thread_idx().x == 0 {
        partial.set(thread::block_idx().x as usize, total);
    }
}
