//! [`Pipeline`]: host data larger than the device, in chunks on several streams (the seed's
//! section 3.2): per chunk, copy in, kernel, copy out, with chunk k+1's copies overlapping
//! chunk k's kernel on a GPU; and over several GPUs ([`Pipeline::across`]), one set of streams
//! each.

mod chunk;
mod slot;
mod timeline;

pub use chunk::Chunk;
pub use timeline::{DeviceWork, Span, SpanKind, Timeline};

use crate::{Error, Module, Result};
use bytemuck::Pod;
use chunk::chunk_failed;
use slot::{harvest, harvest_slot, Slot};
use timeline::{spans, Marked};

/// Streams unless [`Pipeline::streams`] says otherwise: one chunk's copies overlap another's
/// kernel, and a third keeps the copy engine busy while the host fills the next chunk.
pub const DEFAULT_STREAMS: usize = 3;

/// Most streams a pipeline takes on each device: more would only hold more memory in flight.
pub const MAX_STREAMS: usize = 16;

/// The share of the device's free memory (under its limit, if any) the default chunk length
/// leaves to the pipeline's device buffers, all streams together.
const FREE_MEMORY_SHARE: f64 = 0.5;

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
///
/// Over several GPUs, [`Pipeline::across`] takes the kernels loaded on each and spreads the
/// chunks over them (chunk k on device k mod the number of devices), each with its own
/// streams, buffers and staging; the body launches with [`Chunk::kernels`]:
///
/// ```no_run
/// use ferrocuda::{launch, ops::Pipeline, Device};
/// use ferrocuda::kernels::vector_add;
/// let kernels = Device::all()?
///     .iter()
///     .map(|gpu| gpu.load(&ferrocuda::KERNELS))
///     .collect::<ferrocuda::Result<Vec<_>>>()?;
/// let (a, b) = (vec![1.0f32; 1 << 24], vec![2.0f32; 1 << 24]);
/// let mut sum = vec![0.0f32; 1 << 24];
/// let timeline = Pipeline::across(&kernels).run(&[&a, &b], &mut [&mut sum], |chunk| {
///     let blocks = chunk.len().div_ceil(256);
///     let [a, b] = chunk.inputs else { unreachable!() };
///     launch!(chunk.kernels, vector_add[blocks, 256, chunk.stream](a, b, &mut chunk.outputs[0]))
/// })?;
/// for work in &timeline.per_device {
///     println!("{}: {} chunks", work.device, work.chunks);
/// }
/// # Ok::<(), ferrocuda::Error>(())
/// ```
pub struct Pipeline<'m> {
    /// One module per device, the chunks' devices in turn.
    kernels: &'m [Module],
    chunk_len: Option<usize>,
    streams: usize,
    timeline: bool,
}

impl<'m> Pipeline<'m> {
    /// A pipeline on the device of `kernels`, with [`DEFAULT_STREAMS`] streams and a chunk
    /// length from the device's free memory.
    pub fn new(kernels: &'m Module) -> Self {
        Self::across(std::slice::from_ref(kernels))
    }

    /// A pipeline over the devices of `kernels`, one module per device (the same kernels loaded
    /// on each, e.g. for every device of [`Device::all`](crate::Device::all)), each with its own
    /// [`streams`](Self::streams). Chunk k runs on `kernels[k % kernels.len()]`'s device, on
    /// that device's streams in turn: equal devices get equal shares (to one chunk), every
    /// device has work from the first chunks on, and the outputs are written in chunk order as
    /// on one device. The slowest device sets the pace: nothing moves chunks between devices.
    /// With one module it is [`Pipeline::new`].
    pub fn across(kernels: &'m [Module]) -> Self {
        Pipeline {
            kernels,
            chunk_len: None,
            streams: DEFAULT_STREAMS,
            timeline: false,
        }
    }

    /// Elements per chunk (the last chunk takes what is left). Without it: as many as fit in
    /// half the free memory of the device with the least with every stream's buffers, at most
    /// half the input per stream (over all devices' streams).
    pub fn chunk_len(mut self, elements: usize) -> Self {
        self.chunk_len = Some(elements);
        self
    }

    /// Streams the chunks take turns on, on each device (1 to [`MAX_STREAMS`]); 1 runs chunk
    /// after chunk on each device.
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
    /// chunk, as an elementwise kernel does. The [`Timeline`] counts the chunks and copies of
    /// each device ([`Timeline::per_device`]).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for lengths that differ, no outputs, a chunk length of 0, a
    /// stream count outside 1 to [`MAX_STREAMS`], no modules or two on the same device;
    /// [`Error::OutOfMemory`] if a chunk's buffers do not fit; [`Error::ChunkFailed`] naming
    /// the chunk whose copies or kernel failed: then the outputs of every chunk before it are
    /// written and those of it and every later chunk are untouched.
    pub fn run<T: Pod>(
        &self,
        inputs: &[&[T]],
        outputs: &mut [&mut [T]],
        mut body: impl FnMut(Chunk<'_, T>) -> Result<()>,
    ) -> Result<Timeline> {
        let n = self.check(inputs, outputs)?;
        let devices = self.kernels.len();
        let mut timeline = Timeline {
            chunk_len: self.pick_chunk_len::<T>(n, inputs.len() + outputs.len())?,
            streams: self.streams,
            devices,
            elements: n,
            per_device: self
                .kernels
                .iter()
                .map(|k| DeviceWork {
                    device: k.device().to_string(),
                    ..Default::default()
                })
                .collect(),
            ..Timeline::default()
        };
        if n == 0 {
            return Ok(timeline);
        }
        timeline.chunks = n.div_ceil(timeline.chunk_len);
        // Slot s is a stream of device s mod `devices`, so chunk k (on slot k mod the slots)
        // runs on device k mod `devices` whether or not there are chunks for every slot.
        let mut slots = (0..(self.streams * devices).min(timeline.chunks))
            .map(|s| Slot::new(s % devices, &self.kernels[s % devices], self.timeline))
            .collect::<Result<Vec<_>>>()?;
        // Each device's spans are timed from an event of its own: events of two devices cannot
        // be compared. Slot d is device d's first stream.
        let starts = match self.timeline {
            true => (0..devices.min(slots.len()))
                .map(|d| {
                    let mut start = self.kernels[d].device().new_event()?;
                    slots[d].stream.record(&mut start)?;
                    Ok(start)
                })
                .collect::<Result<Vec<_>>>()?,
            false => Vec::new(),
        };
        let mut marked = Vec::new();
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
                marked.push(Marked {
                    device: slots[slot].device,
                    stream: slot,
                    chunk,
                    marks: slots[slot].marks.take(),
                });
            }
        }
        harvest(&mut slots, outputs, true, &timeline)?;
        for slot in &slots {
            timeline.per_device[slot.device].add(&slot.work);
        }
        if self.timeline {
            timeline.spans = spans(&starts, marked)?;
        }
        Ok(timeline)
    }

    fn check<T: Pod>(&self, inputs: &[&[T]], outputs: &[&mut [T]]) -> Result<usize> {
        let invalid = |detail: String| Error::InvalidInput {
            op: "Pipeline::run",
            detail,
        };
        if self.kernels.is_empty() {
            return Err(invalid(
                "no modules: `Pipeline::across` takes the kernels loaded on at least one device"
                    .into(),
            ));
        }
        for (j, later) in self.kernels.iter().enumerate() {
            if let Some(i) = self.kernels[..j]
                .iter()
                .position(|k| k.device().kind() == later.device().kind())
            {
                return Err(invalid(format!(
                    "modules {i} and {j} are both on {}: `Pipeline::across` takes one module per \
                     device (use `streams` for more streams on one)",
                    later.device()
                )));
            }
        }
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
    /// of the device with the least, with `buffers` device buffers per stream, at most half the
    /// input per stream of all devices.
    fn pick_chunk_len<T: Pod>(&self, n: usize, buffers: usize) -> Result<usize> {
        if let Some(len) = self.chunk_len {
            return Ok(len.min(n.max(1)));
        }
        let mut free = usize::MAX;
        for kernels in self.kernels {
            free = free.min(kernels.device().memory_info()?.0);
        }
        let per_element = (buffers * self.streams * std::mem::size_of::<T>()).max(1);
        let fits = (free as f64 * FREE_MEMORY_SHARE) as usize / per_element;
        let per_stream = n.div_ceil(2 * self.streams * self.kernels.len());
        Ok(fits.min(per_stream).max(1))
    }
}
