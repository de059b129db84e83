//! Kernels built for sm_80 (the tensor-core kernels: `mma`, `ldmatrix`, `cp.async`) on a GPU
//! older than that: loading their PTX is `Error::GpuTooOld`, before any launch, naming both
//! architectures and the builder's `arch` (never the driver's JIT error). Only the PTX emulator
//! can pretend to be an sm_70 (`FERROCUDA_EMU_SM=70`), so this runs there and skips elsewhere;
//! it is alone in its test binary because the emulator reads the variable once per process.

mod support;

use ferrocuda::{Device, Error};

#[test]
fn sm80_kernels_on_an_sm70_gpu_are_gpu_too_old() {
    let test = "sm80_kernels_on_an_sm70_gpu_are_gpu_too_old";
    let emulator = std::env::var_os("FERROCUDA_LIBCUDA")
        .is_some_and(|path| path.to_string_lossy().contains("ferrocuda_emu_cuda"));
    if !emulator {
        support::say_skipped(
            test,
            "needs the PTX emulator (FERROCUDA_LIBCUDA) to emulate an sm_70",
        );
        return;
    }
    // SAFETY: the only test of this binary, before it (or anything) starts the driver: no other
    // thread reads the environment now.
    unsafe { std::env::set_var("FERROCUDA_EMU_SM", "70") };
    let gpu = Device::cuda(0).expect("the emulator");
    assert_eq!(gpu.properties().compute_capability, Some((7, 0)));
    match gpu.load(support::test_kernels_sm80()) {
        Err(error @ Error::GpuTooOld { .. }) => {
            let message = error.to_string();
            assert!(
                message.contains("targets sm_80") && message.contains("sm_70"),
                "{message}"
            );
        }
        Err(other) => panic!("expected GpuTooOld, got {other}"),
        Ok(_) => panic!("sm_80 PTX loaded on an sm_70"),
    }
    // The crate's sm_70 build, without the tensor-core kernels, loads.
    gpu.load(support::test_kernels())
        .expect("sm_70 PTX on an sm_70");
    // The library likewise: its tensor-core module (`ops::matmul_tensor`'s) is GpuTooOld, its
    // sm_70 module loads.
    match gpu.load(&ferrocuda::TENSOR_KERNELS) {
        Err(Error::GpuTooOld { module, .. }) => assert_eq!(module, "ferrocuda-kernels-tc"),
        Err(other) => panic!("expected GpuTooOld for TENSOR_KERNELS, got {other}"),
        Ok(_) => panic!("TENSOR_KERNELS (sm_80) loaded on an sm_70"),
    }
    gpu.load(&ferrocuda::KERNELS)
        .expect("the library's sm_70 PTX on an sm_70");
}
