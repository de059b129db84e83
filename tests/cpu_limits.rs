//! The CPU executor's limits as errors: a launch past its deadline, a simulated thread out of
//! stack. Each names the kernel, block and thread, and the device works on afterwards.

mod support;

use ferrocuda::{launch, CpuOptions, Device, Dim3, Error, Module};
use std::time::{Duration, Instant};
use test_kernels::limits;

/// The test kernels on a CPU device with `options` (the rest from the environment).
fn module(options: impl FnOnce(&mut CpuOptions)) -> Module {
    let mut all = CpuOptions::from_env().unwrap();
    options(&mut all);
    Device::cpu_with(all)
        .unwrap()
        .load(support::test_kernels())
        .unwrap()
}

const DEADLINE: Duration = Duration::from_millis(200);

/// Far past any deadline: a stopped launch returns well within it (a missing check hangs).
const HANG: Duration = Duration::from_secs(60);

/// Runs `launch`, which would take hours, and checks it stops with `DeadlineExceeded` for
/// `kernel` naming a block of `grid` and a thread of `block`.
fn assert_stopped(
    kernel: &str,
    grid: Dim3,
    block: Dim3,
    launch: impl FnOnce() -> ferrocuda::Result<()>,
) {
    let start = Instant::now();
    let result = launch();
    let took = start.elapsed();
    assert!(took < HANG, "{kernel}: took {took:?}");
    match result {
        Err(error @ Error::DeadlineExceeded { .. }) => {
            let message = error.to_string();
            let Error::DeadlineExceeded {
                kernel: name,
                block: at,
                thread,
                deadline,
            } = error
            else {
                unreachable!()
            };
            assert_eq!((name, deadline), (kernel, DEADLINE));
            assert!(at.x < grid.x && at.y < grid.y && at.z < grid.z, "{at}");
            assert!(
                thread.x < block.x && thread.y < block.y && thread.z < block.z,
                "{thread}"
            );
            assert!(
                message.contains(&format!("kernel `{kernel}` ran past its CPU deadline"))
                    && message.contains("FERROCUDA_CPU_DEADLINE_MS"),
                "{message}"
            );
        }
        other => panic!("{kernel}: expected DeadlineExceeded, got {other:?}"),
    }
}

#[test]
fn a_launch_past_its_deadline_stops_at_barriers_warp_operations_grid_stride_steps_and_threads() {
    let module = module(|o| o.deadline = Some(DEADLINE));
    let mut out = vec![0u32; 1024];
    let (grid, block) = (Dim3::new(4, 1, 1), Dim3::new(64, 1, 1));
    assert_stopped(
        "spin_at_barriers",
        grid,
        block,
        || launch!(module, limits::spin_at_barriers[4, 64](u32::MAX, &mut out)),
    );
    assert_stopped(
        "spin_in_warp",
        grid,
        block,
        || launch!(module, limits::spin_in_warp[4, 64](u32::MAX, &mut out)),
    );
    assert_stopped(
        "spin_grid_stride",
        grid,
        block,
        || launch!(module, limits::spin_grid_stride[4, 64](u32::MAX, &mut out)),
    );
    // No check point inside a thread: a billion threads of a thousand steps each stop between
    // two threads.
    let (grid, block) = (Dim3::new(1 << 20, 1, 1), Dim3::new(1024, 1, 1));
    assert_stopped(
        "busy_threads",
        grid,
        block,
        || launch!(module, limits::busy_threads[1 << 20, 1024](1000, &mut out)),
    );
    // The deadline is per launch: the device runs the next one.
    launch!(module, limits::spin_at_barriers[4, 64](7, &mut out)).unwrap();
    assert!(
        out[..256].iter().all(|&counted| counted == 4 * 64),
        "{out:?}"
    );
}

#[test]
fn a_launch_within_its_deadline_runs_to_the_end() {
    let module = module(|o| o.deadline = Some(Duration::from_secs(600)));
    let mut out = vec![0u32; 256];
    // Even rounds count every thread of the block, odd ones none.
    launch!(module, limits::spin_at_barriers[2, 128](1001, &mut out)).unwrap();
    assert!(out.iter().all(|&counted| counted == 501 * 128), "{out:?}");
    let mut warp = vec![u32::MAX; 64];
    launch!(module, limits::spin_in_warp[1, 64](2, &mut warp)).unwrap();
    // Round 0 swaps lane pairs' values, round 1 swaps them back, each xor'ed with the round.
    let want: Vec<u32> = (0..64u32).map(|i| (i % 32) ^ 1).collect();
    assert_eq!(warp, want);
}

/// Issue 29, B1: a deadline past what the clock can hold (`Duration::MAX`) panicked with "overflow
/// when adding duration to instant" in the launch. It can never pass, so it is no deadline.
#[test]
fn a_deadline_too_far_away_for_the_clock_is_no_deadline() {
    for far in [Duration::MAX, Duration::from_secs(u64::MAX / 2)] {
        let module = module(|o| o.deadline = Some(far));
        let mut out = vec![0u32; 256];
        launch!(module, limits::spin_at_barriers[2, 128](3, &mut out)).unwrap();
        assert!(
            out.iter().all(|&counted| counted == 2 * 128),
            "{far:?}: {out:?}"
        );
    }
}

/// What `limits::recurse` writes for thread `i` making `calls` nested calls: each frame adds its
/// first byte (`i + depth of the frame`, wrapping) and its last (`i`).
fn recurse_reference(i: usize, calls: u32) -> u32 {
    let seed = i as u8;
    (1..=calls)
        .map(|k| seed.wrapping_add(k as u8) as u32 + seed as u32)
        .sum()
}

/// Runs `recurse[2, 64]` with thread `deep` of each block `calls` deep.
fn recurse(
    module: &Module,
    calls: u32,
    deep: u32,
    after_barrier: bool,
) -> ferrocuda::Result<Vec<u32>> {
    let mut out = vec![0u32; 128];
    launch!(module, limits::recurse[2, 64](calls, deep, after_barrier as u32, &mut out))?;
    Ok(out)
}

#[test]
fn a_stack_overflow_in_any_simulated_thread_is_an_error_naming_it() {
    let module = module(|o| o.stack_bytes = 256 * 1024);
    // 4000 frames of 1 KiB: past the 256 KiB stack of a simulated thread, and past the 2 MiB
    // of an executor worker's own stack too. Thread 0 and 7 run before any barrier (on the
    // block's runner stack); after a barrier thread 0 drives the block from its stack and thread
    // 37 runs on a coroutine of its own.
    for (deep, after_barrier) in [(0, false), (7, false), (0, true), (37, true)] {
        // Block 1's thread `deep` is `64 + deep` in the grid.
        let error = recurse(&module, 4000, 64 + deep, after_barrier).unwrap_err();
        let what = format!("thread {deep}, after a barrier: {after_barrier}");
        let message = error.to_string();
        match error {
            Error::StackOverflow {
                kernel,
                block,
                thread,
                stack_bytes,
            } => {
                assert_eq!(kernel, "recurse", "{what}");
                assert_eq!(block, Dim3::new(1, 0, 0), "{what}");
                assert_eq!(thread, Dim3::new(deep, 0, 0), "{what}");
                assert_eq!(stack_bytes, 256 * 1024, "{what}");
            }
            other => panic!("{what}: expected StackOverflow, got {other}"),
        }
        assert!(
            message.contains("overflowed its 262144-byte stack")
                && message.contains("FERROCUDA_CPU_STACK_KIB"),
            "{message}"
        );
        // The worker that ran the block runs the next launch.
        let out = recurse(&module, 100, deep, after_barrier).unwrap();
        for (i, &got) in out.iter().enumerate() {
            let calls = if i == deep as usize { 100 } else { 1 };
            assert_eq!(got, recurse_reference(i, calls), "{what}: thread {i}");
        }
    }
}

#[test]
fn the_stack_size_is_settable() {
    // 100 frames of 1 KiB fit in the default 256 KiB but not in 64 KiB; 4000 fit in 8 MiB.
    let small = module(|o| o.stack_bytes = 64 * 1024);
    for after_barrier in [false, true] {
        match recurse(&small, 100, 3, after_barrier) {
            Err(Error::StackOverflow {
                thread,
                stack_bytes,
                ..
            }) => assert_eq!((thread, stack_bytes), (Dim3::new(3, 0, 0), 64 * 1024)),
            other => panic!("expected StackOverflow, got {other:?}"),
        }
    }
    let large = module(|o| o.stack_bytes = 8 << 20);
    for after_barrier in [false, true] {
        let out = recurse(&large, 4000, 3, after_barrier).unwrap();
        assert_eq!(out[3], recurse_reference(3, 4000));
        assert_eq!(out[67], recurse_reference(67, 1));
    }
    // Less than a simulated thread needs is refused up front.
    let error = Device::cpu_with(CpuOptions {
        stack_bytes: 4096,
        ..CpuOptions::default()
    })
    .unwrap_err();
    assert!(error.to_string().contains("at least 65536"), "{error}");
}
