//! Kernel arguments: the views of memory a launch lends a kernel, and how values passed to a
//! launch become them.
//!
//! Soundness rests here: a kernel trusts each (pointer, length) pair it receives. So the views
//! ([`InputArg`], [`OutputArg`]) are opaque and made only by ferrocuda, from a typed slice or a
//! [`DeviceBuffer`], whose length always matches its memory; an output can only come from memory
//! borrowed mutably; and [`KernelArg`] / [`KernelArgs`] are sealed. A user's own type takes part
//! by implementing [`InputData`] or [`OutputData`], whose only required method hands back one of
//! those views (see [`InputData`]'s example).

use crate::array::{ArrayArg, OutArrayArg, Shape};
use crate::buffer::DeviceBuffer;
use bytemuck::Pod;
use core::marker::PhantomData;
use ferrocuda_std::abi::{
    ArrayInput, ArrayOutput, Bool, Output, Scalar, Slice, LENGTH_BYTES, POINTER_BYTES,
};

mod check;
pub(crate) use check::check_args;

/// One kernel argument as the backends see it: where its data lives, and its length in elements.
/// Made only in this crate, from typed memory: `bytes.len()` is always `len × size_of::<T>()`.
pub enum Arg<'a> {
    /// Host memory the kernel reads (`&[T]`, `&Vec<T>`, a CPU device buffer).
    HostSlice {
        /// The elements' bytes.
        bytes: &'a [u8],
        /// Number of elements.
        len: usize,
    },
    /// Host memory the kernel writes (`&mut [T]`, `&mut Vec<T>`, a CPU device buffer).
    HostOutput {
        /// The elements' bytes.
        bytes: &'a mut [u8],
        /// Number of elements.
        len: usize,
    },
    /// GPU memory the kernel reads.
    GpuSlice {
        /// The buffer.
        buffer: &'a crate::cuda::GpuBytes,
        /// Where the elements start in it, in bytes (a [`crate::BufferSlice`] of it).
        offset: usize,
        /// Number of elements.
        len: usize,
    },
    /// GPU memory the kernel writes.
    GpuOutput {
        /// The buffer.
        buffer: &'a mut crate::cuda::GpuBytes,
        /// Where the elements start in it, in bytes (a [`crate::BufferSliceMut`] of it).
        offset: usize,
        /// Number of elements.
        len: usize,
    },
    /// cudarc's device memory the kernel reads (`&CudaSlice<T>`), of its whole length.
    CudarcSlice {
        /// The slice.
        slice: &'a (dyn crate::cuda::CudarcMemory + 'static),
        /// Number of elements.
        len: usize,
    },
    /// cudarc's device memory the kernel writes (`&mut CudaSlice<T>`), of its whole length.
    CudarcOutput {
        /// The slice.
        slice: &'a mut (dyn crate::cuda::CudarcMemory + 'static),
        /// Number of elements.
        len: usize,
    },
    /// A value passed by value.
    Scalar(ParamSlot),
}

impl Arg<'_> {
    /// Elements of a slice or output; `None` for scalars.
    pub fn elements(&self) -> Option<usize> {
        match self {
            Arg::HostSlice { len, .. }
            | Arg::HostOutput { len, .. }
            | Arg::GpuSlice { len, .. }
            | Arg::GpuOutput { len, .. }
            | Arg::CudarcSlice { len, .. }
            | Arg::CudarcOutput { len, .. } => Some(*len),
            Arg::Scalar(_) => None,
        }
    }

    /// The GPU a device buffer lives on; `None` for host data and scalars.
    pub(crate) fn gpu_ordinal(&self) -> Option<usize> {
        match self {
            Arg::GpuSlice { buffer, .. } => Some(buffer.ordinal()),
            Arg::GpuOutput { buffer, .. } => Some(buffer.ordinal()),
            Arg::CudarcSlice { slice, .. } => Some(slice.cudarc_context().ordinal()),
            Arg::CudarcOutput { slice, .. } => Some(slice.cudarc_context().ordinal()),
            _ => None,
        }
    }

    /// The sizes of the PTX parameters this argument is packed into: what the host sends.
    pub fn ptx_param_sizes(&self) -> impl Iterator<Item = usize> {
        let (sizes, count) = match self {
            Arg::Scalar(slot) => ([slot.size, 0], 1),
            _ => ([POINTER_BYTES, LENGTH_BYTES], 2),
        };
        sizes.into_iter().take(count)
    }
}

/// The element type of a slice or output argument, as the launch checks it against the kernel's.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Element {
    pub(crate) size: usize,
    pub(crate) name: &'static str,
}

impl Element {
    fn of<T>() -> Self {
        Element {
            size: core::mem::size_of::<T>(),
            name: core::any::type_name::<T>(),
        }
    }
}

/// An argument with its element type, before the launch checks it against the kernel.
pub struct LaunchArg<'a> {
    pub(crate) arg: Arg<'a>,
    /// `None` for scalars.
    pub(crate) element: Option<Element>,
    /// The extents and strides of a 2D or 3D view; `None` for `&[T]`, `Out<T>` and scalars.
    pub(crate) shape: Option<Shape>,
}

impl<'a> LaunchArg<'a> {
    /// A `&[T]`/`Out<T>` view or a scalar.
    fn plain(arg: Arg<'a>, element: Option<Element>) -> Self {
        LaunchArg {
            arg,
            element,
            shape: None,
        }
    }

    /// Axes: 0 for a scalar, 1 for a plain view, 2 or 3 for an array view.
    fn dims(&self) -> usize {
        match (&self.arg, self.shape) {
            (Arg::Scalar(_), _) => 0,
            (_, None) => 1,
            (_, Some(shape)) => shape.dims,
        }
    }

    /// The argument as the backends pack it: its view or value, then (array views) one `u64`
    /// scalar per extent and per stride but the last, the PTX parameters the kernel's entry
    /// declares after the view's (pointer, length).
    pub(crate) fn into_ptx_args(self, into: &mut Vec<Arg<'a>>) {
        into.push(self.arg);
        if let Some(shape) = self.shape {
            into.extend(shape.ptx_values().map(|v| Arg::Scalar(ParamSlot::new(v))));
        }
    }
}

/// Each argument as the backends pack it ([`LaunchArg::into_ptx_args`]).
pub(crate) fn into_ptx_args(args: Vec<LaunchArg<'_>>) -> Vec<Arg<'_>> {
    let mut ptx = Vec::with_capacity(args.len());
    for arg in args {
        arg.into_ptx_args(&mut ptx);
    }
    ptx
}

/// The bytes of one PTX parameter, as `cuLaunchKernel` and the CPU entry read them.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
pub struct ParamSlot {
    bytes: [u8; ParamSlot::CAPACITY],
    size: usize,
}

impl ParamSlot {
    /// The largest scalar parameter, in bytes.
    pub const CAPACITY: usize = 128;

    /// A slot holding `value`'s bytes.
    pub fn new<T: Pod>(value: T) -> Self {
        const {
            assert!(
                core::mem::size_of::<T>() <= ParamSlot::CAPACITY,
                "scalar kernel parameters are limited to 128 bytes"
            )
        };
        let mut slot = ParamSlot {
            bytes: [0; Self::CAPACITY],
            size: core::mem::size_of::<T>(),
        };
        slot.bytes[..slot.size].copy_from_slice(bytemuck::bytes_of(&value));
        slot
    }

    /// Its size in bytes.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Its first byte, for `kernelParams` / the CPU entry.
    pub fn as_ptr(&self) -> *const u8 {
        self.bytes.as_ptr()
    }

    /// Its bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.bytes[..self.size]
    }
}

/// Memory of `T`s that a kernel reads, lent for one launch: made by ferrocuda only (from `[T]`,
/// `Vec<T>`, `[T; N]` or a [`DeviceBuffer<T>`], through [`InputData::input_arg`]), so its
/// length is always that of the memory behind it.
pub struct InputArg<'a, T> {
    pub(crate) arg: Arg<'a>,
    _element: PhantomData<fn() -> T>,
}

/// Memory of `T`s that a kernel writes, lent exclusively for one launch: made by ferrocuda only,
/// from memory borrowed mutably (through [`OutputData::output_arg`]).
pub struct OutputArg<'a, T> {
    pub(crate) arg: Arg<'a>,
    _element: PhantomData<fn() -> T>,
}

/// The crate-only constructor and the length of a view.
macro_rules! view_methods {
    ($view:ident, $made_from:literal) => {
        impl<'a, T: Pod> $view<'a, T> {
            #[doc = concat!("Crate-only: `arg` must have been made from ", $made_from, ".")]
            pub(crate) fn new(arg: Arg<'a>) -> Self {
                $view {
                    arg,
                    _element: PhantomData,
                }
            }

            /// Number of elements.
            pub fn len(&self) -> usize {
                self.arg.elements().unwrap_or(0)
            }

            /// Whether it has no elements.
            pub fn is_empty(&self) -> bool {
                self.len() == 0
            }
        }
    };
}
view_methods!(InputArg, "memory of `T`s");
view_methods!(OutputArg, "memory of `T`s borrowed mutably");

/// Data a kernel reads: host memory (`[T]`, `[T; N]`, `Vec<T>`: copied to a GPU for the launch) or
/// a [`DeviceBuffer`] (used in place). `&data` is the argument for a `&[T]` kernel parameter, and
/// what `ferrocuda::ops` functions take for their inputs.
///
/// ```
/// use ferrocuda_host::{Device, InputData};
/// fn elements(x: &(impl InputData<f32> + ?Sized)) -> usize { x.len() }
/// let data = vec![1.0f32; 3];
/// assert_eq!(elements(&data), 3);
/// assert_eq!(elements(&data[1..]), 2);
/// assert_eq!(elements(&Device::cpu().upload(&data).unwrap()), 3);
/// ```
///
/// Your own type becomes an input by handing out the view of memory it holds: the view can only
/// come from ferrocuda's own types, so it cannot claim more elements than there are.
///
/// ```
/// use ferrocuda_host::{DeviceBuffer, InputArg, InputData};
/// /// Samples kept on a device, with their rate.
/// struct Signal {
///     samples: DeviceBuffer<f32>,
///     rate_hz: f32,
/// }
/// impl InputData<f32> for Signal {
///     fn input_arg(&self) -> InputArg<'_, f32> {
///         self.samples.input_arg()
///     }
/// }
/// let device = ferrocuda_host::Device::cpu();
/// let signal = Signal { samples: device.upload(&[0.5f32; 8]).unwrap(), rate_hz: 48_000.0 };
/// assert_eq!((signal.len(), signal.rate_hz), (8, 48_000.0));
/// // `&signal` is now an argument for any `&[f32]` kernel parameter: launch!(m, k[1, 8](&signal, ...))
/// ```
pub trait InputData<T: Pod> {
    /// The launch argument that reads it.
    fn input_arg(&self) -> InputArg<'_, T>;

    /// Number of elements (of the memory [`input_arg`](Self::input_arg) lends).
    fn len(&self) -> usize {
        self.input_arg().len()
    }

    /// Whether it has no elements.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Memory a kernel writes: host memory (copied back from a GPU after the launch) or a
/// [`DeviceBuffer`] (written in place). `&mut data` is the argument for an `Out<T>` kernel
/// parameter, and what `ferrocuda::ops` functions take for their outputs. Implement it for your
/// own types as [`InputData`], by handing out the [`OutputArg`] of memory they hold.
pub trait OutputData<T: Pod> {
    /// The launch argument that writes it.
    fn output_arg(&mut self) -> OutputArg<'_, T>;

    /// Number of elements.
    fn len(&self) -> usize;

    /// Whether it has no elements.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<T: Pod> InputData<T> for [T] {
    fn len(&self) -> usize {
        <[T]>::len(self)
    }
    fn input_arg(&self) -> InputArg<'_, T> {
        InputArg::new(Arg::HostSlice {
            bytes: bytemuck::cast_slice(self),
            len: <[T]>::len(self),
        })
    }
}
impl<T: Pod> OutputData<T> for [T] {
    fn len(&self) -> usize {
        <[T]>::len(self)
    }
    fn output_arg(&mut self) -> OutputArg<'_, T> {
        let len = <[T]>::len(self);
        OutputArg::new(Arg::HostOutput {
            bytes: bytemuck::cast_slice_mut(self),
            len,
        })
    }
}

/// `Vec<T>` and `[T; N]` are their slices.
macro_rules! as_slice_data {
    ($ty:ty $(, $n:ident)?) => {
        impl<T: Pod $(, const $n: usize)?> InputData<T> for $ty {
            fn len(&self) -> usize {
                self.as_slice().len()
            }
            fn input_arg(&self) -> InputArg<'_, T> {
                self.as_slice().input_arg()
            }
        }
        impl<T: Pod $(, const $n: usize)?> OutputData<T> for $ty {
            fn len(&self) -> usize {
                self.as_slice().len()
            }
            fn output_arg(&mut self) -> OutputArg<'_, T> {
                self.as_mut_slice().output_arg()
            }
        }
    };
}
as_slice_data!(Vec<T>);
as_slice_data!([T; N], N);

impl<T: Pod> InputData<T> for DeviceBuffer<T> {
    fn len(&self) -> usize {
        DeviceBuffer::len(self)
    }
    fn input_arg(&self) -> InputArg<'_, T> {
        InputArg::new(self.as_arg())
    }
}
impl<T: Pod> OutputData<T> for DeviceBuffer<T> {
    fn len(&self) -> usize {
        DeviceBuffer::len(self)
    }
    fn output_arg(&mut self) -> OutputArg<'_, T> {
        OutputArg::new(self.as_arg_mut())
    }
}

mod sealed {
    /// The conversion behind [`super::KernelArg`]; private, so no other crate can add one.
    pub trait IntoLaunchArg<'a, K> {
        fn into_launch_arg(self) -> super::LaunchArg<'a>;
    }

    /// The conversion behind [`super::KernelArgs`].
    pub trait IntoLaunchArgs<'a, P> {
        fn into_launch_args(self) -> Vec<super::LaunchArg<'a>>;
    }
}

/// A value that can be passed to a launch for a kernel parameter of kind `K`
/// (`ferrocuda_std::abi::{Slice, Output, Scalar}`): what makes wrong argument types fail to
/// compile. Sealed: implement [`InputData`] or [`OutputData`] for your own types instead.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be passed for a kernel parameter of kind `{K}`",
    note = "for a `&[T]` parameter (Slice<T>) pass `&[T]`, `&[T; N]`, `&Vec<T>`, \
            `&DeviceBuffer<T>` or `&` of your own `InputData<T>`; for an `Out<T>` (Output<T>) \
            pass `&mut [T]`, `&mut [T; N]`, `&mut Vec<T>`, `&mut DeviceBuffer<T>` or `&mut` of \
            your own `OutputData<T>`; for a scalar (Scalar<T>) pass a `T`, with the kernel's \
            exact `T`; for an `Array2<T>`/`Array3<T>` (ArrayInput<T, D>) pass a \
            `ferrocuda::Array2`/`Array3` by value, for an `Out2<T>`/`Out3<T>` (ArrayOutput<T, D>) \
            a `ferrocuda::Out2`/`Out3`"
)]
pub trait KernelArg<'a, K>: sealed::IntoLaunchArg<'a, K> {}
impl<'a, K, A: sealed::IntoLaunchArg<'a, K>> KernelArg<'a, K> for A {}

impl<'a, T: Pod, D: InputData<T> + ?Sized> sealed::IntoLaunchArg<'a, Slice<T>> for &'a D {
    fn into_launch_arg(self) -> LaunchArg<'a> {
        LaunchArg::plain(self.input_arg().arg, Some(Element::of::<T>()))
    }
}
impl<'a, T: Pod, D: OutputData<T> + ?Sized> sealed::IntoLaunchArg<'a, Output<T>> for &'a mut D {
    fn into_launch_arg(self) -> LaunchArg<'a> {
        LaunchArg::plain(self.output_arg().arg, Some(Element::of::<T>()))
    }
}
/// A `bool` parameter crosses as one byte, 0 or 1 (`ferrocuda_std::abi::Bool`).
impl<'a> sealed::IntoLaunchArg<'a, Bool> for bool {
    fn into_launch_arg(self) -> LaunchArg<'a> {
        LaunchArg::plain(Arg::Scalar(ParamSlot::new(u8::from(self))), None)
    }
}
impl<'a, T: Pod> sealed::IntoLaunchArg<'a, Scalar<T>> for T {
    fn into_launch_arg(self) -> LaunchArg<'a> {
        LaunchArg::plain(Arg::Scalar(ParamSlot::new(self)), None)
    }
}
impl<'a, T: Pod, const D: usize> sealed::IntoLaunchArg<'a, ArrayInput<T, D>>
    for ArrayArg<'a, T, D>
{
    fn into_launch_arg(self) -> LaunchArg<'a> {
        LaunchArg {
            arg: self.view.arg,
            element: Some(Element::of::<T>()),
            shape: Some(self.shape),
        }
    }
}
impl<'a, T: Pod, const D: usize> sealed::IntoLaunchArg<'a, ArrayOutput<T, D>>
    for OutArrayArg<'a, T, D>
{
    fn into_launch_arg(self) -> LaunchArg<'a> {
        LaunchArg {
            arg: self.view.arg,
            element: Some(Element::of::<T>()),
            shape: Some(self.shape),
        }
    }
}

/// A tuple of arguments for a kernel whose parameter kinds are the tuple `P`. Sealed: tuples of
/// [`KernelArg`]s of up to [`MAX_KERNEL_PARAMS`](ferrocuda_std::abi::MAX_KERNEL_PARAMS) elements,
/// the most parameters `#[kernel]` accepts.
pub trait KernelArgs<'a, P>: sealed::IntoLaunchArgs<'a, P> + Sized {
    /// The sizes in bytes of the PTX parameters these arguments are packed into, in order.
    fn ptx_param_sizes(self) -> Vec<usize> {
        into_ptx_args(self.into_launch_args())
            .iter()
            .flat_map(Arg::ptx_param_sizes)
            .collect()
    }
}
impl<'a, P, A: sealed::IntoLaunchArgs<'a, P>> KernelArgs<'a, P> for A {}

/// The launch's arguments, in order.
pub(crate) fn into_launch_args<'a, P>(args: impl KernelArgs<'a, P>) -> Vec<LaunchArg<'a>> {
    sealed::IntoLaunchArgs::into_launch_args(args)
}

/// Implements `IntoLaunchArgs` for the tuple of every prefix of the list, the empty one
/// included: `impl_kernel_args!(A0: K0, A1: K1)` covers `()`, `(A0,)` and `(A0, A1)`.
macro_rules! impl_kernel_args {
    ($($arg:ident: $kind:ident),*) => {
        impl_kernel_args!(@prefixes [] $($arg: $kind),*);
    };
    // Implements for the prefix taken so far, then takes one pair more.
    (@prefixes [$($arg:ident: $kind:ident),*]) => {
        impl_kernel_args!(@one $($arg: $kind),*);
    };
    (@prefixes [$($arg:ident: $kind:ident),*] $next:ident: $next_kind:ident $(, $rest:ident: $rest_kind:ident)*) => {
        impl_kernel_args!(@one $($arg: $kind),*);
        impl_kernel_args!(@prefixes [$($arg: $kind,)* $next: $next_kind] $($rest: $rest_kind),*);
    };
    (@one $($arg:ident: $kind:ident),*) => {
        impl<'a, $($arg: KernelArg<'a, $kind>, $kind,)*> sealed::IntoLaunchArgs<'a, ($($kind,)*)> for ($($arg,)*) {
            #[allow(non_snake_case)]
            fn into_launch_args(self) -> Vec<LaunchArg<'a>> {
                let ($($arg,)*) = self;
                vec![$(sealed::IntoLaunchArg::<'a, $kind>::into_launch_arg($arg)),*]
            }
        }
    };
}
// Up to `ferrocuda_std::abi::MAX_KERNEL_PARAMS` arguments: `#[kernel]` refuses longer signatures.
impl_kernel_args!(A0: K0, A1: K1, A2: K2, A3: K3, A4: K4, A5: K5, A6: K6, A7: K7, A8: K8, A9: K9, A10: K10, A11: K11, A12: K12, A13: K13, A14: K14, A15: K15, A16: K16, A17: K17, A18: K18, A19: K19, A20: K20, A21: K21, A22: K22, A23: K23, A24: K24, A25: K25, A26: K26, A27: K27, A28: K28, A29: K29, A30: K30, A31: K31);
