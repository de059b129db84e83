//! One stream of a [`Pipeline`](super::Pipeline) with its buffers and the chunk in flight on it,
//! and the harvest that writes finished chunks out in chunk order.

use super::chunk::{chunk_failed, Chunk};
use super::timeline::{DeviceWork, Marks, Timeline};
use crate::{DeviceBuffer, Module, Pending, PinnedBuffer, Result, Stream};
use bytemuck::Pod;
use std::ops::Range;

/// Writes out the chunks in flight in chunk order: all of them (`all`, waiting), or those
/// already done up to the first that is not. A failure is [`Error::ChunkFailed`](crate::Error::ChunkFailed) for its chunk.
pub(super) fn harvest<T: Pod>(
    slots: &mut [Slot<'_, T>],
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
pub(super) fn harvest_slot<T: Pod>(
    slot: &mut Slot<'_, T>,
    outputs: &mut [&mut [T]],
    timeline: &Timeline,
) -> Result<()> {
    let chunk = slot.in_flight.as_ref().map_or(0, |f| f.chunk);
    slot.finish(outputs)
        .map_err(|e| chunk_failed(chunk, timeline, e))
}

/// One stream's buffers, and the chunk in flight on it.
pub(super) struct Slot<'m, T: Pod> {
    /// The device's index among the pipeline's modules.
    pub(super) device: usize,
    /// The kernels on that device, lent to the body.
    kernels: &'m Module,
    pub(super) stream: Stream,
    /// Whether to record events around each chunk's work.
    timeline: bool,
    device_in: Vec<DeviceBuffer<T>>,
    device_out: Vec<DeviceBuffer<T>>,
    /// Page-locked staging, when no copy holds it.
    host_in: Vec<PinnedBuffer<T>>,
    host_out: Vec<PinnedBuffer<T>>,
    in_flight: Option<InFlight<T>>,
    /// The marks of the chunk queued last, for the timeline to take.
    pub(super) marks: Marks,
    /// What this stream queued (its device's name is filled in by the pipeline).
    pub(super) work: DeviceWork,
}

/// A chunk whose copies are queued: the pending copies own the staging buffers.
struct InFlight<T: Pod> {
    chunk: usize,
    range: Range<usize>,
    uploads: Vec<Pending<PinnedBuffer<T>>>,
    downloads: Vec<Pending<PinnedBuffer<T>>>,
}

impl<'m, T: Pod> Slot<'m, T> {
    /// A slot with a new stream on the device of `kernels` (module `device` of the pipeline).
    pub(super) fn new(device: usize, kernels: &'m Module, timeline: bool) -> Result<Self> {
        Ok(Slot {
            device,
            kernels,
            stream: kernels.device().new_stream()?,
            timeline,
            device_in: Vec::new(),
            device_out: Vec::new(),
            host_in: Vec::new(),
            host_out: Vec::new(),
            in_flight: None,
            marks: None,
            work: DeviceWork::default(),
        })
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
        let device = self.kernels.device();
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
        let event = || self.kernels.device().new_event();
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
    pub(super) fn queue(
        &mut self,
        chunk: usize,
        range: Range<usize>,
        inputs: &[&[T]],
        outputs: usize,
        body: &mut impl FnMut(Chunk<'_, T>) -> Result<()>,
    ) -> Result<()> {
        self.size_buffers(range.len(), inputs.len(), outputs)?;
        let bytes = range.len() * std::mem::size_of::<T>();
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
            self.work.uploads += 1;
            self.work.bytes += bytes;
        }
        self.mark(&mut marks, 1)?;
        body(Chunk {
            index: chunk,
            range: range.clone(),
            device: self.device,
            kernels: self.kernels,
            stream: &self.stream,
            inputs: &self.device_in,
            outputs: &mut self.device_out,
        })?;
        self.mark(&mut marks, 2)?;
        let mut downloads = Vec::with_capacity(outputs);
        for (on_device, staged) in self.device_out.iter().zip(self.host_out.drain(..)) {
            downloads.push(self.stream.download_async(on_device, staged)?);
            self.work.downloads += 1;
            self.work.bytes += bytes;
        }
        self.mark(&mut marks, 3)?;
        self.work.chunks += 1;
        self.work.elements += range.len();
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
