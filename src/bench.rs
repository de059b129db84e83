//! Benchmarking your own kernels with [criterion], as the main job benchmarks the library's
//! (feature `criterion`; docs/benchmarking.md walks through `examples/bench_own_kernel.rs`):
//!
//! - [`GpuTime`]: a criterion [`Measurement`] that times the work queued on its stream with CUDA
//!   events, the GPU's own clock, rather than host time around a synchronise (which adds the
//!   launch and synchronisation latency to every sample);
//! - [`throughput`]: bytes and floating-point operations per iteration, so criterion reports
//!   GB/s and FLOP/s (its "elements" are the operations);
//! - [`check`]: the kernel's result against your reference, before anything is timed: a wrong
//!   kernel's time means nothing;
//! - [`EmulatorProfile`]: with no GPU, run the same benchmark on the PTX emulator and get its
//!   counters and the *estimated* time on a named GPU instead of a time ([`crate::profile`]).
//!
//! The CPU executor needs nothing of this: its launches run on the calling thread, so
//! criterion's default wall-clock measurement times them.

use crate::profile::{self, LaunchRecord, PROFILE_ENV};
use crate::{Device, Event, Result, Stream};
use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use criterion::Throughput;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

/// Criterion's measurement of GPU time: CUDA events recorded on [`GpuTime::stream`] before and
/// after each batch of iterations, and the device time between them ([`Event::elapsed`]).
///
/// Sound only for work queued on that stream: launch with `launch!(m, k[grid, block,
/// timer.stream()](...))`. Work on other streams is not ordered between the two events, and a
/// copy to or from host memory synchronises, putting host time back into the sample.
///
/// Criterion's [`Measurement`] cannot return errors: a failing event record panics, naming it.
pub struct GpuTime {
    device: Device,
    stream: Stream,
    wall: WallTime,
}

impl GpuTime {
    /// A measurement on a new stream of `device` (a GPU; on the CPU executor events take the
    /// host's clock, which is what [`WallTime`] measures already).
    ///
    /// # Errors
    /// The stream cannot be made (driver errors).
    pub fn new(device: &Device) -> Result<GpuTime> {
        Ok(GpuTime {
            device: device.clone(),
            stream: device.new_stream()?,
            wall: WallTime,
        })
    }

    /// The stream to launch the timed work on.
    pub fn stream(&self) -> &Stream {
        &self.stream
    }

    fn record(&self) -> Event {
        let mut event = self
            .device
            .new_event()
            .unwrap_or_else(|e| panic!("GpuTime: creating a CUDA event failed: {e}"));
        self.stream
            .record(&mut event)
            .unwrap_or_else(|e| panic!("GpuTime: recording a CUDA event failed: {e}"));
        event
    }
}

impl Measurement for GpuTime {
    type Intermediate = Event;
    type Value = Duration;

    fn start(&self) -> Event {
        self.record()
    }

    fn end(&self, start: Event) -> Duration {
        let end = self.record();
        // Waits for `end`: every iteration queued between the two has run.
        Event::elapsed(&start, &end)
            .unwrap_or_else(|e| panic!("GpuTime: the timed work failed: {e}"))
    }

    fn add(&self, a: &Duration, b: &Duration) -> Duration {
        *a + *b
    }

    fn zero(&self) -> Duration {
        Duration::ZERO
    }

    fn to_f64(&self, value: &Duration) -> f64 {
        value.as_nanos() as f64
    }

    /// Nanoseconds, as wall time is shown.
    fn formatter(&self) -> &dyn ValueFormatter {
        self.wall.formatter()
    }
}

/// One iteration's work for criterion: `bytes` moved to and from global memory, and `flops`
/// floating-point operations (a fused multiply-add counts two), reported as "elements".
pub fn throughput(bytes: u64, flops: u64) -> Throughput {
    Throughput::ElementsAndBytes {
        elements: flops,
        bytes,
    }
}

/// A kernel's result that differs from the reference ([`check`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    /// What was checked (the kernel and device, as the caller named it).
    pub what: String,
    /// The lengths of the result and of the reference.
    pub lengths: (usize, usize),
    /// The first differing element: index, result, reference.
    pub first: Option<(usize, f64, f64)>,
    /// How many elements differ.
    pub wrong: usize,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (got, want) = self.lengths;
        if got != want {
            return write!(
                f,
                "{}: the result has {got} elements, the reference {want}; nothing was timed",
                self.what
            );
        }
        write!(
            f,
            "{}: {} of {got} elements differ from the reference",
            self.what, self.wrong
        )?;
        if let Some((i, g, w)) = self.first {
            write!(f, " (first at [{i}]: {g} against {w})")?;
        }
        write!(f, "; nothing was timed")
    }
}

impl std::error::Error for Mismatch {}

/// Checks `got` against `want`, element by element, within `tolerance` relative to the
/// reference's magnitude (absolute below 1: `|g - w| <= tolerance · max(1, |w|)`; 0 asks for
/// equality). NaN matches only NaN.
///
/// # Errors
/// [`Mismatch`]: different lengths, or the count of differing elements and the first of them.
pub fn check<T: Copy + Into<f64>>(
    what: &str,
    got: &[T],
    want: &[T],
    tolerance: f64,
) -> std::result::Result<(), Mismatch> {
    let mut mismatch = Mismatch {
        what: what.to_string(),
        lengths: (got.len(), want.len()),
        first: None,
        wrong: 0,
    };
    if got.len() != want.len() {
        return Err(mismatch);
    }
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let (g, w): (f64, f64) = (g.into(), w.into());
        let same = if g.is_nan() || w.is_nan() {
            g.is_nan() && w.is_nan()
        } else {
            (g - w).abs() <= tolerance * w.abs().max(1.0)
        };
        if !same {
            mismatch.wrong += 1;
            mismatch.first.get_or_insert((i, g, w));
        }
    }
    if mismatch.wrong == 0 {
        Ok(())
    } else {
        Err(mismatch)
    }
}

/// The PTX emulator's counters for the launches of this process, for a benchmark run without a
/// GPU: it reports what `ferrocuda profile` would ([`profile::table`]) with the time *estimated*
/// on a named GPU, never measured. The emulator's timings say nothing of a GPU's.
///
/// The emulator's `libcuda.so` reads [`PROFILE_ENV`] at its first launch: make this first thing
/// in `main`, before any launch and before other threads start. Where the variable is set
/// already, its file is read (and kept).
pub struct EmulatorProfile {
    path: PathBuf,
    /// Bytes of the file already reported.
    offset: u64,
    /// Whether this made the file (and removes it).
    owned: bool,
}

impl EmulatorProfile {
    /// Turns the emulator's counters on for this process (a GPU's driver ignores the variable).
    ///
    /// # Errors
    /// The file cannot be created (its path and why).
    pub fn start() -> std::result::Result<EmulatorProfile, String> {
        if let Some(path) = std::env::var_os(PROFILE_ENV) {
            let path = PathBuf::from(path);
            let offset = std::fs::metadata(&path).map_or(0, |m| m.len());
            return Ok(EmulatorProfile {
                path,
                offset,
                owned: false,
            });
        }
        let path = std::env::temp_dir().join(format!(
            "ferrocuda-bench-profile-{}.jsonl",
            std::process::id()
        ));
        std::fs::write(&path, "").map_err(|e| format!("{}: {e}", path.display()))?;
        std::env::set_var(PROFILE_ENV, &path);
        Ok(EmulatorProfile {
            path,
            offset: 0,
            owned: true,
        })
    }

    /// The launches recorded since the last call.
    ///
    /// # Errors
    /// The file cannot be read or holds something else.
    pub fn launches(&mut self) -> std::result::Result<Vec<LaunchRecord>, String> {
        let (records, offset) = profile::read_from(&self.path, self.offset)?;
        self.offset = offset;
        Ok(records)
    }

    /// The table of the launches since the last call, labelled `label`, estimated on `gpu`
    /// (`h200`, `a100`, ...; [`profile::GPUS`]), with registers from `ptxas_report` (your
    /// kernels' ptxas table, as `ferrocuda_builder` writes it; empty: the PTX's declarations,
    /// and the occupancy is marked as a bound).
    ///
    /// # Errors
    /// An unknown GPU, no launches recorded (the device is not the emulator, or the profile
    /// started after the first launch), or [`EmulatorProfile::launches`]'s.
    pub fn report(
        &mut self,
        label: &str,
        gpu: &str,
        ptxas_report: &str,
    ) -> std::result::Result<String, String> {
        let gpu = profile::gpu(gpu)?;
        let records = self.launches()?;
        if records.is_empty() {
            return Err(format!(
                "no launch recorded in {}: the device is not the PTX emulator, or \
                 EmulatorProfile::start came after its first launch",
                self.path.display()
            ));
        }
        let rows = profile::rows(&records, gpu, ptxas_report);
        Ok(profile::table(gpu, rows.iter().map(|r| (label, r))))
    }
}

impl Drop for EmulatorProfile {
    fn drop(&mut self) {
        if self.owned {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_names_the_first_wrong_element_and_counts_them() {
        let want = [1.0f32, 2.0, 3.0, 4.0];
        assert_eq!(check("k", &want, &want, 0.0), Ok(()));
        // Within 1e-6 relative to |w| (absolute below 1).
        let close = [1.0f32 + 1e-7, 2.0, 3.0 * (1.0 + 1e-7), 4.0];
        assert_eq!(check("k", &close, &want, 1e-6), Ok(()));
        let wrong = [1.0f32, 2.5, 3.0, -4.0];
        let e = check("saxpy on the GPU", &wrong, &want, 1e-6).unwrap_err();
        assert_eq!((e.wrong, e.first), (2, Some((1, 2.5, 2.0))));
        assert_eq!(
            e.to_string(),
            "saxpy on the GPU: 2 of 4 elements differ from the reference \
             (first at [1]: 2.5 against 2); nothing was timed"
        );
        let short = check("k", &want[..3], &want, 0.0).unwrap_err();
        assert!(
            short.to_string().contains("3 elements, the reference 4"),
            "{short}"
        );
        // NaN matches NaN only.
        assert!(check("k", &[f64::NAN], &[f64::NAN], 0.0).is_ok());
        assert!(check("k", &[f64::NAN], &[0.0], 1.0).is_err());
    }

    #[test]
    fn gpu_time_adds_and_reports_nanoseconds() {
        // The arithmetic criterion relies on; event timing itself needs a GPU (the example and
        // docs/benchmarking.md).
        let device = Device::cpu();
        let m = GpuTime::new(&device).unwrap();
        let (a, b) = (Duration::from_micros(3), Duration::from_nanos(250));
        assert_eq!(m.add(&a, &b), Duration::from_nanos(3250));
        assert_eq!(m.to_f64(&m.add(&m.zero(), &a)), 3000.0);
        // On the CPU executor the events take the host clock: a start and end in order.
        let start = m.start();
        std::thread::sleep(Duration::from_millis(2));
        assert!(m.end(start) >= Duration::from_millis(2));
    }
}
