//! A compute capability per virtual GPU: `FERROCUDA_EMU_SM=90,80,70` over three GPUs
//! (`FERROCUDA_EMU_DEVICES=3`), of which `CUDA_VISIBLE_DEVICES=2,0` shows GPU 2 (sm_70) as
//! device 0 and GPU 0 (sm_90) as device 1. Each device reports its GPU's capability, and the
//! JIT refuses PTX for a newer GPU on the older device only, with the driver's error and log.
//!
//! A test binary of its own: the environment is read once, when the library first initialises.

use cudarc::driver::sys::{self, CUdevice_attribute as A, CUresult};
use cudarc::driver::{result, CudaContext};

mod support;

#[test]
fn each_device_reports_its_gpu_s_compute_capability_and_the_jit_checks_it() {
    support::load_emulator(|| {
        // SAFETY (edition 2021: a safe call): set before the library is loaded, in the Once that
        // every test waits for, so no other thread of this binary reads the environment then.
        std::env::set_var("FERROCUDA_EMU_DEVICES", "3");
        std::env::set_var("FERROCUDA_EMU_SM", "90,80,70");
        std::env::set_var("CUDA_VISIBLE_DEVICES", "2,0");
    });
    result::init().unwrap();
    assert_eq!(CudaContext::device_count().unwrap(), 2);
    for (ordinal, sm) in [(0, 70), (1, 90)] {
        let (mut major, mut minor) = (-1, -1);
        // SAFETY: writes one int to each.
        unsafe { sys::cuDeviceComputeCapability(&mut major, &mut minor, ordinal) }
            .result()
            .unwrap();
        assert_eq!((major, minor), (sm / 10, sm % 10), "device {ordinal}");
        // SAFETY: the device exists; the attributes are plain ints.
        let attributes = unsafe {
            (
                result::device::get_attribute(
                    ordinal,
                    A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                ),
                result::device::get_attribute(
                    ordinal,
                    A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                ),
            )
        };
        assert_eq!(
            (attributes.0.unwrap(), attributes.1.unwrap()),
            (sm / 10, sm % 10)
        );
    }
    let ptx = ".version 7.0\n.target sm_80\n.address_size 64\n\n\
               .visible .entry nothing()\n{\n\tret;\n}\n";
    // sm_80 PTX: refused on the sm_70 device, as ptxas refuses it, and loaded on the sm_90.
    let old = CudaContext::new(0).unwrap();
    let (code, log) = support::load_with_log(&old, ptx);
    assert_eq!(code, CUresult::CUDA_ERROR_INVALID_PTX, "{log}");
    assert!(log.contains("sm_80") && log.contains("(sm_70)"), "{log}");
    let new = CudaContext::new(1).unwrap();
    let (code, log) = support::load_with_log(&new, ptx);
    assert_eq!(code, CUresult::CUDA_SUCCESS, "{log}");
}
