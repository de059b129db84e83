//! What a [`Pipeline::run`](super::Pipeline::run) reports: its shape, the work each device got,
//! and (when asked) every copy and kernel span per stream.

use crate::{Event, Result};
use std::time::Duration;

/// What a span of a [`Timeline`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpanKind {
    /// Host → device copies of the chunk's inputs.
    CopyIn,
    /// The body's kernels.
    Kernel,
    /// Device → host copies of the chunk's outputs.
    CopyOut,
}

/// One piece of work of a chunk, timed by events on its stream.
#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    /// The device: its index among the pipeline's modules (0 for [`Pipeline::new`](super::Pipeline::new)).
    pub device: usize,
    /// The stream (0-based, in the order the pipeline made them, over all devices: stream `s` is
    /// on device `s mod devices`).
    pub stream: usize,
    /// The chunk.
    pub chunk: usize,
    /// What ran.
    pub kind: SpanKind,
    /// Start, from the pipeline's start on its device.
    pub start: Duration,
    /// End, from the pipeline's start on its device.
    pub end: Duration,
}

/// The work one device of a pipeline got, counted as it was queued: what the round-robin rule
/// gave it, and the copies that moved its chunks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeviceWork {
    /// The device, as `Display` names it.
    pub device: String,
    /// Chunks it ran.
    pub chunks: usize,
    /// Elements of those chunks (of each input and output).
    pub elements: usize,
    /// Host → device copies queued (one per input per chunk).
    pub uploads: usize,
    /// Device → host copies queued (one per output per chunk).
    pub downloads: usize,
    /// Bytes those copies moved, both directions.
    pub bytes: usize,
}

impl DeviceWork {
    /// Adds the counts of `other` (one stream's) to these.
    pub(super) fn add(&mut self, other: &DeviceWork) {
        self.chunks += other.chunks;
        self.elements += other.elements;
        self.uploads += other.uploads;
        self.downloads += other.downloads;
        self.bytes += other.bytes;
    }
}

/// How a [`Pipeline::run`](super::Pipeline::run) went: its shape, what each device did, and
/// (with [`Pipeline::timeline`](super::Pipeline::timeline)) every copy and kernel span per
/// stream, from CUDA events on a GPU (the host clock on the CPU executor, where work runs when
/// it is queued, so spans never overlap).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Timeline {
    /// Elements per chunk (the last may have fewer).
    pub chunk_len: usize,
    /// Chunks run.
    pub chunks: usize,
    /// Streams asked for on each device.
    pub streams: usize,
    /// Devices the chunks were spread over.
    pub devices: usize,
    /// Elements of each input and output.
    pub elements: usize,
    /// The work of each device, in the order of the pipeline's modules.
    pub per_device: Vec<DeviceWork>,
    /// Every span, in the order queued; empty unless asked for.
    pub spans: Vec<Span>,
}

impl Timeline {
    /// The device time spent copying and running kernels, summed over spans, and the time from
    /// the first span's start to the last one's end: their ratio is the overlap (below 1 when
    /// copies and kernels ran at once). Over several devices the spans of each are timed from
    /// that device's own start event (events of two devices cannot be compared), all recorded
    /// before any chunk was queued, so the elapsed time is close but not exact.
    pub fn busy_and_elapsed(&self) -> (Duration, Duration) {
        let busy = self
            .spans
            .iter()
            .map(|s| s.end.saturating_sub(s.start))
            .sum();
        let first = self.spans.iter().map(|s| s.start).min().unwrap_or_default();
        let last = self.spans.iter().map(|s| s.end).max().unwrap_or_default();
        (busy, last.saturating_sub(first))
    }
}

/// The events around one chunk's copy in, kernel and copy out.
pub(super) type Marks = Option<[Event; 4]>;

/// One chunk's marks, with where it ran.
pub(super) struct Marked {
    pub(super) device: usize,
    pub(super) stream: usize,
    pub(super) chunk: usize,
    pub(super) marks: Marks,
}

/// The spans between each chunk's four events, from its device's start event (`starts[device]`).
pub(super) fn spans(starts: &[Event], marked: Vec<Marked>) -> Result<Vec<Span>> {
    let mut spans = Vec::with_capacity(marked.len() * 3);
    for Marked {
        device,
        stream,
        chunk,
        marks,
    } in marked
    {
        let Some(marks) = marks else { continue };
        let at = |i: usize| Event::elapsed(&starts[device], &marks[i]);
        for (i, kind) in [SpanKind::CopyIn, SpanKind::Kernel, SpanKind::CopyOut]
            .into_iter()
            .enumerate()
        {
            spans.push(Span {
                device,
                stream,
                chunk,
                kind,
                start: at(i)?,
                end: at(i + 1)?,
            });
        }
    }
    Ok(spans)
}
