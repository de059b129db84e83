//! Device identity and limits, events timing work, and the functions the emulator lacks.

use cudarc::driver::sys::{self, CUresult};
use cudarc::driver::{result, DriverError};

use crate::support::own_context;

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
fn functions_the_emulator_lacks_say_not_supported() {
    crate::support::load_emulator(|| {});
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
