//! [`Pipeline`]: host data larger than the device, in chunks on several streams (the seed's
//! section 3.2): per chunk, copy in, kernel, copy out, with chunk k+1's copies overlapping
//! chunk k's kernel on a GPU.

use crate::{Device, DeviceBuffer, Error, Event, Module, Pending, PinnedBuffer, Result, Stream};
use bytemuck::Pod;
use std::ops::Range;
use std::time::Duration;

/// Streams unless [`Pipeline::streams`] says otherwise: one chunk's copies overlap another's
/// kernel, and a third keeps the copy engine busy while the host fills the next chunk.
pub const DEFAULT_STREAMS: usize = 3;

/// Most streams a pipeline takes: more would only hold more memory in flight.
pub const MAX_STREAMS: usize = 16;

/// The share of the device's free memory (under its limit, if any) the default chunk length
/// leaves to the pipeline's device buffers, all streams together.
const FREE_MEMORY_SHARE: f64 = 0.5;

/// The kernel for one chunk, as the body of a [`Pipeline`] sees it: the chunk's inputs and
/// outputs on the device (each [`Chunk::len`] elements, the last chunk's maybe fewer), and the
/// stream to launch on (`launch!(kernels, k[grid, block, chunk.stream](...))`) so that the
/// kernel overlaps other chunks' copies.
pub struct Chunk<'a, T: Pod> {
    /// Which chunk, from 0.
    pub index: usize,
    /// The elements of the whole input it covers.
    pub range: Range<usize>,
    /// The stream its copies are queued on; launch there.
    pub stream: &'a Stream,
    /// One device buffer per host input, holding this chunk of it.
    pub inputs: &'a [DeviceBuffer<T>],
    /// One device buffer per host output; what the kernel writes here is copied back.
    pub outputs: &'a mut [DeviceBuffer<T>],
}

impl<T: Pod> Chunk<'_, T> {
    /// Elements in this chunk.
    pub fn len(&self) -> usize {
        self.range.len()
    }

    /// Whether it has no elements (never, for a chunk a pipeline runs).
    pub fn is_empty(&self) -> bool {
        self.range.is_empty()
    }
}

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
    /// The stream (0-based, in the order the pipeline made them).
    pub stream: usize,
    /// The chunk.
    pub chunk: usize,
    /// What ran.
    pub kind: SpanKind,
    /// Start, from the pipeline's start.
    pub start: Duration,
    /// End, from the pipeline's start.
    pub end: Duration,
}

/// How a [`Pipeline::run`] went: its shape, and (with [`Pipeline::timeline`]) every copy and
/// kernel span per stream, from CUDA events on a GPU (the host clock on the CPU executor, where
/// work runs when it is queued, so spans never overlap).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Timeline {
    /// Elements per chunk (the last may have fewer).
    pub chunk_len: usize,
    /// Chunks run.
    pub chunks: usize,
    /// Streams used.
    pub streams: usize,
    /// Elements of each input and output.
    pub elements: usize,
    /// Every span, in the order queued; empty unless asked for.
    pub spans: Vec<Span>,
}

impl Timeline {
    /// The device time spent copying and running kernels, summed over spans, and the time from
    /// the first span's start to the last one's end: their ratio is the overlap (below 1 when
    /// copies and kernels ran at once).
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

/// Runs an elementwise kernel over host data in chunks: per chunk, the inputs' slices are copied
/// into page-locked buffers and on to the device, the body launches its kernel on the chunk's
/// stream, and the outputs come back the same way, on `streams` streams in turn, so that on a
/// GPU one chunk's copies overlap another's kernel and the device holds only
/// `streams × chunk_len` elements per input and output at once: data larger than the device
/// (or its [memory limit](crate::Device::with_memory_limit)) runs. On the CPU executor the same
/// steps run in order.
///
/// ```
/// use ferrocuda::{launch, ops::Pipeline, Device};
/// use ferrocuda::kernels::vector_add;
/// let kernels = Device::cpu().load(&ferrocuda::KERNELS)?;
/// let (a, b) = (vec![1.0f32; 10_000], vec![2.0f32; 10_000]);
/// let mut sum = vec![0.0f32; 10_000];
/// Pipeline::new(&kernels).chunk_len(4096).streams(2).run(&[&a, &b], &mut [&mut sum], |chunk| {
///     let blocks = chunk.len().div_ceil(256);
///     let [a, b] = chunk.inputs else { unreachable!() };
///     launch!(kernels, vector_add[blocks, 256, chunk.stream](a, b, &mut chunk.outputs[0]))
/// })?;
/// assert!(sum.iter().all(|&x| x == 3.0));
/// # Ok::<(), ferrocuda::Error>(())
/// ```
pub struct Pipeline<'m> {
    kernels: &'m Module,
    chunk_len: Option<usize>,
    streams: usize,
    timeline: bool,
}

impl<'m> Pipeline<'m> {
    /// A pipeline on the device of `kernels`, with [`DEFAULT_STREAMS`] streams and a chunk
    /// length from the device's free memory.
    pub fn new(kernels: &'m Module) -> Self {
        Pipeline {
            kernels,
            chunk_len: None,
            streams: DEFAULT_STREAMS,
            timeline: false,
        }
    }

    /// Elements per chunk (the last chunk takes what is left). Without it: as many as fit in
    /// half the device's free memory with every stream's buffers, at most half the input per
    /// stream.
    pub fn chunk_len(mut self, elements: usize) -> Self {
        self.chunk_len = Some(elements);
        self
    }

    /// Streams the chunks take turns on (1 to [`MAX_STREAMS`]); 1 runs chunk after chunk.
    pub fn streams(mut self, streams: usize) -> Self {
        self.streams = streams;
        self
    }

    /// Records events around every copy and kernel, for [`Timeline::spans`].
    pub fn timeline(mut self, record: bool) -> Self {
        self.timeline = record;
        self
    }

    /// Runs `body` once per chunk (see [`Pipeline`]). `inputs` and `outputs` must all have the
    /// same length; element `i` of every output is written from element `i` of the inputs'
    /// chunk, as an elementwise kernel does.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for lengths that differ, no outputs, a chunk length of 0 or a
    /// stream count outside 1 to [`MAX_STREAMS`]; [`Error::OutOfMemory`] if a chunk's buffers do
    /// not fit; [`Error::ChunkFailed`] naming the chunk whose copies or kernel failed: then the
    /// outputs of every chunk before it are written and those of it and every later chunk are
    /// untouched.
    pub fn run<T: Pod>(
        &self,
        inputs: &[&[T]],
        outputs: &mut [&mut [T]],
        mut body: impl FnMut(Chunk<'_, T>) -> Result<()>,
    ) -> Result<Timeline> {
        let n = self.check(inputs, outputs)?;
        let mut timeline = Timeline {
            chunk_len: self.pick_chunk_len::<T>(n, inputs.len() + outputs.len())?,
            streams: self.streams,
            elements: n,
            ..Timeline::default()
        };
        if n == 0 {
            return Ok(timeline);
        }
        timeline.chunks = n.div_ceil(timeline.chunk_len);
        let device = self.kernels.device();
        let mut slots = (0..self.streams.min(timeline.chunks))
            .map(|_| {
                Ok(Slot::new(
                    device.clone(),
                    device.new_stream()?,
                    self.timeline,
                ))
            })
            .collect::<Result<Vec<_>>>()?;
        let start = match self.timeline {
            true => {
                let mut start = device.new_event()?;
                slots[0].stream.record(&mut start)?;
                Some(start)
            }
            false => None,
        };
        let mut marks = Vec::new();
        for chunk in 0..timeline.chunks {
            let range = chunk * timeline.chunk_len..((chunk + 1) * timeline.chunk_len).min(n);
            // What is done already is written out, so that a fault shows in the chunk it is in.
            harvest(&mut slots, outputs, false, &timeline)?;
            let slot = chunk % slots.len();
            harvest_slot(&mut slots[slot], outputs, &timeline)?;
            let queued = slots[slot].queue(chunk, range, inputs, outputs.len(), &mut body);
            if let Err(error) = queued {
                harvest(&mut slots, outputs, true, &timeline)?;
                return Err(chunk_failed(chunk, &timeline, error));
            }
            if self.timeline {
                marks.push((slot, chunk, slots[slot].marks.take()));
            }
        }
        harvest(&mut slots, outputs, true, &timeline)?;
        if let Some(start) = start {
            timeline.spans = spans(&start, marks)?;
        }
        Ok(timeline)
    }

    fn check<T: Pod>(&self, inputs: &[&[T]], outputs: &[&mut [T]]) -> Result<usize> {
        let invalid = |detail: String| Error::InvalidInput {
            op: "Pipeline::run",
            detail,
        };
        if !(1..=MAX_STREAMS).contains(&self.streams) {
            return Err(invalid(format!(
                "{} streams asked for; a pipeline takes 1 to {MAX_STREAMS}",
                self.streams
            )));
        }
        if self.chunk_len == Some(0) {
            return Err(invalid("a chunk length of 0 elements".into()));
        }
        let Some(first) = outputs.first() else {
            return Err(invalid(
                "no outputs: the pipeline copies outputs back".into(),
            ));
        };
        let n = first.len();
        let lengths = inputs
            .iter()
            .map(|i| i.len())
            .chain(outputs.iter().map(|o| o.len()));
        if let Some(other) = lengths.clone().find(|&len| len != n) {
            return Err(invalid(format!(
                "inputs and outputs differ in length ({other} and {n} elements; all: {:?}); \
                 an elementwise pipeline needs one length",
                lengths.collect::<Vec<_>>()
            )));
        }
        Ok(n)
    }

    /// The chunk length asked for, else what fits in [`FREE_MEMORY_SHARE`] of the free memory
    /// with `buffers` device buffers per stream, at most half the input per stream.
    fn pick_chunk_len<T: Pod>(&self, n: usize, buffers: usize) -> Result<usize> {
        if let Some(len) = self.chunk_len {
            return Ok(len.min(n.max(1)));
        }
        let (free, _) = self.kernels.device().memory_info()?;
        let per_element = (buffers * self.streams * std::mem::size_of::<T>()).max(1);
        let fits = (free as f64 * FREE_MEMORY_SHARE) as usize / per_element;
        let per_stream = n.div_ceil(2 * self.streams);
        Ok(fits.min(per_stream).max(1))
    }
}

/// [`Error::ChunkFailed`] for `chunk` (of `timeline.chunks`, over `n` elements).
fn chunk_failed(chunk: usize, timeline: &Timeline, source: Error) -> Error {
    let len = timeline.chunk_len;
    Error::ChunkFailed {
        chunk,
        chunks: timeline.chunks,
        elements: chunk * len..((chunk + 1) * len).min(timeline.elements),
        source: Box::new(source),
    }
}

/// The events around one chunk's copy in, kernel and copy out.
type Marks = Option<[Event; 4]>;

/// Writes out the chunks in flight in chunk order: all of them (`all`, waiting), or those
/// already done up to the first that is not. A failure is [`Error::ChunkFailed`] for its chunk.
fn harvest<T: Pod>(
    slots: &mut [Slot<T>],
    outputs: &mut [&mut [T]],
    all: bool,
    timeline: &Timeline,
) -> Result<()> {
    let mut order: Vec<usize> = (0..slots.len())
        .filter(|&s| slots[s].in_flight.is_some())
        .collect();
    order.sort_by_key(|&s| slots[s].in_flight.as_ref().map(|f| f.chunk));
    for s in order {
        let chunk = slots[s].in_flight.as_ref().map_or(0, |f| f.chunk);
        let done = all
            || slots[s]
                .done()
                .map_err(|e| chunk_failed(chunk, timeline, e))?;
        if !done {
            break;
        }
        harvest_slot(&mut slots[s], outputs, timeline)?;
    }
    Ok(())
}

/// Waits for the chunk in flight on `slot`, if any, and writes its outputs.
fn harvest_slot<T: Pod>(
    slot: &mut Slot<T>,
    outputs: &mut [&mut [T]],
    timeline: &Timeline,
) -> Result<()> {
    let chunk = slot.in_flight.as_ref().map_or(0, |f| f.chunk);
    slot.finish(outputs)
        .map_err(|e| chunk_failed(chunk, timeline, e))
}

/// The spans between each chunk's four events, from `start`.
fn spans(start: &Event, marks: Vec<(usize, usize, Marks)>) -> Result<Vec<Span>> {
    let mut spans = Vec::with_capacity(marks.len() * 3);
    for (stream, chunk, marks) in marks {
        let Some(marks) = marks else { continue };
        let at = |i: usize| Event::elapsed(start, &marks[i]);
        for (i, kind) in [SpanKind::CopyIn, SpanKind::Kernel, SpanKind::CopyOut]
            .into_iter()
            .enumerate()
        {
            spans.push(Span {
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

/// One stream's buffers, and the chunk in flight on it.
struct Slot<T: Pod> {
    device: Device,
    stream: Stream,
    /// Whether to record events around each chunk's work.
    timeline: bool,
    device_in: Vec<DeviceBuffer<T>>,
    device_out: Vec<DeviceBuffer<T>>,
    /// Page-locked staging, when no copy holds it.
    host_in: Vec<PinnedBuffer<T>>,
    host_out: Vec<PinnedBuffer<T>>,
    in_flight: Option<InFlight<T>>,
    marks: Marks,
}

/// A chunk whose copies are queued: the pending copies own the staging buffers.
struct InFlight<T: Pod> {
    chunk: usize,
    range: Range<usize>,
    uploads: Vec<Pending<PinnedBuffer<T>>>,
    downloads: Vec<Pending<PinnedBuffer<T>>>,
}

impl<T: Pod> Slot<T> {
    fn new(device: Device, stream: Stream, timeline: bool) -> Self {
        Slot {
            device,
            stream,
            timeline,
            device_in: Vec::new(),
            device_out: Vec::new(),
            host_in: Vec::new(),
            host_out: Vec::new(),
            in_flight: None,
            marks: None,
        }
    }

    /// Waits for the chunk in flight, if any, and writes its outputs.
    fn finish(&mut self, outputs: &mut [&mut [T]]) -> Result<()> {
        let Some(done) = self.in_flight.take() else {
            return Ok(());
        };
        for pending in done.downloads {
            self.host_out.push(pending.wait()?);
        }
        for pending in done.uploads {
            self.host_in.push(pending.wait()?);
        }
        for (output, staged) in outputs.iter_mut().zip(&self.host_out) {
            output[done.range.clone()].copy_from_slice(staged);
        }
        Ok(())
    }

    /// Whether the chunk in flight is done (its last copy is).
    fn done(&self) -> Result<bool> {
        match &self.in_flight {
            Some(flight) => flight.downloads.last().map_or(Ok(true), Pending::is_done),
            None => Ok(false),
        }
    }

    /// Buffers of `len` elements for `inputs` and `outputs` arrays (new ones for a short last
    /// chunk, the old ones dropped first so the device never holds both).
    fn size_buffers(&mut self, len: usize, inputs: usize, outputs: usize) -> Result<()> {
        if self.device_in.len() == inputs
            && self.device_out.len() == outputs
            && self.device_out.first().is_some_and(|b| b.len() == len)
        {
            return Ok(());
        }
        self.device_in.clear();
        self.device_out.clear();
        self.host_in.clear();
        self.host_out.clear();
        let device = &self.device;
        for _ in 0..inputs {
            self.device_in.push(device.alloc_zeroed(len)?);
            self.host_in.push(device.alloc_pinned(len)?);
        }
        for _ in 0..outputs {
            self.device_out.push(device.alloc_zeroed(len)?);
            self.host_out.push(device.alloc_pinned(len)?);
        }
        Ok(())
    }

    /// Four new events if the timeline is recorded.
    fn new_marks(&self) -> Result<Marks> {
        if !self.timeline {
            return Ok(None);
        }
        let event = || self.device.new_event();
        Ok(Some([event()?, event()?, event()?, event()?]))
    }

    /// Records mark `i` on the stream, if marks are kept.
    fn mark(&self, marks: &mut Marks, i: usize) -> Result<()> {
        match marks {
            Some(marks) => self.stream.record(&mut marks[i]),
            None => Ok(()),
        }
    }

    /// Queues chunk `chunk` (`range` of every input): copies in, `body`, copies out.
    fn queue(
        &mut self,
        chunk: usize,
        range: Range<usize>,
        inputs: &[&[T]],
        outputs: usize,
        body: &mut impl FnMut(Chunk<'_, T>) -> Result<()>,
    ) -> Result<()> {
        self.size_buffers(range.len(), inputs.len(), outputs)?;
        let mut marks = self.new_marks()?;
        self.mark(&mut marks, 0)?;
        let mut uploads = Vec::with_capacity(inputs.len());
        for ((input, staged), on_device) in inputs
            .iter()
            .zip(self.host_in.drain(..))
            .zip(&mut self.device_in)
        {
            let mut staged = staged;
            staged.copy_from_slice(&input[range.clone()]);
            uploads.push(self.stream.upload_async(staged, on_device)?);
        }
        self.mark(&mut marks, 1)?;
        body(Chunk {
            index: chunk,
            range: range.clone(),
            stream: &self.stream,
            inputs: &self.device_in,
            outputs: &mut self.device_out,
        })?;
        self.mark(&mut marks, 2)?;
        let mut downloads = Vec::with_capacity(outputs);
        for (on_device, staged) in self.device_out.iter().zip(self.host_out.drain(..)) {
            downloads.push(self.stream.download_async(on_device, staged)?);
        }
        self.mark(&mut marks, 3)?;
        self.marks = marks;
        self.in_flight = Some(InFlight {
            chunk,
            range,
            uploads,
            downloads,
        });
        Ok(())
    }
}
