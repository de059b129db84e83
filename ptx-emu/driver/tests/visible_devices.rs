//! `CUDA_VISIBLE_DEVICES` over three virtual GPUs (`FERROCUDA_EMU_DEVICES=3`): the process sees
//! the listed GPUs, in the list's order, up to the first entry that is not one (Numba's
//! test_visible_devices_set_after_import sets it after importing, before `cuInit`).
//!
//! A test binary of its own: the mask is read once, when the library first initialises.

use cudarc::driver::sys::{self, CUresult};
use cudarc::driver::{result, CudaContext};

mod support;

#[test]
fn the_listed_gpus_are_the_devices_in_the_lists_order() {
    support::load_emulator(|| {
        // SAFETY (edition 2021: a safe call): set before the library is loaded, in the Once that
        // every test waits for, so no other thread of this binary reads the environment then.
        std::env::set_var("FERROCUDA_EMU_DEVICES", "3");
        std::env::set_var("CUDA_VISIBLE_DEVICES", "2,0,7,1");
    });
    result::init().unwrap();
    // GPU 7 does not exist: the list ends there, so GPU 1 is hidden too.
    assert_eq!(CudaContext::device_count().unwrap(), 2);
    let uuid = |ordinal: i32| {
        let mut uuid = sys::CUuuid { bytes: [0; 16] };
        // SAFETY: the out-pointer is a local valid for one write; the driver is initialised.
        let status = unsafe { sys::cuDeviceGetUuid(&mut uuid, ordinal) };
        (status, uuid.bytes.map(|b| b as u8))
    };
    // Each ordinal has its GPU's identity: the UUID ends in 'u' plus the GPU's index.
    for (ordinal, gpu) in [(0, 2u8), (1, 0)] {
        let (status, bytes) = uuid(ordinal);
        assert_eq!(status, CUresult::CUDA_SUCCESS);
        assert_eq!(&bytes[..15], b"ferrocuda-ptxem", "{ordinal}");
        assert_eq!(bytes[15], b'u' + gpu, "ordinal {ordinal}");
        // And works: memory there holds what is written to it.
        let ctx = CudaContext::new(ordinal as usize).unwrap();
        let stream = ctx.default_stream();
        let slice = stream.clone_htod(&[ordinal as u32, 7, 9]).unwrap();
        assert_eq!(stream.clone_dtoh(&slice).unwrap(), [ordinal as u32, 7, 9]);
    }
    assert_eq!(uuid(2).0, CUresult::CUDA_ERROR_INVALID_DEVICE);
}
