//! Tensor cores in the kernel language (`ferrocuda_std::mma`, `async_copy`): one warp, one 16×8
//! tile `d = a·b + c` per input type (f16, bf16, tf32, i8), from global slices and through
//! shared memory (`cp.async` + `ldmatrix`), on both CPU paths and on the GPU (the PTX emulator
//! in CI): against an f64 reference within the documented bound `K · 2^-24 · (|c| + Σ|a·b|)`,
//! the CPU's bits against the GPU's (both sum in the documented order), and a planted warp
//! whose lanes do not all reach the `mma`.

mod support;

use ferrocuda::{bf16, f16, launch, CpuPath, Error, KernelBug, Module};
use rand::Rng;
use test_kernels::tensor_cores::*;

fn cpu_modules() -> Vec<(String, Module)> {
    support::cpu_modules(support::test_kernels_sm80())
}

/// [`cpu_modules`], and the GPU when there is one.
fn modules(test: &str) -> Vec<(String, Module)> {
    let ptx = support::test_kernels_sm80();
    let mut all = cpu_modules();
    if let Some(gpu) = support::gpu_or_skip(test) {
        all.push(("gpu".to_string(), gpu.load(ptx).unwrap()));
    }
    all
}

/// The library's tensor kernels (`TENSOR_KERNELS`: `ops::matmul_tensor`) on the same CPU paths
/// as [`cpu_modules`], and the GPU when there is one.
fn tensor_modules(test: &str) -> Vec<(String, Module)> {
    let mut all: Vec<(String, Module)> = [(false, false), (true, false), (true, true)]
        .into_iter()
        .map(|(checked, force_coroutines)| {
            let options = ferrocuda::CpuOptions {
                checked,
                force_coroutines,
                ..ferrocuda::CpuOptions::default()
            };
            let name = format!("library cpu checked={checked} coroutines={force_coroutines}");
            let device = ferrocuda::Device::cpu_with(options).unwrap();
            (name, device.load(&ferrocuda::TENSOR_KERNELS).unwrap())
        })
        .collect();
    if let Some(gpu) = support::gpu_or_skip(test) {
        let module = gpu.load(&ferrocuda::TENSOR_KERNELS).unwrap();
        all.push(("library gpu".to_string(), module));
    }
    all
}

/// `c + a·b` in f64 (a: 16×k row-major, b: k×8 row-major), and the bound per element.
fn reference(a: &[f64], b: &[f64], c: &[f64], k: usize) -> (Vec<f64>, Vec<f64>) {
    let mut d = c.to_vec();
    let mut bound = vec![0.0; 16 * 8];
    for r in 0..16 {
        for col in 0..8 {
            let products = (0..k).map(|x| a[r * k + x] * b[x * 8 + col]);
            d[r * 8 + col] += products.clone().sum::<f64>();
            let magnitude = c[r * 8 + col].abs() + products.map(f64::abs).sum::<f64>();
            bound[r * 8 + col] = k as f64 * 2f64.powi(-24) * magnitude;
        }
    }
    (d, bound)
}

/// Checks each module's `d` against the reference and the first module's bits.
fn check(results: &[(String, Vec<f32>)], a: &[f64], b: &[f64], c: &[f32], k: usize) {
    let c64: Vec<f64> = c.iter().map(|&x| x as f64).collect();
    let (want, bound) = reference(a, b, &c64, k);
    let (first, first_d) = &results[0];
    for (name, d) in results {
        for i in 0..16 * 8 {
            let error = (d[i] as f64 - want[i]).abs();
            assert!(
                error <= bound[i],
                "{name}: d[{}][{}] = {}, want {} (error {error:e} > {:e})",
                i / 8,
                i % 8,
                d[i],
                want[i],
                bound[i]
            );
            assert_eq!(
                d[i].to_bits(),
                first_d[i].to_bits(),
                "{name} against {first}: d[{}][{}]",
                i / 8,
                i % 8
            );
        }
    }
}

fn random(rng: &mut impl Rng, n: usize) -> Vec<f32> {
    (0..n).map(|_| rng.random_range(-1.0f32..1.0)).collect()
}

#[test]
fn f16_and_bf16_tiles_from_global_and_through_shared_memory() {
    let _turn = support::gpu_shared();
    let (mut rng, seed) = support::rng();
    let a: Vec<f16> = random(&mut rng, 256)
        .into_iter()
        .map(f16::from_f32)
        .collect();
    let b: Vec<f16> = random(&mut rng, 128)
        .into_iter()
        .map(f16::from_f32)
        .collect();
    let c = random(&mut rng, 128);
    let (a64, b64): (Vec<f64>, Vec<f64>) = (
        a.iter().map(|x| x.to_f64()).collect(),
        b.iter().map(|x| x.to_f64()).collect(),
    );
    let mut results = Vec::new();
    for (name, module) in modules("f16_and_bf16_tiles_from_global_and_through_shared_memory") {
        let mut d = vec![f32::NAN; 128];
        launch!(module, mma_f16[1, 32](&a, &b, &c, &mut d)).unwrap();
        results.push((format!("{name} (seed {seed})"), d.clone()));
        launch!(module, mma_f16_shared[1, 32](&a, &b, &c, &mut d)).unwrap();
        results.push((format!("{name} shared (seed {seed})"), d));
    }
    check(&results, &a64, &b64, &c, 16);

    let a: Vec<bf16> = a64.iter().map(|&x| bf16::from_f64(x)).collect();
    let b: Vec<bf16> = b64.iter().map(|&x| bf16::from_f64(x)).collect();
    let mut results = Vec::new();
    for (name, module) in modules("f16_and_bf16_tiles_from_global_and_through_shared_memory") {
        let mut d = vec![f32::NAN; 128];
        launch!(module, mma_bf16[1, 32](&a, &b, &c, &mut d)).unwrap();
        results.push((format!("{name} bf16 (seed {seed})"), d));
        // Through `SharedTile` (unchecked reads outside checked mode): the same bits.
        let mut d = vec![f32::NAN; 128];
        launch!(module, mma_bf16_shared_tile[1, 32](&a, &b, &c, &mut d)).unwrap();
        results.push((format!("{name} bf16 SharedTile (seed {seed})"), d));
    }
    let a64: Vec<f64> = a.iter().map(|x| x.to_f64()).collect();
    let b64: Vec<f64> = b.iter().map(|x| x.to_f64()).collect();
    check(&results, &a64, &b64, &c, 16);
}

/// `SharedTile`: fragments at any place of a checked window (`ldmatrix` where the column is a
/// multiple of 8, element by element elsewhere) against the f64 reference, and a window past
/// its array or a fragment past its window stopping the kernel cleanly, on every machine.
#[test]
fn shared_tile_fragments_anywhere_in_the_window_and_out_of_range_stops() {
    // Its out-of-range cases trap the GPU's kernel: no other test may use the GPU meanwhile.
    let _turn = support::gpu_alone();
    let test = "shared_tile_fragments_anywhere_in_the_window_and_out_of_range_stops";
    let (mut rng, seed) = support::rng();
    let a: Vec<f16> = random(&mut rng, 1024)
        .into_iter()
        .map(f16::from_f32)
        .collect();
    let b: Vec<f16> = random(&mut rng, 512)
        .into_iter()
        .map(f16::from_f32)
        .collect();
    let c = random(&mut rng, 128);
    for (row, col) in [(0usize, 0usize), (16, 16), (5, 4), (16, 8)] {
        // The 16×16 tile of `a` at (row, col) and the 16×8 of `b` at (col, 8).
        let a64: Vec<f64> = (0..256)
            .map(|i| a[(row + i / 16) * 32 + col + i % 16].to_f64())
            .collect();
        let b64: Vec<f64> = (0..128)
            .map(|i| b[(col + i / 8) * 16 + 8 + i % 8].to_f64())
            .collect();
        let mut results = Vec::new();
        for (name, module) in modules(test) {
            let mut d = vec![f32::NAN; 128];
            let (r, cc) = (row as u32, col as u32);
            launch!(module, mma_f16_shared_tile[1, 32](&a, &b, &c, &mut d, 0, r, cc)).unwrap();
            results.push((format!("{name} at ({row}, {col}) (seed {seed})"), d));
        }
        check(&results, &a64, &b64, &c, 16);
    }
    // A window one element past the array; tiles one row or one column past the window.
    for (start, row, col, what) in [
        (
            1u32,
            0u32,
            0u32,
            "a shared array (a SharedTile's last element)",
        ),
        (0, 17, 0, "a SharedTile's rows"),
        (0, 0, 17, "a SharedTile's columns"),
    ] {
        for (name, module) in modules(test) {
            let mut d = vec![f32::NAN; 128];
            let result = launch!(
                module,
                mma_f16_shared_tile[1, 32](&a, &b, &c, &mut d, start, row, col)
            );
            let error = result.expect_err(&format!("{name}: ({start}, {row}, {col})"));
            if name != "gpu" {
                assert!(
                    matches!(&error, Error::KernelPanicked { .. })
                        && error.to_string().contains(what),
                    "{name}: {error}"
                );
            }
            assert!(d.iter().all(|x| x.is_nan()), "{name}: no element written");
        }
    }
}

#[test]
fn tf32_tile() {
    let _turn = support::gpu_shared();
    let (mut rng, seed) = support::rng();
    // tf32 values (10 fraction bits): the reference then needs no rounding of its own.
    let tf32 = |x: f32| f32::from_bits(x.to_bits() & !0x1fff);
    let a: Vec<f32> = random(&mut rng, 128).into_iter().map(tf32).collect();
    let b: Vec<f32> = random(&mut rng, 64).into_iter().map(tf32).collect();
    let c = random(&mut rng, 128);
    let mut results = Vec::new();
    for (name, module) in modules("tf32_tile") {
        let mut d = vec![f32::NAN; 128];
        launch!(module, mma_tf32[1, 32](&a, &b, &c, &mut d)).unwrap();
        results.push((format!("{name} (seed {seed})"), d));
        // Through `SharedTile` (unchecked reads outside checked mode): the same bits.
        let mut d = vec![f32::NAN; 128];
        launch!(module, mma_tf32_shared_tile[1, 32](&a, &b, &c, &mut d)).unwrap();
        results.push((format!("{name} SharedTile (seed {seed})"), d));
    }
    let widen = |v: &[f32]| v.iter().map(|&x| x as f64).collect::<Vec<_>>();
    check(&results, &widen(&a), &widen(&b), &c, 8);
}

#[test]
fn i8_tile_is_exact() {
    let _turn = support::gpu_shared();
    let (mut rng, seed) = support::rng();
    let a: Vec<i8> = (0..512).map(|_| rng.random()).collect();
    let b: Vec<i8> = (0..256).map(|_| rng.random()).collect();
    let c: Vec<i32> = (0..128)
        .map(|_| rng.random_range(-1 << 20..1 << 20))
        .collect();
    for (name, module) in modules("i8_tile_is_exact") {
        let mut d = vec![0i32; 128];
        launch!(module, mma_i8[1, 32](&a, &b, &c, &mut d)).unwrap();
        for r in 0..16 {
            for col in 0..8 {
                let want = c[r * 8 + col]
                    + (0..32)
                        .map(|x| a[r * 32 + x] as i32 * b[x * 8 + col] as i32)
                        .sum::<i32>();
                assert_eq!(d[r * 8 + col], want, "{name} (seed {seed}): d[{r}][{col}]");
            }
        }
    }
}

/// On the CPU executor (the emulator's report of the same bug, which would leave this process's
/// GPU context unusable for the other tests, is checked in `ptx-emu/tests/mma.rs`).
#[test]
fn a_lane_that_skips_the_mma_is_warp_divergence() {
    let (a, b, c) = (vec![f16::ZERO; 256], vec![f16::ZERO; 128], vec![0f32; 128]);
    for (name, module) in cpu_modules() {
        let mut d = vec![0f32; 128];
        // In a helper (a rendezvous on coroutines) and in the body (the split path's step).
        for result in [
            launch!(module, mma_divergent[1, 32](&a, &b, &c, &mut d)),
            launch!(module, mma_divergent_split[1, 32](&a, &b, &c, &mut d)),
        ] {
            match result {
                Err(Error::KernelBug { bug, .. }) => match *bug {
                    KernelBug::WarpDivergence { detail } => assert!(
                        detail.contains("mma") && detail.contains("lane 5"),
                        "{name}: {detail}"
                    ),
                    other => panic!("{name}: expected warp divergence, got {other:?}"),
                },
                other => panic!("{name}: expected warp divergence, got {other:?}"),
            }
        }
        // A block with a partial warp cannot run it either.
        let result = launch!(module, mma_f16[1, 16](&a, &b, &c, &mut d));
        assert!(
            matches!(result, Err(Error::KernelBug { .. })),
            "{name}: {result:?}"
        );
    }
}

/// An `mma` in the kernel's body (`let d = mma(..);`, `d = mma(..);`) is a sync point of the
/// split path, as a barrier is: the kernel keeps the fast CPU path, with no rendezvous.
#[test]
fn mma_in_the_body_keeps_the_split_path() {
    use ferrocuda::tensor_kernels::matmul::matmul_tc;
    for info in [matmul_f16_tc.info(), mma_divergent_split.info()] {
        assert_eq!(info.cpu_path, CpuPath::Regions, "{}", info.name);
    }
    // The library's tensor-core matmul: its k-step's `mma`s and barriers are statements of the
    // body (not in a helper function, where they ran on coroutines), for every input type.
    for info in [
        *matmul_tc::<f16>().info(),
        *matmul_tc::<bf16>().info(),
        *matmul_tc::<f32>().info(),
    ] {
        assert_eq!(info.cpu_path, CpuPath::Regions, "{}", info.name);
    }
}

#[test]
fn matmul_on_tensor_cores_at_ragged_sizes() {
    let _turn = support::gpu_shared();
    let (mut rng, seed) = support::rng();
    // Whole tiles, ragged in every dimension, rows not 16-byte aligned (k, n not multiples of 8),
    // one k-step, many.
    for (m, n, k) in [
        (64, 64, 64),
        (37, 45, 50),
        (1, 8, 16),
        (33, 31, 7),
        (20, 40, 96),
        (96, 130, 72),
    ] {
        let a: Vec<f16> = random(&mut rng, m * k)
            .into_iter()
            .map(f16::from_f32)
            .collect();
        let b: Vec<f16> = random(&mut rng, k * n)
            .into_iter()
            .map(f16::from_f32)
            .collect();
        let mut results: Vec<(String, Vec<f32>)> = Vec::new();
        for (name, module) in modules("matmul_on_tensor_cores_at_ragged_sizes") {
            let mut c = vec![f32::NAN; m * n];
            let grid = (n.div_ceil(32) as u32, m.div_ceil(32) as u32);
            launch!(
                module,
                matmul_f16_tc[grid, 128](&a, &b, &mut c, m as u32, n as u32, k as u32)
            )
            .unwrap();
            results.push((format!("{name} {m}x{n}x{k} (seed {seed})"), c));
        }
        // The library's kernel (eight `mma` statements a k-step, one block step on the split
        // path; on the CPU, fragments straight from the shared tiles): the same order per
        // element, so the same bits.
        for (name, module) in tensor_modules("matmul_on_tensor_cores_at_ragged_sizes") {
            let mut c = vec![f32::NAN; m * n];
            let shape = ferrocuda::ops::MatmulShape::new(m, n, k);
            ferrocuda::ops::matmul_tensor(&module, &a, &b, &mut c, shape).unwrap();
            results.push((format!("{name} {m}x{n}x{k} (seed {seed})"), c));
        }
        // The f64 reference and the bound of a k-long sum in the documented order.
        let (first, first_c) = &results[0];
        for (name, c) in &results {
            for i in 0..m {
                for j in 0..n {
                    let products = (0..k).map(|x| a[i * k + x].to_f64() * b[x * n + j].to_f64());
                    let want: f64 = products.clone().sum();
                    let bound = k as f64 * 2f64.powi(-24) * products.map(f64::abs).sum::<f64>();
                    let got = c[i * n + j];
                    assert!(
                        (got as f64 - want).abs() <= bound,
                        "{name}: c[{i}][{j}] = {got}, want {want} (bound {bound:e})"
                    );
                    assert_eq!(
                        got.to_bits(),
                        first_c[i * n + j].to_bits(),
                        "{name} against {first}: c[{i}][{j}]"
                    );
                }
            }
        }
    }
}

#[test]
fn ptxas_assembles_the_tensor_core_kernels_for_sm_80_and_90_without_spills() {
    let source = support::test_kernels_sm80().source();
    assert!(source.contains(".target sm_80"), "built for sm_80");
    for op in [
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32",
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",
        "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32",
        "ldmatrix.sync.aligned.m8n8.x4.shared.b16",
        "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16",
        "cp.async.cg.shared.global",
        "cp.async.commit_group;",
        "cp.async.wait_group 1;",
    ] {
        assert!(source.contains(op), "the tensor-core PTX lacks {op}");
    }
    let reports = support::ptx::assemble_for("tensor-cores", source, &["sm_80", "sm_90"]);
    for (arch, report) in reports {
        for name in [
            "mma_f16",
            "mma_bf16",
            "mma_tf32",
            "mma_i8",
            "mma_f16_shared",
            "matmul_f16_tc",
        ] {
            let kernel = report
                .kernel(name)
                .unwrap_or_else(|| panic!("{arch}: no {name}"));
            assert_eq!(
                kernel.spill_store_bytes + kernel.spill_load_bytes,
                0,
                "{arch}: {name} spills"
            );
        }
    }
}

/// `copy_async_or_zeros` (`cp.async` with a src-size of 16 or 0 on the GPU): a piece asked for
/// and wholly inside `src` is copied, any other (not asked for, past the end, or partly past it)
/// is zeros, on both CPU paths and on the GPU.
#[test]
fn copy_async_or_zeros_copies_whole_pieces_or_zeros() {
    let _turn = support::gpu_shared();
    // 20 whole pieces and half of one: lanes 20..32 are past the end (20 partly).
    let src: Vec<f16> = (1..=164).map(|x| f16::from_f32(x as f32)).collect();
    for (name, module) in modules("copy_async_or_zeros_copies_whole_pieces_or_zeros") {
        let mut out = vec![f16::from_f32(-1.0); 256];
        launch!(module, copy_or_zeros[1, 32](&src, &mut out)).unwrap();
        for (i, &got) in out.iter().enumerate() {
            let piece = i / 8;
            let read = piece % 3 != 2 && 8 * piece + 8 <= src.len();
            let want = if read { src[i] } else { f16::ZERO };
            assert_eq!(got, want, "{name}: element {i} (piece {piece})");
        }
    }
}

/// A `copy_async` destination index so large that `index + elements` wraps past zero is out of
/// bounds, on every machine (it passed the check once, and on the GPU wrote a wrapped address).
#[test]
fn a_copy_async_index_that_wraps_is_out_of_bounds() {
    // Its kernel traps the GPU on purpose: no other test may use it meanwhile.
    let _turn = support::gpu_alone();
    let src = [1.0f32, 2.0, 3.0, 4.0];
    for (name, module) in modules("a_copy_async_index_that_wraps_is_out_of_bounds") {
        let mut out = vec![f32::NAN; 16];
        launch!(module, copy_async_back[1, 32](&src, &mut out, 0)).unwrap();
        assert_eq!(out[..4], src, "{name}");
        let mut out = vec![f32::NAN; 16];
        let error = launch!(module, copy_async_back[1, 32](&src, &mut out, 4)).expect_err(&name);
        if name != "gpu" {
            assert!(
                matches!(&error, Error::KernelPanicked { .. })
                    && error
                        .to_string()
                        .contains("out of bounds for a shared array"),
                "{name}: {error}"
            );
        }
        assert!(out.iter().all(|x| x.is_nan()), "{name}: nothing written");
    }
}
