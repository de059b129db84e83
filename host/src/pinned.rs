//! [`PinnedBuffer`]: page-locked host memory, which a GPU copies to and from asynchronously and
//! at full bandwidth.

use crate::args::{InputArg, InputData, OutputArg, OutputData};
use crate::cuda::PinnedBytes;
use crate::device::Device;
use crate::error::Result;
use bytemuck::Pod;
use std::ptr::NonNull;

/// `len` elements of `T` in host memory that a GPU can copy without staging: page-locked
/// (`cuMemHostAlloc`) on a GPU device, plain memory on the CPU executor. It is a host slice
/// (`Deref<Target = [T]>`) wherever one is taken (`launch!` arguments, `ops` functions), and
/// what [`crate::Stream::upload_async`] and [`crate::Stream::download_async`] copy from and to,
/// owning it while the copy is queued.
///
/// ```
/// use ferrocuda_host::Device;
/// let device = Device::cpu();
/// let mut pinned = device.pin(&[1.0f32, 2.0, 3.0]).unwrap();
/// pinned[0] = 10.0;
/// assert_eq!(&pinned[..], &[10.0, 2.0, 3.0]);
/// assert_eq!(device.alloc_pinned::<u32>(4).unwrap().to_vec(), [0; 4]);
/// ```
pub struct PinnedBuffer<T: Pod> {
    storage: Storage<T>,
}

enum Storage<T> {
    Host(Vec<T>),
    Pinned {
        /// The elements (page-aligned, checked aligned for `T`), in `_owner`.
        ptr: NonNull<T>,
        len: usize,
        _owner: PinnedBytes,
    },
}

// SAFETY: a `PinnedBuffer` owns its elements like a `Vec<T>` (`T: Pod` is Send and Sync), and
// `PinnedBytes` is Send and Sync.
unsafe impl<T: Pod> Send for PinnedBuffer<T> {}
// SAFETY: as above; `&PinnedBuffer` only gives shared access to the elements.
unsafe impl<T: Pod> Sync for PinnedBuffer<T> {}

impl Device {
    /// A new page-locked host buffer of `len` zeroed elements (plain host memory on the CPU
    /// executor). Page-locked memory is not counted against the device's memory limit: it is the
    /// host's, and the operating system cannot page it out, so keep it to what the pipeline
    /// needs in flight.
    ///
    /// # Errors
    /// [`crate::Error::OutOfMemory`] if the host cannot lock that much; driver errors.
    pub fn alloc_pinned<T: Pod>(&self, len: usize) -> Result<PinnedBuffer<T>> {
        let bytes = len.saturating_mul(std::mem::size_of::<T>());
        let storage = match self.backend().gpu() {
            Some(gpu) if bytes > 0 => {
                let pinned = gpu.alloc_pinned(bytes)?;
                if pinned.as_ptr().addr().get() % std::mem::align_of::<T>() == 0 {
                    Storage::Pinned {
                        ptr: pinned.as_ptr().cast(),
                        len,
                        _owner: pinned,
                    }
                } else {
                    // Page-aligned memory fits every `T` but one aligned to more than a page:
                    // that one gets plain memory, which is only slower to copy.
                    Storage::Host(self.host_vec(len, |v: &mut Vec<T>| v.resize(len, T::zeroed()))?)
                }
            }
            _ => Storage::Host(self.host_vec(len, |v: &mut Vec<T>| v.resize(len, T::zeroed()))?),
        };
        Ok(PinnedBuffer { storage })
    }

    /// A new page-locked host buffer holding a copy of `data`.
    ///
    /// # Errors
    /// As [`Device::alloc_pinned`].
    pub fn pin<T: Pod>(&self, data: &[T]) -> Result<PinnedBuffer<T>> {
        let mut buffer = self.alloc_pinned(data.len())?;
        buffer.copy_from_slice(data);
        Ok(buffer)
    }
}

impl<T: Pod> PinnedBuffer<T> {
    /// Whether the memory is page-locked (a GPU's), rather than plain host memory.
    pub fn is_page_locked(&self) -> bool {
        matches!(self.storage, Storage::Pinned { .. })
    }
}

impl<T: Pod> std::ops::Deref for PinnedBuffer<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        match &self.storage {
            Storage::Host(data) => data,
            // SAFETY: `ptr` points to `len` initialised (zeroed, then only written as `T: Pod`)
            // elements, aligned for `T` (checked when allocated), owned by `_owner` for as long as `self` lives;
            // no queued copy uses them while `self` can be reached (queued work owns the buffer,
            // crate::pending), and `&self` forbids writes.
            Storage::Pinned { ptr, len, .. } => unsafe {
                std::slice::from_raw_parts(ptr.as_ptr(), *len)
            },
        }
    }
}

impl<T: Pod> std::ops::DerefMut for PinnedBuffer<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        match &mut self.storage {
            Storage::Host(data) => data,
            // SAFETY: as in `deref`; `&mut self` makes this the only access.
            Storage::Pinned { ptr, len, .. } => unsafe {
                std::slice::from_raw_parts_mut(ptr.as_ptr(), *len)
            },
        }
    }
}

impl<T: Pod> InputData<T> for PinnedBuffer<T> {
    fn len(&self) -> usize {
        <[T]>::len(self)
    }
    fn input_arg(&self) -> InputArg<'_, T> {
        (**self).input_arg()
    }
}

impl<T: Pod> OutputData<T> for PinnedBuffer<T> {
    fn len(&self) -> usize {
        <[T]>::len(self)
    }
    fn output_arg(&mut self) -> OutputArg<'_, T> {
        (**self).output_arg()
    }
}

impl<T: Pod + std::fmt::Debug> std::fmt::Debug for PinnedBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PinnedBuffer")
            .field("len", &<[T]>::len(self))
            .field("page_locked", &self.is_page_locked())
            .finish()
    }
}
