//! The CPU executor's simulator checks: planted bugs are caught and reported with the right
//! kernel, block and thread; correct kernels pass; warp operations match hand-computed results.

mod support;

use ferrocuda::{launch, Device, Dim3, Error, KernelBug, LaunchConfig, Module};

fn module(checked: bool) -> Module {
    Device::cpu_checked(checked)
        .load(support::test_kernels())
        .unwrap()
}

/// The source file of the test kernels, as `Location`s name it.
const KERNELS: &str = "test-kernels/src/lib.rs";

/// The line of `test-kernels/src/lib.rs` that holds `text`, the first after the line that holds
/// `after` (a kernel's `fn`): tests name the statement they expect in a report, not a number
/// that moves whenever a line is added above it.
fn kernel_line(after: &str, text: &str) -> u32 {
    let source = include_str!("../test-kernels/src/lib.rs");
    let start = source
        .lines()
        .position(|l| l.contains(after))
        .unwrap_or_else(|| panic!("no line with {after:?} in {KERNELS}"));
    let offset = source.lines().skip(start).position(|l| l.contains(text));
    let offset = offset.unwrap_or_else(|| panic!("no line with {text:?} after {after:?}"));
    (start + offset + 1) as u32
}

/// The (kernel, block, thread, bug) of a `KernelBug` error, or a panic naming what came instead.
fn bug_of(result: ferrocuda::Result<()>) -> (&'static str, Dim3, Dim3, KernelBug) {
    match result {
        Err(Error::KernelBug {
            kernel,
            block,
            thread,
            bug,
        }) => (kernel, block, thread, *bug),
        Err(other) => panic!("expected a KernelBug error, got: {other}"),
        Ok(()) => panic!("expected a KernelBug error, the launch succeeded"),
    }
}

#[test]
fn checked_mode_is_on_in_test_builds() {
    assert!(Device::cpu().checks_enabled());
}

#[test]
fn a_missing_barrier_is_reported_as_a_race_with_both_threads() {
    let kernel = "fn race_missing_barrier";
    let read = kernel_line(kernel, "let right = tile.get(");
    let write = kernel_line(kernel, "tile.set(t, if i < x.len()");
    let module = module(true);
    let x: Vec<f32> = (0..96).map(|i| i as f32).collect();
    let mut out = vec![0.0f32; 96];
    let result = launch!(module, test_kernels::race_missing_barrier[3, 32](&x, &mut out));
    let (kernel, block, thread, bug) = bug_of(result);
    assert_eq!(kernel, "race_missing_barrier");
    // Block 0 runs first on whichever worker takes it; any block may report, but the threads
    // are fixed: thread 0 reads element 1 before thread 1 writes it.
    assert!(block.x < 3 && block.y == 0, "{block:?}");
    assert_eq!(thread, Dim3::new(1, 0, 0));
    match &bug {
        KernelBug::SharedRace {
            array,
            index,
            earlier,
            later,
        } => {
            assert!(array.contains("`tile`"), "{array}");
            assert!(array.contains("test-kernels/src/lib.rs"), "{array}");
            assert_eq!(*index, 1);
            assert_eq!((earlier.thread, earlier.write), (Dim3::new(0, 0, 0), false));
            assert_eq!((later.thread, later.write), (Dim3::new(1, 0, 0), true));
            // The two accesses that raced, by their lines in test-kernels/src/lib.rs.
            let line = |access: &ferrocuda_std::cpu::SharedAccess| {
                let at = access.at.expect("a recorded location");
                (at.file(), at.line(), at.column())
            };
            assert_eq!(line(earlier), (KERNELS, read, 22), "the read of `right`");
            assert_eq!(line(later), (KERNELS, write, 10), "the write of `tile[t]`");
        }
        other => panic!("expected a race, got {other}"),
    }
    let message = bug.to_string();
    assert!(
        message.contains("data race on shared array `tile`"),
        "{message}"
    );
    assert!(
        message.contains(&format!(
            "thread (0, 0, 0) read it at test-kernels/src/lib.rs:{read}:22, then thread (1, 0, 0) \
             wrote it at test-kernels/src/lib.rs:{write}:10"
        )),
        "{message}"
    );
}

#[test]
fn the_same_kernel_with_its_barrier_passes_and_is_right() {
    let module = module(true);
    let (mut rng, seed) = support::rng();
    for (blocks, threads) in [(1u32, 1u32), (3, 32), (5, 256), (2, 100)] {
        let n = (blocks * threads) as usize;
        let x = support::random_f32(&mut rng, n);
        let mut out = vec![0.0f32; n];
        launch!(module, test_kernels::rotate_in_block[blocks, threads](&x, &mut out)).unwrap();
        let t = threads as usize;
        for (i, &got) in out.iter().enumerate() {
            let next = i - i % t + (i % t + 1) % t;
            assert_eq!(
                got, x[next],
                "i={i} blocks={blocks} threads={threads} seed={seed}"
            );
        }
    }
}

#[test]
fn without_checked_mode_the_race_goes_unreported() {
    // The race is real but harmless to the executor: without checks the launch completes (on a
    // GPU it would give wrong values, silently), which is why checked mode is the default in tests.
    let module = module(false);
    let x: Vec<f32> = (0..64).map(|i| i as f32).collect();
    let mut out = vec![0.0f32; 64];
    launch!(module, test_kernels::race_missing_barrier[2, 32](&x, &mut out)).unwrap();
}

#[test]
fn a_race_on_dynamic_shared_memory_is_reported_only_by_checked_launches() {
    let x: Vec<f32> = (0..64).map(|i| i as f32).collect();
    let config = LaunchConfig::new(2, 32).with_shared_mem_bytes(32 * 4);
    let kernel = test_kernels::regions::race_missing_barrier_dynamic;
    let mut out = vec![0.0f32; 64];
    let result = module(true).launch(&kernel, config, (&x, &mut out));
    let (name, _, thread, bug) = bug_of(result);
    assert_eq!(name, "race_missing_barrier_dynamic");
    assert_eq!(thread, Dim3::new(1, 0, 0));
    match &bug {
        KernelBug::SharedRace { index, .. } => assert_eq!(*index, 1),
        other => panic!("expected a race, got {other}"),
    }
    // The unchecked copy (no checks, by construction) completes.
    module(false)
        .launch(&kernel, config, (&x, &mut out))
        .unwrap();
}

#[test]
fn a_read_of_unwritten_shared_memory_is_reported() {
    let read = kernel_line("fn uninitialized_shared", "tile.get(t + 32)");
    let module = module(true);
    let mut out = vec![0.0f32; 32];
    let result = launch!(module, test_kernels::uninitialized_shared[1, 32](&mut out));
    let (kernel, block, thread, bug) = bug_of(result);
    assert_eq!(
        (kernel, block, thread),
        (
            "uninitialized_shared",
            Dim3::new(0, 0, 0),
            Dim3::new(0, 0, 0)
        )
    );
    match &bug {
        KernelBug::UninitializedShared { index, at, .. } => {
            bug_array(&bug);
            assert_eq!(*index, 32);
            assert_eq!((at.file(), at.line(), at.column()), (KERNELS, read, 38));
        }
        other => panic!("expected an uninitialized read, got {other}"),
    }
    let message = bug.to_string();
    assert!(
        message.contains(&format!(
            "element 32, at test-kernels/src/lib.rs:{read}:38, which no thread of this block has written"
        )),
        "{message}"
    );
}

fn bug_array(bug: &KernelBug) -> String {
    match bug {
        KernelBug::UninitializedShared { array, .. } | KernelBug::SharedRace { array, .. } => {
            assert!(
                array.starts_with("`tile` (test-kernels/src/lib.rs:"),
                "{array}"
            );
            array.clone()
        }
        other => panic!("no array in {other}"),
    }
}

#[test]
fn a_negative_index_names_the_kernel_block_thread_and_the_negative_value() {
    for checked in [true, false] {
        let module = module(checked);
        let x = vec![1.0f32; 40];
        let mut out = vec![0.0f32; 40];
        let error = launch!(module, test_kernels::negative_index[2, 32](&x, &mut out)).unwrap_err();
        match &error {
            Error::KernelPanicked {
                kernel,
                block,
                thread,
                message,
            } => {
                assert_eq!(*kernel, "negative_index");
                assert_eq!((*block, *thread), (Dim3::new(0, 0, 0), Dim3::new(0, 0, 0)));
                assert!(
                    message.contains("the len is 40")
                        && message.contains("a negative index, -1, that wrapped around"),
                    "{message}"
                );
            }
            other => panic!("expected KernelPanicked, got {other}"),
        }
    }
}

#[test]
fn a_past_the_end_shared_index_names_the_last_thread() {
    let module = module(true);
    let mut out = vec![0.0f32; 64];
    let error = launch!(module, test_kernels::shared_past_end[2, 32](&mut out)).unwrap_err();
    match &error {
        Error::KernelPanicked {
            kernel,
            thread,
            message,
            ..
        } => {
            assert_eq!(*kernel, "shared_past_end");
            assert_eq!(*thread, Dim3::new(31, 0, 0));
            assert!(
                message.contains("index 32 out of bounds for a shared array of length 32"),
                "{message}"
            );
        }
        other => panic!("expected KernelPanicked, got {other}"),
    }
}

#[test]
fn a_barrier_half_the_block_skips_is_divergence_not_a_hang() {
    for checked in [true, false] {
        let module = module(checked);
        let mut out = vec![0u32; 64];
        let result = launch!(module, test_kernels::divergent_barrier[2, 32](&mut out));
        let (kernel, _, thread, bug) = bug_of(result);
        assert_eq!((kernel, thread), ("divergent_barrier", Dim3::new(0, 0, 0)));
        let message = bug.to_string();
        assert!(
            matches!(bug, KernelBug::BarrierDivergence { .. }),
            "{message}"
        );
        assert!(
            message.contains("16 threads waiting at sync_threads() at test-kernels/src/lib.rs:")
                && message.contains(
                    "but 16 threads returned without reaching it (first: thread (16, 0, 0))"
                ),
            "{message}"
        );
    }
}

#[test]
fn threads_waiting_at_two_different_barriers_are_divergence() {
    let module = module(true);
    let mut out = vec![0u32; 32];
    let result = launch!(module, test_kernels::two_barriers[1, 32](&mut out));
    let (_, _, thread, bug) = bug_of(result);
    assert_eq!(thread, Dim3::new(0, 0, 0));
    let message = bug.to_string();
    // Two barrier sites, 16 threads each, named by line.
    assert_eq!(
        message
            .matches("16 threads waiting at sync_threads()")
            .count(),
        2,
        "{message}"
    );
}

#[test]
fn a_shuffle_half_the_warp_skips_is_warp_divergence() {
    let module = module(true);
    let mut out = vec![0u32; 32];
    let result = launch!(module, test_kernels::warp_divergence[1, 32](&mut out));
    let (kernel, _, thread, bug) = bug_of(result);
    assert_eq!((kernel, thread), ("warp_divergence", Dim3::new(0, 0, 0)));
    let message = bug.to_string();
    assert!(matches!(bug, KernelBug::WarpDivergence { .. }), "{message}");
    assert!(
        message.contains("waits in shfl_sync(mask 0xffffffff)")
            && message.contains("lane 16 (thread (16, 0, 0)) returned without reaching it"),
        "{message}"
    );
}

#[test]
fn a_panic_in_kernel_code_after_a_barrier_is_an_error_for_that_thread() {
    // Thread 0 reaches the barrier first and drives; thread 13 panics in its own coroutine.
    let module = module(true);
    let mut x = vec![1.0f32; 64];
    x[45] = -1.0;
    let mut out = vec![0.0f32; 64];
    let error = launch!(
        module,
        test_kernels::assert_non_negative_after_barrier[2, 32](&x, &mut out)
    )
    .unwrap_err();
    assert!(
        matches!(&error, Error::KernelPanicked { block, thread, message, .. }
            if *block == Dim3::new(1, 0, 0) && *thread == Dim3::new(13, 0, 0)
                && message.contains("negative input")),
        "{error}"
    );
}

/// What `warp_ops` should give lane `lane` of a warp whose lanes in `mask` take part, on the CPU
/// executor: a shuffle from a lane outside the mask (or past lane 31) gives the caller's own value.
fn warp_ops_reference(mask: u32, src: u32, lane: u32) -> [u32; 9] {
    let value = |l: u32| 10 * l + 1;
    let from = |source: Option<u32>| match source {
        Some(s) if s < 32 && mask & (1 << s) != 0 => value(s),
        _ => value(lane),
    };
    let members = (0..32).filter(|l| mask & (1 << l) != 0);
    let ballot = members
        .clone()
        .filter(|l| l % 3 == 0)
        .fold(0, |b, l| b | 1 << l);
    let wide_source = match lane ^ 4 {
        s if mask & (1 << s) != 0 => s,
        _ => lane,
    };
    [
        from(Some(src % 32)),
        from(lane.checked_sub(1)),
        from(Some(lane + 2)),
        from(Some(lane ^ 1)),
        members.clone().all(|l| value(l) % 2 == 1) as u32,
        members.clone().any(|l| l == 5) as u32,
        ballot,
        wide_source,
        value(wide_source),
    ]
}

#[test]
fn warp_operations_match_hand_computed_results_for_partial_masks() {
    let module = module(true);
    let masks = [u32::MAX, 0x0000_ffff, 0xaaaa_aaaa, 0x8000_0001, 0x0000_0020];
    for mask in masks {
        for src in [0u32, 5, 31, 33] {
            // Two warps per block, two blocks: lane = thread index % 32.
            let n = 128;
            let mut out = vec![u32::MAX; n * test_kernels::WARP_OPS_RESULTS];
            launch!(module, test_kernels::warp_ops[2, 64](&mut out, mask, src)).unwrap();
            for i in 0..n {
                let lane = (i % 32) as u32;
                let got = &out[i * 9..i * 9 + 9];
                if mask & (1 << lane) == 0 {
                    assert!(got.iter().all(|&v| v == u32::MAX), "lane {lane} wrote");
                } else {
                    assert_eq!(
                        got,
                        warp_ops_reference(mask, src, lane),
                        "mask={mask:#x} src={src} thread={i}"
                    );
                }
            }
        }
    }
}

#[test]
fn a_warp_mask_naming_lanes_the_block_lacks_is_refused() {
    let module = module(true);
    let mut out = vec![0u32; 32 * 9];
    // `warp_ops` lets only lanes of the mask in, so use a mask whose lanes do not exist: a block
    // of 16 threads has a warp of 16 lanes.
    let result = launch!(module, test_kernels::warp_ops[1, 16](&mut out, 0x0001_ffffu32, 0u32));
    let (_, _, thread, bug) = bug_of(result);
    assert_eq!(thread, Dim3::new(0, 0, 0));
    assert!(
        bug.to_string()
            .contains("warp 0 of this block has only 16 lanes"),
        "{bug}"
    );
}

/// The sum a warp's `shfl_down_sync` tree computes in lane 0, in f32.
fn shuffle_down_tree_sum(lanes: &[f32]) -> f32 {
    let mut acc = lanes.to_vec();
    let mut offset = 16;
    while offset > 0 {
        for lane in 0..acc.len().saturating_sub(offset) {
            acc[lane] += acc[lane + offset];
        }
        offset /= 2;
    }
    acc[0]
}

#[test]
fn warp_reductions_cover_partial_warps() {
    let module = module(true);
    let (mut rng, seed) = support::rng();
    for threads in [1u32, 7, 32, 48, 100] {
        let n = threads as usize * 2;
        let x = support::random_f32(&mut rng, n);
        let mut out = vec![0.0f32; 3 * n];
        launch!(module, test_kernels::warp_reductions[2, threads](&x, &mut out)).unwrap();
        for i in 0..n {
            let block_start = i - i % threads as usize;
            let warp_start = block_start + (i - block_start) / 32 * 32;
            let warp_end = (warp_start + 32).min(block_start + threads as usize);
            let lanes = &x[warp_start..warp_end];
            let sum: f64 = lanes.iter().map(|&v| v as f64).sum();
            let tolerance = 1e-5 * lanes.iter().map(|v| v.abs() as f64).sum::<f64>();
            assert!(
                (out[3 * i] as f64 - sum).abs() <= tolerance,
                "sum: thread {i} threads={threads} seed={seed}"
            );
            // Bit for bit the GPU's order: lane l adds lane l + offset, offsets 16, 8, 4, 2, 1.
            assert_eq!(
                out[3 * i].to_bits(),
                shuffle_down_tree_sum(lanes).to_bits(),
                "sum order: thread {i} threads={threads} seed={seed}"
            );
            let min = lanes.iter().cloned().fold(f32::INFINITY, f32::min);
            let max = lanes.iter().cloned().fold(f32::NEG_INFINITY, f32::max);
            assert_eq!(
                (out[3 * i + 1], out[3 * i + 2]),
                (min, max),
                "thread {i} seed={seed}"
            );
        }
    }
}

#[test]
fn atomics_on_every_type_combine_across_blocks_running_in_parallel() {
    let module = module(true);
    let (blocks, threads) = (64u32, 128u32);
    let n = (blocks * threads) as u64;
    let start_min = 1_000_000u64;
    let mut u = vec![0, 0, start_min as u32, 0, u32::MAX, 0];
    let mut i = vec![0, 0, start_min as i32, -5, -1, 0];
    let mut ul = vec![0, 0, start_min, 0, u64::MAX, 0];
    let mut il = vec![0, 0, start_min as i64, -5, -1, 0];
    let mut f = vec![0.0, 0.0, start_min as f32, -5.0, -1.0, 0.0];
    let mut d = vec![0.0, 0.0, start_min as f64, -5.0, -1.0, 0.0];
    launch!(
        module,
        test_kernels::atomics_every_type[blocks, threads](
            &mut u, &mut i, &mut ul, &mut il, &mut f, &mut d
        )
    )
    .unwrap();
    let in_range = |g: f64| g >= 0.0 && g < n as f64 && g.fract() == 0.0;
    assert_eq!(
        [u[0], u[1], u[2], u[3], u[5]],
        [
            n as u32,
            0u32.wrapping_sub(n as u32),
            0,
            n as u32 - 1,
            n as u32
        ]
    );
    assert!(in_range(u[4] as f64), "{}", u[4]);
    assert_eq!(
        [i[0], i[1], i[2], i[3], i[5]],
        [n as i32, -(n as i32), 0, n as i32 - 1, n as i32]
    );
    assert!(in_range(i[4] as f64));
    assert_eq!(
        [ul[0], ul[1], ul[2], ul[3], ul[5]],
        [n, 0u64.wrapping_sub(n), 0, n - 1, n]
    );
    assert!(in_range(ul[4] as f64));
    assert_eq!(
        [il[0], il[1], il[2], il[3], il[5]],
        [n as i64, -(n as i64), 0, n as i64 - 1, n as i64]
    );
    assert!(in_range(il[4] as f64));
    assert_eq!(
        [f[0], f[1], f[2], f[3], f[5]],
        [n as f32, -(n as f32), 0.0, (n - 1) as f32, n as f32]
    );
    assert!(in_range(f[4] as f64));
    assert_eq!(
        [d[0], d[1], d[2], d[3], d[5]],
        [n as f64, -(n as f64), 0.0, (n - 1) as f64, n as f64]
    );
    assert!(in_range(d[4]));
}

#[test]
fn shared_atomics_count_each_blocks_threads() {
    let module = module(true);
    for threads in [1u32, 31, 256, 1024] {
        let mut out = vec![0u32; 2 * 8];
        launch!(module, test_kernels::shared_atomics[8, threads](&mut out)).unwrap();
        for b in 0..8 {
            assert_eq!(
                (out[2 * b], out[2 * b + 1]),
                (threads, threads - 1),
                "{threads}"
            );
        }
    }
}

#[test]
fn shared_memory_over_the_device_limit_is_refused_before_launch_or_by_the_block() {
    let module = module(true);
    let device = module.device().clone();
    let limit = device.properties().max_shared_memory_per_block;
    let x = vec![0.0f32; 32];
    let mut out = vec![0.0f32; 32];
    // Dynamic bytes over the limit: refused before anything runs.
    let config = LaunchConfig::new(1, 32).with_shared_mem_bytes(limit + 1);
    let error = module
        .launch(&test_kernels::rotate_in_block, config, (&x, &mut out))
        .unwrap_err();
    assert!(
        matches!(error, Error::SharedMemoryTooLarge { .. }),
        "{error}"
    );
    // Dynamic bytes that leave no room for the kernel's 1 KiB static tile: found in the block.
    let config = LaunchConfig::new(1, 32).with_shared_mem_bytes(limit - 512);
    let result = module.launch(&test_kernels::rotate_in_block, config, (&x, &mut out));
    let (_, _, _, bug) = bug_of(result);
    assert_eq!(
        bug,
        KernelBug::SharedMemoryTooLarge {
            asked: limit as usize - 512 + 1024,
            limit: limit as usize,
            array: match &bug {
                KernelBug::SharedMemoryTooLarge { array, .. } => array.clone(),
                _ => unreachable!(),
            },
        }
    );
}

#[test]
fn the_readmes_block_sums_example_adds_up() {
    let module = module(true);
    let x: Vec<f32> = (0..1000).map(|i| (i % 10) as f32).collect();
    let mut sums = [0.5f32];
    launch!(module, test_kernels::block_sums[4, 250](&x, &mut sums)).unwrap();
    assert_eq!(sums[0], 0.5 + 4500.0);
}

#[test]
fn sync_warp_orders_shared_memory_between_its_lanes() {
    let read = kernel_line("fn warp_exchange", "out.set(i, tile.get(t ^ 1))");
    let write = kernel_line("fn warp_exchange", "tile.set(t, x[i]);");
    let module = module(true);
    let (mut rng, seed) = support::rng();
    let x = support::random_f32(&mut rng, 256);
    let mut out = vec![0.0f32; 256];
    launch!(module, test_kernels::warp_exchange[2, 128](&x, &mut out, 1u32)).unwrap();
    for (i, &got) in out.iter().enumerate() {
        assert_eq!(got, x[i ^ 1], "i={i} seed={seed}");
    }
    // Without the sync_warp, lane 1 writes what lane 0 has read: a race.
    let result = launch!(module, test_kernels::warp_exchange[2, 128](&x, &mut out, 0u32));
    let (_, _, thread, bug) = bug_of(result);
    assert_eq!(thread, Dim3::new(1, 0, 0));
    assert!(
        matches!(bug, KernelBug::SharedRace { index: 1, .. }),
        "{bug}"
    );
    let message = bug.to_string();
    assert!(
        message.contains(&format!(
            "thread (0, 0, 0) read it at test-kernels/src/lib.rs:{read}:21, then thread (1, 0, 0) \
             wrote it at test-kernels/src/lib.rs:{write}:10"
        )),
        "{message}"
    );
}

#[test]
fn barriers_count_and_vote_over_the_block() {
    let module = module(true);
    let (mut rng, seed) = support::rng();
    for threads in [1u32, 33, 256] {
        let blocks = 4u32;
        let n = (blocks * threads) as usize;
        // Block 0 all positive, block 1 all negative, the others mixed.
        let mut x = support::random_f32(&mut rng, n);
        let t = threads as usize;
        x[..t].iter_mut().for_each(|v| *v = v.abs() + 1.0);
        x[t..2 * t].iter_mut().for_each(|v| *v = -v.abs() - 1.0);
        let mut out = vec![u32::MAX; 3 * n];
        launch!(module, test_kernels::barrier_votes[blocks, threads](&x, &mut out)).unwrap();
        for i in 0..n {
            let block = &x[i - i % t..i - i % t + t];
            let count = block.iter().filter(|&&v| v > 0.0).count() as u32;
            let want = [count, (count == threads) as u32, (count > 0) as u32];
            assert_eq!(
                out[3 * i..3 * i + 3],
                want,
                "i={i} threads={threads} seed={seed}"
            );
        }
    }
}
