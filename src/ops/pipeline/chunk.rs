//! One chunk as the body of a [`Pipeline`](super::Pipeline) sees it ([`Chunk`]), and the error
//! that names a chunk that failed: what the pipeline and its stream slots share.

use super::timeline::Timeline;
use crate::{DeviceBuffer, Error, Module, Stream};
use bytemuck::Pod;
use std::ops::Range;

/// The kernel for one chunk, as the body of a [`Pipeline`](super::Pipeline) sees it: the chunk's inputs and
/// outputs on its device (each [`Chunk::len`] elements, the last chunk's maybe fewer), the
/// kernels loaded on that device, and the stream to launch on
/// (`launch!(chunk.kernels, k[grid, block, chunk.stream](...))`) so that the kernel overlaps
/// other chunks' copies.
pub struct Chunk<'a, T: Pod> {
    /// Which chunk, from 0.
    pub index: usize,
    /// The elements of the whole input it covers.
    pub range: Range<usize>,
    /// The device it runs on: the index of its module among the pipeline's (always 0 for
    /// [`Pipeline::new`](super::Pipeline::new)).
    pub device: usize,
    /// The kernels on that device: launch with these. A launch with another device's module
    /// is [`Error::WrongDevice`] (its buffers and stream are this device's), never a kernel
    /// reading another GPU's memory.
    pub kernels: &'a Module,
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

/// [`Error::ChunkFailed`] for `chunk` (of `timeline.chunks`, over `n` elements).
pub(super) fn chunk_failed(chunk: usize, timeline: &Timeline, source: Error) -> Error {
    let len = timeline.chunk_len;
    Error::ChunkFailed {
        chunk,
        chunks: timeline.chunks,
        elements: chunk * len..((chunk + 1) * len).min(timeline.elements),
        source: Box::new(source),
    }
}
