//! Interop with cudarc (issue 33): a device on the program's `CudaContext`, buffers from and into
//! `CudaSlice`s without copies, streams on the program's `CudaStream`s, borrowed `CudaSlice`s as
//! launch arguments, the refusals (another context, another GPU, the CPU executor), and what
//! happens after a fault in a context ferrocuda does not own. On a GPU (the emulator in CI).

mod support;

use ferrocuda::cudarc::driver::{CudaContext, CudaSlice, DevicePtr};
use ferrocuda::kernels::{saxpy, vector_add};
use ferrocuda::{launch, Device, DeviceBuffer, Error, Stream, KERNELS};
use std::sync::Arc;

/// A context of the test's own (not the primary one ferrocuda's `Device::cuda` uses), as a
/// program using cudarc, candle or burn has.
fn program_context(test: &str) -> Option<Arc<CudaContext>> {
    support::gpu_or_skip(test)?;
    Some(CudaContext::new_non_primary(0, 0).expect("a context of the program's"))
}

fn address<T>(slice: &CudaSlice<T>) -> u64 {
    slice.device_ptr(slice.stream()).0
}

#[test]
fn borrowed_cudarc_slices_are_a_kernel_s_inputs_and_outputs() {
    let Some(ctx) = program_context("borrowed_cudarc_slices") else {
        return;
    };
    let device = Device::from_cudarc(ctx.clone()).unwrap();
    assert!(device.is_gpu());
    assert_eq!(device.cudarc_context().unwrap().cu_ctx(), ctx.cu_ctx());
    let kernels = device.load(&KERNELS).unwrap();
    let n = 10_007;
    let stream = ctx.default_stream();
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let a_dev = stream.clone_htod(&a).unwrap();
    let b_dev = stream.clone_htod(&vec![0.25f32; n]).unwrap();
    let mut out = stream.alloc_zeros::<f32>(n).unwrap();
    launch!(kernels, vector_add[n.div_ceil(256), 256](&a_dev, &b_dev, &mut out)).unwrap();
    let got = stream.clone_dtoh(&out).unwrap();
    assert!(got.iter().enumerate().all(|(i, &x)| x == i as f32 + 0.25));

    // A slice mixes with ferrocuda's own buffers, and on a stream of ferrocuda's.
    let on_stream = device.new_stream().unwrap();
    let x = device.upload(&vec![2.0f32; n]).unwrap();
    launch!(kernels, saxpy[64, 256, &on_stream](0.5f32, &x, &mut out)).unwrap();
    on_stream.synchronize().unwrap();
    let got = stream.clone_dtoh(&out).unwrap();
    assert!(got.iter().enumerate().all(|(i, &x)| x == i as f32 + 1.25));

    // The length is checked as for any argument.
    let short = stream.alloc_zeros::<f32>(n - 1).unwrap();
    let error =
        launch!(kernels, vector_add[n.div_ceil(256), 256](&a_dev, &short, &mut out)).unwrap_err();
    assert!(matches!(error, Error::LengthMismatch { .. }), "{error}");
}

#[test]
fn buffers_come_from_and_go_back_to_cudarc_without_a_copy() {
    let Some(ctx) = program_context("buffers_come_from_and_go_back_to_cudarc") else {
        return;
    };
    let stream = ctx.default_stream();
    let n = 4099;
    let x = stream.clone_htod(&vec![1.0f32; n]).unwrap();
    let y = stream.clone_htod(&vec![3.0f32; n]).unwrap();
    let (x_at, y_at) = (address(&x), address(&y));
    let x = DeviceBuffer::from_cudarc(x).unwrap();
    let mut y = DeviceBuffer::from_cudarc(y).unwrap();
    assert_eq!((x.len(), y.len()), (n, n));
    let device = x.device().clone();
    assert_eq!(device.cudarc_context().unwrap().cu_ctx(), ctx.cu_ctx());
    // Counted (never refused) on the device handle it was made with; y made its own handle.
    assert_eq!(device.memory_in_use(), n * 4);
    let kernels = device.load(&KERNELS).unwrap();
    // Queued on a ferrocuda stream, then handed back: the slice's stream waits for it.
    let queue = device.new_stream().unwrap();
    launch!(kernels, saxpy[16, 256, &queue](2.0f32, &x, &mut y)).unwrap();
    let y = y.into_cudarc().unwrap();
    drop(queue);
    assert_eq!(address(&y), y_at, "the same memory");
    assert_eq!(stream.clone_dtoh(&y).unwrap(), vec![5.0f32; n]);
    let x = x.into_cudarc().unwrap();
    assert_eq!(address(&x), x_at);
    // ferrocuda's own buffers go to cudarc too, and an empty one is an empty slice.
    let own = Device::cuda(0).unwrap();
    let z = own.upload(&[1u32, 2, 3]).unwrap().into_cudarc().unwrap();
    let own_stream = own.cudarc_context().unwrap().default_stream();
    assert_eq!(own_stream.clone_dtoh(&z).unwrap(), [1, 2, 3]);
    let empty = own.alloc_zeroed::<u32>(0).unwrap().into_cudarc().unwrap();
    assert!(empty.is_empty());
    // And a CPU buffer cannot become one.
    let cpu = Device::cpu().upload(&[1u32]).unwrap();
    assert!(matches!(cpu.into_cudarc(), Err(Error::WrongDevice { .. })));
}

#[test]
fn a_ferrocuda_stream_on_the_program_s_stream_runs_in_order_with_its_work() {
    let Some(ctx) = program_context("a_ferrocuda_stream_on_the_program_s_stream") else {
        return;
    };
    let theirs = ctx.new_stream().unwrap();
    let stream = Stream::from_cudarc(theirs.clone()).unwrap();
    assert!(Arc::ptr_eq(&stream.cudarc().unwrap(), &theirs));
    let device = Device::from_cudarc(ctx.clone()).unwrap();
    let kernels = device.load(&KERNELS).unwrap();
    let n = 2048;
    // Their copy, our kernel, their copy back, all on their stream.
    let x = theirs.clone_htod(&vec![1.5f32; n]).unwrap();
    let mut y = theirs.alloc_zeros::<f32>(n).unwrap();
    for _ in 0..3 {
        launch!(kernels, saxpy[8, 256, &stream](2.0f32, &x, &mut y)).unwrap();
    }
    assert_eq!(theirs.clone_dtoh(&y).unwrap(), vec![9.0f32; n]);
    // Pending copies work on it as on any stream.
    let buffer = device.alloc_zeroed::<f32>(n).unwrap();
    let filled = stream
        .upload_async(device.pin(&vec![4.0f32; n]).unwrap(), &mut { buffer })
        .unwrap();
    filled.wait().unwrap();
}

#[test]
fn a_device_of_a_context_ferrocuda_already_uses_is_that_device() {
    let Some(ctx) = program_context("a_device_of_a_context_ferrocuda_already_uses") else {
        return;
    };
    // Two devices of one program context share everything: a buffer of one works on the other.
    let (one, two) = (
        Device::from_cudarc(ctx.clone()).unwrap(),
        Device::from_cudarc(ctx.clone()).unwrap(),
    );
    let kernels = two.load(&KERNELS).unwrap();
    let x = one.upload(&[1.0f32; 256]).unwrap();
    let mut y = one.upload(&[1.0f32; 256]).unwrap();
    launch!(kernels, saxpy[1, 256](1.0f32, &x, &mut y)).unwrap();
    assert_eq!(y.to_vec().unwrap(), [2.0f32; 256]);
    // `Device::cuda(0)` runs in GPU 0's primary context: `from_cudarc` of it is that device.
    let own = Device::cuda(0).unwrap();
    let primary = own.cudarc_context().unwrap();
    assert!(primary.is_primary());
    let same = Device::from_cudarc(primary.clone()).unwrap();
    let z = own.upload(&[1.0f32; 256]).unwrap();
    let mut w = same.upload(&[0.0f32; 256]).unwrap();
    let own_kernels = same.load(&KERNELS).unwrap();
    launch!(own_kernels, saxpy[1, 256](3.0f32, &z, &mut w)).unwrap();
    assert_eq!(w.to_vec().unwrap(), [3.0f32; 256]);
    assert!(Stream::from_cudarc(primary.new_stream().unwrap()).is_ok());
}

#[test]
fn memory_and_streams_of_another_context_or_the_cpu_are_refused() {
    let Some(ctx) = program_context("memory_and_streams_of_another_context") else {
        return;
    };
    let device = Device::from_cudarc(ctx.clone()).unwrap();
    let kernels = device.load(&KERNELS).unwrap();
    let other = CudaContext::new_non_primary(0, 0).unwrap();
    let other_stream = other.default_stream();
    let foreign = other_stream.clone_htod(&[1.0f32; 256]).unwrap();
    let mut out = ctx.default_stream().alloc_zeros::<f32>(256).unwrap();
    let wrong = |result: ferrocuda::Result<()>, what: &str| match result {
        Err(Error::WrongDevice { owner, .. }) => {
            assert!(owner.contains("another CUDA context"), "{what}: {owner}")
        }
        other => panic!("{what}: {other:?}"),
    };
    // A slice of another context, as an input and as an output.
    wrong(
        launch!(kernels, saxpy[1, 256](1.0f32, &foreign, &mut out)),
        "an input",
    );
    let x = ctx.default_stream().clone_htod(&[1.0f32; 256]).unwrap();
    let mut foreign_out = other_stream.alloc_zeros::<f32>(256).unwrap();
    wrong(
        launch!(kernels, saxpy[1, 256](1.0f32, &x, &mut foreign_out)),
        "an output",
    );
    // A buffer of another context's device, and a stream of one.
    let elsewhere = Device::from_cudarc(other.clone()).unwrap();
    let theirs = elsewhere.upload(&[1.0f32; 256]).unwrap();
    wrong(
        launch!(kernels, saxpy[1, 256](1.0f32, &theirs, &mut out)),
        "a buffer",
    );
    let stream = Stream::from_cudarc(other.new_stream().unwrap()).unwrap();
    wrong(
        launch!(kernels, saxpy[1, 256, &stream](1.0f32, &x, &mut out)),
        "a stream",
    );
    // Adopting a slice of another context on this device.
    let adopted = DeviceBuffer::from_cudarc_on(&device, foreign);
    assert!(matches!(adopted, Err(Error::WrongDevice { .. })));
    // A slice on the CPU executor: in a launch and as a buffer.
    let cpu = Device::cpu().load(&KERNELS).unwrap();
    let result = launch!(cpu, saxpy[1, 256](1.0f32, &x, &mut out));
    assert!(
        matches!(result, Err(Error::WrongDevice { .. })),
        "{result:?}"
    );
    let on_cpu = DeviceBuffer::from_cudarc_on(&Device::cpu(), x);
    assert!(matches!(on_cpu, Err(Error::WrongDevice { .. })));
}

#[test]
fn a_fault_in_the_program_s_context_is_not_repaired_and_says_so() {
    let Some(ctx) = program_context("a_fault_in_the_program_s_context") else {
        return;
    };
    let device = Device::from_cudarc(ctx.clone()).unwrap();
    let faults = device.load(support::test_kernels()).unwrap();
    let mut small = device.alloc_zeroed::<u32>(64).unwrap();
    let result = launch!(faults, test_kernels::write_shifted[1, 64](&mut small, 1u32 << 20))
        .and_then(|()| device.synchronize());
    let Err(Error::KernelFailed { recovery, .. }) = result else {
        panic!("expected a kernel fault, got {result:?}")
    };
    assert!(recovery.contains("Device::from_cudarc"), "{recovery}");
    assert!(recovery.contains("cannot replace"), "{recovery}");
    // The context stays faulted: for ferrocuda's next launch and for the program's cudarc.
    let kernels = device.load(&KERNELS);
    let later = kernels.and_then(|k| {
        let mut y = device.alloc_zeroed::<f32>(4)?;
        launch!(k, saxpy[1, 4](1.0f32, &[1.0f32; 4], &mut y))?;
        y.to_vec().map(|_| ())
    });
    assert!(later.is_err(), "{later:?}");
    assert!(ctx.default_stream().synchronize().is_err());
    // A new context of the program's carries on.
    let fresh = CudaContext::new_non_primary(0, 0).unwrap();
    let device = Device::from_cudarc(fresh).unwrap();
    let kernels = device.load(&KERNELS).unwrap();
    let mut y = device.alloc_zeroed::<f32>(4).unwrap();
    launch!(kernels, saxpy[1, 4](1.0f32, &[1.0f32; 4], &mut y)).unwrap();
    assert_eq!(y.to_vec().unwrap(), [1.0; 4]);
}
