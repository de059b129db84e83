//! The CPU executor's split path (`#[kernel]` cut at its barriers, each region a loop over the
//! block's threads) against the coroutine path and against independent references: results,
//! the path each kernel takes, divergence and race reports, and the guard against a barrier the
//! macro cannot see.

mod support;

use ferrocuda::CpuPath;
use ferrocuda::{launch, CpuOptions, Device, Error, KernelBug, Module};
use test_kernels::regions::*;

use support::{cpu_test_kernels as module, cpu_test_kernels_every_path as modules};

fn bug_of(result: ferrocuda::Result<()>) -> (KernelBug, ferrocuda::Dim3) {
    match result {
        Err(Error::KernelBug { bug, thread, .. }) => (*bug, thread),
        other => panic!("expected a KernelBug, got {other:?}"),
    }
}

fn inputs(n: usize) -> Vec<u32> {
    (0..n as u32)
        .map(|i| i.wrapping_mul(2654435761) >> 7)
        .collect()
}

#[test]
fn each_kernel_reports_the_path_the_macro_chose() {
    let regions = [
        *barrier_rounds.info(),
        *block_scan.info(),
        *rotate_rounds.info(),
        *tree_sum.info(),
        *reverse_unless_past.info(),
        *divergent_rounds.info(),
        *ferrocuda::kernels::transpose::transpose_tiled::<f32>().info(),
        *ferrocuda::kernels::matmul::matmul_tiled::<f32>().info(),
        *ferrocuda::kernels::matmul::matmul_blocked.info(),
    ];
    for info in regions {
        assert_eq!(info.cpu_path, CpuPath::Regions, "{}", info.name);
    }
    assert_eq!(
        ferrocuda::kernels::vector_add.info().cpu_path,
        CpuPath::Elementwise
    );
    // Calls the macro cannot look into are split optimistically (the run time falls back).
    for info in [
        *hidden_barrier.info(),
        *sum_through_a_helper.info(),
        *race_after_a_helper.info(),
        *helper_barrier_for.info(),
    ] {
        assert_eq!(info.cpu_path, CpuPath::Regions, "{}", info.name);
    }
    assert_eq!(barrier_in_a_method.info().cpu_path, CpuPath::Elementwise);
    assert_eq!(elementwise_big_tile.info().cpu_path, CpuPath::Elementwise);
    // Barriers inside an `if`: coroutines (the planted divergence of tests/checked_mode.rs).
    assert!(matches!(
        test_kernels::divergent_barrier.info().cpu_path,
        CpuPath::Coroutines(_)
    ));
}

/// The PTX records each kernel's CPU path as its host handle has it (the builder's warnings and
/// `ferrocuda kernels --ptx` read the PTX, where no handle is at hand).
#[test]
fn the_ptx_records_the_cpu_path_of_every_kernel_as_the_handle_has_it() {
    let recorded = ferrocuda_builder::cpu_paths(support::test_kernels().source());
    let path_of = |name: &str| {
        recorded
            .iter()
            .find(|(kernel, _)| kernel == name)
            .map(|(_, path)| path.clone())
            .unwrap_or_else(|| panic!("{name} has no record in the PTX"))
    };
    for info in [
        *test_kernels::divergent_barrier.info(),
        *barrier_in_a_method.info(),
        *tree_sum.info(),
        *test_kernels::atomics_every_type.info(),
    ] {
        let want = match info.cpu_path {
            CpuPath::Coroutines(why) => format!("coroutines: {why}"),
            path => path.name().to_string(),
        };
        assert_eq!(path_of(info.name), want, "{}", info.name);
    }
    let entries = ferrocuda_builder::cpu_paths(ferrocuda::KERNELS.source()).len();
    assert!(entries >= 30, "the library's kernels: {entries} records");
}

#[test]
fn a_block_uniform_loop_of_barriers_counts_every_trip_on_both_paths() {
    for (name, module) in modules() {
        for (blocks, threads, rounds) in [(1u32, 1u32, 0u32), (3, 64, 5), (2, 100, 1)] {
            let mut out = vec![7u32; (blocks * threads) as usize];
            launch!(module, barrier_rounds[blocks, threads](&mut out, rounds)).unwrap();
            assert!(out.iter().all(|&n| n == rounds), "{name}: {out:?}");
        }
    }
}

#[test]
fn a_block_uniform_for_loop_of_barriers_runs_every_trip_on_both_paths() {
    for (name, module) in modules() {
        for (n, block, rounds) in [
            (1000usize, 256u32, 5u32),
            (64, 64, 0),
            (5, 1, 3),
            (300, 128, 9),
        ] {
            let x = inputs(n);
            let mut out = vec![0u32; n];
            let blocks = n.div_ceil(block as usize) as u32;
            launch!(module, rotate_rounds[blocks, block](&x, &mut out, rounds)).unwrap();
            // Each block's values, rotated one place left per round plus the round's number.
            let mut expected = Vec::new();
            for start in (0..n).step_by(block as usize) {
                let mut values: Vec<u32> = (start..start + block as usize)
                    .map(|i| x.get(i).copied().unwrap_or(0))
                    .collect();
                for round in 0..rounds {
                    values.rotate_left(1);
                    values.iter_mut().for_each(|v| *v = v.wrapping_add(round));
                }
                expected.extend(values);
            }
            expected.truncate(n);
            assert_eq!(out, expected, "{name}: n={n} block={block} rounds={rounds}");
        }
    }
}

#[test]
fn the_block_scan_matches_a_sequential_scan_of_each_block_on_both_paths() {
    for (name, module) in modules() {
        for (n, block) in [(1000usize, 256u32), (64, 64), (5, 1), (300, 1024)] {
            let x = inputs(n);
            let mut out = vec![0u32; n];
            let blocks = n.div_ceil(block as usize) as u32;
            launch!(module, block_scan[blocks, block](&x, &mut out)).unwrap();
            let mut expected = vec![0u32; n];
            for (start, chunk) in x.chunks(block as usize).enumerate() {
                let mut sum = 0u32;
                for (k, &v) in chunk.iter().enumerate() {
                    sum = sum.wrapping_add(v);
                    expected[start * block as usize + k] = sum;
                }
            }
            assert_eq!(out, expected, "{name}: n={n} block={block}");
        }
    }
}

#[test]
fn the_tree_reduction_matches_a_sequential_sum_on_both_paths() {
    for (name, module) in modules() {
        let x = inputs(1000);
        let mut out = vec![0u32; 4];
        launch!(module, tree_sum[4, 256](&x, &mut out)).unwrap();
        let expected: Vec<u32> = (0..4)
            .map(|b| {
                let part = &x[(b * 256).min(1000)..((b + 1) * 256).min(1000)];
                part.iter().fold(0u32, |s, &v| s.wrapping_add(v))
            })
            .collect();
        assert_eq!(out, expected, "{name}");
    }
}

#[test]
fn a_block_that_returns_before_its_barrier_is_done_and_the_others_go_on() {
    for (name, module) in modules() {
        let x = inputs(256);
        let mut out = vec![0u32; 256];
        launch!(module, reverse_unless_past[4, 64](&x, &mut out, 2u32, 0u32)).unwrap();
        for (i, &o) in out.iter().enumerate() {
            let expected = if i < 128 {
                x[i - i % 64 + 63 - i % 64]
            } else {
                0
            };
            assert_eq!(o, expected, "{name}: element {i}");
        }
    }
}

#[test]
fn threads_that_return_before_a_barrier_others_wait_at_are_barrier_divergence() {
    for (name, module) in modules() {
        let x = inputs(64);
        let mut out = vec![0u32; 64];
        let result = launch!(module, reverse_unless_past[1, 64](&x, &mut out, 1u32, 1u32));
        let (bug, _) = bug_of(result);
        let message = bug.to_string();
        assert!(
            matches!(bug, KernelBug::BarrierDivergence { .. }),
            "{name}: {message}"
        );
        assert!(
            message
                .contains("32 threads waiting at sync_threads() at test-kernels/src/regions.rs:")
                && message.contains("32 threads returned without reaching it"),
            "{name}: {message}"
        );
    }
}

#[test]
fn a_loop_whose_trip_count_differs_between_threads_is_barrier_divergence() {
    for (name, module) in modules() {
        let mut out = vec![0u32; 64];
        let (bug, _) = bug_of(launch!(module, divergent_rounds[1, 64](&mut out, 3u32)));
        let message = bug.to_string();
        assert!(
            matches!(bug, KernelBug::BarrierDivergence { .. }),
            "{name}: {message}"
        );
        assert!(
            message.contains("test-kernels/src/regions.rs:"),
            "{name}: {message}"
        );
    }
}

#[test]
fn a_missing_barrier_in_a_split_loop_is_a_race_in_checked_mode() {
    for coroutines in [false, true] {
        let module = module(true, coroutines);
        let x = inputs(128);
        let mut out = vec![0u32; 128];
        let (bug, _) = bug_of(launch!(module, block_scan_racy[1, 128](&x, &mut out)));
        assert!(
            matches!(bug, KernelBug::SharedRace { .. }),
            "coroutines={coroutines}: {bug}"
        );
        // The correct scan is no race.
        launch!(module, block_scan[1, 128](&x, &mut out)).unwrap();
    }
}

#[test]
fn a_kernel_with_a_barrier_in_a_helper_function_is_right_on_both_paths() {
    for (name, module) in modules() {
        let x = inputs(96);
        let mut out = vec![0u32; 96];
        launch!(module, hidden_barrier[3, 32](&x, &mut out)).unwrap();
        for (i, &o) in out.iter().enumerate() {
            let base = i - i % 32;
            assert_eq!(o, x[base + (i % 32 + 2) % 32], "{name}: element {i}");
        }
    }
}

#[test]
fn a_helper_with_a_barrier_and_warp_operations_gives_the_block_sum_on_both_paths() {
    for (name, module) in modules() {
        // Blocks of several warps, of a part of one, and a last block past the input's end.
        for (n, blocks, threads) in [(300usize, 3u32, 128u32), (40, 2, 24), (1000, 1, 1024)] {
            let x: Vec<u32> = inputs(n).iter().map(|v| v & 0xffff).collect();
            let mut out = vec![0u32; n];
            launch!(module, sum_through_a_helper[blocks, threads](&x, &mut out)).unwrap();
            let t = threads as usize;
            for (i, &o) in out.iter().enumerate() {
                let (start, offset) = (i - i % t, i % t);
                let at = |k: usize| x.get(start + k).copied().unwrap_or(0);
                let total = (0..t).fold(0u32, |s, k| s.wrapping_add(at(k)));
                let expected = total.wrapping_sub(at((offset + 1) % t));
                assert_eq!(o, expected, "{name}: n={n} block={threads} element {i}");
            }
        }
    }
}

#[test]
fn a_helper_barrier_that_only_some_threads_reach_is_divergence_naming_both_places() {
    for (name, module) in modules() {
        let mut out = vec![0u32; 64];
        // Every thread waits at the helper's barrier: no divergence.
        launch!(module, helper_barrier_for[1, 64](&mut out, 0u32, 64u32)).unwrap();
        assert!(
            out.iter().enumerate().all(|(i, &t)| t as usize == i),
            "{name}"
        );
        // Threads 16.. wait at the helper's barrier, threads 0..16 at the body's.
        let (bug, _) = bug_of(launch!(module, helper_barrier_for[1, 64](&mut out, 16u32, 64u32)));
        let message = bug.to_string();
        assert!(
            matches!(bug, KernelBug::BarrierDivergence { .. }),
            "{name}: {message}"
        );
        let sites = message
            .matches("sync_threads() at test-kernels/src/regions.rs:")
            .count();
        assert_eq!(sites, 2, "{name}: both barriers named: {message}");
        // Threads 0..16 wait at the helper's barrier, the others run past it.
        let (bug, _) = bug_of(launch!(module, helper_barrier_for[1, 64](&mut out, 0u32, 16u32)));
        let message = bug.to_string();
        assert!(
            matches!(bug, KernelBug::BarrierDivergence { .. })
                && message.contains(
                    "16 threads waiting at sync_threads() at test-kernels/src/regions.rs:"
                ),
            "{name}: {message}"
        );
    }
}

#[test]
fn a_missing_barrier_after_a_helper_barrier_is_a_race_in_checked_mode() {
    for coroutines in [false, true] {
        let x = inputs(64);
        let mut out = vec![0u32; 64];
        let (bug, thread) =
            bug_of(launch!(module(true, coroutines), race_after_a_helper[1, 64](&x, &mut out)));
        let message = bug.to_string();
        assert!(
            matches!(bug, KernelBug::SharedRace { .. }) && message.contains("`tile`"),
            "coroutines={coroutines}: {message}"
        );
        assert_eq!(
            thread,
            ferrocuda::Dim3::new(1, 0, 0),
            "coroutines={coroutines}"
        );
        // Unchecked, the same kernel runs (to some answer): the race is checked mode's finding.
        launch!(module(false, coroutines), race_after_a_helper[1, 64](&x, &mut out)).unwrap();
    }
}

#[test]
fn the_library_kernels_give_the_same_results_on_both_paths() {
    use ferrocuda::kernels::matmul::{
        matmul_blocked, matmul_tiled, BLOCKED_M, BLOCKED_N, BLOCKED_THREADS, TILE,
    };
    use ferrocuda::kernels::transpose::{transpose_tiled, TRANSPOSE_ROWS, TRANSPOSE_TILE};
    let (rows, cols) = (45usize, 70usize);
    let input: Vec<f32> = (0..rows * cols).map(|i| i as f32 * 0.5).collect();
    let (m, n, k) = (40usize, 30usize, 50usize);
    let a: Vec<f32> = (0..m * k).map(|i| (i % 9) as f32 - 4.0).collect();
    let b: Vec<f32> = (0..k * n).map(|i| (i % 5) as f32 * 0.5).collect();
    let mut results = Vec::new();
    for coroutines in [false, true] {
        let options = CpuOptions {
            force_coroutines: coroutines,
            ..CpuOptions::default()
        };
        let kernels = Device::cpu_with(options)
            .unwrap()
            .load(&ferrocuda::KERNELS)
            .unwrap();
        let mut transposed = vec![0.0f32; rows * cols];
        let tile = TRANSPOSE_TILE as u32;
        let grid = ((cols as u32).div_ceil(tile), (rows as u32).div_ceil(tile));
        let block = (tile, TRANSPOSE_ROWS as u32);
        launch!(kernels, transpose_tiled[grid, block](&input, &mut transposed, rows as u32, cols as u32))
            .unwrap();
        for r in 0..rows {
            for c in 0..cols {
                assert_eq!(transposed[c * rows + r], input[r * cols + c]);
            }
        }
        let mut product = vec![0.0f32; m * n];
        let t = TILE as u32;
        let grid = ((n as u32).div_ceil(t), (m as u32).div_ceil(t));
        launch!(kernels, matmul_tiled[grid, (t, t)](&a, &b, &mut product, m as u32, n as u32, k as u32))
            .unwrap();
        // The register-blocked product: one 128 × 128 tile of C per block, 8 × 8 per thread,
        // its accumulators and loaders carried across the barriers of its k-loop.
        let mut blocked = vec![0.0f32; m * n];
        let grid = (
            (n as u32).div_ceil(BLOCKED_N as u32),
            (m as u32).div_ceil(BLOCKED_M as u32),
        );
        launch!(kernels, matmul_blocked[grid, BLOCKED_THREADS as u32](&a, &b, &mut blocked, m as u32, n as u32, k as u32))
            .unwrap();
        for i in 0..m {
            for j in 0..n {
                let expected: f64 = (0..k)
                    .map(|p| a[i * k + p] as f64 * b[p * n + j] as f64)
                    .sum();
                for (what, c) in [("tiled", &product), ("blocked", &blocked)] {
                    assert!(
                        (c[i * n + j] as f64 - expected).abs() < 1e-3,
                        "{what}, coroutines={coroutines}"
                    );
                }
            }
        }
        results.push((transposed, product, blocked));
    }
    assert_eq!(results[0], results[1]);
}

#[test]
fn a_barrier_in_a_method_moves_an_elementwise_block_onto_coroutines() {
    for (name, module) in modules() {
        let x = inputs(64);
        let mut out = vec![0u32; 64];
        launch!(module, barrier_in_a_method[2, 32](&x, &mut out)).unwrap();
        for (i, &o) in out.iter().enumerate() {
            assert_eq!(o, x[i - i % 32 + (i % 32 + 1) % 32], "{name}: element {i}");
        }
    }
}

#[test]
fn both_copies_of_an_elementwise_body_share_one_shared_array() {
    for (name, module) in modules() {
        let mut out = vec![0u32; 96];
        launch!(module, elementwise_big_tile[3, 32](&mut out)).unwrap();
        for (i, &o) in out.iter().enumerate() {
            assert_eq!(o, 3 * (i % 32) as u32, "{name}: element {i}");
        }
    }
}

/// Every CPU path, and the GPU (the emulator in CI).
fn every_machine(test: &str) -> Vec<(String, Module)> {
    let mut devices: Vec<(String, Module)> = modules();
    if let Some(gpu) = support::gpu_or_skip(test) {
        devices.push(("the GPU".into(), gpu.load(support::test_kernels()).unwrap()));
    }
    devices
}

/// Issue 29, R1: a local that shadows a parameter is the local after a barrier, in straight
/// code and as a split loop's bound (the split path read the parameter: 11 and 20 trips).
#[test]
fn r1_a_local_shadowing_a_parameter_is_the_local_on_every_path() {
    for (name, module) in
        every_machine("r1_a_local_shadowing_a_parameter_is_the_local_on_every_path")
    {
        let mut out = vec![0u32; 64];
        launch!(module, shadowed_parameter[1, 64](10, &mut out)).unwrap();
        assert!(out.iter().all(|&v| v == 21), "{name}: {out:?}");
        launch!(module, shadowed_parameter_loops[1, 64](10, &mut out)).unwrap();
        assert!(out.iter().all(|&v| v == 10), "{name}: loops {out:?}");
    }
}

/// Issue 29, R2: a value an early `return` guards is not computed before it (launched with the
/// empty input that makes it overflow, in this debug build), in a `let`, a `let mut` and a
/// split loop's bound.
#[test]
fn r2_nothing_is_computed_above_the_return_that_guards_it() {
    for (name, module) in every_machine("r2_nothing_is_computed_above_the_return_that_guards_it") {
        let mut untouched = vec![7u32; 64];
        launch!(module, guarded_by_return[1, 64](&[] as &[u32], &mut untouched))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(untouched.iter().all(|&v| v == 7), "{name}: {untouched:?}");
        let (x, mut out) = ([3u32, 4, 5, 6], vec![0u32; 64]);
        launch!(module, guarded_by_return[1, 64](&x, &mut out)).unwrap();
        // last = 3, left = 3 - 3 trips = 0, trips = 3: x[3] + x[0] + 3.
        assert!(out.iter().all(|&v| v == 6 + 3 + 3), "{name}: {out:?}");
    }
}

/// Issue 29, R3: a SCREAMING_CASE local is a variable, not a constant: a value computed from it
/// before it changes keeps the old value across a barrier (the split path recomputed it).
#[test]
fn r3_a_screaming_case_local_is_a_variable_on_every_path() {
    for (name, module) in every_machine("r3_a_screaming_case_local_is_a_variable_on_every_path") {
        let mut out = vec![0u32; 64];
        launch!(module, screaming_case_local[1, 64](&mut out)).unwrap();
        let want: Vec<u32> = (0..64).map(|t| t + 1005).collect();
        assert_eq!(out, want, "{name}");
    }
}
