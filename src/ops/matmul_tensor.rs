//! Matrix product on tensor cores: `C = A·B` with A and B row-major f16 or bf16
//! ([`matmul_tensor`]) or f32 multiplied as tf32 ([`matmul_tf32`], opt-in), C row-major f32.

use super::launch::grid_2d;
use super::matmul::{check_shape, MatmulShape};
use crate::tensor_kernels::matmul::{matmul_tc, BM, BN, THREADS};
use crate::{bf16, f16, launch, Error, InputData, Kernel, Module, OutputData, Result};
use ferrocuda_std::abi::{Output, Scalar, Slice};

/// Parameters of [`matmul_tc`]: `a`, `b`, `c`, `m`, `n`, `k`.
type TensorParams<T> = (
    Slice<T>,
    Slice<T>,
    Output<f32>,
    Scalar<u32>,
    Scalar<u32>,
    Scalar<u32>,
);

mod sealed {
    /// The input types [`matmul_tc`](super::matmul_tc) is built for, and its instance for each.
    pub trait Sealed: Sized {
        fn kernel() -> crate::Kernel<super::TensorParams<Self>>;
    }
}

/// The input types of [`matmul_tensor`]: [`f16`](struct@f16) and [`bf16`]. (f32 inputs go
/// through [`matmul_tf32`], which says in its name that it drops their low bits.)
pub trait TensorInput: sealed::Sealed + bytemuck::Pod {}
impl TensorInput for f16 {}
impl TensorInput for bf16 {}

macro_rules! tensor_kernel {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {
            fn kernel() -> Kernel<TensorParams<$t>> {
                matmul_tc::<$t>()
            }
        }
    )*};
}
tensor_kernel!(f16, bf16, f32);

/// `c = a · b` on tensor cores, for row-major f16 or bf16 matrices of `shape` (A `m × k`, B
/// `k × n`) and a row-major f32 C (`m × n`); each element of C is a sum of `k` products,
/// accumulated in f32. `tensor_kernels` is [`crate::TENSOR_KERNELS`] loaded on the device
/// (a GPU of compute capability 8.0 or newer, or the CPU executor).
///
/// # Accuracy
/// The products of two f16 or bf16 numbers are exact in f32, and the tensor cores add them into
/// f32 accumulators. The CPU executor and the PTX emulator add them for `k = 0, 1, …` in order,
/// one f32 fused multiply-add each; a GPU in an order of its own. Either way each element is
/// within `γ_k·Σᵢ|aᵢ||bᵢ|` of the exact sum of the (f16 or bf16) inputs' products, where
/// `γ_k = k·u / (1 − k·u)` and `u = 2⁻²⁴` (f32's unit roundoff): the standard bound for a sum of
/// `k` terms each rounded once. There is no error from the inputs themselves: they are already
/// f16 or bf16 (the rounding from your f32 or f64 data to them is yours, at most `2⁻¹¹`
/// relative for f16, `2⁻⁸` for bf16, plus f16's range of ±65,504).
///
/// ```
/// use ferrocuda::{f16, ops, ops::MatmulShape, Device, TENSOR_KERNELS};
/// // The CPU executor runs the tensor-core kernels too; on a GPU before sm_80 this load is
/// // Error::GpuTooOld.
/// let tensor_kernels = Device::cpu().load(&TENSOR_KERNELS)?;
/// let a = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0].map(f16::from_f32); // 2 × 3
/// let b = [1.0f32, 0.0, 0.0, 1.0, 1.0, 1.0].map(f16::from_f32); // 3 × 2
/// let mut c = [0.0f32; 4];
/// ops::matmul_tensor(&tensor_kernels, &a, &b, &mut c, MatmulShape::new(2, 2, 3))?;
/// assert_eq!(c, [4.0, 5.0, 10.0, 11.0]);
/// # Ok::<(), ferrocuda::Error>(())
/// ```
///
/// # Errors
/// [`Error::InvalidInput`] before anything runs if `tensor_kernels` has no `matmul_tc_*` entry
/// for `T` (the library's sm_70 module gets the advice to load [`crate::TENSOR_KERNELS`]), if
/// `m`, `n` or `k` is zero or above `u32::MAX`, if `m·k`, `k·n`
/// or `m·n` overflows, if `a`, `b` or `c` is not `m·k`, `k·n` or `m·n` long, or if C needs more
/// blocks than the device's grid allows (more than 4,194,240 rows on CUDA GPUs); launch errors.
pub fn matmul_tensor<T: TensorInput>(
    tensor_kernels: &Module,
    a: &(impl InputData<T> + ?Sized),
    b: &(impl InputData<T> + ?Sized),
    c: &mut (impl OutputData<f32> + ?Sized),
    shape: MatmulShape,
) -> Result<()> {
    launch_tensor("matmul_tensor", tensor_kernels, a, b, c, shape)
}

/// [`matmul_tensor`] for f32 matrices, multiplied on the tensor cores as **tf32**: each input
/// keeps its sign, its 8 exponent bits and only the 10 high bits of its 23-bit fraction (the low
/// 13 are dropped, truncating toward zero, as the tensor cores do), then the products are added
/// in f32 as in [`matmul_tensor`]. About 3 decimal digits per input instead of f32's 7, for the
/// tensor cores' throughput (on an H100 several times f32's FMA rate); hence opt-in, by name.
/// For full f32 precision call [`super::matmul`].
///
/// # Accuracy
/// Truncating an input changes it by less than `2⁻¹⁰` of itself, so each product by less than
/// `(2·2⁻¹⁰ + 2⁻²⁰)|aᵢbᵢ|`; with the f32 sum ([`matmul_tensor`]'s bound) each element of C is
/// within `(2·2⁻¹⁰ + 2⁻²⁰ + γ_k·(1 + 2⁻¹⁰)²)·Σᵢ|aᵢ||bᵢ|` of the exact `Σᵢ aᵢbᵢ` of the f32
/// inputs, `γ_k = k·2⁻²⁴ / (1 − k·2⁻²⁴)`.
///
/// ```
/// use ferrocuda::{ops, ops::MatmulShape, Device, TENSOR_KERNELS};
/// let tensor_kernels = Device::cpu().load(&TENSOR_KERNELS)?;
/// let a = [1.0f32, 2.0, 3.0, 4.0]; // 2 × 2
/// let b = [1.0f32 + 1e-6, 0.0, 0.0, 1.0]; // 1 + 1e-6 is 1 in tf32
/// let mut c = [0.0f32; 4];
/// ops::matmul_tf32(&tensor_kernels, &a, &b, &mut c, MatmulShape::new(2, 2, 2))?;
/// assert_eq!(c, [1.0, 2.0, 3.0, 4.0]);
/// # Ok::<(), ferrocuda::Error>(())
/// ```
///
/// # Errors
/// As [`matmul_tensor`].
pub fn matmul_tf32(
    tensor_kernels: &Module,
    a: &(impl InputData<f32> + ?Sized),
    b: &(impl InputData<f32> + ?Sized),
    c: &mut (impl OutputData<f32> + ?Sized),
    shape: MatmulShape,
) -> Result<()> {
    launch_tensor("matmul_tf32", tensor_kernels, a, b, c, shape)
}

/// Checks the inputs and launches `matmul_tc`'s instance for `T`.
fn launch_tensor<T: sealed::Sealed + bytemuck::Pod>(
    op: &'static str,
    tensor_kernels: &Module,
    a: &(impl InputData<T> + ?Sized),
    b: &(impl InputData<T> + ?Sized),
    c: &mut (impl OutputData<f32> + ?Sized),
    shape: MatmulShape,
) -> Result<()> {
    let kernel = T::kernel();
    // Any module with the entry runs it (the library's, or the CUDA C twin's in the main job);
    // the one users pass by mistake is the sm_70 library module, which has none.
    if tensor_kernels.info().entry(kernel.name()).is_none() {
        return Err(Error::InvalidInput {
            op,
            detail: format!(
                "the module `{}` has no `{}`: the tensor-core kernels are in \
                 ferrocuda::TENSOR_KERNELS (built for sm_80): pass \
                 `device.load(&ferrocuda::TENSOR_KERNELS)?`",
                tensor_kernels.ptx().name(),
                kernel.name()
            ),
        });
    }
    let (m, n, k) = check_shape(op, shape, a.len(), b.len(), c.len())?;
    let grid = grid_2d(
        op,
        tensor_kernels,
        (shape.n, "columns"),
        (shape.m, "rows"),
        (BN, BM),
    )?;
    launch!(tensor_kernels, kernel[grid, THREADS as u32](a, b, c, m, n, k))
}
