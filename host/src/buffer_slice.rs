//! [`BufferSlice`] and [`BufferSliceMut`]: a range of a [`DeviceBuffer`], to copy to or from
//! part of it and to pass part of it to a kernel, without a copy.
//!
//! Ports that update part of a buffer between launches (Rodinia's lud, nw and pathfinder) need
//! both. A view borrows its buffer as a `&[T]` subslice does, so the rules that keep whole
//! buffers sound hold for views unchanged: a kernel writes through a `BufferSliceMut` only while
//! nothing else can reach the buffer, and async copies into a view order later work after them
//! exactly as copies into the whole buffer do.

use crate::args::{InputArg, InputData, OutputArg, OutputData};
use crate::buffer::DeviceBuffer;
use crate::device::Device;
use crate::error::{Error, Result};
use bytemuck::Pod;
use std::ops::{Bound, Range, RangeBounds};

/// Elements `range` of a [`DeviceBuffer`], read-only: `&view` is the argument for a kernel's
/// `&[T]` parameter (the kernel sees a slice of `range.len()` elements, index 0 at
/// `range.start`), and its elements copy to the host.
///
/// ```
/// use ferrocuda_host::Device;
/// let device = Device::cpu();
/// let buffer = device.upload(&[0u32, 1, 2, 3, 4, 5]).unwrap();
/// let middle = buffer.slice(2..5).unwrap();
/// assert_eq!(middle.to_vec().unwrap(), [2, 3, 4]);
/// assert!(buffer.slice(4..7).is_err()); // past the end: an error naming both
/// ```
#[derive(Clone, Copy)]
pub struct BufferSlice<'a, T: Pod> {
    buffer: &'a DeviceBuffer<T>,
    range: (usize, usize),
}

/// Elements `range` of a [`DeviceBuffer`], borrowed mutably: `&mut view` is the argument for a
/// kernel's `Out<T>` parameter, and it can be overwritten from the host (synchronously, or with
/// [`Stream::upload_async`](crate::Stream::upload_async)).
///
/// ```
/// use ferrocuda_host::Device;
/// let device = Device::cpu();
/// let mut buffer = device.alloc_zeroed::<u32>(6).unwrap();
/// buffer.slice_mut(1..3).unwrap().copy_from(&[7, 8]).unwrap();
/// assert_eq!(buffer.to_vec().unwrap(), [0, 7, 8, 0, 0, 0]);
/// ```
pub struct BufferSliceMut<'a, T: Pod> {
    buffer: &'a mut DeviceBuffer<T>,
    range: (usize, usize),
}

/// `range` of a buffer of `len` elements as a `Range`, or an error naming both.
fn checked_range(
    what: &'static str,
    range: impl RangeBounds<usize>,
    len: usize,
) -> Result<Range<usize>> {
    // In u128, so that `..=usize::MAX` is its true end, not an overflow.
    let start = match range.start_bound() {
        Bound::Included(&s) => s as u128,
        Bound::Excluded(&s) => s as u128 + 1,
        Bound::Unbounded => 0,
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e as u128 + 1,
        Bound::Excluded(&e) => e as u128,
        Bound::Unbounded => len as u128,
    };
    if start <= end && end <= len as u128 {
        return Ok(start as usize..end as usize);
    }
    Err(Error::RangeOutOfBounds {
        what,
        range: format!("{start}..{end}"),
        len,
    })
}

impl<T: Pod> DeviceBuffer<T> {
    /// Elements `range` (any range form: `2..5`, `..n`, `k..`), read-only, without a copy.
    ///
    /// # Errors
    /// [`Error::RangeOutOfBounds`] if the range is reversed or ends past the buffer.
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<BufferSlice<'_, T>> {
        let range = checked_range("DeviceBuffer::slice", range, self.len())?;
        Ok(BufferSlice {
            buffer: self,
            range: (range.start, range.end),
        })
    }

    /// Elements `range`, borrowed mutably, without a copy.
    ///
    /// # Errors
    /// As [`DeviceBuffer::slice`].
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> Result<BufferSliceMut<'_, T>> {
        let range = checked_range("DeviceBuffer::slice_mut", range, self.len())?;
        Ok(BufferSliceMut {
            buffer: self,
            range: (range.start, range.end),
        })
    }

    /// The whole buffer as a view.
    pub(crate) fn whole(&self) -> BufferSlice<'_, T> {
        BufferSlice {
            buffer: self,
            range: (0, self.len()),
        }
    }

    /// The whole buffer as a mutable view.
    pub(crate) fn whole_mut(&mut self) -> BufferSliceMut<'_, T> {
        let len = self.len();
        BufferSliceMut {
            buffer: self,
            range: (0, len),
        }
    }
}

impl<'a, T: Pod> From<&'a DeviceBuffer<T>> for BufferSlice<'a, T> {
    fn from(buffer: &'a DeviceBuffer<T>) -> Self {
        buffer.whole()
    }
}

impl<'a, T: Pod> From<&'a mut DeviceBuffer<T>> for BufferSliceMut<'a, T> {
    fn from(buffer: &'a mut DeviceBuffer<T>) -> Self {
        buffer.whole_mut()
    }
}

/// Checks that `actual` host elements match a view of `expected`.
fn check_len(what: &'static str, expected: usize, actual: usize) -> Result<()> {
    if actual == expected {
        return Ok(());
    }
    Err(Error::CopyLength {
        what,
        expected,
        actual,
    })
}

/// `range`, `len` and `is_empty` of a view, the same for both kinds.
macro_rules! view_extent {
    () => {
        /// The elements' range in the buffer.
        pub fn range(&self) -> Range<usize> {
            self.range.0..self.range.1
        }

        /// Number of elements.
        pub fn len(&self) -> usize {
            self.range.1 - self.range.0
        }

        /// Whether it has no elements.
        pub fn is_empty(&self) -> bool {
            self.len() == 0
        }
    };
}

impl<'a, T: Pod> BufferSlice<'a, T> {
    view_extent!();

    /// The device the buffer lives on.
    pub fn device(&self) -> &'a Device {
        self.buffer.device()
    }

    /// The buffer it is a part of.
    pub fn buffer(&self) -> &'a DeviceBuffer<T> {
        self.buffer
    }

    /// Elements `range` of this view (relative to it), without a copy.
    ///
    /// # Errors
    /// [`Error::RangeOutOfBounds`] if the range is reversed or ends past the view.
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<BufferSlice<'a, T>> {
        let sub = checked_range("BufferSlice::slice", range, self.len())?;
        Ok(BufferSlice {
            buffer: self.buffer,
            range: (self.range.0 + sub.start, self.range.0 + sub.end),
        })
    }

    /// Copies the elements to a new `Vec` (waiting for queued work that writes them).
    ///
    /// # Errors
    /// As [`DeviceBuffer::to_vec`].
    pub fn to_vec(&self) -> Result<Vec<T>> {
        self.buffer.range_to_vec(self.range())
    }

    /// Copies the elements into `dst`, which must have the same length.
    ///
    /// # Errors
    /// [`Error::CopyLength`] for another length; driver errors on a GPU.
    pub fn copy_to(&self, dst: &mut [T]) -> Result<()> {
        check_len("BufferSlice::copy_to", self.len(), dst.len())?;
        self.buffer.read_range(self.range(), dst)
    }
}

impl<'a, T: Pod> BufferSliceMut<'a, T> {
    view_extent!();

    /// The device the buffer lives on.
    pub fn device(&self) -> &Device {
        self.buffer.device()
    }

    /// This view, read-only (for a copy to the host, or a kernel's `&[T]` parameter).
    pub fn as_slice(&self) -> BufferSlice<'_, T> {
        BufferSlice {
            buffer: self.buffer,
            range: self.range,
        }
    }

    /// Elements `range` of this view (relative to it), borrowed mutably from it.
    ///
    /// # Errors
    /// [`Error::RangeOutOfBounds`] if the range is reversed or ends past the view.
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> Result<BufferSliceMut<'_, T>> {
        let sub = checked_range("BufferSliceMut::slice_mut", range, self.len())?;
        Ok(BufferSliceMut {
            range: (self.range.0 + sub.start, self.range.0 + sub.end),
            buffer: self.buffer,
        })
    }

    /// Overwrites the elements with `src`, which must have the same length; the rest of the
    /// buffer is untouched.
    ///
    /// # Errors
    /// [`Error::CopyLength`] for another length; driver errors on a GPU.
    pub fn copy_from(&mut self, src: &[T]) -> Result<()> {
        check_len("BufferSliceMut::copy_from", self.len(), src.len())?;
        let range = self.range();
        self.buffer.write_range(range, src)
    }

    /// Overwrites the elements with those of `src` (a view of as many elements of another
    /// buffer on the same device), on the device: queued on the default stream on a GPU.
    ///
    /// ```
    /// use ferrocuda_host::Device;
    /// let device = Device::cpu();
    /// let src = device.upload(&[1u32, 2, 3, 4]).unwrap();
    /// let mut dst = device.alloc_zeroed::<u32>(4).unwrap();
    /// dst.slice_mut(..2).unwrap().copy_from_slice_of(&src.slice(2..).unwrap()).unwrap();
    /// assert_eq!(dst.to_vec().unwrap(), [3, 4, 0, 0]);
    /// ```
    ///
    /// # Errors
    /// [`Error::CopyLength`] for another length, [`Error::WrongDevice`] if `src` lives on
    /// another device.
    pub fn copy_from_slice_of(&mut self, src: &BufferSlice<'_, T>) -> Result<()> {
        check_len("BufferSliceMut::copy_from_slice_of", self.len(), src.len())?;
        let range = self.range();
        self.buffer.write_range_from(range, src.buffer, src.range())
    }

    /// Copies the elements into `dst`, which must have the same length.
    ///
    /// # Errors
    /// As [`BufferSlice::copy_to`].
    pub fn copy_to(&self, dst: &mut [T]) -> Result<()> {
        self.as_slice().copy_to(dst)
    }

    /// Copies the elements to a new `Vec`.
    ///
    /// # Errors
    /// As [`DeviceBuffer::to_vec`].
    pub fn to_vec(&self) -> Result<Vec<T>> {
        self.as_slice().to_vec()
    }

    /// The mutable view as a kernel's output (crate-only: the async copies use it).
    pub(crate) fn as_arg_mut(&mut self) -> crate::args::Arg<'_> {
        let range = self.range();
        self.buffer.arg_range_mut(range)
    }
}

impl<T: Pod> InputData<T> for BufferSlice<'_, T> {
    fn input_arg(&self) -> InputArg<'_, T> {
        InputArg::new(self.buffer.arg_range(self.range()))
    }
}

impl<T: Pod> InputData<T> for BufferSliceMut<'_, T> {
    fn input_arg(&self) -> InputArg<'_, T> {
        InputArg::new(self.buffer.arg_range(self.range()))
    }
}

impl<T: Pod> OutputData<T> for BufferSliceMut<'_, T> {
    fn len(&self) -> usize {
        BufferSliceMut::len(self)
    }
    fn output_arg(&mut self) -> OutputArg<'_, T> {
        OutputArg::new(self.as_arg_mut())
    }
}

impl<T: Pod> std::fmt::Debug for BufferSlice<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "BufferSlice({:?} of {} on {})",
            self.range(),
            self.buffer.len(),
            self.device()
        )
    }
}

impl<T: Pod> std::fmt::Debug for BufferSliceMut<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "BufferSliceMut({:?} of {} on {})",
            self.range(),
            self.buffer.len(),
            self.device()
        )
    }
}
