//! On a GPU: what goes wrong is reported and the program carries on. An allocation larger than
//! the free memory is an error, a PTX the driver rejects comes with the JIT's log, and a trapping
//! kernel is named, its CUDA context replaced, and the next launch works. Skips, saying so,
//! without a GPU.
//!
//! In a test binary of its own: a kernel fault replaces the CUDA context every `Device` of the GPU
//! shares, which would make buffers of tests running alongside unusable. The tests here run one
//! at a time.

mod support;

use ferrocuda::kernels::vector_add;
use ferrocuda::{launch, launch_cooperative, Error, Ptx};
use test_kernels::grid::grid_sync_in_block_0_only;

/// Adds two vectors on `device` and checks the sum: the device works.
fn vector_add_works(device: &ferrocuda::Device) {
    let kernels = device.load(&ferrocuda::KERNELS).unwrap();
    let n = 10_000;
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let b = vec![0.5f32; n];
    let mut out = vec![0.0f32; n];
    launch!(kernels, vector_add[(n as u32).div_ceil(256), 256](&a, &b, &mut out)).unwrap();
    assert!(out.iter().enumerate().all(|(i, &v)| v == i as f32 + 0.5));
}

/// The planted-fault kernels the tests below launch build to PTX, with every kernel in it (on
/// every machine; scripts/device-bundle.sh runs this to build the PTX for the GPU machine).
#[test]
fn test_kernels_build_to_ptx() {
    let info = support::test_kernels().info();
    for kernel in ["assert_non_negative", "write_shifted"] {
        assert!(info.entry(kernel).is_some(), "{kernel} not in {info:?}");
    }
}

#[test]
fn gpu_memory_info_sees_an_allocation() {
    let _serial = support::gpu_alone();
    let Some(gpu) = support::gpu_or_skip("gpu_memory_info_sees_an_allocation") else {
        return;
    };
    let (free, total) = gpu.memory_info().unwrap();
    assert!(0 < free && free <= total, "free {free}, total {total}");
    const GIB: usize = 1 << 30;
    let buffer = gpu.alloc_zeroed::<u8>(GIB).unwrap();
    gpu.synchronize().unwrap();
    let (after, total_after) = gpu.memory_info().unwrap();
    assert_eq!(total_after, total);
    let used = free.saturating_sub(after);
    assert!(
        (GIB..=2 * GIB).contains(&used),
        "a 1 GiB buffer took {used} bytes of free memory"
    );
    drop(buffer);
}

#[test]
fn an_allocation_larger_than_free_memory_is_an_error_and_the_gpu_stays_usable() {
    let _serial = support::gpu_alone();
    let Some(gpu) = support::gpu_or_skip("an_allocation_larger_than_free_memory") else {
        return;
    };
    let (free, total) = gpu.memory_info().unwrap();
    let ask = free + (1 << 30);
    let error = match gpu.alloc_zeroed::<u8>(ask) {
        Ok(_) => panic!("allocating {ask} bytes with {free} free succeeded"),
        Err(error) => error,
    };
    println!("{error}");
    match &error {
        Error::OutOfMemory {
            requested,
            free: free_then,
            total: total_then,
            ..
        } => {
            assert_eq!(*requested, ask);
            assert_eq!(*total_then, total);
            assert!(free_then < requested);
        }
        other => panic!("expected OutOfMemory, got {other}"),
    }
    let message = error.to_string();
    assert!(
        message.contains(&format!("asked for {ask} bytes")) && message.contains("in chunks"),
        "{message}"
    );
    // Not a sticky error: the GPU works on, in the same context.
    vector_add_works(&gpu);
}

/// Not PTX the JIT can compile: an instruction that does not exist.
static BROKEN: Ptx = Ptx::new(
    "broken",
    ".version 6.0\n.target sm_70\n.address_size 64\n\n\
     .visible .entry broken()\n{\n\tnot_an_instruction.u32 %r1;\n\tret;\n}\n",
);

/// PTX for a GPU no one has.
static FUTURE_GPU: Ptx = Ptx::new(
    "future-gpu",
    ".version 6.0\n.target sm_200\n.address_size 64\n\n.visible .entry k()\n{\n\tret;\n}\n",
);

#[test]
fn a_ptx_the_driver_rejects_comes_with_the_jit_log_and_the_versions() {
    let _serial = support::gpu_alone();
    let Some(gpu) = support::gpu_or_skip("a_ptx_the_driver_rejects") else {
        return;
    };
    let driver = ferrocuda::DriverInfo::query().unwrap();
    let error = match gpu.load(&BROKEN) {
        Ok(_) => panic!("the driver loaded invalid PTX"),
        Err(error) => error,
    };
    println!("{error}");
    match &error {
        Error::PtxRejected {
            jit_log,
            driver_cuda,
            ..
        } => {
            assert_eq!(*driver_cuda, Some(driver.cuda_version));
            assert!(
                jit_log.to_lowercase().contains("error") && jit_log.contains("not_an_instruction"),
                "JIT log: {jit_log}"
            );
        }
        other => panic!("expected PtxRejected, got {other}"),
    }
    let (major, minor) = driver.cuda_version;
    let message = error.to_string();
    for part in [
        format!("CUDA {major}.{minor}"),
        "PTX ISA 6.0".into(),
        "CUDA 9.0 or newer".into(),
        "JIT log: ".into(),
    ] {
        assert!(message.contains(&part), "{part:?} not in: {message}");
    }

    // check_ptx says the same, and that the real kernels are fine.
    let check = gpu.check_ptx(&BROKEN);
    assert!(!check.runs());
    assert!(matches!(check.load, Some(Err(Error::PtxRejected { .. }))));
    let check = gpu.check_ptx(&ferrocuda::KERNELS);
    assert!(check.runs(), "{:?}", check.load);
    assert_eq!(check.driver_new_enough(), Some(true));
    assert_eq!(check.gpu_new_enough(), Some(true));

    let error = match gpu.load(&FUTURE_GPU) {
        Ok(_) => panic!("PTX for sm_200 loaded"),
        Err(error) => error,
    };
    assert!(matches!(error, Error::GpuTooOld { .. }), "{error}");
    assert_eq!(gpu.check_ptx(&FUTURE_GPU).gpu_new_enough(), Some(false));
    vector_add_works(&gpu);
}

#[test]
fn a_trapping_kernel_is_named_and_the_next_launch_on_the_device_works() {
    let _serial = support::gpu_alone();
    let Some(gpu) = support::gpu_or_skip("a_trapping_kernel_is_named") else {
        return;
    };
    let module = gpu.load(support::test_kernels()).unwrap();
    let kernels = gpu.load(&ferrocuda::KERNELS).unwrap();
    let made_before = gpu.upload(&[1.0f32, 2.0, 3.0]).unwrap();
    let stream_before = gpu.new_stream().unwrap();

    let mut x = vec![1.0f32; 300];
    x[260] = -1.0; // the assert in block 1 fails: the kernel traps
    let mut out = vec![0.0f32; 300];
    let error =
        launch!(module, test_kernels::assert_non_negative[2, 256](&x, &mut out)).unwrap_err();
    println!("{error}");
    match &error {
        Error::KernelFailed {
            kernel, recovery, ..
        } => {
            assert_eq!(*kernel, "assert_non_negative");
            assert!(recovery.contains("made a new one"), "{recovery}");
        }
        other => panic!("expected KernelFailed, got {other}"),
    }
    assert!(error.to_string().contains("had to be recreated"), "{error}");

    // The next launch on the same device works: the module reloads in the new context.
    x[260] = 1.0;
    launch!(module, test_kernels::assert_non_negative[2, 256](&x, &mut out)).unwrap();
    assert_eq!(out, x);
    let n = x.len();
    let mut sum = vec![0.0f32; n];
    launch!(kernels, vector_add[2, 256](&x, &x, &mut sum)).unwrap();
    assert!(sum.iter().zip(&x).all(|(s, v)| *s == 2.0 * v));

    // What belonged to the dead context is refused with a clear error, never used.
    let error = made_before.to_vec().unwrap_err();
    assert!(
        matches!(
            error,
            Error::ContextLost {
                what: "a buffer",
                ..
            }
        ),
        "{error}"
    );
    let mut y = vec![0.0f32; 3];
    let error =
        launch!(kernels, vector_add[1, 32](&made_before, &made_before, &mut y)).unwrap_err();
    assert!(matches!(error, Error::ContextLost { .. }), "{error}");
    let error = launch!(kernels, vector_add[1, 32, stream_before](&x, &x, &mut sum)).unwrap_err();
    assert!(
        matches!(
            error,
            Error::ContextLost {
                what: "a stream",
                ..
            }
        ),
        "{error}"
    );
    drop(made_before);
    drop(stream_before);

    // A new handle on the GPU gets the new context too, and buffers made now work.
    let again = ferrocuda::Device::cuda(0).unwrap();
    vector_add_works(&again);
    let fresh = gpu.upload(&[4.0f32, 5.0]).unwrap();
    assert_eq!(fresh.to_vec().unwrap(), [4.0, 5.0]);

    // A planted out-of-bounds write faults too, and the device recovers again.
    let mut small = vec![0u32; 64];
    let error = launch!(module, test_kernels::write_shifted[1, 64](&mut small, 1u32)).unwrap_err();
    assert!(
        matches!(
            error,
            Error::KernelFailed {
                kernel: "write_shifted",
                ..
            }
        ),
        "{error}"
    );
    launch!(module, test_kernels::write_shifted[1, 64](&mut small, 0u32)).unwrap();
    assert!(small.iter().enumerate().all(|(i, &v)| v == i as u32));
}

#[test]
fn a_fault_seen_at_stream_synchronize_names_that_stream_s_kernel_and_releases_the_context() {
    let _serial = support::gpu_alone();
    let Some(gpu) = support::gpu_or_skip("a_fault_seen_at_stream_synchronize") else {
        return;
    };
    // Another user of the GPU's primary context in this process, as cuBLAS is in the matmul
    // bench: made before the fault, it must work again once ferrocuda has let go of the
    // faulted context.
    let other_user = cudarc::driver::CudaContext::new(0).unwrap();
    let module = gpu.load(support::test_kernels()).unwrap();
    let kernels = gpu.load(&ferrocuda::KERNELS).unwrap();
    gpu.synchronize().unwrap(); // everything before this test finished

    let faulty = gpu.new_stream().unwrap();
    let innocent = gpu.new_stream().unwrap();
    // Device buffers only: the launches return without waiting, so the fault shows later.
    let mut small = gpu.alloc_zeroed::<u32>(64).unwrap();
    let x = gpu.upload(&vec![1.0f32; 1024]).unwrap();
    let mut sum = gpu.alloc_zeroed::<f32>(1024).unwrap();
    launch!(module, test_kernels::write_shifted[1, 64, faulty](&mut small, 1u32 << 20)).unwrap();
    // A kernel launched later on another stream: blaming the context's last launch would name
    // it. Its launch may already see the (sticky) fault.
    let error = match launch!(kernels, vector_add[4, 256, innocent](&x, &x, &mut sum)) {
        Err(error) => error,
        Ok(()) => faulty.synchronize().unwrap_err(),
    };
    println!("{error}");
    match &error {
        Error::KernelFailed {
            kernel, recovery, ..
        } => {
            assert_eq!(*kernel, "write_shifted", "{error}");
            assert!(recovery.contains("made a new one"), "{recovery}");
        }
        other => panic!("expected KernelFailed, got {other}"),
    }

    // The next, unrelated call is not blamed: the context was replaced where the fault showed.
    let fresh = gpu.upload(&[1.0f32, 2.0, 3.0]).unwrap();
    assert_eq!(fresh.to_vec().unwrap(), [1.0, 2.0, 3.0]);
    vector_add_works(&gpu);
    let stream = gpu.new_stream().unwrap();
    stream.synchronize().unwrap();

    // Every object of the old context says so.
    for (what, result) in [
        ("faulty stream", faulty.synchronize()),
        ("innocent stream", innocent.synchronize()),
        ("buffer", small.to_vec().map(drop)),
    ] {
        match result {
            Err(Error::ContextLost { .. }) => {}
            other => panic!("{what}: expected ContextLost, got {other:?}"),
        }
    }

    // Once the last of them is gone (the modules reloaded in the new context above), the
    // primary context is released and reset: its other user works again.
    drop((faulty, innocent, small, x, sum, module, kernels));
    vector_add_works(&gpu);
    let stream = other_user.default_stream();
    let copied = stream.clone_htod(&[7u8, 8, 9]).unwrap();
    assert_eq!(stream.clone_dtoh(&copied).unwrap(), [7, 8, 9]);
    stream.synchronize().unwrap();
}

/// On the emulator a cooperative launch with a grid sync that not every block reaches fails
/// (here, not in grid_sync.rs: the fault replaces the context the other tests use).
#[test]
fn on_the_emulator_a_grid_sync_that_only_some_blocks_reach_is_a_failed_launch() {
    let _serial = support::gpu_alone();
    let test = "on_the_emulator_a_grid_sync_that_only_some_blocks_reach_is_a_failed_launch";
    let Some(gpu) = support::gpu_or_skip(test) else {
        return;
    };
    if !gpu.properties().is_emulator() {
        // A GPU would hang here, as CUDA's cooperative groups do.
        support::say_skipped(
            test,
            "a real GPU hangs at a grid sync not every block reaches",
        );
        return;
    }
    let module = gpu.load(support::test_kernels()).unwrap();
    let mut out = vec![0u32; 3];
    let error =
        launch_cooperative!(module, grid_sync_in_block_0_only[3, 32](&mut out)).unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains("grid_sync_in_block_0_only")
            && message.contains("CUDA_ERROR_LAUNCH_FAILED"),
        "{message}"
    );
}
