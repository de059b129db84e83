//! The CPU executor's tensor-core product: [`release`] completes a warp's `mma` rendezvous
//! (`warp_mma.rs`; the scheduler calls it when all 32 lanes have arrived): it gathers the
//! matrices, multiplies them in the documented order and writes each lane's result back, before
//! any lane runs on. Below the scheduler; also the split path's and `mma_tiles`' product.

use super::waits::WARP;
use crate::tensor_core::{a_position, b_position, Kind};
use half::slice::HalfFloatSliceExt;

/// One lane's operands of an `mma`, as registers.
#[derive(Clone, Copy, Default)]
pub(crate) struct Operands {
    pub(crate) a: [u32; 4],
    pub(crate) b: [u32; 2],
    pub(crate) c: [u32; 4],
}

/// One lane's operands and, after the release, its result: what a lane waiting in
/// [`super::warp_mma::mma`] points to.
pub(crate) struct Lane {
    pub(crate) operands: Operands,
    pub(crate) d: [u32; 4],
}

/// An A or B element's value (exact in f32; integers as integers).
pub(crate) fn element(kind: Kind, bits: u32) -> f32 {
    match kind {
        Kind::F16 => half::f16::from_bits(bits as u16).to_f32(),
        Kind::Bf16 => half::bf16::from_bits(bits as u16).to_f32(),
        Kind::Tf32 => f32::from_bits(bits & !0x1fff),
        Kind::S8 => bits as u8 as i8 as f32,
        Kind::U8 => bits as u8 as f32,
    }
}

/// Completes the warp's `mma`: `lanes[l]` is lane `l`'s [`Lane`] pointer.
///
/// # Safety
/// Every pointer is a live `Lane` of a lane waiting in [`super::warp_mma::mma`], not otherwise accessed until it
/// is released (the scheduler calls this before it readies any of them).
pub(crate) unsafe fn release(kind: Kind, lanes: &[u64; WARP]) {
    // SAFETY: the caller's contract: live `Lane`s, read only here.
    let operands = lanes.map(|pointer| unsafe { (*(pointer as *const Lane)).operands });
    // The warp's product is the executor's work: off the simulated thread's stack.
    let d = super::stack_guard::on_step_stack(|| multiply(kind, &operands, None));
    for (&pointer, d) in lanes.iter().zip(d) {
        // SAFETY: as above; this is the only reference to it now.
        unsafe { (*(pointer as *mut Lane)).d = d };
    }
}

/// The warp's `mma`: each lane's part of D from every lane's operands. With `tiles` (the
/// warp's recent tiles, see [`Tiles`]), an f16 or bf16 A or B tile whose registers equal a
/// recent one's is taken from there instead of gathered and converted again.
pub(crate) fn multiply(
    kind: Kind,
    lanes: &[Operands; WARP],
    tiles: Option<&mut Tiles>,
) -> [[u32; 4]; WARP] {
    #[cfg(all(
        target_arch = "x86_64",
        not(all(target_feature = "avx2", target_feature = "fma"))
    ))]
    if super::features::has_avx2_and_fma() {
        // SAFETY: the CPU has AVX2 and FMA, all `multiply_wide` enables.
        return unsafe { multiply_wide(kind, lanes, tiles) };
    }
    multiply_in_order(kind, lanes, tiles)
}

/// One warp's recently converted f16 and bf16 A and B tiles, by the registers they came from.
/// A kernel that keeps a tile of C per warp in several accumulators multiplies each A fragment
/// by several B fragments and each B by several A (the library's `matmul_tc`: each A four
/// times, each B twice per k-step), each a separate `mma`; the split path does each call site's
/// `mma` for every warp in turn, so a warp's next `mma` often has registers equal to a recent
/// one's, and the tile is then already gathered and converted (about a third of a product's
/// instructions, callgrind, issue 32). Looked up by the registers themselves (and the kind),
/// never by where they came from, so a hit is the same tile by construction and the bits of D
/// are those of a fresh gather.
#[derive(Default)]
pub(crate) struct Tiles {
    a: Recent<[[u32; 4]; WARP], [[f32; 16]; 16], 2>,
    b: Recent<[[u32; 2]; WARP], [[f32; 8]; 16], 4>,
}

/// The last `N` values made, by key, the oldest replaced first.
struct Recent<K, V, const N: usize> {
    entries: [Option<(Kind, K, V)>; N],
    next: usize,
}

impl<K, V, const N: usize> Default for Recent<K, V, N> {
    fn default() -> Self {
        Recent {
            entries: core::array::from_fn(|_| None),
            next: 0,
        }
    }
}

impl<K: PartialEq, V, const N: usize> Recent<K, V, N> {
    /// The value for `(kind, key)`: a recent one, or `make()`'s, kept in place of the oldest.
    #[inline(always)]
    fn get(&mut self, kind: Kind, key: K, make: impl FnOnce() -> V) -> &V {
        let found = self
            .entries
            .iter()
            .position(|e| matches!(e, Some((k, held, _)) if *k == kind && *held == key));
        let i = match found {
            Some(i) => i,
            None => {
                let i = self.next;
                self.next = (i + 1) % N;
                self.entries[i] = Some((kind, key, make()));
                i
            }
        };
        match &self.entries[i] {
            Some((_, _, value)) => value,
            None => unreachable!("entry {i} was just found or filled"),
        }
    }
}

/// [`multiply_in_order`] compiled for AVX2 and FMA: each step of the k-sum is then one vector
/// FMA over a row of D instead of eight calls of libm's `fmaf` (for crates built without
/// ferrocuda's `x86-64-v3`).
///
/// # Safety
/// The CPU has AVX2 and FMA.
#[cfg(all(
    target_arch = "x86_64",
    not(all(target_feature = "avx2", target_feature = "fma"))
))]
#[target_feature(enable = "avx2,fma")]
unsafe fn multiply_wide(
    kind: Kind,
    lanes: &[Operands; WARP],
    tiles: Option<&mut Tiles>,
) -> [[u32; 4]; WARP] {
    multiply_in_order(kind, lanes, tiles)
}

/// The warp's `mma` as a whole 16×8 tile, k outermost: element (r, c) starts at C's and adds
/// `a[r][k]·b[k][c]` for k = 0, 1, … in order, one f32 FMA each. That is the documented order
/// element by element (the bits of a dot product per element), while each step is a row of
/// eight independent FMAs (one vector instruction) instead of one long chain of dependent ones.
///
/// The gather is by kind, each arm with its layout known when compiled (for f16 and bf16,
/// [`gather_a_halves`] and [`gather_b_halves`]). Looked up per element at run time (the kind, each position), the gather took about 70% of
/// a matrix product's time on the CPU executor (perf, issue 32).
#[inline(always)]
fn multiply_in_order(
    kind: Kind,
    lanes: &[Operands; WARP],
    tiles: Option<&mut Tiles>,
) -> [[u32; 4]; WARP] {
    let c = gather_c(lanes);
    let d = match kind {
        Kind::F16 => halves_product(kind, lanes, c, tiles, |bits, out| {
            let halves: &[half::f16] = bytemuck::cast_slice(bits);
            halves.convert_to_f32_slice(out);
        }),
        Kind::Bf16 => halves_product(kind, lanes, c, tiles, |bits, out| {
            for (out, &bits) in out.iter_mut().zip(bits) {
                *out = half::bf16::from_bits(bits).to_f32();
            }
        }),
        Kind::Tf32 => {
            let (a, b) = gather::<8>(Kind::Tf32, lanes);
            float_product(&a, &b, c)
        }
        Kind::S8 => {
            let (a, b) = gather::<32>(Kind::S8, lanes);
            integer_product(&a, &b, c)
        }
        Kind::U8 => {
            let (a, b) = gather::<32>(Kind::U8, lanes);
            integer_product(&a, &b, c)
        }
    };
    core::array::from_fn(|lane| {
        let (g, t) = (lane / 4, lane % 4);
        [
            d[g][2 * t],
            d[g][2 * t + 1],
            d[g + 8][2 * t],
            d[g + 8][2 * t + 1],
        ]
    })
}

/// C as a 16×8 tile of bits: lane (g, t) = (lane / 4, lane % 4) holds (g, 2t), (g, 2t + 1),
/// (g + 8, 2t), (g + 8, 2t + 1) (`c_position`).
#[inline(always)]
fn gather_c(lanes: &[Operands; WARP]) -> [[u32; 8]; 16] {
    let mut c = [[0u32; 8]; 16];
    for (lane, theirs) in lanes.iter().enumerate() {
        let (g, t) = (lane / 4, lane % 4);
        c[g][2 * t] = theirs.c[0];
        c[g][2 * t + 1] = theirs.c[1];
        c[g + 8][2 * t] = theirs.c[2];
        c[g + 8][2 * t + 1] = theirs.c[3];
    }
    c
}

/// The f16 or bf16 product `a·b + c`, A and B gathered by [`gather_a_halves`] and
/// [`gather_b_halves`] with `convert`, or taken from `tiles` where recent.
#[inline(always)]
fn halves_product(
    kind: Kind,
    lanes: &[Operands; WARP],
    c: [[u32; 8]; 16],
    tiles: Option<&mut Tiles>,
    convert: impl Fn(&[u16], &mut [f32]),
) -> [[u32; 8]; 16] {
    match tiles {
        Some(tiles) => {
            let a = tiles.a.get(kind, lanes.map(|l| l.a), || {
                gather_a_halves(lanes, &convert)
            });
            let b = tiles.b.get(kind, lanes.map(|l| l.b), || {
                gather_b_halves(lanes, &convert)
            });
            float_product(a, b, c)
        }
        None => float_product(
            &gather_a_halves(lanes, &convert),
            &gather_b_halves(lanes, &convert),
            c,
        ),
    }
}

/// A (16×16, row-major) of an f16 or bf16 `mma` as f32, `convert` turning raw halves into
/// values: lane (g, t)'s register j holds row g + 8·(j % 2), columns 2t + 8·(j / 2) and the
/// next, low half first (`a_position`). Each register is one store of two raw halves, and the
/// tile is converted at once (F16C's eight at a time for f16) rather than element by element.
#[inline(always)]
fn gather_a_halves(
    lanes: &[Operands; WARP],
    convert: impl Fn(&[u16], &mut [f32]),
) -> [[f32; 16]; 16] {
    let mut bits = [[0u16; 16]; 16];
    for (lane, theirs) in lanes.iter().enumerate() {
        let (g, t) = (lane / 4, lane % 4);
        for (j, &word) in theirs.a.iter().enumerate() {
            let (row, col) = (g + 8 * (j % 2), 2 * t + 8 * (j / 2));
            bits[row][col] = word as u16;
            bits[row][col + 1] = (word >> 16) as u16;
        }
    }
    let mut a = [[0f32; 16]; 16];
    convert(bits.as_flattened(), a.as_flattened_mut());
    a
}

/// B (16×8, row-major) of an f16 or bf16 `mma` as f32, as [`gather_a_halves`]: lane (g, t)'s
/// register j holds column g, k = 2t + 8j and the next (`b_position`).
#[inline(always)]
fn gather_b_halves(
    lanes: &[Operands; WARP],
    convert: impl Fn(&[u16], &mut [f32]),
) -> [[f32; 8]; 16] {
    let mut bits = [[0u16; 8]; 16];
    for (lane, theirs) in lanes.iter().enumerate() {
        let (g, t) = (lane / 4, lane % 4);
        for (j, &word) in theirs.b.iter().enumerate() {
            let k = 2 * t + 8 * j;
            bits[k][g] = word as u16;
            bits[k + 1][g] = (word >> 16) as u16;
        }
    }
    let mut b = [[0f32; 8]; 16];
    convert(bits.as_flattened(), b.as_flattened_mut());
    b
}

/// A (16×K) and B (K×8) of a tf32 or integer `mma` as f32 (exact), by each element's position.
#[inline(always)]
fn gather<const K: usize>(kind: Kind, lanes: &[Operands; WARP]) -> ([[f32; K]; 16], [[f32; 8]; K]) {
    let bits = kind.bits();
    let per = 32 / bits;
    let field = |regs: &[u32], i: usize| {
        let word = regs[i / per];
        if bits == 32 {
            word
        } else {
            (word >> (bits * (i % per))) & ((1 << bits) - 1)
        }
    };
    let mut a = [[0f32; K]; 16];
    let mut b = [[0f32; 8]; K];
    for (lane, theirs) in lanes.iter().enumerate() {
        for i in 0..16 * K / 32 {
            let (r, col) = a_position(kind, lane, i);
            a[r][col] = element(kind, field(&theirs.a, i));
        }
        for i in 0..K * 8 / 32 {
            let (r, col) = b_position(kind, lane, i);
            b[r][col] = element(kind, field(&theirs.b, i));
        }
    }
    (a, b)
}

/// `a·b + c` in f32, k outermost, one FMA per product (see [`multiply_in_order`]): one
/// [`fma_tile`].
#[inline(always)]
fn float_product<const K: usize>(
    a: &[[f32; K]; 16],
    b: &[[f32; 8]; K],
    c: [[u32; 8]; 16],
) -> [[u32; 8]; 16] {
    let mut sum = c.map(|row| row.map(f32::from_bits));
    let c = Matrix {
        rows: 16,
        cols: 8,
        stride: 8,
    };
    fma_tile(
        a.as_flattened(),
        K,
        b.as_flattened(),
        8,
        sum.as_flattened_mut(),
        c,
        K,
    );
    sum.map(|row| row.map(f32::to_bits))
}

/// The shape of a row-major f32 matrix in a slice: `rows × cols`, rows `stride` apart.
#[derive(Clone, Copy)]
pub(crate) struct Matrix {
    pub(crate) rows: usize,
    pub(crate) cols: usize,
    pub(crate) stride: usize,
}

/// `c(r, j) += a(r, k)·b(k, j)` for k = 0, 1, … `depth - 1` in order, one f32 FMA each (the
/// documented order of the k-sum), for the `shape.rows × shape.cols` of C (both multiples of
/// 8), where A's rows are `lda` apart in `a` and B's `ldb` in `b`.
///
/// With AVX2 and FMA, C is done in blocks small enough that their sums stay in the 16 AVX
/// registers with B's row and `a(r, k)` broadcast (4 rows × 16 columns, or 8 × 8 where a
/// matrix is 8 wide): each step of the k-sum is then a load of B, a broadcast per row and one
/// 8-wide FMA per row and 8 columns, which rounds each lane exactly as `f32::mul_add` does. A
/// whole 16 × 8 tile at once needed 18 registers, and LLVM moved the sums through the stack
/// at every step (callgrind: four instructions per FMA). Written with intrinsics because LLVM
/// vectorised the portable loops across rows instead, with a shuffle per element.
///
/// # Panics
/// If a shape is not a multiple of 8, or `a`, `b` or `c` is too short for it.
#[inline(always)]
pub(crate) fn fma_tile(
    a: &[f32],
    lda: usize,
    b: &[f32],
    ldb: usize,
    c: &mut [f32],
    shape: Matrix,
    depth: usize,
) {
    let Matrix { rows, cols, stride } = shape;
    if rows == 0 || cols == 0 {
        return;
    }
    assert!(
        rows.is_multiple_of(8)
            && cols.is_multiple_of(8)
            && a.len() >= (rows - 1) * lda + depth
            && (depth == 0 || b.len() >= (depth - 1) * ldb + cols)
            && c.len() >= (rows - 1) * stride + cols,
        "fma_tile: a shape not a multiple of 8, or A, B or C too short"
    );
    #[cfg(all(
        target_arch = "x86_64",
        target_feature = "avx2",
        target_feature = "fma"
    ))]
    {
        let vectors = cols / 8;
        let (a, b, c) = (a.as_ptr(), b.as_ptr(), c.as_mut_ptr());
        // SAFETY: the crate is compiled for AVX2 and FMA (the `cfg` above); each block reads
        // `a(r, k)` for `r < rows`, `k < depth` (below `(rows - 1)·lda + depth`), rows of B up
        // to column `cols` (below `(depth - 1)·ldb + cols`) and its part of C (below
        // `(rows - 1)·stride + cols`): in bounds by the assertion.
        unsafe {
            for v in (0..vectors - vectors % 2).step_by(2) {
                for r in (0..rows).step_by(4) {
                    let c = c.add(r * stride + 8 * v);
                    fma_block::<4, 2>(a.add(r * lda), lda, b.add(8 * v), ldb, c, stride, depth);
                }
            }
            if vectors % 2 == 1 {
                let v = vectors - 1;
                for r in (0..rows).step_by(8) {
                    let c = c.add(r * stride + 8 * v);
                    fma_block::<8, 1>(a.add(r * lda), lda, b.add(8 * v), ldb, c, stride, depth);
                }
            }
        }
    }
    #[cfg(not(all(
        target_arch = "x86_64",
        target_feature = "avx2",
        target_feature = "fma"
    )))]
    for r in 0..rows {
        for j in 0..cols {
            let sum = &mut c[r * stride + j];
            for k in 0..depth {
                *sum = a[r * lda + k].mul_add(b[k * ldb + j], *sum);
            }
        }
    }
}

/// [`fma_tile`] for the `R × 8V` block of C at `c` (rows `ldc` apart): its sums in `R · V`
/// AVX registers for the whole depth.
///
/// # Safety
/// AVX2 and FMA; `a(r, k)` at `a + r·lda + k` for `r < R`, `k < depth`, B's rows of `8V` at
/// `b + k·ldb`, and the block all in bounds (`c` writable).
#[cfg(all(
    target_arch = "x86_64",
    target_feature = "avx2",
    target_feature = "fma"
))]
#[inline(always)]
unsafe fn fma_block<const R: usize, const V: usize>(
    a: *const f32,
    lda: usize,
    b: *const f32,
    ldb: usize,
    c: *mut f32,
    ldc: usize,
    depth: usize,
) {
    use core::arch::x86_64::{
        __m256, _mm256_fmadd_ps, _mm256_loadu_ps, _mm256_set1_ps, _mm256_storeu_ps,
    };
    // SAFETY: the caller's contract.
    unsafe {
        let mut sum: [[__m256; V]; R] = core::array::from_fn(|r| {
            core::array::from_fn(|v| _mm256_loadu_ps(c.add(r * ldc + 8 * v)))
        });
        for k in 0..depth {
            let y: [__m256; V] = core::array::from_fn(|v| _mm256_loadu_ps(b.add(k * ldb + 8 * v)));
            for (r, sum) in sum.iter_mut().enumerate() {
                let x = _mm256_set1_ps(*a.add(r * lda + k));
                for (s, &y) in sum.iter_mut().zip(&y) {
                    *s = _mm256_fmadd_ps(x, y, *s);
                }
            }
        }
        for (r, sum) in sum.iter().enumerate() {
            for (v, &s) in sum.iter().enumerate() {
                _mm256_storeu_ps(c.add(r * ldc + 8 * v), s);
            }
        }
    }
}

/// `a·b + c` for integers: the products are exact in f32 (|a·b| <= 2^14), the sum in i64,
/// wrapped to 32 bits.
#[inline(always)]
fn integer_product<const K: usize>(
    a: &[[f32; K]; 16],
    b: &[[f32; 8]; K],
    c: [[u32; 8]; 16],
) -> [[u32; 8]; 16] {
    let sum = k_outermost(
        a,
        b,
        c.map(|row| row.map(|v| i64::from(v as i32))),
        |s, x, y| s + (x * y) as i64,
    );
    sum.map(|row| row.map(|v| v as i32 as u32))
}

/// `sum` with `a[r][k]·b[k][c]` added to element (r, c) by `add(sum, a, b)` for k = 0, 1, … in
/// order (the documented order of the k-sum).
#[inline(always)]
fn k_outermost<S: Copy, const K: usize>(
    a: &[[f32; K]; 16],
    b: &[[f32; 8]; K],
    mut sum: [[S; 8]; 16],
    add: impl Fn(S, f32, f32) -> S,
) -> [[S; 8]; 16] {
    for (depth, b_row) in b.iter().enumerate() {
        for (s, a_row) in sum.iter_mut().zip(a) {
            let x = a_row[depth];
            for (s, &y) in s.iter_mut().zip(b_row) {
                *s = add(*s, x, y);
            }
        }
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor_core::c_position;
    use std::vec::Vec;

    /// Random register bits whose fields are finite values of `kind` (xorshift from `seed`).
    fn registers(kind: Kind, seed: &mut u64) -> u32 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        let bits = *seed as u32;
        match kind {
            // Exponents below all ones in each half (no infinity, no NaN).
            Kind::F16 => bits & 0xbbff_bbff,
            Kind::Bf16 => bits & 0xbf7f_bf7f,
            Kind::Tf32 => bits & 0xbf7f_ffff,
            Kind::S8 | Kind::U8 => bits,
        }
    }

    /// The warp's D element by element, from each element's documented position (`gather`,
    /// by `a_position` and `b_position`, for every kind: the f16 and bf16 products take
    /// `gather_a_halves` and `gather_b_halves`) and the documented order (C first, then k = 0, 1, … one FMA each;
    /// integers exactly).
    fn reference(kind: Kind, lanes: &[Operands; WARP]) -> [[u32; 4]; WARP] {
        match kind {
            Kind::F16 | Kind::Bf16 => reference_k::<16>(kind, lanes),
            Kind::Tf32 => reference_k::<8>(kind, lanes),
            Kind::S8 | Kind::U8 => reference_k::<32>(kind, lanes),
        }
    }

    fn reference_k<const K: usize>(kind: Kind, lanes: &[Operands; WARP]) -> [[u32; 4]; WARP] {
        let (a, b) = gather::<K>(kind, lanes);
        core::array::from_fn(|lane| {
            core::array::from_fn(|i| {
                let (r, col) = c_position(lane, i);
                let c = lanes[lane].c[i];
                if matches!(kind, Kind::S8 | Kind::U8) {
                    let products = (0..K).map(|x| (a[r][x] * b[x][col]) as i64);
                    (products.sum::<i64>() + i64::from(c as i32)) as i32 as u32
                } else {
                    let sum = (0..K).fold(f32::from_bits(c), |s, x| a[r][x].mul_add(b[x][col], s));
                    sum.to_bits()
                }
            })
        })
    }

    /// `fma_tile` at every shape its callers make and more (rows and columns multiples of 8,
    /// odd and even numbers of 8-wide columns, any depth, padded strides): each element's bits
    /// are `mul_add`'s over k in order.
    #[test]
    fn the_blocked_tile_product_keeps_each_elements_order() {
        let mut seed = 0x6a09_e667_f3bc_c908;
        let mut value = || f32::from_bits(registers(Kind::Tf32, &mut seed));
        for (rows, cols, depth) in [
            (16, 8, 16),
            (32, 24, 32),
            (16, 32, 48),
            (8, 40, 7),
            (24, 16, 0),
        ] {
            let (lda, ldb, ldc) = (depth + 3, cols + 5, cols + 1);
            let a: Vec<f32> = (0..rows * lda).map(|_| value()).collect();
            let b: Vec<f32> = (0..depth.max(1) * ldb).map(|_| value()).collect();
            let c: Vec<f32> = (0..rows * ldc).map(|_| value()).collect();
            let mut d = c.clone();
            let shape = Matrix {
                rows,
                cols,
                stride: ldc,
            };
            fma_tile(&a, lda, &b, ldb, &mut d, shape, depth);
            for r in 0..rows {
                for j in 0..ldc {
                    let want = if j < cols {
                        (0..depth).fold(c[r * ldc + j], |s, k| {
                            a[r * lda + k].mul_add(b[k * ldb + j], s)
                        })
                    } else {
                        c[r * ldc + j]
                    };
                    let got = d[r * ldc + j];
                    assert_eq!(
                        got.to_bits(),
                        want.to_bits(),
                        "{rows}×{cols}×{depth}: ({r}, {j})"
                    );
                }
            }
        }
    }

    #[test]
    fn the_tile_product_matches_the_element_by_element_order_for_every_kind() {
        let mut seed = 0x9e37_79b9_7f4a_7c15;
        for kind in [Kind::F16, Kind::Bf16, Kind::Tf32, Kind::S8, Kind::U8] {
            for _ in 0..20 {
                let lanes: [Operands; WARP] = core::array::from_fn(|_| Operands {
                    a: core::array::from_fn(|_| registers(kind, &mut seed)),
                    b: core::array::from_fn(|_| registers(kind, &mut seed)),
                    c: core::array::from_fn(|_| match kind {
                        Kind::S8 | Kind::U8 => registers(kind, &mut seed),
                        _ => registers(Kind::Tf32, &mut seed),
                    }),
                });
                assert_eq!(
                    multiply(kind, &lanes, None),
                    reference(kind, &lanes),
                    "{kind:?}"
                );
            }
        }
    }

    /// With a warp's [`Tiles`]: A and B registers drawn from pools larger than what it holds
    /// (hits, misses and replacements), f16 and bf16 from the same registers (a tile is
    /// recent only for its kind), each D against the reference's bits.
    #[test]
    fn recent_tiles_give_the_bits_of_a_fresh_gather() {
        let mut seed = 0x2545_f491_4f6c_dd1d;
        let a_pool: [[[u32; 4]; WARP]; 3] = core::array::from_fn(|_| {
            core::array::from_fn(|_| core::array::from_fn(|_| registers(Kind::Bf16, &mut seed)))
        });
        let b_pool: [[[u32; 2]; WARP]; 6] = core::array::from_fn(|_| {
            core::array::from_fn(|_| core::array::from_fn(|_| registers(Kind::Bf16, &mut seed)))
        });
        let mut tiles = Tiles::default();
        for step in 0..200usize {
            let kind = if step % 7 < 5 { Kind::F16 } else { Kind::Bf16 };
            let (a, b) = (&a_pool[step / 4 % 3], &b_pool[(step * 5 + step / 3) % 6]);
            let lanes: [Operands; WARP] = core::array::from_fn(|lane| Operands {
                a: a[lane],
                b: b[lane],
                c: core::array::from_fn(|_| registers(Kind::Tf32, &mut seed)),
            });
            let d = multiply(kind, &lanes, Some(&mut tiles));
            assert_eq!(d, reference(kind, &lanes), "step {step} ({kind:?})");
        }
    }
}
