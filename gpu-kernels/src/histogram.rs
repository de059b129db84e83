//! Histogram with shared-memory privatisation: each block counts into its own copy of the bins
//! in shared memory (fast atomics on the multiprocessor), then adds its non-zero counts to the
//! global bins with one device-wide atomic each.

use ferrocuda_std::{dynamic_shared, kernel, thread, Out};

/// The bin of `value` among `bins` equal bins over `[lo, hi)`, or `None` outside it (NaN too,
/// and for no bins).
/// The kernel and its references use this one formula, so CPU and GPU bin alike.
#[inline(always)]
pub fn bin_of(value: f32, lo: f32, hi: f32, bins: usize) -> Option<usize> {
    Bins::new(lo, hi, bins).of(value)
}

/// [`bin_of`]'s formula with its quotient computed once: the kernel makes it before its loops,
/// where the division's slow path (a subroutine) finds few registers in use.
#[derive(Clone, Copy, Debug)]
struct Bins {
    lo: f32,
    hi: f32,
    /// `bins / (hi - lo)`.
    scale: f32,
    /// The last bin's index, at most `u32::MAX`; `None` for no bins.
    last: Option<u32>,
}

impl Bins {
    #[inline(always)]
    fn new(lo: f32, hi: f32, bins: usize) -> Bins {
        Bins {
            lo,
            hi,
            scale: bins as f32 / (hi - lo),
            // In u32 (a GPU's fast integers): the float saturates to u32, and clamping it to
            // the last bin is the same as in usize, because a u32 is at most `u32::MAX`.
            last: bins
                .checked_sub(1)
                .map(|last| last.min(u32::MAX as usize) as u32),
        }
    }

    /// The same, with the quotient computed where this is called, before the kernel's loops
    /// and barriers: through an `asm!` with a side effect, which LLVM does not move. Sunk into
    /// the loop's preheader, the division's slow path (a subroutine whose registers come above
    /// those live at its call) cost 2 registers more.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), allow(unused_mut))]
    fn computed_here(mut self) -> Bins {
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: a register move; touches no memory.
        unsafe {
            core::arch::asm!(
                "mov.b32 {0}, {0};",
                inout(reg32) self.scale,
                options(nomem, nostack, preserves_flags)
            )
        };
        self
    }

    #[inline(always)]
    fn of(self, value: f32) -> Option<usize> {
        match self.last {
            Some(last) if value >= self.lo && value < self.hi => {
                let bin = to_u32_saturating((value - self.lo) * self.scale);
                Some(bin.min(last) as usize)
            }
            _ => None,
        }
    }
}

/// `x as u32` (toward zero, saturating, NaN to 0). On the GPU it is one `cvt.rzi.u32.f32`, which
/// does exactly that; LLVM lowers `as u32` to the same instruction plus its own clamps (4 more).
#[inline(always)]
fn to_u32_saturating(x: f32) -> u32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let bits: u32;
        // SAFETY: a register conversion; touches no memory.
        unsafe {
            core::arch::asm!(
                "cvt.rzi.u32.f32 {0}, {1};",
                out(reg32) bits,
                in(reg32) x,
                options(pure, nomem, nostack, preserves_flags)
            )
        };
        bits
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        x as u32
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
    if bins == 0 {
        // Nothing to count into (every thread returns: no barrier is left half-reached).
        return;
    }
    let local = dynamic_shared::<u32>();
    // Checked once here, it also proves every `local` index below (all under `bins`) in bounds,
    // so the hot loop has no bounds check.
    assert!(
        local.len() >= bins,
        "histogram needs shared_mem_bytes = 4 × counts.len()"
    );
    let range = Bins::new(lo, hi, bins).computed_here();
    let t = thread::thread_idx().x as usize;
    let threads = thread::block_dim().x as usize;
    let mut b = t;
    while b < bins {
        local.set(b, 0);
        b += threads;
    }
    thread::sync_threads();
    thread::grid_stride_elements(values).for_each(|&v| {
        if let Some(bin) = range.of(v) {
            local.atomic_add(bin, 1);
        }
    });
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
