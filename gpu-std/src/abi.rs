//! The contract between a `#[kernel]` and the host that launches it (host builds only).
//!
//! `#[kernel]` turns each kernel into a [`Kernel`] handle: its PTX entry name, its parameters and
//! a CPU entry. Each kernel parameter crosses to the device as one or more PTX parameters:
//!
//! | kernel parameter | marker          | PTX parameters                      |
//! |------------------|-----------------|-------------------------------------|
//! | `&[T]`           | [`Slice<T>`]    | `.u64` pointer, `.u64` length        |
//! | [`Out<T>`]       | [`Output<T>`]   | `.u64` pointer, `.u64` length        |
//! | `T: Pod`         | [`Scalar<T>`]   | `T` by value (`size_of::<T>()` bytes) |
//! | [`Array2<T>`], [`Array3<T>`] | [`ArrayInput<T, D>`] | `.u64` pointer, `.u64` length, `D` `.u64` extents, `D - 1` `.u64` strides |
//! | [`Out2<T>`], [`Out3<T>`] | [`ArrayOutput<T, D>`] | as the inputs |
//!
//! The host packs arguments into exactly these PTX parameters, for the GPU (passed to
//! `cuLaunchKernel`) and for the CPU (passed to the [`CpuEntry`], which unpacks them the same way
//! the PTX entry does), and checks the sizes against the `.entry` in the PTX before every launch.
//!
//! [`Out<T>`]: crate::Out
//! [`Array2<T>`]: crate::Array2
//! [`Array3<T>`]: crate::Array3
//! [`Out2<T>`]: crate::Out2
//! [`Out3<T>`]: crate::Out3

use crate::cpu::BlockContext;
use core::marker::PhantomData;

/// The most parameters a `#[kernel]` may take (a cooperative kernel's `Grid` not counted):
/// `launch!` passes argument tuples up to this length, and `#[kernel]` refuses a longer
/// signature at its definition, naming this limit.
pub const MAX_KERNEL_PARAMS: usize = 32;

/// Bytes of a pointer parameter: nvptx64 pointers are 64-bit.
pub const POINTER_BYTES: usize = 8;
/// Bytes of a length parameter: `usize` on nvptx64.
pub const LENGTH_BYTES: usize = 8;

/// Marker for a `&[T]` kernel parameter (an input).
pub struct Slice<T>(PhantomData<fn() -> T>);
/// Marker for an [`Out<T>`](crate::Out) kernel parameter (an output).
pub struct Output<T>(PhantomData<fn() -> T>);
/// Marker for a `T` kernel parameter passed by value.
pub struct Scalar<T>(PhantomData<fn() -> T>);
/// Marker for a `bool` kernel parameter: crosses as one byte (`.u8`, 0 or 1), made a `bool`
/// again by `!= 0`, so no byte the host sends can be an invalid `bool`.
pub struct Bool;
/// Marker for a `D`-dimensional input ([`Array2<T>`](crate::Array2), [`Array3<T>`](crate::Array3)).
pub struct ArrayInput<T, const D: usize>(PhantomData<fn() -> T>);
/// Marker for a `D`-dimensional output ([`Out2<T>`](crate::Out2), [`Out3<T>`](crate::Out3)).
pub struct ArrayOutput<T, const D: usize>(PhantomData<fn() -> T>);

/// The PTX parameters a `dims`-dimensional view adds after its (pointer, length) pair: its
/// extents and the strides of all but the last (contiguous) axis, each a `.u64`.
pub const fn shape_params(dims: usize) -> usize {
    if dims <= 1 {
        0
    } else {
        2 * dims - 1
    }
}

/// What kind of kernel parameter a [`Param`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamClass {
    /// `&[T]`: read by the kernel.
    Slice,
    /// `Out<T>`: written (and possibly read) by the kernel.
    Output,
    /// `T` by value.
    Scalar,
}

/// One kernel parameter as the host sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Param {
    /// The name in the kernel's source, for error messages.
    pub name: &'static str,
    /// Slice, output or scalar.
    pub class: ParamClass,
    /// `size_of::<T>()` of the element (slices, outputs) or of the value (scalars).
    pub elem_size: usize,
    /// `align_of::<T>()` of the element or value: a slice's memory must be aligned to it.
    pub elem_align: usize,
    /// The element or value type as written in the kernel's source.
    pub type_name: &'static str,
    /// Axes of a slice or output: 1 for `&[T]` and `Out<T>`, 2 or 3 for the array views; 0 for
    /// scalars.
    pub dims: usize,
}

impl Param {
    const fn of<T: bytemuck::Pod>(
        name: &'static str,
        type_name: &'static str,
        class: ParamClass,
        dims: usize,
    ) -> Self {
        Param {
            name,
            class,
            elem_size: core::mem::size_of::<T>(),
            elem_align: core::mem::align_of::<T>(),
            type_name,
            dims,
        }
    }

    /// A `&[T]` parameter.
    pub const fn slice<T: bytemuck::Pod>(name: &'static str, type_name: &'static str) -> Self {
        Param::of::<T>(name, type_name, ParamClass::Slice, 1)
    }

    /// An `Out<T>` parameter.
    pub const fn output<T: bytemuck::Pod>(name: &'static str, type_name: &'static str) -> Self {
        Param::of::<T>(name, type_name, ParamClass::Output, 1)
    }

    /// A `T` parameter by value.
    pub const fn scalar<T: bytemuck::Pod>(name: &'static str, type_name: &'static str) -> Self {
        Param::of::<T>(name, type_name, ParamClass::Scalar, 0)
    }

    /// An `Array2<T>`/`Array3<T>` parameter (`dims` axes).
    pub const fn array<T: bytemuck::Pod>(
        name: &'static str,
        type_name: &'static str,
        dims: usize,
    ) -> Self {
        Param::of::<T>(name, type_name, ParamClass::Slice, dims)
    }

    /// An `Out2<T>`/`Out3<T>` parameter (`dims` axes).
    pub const fn out_array<T: bytemuck::Pod>(
        name: &'static str,
        type_name: &'static str,
        dims: usize,
    ) -> Self {
        Param::of::<T>(name, type_name, ParamClass::Output, dims)
    }

    /// The sizes in bytes of the PTX parameters this parameter becomes, in order.
    pub fn ptx_param_sizes(&self) -> impl Iterator<Item = usize> {
        const { assert!(POINTER_BYTES == LENGTH_BYTES) };
        let (size, count) = match self.class {
            ParamClass::Slice | ParamClass::Output => (POINTER_BYTES, 2 + shape_params(self.dims)),
            ParamClass::Scalar => (self.elem_size, 1),
        };
        core::iter::repeat_n(size, count)
    }
}

/// Runs one block of a kernel on the CPU: `params[i]` points at the bytes of PTX parameter `i`,
/// exactly what `cuLaunchKernel` receives as `kernelParams`.
///
/// # Safety
/// Each slice and output's pointer must be valid for its length, the lengths of each `same_len`
/// group ([`KernelInfo::same_len`]) must be equal, each [`LenProduct`] must hold and each view
/// of [`KernelInfo::index32`] must have at most `u32::MAX` elements and each pair of
/// [`KernelInfo::transposed`] must have reversed shapes: the kernel is compiled assuming so.
pub type CpuEntry = unsafe fn(params: &[*const u8], block: &BlockContext);

/// `#[kernel(len(x = a * b))]`: parameter `param` (a slice or an output) has as many elements
/// as the product of the `u32` scalar parameters `factors`, and that product is at most
/// `u32::MAX`, so the kernel may index it with 32-bit arithmetic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LenProduct {
    /// The slice or output, by parameter index.
    pub param: usize,
    /// The `u32` scalars, by parameter index.
    pub factors: &'static [usize],
}

impl LenProduct {
    /// Used by `#[kernel]`.
    #[doc(hidden)]
    pub const fn new(param: usize, factors: &'static [usize]) -> Self {
        LenProduct { param, factors }
    }
}

/// Everything about a kernel that does not depend on its parameter types.
#[derive(Clone, Copy, Debug)]
pub struct KernelInfo {
    /// The PTX `.entry` name (the function's name).
    pub name: &'static str,
    /// The parameters, in order.
    pub params: &'static [Param],
    /// Groups of parameter indices (slices and outputs) that must have the same length, from
    /// `#[kernel(same_len(a, b, out))]`; checked before every launch.
    pub same_len: &'static [&'static [usize]],
    /// Slices and outputs whose length must be a product of `u32` scalars that fits in a `u32`,
    /// from `#[kernel(len(x = a * b))]`; checked before every launch.
    pub len_products: &'static [LenProduct],
    /// 2D and 3D views (by parameter index) that the kernel indexes in 32 bits, from
    /// `#[kernel(index32(a, out))]`: the launch checks that each has at most `u32::MAX`
    /// elements (its memory, padding included), and, where there is one, that the grid has at
    /// most 2³² threads along each axis (a 32-bit grid index cannot wrap).
    pub index32: &'static [usize],
    /// Pairs `(out, a)` of 2D views (by parameter index) where `out`'s shape is `a`'s reversed
    /// (`out.rows() == a.cols()`, `out.cols() == a.rows()`), from
    /// `#[kernel(transposed(out, a))]`; checked before every launch.
    pub transposed: &'static [(usize, usize)],
    /// The one block shape the kernel runs with, from `#[kernel(block(x, y, z))]`; checked
    /// before every launch.
    pub block: Option<crate::Dim3>,
    /// The kernel takes a `Grid` (its last parameter): it needs a cooperative launch, which
    /// passes the launch's grid barrier as two more PTX parameters (`.u64` pointer, `.u64` 1).
    pub cooperative: bool,
    /// How the CPU executor runs the kernel's blocks, as `#[kernel]` decided from its body.
    pub cpu_path: CpuPath,
    /// The `Out` parameters that `#[kernel]` proved each thread touches only at its own
    /// `index_1d()`: the elementwise loop writes them with plain (vectorisable) stores in a 1D
    /// launch without checked mode, and with the atomic stores of `Out::set` otherwise.
    pub owned_outputs: &'static [&'static str],
}

/// How the CPU executor runs a kernel's blocks (see docs/cpu-executor.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuPath {
    /// No barrier or warp operation, and every call one `#[kernel]` knows: one loop over the
    /// block's threads, the thread index a loop variable.
    Elementwise,
    /// Split at its barriers: each region between two barriers runs as a loop over the block's
    /// threads, the variables live across a barrier kept per thread.
    Regions,
    /// Not split, for the reason given: threads run one after another until one reaches a
    /// barrier or warp operation, then each thread is a coroutine, switched at every barrier.
    Coroutines(&'static str),
}

impl CpuPath {
    /// A short name: `elementwise`, `regions` or `coroutines`.
    pub fn name(&self) -> &'static str {
        match self {
            CpuPath::Elementwise => "elementwise",
            CpuPath::Regions => "regions",
            CpuPath::Coroutines(_) => "coroutines",
        }
    }
}

impl KernelInfo {
    /// The sizes in bytes of all PTX parameters of the entry, in order (a cooperative kernel's
    /// grid barrier last).
    pub fn ptx_param_sizes(&self) -> impl Iterator<Item = usize> + '_ {
        let barrier = if self.cooperative { 2 } else { 0 };
        let barrier = [POINTER_BYTES, LENGTH_BYTES].into_iter().take(barrier);
        self.params
            .iter()
            .flat_map(Param::ptx_param_sizes)
            .chain(barrier)
    }
}

/// A typed handle to a kernel, made by `#[kernel]`: launch it with `ferrocuda`'s `launch!`.
///
/// `P` is the tuple of parameter markers ([`Slice`], [`Output`], [`Scalar`]), so a launch whose
/// arguments do not match the kernel's parameters does not compile.
pub struct Kernel<P> {
    info: KernelInfo,
    cpu: CpuEntry,
    _params: PhantomData<fn(P)>,
}

impl<P> Clone for Kernel<P> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<P> Copy for Kernel<P> {}

impl<P> core::fmt::Debug for Kernel<P> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Kernel")
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

impl<P> Kernel<P> {
    /// Used by `#[kernel]`.
    ///
    /// # Safety
    /// `cpu` must unpack exactly the PTX parameters that `params` describe, in order, and `P`
    /// must list the markers of `params`.
    #[doc(hidden)]
    pub const unsafe fn new(
        name: &'static str,
        params: &'static [Param],
        same_len: &'static [&'static [usize]],
        cpu: CpuEntry,
    ) -> Self {
        Kernel {
            info: KernelInfo {
                name,
                params,
                same_len,
                len_products: &[],
                index32: &[],
                transposed: &[],
                block: None,
                cooperative: false,
                cpu_path: CpuPath::Coroutines("no plan"),
                owned_outputs: &[],
            },
            cpu,
            _params: PhantomData,
        }
    }

    /// Used by `#[kernel]` for a kernel with a `Grid` parameter: it needs a cooperative launch.
    #[doc(hidden)]
    pub const fn cooperative(mut self) -> Self {
        self.info.cooperative = true;
        self
    }

    /// Used by `#[kernel(len(x = a * b))]`.
    #[doc(hidden)]
    pub const fn with_len_products(mut self, products: &'static [LenProduct]) -> Self {
        self.info.len_products = products;
        self
    }

    /// Used by `#[kernel(index32(a, out))]`.
    #[doc(hidden)]
    pub const fn with_index32(mut self, views: &'static [usize]) -> Self {
        self.info.index32 = views;
        self
    }

    /// Used by `#[kernel(transposed(out, a))]`.
    #[doc(hidden)]
    pub const fn with_transposed(mut self, pairs: &'static [(usize, usize)]) -> Self {
        self.info.transposed = pairs;
        self
    }

    /// Used by `#[kernel(block(x, y, z))]`.
    #[doc(hidden)]
    pub const fn with_block(mut self, block: crate::Dim3) -> Self {
        self.info.block = Some(block);
        self
    }

    /// Used by `#[kernel]`: how its CPU entry runs blocks.
    #[doc(hidden)]
    pub const fn cpu_path(mut self, path: CpuPath) -> Self {
        self.info.cpu_path = path;
        self
    }

    /// Used by `#[kernel]`: the outputs its elementwise loop may write with plain stores.
    #[doc(hidden)]
    pub const fn owned_outputs(mut self, outputs: &'static [&'static str]) -> Self {
        self.info.owned_outputs = outputs;
        self
    }

    /// The kernel's name, which is also its PTX `.entry` name.
    pub fn name(&self) -> &'static str {
        self.info.name
    }

    /// Name, parameters and length rules.
    pub fn info(&self) -> &KernelInfo {
        &self.info
    }

    /// The CPU entry that runs one block.
    pub fn cpu_entry(&self) -> CpuEntry {
        self.cpu
    }
}
