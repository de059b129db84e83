//! `ops::matmul_tensor` (f16, bf16) and `ops::matmul_tf32` on tensor cores: against an f64
//! reference within the bound their rustdoc derives, at ragged sizes (each path of the staging:
//! whole 16-byte `cp.async` pieces, zero-filled pieces past an edge, element by element when a
//! row's length is not a multiple of a piece or the data is not 16-byte aligned), on the CPU
//! executor (checked mode) and on the GPU where there is one (the PTX emulator in CI); and the
//! inputs they refuse.

mod support;

use ferrocuda::ops::{self, MatmulShape};
use ferrocuda::{bf16, f16, Device, Error, Module, TENSOR_KERNELS};
use rand::rngs::StdRng;
use rand::Rng;

/// The CPU executor in checked mode, and the GPU where there is one.
fn modules(test: &str) -> Vec<(&'static str, Module)> {
    let cpu = Device::cpu();
    assert!(cpu.checks_enabled(), "these tests run in checked mode");
    let mut all = vec![("cpu", cpu.load(&TENSOR_KERNELS).unwrap())];
    if let Some(gpu) = support::gpu_or_skip(test) {
        all.push(("gpu", gpu.load(&TENSOR_KERNELS).unwrap()));
    }
    all
}

/// 1×1×1; sizes off the 64 × 64 × 32 tiles with `k` and `n` not multiples of 8 (element by
/// element staging); multiples of 8 with ragged `m` and `n` (whole pieces, zero-filled past the
/// edges); several blocks in both directions; a long `k`.
const SHAPES: [(usize, usize, usize); 9] = [
    (1, 1, 1),
    (17, 33, 9),
    (65, 64, 70),
    (128, 96, 160),
    (64, 64, 64),
    (70, 72, 48),
    (33, 40, 40),
    (130, 136, 16),
    (3, 8, 520),
];

/// `γ_k = k·u / (1 − k·u)`, `u = 2⁻²⁴`: the bound on the relative error of an f32 sum of `k`
/// terms each rounded once (the rustdoc's).
fn gamma(k: usize) -> f64 {
    let ku = k as f64 * 2f64.powi(-24);
    ku / (1.0 - ku)
}

/// Asserts `|c − want| ≤ relative·magnitude` for each element (plus the smallest normal f32,
/// for results that underflow).
fn assert_within(what: &str, c: &[f32], (want, magnitude): &(Vec<f64>, Vec<f64>), relative: f64) {
    for (i, &got) in c.iter().enumerate() {
        let bound = relative * magnitude[i] + f32::MIN_POSITIVE as f64;
        let error = (got as f64 - want[i]).abs();
        assert!(
            error <= bound,
            "{what}: element {i}: {got} vs {} (error {error:e} > bound {bound:e})",
            want[i]
        );
    }
}

fn random(rng: &mut StdRng, n: usize) -> Vec<f32> {
    (0..n).map(|_| rng.random_range(-1.0f32..1.0)).collect()
}

/// f16 and bf16: the reference multiplies the very f16/bf16 inputs, so the bound is the f32
/// sum's alone, `γ_k·Σ|a||b|`.
fn check_half<T: ops::TensorInput>(name: &str, from: fn(f32) -> T, to: fn(T) -> f64) {
    let test = format!("{name}_matches_f64_at_ragged_sizes");
    let (mut rng, seed) = support::rng();
    for (device, module) in modules(&test) {
        for (m, n, k) in SHAPES {
            let shape = MatmulShape::new(m, n, k);
            let a: Vec<T> = random(&mut rng, m * k).into_iter().map(from).collect();
            let b: Vec<T> = random(&mut rng, k * n).into_iter().map(from).collect();
            let want = support::matmul_reference(
                &a.iter().map(|&x| to(x)).collect::<Vec<_>>(),
                &b.iter().map(|&x| to(x)).collect::<Vec<_>>(),
                shape,
            );
            let mut c = vec![f32::NAN; m * n];
            ops::matmul_tensor(&module, &a, &b, &mut c, shape).unwrap();
            let what = format!("{name} {device} {m}×{n}×{k} seed={seed}");
            assert_within(&what, &c, &want, gamma(k));
        }
    }
}

#[test]
fn f16_matches_f64_at_ragged_sizes() {
    check_half("f16", f16::from_f32, f16::to_f64);
}

#[test]
fn bf16_matches_f64_at_ragged_sizes() {
    check_half("bf16", bf16::from_f32, bf16::to_f64);
}

/// An f32 as the tensor cores read it as tf32: the low 13 fraction bits dropped.
fn tf32(x: f32) -> f64 {
    f32::from_bits(x.to_bits() & !0x1fff) as f64
}

/// tf32: against the truncated inputs within `γ_k·Σ|a||b|` (which checks the truncation), and
/// against the f32 inputs themselves within the rustdoc's bound.
#[test]
fn tf32_matches_f64_at_ragged_sizes() {
    let test = "tf32_matches_f64_at_ragged_sizes";
    let (mut rng, seed) = support::rng();
    for (device, module) in modules(test) {
        for (m, n, k) in SHAPES {
            let shape = MatmulShape::new(m, n, k);
            let (a, b) = (random(&mut rng, m * k), random(&mut rng, k * n));
            let mut c = vec![f32::NAN; m * n];
            ops::matmul_tf32(&module, &a, &b, &mut c, shape).unwrap();
            let what = format!("tf32 {device} {m}×{n}×{k} seed={seed}");
            let truncated = support::matmul_reference(
                &a.iter().map(|&x| tf32(x)).collect::<Vec<_>>(),
                &b.iter().map(|&x| tf32(x)).collect::<Vec<_>>(),
                shape,
            );
            assert_within(&what, &c, &truncated, gamma(k));
            let exact = support::matmul_reference(
                &a.iter().map(|&x| x as f64).collect::<Vec<_>>(),
                &b.iter().map(|&x| x as f64).collect::<Vec<_>>(),
                shape,
            );
            let u = 2f64.powi(-10);
            let relative = 2.0 * u + u * u + gamma(k) * (1.0 + u).powi(2);
            assert_within(&format!("{what} (unrounded)"), &c, &exact, relative);
        }
    }
}

/// Inputs that do not start 16-byte aligned (a slice one element into a vector) take the
/// element-by-element staging on the CPU; the result is the same product.
#[test]
fn unaligned_inputs_give_the_same_product() {
    let (mut rng, seed) = support::rng();
    let module = Device::cpu().load(&TENSOR_KERNELS).unwrap();
    let (m, n, k) = (40, 48, 64);
    let shape = MatmulShape::new(m, n, k);
    let a: Vec<f16> = random(&mut rng, m * k + 1)
        .into_iter()
        .map(f16::from_f32)
        .collect();
    let b: Vec<f16> = random(&mut rng, k * n + 1)
        .into_iter()
        .map(f16::from_f32)
        .collect();
    let (mut aligned, mut shifted) = (vec![0.0f32; m * n], vec![0.0f32; m * n]);
    let (a0, b0) = (a[1..].to_vec(), b[1..].to_vec());
    ops::matmul_tensor(&module, &a0, &b0, &mut aligned, shape).unwrap();
    ops::matmul_tensor(&module, &a[1..], &b[1..], &mut shifted, shape).unwrap();
    let to_f64 = |v: &[f16]| v.iter().map(|x| x.to_f64()).collect::<Vec<_>>();
    let want = support::matmul_reference(&to_f64(&a0), &to_f64(&b0), shape);
    assert_within(&format!("shifted seed={seed}"), &shifted, &want, gamma(k));
    assert_eq!(aligned, shifted, "seed={seed}");
}

/// The message of an `InvalidInput` from `result`, or a panic.
fn invalid(result: ferrocuda::Result<()>) -> String {
    match result {
        Err(Error::InvalidInput { op, detail }) => format!("{op}: {detail}"),
        other => panic!("expected InvalidInput, got {other:?}"),
    }
}

#[test]
fn bad_inputs_are_clear_errors() {
    let module = Device::cpu().load(&TENSOR_KERNELS).unwrap();
    let shape = MatmulShape::new(4, 5, 6);
    let a = vec![f16::ONE; 24];
    let b = vec![f16::ONE; 30];
    let mut c = vec![0.0f32; 20];
    let message = invalid(ops::matmul_tensor(&module, &a[..23], &b, &mut c, shape));
    assert!(
        message.contains("a has 23 elements") && message.contains("4 × 6"),
        "{message}"
    );
    let message = invalid(ops::matmul_tensor(&module, &a, &b[..29], &mut c, shape));
    assert!(message.contains("b has 29 elements"), "{message}");
    let message = invalid(ops::matmul_tensor(&module, &a, &b, &mut c[..19], shape));
    assert!(message.contains("c has 19 elements"), "{message}");
    let empty = MatmulShape::new(0, 5, 6);
    let message = invalid(ops::matmul_tensor(&module, &a[..0], &b, &mut c[..0], empty));
    assert!(message.contains("at least 1"), "{message}");
    let (fa, fb) = (vec![1.0f32; 24], vec![1.0f32; 29]);
    let message = invalid(ops::matmul_tf32(&module, &fa, &fb, &mut c, shape));
    assert!(message.starts_with("matmul_tf32: b has"), "{message}");
    // The library's sm_70 module has no tensor-core kernels: the error says which to load.
    let sm70 = Device::cpu().load(&ferrocuda::KERNELS).unwrap();
    let message = invalid(ops::matmul_tensor(&sm70, &a, &b, &mut c, shape));
    assert!(message.contains("TENSOR_KERNELS"), "{message}");
}
