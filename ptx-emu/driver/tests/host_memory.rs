//! Mapped, registered and managed host memory: the host's pointer and the device's are one
//! (unified addressing), and a kernel, a memset or a copy through the device pointer and the
//! host through its own see the same bytes, as the CUDA driver API documents for
//! `cuMemHostAlloc(CU_MEMHOSTALLOC_DEVICEMAP)`, `cuMemHostRegister` and `cuMemAllocManaged`.

use cudarc::driver::sys::{self, CUresult};
use cudarc::driver::{CudaContext, PushKernelArg};
use std::ffi::c_void;
use std::sync::Arc;

mod support;
use support::own_context;

/// `twice(p, n)`: `p[i] = 2 * p[i] + 1` for each `u32` below `n`, one thread each.
const TWICE_PTX: &str = ".version 7.0\n.target sm_70\n.address_size 64\n\
    .visible .entry twice(.param .u64 p, .param .u32 n)\n{\n.reg .pred %p<2>;\n.reg .b32 %r<4>;\n.reg .b64 %rd<4>;\n\
    mov.u32 %r1, %tid.x;\nld.param.u32 %r2, [n];\nsetp.ge.u32 %p1, %r1, %r2;\n@%p1 ret;\n\
    ld.param.u64 %rd1, [p];\nmul.wide.u32 %rd2, %r1, 4;\nadd.s64 %rd1, %rd1, %rd2;\n\
    ld.global.u32 %r3, [%rd1];\nmad.lo.u32 %r3, %r3, 2, 1;\nst.global.u32 [%rd1], %r3;\nret;\n}\n";

/// Runs `twice` on the `n` words at device address `p` and waits for it.
fn twice(ctx: &Arc<CudaContext>, p: u64, n: u32) {
    let module = ctx
        .load_module(cudarc::nvrtc::Ptx::from_src(TWICE_PTX))
        .unwrap();
    let f = module.load_function("twice").unwrap();
    let stream = ctx.default_stream();
    let mut builder = stream.launch_builder(&f);
    builder.arg(&p).arg(&n);
    let config = cudarc::driver::LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (n, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: the kernel reads and writes `n` u32 at `p`, which every caller provides.
    unsafe { builder.launch(config) }.unwrap();
    stream.synchronize().unwrap();
}

/// The host's `n` u32 at `p`.
///
/// # Safety
/// `p` holds `n` u32 that nothing else touches while the slice lives.
unsafe fn words<'a>(p: *mut c_void, n: usize) -> &'a mut [u32] {
    // SAFETY: the caller's contract.
    unsafe { std::slice::from_raw_parts_mut(p.cast::<u32>(), n) }
}

#[test]
fn mapped_host_memory_is_the_same_bytes_for_host_kernels_and_copies() {
    let ctx = own_context();
    ctx.bind_to_thread().unwrap();
    let n = 100usize;
    let mut host = std::ptr::null_mut();
    // SAFETY: writes one pointer; CU_MEMHOSTALLOC_DEVICEMAP.
    unsafe { sys::cuMemHostAlloc(&mut host, n * 4, 0x02) }
        .result()
        .unwrap();
    assert_eq!(host.addr() % 4096, 0, "page-aligned like the driver's");
    let mut device = 0;
    // SAFETY: writes one device pointer; `host + 8` lies in the allocation.
    unsafe { sys::cuMemHostGetDevicePointer_v2(&mut device, host.wrapping_byte_add(8), 0) }
        .result()
        .unwrap();
    assert_eq!(device, host.addr() as u64 + 8, "unified addressing");
    // SAFETY: the allocation's n u32, touched by nothing else while no kernel runs.
    let values = unsafe { words(host, n) };
    for (i, v) in values.iter_mut().enumerate() {
        *v = i as u32;
    }
    twice(&ctx, host.addr() as u64, n as u32);
    let want: Vec<u32> = (0..n as u32).map(|i| 2 * i + 1).collect();
    assert_eq!(values, &want[..], "the kernel's stores, seen by the host");
    // SAFETY: sets 10 words inside the allocation.
    unsafe { sys::cuMemsetD32_v2(device, 0xabcd, 10) }
        .result()
        .unwrap();
    assert!(values[2..12].iter().all(|&v| v == 0xabcd));
    assert_eq!(values[12], 25);
    // SAFETY: frees the allocation (no slice of it is used after).
    unsafe { sys::cuMemFreeHost(host) }.result().unwrap();
    let mut stale = 0;
    // SAFETY: writes one device pointer, or (here) nothing: the memory is freed.
    let after = unsafe { sys::cuMemHostGetDevicePointer_v2(&mut stale, host, 0) };
    assert_eq!(after, CUresult::CUDA_ERROR_INVALID_VALUE);
}

#[test]
fn registered_host_memory_is_reached_in_place_until_unregistered() {
    let ctx = own_context();
    ctx.bind_to_thread().unwrap();
    let mut values: Vec<u64> = (0..32).collect();
    let p = values.as_mut_ptr().cast::<c_void>();
    let bytes = values.len() * 8;
    // SAFETY: `values` stays alive and untouched by the host until it is unregistered below;
    // CU_MEMHOSTREGISTER_DEVICEMAP.
    unsafe { sys::cuMemHostRegister_v2(p, bytes, 0x02) }
        .result()
        .unwrap();
    // SAFETY: as above (a second registration of the same bytes is refused).
    let again = unsafe { sys::cuMemHostRegister_v2(p.wrapping_byte_add(8), 8, 0) };
    assert_eq!(again, CUresult::CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    let mut device = 0;
    // SAFETY: writes one device pointer.
    unsafe { sys::cuMemHostGetDevicePointer_v2(&mut device, p, 0) }
        .result()
        .unwrap();
    // The kernel sees the 64 u32 halves of the 32 u64.
    twice(&ctx, device, 64);
    // SAFETY: unregisters what was registered above.
    unsafe { sys::cuMemHostUnregister(p) }.result().unwrap();
    let want: Vec<u64> = (0..32u64)
        .map(|i| ((2 * i + 1) & 0xffff_ffff) | 1 << 32)
        .collect();
    assert_eq!(values, want, "each u32 half doubled plus one in place");
    // SAFETY: nothing is registered there any more.
    let twice_unregistered = unsafe { sys::cuMemHostUnregister(p) };
    assert_eq!(
        twice_unregistered,
        CUresult::CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED
    );
    // Part-words cannot be the host's own bytes in the emulator's 64-bit words.
    // SAFETY: refused before anything is mapped.
    let part = unsafe { sys::cuMemHostRegister_v2(p, 12, 0) };
    assert_eq!(part, CUresult::CUDA_ERROR_NOT_SUPPORTED);
}

#[test]
fn managed_memory_is_one_pointer_for_host_and_kernels_and_frees_with_cumemfree() {
    let ctx = own_context();
    ctx.bind_to_thread().unwrap();
    let n = 64usize;
    let mut managed = 0;
    // SAFETY: writes one device pointer; flags 0 are refused (neither GLOBAL nor HOST).
    let no_flags = unsafe { sys::cuMemAllocManaged(&mut managed, n * 4, 0) };
    assert_eq!(no_flags, CUresult::CUDA_ERROR_INVALID_VALUE);
    // SAFETY: writes one device pointer; CU_MEM_ATTACH_GLOBAL.
    unsafe { sys::cuMemAllocManaged(&mut managed, n * 4, 1) }
        .result()
        .unwrap();
    let host = std::ptr::with_exposed_provenance_mut::<c_void>(managed as usize);
    // SAFETY: the allocation's n u32 (its device address is its host address), touched by
    // nothing else while no kernel runs.
    let values = unsafe { words(host, n) };
    assert!(values.iter().all(|&v| v == 0), "zeroed");
    values.iter_mut().for_each(|v| *v = 20);
    twice(&ctx, managed, n as u32);
    assert!(values.iter().all(|&v| v == 41), "{values:?}");
    let mut is_managed = 0u32;
    // SAFETY: writes one c_uint (CU_POINTER_ATTRIBUTE_IS_MANAGED).
    unsafe {
        sys::cuPointerGetAttribute(
            (&mut is_managed as *mut u32).cast(),
            sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_IS_MANAGED,
            managed + 4,
        )
    }
    .result()
    .unwrap();
    assert_eq!(is_managed, 1);
    // SAFETY: frees the allocation (no slice of it is used after).
    unsafe { sys::cuMemFree_v2(managed) }.result().unwrap();
    // SAFETY: a second free is refused.
    let again = unsafe { sys::cuMemFree_v2(managed) };
    assert_eq!(again, CUresult::CUDA_ERROR_INVALID_VALUE);
}
