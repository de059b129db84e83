//! [`Element`]: the element types of the library's generic ops (`f32` and `f64`), and the kernel
//! instances each op launches for it.

use crate::kernels::{matmul, reduce, statistics, transpose};
use crate::Kernel;
use ferrocuda_std::abi::{Output, Scalar, Slice};
use ferrocuda_std::Number;

/// Parameters of the matrix products: `a`, `b`, `c`, `m`, `n`, `k`.
pub type MatmulParams<T> = (
    Slice<T>,
    Slice<T>,
    Output<T>,
    Scalar<u32>,
    Scalar<u32>,
    Scalar<u32>,
);
/// Parameters of `dot_partial`: `a`, `b`, `partial`.
pub type DotParams<T> = (Slice<T>, Slice<T>, Output<T>);
/// Parameters of `sum_partial`: `x`, `partial`.
pub type SumParams<T> = (Slice<T>, Output<T>);
/// Parameters of the transposes: `input`, `out`, `rows`, `cols`.
pub type TransposeParams<T> = (Slice<T>, Output<T>, Scalar<u32>, Scalar<u32>);
/// Parameters of `statistics_partial`: `x`, `partial`.
pub type StatisticsParams<T> = (Slice<T>, Output<f64>);
/// Parameters of `statistics_merge`: `partial`, `out`.
pub type MergeParams = (Slice<f64>, Output<f64>);

mod sealed {
    /// Keeps [`super::Element`] to the types the kernels are built for.
    pub trait Sealed {}
}

/// An element type of [`matmul`](super::matmul), [`dot`](super::dot), [`sum`](super::sum),
/// [`transpose`](super::transpose) and [`statistics`](super::statistics): `f32` or `f64`, the
/// types their kernels are built for (each kernel's `instances(f32, f64)`). Its functions are the
/// instances' handles, for the ops to launch.
pub trait Element: Number + sealed::Sealed {
    /// [`matmul::matmul_naive`] for this type.
    fn matmul_naive() -> Kernel<MatmulParams<Self>>;
    /// [`matmul::matmul_tiled`] for this type.
    fn matmul_tiled() -> Kernel<MatmulParams<Self>>;
    /// [`matmul::matmul_blocked`] if it is built for this type (f32 only: see
    /// [`crate::kernels::matmul`]).
    fn matmul_blocked() -> Option<Kernel<MatmulParams<Self>>>;
    /// [`reduce::dot_partial`] for this type.
    fn dot_partial() -> Kernel<DotParams<Self>>;
    /// [`reduce::sum_partial`] for this type.
    fn sum_partial() -> Kernel<SumParams<Self>>;
    /// [`transpose::transpose_naive`] for this type.
    fn transpose_naive() -> Kernel<TransposeParams<Self>>;
    /// [`transpose::transpose_tiled`] for this type.
    fn transpose_tiled() -> Kernel<TransposeParams<Self>>;
    /// [`transpose::transpose_naive_wide`] for this type.
    fn transpose_naive_wide() -> Kernel<TransposeParams<Self>>;
    /// [`transpose::transpose_tiled_wide`] for this type.
    fn transpose_tiled_wide() -> Kernel<TransposeParams<Self>>;
    /// [`statistics::statistics_partial`] for this type.
    fn statistics_partial() -> Kernel<StatisticsParams<Self>>;
    /// [`statistics::statistics_merge`] for this type.
    fn statistics_merge() -> Kernel<MergeParams>;
}

/// `Element` for each built type: every function is the kernel's instance for it.
macro_rules! element {
    ($($t:ty: blocked $blocked:expr),*) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            fn matmul_naive() -> Kernel<MatmulParams<$t>> {
                matmul::matmul_naive::<$t>()
            }
            fn matmul_tiled() -> Kernel<MatmulParams<$t>> {
                matmul::matmul_tiled::<$t>()
            }
            fn matmul_blocked() -> Option<Kernel<MatmulParams<$t>>> {
                $blocked
            }
            fn dot_partial() -> Kernel<DotParams<$t>> {
                reduce::dot_partial::<$t>()
            }
            fn sum_partial() -> Kernel<SumParams<$t>> {
                reduce::sum_partial::<$t>()
            }
            fn transpose_naive() -> Kernel<TransposeParams<$t>> {
                transpose::transpose_naive::<$t>()
            }
            fn transpose_tiled() -> Kernel<TransposeParams<$t>> {
                transpose::transpose_tiled::<$t>()
            }
            fn transpose_naive_wide() -> Kernel<TransposeParams<$t>> {
                transpose::transpose_naive_wide::<$t>()
            }
            fn transpose_tiled_wide() -> Kernel<TransposeParams<$t>> {
                transpose::transpose_tiled_wide::<$t>()
            }
            fn statistics_partial() -> Kernel<StatisticsParams<$t>> {
                statistics::statistics_partial::<$t>()
            }
            fn statistics_merge() -> Kernel<MergeParams> {
                statistics::statistics_merge::<$t>()
            }
        }
    )*};
}
element!(f32: blocked Some(matmul::matmul_blocked), f64: blocked None);
