//! The driver's state: one virtual device, its memory, and every live context, module,
//! function, stream and event by handle; each thread's current-context stack.
//!
//! Handles are ids that are never reused, so a stale handle is an error, never another object.
//! Sticky faults live on the context: after a kernel fault, every call in that context returns
//! the fault's code until the context is destroyed (or the primary context reset), as on hardware.

use crate::ffi::Outcome;
use cudarc::driver::sys::CUresult;
use ferrocuda_ptx_emu::{Checks, KernelInfo, Memory, Module};
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};
use std::time::Instant;

/// Device memory of each virtual GPU: 4 GiB (backed by host memory as it is used).
pub(crate) const DEVICE_MEMORY_BYTES: u64 = 4 << 30;

/// How many virtual GPUs the driver reports: 1 to 8, default 1.
pub(crate) const DEVICES_ENV: &str = "FERROCUDA_EMU_DEVICES";

/// CUDA's device mask: which of the virtual GPUs the process sees, and in what order.
pub(crate) const VISIBLE_ENV: &str = "CUDA_VISIBLE_DEVICES";

/// How kernels are checked: `strict` (the default) or `gpu` ([`Checks`], docs/emulator.md).
pub(crate) const CHECKS_ENV: &str = "FERROCUDA_EMU_CHECKS";

/// The process's driver.
pub(crate) struct Driver {
    /// The id of the process that ran `cuInit` (0 before): a child forked after it finds
    /// another id of its own, and the driver is not initialised there ([`Driver::initialized`]).
    initialized_by: AtomicU32,
    /// The virtual GPU (of `FERROCUDA_EMU_DEVICES`) behind each device ordinal the process sees
    /// ([`visible_devices`]): its identity (UUID) and its memory's addresses are the GPU's.
    pub physical: Vec<u32>,
    /// How many virtual GPUs there are (`FERROCUDA_EMU_DEVICES`), visible or not.
    pub gpus: u32,
    /// Each device's memory, shared by every context of that device. Addresses are unique across
    /// devices (unified addressing), and a kernel or copy of one device reaches only its own.
    pub memories: Vec<Arc<Memory>>,
    state: Mutex<State>,
}

pub(crate) static DRIVER: LazyLock<Driver> = LazyLock::new(|| {
    let gpus = device_count();
    let physical = visible_devices(gpus, std::env::var(VISIBLE_ENV).ok().as_deref());
    Driver {
        gpus,
        initialized_by: AtomicU32::new(0),
        memories: physical
            .iter()
            .map(|&device| Memory::of_device_checked(DEVICE_MEMORY_BYTES, device, checks()))
            .collect(),
        physical,
        state: Mutex::new(State::default()),
    }
});

/// The virtual GPUs (indices below `count`) the process sees, in its order: all of them without
/// a mask; with `CUDA_VISIBLE_DEVICES`, as CUDA reads it, the comma-separated indices up to the
/// first entry that is not one of the GPUs or names one again (so `""` or `"-1"` hides them all
/// and `"1,7,0"` shows only GPU 1). UUIDs (`GPU-…`) and MIG names end the list too: the
/// emulator's GPUs are named by index only.
pub(crate) fn visible_devices(count: u32, mask: Option<&str>) -> Vec<u32> {
    let Some(mask) = mask else {
        return (0..count).collect();
    };
    let mut visible = Vec::new();
    for entry in mask.split(',') {
        match entry.trim().parse::<u32>() {
            Ok(device) if device < count && !visible.contains(&device) => visible.push(device),
            _ => break,
        }
    }
    visible
}

/// `FERROCUDA_EMU_DEVICES`, read once: a number from 1 to 8; anything else is reported and 1.
fn device_count() -> u32 {
    let Ok(text) = std::env::var(DEVICES_ENV) else {
        return 1;
    };
    match text.trim().parse::<u32>() {
        Ok(n) if (1..=Memory::MAX_DEVICES).contains(&n) => n,
        _ => {
            eprintln!(
                "ferrocuda PTX emulator: {DEVICES_ENV}={text:?} is not a device count from 1 to \
                 {}; using 1",
                Memory::MAX_DEVICES
            );
            1
        }
    }
}

/// `FERROCUDA_EMU_CHECKS`, read once: `strict` or `gpu`; anything else is reported and strict.
fn checks() -> Checks {
    match std::env::var(CHECKS_ENV).as_deref().map(str::trim) {
        Err(_) | Ok("strict") => Checks::Strict,
        Ok("gpu") => Checks::Gpu,
        Ok(other) => {
            eprintln!(
                "ferrocuda PTX emulator: {CHECKS_ENV}={other:?} is neither \"strict\" nor \"gpu\"; \
                 using strict"
            );
            Checks::Strict
        }
    }
}

impl Driver {
    /// How many devices there are.
    pub fn device_count(&self) -> usize {
        self.memories.len()
    }

    /// The memory of the device context `id` is on (device 0's for an unknown context: every
    /// caller checked the context first).
    pub fn memory_of(&self, state: &State, id: usize) -> &Arc<Memory> {
        let device = state.contexts.get(&id).map_or(0, |c| c.device);
        &self.memories[device]
    }

    /// The memories of the devices context `id` has enabled peer access to: what its kernels
    /// reach besides their own device's memory.
    pub fn peer_memories(&self, state: &State, id: usize) -> Vec<Arc<Memory>> {
        let Some(context) = state.contexts.get(&id) else {
            return Vec::new();
        };
        let mut devices: Vec<usize> = context
            .peers
            .iter()
            .filter_map(|peer| state.contexts.get(peer).map(|c| c.device))
            .collect();
        devices.sort_unstable();
        devices.dedup();
        devices
            .into_iter()
            .map(|device| self.memories[device].clone())
            .collect()
    }

    /// `cuInit`: records this process as the driver's. `CUDA_ERROR_NOT_INITIALIZED` in a child
    /// forked after the parent's `cuInit` (see [`Driver::initialized`]).
    pub fn init(&self) -> Outcome {
        // Every GPU hidden by `CUDA_VISIBLE_DEVICES`: CUDA's `cuInit` fails so, and the driver
        // stays uninitialised.
        if self.memories.is_empty() {
            return Err(CUresult::CUDA_ERROR_NO_DEVICE);
        }
        match self.initialized_by.compare_exchange(
            0,
            std::process::id(),
            Ordering::SeqCst,
            Ordering::SeqCst,
        ) {
            Ok(_) => Ok(()),
            Err(_) => self.initialized(),
        }
    }

    /// `CUDA_ERROR_NOT_INITIALIZED` until `cuInit` has run, and for good in a child process
    /// forked after it. CUDA's state (its device connections, threads and memory mappings) does
    /// not survive `fork`: on a GPU every call of such a child fails, with this code, and
    /// clients rely on it to tell the child its CUDA is unusable (Numba's "CUDA initialized
    /// before forking", test_multiprocessing). The emulator's state would survive the fork as a
    /// copy, but it refuses the same way, so that a client's fork handling is tested here as it
    /// runs on a GPU.
    pub fn initialized(&self) -> Outcome {
        match self.initialized_by.load(Ordering::SeqCst) {
            0 => Err(CUresult::CUDA_ERROR_NOT_INITIALIZED),
            pid if pid != std::process::id() => Err(CUresult::CUDA_ERROR_NOT_INITIALIZED),
            _ => Ok(()),
        }
    }

    /// The state, once `cuInit` has run (`CUDA_ERROR_NOT_INITIALIZED` before).
    pub fn state(&self) -> Result<MutexGuard<'_, State>, CUresult> {
        self.initialized()?;
        // Every critical section leaves the maps consistent, so a poisoned lock is still usable.
        Ok(self.state.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// One context.
#[derive(Default)]
pub(crate) struct Context {
    /// The device (ordinal) it is on.
    pub device: usize,
    /// The sticky error of a kernel fault in it.
    pub fault: Option<CUresult>,
    /// Start addresses of its allocations, freed with it.
    pub allocations: HashSet<u64>,
    pub flags: u32,
    /// cuCtxSetLimit values (stack size, printf FIFO, heap), by CUlimit.
    pub limits: HashMap<u32, usize>,
    /// The contexts (of other devices) this one has enabled peer access to
    /// (`cuCtxEnablePeerAccess`): its kernels reach their devices' memory too.
    pub peers: HashSet<usize>,
}

pub(crate) struct LoadedModule {
    pub context: usize,
    pub module: Arc<Module>,
    /// `.version` as major * 10 + minor (CU_FUNC_ATTRIBUTE_PTX_VERSION).
    pub ptx_version: i32,
    /// Functions already handed out, by name (the driver returns the same handle each time).
    pub functions: HashMap<String, usize>,
}

pub(crate) struct Function {
    pub context: usize,
    pub module: usize,
    pub info: KernelInfo,
    /// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: 48 KiB less the static shared memory
    /// until the program opts in to more.
    pub max_dynamic_shared: u32,
}

pub(crate) struct Stream {
    pub context: usize,
    /// Not `CU_STREAM_NON_BLOCKING`: synchronises with the legacy default stream.
    pub blocking: bool,
}

pub(crate) struct Event {
    pub context: usize,
    pub timing: bool,
    /// When its latest record completed (at once, or in deferred mode when the work before it
    /// ran); `None` while that record waits in its queue (`pending`), or before any.
    pub recorded: Option<Instant>,
    /// Deferred mode: the queue and position of its latest record, until that has run.
    pub pending: Option<(crate::deferred::Key, u64)>,
    /// Deferred mode: a query found its record waiting (the next one runs it).
    pub polled: bool,
}

/// Every live object, by handle id.
pub(crate) struct State {
    next_id: usize,
    pub contexts: HashMap<usize, Context>,
    /// Each device's primary context while it is active, and how many retain it, by device.
    pub primary: HashMap<usize, (usize, u32)>,
    /// Each device's primary context flags, by device (0 if never set).
    pub primary_flags: HashMap<usize, u32>,
    pub modules: HashMap<usize, LoadedModule>,
    pub functions: HashMap<usize, Function>,
    pub streams: HashMap<usize, Stream>,
    pub events: HashMap<usize, Event>,
    /// Deferred mode's queues of work (`deferred.rs`).
    pub deferred: crate::deferred::Queues,
    /// Handles of modules, streams and events that went with their destroyed (or reset)
    /// context: unloading or destroying one of them once more succeeds (see [`State::orphan`]).
    pub orphans: HashSet<usize>,
}

impl Default for State {
    fn default() -> Self {
        State {
            // Stream handles 0x0, 0x1 and 0x2 mean the default streams; no id is ever that small.
            next_id: 0x1000,
            contexts: HashMap::new(),
            primary: HashMap::new(),
            primary_flags: HashMap::new(),
            modules: HashMap::new(),
            functions: HashMap::new(),
            streams: HashMap::new(),
            events: HashMap::new(),
            deferred: Default::default(),
            orphans: HashSet::new(),
        }
    }
}

thread_local! {
    /// This thread's context stack (cuCtxPush/Pop; cuCtxSetCurrent replaces the top).
    static CURRENT: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
}

/// The calling thread's current context id, if any.
pub(crate) fn current() -> Option<usize> {
    CURRENT.with(|stack| stack.borrow().last().copied())
}

/// Makes `id` current (replacing the top of the stack), or pops the top for `None`.
pub(crate) fn set_current(id: Option<usize>) {
    CURRENT.with(|stack| {
        let mut stack = stack.borrow_mut();
        match id {
            Some(id) => match stack.last_mut() {
                Some(top) => *top = id,
                None => stack.push(id),
            },
            None => {
                stack.pop();
            }
        }
    })
}

pub(crate) fn push_current(id: usize) {
    CURRENT.with(|stack| stack.borrow_mut().push(id))
}

pub(crate) fn pop_current() -> Option<usize> {
    CURRENT.with(|stack| stack.borrow_mut().pop())
}

impl State {
    pub fn new_id(&mut self) -> usize {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// Context `id`, refusing a destroyed one and returning a faulted one's sticky error.
    pub fn usable(&mut self, id: usize) -> Result<&mut Context, CUresult> {
        let context = self
            .contexts
            .get_mut(&id)
            .ok_or(CUresult::CUDA_ERROR_CONTEXT_IS_DESTROYED)?;
        match context.fault {
            Some(code) => Err(code),
            None => Ok(context),
        }
    }

    /// The calling thread's current context, usable (see [`State::usable`]).
    pub fn current_usable(&mut self) -> Result<(usize, &mut Context), CUresult> {
        let id = current().ok_or(CUresult::CUDA_ERROR_INVALID_CONTEXT)?;
        Ok((id, self.usable(id)?))
    }

    /// The context a stream handle's work runs in: its own, or for the default streams (0x0,
    /// legacy 0x1, per-thread 0x2) the current one; usable (see [`State::usable`]).
    pub fn stream_context(&mut self, stream: usize) -> Result<usize, CUresult> {
        let id = if stream <= 2 {
            current().ok_or(CUresult::CUDA_ERROR_INVALID_CONTEXT)?
        } else {
            self.streams
                .get(&stream)
                .ok_or(CUresult::CUDA_ERROR_INVALID_HANDLE)?
                .context
        };
        self.usable(id)?;
        Ok(id)
    }

    /// Queues `work` on stream handle `stream` of `context` (deferred mode); its position.
    pub fn defer(
        &mut self,
        context: usize,
        stream: usize,
        work: crate::deferred::Work,
    ) -> (crate::deferred::Key, u64) {
        let key = crate::deferred::key(context, stream);
        let blocking = self.streams.get(&key.1).is_some_and(|s| s.blocking);
        self.deferred.push(key, blocking, work)
    }

    pub fn new_context(&mut self, device: usize, flags: u32) -> usize {
        let id = self.new_id();
        self.recreate_context(id, device, flags);
        id
    }

    /// A fresh, empty context under `id`: a new one's, or that of one just destroyed (a reset
    /// primary context keeps its handle).
    pub fn recreate_context(&mut self, id: usize, device: usize, flags: u32) {
        self.contexts.insert(
            id,
            Context {
                device,
                flags,
                ..Context::default()
            },
        );
    }

    /// Whether `handle` is a module, stream or event that went with its context, forgetting it:
    /// its unload or destruction then succeeds once. CUDA leaves such a call undefined
    /// (cuCtxDestroy); Numba's deallocation queue makes it after cuDevicePrimaryCtxReset (its
    /// suites pass on GPUs), and an error there fails every later test, so the emulator answers
    /// success; a second call is CUDA_ERROR_INVALID_HANDLE.
    pub fn orphan(&mut self, handle: usize) -> bool {
        self.orphans.remove(&handle)
    }

    /// Destroys context `id` with everything in it: its memory is freed, and its modules,
    /// functions, streams and events become invalid handles.
    pub fn destroy_context(&mut self, id: usize, memories: &[Arc<Memory>]) -> Outcome {
        let context = self
            .contexts
            .remove(&id)
            .ok_or(CUresult::CUDA_ERROR_INVALID_CONTEXT)?;
        let memory = &memories[context.device];
        for addr in context.allocations {
            // It was allocated in this context and not freed since: freeing cannot fail.
            let _ = memory.free(addr);
        }
        for module in self.modules.values().filter(|m| m.context == id) {
            memory.unmap_module(&module.module);
        }
        let orphans = &mut self.orphans;
        self.modules
            .retain(|&handle, m| m.context != id || !orphans.insert(handle));
        self.functions.retain(|_, f| f.context != id);
        self.streams
            .retain(|&handle, s| s.context != id || !orphans.insert(handle));
        self.events
            .retain(|&handle, e| e.context != id || !orphans.insert(handle));
        self.primary.retain(|_, (primary, _)| *primary != id);
        // Peer access to it ends with it (CUDA: destroying either context ends the access).
        for other in self.contexts.values_mut() {
            other.peers.remove(&id);
        }
        // Work still queued in it (its destruction ran what it could first) goes with it.
        self.deferred.queues.retain(|key, _| key.0 != id);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::visible_devices;

    #[test]
    fn the_mask_is_read_as_cuda_reads_it() {
        assert_eq!(visible_devices(3, None), [0, 1, 2]);
        assert_eq!(visible_devices(3, Some("2,0")), [2, 0]);
        assert_eq!(visible_devices(3, Some(" 1 , 2 ")), [1, 2]);
        // The list ends at the first entry that is not a GPU, or repeats one.
        assert_eq!(visible_devices(3, Some("1,7,0")), [1]);
        assert_eq!(visible_devices(3, Some("0,0,1")), [0]);
        assert_eq!(
            visible_devices(3, Some("GPU-66657272,1")),
            Vec::<u32>::new()
        );
        assert_eq!(visible_devices(3, Some("")), Vec::<u32>::new());
        assert_eq!(visible_devices(3, Some("-1")), Vec::<u32>::new());
    }
}
