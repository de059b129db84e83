//! The device memory cap a program sets from outside: [`DEVICE_MEMORY_LIMIT_ENV`] and the sizes
//! it reads, and the [`MemoryMeter`] a device counts its allocations with against its cap. Plain
//! data at the bottom of the crate, so that the error messages can name the variable and
//! `device.rs` can hold its meter without importing the reservations (`memory_meter.rs`) that
//! sit above `Device`.

use std::sync::atomic::{AtomicUsize, Ordering};

/// The environment variable that caps a device's memory (see [`Device::with_memory_limit`](crate::Device::with_memory_limit)):
/// bytes, or a size such as `64MiB`, `1.5GiB` or `500MB`.
pub const DEVICE_MEMORY_LIMIT_ENV: &str = "FERROCUDA_DEVICE_MEMORY_LIMIT";

/// The cap [`DEVICE_MEMORY_LIMIT_ENV`] sets, `None` when unset; a value it cannot mean is said
/// on stderr and ignored.
pub(crate) fn env_memory_limit() -> Option<usize> {
    let value = std::env::var(DEVICE_MEMORY_LIMIT_ENV).ok()?;
    match parse_size(&value) {
        Some(bytes) => Some(bytes),
        None => {
            eprintln!(
                "ferrocuda: {DEVICE_MEMORY_LIMIT_ENV}={value:?} is not a size (e.g. 67108864, \
                 64MiB, 1.5GiB, 500MB); no device memory limit"
            );
            None
        }
    }
}

/// A size in bytes: a number with an optional unit, binary (`KiB`, `MiB`, `GiB`, `TiB`) or
/// decimal (`kB`, `MB`, `GB`, `TB`); `B` or none is bytes. Case and spaces do not matter.
pub fn parse_size(text: &str) -> Option<usize> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let scale: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kib" => 1024.0,
        "m" | "mib" => 1024.0 * 1024.0,
        "g" | "gib" => 1024.0 * 1024.0 * 1024.0,
        "t" | "tib" => 1024.0f64.powi(4),
        "kb" => 1e3,
        "mb" => 1e6,
        "gb" => 1e9,
        "tb" => 1e12,
        _ => return None,
    };
    if !number.contains('.') && scale == 1.0 {
        return number.parse().ok();
    }
    let value: f64 = number.parse().ok()?;
    let bytes = (value * scale).round();
    (bytes.is_finite() && bytes < usize::MAX as f64).then_some(bytes as usize)
}

/// Bytes a device's allocations hold now and at most since the last reset, against its cap.
#[derive(Debug, Default)]
pub(crate) struct MemoryMeter {
    /// The cap, if any: `Device::with_memory_limit` or [`DEVICE_MEMORY_LIMIT_ENV`].
    limit: Option<usize>,
    used: AtomicUsize,
    peak: AtomicUsize,
}

impl MemoryMeter {
    pub(crate) fn new(limit: Option<usize>) -> MemoryMeter {
        MemoryMeter {
            limit,
            ..MemoryMeter::default()
        }
    }

    pub(crate) fn limit(&self) -> Option<usize> {
        self.limit
    }

    pub(crate) fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    pub(crate) fn peak(&self) -> usize {
        self.peak.load(Ordering::Relaxed)
    }

    /// Starts the high-water mark again from what is held now.
    pub(crate) fn reset_peak(&self) {
        self.peak.store(self.used(), Ordering::Relaxed);
    }

    /// Counts `bytes` more if they fit under `limit` (the tighter of the cap and, on the CPU
    /// executor, its own memory limit); `Err(in use)` if not.
    pub(crate) fn try_take(
        &self,
        bytes: usize,
        limit: Option<usize>,
    ) -> core::result::Result<(), usize> {
        let mut used = self.used();
        loop {
            let after = used.checked_add(bytes).ok_or(used)?;
            if limit.is_some_and(|limit| after > limit) {
                return Err(used);
            }
            match self
                .used
                .compare_exchange_weak(used, after, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => {
                    self.peak.fetch_max(after, Ordering::Relaxed);
                    return Ok(());
                }
                Err(now) => used = now,
            }
        }
    }

    pub(crate) fn give_back(&self, bytes: usize) {
        self.used.fetch_sub(bytes, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_read_with_binary_and_decimal_units() {
        for (text, bytes) in [
            ("67108864", 67_108_864),
            ("64MiB", 64 << 20),
            (" 64 mib ", 64 << 20),
            ("1.5GiB", 3 << 29),
            ("512KiB", 512 << 10),
            ("500MB", 500_000_000),
            ("2kB", 2000),
            ("7B", 7),
            ("1T", 1 << 40),
        ] {
            assert_eq!(parse_size(text), Some(bytes), "{text}");
        }
        for bad in ["", "MiB", "64 MiBs", "-1", "1e9", "6.4.1MiB", "64 XB"] {
            assert_eq!(parse_size(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn the_meter_refuses_past_the_limit_and_keeps_the_high_water_mark() {
        let meter = MemoryMeter::new(Some(100));
        meter.try_take(60, meter.limit()).unwrap();
        assert_eq!(meter.try_take(41, meter.limit()), Err(60));
        meter.try_take(40, meter.limit()).unwrap();
        meter.give_back(70);
        assert_eq!((meter.used(), meter.peak()), (30, 100));
        meter.reset_peak();
        assert_eq!(meter.peak(), 30);
        assert_eq!(meter.try_take(usize::MAX, None), Err(30));
    }
}
