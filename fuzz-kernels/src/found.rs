//! Kernels the differential test found disagreeing, reduced, kept whatever corpus is compiled.

use super::*;

/// Found by `make fuzz SEED=2 COUNT=400` (its kernel 10, reduced): LLVM duplicates the
/// `shfl.sync` into both arms of the `if` on `t % 2`, so the even and odd lanes meet at two
/// different instructions; the emulator took every lane's registers from the first lane's
/// instruction (fixed in ptx-emu/src/schedule.rs).
#[kernel]
pub fn found_0001(x: &[u32], n: u32, out: Out<u32>) {
    let t = thread::thread_idx().x;
    let i = thread::index_1d();
    let mut acc = x[i % x.len()];
    let w54: u32;
    if t % 2 == 0 {
        w54 = acc.wrapping_mul(64).wrapping_add(t);
    } else {
        w54 = 2654435769;
    }
    acc ^= w54;
    acc = acc.wrapping_add(warp::shfl_xor_sync(u32::MAX, acc, 1));
    acc = if t % 2 == 0 { acc } else { t.wrapping_sub(acc) };
    if i < out.len() {
        out.set(i, acc.wrapping_add(n));
    }
}

/// Every kernel found, in order.
#[cfg(not(target_arch = "nvptx64"))]
pub const FOUND: &[FuzzKernel] = &[found_0001];
