//! Block-level collectives: a reduction over every thread of a block, in one call.
//!
//! On the GPU, [`reduce`] is the usual two-level tree: each warp folds its lanes' values with
//! `shfl.sync.down` (offsets 16, 8, 4, 2, 1), lane 0 of each warp stores its warp's result in
//! `scratch`, a `bar.sync`, then warp 0 folds the stored values the same way. The result is
//! valid in thread 0 of the block (linear index 0, x fastest); the other threads of warp 0 get
//! the partial folds of their lanes, and every other thread gets `identity`.
//!
//! `#[kernel]` knows these calls as sync points when they are a `let` of the kernel body (`let
//! total = block::reduce_add(sum, scratch);`, at its top level or in a split `while`/`for` loop
//! of it). On the CPU executor's split path the region before ends there, each thread's value is
//! kept, and one block-level step ([`crate::split_steps::collective`]) folds them in exactly the GPU's
//! tree order, so the CPU gives the GPU's bits and every thread the value the GPU gives it; it
//! also writes and reads `scratch` as the GPU's lanes do (lane 0 of each warp stores, then after
//! the barrier's epoch the lanes of warp 0 below the warp count load), so checked mode sees the
//! same accesses on both paths. Elsewhere (inside an `if`, a closure) the call keeps the kernel
//! on the coroutine path, which runs the GPU's code; threads that do not all reach it are
//! barrier divergence, reported with the call's site.
//!
//! ```ignore
//! let scratch = shared!([f32; 32]);
//! let total = block::reduce(value, f32::NEG_INFINITY, scratch, |a, b| if b > a { b } else { a });
//! if thread::thread_idx().x == 0 { out.set(thread::block_idx().x as usize, total); }
//! ```

use crate::shared::Shared;
use crate::warp::{self, WarpValue, WARP_SIZE};
use crate::{thread, Number};

/// A value [`reduce`] folds: one a warp can shuffle ([`warp::shfl_down_sync`]). Every
/// [`WarpValue`] is one; implement it for a struct by shuffling each field.
pub trait BlockValue: Copy {
    /// Lane `lane_id() + delta`'s value (lanes whose source is past the warp keep their own).
    fn shfl_down(self, mask: u32, delta: u32) -> Self;
}

impl<T: WarpValue> BlockValue for T {
    #[inline(always)]
    #[track_caller]
    fn shfl_down(self, mask: u32, delta: u32) -> Self {
        warp::shfl_down_sync(mask, self, delta)
    }
}

/// Where [`reduce`] keeps one value per warp between its two levels: a [`Shared`] array of at
/// least `⌈threads / 32⌉` elements, or a struct of them.
pub trait BlockScratch<V>: Copy {
    /// Stores warp `warp`'s value.
    fn store(&self, warp: usize, value: V);
    /// The value stored for warp `warp`.
    fn load(&self, warp: usize) -> V;
}

impl<T: bytemuck::Pod> BlockScratch<T> for Shared<'_, T> {
    #[inline(always)]
    #[track_caller]
    fn store(&self, warp: usize, value: T) {
        self.set(warp, value);
    }
    #[inline(always)]
    #[track_caller]
    fn load(&self, warp: usize) -> T {
        self.get(warp)
    }
}

/// `value` folded over this warp's lanes with `combine` in a tree of `shfl_down_sync` (lane `l`
/// takes lane `l + offset` for offsets 16, 8, 4, 2, 1, where that lane exists): the warp's result
/// in lane 0, partial folds in the others. Every lane of the warp must call it.
#[inline(always)]
#[track_caller]
pub fn warp_fold<V: BlockValue>(value: V, combine: &impl Fn(V, V) -> V) -> V {
    let mask = warp::warp_mask();
    let lanes = mask.count_ones();
    let lane = warp::lane_id();
    let mut acc = value;
    let mut offset = WARP_SIZE / 2;
    while offset > 0 {
        let other = acc.shfl_down(mask, offset);
        if lane + offset < lanes {
            acc = combine(acc, other);
        }
        offset /= 2;
    }
    acc
}

/// `value` folded over every thread of the block with `combine` (associative; `identity` is its
/// neutral element), valid in thread 0; see the [module documentation](self) for what the other
/// threads get and how the CPU executor runs it. Every thread of the block must call it, with
/// the same `identity`, `scratch` and `combine`. `scratch` belongs to the call: it holds the
/// warps' values afterwards, and writing it again needs a `sync_threads()` first (warp 0 may
/// still be reading it), as on the GPU.
#[inline(always)]
#[track_caller]
pub fn reduce<V: BlockValue, S: BlockScratch<V>>(
    value: V,
    identity: V,
    scratch: S,
    combine: impl Fn(V, V) -> V,
) -> V {
    let lane = warp::lane_id() as usize;
    let warp_index = warp::warp_id() as usize;
    let warp_total = warp_fold(value, &combine);
    if lane == 0 {
        scratch.store(warp_index, warp_total);
    }
    thread::sync_threads();
    let d = thread::block_dim();
    let warps = (d.x * d.y * d.z).div_ceil(WARP_SIZE) as usize;
    let mut total = identity;
    if warp_index == 0 {
        let partial = if lane < warps {
            scratch.load(lane)
        } else {
            identity
        };
        total = warp_fold(partial, &combine);
    }
    total
}

/// The sum of `value` over the block, valid in thread 0 ([`reduce`] with `0` and `+`).
#[inline(always)]
#[track_caller]
pub fn reduce_add<T: Number>(value: T, scratch: Shared<'_, T>) -> T {
    reduce(value, T::ZERO, scratch, add)
}

#[inline(always)]
fn add<T: Number>(a: T, b: T) -> T {
    a + b
}

/// One thread's arguments of a block collective, as [`__split_reduce`] hands them to the split
/// path's block-level step (`split_steps::collective`, which sits above the language).
#[doc(hidden)]
#[cfg(not(target_arch = "nvptx64"))]
pub struct Parts<V, S, F> {
    pub value: V,
    pub identity: V,
    pub scratch: S,
    pub combine: F,
}

/// What `#[kernel]`'s split path calls instead of [`reduce`]: the call's arguments, for the
/// block-level step.
#[doc(hidden)]
#[cfg(not(target_arch = "nvptx64"))]
#[inline(always)]
pub fn __split_reduce<V: BlockValue, S: BlockScratch<V>, F: Fn(V, V) -> V>(
    value: V,
    identity: V,
    scratch: S,
    combine: F,
) -> Parts<V, S, F> {
    Parts {
        value,
        identity,
        scratch,
        combine,
    }
}

/// What `#[kernel]`'s split path calls instead of [`reduce_add`].
#[doc(hidden)]
#[cfg(not(target_arch = "nvptx64"))]
#[inline(always)]
#[allow(clippy::type_complexity)]
pub fn __split_reduce_add<T: Number>(
    value: T,
    scratch: Shared<'_, T>,
) -> Parts<T, Shared<'_, T>, fn(T, T) -> T> {
    __split_reduce(value, T::ZERO, scratch, add::<T> as fn(T, T) -> T)
}
