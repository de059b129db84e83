//! One kernel argument as the backends see it ([`Arg`]: where its data lives) and the bytes of one
//! PTX parameter ([`ParamSlot`]): what the CUDA backend and the CPU executor read, below the
//! typed views and conversions of the other `args/` files.

use bytemuck::Pod;
use ferrocuda_std::abi::{LENGTH_BYTES, POINTER_BYTES};

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
