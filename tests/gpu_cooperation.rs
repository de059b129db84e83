//! GPU against CPU for the block-cooperative kernels and for shared memory, atomics and warp
//! operations. Skips, saying so, without a GPU.

mod support;

use ferrocuda::kernels::histogram::histogram;
use ferrocuda::kernels::matmul::{matmul_naive, matmul_tiled, TILE};
use ferrocuda::kernels::reduce::{dot_partial, sum_partial};
use ferrocuda::kernels::transpose::{
    transpose_naive, transpose_tiled, TRANSPOSE_ROWS, TRANSPOSE_TILE,
};
use ferrocuda::{launch, Device, LaunchConfig, Module, Ptx};
use rand::Rng;

/// `ptx` loaded on GPU 0 and on the CPU, or `None` (after saying why) when there is no GPU.
fn both(test: &str, ptx: &'static Ptx) -> Option<(Module, Module)> {
    let gpu = support::gpu_or_skip(test)?;
    Some((gpu.load(ptx).unwrap(), Device::cpu().load(ptx).unwrap()))
}

/// Equal up to a few ulps: the same operations in the same order, but ptxas may contract a
/// multiply and an add into an FMA.
fn assert_close(gpu: &[f32], cpu: &[f32], what: &str) {
    assert_eq!(gpu.len(), cpu.len(), "{what}");
    for (i, (&g, &c)) in gpu.iter().zip(cpu).enumerate() {
        let tolerance = 1e-5 * c.abs().max(1.0);
        assert!(
            (g - c).abs() <= tolerance,
            "{what} element {i}: GPU {g}, CPU {c}"
        );
    }
}

#[test]
fn dot_product_gpu_equals_cpu() {
    let Some((gpu, cpu)) = both("dot_product_gpu_equals_cpu", &ferrocuda::KERNELS) else {
        return;
    };
    let (mut rng, seed) = support::rng();
    for n in [1usize, 31, 33, 1000, 4099, 1 << 22] {
        let a = support::random_f32(&mut rng, n);
        let b = support::random_f32(&mut rng, n);
        let mut results = Vec::new();
        for module in [&gpu, &cpu] {
            let mut partial = vec![0.0f32; 120];
            launch!(module, dot_partial[120, 256](&a, &b, &mut partial)).unwrap();
            let mut total = [0.0f32];
            launch!(module, sum_partial[1, 128](&partial, &mut total)).unwrap();
            results.push(total[0]);
        }
        // The same sums in the same order, but the GPU contracts each product and add into an
        // FMA and the CPU rounds the product first: each element may differ by half an ulp of
        // its product, which the later additions carry along. Against a cancelling random sum
        // that is far more than a few ulps of the total (seen: -155.5 against -156.3 for 4M
        // elements), so the bound is in the products' magnitudes.
        let magnitude: f64 = a.iter().zip(&b).map(|(x, y)| (x * y).abs() as f64).sum();
        let bound = 4.0 * magnitude * 2f64.powi(-24) + 1e-5 * (results[1] as f64).abs().max(1.0);
        assert!(
            ((results[0] - results[1]) as f64).abs() <= bound,
            "dot n={n} seed={seed}: GPU {}, CPU {} (bound {bound:e})",
            results[0],
            results[1]
        );
    }
}

#[test]
fn histogram_gpu_equals_cpu() {
    let Some((gpu, cpu)) = both("histogram_gpu_equals_cpu", &ferrocuda::KERNELS) else {
        return;
    };
    let (mut rng, seed) = support::rng();
    let values: Vec<f32> = (0..3_000_017)
        .map(|_| rng.random_range(-1.0f32..11.0))
        .collect();
    for bins in [1usize, 10, 1000, 12_288] {
        let config = LaunchConfig::new(200, 256).with_shared_mem_bytes(4 * bins as u32);
        let mut on_gpu = vec![0u32; bins];
        let mut on_cpu = vec![0u32; bins];
        // `LaunchConfig` is `Copy`: one config for both launches.
        gpu.launch(&histogram, config, (&values, &mut on_gpu, 0.0f32, 10.0f32))
            .unwrap();
        cpu.launch(&histogram, config, (&values, &mut on_cpu, 0.0f32, 10.0f32))
            .unwrap();
        assert_eq!(on_gpu, on_cpu, "bins={bins} seed={seed}");
    }
}

#[test]
fn matrix_products_gpu_equal_cpu() {
    let Some((gpu, cpu)) = both("matrix_products_gpu_equal_cpu", &ferrocuda::KERNELS) else {
        return;
    };
    let (mut rng, seed) = support::rng();
    for (m, n, k) in [(1, 1, 1), (33, 31, 47), (256, 256, 256), (100, 300, 17)] {
        let a = support::random_f32(&mut rng, m * k);
        let b = support::random_f32(&mut rng, k * n);
        let grid = (n.div_ceil(TILE) as u32, m.div_ceil(TILE) as u32);
        let block = (TILE as u32, TILE as u32);
        let (mu, nu, ku) = (m as u32, n as u32, k as u32);
        let mut out = [vec![0.0f32; m * n], vec![0.0f32; m * n]];
        for (module, c) in [&gpu, &cpu].into_iter().zip(out.iter_mut()) {
            launch!(module, matmul_tiled[grid, block](&a, &b, c, mu, nu, ku)).unwrap();
        }
        assert_close(&out[0], &out[1], &format!("tiled {m}x{n}x{k} seed={seed}"));
        for (module, c) in [&gpu, &cpu].into_iter().zip(out.iter_mut()) {
            launch!(module, matmul_naive[grid, block](&a, &b, c, mu, nu, ku)).unwrap();
        }
        assert_close(&out[0], &out[1], &format!("naive {m}x{n}x{k} seed={seed}"));
    }
}

#[test]
fn transposes_gpu_equal_cpu() {
    let Some((gpu, cpu)) = both("transposes_gpu_equal_cpu", &ferrocuda::KERNELS) else {
        return;
    };
    let (mut rng, seed) = support::rng();
    let large = support::size_for(gpu.device(), (4096, 4096), (513, 1031));
    for (rows, cols) in [(1usize, 1usize), (33, 31), (1000, 999), large] {
        let input = support::random_f32(&mut rng, rows * cols);
        let (r, c) = (rows as u32, cols as u32);
        let tiles = (
            c.div_ceil(TRANSPOSE_TILE as u32),
            r.div_ceil(TRANSPOSE_TILE as u32),
        );
        let block = (TRANSPOSE_TILE as u32, TRANSPOSE_ROWS as u32);
        let mut out = [vec![0.0f32; rows * cols], vec![0.0f32; rows * cols]];
        for (module, o) in [&gpu, &cpu].into_iter().zip(out.iter_mut()) {
            launch!(module, transpose_tiled[tiles, block](&input, o, r, c)).unwrap();
        }
        assert_eq!(out[0], out[1], "tiled {rows}x{cols} seed={seed}");
        let grid = (c.div_ceil(16), r.div_ceil(16));
        for (module, o) in [&gpu, &cpu].into_iter().zip(out.iter_mut()) {
            launch!(module, transpose_naive[grid, (16, 16)](&input, o, r, c)).unwrap();
        }
        assert_eq!(out[0], out[1], "naive {rows}x{cols} seed={seed}");
    }
}

#[test]
fn shared_memory_atomics_and_warp_operations_gpu_equal_cpu() {
    let Some((gpu, cpu)) = both(
        "shared_memory_atomics_and_warp_operations_gpu_equal_cpu",
        support::test_kernels(),
    ) else {
        return;
    };
    let (mut rng, seed) = support::rng();

    let x = support::random_f32(&mut rng, 1000);
    let mut out = [vec![0.0f32; 1000], vec![0.0f32; 1000]];
    for (module, o) in [&gpu, &cpu].into_iter().zip(out.iter_mut()) {
        launch!(module, test_kernels::rotate_in_block[4, 250](&x, o)).unwrap();
    }
    assert_eq!(out[0], out[1], "rotate_in_block seed={seed}");

    let mut votes = [vec![0u32; 3000], vec![0u32; 3000]];
    for (module, o) in [&gpu, &cpu].into_iter().zip(votes.iter_mut()) {
        launch!(module, test_kernels::barrier_votes[10, 100](&x, o)).unwrap();
    }
    assert_eq!(votes[0], votes[1], "barrier_votes seed={seed}");

    let mut counts = [vec![0u32; 16], vec![0u32; 16]];
    for (module, o) in [&gpu, &cpu].into_iter().zip(counts.iter_mut()) {
        launch!(module, test_kernels::shared_atomics[8, 1000](o)).unwrap();
    }
    assert_eq!(counts[0], counts[1], "shared_atomics");

    let mut reductions = [vec![0.0f32; 3000], vec![0.0f32; 3000]];
    for (module, o) in [&gpu, &cpu].into_iter().zip(reductions.iter_mut()) {
        launch!(module, test_kernels::warp_reductions[10, 100](&x, o)).unwrap();
    }
    assert_close(
        &reductions[0],
        &reductions[1],
        &format!("warp reductions seed={seed}"),
    );

    // Shuffles whose source lane is in the mask are defined on the GPU: compare those.
    for (mask, src) in [(u32::MAX, 7u32), (0x0000_ffff, 3), (0xffff_0000, 20)] {
        let mut results = [vec![0u32; 64 * 9], vec![0u32; 64 * 9]];
        for (module, o) in [&gpu, &cpu].into_iter().zip(results.iter_mut()) {
            launch!(module, test_kernels::warp_ops[1, 64](o, mask, src)).unwrap();
        }
        let in_mask = |lane: i64| (0..32).contains(&lane) && mask & (1 << lane) != 0;
        for t in 0..64 {
            let lane = (t % 32) as i64;
            if !in_mask(lane) {
                continue;
            }
            let sources = [
                src as i64,
                lane - 1,
                lane + 2,
                lane ^ 1,
                0,
                0,
                0,
                lane ^ 4,
                lane ^ 4,
            ];
            for (k, source) in sources.into_iter().enumerate() {
                let defined = (4..7).contains(&k) || in_mask(source);
                if defined {
                    assert_eq!(
                        results[0][t * 9 + k],
                        results[1][t * 9 + k],
                        "warp_ops mask={mask:#x} thread {t} result {k}"
                    );
                }
            }
        }
    }

    let init = |start: f64| [0.0, 0.0, start, -5.0, -1.0, 0.0];
    let run = |module: &Module| {
        let mut u = vec![0u32, 0, 1_000_000, 0, 0, 0];
        let mut i = vec![0i32, 0, 1_000_000, -5, -1, 0];
        let mut ul = vec![0u64, 0, 1_000_000, 0, 0, 0];
        let mut il = vec![0i64, 0, 1_000_000, -5, -1, 0];
        let mut f: Vec<f32> = init(1e6).iter().map(|&v| v as f32).collect();
        let mut d = init(1e6).to_vec();
        launch!(
            module,
            test_kernels::atomics_every_type[256, 256](
                &mut u, &mut i, &mut ul, &mut il, &mut f, &mut d
            )
        )
        .unwrap();
        // Element 4 is whichever thread exchanged last: not comparable.
        let keep = |v: &[f64]| [v[0], v[1], v[2], v[3], v[5]];
        [
            keep(&u.iter().map(|&v| v as f64).collect::<Vec<_>>()),
            keep(&i.iter().map(|&v| v as f64).collect::<Vec<_>>()),
            keep(&ul.iter().map(|&v| v as f64).collect::<Vec<_>>()),
            keep(&il.iter().map(|&v| v as f64).collect::<Vec<_>>()),
            keep(&f.iter().map(|&v| v as f64).collect::<Vec<_>>()),
            keep(&d),
        ]
    };
    assert_eq!(run(&gpu), run(&cpu), "atomics_every_type");
}
