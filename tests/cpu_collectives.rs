//! Block collectives (`ferrocuda_std::block::reduce`, `reduce_add`): on the CPU executor's split
//! path (one block-level step), on its coroutine path (the GPU code) and on the GPU (the PTX
//! emulator in CI), against a direct emulation of the GPU's shuffle tree (bit for bit), against
//! sequential references, and with divergence planted.

mod support;

use ferrocuda::{launch, CpuPath, Error, KernelBug, Module, Ptx};
use test_kernels::collectives::*;

fn cpu_modules(ptx: &'static Ptx) -> Vec<(String, Module)> {
    support::cpu_modules(ptx)
}

/// [`cpu_modules`], and the GPU when there is one.
fn modules(test: &str, ptx: &'static Ptx) -> Vec<(String, Module)> {
    let mut all = cpu_modules(ptx);
    if let Some(gpu) = support::gpu_or_skip(test) {
        all.push(("gpu".to_string(), gpu.load(ptx).unwrap()));
    }
    all
}

/// What a GPU warp's `shfl_down` tree leaves in each of its `lanes` lanes: at offsets 16, 8, 4,
/// 2, 1, every lane at once takes the value lane + offset held before the step, where that lane
/// exists (written independently of the executor's fold: a copy per step).
fn shuffle_tree(values: &[f32]) -> Vec<f32> {
    let lanes = values.len();
    let mut acc = values.to_vec();
    for offset in [16, 8, 4, 2, 1] {
        let before = acc.clone();
        for (lane, value) in acc.iter_mut().enumerate() {
            if lane + offset < lanes {
                *value = before[lane] + before[lane + offset];
            }
        }
    }
    acc
}

/// What each thread of a block holding `values` (x fastest) gets from `block::reduce_add` on a
/// GPU: warp trees, lane 0 of each stores, warp 0's tree over the stored values (0 past them).
fn gpu_block_sum(values: &[f32]) -> (Vec<f32>, Vec<f32>) {
    let warp_sums: Vec<f32> = values.chunks(32).map(|w| shuffle_tree(w)[0]).collect();
    let lanes = values.len().min(32);
    let partial: Vec<f32> = (0..lanes)
        .map(|lane| warp_sums.get(lane).copied().unwrap_or(0.0))
        .collect();
    let mut each = vec![0.0f32; values.len()];
    each[..lanes].copy_from_slice(&shuffle_tree(&partial));
    (each, warp_sums)
}

/// Values of many magnitudes, so that the order of the additions shows in the bits.
fn spread(n: usize) -> Vec<f32> {
    (0..n as u32)
        .map(|i| {
            let h = i.wrapping_mul(2654435761);
            let mantissa = (h >> 8) as f32 / (1u32 << 24) as f32 - 0.5;
            mantissa * 10f32.powi((h % 7) as i32 - 3)
        })
        .collect()
}

#[test]
fn the_collective_kernels_take_the_split_path() {
    use ferrocuda::kernels::convolution::{convolve_2d, convolve_2d_const};
    use ferrocuda::kernels::reduce::{dot_partial, sum_partial};
    use ferrocuda::kernels::statistics::{statistics_merge, statistics_partial};
    for info in [
        *dot_partial::<f32>().info(),
        *dot_partial::<f64>().info(),
        *sum_partial::<f32>().info(),
        *sum_partial::<f64>().info(),
        *statistics_partial::<f32>().info(),
        *statistics_merge::<f64>().info(),
        *convolve_2d.info(),
        *convolve_2d_const.info(),
        *block_max.info(),
        *every_threads_sum.info(),
        *sums_in_a_loop.info(),
        *collective_after_a_return.info(),
    ] {
        assert_eq!(info.cpu_path, CpuPath::Regions, "{}", info.name);
    }
    // In a non-uniform branch the collective is a barrier the split path cannot take.
    assert!(matches!(
        collective_in_a_branch.info().cpu_path,
        CpuPath::Coroutines(_)
    ));
}

#[test]
fn every_thread_gets_the_gpus_bits_from_reduce_add() {
    let test = "every_thread_gets_the_gpus_bits_from_reduce_add";
    for (name, module) in modules(test, support::test_kernels()) {
        // Whole warps, a part of one, several with a partial last one, 2D and 3D blocks.
        for (blocks, block) in [
            (3u32, (256u32, 1u32, 1u32)),
            (2, (24, 1, 1)),
            (2, (200, 1, 1)),
            (2, (16, 5, 1)),
            (1, (8, 4, 3)),
            (1, (1024, 1, 1)),
        ] {
            let threads = (block.0 * block.1 * block.2) as usize;
            let n = blocks as usize * threads - 5;
            let x = spread(n);
            let mut out = vec![f32::NAN; n];
            launch!(module, every_threads_sum[blocks, block](&x, &mut out)).unwrap();
            for b in 0..blocks as usize {
                let values: Vec<f32> = (0..threads)
                    .map(|t| x.get(b * threads + t).copied().unwrap_or(0.0))
                    .collect();
                let (expected, _) = gpu_block_sum(&values);
                for (t, want) in expected.iter().enumerate() {
                    let Some(&got) = out.get(b * threads + t) else {
                        continue;
                    };
                    assert_eq!(
                        got.to_bits(),
                        want.to_bits(),
                        "{name}: block {block:?} #{b}, thread {t}: {got} against {want}"
                    );
                }
                // The sum itself, against f64.
                let exact: f64 = values.iter().map(|&v| v as f64).sum();
                let magnitude: f64 = values.iter().map(|&v| (v as f64).abs()).sum();
                let error = (out[b * threads] as f64 - exact).abs();
                assert!(
                    error <= 1e-6 * magnitude,
                    "{name}: block {b} sum off by {error}"
                );
            }
        }
    }
}

#[test]
fn dot_partial_is_the_f64_dot_product_with_the_same_bits_on_both_cpu_paths() {
    use ferrocuda::kernels::reduce::dot_partial;
    let test = "dot_partial_is_the_f64_dot_product_with_the_same_bits_on_both_cpu_paths";
    let n = 1000;
    let (a, b) = (spread(n), spread(n + 7)[7..].to_vec());
    let exact: f64 = a.iter().zip(&b).map(|(&x, &y)| x as f64 * y as f64).sum();
    let magnitude: f64 = a
        .iter()
        .zip(&b)
        .map(|(&x, &y)| (x as f64 * y as f64).abs())
        .sum();
    let mut cpu_bits = Vec::new();
    for (name, module) in modules(test, &ferrocuda::KERNELS) {
        let mut partial = vec![f32::NAN; 3];
        launch!(module, dot_partial::<f32>[3, 96](&a, &b, &mut partial)).unwrap();
        let got: f64 = partial.iter().map(|&p| p as f64).sum();
        assert!(
            (got - exact).abs() <= 1e-6 * magnitude,
            "{name}: {got} against {exact}"
        );
        // Which thread takes which elements is the device's choice (contiguous runs on the
        // CPU), but on the CPU both paths give the same bits.
        if name.starts_with("cpu") {
            cpu_bits.push((
                name,
                partial.iter().map(|p| p.to_bits()).collect::<Vec<_>>(),
            ));
        }
    }
    for (name, bits) in &cpu_bits {
        assert_eq!(bits, &cpu_bits[0].1, "{name} against {}", cpu_bits[0].0);
    }
}

#[test]
fn the_scratch_holds_each_warps_sum_afterwards_on_every_path() {
    let test = "the_scratch_holds_each_warps_sum_afterwards_on_every_path";
    for (name, module) in modules(test, support::test_kernels()) {
        for threads in [32u32, 100, 256] {
            let x = spread(threads as usize);
            let mut out = vec![f32::NAN; 32];
            launch!(module, warp_sums_afterwards[1, threads](&x, &mut out)).unwrap();
            let (_, warp_sums) = gpu_block_sum(&x);
            for (w, expected) in warp_sums.iter().enumerate() {
                assert_eq!(out[w].to_bits(), expected.to_bits(), "{name}: warp {w}");
            }
        }
    }
}

#[test]
fn block_max_with_a_custom_combine_is_the_largest_element() {
    let test = "block_max_with_a_custom_combine_is_the_largest_element";
    for (name, module) in modules(test, support::test_kernels()) {
        for (blocks, threads) in [(4u32, 128u32), (3, 50), (1, 1024)] {
            let n = (blocks * threads) as usize - 3;
            let x = spread(n);
            let mut out = vec![f32::NAN; blocks as usize];
            launch!(module, block_max[blocks, threads](&x, &mut out)).unwrap();
            for (b, &got) in out.iter().enumerate() {
                let t = threads as usize;
                let expected = x[b * t..((b + 1) * t).min(n)]
                    .iter()
                    .fold(f32::NEG_INFINITY, |m, &v| m.max(v));
                assert_eq!(got, expected, "{name}: block {b} of {threads}");
            }
        }
    }
}

#[test]
fn a_collective_in_a_split_loop_gives_every_rounds_sum() {
    let test = "a_collective_in_a_split_loop_gives_every_rounds_sum";
    for (name, module) in modules(test, support::test_kernels()) {
        let (blocks, threads, rounds) = (3usize, 64usize, 4u32);
        let x: Vec<u32> = (0..(blocks * threads - 10) as u32)
            .map(|i| i.wrapping_mul(2654435761) >> 12)
            .collect();
        let mut out = vec![0u32; blocks * rounds as usize];
        launch!(module, sums_in_a_loop[blocks as u32, threads as u32](&x, &mut out, rounds))
            .unwrap();
        for b in 0..blocks {
            let chunk = &x[b * threads..((b + 1) * threads).min(x.len())];
            for r in 0..rounds {
                let expected: u32 = chunk.iter().map(|&v| v * (r + 1)).sum();
                assert_eq!(
                    out[b * rounds as usize + r as usize],
                    expected,
                    "{name}: {b} {r}"
                );
            }
        }
    }
}

/// The report of a launch that must stop with barrier divergence.
fn divergence(result: ferrocuda::Result<()>) -> String {
    match result {
        // The coroutine path runs the GPU code, whose first shuffle finds the lanes missing.
        Err(Error::KernelBug { bug, .. }) => match *bug {
            KernelBug::BarrierDivergence { detail } | KernelBug::WarpDivergence { detail } => {
                detail
            }
            other => panic!("expected barrier divergence, got {other:?}"),
        },
        other => panic!("expected barrier divergence, got {other:?}"),
    }
}

#[test]
fn threads_that_return_before_a_collective_are_divergence_naming_its_site() {
    for (name, module) in cpu_modules(support::test_kernels()) {
        let x = vec![1.0f32; 64];
        let mut out = vec![0.0f32; 64];
        let detail = divergence(launch!(
            module,
            collective_after_a_return[1, 64](&x, &mut out)
        ));
        assert!(
            detail.contains("test-kernels/src/collectives.rs:") && detail.contains("returned"),
            "{name}: {detail}"
        );
        if name.contains("coroutines=false") {
            assert!(
                detail.contains("16 threads waiting at a block collective")
                    && detail.contains("48 threads returned"),
                "{name}: {detail}"
            );
        }
        let detail = divergence(launch!(module, collective_in_a_branch[1, 64](&x, &mut out)));
        assert!(
            detail.contains("test-kernels/src/collectives.rs:"),
            "{name}: {detail}"
        );
    }
}
