//! Deferred mode (`FERROCUDA_EMU_DEFER=1`): asynchronous work waits in its stream's queue until
//! something needs it, as the CUDA programming guide allows, so that a host that reads results
//! it never waited for sees them unfinished, as it might on a GPU.
//!
//! Queued: kernel launches, `cuMemcpy*Async` (host memory only if page-locked; see
//! `memory.rs`), `cuMemset*Async`, event records, waits on events, host functions. They run, in
//! stream order, on the thread of the call that needs them: a synchronisation of their stream,
//! of an event recorded after them (or a second query of it: the first says
//! `CUDA_ERROR_NOT_READY`), of the context; another stream's work that waits on such an event; a
//! synchronous copy or memset (after the legacy default stream's work and, as that stream
//! synchronises with them, every blocking stream's); `cuMemFree`, `cuMemFreeHost`, module
//! unload and context destruction (everything, first). A stream created `CU_STREAM_NON_BLOCKING`
//! does not synchronise with the legacy default stream; other streams do, both ways.
//! The per-thread default stream is taken as the legacy one.

use std::collections::{HashMap, VecDeque};
use std::ffi::c_void;
use std::sync::LazyLock;

/// The environment variable that turns deferred mode on (`1`).
pub(crate) const DEFER_ENV: &str = "FERROCUDA_EMU_DEFER";

/// Whether [`DEFER_ENV`] asks for deferred mode (read once per process).
pub(crate) static DEFER: LazyLock<bool> =
    LazyLock::new(|| std::env::var_os(DEFER_ENV).is_some_and(|v| !v.is_empty() && v != "0"));

/// A queue: its context and stream id (0 for the default streams).
pub(crate) type Key = (usize, usize);

/// The queue of stream handle `stream` (0x0, 0x1 and 0x2 are the default streams) in `context`.
pub(crate) fn key(context: usize, stream: usize) -> Key {
    (context, if stream <= 2 { 0 } else { stream })
}

/// A launch's kernel, shape and parameter bytes, captured when it was queued (as the driver
/// captures `kernelParams` at the launch).
pub(crate) struct Launch {
    pub context: usize,
    pub module: std::sync::Arc<ferrocuda_ptx_emu::Module>,
    pub kernel: String,
    pub dims: ferrocuda_ptx_emu::LaunchDims,
    pub params: Vec<Vec<u8>>,
    pub cooperative: bool,
}

pub(crate) enum Work {
    /// From page-locked host memory, read when it runs.
    HtoD {
        dst: u64,
        src: usize,
        bytes: usize,
    },
    /// Staged from pageable host memory when it was queued.
    Write {
        dst: u64,
        data: Vec<u8>,
    },
    /// To page-locked host memory, written when it runs.
    DtoH {
        dst: usize,
        src: u64,
        bytes: usize,
    },
    DtoD {
        dst: u64,
        src: u64,
        bytes: u64,
    },
    Memset {
        dst: u64,
        pattern: Vec<u8>,
        count: u64,
    },
    Launch(Box<Launch>),
    /// `cuEventRecord`: the event completes when this runs.
    Record {
        event: usize,
    },
    /// Runs once each queue has run up to its position.
    Wait(Vec<(Key, u64)>),
    Host {
        f: unsafe extern "C" fn(*mut c_void),
        data: usize,
    },
}

// SAFETY: the raw pointers in `Host` and the addresses in `HtoD`/`DtoH` are the caller's, who
// promised (driver API contract) they stay valid until the work has run; running it on another
// host thread is what the driver does too.
unsafe impl Send for Work {}

#[derive(Default)]
pub(crate) struct Queue {
    /// Work not yet run, with its position (from 1, increasing).
    pub(crate) items: VecDeque<(u64, Work)>,
    next: u64,
    /// Synchronises with the legacy default stream (not `CU_STREAM_NON_BLOCKING`).
    pub blocking: bool,
    /// A query found it busy (the next one runs it).
    pub polled: bool,
}

impl Queue {
    /// The last position queued, if any work waits.
    pub fn tail(&self) -> Option<u64> {
        self.items.back().map(|(seq, _)| *seq)
    }

    fn pending_up_to(&self, seq: u64) -> bool {
        self.items.front().is_some_and(|(first, _)| *first <= seq)
    }
}

/// Every queue by key, and where each event's latest record waits.
#[derive(Default)]
pub(crate) struct Queues {
    pub queues: HashMap<Key, Queue>,
}

impl Queues {
    /// Whether work up to `seq` in `key` still waits.
    pub fn pending(&self, (key, seq): (Key, u64)) -> bool {
        self.queues.get(&key).is_some_and(|q| q.pending_up_to(seq))
    }

    /// Queues `work` on `key` (`blocking`: the stream synchronises with the legacy default
    /// stream), after what the legacy stream semantics make it wait for; its position.
    pub fn push(&mut self, key: Key, blocking: bool, work: Work) -> (Key, u64) {
        let mut waits = Vec::new();
        if key.1 == 0 {
            // The legacy default stream waits for every blocking stream's work.
            for (&other, queue) in &self.queues {
                if other.0 == key.0 && other.1 != 0 && queue.blocking {
                    waits.extend(queue.tail().map(|tail| (other, tail)));
                }
            }
        } else if blocking {
            // And a blocking stream for the legacy stream's.
            let legacy = self.queues.get(&(key.0, 0)).and_then(Queue::tail);
            waits.extend(legacy.map(|tail| ((key.0, 0), tail)));
        }
        let queue = self.queues.entry(key).or_default();
        queue.blocking = blocking || key.1 == 0;
        queue.polled = false;
        for work in (!waits.is_empty())
            .then_some(Work::Wait(waits))
            .into_iter()
            .chain([work])
        {
            queue.next += 1;
            queue.items.push_back((queue.next, work));
        }
        (key, queue.next)
    }

    /// Every queue of `context` (all contexts for `None`) up to its end.
    pub fn all(&self, context: Option<usize>) -> Vec<(Key, u64)> {
        self.queues
            .iter()
            .filter(|(key, _)| context.is_none_or(|c| key.0 == c))
            .filter_map(|(&key, queue)| Some((key, queue.tail()?)))
            .collect()
    }

    /// What a synchronous copy in `context` waits for: the legacy default stream's work and
    /// every blocking stream's.
    pub fn legacy(&self, context: usize) -> Vec<(Key, u64)> {
        self.queues
            .iter()
            .filter(|(key, queue)| key.0 == context && queue.blocking)
            .filter_map(|(&key, queue)| Some((key, queue.tail()?)))
            .collect()
    }

    /// `key`'s queue up to its end.
    pub fn stream(&self, key: Key) -> Vec<(Key, u64)> {
        self.queues
            .get(&key)
            .and_then(Queue::tail)
            .map(|tail| (key, tail))
            .into_iter()
            .collect()
    }
}
