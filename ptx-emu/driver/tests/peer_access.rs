//! Peer access between two virtual GPUs (`FERROCUDA_EMU_DEVICES=2` for this binary), as on a
//! node whose GPUs are linked: `cuDeviceCanAccessPeer`, `cuDeviceGetP2PAttribute`,
//! `cuCtxEnablePeerAccess` / `cuCtxDisablePeerAccess` with CUDA's errors, and kernels of one
//! device that load, store and do atomics on the other's memory once (and only while) their
//! context has enabled access to the other's.
//!
//! A test binary of its own: the device count is read once, when the library first initialises.

use cudarc::driver::sys::{self, CUdevice_P2PAttribute_enum as P2P, CUresult};
use cudarc::driver::{CudaContext, DevicePtrMut, LaunchConfig, PushKernelArg};
use std::sync::Arc;

mod support;

/// Loads the emulator once, with `FERROCUDA_EMU_DEVICES` set before anything reads it.
fn context(ordinal: usize) -> Arc<CudaContext> {
    support::load_emulator(|| {
        // SAFETY (edition 2021: a safe call): set before the library is loaded, in the Once that
        // every test waits for, so no other thread of this binary reads the environment then.
        std::env::set_var("FERROCUDA_EMU_DEVICES", "2");
    });
    // Contexts of their own, so that one test's fault (sticky) reaches no other test.
    CudaContext::new_non_primary(ordinal, 0).expect("a new context")
}

/// Adds 1 atomically at its argument and stores the thread's index at the argument + 4 + 4 *
/// index: an atomic and a plain store, both at the given address.
const ADD_PTX: &str = ".version 6.0\n.target sm_70\n.address_size 64\n\n\
    .visible .entry add_one(.param .u64 p)\n{\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<4>;\n\n\
    \tld.param.u64 %rd1, [p];\n\tatom.global.add.u32 %r1, [%rd1], 1;\n\
    \tmov.u32 %r2, %tid.x;\n\tmul.wide.u32 %rd2, %r2, 4;\n\tadd.u64 %rd3, %rd1, %rd2;\n\
    \tld.global.u32 %r3, [%rd3+4];\n\tadd.u32 %r3, %r3, %r2;\n\tst.global.u32 [%rd3+4], %r3;\n\
    \tret;\n}\n";

const THREADS: u32 = 64;

/// Launches `add_one` (THREADS threads) in `ctx` at `address`, and waits: the outcome.
fn add_one_at(ctx: &Arc<CudaContext>, address: u64) -> Result<(), CUresult> {
    let module = ctx
        .load_module(cudarc::nvrtc::Ptx::from_src(ADD_PTX))
        .unwrap();
    let add = module.load_function("add_one").unwrap();
    let stream = ctx.default_stream();
    let mut builder = stream.launch_builder(&add);
    builder.arg(&address);
    let config = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: the kernel touches 4 + 4 * THREADS bytes at its argument; the emulator checks
    // every access (one outside what the context reaches is what some tests want).
    let launched = unsafe { builder.launch(config) }.map(|_| ());
    launched
        .and_then(|()| stream.synchronize())
        .map_err(|e| e.0)
}

/// `cuCtxEnablePeerAccess(peer)` from `ctx`.
fn enable(ctx: &CudaContext, peer: &CudaContext, flags: u32) -> CUresult {
    ctx.bind_to_thread().unwrap();
    // SAFETY: both are live contexts' handles; the call reads nothing else.
    unsafe { sys::cuCtxEnablePeerAccess(peer.cu_ctx(), flags) }
}

/// `cuCtxDisablePeerAccess(peer)` from `ctx`.
fn disable(ctx: &CudaContext, peer: sys::CUcontext) -> CUresult {
    ctx.bind_to_thread().unwrap();
    // SAFETY: the call only compares the handle with the driver's.
    unsafe { sys::cuCtxDisablePeerAccess(peer) }
}

#[test]
fn every_other_device_is_a_peer_and_a_device_is_not_its_own() {
    let _ = context(0);
    for (dev, peer, expected) in [(0, 1, 1), (1, 0, 1), (0, 0, 0), (1, 1, 0)] {
        let mut can = -1;
        // SAFETY: writes one int.
        unsafe { sys::cuDeviceCanAccessPeer(&mut can, dev, peer) }
            .result()
            .unwrap();
        assert_eq!(can, expected, "{dev} -> {peer}");
    }
    let mut can = -1;
    // SAFETY: writes one int, or nothing for a device that does not exist.
    let code = unsafe { sys::cuDeviceCanAccessPeer(&mut can, 0, 2) };
    assert_eq!(code, CUresult::CUDA_ERROR_INVALID_DEVICE);

    let attribute = |attribute: P2P, src, dst| {
        let mut value = -1;
        // SAFETY: writes one int, or nothing on an error.
        let code = unsafe { sys::cuDeviceGetP2PAttribute(&mut value, attribute, src, dst) };
        (code, value)
    };
    let ok = CUresult::CUDA_SUCCESS;
    let access = P2P::CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED;
    assert_eq!(attribute(access, 0, 1), (ok, 1));
    assert_eq!(attribute(access, 1, 0), (ok, 1));
    let atomics = P2P::CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED;
    assert_eq!(attribute(atomics, 0, 1), (ok, 1));
    assert_eq!(
        attribute(access, 1, 1).0,
        CUresult::CUDA_ERROR_INVALID_DEVICE,
        "the link between a device and itself"
    );
}

#[test]
fn enabling_and_disabling_give_cuda_s_errors() {
    let (zero, one) = (context(0), context(1));
    let also_zero = context(0);
    assert_eq!(enable(&zero, &one, 1), CUresult::CUDA_ERROR_INVALID_VALUE);
    assert_eq!(
        enable(&zero, &zero, 0),
        CUresult::CUDA_ERROR_INVALID_CONTEXT
    );
    assert_eq!(
        enable(&zero, &also_zero, 0),
        CUresult::CUDA_ERROR_PEER_ACCESS_UNSUPPORTED,
        "another context of the same device"
    );
    assert_eq!(
        disable(&zero, one.cu_ctx()),
        CUresult::CUDA_ERROR_PEER_ACCESS_NOT_ENABLED
    );
    assert_eq!(enable(&zero, &one, 0), CUresult::CUDA_SUCCESS);
    assert_eq!(
        enable(&zero, &one, 0),
        CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED
    );
    // One-way: device 1's context has not enabled access to device 0's.
    assert_eq!(
        disable(&one, zero.cu_ctx()),
        CUresult::CUDA_ERROR_PEER_ACCESS_NOT_ENABLED
    );
    assert_eq!(disable(&zero, one.cu_ctx()), CUresult::CUDA_SUCCESS);
    assert_eq!(
        disable(&zero, one.cu_ctx()),
        CUresult::CUDA_ERROR_PEER_ACCESS_NOT_ENABLED
    );
    assert_eq!(
        disable(&zero, std::ptr::without_provenance_mut(0x7)),
        CUresult::CUDA_ERROR_INVALID_CONTEXT
    );
}

/// A kernel of `from`'s device run at `target`, an allocation of `of`'s device, with
/// THREADS + 1 words: Ok and the words it left, or the launch's error.
fn run_on_peer(
    from: &Arc<CudaContext>,
    of: &Arc<CudaContext>,
    before: &[u32],
) -> (Result<(), CUresult>, Vec<u32>) {
    let stream = of.default_stream();
    let mut words = stream.clone_htod(before).unwrap();
    let address = words.device_ptr_mut(&stream).0;
    // The copy is done before another context's kernel uses the words (CUDA orders work of
    // one stream only).
    stream.synchronize().unwrap();
    let outcome = add_one_at(from, address);
    (outcome, of.default_stream().clone_dtoh(&words).unwrap())
}

#[test]
fn a_kernel_reaches_a_peer_s_memory_only_while_access_is_enabled() {
    let before: Vec<u32> = (0..=THREADS).map(|i| 1000 * i).collect();
    // What the kernel does on its own device's memory is the reference.
    let zero = context(0);
    let (outcome, expected) = run_on_peer(&zero, &zero, &before);
    outcome.unwrap();
    assert_eq!(expected[0], THREADS, "each thread added 1");
    assert_eq!(expected[5], 5004, "thread 4 added its index");

    // Before enabling: device 1's memory is not in device 0's reach.
    let (zero, one) = (context(0), context(1));
    let (outcome, after) = run_on_peer(&zero, &one, &before);
    assert_eq!(outcome, Err(CUresult::CUDA_ERROR_ILLEGAL_ADDRESS));
    assert_eq!(after, before, "nothing was written");

    // Enabled: the same kernel does on device 1's memory what it does on its own.
    let (zero, one) = (context(0), context(1));
    assert_eq!(enable(&zero, &one, 0), CUresult::CUDA_SUCCESS);
    let (outcome, after) = run_on_peer(&zero, &one, &before);
    outcome.unwrap();
    assert_eq!(after, expected);
    // It reaches any of the peer device's allocations, also one made after enabling by
    // another context of that device.
    let (outcome, after) = run_on_peer(&zero, &context(1), &before);
    outcome.unwrap();
    assert_eq!(after, expected);
    // One-way: device 1's kernels still do not reach device 0's memory.
    let (outcome, after) = run_on_peer(&one, &zero, &before);
    assert_eq!(outcome, Err(CUresult::CUDA_ERROR_ILLEGAL_ADDRESS));
    assert_eq!(after, before);

    // Disabled again: the fault again.
    let (zero, one) = (context(0), context(1));
    assert_eq!(enable(&zero, &one, 0), CUresult::CUDA_SUCCESS);
    assert_eq!(disable(&zero, one.cu_ctx()), CUresult::CUDA_SUCCESS);
    let (outcome, after) = run_on_peer(&zero, &one, &before);
    assert_eq!(outcome, Err(CUresult::CUDA_ERROR_ILLEGAL_ADDRESS));
    assert_eq!(after, before);
}

#[test]
fn destroying_the_peer_context_ends_the_access() {
    let before: Vec<u32> = vec![0; THREADS as usize + 1];
    let (zero, one, other_one) = (context(0), context(1), context(1));
    assert_eq!(enable(&zero, &one, 0), CUresult::CUDA_SUCCESS);
    let peer = one.cu_ctx();
    drop(one);
    // The handle is gone, and with it the access: device 1's memory is out of reach again.
    assert_eq!(disable(&zero, peer), CUresult::CUDA_ERROR_INVALID_CONTEXT);
    let (outcome, after) = run_on_peer(&zero, &other_one, &before);
    assert_eq!(outcome, Err(CUresult::CUDA_ERROR_ILLEGAL_ADDRESS));
    assert_eq!(after, before);
}
