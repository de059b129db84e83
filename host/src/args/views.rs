//! The typed views a launch lends a kernel ([`InputArg`], [`OutputArg`]) and the data that
//! hands them out ([`InputData`], [`OutputData`]): host slices, `Vec`s and arrays here; device
//! buffers, pinned buffers and the program's cudarc slices where those types are defined.

use super::arg::Arg;
use bytemuck::Pod;
use core::marker::PhantomData;

/// Memory of `T`s that a kernel reads, lent for one launch: made by ferrocuda only (from `[T]`,
/// `Vec<T>`, `[T; N]` or a [`DeviceBuffer<T>`], through [`InputData::input_arg`]), so its
/// length is always that of the memory behind it.
///
/// [`DeviceBuffer<T>`]: crate::DeviceBuffer
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
///
/// [`DeviceBuffer`]: crate::DeviceBuffer
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
///
/// [`DeviceBuffer`]: crate::DeviceBuffer
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
