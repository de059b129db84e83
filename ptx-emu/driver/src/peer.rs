//! Peer access between the virtual GPUs, as on a multi-GPU node whose GPUs are linked
//! (NVLink or PCIe P2P): every device can reach every other (`cuDeviceCanAccessPeer`), and a
//! context that enables access to a peer context (`cuCtxEnablePeerAccess`) runs kernels that
//! load, store and do atomics on that context's device memory as on their own. The access is
//! one-way (the peer's kernels do not reach this context's memory unless it enables access
//! too) and ends with `cuCtxDisablePeerAccess` or the destruction of either context. Without
//! it, a kernel's access to another device's address is the `CUDA_ERROR_ILLEGAL_ADDRESS` fault
//! it is on a GPU. Copies (`cuMemcpyPeer`, `cuMemcpyDtoD` under unified addressing) need no
//! peer access, as on CUDA, which stages them when the GPUs cannot reach each other.

use crate::device::check_device;
use crate::ffi::{guard, id_of, put};
use crate::state::DRIVER;
use cudarc::driver::sys::CUdevice_P2PAttribute_enum as P2P;
use cudarc::driver::sys::{CUcontext, CUdevice, CUresult};
use std::ffi::{c_int, c_uint};

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
