//! Grid-stride and block-stride loops ([`grid_stride`], [`block_stride`]): each thread's share
//! of the indices `0..n`, re-exported by [`thread`](crate::thread), where kernels name them.
//!
//! The loop's type keeps a `cfg` of its own: it is not a machine primitive but a different loop on
//! each machine (on the GPU a strided, coalesced walk; on the CPU executor a contiguous run per
//! thread, checked against the launch's deadline once per chunk), see [`GridStride`].

use crate::backend::{Backend, Machine};

/// The number of threads along x in the whole grid (Numba's `cuda.gridsize(1)`): the stride of a
/// grid-stride loop, which lets any grid cover any length.
#[inline(always)]
pub fn grid_size_1d() -> usize {
    Machine::grid_dim().x as usize * Machine::block_dim().x as usize
}

/// This thread's share of the indices `0..n` when the whole 1D grid works through them: a
/// grid-stride loop, `for i in thread::grid_stride(n) { ... }`. Every index of `0..n` goes to
/// exactly one thread of the grid, for any launch shape (on the GPU, every index below
/// `isize::MAX`, the most elements a slice can have).
///
/// Which thread gets which index is the device's choice. On the GPU, thread `t` of `G` takes
/// `t, t + G, t + 2G, ...`, so that a warp's loads are consecutive (coalesced). On the CPU
/// executor, which runs a block's threads one after another, thread `t` takes the `t`-th
/// contiguous run of about `n / G` indices, which keeps each thread's loads in cache. So results
/// that depend on the order of floating-point additions may differ in the last bits between the
/// two, as between two GPU launch shapes.
///
/// ```ignore
/// #[kernel]
/// pub fn scale(factor: f32, x: Out<f32>) {
///     for i in thread::grid_stride(x.len()) {
///         x.set(i, factor * x.get(i));
///     }
/// }
/// ```
#[inline(always)]
pub fn grid_stride(n: usize) -> GridStride {
    strided(Machine::index_1d(), grid_size_1d(), n)
}

/// This thread's share of the indices `0..n` when the threads of its block (along x) work
/// through them, as [`grid_stride`] shares them among the grid's: every index of `0..n` goes to
/// exactly one thread of the block, and every block goes through all of them. For kernels whose
/// blocks each own a part of the work and look at every input for it (a block that owns some
/// keys of a group-by reads every row). On the GPU thread `t` of `B` takes `t, t + B, ...`
/// (coalesced); on the CPU executor the `t`-th contiguous run.
#[inline(always)]
pub fn block_stride(n: usize) -> GridStride {
    strided(
        Machine::thread_idx().x as usize,
        Machine::block_dim().x as usize,
        n,
    )
}

/// Thread `index` of `threads`' share of `0..n`: see [`grid_stride`].
#[inline(always)]
fn strided(index: usize, threads: usize, n: usize) -> GridStride {
    // Not a machine primitive but two loops: the GPU strides by the grid's threads, the CPU
    // executor gives each thread a contiguous chunk, checked against the launch's deadline.
    #[cfg(target_arch = "nvptx64")]
    {
        // The end is at most `isize::MAX` and the step below 2^42 (2^31 blocks of 1024
        // threads), so `next + step` (with `next < end`) cannot overflow and the loop needs no
        // saturating step: `i += stride`, as in CUDA C. The indices it leaves out are no
        // slice's: a slice has at most `isize::MAX` elements. (A constant bound rather than
        // `usize::MAX - step` keeps the bound in uniform registers.)
        GridStride {
            next: index,
            end: n.min(isize::MAX as usize),
            step: threads,
        }
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        let (start, end) = crate::cpu::elementwise::grid_stride_bounds(index, threads, n);
        GridStride {
            next: start,
            end,
            chunk_end: start,
        }
    }
}

/// The indices of a grid-stride loop, from [`grid_stride`].
#[derive(Clone, Debug)]
pub struct GridStride {
    next: usize,
    end: usize,
    #[cfg(target_arch = "nvptx64")]
    step: usize,
    /// CPU: where the next check of the launch's deadline is (one per chunk of indices).
    #[cfg(not(target_arch = "nvptx64"))]
    chunk_end: usize,
}

impl Iterator for GridStride {
    type Item = usize;

    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    fn next(&mut self) -> Option<usize> {
        if self.next < self.end {
            let index = self.next;
            // No overflow: `grid_stride` bounds `end` so that `next + step` fits (on the CPU the
            // step is 1 and `next < end`).
            self.next += self.step;
            Some(index)
        } else {
            None
        }
    }

    /// The hot path is one comparison, as without deadlines; the deadline is checked at the
    /// start of each chunk.
    #[cfg(not(target_arch = "nvptx64"))]
    #[inline(always)]
    fn next(&mut self) -> Option<usize> {
        if self.next < self.chunk_end {
            let index = self.next;
            self.next += 1;
            Some(index)
        } else {
            self.next_chunk()
        }
    }

    /// CPU: each chunk's indices in a function of their own, the deadline check between
    /// chunks. With the check's call in the loop (through `next`, or even only around an inner
    /// loop), LLVM kept a float accumulator in memory, since the call clobbers every vector
    /// register: a store and a reload per element on its dependency chain (`dot_partial` ran
    /// 4× slower than a plain loop). `f` is called from the chunk's loop only (a second call for
    /// each chunk's first index made LLVM keep a large `f`, Philox's ten rounds in
    /// `monte_carlo_pi`, out of line: a call per index, no vectorisation).
    #[cfg(not(target_arch = "nvptx64"))]
    #[inline(always)]
    fn fold<B, F: FnMut(B, usize) -> B>(mut self, init: B, mut f: F) -> B {
        let mut acc = init;
        loop {
            acc = fold_chunk(self.next..self.chunk_end, acc, &mut f);
            self.next = self.next.max(self.chunk_end);
            if !self.start_chunk() {
                return acc;
            }
        }
    }
}

#[cfg(target_arch = "nvptx64")]
impl GridStride {
    /// The next index, how many indices from it on are below the end (every `step`-th one is
    /// this loop's), and the step.
    #[inline(always)]
    pub(crate) fn remaining(&self) -> (usize, usize, usize) {
        (self.next, self.end.saturating_sub(self.next), self.step)
    }
}

/// `f` over `indices`, with no call in the loop: see [`GridStride`]'s `fold`.
#[cfg(not(target_arch = "nvptx64"))]
#[inline(never)]
fn fold_chunk<B, F: FnMut(B, usize) -> B>(
    indices: core::ops::Range<usize>,
    init: B,
    f: &mut F,
) -> B {
    indices.fold(init, f)
}

#[cfg(not(target_arch = "nvptx64"))]
impl GridStride {
    #[inline(never)]
    fn next_chunk(&mut self) -> Option<usize> {
        if !self.start_chunk() {
            return None;
        }
        let index = self.next;
        self.next += 1;
        Some(index)
    }

    /// At a chunk's start (`next == chunk_end`): false at the end, else the deadline check
    /// point and the next chunk's end.
    #[inline(never)]
    fn start_chunk(&mut self) -> bool {
        if self.next >= self.end {
            return false;
        }
        crate::cpu::poll_deadline();
        self.chunk_end = self
            .end
            .min(self.next.saturating_add(crate::cpu::GRID_STRIDE_CHUNK));
        true
    }
}
