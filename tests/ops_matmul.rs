//! `ops::matmul`: the three kernels against an f64 reference on random matrices of awkward
//! shapes, on the CPU executor (checked mode) and, where there is one, a GPU; and the inputs it
//! refuses.

mod support;

use ferrocuda::kernels::matmul::matmul_blocked;
use ferrocuda::ops::{self, Matmul, MatmulShape};
use ferrocuda::{launch, Device, Error, Module};

const KERNELS: [Matmul; 3] = [Matmul::Naive, Matmul::Tiled, Matmul::RegisterBlocked];

fn cpu_kernels() -> Module {
    let device = Device::cpu();
    assert!(device.checks_enabled(), "these tests run in checked mode");
    device.load(&ferrocuda::KERNELS).unwrap()
}

/// C = A·B in f64, and Σₚ|aᵢₚ·bₚⱼ| per element (the scale of the f32 rounding error).
fn reference(a: &[f32], b: &[f32], s: MatmulShape) -> (Vec<f64>, Vec<f64>) {
    let mut c = vec![0.0f64; s.m * s.n];
    let mut magnitude = vec![0.0f64; s.m * s.n];
    for i in 0..s.m {
        for p in 0..s.k {
            let x = a[i * s.k + p] as f64;
            for j in 0..s.n {
                let term = x * b[p * s.n + j] as f64;
                c[i * s.n + j] += term;
                magnitude[i * s.n + j] += term.abs();
            }
        }
    }
    (c, magnitude)
}

/// Runs `kernel` on fresh random matrices of `shape` and checks every element against f64: a
/// sum of k products rounded in f32 is within k·ε·Σ|aᵢbᵢ| (the bound is 2× that).
fn check(kernels: &Module, shape: MatmulShape, kernel: Matmul) {
    let (mut rng, seed) = support::rng();
    let MatmulShape { m, n, k } = shape;
    let a = support::random_f32(&mut rng, m * k);
    let b = support::random_f32(&mut rng, k * n);
    let (want, magnitude) = reference(&a, &b, shape);
    let mut c = vec![f32::NAN; m * n];
    ops::matmul(kernels, &a, &b, &mut c, shape, kernel).unwrap();
    for i in 0..m * n {
        let bound = 2.0 * k as f64 * f32::EPSILON as f64 * magnitude[i] + f32::MIN_POSITIVE as f64;
        assert!(
            (c[i] as f64 - want[i]).abs() <= bound,
            "{kernel:?} {m}x{n}x{k} element ({}, {}): {} vs {} (bound {bound}) seed={seed}",
            i / n,
            i % n,
            c[i],
            want[i]
        );
    }
}

/// 1×1×1, primes, K = 1, tall and skinny, wide and flat, long dot products, and shapes one off
/// the 16 and 128 tiles.
const SHAPES: [(usize, usize, usize); 12] = [
    (1, 1, 1),
    (67, 131, 29),
    (40, 50, 1),
    (1, 1, 300),
    (1000, 3, 7),
    (3, 1000, 5),
    (2, 3, 1031),
    (128, 128, 8),
    (129, 127, 9),
    (127, 129, 17),
    (16, 17, 15),
    (200, 1, 200),
];

#[test]
fn every_kernel_matches_f64_for_awkward_shapes() {
    let kernels = cpu_kernels();
    for (m, n, k) in SHAPES {
        for kernel in KERNELS {
            check(&kernels, MatmulShape::new(m, n, k), kernel);
        }
    }
}

#[test]
fn the_register_blocked_kernel_covers_several_blocks_each_way() {
    // 2 × 3 blocks of 128 × 128, the last ones partial, and k over several double-buffered
    // steps with a partial last one.
    check(
        &cpu_kernels(),
        MatmulShape::new(200, 300, 77),
        Matmul::RegisterBlocked,
    );
}

#[test]
fn the_default_is_the_register_blocked_kernel() {
    assert_eq!(Matmul::default(), Matmul::RegisterBlocked);
}

#[test]
fn device_buffers_work_as_inputs_and_output() {
    let kernels = cpu_kernels();
    let device = kernels.device();
    let (m, n, k) = (5, 7, 3);
    let a: Vec<f32> = (0..m * k).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..k * n).map(|i| (i % 4) as f32 - 1.5).collect();
    let (want, _) = reference(&a, &b, MatmulShape::new(m, n, k));
    let (a_on, b_on) = (device.upload(&a).unwrap(), device.upload(&b).unwrap());
    let mut c_on = device.alloc_zeroed::<f32>(m * n).unwrap();
    for kernel in KERNELS {
        ops::matmul(
            &kernels,
            &a_on,
            &b_on,
            &mut c_on,
            MatmulShape::new(m, n, k),
            kernel,
        )
        .unwrap();
        // Small integers and halves: every sum is exact in f32.
        let got: Vec<f64> = c_on.to_vec().unwrap().iter().map(|&x| x as f64).collect();
        assert_eq!(got, want, "{kernel:?}");
    }
}

/// The `InvalidInput` message of `ops::matmul` on these inputs.
fn refusal(a: &[f32], b: &[f32], c: &mut [f32], shape: MatmulShape, kernel: Matmul) -> String {
    match ops::matmul(&cpu_kernels(), a, b, c, shape, kernel) {
        Err(Error::InvalidInput { op, detail }) => {
            assert_eq!(op, "matmul");
            detail
        }
        other => panic!("expected InvalidInput, got {other:?}"),
    }
}

#[test]
fn bad_shapes_and_lengths_are_invalid_input_with_the_numbers() {
    let s = MatmulShape::new;
    // (shape, lengths of a, b and c, the message)
    let cases: [(MatmulShape, [usize; 3], &str); 8] = [
        (
            s(0, 2, 3),
            [0, 6, 0],
            "m, n and k must be at least 1, got m = 0, n = 2, k = 3",
        ),
        (s(2, 2, 0), [0, 0, 4], "got m = 2, n = 2, k = 0"),
        (
            s(2, 2, 2),
            [6, 4, 4],
            "a has 6 elements but m × k = 2 × 2 needs 4",
        ),
        (
            s(2, 3, 3),
            [6, 6, 6],
            "b has 6 elements but k × n = 3 × 3 needs 9",
        ),
        (
            s(3, 2, 2),
            [6, 4, 4],
            "c has 4 elements but m × n = 3 × 2 needs 6",
        ),
        (
            s(1 << 32, 1, 1),
            [1, 1, 1],
            "m = 4294967296 is more than the kernels' limit of 4294967295",
        ),
        (
            s(1, 1, 1 << 40),
            [1, 1, 1],
            "k = 1099511627776 is more than the kernels' limit",
        ),
        (
            s(u32::MAX as usize, u32::MAX as usize, u32::MAX as usize),
            [1, 1, 1],
            // No overflow on a 64-bit host (2 u32 factors); on a 32-bit one m·k overflows.
            if cfg!(target_pointer_width = "64") {
                "a has 1 elements but m × k = 4294967295 × 4294967295 needs 18446744065119617025"
            } else {
                "m·k = 4294967295 × 4294967295 overflows usize"
            },
        ),
    ];
    for (shape, [a_len, b_len, c_len], want) in cases {
        let (a, b) = (vec![1.0f32; a_len], vec![1.0f32; b_len]);
        for kernel in KERNELS {
            let mut c = vec![7.0f32; c_len];
            let detail = refusal(&a, &b, &mut c, shape, kernel);
            assert!(detail.contains(want), "{shape:?} {kernel:?}: {detail}");
            assert!(c.iter().all(|&x| x == 7.0), "nothing was written");
        }
    }
}

#[test]
fn a_grid_too_tall_for_the_device_is_invalid_input() {
    // 1,048,561 rows need 65,536 blocks of 16 in y, one more than a CUDA grid has.
    let m = 65_535 * 16 + 1;
    let (a, b) = (vec![0.0f32; m], vec![0.0f32; 1]);
    let mut c = vec![0.0f32; m];
    for kernel in [Matmul::Naive, Matmul::Tiled] {
        let detail = refusal(&a, &b, &mut c, MatmulShape::new(m, 1, 1), kernel);
        assert!(
            detail.contains(
                "1048561 rows need 65536 blocks of 16 in y, more than the device's limit of 65535"
            ),
            "{detail}"
        );
    }
}

#[test]
fn the_register_blocked_kernel_refuses_the_wrong_block_shape() {
    let kernels = cpu_kernels();
    let (a, b) = (vec![1.0f32; 4], vec![1.0f32; 4]);
    let mut c = vec![0.0f32; 4];
    let error = launch!(kernels, matmul_blocked[1, (16, 16)](&a, &b, &mut c, 2u32, 2u32, 2u32))
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("needs blocks of BLOCKED_THREADS (256) threads in x"),
        "{error}"
    );
}

#[test]
fn gpu_matches_f64_for_every_kernel() {
    let Some(gpu) = support::gpu_or_skip("gpu_matches_f64_for_every_kernel") else {
        return;
    };
    let kernels = gpu.load(&ferrocuda::KERNELS).unwrap();
    let large = support::size_for(
        &gpu,
        [(512, 384, 640), (1000, 1000, 37)],
        [(96, 80, 120), (200, 200, 37)],
    );
    for (m, n, k) in SHAPES.into_iter().chain(large) {
        for kernel in KERNELS {
            check(&kernels, MatmulShape::new(m, n, k), kernel);
        }
    }
}
