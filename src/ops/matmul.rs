//! Matrix product `C = A·B` of row-major f32 or f64 matrices.

use super::checks::{check_len, checked_product, to_u32};
use super::element::Element;
use super::launch::grid_2d;
#[cfg(doc)]
use crate::kernels::matmul::{matmul_blocked, matmul_naive, matmul_tiled};
use crate::kernels::matmul::{BLOCKED_M, BLOCKED_N, BLOCKED_THREADS, TILE};
use crate::{launch, Error, InputData, Module, OutputData, Result};

/// The shape of `C = A·B`: A is `m × k`, B is `k × n`, C is `m × n`, all row-major.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MatmulShape {
    /// Rows of A and C.
    pub m: usize,
    /// Columns of B and C.
    pub n: usize,
    /// Columns of A, rows of B: the length of each dot product.
    pub k: usize,
}

impl MatmulShape {
    /// `m × k` times `k × n`.
    pub const fn new(m: usize, n: usize, k: usize) -> Self {
        MatmulShape { m, n, k }
    }
}

/// Which kernel [`matmul`] runs. All three compute the same product (each element a sum of `k`
/// products in the element type); they differ in speed, and the slower ones exist to compare against.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Matmul {
    /// [`matmul_naive`]: one thread per element of C, A and B read from global memory.
    Naive,
    /// [`matmul_tiled`]: `16 × 16` tiles of A and B staged in shared memory.
    Tiled,
    /// [`matmul_blocked`]: `128 × 128` tiles of C per block, `8 × 8` per thread in registers.
    /// The fast one, and the default. f32 only: for f64, [`matmul`] runs [`Matmul::Tiled`]'s
    /// kernel (an f64 `matmul_blocked` would spill its registers).
    #[default]
    RegisterBlocked,
}

/// `c = a · b` for row-major matrices of `shape` (A `m × k`, B `k × n`, C `m × n`) of f32 or f64
/// ([`Element`]; `ops::matmul::<f64>(...)`, or picked by the arguments), with the kernel `kernel`
/// ([`Matmul::default()`] is the fast one). Each element of C is accumulated in the element type
/// in order of `k` (with fused multiply-adds in [`Matmul::Tiled`] and
/// [`Matmul::RegisterBlocked`]): its error is within about `k·ε·Σ|aᵢ||bᵢ|`, `ε` the type's.
///
/// ```
/// use ferrocuda::ops::{self, Matmul, MatmulShape};
/// let kernels = ferrocuda::Device::cpu().load(&ferrocuda::KERNELS)?;
/// let a = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]; // 2 × 3
/// let b = [1.0f32, 0.0, 0.0, 1.0, 1.0, 1.0]; // 3 × 2
/// let mut c = [0.0f32; 4];
/// ops::matmul(&kernels, &a, &b, &mut c, MatmulShape::new(2, 2, 3), Matmul::default())?;
/// assert_eq!(c, [4.0, 5.0, 10.0, 11.0]);
/// // The same product in f64.
/// let (a, b) = (a.map(f64::from), b.map(f64::from));
/// let mut c = [0.0f64; 4];
/// ops::matmul::<f64>(&kernels, &a, &b, &mut c, MatmulShape::new(2, 2, 3), Matmul::Tiled)?;
/// assert_eq!(c, [4.0, 5.0, 10.0, 11.0]);
/// # Ok::<(), ferrocuda::Error>(())
/// ```
///
/// # Errors
/// [`Error::InvalidInput`] before anything runs if `m`, `n` or `k` is zero or above `u32::MAX`,
/// if `m·k`, `k·n` or `m·n` overflows, if `a`, `b` or `c` is not `m·k`, `k·n` or `m·n` long, or
/// if C needs more blocks than the device's grid allows (65,535 in y on CUDA GPUs: more than
/// 8,388,480 rows for the default kernel, 1,048,560 for the others); launch errors.
pub fn matmul<T: Element>(
    kernels: &Module,
    a: &(impl InputData<T> + ?Sized),
    b: &(impl InputData<T> + ?Sized),
    c: &mut (impl OutputData<T> + ?Sized),
    shape: MatmulShape,
    kernel: Matmul,
) -> Result<()> {
    const OP: &str = "matmul";
    let (mu, nu, ku) = check_shape(OP, shape, a.len(), b.len(), c.len())?;
    let MatmulShape { m, n, .. } = shape;
    let blocked = match kernel {
        Matmul::RegisterBlocked => T::matmul_blocked(),
        Matmul::Naive | Matmul::Tiled => None,
    };
    if let Some(blocked) = blocked {
        let grid = grid_2d(
            OP,
            kernels,
            (n, "columns"),
            (m, "rows"),
            (BLOCKED_N, BLOCKED_M),
        )?;
        let block = BLOCKED_THREADS as u32;
        return launch!(kernels, blocked[grid, block](a, b, c, mu, nu, ku));
    }
    let grid = grid_2d(OP, kernels, (n, "columns"), (m, "rows"), (TILE, TILE))?;
    let block = (TILE as u32, TILE as u32);
    if kernel == Matmul::Naive {
        launch!(kernels, T::matmul_naive[grid, block](a, b, c, mu, nu, ku))
    } else {
        launch!(kernels, T::matmul_tiled[grid, block](a, b, c, mu, nu, ku))
    }
}

/// Checks `shape` and the lengths of A, B and C against it for the op `op`: `(m, n, k)` as the
/// kernels' `u32`s, or why not.
pub(super) fn check_shape(
    op: &'static str,
    shape: MatmulShape,
    a_len: usize,
    b_len: usize,
    c_len: usize,
) -> Result<(u32, u32, u32)> {
    let MatmulShape { m, n, k } = shape;
    if m == 0 || n == 0 || k == 0 {
        return Err(Error::InvalidInput {
            op,
            detail: format!("m, n and k must be at least 1, got m = {m}, n = {n}, k = {k}"),
        });
    }
    let sizes = (
        to_u32(op, "m", m)?,
        to_u32(op, "n", n)?,
        to_u32(op, "k", k)?,
    );
    let want_a = checked_product(op, "m·k", m, k)?;
    let want_b = checked_product(op, "k·n", k, n)?;
    let want_c = checked_product(op, "m·n", m, n)?;
    check_len(op, "a", a_len, want_a, &format!("m × k = {m} × {k}"))?;
    check_len(op, "b", b_len, want_b, &format!("k × n = {k} × {n}"))?;
    check_len(op, "c", c_len, want_c, &format!("m × n = {m} × {n}"))?;
    Ok(sizes)
}
