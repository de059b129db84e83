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
