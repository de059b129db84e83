//! Matrix product `C = A·B` of row-major f32 or f64 matrices: A is `m × k`, B is `k × n`, C is
//! `m × n`. [`matmul_naive`] and [`matmul_tiled`] are generic over f32 and f64: the `f32`
//! instance keeps the kernel's name as its PTX entry (`matmul_tiled`), the `f64` one is
//! `matmul_tiled_f64`. [`matmul_blocked`] is f32 only: its `8 × 8` accumulators per thread take
//! 128 registers in f64 alone, and an f64 instance needs 255 registers and spills (ptxas 12.9:
//! 84 bytes at sm_70, 8 at sm_80 and sm_90).

use ferrocuda_std::{kernel, shared, thread, Number, Out, Shared};

/// Side of the square tiles of [`matmul_tiled`]; launch it with `TILE × TILE` blocks.
pub const TILE: usize = 16;

/// One thread per element of C, reading A and B straight from global memory. Launch with a 2D
/// grid covering `n` columns (x) and `m` rows (y).
#[kernel(instances(f32 as matmul_naive, f64))]
pub fn matmul_naive<T: Number>(a: &[T], b: &[T], c: Out<T>, m: u32, n: u32, k: u32) {
    let (col, row) = thread::index_2d();
    let (m, n, k) = (m as usize, n as usize, k as usize);
    if row < m && col < n {
        let mut acc = T::ZERO;
        for j in 0..k {
            acc += a[row * k + j] * b[j * n + col];
        }
        c.set(row * n + col, acc);
    }
}

/// Tiled through shared memory: each block computes a `TILE × TILE` tile of C, loading matching
/// tiles of A and B once into shared memory per step, so each input element is read from global
/// memory `n / TILE` times instead of `n`. Edge tiles are padded with zeros: any `m`, `n`, `k`.
/// One fused multiply-add per product.
///
/// Launch with blocks of `(TILE, TILE)` (another shape would leave parts of the tiles unwritten:
/// the launch refuses it) and a grid of `(⌈n/TILE⌉, ⌈m/TILE⌉)`.
#[kernel(block(TILE, TILE), instances(f32 as matmul_tiled, f64))]
pub fn matmul_tiled<T: Number>(a: &[T], b: &[T], c: Out<T>, m: u32, n: u32, k: u32) {
    let a_tile = shared!([T; TILE * TILE]);
    let b_tile = shared!([T; TILE * TILE]);
    let (m, n, k) = (m as usize, n as usize, k as usize);
    // Checked once here, so that the loads below, each within `m`, `n` and `k`, can skip the
    // per-element bounds checks.
    assert!(
        a.len() >= m * k && b.len() >= k * n,
        "matmul_tiled: a or b is shorter than m × k or k × n"
    );
    let t = thread::thread_idx();
    // The masks change nothing (the assert bounds them) but let the compiler see that every
    // shared index below is in bounds, and drop those checks too.
    let (tx, ty) = (t.x as usize & (TILE - 1), t.y as usize & (TILE - 1));
    let b_idx = thread::block_idx();
    let row = b_idx.y as usize * TILE + ty;
    let col = b_idx.x as usize * TILE + tx;
    let mut acc = T::ZERO;
    for step in 0..k.div_ceil(TILE) {
        let a_col = step * TILE + tx;
        let b_row = step * TILE + ty;
        let a_value = if row < m && a_col < k {
            // SAFETY: row < m and a_col < k, so the index is below m·k ≤ a.len().
            unsafe { *a.get_unchecked(row * k + a_col) }
        } else {
            T::ZERO
        };
        let b_value = if b_row < k && col < n {
            // SAFETY: b_row < k and col < n, so the index is below k·n ≤ b.len().
            unsafe { *b.get_unchecked(b_row * n + col) }
        } else {
            T::ZERO
        };
        a_tile.set(ty * TILE + tx, a_value);
        b_tile.set(ty * TILE + tx, b_value);
        thread::sync_threads();
        for j in 0..TILE {
            acc = a_tile
                .get(ty * TILE + j)
                .mul_add(b_tile.get(j * TILE + tx), acc);
        }
        thread::sync_threads();
    }
    if row < m && col < n {
        c.set(row * n + col, acc);
    }
}

/// Rows of C each block of [`matmul_blocked`] computes.
pub const BLOCKED_M: usize = 128;
/// Columns of C each block of [`matmul_blocked`] computes.
pub const BLOCKED_N: usize = 128;
/// Depth of the A and B tiles [`matmul_blocked`] stages in shared memory per step.
pub const BLOCKED_K: usize = 8;
/// Rows (and columns) of C each thread of [`matmul_blocked`] accumulates in registers.
pub const BLOCKED_PER_THREAD: usize = 8;
/// Threads per block of [`matmul_blocked`]: a 16 × 16 grid of threads, each owning 8 × 8 of C.
pub const BLOCKED_THREADS: usize =
    (BLOCKED_M / BLOCKED_PER_THREAD) * (BLOCKED_N / BLOCKED_PER_THREAD);

/// Four consecutive floats, 16-byte aligned: one 128-bit shared-memory access (`ld.v4.f32`)
/// instead of four. The tiles of [`matmul_blocked`] are arrays of these.
#[derive(Clone, Copy, Default, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C, align(16))]
pub struct F32x4(pub [f32; 4]);

/// Quads per k-row of the transposed A tile: 32 hold the tile's 128 rows, one more staggers the
/// k-rows across banks so that the transposing stores do not conflict (see [`matmul_blocked`]).
const A_PITCH: usize = BLOCKED_M / 4 + 1;
/// Quads of one A tile (`BLOCKED_K` k-rows of `A_PITCH` quads).
const A_TILE: usize = BLOCKED_K * A_PITCH;
/// Quads of one B tile (`BLOCKED_K` rows of 128 floats).
const B_TILE: usize = BLOCKED_K * BLOCKED_N / 4;
/// Quads of C's columns (or rows) a thread's two 4-wide halves are apart: half a block tile.
const HALF: usize = BLOCKED_N / 8;

/// The fast product: each block computes a `128 × 128` tile of C, each of its 256 threads an
/// `8 × 8` sub-tile held in 64 registers, from `128 × 8` and `8 × 128` tiles of A and B staged
/// in shared memory. Edge tiles are padded with zeros: any `m`, `n`, `k`.
///
/// Why these shapes: per step of `k` a thread reads 8 values of A and 8 of B from shared memory
/// (four 128-bit loads) for 64 fused multiply-adds, where [`matmul_tiled`] needs 2 loads per
/// multiply-add, so shared-memory bandwidth stops being the limit. 64 accumulators, 16 operands
/// and the addresses take about 128 registers (ptxas 12.9: 128 at sm_90, 136 at sm_70 and
/// sm_80, no spills), which leaves room for two blocks (16 warps) per multiprocessor at sm_90:
/// while one block waits for its next tiles, the other computes. A depth of 8 keeps the tiles
/// small (4.1 + 4 KiB), so they are double-buffered (16.25 KiB): each step stores the next tiles
/// into the buffer not being read, and one barrier per step suffices.
///
/// Layout, chosen for conflict-free shared memory:
/// - A's tile is stored transposed (`[k][m]`) so that a thread's 4 consecutive rows are one
///   128-bit load; each k-row has one quad of padding (`A_PITCH`), so the 8 threads of a
///   quarter-warp storing column quads of 8 different k-rows hit 8 different bank groups.
/// - Thread `(tx, ty)` (16 × 16) owns rows `4ty..4ty+4` and `64+4ty..64+4ty+4` and likewise for
///   columns: a warp's B loads are 16 consecutive quads (two wavefronts, the minimum) and its A
///   loads two quads (broadcast).
/// - Global reads: a warp reads 8 consecutive floats from each of 4 rows of A (full 32-byte
///   sectors) and 128 consecutive floats of one row of B.
///
/// Launch with `BLOCKED_THREADS` (256) threads in x and a grid of `(⌈n/128⌉, ⌈m/128⌉)`.
#[kernel]
pub fn matmul_blocked(a: &[f32], b: &[f32], c: Out<f32>, m: u32, n: u32, k: u32) {
    let a_tiles = shared!([F32x4; 2 * A_TILE]);
    let b_tiles = shared!([F32x4; 2 * B_TILE]);
    let d = thread::block_dim();
    assert!(
        d.x as usize == BLOCKED_THREADS && d.y == 1 && d.z == 1,
        "matmul_blocked needs blocks of BLOCKED_THREADS (256) threads in x"
    );
    let (m, n, k) = (m as usize, n as usize, k as usize);
    // Checked once here, so that the loads and stores below, each within `m`, `n` and `k`, can
    // skip the per-element bounds checks.
    assert!(
        a.len() >= m * k && b.len() >= k * n && c.len() >= m * n,
        "matmul_blocked: a, b or c is shorter than m × k, k × n or m × n"
    );
    // The mask changes nothing (the assert bounds the index) but lets the compiler see that
    // every shared index below is in bounds, and drop those checks too.
    let t = thread::thread_idx().x as usize & (BLOCKED_THREADS - 1);
    let block = thread::block_idx();
    let row0 = block.y as usize * BLOCKED_M;
    let col0 = block.x as usize * BLOCKED_N;

    // What this thread loads of each tile: rows `4·a_quad..+4` of column `a_k` of A (one quad
    // of the transposed tile), and columns `4·b_quad..+4` of row `b_k` of B (one quad).
    let (a_k, a_quad) = (t % BLOCKED_K, t / BLOCKED_K);
    let (b_k, b_quad) = (t / (BLOCKED_N / 4), t % (BLOCKED_N / 4));
    // Where they start, and how many of their 4 rows (columns) are inside A (B): few values to
    // keep across the loop, where registers are scarce.
    let a_start = (row0 + 4 * a_quad) * k + a_k;
    let a_rows = m.saturating_sub(row0 + 4 * a_quad).min(4) as u32;
    let b_start = b_k * n + col0 + 4 * b_quad;
    let b_cols = n.saturating_sub(col0 + 4 * b_quad).min(4) as u32;
    // `move`: they copy what they use, so that the CPU executor's split path can carry them
    // across the barriers (a closure borrowing this region's locals could not be).
    let load = move |step: u32| -> (F32x4, F32x4) {
        let k0 = step as usize * BLOCKED_K;
        let mut from_a = [0.0f32; 4];
        let mut from_b = [0.0f32; 4];
        for j in 0..4 {
            if (j as u32) < a_rows && k0 + a_k < k {
                // SAFETY: the element's row is below m and its column below k, so the index
                // is below m·k ≤ a.len().
                from_a[j] = unsafe { *a.get_unchecked(a_start + j * k + k0) };
            }
            if (j as u32) < b_cols && k0 + b_k < k {
                // SAFETY: the element's row is below k and its column below n, so the index
                // is below k·n ≤ b.len().
                from_b[j] = unsafe { *b.get_unchecked(b_start + k0 * n + j) };
            }
        }
        (F32x4(from_a), F32x4(from_b))
    };
    let store = move |buffer: usize, (from_a, from_b): (F32x4, F32x4)| {
        a_tiles.set(buffer * A_TILE + a_k * A_PITCH + a_quad, from_a);
        b_tiles.set(buffer * B_TILE + b_k * (BLOCKED_N / 4) + b_quad, from_b);
    };

    let (tx, ty) = (t % 16, t / 16);
    let mut acc = Accumulators([[0.0f32; BLOCKED_PER_THREAD]; BLOCKED_PER_THREAD]);
    // u32 (k is one): 64-bit counters cost registers, scarce here.
    let steps = (k as u32).div_ceil(BLOCKED_K as u32);
    store(0, load(0));
    thread::sync_threads();
    for step in 0..steps {
        let buffer = (step % 2) as usize;
        if step + 1 < steps {
            store(1 - buffer, load(step + 1));
        }
        acc.add_step(a_tiles, b_tiles, buffer, tx, ty);
        // Ends this step's reads of `buffer` before the next step overwrites it, and publishes
        // the next tiles.
        thread::sync_threads();
    }
    // SAFETY: c.len() >= m·n, asserted above.
    unsafe { acc.write(&c, (m, n), (row0 + 4 * ty, col0 + 4 * tx)) };
}

/// The `8 × 8` elements of C a thread of [`matmul_blocked`] accumulates. Its steps are methods,
/// not code of the kernel's body, so that they can be unrolled (`unrolled!`, which `#[kernel]`
/// cannot look into) while the body stays one the CPU executor splits at its barriers.
#[derive(Clone, Copy)]
struct Accumulators([[f32; BLOCKED_PER_THREAD]; BLOCKED_PER_THREAD]);

impl Accumulators {
    /// Adds the products of the `BLOCKED_K` k-rows of the tiles in `buffer`: per k-row, this
    /// thread's 8 values of A (two quads) times its 8 of B (two quads).
    #[inline(always)]
    fn add_step(
        &mut self,
        a_tiles: Shared<F32x4>,
        b_tiles: Shared<F32x4>,
        buffer: usize,
        tx: usize,
        ty: usize,
    ) {
        // Unrolled, as nvcc does, so that the 8 steps' loads and multiply-adds interleave.
        const _: () = assert!(
            BLOCKED_K == 8,
            "the unrolled list below has BLOCKED_K steps"
        );
        unrolled!(kk in [0, 1, 2, 3, 4, 5, 6, 7] {
            let a_at = buffer * A_TILE + kk * A_PITCH + ty;
            let b_at = buffer * B_TILE + kk * (BLOCKED_N / 4) + tx;
            let a_values = [a_tiles.get(a_at).0, a_tiles.get(a_at + HALF).0];
            let b_values = [b_tiles.get(b_at).0, b_tiles.get(b_at + HALF).0];
            for i in 0..BLOCKED_PER_THREAD {
                for j in 0..BLOCKED_PER_THREAD {
                    self.0[i][j] =
                        crate::fma(a_values[i / 4][i % 4], b_values[j / 4][j % 4], self.0[i][j]);
                }
            }
        });
    }

    /// Writes the accumulators into C (`m × n`): element (i, j) is C's element (top + r(i),
    /// left + r(j)), r(i) = 64·(i/4) + i%4; those outside C are dropped.
    ///
    /// # Safety
    /// `c.len() >= m·n`.
    #[inline(always)]
    unsafe fn write(&self, c: &Out<f32>, (m, n): (usize, usize), (top, left): (usize, usize)) {
        let (rows, cols) = (m.saturating_sub(top), n.saturating_sub(left));
        // Unrolled (LLVM keeps the outer loop of two), so that the accumulators stay in
        // registers.
        unrolled!(i in [0, 1, 2, 3, 4, 5, 6, 7] {
            let r = (i / 4) * (BLOCKED_M / 2) + i % 4;
            for (j, &value) in self.0[i].iter().enumerate() {
                let q = (j / 4) * (BLOCKED_N / 2) + j % 4;
                if r < rows && q < cols {
                    // SAFETY: the row (top + r) is below m and the column (left + q) below n,
                    // so the index is below m·n ≤ c.len() (the caller).
                    unsafe { c.set_unchecked((top + r) * n + left + q, value) };
                }
            }
        });
    }
}
