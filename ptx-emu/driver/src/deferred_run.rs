//! Running deferred work ([`crate::deferred`]'s queues): on the thread of the call that needs it,
//! one runner at a time, each queue in its order, what a target waits for first. Above the
//! queues and the launch: it runs copies, memsets, launches, event records and host functions.

use crate::deferred::{Key, Work, DEFER};
use crate::ffi::Outcome;
use crate::state::DRIVER;
use cudarc::driver::sys::CUresult;
use std::cell::Cell;
use std::ffi::c_void;
use std::sync::Mutex;
use std::time::Instant;

thread_local! {
    /// This thread is running queued work (a host function that calls back into the driver).
    static RUNNING: Cell<bool> = const { Cell::new(false) };
}

/// One thread runs queued work at a time, so each queue's work runs in its order.
static RUNNER: Mutex<()> = Mutex::new(());

/// Runs queued work until every `(queue, position)` of `targets` has run, with what it waits
/// for first. Called without the driver's state lock. The first error of work that ran (a
/// launch's non-sticky one) is returned; sticky faults are left on their contexts.
pub(crate) fn run_until(targets: Vec<(Key, u64)>) -> Outcome {
    if targets.is_empty() {
        return Ok(());
    }
    if RUNNING.with(Cell::get) {
        // CUDA forbids calls that wait for work from a host function.
        return Err(CUresult::CUDA_ERROR_NOT_PERMITTED);
    }
    let _runner = RUNNER.lock().unwrap_or_else(|p| p.into_inner());
    RUNNING.with(|r| r.set(true));
    let outcome = run_targets(targets);
    RUNNING.with(|r| r.set(false));
    outcome
}

fn run_targets(mut stack: Vec<(Key, u64)>) -> Outcome {
    let mut first_error = None;
    while let Some(&(key, upto)) = stack.last() {
        let (seq, work, faulted) = {
            let mut state = DRIVER.state()?;
            let queues = &mut state.deferred;
            if !queues.pending((key, upto)) {
                stack.pop();
                continue;
            }
            let queue = queues.queues.get_mut(&key).expect("pending, so present");
            if let Some((_, Work::Wait(waits))) = queue.items.front() {
                let unmet: Vec<(Key, u64)> = waits.clone();
                let unmet: Vec<(Key, u64)> =
                    unmet.into_iter().filter(|&w| queues.pending(w)).collect();
                if !unmet.is_empty() {
                    stack.extend(unmet);
                    continue;
                }
            }
            let queue = queues.queues.get_mut(&key).expect("pending, so present");
            let (seq, work) = queue.items.pop_front().expect("pending, so not empty");
            let faulted = state.contexts.get(&key.0).is_none_or(|c| c.fault.is_some());
            (seq, work, faulted)
        };
        if faulted {
            // A context lost to a fault runs nothing more (its calls return the fault).
            continue;
        }
        if let Err(code) = run(key, seq, work) {
            first_error.get_or_insert(code);
        }
    }
    first_error.map_or(Ok(()), Err)
}

/// Runs one piece of work.
fn run(key: Key, seq: u64, work: Work) -> Outcome {
    // The memory of the queue's context's device.
    let memory = DRIVER.memory_of(&*DRIVER.state()?, key.0).clone();
    let code = crate::errors::code;
    match work {
        Work::HtoD { dst, src, bytes } => {
            // SAFETY: page-locked memory the caller queued the copy from; the driver API
            // requires it to stay valid and unchanged until the copy has run.
            let data = unsafe { std::slice::from_raw_parts(src as *const u8, bytes) };
            memory.write(dst, data).map_err(code)
        }
        Work::Write { dst, data } => memory.write(dst, &data).map_err(code),
        Work::DtoH { dst, src, bytes } => {
            // SAFETY: page-locked memory the caller queued the copy to; the driver API requires
            // it to stay valid, and the host not to touch it, until the copy has run.
            let out = unsafe { std::slice::from_raw_parts_mut(dst as *mut u8, bytes) };
            memory.read(src, out).map_err(code)
        }
        Work::DtoD { dst, src, bytes } => memory.copy(dst, src, bytes).map_err(code),
        Work::Memset {
            dst,
            pattern,
            count,
        } => memory.fill(dst, &pattern, count).map_err(code),
        Work::Launch(launch) => crate::launch::run(&launch),
        Work::Record { event } => {
            let mut state = DRIVER.state()?;
            if let Some(event) = state.events.get_mut(&event) {
                if event.pending == Some((key, seq)) {
                    event.pending = None;
                    event.recorded = Some(Instant::now());
                }
            }
            Ok(())
        }
        Work::Wait(_) => Ok(()),
        Work::Host { f, data } => {
            // SAFETY: the caller's function and data go together (driver API contract).
            unsafe { f(data as *mut c_void) };
            Ok(())
        }
    }
}

/// Runs every queue of `context` (`None`: of every context) to its end.
pub(crate) fn finish(context: Option<usize>) -> Outcome {
    if !*DEFER {
        return Ok(());
    }
    let targets = DRIVER.state()?.deferred.all(context);
    run_until(targets)
}

/// Runs what a synchronous copy or memset in `context` waits for.
pub(crate) fn finish_legacy(context: usize) -> Outcome {
    if !*DEFER {
        return Ok(());
    }
    let targets = DRIVER.state()?.deferred.legacy(context);
    run_until(targets)
}
