//! The f32 tile product under every CPU `mma` ([`fma_tile`]): C += A·B one FMA per product in
//! the documented order of the k-sum, in AVX2 register blocks where the crate is built for them.

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
