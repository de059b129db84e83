//! `mma_tiles`: a warp's product of a (16·MT)×depth shared window by a depth×(8·NT) one into
//! MT × NT accumulators, as a statement of a kernel's body (the split path's block step on the
//! CPU, which reads the windows straight from shared memory), on both CPU paths and the GPU
//! (the PTX emulator in CI): against an f64 reference within the documented bound
//! `depth · 2^-24 · (|c| + Σ|a·b|)`, each machine's bits against the others' (the k-sum's order
//! is documented), lanes with windows of their own (each lane's fragments from its own), and the
//! bugs: lanes at different depths, a window of the wrong shape, reads racing with the staging.

mod support;

use ferrocuda::{bf16, f16, launch, CpuPath, Error, KernelBug, Module};
use rand::Rng;
use test_kernels::mma_tiles::*;

fn cpu_modules() -> Vec<(String, Module)> {
    support::cpu_modules(support::test_kernels_sm80())
}

/// [`cpu_modules`], and the GPU when there is one.
fn modules(test: &str) -> Vec<(String, Module)> {
    let mut all = cpu_modules();
    if let Some(gpu) = support::gpu_or_skip(test) {
        all.push((
            "gpu".to_string(),
            gpu.load(support::test_kernels_sm80()).unwrap(),
        ));
    }
    all
}

/// `c + a·b` in f64 (`a` rows × depth, `b` depth × cols, rows [`A_STRIDE`] and [`B_STRIDE`]
/// apart) and the bound per element.
fn reference(
    (a, b, c): (&[f64], &[f64], &[f64]),
    (rows, cols, depth): (usize, usize, usize),
) -> (Vec<f64>, Vec<f64>) {
    let mut d = c.to_vec();
    let mut bound = vec![0.0; rows * cols];
    for r in 0..rows {
        for col in 0..cols {
            let products = (0..depth).map(|x| a[r * A_STRIDE + x] * b[x * B_STRIDE + col]);
            d[r * cols + col] += products.clone().sum::<f64>();
            let magnitude = c[r * cols + col].abs() + products.map(f64::abs).sum::<f64>();
            bound[r * cols + col] = depth as f64 * 2f64.powi(-24) * magnitude;
        }
    }
    (d, bound)
}

/// Each machine's D: within the reference's bound and bit for bit the first's.
fn check(results: &[(String, Vec<f32>)], (want, bound): &(Vec<f64>, Vec<f64>)) {
    let (first, first_d) = &results[0];
    for (name, d) in results {
        for (i, (&x, &y)) in d.iter().zip(first_d).enumerate() {
            let error = (x as f64 - want[i]).abs();
            assert!(error <= bound[i], "{name}: d[{i}] = {x}, want {}", want[i]);
            assert_eq!(x.to_bits(), y.to_bits(), "{name} against {first}: d[{i}]");
        }
    }
}

fn random(rng: &mut impl Rng, n: usize) -> Vec<f32> {
    (0..n).map(|_| rng.random_range(-1.0f32..1.0)).collect()
}

/// Runs `launch(module, depths, skew)` on every machine for each depth: against the reference
/// and each other.
fn float_case(
    test: &str,
    (rows, cols): (usize, usize),
    depths: &[usize],
    values: impl Fn(f32) -> f64,
    launch: impl Fn(&Module, (&[f32], &[f32], &[f32]), &[u32], u32) -> Vec<f32>,
) {
    let (mut rng, seed) = support::rng();
    for &depth in depths {
        // The inputs as the kernel's type will hold them (`values` rounds), kept as f32.
        let a: Vec<f32> = random(&mut rng, rows * A_STRIDE + SKEW_ROOM)
            .into_iter()
            .map(|x| values(x) as f32)
            .collect();
        let b: Vec<f32> = random(&mut rng, B_ROWS * B_STRIDE + SKEW_ROOM)
            .into_iter()
            .map(|x| values(x) as f32)
            .collect();
        let c = random(&mut rng, rows * cols);
        let mut results = Vec::new();
        for (name, module) in modules(test) {
            let d = launch(&module, (&a, &b, &c), &[depth as u32; 2], 0);
            results.push((format!("{name}, depth {depth} (seed {seed})"), d));
        }
        let widen = |v: &[f32]| v.iter().map(|&x| x as f64).collect::<Vec<_>>();
        let (a, b, c) = (widen(&a), widen(&b), widen(&c));
        check(&results, &reference((&a, &b, &c), (rows, cols, depth)));
    }
}

#[test]
fn f16_windows_of_every_depth_on_every_machine() {
    let _turn = support::gpu_shared();
    let test = "f16_windows_of_every_depth_on_every_machine";
    float_case(
        test,
        (32, 24),
        &[0, 16, 32, 64],
        |x| f16::from_f32(x).to_f64(),
        |module, (a, b, c), depths, skew| {
            let a: Vec<f16> = a.iter().map(|&x| f16::from_f32(x)).collect();
            let b: Vec<f16> = b.iter().map(|&x| f16::from_f32(x)).collect();
            let mut d = vec![f32::NAN; 32 * 24];
            launch!(module, mma_tiles_f16[1, 32](&a, &b, c, &mut d, depths, skew)).unwrap();
            d
        },
    );
}

#[test]
fn bf16_and_tf32_windows() {
    let _turn = support::gpu_shared();
    let test = "bf16_and_tf32_windows";
    float_case(
        test,
        (16, 32),
        &[16, 48],
        |x| bf16::from_f32(x).to_f64(),
        |module, (a, b, c), depths, skew| {
            let a: Vec<bf16> = a.iter().map(|&x| bf16::from_f32(x)).collect();
            let b: Vec<bf16> = b.iter().map(|&x| bf16::from_f32(x)).collect();
            let mut d = vec![f32::NAN; 16 * 32];
            launch!(module, mma_tiles_bf16[1, 32](&a, &b, c, &mut d, depths, skew)).unwrap();
            d
        },
    );
    // tf32 values (10 fraction bits): the reference needs no rounding of its own.
    float_case(
        test,
        (32, 16),
        &[8, 24],
        |x| f32::from_bits(x.to_bits() & !0x1fff) as f64,
        |module, (a, b, c), depths, skew| {
            let mut d = vec![f32::NAN; 32 * 16];
            launch!(module, mma_tiles_tf32[1, 32](a, b, c, &mut d, depths, skew)).unwrap();
            d
        },
    );
}

/// i8 windows of `depth` on `module`: D exactly `c + a·b`.
fn i8_exact(name: &str, module: &Module, depth: usize) {
    let (mut rng, seed) = support::rng();
    let a: Vec<i8> = (0..16 * A_STRIDE + SKEW_ROOM)
        .map(|_| rng.random())
        .collect();
    let b: Vec<i8> = (0..B_ROWS * B_STRIDE + SKEW_ROOM)
        .map(|_| rng.random())
        .collect();
    let c: Vec<i32> = (0..128)
        .map(|_| rng.random_range(-1 << 20..1 << 20))
        .collect();
    let mut d = vec![0i32; 128];
    let depths = [depth as u32; 2];
    launch!(module, mma_tiles_i8[1, 32](&a, &b, &c, &mut d, &depths, 0))
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    for r in 0..16 {
        for col in 0..8 {
            let products =
                (0..depth).map(|x| a[r * A_STRIDE + x] as i32 * b[x * B_STRIDE + col] as i32);
            let want = c[r * 8 + col] + products.sum::<i32>();
            assert_eq!(d[r * 8 + col], want, "{name} (seed {seed}): d[{r}][{col}]");
        }
    }
}

#[test]
fn i8_windows_are_exact() {
    let _turn = support::gpu_shared();
    for (name, module) in modules("i8_windows_are_exact") {
        i8_exact(&name, &module, 64);
    }
}

/// The warp's product (32 lanes' accumulators and operands at once) runs on the stack of the
/// simulated thread that completes the warp (the split path's block step, or the coroutines'
/// rendezvous): it must fit in the smallest stack a launch may ask for, with room for the
/// kernel's own frames, for the integer and the float products, on both CPU paths.
#[test]
fn the_smallest_stack_runs_mma_tiles() {
    use ferrocuda::{CpuOptions, Device};
    let (a, b) = (
        vec![f16::from_f32(0.5); 32 * A_STRIDE + SKEW_ROOM],
        vec![f16::from_f32(0.25); B_ROWS * B_STRIDE + SKEW_ROOM],
    );
    let c: Vec<f32> = (0..768).map(|i| i as f32).collect();
    for (checked, force_coroutines) in [(false, false), (true, false), (true, true)] {
        let options = CpuOptions {
            checked,
            force_coroutines,
            stack_bytes: 64 * 1024,
            ..CpuOptions::default()
        };
        let name = format!("64 KiB stacks, checked={checked} coroutines={force_coroutines}");
        let module = Device::cpu_with(options)
            .unwrap()
            .load(support::test_kernels_sm80())
            .unwrap();
        i8_exact(&name, &module, 64);
        // f16: each element is c + 64 · 0.5 · 0.25, exact in f32.
        let mut d = vec![f32::NAN; 768];
        launch!(module, mma_tiles_f16[1, 32](&a, &b, &c, &mut d, &[64u32, 64], 0))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        for (i, &x) in d.iter().enumerate() {
            assert_eq!(x, i as f32 + 8.0, "{name}: d[{i}]");
        }
    }
}

/// Lanes whose windows differ would do different numbers of `mma`s (other depths) or, through
/// `ldmatrix`, get rows other lanes addressed (other places): warp divergence on every CPU path
/// (the split path's step and the coroutines' rendezvous see it before multiplying anything).
#[test]
fn lanes_with_windows_of_their_own_are_warp_divergence() {
    let a = vec![f16::ZERO; 32 * A_STRIDE + SKEW_ROOM];
    let b = vec![f16::ZERO; B_ROWS * B_STRIDE + SKEW_ROOM];
    let c = vec![0f32; 768];
    for (name, module) in cpu_modules() {
        for (depths, skew) in [([16u32, 32], 0u32), ([32, 32], 8)] {
            let mut d = vec![f32::NAN; 768];
            let result = launch!(module, mma_tiles_f16[1, 32](&a, &b, &c, &mut d, &depths, skew));
            match result {
                Err(Error::KernelBug { bug, .. }) => match *bug {
                    KernelBug::WarpDivergence { detail } => assert!(
                        detail.contains("lane 1 of warp 0 calls mma::mma_tiles")
                            && detail.contains("other windows than lane 0"),
                        "{name}: {detail}"
                    ),
                    other => panic!("{name}: expected warp divergence, got {other:?}"),
                },
                other => panic!("{name}: expected warp divergence, got {other:?}"),
            }
            assert!(d.iter().all(|x| x.is_nan()), "{name}: no element written");
        }
    }
}

/// A window whose shape does not fit the accumulators (depth 24 is not a multiple of f16's 16)
/// stops the kernel with the shapes, on every machine, before anything is written.
#[test]
fn a_window_of_the_wrong_shape_stops_the_kernel() {
    // The GPU's kernel traps: no other test may use it meanwhile.
    let _turn = support::gpu_alone();
    let a = vec![f16::ZERO; 32 * A_STRIDE + SKEW_ROOM];
    let b = vec![f16::ZERO; B_ROWS * B_STRIDE + SKEW_ROOM];
    let c = vec![0f32; 768];
    for (name, module) in modules("a_window_of_the_wrong_shape_stops_the_kernel") {
        let mut d = vec![f32::NAN; 768];
        let result = launch!(module, mma_tiles_f16[1, 32](&a, &b, &c, &mut d, &[24u32, 24], 0));
        let error = result.expect_err(&name);
        if name != "gpu" {
            assert!(
                matches!(&error, Error::KernelPanicked { .. })
                    && error
                        .to_string()
                        .contains("mma_tiles: windows of 32×24 and 24×24"),
                "{name}: {error}"
            );
        }
        assert!(d.iter().all(|x| x.is_nan()), "{name}: no element written");
    }
}

/// Checked mode records each lane's reads of the windows where it calls `mma_tiles` (on the
/// split path, whose step reads them later): a warp multiplying rows the other warp staged,
/// with no barrier between, is a race.
#[test]
fn reads_racing_with_the_staging_are_reported_in_checked_mode() {
    let (a, b, c) = (
        vec![f16::ONE; 32 * 16],
        vec![f16::ONE; 16 * 24],
        vec![0f32; 768],
    );
    // Either report is the missing barrier, seen at the reads `mma_tiles` makes: a lane of warp
    // 0 reads rows warp 1 stages after it in the split path's order (unwritten yet), or before
    // it on coroutines (a race).
    for (name, module) in cpu_modules() {
        let mut d = vec![0f32; 768];
        let result = launch!(module, mma_tiles_unsynced[1, 64](&a, &b, &c, &mut d));
        if name.contains("checked=false") {
            result.unwrap_or_else(|e| panic!("{name}: {e}"));
            continue;
        }
        match result {
            Err(Error::KernelBug { bug, .. }) => assert!(
                matches!(
                    *bug,
                    KernelBug::SharedRace { .. } | KernelBug::UninitializedShared { .. }
                ),
                "{name}: expected a race, got {bug:?}"
            ),
            other => panic!("{name}: expected a race, got {other:?}"),
        }
    }
}

#[test]
fn mma_tiles_in_the_body_keeps_the_split_path() {
    for info in [
        mma_tiles_f16.info(),
        mma_tiles_bf16.info(),
        mma_tiles_tf32.info(),
        mma_tiles_i8.info(),
        mma_tiles_unsynced.info(),
    ] {
        assert_eq!(info.cpu_path, CpuPath::Regions, "{}", info.name);
    }
}
