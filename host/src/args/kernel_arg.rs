//! From the values passed to a launch to its arguments: the sealed [`KernelArg`] /
//! [`KernelArgs`] conversions, checked at compile time against the kernel's parameter kinds, and
//! [`LaunchArg`], an argument with its element type and shape before the launch checks it.

use super::arg::{Arg, ParamSlot};
use super::views::{InputData, OutputData};
use crate::array::{ArrayArg, OutArrayArg, Shape};
use bytemuck::Pod;
use ferrocuda_std::abi::{ArrayInput, ArrayOutput, Bool, Output, Scalar, Slice};

/// The element type of a slice or output argument, as the launch checks it against the kernel's.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Element {
    pub(crate) size: usize,
    pub(crate) name: &'static str,
}

impl Element {
    pub(super) fn of<T>() -> Self {
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
    pub(super) fn plain(arg: Arg<'a>, element: Option<Element>) -> Self {
        LaunchArg {
            arg,
            element,
            shape: None,
        }
    }

    /// Axes: 0 for a scalar, 1 for a plain view, 2 or 3 for an array view.
    pub(super) fn dims(&self) -> usize {
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
