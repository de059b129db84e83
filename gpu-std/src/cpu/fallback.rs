//! The split path's fallback to coroutines. `#[kernel]` splits a kernel at the barriers it sees
//! and treats the functions the kernel calls as barrier-free, since it cannot look into them.
//! When a thread reaches a barrier or warp operation inside a region anyway (a helper
//! holds both), what happens depends on the threads before it in the block:
//!
//! - none of them ran the region to its end (the usual case: the region's first thread): the
//!   rest of the region runs on the coroutine scheduler. This thread is the driver, on the
//!   split block's stack; every later thread starts the region from its beginning as a
//!   coroutine, with its carried values, and the block goes on split after the region;
//! - one of them did, without reaching it (or, for a warp operation, a lane of its mask did):
//!   on a GPU those threads would never arrive, so it is barrier (or warp) divergence, reported
//!   with both places, never a hang or a wrong answer.
//!
//! The loop running the region lends it here ([`lend`]) for [`hidden_sync`] to find.

use super::block;
use super::bug::{raise, KernelBug};
use super::context::{current_block, current_linear, current_thread, linear_to_dim};
use super::waits::{Wait, WARP};
use core::cell::Cell;
use core::marker::PhantomData;
use core::panic::Location;
use std::format;
use std::string::String;

/// Where a thread that ran a region to its end went next.
#[derive(Clone, Copy)]
pub(crate) enum End {
    /// The body's next `sync_threads()`, at this site.
    Barrier(&'static Location<'static>),
    /// The end of the region (a loop's trip decision, or the kernel's end).
    Region,
    /// The end of the kernel (the elementwise path: one region).
    Kernel,
}

/// A running region, as the fallback needs it.
pub(crate) struct Fallback<'a> {
    /// Runs the region for the running thread (`current_linear()`): the coroutines' body.
    pub(crate) thread: &'a dyn Fn(),
    /// Whether thread `linear` (one before the running thread) has run the region to its end.
    pub(crate) ran: &'a dyn Fn(usize) -> bool,
    pub(crate) end: End,
    /// Whether the loop running the region switches to the scheduler after a thread that
    /// activated it (the elementwise loop does only after the block's first thread).
    pub(crate) can_switch: Cell<bool>,
    /// The coroutines' stack size.
    pub(crate) stack_bytes: usize,
}

std::thread_local! {
    /// The region the split block on this OS thread is running (null: none).
    static CURRENT: Cell<*const Fallback<'static>> = const { Cell::new(core::ptr::null()) };
}

/// Lends `fallback` to [`hidden_sync`] until the returned guard drops (also when it unwinds).
#[inline(always)]
pub(crate) fn lend<'a>(fallback: &'a Fallback<'a>) -> Lent<'a> {
    let erased = core::ptr::from_ref(fallback).cast::<Fallback<'static>>();
    Lent {
        previous: CURRENT.with(|c| c.replace(erased)),
        _fallback: PhantomData,
    }
}

/// The loan of a [`Fallback`]; gives it back when dropped.
pub(crate) struct Lent<'a> {
    previous: *const Fallback<'static>,
    _fallback: PhantomData<&'a Fallback<'a>>,
}

impl Drop for Lent<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        CURRENT.with(|c| c.set(self.previous));
    }
}

/// Forgets the lent region after a split block unwound (`take_current`, via `regions::abandon`).
pub(crate) fn abandon() {
    CURRENT.with(|c| c.set(core::ptr::null()));
}

/// A barrier or warp operation (`wait`) the macro did not see, reached inside a region of a split
/// block whose scheduler is not active: either prepares the scheduler to run the rest of the
/// region (the caller, [`block::wait`], then activates it with this thread as the driver), or
/// reports the divergence.
pub(crate) fn hidden_sync(wait: &Wait) {
    let current = CURRENT.with(Cell::get);
    let (what, site) = match *wait {
        Wait::Barrier { site, .. } => ("sync_threads()", site),
        Wait::Warp { op, site, .. } => (op.name(), site),
    };
    if current.is_null() {
        // Between regions no kernel code runs, so this is a guard only.
        let detail = format!(
            "{what} at {site} was reached in a split block outside its regions; set \
             FERROCUDA_CPU_PATH=coroutine"
        );
        raise(current_thread(), KernelBug::BarrierDivergence { detail });
    }
    // SAFETY: a non-null CURRENT is the `Fallback` lent by `lend`, whose guard lives in the
    // same frame as the `Fallback` and puts the previous value back before that frame ends
    // (on unwinding too); kernel code reaching this runs inside that frame.
    let fallback = unsafe { &*current };
    let me = current_linear();
    let block_dim = current_block().block_dim;
    let earlier = match *wait {
        Wait::Barrier { .. } => (0..me).find(|&j| (fallback.ran)(j)),
        Wait::Warp { mask, .. } => {
            let base = me - me % WARP;
            (base..me)
                .filter(|&j| mask & (1 << (j - base)) != 0)
                .find(|&j| (fallback.ran)(j))
        }
    };
    if let Some(j) = earlier {
        let to = match fallback.end {
            End::Barrier(end) => format!("to sync_threads() at {end}"),
            End::Region => "to the end of the region".into(),
            End::Kernel => "to the end of the kernel".into(),
        };
        let detail = format!(
            "thread {} waits at {what} at {site}, inside a function #[kernel] cannot look into, \
             but thread {} had run on past that point {to} without reaching it",
            linear_to_dim(me, block_dim),
            linear_to_dim(j, block_dim),
        );
        raise(current_thread(), divergence(wait, detail));
    }
    if !fallback.can_switch.get() {
        let detail = format!(
            "thread {} is the first of its block to reach {what} at {site}, inside a function \
             #[kernel] cannot look into, after the threads before it ran the kernel without \
             reaching it; the elementwise path moves a block onto coroutines only when its first \
             thread reaches one: set FERROCUDA_CPU_PATH=coroutine",
            linear_to_dim(me, block_dim),
        );
        raise(current_thread(), divergence(wait, detail));
    }
    // SAFETY: `fallback.thread` lives in the frame of the loop running the region, which calls
    // `block::finish_block` (finishing every coroutine) before it goes on, or unwinds into
    // `take_current`, whose `block::abandon` drops them first.
    unsafe { block::begin_block(fallback.thread, block_dim, fallback.stack_bytes) };
}

fn divergence(wait: &Wait, detail: String) -> KernelBug {
    match wait {
        Wait::Barrier { .. } => KernelBug::BarrierDivergence { detail },
        Wait::Warp { .. } => KernelBug::WarpDivergence { detail },
    }
}
