//! The device memory cap and high-water mark: every device allocation of a [`Device`] (its
//! buffers, and the copies a launch stages for host data) holds a reservation against the
//! device's meter, so a limit can make "larger than the GPU" happen on any machine.

use crate::device::Device;
use crate::error::{Error, Result};

pub use crate::memory_limit::{parse_size, DEVICE_MEMORY_LIMIT_ENV};

/// Device bytes counted against a device's meter until this is dropped.
pub(crate) struct Reservation {
    device: Device,
    bytes: usize,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.device.meter().give_back(self.bytes);
    }
}

impl Device {
    /// Counts `bytes` of device memory against this device's cap until the reservation is
    /// dropped: [`Error::OutOfMemory`] naming the cap, what is in use and the pipeline if they
    /// do not fit under it.
    pub(crate) fn reserve(&self, bytes: usize) -> Result<Reservation> {
        let meter = self.meter();
        let cpu_limit = self.cpu_options().and_then(|cpu| cpu.memory_limit);
        let limit = match (meter.limit(), cpu_limit) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        meter
            .try_take(bytes, limit)
            .map_err(|in_use| {
                let limit = limit.unwrap_or(usize::MAX);
                Error::OutOfMemory {
                    device: self.to_string(),
                    requested: bytes,
                    free: limit.saturating_sub(in_use),
                    total: limit,
                    limit: Some(limit),
                }
            })
            .map(|()| Reservation {
                device: self.clone(),
                bytes,
            })
    }

    /// Counts `bytes` that already exist (memory of the program's handed to ferrocuda,
    /// `DeviceBuffer::from_cudarc`): in use and in the high-water mark, never refused.
    pub(crate) fn count_existing(&self, bytes: usize) -> Reservation {
        let _ = self.meter().try_take(bytes, None);
        Reservation {
            device: self.clone(),
            bytes,
        }
    }

    /// The cap on this device's memory, if any ([`Device::with_memory_limit`],
    /// [`DEVICE_MEMORY_LIMIT_ENV`]).
    pub fn memory_limit(&self) -> Option<usize> {
        self.meter().limit()
    }

    /// Bytes this device's allocations hold now: its [`crate::DeviceBuffer`]s and the copies of
    /// host data a running launch staged.
    pub fn memory_in_use(&self) -> usize {
        self.meter().used()
    }

    /// The high-water mark of [`Device::memory_in_use`] since the device was made or
    /// [`Device::reset_peak_memory`] was last called.
    ///
    /// ```
    /// use ferrocuda_host::Device;
    /// let device = Device::cpu();
    /// let a = device.alloc_zeroed::<f32>(1000).unwrap();
    /// drop(a);
    /// assert_eq!((device.memory_in_use(), device.peak_memory()), (0, 4000));
    /// device.reset_peak_memory();
    /// assert_eq!(device.peak_memory(), 0);
    /// ```
    pub fn peak_memory(&self) -> usize {
        self.meter().peak()
    }

    /// Starts [`Device::peak_memory`] again from what is in use now.
    pub fn reset_peak_memory(&self) {
        self.meter().reset_peak();
    }
}
