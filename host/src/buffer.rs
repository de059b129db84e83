//! [`DeviceBuffer`]: typed memory on a device.

use crate::args::{Arg, InputArg, InputData, OutputArg, OutputData};
use crate::cuda::GpuBytes;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::memory_meter::Reservation;
use crate::storage::Storage;
use aligned_vec::AVec;
use bytemuck::Pod;
use std::ops::Range;

/// `len` elements of `T` on a device: GPU memory, or host memory for the CPU executor.
///
/// Pass `&buffer` for a kernel's `&[T]` parameter and `&mut buffer` for its `Out<T>`; unlike host
/// slices, buffers stay on the device between launches.
///
/// ```
/// use ferrocuda_host::Device;
/// let device = Device::cpu();
/// let buffer = device.upload(&[1.0f32, 2.0, 3.0]).unwrap();
/// assert_eq!(buffer.len(), 3);
/// assert_eq!(buffer.to_vec().unwrap(), [1.0, 2.0, 3.0]);
/// ```
pub struct DeviceBuffer<T: Pod> {
    device: Device,
    storage: Storage<T>,
    /// Its bytes, counted against the device's memory limit and high-water mark. Declared after
    /// `storage`, so it is given back once the memory is freed (queued, on a GPU).
    _counted: Reservation,
}

impl Device {
    /// Copies `data` to a new buffer on this device.
    ///
    /// # Errors
    /// [`Error::OutOfMemory`] (with the bytes asked for and free) if it does not fit: on the CPU
    /// executor, when it needs more than the host's available memory or the device's
    /// [`memory_limit`](crate::CpuOptions::memory_limit) leaves.
    pub fn upload<T: Pod>(&self, data: &[T]) -> Result<DeviceBuffer<T>> {
        let (storage, counted) = match self.backend().gpu() {
            None => self.counted_host(data.len(), |v| v.extend_from_slice(data))?,
            Some(gpu) => {
                let counted = self.reserve(std::mem::size_of_val(data))?;
                let bytes = gpu.upload(bytemuck::cast_slice(data))?;
                let len = data.len();
                (Storage::Gpu { bytes, len }, counted)
            }
        };
        Ok(DeviceBuffer {
            device: self.clone(),
            storage,
            _counted: counted,
        })
    }

    /// A new buffer of `len` zeroed elements on this device.
    ///
    /// # Errors
    /// [`Error::OutOfMemory`] if it does not fit: on the CPU executor, when it needs more than the
    /// host's available memory or the device's
    /// [`memory_limit`](crate::CpuOptions::memory_limit) leaves.
    pub fn alloc_zeroed<T: Pod>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        let (storage, counted) = match self.backend().gpu() {
            None => self.counted_host(len, |v| v.resize(len, T::zeroed()))?,
            Some(gpu) => {
                let counted = self.reserve(len.saturating_mul(std::mem::size_of::<T>()))?;
                let bytes = gpu.alloc_zeroed(len.saturating_mul(std::mem::size_of::<T>()))?;
                (Storage::Gpu { bytes, len }, counted)
            }
        };
        Ok(DeviceBuffer {
            device: self.clone(),
            storage,
            _counted: counted,
        })
    }
}

/// Host allocations from this size on are checked against the host's available memory.
const CHECK_AVAILABLE_FROM: usize = 64 << 20;

impl Device {
    /// The storage of a CPU buffer, counted against the device's memory limit: allocated first,
    /// so that [`Device::host_vec`]'s own check sees what is held without it.
    fn counted_host<T: Pod>(
        &self,
        len: usize,
        fill: impl FnOnce(&mut AVec<T>),
    ) -> Result<(Storage<T>, Reservation)> {
        let data = self.host_vec(len, fill)?;
        let counted = self.reserve(std::mem::size_of_val(data.as_slice()))?;
        Ok((Storage::Host(data), counted))
    }

    /// `len` elements of host memory filled by `fill` (which must not grow it past `len`), or
    /// [`Error::OutOfMemory`] rather than an abort when they need more than the host has
    /// available or the device's memory limit leaves.
    pub(crate) fn host_vec<T: Pod, V: HostVec<T>>(
        &self,
        len: usize,
        fill: impl FnOnce(&mut V),
    ) -> Result<V> {
        let bytes = len.saturating_mul(std::mem::size_of::<T>());
        // Linux overcommits: a reservation larger than memory may succeed and the process be
        // killed when it is filled, so large ones are checked against what is available first
        // (small ones skip reading /proc/meminfo).
        let cpu_limit = self.cpu_options().and_then(|cpu| cpu.memory_limit);
        let limited = cpu_limit.is_some();
        let memory = if limited || bytes >= CHECK_AVAILABLE_FROM {
            self.host_memory_info()
        } else {
            Err(String::new())
        };
        let out_of_memory = || {
            let (free, total) = memory.clone().unwrap_or((0, 0));
            Error::OutOfMemory {
                device: match self.is_gpu() {
                    true => format!("the host (a copy from {self})"),
                    false => self.to_string(),
                },
                requested: bytes,
                free,
                total,
                limit: cpu_limit,
            }
        };
        if memory.as_ref().is_ok_and(|&(free, _)| bytes > free) {
            return Err(out_of_memory());
        }
        let mut data = V::try_with_capacity(len).ok_or_else(out_of_memory)?;
        advise_huge_pages(data.as_ptr(), len.saturating_mul(std::mem::size_of::<T>()));
        fill(&mut data);
        debug_assert_eq!(data.len(), len, "fill made the promised length");
        Ok(data)
    }
}

/// What [`Device::host_vec`] can allocate: a `Vec` (a copy for the caller) or a cache-line
/// aligned `AVec` (a CPU device's buffer).
pub(crate) trait HostVec<T>: std::ops::Deref<Target = [T]> + Sized {
    /// An empty vector with room for exactly `len` elements, or `None` if it cannot be had.
    fn try_with_capacity(len: usize) -> Option<Self>;
}

impl<T> HostVec<T> for Vec<T> {
    fn try_with_capacity(len: usize) -> Option<Self> {
        let mut data = Vec::new();
        data.try_reserve_exact(len).ok()?;
        Some(data)
    }
}

impl<T> HostVec<T> for AVec<T> {
    fn try_with_capacity(len: usize) -> Option<Self> {
        let mut data = AVec::new(0);
        data.try_reserve_exact(len).ok()?;
        Some(data)
    }
}

/// Asks Linux to back a large allocation with transparent huge pages (2 MiB) before it is
/// first touched: a kernel streaming through buffers of tens of megabytes then misses the TLB
/// once per 2 MiB rather than once per 4 KiB, as NumPy arranges for its arrays. Advice only:
/// with huge pages off (or elsewhere than Linux) nothing changes.
fn advise_huge_pages<T>(data: *const T, bytes: usize) {
    #[cfg(target_os = "linux")]
    {
        const FROM_BYTES: usize = 8 << 20;
        if bytes < FROM_BYTES {
            return;
        }
        // SAFETY: `sysconf` reads a configuration value; no memory is passed.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(0);
        if page == 0 {
            return;
        }
        let start = data as usize;
        let (first, end) = (start.next_multiple_of(page), (start + bytes) / page * page);
        if first < end {
            // SAFETY: the whole pages inside the `bytes` allocated at `data` (`host_vec`'s
            // capacity, which `host_vec` owns and has not touched yet); the advice
            // changes how they are backed, not what they hold (they are not touched yet), and
            // a refusal is an error code, ignored.
            unsafe { libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE) };
        }
    }
}

impl<T: Pod> DeviceBuffer<T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.storage.len()
    }

    /// Whether it holds no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The device it lives on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// Copies the elements to a new `Vec` (waiting for queued work that writes them).
    ///
    /// # Errors
    /// [`Error::OutOfMemory`] if the host cannot hold the copy (on the CPU executor: more than
    /// the host's available memory or what the device's
    /// [`memory_limit`](crate::CpuOptions::memory_limit) leaves); driver errors on a GPU.
    pub fn to_vec(&self) -> Result<Vec<T>> {
        self.whole().to_vec()
    }

    /// Copies the elements into `dst`, which must have the same length. A part of the buffer:
    /// [`DeviceBuffer::slice`], then [`BufferSlice::copy_to`](crate::BufferSlice::copy_to).
    ///
    /// # Errors
    /// [`Error::CopyLength`] for another length; driver errors on a GPU.
    pub fn copy_to(&self, dst: &mut [T]) -> Result<()> {
        self.whole().copy_to(dst)
    }

    /// Overwrites the elements with `src`, which must have the same length. A part of the
    /// buffer: [`DeviceBuffer::slice_mut`], then [`BufferSliceMut::copy_from`](crate::BufferSliceMut::copy_from).
    ///
    /// # Errors
    /// [`Error::CopyLength`] for another length; driver errors on a GPU.
    pub fn copy_from(&mut self, src: &[T]) -> Result<()> {
        self.whole_mut().copy_from(src)
    }

    /// Overwrites the elements with those of `src`, another buffer of the same length on the same
    /// device, without a trip through the host. On a GPU the copy is queued on the default stream
    /// (later launches and copies see it); timing it gives the device's copy bandwidth.
    ///
    /// ```
    /// use ferrocuda_host::Device;
    /// let device = Device::cpu();
    /// let src = device.upload(&[1u32, 2, 3]).unwrap();
    /// let mut dst = device.alloc_zeroed::<u32>(3).unwrap();
    /// dst.copy_from_buffer(&src).unwrap();
    /// assert_eq!(dst.to_vec().unwrap(), [1, 2, 3]);
    /// ```
    ///
    /// # Errors
    /// [`Error::CopyLength`] for different lengths, [`Error::WrongDevice`] if `src` lives on
    /// another device.
    pub fn copy_from_buffer(&mut self, src: &DeviceBuffer<T>) -> Result<()> {
        self.whole_mut().copy_from_slice_of(&src.whole())
    }

    /// A GPU buffer of `len` elements in `bytes` (memory of the program's, already allocated).
    pub(crate) fn from_gpu_bytes(device: &Device, bytes: GpuBytes, len: usize) -> Self {
        DeviceBuffer {
            device: device.clone(),
            _counted: device.count_existing(bytes.len_bytes()),
            storage: Storage::Gpu { bytes, len },
        }
    }

    /// A GPU buffer's bytes and length, taken out of it; the buffer back (boxed: it is large
    /// beside the `Ok` side) on the CPU executor.
    pub(crate) fn into_gpu_bytes(
        self,
    ) -> std::result::Result<(Device, GpuBytes, usize), Box<Self>> {
        match self.storage {
            Storage::Gpu { bytes, len } => Ok((self.device, bytes, len)),
            storage => Err(Box::new(DeviceBuffer { storage, ..self })),
        }
    }

    /// A GPU buffer's bytes.
    pub(crate) fn gpu_bytes(&self) -> Option<&GpuBytes> {
        self.storage.gpu_bytes()
    }

    /// A GPU buffer's bytes, to write.
    pub(crate) fn gpu_bytes_mut(&mut self) -> Option<&mut GpuBytes> {
        self.storage.gpu_bytes_mut()
    }

    /// Elements `range` in a new `Vec`. The caller checked the range.
    pub(crate) fn range_to_vec(&self, range: Range<usize>) -> Result<Vec<T>> {
        let len = range.len();
        match &self.storage {
            Storage::Host(data) => self
                .device
                .host_vec(len, |out: &mut Vec<T>| out.extend_from_slice(&data[range])),
            Storage::Gpu { .. } => {
                let mut out = self
                    .device
                    .host_vec(len, |out: &mut Vec<T>| out.resize(len, T::zeroed()))?;
                self.read_range(range, &mut out)?;
                Ok(out)
            }
        }
    }

    /// Elements `range` of `self` into `dst` (as long), waiting for queued work that writes them.
    /// The caller checked the range.
    pub(crate) fn read_range(&self, range: Range<usize>, dst: &mut [T]) -> Result<()> {
        debug_assert!(range.end <= self.len() && range.len() == dst.len());
        self.storage.read(self.device.backend(), range, dst)
    }

    /// Overwrites elements `range` with `src` (as long). The caller checked the range.
    pub(crate) fn write_range(&mut self, range: Range<usize>, src: &[T]) -> Result<()> {
        debug_assert!(range.end <= self.len() && range.len() == src.len());
        self.storage.write(self.device.backend(), range, src)
    }

    /// Overwrites elements `range` with elements `from` of `src` (as many), on the device. The
    /// caller checked both ranges.
    pub(crate) fn write_range_from(
        &mut self,
        range: Range<usize>,
        src: &DeviceBuffer<T>,
        from: Range<usize>,
    ) -> Result<()> {
        debug_assert!(range.end <= self.len() && from.end <= src.len());
        debug_assert_eq!(range.len(), from.len());
        let wrong_device = || Error::WrongDevice {
            what: "a buffer",
            owner: src.device.to_string(),
            device: self.device.to_string(),
        };
        let backend = self.device.backend();
        match self.storage.copy_within(backend, range, &src.storage, from) {
            Some(copied) => copied,
            None => Err(wrong_device()),
        }
    }

    /// Elements `range` as a kernel's input. The caller checked the range.
    pub(crate) fn arg_range(&self, range: Range<usize>) -> Arg<'_> {
        self.storage.arg(range)
    }

    /// Elements `range` as a kernel's output. The caller checked the range.
    pub(crate) fn arg_range_mut(&mut self, range: Range<usize>) -> Arg<'_> {
        self.storage.arg_mut(range)
    }

    pub(crate) fn as_arg(&self) -> Arg<'_> {
        self.arg_range(0..self.len())
    }

    pub(crate) fn as_arg_mut(&mut self) -> Arg<'_> {
        self.arg_range_mut(0..self.len())
    }
}

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

#[cfg(test)]
mod tests {
    use crate::args::Arg;
    use crate::Device;

    #[test]
    // `Device::cpu()` asks rayon for its thread count, whose crossbeam-epoch breaks Stacked
    // Borrows (scripts/miri.sh runs launches under Tree Borrows instead).
    #[cfg_attr(miri, ignore = "rayon's crossbeam-epoch under Stacked Borrows")]
    fn cpu_buffers_start_on_a_cache_line() {
        let device = Device::cpu();
        for len in [1, 3, 1000, 3 << 20] {
            let bytes = device.alloc_zeroed::<f32>(len).unwrap();
            let uploaded = device.upload(&vec![7u8; len]).unwrap();
            for arg in [bytes.as_arg(), uploaded.as_arg()] {
                let Arg::HostSlice { bytes, .. } = arg else {
                    panic!("a CPU buffer is host memory")
                };
                assert_eq!(bytes.as_ptr() as usize % 64, 0, "{len}");
            }
            assert_eq!(uploaded.to_vec().unwrap(), vec![7u8; len]);
        }
    }
}
