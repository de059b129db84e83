//! Memory: copies, memset, out of memory, page-locked host memory, freeing with no context
//! current, and what a pointer inside an allocation answers.

use cudarc::driver::sys::{self, CUresult};
use cudarc::driver::{result, DriverError};
use std::ffi::c_void;

use crate::support::own_context;

#[test]
fn host_device_host_round_trips_and_device_copies_keep_every_byte() {
    let ctx = own_context();
    let stream = ctx.default_stream();
    let data: Vec<u32> = (0..100_003u32)
        .map(|i| i.wrapping_mul(2_654_435_761))
        .collect();
    let on_device = stream.clone_htod(&data).unwrap();
    assert_eq!(stream.clone_dtoh(&on_device).unwrap(), data);
    let mut copy = stream.alloc_zeros::<u32>(data.len()).unwrap();
    assert_eq!(stream.clone_dtoh(&copy).unwrap(), vec![0; data.len()]);
    stream.memcpy_dtod(&on_device, &mut copy).unwrap();
    assert_eq!(stream.clone_dtoh(&copy).unwrap(), data);
    // On another stream of the same context too.
    let other = ctx.new_stream().unwrap();
    assert_eq!(other.clone_dtoh(&copy).unwrap(), data);
    // A copy past the end of an allocation is refused, not done.
    let mut small = [0u8; 16];
    let past = stream.alloc_zeros::<u8>(4).unwrap();
    let (ptr, _guard) = cudarc::driver::DevicePtr::device_ptr(&past, &stream);
    // SAFETY: `small` has the 16 bytes; the device range runs 12 bytes past the allocation.
    let code = unsafe { sys::cuMemcpyDtoH_v2(small.as_mut_ptr().cast(), ptr, 16) };
    assert_eq!(code, CUresult::CUDA_ERROR_INVALID_VALUE);
}

#[test]
fn memset_fills_8_16_and_32_bit_patterns() {
    let ctx = own_context();
    let stream = ctx.default_stream();
    let buffer = stream.alloc_zeros::<u8>(64).unwrap();
    let (ptr, guard) = cudarc::driver::DevicePtr::device_ptr(&buffer, &stream);
    drop(guard);
    // SAFETY: each call writes inside the 64-byte allocation at `ptr`.
    unsafe {
        sys::cuMemsetD8_v2(ptr, 0xAB, 64).result().unwrap();
        sys::cuMemsetD16_v2(ptr + 8, 0x1234, 4).result().unwrap();
        sys::cuMemsetD32Async(ptr + 32, 0xDEAD_BEEF, 2, std::ptr::null_mut())
            .result()
            .unwrap();
        // A 32-bit memset must be 4-byte aligned.
        assert_eq!(
            sys::cuMemsetD32_v2(ptr + 2, 0, 1),
            CUresult::CUDA_ERROR_INVALID_VALUE
        );
    }
    let bytes = stream.clone_dtoh(&buffer).unwrap();
    let mut expected = vec![0xABu8; 64];
    expected[8..16].copy_from_slice(&[0x34, 0x12].repeat(4));
    expected[32..40].copy_from_slice(&0xDEAD_BEEFu32.to_le_bytes().repeat(2));
    assert_eq!(bytes, expected);
}

#[test]
fn an_allocation_beyond_free_memory_is_out_of_memory_and_takes_nothing() {
    let ctx = own_context();
    let (free, total) = ctx.mem_get_info().unwrap();
    assert!(0 < free && free <= total, "free {free}, total {total}");
    let stream = ctx.default_stream();
    // Other tests of this process allocate and free on the same device meanwhile, so `free`
    // can grow between two calls. With `held` taken here, free memory stays below
    // `total - held` whatever they do, and one byte more than that is beyond it.
    let held = stream.alloc_zeros::<u8>(1 << 20).unwrap();
    let beyond = total - held.len() + 1;
    // SAFETY: the allocation is never read.
    let error = unsafe { stream.alloc::<u8>(beyond) }.unwrap_err();
    assert_eq!(error, DriverError(CUresult::CUDA_ERROR_OUT_OF_MEMORY));
    assert_eq!(ctx.mem_get_info().unwrap().1, total);
    drop(held);
    // Not sticky: the context still allocates.
    let fine = stream.alloc_zeros::<u8>(1 << 20).unwrap();
    assert_eq!(stream.clone_dtoh(&fine).unwrap().len(), 1 << 20);
}

#[test]
fn page_locked_host_memory_is_page_aligned_copies_asynchronously_and_frees_once() {
    let ctx = own_context();
    let stream = ctx.new_stream().unwrap();
    let n = 10_000usize;
    ctx.bind_to_thread().unwrap();
    // SAFETY: the context is current; the call returns n bytes or an error.
    let host = unsafe { result::malloc_host(n, 0x01) }
        .unwrap()
        .cast::<u8>();
    assert_eq!(host.addr() % 4096, 0, "page-aligned like the driver's");
    // SAFETY: `host` holds n bytes that nothing else uses until they are freed below.
    let bytes = unsafe { std::slice::from_raw_parts_mut(host, n) };
    for (i, b) in bytes.iter_mut().enumerate() {
        *b = (i * 7) as u8;
    }
    let mut on_device = stream.alloc_zeros::<u8>(n).unwrap();
    // cuMemcpyHtoDAsync and cuMemcpyDtoHAsync on a stream of its own, ordered by an event.
    stream.memcpy_htod(&*bytes, &mut on_device).unwrap();
    let copied = stream.record_event(None).unwrap();
    let other = ctx.new_stream().unwrap();
    other.wait(&copied).unwrap();
    let mut back = vec![0u8; n];
    other.memcpy_dtoh(&on_device, &mut back).unwrap();
    other.synchronize().unwrap();
    assert_eq!(back, *bytes);
    // SAFETY: `host` came from malloc_host and is not used after.
    unsafe { result::free_host(host.cast()) }.unwrap();
    // A second free, or a pointer the driver never gave, is refused.
    // SAFETY: the emulator checks the pointer against its table and touches nothing.
    let again = unsafe { sys::cuMemFreeHost(host.cast()) };
    assert_eq!(again, CUresult::CUDA_ERROR_INVALID_VALUE);
    let mut zero = std::ptr::null_mut();
    // SAFETY: writes one pointer (it does not: zero bytes are refused).
    let code = unsafe { sys::cuMemHostAlloc(&mut zero, 0, 0) };
    assert_eq!(code, CUresult::CUDA_ERROR_INVALID_VALUE);
}

/// Numba frees memory from its deallocation queue with whatever context is current, or none:
/// CUDA finds the context from the pointer (unified addressing). An unknown pointer with no
/// context current is CUDA_ERROR_INVALID_CONTEXT.
#[test]
fn memory_is_freed_with_no_context_current_and_the_profiler_calls_succeed() {
    let ctx = own_context();
    ctx.bind_to_thread().unwrap();
    let mut address: sys::CUdeviceptr = 0;
    // SAFETY: one write to `address`; 256 bytes in the current context.
    unsafe { sys::cuMemAlloc_v2(&mut address, 256) }
        .result()
        .unwrap();
    let mut popped: sys::CUcontext = std::ptr::null_mut();
    // SAFETY: pops the context bound above; one write to `popped`.
    unsafe { sys::cuCtxPopCurrent_v2(&mut popped) }
        .result()
        .unwrap();
    let mut now: sys::CUcontext = std::ptr::null_mut();
    // SAFETY: one write to `now`.
    unsafe { sys::cuCtxGetCurrent(&mut now) }.result().unwrap();
    assert!(now.is_null(), "no context current");
    // SAFETY: frees the allocation made above, once.
    assert_eq!(
        unsafe { sys::cuMemFree_v2(address) },
        CUresult::CUDA_SUCCESS
    );
    // SAFETY: frees nothing (already freed; refused).
    assert_eq!(
        unsafe { sys::cuMemFree_v2(address) },
        CUresult::CUDA_ERROR_INVALID_CONTEXT
    );
    // SAFETY: no arguments; no profiler is attached, so both do nothing.
    unsafe {
        assert_eq!(sys::cuProfilerStart(), CUresult::CUDA_SUCCESS);
        assert_eq!(sys::cuProfilerStop(), CUresult::CUDA_SUCCESS);
    }
}

/// cuMemGetAddressRange and cuPointerGetAttribute answer for a pointer inside an allocation
/// (Numba's views and array-interface imports), and refuse one in no allocation.
#[test]
fn a_pointer_inside_an_allocation_names_its_range_context_and_device() {
    let ctx = own_context();
    ctx.bind_to_thread().unwrap();
    let mut base: sys::CUdeviceptr = 0;
    // SAFETY: one write to `base`; 1000 bytes in the current context.
    unsafe { sys::cuMemAlloc_v2(&mut base, 1000) }
        .result()
        .unwrap();
    let inside = base + 100;
    let (mut start, mut size): (sys::CUdeviceptr, usize) = (0, 0);
    let mut kind: u32 = 0;
    let mut pointer: sys::CUdeviceptr = 0;
    let mut owner: sys::CUcontext = std::ptr::null_mut();
    let mut current: sys::CUcontext = std::ptr::null_mut();
    let mut ordinal: i32 = -1;
    use sys::CUpointer_attribute as A;
    // SAFETY: each out-pointer has the attribute's type and takes one write.
    unsafe {
        sys::cuMemGetAddressRange_v2(&mut start, &mut size, inside)
            .result()
            .unwrap();
        let attr = |data: *mut c_void, a| sys::cuPointerGetAttribute(data, a, inside);
        attr((&raw mut kind).cast(), A::CU_POINTER_ATTRIBUTE_MEMORY_TYPE)
            .result()
            .unwrap();
        attr(
            (&raw mut pointer).cast(),
            A::CU_POINTER_ATTRIBUTE_DEVICE_POINTER,
        )
        .result()
        .unwrap();
        attr((&raw mut owner).cast(), A::CU_POINTER_ATTRIBUTE_CONTEXT)
            .result()
            .unwrap();
        attr(
            (&raw mut ordinal).cast(),
            A::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
        )
        .result()
        .unwrap();
        sys::cuCtxGetCurrent(&mut current).result().unwrap();
    }
    assert_eq!((start, size), (base, 1000));
    assert_eq!(kind, sys::CUmemorytype::CU_MEMORYTYPE_DEVICE as u32);
    assert_eq!(pointer, inside);
    assert_eq!(owner, current);
    assert_eq!(ordinal, 0);
    // SAFETY: the allocation is freed once; the queries after it write nothing.
    unsafe {
        sys::cuMemFree_v2(base).result().unwrap();
        assert_eq!(
            sys::cuMemGetAddressRange_v2(&mut start, &mut size, inside),
            CUresult::CUDA_ERROR_INVALID_VALUE
        );
        assert_eq!(
            sys::cuPointerGetAttribute(
                (&raw mut pointer).cast(),
                A::CU_POINTER_ATTRIBUTE_DEVICE_POINTER,
                inside
            ),
            CUresult::CUDA_ERROR_INVALID_VALUE
        );
    }
}
