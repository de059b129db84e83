//! Where the calling thread is in the launch grid, and block-wide barriers.
//!
//! On the GPU these read the PTX special registers (`%tid`, `%ctaid`, `%ntid`, `%nctaid`); on the
//! CPU executor they read the context the executor sets for each simulated thread. Calling them
//! on the host outside a kernel launch panics with a message saying so.

pub use crate::grid_stride::{block_stride, grid_size_1d, grid_stride, GridStride};
pub use crate::grid_stride_elements::{
    grid_stride_elements, grid_stride_zip, GridStrideElements, GridStrideZip,
};

use crate::backend::{Backend, Machine};
pub use crate::machine::Dim3;

/// This thread's position in its block (CUDA `threadIdx`).
#[inline(always)]
pub fn thread_idx() -> Dim3 {
    Machine::thread_idx()
}

/// This block's position in the grid (CUDA `blockIdx`).
#[inline(always)]
pub fn block_idx() -> Dim3 {
    Machine::block_idx()
}

/// The number of threads in each block (CUDA `blockDim`).
#[inline(always)]
pub fn block_dim() -> Dim3 {
    Machine::block_dim()
}

/// The number of blocks in the grid (CUDA `gridDim`).
#[inline(always)]
pub fn grid_dim() -> Dim3 {
    Machine::grid_dim()
}

/// This thread's global x index: `blockIdx.x * blockDim.x + threadIdx.x` (Numba's `cuda.grid(1)`).
#[inline(always)]
pub fn index_1d() -> usize {
    Machine::index_1d()
}

/// This thread's global `(x, y)` index (Numba's `cuda.grid(2)`): x is the column, y the row.
#[inline(always)]
pub fn index_2d() -> (usize, usize) {
    let (t, b, d) = (thread_idx(), block_idx(), block_dim());
    (
        b.x as usize * d.x as usize + t.x as usize,
        b.y as usize * d.y as usize + t.y as usize,
    )
}

/// Waits until every thread of the block has reached this call (CUDA `__syncthreads()`), and
/// makes their earlier writes to shared and global memory visible to each other.
///
/// Every thread of the block must reach the same `sync_threads()`; calling it in a branch that
/// only some threads take is undefined on the GPU (a hang or a corrupt result). The CPU executor
/// runs the block's threads cooperatively, so barriers work there too, and reports a barrier some
/// threads never reach as barrier divergence, naming where each thread is.
#[inline(always)]
#[track_caller]
pub fn sync_threads() {
    Machine::sync_threads()
}

/// [`sync_threads`] that also returns, to every thread, how many threads of the block passed a
/// true `predicate` (CUDA `__syncthreads_count`).
#[inline(always)]
#[track_caller]
pub fn sync_threads_count(predicate: bool) -> u32 {
    Machine::sync_threads_count(predicate)
}

/// [`sync_threads`] that also returns whether `predicate` holds in every thread of the block
/// (CUDA `__syncthreads_and`).
#[inline(always)]
#[track_caller]
pub fn sync_threads_and(predicate: bool) -> bool {
    let d = block_dim();
    sync_threads_count(predicate) as u64 == d.count()
}

/// [`sync_threads`] that also returns whether `predicate` holds in some thread of the block
/// (CUDA `__syncthreads_or`).
#[inline(always)]
#[track_caller]
pub fn sync_threads_or(predicate: bool) -> bool {
    sync_threads_count(predicate) != 0
}
