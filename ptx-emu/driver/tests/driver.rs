//! The driver layer through cudarc, as ferrocuda-host uses it: device identity, memory round
//! trips, memset, out of memory, events, module loading with the JIT's logs, and a faulting
//! kernel that leaves its context sticky-faulted while a new context works.
//!
//! Every test opens the emulator's library by its path first (`support::load_emulator`).

use cudarc::driver::sys::{self, CUjit_option, CUresult};
use cudarc::driver::{result, CudaContext, DriverError, PushKernelArg};
use std::ffi::c_void;
use std::sync::Arc;

mod support;
use support::{load_with_log, own_context};

const STORE_PTX: &str = ".version 6.0\n.target sm_70\n.address_size 64\n\n\
    .visible .entry store_seven(.param .u64 p)\n{\n\t.reg .b32 %r<2>;\n\t.reg .b64 %rd<2>;\n\n\
    \tld.param.u64 %rd1, [p];\n\tmov.u32 %r1, 7;\n\tst.global.u32 [%rd1], %r1;\n\tret;\n}\n";

#[test]
fn the_device_says_it_is_the_emulator_with_sm90_limits() {
    let ctx = own_context();
    let name = ctx.name().unwrap();
    assert!(name.starts_with("ferrocuda PTX emulator"), "{name}");
    assert_eq!(ctx.compute_capability().unwrap(), (9, 0));
    let attribute = |a| ctx.attribute(a).unwrap();
    use sys::CUdevice_attribute as A;
    assert_eq!(
        attribute(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK),
        1024
    );
    assert_eq!(attribute(A::CU_DEVICE_ATTRIBUTE_WARP_SIZE), 32);
    assert_eq!(attribute(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT), 132);
    assert_eq!(
        attribute(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK),
        48 * 1024
    );
    assert_eq!(
        attribute(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN),
        227 * 1024
    );
    assert_eq!(result::device::get_count().unwrap(), 1);
    assert_eq!(
        result::device::get(1).unwrap_err(),
        DriverError(CUresult::CUDA_ERROR_INVALID_DEVICE)
    );
    let mut version = 0;
    // SAFETY: writes one int.
    unsafe { sys::cuDriverGetVersion(&mut version) }
        .result()
        .unwrap();
    assert_eq!(version, 12090);
}

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
fn events_time_the_work_between_them() {
    let ctx = own_context();
    let stream = ctx.default_stream();
    let start = ctx
        .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
        .unwrap();
    let end = ctx
        .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
        .unwrap();
    start.record(&stream).unwrap();
    let data = vec![1u8; 32 << 20];
    let on_device = stream.clone_htod(&data).unwrap();
    end.record(&stream).unwrap();
    end.synchronize().unwrap();
    assert!(end.is_complete());
    let ms = start.elapsed_ms(&end).unwrap();
    assert!(ms > 0.0, "{ms} ms for a 32 MiB copy");
    drop(on_device);
    // Without timing, or never recorded: the driver's invalid handle.
    let untimed = ctx.new_event(None).unwrap();
    untimed.record(&stream).unwrap();
    assert_eq!(
        start.elapsed_ms(&untimed).unwrap_err(),
        DriverError(CUresult::CUDA_ERROR_INVALID_HANDLE)
    );
    let unrecorded = ctx
        .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
        .unwrap();
    assert_eq!(
        start.elapsed_ms(&unrecorded).unwrap_err(),
        DriverError(CUresult::CUDA_ERROR_INVALID_HANDLE)
    );
}

#[test]
fn a_module_the_jit_refuses_comes_with_the_reason_in_the_error_log() {
    let ctx = own_context();
    let broken = ".version 6.0\n.target sm_70\n.address_size 64\n\n\
                  .visible .entry broken()\n{\n\tnot_an_instruction.u32 %r1;\n\tret;\n}\n";
    let (code, log) = load_with_log(&ctx, broken);
    assert_eq!(code, CUresult::CUDA_ERROR_INVALID_PTX, "{log}");
    assert!(
        log.contains("error") && log.contains("not_an_instruction"),
        "{log}"
    );
    assert!(log.contains("line 7"), "the parser's line in: {log}");
    let (code, log) = load_with_log(&ctx, &STORE_PTX.replace(".version 6.0", ".version 9.9"));
    assert_eq!(code, CUresult::CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "{log}");
    assert!(log.contains("Unsupported .version 9.9"), "{log}");
    let (code, log) = load_with_log(&ctx, &STORE_PTX.replace("sm_70", "sm_100"));
    assert_eq!(code, CUresult::CUDA_ERROR_INVALID_PTX, "{log}");
    // The error names come from the emulator too.
    let error = DriverError(CUresult::CUDA_ERROR_INVALID_PTX);
    assert_eq!(
        error.error_string().unwrap().to_str().unwrap(),
        "a PTX JIT compilation failed"
    );
}

/// Loads STORE_PTX into `ctx` and launches `store_seven` on one thread with `address`.
fn store_seven_at(ctx: &Arc<CudaContext>, address: u64) -> Result<(), DriverError> {
    let module = ctx.load_module(cudarc::nvrtc::Ptx::from_src(STORE_PTX))?;
    let store = module.load_function("store_seven")?;
    let stream = ctx.default_stream();
    let mut builder = stream.launch_builder(&store);
    builder.arg(&address);
    let config = cudarc::driver::LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (1, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: the kernel takes one u64 and stores 4 bytes there; the emulator checks the
    // address (a bad one is what some tests want).
    unsafe { builder.launch(config) }.map(|_| ())
}

/// `slice`'s device address.
fn address_of(slice: &cudarc::driver::CudaSlice<u32>, ctx: &Arc<CudaContext>) -> u64 {
    cudarc::driver::DevicePtr::device_ptr(slice, &ctx.default_stream()).0
}

#[test]
fn a_faulting_kernel_leaves_its_context_sticky_and_a_new_context_works() {
    let ctx = own_context();
    let stream = ctx.default_stream();
    let out = stream.alloc_zeros::<u32>(4).unwrap();
    let ptr = address_of(&out, &ctx);
    store_seven_at(&ctx, ptr).unwrap();
    assert_eq!(stream.clone_dtoh(&out).unwrap(), [7, 0, 0, 0]);

    // One past the end of the allocation: hardware's illegal address. As on hardware the launch
    // is queued fine and the fault shows at the next call.
    store_seven_at(&ctx, ptr + 16).unwrap();
    let error = DriverError(CUresult::CUDA_ERROR_ILLEGAL_ADDRESS);
    // (cudarc also keeps the error it saw unloading the helper's module, and returns it.)
    assert_eq!(ctx.synchronize().unwrap_err(), error);
    // Sticky: every later call in the context (still current on this thread) says so.
    assert_eq!(result::ctx::synchronize().unwrap_err(), error);
    assert_eq!(result::ctx::synchronize().unwrap_err(), error);
    // SAFETY: allocates 4 bytes (it does not: the context is faulted).
    assert_eq!(unsafe { result::malloc_sync(4) }.unwrap_err(), error);
    let mut host = [0u32; 4];
    // SAFETY: `host` has the 16 bytes copied into it.
    let code = unsafe { sys::cuMemcpyDtoH_v2(host.as_mut_ptr().cast(), ptr, 16) };
    assert_eq!(code, error.0);
    let mut stream_handle = std::ptr::null_mut();
    // SAFETY: writes one stream handle.
    let code = unsafe { sys::cuStreamCreate(&mut stream_handle, 0) };
    assert_eq!(code, error.0);

    // A new context works, and loads and runs the same kernel.
    let fresh = own_context();
    let out = fresh.default_stream().alloc_zeros::<u32>(1).unwrap();
    store_seven_at(&fresh, address_of(&out, &fresh)).unwrap();
    assert_eq!(fresh.default_stream().clone_dtoh(&out).unwrap(), [7]);
}

#[test]
fn functions_the_emulator_lacks_say_not_supported() {
    support::load_emulator(|| {});
    result::init().unwrap();
    let mut ptr = 0;
    // SAFETY: writes one device pointer (it does not: the call is not supported).
    let code = unsafe { sys::cuMemAllocAsync(&mut ptr, 16, std::ptr::null_mut()) };
    assert_eq!(code, CUresult::CUDA_ERROR_NOT_SUPPORTED);
    let mut name = std::ptr::null();
    // SAFETY: writes one pointer.
    let code = unsafe { sys::cuGetErrorName(CUresult::CUDA_ERROR_NOT_SUPPORTED, &mut name) };
    assert_eq!(code, CUresult::CUDA_SUCCESS);
    // SAFETY: the emulator's names are NUL-terminated and live as long as the library.
    let name = unsafe { std::ffi::CStr::from_ptr(name) };
    assert_eq!(name.to_str().unwrap(), "CUDA_ERROR_NOT_SUPPORTED");
}

#[test]
fn a_reset_primary_context_keeps_its_handle_and_retain_count_and_works_again() {
    // The only test of this binary that uses the primary context.
    support::load_emulator(|| {});
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let lost = stream.alloc_zeros::<u32>(4).unwrap();
    store_seven_at(&ctx, address_of(&lost, &ctx) + 16).unwrap();
    assert_eq!(
        result::ctx::synchronize().unwrap_err(),
        DriverError(CUresult::CUDA_ERROR_ILLEGAL_ADDRESS)
    );
    let mut again = std::ptr::null_mut();
    // SAFETY: writes one context handle.
    unsafe { sys::cuDevicePrimaryCtxRetain(&mut again, 0) }
        .result()
        .unwrap();
    assert_eq!(again, ctx.cu_ctx(), "one primary context per device");

    // SAFETY: nothing else in this process uses device 0's primary context now.
    unsafe { sys::cuDevicePrimaryCtxReset_v2(0) }
        .result()
        .unwrap();
    // Its memory went with it (the handle is forgotten: freeing it would be an error).
    let mut host = [0u32; 4];
    let lost_ptr = address_of(&lost, &ctx);
    std::mem::forget(lost);
    // SAFETY: `host` has the 16 bytes copied into it.
    let code = unsafe { sys::cuMemcpyDtoH_v2(host.as_mut_ptr().cast(), lost_ptr, 16) };
    assert_eq!(code, CUresult::CUDA_ERROR_INVALID_VALUE);
    // The same handle works again: the fault is gone.
    let _ = ctx.check_err();
    result::ctx::synchronize().unwrap();
    let out = stream.alloc_zeros::<u32>(1).unwrap();
    store_seven_at(&ctx, address_of(&out, &ctx)).unwrap();
    assert_eq!(stream.clone_dtoh(&out).unwrap(), [7]);
    // Resetting did not release: the second retain is still there to release.
    // SAFETY: releases the retain above.
    unsafe { sys::cuDevicePrimaryCtxRelease_v2(0) }
        .result()
        .unwrap();
    result::ctx::synchronize().unwrap();
}

/// A `.const` table, read with `ld.const` through its address (`mov.u64 r, TABLE`), and a
/// `.global` counter: `out[i] = TABLE[i] + 1` for `i < 4`.
const CONST_PTX: &str = ".version 6.0\n.target sm_70\n.address_size 64\n\n\
    .visible .const .align 4 .b8 TABLE[16];\n\
    .visible .global .align 4 .u32 COUNTER[1] = {5};\n\n\
    .visible .entry read_table(.param .u64 out)\n{\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<6>;\n\n\
    \tld.param.u64 %rd1, [out];\n\tmov.u32 %r1, %tid.x;\n\tmul.wide.u32 %rd2, %r1, 4;\n\
    \tmov.u64 %rd3, TABLE;\n\tadd.s64 %rd4, %rd3, %rd2;\n\tld.const.u32 %r2, [%rd4];\n\
    \tadd.s32 %r3, %r2, 1;\n\tadd.s64 %rd5, %rd1, %rd2;\n\tst.global.u32 [%rd5], %r3;\n\tret;\n}\n";

#[test]
fn a_module_variable_is_found_by_name_set_by_a_copy_and_read_by_kernels() {
    let ctx = own_context();
    let stream = ctx.default_stream();
    let module = ctx
        .load_module(cudarc::nvrtc::Ptx::from_src(CONST_PTX))
        .unwrap();
    let mut table = module.get_global("TABLE", &stream).unwrap();
    assert_eq!(table.len(), 16);
    // Zeroed until set, as the driver leaves `.const`; initialised `.global`s keep their values.
    let counter = module.get_global("COUNTER", &stream).unwrap();
    let mut start = [0u8; 4];
    stream.memcpy_dtoh(&counter, &mut start).unwrap();
    assert_eq!(u32::from_le_bytes(start), 5);
    let values: Vec<u8> = [10u32, 20, 30, 40]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    stream.memcpy_htod(&values, &mut table).unwrap();

    let read = module.load_function("read_table").unwrap();
    let out = stream.alloc_zeros::<u32>(4).unwrap();
    let mut builder = stream.launch_builder(&read);
    builder.arg(&out);
    let config = cudarc::driver::LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (4, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: the kernel takes one pointer to 4 u32 and writes them.
    unsafe { builder.launch(config) }.unwrap();
    assert_eq!(stream.clone_dtoh(&out).unwrap(), [11, 21, 31, 41]);

    // A name the module lacks; a copy past the variable's end.
    assert_eq!(
        module.get_global("NOT_THERE", &stream).unwrap_err(),
        DriverError(CUresult::CUDA_ERROR_NOT_FOUND)
    );
    let again = module.get_global("TABLE", &stream).unwrap();
    let address = cudarc::driver::DevicePtr::device_ptr(&again, &stream).0;
    let past = [0u8; 20];
    // SAFETY: reads 20 bytes of `past`; the device range is checked (and refused).
    let code = unsafe { sys::cuMemcpyHtoD_v2(address, past.as_ptr().cast(), 20) };
    assert_ne!(code, CUresult::CUDA_SUCCESS);
    // The module's variable cannot be freed like an allocation.
    // SAFETY: frees nothing (refused).
    assert_ne!(
        unsafe { sys::cuMemFree_v2(address) },
        CUresult::CUDA_SUCCESS
    );
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

/// The JIT linker (issue 35: Numba links every kernel): a kernel calling an `.extern` function
/// that a second PTX input defines, both with an internal `$str` of their own, links into one
/// module that loads and runs; machine-code inputs are refused with a log line; a destroyed
/// link state is an invalid handle.
#[test]
fn the_linker_joins_ptx_inputs_into_a_module_that_runs() {
    let ctx = own_context();
    ctx.bind_to_thread().unwrap();
    let kernel = ".version 7.0\n.target sm_70\n.address_size 64\n\
        .extern .func (.param .b32 out) add_seven(.param .b32 x);\n\
        .global .align 1 .b8 $str[2] = {65, 0};\n\
        .visible .entry call_helper(.param .u64 p)\n{\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<3>;\n\
        \tld.param.u64 %rd1, [p];\n\tcvta.to.global.u64 %rd2, %rd1;\n\tld.global.u32 %r1, [%rd2];\n\
        \t{\n\t.param .b32 a;\n\t.param .b32 r;\n\tst.param.b32 [a], %r1;\n\
        \tcall.uni (r), add_seven, (a);\n\tld.param.b32 %r2, [r];\n\t}\n\
        \tst.global.u32 [%rd2], %r2;\n\tret;\n}\n\0";
    let helper = ".version 8.0\n.target sm_70\n.address_size 64\n\
        .global .align 1 .b8 $str[2] = {66, 0};\n\
        .visible .func (.param .b32 out) add_seven(.param .b32 x)\n{\n\t.reg .b32 %r<3>;\n\
        \tld.param.b32 %r1, [x];\n\tadd.s32 %r2, %r1, 7;\n\tst.param.b32 [out], %r2;\n\tret;\n}\n\0";
    let mut error_log = vec![0u8; 1024];
    let mut options = [
        CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
        CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
    ];
    let mut values = [
        error_log.as_mut_ptr().cast::<c_void>(),
        std::ptr::without_provenance_mut::<c_void>(error_log.len()),
    ];
    let mut state: sys::CUlinkState = std::ptr::null_mut();
    // SAFETY: two options with their values, alive until the link is destroyed; one out-pointer.
    unsafe { sys::cuLinkCreate_v2(2, options.as_mut_ptr(), values.as_mut_ptr(), &mut state) }
        .result()
        .unwrap();
    let add = |text: &str, kind, name: &[u8]| {
        // SAFETY: `text` holds its length in bytes; `name` is NUL-terminated.
        unsafe {
            sys::cuLinkAddData_v2(
                state,
                kind,
                text.as_ptr().cast_mut().cast(),
                text.len(),
                name.as_ptr().cast(),
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        }
    };
    use sys::CUjitInputType as Input;
    assert_eq!(
        add(kernel, Input::CU_JIT_INPUT_PTX, b"kernel.ptx\0"),
        CUresult::CUDA_SUCCESS
    );
    assert_eq!(
        add(helper, Input::CU_JIT_INPUT_PTX, b"helper.ptx\0"),
        CUresult::CUDA_SUCCESS
    );
    assert_eq!(
        add("\x7fELF....", Input::CU_JIT_INPUT_CUBIN, b"a.cubin\0"),
        CUresult::CUDA_ERROR_NOT_SUPPORTED
    );
    let log = String::from_utf8_lossy(&error_log);
    assert!(
        log.contains("a.cubin") && log.contains("links PTX only"),
        "{log}"
    );
    let (mut image, mut size) = (std::ptr::null_mut::<c_void>(), 0usize);
    // SAFETY: two out-pointers.
    unsafe { sys::cuLinkComplete(state, &mut image, &mut size) }
        .result()
        .unwrap();
    assert!(size > 1);
    let mut module: sys::CUmodule = std::ptr::null_mut();
    // SAFETY: the image is the linker's NUL-terminated text, alive until cuLinkDestroy.
    unsafe { sys::cuModuleLoadData(&mut module, image) }
        .result()
        .unwrap();
    let mut function: sys::CUfunction = std::ptr::null_mut();
    // SAFETY: a loaded module and a NUL-terminated name.
    unsafe { sys::cuModuleGetFunction(&mut function, module, c"call_helper".as_ptr()) }
        .result()
        .unwrap();
    let stream = ctx.default_stream();
    let mut buffer = stream.clone_htod(&[35u32]).unwrap();
    let (address, _record) = cudarc::driver::DevicePtrMut::device_ptr_mut(&mut buffer, &stream);
    let mut params = [(&address as *const u64).cast_mut().cast::<c_void>()];
    // SAFETY: the kernel takes one u64, passed by pointer; one thread.
    unsafe {
        sys::cuLaunchKernel(
            function,
            1,
            1,
            1,
            1,
            1,
            1,
            0,
            stream.cu_stream(),
            params.as_mut_ptr(),
            std::ptr::null_mut(),
        )
    }
    .result()
    .unwrap();
    drop(_record);
    assert_eq!(stream.clone_dtoh(&buffer).unwrap(), [42]);
    // SAFETY: the link state made above, destroyed once; a second time is an invalid handle.
    unsafe {
        assert_eq!(sys::cuLinkDestroy(state), CUresult::CUDA_SUCCESS);
        assert_eq!(
            sys::cuLinkDestroy(state),
            CUresult::CUDA_ERROR_INVALID_HANDLE
        );
        sys::cuModuleUnload(module).result().unwrap();
    }
}

/// Issue 29 (E1): cuModuleLoadData of PTX with 30,000 nested `{ }` scopes aborted the process
/// (the parser recursed per scope); it loads now, and deeply nested brackets in an operand are
/// CUDA_ERROR_INVALID_PTX with the reason in the log. On a thread with a 512 KiB stack, so that
/// a recursion per level would overflow even at a tenth of the depth.
#[test]
fn deeply_nested_scopes_load_and_nested_operands_are_invalid_ptx() {
    let ctx = own_context();
    let depth = 30_000;
    let nested = STORE_PTX.replace(
        "\tret;\n",
        &format!("{}\tret;\n{}", "{\n".repeat(depth), "}\n".repeat(depth)),
    );
    let braces = STORE_PTX.replace(
        "\tret;\n",
        &format!("\tmov.b64 {}%r1, 0;\n\tret;\n", "{".repeat(depth)),
    );
    let results = std::thread::Builder::new()
        .stack_size(512 * 1024)
        .spawn(move || {
            let nested = load_with_log(&ctx, &nested);
            let braces = load_with_log(&ctx, &braces);
            (nested, braces)
        })
        .unwrap()
        .join()
        .unwrap();
    let ((code, log), (braces_code, braces_log)) = results;
    assert_eq!(code, CUresult::CUDA_SUCCESS, "{log}");
    assert_eq!(
        braces_code,
        CUresult::CUDA_ERROR_INVALID_PTX,
        "{braces_log}"
    );
    assert!(braces_log.contains("nested"), "{braces_log}");
}

/// Runs the test `name` of this binary again in a child process with `env` set, and fails if
/// it fails or runs past `limit` (then it is killed): for what a process reads once (the
/// emulator's environment variables) and what must not hang the tests.
fn in_a_child(name: &str, env: &[(&str, &str)], limit: std::time::Duration) -> String {
    let mut command = std::process::Command::new(std::env::current_exe().unwrap());
    command
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    for (key, value) in env {
        command.env(key, value);
    }
    let mut child = command.spawn().unwrap();
    let start = std::time::Instant::now();
    let finished = loop {
        if child.try_wait().unwrap().is_some() {
            break true;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            break false;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let output = child.wait_with_output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(finished, "{name} hung (killed after {limit:?}):\n{text}");
    assert!(
        output.status.success(),
        "{name}: {}:\n{text}",
        output.status
    );
    assert!(text.contains("test result: ok. 1 passed"), "{text}");
    text
}

/// Set in the child processes of [`in_a_child`].
const CHILD: &str = "FERROCUDA_EMU_DRIVER_TEST_CHILD";

const SPIN_PTX: &str = ".version 6.0\n.target sm_70\n.address_size 64\n\n\
    .visible .entry spin_for_ever()\n{\n$L_top:\n\tbra.uni $L_top;\n}\n";

/// The emulator review's open item: a kernel that loops for ever hung its launch. The driver
/// gives every launch a deadline (FERROCUDA_EMU_DEADLINE_MS, here 300 ms); past it the kernel
/// fails as under a GPU's watchdog: CUDA_ERROR_LAUNCH_TIMEOUT, sticky, and the stderr line names
/// the kernel.
#[test]
fn an_endless_kernel_fails_with_launch_timeout_at_the_deadline() {
    if std::env::var_os(CHILD).is_none() {
        let name = "an_endless_kernel_fails_with_launch_timeout_at_the_deadline";
        let env = [("FERROCUDA_EMU_DEADLINE_MS", "300")];
        let text = in_a_child(name, &env, std::time::Duration::from_secs(120));
        assert!(
            text.contains("kernel spin_for_ever failed with CUDA_ERROR_LAUNCH_TIMEOUT")
                && text.contains("FERROCUDA_EMU_DEADLINE_MS"),
            "{text}"
        );
        return;
    }
    let ctx = own_context();
    let module = ctx
        .load_module(cudarc::nvrtc::Ptx::from_src(SPIN_PTX))
        .unwrap();
    let spin = module.load_function("spin_for_ever").unwrap();
    let stream = ctx.default_stream();
    let config = cudarc::driver::LaunchConfig {
        grid_dim: (4, 1, 1),
        block_dim: (32, 1, 1),
        shared_mem_bytes: 0,
    };
    let start = std::time::Instant::now();
    // SAFETY: the kernel takes no parameters and touches no memory.
    let launched = unsafe { stream.launch_builder(&spin).launch(config) };
    assert!(start.elapsed() < std::time::Duration::from_secs(60));
    // Asynchronous on a GPU: the launch succeeds, the fault shows at the next call, and stays.
    launched.unwrap();
    let timeout = DriverError(CUresult::CUDA_ERROR_LAUNCH_TIMEOUT);
    assert_eq!(stream.synchronize().unwrap_err(), timeout);
    assert_eq!(stream.alloc_zeros::<u8>(4).unwrap_err(), timeout);
    assert_eq!(
        timeout.error_string().unwrap().to_str().unwrap(),
        "the launch timed out and was terminated"
    );
}

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
        "deferred_mode_leaves_a_download_unfinished_until_its_stream_is_synchronised",
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
    if !deferred_child("deferred_mode_orders_streams_by_events_and_no_further") {
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

/// A module, stream or event that went with its destroyed context: unloading or destroying it
/// succeeds once (Numba's deallocation queue does it after cuDevicePrimaryCtxReset), then it is
/// an invalid handle.
#[test]
fn objects_of_a_destroyed_context_are_destroyed_once_without_error() {
    support::load_emulator(|| {});
    let mut ctx: sys::CUcontext = std::ptr::null_mut();
    let mut stream: sys::CUstream = std::ptr::null_mut();
    let mut event: sys::CUevent = std::ptr::null_mut();
    let mut module: sys::CUmodule = std::ptr::null_mut();
    let ptx = std::ffi::CString::new(STORE_PTX).unwrap();
    // SAFETY: each call writes one handle to its out-pointer; the PTX is NUL-terminated.
    unsafe {
        sys::cuCtxCreate_v2(&mut ctx, 0, 0).result().unwrap();
        sys::cuStreamCreate(&mut stream, 0).result().unwrap();
        sys::cuEventCreate(&mut event, 0).result().unwrap();
        sys::cuModuleLoadData(&mut module, ptx.as_ptr().cast())
            .result()
            .unwrap();
        sys::cuCtxDestroy_v2(ctx).result().unwrap();
    }
    // SAFETY: the handles are stale; the driver recognises them and touches nothing.
    unsafe {
        assert_eq!(sys::cuStreamDestroy_v2(stream), CUresult::CUDA_SUCCESS);
        assert_eq!(sys::cuEventDestroy_v2(event), CUresult::CUDA_SUCCESS);
        assert_eq!(sys::cuModuleUnload(module), CUresult::CUDA_SUCCESS);
        assert_eq!(
            sys::cuStreamDestroy_v2(stream),
            CUresult::CUDA_ERROR_INVALID_HANDLE
        );
        assert_eq!(
            sys::cuEventDestroy_v2(event),
            CUresult::CUDA_ERROR_INVALID_HANDLE
        );
        assert_eq!(
            sys::cuModuleUnload(module),
            CUresult::CUDA_ERROR_INVALID_HANDLE
        );
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

/// PTX built with debug information (Numba's debug=True) ends with DWARF sections
/// (`.section .debug_info { ... }`): they are skipped, and the module's kernels run.
#[test]
fn a_module_with_dwarf_sections_loads_and_runs() {
    let ctx = own_context();
    let ptx = format!(
        "{STORE_PTX}\n\t.section\t.debug_abbrev\n\t{{\n.b8 1\n.b8 17\n.b8 0\n\t}}\n\
         \t.section\t.debug_info\n\t{{\n.b32 50\n.b8 2\n.b64 $L__func_begin0\n\t}}\n\
         \t.section\t.debug_macinfo\t{{\t}}\n"
    );
    let module = ctx
        .load_module(cudarc::nvrtc::Ptx::from_src(ptx))
        .expect("DWARF sections are skipped");
    let kernel = module.load_function("store_seven").unwrap();
    let stream = ctx.default_stream();
    let out = stream.alloc_zeros::<u32>(1).unwrap();
    let mut builder = stream.launch_builder(&kernel);
    builder.arg(&out);
    // SAFETY: the kernel stores one u32 through its pointer argument.
    unsafe { builder.launch(cudarc::driver::LaunchConfig::for_num_elems(1)) }.unwrap();
    assert_eq!(stream.clone_dtoh(&out).unwrap(), [7]);
}
