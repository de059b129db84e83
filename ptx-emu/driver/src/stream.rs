//! Streams and events. Work runs when it is queued, so a stream is always idle and an event
//! completes when it is recorded; what the host can observe still holds: order, queries, and
//! elapsed times measured between the records. In deferred mode (`deferred.rs`) work waits in
//! its stream's queue: synchronisations run it, a first query of unfinished work says
//! `CUDA_ERROR_NOT_READY` (the next one runs it), and an event completes when the work queued
//! before its record has run.

use crate::deferred::{self, Work, DEFER};
use crate::deferred_run;
use crate::ffi::{guard, handle, id_of, put};
use crate::state::{Event, Stream, DRIVER};
use cudarc::driver::sys::CUstreamCaptureStatus;
use cudarc::driver::sys::{CUevent, CUevent_flags as EventFlags, CUhostFn, CUresult, CUstream};
use std::ffi::{c_int, c_uint, c_void};
use std::time::Instant;

#[no_mangle]
pub unsafe extern "C" fn cuStreamCreate(phStream: *mut CUstream, flags: c_uint) -> CUresult {
    guard("cuStreamCreate", || {
        let mut state = DRIVER.state()?;
        let (context, _) = state.current_usable()?;
        if phStream.is_null() {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        let id = state.new_id();
        // CU_STREAM_NON_BLOCKING (1): no synchronisation with the legacy default stream.
        let blocking = flags & 1 == 0;
        state.streams.insert(id, Stream { context, blocking });
        // SAFETY: not null and valid for one write (driver API contract).
        unsafe { put(phStream, handle(id)) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuStreamCreateWithPriority(
    phStream: *mut CUstream,
    flags: c_uint,
    _priority: c_int,
) -> CUresult {
    // One priority (cuCtxGetStreamPriorityRange says 0..0); others are clamped, as the driver does.
    // SAFETY: the same contract as cuStreamCreate.
    unsafe { cuStreamCreate(phStream, flags) }
}

#[no_mangle]
pub unsafe extern "C" fn cuStreamDestroy_v2(hStream: CUstream) -> CUresult {
    guard("cuStreamDestroy_v2", || {
        let mut state = DRIVER.state()?;
        let id = id_of(hStream);
        if state.orphan(id) {
            return Ok(());
        }
        let context = state
            .streams
            .get(&id)
            .ok_or(CUresult::CUDA_ERROR_INVALID_HANDLE)?
            .context;
        state.usable(context)?;
        state.streams.remove(&id);
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuStreamSynchronize(hStream: CUstream) -> CUresult {
    // Its work is done (deferred mode: once it has run): the context's sticky fault is left.
    guard("cuStreamSynchronize", || {
        let targets = {
            let mut state = DRIVER.state()?;
            let context = state.stream_context(id_of(hStream))?;
            state
                .deferred
                .stream(deferred::key(context, id_of(hStream)))
        };
        let ran = deferred_run::run_until(targets);
        DRIVER.state()?.stream_context(id_of(hStream))?;
        ran
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuStreamQuery(hStream: CUstream) -> CUresult {
    guard("cuStreamQuery", || {
        let targets = {
            let mut state = DRIVER.state()?;
            let context = state.stream_context(id_of(hStream))?;
            let key = deferred::key(context, id_of(hStream));
            let targets = state.deferred.stream(key);
            if let Some(queue) = state.deferred.queues.get_mut(&key) {
                if !targets.is_empty() && !queue.polled {
                    // Busy, this time; by the next query the GPU has got through it.
                    queue.polled = true;
                    return Err(CUresult::CUDA_ERROR_NOT_READY);
                }
            }
            targets
        };
        let ran = deferred_run::run_until(targets);
        DRIVER.state()?.stream_context(id_of(hStream))?;
        ran
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuStreamWaitEvent(
    hStream: CUstream,
    hEvent: CUevent,
    _flags: c_uint,
) -> CUresult {
    guard("cuStreamWaitEvent", || {
        let mut state = DRIVER.state()?;
        let stream_context = state.stream_context(id_of(hStream))?;
        // The event's work is complete already (deferred mode: or the stream's later work
        // waits for it); it only has to exist.
        let event = state
            .events
            .get(&id_of(hEvent))
            .ok_or(CUresult::CUDA_ERROR_INVALID_HANDLE)?;
        let (context, pending) = (event.context, event.pending);
        state.usable(context)?;
        if let Some(position) = pending.filter(|&p| state.deferred.pending(p)) {
            state.defer(stream_context, id_of(hStream), Work::Wait(vec![position]));
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuStreamIsCapturing(
    hStream: CUstream,
    captureStatus: *mut CUstreamCaptureStatus,
) -> CUresult {
    guard("cuStreamIsCapturing", || {
        DRIVER.state()?.stream_context(id_of(hStream))?;
        // Graph capture is not supported, so no stream is ever capturing.
        // SAFETY: the caller's pointer is valid for one write (driver API contract).
        unsafe {
            put(
                captureStatus,
                CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE,
            )
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuLaunchHostFunc(
    hStream: CUstream,
    fn_: CUhostFn,
    userData: *mut c_void,
) -> CUresult {
    guard("cuLaunchHostFunc", || {
        let context = DRIVER.state()?.stream_context(id_of(hStream))?;
        let f = fn_.ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
        if *DEFER {
            let work = Work::Host {
                f,
                data: userData.addr(),
            };
            DRIVER.state()?.defer(context, id_of(hStream), work);
            return Ok(());
        }
        // Everything queued before it has finished: it runs now, on this thread.
        // SAFETY: the caller's function and data go together (driver API contract).
        unsafe { f(userData) };
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuEventCreate(phEvent: *mut CUevent, Flags: c_uint) -> CUresult {
    guard("cuEventCreate", || {
        let mut state = DRIVER.state()?;
        let (context, _) = state.current_usable()?;
        if phEvent.is_null() {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        let timing = Flags & EventFlags::CU_EVENT_DISABLE_TIMING as u32 == 0;
        let id = state.new_id();
        state.events.insert(
            id,
            Event {
                context,
                timing,
                recorded: None,
                pending: None,
                polled: false,
            },
        );
        // SAFETY: not null and valid for one write (driver API contract).
        unsafe { put(phEvent, handle(id)) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuEventRecord(hEvent: CUevent, hStream: CUstream) -> CUresult {
    guard("cuEventRecord", || {
        let mut state = DRIVER.state()?;
        let stream_context = state.stream_context(id_of(hStream))?;
        let event = state
            .events
            .get_mut(&id_of(hEvent))
            .ok_or(CUresult::CUDA_ERROR_INVALID_HANDLE)?;
        if event.context != stream_context {
            return Err(CUresult::CUDA_ERROR_INVALID_CONTEXT);
        }
        if !*DEFER {
            event.recorded = Some(Instant::now());
            return Ok(());
        }
        // It completes when the work queued before it has run.
        let id = id_of(hEvent);
        let position = state.defer(stream_context, id_of(hStream), Work::Record { event: id });
        let event = state.events.get_mut(&id).expect("looked up above");
        event.recorded = None;
        event.pending = Some(position);
        event.polled = false;
        Ok(())
    })
}

/// Checks that `event` exists and its context is usable.
fn check_event(event: CUevent) -> Result<(), CUresult> {
    let mut state = DRIVER.state()?;
    let context = state
        .events
        .get(&id_of(event))
        .ok_or(CUresult::CUDA_ERROR_INVALID_HANDLE)?
        .context;
    state.usable(context).map(|_| ())
}

/// Deferred mode: runs the work up to `event`'s latest record (`query`: only if a query found it
/// waiting before; the first says `CUDA_ERROR_NOT_READY`).
fn finish_event(event: CUevent, query: bool) -> Result<(), CUresult> {
    let position = {
        let mut state = DRIVER.state()?;
        let record = state
            .events
            .get(&id_of(event))
            .ok_or(CUresult::CUDA_ERROR_INVALID_HANDLE)?
            .pending;
        let Some(position) = record.filter(|&p| state.deferred.pending(p)) else {
            return Ok(());
        };
        let event = state
            .events
            .get_mut(&id_of(event))
            .expect("looked up above");
        if query && !event.polled {
            event.polled = true;
            return Err(CUresult::CUDA_ERROR_NOT_READY);
        }
        position
    };
    deferred_run::run_until(vec![position])
}

#[no_mangle]
pub unsafe extern "C" fn cuEventSynchronize(hEvent: CUevent) -> CUresult {
    guard("cuEventSynchronize", || {
        check_event(hEvent)?;
        let ran = finish_event(hEvent, false);
        check_event(hEvent)?;
        ran
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuEventQuery(hEvent: CUevent) -> CUresult {
    guard("cuEventQuery", || {
        check_event(hEvent)?;
        let ran = finish_event(hEvent, true);
        check_event(hEvent)?;
        ran
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuEventElapsedTime(
    pMilliseconds: *mut f32,
    hStart: CUevent,
    hEnd: CUevent,
) -> CUresult {
    guard("cuEventElapsedTime", || {
        let mut state = DRIVER.state()?;
        let times = [hStart, hEnd].map(|e| {
            state
                .events
                .get(&id_of(e))
                .map(|e| (e.context, e.timing, e.recorded, e.pending))
                .ok_or(CUresult::CUDA_ERROR_INVALID_HANDLE)
        });
        if times.iter().flatten().any(|t| t.3.is_some()) {
            // Deferred mode: a record not yet reached has no time yet.
            return Err(CUresult::CUDA_ERROR_NOT_READY);
        }
        let times = times.map(|t| t.map(|(c, timing, recorded, _)| (c, timing, recorded)));
        let [(start_context, start_timing, start), (end_context, end_timing, end)] =
            [times[0]?, times[1]?];
        state.usable(start_context)?;
        state.usable(end_context)?;
        // As the driver: both recorded, both with timing, else an invalid handle.
        let (Some(start), Some(end)) = (start, end) else {
            return Err(CUresult::CUDA_ERROR_INVALID_HANDLE);
        };
        if !start_timing || !end_timing {
            return Err(CUresult::CUDA_ERROR_INVALID_HANDLE);
        }
        let ms = match end.checked_duration_since(start) {
            Some(d) => d.as_secs_f64() * 1e3,
            None => -(start.duration_since(end).as_secs_f64() * 1e3),
        };
        // SAFETY: the caller's pointer is valid for one write (driver API contract).
        unsafe { put(pMilliseconds, ms as f32) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuEventElapsedTime_v2(
    pMilliseconds: *mut f32,
    hStart: CUevent,
    hEnd: CUevent,
) -> CUresult {
    // SAFETY: the same contract as cuEventElapsedTime.
    unsafe { cuEventElapsedTime(pMilliseconds, hStart, hEnd) }
}

#[no_mangle]
pub unsafe extern "C" fn cuEventDestroy_v2(hEvent: CUevent) -> CUresult {
    guard("cuEventDestroy_v2", || {
        if DRIVER.state()?.orphan(id_of(hEvent)) {
            return Ok(());
        }
        check_event(hEvent)?;
        DRIVER.state()?.events.remove(&id_of(hEvent));
        Ok(())
    })
}
