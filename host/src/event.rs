//! [`Event`]: a point in a stream's queue, to order other streams after it and to time work.

use crate::cuda::{GpuDevice, GpuEvent};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::kernel_trail::Trail;
use crate::lock::lock;
use crate::stream::Stream;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A marker recorded on a [`Stream`]: it completes when the work queued there before it has.
/// Another stream can [`wait`](Stream::wait) for it (ordering across streams without blocking
/// the host), the host can [`query`](Event::query) or [`synchronize`](Event::synchronize) it,
/// and two recorded events give the device time between them ([`Event::elapsed`]). On the CPU
/// executor work runs when it is queued, so recording takes the time at once.
///
/// ```
/// use ferrocuda_host::{Device, Event};
/// let device = Device::cpu();
/// let stream = device.new_stream().unwrap();
/// let (mut start, mut end) = (device.new_event().unwrap(), device.new_event().unwrap());
/// stream.record(&mut start).unwrap();
/// let buffer = device.upload(&vec![1.0f32; 1000]).unwrap();
/// stream.record(&mut end).unwrap();
/// assert!(end.query().unwrap());
/// assert!(Event::elapsed(&start, &end).unwrap().as_secs() < 1);
/// ```
pub struct Event {
    inner: Inner,
}

enum Inner {
    Cpu(Mutex<Option<Instant>>),
    Gpu {
        gpu: Arc<GpuDevice>,
        event: GpuEvent,
        /// The stream's trail and launch mark when last recorded, for a fault's report.
        recorded: Mutex<Option<(Arc<Trail>, u64)>>,
    },
}

impl Device {
    /// A new event (with timing) on this device.
    ///
    /// # Errors
    /// Driver errors on a GPU.
    pub fn new_event(&self) -> Result<Event> {
        Event::on(self.backend().gpu())
    }
}

impl Event {
    fn on(gpu: Option<&Arc<GpuDevice>>) -> Result<Event> {
        let inner = match gpu {
            None => Inner::Cpu(Mutex::new(None)),
            Some(gpu) => Inner::Gpu {
                gpu: gpu.clone(),
                event: gpu.new_event()?,
                recorded: Mutex::new(None),
            },
        };
        Ok(Event { inner })
    }

    /// A new event of `stream`'s device.
    pub(crate) fn for_stream(stream: &Stream) -> Result<Event> {
        Event::on(stream.gpu_device())
    }
}

impl Stream {
    /// Records `event` here: it completes once everything queued on this stream so far has.
    ///
    /// Recording moves the point the event marks, so it takes the event by `&mut`: an event
    /// handed out by shared reference, such as [`Pending::event`](crate::Pending::event), marks
    /// one point for as long as the reference lives, and whoever waits on it (the `Pending`
    /// before it hands its buffer back) waits for that point and no other.
    ///
    /// # Errors
    /// [`Error::WrongDevice`] for an event of another device; [`Error::ContextLost`] for an
    /// event or stream made before a kernel fault replaced the CUDA context.
    pub fn record(&self, event: &mut Event) -> Result<()> {
        match (&event.inner, self.cuda()) {
            (Inner::Cpu(at), None) => {
                *lock(at) = Some(Instant::now());
                Ok(())
            }
            (
                Inner::Gpu {
                    gpu,
                    event,
                    recorded,
                },
                Some(_),
            ) => {
                let mark = gpu.record_event(event, self)?;
                *lock(recorded) = self.trail().map(|trail| (trail, mark));
                Ok(())
            }
            _ => Err(self.wrong_event()),
        }
    }

    /// Makes work queued on this stream from now on wait (on the device, not the host) until
    /// `event` completes: how one stream's copy waits for another stream's kernel.
    ///
    /// # Errors
    /// As [`Stream::record`].
    pub fn wait(&self, event: &Event) -> Result<()> {
        match (&event.inner, self.cuda()) {
            // The CPU executor ran the recorded work already.
            (Inner::Cpu(_), None) => Ok(()),
            (Inner::Gpu { gpu, event, .. }, Some(_)) => gpu.wait_event(self, event),
            _ => Err(self.wrong_event()),
        }
    }

    fn wrong_event(&self) -> Error {
        Error::WrongDevice {
            what: "an event",
            owner: "another device".into(),
            device: format!("{:?}", self.device_kind()),
        }
    }
}

impl Event {
    /// Whether the work it was recorded after is done (`true` if it was never recorded).
    ///
    /// # Errors
    /// [`Error::KernelFailed`] if a kernel before it faulted.
    pub fn query(&self) -> Result<bool> {
        match &self.inner {
            Inner::Cpu(_) => Ok(true),
            Inner::Gpu {
                gpu,
                event,
                recorded,
            } => {
                let trail = lock(recorded).as_ref().map(|(trail, _)| trail.clone());
                gpu.query_event(event, trail.as_deref())
            }
        }
    }

    /// Waits on the host until the work it was recorded after is done.
    ///
    /// # Errors
    /// [`Error::KernelFailed`] if a kernel before it faulted, naming it.
    pub fn synchronize(&self) -> Result<()> {
        match &self.inner {
            Inner::Cpu(_) => Ok(()),
            Inner::Gpu {
                gpu,
                event,
                recorded,
            } => {
                let recorded = lock(recorded).clone();
                gpu.synchronize_event(event, recorded.as_ref().map(|(t, m)| (&**t, *m)))
            }
        }
    }

    /// The device time from `start` to `end`, both recorded (waiting for `end`): CUDA's event
    /// timer on a GPU (about half a microsecond resolution), the host's clock on the CPU.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] if either was never recorded or they belong to different
    /// devices; driver errors.
    pub fn elapsed(start: &Event, end: &Event) -> Result<Duration> {
        let unrecorded = || Error::InvalidInput {
            op: "Event::elapsed",
            detail: "both events must be recorded on a stream of the same device \
                     (stream.record(&mut event)) before their time is asked"
                .into(),
        };
        match (&start.inner, &end.inner) {
            (Inner::Cpu(a), Inner::Cpu(b)) => {
                let (a, b) = (*lock(a), *lock(b));
                let (a, b) = a.zip(b).ok_or_else(unrecorded)?;
                Ok(b.saturating_duration_since(a))
            }
            (
                Inner::Gpu {
                    gpu,
                    event: a,
                    recorded: ra,
                },
                Inner::Gpu {
                    event: b,
                    recorded: rb,
                    ..
                },
            ) => {
                if lock(ra).is_none() || lock(rb).is_none() {
                    return Err(unrecorded());
                }
                end.synchronize()?;
                let ms = gpu.event_elapsed_ms(a, b)?;
                Ok(Duration::from_secs_f64(f64::from(ms.max(0.0)) / 1e3))
            }
            _ => Err(unrecorded()),
        }
    }
}

impl std::fmt::Debug for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self.inner {
            Inner::Cpu(_) => "CPU",
            Inner::Gpu { .. } => "CUDA",
        };
        write!(f, "Event({kind})")
    }
}
