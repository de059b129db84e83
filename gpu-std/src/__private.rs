//! Support for the code `#[kernel]` generates. Not a public API.

use crate::array::{Array, OutArray};
use crate::shared::BlockScope;
use crate::Out;

/// The bytemuck that `#[pod]` derives `Pod` and `Zeroable` through, so that kernel crates need
/// no bytemuck dependency of their own.
pub use bytemuck;

/// What `#[kernel]` wraps a float math method call's receiver in (`math::device_call`).
pub use crate::math::device_call::DeviceCall;

/// The elementwise loop's plain-store handle of an output that only its own thread touches.
#[cfg(not(target_arch = "nvptx64"))]
pub use crate::out::owned::{OutHeldByTheLoop, OwnedOut};

/// Compile-time check that a scalar kernel parameter is plain data.
pub const fn assert_pod<T: bytemuck::Pod>() {}

/// Rebuilds a `&[T]` from its PTX (pointer, length) pair; a zero length may come with a null or
/// dangling pointer, which `from_raw_parts` would not accept. The slice borrows the entry's
/// `scope`, so the kernel body cannot be given (or keep) it for longer than the launch.
///
/// # Safety
/// For `len > 0`, `ptr` must be valid for `len` reads of `T` while `_scope` is borrowed,
/// aligned, and not written.
#[inline(always)]
pub unsafe fn slice_from_raw<T>(_scope: &BlockScope, ptr: *const T, len: usize) -> &[T] {
    if len == 0 {
        &[]
    } else {
        // SAFETY: guaranteed by the caller for `len > 0`.
        unsafe { core::slice::from_raw_parts(ptr, len) }
    }
}

/// How a kernel's `&[T]` input pointer crosses into the PTX entry: a nullable shared reference
/// to zero elements, which is one `.u64` parameter like a raw pointer, but which rustc marks
/// `noalias readonly` for LLVM (it is a `&` to plain data: nothing writes the memory behind it
/// while the kernel runs). For a read-only, non-aliased pointer parameter of a kernel, LLVM's
/// NVPTX backend loads through the read-only data cache: `ld.global.nc` (SASS `LDG.E.CONSTANT`),
/// what `const T* __restrict__` gives CUDA C.
///
/// Why that promise holds: `ferrocuda-host`'s `launch` takes each input as `&D` and each output as
/// `&mut D` for the whole call, so the borrow checker forbids one buffer being both an input and
/// an output of a launch; and a kernel only writes through `Out` and `Shared`, never through an
/// input. Zero elements, so it claims no memory as dereferenceable (a zero-length input may come
/// with a dangling pointer), and `Option` because it may be null.
pub type KernelInput<T> = Option<&'static [T; 0]>;

/// Rebuilds a kernel's `&[T]` input from its PTX parameters (see [`KernelInput`]).
///
/// # Safety
/// As [`slice_from_raw`], with `input`'s pointer.
#[inline(always)]
pub unsafe fn slice_from_input<T>(scope: &BlockScope, input: KernelInput<T>, len: usize) -> &[T] {
    let ptr = match input {
        Some(elements) => elements.as_ptr(),
        None => core::ptr::null(),
    };
    // SAFETY: forwarded to the caller.
    unsafe { slice_from_raw(scope, ptr, len) }
}

/// Rebuilds an [`Out`] from its PTX (pointer, length) pair, borrowing the entry's `scope` as
/// [`slice_from_raw`] does.
///
/// # Safety
/// As [`Out::from_raw_parts`].
#[inline(always)]
pub unsafe fn out_from_raw<'a, T: bytemuck::Pod>(
    _scope: &'a BlockScope,
    ptr: *mut T,
    len: usize,
) -> Out<'a, T> {
    // SAFETY: forwarded to the caller.
    unsafe { Out::from_launch(ptr, len) }
}

/// Reads PTX parameter `i` as a `T` on the CPU path.
///
/// # Safety
/// `params[i]` must point at `size_of::<T>()` readable bytes holding a valid `T`.
#[cfg(not(target_arch = "nvptx64"))]
#[inline(always)]
pub unsafe fn read_param<T: bytemuck::Pod>(params: &[*const u8], i: usize) -> T {
    // SAFETY: guaranteed by the caller; the bytes may be unaligned.
    unsafe { (params[i] as *const T).read_unaligned() }
}

/// Rebuilds an [`Array2`](crate::Array2) or [`Array3`](crate::Array3) input from its PTX
/// parameters: the (pointer, length) pair of its memory, then its shape and strides.
///
/// # Safety
/// As [`slice_from_input`], and as [`Array::from_parts`] for the shape and strides (the launch
/// checked them against the length).
#[inline(always)]
pub unsafe fn array_from_input<T, const D: usize>(
    scope: &BlockScope,
    input: KernelInput<T>,
    len: usize,
    shape: [usize; D],
    strides: [usize; D],
) -> Array<'_, T, D> {
    // SAFETY: forwarded to the caller.
    unsafe { Array::from_parts(slice_from_input(scope, input, len), shape, strides) }
}

/// [`array_from_input`] from a raw pointer (the CPU entry's).
///
/// # Safety
/// As [`slice_from_raw`] and [`Array::from_parts`].
#[inline(always)]
pub unsafe fn array_from_raw<T, const D: usize>(
    scope: &BlockScope,
    ptr: *const T,
    len: usize,
    shape: [usize; D],
    strides: [usize; D],
) -> Array<'_, T, D> {
    // SAFETY: forwarded to the caller.
    unsafe { Array::from_parts(slice_from_raw(scope, ptr, len), shape, strides) }
}

/// Rebuilds an [`Out2`](crate::Out2) or [`Out3`](crate::Out3) from its PTX parameters.
///
/// # Safety
/// As [`Out::from_raw_parts`] and [`OutArray::from_parts`].
#[inline(always)]
pub unsafe fn out_array_from_raw<'a, T: bytemuck::Pod, const D: usize>(
    scope: &'a BlockScope,
    ptr: *mut T,
    len: usize,
    shape: [usize; D],
    strides: [usize; D],
) -> OutArray<'a, T, D> {
    // SAFETY: forwarded to the caller.
    unsafe { OutArray::from_parts(out_from_raw(scope, ptr, len), shape, strides) }
}

/// `x`, through a register move that LLVM cannot see through or merge with another: what
/// `#[kernel]` passes the integer parameters through after each top-level barrier of the PTX
/// body, so that index arithmetic after the barrier is computed there rather than kept live
/// from before it (gpu-macros' `rematerialize`). The identity on the host.
#[inline(always)]
pub fn opaque<T: Opaque>(x: T) -> T {
    x.opaque()
}

/// The integer types [`opaque`] moves.
pub trait Opaque: Copy {
    /// See [`opaque`].
    fn opaque(self) -> Self;
}

macro_rules! opaque_through {
    ($reg:ident, $via:ty, $mov:literal: $($t:ty),*) => {$(
        impl Opaque for $t {
            #[inline(always)]
            fn opaque(self) -> Self {
                // As `hint.rs`'s: an optimisation barrier for the GPU's code only.
                #[cfg(target_arch = "nvptx64")]
                {
                    let moved: $via;
                    // SAFETY: a register move; touches no memory. Not `pure`: two moves of one
                    // value must stay two values.
                    unsafe {
                        core::arch::asm!($mov, out($reg) moved, in($reg) self as $via,
                                         options(nomem, nostack, preserves_flags))
                    };
                    moved as $t
                }
                #[cfg(not(target_arch = "nvptx64"))]
                self
            }
        }
    )*};
}

opaque_through!(reg32, u32, "mov.b32 {0}, {1};": i8, i16, i32, u8, u16, u32);
opaque_through!(reg64, u64, "mov.b64 {0}, {1};": i64, isize, u64, usize);

/// The block's `shared!` array declared at `site`: `len` elements of `T`, the same memory for
/// every thread of the block. What `#[kernel]` makes of each `shared!` on the host.
///
/// A size that does not fit the block's shared memory (`len × size_of::<T>()` overflowing
/// included, in release builds too) stops the block with [`KernelBug::SharedMemoryTooLarge`](crate::cpu::KernelBug::SharedMemoryTooLarge)
/// before anything is allocated.
///
/// # Safety
/// Call it only while [`run_block`](crate::cpu::run_block) runs a block on this thread, with the
/// `scope` the kernel's CPU entry lent to the body: the handle then cannot outlive the block,
/// and the arena keeps its memory until a later block replaces it.
#[doc(hidden)]
#[inline(always)]
#[cfg(not(target_arch = "nvptx64"))]
pub unsafe fn shared_array<'b, T: bytemuck::Pod>(
    scope: &'b BlockScope,
    site: &'static crate::cpu::SharedSite,
    len: usize,
) -> crate::shared::Shared<'b, T> {
    let bytes = len.checked_mul(core::mem::size_of::<T>());
    let (ptr, checked) = crate::cpu::shared_memory(site, bytes, core::mem::size_of::<T>().max(1));
    // SAFETY: `ptr` is 16-byte aligned memory of `bytes = len × size_of::<T>()` bytes (the
    // product checked by `shared_memory`), owned by this worker's arena and kept until a later
    // block replaces it; the caller's `scope` keeps the handle inside this block. Built here,
    // inlined into the kernel, the handle's length is the declaration's constant to LLVM, which
    // can then prove a region's indices in bounds.
    unsafe {
        crate::shared::Shared::from_host_parts(
            scope,
            ptr.cast::<T>(),
            len,
            site.index as u32,
            checked,
        )
    }
}
