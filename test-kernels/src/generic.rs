//! Generic kernels (`#[kernel(instances(...))]`), for tests/generic_kernels.rs: one and two type
//! parameters, a `shared!` array of the type parameter, and a non-generic kernel with the body of
//! one instance, whose PTX the instance's must equal.

use ferrocuda_std::{kernel, shared, thread, Number, Out};

/// Threads per block of [`block_sum`].
pub const SUM_BLOCK: u32 = 256;

/// `out[i] = x[i]·k + 1` (one fused multiply-add for floats), one thread per element.
#[kernel(same_len(x, out), instances(f32, f64, i32, u64))]
pub fn scale<T: Number>(x: &[T], k: T, out: Out<T>) {
    let i = thread::index_1d();
    if i < out.len() {
        out.set(i, x[i].mul_add(k, T::ONE));
    }
}

/// [`scale`]'s body written for `f32`: its PTX is `scale_f32`'s but for the names.
#[kernel(same_len(x, out))]
pub fn scale_plain(x: &[f32], k: f32, out: Out<f32>) {
    let i = thread::index_1d();
    if i < out.len() {
        out.set(i, x[i].mul_add(k, f32::ONE));
    }
}

/// `out[i] = x[i]` converted from `S` to `D` through f64 (`as` conversions): two type
/// parameters, with entries named after both (`convert_f32_f64`, ...) and one named by hand.
#[kernel(same_len(x, out), instances((f32, f64), (f64, f32), (i32, f32) as int_to_float))]
pub fn convert<S: Number, D: Number>(x: &[S], out: Out<D>) {
    let i = thread::index_1d();
    if i < out.len() {
        out.set(i, D::from_f64(x[i].to_f64()));
    }
}

/// `out[block] = Σ x[i]` over the block's `SUM_BLOCK` elements, through a shared array of `T`
/// (whose `.shared` size differs per instance) and a tree of barriers.
#[kernel(block(SUM_BLOCK), instances(f32, f64, u32))]
pub fn block_sum<T>(x: &[T], out: Out<T>)
where
    T: Number,
{
    let tile = shared!([T; SUM_BLOCK as usize]);
    // The mask changes nothing (the block fact bounds the index) but shows the compiler that
    // the tile's indices are in bounds.
    let t = thread::thread_idx().x as usize & (SUM_BLOCK as usize - 1);
    let i = thread::index_1d();
    tile.set(t, if i < x.len() { x[i] } else { T::zero() });
    thread::sync_threads();
    let mut half = SUM_BLOCK as usize / 2;
    while half > 0 {
        if t < half {
            tile.set(t, tile.get(t) + tile.get(t + half));
        }
        thread::sync_threads();
        half /= 2;
    }
    if t == 0 {
        out.set(thread::block_idx().x as usize, tile.get(0));
    }
}

/// [`block_sum`]'s body written for `f32`: its PTX is `block_sum_f32`'s but for the names (the
/// shared array's symbol included).
#[kernel(block(SUM_BLOCK))]
pub fn block_sum_plain(x: &[f32], out: Out<f32>) {
    let tile = shared!([f32; SUM_BLOCK as usize]);
    // The mask changes nothing (the block fact bounds the index) but shows the compiler that
    // the tile's indices are in bounds.
    let t = thread::thread_idx().x as usize & (SUM_BLOCK as usize - 1);
    let i = thread::index_1d();
    tile.set(t, if i < x.len() { x[i] } else { f32::zero() });
    thread::sync_threads();
    let mut half = SUM_BLOCK as usize / 2;
    while half > 0 {
        if t < half {
            tile.set(t, tile.get(t) + tile.get(t + half));
        }
        thread::sync_threads();
        half /= 2;
    }
    if t == 0 {
        out.set(thread::block_idx().x as usize, tile.get(0));
    }
}
