//! Issue 30: `break`, `continue` and `return` out of loops with barriers, and `let` without a
//! value, on the CPU executor's split path. Each kernel of test-kernels' `leaving` module must
//! be on the split path (`kernel.info().cpu_path`) and give, on the split path, the coroutine
//! path (both checked and not) and the GPU (the PTX emulator in CI), what an independent CPU
//! reference gives; threads that leave where others go on to a barrier are barrier divergence
//! on both CPU paths.

mod support;

use ferrocuda::CpuPath;
use ferrocuda::{launch, Error, KernelBug, Module};
use test_kernels::leaving::*;

use support::cpu_test_kernels_every_path as cpu_modules;

/// Every CPU path, and the GPU (the emulator in CI).
fn every_machine(test: &str) -> Vec<(String, Module)> {
    let mut devices = cpu_modules();
    if let Some(gpu) = support::gpu_or_skip(test) {
        devices.push(("the GPU".into(), gpu.load(support::test_kernels()).unwrap()));
    }
    devices
}

fn inputs(n: usize) -> Vec<u32> {
    (0..n as u32)
        .map(|i| i.wrapping_mul(2_654_435_761) >> 5)
        .collect()
}

/// Each block's starting values, `x[i % len]`, one vector per block.
fn starts(x: &[u32], blocks: usize, threads: usize) -> Vec<Vec<u32>> {
    (0..blocks)
        .map(|b| {
            (0..threads)
                .map(|t| x[(b * threads + t) % x.len()])
                .collect()
        })
        .collect()
}

/// `v` after every thread added the value `shift` places to its right.
fn add_right(v: &[u32], shift: usize) -> Vec<u32> {
    let n = v.len();
    (0..n)
        .map(|t| v[t].wrapping_add(v[(t + shift) % n]))
        .collect()
}

/// The (blocks, threads) of the launches: one block, a block of one warp and a part of another,
/// several full blocks.
const SHAPES: [(usize, usize); 3] = [(1, 64), (2, 40), (3, 256)];

#[test]
fn every_kernel_that_leaves_a_loop_or_declares_without_a_value_is_on_the_split_path() {
    for info in [
        *break_between_barriers.info(),
        *stop_by_bound.info(),
        *continue_odd_trips.info(),
        *while_with_break_and_continue.info(),
        *labelled_break_out_of_nested_loops.info(),
        *return_out_of_a_loop.info(),
        *tree_sum_with_continue.info(),
        *one_thread_breaks_on_the_last_trip.info(),
        *some_threads_leave_between_barriers.info(),
        *declared_before_assigned_after.info(),
        *declared_with_values.info(),
        *assigned_in_each_trip.info(),
    ] {
        assert_eq!(info.cpu_path, CpuPath::Regions, "{}", info.name);
    }
    // Assigned on some paths before a barrier and named after it: the macro cannot follow it.
    match assigned_where_the_split_cannot_follow.info().cpu_path {
        CpuPath::Coroutines(why) => assert!(why.contains("`let` without a value (`w`)"), "{why}"),
        path => panic!("expected coroutines, got {path:?}"),
    }
}

#[test]
fn a_block_uniform_break_between_barriers_ends_the_loop_on_every_machine() {
    for (name, module) in
        every_machine("a_block_uniform_break_between_barriers_ends_the_loop_on_every_machine")
    {
        for (blocks, threads) in SHAPES {
            let x = inputs(300);
            for (rounds, stop) in [(5u32, 3u32), (4, 0), (3, 9), (0, 0)] {
                let mut expected = Vec::new();
                for mut v in starts(&x, blocks, threads) {
                    for r in 0..rounds {
                        if r == stop {
                            break;
                        }
                        v = add_right(&v, 1);
                    }
                    expected.extend(v);
                }
                let trips = rounds.min(stop + 1);
                for (kernel, what, bound) in [
                    (break_between_barriers, "break", rounds),
                    (stop_by_bound, "bound", trips),
                ] {
                    let mut out = vec![0u32; blocks * threads];
                    launch!(module, kernel[blocks as u32, threads as u32](&x, &mut out, bound, stop))
                        .unwrap_or_else(|e| panic!("{name} {what}: {e}"));
                    assert_eq!(
                        out, expected,
                        "{name} {what}: {blocks}x{threads} rounds={rounds} stop={stop}"
                    );
                }
            }
        }
    }
}

#[test]
fn a_block_uniform_continue_skips_the_rest_of_the_trip_on_every_machine() {
    for (name, module) in
        every_machine("a_block_uniform_continue_skips_the_rest_of_the_trip_on_every_machine")
    {
        for (blocks, threads) in SHAPES {
            let x = inputs(500);
            for (rounds, shift) in [(6u32, 3u32), (1, 1), (0, 2)] {
                let mut expected = Vec::new();
                for mut v in starts(&x, blocks, threads) {
                    for r in 0..rounds {
                        if r % 2 == 1 {
                            continue;
                        }
                        v = add_right(&v, shift as usize)
                            .iter()
                            .map(|a| a ^ r)
                            .collect();
                    }
                    expected.extend(v);
                }
                let mut out = vec![0u32; blocks * threads];
                launch!(module, continue_odd_trips[blocks as u32, threads as u32](&x, &mut out, rounds, shift))
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(out, expected, "{name}: {blocks}x{threads} rounds={rounds}");
            }
        }
    }
}

#[test]
fn a_voted_while_left_by_break_and_continue_inside_a_match_on_every_machine() {
    for (name, module) in
        every_machine("a_voted_while_left_by_break_and_continue_inside_a_match_on_every_machine")
    {
        for (blocks, threads) in SHAPES {
            let x = inputs(200);
            for (limit, stop) in [(8u32, 5u32), (4, 9), (7, 1), (0, 3)] {
                let mut expected = Vec::new();
                for mut v in starts(&x, blocks, threads) {
                    let mut j = 0u32;
                    while j < limit {
                        j += 1;
                        if j == stop {
                            break;
                        }
                        if j.is_multiple_of(3) {
                            continue;
                        }
                        let n = v.len();
                        v = (0..n)
                            .map(|t| v[t].wrapping_mul(3).wrapping_add(v[(t + 3) % n]))
                            .collect();
                    }
                    expected.extend(v.iter().map(|a| a.wrapping_add(j)));
                }
                let mut out = vec![0u32; blocks * threads];
                launch!(module, while_with_break_and_continue[blocks as u32, threads as u32](&x, &mut out, limit, stop))
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(
                    out, expected,
                    "{name}: {blocks}x{threads} limit={limit} stop={stop}"
                );
            }
        }
    }
}

#[test]
fn labelled_break_and_continue_leave_nested_loops_on_every_machine() {
    for (name, module) in
        every_machine("labelled_break_and_continue_leave_nested_loops_on_every_machine")
    {
        for (blocks, threads) in SHAPES {
            let x = inputs(100);
            for (outer, inner, stop) in [(4u32, 4u32, 13u32), (3, 5, 6), (5, 3, 99), (0, 2, 0)] {
                let mut expected = Vec::new();
                for mut v in starts(&x, blocks, threads) {
                    'outer: for a in 0..outer {
                        for b in 0..inner {
                            if a % 2 == 1 && b == 2 {
                                continue 'outer;
                            }
                            v = add_right(&v, 1 + b as usize);
                            if a * inner + b == stop {
                                break 'outer;
                            }
                        }
                        v.iter_mut().for_each(|e| *e ^= a.wrapping_mul(0x9E37_79B9));
                    }
                    expected.extend(v);
                }
                let mut out = vec![0u32; blocks * threads];
                launch!(module, labelled_break_out_of_nested_loops[blocks as u32, threads as u32](&x, &mut out, outer, inner, stop))
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(
                    out, expected,
                    "{name}: {blocks}x{threads} outer={outer} inner={inner} stop={stop}"
                );
            }
        }
    }
}

#[test]
fn every_thread_returning_out_of_a_loop_ends_the_block_on_every_machine() {
    for (name, module) in
        every_machine("every_thread_returning_out_of_a_loop_ends_the_block_on_every_machine")
    {
        for (blocks, threads) in SHAPES {
            let x = inputs(333);
            for (rounds, stop) in [(5u32, 2u32), (3, 7), (2, 0)] {
                let mut expected = Vec::new();
                for mut v in starts(&x, blocks, threads) {
                    let mut done = false;
                    for r in 0..rounds {
                        v = add_right(&v, 2);
                        if r == stop {
                            expected.extend(v.iter().map(|a| a ^ 0xdead));
                            done = true;
                            break;
                        }
                    }
                    if !done {
                        expected.extend(v);
                    }
                }
                let mut out = vec![0u32; blocks * threads];
                launch!(module, return_out_of_a_loop[blocks as u32, threads as u32](&x, &mut out, rounds, stop))
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(
                    out, expected,
                    "{name}: {blocks}x{threads} rounds={rounds} stop={stop}"
                );
            }
        }
    }
}

#[test]
fn threads_that_continue_with_no_barrier_after_meet_the_others_at_the_next_trip() {
    for (name, module) in every_machine(
        "threads_that_continue_with_no_barrier_after_meet_the_others_at_the_next_trip",
    ) {
        for (blocks, threads) in [(1usize, 64usize), (3, 256), (2, 32)] {
            let x = inputs(700);
            let mut out = vec![0u32; blocks];
            launch!(module, tree_sum_with_continue[blocks as u32, threads as u32](&x, &mut out))
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let expected: Vec<u32> = (0..blocks)
                .map(|b| {
                    (b * threads..(b + 1) * threads)
                        .map(|i| x.get(i).copied().unwrap_or(0))
                        .fold(0u32, u32::wrapping_add)
                })
                .collect();
            assert_eq!(out, expected, "{name}: {blocks}x{threads}");
        }
        // One thread leaves by `break` on the trip the others leave by the loop's condition.
        for (blocks, threads) in SHAPES {
            let x = inputs(90);
            for (rounds, who) in [(3u32, 0u32), (2, 17), (1, 39), (0, 0)] {
                let mut expected = Vec::new();
                for mut v in starts(&x, blocks, threads) {
                    for _ in 0..rounds {
                        v = add_right(&v, 5);
                    }
                    if rounds > 0 {
                        v[who as usize] ^= 1;
                    }
                    expected.extend(v);
                }
                let mut out = vec![0u32; blocks * threads];
                launch!(module, one_thread_breaks_on_the_last_trip[blocks as u32, threads as u32](&x, &mut out, rounds, who))
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(
                    out, expected,
                    "{name}: {blocks}x{threads} rounds={rounds} who={who}"
                );
            }
        }
    }
}

#[test]
fn threads_that_leave_while_others_go_on_to_a_barrier_are_barrier_divergence_on_both_cpu_paths() {
    for (name, module) in cpu_modules() {
        // Every thread leaves alike, or none does: no divergence.
        for leave in [1u32, 2, 3] {
            for who in [0u32, 64] {
                let mut out = vec![0u32; 64];
                launch!(module, some_threads_leave_between_barriers[1, 64](&mut out, 3u32, who, leave))
                    .unwrap_or_else(|e| panic!("{name}: leave={leave} who={who}: {e}"));
            }
        }
        for (leave, how) in [(1u32, "break"), (2, "continue"), (3, "return")] {
            let mut out = vec![0u32; 64];
            let result = launch!(module, some_threads_leave_between_barriers[1, 64](&mut out, 3u32, 16u32, leave));
            let bug = match result {
                Err(Error::KernelBug { bug, .. }) => *bug,
                other => panic!("{name}: {how}: expected a KernelBug, got {other:?}"),
            };
            let message = bug.to_string();
            assert!(
                matches!(bug, KernelBug::BarrierDivergence { .. }),
                "{name}: {how}: {message}"
            );
            assert!(
                message.contains("sync_threads() at test-kernels/src/leaving.rs:"),
                "{name}: {how}: {message}"
            );
            if !name.contains("coroutines=true") && how != "return" {
                assert!(
                    message.contains(&format!(
                        "left the loop by `{how}` at test-kernels/src/leaving.rs:"
                    )),
                    "{name}: {how}: {message}"
                );
            }
        }
    }
}

#[test]
fn let_without_a_value_assigned_after_barriers_is_carried_on_every_machine() {
    for (name, module) in
        every_machine("let_without_a_value_assigned_after_barriers_is_carried_on_every_machine")
    {
        for (blocks, threads) in SHAPES.into_iter().chain([(2, 1)]) {
            let x = inputs(250);
            let mut expected = Vec::new();
            for v in starts(&x, blocks, threads) {
                let n = v.len();
                for t in 0..n {
                    let c = v[t];
                    let (north, south, west, east) = if t == 0 {
                        (v[n - 1].wrapping_sub(c), v[1 % n].wrapping_sub(c), 0, 1)
                    } else if t == n - 1 {
                        (v[t - 1].wrapping_sub(c), v[0].wrapping_sub(c), 2, 3)
                    } else {
                        (
                            v[t - 1].wrapping_sub(c),
                            v[t + 1].wrapping_sub(c),
                            c >> 3,
                            c << 3,
                        )
                    };
                    let acc = c.wrapping_mul(7);
                    expected.push(north ^ south.rotate_left(7) ^ west.wrapping_add(east) ^ acc);
                }
            }
            for (kernel, what) in [
                (declared_before_assigned_after, "without values"),
                (declared_with_values, "with values"),
            ] {
                let mut out = vec![0u32; blocks * threads];
                launch!(module, kernel[blocks as u32, threads as u32](&x, &mut out))
                    .unwrap_or_else(|e| panic!("{name} {what}: {e}"));
                assert_eq!(out, expected, "{name} {what}: {blocks}x{threads}");
            }
            for rounds in [0u32, 1, 4] {
                let mut expected = Vec::new();
                for b in 0..blocks {
                    let start: Vec<u32> = (0..threads)
                        .map(|t| {
                            let i = b * threads + t;
                            if t % 2 == 0 {
                                x[i % x.len()]
                            } else {
                                x[(i + 1) % x.len()] ^ 0xff
                            }
                        })
                        .collect();
                    let mut v = start.clone();
                    for r in 0..rounds {
                        v = add_right(&v, 1).iter().map(|a| a.wrapping_add(r)).collect();
                    }
                    expected.extend(v.iter().zip(&start).map(|(a, s)| a ^ s));
                }
                let mut out = vec![0u32; blocks * threads];
                launch!(module, assigned_in_each_trip[blocks as u32, threads as u32](&x, &mut out, rounds))
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(
                    out, expected,
                    "{name}: each trip, {blocks}x{threads} rounds={rounds}"
                );
            }
            let mut out = vec![0u32; blocks * threads];
            launch!(module, assigned_where_the_split_cannot_follow[blocks as u32, threads as u32](&x, &mut out))
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let expected: Vec<u32> = (0..blocks * threads).map(|i| x[i % x.len()]).collect();
            assert_eq!(out, expected, "{name}: coroutines, {blocks}x{threads}");
        }
    }
}
