//! Peer access between the virtual GPUs, as on a multi-GPU node whose GPUs are linked
//! (NVLink or PCIe P2P): every device can reach every other (`cuDeviceCanAccessPeer`), and a
//! context that enables access to a peer context (`cuCtxEnablePeerAccess`) runs kernels that
//! load, store and do atomics on that context's device memory as on their own. The access is
//! one-way (the peer's kernels do not reach this context's memory unless it enables access
//! too) and ends with `cuCtxDisablePeerAccess` or the destruction of either context. Without
//! it, a kernel's access to another device's address is the `CUDA_ERROR_ILLEGAL_ADDRESS` fault
//! it is on a GPU. Copies (`cuMemcpyPeer`, `cuMemcpyDtoD` under unified addressing) need no
//! peer access, as on CUDA, which stages them when the GPUs cannot reach each other; the copies
//! between devices (`cuMemcpyPeer*`, and [`copy_between`] for unified addressing's) are here.

use crate::context::check_context;
use crate::deferred_run;
use crate::device::check_device;
use crate::errors::code;
use crate::ffi::{guard, id_of, put, Outcome};
use crate::state::DRIVER;
use cudarc::driver::sys::CUdevice_P2PAttribute_enum as P2P;
use cudarc::driver::sys::{CUcontext, CUdevice, CUdeviceptr, CUresult, CUstream};
use ferrocuda_ptx_emu::Memory;
use std::ffi::{c_int, c_uint};
use std::sync::Arc;

#[no_mangle]
pub unsafe extern "C" fn cuDeviceCanAccessPeer(
    canAccessPeer: *mut c_int,
    dev: CUdevice,
    peerDev: CUdevice,
) -> CUresult {
    guard("cuDeviceCanAccessPeer", || {
        DRIVER.initialized()?;
        let (device, peer) = (check_device(dev)?, check_device(peerDev)?);
        // A device is not its own peer (CUDA answers 0 for the same device).
        // SAFETY: the caller's pointer is valid for one write (driver API contract).
        unsafe { put(canAccessPeer, c_int::from(device != peer)) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetP2PAttribute(
    value: *mut c_int,
    attrib: u32,
    srcDevice: CUdevice,
    dstDevice: CUdevice,
) -> CUresult {
    guard("cuDeviceGetP2PAttribute", || {
        DRIVER.initialized()?;
        if check_device(srcDevice)? == check_device(dstDevice)? {
            // CUDA: the link between two devices, so not between a device and itself.
            return Err(CUresult::CUDA_ERROR_INVALID_DEVICE);
        }
        let answer = [
            // Every pair is linked alike: one rank.
            (P2P::CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK, 0),
            (P2P::CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, 1),
            // A kernel's atomics on a peer's memory are as atomic as on its own.
            (P2P::CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED, 1),
            // The emulator has no CUDA arrays.
            (P2P::CU_DEVICE_P2P_ATTRIBUTE_ACCESS_ACCESS_SUPPORTED, 0),
        ]
        .iter()
        .find(|(a, _)| *a as u32 == attrib)
        .map(|&(_, v)| v)
        .ok_or(CUresult::CUDA_ERROR_INVALID_VALUE)?;
        // SAFETY: the caller's pointer is valid for one write (driver API contract).
        unsafe { put(value, answer) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxEnablePeerAccess(peerContext: CUcontext, Flags: c_uint) -> CUresult {
    guard("cuCtxEnablePeerAccess", || {
        let mut state = DRIVER.state()?;
        let (id, context) = state.current_usable()?;
        let device = context.device;
        let peer = id_of(peerContext);
        // CUDA: no current context, an invalid peer context, or the current context itself.
        let peer_device = match state.contexts.get(&peer) {
            Some(c) if peer != id => c.device,
            _ => return Err(CUresult::CUDA_ERROR_INVALID_CONTEXT),
        };
        if Flags != 0 {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        // Another context of the same device: cuDeviceCanAccessPeer says 0 for the pair.
        if peer_device == device {
            return Err(CUresult::CUDA_ERROR_PEER_ACCESS_UNSUPPORTED);
        }
        let context = state.usable(id)?;
        if !context.peers.insert(peer) {
            return Err(CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED);
        }
        Ok(())
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuCtxDisablePeerAccess(peerContext: CUcontext) -> CUresult {
    guard("cuCtxDisablePeerAccess", || {
        let mut state = DRIVER.state()?;
        let peer = id_of(peerContext);
        if !state.contexts.contains_key(&peer) {
            return Err(CUresult::CUDA_ERROR_INVALID_CONTEXT);
        }
        let (_, context) = state.current_usable()?;
        if !context.peers.remove(&peer) {
            return Err(CUresult::CUDA_ERROR_PEER_ACCESS_NOT_ENABLED);
        }
        Ok(())
    })
}

/// Device to device across devices (or contexts): `bytes` bytes from `src` in `src_ctx`'s device
/// memory to `dst` in `dst_ctx`'s, on `stream` (of any context; `None`: the calling thread's).
/// Runs at once, after all queued work (deferred mode).
fn peer(
    dst: CUdeviceptr,
    dst_ctx: CUcontext,
    src: CUdeviceptr,
    src_ctx: CUcontext,
    bytes: usize,
    stream: Option<CUstream>,
) -> Outcome {
    check_context(stream)?;
    // That of both devices' contexts (its errors are their own calls').
    let _ = deferred_run::finish(None);
    let (to, from) = {
        let mut state = DRIVER.state()?;
        for ctx in [dst_ctx, src_ctx] {
            state.usable(id_of(ctx))?;
        }
        (
            DRIVER.memory_of(&state, id_of(dst_ctx)).clone(),
            DRIVER.memory_of(&state, id_of(src_ctx)).clone(),
        )
    };
    if bytes == 0 {
        return Ok(());
    }
    copy_between(&to, dst, &from, src, bytes)
}

/// `bytes` bytes from `src` in `from` to `dst` in `to`, two device memories or one.
pub(crate) fn copy_between(
    to: &Arc<Memory>,
    dst: CUdeviceptr,
    from: &Arc<Memory>,
    src: CUdeviceptr,
    bytes: usize,
) -> Outcome {
    if Arc::ptr_eq(to, from) {
        return to.copy(dst, src, bytes as u64).map_err(code);
    }
    // In pieces, so that a large copy does not hold a second copy of itself on the host.
    const PIECE: usize = 1 << 20;
    let mut buffer = vec![0u8; PIECE.min(bytes)];
    let mut done = 0;
    while done < bytes {
        let n = PIECE.min(bytes - done);
        from.read(src + done as u64, &mut buffer[..n])
            .map_err(code)?;
        to.write(dst + done as u64, &buffer[..n]).map_err(code)?;
        done += n;
    }
    Ok(())
}

#[no_mangle]
pub unsafe extern "C" fn cuMemcpyPeer(
    dstDevice: CUdeviceptr,
    dstContext: CUcontext,
    srcDevice: CUdeviceptr,
    srcContext: CUcontext,
    ByteCount: usize,
) -> CUresult {
    guard("cuMemcpyPeer", || {
        peer(
            dstDevice, dstContext, srcDevice, srcContext, ByteCount, None,
        )
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuMemcpyPeerAsync(
    dstDevice: CUdeviceptr,
    dstContext: CUcontext,
    srcDevice: CUdeviceptr,
    srcContext: CUcontext,
    ByteCount: usize,
    hStream: CUstream,
) -> CUresult {
    guard("cuMemcpyPeerAsync", || {
        peer(
            dstDevice,
            dstContext,
            srcDevice,
            srcContext,
            ByteCount,
            Some(hStream),
        )
    })
}
