//! Device-side library for ferrocuda kernels: our `cuda_std`.
//!
//! A kernel is a plain Rust function marked [`#[kernel]`](kernel). It reads its position in the
//! launch grid with [`thread::index_1d()`] and friends, takes inputs as `&[T]`, outputs as
//! [`Out<T>`] and scalars by value. The same source compiles two ways:
//!
//! - for `nvptx64-nvidia-cuda` (built by `ferrocuda-builder`): the indices are PTX special registers,
//!   [`thread::sync_threads()`] is `bar.sync`, and `#[kernel]` emits a PTX `.entry`;
//! - for the host: the indices come from the CPU executor of `ferrocuda-host`, which runs every
//!   (block, thread) of the grid, and `#[kernel]` emits a typed [`abi::Kernel`] handle to launch by.
//!
//! Threads of a block cooperate through [`shared!`] arrays and [`dynamic_shared`] memory
//! ([`Shared<T>`]), [`thread::sync_threads()`], atomics on [`Out`] and [`Shared`] ([`atomic`]) and
//! warp operations ([`warp`]); a warp multiplies matrix tiles on the tensor cores ([`mma`], sm_80+)
//! with tiles staged by asynchronous copies ([`async_copy`]). On the CPU executor all of these
//! behave as on the GPU, and checked mode reports shared-memory races, uninitialized shared reads
//! and divergent barriers and warp operations.
//!
//! Kernels compute with [`math`] (`exp`, `ln`, `sqrt`, `sin`, `pow`, `erfc`, the normal CDF, … for
//! f32 and f64 at CUDA's accuracy, `x.exp()` as a method too, a bit-reproducible f32 tier, and
//! fast versions on the GPU's special function unit) and draw random numbers with [`random`] (Philox4x32-10, a
//! counter-based generator: sample `j`'s numbers depend only on the seed and `j`).
//!
//! ```ignore
//! #![cfg_attr(target_arch = "nvptx64", no_std, feature(abi_ptx))]
//! use ferrocuda_std::{kernel, thread, Out};
//!
//! #[kernel(same_len(a, b, out))]
//! pub fn vector_add(a: &[f32], b: &[f32], out: Out<f32>) {
//!     let i = thread::index_1d();
//!     if i < out.len() {
//!         out.set(i, a[i] + b[i]);
//!     }
//! }
//! ```
#![no_std]
#![warn(missing_docs)]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(stdarch_nvptx, asm_experimental_arch, core_intrinsics)
)]
#![cfg_attr(target_arch = "nvptx64", allow(internal_features))]

#[cfg(not(target_arch = "nvptx64"))]
extern crate std;

pub mod array;
pub mod async_copy;
pub mod atomic;
mod backend;
pub mod block;
pub mod constant;
mod float;
pub mod grid;
mod grid_stride;
mod grid_stride_elements;
pub mod half;
pub mod hint;
pub mod index;
mod machine;
pub mod math;
mod mem;
pub mod mma;
mod number;
pub mod out;
pub mod print;
pub mod random;
pub mod shared;
mod tensor_core;
pub mod thread;
pub mod warp;
mod warp_value;

#[cfg(not(target_arch = "nvptx64"))]
pub mod abi;
#[cfg(not(target_arch = "nvptx64"))]
pub mod cpu;
#[cfg(not(target_arch = "nvptx64"))]
#[doc(hidden)]
pub mod split_steps;

#[doc(hidden)]
pub mod __private;

pub use array::{Array2, Array3, Out2, Out3};
pub use atomic::{Atomic, Scope};
pub use bytemuck::Pod;
pub use constant::{ConstTable, ConstView};
pub use ferrocuda_macros::kernel;
/// A `#[pod]` struct is `Copy`, plain data, and a kernel parameter by value:
///
/// ```
/// #[ferrocuda_std::pod]
/// #[repr(C)]
/// struct Particle {
///     position: [f32; 3],
///     mass: f32,
/// }
/// let p = Particle { position: [1.0, 2.0, 3.0], mass: 4.0 };
/// let copy = p;
/// assert_eq!(ferrocuda_std::__private::bytemuck::bytes_of(&copy).len(), 16);
/// assert_eq!(p.mass, 4.0);
/// ```
///
/// Without `#[repr(C)]` it does not compile (the error says to add it):
///
/// ```compile_fail
/// #[ferrocuda_std::pod]
/// struct Particle {
///     position: [f32; 3],
///     mass: f32,
/// }
/// ```
///
/// Nor with padding, whose bytes would reach the GPU uninitialized (here 3 bytes after `tag`):
///
/// ```compile_fail
/// #[ferrocuda_std::pod]
/// #[repr(C)]
/// struct Padded {
///     tag: u8,
///     value: u32,
/// }
/// ```
pub use ferrocuda_macros::pod;
pub use grid::Grid;
pub use half::{bf16, f16};
pub use index::ElementIndex;
pub use machine::Dim3;
pub use number::Number;
pub use out::{Out, OutElement};
pub use shared::{dynamic_shared, Shared};

/// What most kernels use, in one import: `use ferrocuda_std::prelude::*;`.
///
/// Besides the names it saves typing, it brings [`math::DeviceMath`], [`math::Float`] and
/// [`Number`] (whose `mul_add` both inherit) into scope without naming them, so `x.exp()`
/// compiles on the GPU too, and the import never shows up as unused on the host, where std's own
/// float methods win outside `#[kernel]` bodies (see [`math::DeviceMath`]).
pub mod prelude {
    pub use crate::index::{ElementIndex, Elements};
    pub use crate::math::{self, DeviceMath, Float};
    pub use crate::shared::{dynamic_shared, Shared};
    pub use crate::{
        kernel, pod, shared, thread, warp, Array2, Array3, Dim3, Grid, Number, Out, Out2, Out3,
    };
}

/// On the GPU a panic (a failed bounds check, an `assert!`) cannot unwind: it ends the kernel with
/// PTX `trap`, which the host sees as a failed launch and reports with the kernel's name.
#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(_info: &core::panic::PanicInfo) -> ! {
    // SAFETY: `trap` aborts the kernel; it has no preconditions.
    unsafe { core::arch::nvptx::trap() }
}
