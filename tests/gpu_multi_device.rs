//! Several GPUs (issue 33): `Device::all`, a kernel on each, peer copies between them
//! (`DeviceBuffer::copy_from_peer`), and a buffer of one refused on another. On the PTX emulator
//! this binary asks for two devices (`FERROCUDA_EMU_DEVICES=2`, unless set already); on hardware
//! it needs two GPUs and skips with fewer.

mod support;

use ferrocuda::kernels::saxpy;
use ferrocuda::{launch, Error, KERNELS};

#[test]
fn every_gpu_is_listed_and_runs_kernels_on_its_own_memory() {
    let Some(all) = support::two_gpus_or_skip("every_gpu_is_listed") else {
        return;
    };
    for (ordinal, device) in all.iter().enumerate() {
        assert_eq!(device.kind(), ferrocuda::DeviceKind::Cuda { ordinal });
        let kernels = device.load(&KERNELS).unwrap();
        let x = device.upload(&vec![ordinal as f32; 1000]).unwrap();
        let mut y = device.upload(&vec![1.0f32; 1000]).unwrap();
        launch!(kernels, saxpy[4, 256](2.0f32, &x, &mut y)).unwrap();
        assert_eq!(y.to_vec().unwrap(), vec![2.0 * ordinal as f32 + 1.0; 1000]);
    }
    // A buffer of GPU 0 in a launch on GPU 1 is refused, not a kernel reading another's address.
    let kernels = all[1].load(&KERNELS).unwrap();
    let x = all[0].upload(&[1.0f32; 256]).unwrap();
    let mut y = all[1].upload(&[1.0f32; 256]).unwrap();
    let error = launch!(kernels, saxpy[1, 256](2.0f32, &x, &mut y)).unwrap_err();
    assert!(matches!(error, Error::WrongDevice { .. }), "{error}");
}

#[test]
fn peer_copies_move_buffers_between_gpus_in_order_with_their_work() {
    let Some(all) = support::two_gpus_or_skip("peer_copies_move_buffers_between_gpus") else {
        return;
    };
    let (zero, one) = (&all[0], &all[1]);
    let n = 100_003;
    let data: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let k0 = zero.load(&KERNELS).unwrap();
    let k1 = one.load(&KERNELS).unwrap();
    // Work queued on GPU 0 (on a stream of its own), the copy to GPU 1, work there, and back.
    let stream = zero.new_stream().unwrap();
    let x0 = zero.upload(&vec![1.0f32; n]).unwrap();
    let mut y0 = zero.upload(&data).unwrap();
    launch!(k0, saxpy[64, 256, &stream](1.0f32, &x0, &mut y0)).unwrap(); // i + 1
    let mut y1 = one.alloc_zeroed::<f32>(n).unwrap();
    y1.copy_from_peer(&y0).unwrap();
    let x1 = one.upload(&vec![1.0f32; n]).unwrap();
    launch!(k1, saxpy[64, 256](2.0f32, &x1, &mut y1)).unwrap(); // i + 3
    y0.copy_from_peer(&y1).unwrap();
    drop(y1); // freed after the copy that reads it
    let back = y0.to_vec().unwrap();
    assert!(back.iter().enumerate().all(|(i, &v)| v == i as f32 + 3.0));
    // Lengths must match; on one device it is a plain device copy.
    let mut short = one.alloc_zeroed::<f32>(n - 1).unwrap();
    assert!(matches!(
        short.copy_from_peer(&y0),
        Err(Error::CopyLength { .. })
    ));
    let mut same = zero.alloc_zeroed::<f32>(n).unwrap();
    same.copy_from_peer(&y0).unwrap();
    assert_eq!(same.to_vec().unwrap(), back);
}
