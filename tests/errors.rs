//! Bad launches fail before anything runs, with messages that name what is wrong.

mod support;

use ferrocuda::kernels::{saxpy, vector_add};
use ferrocuda::{launch, Device, Error, LaunchConfig, Module, Ptx};

fn cpu_kernels() -> Module {
    Device::cpu().load(&ferrocuda::KERNELS).unwrap()
}

#[test]
fn mismatched_lengths_name_both_parameters_and_touch_nothing() {
    let kernels = cpu_kernels();
    let (a, b) = (vec![1.0f32; 10], vec![1.0f32; 9]);
    let mut out = vec![5.0f32; 10];
    let error = launch!(kernels, vector_add[1, 32](&a, &b, &mut out)).unwrap_err();
    assert!(matches!(
        error,
        Error::LengthMismatch {
            first: "a",
            first_len: 10,
            second: "b",
            second_len: 9,
            ..
        }
    ));
    let message = error.to_string();
    assert!(
        message.contains("`a` has 10 elements but `b` has 9"),
        "{message}"
    );
    assert!(
        out.iter().all(|&v| v == 5.0),
        "a failed launch must not write outputs"
    );

    let mut short_out = vec![0.0f32; 3];
    let error = launch!(kernels, vector_add[1, 32](&a, &a, &mut short_out)).unwrap_err();
    assert!(error.to_string().contains("`out` has 3"), "{error}");
}

#[test]
fn zero_sized_grid_or_block_is_refused() {
    let kernels = cpu_kernels();
    let (x, mut y) = (vec![1.0f32; 4], vec![0.0f32; 4]);
    let error = launch!(kernels, saxpy[1, 0](2.0f32, &x, &mut y)).unwrap_err();
    assert!(
        matches!(error, Error::ZeroSize { what: "block", .. }),
        "{error}"
    );
    let error = launch!(kernels, saxpy[(1, 0), 32](2.0f32, &x, &mut y)).unwrap_err();
    assert!(
        matches!(error, Error::ZeroSize { what: "grid", .. }),
        "{error}"
    );
    assert!(error.to_string().contains("at least 1"));
    assert!(matches!(
        kernels.config_for(&saxpy, 0),
        Err(Error::ZeroSize { .. })
    ));
    // More blocks of 1024 than a grid may have along x: the message suggests a grid-stride loop.
    let error = kernels.config_for(&saxpy, 1 << 42).unwrap_err();
    assert!(matches!(error, Error::GridTooLarge { .. }), "{error}");
    assert!(error.to_string().contains("grid-stride"), "{error}");
}

#[test]
fn blocks_and_grids_beyond_the_device_limits_are_refused() {
    let kernels = cpu_kernels();
    let (x, mut y) = (vec![1.0f32; 4], vec![0.0f32; 4]);
    let error = launch!(kernels, saxpy[1, 1025](2.0f32, &x, &mut y)).unwrap_err();
    let message = error.to_string();
    assert!(matches!(
        error,
        Error::BlockTooLarge {
            threads: 1025,
            max_threads: 1024,
            ..
        }
    ));
    assert!(
        message.contains("1025 threads") && message.contains("at most 1024"),
        "{message}"
    );
    // 64 threads in all, but z may not exceed 64... and here it is 65.
    let error = launch!(kernels, saxpy[1, (1, 1, 65)](2.0f32, &x, &mut y)).unwrap_err();
    assert!(matches!(error, Error::BlockTooLarge { .. }), "{error}");
    let error = launch!(kernels, saxpy[(1, 65536), 32](2.0f32, &x, &mut y)).unwrap_err();
    assert!(matches!(error, Error::GridTooLarge { .. }), "{error}");
    let config = LaunchConfig::new(1, 32).with_shared_mem_bytes(48 * 1024 + 1);
    let error = kernels
        .launch(&saxpy, config, (2.0f32, &x, &mut y))
        .unwrap_err();
    assert!(
        matches!(
            error,
            Error::SharedMemoryTooLarge {
                requested: 49153,
                limit: 49152,
                ..
            }
        ),
        "{error}"
    );
    assert!(y.iter().all(|&v| v == 0.0));
}

/// PTX with only a `vector_add` entry, as a module built from other sources would be.
static ONLY_VECTOR_ADD: Ptx = Ptx::new(
    "only-vector-add",
    ".version 6.0\n.target sm_70\n.address_size 64\n\
     .visible .entry vector_add(\n.param .u64 p0,\n.param .u64 p1,\n.param .u64 p2,\n\
     .param .u64 p3,\n.param .u64 p4,\n.param .u64 p5\n)\n{\nret;\n}\n",
);

/// PTX whose `saxpy` takes a 64-bit scalar where the host passes an f32.
static DRIFTED_SAXPY: Ptx = Ptx::new(
    "drifted-saxpy",
    ".version 6.0\n.target sm_70\n.address_size 64\n\
     .visible .entry saxpy(\n.param .f64 p0,\n.param .u64 p1,\n.param .u64 p2,\n\
     .param .u64 p3,\n.param .u64 p4\n)\n{\nret;\n}\n",
);

#[test]
fn a_kernel_missing_from_the_ptx_is_named_with_what_the_ptx_has() {
    let module = Device::cpu().load(&ONLY_VECTOR_ADD).unwrap();
    let (x, mut y) = (vec![1.0f32; 4], vec![0.0f32; 4]);
    let error = launch!(module, saxpy[1, 32](2.0f32, &x, &mut y)).unwrap_err();
    let message = error.to_string();
    assert!(
        matches!(
            error,
            Error::KernelNotInPtx {
                kernel: "saxpy",
                ..
            }
        ),
        "{message}"
    );
    assert!(
        message.contains("only-vector-add") && message.contains("its entries: vector_add"),
        "{message}"
    );
}

#[test]
fn host_and_ptx_disagreeing_on_parameters_is_caught_before_launch() {
    let module = Device::cpu().load(&DRIFTED_SAXPY).unwrap();
    let (x, mut y) = (vec![1.0f32; 4], vec![0.0f32; 4]);
    let error = launch!(module, saxpy[1, 32](2.0f32, &x, &mut y)).unwrap_err();
    match &error {
        Error::AbiMismatch {
            kernel: "saxpy",
            host,
            ptx,
        } => {
            assert_eq!(host, &[4, 8, 8, 8, 8]);
            assert_eq!(ptx, &[8, 8, 8, 8, 8]);
        }
        other => panic!("expected AbiMismatch, got {other}"),
    }
}

#[test]
fn a_panicking_kernel_is_an_error_naming_block_and_thread() {
    let module = Device::cpu().load(support::test_kernels()).unwrap();
    let mut x = vec![1.0f32; 300];
    x[260] = -1.0; // block 1, thread 4 of 256-thread blocks
    let mut out = vec![0.0f32; 300];
    let error =
        launch!(module, test_kernels::assert_non_negative[2, 256](&x, &mut out)).unwrap_err();
    match &error {
        Error::KernelPanicked {
            kernel,
            block,
            thread,
            message,
        } => {
            assert_eq!(*kernel, "assert_non_negative");
            assert_eq!((block.x, thread.x), (1, 4));
            assert!(message.contains("negative input"), "{message}");
        }
        other => panic!("expected KernelPanicked, got {other}"),
    }
    assert!(error.to_string().contains("may be partly written"));
}

#[test]
fn a_panic_in_the_plain_store_loop_names_its_thread() {
    // Unchecked, `add_next` runs on the plain-store loop, each block row one loop that LLVM
    // vectorises. The last thread reads past `x`'s end, in a row whose indices all fit the
    // buffers (512) or not (the others).
    let module = Device::cpu_checked(false)
        .load(support::test_kernels())
        .unwrap();
    for (blocks, threads, n) in [
        (2u32, 256u32, 512usize),
        (2, 256, 301),
        (1, 1024, 1000),
        (3, 100, 250),
    ] {
        let x = vec![1.0f32; n];
        let mut out = vec![0.0f32; n];
        let error =
            launch!(module, test_kernels::add_next[blocks, threads](&x, &mut out)).unwrap_err();
        let last = n as u32 - 1;
        match &error {
            Error::KernelPanicked {
                block,
                thread,
                message,
                ..
            } => {
                assert_eq!(
                    (block.x, thread.x),
                    (last / threads, last % threads),
                    "{error}"
                );
                assert!(message.contains("index out of bounds"), "{message}");
            }
            other => panic!("expected KernelPanicked, got {other}"),
        }
        // The threads before it in its block ran.
        let first = (last / threads * threads) as usize;
        assert!(out[first..last as usize].iter().all(|&v| v == 2.0), "n {n}");
    }
}

#[test]
fn an_out_of_bounds_write_is_an_error_not_a_crash() {
    let module = Device::cpu().load(support::test_kernels()).unwrap();
    let mut out = vec![0u32; 64];
    let error = launch!(module, test_kernels::write_shifted[1, 64](&mut out, 1u32)).unwrap_err();
    match &error {
        Error::KernelPanicked {
            thread, message, ..
        } => {
            assert_eq!(thread.x, 63);
            assert!(
                message.contains("index 64 out of bounds for an output of length 64"),
                "{message}"
            );
        }
        other => panic!("expected KernelPanicked, got {other}"),
    }
    // The same kernel within bounds works.
    launch!(module, test_kernels::write_shifted[1, 64](&mut out, 0u32)).unwrap();
    assert!(out.iter().enumerate().all(|(i, &v)| v == i as u32));
}

#[test]
fn barriers_run_on_the_cpu_with_any_block_size() {
    let module = Device::cpu().load(support::test_kernels()).unwrap();
    let x: Vec<f32> = (0..100).map(|i| i as f32).collect();
    for threads in [1u32, 32, 100, 1024] {
        let mut out = vec![0.0f32; 100];
        let blocks = 100u32.div_ceil(threads);
        launch!(module, test_kernels::with_barrier[blocks, threads](&x, &mut out)).unwrap();
        assert_eq!(out, x, "{threads} threads per block");
    }
}

/// `error` says a copy had `actual` elements where the buffer holds `expected`.
fn assert_copy_length(error: &Error, expected: usize, actual: usize) {
    assert!(
        matches!(
            error,
            Error::CopyLength { expected: e, actual: a, .. } if (*e, *a) == (expected, actual)
        ),
        "{error}"
    );
}

#[test]
fn gpu_buffers_cannot_be_used_on_the_cpu_and_copies_check_lengths() {
    let device = Device::cpu();
    let mut buffer = device.upload(&[1u32, 2, 3]).unwrap();
    let error = buffer.copy_from(&[1, 2]).unwrap_err();
    assert_copy_length(&error, 3, 2);
    let mut too_long = [0u32; 4];
    assert!(buffer.copy_to(&mut too_long).is_err());
    let short = device.upload(&[7u32, 8]).unwrap();
    let error = buffer.copy_from_buffer(&short).unwrap_err();
    assert_copy_length(&error, 3, 2);
    assert_eq!(
        buffer.to_vec().unwrap(),
        [1, 2, 3],
        "a failed copy leaves the buffer as it was"
    );
}

/// `MemAvailable` and `MemTotal` of /proc/meminfo in bytes, read here without the library.
fn meminfo_bytes() -> Option<(usize, usize)> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let field = |name: &str| -> Option<usize> {
        let line = text.lines().find(|l| l.starts_with(name))?;
        Some(line.split_whitespace().nth(1)?.parse::<usize>().ok()? * 1024)
    };
    Some((field("MemAvailable:")?, field("MemTotal:")?))
}

#[test]
fn cpu_memory_info_is_the_hosts_available_and_total_memory() {
    let Some((available, total)) = meminfo_bytes() else {
        support::say_skipped("cpu_memory_info", "no /proc/meminfo on this system");
        return;
    };
    let (free, all) = Device::cpu().memory_info().unwrap();
    assert_eq!(all, total);
    // Available memory moves between the two reads; other tests allocate meanwhile.
    let slack = total / 20;
    assert!(
        free.abs_diff(available) <= slack,
        "memory_info says {free} available, /proc/meminfo {available}"
    );
}

#[test]
fn an_allocation_larger_than_memory_is_an_out_of_memory_error_not_an_abort() {
    let Some((_, total)) = meminfo_bytes() else {
        support::say_skipped("cpu_out_of_memory", "no /proc/meminfo on this system");
        return;
    };
    let device = Device::cpu();
    let elements = total / 4 * 2; // twice the host's memory, in f32
    let error = match device.alloc_zeroed::<f32>(elements) {
        Ok(_) => panic!("allocating twice the host's memory succeeded"),
        Err(error) => error,
    };
    match &error {
        Error::OutOfMemory {
            requested,
            free,
            total: all,
            ..
        } => {
            assert_eq!(*requested, elements * 4);
            assert_eq!(*all, total);
            assert!(free < requested);
        }
        other => panic!("expected OutOfMemory, got {other}"),
    }
    let message = error.to_string();
    assert!(
        message.contains(&format!("asked for {} bytes", elements * 4))
            && message.contains("in chunks"),
        "{message}"
    );
    // The device is fine afterwards.
    assert_eq!(device.alloc_zeroed::<f32>(1000).unwrap().len(), 1000);
}
