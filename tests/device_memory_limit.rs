//! The device memory cap (`Device::with_memory_limit`, `FERROCUDA_DEVICE_MEMORY_LIMIT`) and the
//! high-water mark: on the CPU executor and on a GPU (the PTX emulator in CI).

mod support;

use ferrocuda::{launch, Device, Error, KERNELS};

const MIB: usize = 1 << 20;

/// The (requested, free, total, limit) of an `OutOfMemory` error.
fn refused<T>(result: ferrocuda::Result<T>) -> (usize, usize, usize, Option<usize>, String) {
    match result {
        Err(
            error @ Error::OutOfMemory {
                requested,
                free,
                total,
                limit,
                ..
            },
        ) => (requested, free, total, limit, error.to_string()),
        Err(other) => panic!("expected OutOfMemory, got {other}"),
        Ok(_) => panic!("expected OutOfMemory, it fitted"),
    }
}

/// What every device must do under a 1 MiB cap.
fn cap_and_high_water_mark(device: &Device) {
    let device = device.with_memory_limit(Some(MIB));
    assert_eq!(device.memory_limit(), Some(MIB));
    assert_eq!((device.memory_in_use(), device.peak_memory()), (0, 0));

    let a = device.upload(&vec![1.0f32; 100_000]).unwrap();
    let b = device.alloc_zeroed::<u32>(100_000).unwrap();
    assert_eq!(device.memory_in_use(), 800_000);
    let (free, total) = device.memory_info().unwrap();
    assert!(free <= MIB - 800_000 && total <= MIB, "{free} of {total}");

    // 800_000 of 1_048_576 bytes are in use: 300_000 more do not fit, in either call.
    let over = vec![0.5f32; 75_000];
    for result in [
        refused(device.upload(&over)),
        refused(device.alloc_zeroed::<f32>(75_000)),
    ] {
        let (requested, free, total, limit, message) = result;
        assert_eq!(
            (requested, free, total, limit),
            (300_000, MIB - 800_000, MIB, Some(MIB))
        );
        for part in [
            "asked for 300000 bytes",
            "device memory limit of 1048576 bytes",
            "with 800000 bytes in use",
            "ferrocuda::ops::Pipeline",
        ] {
            assert!(message.contains(part), "{part:?} not in: {message}");
        }
    }
    assert_eq!(
        device.memory_in_use(),
        800_000,
        "a refused allocation holds nothing"
    );

    drop(a);
    assert_eq!(
        (device.memory_in_use(), device.peak_memory()),
        (400_000, 800_000)
    );
    let c = device.upload(&over).unwrap();
    assert_eq!(device.peak_memory(), 800_000);
    device.reset_peak_memory();
    assert_eq!(device.peak_memory(), 700_000);
    drop((b, c));
    assert_eq!((device.memory_in_use(), device.peak_memory()), (0, 700_000));

    // Each capped handle counts afresh; the uncapped device is not limited by it.
    let other = device.with_memory_limit(None);
    let big = other.alloc_zeroed::<u8>(2 * MIB).unwrap();
    assert_eq!(
        (other.memory_in_use(), device.memory_in_use()),
        (2 * MIB, 0)
    );
    drop(big);
}

#[test]
fn a_cap_refuses_allocations_past_it_and_the_peak_is_kept_on_the_cpu() {
    cap_and_high_water_mark(&Device::cpu());
}

#[test]
fn a_cap_refuses_allocations_past_it_and_the_peak_is_kept_on_a_gpu() {
    let Some(gpu) = support::gpu_or_skip("device_memory_limit (GPU)") else {
        return;
    };
    cap_and_high_water_mark(&gpu);
}

#[test]
fn a_gpu_launch_counts_the_copies_it_stages_of_host_data() {
    let Some(gpu) = support::gpu_or_skip("device_memory_limit staging") else {
        return;
    };
    let n = 10_000;
    let (a, b) = (vec![1.0f32; n], vec![2.0f32; n]);
    let mut out = vec![0.0f32; n];
    let roomy = gpu.with_memory_limit(Some(MIB));
    let kernels = roomy.load(&KERNELS).unwrap();
    launch!(kernels, ferrocuda::kernels::vector_add[n.div_ceil(256), 256](&a, &b, &mut out))
        .unwrap();
    assert!(out.iter().all(|&x| x == 3.0));
    // Two inputs and the output were staged on the device together, and given back after.
    assert_eq!((roomy.memory_in_use(), roomy.peak_memory()), (0, 3 * n * 4));

    let tight = gpu.with_memory_limit(Some(3 * n * 4 - 1));
    let kernels = tight.load(&KERNELS).unwrap();
    let result =
        launch!(kernels, ferrocuda::kernels::vector_add[n.div_ceil(256), 256](&a, &b, &mut out));
    let (requested, ..) = refused(result);
    assert_eq!(requested, 3 * n * 4);
}

#[test]
fn the_environment_variable_caps_every_device() {
    // A child process, so this process's environment stays as it is.
    if std::env::var_os("DEVICE_MEMORY_LIMIT_CHILD").is_some() {
        let device = Device::cpu();
        assert_eq!(device.memory_limit(), Some(64 * MIB));
        let (_, _, _, limit, _) = refused(device.alloc_zeroed::<u8>(64 * MIB + 1));
        assert_eq!(limit, Some(64 * MIB));
        return;
    }
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "the_environment_variable_caps_every_device",
            "--exact",
            "--nocapture",
        ])
        .env("DEVICE_MEMORY_LIMIT_CHILD", "1")
        .env(ferrocuda::DEVICE_MEMORY_LIMIT_ENV, "64MiB")
        .status()
        .unwrap();
    assert!(status.success());
}
