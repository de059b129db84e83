//! Launch configuration, argument passing, and the checks every launch makes.

use crate::buffer::DeviceBuffer;
use crate::error::{Error, Result};
use crate::ptx::PtxEntry;
use crate::stream::Stream;
use bytemuck::Pod;
use ferrocuda_std::abi::{
    KernelInfo, Output, ParamClass, Scalar, Slice, LENGTH_BYTES, POINTER_BYTES,
};
use ferrocuda_std::Dim3;

/// Grid and block sizes of a launch, plus its optional stream and dynamic shared memory: Numba's
/// `kernel[blocks, threads, stream, shared_bytes]`. `Copy`: it holds the stream by reference, so
/// one config can serve several launches.
///
/// ```
/// use ferrocuda_host::{Dim3, LaunchConfig};
/// let config = LaunchConfig::new(4096, 256);
/// assert_eq!((config.grid, config.block), (Dim3::new(4096, 1, 1), Dim3::new(256, 1, 1)));
/// let tiles = LaunchConfig::new((64, 64), (16, 16)).with_shared_mem_bytes(2048);
/// assert_eq!(tiles.block.count(), 256);
/// let n: usize = 1000;
/// let from_usize = LaunchConfig::try_new(n.div_ceil(256), 256).unwrap();
/// assert_eq!(from_usize.grid, Dim3::new(4, 1, 1));
/// assert!(LaunchConfig::try_new(1usize << 40, 256).is_err());
/// ```
#[derive(Clone, Copy, Debug)]
pub struct LaunchConfig<'s> {
    /// Blocks in the grid.
    pub grid: Dim3,
    /// Threads per block.
    pub block: Dim3,
    /// Dynamic shared memory per block, in bytes.
    pub shared_mem_bytes: u32,
    /// The stream to launch on; `None` is the device's default stream.
    pub stream: Option<&'s Stream>,
}

impl LaunchConfig<'static> {
    /// `grid` blocks of `block` threads, on the default stream, without dynamic shared memory.
    pub fn new(grid: impl Into<Dim3>, block: impl Into<Dim3>) -> Self {
        LaunchConfig {
            grid: grid.into(),
            block: block.into(),
            shared_mem_bytes: 0,
            stream: None,
        }
    }

    /// As [`new`](Self::new), from sizes of any integer type (`n.div_ceil(256)` is a `usize`) or
    /// tuples and arrays of them: what [`launch!`](crate::launch!) calls.
    ///
    /// # Errors
    /// [`Error::LaunchDimension`] for a size below 0 or above `u32::MAX`, which no CUDA launch
    /// can have (never truncated).
    pub fn try_new(grid: impl LaunchDims, block: impl LaunchDims) -> Result<Self> {
        Ok(LaunchConfig::new(
            grid.to_dim3("grid")?,
            block.to_dim3("block")?,
        ))
    }
}

impl<'s> LaunchConfig<'s> {
    /// The same launch on `stream`.
    pub fn on_stream<'t>(self, stream: &'t Stream) -> LaunchConfig<'t> {
        LaunchConfig {
            grid: self.grid,
            block: self.block,
            shared_mem_bytes: self.shared_mem_bytes,
            stream: Some(stream),
        }
    }

    /// The same launch with `bytes` of dynamic shared memory per block.
    pub fn with_shared_mem_bytes(mut self, bytes: u32) -> Self {
        self.shared_mem_bytes = bytes;
        self
    }
}

/// A grid or block size for [`LaunchConfig::try_new`] and [`launch!`](crate::launch!): a
/// [`Dim3`], an integer of any primitive type, or a tuple or array of one to three of them
/// (`(16, 16)`, `(cols.div_ceil(32), rows.div_ceil(32))`, `[8, 8, 4]`).
pub trait LaunchDims {
    /// The size as a `Dim3`; `what` ("grid" or "block") names it in the error.
    ///
    /// # Errors
    /// [`Error::LaunchDimension`] for a component outside `0..=u32::MAX`.
    fn to_dim3(self, what: &'static str) -> Result<Dim3>;
}

/// One component of a launch size: a primitive integer. Sealed: [`LaunchDims`] is implemented
/// for every type of it.
pub trait DimComponent: Copy + sealed::Sealed + core::fmt::Display {
    /// The value as a CUDA dimension, if it is one.
    fn to_u32(self) -> Option<u32>;
}

mod sealed {
    /// Keeps [`super::DimComponent`] to the primitive integers.
    pub trait Sealed {}
}

macro_rules! dim_component {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl DimComponent for $t {
            fn to_u32(self) -> Option<u32> {
                u32::try_from(self).ok()
            }
        }
    )*};
}
dim_component!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize);

/// `value` as dimension `axis` of `what`, or the error naming it.
fn component(what: &'static str, axis: char, value: impl DimComponent) -> Result<u32> {
    value.to_u32().ok_or_else(|| Error::LaunchDimension {
        what,
        axis,
        value: value.to_string(),
    })
}

impl LaunchDims for Dim3 {
    fn to_dim3(self, _what: &'static str) -> Result<Dim3> {
        Ok(self)
    }
}
impl<A: DimComponent> LaunchDims for A {
    fn to_dim3(self, what: &'static str) -> Result<Dim3> {
        Ok(Dim3::new(component(what, 'x', self)?, 1, 1))
    }
}
impl<A: DimComponent, B: DimComponent> LaunchDims for (A, B) {
    fn to_dim3(self, what: &'static str) -> Result<Dim3> {
        (self.0, self.1, 1u32).to_dim3(what)
    }
}
impl<A: DimComponent, B: DimComponent, C: DimComponent> LaunchDims for (A, B, C) {
    fn to_dim3(self, what: &'static str) -> Result<Dim3> {
        let (x, y, z) = self;
        Ok(Dim3::new(
            component(what, 'x', x)?,
            component(what, 'y', y)?,
            component(what, 'z', z)?,
        ))
    }
}
impl<A: DimComponent> LaunchDims for [A; 1] {
    fn to_dim3(self, what: &'static str) -> Result<Dim3> {
        self[0].to_dim3(what)
    }
}
impl<A: DimComponent> LaunchDims for [A; 2] {
    fn to_dim3(self, what: &'static str) -> Result<Dim3> {
        (self[0], self[1]).to_dim3(what)
    }
}
impl<A: DimComponent> LaunchDims for [A; 3] {
    fn to_dim3(self, what: &'static str) -> Result<Dim3> {
        (self[0], self[1], self[2]).to_dim3(what)
    }
}

/// One kernel argument as the launch path sees it: where its data lives, and its length.
///
/// Made by [`KernelArg`]; host slices are copied to a GPU before the launch (and outputs back
/// after it), device buffers are used in place.
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
        /// Number of elements.
        len: usize,
    },
    /// GPU memory the kernel writes.
    GpuOutput {
        /// The buffer.
        buffer: &'a mut crate::cuda::GpuBytes,
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
            | Arg::GpuOutput { len, .. } => Some(*len),
            Arg::Scalar(_) => None,
        }
    }

    /// The GPU a device buffer lives on; `None` for host data and scalars.
    pub(crate) fn gpu_ordinal(&self) -> Option<usize> {
        match self {
            Arg::GpuSlice { buffer, .. } => Some(buffer.ordinal()),
            Arg::GpuOutput { buffer, .. } => Some(buffer.ordinal()),
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
}

/// Converts a value passed to a launch into an [`Arg`] for a kernel parameter of kind `K`
/// (`ferrocuda_std::abi::{Slice, Output, Scalar}`): what makes wrong argument types fail to compile.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be passed for a kernel parameter of kind `{K}`",
    note = "for a `&[T]` parameter (Slice<T>) pass `&[T]`, `&[T; N]`, `&Vec<T>` or \
            `&DeviceBuffer<T>`; for an `Out<T>` (Output<T>) pass `&mut [T]`, `&mut [T; N]`, \
            `&mut Vec<T>` or `&mut DeviceBuffer<T>`; for a scalar (Scalar<T>) pass a `T`, with \
            the kernel's exact `T`"
)]
pub trait KernelArg<'a, K> {
    /// The argument.
    fn into_arg(self) -> Arg<'a>;
}

impl<'a, T: Pod, D: InputData<T> + ?Sized> KernelArg<'a, Slice<T>> for &'a D {
    fn into_arg(self) -> Arg<'a> {
        self.input_arg()
    }
}
impl<'a, T: Pod, D: OutputData<T> + ?Sized> KernelArg<'a, Output<T>> for &'a mut D {
    fn into_arg(self) -> Arg<'a> {
        self.output_arg()
    }
}
impl<'a, T: Pod> KernelArg<'a, Scalar<T>> for T {
    fn into_arg(self) -> Arg<'a> {
        Arg::Scalar(ParamSlot::new(self))
    }
}

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
pub trait InputData<T: Pod> {
    /// Number of elements.
    fn len(&self) -> usize;

    /// Whether it has no elements.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The launch argument that reads it.
    fn input_arg(&self) -> Arg<'_>;
}

/// Memory a kernel writes: host memory (copied back from a GPU after the launch) or a
/// [`DeviceBuffer`] (written in place). `&mut data` is the argument for an `Out<T>` kernel
/// parameter, and what `ferrocuda::ops` functions take for their outputs.
pub trait OutputData<T: Pod> {
    /// Number of elements.
    fn len(&self) -> usize;

    /// Whether it has no elements.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The launch argument that writes it.
    fn output_arg(&mut self) -> Arg<'_>;
}

impl<T: Pod> InputData<T> for [T] {
    fn len(&self) -> usize {
        <[T]>::len(self)
    }
    fn input_arg(&self) -> Arg<'_> {
        Arg::HostSlice {
            bytes: bytemuck::cast_slice(self),
            len: <[T]>::len(self),
        }
    }
}
impl<T: Pod> OutputData<T> for [T] {
    fn len(&self) -> usize {
        <[T]>::len(self)
    }
    fn output_arg(&mut self) -> Arg<'_> {
        let len = <[T]>::len(self);
        Arg::HostOutput {
            bytes: bytemuck::cast_slice_mut(self),
            len,
        }
    }
}

/// `Vec<T>` and `[T; N]` are their slices.
macro_rules! as_slice_data {
    ($ty:ty $(, $n:ident)?) => {
        impl<T: Pod $(, const $n: usize)?> InputData<T> for $ty {
            fn len(&self) -> usize {
                self.as_slice().len()
            }
            fn input_arg(&self) -> Arg<'_> {
                self.as_slice().input_arg()
            }
        }
        impl<T: Pod $(, const $n: usize)?> OutputData<T> for $ty {
            fn len(&self) -> usize {
                self.as_slice().len()
            }
            fn output_arg(&mut self) -> Arg<'_> {
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
    fn input_arg(&self) -> Arg<'_> {
        self.as_arg()
    }
}
impl<T: Pod> OutputData<T> for DeviceBuffer<T> {
    fn len(&self) -> usize {
        DeviceBuffer::len(self)
    }
    fn output_arg(&mut self) -> Arg<'_> {
        self.as_arg_mut()
    }
}

/// A tuple of arguments for a kernel whose parameter kinds are the tuple `P`.
pub trait KernelArgs<'a, P> {
    /// The arguments, in order.
    fn into_args(self) -> Vec<Arg<'a>>;
}

macro_rules! impl_kernel_args {
    ($($arg:ident: $kind:ident),*) => {
        impl<'a, $($arg: KernelArg<'a, $kind>, $kind,)*> KernelArgs<'a, ($($kind,)*)> for ($($arg,)*) {
            #[allow(non_snake_case)]
            fn into_args(self) -> Vec<Arg<'a>> {
                let ($($arg,)*) = self;
                vec![$($arg.into_arg()),*]
            }
        }
    };
}
impl_kernel_args!();
impl_kernel_args!(A0: K0);
impl_kernel_args!(A0: K0, A1: K1);
impl_kernel_args!(A0: K0, A1: K1, A2: K2);
impl_kernel_args!(A0: K0, A1: K1, A2: K2, A3: K3);
impl_kernel_args!(A0: K0, A1: K1, A2: K2, A3: K3, A4: K4);
impl_kernel_args!(A0: K0, A1: K1, A2: K2, A3: K3, A4: K4, A5: K5);
impl_kernel_args!(A0: K0, A1: K1, A2: K2, A3: K3, A4: K4, A5: K5, A6: K6);
impl_kernel_args!(A0: K0, A1: K1, A2: K2, A3: K3, A4: K4, A5: K5, A6: K6, A7: K7);
impl_kernel_args!(A0: K0, A1: K1, A2: K2, A3: K3, A4: K4, A5: K5, A6: K6, A7: K7, A8: K8);
impl_kernel_args!(A0: K0, A1: K1, A2: K2, A3: K3, A4: K4, A5: K5, A6: K6, A7: K7, A8: K8, A9: K9);
impl_kernel_args!(A0: K0, A1: K1, A2: K2, A3: K3, A4: K4, A5: K5, A6: K6, A7: K7, A8: K8, A9: K9, A10: K10);
impl_kernel_args!(A0: K0, A1: K1, A2: K2, A3: K3, A4: K4, A5: K5, A6: K6, A7: K7, A8: K8, A9: K9, A10: K10, A11: K11);

/// The host's packing of `args` agrees with the PTX entry's parameter list.
pub(crate) fn check_abi(info: &KernelInfo, entry: &PtxEntry, args: &[Arg<'_>]) -> Result<()> {
    let host: Vec<usize> = args.iter().flat_map(Arg::ptx_param_sizes).collect();
    debug_assert_eq!(host, info.ptx_param_sizes().collect::<Vec<_>>());
    if host != entry.param_sizes {
        return Err(Error::AbiMismatch {
            kernel: info.name,
            host,
            ptx: entry.param_sizes.clone(),
        });
    }
    Ok(())
}

/// In debug builds, the PTX parameter sizes `args` must be packed into: what `check_abi` compared
/// with the PTX. Taken before packing, for [`debug_check_packed`].
pub(crate) fn expected_packing(args: &[Arg<'_>]) -> Option<Vec<usize>> {
    cfg!(debug_assertions).then(|| args.iter().flat_map(Arg::ptx_param_sizes).collect())
}

/// What a backend actually packed matches [`expected_packing`]: the guard that the two packers
/// (CPU, GPU) never drift from `Arg::ptx_param_sizes`, which the PTX was checked against.
pub(crate) fn debug_check_packed(expected: Option<Vec<usize>>, slots: &[ParamSlot]) {
    if let Some(expected) = expected {
        let packed: Vec<usize> = slots.iter().map(ParamSlot::size).collect();
        assert_eq!(
            packed, expected,
            "packed parameter slots differ from the sizes checked against the PTX"
        );
    }
}

/// Parameters declared `same_len` have equal lengths.
pub(crate) fn check_lengths(info: &KernelInfo, args: &[Arg<'_>]) -> Result<()> {
    for group in info.same_len {
        let (&first, rest) = group
            .split_first()
            .expect("same_len groups have two or more");
        let first_len = args[first].elements().unwrap_or(0);
        for &other in rest {
            let other_len = args[other].elements().unwrap_or(0);
            if other_len != first_len {
                return Err(Error::LengthMismatch {
                    kernel: info.name,
                    first: info.params[first].name,
                    first_len,
                    second: info.params[other].name,
                    second_len: other_len,
                });
            }
        }
    }
    debug_assert!(info
        .params
        .iter()
        .zip(args)
        .all(|(p, a)| (p.class == ParamClass::Scalar) == a.elements().is_none()));
    Ok(())
}

/// Launches a kernel, Numba style: `launch!(module, kernel[grid, block](args...))`.
///
/// `grid` and `block` are [`LaunchDims`]: integers of any type (`256`, `n.div_ceil(256)`),
/// tuples or arrays of them (`(16, 16)`, `[8, 8, 4]`) or a [`Dim3`]; a size that is no CUDA
/// dimension (negative, or above `u32::MAX`) is an [`Error::LaunchDimension`]. Optional further
/// items: a [`Stream`] and the dynamic shared memory in bytes (`[grid, block, stream, bytes]`),
/// or the dynamic shared memory alone, named, with or without a stream
/// (`[grid, block; shared = bytes]`, `[grid, block, stream; shared = bytes]`).
/// Arguments: `&[T]`/`&Vec<T>`/`&DeviceBuffer<T>` for `&[T]` parameters, `&mut [T]`/
/// `&mut Vec<T>`/`&mut DeviceBuffer<T>` for `Out<T>`, values for scalars. Host data is copied to
/// the GPU and outputs back; device buffers stay where they are. Expands to [`Module::launch`].
///
/// ```ignore
/// launch!(kernels, vector_add[n.div_ceil(256), 256](&a, &b, &mut out))?;
/// launch!(kernels, saxpy[blocks, 256, stream](2.0f32, &x, &mut y))?;
/// launch!(kernels, histogram[blocks, 256; shared = 4 * bins](&x, &mut counts, lo, hi))?;
/// ```
///
/// [`Module::launch`]: crate::Module::launch
#[macro_export]
macro_rules! launch {
    (@config $module:expr, $kernel:path, $config:expr, ($($arg:expr),* $(,)?)) => {
        match $config {
            ::core::result::Result::Ok(config) => $module.launch(&$kernel, config, ($($arg,)*)),
            ::core::result::Result::Err(error) => ::core::result::Result::Err(error),
        }
    };
    ($module:expr, $kernel:path [$grid:expr, $block:expr] $args:tt) => {
        $crate::launch!(@config $module, $kernel, $crate::LaunchConfig::try_new($grid, $block), $args)
    };
    ($module:expr, $kernel:path [$grid:expr, $block:expr; shared = $shared:expr] $args:tt) => {
        $crate::launch!(
            @config $module,
            $kernel,
            $crate::LaunchConfig::try_new($grid, $block).map(|c| c.with_shared_mem_bytes($shared)),
            $args
        )
    };
    ($module:expr, $kernel:path [$grid:expr, $block:expr, $stream:expr] $args:tt) => {
        $crate::launch!(
            @config $module,
            $kernel,
            $crate::LaunchConfig::try_new($grid, $block).map(|c| c.on_stream(&$stream)),
            $args
        )
    };
    ($module:expr, $kernel:path [$grid:expr, $block:expr, $stream:expr; shared = $shared:expr] $args:tt) => {
        $crate::launch!($module, $kernel [$grid, $block, $stream, $shared] $args)
    };
    ($module:expr, $kernel:path [$grid:expr, $block:expr, $stream:expr, $shared:expr] $args:tt) => {
        $crate::launch!(
            @config $module,
            $kernel,
            $crate::LaunchConfig::try_new($grid, $block)
                .map(|c| c.on_stream(&$stream).with_shared_mem_bytes($shared)),
            $args
        )
    };
}
