//! Histogram with shared-memory privatisation: each block counts into its own copy of the bins
//! in shared memory (fast atomics on the multiprocessor), then adds its non-zero counts to the
//! global bins with one device-wide atomic each.

use ferrocuda_std::{dynamic_shared, kernel, thread, Out};

/// The bin of `value` among `bins` equal bins over `[lo, hi)`, or `None` outside it (NaN too).
/// The kernel and its references use this one formula, so CPU and GPU bin alike.
#[inline(always)]
pub fn bin_of(value: f32, lo: f32, hi: f32, bins: usize) -> Option<usize> {
    if value >= lo && value < hi {
        let bin = ((value - lo) * (bins as f32 / (hi - lo))) as usize;
        Some(if bin < bins { bin } else { bins - 1 })
    } else {
        None
    }
}

/// Adds to `counts[bin]` the number of `values` in each of `counts.len()` equal bins over
/// `[lo, hi)`; values outside the range are not counted. Grid-stride.
///
/// Launch with `shared_mem_bytes = 4 * counts.len()` (the block's private bins); the CPU and GPU
/// limits on shared memory (48 KiB) allow up to 12,288 bins.
#[kernel]
pub fn histogram(values: &[f32], counts: Out<u32>, lo: f32, hi: f32) {
    let bins = counts.len();
    let local = dynamic_shared::<u32>();
    let t = thread::thread_idx().x as usize;
    let threads = thread::block_dim().x as usize;
    let mut b = t;
    while b < bins {
        local.set(b, 0);
        b += threads;
    }
    thread::sync_threads();
    for i in thread::grid_stride(values.len()) {
        if let Some(bin) = bin_of(values[i], lo, hi, bins) {
            local.atomic_add(bin, 1);
        }
    }
    thread::sync_threads();
    let mut b = t;
    while b < bins {
        let count = local.get(b);
        if count != 0 {
            counts.atomic_add(b, count);
        }
        b += threads;
    }
}
