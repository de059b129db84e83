//! Several virtual GPUs (`FERROCUDA_EMU_DEVICES=3` for this binary): enumeration, each device's
//! own memory (a kernel of one device does not reach another's), copies between devices
//! (`cuMemcpyPeer`, `cuMemcpyPeerAsync`, `cuMemcpyDtoD` under unified addressing). Peer access
//! (kernels reaching another device's memory) is tests/peer_access.rs.
//!
//! A test binary of its own: the count is read once, when the library first initialises.

use cudarc::driver::sys::{self, CUresult};
use cudarc::driver::{result, CudaContext, DevicePtr, DevicePtrMut, PushKernelArg};
use std::sync::Arc;

mod support;

const DEVICES: usize = 3;

/// Loads the emulator once, with `FERROCUDA_EMU_DEVICES` set before anything reads it.
fn emulator() {
    support::load_emulator(|| {
        // SAFETY (edition 2021: a safe call): set before the library is loaded, in the Once that
        // every test waits for, so no other thread of this binary reads the environment then.
        std::env::set_var("FERROCUDA_EMU_DEVICES", DEVICES.to_string());
    });
}

fn context(ordinal: usize) -> Arc<CudaContext> {
    emulator();
    CudaContext::new_non_primary(ordinal, 0).expect("a new context")
}

#[test]
fn the_driver_reports_as_many_devices_as_asked_each_with_its_own_identity() {
    emulator();
    result::init().unwrap();
    assert_eq!(CudaContext::device_count().unwrap(), DEVICES as i32);
    let mut uuids = Vec::new();
    for ordinal in 0..DEVICES {
        let ctx = CudaContext::new(ordinal).unwrap();
        assert_eq!(ctx.ordinal(), ordinal);
        assert!(ctx.name().unwrap().starts_with("ferrocuda PTX emulator"));
        let mut device = -1;
        // SAFETY: the context is current (bound by `new`) and the call writes one device.
        unsafe {
            ctx.bind_to_thread().unwrap();
            sys::cuCtxGetDevice(&mut device).result().unwrap();
        }
        assert_eq!(device, ordinal as i32, "cuCtxGetDevice");
        uuids.push(ctx.uuid().unwrap().bytes);
    }
    uuids.sort();
    uuids.dedup();
    assert_eq!(uuids.len(), DEVICES, "every device has its own UUID");
    // One past the last is not a device.
    let mut device = 0;
    // SAFETY: writes one device handle (or nothing, for an invalid ordinal).
    let code = unsafe { sys::cuDeviceGet(&mut device, DEVICES as i32) };
    assert_eq!(code, CUresult::CUDA_ERROR_INVALID_DEVICE);
}

#[test]
fn each_device_has_its_own_memory_and_primary_context() {
    let (zero, one) = (context(0), context(1));
    let a = zero.default_stream().clone_htod(&[1u32, 2, 3]).unwrap();
    let b = one.default_stream().clone_htod(&[4u32, 5, 6]).unwrap();
    let (a_ptr, b_ptr) = (
        a.device_ptr(&zero.default_stream()).0,
        b.device_ptr(&one.default_stream()).0,
    );
    assert_ne!(
        a_ptr, b_ptr,
        "unified addressing: addresses are unique across devices"
    );
    // Unified addressing: a plain device-to-device copy in device 1's context reaches device
    // 0's memory (CUDA finds each pointer's device; no peer access is needed for copies).
    one.bind_to_thread().unwrap();
    // SAFETY: both addresses are live allocations of 12 bytes; the emulator checks them.
    unsafe { sys::cuMemcpyDtoD_v2(b_ptr + 4, a_ptr, 8) }
        .result()
        .unwrap();
    assert_eq!(one.default_stream().clone_dtoh(&b).unwrap(), [4, 1, 2]);
    // Past the end of the other device's allocation is refused, and nothing is written.
    // SAFETY: as above; the source range ends 4 bytes past `a`.
    let code = unsafe { sys::cuMemcpyDtoD_v2(b_ptr, a_ptr + 4, 12) };
    assert_eq!(code, CUresult::CUDA_ERROR_INVALID_VALUE);
    assert_eq!(one.default_stream().clone_dtoh(&b).unwrap(), [4, 1, 2]);
    // So do copies from and to the host (Numba's test_multigpu copies an array of device 1 to
    // the host in device 0's context).
    let mut host = [0u32; 3];
    // SAFETY: 12 bytes of live allocation and of host memory, in and out.
    unsafe {
        sys::cuMemcpyHtoD_v2(a_ptr + 4, [8u32].as_ptr().cast(), 4)
            .result()
            .unwrap();
        sys::cuMemcpyDtoH_v2(host.as_mut_ptr().cast(), a_ptr, 12)
            .result()
            .unwrap();
    }
    assert_eq!(host, [1, 8, 3]);
    assert_eq!(zero.default_stream().clone_dtoh(&a).unwrap(), [1, 8, 3]);
    // Free memory is per device: an allocation on device 2 leaves device 0's as it was.
    // (Only this test uses device 2; others allocate a few MiB at most on 0 and 1 meanwhile.)
    let two = context(2);
    let (free, total) = two.mem_get_info().unwrap();
    assert_eq!(free, total, "device 2 is unused");
    let big = two.default_stream().alloc_zeros::<u8>(64 << 20).unwrap();
    assert_eq!(two.mem_get_info().unwrap().0, total - (64 << 20));
    assert!(zero.mem_get_info().unwrap().0 > total - (64 << 20));
    drop(big);
    // The primary contexts of two devices are two contexts.
    let (p0, p1) = (CudaContext::new(0).unwrap(), CudaContext::new(1).unwrap());
    assert_ne!(p0.cu_ctx(), p1.cu_ctx());
    assert!(p0.is_primary() && p1.is_primary());
}

const STORE_PTX: &str = ".version 6.0\n.target sm_70\n.address_size 64\n\n\
    .visible .entry store_seven(.param .u64 p)\n{\n\t.reg .b32 %r<2>;\n\t.reg .b64 %rd<2>;\n\n\
    \tld.param.u64 %rd1, [p];\n\tmov.u32 %r1, 7;\n\tst.global.u32 [%rd1], %r1;\n\tret;\n}\n";

#[test]
fn a_kernel_of_one_device_faults_on_another_device_s_address() {
    let (zero, one) = (context(0), context(1));
    let mut on_zero = zero.default_stream().alloc_zeros::<u32>(1).unwrap();
    let address = on_zero.device_ptr_mut(&zero.default_stream()).0;
    let module = one
        .load_module(cudarc::nvrtc::Ptx::from_src(STORE_PTX))
        .unwrap();
    let store = module.load_function("store_seven").unwrap();
    let stream = one.default_stream();
    let mut builder = stream.launch_builder(&store);
    builder.arg(&address);
    let config = cudarc::driver::LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (1, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: the kernel stores 4 bytes at its argument; the emulator checks the address, which
    // is device 0's and so not in device 1's memory.
    let launched = unsafe { builder.launch(config) }.map(|_| ());
    let error = launched.and_then(|()| stream.synchronize()).unwrap_err();
    assert_eq!(error.0, CUresult::CUDA_ERROR_ILLEGAL_ADDRESS);
    assert_eq!(zero.default_stream().clone_dtoh(&on_zero).unwrap(), [0]);
}

#[test]
fn peer_copies_move_bytes_between_devices() {
    let (zero, one) = (context(0), context(1));
    let data: Vec<u32> = (0..300_000).collect();
    let src = zero.default_stream().clone_htod(&data).unwrap();
    let mut dst = one.default_stream().alloc_zeros::<u32>(data.len()).unwrap();
    let bytes = data.len() * 4;
    let (zs, os) = (zero.default_stream(), one.default_stream());
    {
        let (s, _r) = src.device_ptr(&zs);
        let (d, _w) = dst.device_ptr_mut(&os);
        // SAFETY: both ranges are `bytes` long in live allocations of their contexts.
        unsafe {
            result::memcpy_peer_async(
                one.cu_ctx(),
                d,
                zero.cu_ctx(),
                s,
                bytes,
                one.default_stream().cu_stream(),
            )
        }
        .unwrap();
    }
    assert_eq!(one.default_stream().clone_dtoh(&dst).unwrap(), data);

    // The synchronous form, the other way, for a part.
    let back = one.default_stream().clone_htod(&[9u32; 10]).unwrap();
    let (b, _r) = back.device_ptr(&os);
    let (s, _w) = src.device_ptr(&zs);
    // SAFETY: 40 bytes in live allocations of their contexts.
    unsafe { sys::cuMemcpyPeer(s + 8, zero.cu_ctx(), b, one.cu_ctx(), 40) }
        .result()
        .unwrap();
    let got = zero.default_stream().clone_dtoh(&src).unwrap();
    assert_eq!(&got[..2], &[0, 1]);
    assert_eq!(&got[2..12], &[9; 10]);
    assert_eq!(got[12], 12);

    // Past the end of either allocation is refused, and nothing is written.
    // SAFETY: the emulator checks the ranges (this one ends past `back`'s 40 bytes).
    let code = unsafe { sys::cuMemcpyPeer(s, zero.cu_ctx(), b, one.cu_ctx(), 44) };
    assert_eq!(code, CUresult::CUDA_ERROR_INVALID_VALUE);
}
