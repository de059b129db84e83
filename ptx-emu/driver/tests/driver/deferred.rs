//! Deferred mode (FERROCUDA_EMU_DEFER=1): work on a stream happens when something waits for it.

use cudarc::driver::sys::{self, CUresult};
use cudarc::driver::PushKernelArg;
use std::ffi::c_void;

use crate::common::{address_of, in_a_child, CHILD, STORE_PTX};
use crate::support::own_context;

/// Runs the calling test again in a child with FERROCUDA_EMU_DEFER=1 (read once per process);
/// true in the child, where the test's body runs.
fn deferred_child(name: &str) -> bool {
    if std::env::var_os(CHILD).is_some() {
        return true;
    }
    let env = [("FERROCUDA_EMU_DEFER", "1")];
    in_a_child(name, &env, std::time::Duration::from_secs(120));
    false
}

/// Deferred mode's raw calls: `code` must be CUDA_SUCCESS.
fn ok(code: CUresult) {
    assert_eq!(code, CUresult::CUDA_SUCCESS);
}

/// Deferred mode: a kernel and a download to page-locked memory on a stream have not happened
/// until something waits for them; an event after them is not ready at the first query;
/// synchronising the stream runs them in order.
#[test]
fn deferred_mode_leaves_a_download_unfinished_until_its_stream_is_synchronised() {
    if !deferred_child(
        "deferred::deferred_mode_leaves_a_download_unfinished_until_its_stream_is_synchronised",
    ) {
        return;
    }
    let ctx = own_context();
    ctx.bind_to_thread().unwrap();
    let stream = ctx.new_stream().unwrap();
    let device = stream.alloc_zeros::<u32>(1).unwrap();
    stream.synchronize().unwrap();
    let address = address_of(&device, &ctx);
    let module = ctx
        .load_module(cudarc::nvrtc::Ptx::from_src(STORE_PTX))
        .unwrap();
    let store = module.load_function("store_seven").unwrap();
    let mut builder = stream.launch_builder(&store);
    builder.arg(&address);
    let one = cudarc::driver::LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (1, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: the kernel stores 4 bytes at `address`, inside `device`.
    unsafe { builder.launch(one) }.unwrap();
    let mut host: *mut c_void = std::ptr::null_mut();
    let raw = stream.cu_stream();
    let mut event = std::ptr::null_mut();
    // SAFETY: a 4-byte page-locked buffer, written by the queued copy only once it runs (the
    // reads below are of what is there before and after, through volatile reads); the event
    // and stream are live.
    unsafe {
        ok(sys::cuMemHostAlloc(&mut host, 4, 0));
        let host = host.cast::<u32>();
        host.write_volatile(0xAAAA_AAAA);
        ok(sys::cuMemcpyDtoHAsync_v2(host.cast(), address, 4, raw));
        ok(sys::cuEventCreate(&mut event, 0));
        ok(sys::cuEventRecord(event, raw));
        assert_eq!(
            host.read_volatile(),
            0xAAAA_AAAA,
            "the download ran before a wait"
        );
        assert_eq!(sys::cuEventQuery(event), CUresult::CUDA_ERROR_NOT_READY);
        assert_eq!(sys::cuStreamQuery(raw), CUresult::CUDA_ERROR_NOT_READY);
        assert_eq!(host.read_volatile(), 0xAAAA_AAAA);
        ok(sys::cuStreamSynchronize(raw));
        assert_eq!(host.read_volatile(), 7, "the kernel, then the download");
        ok(sys::cuEventQuery(event));
        ok(sys::cuEventDestroy_v2(event));
        ok(sys::cuMemFreeHost(host.cast()));
    }
}

/// Deferred mode: a stream that waits on an event runs the other stream's work up to the
/// event's record and no further; a synchronous copy does not wait for a non-blocking stream
/// (as on CUDA), and a second query of an event finds it complete.
#[test]
fn deferred_mode_orders_streams_by_events_and_no_further() {
    if !deferred_child("deferred::deferred_mode_orders_streams_by_events_and_no_further") {
        return;
    }
    let ctx = own_context();
    ctx.bind_to_thread().unwrap();
    let (a, b) = (ctx.new_stream().unwrap(), ctx.new_stream().unwrap());
    let x = a.alloc_zeros::<u32>(1).unwrap();
    let y = a.alloc_zeros::<u32>(1).unwrap();
    a.synchronize().unwrap();
    let (x, y) = (address_of(&x, &ctx), address_of(&y, &ctx));
    let (raw_a, raw_b) = (a.cu_stream(), b.cu_stream());
    let mut event = std::ptr::null_mut();
    let read = |address| {
        let mut value = 0u32;
        // SAFETY: 4 bytes into `value` from a live 4-byte allocation.
        ok(unsafe { sys::cuMemcpyDtoH_v2((&raw mut value).cast(), address, 4) });
        value
    };
    // SAFETY: memsets and a copy of 4 bytes within live allocations; live streams and event.
    unsafe {
        ok(sys::cuEventCreate(&mut event, 0));
        ok(sys::cuMemsetD32Async(x, 5, 1, raw_a));
        ok(sys::cuEventRecord(event, raw_a));
        ok(sys::cuMemsetD32Async(x, 9, 1, raw_a));
        // A synchronous copy waits for the legacy default stream, not for non-blocking ones.
        assert_eq!(
            read(x),
            0,
            "a synchronous copy waited for a non-blocking stream"
        );
        ok(sys::cuStreamWaitEvent(raw_b, event, 0));
        ok(sys::cuMemcpyDtoDAsync_v2(y, x, 4, raw_b));
        ok(sys::cuStreamSynchronize(raw_b));
        assert_eq!(read(y), 5, "b saw a's work up to the event");
        assert_eq!(read(x), 5, "a's work after the event has not run");
        ok(sys::cuStreamSynchronize(raw_a));
        assert_eq!(read(x), 9);
        // A fresh record after work: the first query says not ready, the second finds it done.
        ok(sys::cuMemsetD32Async(x, 11, 1, raw_a));
        ok(sys::cuEventRecord(event, raw_a));
        assert_eq!(sys::cuEventQuery(event), CUresult::CUDA_ERROR_NOT_READY);
        ok(sys::cuEventQuery(event));
        assert_eq!(read(x), 11);
        // cuCtxSynchronize runs everything.
        ok(sys::cuMemsetD32Async(y, 13, 1, raw_b));
        ok(sys::cuCtxSynchronize());
        assert_eq!(read(y), 13);
        ok(sys::cuEventDestroy_v2(event));
    }
}
